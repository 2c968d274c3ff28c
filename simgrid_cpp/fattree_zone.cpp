/*
 * fattree_zone.cpp - the fat tree of three or more levels of
 * generators/topologies/fattree.py as a compiled SimGrid platform: servers, switches'
 * cables and D-mod-K routes of the Python model, name for name, each route
 * computed on demand (a three-level tree of 36-port switches: 11664 servers).
 *
 * The parameter file ($TOPOLAB_FATTREE_PARAMS, or NAME.params beside
 * NAME.so) has the keys of every compiled zone (zone_common.hpp: name,
 * link_bw, link_lat, nbl, host_speed and the node keys) and
 *
 *   radix 36                switch ports (even): radix/2 down, radix/2 up
 *   levels 3                switch levels (>= 2)
 *   leaves 648              leaf switches built, whole subtrees of the top
 *   servers_per_leaf 24     optional (radix/2): s servers, radix - s ports up
 *   routing adaptive        optional (d-mod-k): each switch on the way up
 *                           takes its least loaded up cable (paths.hpp)
 *   spread packet           optional (message): a message's packets spread
 *                           over every up path (d-mod-k), or placed in parts
 *                           (adaptive)
 *
 * Names: servers server-a-k, switches leaf-a, agg<i>-g-p, spine-p (not
 * SimGrid elements: routes name links only), cables <a>_to_<b>. A subtree of
 * level i holds (radix/2)^(i-1) leaves and P_i switches of level i (P_1 = 1,
 * P_i = (radix - s) (radix/2)^(i-2)). A switch of level i < h is (g, p): its
 * subtree g and its position p < P_i there; up port t leads to position
 * t P_i + p of level i + 1 in subtree g / (radix/2). Routes go up on port
 * (d / P_i) mod (its up ports) at level i (d the destination's number) to the
 * lowest level whose subtree holds the destination, then down. Adaptive: at
 * each level the up port of least load, D-mod-K's port first on a tie, then
 * the ports after it in turn (an idle network's route is D-mod-K's).
 */
#include "routed_zone.hpp"
#include "zone_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

using simgrid::s4u::Link;
using topolab::Path;
using topolab::Route;
using topolab::ZoneParams;

class FatTreeZone : public topolab::RoutedZone {
public:
  explicit FatTreeZone(const ZoneParams& p)
      : RoutedZone(p, p.word("routing", {"d-mod-k", "adaptive"}, "d-mod-k"))
      , radix_(p.integer("radix", 2))
      , levels_(p.integer("levels", 2))
      , leaves_(p.integer("leaves", 1))
      , adaptive_(routing_ == "adaptive")
  {
    half_ = radix_ / 2;
    std::vector<long> servers = p.integers("servers_per_leaf");
    servers_ = servers.empty() ? half_ : servers.front();
    if (radix_ % 2 != 0 || levels_ > 8)
      p.fail("radix must be even and levels at most 8 ('" + p.path() + "')");
    if (servers.size() > 1 || servers_ < 1 || servers_ >= radix_)
      p.fail("servers_per_leaf must be one integer from 1 to radix - 1 ('" + p.path() + "')");
    if (leaves_ % span(levels_ - 1) != 0 || leaves_ > 2 * span(levels_))
      p.fail("leaves must be whole subtrees of the top ('" + p.path() + "')");
  }

  void build()
  {
    std::vector<std::string> names;
    for (long a = 0; a < leaves_; a++)
      for (long k = 0; k < servers_; k++)
        names.push_back("server-" + std::to_string(a) + "-" + std::to_string(k));
    add_switched_hosts(names, servers_, [](long leaf) { return "leaf-" + std::to_string(leaf); });
    up_.resize(levels_);
    down_.resize(levels_);
    up_rows_.resize(levels_);
    up_decision_.resize(levels_);
    for (long level = 1; level < levels_; level++) {
      long switches = leaves_ / span(level) * positions(level);
      up_[level].assign(switches * up_ports(level), nullptr);
      up_rows_[level].resize(switches);
      up_decision_[level].assign(switches, 0); /* no decision's stamp (fresh_stamp starts at 1) */
      down_[level].assign(switches * up_ports(level), nullptr);
      for (long s = 0; s < switches; s++)
        for (long u = 0; u < up_ports(level); u++) {
          long g = s / positions(level);
          long p = s % positions(level);
          std::string below = name(level, g, p);
          std::string above = name(level + 1, parent_group(level, g), u * positions(level) + p);
          long port         = s * up_ports(level) + u;
          up_[level][port]   = add_cable_link(below + "_to_" + above, params_.link_bw, params_.link_lat);
          down_[level][port] = add_cable_link(above + "_to_" + below, params_.link_bw, params_.link_lat);
        }
    }
  }

  double route_between(long from, long to, Route* into) override
  {
    long a   = switch_of(from);
    long b   = switch_of(to);
    long top = levels_;
    for (long i = 1; i < levels_; i++)
      if (a / span(i) == b / span(i)) {
        top = i;
        break;
      }
    double latency = static_cast<double>(2 * (top - 1)) * params_.link_lat; /* every path between a and b */
    auto d_mod_k   = [this, to](long level) { return (to / positions(level)) % up_ports(level); };
    if (!adaptive_ && !by_packet_) {
      topolab::follow(path(a, b, top, [&](long level, long, long) { return d_mod_k(level); }), into);
      return latency;
    }
    if (!adaptive_) { /* every up path, the up ports of level 1 slowest */
      std::vector<Path> paths;
      std::vector<long> ports(top, 0);
      for (bool more = true; more;) {
        paths.push_back(path(a, b, top, [&ports](long level, long, long) { return ports[level]; }));
        more = false;
        for (long level = top - 1; level >= 1 && !more; level--) {
          more = ++ports[level] < up_ports(level);
          if (!more)
            ports[level] = 0;
        }
      }
      topolab::spread_evenly(paths, into);
      return latency;
    }
    choice_.begin(current_cables(from, to));
    for (long part = 0; part < choice_.parts(); part++)
      choice_.place(path(a, b, top, [&](long level, long g, long p) {
        long first = d_mod_k(level);
        return (first + static_cast<long>(choice_.cheapest_row(up_rows(level, g * positions(level) + p, first)))) %
               up_ports(level);
      }));
    choice_.finish(into);
    return latency;
  }

private:
  long radix_;
  long levels_;
  long leaves_;
  bool adaptive_;
  long half_    = 1;
  long servers_ = 1;
  std::vector<std::vector<Link*>> up_;   /* [level][switch * up_ports + u]: up port u of a switch */
  std::vector<std::vector<Link*>> down_; /* [level][switch * up_ports + u]: the same cable downwards */
  /* [level][switch]: the rows of a switch's up cables in what the adaptive decision under way saw, D-mod-K's first
   * (up_rows), and that decision's stamp */
  std::vector<std::vector<std::vector<size_t>>> up_rows_;
  std::vector<std::vector<std::uint64_t>> up_decision_;

  /* The rows of the up cables of switch `s` of `level` (AdaptiveChoice::row_of), from port `first` on in turn: listed
   * once a decision for each switch, as the parts of a message cross the same switches again. */
  const std::vector<size_t>& up_rows(long level, long s, long first)
  {
    std::vector<size_t>& rows = up_rows_[level][s];
    if (up_decision_[level][s] != choice_.decision()) {
      up_decision_[level][s] = choice_.decision();
      rows.clear();
      for (long t = 0; t < up_ports(level); t++)
        rows.push_back(choice_.row_of(up_[level][s * up_ports(level) + (first + t) % up_ports(level)]));
    }
    return rows;
  }

  /* From leaf a up to level `top` on the up ports `up(level, g, p)` picks at switch (g, p) of each level, then the
   * one way down to leaf b. */
  template <class UpPort> Path path(long a, long b, long top, const UpPort& up) const
  {
    Path path;
    long p = 0; /* position of the current switch in its subtree; the leaf's is 0 */
    long g = a;
    for (long level = 1; level < top; level++) {
      long u = up(level, g, p);
      path.add(up_[level][(g * positions(level) + p) * up_ports(level) + u], params_.link_lat);
      p = u * positions(level) + p;
      g = parent_group(level, g);
    }
    for (long level = top - 1; level >= 1; level--) { /* down: the cable whose lower end is (b's subtree, p mod) */
      long pos   = p % positions(level);
      long below = (b / span(level)) * positions(level) + pos;
      path.add(down_[level][below * up_ports(level) + p / positions(level)], params_.link_lat);
      p = pos;
    }
    return path;
  }

  long up_ports(long level) const { return level == 1 ? radix_ - servers_ : half_; }

  long span(long level) const /* leaves in a subtree of `level` */
  {
    long n = 1;
    for (long i = 1; i < level; i++)
      n *= half_;
    return n;
  }

  long positions(long level) const { return level == 1 ? 1 : up_ports(1) * span(level - 1); }

  long parent_group(long level, long g) const { return level + 1 == levels_ ? 0 : g / half_; }

  std::string name(long level, long g, long p) const
  {
    if (level == 1)
      return "leaf-" + std::to_string(g);
    if (level == levels_)
      return "spine-" + std::to_string(p);
    return "agg" + std::to_string(level) + "-" + std::to_string(g) + "-" + std::to_string(p);
  }
};

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  std::string path = topolab::params_path("TOPOLAB_FATTREE_PARAMS", reinterpret_cast<void*>(&load_platform), "fattree");
  topolab::load_zone<FatTreeZone>(
      engine, ZoneParams("fattree", path, {"radix", "levels", "leaves", "servers_per_leaf", "routing", "spread", "revisit"}));
}
