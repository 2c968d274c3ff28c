"""N-dimensional torus and mesh with dimension-ordered routing and endpoint-only NBL.

One builder serves tori (Blue Gene/Q), meshes (Intel Touchstone DELTA) and mixed shapes (Tofu):
``wrap`` is one flag for all dimensions or one per dimension. Node ``host-<k>`` has coordinates
``c`` with the first dimension varying fastest (``k = c0 + d0*(c1 + d1*(c2 + ...))``), as SimGrid's
TORUS clusters number them.

Links: between neighbours along each dimension one full-duplex cable (two SHARED directed links,
``host-a_to_host-b``), standing for the router-to-router link; a wrapped dimension adds the cable
that closes the ring, except for length 2 (its two nodes are already neighbours: one cable, not two).

Routing: dimension-ordered (dimension 0 first); along a wrapped dimension the shorter way round, ties
broken exactly as SimGrid's TORUS zone breaks them (its per-hop rule, ``_goes_up``; e.g. on a ring
of 4, 0 -> 2 goes up, 2 -> 0 down, 3 -> 1 up through the wrap), so that both agree route for route;
along a mesh dimension the only way. Routers forward cut-through and never touch the node processor, so a
node's NBL limiter ``<host>_nbl`` is on the routes that start or end at that node only: transit
traffic does not consume it. SimGrid's own TORUS limiter is charged at every node a route passes
through (docs/simgrid.md), which is wrong for these machines; hence explicit routes here.

Representation. When every shortest path along every dimension is unique (mesh dimensions, and
rings of odd length or of length <= 2), the platform is a SimGrid DijkstraCache zone over a layered
graph, linear in the machine: each node has one graph-only router per dimension (``host-k.d<i>``);
in layer i a path may only move along dimension i, or turn into a later layer j > i with its first
hop along j; it enters layer 0 and leaves any layer through the node's endpoint link. Going back to
an earlier dimension would need to leave through a node and re-enter (two extra links), so the only
fewest-links path between two nodes is the dimension-ordered route. The endpoint link is the node's
NBL limiter, or, without NBL, ``<host>_port``: a FATPIPE link at the link bandwidth that never
constrains (every flow already crosses at least one cable of that bandwidth), present only because
SimGrid forbids link-less graph edges. (One port per node puts a pipeline a -> b -> c into one max-min
system, b's port being on both routes; a port per direction avoids that, but measured on SimGrid 4.1 it
saved nothing: 26.2 s against 26.1 s for a 16 x 32 Snake, 1.1 s for both on a 16 x 16 Fence, identical
simulated times. docs/simulation-speed.md.)

Rings of even length >= 4 have ties (half-way round) that a graph cannot break by SimGrid's rule, so
such tori are written with explicit routes (a Full zone), practical up to about 2000 nodes
(``MAX_EXPLICIT_HOSTS``). Larger ones (or any, with ``zone="compiled"``) are a compiled zone:
``simgrid_cpp/torus_zone.cpp``, a shared object that SimGrid loads as the platform, builds the same
hosts and links from a few parameters and computes each route on demand by the same rule (Mira's 49152
nodes load in 1.5 s, 0.4 GB).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from generators import bgq
from generators.declare import family
from generators.errors import TopologyError
from generators.model import FATPIPE
from generators.model import CompiledZone
from generators.model import Grid
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import RouteRule
from generators.model import RoutingGraph
from generators.model import add_links
from generators.model import duplex_link
from generators.model import nbl_link
from generators.model import node_link
from generators.model import node_link_name
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import cable_params
from generators.params import choice
from generators.params import flag_tuple
from generators.params import int_tuple
from generators.params import nbl_param
from generators.params import positive_int
from generators.size import Size

__all__ = [
    "MAX_DIMS",
    "MAX_EXPLICIT_HOSTS",
    "block_hosts",
    "build_torus",
    "coordinates",
    "estimate",
    "graph_routable",
    "index",
    "mesh",
    "torus",
]

MAX_EXPLICIT_HOSTS = 2048
# The model and the compiled zone walk every dimension at every node (the zone holds nodes x dims link pointers),
# so degenerate shapes padded with dimensions of length 1 cost time for nothing. Machines have at most 6 (Tofu);
# 33 dimensions of length >= 2 are 2^33 nodes, far beyond the size limit (generators.size).
MAX_DIMS = 32


def index(coords: tuple[int, ...], dims: tuple[int, ...]) -> int:
    """Node number of ``coords`` (first dimension fastest)."""
    k = 0
    for c, d in zip(reversed(coords), reversed(dims), strict=True):
        k = k * d + c
    return k


def coordinates(k: int, dims: tuple[int, ...]) -> tuple[int, ...]:
    """Coordinates of node ``k`` (first dimension fastest)."""
    coords = []
    for d in dims:
        k, c = divmod(k, d)
        coords.append(c)
    return tuple(coords)


def block_hosts(dims: tuple[int, ...], block: tuple[int, ...], origin: tuple[int, ...]) -> list[str]:
    """The hosts of the box of shape ``block`` whose first corner is ``origin``, in the machine's order (first
    dimension fastest): a Blue Gene/Q partition of a machine, or a job's block of a torus.

    >>> block_hosts((4, 4), (2, 2), (1, 2))
    ['host-9', 'host-10', 'host-13', 'host-14']
    """
    if len(block) != len(dims) or len(origin) != len(dims):
        shape = "x".join(map(str, dims))
        raise TopologyError(f"placement block: a block of the {shape} machine has {len(dims)} dimensions")
    for axis, (size, first, length) in enumerate(zip(block, origin, dims, strict=True)):
        if size < 1 or first < 0 or first + size > length:
            held = f"{first}..{first + size - 1}"
            raise TopologyError(
                f"placement block: dimension {axis} holds {held}, outside the machine's 0..{length - 1}"
            )
    corners = (coordinates(k, block) for k in range(math.prod(block)))
    return [f"host-{index(tuple(o + c for o, c in zip(origin, corner, strict=True)), dims)}" for corner in corners]


def _block_placement(platform: Platform, argument: str) -> list[str]:
    """Named placement ``block:AxBx...[@o1,o2,...]`` (``generators.allocation``: a family's own policy)."""
    dims = tuple(platform.params.get("dims") or (platform.params["width"], platform.params["height"]))
    shape, _, corner = argument.strip().partition("@")
    try:
        block = tuple(int(n) for n in shape.split("x"))
        origin = tuple(int(n) for n in corner.split(",")) if corner else (0,) * len(dims)
    except ValueError:
        raise TopologyError(
            f"placement block needs AxBx...[@o1,o2,...] (e.g. block:2x2@1,2), got {argument!r}"
        ) from None
    return block_hosts(dims, block, origin)


def _partition_placement(platform: Platform, argument: str) -> list[str]:
    """Named placement ``partition:MIDPLANES[,KIND][@m1,m2,m3,m4]``: a Blue Gene/Q partition of a machine of whole
    midplanes (4x4x4x4x2 nodes each, ``generators.bgq``), as its scheduler allocated it: KIND ``current`` (Mira's
    predefined geometry of that size, the partition paper's Table 6; the default on Mira), ``proposed`` (the paper's
    replacement), ``best`` or ``worst`` (the highest or lowest bisection of the cuboids that fit: JUQUEEN allocated
    any cuboid; the default elsewhere); from midplane ``m1,m2,m3,m4`` (default the first)."""
    dims = tuple(platform.params["dims"])
    if len(dims) != 5 or dims[4] != 2 or any(size % unit for size, unit in zip(dims[:4], bgq.MIDPLANE, strict=False)):
        raise TopologyError(f"placement partition needs a Blue Gene/Q torus of whole midplanes (4x4x4x4x2), not {dims}")
    machine = tuple(size // unit for size, unit in zip(dims[:4], bgq.MIDPLANE, strict=False))
    text, _, corner = argument.strip().partition("@")
    count, _, kind = text.partition(",")
    kind = kind or ("current" if machine == bgq.MIRA else "best")
    try:
        size = int(count)
        origin = tuple(int(n) for n in corner.split(",")) if corner else (0, 0, 0, 0)
    except ValueError:
        raise TopologyError(f"placement partition needs MIDPLANES[,KIND][@m1,m2,m3,m4], got {argument!r}") from None
    if len(origin) != 4:
        raise TopologyError(f"placement partition: its first midplane has 4 coordinates (@m1,m2,m3,m4), got {corner!r}")
    geometry = _partition_geometry(bgq, machine, size, kind)
    block = (*(g * unit for g, unit in zip(geometry, bgq.MIDPLANE[:4], strict=True)), 2)
    return block_hosts(dims, block, (*(o * unit for o, unit in zip(origin, bgq.MIDPLANE[:4], strict=True)), 0))


def _partition_geometry(bgq: Any, machine: tuple[int, ...], size: int, kind: str) -> tuple[int, ...]:
    """The geometry (midplanes per dimension, in the machine's order) of a partition of ``size`` midplanes."""
    if kind in ("current", "proposed"):
        table = bgq.MIRA_CURRENT if kind == "current" else bgq.MIRA_PROPOSED
        if machine != bgq.MIRA or size not in table:
            raise TopologyError(f"placement partition: Mira has no {kind} partition of {size} midplanes "
                                f"(it has {', '.join(map(str, table))}; on other machines: best, worst)")  # fmt: skip
        canonical = table[size]
    elif kind in ("best", "worst"):
        canonical = (bgq.best_partition if kind == "best" else bgq.worst_partition)(machine, size)[0]
    else:
        raise TopologyError(f"placement partition: KIND is current, proposed, best or worst, got {kind!r}")
    for order in dict.fromkeys(itertools.permutations(canonical)):  # an orientation that fits the machine
        if all(g <= m for g, m in zip(order, machine, strict=True)):
            return order
    raise TopologyError(f"placement partition: {size} midplanes as {canonical} do not fit the {machine} machine")


def graph_routable(dims: tuple[int, ...], wraps: tuple[bool, ...]) -> bool:
    """Whether every dimension has unique shortest paths (no ring of even length >= 4): then the
    layered routing graph is exact.

    >>> graph_routable((16, 32), (False, False)), graph_routable((4, 3, 2), (True, True, True))
    (True, False)
    """
    return all(not wrapped or size <= 2 or size % 2 == 1 for size, wrapped in zip(dims, wraps, strict=True))


def _goes_up(here: int, target: int, size: int) -> bool:
    """SimGrid's TORUS rule for one hop along a ring: "+" when the target is at most half a ring ahead
    without wrapping, or when ``here`` is past the middle and the target is reached by wrapping."""
    half = size // 2
    return (here < target <= here + half) or (here > half and (here + half) % size >= target)


def _steps(src: int, dst: int, size: int, wrapped: bool) -> list[int]:
    """The coordinates visited, hop by hop, from ``src`` to ``dst`` along one dimension."""
    hops, c = [], src
    while c != dst:
        if wrapped and size > 2:
            c = (c + (1 if _goes_up(c, dst, size) else -1)) % size
        else:
            c += 1 if dst > c else -1
        hops.append(c)
    return hops


_COMMON = (
    *cable_params("2GBps", "100ns", "each link"),
    nbl_param(limit="endpoint-only node-bandwidth limit"),
    *NODE_PARAMS,
)


def _wraps(dims: tuple[int, ...], wrap: tuple[bool, ...]) -> tuple[bool, ...]:
    """One wrap flag per dimension (a single flag serves all), after checking the number of dimensions."""
    if len(dims) > MAX_DIMS:
        raise TopologyError(f"dims must have at most {MAX_DIMS} dimensions, got {len(dims)}")
    wraps = wrap * len(dims) if len(wrap) == 1 else wrap
    if len(wraps) != len(dims):
        raise TopologyError(f"wrap must have one flag per dimension ({len(dims)}), got {len(wraps)}")
    return wraps


def _representation(dims: tuple[int, ...], wraps: tuple[bool, ...], zone: str) -> str:
    """How SimGrid gets the routes (module docstring): ``"graph"``, explicit ``"routes"`` or ``"compiled"``."""
    routable = graph_routable(dims, wraps)
    if zone == "compiled" or (not routable and math.prod(dims) > MAX_EXPLICIT_HOSTS):
        return "compiled"
    return "graph" if routable else "routes"


def _pair_distances(size: int, wrapped: bool) -> int:
    """The hops along one dimension summed over every ordered pair of its coordinates x, y: on a ring, the sum of
    min(|x - y|, size - |x - y|) = size * floor(size^2 / 4); on a line, the sum of |x - y| = (size^3 - size) / 3."""
    return size * (size * size // 4) if wrapped and size > 2 else (size**3 - size) // 3


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`torus` builds: the cables along each dimension (a ring closes unless of length <= 2), the
    endpoint links, and the routes of its representation: the layered graph (one router per node and layer,
    each edge one link), every pair's dimension-ordered route, or none (a compiled zone).

    >>> estimate({"dims": (4,), "wrap": (True,), "nbl": None, "zone": "auto"}).links
    8
    """
    dims, limited = params["dims"], params["nbl"] is not None
    wraps = _wraps(dims, params["wrap"])
    form = _representation(dims, wraps, params["zone"])
    hosts = math.prod(dims)
    cables = [
        hosts // size * (size if wrapped and size > 2 else size - 1) for size, wrapped in zip(dims, wraps, strict=True)
    ]
    links = 2 * sum(cables) + hosts * (limited or form == "graph")
    if form == "compiled":
        return Size(hosts=hosts, routers=0, links=links, compiled=True)
    if form == "graph":
        layers = [0, *(axis for axis in range(1, len(dims)) if dims[axis] > 1)]
        edges = hosts * (1 + len(layers)) + sum((i + 1) * 2 * cables[axis] for i, axis in enumerate(layers))
        return Size(hosts=hosts, routers=hosts * len(layers), links=links, edges=edges, edge_links=edges)
    pairs = hosts * (hosts - 1)
    hops = sum((hosts // size) ** 2 * _pair_distances(size, wrapped) for size, wrapped in zip(dims, wraps, strict=True))
    return Size(
        hosts=hosts,
        routers=0,
        links=links,
        routes=pairs,
        route_links=hops + 2 * limited * pairs,
        hint="--zone compiled writes it as a compiled zone instead",
    )


@family(
    summary="N-dimensional torus / mesh, dimension-ordered routing, endpoint-only NBL",
    params=(
        Param("dims", int_tuple, "length of each dimension, e.g. 4x4x4x4x2"),
        Param("wrap", flag_tuple, "wrap-around: yes, no, or one flag per dimension (1,1,0)", "yes"),
        *_COMMON,
        Param(
            "zone",
            choice("auto", "compiled"),
            "SimGrid representation: auto (graph or explicit routes; compiled zone above "
            f"{MAX_EXPLICIT_HOSTS} nodes) or compiled (a shared object: the platform file must end in .so)",
            "auto",
        ),
    ),
    estimate=estimate,
    placements={"block": _block_placement, "partition": _partition_placement},
    smallest={"dims": "3x3"},
    drawn={"dims": "4x4x4x2x2"},  # Blue Gene/Q-like 5-D (E = 2): half a midplane (4x4x4x4x2 is dense)
)
def torus(
    dims: tuple[int, ...],
    wrap: tuple[bool, ...],
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
    zone: str,
) -> Platform:
    """Return the model of a torus / mesh of shape ``dims`` (``torus-<shape>``, ``mesh-<shape>`` or
    ``mixed-<shape>`` as the dimensions wrap).

    Examples
    --------
    >>> ring = torus((4,))
    >>> len(ring.hosts), len(ring.links)
    (4, 8)
    >>> ring.route("host-0", "host-3")
    ['host-0_to_host-3']
    >>> grid = torus((3, 3), wrap=False, nbl=1.0)
    >>> grid.route("host-0", "host-8")  # x first, then y; only the end nodes' limiters
    ['host-0_nbl', 'host-0_to_host-1', 'host-1_to_host-2', 'host-2_to_host-5', 'host-5_to_host-8', 'host-8_nbl']
    """
    return build_torus(Grid(dims, _wraps(dims, wrap)), link_bw, link_lat, nbl, host_speed, zone)


def build_torus(
    grid: Grid, link_bw: float, link_lat: float, nbl: float | None, host_speed: float, zone: str
) -> Platform:
    """What :func:`torus` builds from checked values (node values not applied), for a family whose machine is a
    torus under a name of its own (``generators.topologies.tofu``: the writer names a compiled zone by its platform)."""
    form = _representation(grid.dims, grid.wraps, zone)
    compiled, layered = form == "compiled", form == "graph"
    names = [f"host-{k}" for k in range(math.prod(grid.dims))]
    return Platform(
        name=_platform_name(grid),
        hosts=[Host(host, host_speed) for host in names],
        routers=[],
        links=_links(names, grid, link_bw, link_lat, nbl, layered),
        route_rule=_route_rule(names, grid, nbl is not None, layered),
        graph=_layered_graph(names, grid, nbl is not None) if layered else None,
        compiled=_compiled_zone(grid, link_bw, link_lat, nbl, host_speed) if compiled else None,
        grid=grid,
    )


def _platform_name(grid: Grid) -> str:
    """``torus-<shape>``, ``mesh-<shape>`` or ``mixed-<shape>`` as the dimensions wrap."""
    shape = "x".join(map(str, grid.dims))
    kind = "torus" if all(grid.wraps) else "mesh" if not any(grid.wraps) else "mixed"
    return f"{kind}-{shape}"


def _neighbours(k: int, axis: int, grid: Grid) -> list[int]:
    """Nodes one hop from node k along ``axis`` (no duplicates: a length-2 ring is one cable): a step of one along
    ``axis`` moves the node number by the product of the lengths before it (:func:`index`, first dimension fastest)."""
    size, stride = grid.dims[axis], math.prod(grid.dims[:axis])
    here = k // stride % size
    found = []
    for step in (1, -1):
        c = here + step
        if grid.wraps[axis] and size > 2:
            c %= size
        if 0 <= c < size and c != here:
            other = k + (c - here) * stride
            if other not in found:
                found.append(other)
    return found


def _endpoint(name: str, limited: bool, layered: bool) -> list[str]:
    """The link every route that starts or ends at node ``name`` crosses there: its limiter, its port, or none."""
    if limited:
        return [node_link_name(name, "limiter")]
    return [node_link_name(name, "port")] if layered else []


def _links(
    names: list[str], grid: Grid, link_bw: float, link_lat: float, nbl: float | None, layered: bool
) -> dict[str, Link]:
    """Node by node: its cables to the higher-numbered neighbours, then its limiter or its port."""
    links: dict[str, Link] = {}
    for k, name in enumerate(names):
        for axis in range(len(grid.dims)):
            for other in _neighbours(k, axis, grid):
                if other > k:
                    add_links(links, *duplex_link(name, names[other], link_bw, link_lat))
        if nbl is not None:
            add_links(links, nbl_link(name, nbl * link_bw))
        elif layered:
            add_links(links, node_link(name, "port", link_bw, 0.0, FATPIPE))
    return links


def _route_rule(names: list[str], grid: Grid, limited: bool, layered: bool) -> RouteRule:
    """Dimension-ordered routing (module docstring), framed by the end nodes' endpoint links."""
    dims, wraps = grid.dims, grid.wraps

    def route(src: str, dst: str) -> list[str]:
        here = list(coordinates(int(src.removeprefix("host-")), dims))
        goal = coordinates(int(dst.removeprefix("host-")), dims)
        hops = []
        for axis, (size, wrapped) in enumerate(zip(dims, wraps, strict=True)):
            for c in _steps(here[axis], goal[axis], size, wrapped):
                before = names[index(tuple(here), dims)]
                here[axis] = c
                hops.append(f"{before}_to_{names[index(tuple(here), dims)]}")
        return [*_endpoint(src, limited, layered), *hops, *_endpoint(dst, limited, layered)]

    return route


def _layered_graph(names: list[str], grid: Grid, limited: bool) -> RoutingGraph:
    """The layered routing graph (module docstring): one graph-only router ``host-k.d<i>`` per node and layer."""

    def lane(k: int, axis: int) -> str:
        return f"{names[k]}.d{axis}"

    # Layer 0 is entered from the node; a later layer only by a hop along its dimension, so a dimension
    # of length 1 has no layer beyond the first.
    layers = [0, *(axis for axis in range(1, len(grid.dims)) if grid.dims[axis] > 1)]
    edges: list[tuple[str, str, tuple[str, ...]]] = []
    for k, name in enumerate(names):
        endpoint = tuple(_endpoint(name, limited, True))
        edges.append((name, lane(k, 0), endpoint))
        for axis in layers:
            edges.append((lane(k, axis), name, endpoint))
            for later in (a for a in layers if a >= axis):
                for other in _neighbours(k, later, grid):
                    edges.append((lane(k, axis), lane(other, later), (f"{name}_to_{names[other]}",)))
    virtual = tuple(lane(k, axis) for k in range(len(names)) for axis in layers)
    return RoutingGraph(virtual, tuple(edges))


def _compiled_zone(grid: Grid, link_bw: float, link_lat: float, nbl: float | None, host_speed: float) -> CompiledZone:
    """The compiled zone ``topolab_torus_zone`` (module docstring) and the parameters it reads (the writer puts
    the platform's name first)."""
    parameters = "".join(
        f"{key} {value}\n"
        for key, value in (
            ("dims", " ".join(map(str, grid.dims))),
            ("wrap", " ".join("1" if w else "0" for w in grid.wraps)),
            ("link_bw", repr(float(link_bw))),
            ("link_lat", repr(float(link_lat))),
            ("nbl", "none" if nbl is None else repr(float(nbl))),
            ("host_speed", repr(float(host_speed))),
        )
    )
    return CompiledZone("topolab_torus_zone", parameters)


def _mesh_estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`mesh` builds: the torus estimate of a W x H mesh."""
    return estimate({**params, "dims": (params["width"], params["height"]), "wrap": (False,), "zone": "auto"})


@family(
    summary="W x H mesh without wrap-around (a torus with wrap=no), endpoint-only NBL",
    params=(
        Param("width", positive_int, "nodes along x (W)"),
        Param("height", positive_int, "nodes along y (H)"),
        *_COMMON,
    ),
    estimate=_mesh_estimate,
    placements={"block": _block_placement},
    smallest={"width": 2, "height": 2},
    drawn={"width": 8, "height": 8},
)
def mesh(width: int, height: int, link_bw: float, link_lat: float, nbl: float | None, host_speed: float) -> Platform:
    """A W x H mesh without wrap-around: ``torus((width, height), wrap=False, ...)``.

    >>> len(mesh(16, 32).hosts)
    512
    """
    return torus((width, height), False, link_bw, link_lat, nbl, host_speed=host_speed, zone="auto")
