/*
 * reroute_check.cpp - the test program of topolab's SimGrid patches 0032
 * (scripts/simgrid-patches/0032-network-reroute-communications-in-flight.patch):
 * NetZoneImpl::reroute_communications(which) asks the platform again for the
 * route of every communication in flight that has paid its latency and that
 * `which` selects, with the communication's own load taken off its links, and
 * moves its remaining bytes onto that route; and 0033
 * (scripts/simgrid-patches/0033-network-reroute-shows-the-route-in-flight.patch):
 * while it asks, NetZoneImpl::get_rerouted_route() gives the links the
 * communication crosses now (empty otherwise), and a communication given the
 * route it has stays as it is (not counted as moved).
 *
 * The platform is two_paths_zone.hpp's, four hosts a, b, c, d:
 *
 *   a --a_out--+--p1--+--b_in-- b        a -> b: over p1 or p2, whichever
 *              +--p2--+                  carries fewer flows now (p1 on a tie)
 *   c --c_out--'      '--d_in-- d        c -> d: always over p1
 *
 * every link 1e9 bytes/s, p1 and p2 1 ms of latency, the others 0. Scenes,
 * each printed as one JSON object on stdout:
 *
 *   in_latency  a sends 1e9 bytes to b; at 0.5 ms (still in its latency) a
 *               reroute of every flow moves none: "moved" 0;
 *   moved       then c sends 2e9 bytes to d: a -> b is on p1 already (its
 *               route was chosen when p1 and p2 were idle), so from 1 ms both
 *               share p1 at 5e8 B/s. At 0.2 s a reroute of a -> b only (the
 *               filter refuses c -> d) takes a -> b off p1, asks its route
 *               again (p1 carries c -> d, p2 nothing: p2), and moves its
 *               remaining 1e9 - 0.199 x 5e8 bytes there, at 1e9 B/s from then
 *               on, its latency not paid again: a -> b ends at 0.2 + 0.9005 s;
 *               c -> d has 2e9 - 0.199 x 5e8 left at 0.2 s: 2.1005 s. "counts"
 *               right after the reroute: p1 1, p2 1. Without the reroute a -> b
 *               would end at 2.001 s and c -> d at 3.001 s;
 *               "crossed": the route a -> b had when asked again (a_out, p1,
 *               b_in, each whole);
 *   every       both again, and a reroute of both at 0.2 s, in the order they
 *               started: a -> b moves to p2 as above, and c -> d, taken off p1
 *               and routed again, is given p1 again and stays as it is (moved
 *               1; "crossed": c_out, p1, d_in): the same dates as "moved";
 *   in_flight   at the end: how many routes were asked for during reroutes,
 *               and how many times get_rerouted_route() was empty during a
 *               reroute or not empty outside one ("mismatches": 0).
 *
 * tests/test_reroute.py runs it with --cfg=network/model:CM02
 * --cfg=network/TCP-gamma:0 --cfg=network/crosstraffic:0 (latency + bytes /
 * rate) and with --cfg=network/optim:Full as well (both update algorithms),
 * and checks these closed forms; without the patch the program does not
 * compile (no reroute_communications).
 */
#include "two_paths_zone.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cstdio>
#include <string>

namespace {

using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::Route;
using simgrid::s4u::Host;

bool in_reroute    = false; /* a reroute_communications() is under way */
long asked         = 0;     /* routes asked for during reroutes */
long mismatches    = 0;     /* get_rerouted_route() empty in a reroute, or not outside one */
std::string crossed;        /* the last rerouted route seen: "name:share" each, space-separated */

class AdaptiveZone : public TwoPathsZone {
public:
  AdaptiveZone() : TwoPathsZone("adaptive") {}

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override
  {
    const auto& now = get_rerouted_route();
    if (now.empty() == in_reroute)
      mismatches++;
    if (in_reroute) {
      asked++;
      crossed.clear();
      for (const auto& [link, share] : now)
        crossed += (crossed.empty() ? "" : " ") + link->get_name() + ":" + std::to_string(share);
    }
    const char* middle = "p1";
    if (src->get_name() == "a" && dst->get_name() == "b") {
      if (simgrid::s4u::Link::by_name("p2")->get_flow_count() < simgrid::s4u::Link::by_name("p1")->get_flow_count())
        middle = "p2";
    } else if (src->get_name() != "c" || dst->get_name() != "d") {
      throw std::invalid_argument("no route from " + src->get_name() + " to " + dst->get_name());
    }
    std::string from = src->get_name() + "_out";
    std::string to   = dst->get_name() + "_in";
    for (const std::string& name : {from, std::string(middle), to})
      into->link_list_.push_back(links_[name]);
    if (latency != nullptr)
      *latency += 1e-3;
  }
};

AdaptiveZone* zone = nullptr;

/* At `date`, reroute the flows `which` selects (every flow, or a -> b only) and print how many moved and the flow
 * counts of p1 and p2 right after. */
void reroute_at(double date, const char* scene, bool every_flow)
{
  simgrid::kernel::timer::Timer::set(date, [scene, every_flow] {
    in_reroute   = true;
    size_t moved = zone->reroute_communications([every_flow](const Host& src, const Host&) {
      return every_flow || src.get_name() == "a";
    });
    in_reroute = false;
    std::printf("{\"scene\":\"%s\",\"moved\":%zu,\"p1\":%.17g,\"p2\":%.17g,\"crossed\":\"%s\"}\n", scene, moved,
                simgrid::s4u::Link::by_name("p1")->get_flow_count(),
                simgrid::s4u::Link::by_name("p2")->get_flow_count(), crossed.c_str());
  });
}

/* a -> b and c -> d at once (a -> b first), the reroute at 0.2 s; prints when each ends. */
void both(const char* scene, bool every_flow)
{
  using simgrid::s4u::Comm;
  using simgrid::s4u::Engine;
  double start = Engine::get_clock();
  reroute_at(start + 0.2, scene, every_flow);
  simgrid::s4u::CommPtr ab = Comm::sendto_async(Host::by_name("a"), Host::by_name("b"), 1e9);
  simgrid::s4u::CommPtr cd = Comm::sendto_async(Host::by_name("c"), Host::by_name("d"), 2e9);
  ab->wait();
  double ab_time = Engine::get_clock() - start;
  cd->wait();
  std::printf("{\"scene\":\"%s_times\",\"ab_time\":%.17g,\"cd_time\":%.17g}\n", scene, ab_time,
              Engine::get_clock() - start);
}

void scenes()
{
  using simgrid::s4u::Engine;
  reroute_at(Engine::get_clock() + 0.5e-3, "in_latency", true);
  simgrid::s4u::Comm::sendto(Host::by_name("a"), Host::by_name("b"), 1e9);
  both("moved", false);
  both("every", true);
  std::printf("{\"scene\":\"in_flight\",\"asked\":%ld,\"mismatches\":%ld}\n", asked, mismatches);
}

} // namespace

int main(int argc, char** argv)
{
  simgrid::s4u::Engine engine(&argc, argv);
  zone = new AdaptiveZone();
  zone->set_parent(engine.get_netzone_root()->get_impl());
  zone->build();
  zone->seal();
  Host::by_name("a")->add_actor("scenes", scenes);
  engine.run();
  return 0;
}
