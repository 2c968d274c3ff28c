/*
 * routed_zone.hpp - a switched zone whose family offers a choice of routing
 * rules (RoutedZone): static, spread per packet, or adaptive (paths.hpp), and
 * adaptive decisions revisited while the messages flow (`revisit`, SimGrid
 * patches 0032 and 0033; docs/adaptive-routing.md).
 */
#pragma once

#include "paths.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <xbt/log.h>

#include <cstdint>
#include <string>
#include <vector>

/* --log=topolab_revisit.thres:verbose: how many messages each revisit moves (RoutedZone::revisit) */
XBT_LOG_NEW_CATEGORY(topolab_revisit, "topolab's adaptive zones: the decisions they revisit");

namespace topolab {

/* A switched zone whose family offers a choice of routing rules: the rule (`routing`, one of the family's, read by
 * the family), whether a message is spread per packet (`spread`), and the adaptive choice with its count of
 * decisions. Only UGAL-G ("ugal-g") sees every cable of a path; every other adaptive rule sees the cables that
 * leave its own switch (View), UGAL-L ("ugal-l") with `backpressure` cables after each (the family refuses it
 * elsewhere), and `revisit` seconds apart the decisions in flight are taken again. */
class RoutedZone : public SwitchedZone {
protected:
  RoutedZone(const ZoneParams& p, const std::string& routing)
      : SwitchedZone(p)
      , routing_(routing)
      , by_packet_(p.spread_by_packet())
      , choice_(routing == "ugal-g" ? View::global : View::local, by_packet_, p.link_bw,
                1 + static_cast<size_t>(p.has("backpressure") ? p.integer("backpressure", 0) : 0))
      , revisit_(p.has("revisit") ? p.number("revisit", true) : 0.0)
  {
    if (revisit_ > 0)
      choice_.on_decision([this] { arm_revisit(); });
  }

  /* UGAL's decision for the message from host `from` to host `to` among the minimal paths `options` and the `count`
   * Valiant paths valiant_at(0), ... (AdaptiveChoice::ugal, with VALIANT_CANDIDATES draws of the pair's hash and this
   * zone's decisions counted, valiant_index(draw) naming a path; revisited, the path it is on among the options). */
  template <class ValiantIndex, class ValiantAt>
  double ugal(std::vector<Option> options, long from, long to, size_t count, ValiantIndex valiant_index,
              ValiantAt valiant_at, Route* into)
  {
    return choice_.ugal(std::move(options), VALIANT_CANDIDATES, pair_hash(from, to), decisions_++, count,
                        valiant_index, valiant_at, into, current_cables(from, to));
  }

  /* While a revisit routes a message routed whole: the cables between the switches of hosts `from` and `to` that it
   * crosses now (AdaptiveChoice::begin); empty otherwise (a first decision, or a message spread per packet, whose
   * parts are placed afresh). */
  std::vector<Link*> current_cables(long from, long to) const
  {
    if (!revisiting_ || by_packet_)
      return {};
    return whole_cables_between(simgrid::kernel::routing::NetZoneImpl::get_rerouted_route(), from, to);
  }

  const std::string routing_;
  const bool by_packet_;
  AdaptiveChoice choice_;

private:
  std::uint64_t decisions_ = 0; /* adaptive routing decisions so far (topolab::draw) */
  double revisit_          = 0; /* seconds between two revisits of the decisions in flight (0: decisions are final) */
  bool armed_              = false; /* a revisit is due */
  bool revisiting_         = false; /* the decisions in flight are being taken again */

  /* A revisit `revisit_` seconds from now, unless one is due: armed by every decision, so that revisits go on while
   * adaptive messages flow and stop with them. */
  void arm_revisit()
  {
    if (armed_)
      return;
    armed_ = true;
    simgrid::kernel::timer::Timer::set(simgrid::s4u::Engine::get_clock() + revisit_, [this] { revisit(); });
  }

  /* Every message in flight between two switches of this zone routed again (SimGrid patch 0032: each one off its
   * cables while its route is decided anew, in the order the messages started; 0033: one given the route it has
   * stays as it is), and how many moved logged. */
  void revisit()
  {
    armed_           = false;
    revisiting_      = true;
    size_t revisited = 0;
    auto mine        = [this, &revisited](const simgrid::s4u::Host& src, const simgrid::s4u::Host& dst) {
      const NetPoint* a = src.get_netpoint();
      const NetPoint* b = dst.get_netpoint();
      bool between      = a->get_englobing_zone() == this && b->get_englobing_zone() == this &&
                     switch_of(static_cast<long>(a->id())) != switch_of(static_cast<long>(b->id()));
      revisited += between;
      return between;
    };
    size_t moved = reroute_communications(mine);
    revisiting_  = false;
    XBT_CVERB(topolab_revisit, "revisit at %.9g s: %zu of %zu messages moved", simgrid::s4u::Engine::get_clock(), moved,
              revisited);
  }
};

} // namespace topolab
