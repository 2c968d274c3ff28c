/*
 * paths.hpp - how a compiled zone routes a message over the paths its family
 * offers between two switches: whole along one path, spread over several
 * (per-packet spreading at flow level; the route is spread.hpp's), or chosen
 * from the network's state when the message starts (adaptive routing).
 * docs/adaptive-routing.md says what each mode models.
 *
 * Adaptive choice reads s4u::Link::get_flow_count() (SimGrid patch 0008): the
 * messages crossing a cable now, each by its share, including those that
 * started at this very instant, which a rate read after the last max-min
 * solve would miss.
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

#include "spread.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace topolab {

/* The parts a message is cut into with packet granularity: each part chooses its option in turn. */
constexpr long PARTS = 64;

enum class View { global, local };

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

  /* Rows computed once a decision (AdaptiveChoice), as an option is weighed again for every part of a message: of
   * its visible cables, path after path, in what the decision saw (AdaptiveChoice::rows); and once it is placed, of
   * every cable, path after path, in the decision's spread, and of cables(View::global) in what it saw. */
  mutable std::uint64_t rows_stamp = 0;
  mutable std::vector<size_t> rows;
  mutable std::uint64_t placed_stamp = 0;
  mutable std::vector<size_t> spread_rows;
  mutable std::vector<size_t> table_rows;

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
 * parts, place() the option that cheapest() (or a walk of cheapest_row() choices) picks, then finish().
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
    spread_.clear();
    seen_.clear();
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
  size_t cheapest(const std::vector<Option>& options) const { return cheapest_of(options).first; }

  /* The index of the least loaded cable (a switch's choice among its ports: the same order as cheapest()), the
   * cables given by their rows in what this decision saw (row_of), those from `minimal` on being deroutes (DAL's), the
   * first listed on a tie. */
  size_t cheapest_row(const std::vector<size_t>& rows, size_t minimal = SIZE_MAX) const
  {
    return cheapest_hop(rows.size(), minimal, [&rows](size_t i) { return rows[i]; });
  }

  /* This decision's stamp (begin): what a zone lists under it holds until the next begin(). */
  std::uint64_t decision() const { return stamp_; }

  /* The row of `cable` in what this decision saw (its flow count and bandwidth read at the first look): valid until
   * the next begin(), so that a walk that meets the same cables again need not look them up. */
  size_t row_of(Link* cable) const { return row(cable); }

  void place(const Option& option)
  {
    const std::vector<std::pair<Link*, double>>& table = option.cables(View::global);
    bool kept                        = parts() > 1; /* the option may be placed again: its rows kept in it */
    std::vector<size_t>& spread_rows = kept ? option.spread_rows : spread_rows_;
    std::vector<size_t>& table_rows  = kept ? option.table_rows : table_rows_;
    if (!kept || option.placed_stamp != stamp_) {
      option.placed_stamp = stamp_;
      spread_rows.clear();
      table_rows.clear();
      for (const Path& path : option.paths())
        spread_.rows_of(path, spread_rows);
      for (const auto& [cable, share] : table)
        table_rows.push_back(row(cable));
    }
    double each      = unit() / static_cast<double>(option.paths().size());
    const size_t* at = spread_rows.data();
    for (const Path& path : option.paths()) {
      spread_.add(path, at, each);
      at += path.cables.size();
    }
    for (size_t i = 0; i < table.size(); i++) {
      Seen& mine = seen_[table_rows[i]];
      mine.placed += unit() * table[i].second;
      mine.share = -1.0;
      mine.whole = -1.0;
    }
  }

  /* A part over one path: what place(Option(path)) does, without building the option, whose one path takes the
   * whole part (unit() on each cable it crosses, a power of two: the sums are exact in either order). */
  void place(const Path& path)
  {
    path_rows_.clear();
    spread_.rows_of(path, path_rows_);
    spread_.add(path, path_rows_.data(), unit());
    for (Link* cable : path.cables) {
      Seen& mine = seen_[row(cable)];
      mine.placed += unit();
      mine.share = -1.0;
      mine.whole = -1.0;
    }
  }

  /* The message's route (Spread) and its latency. */
  double finish(Route* into) const { return spread_.into(into); }

  /* UGAL's decision for one message (Kim et al.): `options` (the minimal paths), by packet Valiant spread evenly
   * over its `count` paths too (valiant_at(0), ..., valiant_at(count - 1)), against `candidates` Valiant paths drawn
   * for each part (the draws: topolab::draw of the pair's hash and of the decision's rank `sequence`, the drawn path
   * valiant_at(valiant_index(draw))); the message's route into `into`, and its latency. By packet a drawn candidate is
   * one of the spread's paths taken whole: weighed and placed where the spread holds it, not built again. */
  template <class ValiantIndex, class ValiantAt>
  double ugal(std::vector<Option> options, long candidates, std::uint64_t pair_hash, std::uint64_t sequence,
              size_t count, ValiantIndex valiant_index, ValiantAt valiant_at, Route* into,
              const std::vector<Link*>& current = {})
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
    auto drawn = [&](long part, long j) {
      return valiant_index(draw(pair_hash, sequence, static_cast<std::uint64_t>(part * candidates + j)));
    };
    if (parts() == 1) {
      for (long j = 0; j < candidates; j++)
        options.emplace_back(valiant_at(drawn(0, j)));
      place(options[cheapest(options)]);
      return finish(into);
    }
    std::vector<Path> valiant;
    for (size_t i = 0; i < count; i++)
      valiant.push_back(valiant_at(i));
    options.emplace_back(std::move(valiant));
    const Option& spread = options.back();
    const std::vector<size_t>& spread_rows = rows(spread);
    starts_.assign(1, 0); /* where the visible rows of each of the spread's paths start in spread_rows */
    for (const Path& path : spread.paths())
      starts_.push_back(starts_.back() + visible(path));
    for (long part = 0; part < parts(); part++) {
      auto [best, least] = cheapest_of(options);
      const Path* whole  = nullptr;
      for (long j = 0; j < candidates; j++) {
        size_t i = drawn(part, j);
        Cost c   = whole_cost(spread.paths()[i], spread_rows.data() + starts_[i], spread_rows.data() + starts_[i + 1]);
        if (c < least) {
          least = c;
          whole = &spread.paths()[i];
        }
      }
      if (whole != nullptr)
        place(*whole);
      else
        place(options[best]);
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

  /* What the decision under way saw of a cable (its flow count and bandwidth, read once: nothing moves while a message
   * is routed), the parts it placed there, and the cable's load as last computed, for `share` of a part (-1: none
   * since a part was placed there), and for a whole part apart (-1: none), as UGAL weighs a spread's paths whole
   * beside the spread (ugal). A row of seen_, reached through the cable's scratch once a decision and then by its
   * number (Option::rows): the parts of a message weigh every option again, reading rows side by side where the
   * cables' scratches lie apart, and a cable shared by several paths of an option is computed once a part. */
  struct Seen {
    double flow_count;
    double bandwidth;
    bool current; /* the message being revisited crosses the cable now (begin) */
    double placed = 0.0;
    double share  = -1.0;
    double load   = 0.0;
    double whole  = -1.0;
  };
  mutable std::vector<Seen> seen_;
  /* The rows of an option weighed or placed once a decision (a message routed whole), in memory kept between them */
  mutable std::vector<size_t> rows_;
  std::vector<size_t> spread_rows_;
  std::vector<size_t> table_rows_;
  std::vector<size_t> path_rows_; /* place(Path)'s rows in the spread */
  std::vector<size_t> starts_;    /* ugal(): where each of the Valiant spread's paths starts in its rows */

  /* What cheapest() compares: the busiest visible cable's load (never below 1), detours after minimal options, then
   * the load below that floor (the parts of a message spread over idle options, as packets over empty queues), then
   * a switch's minimal ports before its deroutes (cheapest_hop), then the way a revisited message is on before
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

  /* The index of the cheapest of `options` (the header comment's order: the first listed on a tie), and its cost. */
  std::pair<size_t, Cost> cheapest_of(const std::vector<Option>& options) const
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
    return {best, least};
  }

  /* The cost of `path` taken whole, its visible cables' rows from `first` to `last`: cost(Option(path)) without
   * building the option. */
  Cost whole_cost(const Path& path, const size_t* first, const size_t* last) const
  {
    double worst = 0.0;
    for (const size_t* at = first; at < last; at++)
      worst = std::max(worst, load_at(*at, 1.0));
    return {floored(worst), path.detour, worst, false, !is_current(path)};
  }

  /* The cheapest of `count` hops (cheapest_row), the i-th on the cable of row `row_at(i)`, a deroute from `minimal`
   * on. */
  template <class RowAt> size_t cheapest_hop(size_t count, size_t minimal, RowAt row_at) const
  {
    size_t best = 0;
    Cost least  = hop_cost(row_at(0), minimal == 0);
    for (size_t i = 1; i < count; i++) {
      Cost c = hop_cost(row_at(i), i >= minimal);
      if (c < least) {
        best  = i;
        least = c;
      }
    }
    return best;
  }

  /* A hop's cost on the cable of row `at`, a deroute's or not. */
  Cost hop_cost(size_t at, bool deroute) const
  {
    double l = load_at(at, 1.0);
    return {floored(l), false, l, deroute, !seen_[at].current};
  }

  /* Whether the message being revisited crosses `cable` now (begin; kept in the cable's row). */
  bool current(Link* cable) const { return seen_[row(cable)].current; }

  /* Whether `option` is the one path the message being revisited is on (a path from its source switch to its
   * destination's whose every cable the message crosses is the message's path). */
  bool is_current(const Option& option) const { return option.paths().size() == 1 && is_current(option.paths()[0]); }

  bool is_current(const Path& path) const
  {
    return revisited_ && !path.cables.empty() &&
           std::all_of(path.cables.begin(), path.cables.end(), [this](Link* c) { return current(c); });
  }

  double unit() const { return 1.0 / static_cast<double>(parts()); }

  static double floored(double load) { return std::max(1.0, load); }

  /* The load of the cable of row `row` in host-cable bandwidths once `share` of the part being placed is added. */
  double load_at(size_t row, double share) const
  {
    Seen& mine = seen_[row];
    if (share == 1.0) {
      if (mine.whole < 0.0)
        mine.whole = computed_load(mine, 1.0);
      return mine.whole;
    }
    if (mine.share != share) {
      mine.load  = computed_load(mine, share);
      mine.share = share;
    }
    return mine.load;
  }

  double computed_load(const Seen& mine, double share) const
  {
    double messages = mine.flow_count + unit() * share + mine.placed;
    return messages * reference_bw_ / mine.bandwidth;
  }

  /* The row of `cable` in seen_, its flow count and bandwidth read at the decision's first look. */
  size_t row(Link* cable) const
  {
    CableScratch& mine = scratch(cable);
    if (mine.seen_stamp != stamp_) {
      mine.seen_stamp = stamp_;
      mine.seen_row   = seen_.size();
      seen_.push_back({cable->get_flow_count(), cable->get_bandwidth(), revisited_ && mine.current_stamp == stamp_});
    }
    return mine.seen_row;
  }

  /* The cables of a path that this view sees. */
  size_t visible(const Path& path) const
  {
    return view_ == View::global ? path.cables.size() : std::min(local_depth_, path.cables.size());
  }

  /* The rows of the cables of `option` that this view sees, path after path: kept in the option (Option::rows) where
   * the parts of a message weigh it again. */
  const std::vector<size_t>& rows(const Option& option) const
  {
    bool kept                 = parts() > 1;
    std::vector<size_t>& rows = kept ? option.rows : rows_;
    if (!kept || option.rows_stamp != stamp_) {
      option.rows_stamp = stamp_;
      rows.clear();
      for (const Path& path : option.paths())
        for (size_t i = 0; i < visible(path); i++)
          rows.push_back(row(path.cables[i]));
    }
    return rows;
  }

  /* An option's cost: its paths' mean cost (a packet of a spread option takes one of its paths), a path's cost the
   * load of its busiest visible cable with the path's share of the part added. */
  Cost cost(const Option& option) const
  {
    const std::vector<Path>& paths = option.paths();
    const std::vector<size_t>& at  = rows(option);
    double share                   = 1.0 / static_cast<double>(paths.size());
    double floored_sum             = 0.0;
    double raw_sum                 = 0.0;
    size_t next                    = 0;
    for (const Path& path : paths) {
      double worst = 0.0;
      for (size_t end = next + visible(path); next < end; next++)
        worst = std::max(worst, load_at(at[next], share));
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
