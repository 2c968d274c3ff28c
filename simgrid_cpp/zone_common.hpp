/*
 * zone_common.hpp - what every compiled zone of topolab shares: reading its
 * parameter file, the hosts and their own links (limiter, intra-node link,
 * loopback), the route's ends, and the load_platform() that SimGrid calls.
 *
 * A compiled zone is a SimGrid platform in a shared object (smpirun -platform
 * ./NAME.so; the path must contain a '/'). It reads its parameters from a text
 * file: $TOPOLAB_<ZONE>_PARAMS if set, else the file beside the shared object
 * with ".so" replaced by ".params" (generators.writer writes both). One key per
 * line, "#" lines ignored, an unknown key refused. Keys of every zone:
 *
 *   name NAME               zone name (the platform's)
 *   link_bw 2e9             bytes/s per direction of each host cable
 *   link_lat 1e-07          seconds
 *   nbl 1                   endpoint limiter in link bandwidths, or "none"
 *   host_speed 1e9          flop/s of each core
 *
 * and the node keys of generators/node.py, each optional and written only when
 * it is not the default (so that older files still read the same):
 *
 *   cores 16                cores per host (default 1)
 *   shm_bw 1e10             bytes/s of each host's intra-node link (default:
 *                           none, no such link)
 *   shm_lat 5e-07           seconds, its latency (default 0; needs shm_bw)
 *
 * A host's own links are those of the Python model: the SHARED limiter
 * <host>_nbl on the routes that start or end at the host only; with shm_bw,
 * the FATPIPE link <host>_shm, the whole route from the host to itself
 * (without it, one FATPIPE link "loopback" for all hosts, the twin of the
 * network model's __loopback__ that SimGrid's own zones use:
 * network/loopback-bw and network/loopback-lat).
 *
 * Errors (missing or malformed parameters) print one line
 * "topolab <zone> zone: error: ..." on stderr and exit with status 2.
 */
#pragma once

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace topolab {

using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;
using simgrid::kernel::routing::Route;

/* SplitMix64's output function (Steele, Lea and Flood, OOPSLA 2014; generators.mixing.mix): the hash by which the
 * oblivious routing rules pick among equal paths per pair of hosts. */
inline std::uint64_t mix(std::uint64_t pair)
{
  std::uint64_t z = pair + 0x9E3779B97F4A7C15ULL;
  z               = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z               = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* The parameter file of a compiled zone: the keys of every zone (above) read and checked, the family's own keys
 * kept as text for the typed getters. */
class ZoneParams {
public:
  std::string name = "zone";
  double link_bw    = 0;
  double link_lat   = 0;
  double nbl        = 0; /* <= 0: no limiter */
  double host_speed = 0;
  int cores         = 1;
  double shm_bw     = 0; /* <= 0: no intra-node link */
  double shm_lat    = 0;

  ZoneParams(const std::string& zone, const std::string& path, const std::vector<std::string>& family_keys)
      : zone_(zone), path_(path)
  {
    std::ifstream in(path);
    if (!in)
      fail("cannot read the parameter file '" + path + "'");
    std::vector<std::string> known = {"name", "link_bw", "link_lat", "nbl", "host_speed", "cores", "shm_bw", "shm_lat"};
    known.insert(known.end(), family_keys.begin(), family_keys.end());
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream values(line);
      std::string key;
      if (!(values >> key) || key[0] == '#')
        continue;
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail("unknown parameter '" + key + "' in '" + path + "'");
      lines_[key] = line;
      read_common(key, values);
    }
    if (!has("link_bw") || !has("link_lat") || !has("nbl") || !has("host_speed"))
      fail("'" + path + "' must give link_bw, link_lat, nbl and host_speed");
    if (has("shm_lat") && shm_bw <= 0)
      fail("'" + path + "' gives shm_lat without shm_bw (the intra-node link needs a bandwidth)");
  }

  [[noreturn]] void fail(const std::string& message) const
  {
    std::cerr << "topolab " << zone_ << " zone: error: " << message << std::endl;
    std::exit(2);
  }

  const std::string& path() const { return path_; }
  bool has(const std::string& key) const { return lines_.count(key) != 0; }

  /* The integers after `key` (none if the key is absent). */
  std::vector<long> integers(const std::string& key) const
  {
    std::vector<long> list;
    if (!has(key))
      return list;
    std::istringstream values(value_text(key));
    long value;
    while (values >> value)
      list.push_back(value);
    if (!values.eof())
      fail("parameter '" + key + "' must be a list of integers: '" + lines_.at(key) + "'");
    return list;
  }

  /* The one integer >= minimum after `key`, which must be given. */
  long integer(const std::string& key, long minimum) const
  {
    std::vector<long> list = integers(key);
    if (list.size() != 1 || list[0] < minimum)
      fail("parameter '" + key + "' must be one integer >= " + std::to_string(minimum) + " ('" + path_ + "')");
    return list[0];
  }

  /* The number after `key`, which must be given. */
  double number(const std::string& key, bool zero_allowed) const
  {
    if (!has(key))
      fail("'" + path_ + "' must give " + key);
    std::istringstream values(value_text(key));
    return checked_number(key, values, zero_allowed);
  }

  /* The word after `key`, one of `choices`. */
  std::string word(const std::string& key, const std::vector<std::string>& choices) const
  {
    std::string text;
    if (has(key))
      std::istringstream(value_text(key)) >> text;
    if (std::find(choices.begin(), choices.end(), text) == choices.end())
      fail("parameter '" + key + "' must be one of its choices, got '" + text + "' ('" + path_ + "')");
    return text;
  }

  /* The word after `key`, one of `choices`, or `fallback` when the file leaves the key out (its default). */
  std::string word(const std::string& key, const std::vector<std::string>& choices, const std::string& fallback) const
  {
    return has(key) ? word(key, choices) : fallback;
  }

  /* Whether a message's packets spread over the routing's paths ("spread packet"; "message" by default). */
  bool spread_by_packet() const { return word("spread", {"message", "packet"}, "message") == "packet"; }

private:
  std::string zone_;
  std::string path_;
  std::map<std::string, std::string> lines_;

  std::string value_text(const std::string& key) const
  {
    std::istringstream values(lines_.at(key));
    std::string skipped;
    values >> skipped;
    std::string rest;
    std::getline(values, rest);
    return rest;
  }

  double checked_number(const std::string& key, std::istringstream& values, bool zero_allowed) const
  {
    double value;
    if (!(values >> value) || !std::isfinite(value) || value < 0 || (!zero_allowed && value == 0))
      fail("parameter '" + key + "' must be a " + (zero_allowed ? "non-negative" : "positive") + " number");
    return value;
  }

  void read_common(const std::string& key, std::istringstream& values)
  {
    if (key == "link_bw")
      link_bw = checked_number(key, values, false);
    else if (key == "link_lat")
      link_lat = checked_number(key, values, true);
    else if (key == "host_speed")
      host_speed = checked_number(key, values, false);
    else if (key == "shm_bw")
      shm_bw = checked_number(key, values, false);
    else if (key == "shm_lat")
      shm_lat = checked_number(key, values, true);
    else if (key == "name")
      values >> name;
    else if (key == "cores")
      cores = core_count(values);
    else if (key == "nbl")
      nbl = limiter(key, values);
  }

  double limiter(const std::string& key, std::istringstream& values) const
  {
    std::string text;
    values >> text;
    if (text == "none")
      return 0;
    std::istringstream number(text);
    return checked_number(key, number, false);
  }

  int core_count(std::istringstream& values) const
  {
    long value;
    if (!(values >> value) || !(values >> std::ws).eof() || value < 1 || value > INT_MAX)
      fail("parameter 'cores' must be an integer from 1 to " + std::to_string(INT_MAX));
    return static_cast<int>(value);
  }
};

/* A zone whose hosts are numbered as they are added (netpoint ids 0..n-1) and have the model's own links. */
class EndpointZone : public NetZoneImpl {
public:
  explicit EndpointZone(const ZoneParams& p) : NetZoneImpl(p.name), params_(p) {}

protected:
  const ZoneParams params_;

  /* The hosts, in order, then (without shm_bw) the zone's loopback. SimGrid's Full and Dijkstra zones route a host
   * without a route to itself through the network model's __loopback__; that link is not reachable from a zone of
   * a shared object, so the zone makes the same one, "loopback" (an empty route would abort the simulation). */
  void add_hosts(const std::vector<std::string>& names)
  {
    for (const std::string& name : names)
      get_iface()->add_host(name, params_.host_speed)->set_core_count(params_.cores)->seal();
    if (params_.shm_bw <= 0) {
      loopback_latency_ = simgrid::config::get_value<double>("network/loopback-lat");
      loopback_ = get_iface()
                      ->add_link("loopback", simgrid::config::get_value<double>("network/loopback-bw"))
                      ->set_latency(loopback_latency_)
                      ->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE)
                      ->get_impl();
    }
  }

  /* The host's limiter and intra-node link, as the parameters ask (call once per host, in host order). */
  void add_endpoint_links(const std::string& host)
  {
    if (params_.nbl > 0)
      nbl_.push_back(get_iface()->add_link(host + "_nbl", params_.nbl * params_.link_bw)->set_latency(0)->get_impl());
    if (params_.shm_bw > 0) /* FATPIPE: every intra-node message gets the whole bandwidth (no memory-bus contention) */
      shm_.push_back(get_iface()
                         ->add_link(host + "_shm", params_.shm_bw)
                         ->set_latency(params_.shm_lat)
                         ->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE)
                         ->get_impl());
  }

  /* One direction of a cable. Links are left unsealed: the zone's seal() seals each of them once. (SimGrid creates
   * a link's trace container at every seal of the link, so sealing them here as well made tracing abort:
   * "container ... already present in all_containers_"; measured on 3.32.) */
  StandardLinkImpl* add_cable(const std::string& name, double bandwidth, double latency)
  {
    return add_cable_link(name, bandwidth, latency)->get_impl();
  }

  /* The same, as the s4u link whose state an adaptive rule reads (paths.hpp). */
  simgrid::s4u::Link* add_cable_link(const std::string& name, double bandwidth, double latency)
  {
    return get_iface()->add_link(name, bandwidth)->set_latency(latency);
  }

  /* The route from a host to itself (true), or its source limiter (false: the caller routes on). */
  bool route_start(long from, long to, Route* into, double* latency) const
  {
    if (from == to) { /* the intra-node link, or (without one) the loopback that SimGrid's own zones use */
      into->link_list_.push_back(params_.shm_bw > 0 ? shm_[from] : loopback_);
      if (latency != nullptr)
        *latency += params_.shm_bw > 0 ? params_.shm_lat : loopback_latency_;
      return true;
    }
    if (params_.nbl > 0)
      into->link_list_.push_back(nbl_[from]);
    return false;
  }

  /* The destination's limiter, and the latency of the links in between. */
  void route_end(long to, Route* into, double* latency, double path_latency) const
  {
    if (params_.nbl > 0)
      into->link_list_.push_back(nbl_[to]);
    if (latency != nullptr)
      *latency += path_latency;
  }

private:
  std::vector<StandardLinkImpl*> nbl_;   /* [k]: the limiter of host k (empty without NBL) */
  std::vector<StandardLinkImpl*> shm_;   /* [k]: the intra-node link of host k (empty without shm_bw) */
  StandardLinkImpl* loopback_ = nullptr; /* every host's route to itself without shm_bw */
  double loopback_latency_    = 0;
};

/* A zone whose hosts hang from switches: `per_switch` consecutive hosts on each, one cable each way; a route is the
 * source's cable up, the switch-to-switch cables of the family's rule, the destination's cable down. */
class SwitchedZone : public EndpointZone {
public:
  using EndpointZone::EndpointZone;

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) final
  {
    long from = static_cast<long>(src->id());
    long to   = static_cast<long>(dst->id());
    if (route_start(from, to, into, latency))
      return;
    into->link_list_.push_back(up_[from]);
    size_t before  = into->link_list_.size();
    double between = route_between(from, to, into);
    if (!into->link_shares_.empty()) /* a spread route: the host's own links carry the whole message */
      into->link_shares_.insert(into->link_shares_.begin(), before, 1.0);
    into->link_list_.push_back(down_[to]);
    route_end(to, into, latency, between + 2 * params_.link_lat);
    if (!into->link_shares_.empty())
      into->link_shares_.resize(into->link_list_.size(), 1.0);
  }

protected:
  /* The cables from the switch of host `from` to the switch of host `to` by the family's rule, appended to the
   * route (with their shares, Route::link_shares_, if the rule spreads the message); returns their latency. An
   * adaptive rule reads the network's state, and counts its decisions (paths.hpp: draw). */
  virtual double route_between(long from, long to, Route* into) = 0;

  long switch_of(long host) const { return host / per_switch_; }

  /* The per-pair hash of oblivious routing, mix(from * hosts + to) (generators.mixing). */
  std::uint64_t pair_hash(long from, long to) const
  {
    return mix(static_cast<std::uint64_t>(from) * static_cast<std::uint64_t>(up_.size()) +
               static_cast<std::uint64_t>(to));
  }

  /* `host-s-k`, the host on port k of switch s, switch by switch (the Python model's names, router_graph.host_name). */
  static std::vector<std::string> host_names(long switches, long per_switch)
  {
    std::vector<std::string> names;
    for (long s = 0; s < switches; s++)
      for (long k = 0; k < per_switch; k++)
        names.push_back("host-" + std::to_string(s) + "-" + std::to_string(k));
    return names;
  }

  /* The hosts, then host by host its cable up to its switch, down from it, and its own links. */
  void add_switched_hosts(const std::vector<std::string>& names, long per_switch,
                          const std::function<std::string(long)>& switch_name)
  {
    add_hosts(names);
    per_switch_ = per_switch;
    for (size_t i = 0; i < names.size(); i++) {
      std::string sw = switch_name(static_cast<long>(i) / per_switch);
      up_.push_back(add_cable(names[i] + "_to_" + sw, params_.link_bw, params_.link_lat));
      down_.push_back(add_cable(sw + "_to_" + names[i], params_.link_bw, params_.link_lat));
      add_endpoint_links(names[i]);
    }
  }

protected:
  /* The cables of `route` (links with the share of a message crossing each) after host `from`'s cable up and before
   * host `to`'s cable down, as the family's rule gave them, if the whole message crosses each; empty otherwise. */
  std::vector<simgrid::s4u::Link*>
  whole_cables_between(const std::vector<std::pair<simgrid::s4u::Link*, double>>& route, long from, long to) const
  {
    auto is = [](const StandardLinkImpl* cable) {
      return [cable](const auto& link) { return link.first->get_impl() == cable; };
    };
    auto first = std::find_if(route.begin(), route.end(), is(up_[from]));
    auto last  = std::find_if(first, route.end(), is(down_[to]));
    std::vector<simgrid::s4u::Link*> cables;
    if (last == route.end())
      return cables;
    for (auto link = first + 1; link != last; ++link) {
      if (link->second != 1.0)
        return {};
      cables.push_back(link->first);
    }
    return cables;
  }

private:
  long per_switch_ = 1;
  std::vector<StandardLinkImpl*> up_;   /* [host]: host to its switch */
  std::vector<StandardLinkImpl*> down_; /* [host]: switch to the host */
};

/* The parameter file: $<env> if set, else the shared object holding `symbol` with ".so" replaced by ".params". */
inline std::string params_path(const char* env, void* symbol, const std::string& zone)
{
  const char* given = std::getenv(env);
  if (given != nullptr && *given != '\0')
    return given;
  Dl_info info;
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) {
    std::cerr << "topolab " << zone << " zone: error: cannot find the path of the platform library; set " << env
              << std::endl;
    std::exit(2);
  }
  std::string path = info.dli_fname;
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0)
    path.resize(path.size() - 3);
  return path + ".params";
}

/* Since SimGrid 4.0 the engine owns a root zone; ours is its only child and takes its models from it. The root is
 * made first (get_netzone_root() creates it): tracing names a zone's container after its parent's. */
template <class Zone> void load_zone(const simgrid::s4u::Engine& engine, const ZoneParams& params)
{
  auto* root = engine.get_netzone_root()->get_impl();
  auto* zone = new Zone(params);
  zone->set_parent(root);
  zone->build();
  zone->seal();
}

} // namespace topolab
