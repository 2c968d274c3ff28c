/*
 * paths.hpp - how a compiled zone routes a message over the paths its family
 * offers between two switches: whole along one path, spread over several
 * (per-packet spreading at flow level), or chosen from the network's state
 * when the message starts (adaptive routing). docs/adaptive-routing.md says
 * what each mode models, and generators/spread.py is its Python twin.
 *
 * Spreading needs topolab's SimGrid patch 0008 (Route::link_shares_: each link
 * is charged with the share of the message that crosses it); adaptive choice
 * reads s4u::Link::get_flow_count() (same patch): the messages crossing a
 * cable now, each by its share, including those that started at this very
 * instant, which a rate read after the last max-min solve would miss.
 *
 * Adaptive choice at flow level (UGAL-style) is among options: a path, or an
 * even spread over several paths (Valiant's, as a network that sends each
 * packet through a random intermediate spreads them). A path's cost is the
 * load of its busiest visible cable once the message (or the part of it being
 * placed) is added; a load is the messages on the cable over the cable's
 * bandwidth in host-cable bandwidths, and a cost is never below 1 (a cable
 * that carries at most one cable's worth of messages is not congested). A
 * spread option's cost is the mean of its paths' (what a packet that takes
 * one of them sees), each path carrying its share of the part. The cheapest option wins; ties go to a
 * minimal option (not a detour), then to the lower load below that floor
 * (the parts of a message spread over equally idle options, as packets over
 * empty queues), then to the option listed first (the static rule's path is
 * listed first, so that on an idle network a message routed whole takes the
 * static rule's route). Which cables
 * are visible is the variant's: all of them (the global view, UGAL-G), or the
 * first cable of each path, which leaves the source switch (the local view,
 * UGAL-L), and with `backpressure` B the B cables after it, whose congestion
 * fills the source's output queue through credits. With packet granularity
 * the message is placed in PARTS equal parts, one after the other, each
 * seeing the parts placed before it. With `revisit` T the zone takes its
 * decisions again every T seconds while its adaptive messages flow (routed_zone.hpp);
 * a message routed whole then stays on its path unless another option is
 * cheaper (a tie goes to the cables it crosses: SimGrid patch 0033).
 */
#pragma once

#include "zone_common.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace topolab {

using simgrid::s4u::Link;

/* What a routing decision keeps about a cable while it places a message: the parts placed on it so far, its weight in
 * the spread being built, its position in a table being indexed, and its flow count and bandwidth as read when the
 * decision first looked (nothing moves while a message is routed). A field counts only while its stamp is the one
 * of the decision under way, so nothing is cleared between messages; SimGrid routes one message at a time, so one
 * decision (one Spread, one AdaptiveChoice's message) is under way at a time. Reached through the link's extension
 * slot: a decision reads it about ten thousand times a message per packet, where a hash map per decision cost a
 * lookup each time. */
struct CableScratch {
  std::uint64_t placed_stamp = 0;
  double placed              = 0;
  std::uint64_t weight_stamp = 0;
  double weight              = 0;
  std::uint64_t index_stamp  = 0;
  size_t index               = 0;
  std::uint64_t seen_stamp   = 0;
  double flow_count          = 0;
  double bandwidth           = 0;
  std::uint64_t current_stamp = 0; /* the message being revisited crosses the cable now */
};

/* A new stamp: every field stamped before it stops counting. */
inline std::uint64_t fresh_stamp()
{
  static std::uint64_t last = 0;
  return ++last;
}

/* The scratch of `cable`, made at its first use; the scratches live as long as the process (no deleter, so unloading
 * the zone leaves nothing for SimGrid to call). */
inline CableScratch& scratch(Link* cable)
{
  static const auto slot = Link::extension_create<CableScratch>(std::function<void(void*)>());
  static std::deque<CableScratch> scratches;
  CableScratch* mine = cable->extension(slot);
  if (mine == nullptr) {
    mine = &scratches.emplace_back();
    cable->extension_set(slot, mine, false);
  }
  return *mine;
}

/* A path between two switches: its cables in order (the first leaves the source switch), their latency, and whether
 * it is a detour (a non-minimal path: Valiant's). */
struct Path {
  std::vector<Link*> cables;
  double latency = 0;
  bool detour    = false;

  void add(Link* cable, double cable_latency)
  {
    cables.push_back(cable);
    latency += cable_latency;
  }
};

/* The parts a message is cut into with packet granularity: each part chooses its option in turn. */
constexpr long PARTS = 64;

enum class View { global, local };

/* Append a whole path to a route; returns its latency. */
inline double follow(const Path& path, Route* into)
{
  for (Link* cable : path.cables)
    into->link_list_.push_back(cable->get_impl());
  return path.latency;
}

/* A message spread over paths, each taking a weight of it: the route lists every cable once, in the order the paths
 * first cross it, with the weight that crosses it over the whole weight (with whole-number weights, counts divided
 * once, so that the Python model computes the same doubles). */
class Spread {
public:
  void add(const Path& path, double weight)
  {
    for (Link* cable : path.cables) {
      CableScratch& mine = scratch(cable);
      if (mine.weight_stamp != stamp_) {
        mine.weight_stamp = stamp_;
        mine.weight       = 0.0;
        order_.push_back(cable);
      }
      mine.weight += weight;
    }
    total_ += weight;
    latency_sum_ += weight * path.latency;
  }

  /* The route's cables and shares; returns the mean latency of its paths, each by its weight. A message that took
   * one path is that path, without shares. */
  double into(Route* into) const
  {
    bool whole = std::all_of(order_.begin(), order_.end(), [this](Link* c) { return scratch(c).weight == total_; });
    for (Link* cable : order_) {
      into->link_list_.push_back(cable->get_impl());
      if (!whole)
        into->link_shares_.push_back(scratch(cable).weight / total_);
    }
    return latency_sum_ / total_;
  }

private:
  std::uint64_t stamp_ = fresh_stamp(); /* the weights of this spread (CableScratch::weight) */
  std::vector<Link*> order_;
  double total_       = 0;
  double latency_sum_ = 0; /* over the paths, each latency by its weight */
};

/* Spread a message evenly over every path (oblivious per-packet spreading). */
inline double spread_evenly(const std::vector<Path>& paths, Route* into)
{
  Spread spread;
  for (const Path& path : paths)
    spread.add(path, 1.0);
  return spread.into(into);
}

/* What an adaptive decision chooses among: one path, or an even spread over several. */
class Option {
public:
  explicit Option(Path path) : detour_(path.detour) { paths_.push_back(std::move(path)); }

  /* An even spread over `paths` (not empty): a detour if any of them is. */
  explicit Option(std::vector<Path> paths) : paths_(std::move(paths))
  {
    detour_ = std::any_of(paths_.begin(), paths_.end(), [](const Path& p) { return p.detour; });
  }

  bool detour() const { return detour_; }
  const std::vector<Path>& paths() const { return paths_; }

  /* Each cable the option crosses with its share of the option (global view), or the first cable of each path
   * (local view); computed once. */
  const std::vector<std::pair<Link*, double>>& cables(View view) const
  {
    std::vector<std::pair<Link*, double>>& table = view == View::global ? all_ : first_;
    if (table.empty()) {
      std::uint64_t stamp = fresh_stamp(); /* CableScratch::index: each cable's row in the table */
      double each         = 1.0 / static_cast<double>(paths_.size());
      for (const Path& path : paths_)
        for (size_t i = 0; i < path.cables.size() && (view == View::global || i == 0); i++) {
          CableScratch& mine = scratch(path.cables[i]);
          if (mine.index_stamp != stamp) {
            mine.index_stamp = stamp;
            mine.index       = table.size();
            table.emplace_back(path.cables[i], 0.0);
          }
          table[mine.index].second += each;
        }
    }
    return table;
  }

private:
  std::vector<Path> paths_;
  bool detour_ = false;
  mutable std::vector<std::pair<Link*, double>> all_;
  mutable std::vector<std::pair<Link*, double>> first_;
};

/* The d-th pseudo-random draw of a routing decision: a function of the pair's hash and the decision's sequence
 * number, so that the same command draws the same candidates (SimGrid routes messages in a deterministic order). */
inline std::uint64_t draw(std::uint64_t pair_hash, std::uint64_t sequence, std::uint64_t d)
{
  return mix(pair_hash ^ mix((sequence << 8) + d));
}

/* Adaptive choice among options (the header comment), one message at a time: begin(), then for each of parts()
 * parts, place() the option that cheapest() (or a walk of cheapest_cable() choices) picks, then finish().
 * `reference_bw` is a host cable's bandwidth. */
class AdaptiveChoice {
public:
  /* `local_depth`: the cables of a path the local view sees (1: the source switch's own port). */
  AdaptiveChoice(View view, bool by_packet, double reference_bw, size_t local_depth = 1)
      : view_(view), by_packet_(by_packet), reference_bw_(reference_bw), local_depth_(local_depth)
  {
  }

  /* `current`: when a decision is revisited, the cables the message crosses now (it stays on them unless another
   * option is cheaper: a tie goes to them). */
  void begin(const std::vector<Link*>& current = {})
  {
    stamp_     = fresh_stamp();
    spread_    = Spread();
    revisited_ = !current.empty();
    for (Link* cable : current)
      scratch(cable).current_stamp = stamp_;
    if (on_decision_)
      on_decision_();
  }

  /* Called at the start of every decision (RoutedZone: to revisit the decisions while their messages flow). */
  void on_decision(std::function<void()> callback) { on_decision_ = std::move(callback); }

  long parts() const { return by_packet_ ? PARTS : 1; }

  /* The index of the cheapest option (the header comment's order). */
  size_t cheapest(const std::vector<Option>& options) const
  {
    size_t best = 0;
    Cost least  = cost(options[0]);
    for (size_t i = 1; i < options.size(); i++) {
      Cost c = cost(options[i]);
      if (c < least) {
        best  = i;
        least = c;
      }
    }
    return best;
  }

  /* The index of the least loaded cable (a switch's choice among its ports: the same order as cheapest()), the
   * cables from `minimal` on being deroutes (DAL's), the first listed on a tie. */
  size_t cheapest_cable(const std::vector<Link*>& cables, size_t minimal = SIZE_MAX) const
  {
    size_t best = 0;
    Cost least  = {floored(load(cables[0], 1.0)), false, load(cables[0], 1.0), minimal == 0, !current(cables[0])};
    for (size_t i = 1; i < cables.size(); i++) {
      double l = load(cables[i], 1.0);
      Cost c   = {floored(l), false, l, i >= minimal, !current(cables[i])};
      if (c < least) {
        best  = i;
        least = c;
      }
    }
    return best;
  }

  void place(const Option& option)
  {
    double each = unit() / static_cast<double>(option.paths().size());
    for (const Path& path : option.paths())
      spread_.add(path, each);
    for (const auto& [cable, share] : option.cables(View::global)) {
      CableScratch& mine = seen(cable);
      if (mine.placed_stamp != stamp_) {
        mine.placed_stamp = stamp_;
        mine.placed       = 0.0;
      }
      mine.placed += unit() * share;
    }
  }

  void place(const Path& path) { place(Option(path)); }

  /* The message's route (Spread) and its latency. */
  double finish(Route* into) const { return spread_.into(into); }

  /* UGAL's decision for one message (Kim et al.): `options` (the minimal paths, and by packet Valiant spread evenly)
   * against `candidates` Valiant paths drawn for each part, `valiant_of(drawn)` building the one a draw names (the
   * draws: topolab::draw of the pair's hash and of the decision's rank `sequence`); the message's route into `into`,
   * and its latency. */
  template <class ValiantOf>
  double ugal(std::vector<Option> options, long candidates, std::uint64_t pair_hash, std::uint64_t sequence,
              ValiantOf valiant_of, Route* into, const std::vector<Link*>& current = {})
  {
    begin(current);
    auto on_it = [this](const Option& option) { return is_current(option); };
    if (!current.empty() && std::none_of(options.begin(), options.end(), on_it)) {
      Path path; /* the route the message has: a detour (the minimal paths are the options) */
      for (Link* cable : current)
        path.add(cable, cable->get_latency());
      path.detour = true;
      options.emplace_back(std::move(path));
    }
    size_t fixed = options.size();
    for (long part = 0; part < parts(); part++) {
      options.erase(options.begin() + static_cast<long>(fixed), options.end());
      for (long j = 0; j < candidates; j++)
        options.emplace_back(valiant_of(draw(pair_hash, sequence, static_cast<std::uint64_t>(part * candidates + j))));
      place(options[cheapest(options)]);
    }
    return finish(into);
  }

private:
  View view_;
  bool by_packet_;
  double reference_bw_;
  size_t local_depth_;
  std::uint64_t stamp_ = fresh_stamp(); /* this message's (CableScratch: placed, and what was seen) */
  bool revisited_      = false;         /* the message's decision is revisited: it has a route (begin) */
  Spread spread_;
  std::function<void()> on_decision_;

  /* What cheapest() compares: the busiest visible cable's load (never below 1), detours after minimal options, then
   * the load below that floor (the parts of a message spread over idle options, as packets over empty queues), then
   * a switch's minimal ports before its deroutes (cheapest_cable), then the way a revisited message is on before
   * another (it moves only to a cheaper one). */
  struct Cost {
    double floored;
    bool detour;
    double raw;
    bool deroute;
    bool moves;
    bool operator<(const Cost& other) const
    {
      if (floored != other.floored)
        return floored < other.floored;
      if (detour != other.detour)
        return !detour;
      if (raw != other.raw)
        return raw < other.raw;
      if (deroute != other.deroute)
        return !deroute;
      return !moves && other.moves;
    }
  };

  /* Whether the message being revisited crosses `cable` now (begin). */
  bool current(Link* cable) const { return revisited_ && scratch(cable).current_stamp == stamp_; }

  /* Whether `option` is the one path the message being revisited is on (a path from its source switch to its
   * destination's whose every cable the message crosses is the message's path). */
  bool is_current(const Option& option) const
  {
    const std::vector<Path>& paths = option.paths();
    return revisited_ && paths.size() == 1 && !paths[0].cables.empty() &&
           std::all_of(paths[0].cables.begin(), paths[0].cables.end(), [this](Link* c) { return current(c); });
  }

  double unit() const { return 1.0 / static_cast<double>(parts()); }

  static double floored(double load) { return std::max(1.0, load); }

  /* A cable's load in host-cable bandwidths once `share` of the part being placed is added. */
  double load(Link* cable, double share) const
  {
    const CableScratch& mine = seen(cable);
    double messages          = mine.flow_count + unit() * share + (mine.placed_stamp == stamp_ ? mine.placed : 0.0);
    return messages * reference_bw_ / mine.bandwidth;
  }

  /* The scratch of `cable`, with its flow count and bandwidth read once this message. */
  CableScratch& seen(Link* cable) const
  {
    CableScratch& mine = scratch(cable);
    if (mine.seen_stamp != stamp_) {
      mine.seen_stamp = stamp_;
      mine.flow_count = cable->get_flow_count();
      mine.bandwidth  = cable->get_bandwidth();
    }
    return mine;
  }

  /* An option's cost: its paths' mean cost (a packet of a spread option takes one of its paths), a path's cost the
   * load of its busiest visible cable with the path's share of the part added. */
  Cost cost(const Option& option) const
  {
    const std::vector<Path>& paths = option.paths();
    double share                   = 1.0 / static_cast<double>(paths.size());
    double floored_sum             = 0.0;
    double raw_sum                 = 0.0;
    for (const Path& path : paths) {
      double worst = 0.0;
      size_t seen  = view_ == View::global ? path.cables.size() : std::min(local_depth_, path.cables.size());
      for (size_t i = 0; i < seen; i++)
        worst = std::max(worst, load(path.cables[i], share));
      floored_sum += floored(worst);
      raw_sum += worst;
    }
    double n = static_cast<double>(paths.size());
    return {floored_sum / n, option.detour(), raw_sum / n, false, !is_current(option)};
  }
};

/* Valiant paths drawn for each UGAL decision (a message, or a part of it). */
constexpr long VALIANT_CANDIDATES = 2;

} // namespace topolab
