"""Pictures of a platform drawn from its in-memory model: its structure, and link-load heatmaps.

:func:`layout` places every host and switch of a :class:`~generators.model.Platform` with one
structure-aware layout per family (dispatched on ``platform.family``) and turns every cable of the
model into one :class:`Edge`; :func:`draw_platform` draws it to a PNG, either as a structure picture
or, given per-link loads (e.g. :func:`generators.analysis.link_loads`), as a heatmap.

Everything comes from the model: host and router names, the link table and ``platform.params``.
Link names are read as the model writes them (``generators.model``):

* ``<a>_to_<b>`` (and ``<b>_to_<a>``): the two directed links of the cable between nodes a and b,
  drawn as one edge;
* ``<host>_nbl`` (node-bandwidth limiter), ``<host>_port`` (the FATPIPE endpoint of a routing-graph
  torus), ``<switch>_fabric`` (the internal capacity of a switch, module or backplane): links inside
  a node, drawn on the node's marker in a heatmap.

Any other link name is a :class:`~generators.errors.TopologyError`: a picture never silently drops
part of the platform.

``python -m generators.drawing DIRECTORY [--family NAME ...]`` draws every registered family at a
representative size (:data:`REPRESENTATIVE`), one ``<family>.png`` each.
"""

from __future__ import annotations

import argparse
import math
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import LinearSegmentedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from generators.errors import TopologyError
from generators.families import FAMILIES, build_platform
from generators.files import atomic_path
from generators.model import Platform

__all__ = [
    "REPRESENTATIVE",
    "Edge",
    "Group",
    "Layout",
    "check_picture",
    "draw_all_families",
    "draw_platform",
    "layout",
    "main",
]

Point = tuple[float, float]
Path2D = tuple[Point, ...]

#: Suffixes of the links that live inside one node (limiter, FATPIPE endpoint, switch fabric).
NODE_LINK_SUFFIXES = ("nbl", "port", "fabric")

#: The parameters each family is drawn with by :func:`draw_all_families`: close to the papers' machines.
REPRESENTATIVE: dict[str, dict[str, object]] = {
    "crossbar": {"hosts": 16},
    "enterprise": {"modules": 4, "ports": 16},  # the Three Quads paper's 4 x 16 GbE chassis
    "fattree": {"radix": 8},  # 32 servers, as many as the MLFM testbed
    "mesh": {"width": 8, "height": 8},
    "mlfm": {"d": 3, "servers_per_leaf": "3,3,2"},  # the MLFM paper's 32-server testbed
    "threequads": {"q": 4},  # the paper's 64-node Scube
    "tofu": {"xyz": "2x2x2", "zone": "auto"},  # 8 Tofu units, 96 nodes
    "torus": {"dims": "4x4x4x2x2"},  # Blue Gene/Q-like 5-D (E = 2): half a midplane (4x4x4x4x2 is dense)
}


@dataclass(frozen=True)
class Edge:
    """One cable: the undirected node pair, the directed links it carries and how to draw it.

    ``path`` is the polyline from ``a`` to ``b`` (two points for a straight cable); ``kind`` is
    ``"cable"`` or ``"wrap"`` (a wrap-around cable of a torus ring, drawn dashed); ``color`` is its
    colour in a structure picture (None: the default).
    """

    a: str
    b: str
    links: tuple[str, ...]
    path: Path2D
    kind: str = "cable"
    color: str | None = None


@dataclass(frozen=True)
class Group:
    """A labelled box showing part of the family's structure: ``box`` is (x0, y0, x1, y1)."""

    label: str
    box: tuple[float, float, float, float]
    color: str = "#888888"
    fill: bool = False


@dataclass(frozen=True)
class Layout:
    """Where a platform's nodes go and how its cables are drawn.

    Attributes
    ----------
    positions : mapping of str to (x, y)
        Every host and every switch/router; host pitch is about one unit.
    hosts, switches : tuple of str
        The nodes drawn as hosts (circles) and as switches/routers (squares).
    edges : tuple of Edge
        One per cable of the model.
    node_links : mapping of str to tuple of str
        Links inside a node (``_nbl``, ``_port``, ``_fabric``), by node.
    groups : tuple of Group
        Labelled boxes (modules, layers, quads, Tofu units, subnetworks ...).
    labels : mapping of str to str
        Short labels of nodes, drawn when they fit.
    colors : mapping of str to str
        Structure-picture colours of nodes that differ from the default.
    notes : tuple of str
        Lines of explanation drawn under the title (axes, what dashed means ...).
    legend : tuple of (str, str)
        Extra legend entries (label, colour) for coloured cables.
    """

    positions: Mapping[str, Point]
    hosts: tuple[str, ...]
    switches: tuple[str, ...]
    edges: tuple[Edge, ...]
    node_links: Mapping[str, tuple[str, ...]]
    groups: tuple[Group, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    colors: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    legend: tuple[tuple[str, str], ...] = ()


@dataclass
class _Draft:
    """What a family's layout function returns: positions and decorations; ``route(a, b)`` gives the
    (path, kind, colour) of the cable a-b (None: straight, default colour)."""

    positions: dict[str, Point]
    groups: list[Group] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    colors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)
    route: Callable[[str, str], tuple[Path2D | None, str, str | None]] | None = None


# ----------------------------------------------------------------------------------------------------------------------
# Reading the model's links


def _split_links(platform: Platform) -> tuple[dict[tuple[str, str], list[str]], dict[str, list[str]]]:
    """Cables (node pair -> its directed links, in the model's order) and node-internal links."""
    nodes = set(platform.host_names) | set(platform.routers)
    cables: dict[tuple[str, str], list[str]] = {}
    inside: dict[str, list[str]] = {}
    for name in platform.links:
        parts = name.split("_to_")
        if len(parts) == 2 and parts[0] in nodes and parts[1] in nodes and parts[0] != parts[1]:
            a, b = parts
            key = (b, a) if (b, a) in cables else (a, b)
            cables.setdefault(key, []).append(name)
            continue
        stem, _, suffix = name.rpartition("_")
        if suffix in NODE_LINK_SUFFIXES and stem in nodes:
            inside.setdefault(stem, []).append(name)
            continue
        raise TopologyError(
            f"cannot draw link {name!r} of {platform.name}: it is neither a cable '<a>_to_<b>' between two of its "
            f"hosts/switches nor a node's '<node>_nbl', '_port' or '_fabric' link"
        )
    return cables, inside


# ----------------------------------------------------------------------------------------------------------------------
# Geometry helpers


def _arc(p: Point, q: Point, offset: Point, points: int = 12) -> Path2D:
    """A quadratic curve from p to q whose middle is displaced by ``offset`` from the chord's middle."""
    control = np.array([(p[0] + q[0]) / 2 + 2 * offset[0], (p[1] + q[1]) / 2 + 2 * offset[1]])
    t = np.linspace(0.0, 1.0, points)[:, None]
    curve = (1 - t) ** 2 * np.array(p) + 2 * t * (1 - t) * control + t**2 * np.array(q)
    return tuple((float(x), float(y)) for x, y in curve)


def _scurve(p: Point, q: Point, points: int = 16) -> Path2D:
    """A cubic curve from p to q leaving p and reaching q vertically (layered drawings)."""
    dy = (q[1] - p[1]) * 0.5
    c1, c2 = np.array([p[0], p[1] + dy]), np.array([q[0], q[1] - dy])
    t = np.linspace(0.0, 1.0, points)[:, None]
    curve = (1 - t) ** 3 * np.array(p) + 3 * t * (1 - t) ** 2 * c1 + 3 * t**2 * (1 - t) * c2 + t**3 * np.array(q)
    return tuple((float(x), float(y)) for x, y in curve)


def _box(points: Sequence[Point], pad: float = 0.6, top: float | None = None) -> tuple[float, float, float, float]:
    """The bounding box of ``points`` padded by ``pad`` (``top``: extra room above for a caption)."""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + (pad if top is None else top))


def _spread(count: int, x0: float, x1: float) -> list[float]:
    """``count`` evenly spaced positions centred in [x0, x1]."""
    if count <= 1:
        return [(x0 + x1) / 2] * count
    step = (x1 - x0) / count
    return [x0 + step * (i + 0.5) for i in range(count)]


def _index(host: str, prefix: str = "host-") -> int:
    """k of ``host-<k>``."""
    return int(host.removeprefix(prefix))


_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_HOST = "#4c72b0"
_SWITCH = "#dd8452"
_CABLE = "#555555"


# ----------------------------------------------------------------------------------------------------------------------
# One layout per family


def _crossbar(platform: Platform) -> _Draft:
    """Hosts in rows (one row up to 128 hosts), the switch above."""
    hosts = platform.host_names
    per_row = len(hosts) if len(hosts) <= 128 else math.ceil(math.sqrt(4 * len(hosts)))
    positions = {h: (k % per_row + 0.5 * ((k // per_row) % 2), -1.2 * (k // per_row)) for k, h in enumerate(hosts)}
    width = min(len(hosts), per_row) - 1
    switch = platform.routers[0]
    positions[switch] = (width / 2, max(3.0, width / 4))
    labels = {h: str(_index(h)) for h in hosts}
    labels[switch] = switch
    return _Draft(positions, labels=labels, notes=[f"{len(hosts)} hosts, one cable each to the switch {switch}"])


def _fattree(platform: Platform) -> _Draft:
    """Servers under their leaf, leaves in a row, spines above; leaf-spine cables coloured by spine."""
    leaves = [r for r in platform.routers if r.startswith("leaf-")]
    spines = [r for r in platform.routers if r.startswith("spine-")]
    by_leaf: dict[int, list[tuple[int, str]]] = {}
    for h in platform.host_names:
        a, k = (int(part) for part in h.removeprefix("server-").split("-"))
        by_leaf.setdefault(a, []).append((k, h))
    ports = max(len(servers) for servers in by_leaf.values())
    per_row = ports if ports <= 8 else math.ceil(math.sqrt(2 * ports))
    pitch = per_row + 1.0
    positions: dict[str, Point] = {}
    labels: dict[str, str] = {}
    groups = []
    for leaf in leaves:
        a = int(leaf.removeprefix("leaf-"))
        x0 = a * pitch
        servers = sorted(by_leaf.get(a, []))
        for k, h in servers:
            positions[h] = (x0 + k % per_row, -1.0 * (k // per_row))
            labels[h] = str(k)
        positions[leaf] = (x0 + (per_row - 1) / 2, 2.0)
        labels[leaf] = leaf
        groups.append(Group(leaf, _box([positions[leaf], *(positions[h] for _, h in servers)], 0.5, 1.1)))
    width = len(leaves) * pitch - 1
    top = 2.0 + max(4.0, width / 4)
    colors = {}
    for s, x in zip(spines, _spread(len(spines), -0.5, width + 0.5), strict=True):
        positions[s] = (x, top)
        labels[s] = s
        colors[s] = _PALETTE[int(s.removeprefix("spine-")) % len(_PALETTE)]
    groups.append(Group(f"spines ({len(spines)})", _box([positions[s] for s in spines], 0.7, 1.3), "#bb6622"))

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        spine = a if a in colors else b if b in colors else None
        return None, "cable", colors[spine] if spine else None

    notes = [
        f"two-level fat tree, radix {platform.params['radix']}: {len(leaves)} leaves x {ports} servers, "
        f"{len(spines)} spines; spine s carries the traffic to port s (structure picture: its cables in its colour)"
    ]
    return _Draft(positions, groups, labels, colors, notes, route=route)


def _enterprise(platform: Platform) -> _Draft:
    """Modules as boxes (module switch above its hosts), the backplane above, the chassis around them."""
    modules = int(platform.params["modules"])  # type: ignore[call-overload]
    ports = int(platform.params["ports"])  # type: ignore[call-overload]
    per_row = ports if ports <= 16 else math.ceil(math.sqrt(4 * ports))
    pitch = per_row + 2.0
    positions: dict[str, Point] = {}
    labels: dict[str, str] = {}
    groups = []
    fabric = platform.params.get("module_fabric") is not None
    for h in platform.host_names:
        k = _index(h)
        m, p = divmod(k, ports)
        positions[h] = (m * pitch + p % per_row, -1.2 * (p // per_row))
        labels[h] = str(k)
    for m in range(modules):
        name = f"module-{m}"
        positions[name] = (m * pitch + (per_row - 1) / 2, 3.0)
        labels[name] = name
        members = [positions[f"host-{m * ports + p}"] for p in range(ports)] + [positions[name]]
        caption = f"module {m}: {ports} ports" + (" + fabric" if fabric else "")
        groups.append(Group(caption, _box(members, 0.6, 1.2), "#4c72b0"))
    width = modules * pitch - 2
    top = 3.0 + max(3.5, width / 10)
    positions["backplane"] = (width / 2, top)
    labels["backplane"] = "backplane"
    backplane_fabric = platform.params.get("backplane") is not None
    groups.append(
        Group(
            "backplane" + (" (shared fabric)" if backplane_fabric else ""),
            _box([positions["backplane"]], 1.2, 1.8),
            "#bb6622",
        )
    )
    everything = list(positions.values())
    x0, y0, x1, y1 = _box(everything, 1.3, 3.0)
    groups.append(Group(f"chassis: {modules} modules x {ports} ports", (x0, y0, x1, y1), "#444444"))
    notes = ["host cables to their module; each module has one uplink cable (each way) to the backplane"]
    if fabric or backplane_fabric:
        notes[0] += "; the module and backplane fabrics are links inside the switches (heatmap: marker colour)"
    return _Draft(positions, groups, labels, notes=notes)


_SUBNET_COLORS = {"z": "#d62728", "y": "#2ca02c", "x": "#1f77b4"}


def _threequads(platform: Platform) -> _Draft:
    """Hosts in a row of quads (z), runs of y inside; SW-Z above its quad, SW-Y and SW-X bands below, cables as
    S-curves coloured by subnetwork."""
    q = int(platform.params["q"])  # type: ignore[call-overload]
    run_gap, quad_gap = 0.6, 2.0
    quad_width = q * q + (q - 1) * run_gap
    positions: dict[str, Point] = {}
    labels: dict[str, str] = {}
    colors: dict[str, str] = {}
    groups = []
    flat = q <= 8  # one row of hosts, y runs inside each quad; larger q: each quad a y x x block
    if not flat:
        quad_width = q - 1.0
    for h in platform.host_names:
        k = _index(h)
        z, y, x = k // (q * q), (k // q) % q, k % q
        x0 = z * (quad_width + quad_gap)
        positions[h] = (x0 + y * (q + run_gap) + x, 0.0) if flat else (x0 + x, -1.0 * y)
        labels[h] = f"{z}{y}{x}"
    width = q * quad_width + (q - 1) * quad_gap
    depth = 0.0 if flat else q - 1.0
    for z in range(q):
        x0 = z * (quad_width + quad_gap)
        box = (x0 - 0.6, -depth - 1.7, x0 + quad_width + (-0.4 if flat else 0.6), 1.0)
        groups.append(Group(f"quad z={z}", box, "#666666"))
    heights = {"z": 2.0 + q, "y": -depth - 2.0 - 1.6 * q, "x": -depth - 2.0 - 3.6 * q}
    coverage = {"z": "(i,*,*)", "y": "(*,i,*)", "x": "(*,*,i)"}
    for axis, height in heights.items():
        if axis == "z":
            xs = [z * (quad_width + quad_gap) + (quad_width - 1) / 2 for z in range(q)]
        else:  # SW-X staggered against SW-Y so that its cables pass between the SW-Y switches
            shift = 0.0 if axis == "y" else width / (4 * q)
            xs = [x + shift for x in _spread(q, 0.0, width)]
        for i, x in enumerate(xs):
            s = f"sw{axis}-{i}"
            positions[s] = (x, height)
            labels[s] = f"SW-{axis.upper()}{i}"
            colors[s] = _SUBNET_COLORS[axis]
        name = f"SW-{axis.upper()}"
        caption = f"{name}: {q} switches of {q * q} ports, {name}i serves nodes {coverage[axis]}"
        groups.append(Group(caption, (-1.0, height - 1.2, width, height + 1.6), _SUBNET_COLORS[axis], fill=True))

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        host, switch = (b, a) if a.startswith("sw") else (a, b)
        color = _SUBNET_COLORS[switch[2]]
        if not flat:  # S-curves would run along the columns of the blocks
            return None, "cable", color
        path = _scurve(positions[host], positions[switch])
        return (path if a == host else path[::-1]), "cable", color

    notes = [
        f"Three Quads, q = {q}: {q**3} nodes labelled zyx (z = quad, then y, then x), each with one cable to "
        f"SW-Z(z), SW-Y(y) and SW-X(x): one switch hop between nodes sharing a coordinate",
    ]
    legend = [(f"SW-{axis.upper()} cables", color) for axis, color in _SUBNET_COLORS.items()]
    return _Draft(positions, groups, labels, colors, notes, legend, route)


def _mlfm(platform: Platform) -> _Draft:
    """Layers side by side (leaves in a row, servers under their leaf), spines above all layers; a grid of layers
    for large d."""
    from generators.mlfm import server_coordinates

    d = int(platform.params["d"])  # type: ignore[call-overload]
    columns = d + 1
    per_row = d if d <= 6 else math.ceil(math.sqrt(d))  # servers per row under a leaf
    leaf_pitch = per_row + 1.0
    layer_width = columns * leaf_pitch - 1.0
    leaves = [r for r in platform.routers if r.startswith("leaf-")]
    spines = [r for r in platform.routers if r.startswith("spine-")]
    layers = sorted({int(leaf.split("-")[1]) for leaf in leaves})
    layers_per_row = len(layers) if d <= 6 else math.ceil(math.sqrt(len(layers)))
    layer_height = 3.5 + math.ceil(d / per_row)
    counts: dict[tuple[int, int], int] = {}
    for h in platform.host_names:
        i, j, _ = server_coordinates(h)
        counts[(i, j)] = counts.get((i, j), 0) + 1

    def leaf_point(i: int, j: int) -> Point:
        row, col = divmod(i, layers_per_row)
        return (col * (layer_width + 3.0) + j * leaf_pitch + (per_row - 1) / 2, 2.5 - row * layer_height)

    positions: dict[str, Point] = {}
    labels: dict[str, str] = {}
    for h in platform.host_names:
        i, j, k = server_coordinates(h)
        x, y = leaf_point(i, j)
        in_row = min(counts[(i, j)], per_row)
        positions[h] = (x + k % per_row - (in_row - 1) / 2, y - 2.5 - (k // per_row))
        labels[h] = f"{i}{j}{k}"
    for leaf in leaves:
        i, j = (int(part) for part in leaf.removeprefix("leaf-").split("-"))
        positions[leaf] = leaf_point(i, j)
        labels[leaf] = f"L{i}.{j}"
    groups = []
    for i in layers:
        members = [p for name, p in positions.items() if name.startswith((f"server-{i}-", f"leaf-{i}-"))]
        groups.append(Group(f"layer {i}", _box(members, 0.7, 1.4), "#4c72b0"))
    width = min(len(layers), layers_per_row) * (layer_width + 3.0) - 3.0
    top = 2.5 + max(4.0, width / 5)
    colors = {}
    for n, (s, x) in enumerate(zip(spines, _spread(len(spines), 0.0, width), strict=True)):
        positions[s] = (x, top)
        a, b = s.removeprefix("spine-").split("-")
        labels[s] = f"{{{a},{b}}}"
        colors[s] = _PALETTE[n % len(_PALETTE)]
    caption = f"spines: one per pair of leaf columns ({len(spines)})"
    groups.append(Group(caption, _box([positions[s] for s in spines], 0.8, 1.4), "#bb6622"))

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        spine = a if a in colors else b if b in colors else None
        return None, "cable", colors[spine] if spine else None

    per_leaf = platform.params.get("servers_per_leaf")
    built = f", servers per leaf by layer: {','.join(map(str, per_leaf))}" if isinstance(per_leaf, tuple) else ""
    notes = [
        f"MLFM, d = {d}: {len(layers)} layers x {columns} leaves (L layer.column), servers labelled layer, column, "
        f"port{built}; spine {{a,b}} joins leaf column a and column b of every layer "
        "(structure picture: its cables in its colour)"
    ]
    return _Draft(positions, groups, labels, colors, notes, route=route)


# Torus, mesh and Tofu: a grid of grids.

_LEVEL_GAPS = (0.0, 2.0, 3.4, 5.0, 7.0)
_INNER_ARC = 0.27  # apex of an inner long cable (wrap) below its row / left of its column
_LANES = (0.22, 0.42)  # heights above a row (right of a column) of the cables between neighbouring blocks
_WRAP_LANES = (0.5, 0.68)  # ... and of the wrap-around cables between blocks


@dataclass
class _Grid:
    """Nested grid placement: an inner block (``inner(coords)``, one unit pitch, size ``extent``), then each
    outer level a grid of the blocks below; ``outer[k]`` is the (horizontal, vertical) dimension of level k + 1
    (None: unused)."""

    dims: tuple[int, ...]
    inner: Callable[[tuple[int, ...]], Point]
    extent: Point
    outer: list[tuple[int | None, int | None]]
    pitches: list[Point] = field(default_factory=list)
    extents: list[Point] = field(default_factory=list)

    def __post_init__(self) -> None:
        extent = self.extent
        self.extents = [extent]
        for k, (h, v) in enumerate(self.outer, start=1):
            gap = _LEVEL_GAPS[min(k, len(_LEVEL_GAPS) - 1)]
            pitch = (extent[0] + gap, extent[1] + gap)
            extent = (
                (self.dims[h] - 1) * pitch[0] + extent[0] if h is not None else extent[0],
                (self.dims[v] - 1) * pitch[1] + extent[1] if v is not None else extent[1],
            )
            self.pitches.append(pitch)
            self.extents.append(extent)

    def position(self, coords: tuple[int, ...]) -> Point:
        x, y = self.inner(coords)
        for (h, v), (px, py) in zip(self.outer, self.pitches, strict=True):
            x += coords[h] * px if h is not None else 0.0
            y += coords[v] * py if v is not None else 0.0
        return (x, y)

    def level_of(self, dim: int) -> tuple[int, str]:
        """(level, "h" or "v") of an outer dimension; (0, "") for a dimension of the inner block."""
        for k, (h, v) in enumerate(self.outer, start=1):
            if dim in (h, v):
                return k, "h" if dim == h else "v"
        return 0, ""


def _nest(
    dims: tuple[int, ...], inner: Callable[[tuple[int, ...]], Point], extent: Point, outer_dims: Sequence[int]
) -> _Grid:
    """Pair ``outer_dims`` (across, up) level by level; a lone last one goes where the picture stays squarer."""
    outer: list[tuple[int | None, int | None]] = []
    for start in range(0, len(outer_dims), 2):
        pair = list(outer_dims[start : start + 2])
        if len(pair) == 2:
            outer.append((pair[0], pair[1]))
        else:
            options = [[*outer, (pair[0], None)], [*outer, (None, pair[0])]]

            def badness(option: list[tuple[int | None, int | None]]) -> float:
                w, h = _Grid(dims, inner, extent, option).extents[-1]
                return abs(math.log((w + 1.0) / (h + 1.0) / 1.6))

            outer = min(options, key=badness)
    return _Grid(dims, inner, extent, outer)


# The rows of the Tofu unit: (A, C) in the order of the 4-cycle that the 2x2 A x C mesh is.
_TOFU_AC_ROWS = {(0, 0): 0, (1, 0): 1, (1, 1): 2, (0, 1): 3}


def _torus(platform: Platform) -> _Draft:
    """A grid of grids: dims 0, 1 inside a block (one unit apart), dims 2, 3 a grid of blocks, dims 4, 5 a grid of
    those ...; Tofu: the 2x3x2 (A, B, C) unit inside (B across, the A x C 4-cycle up), X, Y, then Z outside.

    Inner wrap-around cables are dashed arcs below their row (left of their column); a cable between the same
    node of two neighbouring blocks runs in a lane just above the node's row (right of its column), one lane per
    node position, and a wrap-around between blocks in a higher, dashed lane."""
    from generators.torus import coordinates

    assert platform.grid is not None  # the torus-like families give their grid
    dims, wraps = platform.grid.dims, platform.grid.wraps
    tofu = platform.family == "tofu"
    if tofu:
        names = ("X", "Y", "Z", "A", "B", "C")
        inner_dims: tuple[int, ...] = (3, 4, 5)
        grid = _nest(dims, lambda c: (float(c[4]), float(_TOFU_AC_ROWS[(c[3], c[5])])), (dims[4] - 1.0, 3.0), [0, 1, 2])
    else:
        names = tuple(f"d{i}" for i in range(len(dims)))
        inner_dims = tuple(range(min(2, len(dims))))
        extent = (dims[0] - 1.0, dims[1] - 1.0 if len(dims) > 1 else 0.0)
        grid = _nest(
            dims, lambda c: (float(c[0]), float(c[1]) if len(c) > 1 else 0.0), extent, list(range(2, len(dims)))
        )
    positions: dict[str, Point] = {}
    local: dict[str, Point] = {}
    coords_of: dict[str, tuple[int, ...]] = {}
    labels: dict[str, str] = {}
    for h in platform.host_names:
        coords = coordinates(_index(h), dims)
        coords_of[h] = coords
        positions[h] = grid.position(coords)
        local[h] = grid.inner(coords)
        labels[h] = str(_index(h))
    lane_x = {x: i for i, x in enumerate(sorted({p[0] for p in local.values()}))}
    lane_y = {y: i for i, y in enumerate(sorted({p[1] for p in local.values()}))}
    levels_h = [k for k, (h, _) in enumerate(grid.outer, start=1) if h is not None]
    levels_v = [k for k, (_, v) in enumerate(grid.outer, start=1) if v is not None]

    def lane(band: tuple[float, float], rank: int, ranks: int, level: int, levels: list[int]) -> float:
        total = ranks * len(levels)
        i = rank * len(levels) + levels.index(level)
        return band[0] + (band[1] - band[0]) * (i / (total - 1) if total > 1 else 0.5)

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        ca, cb = coords_of[a], coords_of[b]
        moved = [d for d in range(len(dims)) if ca[d] != cb[d]]
        if len(moved) != 1:
            return None, "cable", None
        d = moved[0]
        kind = "wrap" if abs(ca[d] - cb[d]) > 1 else "cable"
        color = _PALETTE[d % len(_PALETTE)]
        p, q = positions[a], positions[b]
        level, orient = grid.level_of(d)
        if level == 0:
            if math.dist(p, q) < 1.01:
                return None, kind, color
            offset = (0.0, -_INNER_ARC) if abs(p[1] - q[1]) < 1e-9 else (-_INNER_ARC, 0.0)
            return _arc(p, q, offset), kind, color
        band = _WRAP_LANES if kind == "wrap" else _LANES
        if orient == "h":
            up = lane(band, lane_x[local[a][0]], len(lane_x), level, levels_h)
            s = 1.0 if q[0] > p[0] else -1.0
            path = (p, (p[0] + 0.2 * s, p[1] + up), (q[0] - 0.2 * s, q[1] + up), q)
        else:
            right = lane(band, lane_y[local[a][1]], len(lane_y), level, levels_v)
            s = 1.0 if q[1] > p[1] else -1.0
            path = (p, (p[0] + right, p[1] + 0.2 * s), (q[0] + right, q[1] - 0.2 * s), q)
        return path, kind, color

    groups = []
    outer_dims = [d for d in range(len(dims)) if d not in inner_dims]
    if tofu or any(dims[d] > 1 for d in outer_dims):
        blocks: dict[tuple[int, ...], list[Point]] = {}
        for h, coords in coords_of.items():
            blocks.setdefault(tuple(coords[d] for d in outer_dims), []).append(positions[h])
        for key, members in blocks.items():
            caption = ("unit " if tofu else "") + "(" + ",".join(map(str, key)) + ")"
            groups.append(Group(caption, _box(members, 0.5, 1.05), "#4c72b0" if tofu else "#888888"))

    def describe(dim: int) -> str:
        n = dims[dim]
        shape = "ring" if wraps[dim] and n > 2 else "mesh" if n > 2 else "one cable" if n == 2 else "flat"
        return f"{names[dim]} ({n}, {shape})"

    axes = []
    for k, (hd, vd) in enumerate(grid.outer, start=1):
        parts = [f"{describe(x)} {arrow}" for x, arrow in ((hd, "across"), (vd, "up")) if x is not None]
        axes.append(("units: " if tofu and k == 1 else f"level {k} blocks: ") + ", ".join(parts))
    shape = "x".join(map(str, dims))
    if tofu:
        notes = [
            f"Tofu {'x'.join(map(str, dims[:3]))} units of 2x3x2 nodes (boxed, unit (x,y,z)): inside a unit "
            f"{describe(4)} across, rows (A,C) = 00, 10, 11, 01 upwards (the 2x2 A x C mesh is a 4-cycle)",
            "; ".join(axes),
        ]
    else:
        kind_name = "torus" if all(wraps) else "mesh" if not any(wraps) else "mixed mesh/torus"
        inner_text = ", ".join(f"{describe(x)} {arrow}" for x, arrow in zip(inner_dims, ("across", "up"), strict=False))
        notes = [f"{kind_name} {shape}: in a block {inner_text}" + ("; " + "; ".join(axes) if axes else "")]
        if outer_dims:
            notes[0] += " (block captions: coordinates " + ",".join(names[d] for d in outer_dims) + ")"
    lines = []
    if any(w and n > 2 for w, n in zip(wraps, dims, strict=True)):
        lines.append("dashed: wrap-around cables (arcs inside a block, higher lanes between blocks)")
    if grid.outer:
        lines.append(
            "cables between the same node of neighbouring blocks run in lanes just above its row / right of its column"
        )
    if lines:
        notes.append("; ".join(lines))
    legend = [(f"{names[d]} cables", _PALETTE[d % len(_PALETTE)]) for d in range(len(dims)) if dims[d] > 1]
    return _Draft(positions, groups, labels, notes=notes, legend=legend, route=route)


_FAMILY_LAYOUTS: dict[str, Callable[[Platform], _Draft]] = {
    "crossbar": _crossbar,
    "enterprise": _enterprise,
    "fattree": _fattree,
    "mesh": _torus,
    "mlfm": _mlfm,
    "threequads": _threequads,
    "tofu": _torus,
    "torus": _torus,
}


def _capacity_note(
    platform: Platform, cables: Mapping[tuple[str, str], list[str]], inside: Mapping[str, list[str]]
) -> str:
    """One line on what the model's capacities are: cable bandwidths, node limiters and fabrics."""
    per_bandwidth: dict[float, int] = {}
    for links in cables.values():
        bandwidth = min(platform.links[link].bandwidth for link in links)
        per_bandwidth[bandwidth] = per_bandwidth.get(bandwidth, 0) + 1
    parts = [", ".join(f"{n} x {_si(bw)}B/s" for bw, n in sorted(per_bandwidth.items()))]
    if len(per_bandwidth) > 1:
        parts[0] += " (wider line: more bandwidth)"
    parts[0] = "cables (each way): " + parts[0]
    for suffix, what in (
        ("nbl", "NBL limiter (in + out)"),
        ("fabric", "fabric"),
        ("port", "FATPIPE endpoint port (routing-graph artefact, never limits)"),
    ):
        owners = sorted(n for n, links in inside.items() if any(link.endswith("_" + suffix) for link in links))
        if owners:
            caps = sorted({platform.links[f"{n}_{suffix}"].bandwidth for n in owners})
            cap = ", ".join(f"{_si(c)}B/s" for c in caps)
            parts.append(
                f"{what} on {len(owners)} {'hosts' if owners[0] in platform.host_names else 'switches'}: {cap}"
            )
    return "; ".join(parts)


def layout(platform: Platform) -> Layout:
    """Place every node of ``platform`` and turn each of its cables into one edge.

    ``TopologyError`` when the family has no layout or a link name is not one the model writes.

    >>> from generators.crossbar import crossbar
    >>> lay = layout(crossbar(3, nbl=1.0))
    >>> sorted(lay.positions), [e.links for e in lay.edges][0], dict(lay.node_links)["host-0"]
    (['host-0', 'host-1', 'host-2', 'xbar'], ('host-0_to_xbar', 'xbar_to_host-0'), ('host-0_nbl',))
    """
    try:
        family_layout = _FAMILY_LAYOUTS[platform.family]
    except KeyError:
        known = ", ".join(sorted(_FAMILY_LAYOUTS))
        raise TopologyError(
            f"cannot draw {platform.name}: no layout for family {platform.family!r} ({known})"
        ) from None
    cables, inside = _split_links(platform)
    draft = family_layout(platform)
    nodes = [*platform.host_names, *platform.routers]
    missing = [n for n in nodes if n not in draft.positions]
    if missing:
        raise TopologyError(f"cannot draw {platform.name}: the {platform.family} layout has no place for {missing[0]}")
    draft.notes.append(_capacity_note(platform, cables, inside))
    edges = []
    for (a, b), links in cables.items():
        path, kind, color = draft.route(a, b) if draft.route is not None else (None, "cable", None)
        edges.append(Edge(a, b, tuple(links), path or (draft.positions[a], draft.positions[b]), kind, color))
    return Layout(
        positions=MappingProxyType({n: draft.positions[n] for n in nodes}),
        hosts=tuple(platform.host_names),
        switches=tuple(platform.routers),
        edges=tuple(edges),
        node_links=MappingProxyType({n: tuple(links) for n, links in inside.items()}),
        groups=tuple(draft.groups),
        labels=MappingProxyType(draft.labels),
        colors=MappingProxyType(draft.colors),
        notes=tuple(draft.notes),
        legend=tuple(draft.legend),
    )


# ----------------------------------------------------------------------------------------------------------------------
# Drawing

_HEAT = LinearSegmentedColormap.from_list(
    "topolab_heat",
    [
        (0.98, 0.80, 0.36),
        (0.996, 0.698, 0.298),
        (0.992, 0.553, 0.235),
        (0.988, 0.306, 0.165),
        (0.890, 0.102, 0.110),
        (0.741, 0.0, 0.149),
        (0.502, 0.0, 0.149),
        (0.25, 0.0, 0.1),
    ],
)
_UNUSED = "#d0d0d0"
_DASHED = (0, (3, 2))
_DPI = 110
_MAX_WIDTH_IN, _MAX_HEIGHT_IN, _MAX_UNIT_IN = 22.0, 18.0, 0.42  # figure limits; a layout unit is one host pitch


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def _check_loads(platform: Platform, link_loads: Mapping[str, float]) -> dict[str, float]:
    """``link_loads`` as floats; ``TopologyError`` for the first link the platform does not have or a bad amount."""
    loads = {}
    for name, value in link_loads.items():
        if name not in platform.links:
            raise TopologyError(f"link_loads names link {name!r}, which {platform.name} does not have")
        try:
            amount = float(value)
        except (TypeError, ValueError):
            amount = math.nan
        if not math.isfinite(amount) or amount < 0:
            raise TopologyError(f"link_loads[{name!r}] must be a finite number >= 0, got {value!r}")
        loads[name] = amount
    return loads


def _si(value: float) -> str:
    """``1.5e9`` -> ``1.5 G``."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.3g} "


@dataclass(frozen=True)
class _Sizes:
    """Sizes in points derived from the scale of the picture (points per layout unit)."""

    unit: float

    @property
    def host(self) -> float:
        return _clamp(0.42 * self.unit, 1.5, 12.0)

    @property
    def switch(self) -> float:
        return _clamp(0.62 * self.unit, 3.0, 16.0)

    @property
    def line(self) -> float:
        return _clamp(0.05 * self.unit, 0.3, 1.4)

    @property
    def label(self) -> float:
        return _clamp(0.3 * self.unit, 0.0, 7.0)

    @property
    def caption(self) -> float:
        return _clamp(0.38 * self.unit, 4.0, 9.0)


def _frame(lay: Layout, heat: bool) -> tuple[Figure, Any, _Sizes, list[str]]:
    """A figure sized to the layout (aspect kept, bounded), its axes, the sizes, and the wrapped notes."""
    curved = [p for e in lay.edges if len(e.path) > 2 for p in e.path]
    xs = [p[0] for p in (*lay.positions.values(), *curved)] + [v for g in lay.groups for v in (g.box[0], g.box[2])]
    ys = [p[1] for p in (*lay.positions.values(), *curved)] + [v for g in lay.groups for v in (g.box[1], g.box[3])]
    x0, x1, y0, y1 = min(xs) - 0.8, max(xs) + 0.8, min(ys) - 0.8, max(ys) + 0.8
    scale = min(_MAX_UNIT_IN, _MAX_WIDTH_IN / (x1 - x0), _MAX_HEIGHT_IN / (y1 - y0))  # inches per layout unit
    plot_w, plot_h = (x1 - x0) * scale, (y1 - y0) * scale
    side = 1.4 if heat else 0.3  # room for the colour bar
    fig_w = max(plot_w + 0.6 + side, 7.0)
    notes = [line for note in lay.notes for line in textwrap.wrap(note, width=int(fig_w * 15))]
    header, footer = 0.5 + 0.19 * len(notes), 0.75
    fig_h = plot_h + header + footer
    fig = Figure(figsize=(fig_w, fig_h), dpi=_DPI)
    left = (fig_w - side - plot_w) / 2
    ax = fig.add_axes((left / fig_w, footer / fig_h, plot_w / fig_w, plot_h / fig_h))
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return fig, ax, _Sizes(scale * 72), notes


def _draw_groups(ax: Any, lay: Layout, sizes: _Sizes) -> None:
    captions = sizes.unit * 0.3 >= 3.0 or len(lay.groups) <= 12
    for group in lay.groups:
        x0, y0, x1, y1 = group.box
        if group.fill:
            ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=group.color, alpha=0.1, lw=0, zorder=0))
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor=group.color, lw=0.8, zorder=0))
        if captions:
            ax.text(
                x0 + 0.15,
                y1 - 0.1,
                group.label,
                fontsize=sizes.caption,
                color=group.color,
                va="top",
                ha="left",
                zorder=5,
                clip_on=True,
                bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.75},
            )


def _draw_structure_edges(ax: Any, platform: Platform, lay: Layout, sizes: _Sizes) -> None:
    """Cables in their layout colour, wider for more bandwidth (log scale), wrap-arounds dashed."""
    bandwidth = [min(platform.links[link].bandwidth for link in e.links) for e in lay.edges]
    thinnest = min(bandwidth, default=1.0)
    for kind, style in (("cable", "solid"), ("wrap", _DASHED)):
        chosen = [(e, bw) for e, bw in zip(lay.edges, bandwidth, strict=True) if e.kind == kind]
        if chosen:
            widths = [sizes.line * min(1 + 0.5 * math.log2(bw / thinnest), 4.0) for _, bw in chosen]
            colors = [e.color or _CABLE for e, _ in chosen]
            paths = [e.path for e, _ in chosen]
            ax.add_collection(
                LineCollection(paths, colors=colors, linewidths=widths, linestyles=style, alpha=0.8, zorder=2)
            )


def _draw_heat_edges(ax: Any, lay: Layout, edge_load: list[float], norm: Normalize, sizes: _Sizes) -> None:
    """Unused cables thin and light grey; used ones coloured by load, the heaviest drawn last."""
    for kind, style in (("cable", "solid"), ("wrap", _DASHED)):
        idle = [e.path for e, v in zip(lay.edges, edge_load, strict=True) if e.kind == kind and v <= 0]
        if idle:
            ax.add_collection(
                LineCollection(idle, colors=_UNUSED, linewidths=0.6 * sizes.line, linestyles=style, zorder=2)
            )
        busy = sorted(
            (v, i) for i, (e, v) in enumerate(zip(lay.edges, edge_load, strict=True)) if e.kind == kind and v > 0
        )
        if busy:
            ax.add_collection(
                LineCollection(
                    [lay.edges[i].path for _, i in busy],
                    cmap=_HEAT,
                    norm=norm,
                    array=np.array([v for v, _ in busy]),
                    linewidths=_clamp(1.8 * sizes.line, 0.8, 3.0),
                    linestyles=style,
                    zorder=3,
                )
            )


def _draw_nodes(
    ax: Any, lay: Layout, node_load: Mapping[str, float] | None, norm: Normalize | None, sizes: _Sizes
) -> None:
    """Hosts as circles, switches as squares: in their layout colour, or (heatmap) white, or coloured by the load
    of their internal links."""
    for nodes, marker, size, default in (
        (lay.hosts, "o", sizes.host, _HOST),
        (lay.switches, "s", sizes.switch, _SWITCH),
    ):
        if not nodes:
            continue
        xy = np.array([lay.positions[n] for n in nodes])
        if node_load is None or norm is None:
            faces: list[Any] = [lay.colors.get(n, default) for n in nodes]
        else:
            faces = [_HEAT(norm(node_load[n])) if node_load.get(n, 0) > 0 else "white" for n in nodes]
        ax.scatter(
            xy[:, 0],
            xy[:, 1],
            s=size**2,
            marker=marker,
            c=faces,
            edgecolors="#222222",
            linewidths=_clamp(size / 12, 0.2, 0.7),
            zorder=4,
        )


def _draw_labels(ax: Any, lay: Layout, sizes: _Sizes) -> None:
    """Short node labels when they are legible: switches beside their marker, hosts below theirs."""
    if sizes.label < 4.0 or len(lay.positions) > 400:
        return
    switches = set(lay.switches)
    for n, text in lay.labels.items():
        if n in switches:
            ax.annotate(
                text,
                lay.positions[n],
                xytext=(sizes.switch / 2 + 1.5, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize=min(sizes.label * 1.2, 8.0),
                color="#222222",
                zorder=5,
                bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8},
            )
        else:
            ax.annotate(
                text,
                lay.positions[n],
                xytext=(0, -sizes.host / 2 - 1),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=sizes.label,
                color="#333333",
                zorder=5,
                rotation=0 if len(text) <= 3 else 90,
            )


def _legend(lay: Layout, heat: bool) -> list[Line2D]:
    face = {"host": "white" if heat else _HOST, "switch": "white" if heat else _SWITCH}
    handles = [
        Line2D(
            [],
            [],
            marker="o",
            ls="none",
            color=face["host"],
            markeredgecolor="#222222",
            label=f"host ({len(lay.hosts)})",
        )
    ]
    if lay.switches:
        handles.append(
            Line2D(
                [],
                [],
                marker="s",
                ls="none",
                color=face["switch"],
                markeredgecolor="#222222",
                label=f"switch / router ({len(lay.switches)})",
            )
        )
    cable = "cable: the larger of its two directed loads" if heat else "cable, both directions"
    handles.append(Line2D([], [], color=_HEAT(0.5) if heat else _CABLE, lw=1.2, label=f"{cable} ({len(lay.edges)})"))
    if heat:
        handles.append(Line2D([], [], color=_UNUSED, lw=1.0, label="unused cable"))
    if any(e.kind == "wrap" for e in lay.edges):
        handles.append(Line2D([], [], color=_CABLE, lw=1.2, ls=_DASHED, label="wrap-around cable"))
    if heat and lay.node_links:
        kinds = sorted({link.rpartition("_")[2] for links in lay.node_links.values() for link in links})
        text = "node colour: load of its " + " / ".join(f"_{k}" for k in kinds) + " link"
        handles.append(Line2D([], [], marker="o", ls="none", color=_HEAT(0.6), markeredgecolor="#222222", label=text))
    if not heat:
        handles += [Line2D([], [], color=color, lw=2, label=label) for label, color in lay.legend]
    return handles


def _render(
    platform: Platform, lay: Layout, loads: Mapping[str, float] | None, title: str | None, load_label: str
) -> Figure:
    heat = loads is not None
    fig, ax, sizes, notes = _frame(lay, heat)
    _draw_groups(ax, lay, sizes)
    norm = None
    if loads is None:
        _draw_structure_edges(ax, platform, lay, sizes)
        _draw_nodes(ax, lay, None, None, sizes)
    else:
        edge_load = [max(loads.get(link, 0.0) for link in e.links) for e in lay.edges]
        node_load = {n: max(loads.get(link, 0.0) for link in links) for n, links in lay.node_links.items()}
        peak = max([*edge_load, *node_load.values(), 0.0])
        norm = Normalize(0.0, peak if peak > 0 else 1.0)
        _draw_heat_edges(ax, lay, edge_load, norm, sizes)
        _draw_nodes(ax, lay, node_load, norm, sizes)
    _draw_labels(ax, lay, sizes)

    handles = _legend(lay, heat)
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=min(len(handles), 4),
        fontsize=8,
        frameon=False,
        bbox_to_anchor=(0.5, 0.0),
    )
    fig_w, fig_h = fig.get_size_inches()
    counts = [f"{len(lay.hosts)} hosts"]
    if lay.switches:
        counts.append(f"{len(lay.switches)} switch{'es' if len(lay.switches) > 1 else ''}")
    counts.append(f"{len(lay.edges)} cables")
    heading = title or f"{platform.name} ({platform.family}): " + ", ".join(counts)
    if norm is not None and title is None:
        heading += f" — link loads (max {_si(norm.vmax)}{load_label})"
    fig.text(0.5, 1 - 0.3 / fig_h, heading, ha="center", va="center", fontsize=11, weight="bold")
    for i, note in enumerate(notes):
        fig.text(0.5, 1 - (0.58 + 0.19 * i) / fig_h, note, ha="center", va="center", fontsize=8, color="#333333")
    if norm is not None:
        plot_h = ax.get_position().height * fig_h
        cax = fig.add_axes(((fig_w - 1.0) / fig_w, 0.85 / fig_h, 0.18 / fig_w, max(plot_h * 0.6, 1.0) / fig_h))
        fig.colorbar(ScalarMappable(norm=norm, cmap=_HEAT), cax=cax).set_label(load_label)
    return fig


def check_picture(platform: Platform, path: str | Path) -> Layout:
    """The layout of ``platform`` if it can be drawn to ``path`` (a ``.png``); ``TopologyError`` otherwise."""
    if Path(path).suffix.lower() != ".png":
        raise TopologyError(f"a picture must be a .png file, got {str(path)!r}")
    return layout(platform)


def draw_platform(
    platform: Platform,
    path: str | Path,
    *,
    link_loads: Mapping[str, float] | None = None,
    title: str | None = None,
    load_label: str = "bytes",
) -> None:
    """Draw ``platform`` to the PNG ``path`` (written atomically).

    Without ``link_loads``: the structure (hosts as circles, switches as squares, the family's groups).
    With ``link_loads`` (link name -> amount, e.g. bytes or flows): a heatmap, each cable coloured by the
    larger of its two directed loads (unused cables thin and light grey), each node's limiter or fabric load on
    its marker. ``TopologyError`` for a link the platform does not have (nothing is written).
    """
    lay = check_picture(platform, path)
    loads = _check_loads(platform, link_loads) if link_loads is not None else None
    fig = _render(platform, lay, loads, title, load_label)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=_DPI, pil_kwargs={"compress_level": 2})


def draw_all_families(directory: str | Path, families: Sequence[str] | None = None) -> list[Path]:
    """One structure picture ``<family>.png`` per registered family (or per name in ``families``), drawn
    at its :data:`REPRESENTATIVE` size; returns the files written."""
    names = list(FAMILIES) if families is None else list(families)
    for name in names:
        if name not in FAMILIES:
            raise TopologyError(f"unknown topology family {name!r}; known families: {', '.join(sorted(FAMILIES))}")
        if name not in REPRESENTATIVE:
            raise TopologyError(f"family {name!r} has no representative size to draw (generators.drawing)")
    written = []
    for name in names:
        target = Path(directory) / f"{name}.png"
        draw_platform(build_platform(name, REPRESENTATIVE[name]), target)
        written.append(target)
    return written


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m generators.drawing DIRECTORY [--family NAME ...]``."""
    parser = _Parser(prog="generators.drawing", description="Draw every topology family at a representative size.")
    parser.add_argument("directory", help="where to write <family>.png")
    parser.add_argument("--family", action="append", metavar="NAME", help="draw only this family (repeatable)")
    args = parser.parse_args(argv)
    try:
        for path in draw_all_families(args.directory, args.family):
            print(path)
    except TopologyError as err:
        parser.error(str(err))
    except OSError as err:
        parser.error(f"cannot write: {err}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
