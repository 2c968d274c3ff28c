/*
 * route_shares_check.cpp - the test program of topolab's SimGrid patch 0008
 * (scripts/simgrid-patches/0008-route-shares-and-link-flow-count.patch): a
 * zone may spread a flow over several paths, giving each link of its route
 * the share of the flow's bytes that crosses it (Route::link_shares_), and
 * s4u::Link::get_flow_count() tells how many flows cross a link now, each
 * counted by its share.
 *
 * The platform is two_paths_zone.hpp's, four hosts a, b, c, d:
 *
 *   a --a_out--+--p1--+--b_in-- b        a -> b: a_out, p1 (1/2), p2 (1/2), b_in
 *              +--p2--+                  c -> d: c_out, p1, d_in
 *   c --c_out--'      '--d_in-- d
 *
 * every link 1e9 bytes/s, p1 and p2 1 ms of latency, the others 0. Three
 * scenes, each printed as one JSON object on stdout:
 *
 *   alone     a sends 1e9 bytes to b: a_out and b_in bound it at 1e9 B/s
 *             (p1 and p2 carry half each), 1 ms + 1 s;
 *   together  a sends 1e9 bytes to b and c sends 5e8 to d at once: p1 carries
 *             0.5 x + y <= 1e9 and max-min gives both 1e9 / 1.5 until c's
 *             ends at 1 ms + 0.75 s, then a's goes at 1e9: 1 ms + 1.25 s;
 *   counts    get_flow_count() of p1, p2, a_out right after both start
 *             (still in their latency): 1.5, 0.5, 1; and after both end: 0.
 *
 * tests/test_route_shares.py runs it with --cfg=network/model:CM02
 * --cfg=network/TCP-gamma:0 --cfg=network/crosstraffic:0 (latency + bytes /
 * rate, no reverse traffic: the zone routes a -> b and c -> d only) and checks
 * these closed forms; without the patch the program does not compile (no
 * link_shares_, no get_flow_count).
 */
#include "two_paths_zone.hpp"

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
#include <vector>

namespace {

using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::Route;

class SharesZone : public TwoPathsZone {
public:
  SharesZone() : TwoPathsZone("shares") {}

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override
  {
    auto add = [&into](StandardLinkImpl* link, double share) {
      into->link_list_.push_back(link);
      into->link_shares_.push_back(share);
    };
    if (src->get_name() == "a" && dst->get_name() == "b") {
      add(links_["a_out"], 1.0);
      add(links_["p1"], 0.5);
      add(links_["p2"], 0.5);
      add(links_["b_in"], 1.0);
    } else if (src->get_name() == "c" && dst->get_name() == "d") { /* shares may be omitted: the whole flow */
      for (const char* name : {"c_out", "p1", "d_in"})
        into->link_list_.push_back(links_[name]);
    } else {
      throw std::invalid_argument("no route from " + src->get_name() + " to " + dst->get_name());
    }
    if (latency != nullptr)
      *latency += 1e-3;
  }
};

void print_counts(const char* when)
{
  std::printf("{\"scene\":\"counts\",\"when\":\"%s\"", when);
  for (const char* name : {"p1", "p2", "a_out"})
    std::printf(",\"%s\":%.17g", name, simgrid::s4u::Link::by_name(name)->get_flow_count());
  std::printf("}\n");
}

void scenes()
{
  using simgrid::s4u::Comm;
  using simgrid::s4u::Engine;
  using simgrid::s4u::Host;
  Host* a = Host::by_name("a");
  Host* b = Host::by_name("b");
  Host* c = Host::by_name("c");
  Host* d = Host::by_name("d");

  double start = Engine::get_clock();
  Comm::sendto(a, b, 1e9);
  std::printf("{\"scene\":\"alone\",\"time\":%.17g}\n", Engine::get_clock() - start);

  start                  = Engine::get_clock();
  simgrid::s4u::CommPtr ab = Comm::sendto_async(a, b, 1e9);
  simgrid::s4u::CommPtr cd = Comm::sendto_async(c, d, 5e8);
  print_counts("started");
  cd->wait();
  double cd_time = Engine::get_clock() - start;
  ab->wait();
  std::printf("{\"scene\":\"together\",\"cd_time\":%.17g,\"ab_time\":%.17g}\n", cd_time, Engine::get_clock() - start);
  print_counts("ended");
}

} // namespace

int main(int argc, char** argv)
{
  simgrid::s4u::Engine engine(&argc, argv);
  auto* zone = new SharesZone();
  zone->set_parent(engine.get_netzone_root()->get_impl());
  zone->build();
  zone->seal();
  simgrid::s4u::Host::by_name("a")->add_actor("scenes", scenes);
  engine.run();
  return 0;
}
