/*
 * dragonfly_zone.cpp - the dragonfly of generators/topologies/dragonfly.py as a compiled
 * SimGrid platform: hosts, cables and routes of the Python model, name for
 * name, each route computed on demand by the model's rule (minimal, Valiant,
 * or adaptive: UGAL-L or UGAL-G), so that a Frontier-shaped machine (37888
 * hosts) loads in seconds.
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
 *   port_order consecutive  optional: global port j on router j // global_ports
 *                           (default round-robin: router j mod routers)
 *   routing minimal         or valiant, ugal-l, ugal-g
 *   spread packet           optional: a message's packets spread over the
 *                           rule's paths (default: message, one path each)
 *   global_lat 1e-07        seconds, latency of a global cable
 *
 * Names: hosts host-g-r-k, routers router-g-r (not SimGrid elements: routes
 * name links only), cables <a>_to_<b>. The rules (gateway, intermediate, mix)
 * are those of generators/topologies/dragonfly.py, line for line; tests compare every
 * route through the loader. Spread and adaptive routes are those of
 * paths.hpp: minimal spreads over the copies of the global cable; Valiant
 * over every intermediate group and copies; UGAL chooses among the minimal
 * paths (every copy, the pair's own first) and VALIANT_CANDIDATES Valiant
 * paths drawn for each decision (the message, or each part of a message
 * spread by packet), and, by packet, Valiant spread evenly (what its packets'
 * own random intermediates give in aggregate).
 */
#include "routed_zone.hpp"
#include "zone_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

using topolab::Path;
using topolab::Route;
using topolab::ZoneParams;
using simgrid::s4u::Link;

class DragonflyZone : public topolab::RoutedZone {
public:
  explicit DragonflyZone(const ZoneParams& p)
      : RoutedZone(p, p.word("routing", {"minimal", "valiant", "ugal-l", "ugal-g"}))
      , groups_(p.integer("groups", 1))
      , routers_(p.integer("routers", 1))
      , hosts_(p.integer("hosts", 1))
      , copies_(p.integer("links_per_pair", 1))
      , global_ports_(p.integer("global_ports", 1))
      , consecutive_(p.has("port_order") && p.word("port_order", {"round-robin", "consecutive"}) == "consecutive")
      , relative_(p.word("arrangement", {"absolute", "relative", "simgrid"}) == "relative")
      , simgrid_(p.word("arrangement", {"absolute", "relative", "simgrid"}) == "simgrid")
      , global_lat_(p.number("global_lat", true))
  {
    if (copies_ * (groups_ - 1) > routers_ * global_ports_)
      p.fail("the global cables do not fit the global ports ('" + p.path() + "')");
    if (copies_ > routers_)
      p.fail("links_per_pair must be at most routers ('" + p.path() + "')");
    if (consecutive_ && (copies_ != 1 || simgrid_))
      p.fail("port_order consecutive needs links_per_pair 1 and the absolute or relative arrangement ('" + p.path() +
             "')");
    if (simgrid_ && (routers_ < groups_ || copies_ != 1))
      p.fail("the simgrid arrangement needs routers >= groups and links_per_pair 1 ('" + p.path() + "')");
    if (routing_ != "minimal" && groups_ < 3)
      p.fail(routing_ + " routing needs at least 3 groups ('" + p.path() + "')");
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

  double route_between(long from, long to, Route* into) override
  {
    long here            = switch_of(from);
    long target          = switch_of(to);
    std::uint64_t hashed = pair_hash(from, to);
    long g               = here / routers_;
    long k               = target / routers_;
    long copy            = copy_of(hashed);
    if (g == k || routing_ == "minimal") {
      if (!by_packet_ || g == k)
        return topolab::follow(minimal_path(here, target, copy), into);
      return topolab::spread_evenly(minimal_paths(here, target, copy), into);
    }
    if (routing_ == "valiant") {
      if (!by_packet_)
        return topolab::follow(valiant_at(here, target, valiant_index(hashed)), into);
      return topolab::spread_evenly(valiant_paths(here, target), into);
    }
    /* UGAL: the minimal paths; per packet, Valiant spread evenly too (its packets' own random intermediates, in
     * aggregate); and VALIANT_CANDIDATES Valiant paths drawn for each decision (the message, or each part) */
    std::vector<topolab::Option> options;
    for (Path& path : minimal_paths(here, target, copy))
      options.emplace_back(std::move(path));
    auto at    = [&](size_t i) { return valiant_at(here, target, i); };
    auto index = [this](std::uint64_t drawn) { return valiant_index(drawn); };
    return ugal(std::move(options), from, to, valiant_count(), index, at, into);
  }

private:
  long groups_;
  long routers_;
  long hosts_;
  long copies_;
  long global_ports_;
  bool consecutive_; /* global port j on router j / global_ports (else j mod routers) */
  bool relative_;
  bool simgrid_; /* router k of group g holds the cable to group k */
  double global_lat_;
  std::vector<Link*> local_;  /* [(g * routers + r) * routers + s]: router r to router s of group g */
  std::vector<Link*> global_; /* [(g * groups + k) * copies + c]: copy c of the cable from g to k */

  std::string router_name(long router) const
  {
    return "router-" + std::to_string(router / routers_) + "-" + std::to_string(router % routers_);
  }

  Link* cable(long a, long b, double latency)
  {
    return add_cable_link(router_name(a) + "_to_" + router_name(b), params_.link_bw, latency);
  }

  long copy_of(std::uint64_t hashed) const { return static_cast<long>(hashed % static_cast<std::uint64_t>(copies_)); }

  long offset(long g, long k) const
  {
    if (relative_)
      return ((k - g - 1) % groups_ + groups_) % groups_;
    return simgrid_ || k < g ? k : k - 1;
  }

  long gateway(long g, long k, long copy) const
  {
    long port = offset(g, k) * copies_ + copy;
    return consecutive_ ? port / global_ports_ : port % routers_;
  }

  long intermediate(long g, long k, std::uint64_t hashed) const
  {
    long m = static_cast<long>(hashed % static_cast<std::uint64_t>(groups_ - 2));
    m += m >= std::min(g, k);
    m += m >= std::max(g, k);
    return m;
  }

  /* The minimal path from router `from` to router `to` (global numbers) over copy `copy` of the global cable. */
  Path minimal_path(long from, long to, long copy) const
  {
    Path path;
    long g = from / routers_;
    long k = to / routers_;
    if (g != k) {
      long out = g * routers_ + gateway(g, k, copy);
      if (out != from)
        path.add(local_[from * routers_ + out % routers_], params_.link_lat);
      path.add(global_[(g * groups_ + k) * copies_ + copy], global_lat_);
      from = k * routers_ + gateway(k, g, copy);
    }
    if (from != to)
      path.add(local_[from * routers_ + to % routers_], params_.link_lat);
    return path;
  }

  /* The minimal paths over every copy of the global cable, copy `first` first (one path inside a group). */
  std::vector<Path> minimal_paths(long from, long to, long first) const
  {
    std::vector<Path> paths;
    long count = from / routers_ == to / routers_ ? 1 : copies_;
    for (long c = 0; c < count; c++)
      paths.push_back(minimal_path(from, to, (first + c) % copies_));
    return paths;
  }

  /* The Valiant paths between two groups: through every other group, over every copy of each global cable. */
  size_t valiant_count() const { return static_cast<size_t>((groups_ - 2) * copies_ * copies_); }

  /* The index of the Valiant path a draw names among valiant_count() (valiant_at): the intermediate group
   * intermediate(g, k, drawn), over copies copy_of(drawn >> 20) and copy_of(drawn >> 40). */
  size_t valiant_index(std::uint64_t drawn) const
  {
    auto middle = static_cast<long>(drawn % static_cast<std::uint64_t>(groups_ - 2));
    return static_cast<size_t>((middle * copies_ + copy_of(drawn >> 20)) * copies_ + copy_of(drawn >> 40));
  }

  /* The i-th Valiant path from router `from` to router `to` of another group: intermediate groups in order, then the
   * copies of the first global cable, then of the second. */
  Path valiant_at(long from, long to, size_t i) const
  {
    auto index = static_cast<long>(i);
    long c2    = index % copies_;
    long c1    = index / copies_ % copies_;
    return valiant_path(from, to, intermediate(from / routers_, to / routers_, index / copies_ / copies_), c1, c2);
  }

  /* Every Valiant path from router `from` to router `to` of another group, in valiant_at's order. */
  std::vector<Path> valiant_paths(long from, long to) const
  {
    std::vector<Path> paths;
    for (size_t i = 0; i < valiant_count(); i++)
      paths.push_back(valiant_at(from, to, i));
    return paths;
  }

  /* Minimally to group `middle` over copy c1 of its cable from the source group, then minimally on over copy c2. */
  Path valiant_path(long from, long to, long middle, long c1, long c2) const
  {
    long land  = middle * routers_ + gateway(middle, from / routers_, c1);
    Path first = minimal_path(from, land, c1);
    for (Link* cable : minimal_path(land, to, c2).cables) /* latencies summed in route order, as the model does */
      first.add(cable, cable->get_latency());
    first.detour = true;
    return first;
  }
};

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  std::string path = topolab::params_path("TOPOLAB_DRAGONFLY_PARAMS", reinterpret_cast<void*>(&load_platform), "dragonfly");
  topolab::load_zone<DragonflyZone>(
      engine, ZoneParams("dragonfly", path,
                         {"groups", "routers", "hosts", "global_ports", "links_per_pair", "arrangement",
                          "port_order", "routing", "spread", "revisit", "backpressure", "global_lat"}));
}
