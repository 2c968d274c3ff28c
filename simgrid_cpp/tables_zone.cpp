/*
 * tables_zone.cpp - a fabric routed by forwarding tables, as a compiled SimGrid
 * platform: InfiniBand's subnet manager's routes (generators/opensm/) for
 * fabrics too large for one explicit route per pair of hosts.
 *
 * The parameter file ($TOPOLAB_TABLES_PARAMS, or NAME.params beside NAME.so)
 * has the keys of every compiled zone (zone_common.hpp: name, link_bw,
 * link_lat, nbl, host_speed and the node keys; link_bw scales the limiters)
 * and the fabric, one element per line, nodes numbered hosts first (0 .. H-1,
 * in rank-placement order), then switches (H .. H+S-1):
 *
 *   nodes H S                  how many hosts and switches
 *   host NAME                  H lines, in order
 *   switch NAME                S lines, in order
 *   link NAME TO BW LAT        every directed cable, in order (link 0, 1, ...):
 *                              the node it leads to, bytes/s, seconds
 *   attach HOST NODE LINK      where a host's traffic enters the switches: the
 *                              node and the link to it (-1: none, the host's
 *                              own switch, as a torus node's)
 *   fwd SWITCH L0 .. L(H-1)    the switch's forwarding table: per destination
 *                              host, the link it sends on, -1 for none (no
 *                              route), -2 when the destination is its own
 *
 * Routes are followed through the tables on demand in get_local_route(): from
 * the source's attach node, each switch's link for the destination, to the
 * destination (or the switch that is its own), framed by the hosts' own links
 * (zone_common.hpp). A pair without a route aborts the simulation with
 * SimGrid's own words for it ("no connecting path between these two hosts");
 * tables that loop abort with the pair. Memory: one integer per switch and
 * host; nothing per pair.
 */
#include "zone_common.hpp"

#include <xbt/log.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using topolab::NetPoint;
using topolab::Route;
using topolab::StandardLinkImpl;
using topolab::ZoneParams;

constexpr long NO_ROUTE = -1;
constexpr long DELIVERED = -2;

struct Cable {
  std::string name;
  long to;
  double bandwidth;
  double latency;
};

class TablesZone : public topolab::EndpointZone {
public:
  explicit TablesZone(const ZoneParams& p) : EndpointZone(p)
  {
    std::ifstream in(p.path());
    std::string line;
    while (std::getline(in, line))
      read_line(line);
    if (hosts_.empty() || static_cast<long>(switches_.size()) != switch_count_)
      p.fail("'" + p.path() + "' must give 'nodes H S' and as many host and switch lines");
    if (static_cast<long>(attach_node_.size()) != host_count() || static_cast<long>(fwd_.size()) != switch_count_)
      p.fail("'" + p.path() + "' must give an attach line per host and a fwd line per switch");
  }

  void build()
  {
    add_hosts(hosts_);
    for (const Cable& cable : cables_)
      links_.push_back(add_cable(cable.name, cable.bandwidth, cable.latency));
    for (const std::string& host : hosts_)
      add_endpoint_links(host);
  }

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override
  {
    long from = static_cast<long>(src->id());
    long to   = static_cast<long>(dst->id());
    if (route_start(from, to, into, latency))
      return;
    double path_latency = 0;
    long node           = attach_node_[from];
    follow(attach_link_[from], into, &path_latency);
    for (long hops = 0; node != to; hops++) {
      long link = node >= host_count() ? fwd_[node - host_count()][to] : NO_ROUTE;
      if (link == DELIVERED)
        break;
      if (link == NO_ROUTE)
        xbt_die("You're trying to send data from %s to %s but there is no connecting path between these two hosts "
                "(the forwarding tables give none)",
                src->get_cname(), dst->get_cname());
      if (hops > switch_count_)
        xbt_die("%s -> %s: the forwarding tables loop", src->get_cname(), dst->get_cname());
      follow(link, into, &path_latency);
      node = cables_[link].to;
    }
    route_end(to, into, latency, path_latency);
  }

private:
  long host_count() const { return static_cast<long>(hosts_.size()); }

  void follow(long link, Route* into, double* path_latency) const
  {
    if (link < 0)
      return;
    into->link_list_.push_back(links_[link]);
    *path_latency += cables_[link].latency;
  }

  long node_index(std::istringstream& values, const std::string& line) const
  {
    long node;
    if (!(values >> node) || node < 0 || node >= host_count() + switch_count_)
      params_.fail("bad node in '" + line + "'");
    return node;
  }

  void read_line(const std::string& line)
  {
    std::istringstream values(line);
    std::string key;
    values >> key;
    if (key == "nodes") {
      long hosts;
      if (!(values >> hosts >> switch_count_) || hosts < 1 || switch_count_ < 0)
        params_.fail("bad '" + line + "'");
      hosts_.reserve(hosts);
      expected_hosts_ = hosts;
    } else if (key == "host") {
      std::string name;
      values >> name;
      hosts_.push_back(name);
    } else if (key == "switch") {
      std::string name;
      values >> name;
      switches_.push_back(name);
    } else if (key == "link") {
      Cable cable;
      values >> cable.name;
      cable.to = node_index(values, line);
      if (!(values >> cable.bandwidth >> cable.latency) || cable.bandwidth <= 0 || cable.latency < 0)
        params_.fail("bad link '" + line + "'");
      cables_.push_back(cable);
    } else if (key == "attach") {
      long host = node_index(values, line);
      long node = node_index(values, line);
      long link;
      if (host != static_cast<long>(attach_node_.size()) || !(values >> link) || link >= cables_count())
        params_.fail("bad attach '" + line + "'");
      attach_node_.push_back(node);
      attach_link_.push_back(link);
    } else if (key == "fwd") {
      read_table(values, line);
    }
  }

  long cables_count() const { return static_cast<long>(cables_.size()); }

  void read_table(std::istringstream& values, const std::string& line)
  {
    long sw;
    if (!(values >> sw) || sw != expected_hosts_ + static_cast<long>(fwd_.size()))
      params_.fail("fwd lines must follow the switches in order: '" + line.substr(0, 40) + "'");
    std::vector<int> table(expected_hosts_);
    long link;
    for (int& entry : table) {
      if (!(values >> link) || link < DELIVERED || link >= cables_count())
        params_.fail("bad entry in the forwarding table of switch " + std::to_string(sw));
      entry = static_cast<int>(link);
    }
    fwd_.push_back(std::move(table));
  }

  long switch_count_   = 0;
  long expected_hosts_ = 0;
  std::vector<std::string> hosts_;
  std::vector<std::string> switches_;
  std::vector<Cable> cables_;
  std::vector<StandardLinkImpl*> links_;
  std::vector<long> attach_node_;
  std::vector<long> attach_link_;
  std::vector<std::vector<int>> fwd_;   /* [switch - H][destination host]: the link out, NO_ROUTE or DELIVERED */
};

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  std::string path = topolab::params_path("TOPOLAB_TABLES_PARAMS", reinterpret_cast<void*>(&load_platform), "tables");
  topolab::load_zone<TablesZone>(engine, ZoneParams("tables", path, {"nodes", "host", "switch", "link", "attach", "fwd"}));
}
