/*
 * maxmin_incremental_check.cpp - the test program of topolab's SimGrid patches 0020
 * and 0022 (scripts/simgrid-patches/0020-incremental-max-min.patch,
 * 0022-incremental-max-min-local.patch): when a flow starts
 * or ends, the max-min solver re-solves only the flows whose rate the change
 * can alter (maxmin/incremental, on by default), and must give every flow the
 * rate a whole solve would.
 *
 * A seeded random network in one zone: HOSTS hosts, each with a link out and a
 * link in, and CORE core links, some of them FATPIPE; the route of each pair of
 * hosts crosses its hosts' links and one to three core links, each with a share
 * of the flow of 1, 1/2 or 1/4 (a route spread over paths, patch 0008), and
 * about half of the core links have a latency (a flow then starts disabled and
 * joins the system after it, as SMPI's messages do). FLOWS flows start at
 * random dates in [0, 1) s with random sizes, some with a rate of their own;
 * and every host runs computations of random sizes and priorities beside them
 * (the CPU model's max-min system). Rates spread over many levels, so flows
 * end one by one: the case where re-solving what changed pays.
 *
 * Output: one JSON object per flow and per computation, {"kind", "id", "end"}
 * with the date it ended to 17 digits. tests/test_maxmin_incremental.py runs
 * it with maxmin/incremental on and off (maxmin/incremental-local on and off)
 * and with maxmin/incremental-check
 * (each incremental solve compared with a whole one, 1e-9 relative) and
 * compares the dates. Arguments: [seed] [flows] [hosts] [core links].
 */
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::Route;

struct Hop {
  StandardLinkImpl* link;
  double share;
};

class RandomZone : public simgrid::kernel::routing::NetZoneImpl {
public:
  RandomZone() : NetZoneImpl("random") {}

  void build(std::mt19937_64& rng, int hosts, int core)
  {
    std::uniform_real_distribution<double> bandwidth(0.5e9, 4e9);
    std::bernoulli_distribution coin(0.5);
    for (int h = 0; h < hosts; h++) {
      std::string name = "h" + std::to_string(h);
      get_iface()->add_host(name, 1e9)->seal();
      out_[name] = get_iface()->add_link(name + "_out", bandwidth(rng))->get_impl();
      in_[name]  = get_iface()->add_link(name + "_in", bandwidth(rng))->get_impl();
    }
    for (int c = 0; c < core; c++) {
      auto* link = get_iface()->add_link("c" + std::to_string(c), bandwidth(rng));
      double lat = coin(rng) ? 1e-4 : 0.0;
      link->set_latency(lat);
      latency_[link->get_impl()] = lat;
      if (c % 5 == 4)
        link->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE);
      core_.push_back(link->get_impl());
    }
    std::uniform_int_distribution<size_t> pick(0, core_.size() - 1);
    std::uniform_int_distribution<int> length(1, 3);
    const double shares[] = {1.0, 0.5, 0.25};
    std::uniform_int_distribution<int> share(0, 2);
    for (int s = 0; s < hosts; s++)
      for (int d = 0; d < hosts; d++) {
        std::vector<Hop>& hops = routes_[{s, d}];
        int n                  = length(rng);
        for (int k = 0; k < n; k++) {
          StandardLinkImpl* link = core_[pick(rng)];
          bool again             = false;
          for (const Hop& hop : hops)
            again = again || hop.link == link;
          if (not again)
            hops.push_back({link, shares[share(rng)]});
        }
      }
  }

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override
  {
    int s = std::atoi(src->get_cname() + 1);
    int d = std::atoi(dst->get_cname() + 1);
    auto add = [this, &into, &latency](StandardLinkImpl* link, double share) {
      into->link_list_.push_back(link);
      into->link_shares_.push_back(share);
      if (auto lat = latency_.find(link); latency != nullptr && lat != latency_.end())
        *latency += lat->second;
    };
    add(out_.at(src->get_name()), 1.0);
    for (const Hop& hop : routes_.at({s, d}))
      add(hop.link, hop.share);
    add(in_.at(dst->get_name()), 1.0);
  }

private:
  std::map<std::string, StandardLinkImpl*> out_;
  std::map<std::string, StandardLinkImpl*> in_;
  std::vector<StandardLinkImpl*> core_;
  std::map<StandardLinkImpl*, double> latency_;
  std::map<std::pair<int, int>, std::vector<Hop>> routes_;
};

void flow(int id, simgrid::s4u::Host* src, simgrid::s4u::Host* dst, double start, double bytes, double rate)
{
  simgrid::s4u::this_actor::sleep_for(start);
  simgrid::s4u::CommPtr comm = simgrid::s4u::Comm::sendto_init();
  if (rate > 0)
    comm->set_rate(rate);
  comm->set_payload_size(static_cast<uint64_t>(bytes))->set_source(src)->set_destination(dst)->wait();
  std::printf("{\"kind\":\"flow\",\"id\":%d,\"end\":%.17g}\n", id, simgrid::s4u::Engine::get_clock());
}

void computation(int id, double start, double flops, double priority)
{
  simgrid::s4u::this_actor::sleep_for(start);
  simgrid::s4u::this_actor::exec_init(flops)->set_priority(priority)->wait();
  std::printf("{\"kind\":\"exec\",\"id\":%d,\"end\":%.17g}\n", id, simgrid::s4u::Engine::get_clock());
}

} // namespace

int main(int argc, char** argv)
{
  simgrid::s4u::Engine engine(&argc, argv);
  unsigned long seed = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1;
  int flows          = argc > 2 ? std::atoi(argv[2]) : 400;
  int hosts          = argc > 3 ? std::atoi(argv[3]) : 12;
  int core           = argc > 4 ? std::atoi(argv[4]) : 20;
  std::mt19937_64 rng(seed);

  auto* zone = new RandomZone();
  zone->set_parent(engine.get_netzone_root()->get_impl());
  zone->build(rng, hosts, core);
  zone->seal();

  std::uniform_int_distribution<int> host(0, hosts - 1);
  std::uniform_real_distribution<double> start(0.0, 1.0);
  std::uniform_real_distribution<double> bytes(1e5, 5e8);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int f = 0; f < flows; f++) {
    simgrid::s4u::Host* src = simgrid::s4u::Host::by_name("h" + std::to_string(host(rng)));
    simgrid::s4u::Host* dst = simgrid::s4u::Host::by_name("h" + std::to_string(host(rng)));
    double when = start(rng);
    double size = bytes(rng);
    double rate = unit(rng) < 0.2 ? 1e8 + 1e9 * unit(rng) : -1.0;
    src->add_actor("flow" + std::to_string(f), flow, f, src, dst, when, size, rate);
  }
  for (int e = 0; e < flows / 4; e++) {
    simgrid::s4u::Host* where = simgrid::s4u::Host::by_name("h" + std::to_string(host(rng)));
    double when     = start(rng);
    double flops    = 1e7 + 1e9 * unit(rng);
    double priority = 0.5 + 2 * unit(rng);
    where->add_actor("exec" + std::to_string(e), computation, e, when, flops, priority);
  }
  engine.run();
  return 0;
}
