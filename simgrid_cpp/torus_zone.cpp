/*
 * torus_zone.cpp - the N-dimensional torus / mesh of generators/torus.py as a
 * compiled SimGrid platform, for machines too large for explicit routes
 * (Mira: 49152 nodes).
 *
 * SimGrid loads a platform that is a shared object by calling its
 * load_platform() (smpirun -platform ./NAME.so; the path must contain a '/').
 * The platform's parameters are read from a text file: $TOPOLAB_TORUS_PARAMS
 * if set, else the file beside the shared object with ".so" replaced by
 * ".params" (generators.writer writes both). Format, one key per line:
 *
 *   dims 16 12 8 4 2        length of each dimension (first varies fastest)
 *   wrap 1 1 1 1 1          wrap-around per dimension (0: mesh)
 *   link_bw 2e9             bytes/s per direction of each cable
 *   link_lat 1e-07          seconds
 *   nbl 1                   endpoint limiter in link bandwidths, or "none"
 *   host_speed 1e9          flop/s of each core
 *   name torus-16x12x8x4x2  zone name
 *
 * and the node keys of generators/node.py, each optional and written only when
 * it is not the default (so that older files still read the same):
 *
 *   cores 16                cores per host (default 1)
 *   shm_bw 1e10             bytes/s of each host's intra-node link (default:
 *                           none, no such link)
 *   shm_lat 5e-07           seconds, its latency (default 0; needs shm_bw)
 *
 * Elements and routes are those of the Python model, name for name: hosts
 * host-<k> with `cores` cores; one full-duplex cable per neighbour pair as two
 * SHARED directed links host-<a>_to_host-<b> (a length-2 dimension is one
 * cable); the limiter host-<k>_nbl on the routes that start or end at host-<k>
 * only; with shm_bw, the FATPIPE link host-<k>_shm, the whole route from
 * host-<k> to itself (without it, one FATPIPE link "loopback" for all hosts, the
 * twin of the network model's __loopback__ that SimGrid's own zones use:
 * network/loopback-bw and network/loopback-lat).
 * Routes are dimension-ordered (dimension 0 first), the shorter way round a
 * ring, ties by SimGrid's TORUS rule (goes_up below = torus._goes_up), computed
 * on demand in get_local_route(): memory is linear in the machine and nothing
 * is precomputed per pair. An unknown key is refused.
 *
 * Errors (missing or malformed parameters) print one line
 * "topolab torus zone: error: ..." on stderr and exit with status 2.
 */
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <xbt/config.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <dlfcn.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;
using simgrid::kernel::routing::Route;

[[noreturn]] void fail(const std::string& message)
{
  std::cerr << "topolab torus zone: error: " << message << std::endl;
  std::exit(2);
}

struct TorusParams {
  std::string name = "torus";
  std::vector<long> dims;
  std::vector<bool> wraps;
  double link_bw    = 0;
  double link_lat   = 0;
  double nbl        = 0; /* <= 0: no limiter */
  double host_speed = 0;
  int cores         = 1;
  double shm_bw     = 0; /* <= 0: no intra-node link */
  double shm_lat    = 0;
};

double positive_number(const std::string& key, std::istringstream& values, bool zero_allowed)
{
  double value;
  if (!(values >> value) || !std::isfinite(value) || value < 0 || (!zero_allowed && value == 0))
    fail("parameter '" + key + "' must be a " + (zero_allowed ? "non-negative" : "positive") + " number");
  return value;
}

int core_count(std::istringstream& values)
{
  long value;
  if (!(values >> value) || !(values >> std::ws).eof() || value < 1 || value > INT_MAX)
    fail("parameter 'cores' must be an integer from 1 to " + std::to_string(INT_MAX));
  return static_cast<int>(value);
}

TorusParams read_params(const std::string& path)
{
  std::ifstream in(path);
  if (!in)
    fail("cannot read the parameter file '" + path + "'");
  TorusParams p;
  bool have_bw = false;
  bool have_lat = false;
  bool have_nbl = false;
  bool have_speed = false;
  bool have_shm_lat = false;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream values(line);
    std::string key;
    if (!(values >> key) || key[0] == '#')
      continue;
    if (key == "dims" || key == "wrap") {
      long value;
      std::vector<long> list;
      while (values >> value)
        list.push_back(value);
      if (!values.eof())
        fail("parameter '" + key + "' must be a list of integers: '" + line + "'");
      if (key == "dims")
        p.dims = list;
      else
        for (long flag : list)
          p.wraps.push_back(flag != 0);
    } else if (key == "link_bw") {
      p.link_bw = positive_number(key, values, false);
      have_bw = true;
    } else if (key == "link_lat") {
      p.link_lat = positive_number(key, values, true);
      have_lat = true;
    } else if (key == "host_speed") {
      p.host_speed = positive_number(key, values, false);
      have_speed = true;
    } else if (key == "nbl") {
      std::string text;
      values >> text;
      if (text != "none") {
        std::istringstream number(text);
        p.nbl = positive_number(key, number, false);
      }
      have_nbl = true;
    } else if (key == "name") {
      values >> p.name;
    } else if (key == "cores") {
      p.cores = core_count(values);
    } else if (key == "shm_bw") {
      p.shm_bw = positive_number(key, values, false);
    } else if (key == "shm_lat") {
      p.shm_lat = positive_number(key, values, true);
      have_shm_lat = true;
    } else {
      fail("unknown parameter '" + key + "' in '" + path + "'");
    }
  }
  if (p.dims.empty())
    fail("'" + path + "' gives no dims");
  for (long d : p.dims)
    if (d < 1)
      fail("every dimension must be >= 1 (" + path + ")");
  if (p.wraps.size() != p.dims.size())
    fail("'" + path + "' must give one wrap flag per dimension");
  if (!have_bw || !have_lat || !have_nbl || !have_speed)
    fail("'" + path + "' must give link_bw, link_lat, nbl and host_speed");
  if (have_shm_lat && p.shm_bw <= 0)
    fail("'" + path + "' gives shm_lat without shm_bw (the intra-node link needs a bandwidth)");
  return p;
}

/* SimGrid's TORUS rule for one hop along a ring of `size`: "+" when the target is at most half a ring
 * ahead without wrapping, or when `here` is past the middle and the target is reached by wrapping. */
bool goes_up(long here, long target, long size)
{
  long half = size / 2;
  return (here < target && target <= here + half) || (here > half && (here + half) % size >= target);
}

class TorusZone : public NetZoneImpl {
public:
  explicit TorusZone(const TorusParams& p) : NetZoneImpl(p.name), p_(p)
  {
    ndims_  = p.dims.size();
    stride_.assign(ndims_, 1);
    nodes_ = 1;
    for (size_t d = 0; d < ndims_; d++) {
      stride_[d] = nodes_;
      nodes_ *= p.dims[d];
    }
  }

  void build()
  {
    simgrid::s4u::NetZone* zone = get_iface();
    for (long k = 0; k < nodes_; k++)
      zone->add_host("host-" + std::to_string(k), p_.host_speed)->set_core_count(p_.cores)->seal();
    /* SimGrid's Full and Dijkstra zones route a host without a route to itself through the network model's
     * __loopback__ (network/loopback-bw and -lat, FATPIPE); that link is not reachable from a zone of a shared
     * object, so the zone makes the same one, "loopback" (an empty route would abort the simulation). */
    if (p_.shm_bw <= 0) {
      loopback_latency_ = simgrid::config::get_value<double>("network/loopback-lat");
      loopback_ = zone->add_link("loopback", simgrid::config::get_value<double>("network/loopback-bw"))
                      ->set_latency(loopback_latency_)
                      ->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE)
                      ->get_impl();
    }
    up_.assign(nodes_ * ndims_, nullptr);
    down_.assign(nodes_ * ndims_, nullptr);
    for (long k = 0; k < nodes_; k++) {
      for (size_t d = 0; d < ndims_; d++) {
        long size = p_.dims[d];
        long c    = coordinate(k, d);
        long next = c + 1;
        if (p_.wraps[d] && size > 2)
          next %= size;
        if (next >= size)
          continue; /* the end of a mesh line, or the second half of a length-2 dimension */
        long other          = k + (next - c) * stride_[d];
        up_[k * ndims_ + d] = cable(k, other);
        down_[other * ndims_ + d] = cable(other, k);
      }
      if (p_.nbl > 0)
        nbl_.push_back(zone->add_link("host-" + std::to_string(k) + "_nbl", p_.nbl * p_.link_bw)
                           ->set_latency(0)
                           ->get_impl());
      if (p_.shm_bw > 0) /* FATPIPE: every intra-node message gets the whole bandwidth (no memory-bus contention) */
        shm_.push_back(zone->add_link("host-" + std::to_string(k) + "_shm", p_.shm_bw)
                           ->set_latency(p_.shm_lat)
                           ->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE)
                           ->get_impl());
    }
  }

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override
  {
    long from = static_cast<long>(src->id());
    long to   = static_cast<long>(dst->id());
    if (from == to) { /* the intra-node link, or (without one) the loopback that SimGrid's own zones use */
      into->link_list_.push_back(p_.shm_bw > 0 ? shm_[from] : loopback_);
      if (latency != nullptr)
        *latency += p_.shm_bw > 0 ? p_.shm_lat : loopback_latency_;
      return;
    }
    if (p_.nbl > 0)
      into->link_list_.push_back(nbl_[from]);
    long here = from;
    long hops = 0;
    for (size_t d = 0; d < ndims_; d++) {
      long size   = p_.dims[d];
      long target = coordinate(to, d);
      for (long c = coordinate(here, d); c != target; c = coordinate(here, d)) {
        bool up = (p_.wraps[d] && size > 2) ? goes_up(c, target, size) : target > c;
        into->link_list_.push_back(up ? up_[here * ndims_ + d] : down_[here * ndims_ + d]);
        long next = up ? (c + 1) % size : (c + size - 1) % size;
        here += (next - c) * stride_[d];
        hops++;
      }
    }
    if (p_.nbl > 0)
      into->link_list_.push_back(nbl_[to]);
    if (latency != nullptr)
      *latency += static_cast<double>(hops) * p_.link_lat;
  }

private:
  long coordinate(long k, size_t d) const { return (k / stride_[d]) % p_.dims[d]; }

  /* Links are left unsealed: the zone's seal() seals each of them once. (SimGrid creates a link's trace
   * container at every seal of the link, so sealing them here as well made tracing abort: "container ...
   * already present in all_containers_"; measured on 3.32.) */
  StandardLinkImpl* cable(long a, long b)
  {
    return get_iface()
        ->add_link("host-" + std::to_string(a) + "_to_host-" + std::to_string(b), p_.link_bw)
        ->set_latency(p_.link_lat)
        ->get_impl();
  }

  TorusParams p_;
  size_t ndims_ = 0;
  long nodes_   = 0;
  std::vector<long> stride_;
  std::vector<StandardLinkImpl*> up_;   /* [k * ndims + d]: the link from k one step "+" along d */
  std::vector<StandardLinkImpl*> down_; /* [k * ndims + d]: the link from k one step "-" along d */
  std::vector<StandardLinkImpl*> nbl_;  /* [k]: the limiter of host-k (empty without NBL) */
  std::vector<StandardLinkImpl*> shm_;  /* [k]: the intra-node link of host-k (empty without shm_bw) */
  StandardLinkImpl* loopback_ = nullptr; /* every host's route to itself without shm_bw */
  double loopback_latency_    = 0;
};

/* $TOPOLAB_TORUS_PARAMS, else this shared object's path with ".so" replaced by ".params". */
std::string params_path()
{
  const char* given = std::getenv("TOPOLAB_TORUS_PARAMS");
  if (given != nullptr && *given != '\0')
    return given;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&goes_up), &info) == 0 || info.dli_fname == nullptr)
    fail("cannot find the path of the platform library; set TOPOLAB_TORUS_PARAMS");
  std::string path = info.dli_fname;
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0)
    path.resize(path.size() - 3);
  return path + ".params";
}

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  TorusParams params = read_params(params_path());
  /* Since SimGrid 4.0 the engine owns a root zone; ours is its only child and takes its models from it. The root
   * is made first (get_netzone_root() creates it): tracing names a zone's container after its parent's. */
  auto* root = engine.get_netzone_root()->get_impl();
  auto* zone = new TorusZone(params);
  zone->set_parent(root);
  zone->build();
  zone->seal();
}
