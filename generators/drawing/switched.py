"""Layouts of the switched families: hosts under the switches they are cabled to.

One function per family (crossbar, enterprise, fattree, mlfm, threequads), each returning a
:class:`~generators.drawing.elements.Draft`; :func:`generators.drawing.layout` dispatches to them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from generators.drawing.elements import Draft
from generators.drawing.elements import Group
from generators.drawing.elements import Route
from generators.drawing.elements import host_index
from generators.drawing.geometry import Path2D
from generators.drawing.geometry import Point
from generators.drawing.geometry import box
from generators.drawing.geometry import scurve
from generators.drawing.geometry import spread
from generators.drawing.style import palette_color
from generators.model import Platform
from generators.topologies.dragonfly import host_coordinates as dragonfly_coordinates
from generators.topologies.enterprise import BACKPLANE
from generators.topologies.enterprise import module_of
from generators.topologies.fattree import server_coordinates as fattree_coordinates
from generators.topologies.fattree import shape as fattree_shape
from generators.topologies.mlfm import server_coordinates
from generators.topologies.threequads import coordinates as threequads_coordinates
from generators.topologies.threequads import switch_of

__all__ = [
    "crossbar_layout",
    "dragonfly_layout",
    "enterprise_layout",
    "fattree_layout",
    "mlfm_layout",
    "threequads_layout",
]

_MODULE_BOX = "#4c72b0"  # boxes of the parts that hold hosts (chassis modules, MLFM layers)
_SPINE_BOX = "#bb6622"  # boxes of the top level (spines, backplane)
_SUBNET_COLORS = {"z": "#d62728", "y": "#2ca02c", "x": "#1f77b4"}  # Three Quads' SW-Z, SW-Y, SW-X


def crossbar_layout(platform: Platform) -> Draft:
    """Hosts in rows (one row up to 128 hosts), the switch above."""
    hosts = platform.host_names
    per_row = len(hosts) if len(hosts) <= 128 else math.ceil(math.sqrt(4 * len(hosts)))
    positions = {h: (k % per_row + 0.5 * ((k // per_row) % 2), -1.2 * (k // per_row)) for k, h in enumerate(hosts)}
    width = min(len(hosts), per_row) - 1
    switch = platform.routers[0]
    positions[switch] = (width / 2, max(3.0, width / 4))
    labels = {h: str(host_index(h)) for h in hosts}
    labels[switch] = switch
    return Draft(positions, labels=labels, notes=[f"{len(hosts)} hosts, one cable each to the switch {switch}"])


def _spine_row(draft: Draft, spines: list[str], xs: list[float], height: float, label: Callable[[str], str]) -> Route:
    """Put ``spines`` at ``xs`` on one row at ``height``, each in its own palette colour; return the route that
    draws every cable of a spine in the spine's colour (the others in the default colour)."""
    for n, (spine, x) in enumerate(zip(spines, xs, strict=True)):
        draft.positions[spine] = (x, height)
        draft.labels[spine] = label(spine)
        draft.colors[spine] = palette_color(n)

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        spine = a if a in draft.colors else b if b in draft.colors else None
        return None, "cable", draft.colors[spine] if spine else None

    return route


def fattree_layout(platform: Platform) -> Draft:
    """Servers under their leaf, leaves in a row, each level of aggregation switches in a row above its subtrees,
    spines on top; spine cables coloured by spine."""
    params = platform.params
    tree = fattree_shape(params["radix"], params["levels"], params["leaves"], params["servers_per_leaf"])
    levels = tree.levels
    leaves = [r for r in platform.routers if r.startswith("leaf-")]
    spines = [r for r in platform.routers if r.startswith("spine-")]
    by_leaf: dict[int, list[tuple[int, str]]] = {}
    for h in platform.host_names:
        a, k = fattree_coordinates(h)
        by_leaf.setdefault(a, []).append((k, h))
    ports = max(len(servers) for servers in by_leaf.values())
    per_row = ports if ports <= 8 else math.ceil(math.sqrt(2 * ports))
    pitch = per_row + 1.0
    draft = Draft({})
    for leaf in leaves:
        a = int(leaf.removeprefix("leaf-"))
        servers = sorted(by_leaf.get(a, []))
        for k, h in servers:
            draft.positions[h] = (a * pitch + k % per_row, -1.0 * (k // per_row))
            draft.labels[h] = str(k)
        draft.positions[leaf] = (a * pitch + (per_row - 1) / 2, 2.0)
        draft.labels[leaf] = leaf
        members = [draft.positions[leaf], *(draft.positions[h] for _, h in servers)]
        draft.groups.append(Group(leaf, box(members, 0.5, 1.1)))
    width = len(leaves) * pitch - 1
    row = max(4.0, width / 4)
    for switch in (r for r in platform.routers if r.startswith("agg")):  # agg<i>-<subtree>-<position>
        level, g, p = (int(part) for part in switch.removeprefix("agg").split("-"))
        span = tree.span(level) * pitch  # the subtree's leaves
        x = spread(tree.positions(level), g * span - 0.5, (g + 1) * span - 1.5)[p]
        draft.positions[switch], draft.labels[switch] = (x, 2.0 + (level - 1) * row), f"{g}.{p}"
    # The model lists spine-0, spine-1 ... in order, so the n-th colour is spine n's: the colour of port n.
    xs, height = spread(len(spines), -0.5, width + 0.5), 2.0 + (levels - 1) * row
    draft.route = _spine_row(draft, spines, xs, height, label=str)  # a spine's label: its name
    spine_box = box([draft.positions[s] for s in spines], 0.7, 1.3)
    draft.groups.append(Group(f"spines ({len(spines)})", spine_box, _SPINE_BOX))
    up = tree.up_ports(1)
    tapered = f" and {up} up (tapered {ports}:{up})" if up != tree.half else ""
    shape = f"radix {params['radix']}: {len(leaves)} leaves x {ports} servers{tapered}, {len(spines)} spines"
    if levels == 2:
        carried = f"servers d with d mod {up} = s" if tapered else "port s"
        routing = f"spine s carries the traffic to {carried} (structure picture: its cables in its colour)"
    else:
        routing = "D-mod-K routing (structure picture: a spine's cables in its colour)"
    draft.notes.append(f"{'two' if levels == 2 else levels}-level fat tree, {shape}; {routing}")
    return draft


def enterprise_layout(platform: Platform) -> Draft:
    """Modules as boxes (module switch above its hosts), the backplane above, the chassis around them."""
    modules = int(platform.params["modules"])  # type: ignore[call-overload]
    ports = int(platform.params["ports"])  # type: ignore[call-overload]
    module_names = [r for r in platform.routers if r != BACKPLANE]  # in module order
    per_row = ports if ports <= 16 else math.ceil(math.sqrt(4 * ports))
    pitch = per_row + 2.0
    draft = Draft({})
    members: list[list[Point]] = [[] for _ in module_names]
    for h in platform.host_names:
        m = module_of(h, ports)
        port = host_index(h) - m * ports
        draft.positions[h] = (m * pitch + port % per_row, -1.2 * (port // per_row))
        draft.labels[h] = str(host_index(h))
        members[m].append(draft.positions[h])
    fabric = platform.params.get("module_fabric") is not None
    for m, name in enumerate(module_names):
        draft.positions[name] = (m * pitch + (per_row - 1) / 2, 3.0)
        draft.labels[name] = name
        caption = f"module {m}: {ports} ports" + (" + fabric" if fabric else "")
        draft.groups.append(Group(caption, box([*members[m], draft.positions[name]], 0.6, 1.2), _MODULE_BOX))
    width = modules * pitch - 2
    draft.positions[BACKPLANE] = (width / 2, 3.0 + max(3.5, width / 10))
    draft.labels[BACKPLANE] = BACKPLANE
    backplane_fabric = platform.params.get("backplane") is not None
    caption = BACKPLANE + (" (shared fabric)" if backplane_fabric else "")
    draft.groups.append(Group(caption, box([draft.positions[BACKPLANE]], 1.2, 1.8), _SPINE_BOX))
    chassis = box(list(draft.positions.values()), 1.3, 3.0)
    draft.groups.append(Group(f"chassis: {modules} modules x {ports} ports", chassis, "#444444"))
    draft.notes.append("host cables to their module; each module has one uplink cable (each way) to the backplane")
    if fabric or backplane_fabric:
        draft.notes[0] += "; the module and backplane fabrics are links inside the switches (heatmap: marker colour)"
    return draft


def threequads_layout(platform: Platform) -> Draft:
    """Hosts in a row of quads (z), runs of y inside; SW-Z above its quad, SW-Y and SW-X bands below, cables as
    S-curves coloured by subnetwork."""
    q = int(platform.params["q"])  # type: ignore[call-overload]
    run_gap, quad_gap = 0.6, 2.0
    flat = q <= 8  # one row of hosts, y runs inside each quad; larger q: each quad a y x x block
    quad_width = q * q + (q - 1) * run_gap if flat else q - 1.0
    draft = Draft({})
    for h in platform.host_names:
        z, y, x = threequads_coordinates(h, q)
        x0 = z * (quad_width + quad_gap)
        draft.positions[h] = (x0 + y * (q + run_gap) + x, 0.0) if flat else (x0 + x, -1.0 * y)
        draft.labels[h] = f"{z}{y}{x}"
    width = q * quad_width + (q - 1) * quad_gap
    depth = 0.0 if flat else q - 1.0
    for z in range(q):
        x0 = z * (quad_width + quad_gap)
        quad = (x0 - 0.6, -depth - 1.7, x0 + quad_width + (-0.4 if flat else 0.6), 1.0)
        draft.groups.append(Group(f"quad z={z}", quad, "#666666"))
    heights = {"z": 2.0 + q, "y": -depth - 2.0 - 1.6 * q, "x": -depth - 2.0 - 3.6 * q}
    coverage = {"z": "(i,*,*)", "y": "(*,i,*)", "x": "(*,*,i)"}
    for axis, height in heights.items():
        if axis == "z":
            xs = [z * (quad_width + quad_gap) + (quad_width - 1) / 2 for z in range(q)]
        else:  # SW-X staggered against SW-Y so that its cables pass between the SW-Y switches
            shift = 0.0 if axis == "y" else width / (4 * q)
            xs = [x + shift for x in spread(q, 0.0, width)]
        for i, x in enumerate(xs):
            switch = switch_of(axis, (i, i, i))  # switch i of the subnetwork: the one node (i, i, i) is cabled to
            draft.positions[switch] = (x, height)
            draft.labels[switch] = f"SW-{axis.upper()}{i}"
            draft.colors[switch] = _SUBNET_COLORS[axis]
        name = f"SW-{axis.upper()}"
        caption = f"{name}: {q} switches of {q * q} ports, {name}i serves nodes {coverage[axis]}"
        band = (-1.0, height - 1.2, width, height + 1.6)
        draft.groups.append(Group(caption, band, _SUBNET_COLORS[axis], fill=True))

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        host, switch = (b, a) if a in draft.colors else (a, b)
        color = draft.colors[switch]
        if not flat:  # S-curves would run along the columns of the blocks
            return None, "cable", color
        path = scurve(draft.positions[host], draft.positions[switch])
        return (path if a == host else path[::-1]), "cable", color

    draft.route = route
    draft.notes.append(
        f"Three Quads, q = {q}: {q**3} nodes labelled zyx (z = quad, then y, then x), each with one cable to "
        f"SW-Z(z), SW-Y(y) and SW-X(x): one switch hop between nodes sharing a coordinate"
    )
    draft.legend.extend((f"SW-{axis.upper()} cables", color) for axis, color in _SUBNET_COLORS.items())
    return draft


def _mlfm_layers(platform: Platform, draft: Draft, d: int) -> tuple[int, float]:
    """Place MLFM's servers and leaves, layers side by side (a grid of layers for large d), each layer boxed;
    return the number of layers and the width they take."""
    per_row = d if d <= 6 else math.ceil(math.sqrt(d))  # servers per row under a leaf
    leaf_pitch = per_row + 1.0
    layer_width = (d + 1) * leaf_pitch - 1.0
    # leaf-<layer>-<column>: generators.topologies.mlfm reads server names (server_coordinates), exports no leaf reader
    leaves = {r: tuple(int(part) for part in r.split("-")[1:]) for r in platform.routers if r.startswith("leaf-")}
    layers = sorted({i for i, _ in leaves.values()})
    layers_per_row = len(layers) if d <= 6 else math.ceil(math.sqrt(len(layers)))
    layer_height = 3.5 + math.ceil(d / per_row)
    servers = {h: server_coordinates(h) for h in platform.host_names}
    per_leaf: dict[tuple[int, int], int] = {}
    for i, j, _ in servers.values():
        per_leaf[(i, j)] = per_leaf.get((i, j), 0) + 1

    def leaf_point(i: int, j: int) -> Point:
        row, col = divmod(i, layers_per_row)
        return (col * (layer_width + 3.0) + j * leaf_pitch + (per_row - 1) / 2, 2.5 - row * layer_height)

    for h, (i, j, k) in servers.items():
        x, y = leaf_point(i, j)
        in_row = min(per_leaf[(i, j)], per_row)
        draft.positions[h] = (x + k % per_row - (in_row - 1) / 2, y - 2.5 - (k // per_row))
        draft.labels[h] = f"{i}{j}{k}"
    for leaf, (i, j) in leaves.items():
        draft.positions[leaf] = leaf_point(i, j)
        draft.labels[leaf] = f"L{i}.{j}"
    layer_of = {node: coords[0] for node, coords in (*servers.items(), *leaves.items())}
    for i in layers:
        members = [draft.positions[node] for node, layer in layer_of.items() if layer == i]
        draft.groups.append(Group(f"layer {i}", box(members, 0.7, 1.4), _MODULE_BOX))
    return len(layers), min(len(layers), layers_per_row) * (layer_width + 3.0) - 3.0


def mlfm_layout(platform: Platform) -> Draft:
    """Layers side by side (leaves in a row, servers under their leaf), spines above all layers; a grid of layers
    for large d."""
    d = int(platform.params["d"])  # type: ignore[call-overload]
    draft = Draft({})
    layers, width = _mlfm_layers(platform, draft, d)
    spines = [r for r in platform.routers if r.startswith("spine-")]

    def label(spine: str) -> str:  # spine-<a>-<b> joins leaf columns a and b (no reader in generators.topologies.mlfm)
        a, b = spine.removeprefix("spine-").split("-")
        return f"{{{a},{b}}}"

    xs, height = spread(len(spines), 0.0, width), 2.5 + max(4.0, width / 5)
    draft.route = _spine_row(draft, spines, xs, height, label)
    caption = f"spines: one per pair of leaf columns ({len(spines)})"
    draft.groups.append(Group(caption, box([draft.positions[s] for s in spines], 0.8, 1.4), _SPINE_BOX))
    per_leaf = platform.params.get("servers_per_leaf")
    built = f", servers per leaf by layer: {','.join(map(str, per_leaf))}" if isinstance(per_leaf, tuple) else ""
    draft.notes.append(
        f"MLFM, d = {d}: {layers} layers x {d + 1} leaves (L layer.column), servers labelled layer, column, "
        f"port{built}; spine {{a,b}} joins leaf column a and column b of every layer "
        "(structure picture: its cables in its colour)"
    )
    return draft


def dragonfly_layout(platform: Platform) -> Draft:
    """Groups round a circle, each group's routers on a small circle with their hosts outside it; a global cable
    in its lower group's colour, local cables in the default colour."""
    shape = {name: dragonfly_coordinates(name) for name in platform.host_names}
    groups, routers = platform.params["groups"], platform.params["routers"]
    per_router = platform.params["hosts"]
    host_radius = max(0.4 * routers + 1.2, 1.1 * routers * per_router / (2 * math.pi))  # hosts >= 1.05 apart
    ring = host_radius + 0.5  # one group's radius, its hosts included
    big = max(ring * 3.0, ring * groups / 1.9)
    draft = Draft({})

    def place(angle: float, radius: float, centre: Point) -> Point:
        return (centre[0] + radius * math.cos(angle), centre[1] + radius * math.sin(angle))

    for g in range(groups):
        centre = place(2 * math.pi * g / groups, big, (0.0, 0.0))
        for r in range(routers):
            angle = 2 * math.pi * r / routers
            router = f"router-{g}-{r}"
            draft.positions[router] = place(angle, 0.4 * routers, centre)
            draft.colors[router] = palette_color(g)
            draft.labels[router] = f"{g}.{r}"
    members: dict[int, list[Point]] = {}
    for name, (g, r, k) in shape.items():
        centre = place(2 * math.pi * g / groups, big, (0.0, 0.0))
        spread_angle = (k - (per_router - 1) / 2) * 1.05 / host_radius
        draft.positions[name] = place(2 * math.pi * r / routers + spread_angle, host_radius, centre)
        draft.labels[name] = str(k)
        members.setdefault(g, []).append(draft.positions[name])
    for g in range(groups):
        draft.groups.append(Group(f"group {g}", box(members[g], 0.6, 1.2)))

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        if a.startswith("router-") and b.startswith("router-") and a.split("-")[1] != b.split("-")[1]:
            return None, "cable", draft.colors[min(a, b, key=lambda n: int(n.split("-")[1]))]
        return None, "cable", None

    draft.route = route
    draft.notes.append(
        f"dragonfly: {groups} groups of {routers} routers (all-to-all inside a group) x {per_router} hosts, "
        f"{platform.params['links_per_pair']} global cable(s) per pair of groups ({platform.params['arrangement']} "
        f"arrangement{_ports(platform)}), {platform.params['routing']} routing{_spread(platform)}; a global cable in "
        "its lower group's colour"
    )
    return draft


def _ports(platform: Platform) -> str:
    """How the global ports sit on the routers, when not the default."""
    order = platform.params.get("port_order", "round-robin")
    return "" if order == "round-robin" else f", {order} ports"


def _spread(platform: Platform) -> str:
    """How finely messages are routed, when not the default."""
    return " by packet" if platform.params.get("spread") == "packet" else ""
