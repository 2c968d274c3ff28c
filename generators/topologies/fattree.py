"""Fat tree of radix-r switches with any number of levels, D-mod-K routing: the MLFM paper's baseline (Fig. 1a) at two
levels, InfiniBand's multi-level trees beyond.

The tree is Zahavi's extended generalised fat tree of r-port switches ("D-Mod-K Routing Providing Non-Blocking
Traffic for Shift Permutations on Real Life Fat Trees", CCIT Report 776, Technion, 2010, Sect. 2): with h =
``levels``, every switch between the leaves and the top has r/2 ports down and r/2 up; a top switch has all r ports
down. A leaf (level 1) holds s = ``servers_per_leaf`` servers (r/2 by default) and has u = r - s ports up. With
s = r/2 this is the full tree of 2 (r/2)^h servers (36-port switches: 648 at two levels, 11664 at three; MLFM
connects 6156 with two levels of the same switches); with s > r/2 the tree is tapered at its leaves (s:u, e.g. 24
servers and 12 up ports of a 36-port leaf: 2:1), the usual way an InfiniBand tree saves switches. In the XGFT
notation the tree is XGFT(h; s, r/2, .., r/2, r; 1, u, r/2, .., r/2). ``leaves`` builds part of it: whole
subtrees of the top, a multiple of (r/2)^(h-2) leaves.

Addressing. A subtree of level i < h holds (r/2)^(i-1) leaves and P_i switches of level i, P_1 = 1 and
P_i = u (r/2)^(i-2) (both (r/2)^(i-1) untapered). A switch of level i < h is (g, p): its subtree g (the leaves a with
a // (r/2)^(i-1) = g) and its position p < P_i there; a leaf is (a, 0), a top switch (0, p), p < P_h. Up port
t of switch (g, p) of level i (t < u at the leaves, t < r/2 above) leads to the switch of level i + 1 at position
t P_i + p in subtree g // (r/2) (the top: position t P_i + p).

Names: server ``server-a-k`` (leaf a, port k; server number a r/2 + k), ``leaf-a``, ``agg<i>-g-p`` for the levels
between, ``spine-p`` for the top. Hosts are listed leaf by leaf, port k fastest.

Routing: D-mod-K, destination-based as InfiniBand's forwarding tables give it: up from the source's leaf until the
lowest level whose subtree holds the destination, on up port t_i = (d // P_i) mod (u at the leaves, r/2 above) at
level i (d the destination server's number), then down the one path to the destination. At two levels this is "up
to spine d mod u and down" (untapered: the spine of the destination's port). On a full tree every shift
permutation is then congestion-free (Zahavi, Theorem 1; tested), so an all-to-all in shift order runs every phase
at link rate. Tapered s:u with u dividing s, the busiest cable of every shift that sends every server out of its
leaf carries s/u flows, and of no shift more (tested): such an all-to-all runs at u/s of link rate; a ratio with a
remainder does worse (5:3 on 8-port switches: 3 flows).

``routing=adaptive`` (docs/adaptive-routing.md) is InfiniBand's adaptive routing as a switch does it: on the way up
every switch takes its least loaded up cable when a message starts (D-mod-K's port first on a tie, so that an idle
network's route is D-mod-K's, the model's route), then the one path down. ``spread=packet`` spreads a message's
packets: evenly over every up path with D-mod-K (oblivious packet spraying), in parts placed one after the other
with adaptive routing.

Representation: at two levels a SimGrid Dijkstra zone whose graph has a direct edge from each spine to the servers
of its port index only (through their leaf's cable), so that the fewest-links path is the rule's; deeper trees, and
every tree that routes adaptively or spreads packets, a compiled zone (``simgrid_cpp/fattree_zone.cpp``) computing
each route on demand by the same rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from generators.allocation import index_list
from generators.declare import family
from generators.errors import TopologyError
from generators.model import CompiledZone
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import RouteRule
from generators.model import RoutingGraph
from generators.model import SpreadRoute
from generators.model import SpreadRule
from generators.model import add_links
from generators.model import duplex_link
from generators.model import host_cable
from generators.model import node_link_name
from generators.model import with_nbl
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import cable_params
from generators.params import choice
from generators.params import nbl_param
from generators.params import optional
from generators.params import positive_int
from generators.size import Size
from generators.size import switched_size
from generators.spread import framed
from generators.spread import revisit_param
from generators.spread import spread_evenly
from generators.spread import spread_param
from generators.spread import zone_routing

__all__ = ["FatTree", "estimate", "fattree", "server_coordinates", "shape"]

MAX_LEVELS = 8
Switch = tuple[int, int, int]
"""(level, subtree, position) of a switch."""


@dataclass(frozen=True)
class FatTree:
    """The shape of a fat tree: switch radix, levels, the leaves built and the servers on each (module docstring)."""

    radix: int
    levels: int
    leaves: int
    servers_per_leaf: int

    @property
    def half(self) -> int:
        """Ports down (and up) of a switch between the leaves and the top."""
        return self.radix // 2

    def up_ports(self, level: int) -> int:
        """Ports up of a switch of ``level`` below the top: radix - servers_per_leaf at the leaves, radix/2 above."""
        return self.radix - self.servers_per_leaf if level == 1 else self.half

    def positions(self, level: int) -> int:
        """Switches of ``level`` in one of its subtrees (the top: all of them): P_level of the module docstring."""
        return 1 if level == 1 else self.up_ports(1) * self.half ** (level - 2)

    def span(self, level: int) -> int:
        """Leaves in one subtree of ``level`` below the top."""
        return self.half ** (level - 1)

    def switch_count(self, level: int) -> int:
        """How many switches ``level`` has (counted, not listed: estimates must not build what they bound)."""
        return self.positions(level) * (1 if level == self.levels else self.leaves // self.span(level))

    def switches(self, level: int) -> list[Switch]:
        """Every switch of ``level``, subtree by subtree."""
        if level == self.levels:
            return [(level, 0, p) for p in range(self.positions(level))]
        return [(level, g, p) for g in range(self.leaves // self.span(level)) for p in range(self.positions(level))]

    def name(self, switch: Switch) -> str:
        """``leaf-a``, ``agg<i>-g-p`` or ``spine-p``."""
        level, g, p = switch
        if level == 1:
            return f"leaf-{g}"
        return f"spine-{p}" if level == self.levels else f"agg{level}-{g}-{p}"

    def parent(self, switch: Switch, up: int) -> Switch:
        """Where up port ``up`` of ``switch`` leads."""
        level, g, p = switch
        above = level + 1
        return (above, 0 if above == self.levels else g // self.half, up * self.positions(level) + p)

    def top(self, a: int, b: int) -> int:
        """The lowest level whose subtree holds both leaves a and b (the top level when none below does)."""
        return next((i for i in range(1, self.levels) if a // self.span(i) == b // self.span(i)), self.levels)

    def route_switches(self, a: int, b: int, d: int) -> list[Switch]:
        """The switches from leaf a to leaf b on the way to server d (D-mod-K up, the one path down)."""
        ports = [(d // self.positions(level)) % self.up_ports(level) for level in range(1, self.top(a, b))]
        return self.path_switches(a, b, ports)

    def up_paths(self, a: int, b: int) -> list[list[Switch]]:
        """Every path from leaf a to leaf b, the up port of level 1 varying slowest (the compiled zone's order)."""
        choices = [range(self.up_ports(level)) for level in range(1, self.top(a, b))]
        return [self.path_switches(a, b, list(ports)) for ports in itertools.product(*choices)]

    def path_switches(self, a: int, b: int, ports: list[int]) -> list[Switch]:
        """The switches from leaf a up on ``ports`` (one per level below the top of a and b), then down to leaf b."""
        top = self.top(a, b)
        path = [(1, a, 0)]
        for level in range(1, top):
            path.append(self.parent(path[-1], ports[level - 1]))
        p = path[-1][2]
        for level in range(top - 1, 0, -1):
            path.append((level, b // self.span(level), p % self.positions(level)))
        return path


def server_name(a: int, k: int) -> str:
    """Name of the server on port k of leaf a."""
    return f"server-{a}-{k}"


def _subtrees_placement(platform: Platform, argument: str, placement: str) -> list[str]:
    """Named placements ``leaves:0,2,5-7`` and ``pods:1,3``: the servers of those leaves, or of those pods (the
    subtrees below the top level: radix/2 ^ (levels - 2) leaves each), leaf by leaf (``generators.allocation``)."""
    per_subtree = (
        (int(platform.params["radix"]) // 2) ** (int(platform.params["levels"]) - 2) if placement == "pods" else 1
    )
    by_subtree: dict[int, list[str]] = {}
    for host in platform.host_names:
        by_subtree.setdefault(server_coordinates(host)[0] // per_subtree, []).append(host)
    chosen = index_list(placement, argument, len(by_subtree), placement)
    return [host for subtree in chosen for host in by_subtree[subtree]]


def server_coordinates(host: str) -> tuple[int, int]:
    """(a, k) of ``server-a-k``.

    >>> server_coordinates("server-12-3")
    (12, 3)
    """
    a, k = host.removeprefix("server-").split("-")
    return int(a), int(k)


def shape(radix: int, levels: int, leaves: int | None, servers_per_leaf: int | None = None) -> FatTree:
    """The checked shape: an even radix >= 2, 2 .. MAX_LEVELS levels, whole subtrees of the top, 1 .. radix - 1
    servers per leaf (radix/2 when None) (module docstring)."""
    if isinstance(radix, bool) or not isinstance(radix, int) or radix < 2 or radix % 2:
        raise TopologyError(f"radix must be an even integer >= 2, got {radix!r}")
    if not 2 <= levels <= MAX_LEVELS:
        raise TopologyError(f"levels must be between 2 and {MAX_LEVELS}, got {levels}")
    half = radix // 2
    servers = half if servers_per_leaf is None else servers_per_leaf
    if not 1 <= servers < radix:
        raise TopologyError(
            f"servers_per_leaf must be between 1 and radix - 1 = {radix - 1} (a leaf needs an up port), got {servers}"
        )
    most, unit = 2 * half ** (levels - 1), half ** (levels - 2)
    leaves = most if leaves is None else leaves
    if levels == 2 and not 1 <= leaves <= radix:
        raise TopologyError(f"leaves must be between 1 and radix={radix}, got {leaves}")
    if not 1 <= leaves <= most or leaves % unit:
        raise TopologyError(
            f"leaves must be a multiple of (radix/2)^(levels-2) = {unit} (whole subtrees of the top) between {unit} "
            f"and 2 (radix/2)^(levels-1) = {most}, got {leaves}"
        )
    return FatTree(radix, levels, leaves, servers)


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`fattree` builds: servers_per_leaf servers per leaf with their cables (and limiters), the up
    cables of every switch below the top; at two levels a routing graph of 3 edges per server and one per
    leaf-spine cable, deeper (or adaptive, or spreading packets) a compiled zone.

    >>> estimate({"radix": 36, "levels": 2, "leaves": None, "servers_per_leaf": None, "nbl": None}).hosts
    648
    >>> size = estimate({"radix": 36, "levels": 3, "leaves": None, "servers_per_leaf": None, "nbl": None})
    >>> size.hosts, size.routers
    (11664, 1620)
    >>> size = estimate({"radix": 36, "levels": 3, "leaves": None, "servers_per_leaf": 24, "nbl": None})
    >>> size.hosts, size.routers
    (15552, 1296)
    """
    tree = shape(params["radix"], params["levels"], params["leaves"], params.get("servers_per_leaf"))
    limited = params["nbl"] is not None
    servers = tree.leaves * tree.servers_per_leaf
    below_top = [tree.switch_count(level) for level in range(1, tree.levels)]
    up_cables = sum(count * tree.up_ports(level) for level, count in enumerate(below_top, start=1))
    size = switched_size(servers, sum(below_top) + tree.positions(tree.levels), up_cables, limited)
    if tree.levels > 2 or params.get("routing", "d-mod-k") != "d-mod-k" or params.get("spread", "message") != "message":
        return size
    return replace(size, compiled=False, edges=3 * servers + up_cables,
                   edge_links=(4 + 3 * limited) * servers + up_cables)  # fmt: skip


@family(
    summary="Fat tree of radix-r switches, any number of levels (2: r^2/2 servers, 3: r^3/4); D-mod-K, adaptive or "
    "OpenSM's routes",
    params=(
        Param("radix", positive_int, "switch ports (even): radix/2 servers per leaf, radix/2 up ports", "36"),
        Param(
            "leaves", optional(positive_int), "leaf switches built (whole subtrees of the top), none for all", "none"
        ),
        *cable_params("4GBps", "100ns", bw_note="4x QDR InfiniBand data rate"),
        nbl_param(),
        *NODE_PARAMS,
        Param("levels", positive_int, f"switch levels, 2 to {MAX_LEVELS}", "2", recorded_when_default=False),
        Param(
            "servers_per_leaf",
            optional(positive_int),
            "servers on each leaf, the rest of its ports up: above radix/2 a tapered tree; none for radix/2",
            "none",
            recorded_when_default=False,
        ),
        Param(
            "routing",
            choice("d-mod-k", "adaptive"),
            "d-mod-k, or adaptive (each switch's least loaded up cable: docs/adaptive-routing.md)",
            "d-mod-k",
            recorded_when_default=False,
        ),
        spread_param(packet="a message's packets spread over the up paths"),
        revisit_param(),
    ),
    estimate=estimate,
    placements={
        "leaves": lambda platform, argument: _subtrees_placement(platform, argument, "leaves"),
        "pods": lambda platform, argument: _subtrees_placement(platform, argument, "pods"),
    },
    smallest={"radix": 4},
    drawn={"radix": 8},  # 32 servers, as many as the MLFM testbed
)
def fattree(
    radix: int,
    leaves: int | None,
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
    levels: int,
    servers_per_leaf: int | None,
    routing: str,
    spread: str,
    revisit: float,
) -> Platform:
    """Return the fat tree of radix-``radix`` switches, ``fattree-<radix>`` (``-l<levels>`` beyond two,
    ``-<servers_per_leaf>down`` when tapered, ``-adaptive`` and ``-packet`` for those routing choices).

    Examples
    --------
    >>> p = fattree(36)
    >>> len(p.hosts), len(p.routers)
    (648, 54)
    >>> p.route("server-0-3", "server-5-7")
    ['server-0-3_to_leaf-0', 'leaf-0_to_spine-7', 'spine-7_to_leaf-5', 'leaf-5_to_server-5-7']
    >>> fattree(4, levels=3).route("server-0-0", "server-4-1")[1:5]  # to server 9: up ports 9 mod 2, 9 // 2 mod 2
    ['leaf-0_to_agg2-0-1', 'agg2-0-1_to_spine-1', 'spine-1_to_agg2-2-1', 'agg2-2-1_to_leaf-4']
    >>> tapered = fattree(6, servers_per_leaf=4)  # 4 servers and 2 up ports per leaf: 2 spines
    >>> tapered.name, len(tapered.hosts), tapered.route("server-0-0", "server-1-3")[1:3]  # to server 7: 7 mod 2
    ('fattree-6-4down', 24, ['leaf-0_to_spine-1', 'spine-1_to_leaf-1'])
    """
    tree = shape(radix, levels, leaves, servers_per_leaf)
    servers = [(a, k) for a in range(tree.leaves) for k in range(tree.servers_per_leaf)]
    limited = nbl is not None
    chosen = zone_routing(routing, "d-mod-k", spread, revisit, adaptive=routing == "adaptive")
    compiled = None
    if levels > 2 or routing != "d-mod-k" or spread != "message":
        compiled = _compiled_zone(tree, link_bw, link_lat, nbl, host_speed, chosen)
    tapered = f"-{tree.servers_per_leaf}down" if tree.servers_per_leaf != tree.half else ""
    suffix = ("-adaptive" if routing == "adaptive" else "") + ("-packet" if spread == "packet" else "")
    spread_rule = _spread_rule(tree, limited, link_lat) if spread == "packet" and routing == "d-mod-k" else None
    return Platform(
        name=f"fattree-{radix}" + (f"-l{levels}" if levels > 2 else "") + tapered + suffix,
        hosts=[Host(server_name(a, k), host_speed) for a, k in servers],
        routers=[tree.name(s) for level in range(1, levels + 1) for s in tree.switches(level)],
        links=_cables(tree, servers, link_bw, link_lat, nbl),
        route_rule=_route_rule(tree, limited, spread_rule),
        graph=_routing_graph(tree, limited) if compiled is None else None,
        compiled=compiled,
        spread_rule=spread_rule,
        adaptive=routing == "adaptive",
    )


def _cables(
    tree: FatTree, servers: list[tuple[int, int]], link_bw: float, link_lat: float, nbl: float | None
) -> dict[str, Link]:
    """Every server's cable to its leaf (and its limiter when ``nbl`` is set), then level by level every switch's
    cables to its parents, in the order of its up ports."""
    links: dict[str, Link] = {}
    for a, k in servers:
        add_links(links, *host_cable(server_name(a, k), f"leaf-{a}", link_bw, link_lat, nbl))
    for level in range(1, tree.levels):
        for switch, up in itertools.product(tree.switches(level), range(tree.up_ports(level))):
            add_links(links, *duplex_link(tree.name(switch), tree.name(tree.parent(switch, up)), link_bw, link_lat))
    return links


def _route_rule(tree: FatTree, limited: bool, spread: SpreadRule | None) -> RouteRule:
    """Through the leaf, or D-mod-K up and the one path down (module docstring); a spread route's links."""

    def route(src: str, dst: str) -> list[str]:
        if spread is not None:
            return [name for name, _ in spread(src, dst).shares]
        (a, _), (b, k) = server_coordinates(src), server_coordinates(dst)
        names = [tree.name(s) for s in tree.route_switches(a, b, b * tree.servers_per_leaf + k)]
        hops = [f"{src}_to_{names[0]}", *(f"{x}_to_{y}" for x, y in itertools.pairwise(names)), f"{names[-1]}_to_{dst}"]
        return with_nbl(src, dst, hops, limited)

    return route


def _spread_rule(tree: FatTree, limited: bool, link_lat: float) -> SpreadRule:
    """Packets spread evenly over every up path between the servers' leaves, each cable with its share."""

    def route(src: str, dst: str) -> SpreadRoute:
        (a, _), (b, _) = server_coordinates(src), server_coordinates(dst)
        paths = [[tree.name(s) for s in path] for path in tree.up_paths(a, b)]
        between = spread_evenly([f"{x}_to_{y}" for x, y in itertools.pairwise(names)] for names in paths)
        shares = framed(src, dst, f"{src}_to_{paths[0][0]}", f"{paths[0][-1]}_to_{dst}", between, limited)
        return SpreadRoute(shares, 2 * (tree.top(a, b) - 1) * link_lat + 2 * link_lat)

    return route


def _routing_graph(tree: FatTree, limited: bool) -> RoutingGraph:
    """Two levels: servers to their leaf and back, each spine straight down to the servers d it carries the traffic
    to (d mod u = its number), leaves up."""
    edges: list[tuple[str, str, tuple[str, ...]]] = []
    spines = tree.up_ports(1)
    for a, k in itertools.product(range(tree.leaves), range(tree.servers_per_leaf)):
        server, spine = server_name(a, k), f"spine-{(a * tree.servers_per_leaf + k) % spines}"
        limiter = (node_link_name(server, "limiter"),) if limited else ()
        edges.append((server, f"leaf-{a}", (*limiter, f"{server}_to_leaf-{a}")))
        edges.append((f"leaf-{a}", server, (f"leaf-{a}_to_{server}", *limiter)))
        edges.append((spine, server, (f"{spine}_to_leaf-{a}", f"leaf-{a}_to_{server}", *limiter)))
    for a in range(tree.leaves):
        for s in range(spines):
            edges.append((f"leaf-{a}", f"spine-{s}", (f"leaf-{a}_to_spine-{s}",)))
    return RoutingGraph((), tuple(edges))


def _compiled_zone(
    tree: FatTree, link_bw: float, link_lat: float, nbl: float | None, speed: float, chosen: Mapping[str, str]
) -> CompiledZone:
    """The compiled zone ``topolab_fattree_zone`` and the parameters it reads (the writer puts the name first);
    ``servers_per_leaf`` and the routing keys ``chosen`` (spread.zone_routing) only when not the default, so the files
    of untapered D-mod-K trees read as before they existed."""
    tapered = {"servers_per_leaf": tree.servers_per_leaf} if tree.servers_per_leaf != tree.half else {}
    tapered |= chosen
    values = {"radix": tree.radix, "levels": tree.levels, "leaves": tree.leaves, **tapered,
              "link_bw": repr(float(link_bw)), "link_lat": repr(float(link_lat)),
              "nbl": "none" if nbl is None else repr(float(nbl)), "host_speed": repr(float(speed))}  # fmt: skip
    return CompiledZone("topolab_fattree_zone", "".join(f"{key} {value}\n" for key, value in values.items()))
