"""Layouts of the direct low-diameter families: HyperX (switches on their lattice) and Slim Fly (the MMS graph's two
halves of q x q routers). Hosts sit round their switch; cables are coloured by what they join.

Each function returns a :class:`~generators.drawing.elements.Draft`; :func:`generators.drawing.layout` dispatches
to them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from generators.drawing.elements import Draft
from generators.drawing.elements import Group
from generators.drawing.elements import Route
from generators.drawing.geometry import Path2D
from generators.drawing.geometry import Point
from generators.drawing.geometry import arc
from generators.drawing.geometry import box
from generators.drawing.style import palette_color
from generators.model import Platform
from generators.router_graph import host_coordinates as router_graph_coordinates
from generators.topologies.hyperx import host_coordinates as hyperx_coordinates
from generators.topologies.torus import coordinates

__all__ = ["hyperx_layout", "slimfly_layout"]


def _hosts_round(draft: Draft, hosts: list[tuple[str, int, int]], radius: float) -> None:
    """Put each (host, switch's node name, port) on a small circle round its switch, hosts >= 1.05 apart."""
    per_switch = max((k for _, _, k in hosts), default=0) + 1
    radius = max(radius, 1.05 * per_switch / (2 * math.pi))
    for host, switch, k in hosts:
        x, y = draft.positions[switch]
        angle = math.pi / 2 + 2 * math.pi * k / per_switch
        draft.positions[host] = (x + radius * math.cos(angle), y - radius * math.sin(angle))
        draft.labels[host] = str(k)


def _switch_cables(platform: Platform, prefix: str, colour: Callable[[int, int], int]) -> dict[frozenset[str], int]:
    """Each cable between two switches ``<prefix><number>``, by its two ends, with ``colour(a, b)`` of their
    numbers: the palette index it is drawn in."""
    found = {}
    for link in platform.cables(platform.links):
        a, b = platform.links[link].ends
        if a.startswith(prefix) and b.startswith(prefix):
            found[frozenset((a, b))] = colour(int(a.removeprefix(prefix)), int(b.removeprefix(prefix)))
    return found


def _dimension_route(draft: Draft, dimension_of: dict[frozenset[str], int]) -> Route:
    """Cables drawn in their dimension's colour; a cable that skips switches of its row bows out of the row."""

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        d = dimension_of.get(frozenset((a, b)))
        if d is None:
            return None, "cable", None
        (xa, ya), (xb, yb) = draft.positions[a], draft.positions[b]
        span = math.hypot(xb - xa, yb - ya)
        if span < 3.5:  # neighbours in the row: straight
            return None, "cable", palette_color(d)
        bow = 0.12 * span
        return arc((xa, ya), (xb, yb), (-(yb - ya) / span * bow, (xb - xa) / span * bow)), "cable", palette_color(d)

    return route


def hyperx_layout(platform: Platform) -> Draft:
    """Switches at their lattice point (dimension 0 along x, 1 along y, the others as tiles of such planes), hosts
    round them; a cable in its dimension's colour."""
    dims = platform.params["dims"]
    pitch = 3.0 + 0.3 * platform.params["hosts"]
    planes = math.prod(dims[2:])
    across = max(1, math.ceil(math.sqrt(planes)))
    width, height = dims[0], dims[1] if len(dims) > 1 else 1
    draft = Draft({})
    for i, switch in enumerate(platform.routers):
        c = coordinates(i, dims)
        plane = i // (width * height)
        x = (c[0] + (plane % across) * (width + 1)) * pitch
        y = -((c[1] if len(dims) > 1 else 0) + (plane // across) * (height + 1)) * pitch
        draft.positions[switch], draft.labels[switch] = (x, y), ",".join(map(str, c))
    hosts = [(h, f"switch-{s}", k) for h in platform.host_names for s, k in [hyperx_coordinates(h)]]
    _hosts_round(draft, hosts, 1.0)

    def dimension(a: int, b: int) -> int:  # the one coordinate two neighbouring switches differ in
        ca, cb = coordinates(a, dims), coordinates(b, dims)
        return next(d for d in range(len(dims)) if ca[d] != cb[d])

    draft.route = _dimension_route(draft, _switch_cables(platform, "switch-", dimension))
    for plane in range(planes if len(dims) > 2 else 0):
        members = [draft.positions[s] for i, s in enumerate(platform.routers) if i // (width * height) == plane]
        draft.groups.append(Group(f"plane {plane}", box(members, 2.0, 2.6)))
    draft.notes.append(
        f"HyperX {'x'.join(map(str, dims))}: {len(platform.routers)} switches, {platform.params['hosts']} hosts "
        f"each, {platform.params['links']} cable(s) between switches differing in one coordinate; "
        "dimension-ordered routing; a cable in its dimension's colour"
    )
    return draft


def slimfly_layout(platform: Platform) -> Draft:
    """The routers (s, x, y) of the MMS graph in two q x q grids, s = 0 on the left (column x, row y) and s = 1 on
    the right; hosts round them; cables inside a column of one half in that half's colour, cables between the
    halves in a third."""
    q = platform.params["q"]
    pitch = 3.0 + 0.3 * (platform.params["hosts"] or 1)
    draft = Draft({})
    for switch in platform.routers:
        r = int(switch.removeprefix("router-"))
        s, x, y = r // (q * q), (r // q) % q, r % q
        draft.positions[switch] = ((x + s * (q + 1.5)) * pitch, -y * pitch)
        draft.labels[switch] = f"{s}.{x}.{y}"
    hosts = [(h, f"router-{r}", k) for h in platform.host_names for r, k in [router_graph_coordinates(h)]]
    _hosts_round(draft, hosts, 1.0)

    def half(a: int, b: int) -> int:  # the half both routers are in, or 2 for a cable between the halves
        return a // (q * q) if a // (q * q) == b // (q * q) else 2

    draft.route = _dimension_route(draft, _switch_cables(platform, "router-", half))
    for s in (0, 1):
        routers = [r for r in platform.routers if int(r.removeprefix("router-")) // (q * q) == s]
        members: list[Point] = [draft.positions[r] for r in routers]
        draft.groups.append(Group(f"routers (s = {s}, x, y)", box(members, 2.0, 2.6)))
    draft.notes.append(
        f"Slim Fly q = {q}: {len(platform.routers)} routers (MMS graph, diameter 2), {len(platform.host_names)} "
        "hosts; cables inside a column of a half in its colour, between the halves (y = m x + c) in green"
    )
    return draft


def ring_layout(platform: Platform) -> Draft:
    """Any family without a layout of its own: the routers on a circle in their order, each host round the router
    its first link reaches (hosts with no router on the circle themselves); cables as straight lines."""
    draft = Draft({})
    nodes = platform.routers or platform.host_names
    radius = max(3.0, 1.5 * len(nodes) / math.pi)
    for k, node in enumerate(nodes):
        angle = math.pi / 2 - 2 * math.pi * k / len(nodes)
        draft.positions[node] = (radius * math.cos(angle), radius * math.sin(angle))
    attached: dict[str, str] = {}
    hosts_named = set(platform.host_names)
    for link in platform.links.values():
        a, b = link.ends
        for host, other in ((a, b), (b, a)):
            if host in hosts_named and other in draft.positions and other not in hosts_named:
                attached.setdefault(host, other)
    ports: dict[str, int] = {}
    hosts = []
    for host in platform.host_names:
        if host in attached:
            hosts.append((host, attached[host], ports.setdefault(attached[host], 0)))
            ports[attached[host]] += 1
    _hosts_round(draft, hosts, 1.0)
    draft.notes.append(f"{platform.family}: {len(platform.routers)} routers on a circle, hosts round their router")
    return draft
