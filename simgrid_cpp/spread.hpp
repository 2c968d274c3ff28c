/*
 * spread.hpp - a message over one path or spread over several, as a compiled
 * zone hands it to SimGrid: the route lists every cable once, each with the
 * share of the message that crosses it (SimGrid patch 0008,
 * Route::link_shares_). The paths, the spread built from them (Spread, and
 * spread_evenly for oblivious per-packet spreading), and the scratch record a
 * decision keeps about each cable (CableScratch). paths.hpp chooses among
 * paths by the network's state; generators/spread.py is the Python twin.
 */
#pragma once

#include "zone_common.hpp"

#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace topolab {

using simgrid::s4u::Link;

/* What a routing decision keeps about a cable while it places a message: its row in the spread being built (Spread),
 * its position in a table being indexed, and its row in the table of what the decision saw (AdaptiveChoice::row). A
 * field counts only while its stamp is the one of the decision under way, so nothing is cleared between messages;
 * SimGrid routes one message at a time, so one decision (one Spread, one AdaptiveChoice's message) is under way at a
 * time. Reached through the link's extension slot, where a hash map per decision cost a lookup each time. */
struct CableScratch {
  std::uint64_t weight_stamp = 0;
  size_t weight_row          = 0;
  std::uint64_t index_stamp  = 0;
  size_t index               = 0;
  std::uint64_t seen_stamp   = 0;
  size_t seen_row            = 0;
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

  Path() { cables.reserve(8); } /* the paths of every family but long HyperXes: one allocation */

  void add(Link* cable, double cable_latency)
  {
    cables.push_back(cable);
    latency += cable_latency;
  }
};

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
  /* Empty again, for another message (the rows' memory kept). */
  void clear()
  {
    stamp_ = fresh_stamp();
    rows_.clear();
    order_.clear();
    total_       = 0;
    latency_sum_ = 0;
  }

  /* Append to `rows` the rows of the cables of `path` in this spread, made at their first sight. */
  void rows_of(const Path& path, std::vector<size_t>& rows)
  {
    for (Link* cable : path.cables) {
      CableScratch& mine = scratch(cable);
      if (mine.weight_stamp != stamp_) {
        mine.weight_stamp = stamp_;
        mine.weight_row   = rows_.size();
        rows_.push_back({cable});
      }
      rows.push_back(mine.weight_row);
    }
  }

  /* `weight` of the message over `path`, whose cables' rows (rows_of) are rows[0], rows[1], ... */
  void add(const Path& path, const size_t* rows, double weight)
  {
    for (size_t i = 0; i < path.cables.size(); i++) {
      Row& mine = rows_[rows[i]];
      if (!mine.crossed) {
        mine.crossed = true;
        order_.push_back(rows[i]);
      }
      mine.weight += weight;
    }
    total_ += weight;
    latency_sum_ += weight * path.latency;
  }

  void add(const Path& path, double weight)
  {
    path_rows_.clear();
    rows_of(path, path_rows_);
    add(path, path_rows_.data(), weight);
  }

  /* The route's cables and shares; returns the mean latency of its paths, each by its weight. A message that took
   * one path is that path, without shares. */
  double into(Route* into) const
  {
    bool whole = std::all_of(order_.begin(), order_.end(), [this](size_t r) { return rows_[r].weight == total_; });
    for (size_t r : order_) {
      into->link_list_.push_back(rows_[r].cable->get_impl());
      if (!whole)
        into->link_shares_.push_back(rows_[r].weight / total_);
    }
    return latency_sum_ / total_;
  }

private:
  /* A cable of the spread: the weight that crosses it, and whether a path added so far crosses it (order_). */
  struct Row {
    Link* cable;
    double weight = 0;
    bool crossed  = false;
  };
  std::uint64_t stamp_ = fresh_stamp(); /* the rows of this spread (CableScratch::weight_row) */
  std::vector<Row> rows_;
  std::vector<size_t> order_; /* the rows crossed, in the order the paths first cross them */
  std::vector<size_t> path_rows_;
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

} // namespace topolab
