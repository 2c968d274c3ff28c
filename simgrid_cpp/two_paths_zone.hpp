/*
 * two_paths_zone.hpp - the platform of the test programs of topolab's SimGrid
 * patches 0008 (route_shares_check.cpp) and 0032 (reroute_check.cpp): a zone
 * of four hosts a, b, c, d whose traffic meets on two parallel links,
 *
 *   a --a_out--+--p1--+--b_in-- b
 *              +--p2--+
 *   c --c_out--'      '--d_in-- d
 *
 * every link 1e9 bytes/s, p1 and p2 1 ms of latency, the others 0. Each test
 * routes over it in its own way (get_local_route).
 */
#pragma once

#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <map>
#include <string>

class TwoPathsZone : public simgrid::kernel::routing::NetZoneImpl {
public:
  explicit TwoPathsZone(const std::string& name) : NetZoneImpl(name) {}

  void build()
  {
    for (const char* name : {"a", "b", "c", "d"})
      get_iface()->add_host(name, 1e9)->seal();
    for (const char* name : {"a_out", "b_in", "c_out", "d_in", "p1", "p2"}) {
      double latency = name[0] == 'p' ? 1e-3 : 0.0;
      links_[name]   = get_iface()->add_link(name, 1e9)->set_latency(latency)->get_impl();
    }
  }

protected:
  std::map<std::string, simgrid::kernel::resource::StandardLinkImpl*> links_;
};
