"""The in-memory platform model: the single description of a platform.

Everything topolab does with a platform starts here: the SimGrid XML (``generators.writer``), the
hostfile (``generators.placement``), the static analyses (``generators.analysis``) and the loader
check all read the same :class:`Platform`, so what is analysed is what is simulated.

Conventions
-----------
* Bandwidths are bytes/s, latencies seconds, host speeds flop/s.
* Every physical full-duplex cable is two directed SHARED links, ``<a>_to_<b>`` and ``<b>_to_<a>``
  (:func:`duplex_link`; parallel cables between the same two nodes, ``<a>_to_<b>#<lane>``): the same model as
  SimGrid's SPLITDUPLEX, chosen because tracing a SPLITDUPLEX link aborted SimGrid 3.32 (docs/simgrid.md), and kept
  because each direction keeps the model's name.
* A node-bandwidth-limited (NBL) host has one SHARED link ``<host>_nbl`` that every message entering
  or leaving the host crosses, in both directions: a cap on the sum of injection and reception.
  Transit traffic never crosses it, because only the routes that start or end at the host do.
* Every link knows what it is (:attr:`Link.kind`, one of :data:`LINK_KINDS`) and where it is (:attr:`Link.ends`):
  a ``cable`` direction runs from one node to another; a ``limiter``, ``port``, ``fabric`` or ``shm`` link belongs
  to one node (both ends that node). Analyses and drawings ask the link (:meth:`Platform.cables`), never its name.
* Routes are ordered lists of link names, computed by the platform's routing rule
  (:meth:`Platform.route`); they are what SimGrid must report for the same pair. A platform that spreads a
  message over several paths (per-packet spreading, modelled at flow level) gives each link of a route the share
  of the message that crosses it (:meth:`Platform.route_shares`); SimGrid charges each link with that share
  (topolab's SimGrid patch 0008). A platform with adaptive routing (:attr:`Platform.adaptive`) chooses a route
  from the network's state when a message starts: the model's route is the one it takes on an idle network.
* A host has ``cores`` cores of ``speed`` each. With an intra-node path (``generators.node``: ``shm_bw``), each
  host has one FATPIPE link ``<host>_shm`` and the route from a host to itself is exactly that link: the path a
  message between two ranks of one host takes. Without one the model has no such route (SimGrid's implicit
  loopback carries it).
* A platform is written either with one explicit route per ordered host pair (a SimGrid Full zone:
  hosts^2 routes), or, when it has a :class:`RoutingGraph`, as a directed graph whose fewest-links
  paths are the routes (a SimGrid Dijkstra zone: size linear in the machine). The family builds the
  graph so that every shortest path between two hosts has exactly the links of its rule's route;
  :func:`graph_routes` enumerates them so that tests can prove it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TypeVar

from generators.errors import TopologyError
from generators.size import Size
from generators.units import check_quantity

__all__ = [
    "CABLE",
    "FATPIPE",
    "LINK_KINDS",
    "NODE_LINK_SUFFIXES",
    "SHARED",
    "CompiledZone",
    "Grid",
    "Host",
    "Link",
    "Platform",
    "RoutingGraph",
    "SpreadRoute",
    "duplex_link",
    "graph_routes",
    "host_cable",
    "node_link",
    "node_link_name",
]

SHARED = "SHARED"
FATPIPE = "FATPIPE"
_SHARING_POLICIES = (SHARED, FATPIPE)

_V = TypeVar("_V")

CABLE = "cable"
LINK_KINDS = (CABLE, "limiter", "port", "fabric", "shm")
"""What a link models: one direction of a cable between two nodes, a node's bandwidth limiter (NBL), a torus
node's port into its router (layered tori), a switch's or chassis's internal fabric, a node's intra-node path."""

NODE_LINK_SUFFIXES = {"limiter": "nbl", "port": "port", "fabric": "fabric", "shm": "shm"}
"""How a node's own link is named: ``<node>_<suffix>`` (a cable direction is ``<a>_to_<b>``)."""


@dataclass(frozen=True)
class Host:
    """A compute node: the endpoint of routes and the place MPI ranks run.

    ``speed`` is the speed of each of its ``cores`` (flop/s); the ranks placed on the host share the cores.
    """

    name: str
    speed: float = 1e9
    cores: int = 1


@dataclass(frozen=True, slots=True)
class Link:
    """One directed (or, for a limiter, shared both ways) link with its own bandwidth and latency."""

    name: str
    bandwidth: float
    latency: float
    sharing: str = SHARED
    kind: str = field(kw_only=True)
    """One of :data:`LINK_KINDS`."""
    ends: tuple[str, str] = field(kw_only=True)
    """A cable's (from, to) nodes; a node's own link: (node, node)."""

    def __post_init__(self) -> None:
        if self.sharing not in _SHARING_POLICIES:
            raise TopologyError(f"link {self.name}: sharing must be one of {_SHARING_POLICIES}, got {self.sharing!r}")
        if self.kind not in LINK_KINDS:
            raise TopologyError(f"link {self.name}: kind must be one of {LINK_KINDS}, got {self.kind!r}")
        if (self.kind == CABLE) == (self.ends[0] == self.ends[1]):
            raise TopologyError(f"link {self.name}: a cable joins two nodes, any other link is one node's")
        # Derived values too (a limiter is nbl x link_bw, which can overflow or underflow): SimGrid must read them.
        check_quantity(self.bandwidth, f"link {self.name}: bandwidth", allow_zero=False)
        check_quantity(self.latency, f"link {self.name}: latency", allow_zero=True)


def duplex_link(a: str, b: str, bandwidth: float, latency: float, lane: int | None = None) -> tuple[Link, Link]:
    """Return the two directed links ``a_to_b`` and ``b_to_a`` of one full-duplex cable; one of several parallel
    cables between the same two nodes is told apart by its ``lane``: ``a_to_b#<lane>``.

    >>> [link.name for link in duplex_link("s0", "s1", 1e9, 0.0, lane=2)]
    ['s0_to_s1#2', 's1_to_s0#2']
    """
    suffix = "" if lane is None else f"#{lane}"
    return (
        Link(f"{a}_to_{b}{suffix}", bandwidth, latency, kind=CABLE, ends=(a, b)),
        Link(f"{b}_to_{a}{suffix}", bandwidth, latency, kind=CABLE, ends=(b, a)),
    )


def add_links(links: dict[str, Link], *new: Link) -> None:
    """Add links to a name -> link table; a name used twice is a bug of the family builder."""
    for link in new:
        if link.name in links:
            raise TopologyError(f"link {link.name} defined twice")
        links[link.name] = link


def node_link_name(node: str, kind: str) -> str:
    """The name of ``node``'s own link of ``kind`` (``host-3_nbl``)."""
    return f"{node}_{NODE_LINK_SUFFIXES[kind]}"


def node_link(node: str, kind: str, bandwidth: float, latency: float = 0.0, sharing: str = SHARED) -> Link:
    """``node``'s own link of ``kind`` (a limiter, port, fabric or intra-node path)."""
    return Link(node_link_name(node, kind), bandwidth, latency, sharing, kind=kind, ends=(node, node))


def nbl_link(host: str, bandwidth: float) -> Link:
    """The node-bandwidth limiter of ``host``: one SHARED link ``<host>_nbl`` for its in + out traffic."""
    return node_link(host, "limiter", bandwidth)


def host_cable(host: str, switch: str, bandwidth: float, latency: float, nbl: float | None) -> tuple[Link, ...]:
    """A host's cable to its switch, both directions, and its limiter of ``nbl`` cable bandwidths (None: none).

    >>> [link.name for link in host_cable("h", "sw", 1e9, 0.0, 2)]
    ['h_to_sw', 'sw_to_h', 'h_nbl']
    """
    limiter = () if nbl is None else (nbl_link(host, nbl * bandwidth),)
    return (*duplex_link(host, switch, bandwidth, latency), *limiter)


def with_nbl(src: str, dst: str, hops: Sequence[str], limited: bool) -> list[str]:
    """``hops`` framed by the source's and destination's NBL limiters when hosts are limited."""
    return [node_link_name(src, "limiter"), *hops, node_link_name(dst, "limiter")] if limited else list(hops)


RouteRule = Callable[[str, str], Sequence[str]]


@dataclass(frozen=True)
class SpreadRoute:
    """A route that spreads a message over several paths: every link once, in route order, with the share of the
    message that crosses it, and the route's latency (the mean of its paths', each weighted by its share)."""

    shares: tuple[tuple[str, float], ...]
    latency: float


SpreadRule = Callable[[str, str], SpreadRoute]


@dataclass(frozen=True)
class RoutingGraph:
    """Routes as the fewest-links paths of a directed graph (SimGrid's Dijkstra routing).

    Parameters
    ----------
    virtual_routers : tuple of str
        Graph nodes that are neither hosts nor the platform's routers: they only steer paths (for
        example one side of a spine switch), and carry no link of their own.
    edges : tuple of (str, str, tuple of str)
        ``(from, to, links)``: a directed edge between two hosts/routers and the ordered links it
        crosses. SimGrid weighs an edge by its number of links.
    """

    virtual_routers: tuple[str, ...]
    edges: tuple[tuple[str, str, tuple[str, ...]], ...]


def graph_routes(graph: RoutingGraph, src: str, dst: str) -> set[tuple[str, ...]]:
    """The distinct link lists of all fewest-links paths from ``src`` to ``dst`` in ``graph``.

    SimGrid's Dijkstra zone returns one of them; when there is exactly one, SimGrid's route is
    that one whatever its tie-breaking.

    >>> g = RoutingGraph((), (("a", "r", ("a_up",)), ("r", "b", ("b_down",)), ("a", "b", ("x", "y", "z"))))
    >>> graph_routes(g, "a", "b")
    {('a_up', 'b_down')}
    """
    out: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for a, b, links in graph.edges:
        out.setdefault(a, []).append((b, links))
    distance = {src: 0}
    preds: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    queue = [(0, src)]
    while queue:
        dist, node = heapq.heappop(queue)
        if dist > distance[node]:
            continue
        for nxt, links in out.get(node, []):
            candidate = dist + len(links)
            if candidate < distance.get(nxt, candidate + 1):
                distance[nxt] = candidate
                preds[nxt] = [(node, links)]
                heapq.heappush(queue, (candidate, nxt))
            elif candidate == distance[nxt]:
                preds[nxt].append((node, links))
    if dst not in distance:
        return set()

    def lists(node: str) -> set[tuple[str, ...]]:
        if node == src:
            return {()}
        return {head + links for prev, links in preds[node] for head in lists(prev)}

    return lists(dst)


@dataclass(frozen=True)
class CompiledZone:
    """A platform that SimGrid builds from a shared object (``simgrid_cpp/<library>.cpp``).

    ``parameters`` is the text of the parameter file the library reads, after the ``name`` line the writer puts
    first (the platform's name); the library must create the same hosts, links and routes as the model (tests
    compare them through the loader).
    """

    library: str
    parameters: str


@dataclass(frozen=True)
class Grid:
    """The shape of a torus-like machine: the length of each dimension and whether it wraps around.

    Node ``host-<k>`` has the coordinates ``generators.topologies.torus.coordinates(k, dims)`` (first dimension
    fastest).
    """

    dims: tuple[int, ...]
    wraps: tuple[bool, ...]


@dataclass
class Platform:
    """A platform: hosts, switches/routers, links and a routing rule.

    Parameters
    ----------
    name : str
        Identifier of the platform (also the SimGrid zone id).
    hosts : list of Host
        In rank-placement order: the default placement puts rank i on ``hosts[i]``.
    routers : list of str
        Switches and routers, for drawings and analyses (routes name links only).
    links : dict of str to Link
        Every link, by name.
    route_rule : callable
        ``route_rule(src, dst)`` returns the ordered link names of the route from host ``src`` to host
        ``dst`` (``src != dst``).
    graph : RoutingGraph or None
        How SimGrid gets the routes: None for one explicit route per host pair, or a graph whose
        fewest-links paths are the rule's routes.
    compiled : CompiledZone or None
        Set when SimGrid gets the platform from a compiled zone instead of XML (hosts, links and
        routes built by a shared object from a few parameters): the writer then emits the library
        and its parameter file, and ``graph`` is unused.
    grid : Grid or None
        For the torus-like families (torus, mesh, Tofu): the shape and wrap-around of every dimension,
        the coordinates that drawings and analyses use.
    family : str
        The topology family that built it (``"crossbar"``, ...); set by the family's builder.
    params : dict
        The family's parameters as checked (units parsed, defaults filled): what the platform was built from.
    given : dict
        The parameters as the caller gave them. Both are recorded in the XML's provenance comment.
    size : Size or None
        What the family's estimate said the builder would build (``generators.size``), set by the builder.
    shm : bool
        Whether every host has its intra-node link ``<host>_shm`` (``generators.node.apply_node``): then
        ``route(h, h)`` is ``[<h>_shm]``, written as an explicit route (Full zone) or a graph edge from the host
        to itself (Dijkstra zone). False: the model has no route from a host to itself.
    unrecorded : tuple of str
        Parameters at their default that the platform's file does not record (``Param.recorded_when_default``).
    spread_rule : callable or None
        For a platform that spreads a message over several paths: ``spread_rule(src, dst)`` returns the
        :class:`SpreadRoute`, the route's links in ``route`` order, each with the share of the message that crosses it
        (0 < share <= 1), and its latency. None: every link of a route carries the whole message.
    adaptive : bool
        Whether SimGrid's route depends on the network's state when a message starts (adaptive routing). The
        model's routes are then those of an idle network, which the loader reports; what a simulation did is in
        its traced link usage, not in the routes.
    """

    name: str
    hosts: list[Host]
    routers: list[str]
    links: dict[str, Link]
    route_rule: RouteRule
    graph: RoutingGraph | None = None
    compiled: CompiledZone | None = None
    grid: Grid | None = None
    family: str = ""
    params: dict[str, object] = field(default_factory=dict)
    given: dict[str, object] = field(default_factory=dict)
    size: Size | None = None
    shm: bool = False
    unrecorded: tuple[str, ...] = ()
    spread_rule: SpreadRule | None = None
    adaptive: bool = False
    _host_index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._host_index = {h.name: i for i, h in enumerate(self.hosts)}
        if len(self._host_index) != len(self.hosts):
            raise TopologyError(f"platform {self.name}: host names are not unique")
        clash = self._host_index.keys() & set(self.routers)
        if clash:
            raise TopologyError(f"platform {self.name}: names used by both a host and a router: {sorted(clash)[:3]}")
        nodes = self._host_index.keys() | set(self.routers)
        strays = [link.name for link in self.links.values() if link.ends[0] not in nodes or link.ends[1] not in nodes]
        if strays:
            raise TopologyError(f"platform {self.name}: links whose ends are not its hosts or routers: {strays[:3]}")
        if self.graph is not None:
            nodes = self._host_index.keys() | set(self.routers) | set(self.graph.virtual_routers)
            for a, b, links in self.graph.edges:
                if a not in nodes or b not in nodes or not set(links) <= self.links.keys():
                    raise TopologyError(f"platform {self.name}: routing graph edge {a} -> {b} names unknown elements")
            # SimGrid's Dijkstra (3.32 and 4.1, measured) overflows its "infinite" cost on a node that has out-edges
            # but no in-edge, and then routes never terminate: such a node is a bug of the family builder.
            entered = {b for _, b, _ in self.graph.edges}
            dead = sorted({a for a, _, _ in self.graph.edges} - entered - self._host_index.keys())
            if dead:
                raise TopologyError(f"platform {self.name}: routing graph nodes without an in-edge: {dead[:3]}")
        if self.shm:
            missing = [name for name in self._host_index if node_link_name(name, "shm") not in self.links]
            if missing:
                raise TopologyError(f"platform {self.name}: hosts without their intra-node link: {missing[:3]}")

    @property
    def host_names(self) -> list[str]:
        """Host names in placement order."""
        return [h.name for h in self.hosts]

    def host(self, name: str) -> Host:
        """The host called ``name`` (``TopologyError`` if there is none)."""
        try:
            return self.hosts[self._host_index[name]]
        except KeyError:
            raise TopologyError(f"platform {self.name} has no host {name!r}") from None

    def link_kind(self, name: str) -> str | None:
        """What the link called ``name`` is (one of :data:`LINK_KINDS`); None for a link the model does not have
        (SimGrid's own ``__loopback__`` in a trace, say)."""
        link = self.links.get(name)
        return None if link is None else link.kind

    def cables(self, per_link: Mapping[str, _V]) -> dict[str, _V]:
        """The entries of a per-link mapping (flows or bytes per link) whose link is a cable."""
        return {name: value for name, value in per_link.items() if self.link_kind(name) == CABLE}

    def route(self, src: str, dst: str) -> list[str]:
        """Ordered link names from host ``src`` to host ``dst``, as SimGrid must route them.

        From a host to itself: its intra-node link ``[<src>_shm]`` when the platform has one (``shm``); otherwise
        ``TopologyError``, since the model does not describe SimGrid's implicit loopback.
        """
        self.host(src)
        self.host(dst)
        if src == dst:
            if self.shm:
                return [node_link_name(src, "shm")]
            raise TopologyError(
                f"no route from a host to itself ({src!r}) in platform {self.name}: two ranks of one host talk "
                "through SimGrid's implicit loopback (network/loopback-bw, 10 GBps, latency 0), which the model "
                "does not describe; give shm_bw (and shm_lat) to model the intra-node path"
            )
        route = list(self.route_rule(src, dst))
        missing = [name for name in route if name not in self.links]
        if missing:
            raise TopologyError(f"route {src} -> {dst} names unknown links {missing[:3]}")
        return route

    def route_shares(self, src: str, dst: str) -> list[tuple[str, float]]:
        """The route from ``src`` to ``dst`` as (link, share of the message that crosses it), in route order: every
        share 1 unless the platform spreads messages over several paths (:attr:`spread_rule`)."""
        route = self.route(src, dst)
        if self.spread_rule is None or src == dst:
            return [(name, 1.0) for name in route]
        shares = list(self.spread_rule(src, dst).shares)
        if [name for name, _ in shares] != route:
            raise TopologyError(f"the spread route {src} -> {dst} does not list the links of the route")
        bad = [(name, share) for name, share in shares if not 0 < share <= 1]
        if bad:
            raise TopologyError(f"the spread route {src} -> {dst} gives shares outside (0, 1]: {bad[:3]}")
        return shares

    def route_latency(self, src: str, dst: str) -> float:
        """Sum of the latencies along the route (a spread route: the mean over its paths)."""
        if self.spread_rule is not None and src != dst:
            return self.spread_rule(src, dst).latency
        return sum(self.links[name].latency for name in self.route(src, dst))

    def route_bandwidth(self, src: str, dst: str) -> float:
        """Bottleneck bandwidth of the route when it carries a single flow."""
        return min(self.links[name].bandwidth for name in self.route(src, dst))

    def routes(self, *, itself: bool = False) -> Iterator[tuple[str, str, list[str]]]:
        """Every ordered pair of distinct hosts with its route, in placement order; with ``itself`` and an
        intra-node link (``shm``), also each host's route to itself, in its place (the explicit routes written)."""
        names = self.host_names
        loopback = itself and self.shm
        for src in names:
            for dst in names:
                if src != dst or loopback:
                    yield src, dst, self.route(src, dst)
