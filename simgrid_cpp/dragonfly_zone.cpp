/*
 * dragonfly_zone.cpp - the dragonfly of generators/dragonfly.py as a compiled
 * SimGrid platform: hosts, cables and routes of the Python model, name for
 * name, each route computed on demand by the model's rule (minimal or
 * Valiant), so that a Frontier-shaped machine (37888 hosts) loads in seconds.
 *
 * The parameter file ($TOPOLAB_DRAGONFLY_PARAMS, or NAME.params beside
 * NAME.so) has the keys of every compiled zone (zone_common.hpp: name,
 * link_bw, link_lat, nbl, host_speed and the node keys) and
 *
 *   groups 74               groups of routers
 *   routers 32              routers per group, joined all-to-all
 *   hosts 16                hosts per router
 *   global_ports 16         global ports per router (checked: the cables fit)
 *   links_per_pair 4        global cables between every pair of groups
 *   arrangement absolute    or relative, or simgrid: which router holds each
 *                           global cable
 *   routing minimal         or valiant
 *   global_lat 1e-07        seconds, latency of a global cable
 *
 * Names: hosts host-g-r-k, routers router-g-r (not SimGrid elements: routes
 * name links only), cables <a>_to_<b>. The rules (gateway, intermediate, mix)
 * are those of generators/dragonfly.py, line for line; tests compare every
 * route through the loader.
 */
#include "zone_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

using topolab::Route;
using topolab::StandardLinkImpl;
using topolab::ZoneParams;


class DragonflyZone : public topolab::SwitchedZone {
public:
  explicit DragonflyZone(const ZoneParams& p)
      : SwitchedZone(p)
      , groups_(p.integer("groups", 1))
      , routers_(p.integer("routers", 1))
      , hosts_(p.integer("hosts", 1))
      , copies_(p.integer("links_per_pair", 1))
      , relative_(p.word("arrangement", {"absolute", "relative", "simgrid"}) == "relative")
      , simgrid_(p.word("arrangement", {"absolute", "relative", "simgrid"}) == "simgrid")
      , valiant_(p.word("routing", {"minimal", "valiant"}) == "valiant")
      , global_lat_(p.number("global_lat", true))
  {
    if (copies_ * (groups_ - 1) > routers_ * p.integer("global_ports", 1))
      p.fail("the global cables do not fit the global ports ('" + p.path() + "')");
    if (copies_ > routers_)
      p.fail("links_per_pair must be at most routers ('" + p.path() + "')");
    if (simgrid_ && (routers_ < groups_ || copies_ != 1))
      p.fail("the simgrid arrangement needs routers >= groups and links_per_pair 1 ('" + p.path() + "')");
    if (valiant_ && groups_ < 3)
      p.fail("valiant routing needs at least 3 groups ('" + p.path() + "')");
  }

  void build()
  {
    std::vector<std::string> names;
    for (long g = 0; g < groups_; g++)
      for (long r = 0; r < routers_; r++)
        for (long k = 0; k < hosts_; k++)
          names.push_back("host-" + std::to_string(g) + "-" + std::to_string(r) + "-" + std::to_string(k));
    add_switched_hosts(names, hosts_, [this](long router) { return router_name(router); });
    local_.assign(groups_ * routers_ * routers_, nullptr);
    for (long g = 0; g < groups_; g++)
      for (long r = 0; r < routers_; r++)
        for (long s = r + 1; s < routers_; s++) {
          local_[(g * routers_ + r) * routers_ + s] = cable(g * routers_ + r, g * routers_ + s, params_.link_lat);
          local_[(g * routers_ + s) * routers_ + r] = cable(g * routers_ + s, g * routers_ + r, params_.link_lat);
        }
    global_.assign(groups_ * groups_ * copies_, nullptr);
    for (long g = 0; g < groups_; g++)
      for (long k = g + 1; k < groups_; k++)
        for (long c = 0; c < copies_; c++) {
          long a = g * routers_ + gateway(g, k, c);
          long b = k * routers_ + gateway(k, g, c);
          global_[(g * groups_ + k) * copies_ + c] = cable(a, b, global_lat_);
          global_[(k * groups_ + g) * copies_ + c] = cable(b, a, global_lat_);
        }
  }

  double route_between(long from, long to, Route* into) const override
  {
    double path_latency  = 0;
    long here            = switch_of(from);
    long target          = switch_of(to);
    std::uint64_t hashed = pair_hash(from, to);
    long g = here / routers_;
    long k = target / routers_;
    if (valiant_ && g != k) {
      long middle = intermediate(g, k, hashed);
      long c1     = static_cast<long>((hashed >> 20) % static_cast<std::uint64_t>(copies_));
      long c2     = static_cast<long>((hashed >> 40) % static_cast<std::uint64_t>(copies_));
      long land   = middle * routers_ + gateway(middle, g, c1);
      here        = minimal(here, land, c1, into, &path_latency);
      minimal(here, target, c2, into, &path_latency);
    } else {
      minimal(here, target, static_cast<long>(hashed % static_cast<std::uint64_t>(copies_)), into, &path_latency);
    }
    return path_latency;
  }

private:
  long groups_;
  long routers_;
  long hosts_;
  long copies_;
  bool relative_;
  bool simgrid_; /* router k of group g holds the cable to group k */
  bool valiant_;
  double global_lat_;
  std::vector<StandardLinkImpl*> local_;  /* [(g * routers + r) * routers + s]: router r to router s of group g */
  std::vector<StandardLinkImpl*> global_; /* [(g * groups + k) * copies + c]: copy c of the cable from g to k */

  std::string router_name(long router) const
  {
    return "router-" + std::to_string(router / routers_) + "-" + std::to_string(router % routers_);
  }

  StandardLinkImpl* cable(long a, long b, double latency)
  {
    return add_cable(router_name(a) + "_to_" + router_name(b), params_.link_bw, latency);
  }

  long offset(long g, long k) const
  {
    if (relative_)
      return ((k - g - 1) % groups_ + groups_) % groups_;
    return simgrid_ || k < g ? k : k - 1;
  }

  long gateway(long g, long k, long copy) const { return (offset(g, k) * copies_ + copy) % routers_; }

  long intermediate(long g, long k, std::uint64_t hashed) const
  {
    long m = static_cast<long>(hashed % static_cast<std::uint64_t>(groups_ - 2));
    m += m >= std::min(g, k);
    m += m >= std::max(g, k);
    return m;
  }

  /* The minimal path from router `from` to router `to` (global numbers), appended; returns `to`. */
  long minimal(long from, long to, long copy, Route* into, double* path_latency) const
  {
    long g = from / routers_;
    long k = to / routers_;
    if (g != k) {
      long out = g * routers_ + gateway(g, k, copy);
      if (out != from)
        local_hop(from, out, into, path_latency);
      into->link_list_.push_back(global_[(g * groups_ + k) * copies_ + copy]);
      *path_latency += global_lat_;
      from = k * routers_ + gateway(k, g, copy);
    }
    if (from != to)
      local_hop(from, to, into, path_latency);
    return to;
  }

  void local_hop(long from, long to, Route* into, double* path_latency) const
  {
    into->link_list_.push_back(local_[from * routers_ + to % routers_]);
    *path_latency += params_.link_lat;
  }
};

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  std::string path = topolab::params_path("TOPOLAB_DRAGONFLY_PARAMS", reinterpret_cast<void*>(&load_platform), "dragonfly");
  topolab::load_zone<DragonflyZone>(
      engine, ZoneParams("dragonfly", path,
                         {"groups", "routers", "hosts", "global_ports", "links_per_pair", "arrangement", "routing",
                          "global_lat"}));
}
