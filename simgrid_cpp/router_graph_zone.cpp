/*
 * router_graph_zone.cpp - a direct network given by its router graph, as a
 * compiled SimGrid platform: p hosts on each of R routers, one duplex cable
 * per edge of the graph, minimal routes computed on demand by the rule of
 * generators/router_graph.py (the zone of the low-diameter families: the
 * Slim Fly of generators/topologies/slimfly.py).
 *
 * The parameter file ($TOPOLAB_ROUTER_GRAPH_PARAMS, or NAME.params beside
 * NAME.so) has the keys of every compiled zone (zone_common.hpp: name,
 * link_bw, link_lat, nbl, host_speed and the node keys) and
 *
 *   routers 18              R: routers 0 .. R-1 (1 to 16384: the zone holds
 *                           the R x R table of distances, one byte each)
 *   hosts 3                 p: hosts per router
 *   neighbours 0 1 2 9 12   one line per router, in any order: the router,
 *                           then its neighbours, strictly increasing
 *   routing valiant         optional (minimal), or ugal-l, ugal-g
 *   spread packet           optional (message): a message's packets spread
 *                           over every minimal path (minimal), every
 *                           intermediate router (valiant), or placed in parts
 *
 * Every router has exactly one "neighbours" line; a neighbour is another
 * router (0 .. R-1, not the router itself); the graph is undirected (b is a
 * neighbour of a iff a is a neighbour of b), connected, of diameter < 255.
 * Anything else is refused with one line "topolab router graph zone: error:
 * ..." and exit status 2.
 *
 * Names: hosts host-<r>-<k> (host number r * p + k, netpoint ids in that
 * order), routers router-<r> (not SimGrid elements: routes name links only),
 * cables <a>_to_<b>. Links: each host's cable (and limiter, intra-node link),
 * then both directions of each edge's cable, edges by lower router.
 *
 * Routing (generators/router_graph.py, line for line): the distances between
 * routers by a breadth-first search from every router at load time; from
 * router u towards router v, the next hop is one of u's neighbours one step
 * closer to v, increasing: candidates[mix(src * H + dst) mod count] (src and
 * dst the host numbers, H the number of hosts; the same hash at every hop).
 * Valiant: minimally to an intermediate router, the ((hash >> 32) mod
 * (R - 2))-th other than the two ends, then minimally on, the same hash at
 * every hop. UGAL (paths.hpp) weighs the minimal path against
 * VALIANT_CANDIDATES Valiant paths through routers drawn for each decision
 * (the message, or each part of a message spread by packet) and, by packet,
 * Valiant spread evenly.
 * Tests compare every route through the loader.
 */
#include "routed_zone.hpp"
#include "zone_common.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using simgrid::s4u::Link;
using topolab::Path;
using topolab::Route;
using topolab::ZoneParams;

constexpr long MAX_ROUTERS       = 16384;
constexpr std::uint8_t UNREACHED = 255;
const char* const NEIGHBOURS     = "neighbours";

class RouterGraphZone : public topolab::RoutedZone {
public:
  explicit RouterGraphZone(const ZoneParams& p)
      : RoutedZone(p, p.word("routing", {"minimal", "valiant", "ugal-l", "ugal-g"}, "minimal"))
      , routers_(p.integer("routers", 1))
      , hosts_(p.integer("hosts", 1))
  {
    if (routing_ != "minimal" && routers_ < 3)
      p.fail(routing_ + " routing needs at least 3 routers ('" + p.path() + "')");
    if (routers_ > MAX_ROUTERS)
      p.fail("parameter 'routers' must be at most " + std::to_string(MAX_ROUTERS) + " ('" + p.path() + "')");
    if (hosts_ > INT_MAX / routers_)
      p.fail("routers x hosts must be at most " + std::to_string(INT_MAX) + " ('" + p.path() + "')");
    read_neighbours(p);
    check_symmetric(p);
    compute_distances(p);
  }

  void build()
  {
    add_switched_hosts(host_names(routers_, hosts_), hosts_, router_name);
    cables_.assign(adjacent_.size(), nullptr);
    for (long r = 0; r < routers_; r++)
      for (long slot = first_[r]; slot < first_[r + 1]; slot++) {
        long n = adjacent_[slot];
        if (n < r)
          continue;
        cables_[slot] = add_cable_link(router_name(r) + "_to_" + router_name(n), params_.link_bw, params_.link_lat);
        cables_[slot_of(n, r)] =
            add_cable_link(router_name(n) + "_to_" + router_name(r), params_.link_bw, params_.link_lat);
      }
  }

  double route_between(long from, long to, Route* into) override
  {
    std::uint64_t hashed = pair_hash(from, to);
    long here            = switch_of(from);
    long target          = switch_of(to);
    if (here == target || routing_ == "minimal") {
      if (!by_packet_)
        return topolab::follow(minimal_path(here, target, hashed), into);
      std::vector<Path> paths;
      minimal_paths(here, target, Path(), paths);
      return topolab::spread_evenly(paths, into);
    }
    if (routing_ == "valiant") {
      if (!by_packet_)
        return topolab::follow(valiant_path(here, target, intermediate(here, target, hashed >> 32), hashed), into);
      return topolab::spread_evenly(valiant_paths(here, target, hashed), into);
    }
    /* UGAL: the minimal path; per packet, Valiant spread evenly too; and VALIANT_CANDIDATES Valiant paths drawn for
     * each decision (the message, or each part) */
    std::vector<topolab::Option> options = {topolab::Option(minimal_path(here, target, hashed))};
    auto at    = [&](size_t i) { return valiant_path(here, target, intermediate(here, target, i), hashed); };
    auto index = [this](std::uint64_t drawn) {
      return static_cast<size_t>(drawn % static_cast<std::uint64_t>(routers_ - 2));
    };
    return ugal(std::move(options), from, to, static_cast<size_t>(routers_ - 2), index, at, into);
  }

private:
  long routers_;
  long hosts_;
  std::vector<long> first_;               /* [r] .. [r + 1]: the slots of router r's neighbours in adjacent_ */
  std::vector<long> adjacent_;            /* [slot]: a neighbour, increasing per router */
  std::vector<std::uint8_t> distances_;   /* [a * R + b]: the distance between routers a and b, in cables */
  std::vector<Link*> cables_;           /* [slot of b in a's list]: router a to router b */

  /* The slots of router u's neighbours one step closer to router v, increasing. */
  std::vector<long> next_hops(long u, long v) const
  {
    const std::uint8_t* distance = &distances_[static_cast<size_t>(v * routers_)]; /* from v: symmetric */
    std::vector<long> slots;
    for (long slot = first_[u]; slot < first_[u + 1]; slot++)
      if (distance[adjacent_[slot]] + 1 == distance[u])
        slots.push_back(slot);
    return slots;
  }

  /* The minimal path from router u to router v: at every hop candidates[hashed mod count]. */
  Path minimal_path(long u, long v, std::uint64_t hashed) const
  {
    Path path;
    while (u != v) {
      std::vector<long> candidates = next_hops(u, v);
      long slot                    = candidates[hashed % candidates.size()];
      path.add(cables_[slot], params_.link_lat);
      u = adjacent_[slot];
    }
    return path;
  }

  /* Every minimal path from router u to router v, each `so_far` followed by it, next hops in increasing order. */
  void minimal_paths(long u, long v, const Path& so_far, std::vector<Path>& out) const
  {
    if (u == v) {
      out.push_back(so_far);
      return;
    }
    for (long slot : next_hops(u, v)) {
      Path longer = so_far;
      longer.add(cables_[slot], params_.link_lat);
      minimal_paths(adjacent_[slot], v, longer, out);
    }
  }

  /* The `hashed mod (R - 2)`-th router other than u and v. */
  long intermediate(long u, long v, std::uint64_t hashed) const
  {
    long m = static_cast<long>(hashed % static_cast<std::uint64_t>(routers_ - 2));
    m += m >= std::min(u, v);
    m += m >= std::max(u, v);
    return m;
  }

  /* The Valiant paths from router u to router v through every other router, in order. */
  std::vector<Path> valiant_paths(long u, long v, std::uint64_t hashed) const
  {
    std::vector<Path> paths;
    for (long middle = 0; middle < routers_; middle++)
      if (middle != u && middle != v)
        paths.push_back(valiant_path(u, v, middle, hashed));
    return paths;
  }

  /* Minimally from router u to router `middle`, then minimally on to router v, the pair's hash at every hop. */
  Path valiant_path(long u, long v, long middle, std::uint64_t hashed) const
  {
    Path path = minimal_path(u, middle, hashed);
    for (Link* cable : minimal_path(middle, v, hashed).cables)
      path.add(cable, cable->get_latency());
    path.detour = true;
    return path;
  }

  static std::string router_name(long router) { return "router-" + std::to_string(router); }

  /* The slot of neighbour n in router r's list, or -1. */
  long slot_of(long r, long n) const
  {
    auto begin = adjacent_.begin() + first_[r];
    auto end   = adjacent_.begin() + first_[r + 1];
    auto found = std::lower_bound(begin, end, n);
    return found != end && *found == n ? static_cast<long>(found - adjacent_.begin()) : -1;
  }

  /* Every "neighbours" line of the file (ZoneParams keeps one line per key), checked, into first_ / adjacent_. */
  void read_neighbours(const ZoneParams& p)
  {
    std::vector<std::vector<long>> lists(routers_);
    std::vector<bool> given(routers_, false);
    std::ifstream in(p.path());
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream values(line);
      std::string key;
      if (!(values >> key) || key != NEIGHBOURS)
        continue;
      std::vector<long> numbers;
      long value;
      while (values >> value)
        numbers.push_back(value);
      if (!values.eof() || numbers.empty())
        p.fail("a 'neighbours' line must be a router then its neighbours, integers: '" + line + "'");
      long r = numbers[0];
      if (r < 0 || r >= routers_)
        p.fail("'neighbours' line of router " + std::to_string(r) + ": out of range (routers " +
               std::to_string(routers_) + ")");
      if (given[r])
        p.fail("router " + std::to_string(r) + " has two 'neighbours' lines");
      given[r] = true;
      for (size_t i = 1; i < numbers.size(); i++) {
        long n = numbers[i];
        if (n < 0 || n >= routers_ || n == r)
          p.fail("router " + std::to_string(r) + ": neighbour " + std::to_string(n) + " is not another router (0 to " +
                 std::to_string(routers_ - 1) + ")");
        if (i > 1 && n <= numbers[i - 1])
          p.fail("router " + std::to_string(r) + ": its neighbours must be strictly increasing");
        lists[r].push_back(n);
      }
    }
    for (long r = 0; r < routers_; r++)
      if (!given[r])
        p.fail("router " + std::to_string(r) + " has no 'neighbours' line ('" + p.path() + "')");
    first_.push_back(0);
    for (const std::vector<long>& list : lists) {
      adjacent_.insert(adjacent_.end(), list.begin(), list.end());
      first_.push_back(static_cast<long>(adjacent_.size()));
    }
  }

  void check_symmetric(const ZoneParams& p) const
  {
    for (long r = 0; r < routers_; r++)
      for (long slot = first_[r]; slot < first_[r + 1]; slot++)
        if (slot_of(adjacent_[slot], r) < 0)
          p.fail("the router graph is not undirected: router " + std::to_string(r) + " lists " +
                 std::to_string(adjacent_[slot]) + ", which does not list it");
  }

  /* A breadth-first search from every router; the graph must be connected, of diameter < 255. */
  void compute_distances(const ZoneParams& p)
  {
    distances_.assign(static_cast<size_t>(routers_ * routers_), UNREACHED);
    std::vector<long> queue(routers_);
    for (long source = 0; source < routers_; source++) {
      std::uint8_t* row = &distances_[static_cast<size_t>(source * routers_)];
      row[source]       = 0;
      queue[0]          = source;
      long reached      = 1;
      for (long head = 0; head < reached; head++) {
        long u = queue[head];
        for (long slot = first_[u]; slot < first_[u + 1]; slot++)
          if (row[adjacent_[slot]] == UNREACHED) {
            if (row[u] + 1 >= UNREACHED)
              p.fail("the router graph's diameter must be below 255 ('" + p.path() + "')");
            row[adjacent_[slot]] = static_cast<std::uint8_t>(row[u] + 1);
            queue[reached++]     = adjacent_[slot];
          }
      }
      if (reached != routers_)
        p.fail("the router graph is not connected: router " + std::to_string(source) + " reaches " +
               std::to_string(reached) + " of the " + std::to_string(routers_) + " routers");
    }
  }
};

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  std::string path =
      topolab::params_path("TOPOLAB_ROUTER_GRAPH_PARAMS", reinterpret_cast<void*>(&load_platform), "router graph");
  topolab::load_zone<RouterGraphZone>(engine,
                                      ZoneParams("router graph", path, {"routers", "hosts", NEIGHBOURS, "routing", "spread", "revisit", "backpressure"}));
}
