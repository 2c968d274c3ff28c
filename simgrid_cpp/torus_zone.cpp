/*
 * torus_zone.cpp - the N-dimensional torus / mesh of generators/topologies/torus.py as a
 * compiled SimGrid platform, for machines too large for explicit routes
 * (Mira: 49152 nodes).
 *
 * The parameter file ($TOPOLAB_TORUS_PARAMS, or NAME.params beside NAME.so)
 * has the keys of every compiled zone (zone_common.hpp: name, link_bw,
 * link_lat, nbl, host_speed and the node keys) and
 *
 *   dims 16 12 8 4 2        length of each dimension (first varies fastest)
 *   wrap 1 1 1 1 1          wrap-around per dimension (0: mesh)
 *
 * Elements and routes are those of the Python model, name for name: hosts
 * host-<k> with `cores` cores; one full-duplex cable per neighbour pair as two
 * SHARED directed links host-<a>_to_host-<b> (a length-2 dimension is one
 * cable); the hosts' own links of zone_common.hpp.
 * Routes are dimension-ordered (dimension 0 first), the shorter way round a
 * ring, ties by SimGrid's TORUS rule (goes_up below = torus._goes_up), computed
 * on demand in get_local_route(): memory is linear in the machine and nothing
 * is precomputed per pair.
 */
#include "zone_common.hpp"

#include <string>
#include <vector>

namespace {

using topolab::NetPoint;
using topolab::Route;
using topolab::StandardLinkImpl;
using topolab::ZoneParams;

/* SimGrid's TORUS rule for one hop along a ring of `size`: "+" when the target is at most half a ring
 * ahead without wrapping, or when `here` is past the middle and the target is reached by wrapping. */
bool goes_up(long here, long target, long size)
{
  long half = size / 2;
  return (here < target && target <= here + half) || (here > half && (here + half) % size >= target);
}

class TorusZone : public topolab::EndpointZone {
public:
  explicit TorusZone(const ZoneParams& p) : EndpointZone(p)
  {
    dims_ = p.integers("dims");
    if (dims_.empty())
      p.fail("'" + p.path() + "' gives no dims");
    for (long d : dims_)
      if (d < 1)
        p.fail("every dimension must be >= 1 (" + p.path() + ")");
    for (long flag : p.integers("wrap"))
      wraps_.push_back(flag != 0);
    if (wraps_.size() != dims_.size())
      p.fail("'" + p.path() + "' must give one wrap flag per dimension");
    ndims_ = dims_.size();
    stride_.assign(ndims_, 1);
    nodes_ = 1;
    for (size_t d = 0; d < ndims_; d++) {
      stride_[d] = nodes_;
      nodes_ *= dims_[d];
    }
  }

  void build()
  {
    std::vector<std::string> names;
    for (long k = 0; k < nodes_; k++)
      names.push_back("host-" + std::to_string(k));
    add_hosts(names);
    up_.assign(nodes_ * ndims_, nullptr);
    down_.assign(nodes_ * ndims_, nullptr);
    for (long k = 0; k < nodes_; k++) {
      for (size_t d = 0; d < ndims_; d++) {
        long size = dims_[d];
        long c    = coordinate(k, d);
        long next = c + 1;
        if (wraps_[d] && size > 2)
          next %= size;
        if (next >= size)
          continue; /* the end of a mesh line, or the second half of a length-2 dimension */
        long other                = k + (next - c) * stride_[d];
        up_[k * ndims_ + d]       = cable(k, other);
        down_[other * ndims_ + d] = cable(other, k);
      }
      add_endpoint_links(names[k]);
    }
  }

  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override
  {
    long from = static_cast<long>(src->id());
    long to   = static_cast<long>(dst->id());
    if (route_start(from, to, into, latency))
      return;
    long here = from;
    long hops = 0;
    for (size_t d = 0; d < ndims_; d++) {
      long size   = dims_[d];
      long target = coordinate(to, d);
      for (long c = coordinate(here, d); c != target; c = coordinate(here, d)) {
        bool up = (wraps_[d] && size > 2) ? goes_up(c, target, size) : target > c;
        into->link_list_.push_back(up ? up_[here * ndims_ + d] : down_[here * ndims_ + d]);
        long next = up ? (c + 1) % size : (c + size - 1) % size;
        here += (next - c) * stride_[d];
        hops++;
      }
    }
    route_end(to, into, latency, static_cast<double>(hops) * params_.link_lat);
  }

private:
  long coordinate(long k, size_t d) const { return (k / stride_[d]) % dims_[d]; }

  StandardLinkImpl* cable(long a, long b)
  {
    return add_cable("host-" + std::to_string(a) + "_to_host-" + std::to_string(b), params_.link_bw,
                     params_.link_lat);
  }

  std::vector<long> dims_;
  std::vector<bool> wraps_;
  size_t ndims_ = 0;
  long nodes_   = 0;
  std::vector<long> stride_;
  std::vector<StandardLinkImpl*> up_;   /* [k * ndims + d]: the link from k one step "+" along d */
  std::vector<StandardLinkImpl*> down_; /* [k * ndims + d]: the link from k one step "-" along d */
};

} // namespace

extern "C" void load_platform(const simgrid::s4u::Engine& engine)
{
  std::string path = topolab::params_path("TOPOLAB_TORUS_PARAMS", reinterpret_cast<void*>(&goes_up), "torus");
  topolab::load_zone<TorusZone>(engine, ZoneParams("torus", path, {"dims", "wrap"}));
}
