/*
 * hyperx_zone.cpp - the HyperX of generators/topologies/hyperx.py as a compiled SimGrid
 * platform: hosts, cables and routes of the Python model, name for name,
 * each route computed on demand by the model's rule (dimension-ordered, a
 * lane per pair of hosts), so that memory is linear in the machine.
 *
 * The parameter file ($TOPOLAB_HYPERX_PARAMS, or NAME.params beside NAME.so)
 * has the keys of every compiled zone (zone_common.hpp: name, link_bw,
 * link_lat, nbl, host_speed and the node keys) and
 *
 *   dims 7 7 7              switches along each dimension (first varies
 *                           fastest), at most 32 dimensions
 *   links 1                 cables between every two switches that differ in
 *                           exactly one coordinate (K)
 *   hosts 18                hosts per switch (T)
 *   routing dal             optional (dimension-order): adaptive, below; or
 *                           valiant: dimension-ordered to an intermediate
 *                           switch, the ((hash >> 32) mod (switches - 2))-th
 *                           other than the two ends, then on
 *   spread packet           optional (message): a message's packets spread
 *                           over the lanes (dimension-order), every
 *                           intermediate switch (valiant), or placed in
 *                           parts (dal)
 *
 * Names: hosts host-<i>-<k> (port k of switch i, host number i * T + k),
 * switches switch-<i> (not SimGrid elements: routes name links only), cables
 * switch-<a>_to_switch-<b> and back for a < b, with "#<lane>" (0 .. K-1) when
 * K > 1. Routes: for each dimension in order where the switches differ, one
 * hop straight to the destination's coordinate; every hop on lane
 * mix(src * H + dst) mod K. The rules are those of generators/topologies/hyperx.py, line
 * for line; tests compare every route through the loader.
 *
 * DAL (Ahn et al., SC 2009, Sect. 4: dimensionally-adaptive, load-balanced):
 * at every switch the message (or part) takes the least loaded of its
 * options (paths.hpp, the local view): a hop straight to the destination's
 * coordinate in any dimension where they differ, or a deroute to another
 * switch of that dimension's line if the dimension has not been derouted
 * yet; the options are listed straight hops first, dimension 0 first, the
 * pair's lane first, so that an idle network's route is dimension-ordered.
 * A tie goes to a straight hop, then (a decision revisited) to the cable the
 * message is on, then to the option listed first.
 */
#include "routed_zone.hpp"
#include "zone_common.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using simgrid::s4u::Link;
using topolab::Path;
using topolab::Route;
using topolab::ZoneParams;


constexpr size_t MAX_DIMS   = 32;       /* generators.topologies.torus.MAX_DIMS */
constexpr long MAX_ELEMENTS = 1L << 40; /* far beyond what the Python model builds: guards the arithmetic only */
constexpr long HOP_INDEX    = 1L << 16; /* DAL's hop options indexed by switch and dimensions derouted up to this */

class HyperXZone : public topolab::RoutedZone {
public:
  explicit HyperXZone(const ZoneParams& p)
      : RoutedZone(p, p.word("routing", {"dimension-order", "dal", "valiant"}, "dimension-order"))
      , dims_(p.integers("dims"))
      , lanes_(p.integer("links", 1))
      , hosts_(p.integer("hosts", 1))
  {
    if (dims_.empty() || dims_.size() > MAX_DIMS)
      p.fail("parameter 'dims' must give 1 to " + std::to_string(MAX_DIMS) + " dimensions ('" + p.path() + "')");
    for (long size : dims_) {
      if (size < 1)
        p.fail("every dimension must be >= 1 ('" + p.path() + "')");
      stride_.push_back(switches_);
      offset_.push_back(ports_);
      switches_ = checked_product(switches_, size, p);
      if (size > 1) /* no hop ever goes along a dimension of length 1: no slots for it */
        ports_ += size;
    }
    if (routing_ == "valiant" && switches_ < 3)
      p.fail("valiant routing needs at least 3 switches ('" + p.path() + "')");
    if (lanes_ > 1 && switches_ == 1)
      p.fail("links > 1 parallel cables need two switches to join, and dims is a single switch ('" + p.path() + "')");
    checked_product(switches_, hosts_, p);
    checked_product(checked_product(switches_, ports_, p), lanes_, p);
    if (routing_ == "dal" && dims_.size() < 16 && switches_ <= HOP_INDEX >> dims_.size())
      hop_index_.resize(static_cast<size_t>(switches_) << dims_.size());
  }

  void build()
  {
    add_switched_hosts(host_names(switches_, hosts_), hosts_, switch_name);
    cables_.assign(switches_ * ports_ * lanes_, nullptr);
    for (long a = 0; a < switches_; a++)
      for (size_t d = 0; d < dims_.size(); d++)
        for (long v = coordinate(a, d) + 1; v < dims_[d]; v++) {
          long b = a + (v - coordinate(a, d)) * stride_[d];
          for (long lane = 0; lane < lanes_; lane++) {
            cables_[slot(a, d, v, lane)]                = cable(a, b, lane);
            cables_[slot(b, d, coordinate(a, d), lane)] = cable(b, a, lane);
          }
        }
  }

  double route_between(long from, long to, Route* into) override
  {
    long here   = switch_of(from);
    long target = switch_of(to);
    long lane   = lanes_ > 1 ? static_cast<long>(pair_hash(from, to) % static_cast<std::uint64_t>(lanes_)) : 0;
    if (routing_ == "valiant" && here != target) {
      if (!by_packet_)
        return topolab::follow(valiant_path(here, target, intermediate(here, target, pair_hash(from, to) >> 32), lane),
                               into);
      std::vector<Path> paths;
      for (long middle = 0; middle < switches_; middle++)
        if (middle != here && middle != target)
          paths.push_back(valiant_path(here, target, middle, lane));
      return topolab::spread_evenly(paths, into);
    }
    if (routing_ != "dal" && !by_packet_)
      return topolab::follow(ordered_path(here, target, lane), into);
    if (routing_ != "dal") {
      std::vector<Path> paths;
      for (long l = 0; l < lanes_; l++)
        paths.push_back(ordered_path(here, target, (lane + l) % lanes_));
      return topolab::spread_evenly(paths, into);
    }
    choice_.begin(current_cables(from, to));
    for (long part = 0; part < choice_.parts(); part++)
      choice_.place(dal_path(here, target, lane));
    return choice_.finish(into);
  }

private:
  std::vector<long> dims_;
  long lanes_;
  long hosts_;
  long switches_ = 1;
  long ports_    = 0;                     /* sum of the dimensions longer than 1: a switch's slots, per lane */
  std::vector<long> stride_;              /* [d]: the switch number's step along dimension d */
  std::vector<long> offset_;              /* [d]: the first slot of dimension d (ports_ before it) */
  std::vector<Link*> cables_; /* [slot(a, d, v, lane)]: switch a to the switch at coordinate v along d (null where v is
                                 a's own coordinate) */
  /* A hop's options (hop_options): the cables, their rows in what the decision saw, and where each leads (dimension,
   * coordinate to go to); those before `minimal` are minimal hops, the others deroutes. */
  struct HopOptions {
    std::uint64_t decision = 0; /* the decision that listed them (AdaptiveChoice::decision) */
    size_t minimal         = 0;
    std::vector<Link*> cables;
    std::vector<size_t> rows;
    std::vector<std::pair<size_t, long>> moves;
  };
  mutable std::vector<HopOptions> hop_index_; /* [switch << dimensions | derouted], where that is at most HOP_INDEX */
  mutable HopOptions hop_scratch_;            /* elsewhere, listed each time */
  mutable Path part_path_;                    /* dal_path's walk */

  /* The dimension-ordered path from switch `here` to switch `target` on `lane`. */
  Path ordered_path(long here, long target, long lane) const
  {
    Path path;
    for (size_t d = 0; d < dims_.size(); d++) {
      long c = coordinate(here, d);
      long t = coordinate(target, d);
      if (c == t)
        continue;
      path.add(cables_[slot(here, d, t, lane)], params_.link_lat);
      here += (t - c) * stride_[d];
    }
    return path;
  }

  /* The `hashed mod (switches - 2)`-th switch other than u and v. */
  long intermediate(long u, long v, std::uint64_t hashed) const
  {
    long m = static_cast<long>(hashed % static_cast<std::uint64_t>(switches_ - 2));
    m += m >= std::min(u, v);
    m += m >= std::max(u, v);
    return m;
  }

  /* Dimension-ordered to switch `middle`, then dimension-ordered on to switch `target`, on `lane`. */
  Path valiant_path(long here, long target, long middle, long lane) const
  {
    Path path = ordered_path(here, middle, lane);
    for (Link* cable : ordered_path(middle, target, lane).cables)
      path.add(cable, cable->get_latency());
    path.detour = true;
    return path;
  }

  /* One part's DAL walk from switch `here` to switch `target` (the file's comment), `lane` the pair's, into memory
   * kept between parts. The coordinates of both switches are read once and follow the hops; a hop's options are
   * listed once a decision for each switch and set of dimensions derouted (hop_options), as the parts of a message
   * (and a decision revisited, for every message in flight) walk through the same ones again. */
  const Path& dal_path(long here, long target, long lane) const
  {
    Path& path = part_path_;
    path.cables.clear();
    path.latency = 0;
    path.detour  = false;
    std::array<long, MAX_DIMS> at{}; /* here's coordinates */
    std::array<long, MAX_DIMS> to{}; /* target's */
    for (size_t d = 0; d < dims_.size(); d++) {
      at[d] = coordinate(here, d);
      to[d] = coordinate(target, d);
    }
    std::uint64_t derouted = 0; /* bit d: dimension d derouted already */
    while (here != target) {
      const HopOptions& hop = hop_options(here, derouted, at, to, lane);
      size_t pick           = choice_.cheapest_row(hop.rows, hop.minimal);
      auto [d, v]           = hop.moves[pick];
      if (v != to[d])
        derouted |= std::uint64_t{1} << d;
      path.add(hop.cables[pick], params_.link_lat);
      here += (v - at[d]) * stride_[d];
      at[d] = v;
    }
    return path;
  }

  /* A hop's options from switch `here` (coordinates `at`) towards `to`, the dimensions of `derouted` derouted: a hop
   * straight to the target's coordinate in any dimension where they differ, then a deroute in each dimension not yet
   * derouted, dimension 0 first, the pair's lane first; listed once a decision where the zone is small enough to
   * index every (switch, derouted) pair, else each time. */
  const HopOptions& hop_options(long here, std::uint64_t derouted, const std::array<long, MAX_DIMS>& at,
                                const std::array<long, MAX_DIMS>& to, long lane) const
  {
    bool indexed     = !hop_index_.empty();
    HopOptions& hop  = indexed ? hop_index_[static_cast<size_t>(here) << dims_.size() | derouted] : hop_scratch_;
    if (indexed && hop.decision == choice_.decision())
      return hop;
    hop.decision = choice_.decision();
    hop.cables.clear();
    hop.rows.clear();
    hop.moves.clear();
    for (int deroutes = 0; deroutes < 2; deroutes++) {
      if (deroutes)
        hop.minimal = hop.cables.size(); /* the options before it are minimal hops, the others deroutes */
      for (size_t d = 0; d < dims_.size(); d++) {
        long c = at[d];
        long t = to[d];
        if (c == t || (deroutes && (derouted >> d & 1)))
          continue;
        for (long v = 0; v < dims_[d]; v++)
          if (deroutes ? v != c && v != t : v == t)
            for (long l = 0; l < lanes_; l++) {
              Link* cable = cables_[slot(here, d, v, (lane + l) % lanes_)];
              hop.cables.push_back(cable);
              hop.rows.push_back(choice_.row_of(cable));
              hop.moves.emplace_back(d, v);
            }
      }
    }
    return hop;
  }

  static long checked_product(long a, long b, const ZoneParams& p)
  {
    if (b != 0 && a > MAX_ELEMENTS / b)
      p.fail("the machine is too large: more than 2^40 elements ('" + p.path() + "')");
    return a * b;
  }

  long coordinate(long sw, size_t d) const { return (sw / stride_[d]) % dims_[d]; }

  long slot(long sw, size_t d, long v, long lane) const { return (sw * ports_ + offset_[d] + v) * lanes_ + lane; }

  static std::string switch_name(long sw) { return "switch-" + std::to_string(sw); }

  Link* cable(long a, long b, long lane)
  {
    std::string name = switch_name(a) + "_to_" + switch_name(b);
    if (lanes_ > 1)
      name += "#" + std::to_string(lane);
    return add_cable_link(name, params_.link_bw, params_.link_lat);
  }
};

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  std::string path = topolab::params_path("TOPOLAB_HYPERX_PARAMS", reinterpret_cast<void*>(&load_platform), "hyperx");
  topolab::load_zone<HyperXZone>(engine, ZoneParams("hyperx", path, {"dims", "links", "hosts", "routing", "spread", "revisit"}));
}
