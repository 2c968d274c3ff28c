"""Direct networks given by their router graph: hosts on every router, one cable per edge, minimal routes.

What the low-diameter families (Slim Fly, ``generators.topologies.slimfly``) share once their family has drawn the
graph:

* Names: routers ``router-<r>`` (r = 0 .. R-1), hosts ``host-<r>-<k>`` (port k of router r), listed router by
  router, port fastest, so that host-r-k is host number ``r * p + k`` (p hosts per router); a cable is two
  directed links ``<a>_to_<b>``, as in every family.
* Cables: each host's cable to its router (and its NBL limiter), host by host; then one duplex cable per edge of
  the router graph, edges in the order of their lower router, then of the higher.
* Routing, minimal and oblivious (a fixed route per pair of hosts, as SimGrid's static routes need): from router
  u towards router v the next hop is one of u's neighbours one step closer to v (distances by breadth-first
  search on the router graph), sorted by router number: ``candidates[mix(src * H + dst) mod len(candidates)]``,
  src and dst the host numbers, H the number of hosts, ``mix`` SplitMix64's output function
  (``generators.mixing``); the same hash at every hop. The route is the source's host cable, the router hops and
  the destination's host cable, framed by the NBL limiters.
* Other routing rules (``routing``; docs/adaptive-routing.md): ``valiant``, minimally to an intermediate router,
  the ``((hash >> 32) mod (R - 2))``-th router other than the two ends, then minimally on, the pair's hash at every
  hop; ``ugal-l`` and ``ugal-g``, adaptive: the compiled zone weighs the minimal path against two Valiant paths
  drawn for each decision by the load of their busiest visible cable, and an idle network's route is the minimal
  one (the model's). ``spread=packet`` spreads a message's packets evenly over every minimal path (minimal) or
  every intermediate router (Valiant), or places it in parts (UGAL).
* Representation: the compiled zone ``simgrid_cpp/router_graph_zone.cpp`` (library
  ``topolab_router_graph_zone``), which reads the graph from its parameter file (:func:`compiled_zone`: the keys
  of every zone, ``routers R``, ``hosts p`` and one line ``neighbours r n1 n2 ...`` per router), computes the
  distances at load time and every route on demand by the same rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from generators.errors import TopologyError
from generators.mixing import mix
from generators.model import CompiledZone
from generators.model import Link
from generators.model import RouteRule
from generators.model import SpreadRoute
from generators.model import SpreadRule
from generators.model import add_links
from generators.model import duplex_link
from generators.model import host_cable
from generators.model import with_nbl
from generators.spread import framed
from generators.spread import hop_latency
from generators.spread import spread_evenly

__all__ = [
    "RouterGraph",
    "cables",
    "compiled_zone",
    "host_coordinates",
    "host_name",
    "route_rule",
    "router_name",
    "spread_rule",
]

LIBRARY = "topolab_router_graph_zone"


def router_name(r: int) -> str:
    """Router number r."""
    return f"router-{r}"


def host_name(r: int, k: int) -> str:
    """The host on port k of router r."""
    return f"host-{r}-{k}"


def host_coordinates(name: str) -> tuple[int, int]:
    """(router, port) of ``host-r-k``.

    >>> host_coordinates("host-17-2")
    (17, 2)
    """
    r, k = name.removeprefix("host-").split("-")
    return int(r), int(k)


@dataclass(frozen=True)
class RouterGraph:
    """An undirected router graph (``neighbours[r]``: r's neighbours, increasing) with ``hosts`` hosts per router.

    >>> ring = RouterGraph(((1, 3), (0, 2), (1, 3), (0, 2)), hosts=1)
    >>> ring.distances_from(0), ring.next_hops(0, 2), ring.path(0, 2, hashed=1)
    ([0, 1, 2, 1], [1, 3], [0, 3, 2])
    """

    neighbours: tuple[tuple[int, ...], ...]
    hosts: int
    _distances: dict[int, list[int]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        count, sets = len(self.neighbours), [set(around) for around in self.neighbours]
        for r, around in enumerate(self.neighbours):
            if list(around) != sorted(sets[r]) or r in sets[r] or any(not 0 <= n < count for n in around):
                raise TopologyError(f"router {r}: its neighbours must be distinct other routers, increasing")
            if any(r not in sets[n] for n in around):
                raise TopologyError(f"router {r}: the router graph must be undirected (symmetric)")

    @property
    def router_count(self) -> int:
        """Routers in the machine (R)."""
        return len(self.neighbours)

    @property
    def host_count(self) -> int:
        """Hosts in the machine (H = R p)."""
        return self.router_count * self.hosts

    def edges(self) -> Iterator[tuple[int, int]]:
        """Every edge once, as (lower router, higher router), in the order of the lower, then the higher."""
        return ((r, n) for r, around in enumerate(self.neighbours) for n in around if n > r)

    def distances_from(self, v: int) -> list[int]:
        """The distance of every router from router v (breadth-first search, cached); -1: unreachable."""
        if v not in self._distances:
            distance = [-1] * self.router_count
            distance[v], frontier = 0, [v]
            while frontier:
                reached = []
                for u in frontier:
                    for w in self.neighbours[u]:
                        if distance[w] < 0:
                            distance[w] = distance[u] + 1
                            reached.append(w)
                frontier = reached
            self._distances[v] = distance
        return self._distances[v]

    def next_hops(self, u: int, v: int) -> list[int]:
        """The neighbours of router u one step closer to router v, increasing."""
        distance = self.distances_from(v)
        if distance[u] < 0:
            raise TopologyError(f"the router graph is not connected: no path from router {u} to router {v}")
        return [w for w in self.neighbours[u] if distance[w] == distance[u] - 1]

    def path(self, u: int, v: int, hashed: int) -> list[int]:
        """The routers of the route's path from router u to router v (both included), by the module's rule."""
        path = [u]
        while path[-1] != v:
            candidates = self.next_hops(path[-1], v)
            path.append(candidates[hashed % len(candidates)])
        return path

    def minimal_paths(self, u: int, v: int) -> list[list[int]]:
        """Every minimal path from router u to router v, next hops in increasing order (the compiled zone's)."""
        if u == v:
            return [[u]]
        return [[u, *rest] for w in self.next_hops(u, v) for rest in self.minimal_paths(w, v)]

    def intermediate(self, u: int, v: int, hashed: int) -> int:
        """Valiant's intermediate router for routers u != v: the ``hashed mod (R - 2)``-th other one."""
        m = hashed % (self.router_count - 2)
        for skipped in sorted((u, v)):
            m += m >= skipped
        return m

    def valiant_path(self, u: int, v: int, middle: int, hashed: int) -> list[int]:
        """Minimally to router ``middle``, then minimally on to v, the pair's hash at every hop."""
        return self.path(u, middle, hashed) + self.path(middle, v, hashed)[1:]


def cables(graph: RouterGraph, link_bw: float, link_lat: float, nbl: float | None) -> dict[str, Link]:
    """Every host's cable (and limiter), host by host, then one cable per edge of the router graph."""
    links: dict[str, Link] = {}
    for r in range(graph.router_count):
        for k in range(graph.hosts):
            add_links(links, *host_cable(host_name(r, k), router_name(r), link_bw, link_lat, nbl))
    for r, n in graph.edges():
        add_links(links, *duplex_link(router_name(r), router_name(n), link_bw, link_lat))
    return links


def _hops(path: list[int]) -> list[str]:
    return [f"{router_name(a)}_to_{router_name(b)}" for a, b in itertools.pairwise(path)]


def route_rule(
    graph: RouterGraph, limited: bool, routing: str = "minimal", spread: SpreadRule | None = None
) -> RouteRule:
    """Minimal or Valiant routing on the router graph (module docstring), framed by the host cables and limiters;
    UGAL's route is the minimal one (an idle network's); a spread route's links."""
    hosts, count = graph.hosts, graph.host_count

    def route(src: str, dst: str) -> list[str]:
        if spread is not None:
            return [name for name, _ in spread(src, dst).shares]
        (r, k), (s, m) = host_coordinates(src), host_coordinates(dst)
        hashed = mix((r * hosts + k) * count + s * hosts + m)
        if routing == "valiant" and r != s:
            path = graph.valiant_path(r, s, graph.intermediate(r, s, hashed >> 32), hashed)
        else:
            path = graph.path(r, s, hashed)
        return with_nbl(src, dst, [f"{src}_to_{router_name(r)}", *_hops(path), f"{router_name(s)}_to_{dst}"], limited)

    return route


def spread_rule(graph: RouterGraph, limited: bool, valiant: bool, link_lat: float) -> SpreadRule:
    """Packets spread evenly over every minimal path, or (Valiant) over every intermediate router, each cable with
    its share, in the compiled zone's order; the mean latency of the paths."""
    hosts, count = graph.hosts, graph.host_count

    def route(src: str, dst: str) -> SpreadRoute:
        (r, k), (s, m) = host_coordinates(src), host_coordinates(dst)
        hashed = mix((r * hosts + k) * count + s * hosts + m)
        if valiant and r != s:
            others = [w for w in range(graph.router_count) if w not in (r, s)]
            paths = [graph.valiant_path(r, s, w, hashed) for w in others]
        else:
            paths = graph.minimal_paths(r, s)
        between = spread_evenly(_hops(path) for path in paths)
        shares = framed(src, dst, f"{src}_to_{router_name(r)}", f"{router_name(s)}_to_{dst}", between, limited)
        mean = sum(hop_latency(len(path) - 1, link_lat) for path in paths) / len(paths)
        return SpreadRoute(shares, mean + 2 * link_lat)

    return route


def compiled_zone(
    graph: RouterGraph,
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
    chosen: Mapping[str, str] | None = None,
) -> CompiledZone:
    """The compiled zone ``topolab_router_graph_zone`` and the parameters it reads (the writer puts the name first);
    the routing keys ``chosen`` (spread.zone_routing: only those not at their default, so that older files read the
    same).

    >>> print(compiled_zone(RouterGraph(((1,), (0,)), hosts=2), 1e9, 1e-7, None, 1e9).parameters, end="")
    routers 2
    hosts 2
    link_bw 1000000000.0
    link_lat 1e-07
    nbl none
    host_speed 1000000000.0
    neighbours 0 1
    neighbours 1 0
    """
    values = {"routers": graph.router_count, "hosts": graph.hosts, "link_bw": repr(float(link_bw)),
              "link_lat": repr(float(link_lat)), "nbl": "none" if nbl is None else repr(float(nbl)),
              "host_speed": repr(float(host_speed))}  # fmt: skip
    values |= chosen or {}
    lines = [f"{key} {value}\n" for key, value in values.items()]
    lines += [" ".join(map(str, ("neighbours", r, *around))) + "\n" for r, around in enumerate(graph.neighbours)]
    return CompiledZone(LIBRARY, "".join(lines))
