/*
 * mlfm_zone.cpp - the multi-layer full mesh of generators/topologies/mlfm.py as a
 * compiled SimGrid platform: servers, cables and routes of the Python model,
 * name for name, each route computed on demand by the paper's rule in O(1)
 * (the XML platform is a Dijkstra zone over a routing graph of about 7000
 * nodes at d = 18: a Dijkstra per new source, a walk through the graph's
 * edge lists per route).
 *
 * The parameter file ($TOPOLAB_MLFM_PARAMS, or NAME.params beside NAME.so)
 * has the keys of every compiled zone (zone_common.hpp: name, link_bw,
 * link_lat, nbl, host_speed and the node keys) and
 *
 *   d 18                    half the switch radix: d + 1 leaf columns
 *   layers 18               layers built, 1 .. d
 *   servers_per_leaf 18     servers on each leaf, 1 .. d: one value for every
 *                           layer, or one per layer ("3 3 2")
 *   spine_bw 4e9            bytes/s per direction of each leaf-spine cable
 *   spine_choice source     or destination: the port that picks the spine of
 *                           same-column traffic
 *   routing adaptive        optional (static): same-column traffic takes the
 *                           spine whose cable up from its leaf is least loaded
 *   spread packet           optional (message): same-column traffic spread
 *                           over every spine (static), or placed in parts
 *
 * Names: server (i, j, k) (layer i, column j, port k) is host server-i-j-k,
 * leaf (i, j) leaf-i-j, the spine of columns a < b spine-a-b (switches are
 * not SimGrid elements: routes name links only). Hosts layer by layer, column
 * by column, port fastest (netpoint ids in that order).
 *
 * Links, created in the model's order (tests find the simulated times of
 * both representations the same to the bit): server by server its cable
 * up server-i-j-k_to_leaf-i-j and down leaf-i-j_to_server-i-j-k (link_bw,
 * link_lat) and its own links (zone_common.hpp; the model lists the
 * intra-node links after all others); then spine by spine (a < b, a
 * slowest), layer by layer, for column a then column b, the cable
 * leaf-i-c_to_spine-a-b and spine-a-b_to_leaf-i-c (spine_bw, link_lat).
 *
 * Routing (generators/topologies/mlfm.py, line for line), from server (i, j, k) to
 * server (i', j', k'): the source's limiter, its cable up; unless both are on
 * one leaf, up to a spine and down to leaf (i', j'): spine {j, j'} when
 * j != j', else spine {j, c} with c = (j + k + 1) mod (d + 1) (source choice)
 * or c = (j + k' + 1) mod (d + 1) (destination choice); the destination's
 * cable down, its limiter. Tests compare every route through the loader.
 * Adaptive (paths.hpp, the leaf's view): of the d spines {j, c}, c != j, the
 * one whose up cable is least loaded, the rule's spine first on a tie, then
 * the columns after it in turn (an idle network's route is the rule's).
 */
#include "routed_zone.hpp"
#include "zone_common.hpp"

#include <string>
#include <vector>

namespace {

using simgrid::s4u::Link;
using topolab::Path;
using topolab::Route;
using topolab::ZoneParams;

constexpr long MAX_D = 65535; /* far beyond what the Python model builds: guards the arithmetic only */

/* Where a server is: layer, column and port. */
struct Server {
  long layer;
  long column;
  long port;
};

class MlfmZone : public topolab::RoutedZone {
public:
  explicit MlfmZone(const ZoneParams& p)
      : RoutedZone(p, p.word("routing", {"static", "adaptive"}, "static"))
      , d_(p.integer("d", 1))
      , layers_(p.integer("layers", 1))
      , spine_bw_(p.number("spine_bw", false))
      , by_source_(p.word("spine_choice", {"source", "destination"}) == "source")
      , adaptive_(routing_ == "adaptive")
  {
    if (d_ > MAX_D)
      p.fail("parameter 'd' must be at most " + std::to_string(MAX_D) + " ('" + p.path() + "')");
    columns_ = d_ + 1;
    if (layers_ > d_)
      p.fail("parameter 'layers' must be at most d = " + std::to_string(d_) + " ('" + p.path() + "')");
    per_leaf_ = p.integers("servers_per_leaf");
    if (per_leaf_.size() == 1)
      per_leaf_.assign(layers_, per_leaf_.front());
    if (per_leaf_.size() != static_cast<size_t>(layers_))
      p.fail("parameter 'servers_per_leaf' needs one value or one per layer (" + std::to_string(layers_) + ") ('" +
             p.path() + "')");
    for (long count : per_leaf_)
      if (count < 1 || count > d_)
        p.fail("every 'servers_per_leaf' value must be from 1 to d = " + std::to_string(d_) + " ('" + p.path() +
               "')");
  }

  /* The servers with their cables to their leaves, then the spine cables. The leaves of different layers may hold
   * different numbers of servers, so add_switched_hosts gets one host per "switch" and names each host's leaf from
   * its coordinates (route_between never uses switch_of). */
  void build()
  {
    std::vector<std::string> names;
    for (long i = 0; i < layers_; i++)
      for (long j = 0; j < columns_; j++)
        for (long k = 0; k < per_leaf_[i]; k++) {
          servers_.push_back({i, j, k});
          names.push_back("server-" + std::to_string(i) + "-" + std::to_string(j) + "-" + std::to_string(k));
        }
    add_switched_hosts(names, 1, [this](long host) {
      return leaf_name(servers_[host].layer, servers_[host].column);
    });
    up_.assign(layers_ * columns_ * columns_, nullptr);
    down_.assign(layers_ * columns_ * columns_, nullptr);
    for (long a = 0; a < columns_; a++)
      for (long b = a + 1; b < columns_; b++) {
        std::string spine = "spine-" + std::to_string(a) + "-" + std::to_string(b);
        for (long i = 0; i < layers_; i++)
          for (long c : {a, b}) {
            long slot   = leaf_slot(i, c, c == a ? b : a);
            up_[slot]   = add_cable_link(leaf_name(i, c) + "_to_" + spine, spine_bw_, params_.link_lat);
            down_[slot] = add_cable_link(spine + "_to_" + leaf_name(i, c), spine_bw_, params_.link_lat);
          }
      }
  }

  double route_between(long from, long to, Route* into) override
  {
    const Server& s = servers_[from];
    const Server& t = servers_[to];
    if (s.layer == t.layer && s.column == t.column)
      return 0;
    if (s.column != t.column) {
      into->link_list_.push_back(up_[leaf_slot(s.layer, s.column, t.column)]->get_impl());
      into->link_list_.push_back(down_[leaf_slot(t.layer, t.column, s.column)]->get_impl());
      return 2 * params_.link_lat;
    }
    long rule = (s.column + (by_source_ ? s.port : t.port) + 1) % columns_;
    if (!adaptive_ && !by_packet_) {
      topolab::follow(turn_path(s, t, rule), into);
      return 2 * params_.link_lat;
    }
    std::vector<Path> paths; /* every spine {j, c}, the rule's first, then the columns after it in turn */
    for (long n = 0; n < columns_; n++)
      if ((rule + n) % columns_ != s.column)
        paths.push_back(turn_path(s, t, (rule + n) % columns_));
    if (!adaptive_) {
      topolab::spread_evenly(paths, into);
      return 2 * params_.link_lat;
    }
    std::vector<topolab::Option> options;
    for (Path& path : paths)
      options.emplace_back(std::move(path));
    choice_.begin(current_cables(from, to));
    for (long part = 0; part < choice_.parts(); part++)
      choice_.place(options[choice_.cheapest(options)]);
    choice_.finish(into);
    return 2 * params_.link_lat;
  }

private:
  long d_;
  long layers_;
  long columns_ = 1; /* d + 1 */
  double spine_bw_;
  bool by_source_;
  bool adaptive_;
  std::vector<long> per_leaf_;  /* [i]: servers on each leaf of layer i */
  std::vector<Server> servers_; /* [host]: its layer, column and port */
  std::vector<Link*> up_;       /* [leaf_slot(i, c, o)]: leaf (i, c) to the spine of columns c and o */
  std::vector<Link*> down_;     /* [leaf_slot(i, c, o)]: the spine of columns c and o to leaf (i, c) */

  /* From the leaf of s up to the spine of its column and column `other`, down to the leaf of t (same column). */
  Path turn_path(const Server& s, const Server& t, long other) const
  {
    Path path;
    path.add(up_[leaf_slot(s.layer, s.column, other)], params_.link_lat);
    path.add(down_[leaf_slot(t.layer, t.column, other)], params_.link_lat);
    return path;
  }

  long leaf_slot(long layer, long column, long other) const { return (layer * columns_ + column) * columns_ + other; }

  static std::string leaf_name(long layer, long column)
  {
    return "leaf-" + std::to_string(layer) + "-" + std::to_string(column);
  }
};

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  std::string path = topolab::params_path("TOPOLAB_MLFM_PARAMS", reinterpret_cast<void*>(&load_platform), "mlfm");
  topolab::load_zone<MlfmZone>(
      engine,
      ZoneParams("mlfm", path, {"d", "layers", "servers_per_leaf", "spine_bw", "spine_choice", "routing", "spread", "revisit"}));
}
