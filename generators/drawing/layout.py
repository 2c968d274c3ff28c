"""From a platform's model to its :class:`~generators.drawing.elements.Layout`: read the model's links, place the
nodes with the family's own layout, and make one edge of every cable."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from types import MappingProxyType

from generators.drawing.direct import hyperx_layout
from generators.drawing.direct import ring_layout
from generators.drawing.direct import slimfly_layout
from generators.drawing.elements import Draft
from generators.drawing.elements import Edge
from generators.drawing.elements import Layout
from generators.drawing.grids import torus_layout
from generators.drawing.style import si
from generators.drawing.switched import crossbar_layout
from generators.drawing.switched import dragonfly_layout
from generators.drawing.switched import enterprise_layout
from generators.drawing.switched import fattree_layout
from generators.drawing.switched import mlfm_layout
from generators.drawing.switched import threequads_layout
from generators.errors import TopologyError
from generators.model import CABLE
from generators.model import Platform

__all__ = ["FAMILY_LAYOUTS", "layout"]

#: The layout function of each family, by ``platform.family``.
FAMILY_LAYOUTS: dict[str, Callable[[Platform], Draft]] = {
    "crossbar": crossbar_layout,
    "dragonfly": dragonfly_layout,
    "enterprise": enterprise_layout,
    "fattree": fattree_layout,
    "hyperx": hyperx_layout,
    "mesh": torus_layout,
    "mlfm": mlfm_layout,
    "slimfly": slimfly_layout,
    "threequads": threequads_layout,
    "tofu": torus_layout,
    "torus": torus_layout,
}


def _split_links(platform: Platform) -> tuple[dict[tuple[str, str], list[str]], dict[str, list[str]]]:
    """Cables (node pair -> its directed links, in the model's order) and each node's own links."""
    cables: dict[tuple[str, str], list[str]] = {}
    inside: dict[str, list[str]] = {}
    for name, link in platform.links.items():
        a, b = link.ends
        if link.kind == CABLE:
            cables.setdefault((b, a) if (b, a) in cables else (a, b), []).append(name)
        else:
            inside.setdefault(a, []).append(name)
    return cables, inside


def _capacity_note(
    platform: Platform, cables: Mapping[tuple[str, str], list[str]], inside: Mapping[str, list[str]]
) -> str:
    """One line on what the model's capacities are: cable bandwidths, node limiters and fabrics."""
    per_bandwidth: dict[float, int] = {}
    for links in cables.values():
        bandwidth = min(platform.links[link].bandwidth for link in links)
        per_bandwidth[bandwidth] = per_bandwidth.get(bandwidth, 0) + 1
    parts = [", ".join(f"{n} x {si(bw)}B/s" for bw, n in sorted(per_bandwidth.items()))]
    if len(per_bandwidth) > 1:
        parts[0] += " (wider line: more bandwidth)"
    parts[0] = "cables (each way): " + parts[0]
    for kind, what in (
        ("limiter", "NBL limiter (in + out)"),
        ("fabric", "fabric"),
        ("port", "FATPIPE endpoint port (routing-graph artefact, never limits)"),
        ("shm", "FATPIPE intra-node path (ranks of one host)"),
    ):
        own = {n: [platform.links[k] for k in links if platform.links[k].kind == kind] for n, links in inside.items()}
        owners = sorted(n for n, links in own.items() if links)
        if owners:
            caps = sorted({link.bandwidth for n in owners for link in own[n]})
            cap = ", ".join(f"{si(c)}B/s" for c in caps)
            parts.append(
                f"{what} on {len(owners)} {'hosts' if owners[0] in platform.host_names else 'switches'}: {cap}"
            )
    return "; ".join(parts)


def layout(platform: Platform) -> Layout:
    """Place every node of ``platform`` and turn each of its cables into one edge.

    A family without a layout of its own (:data:`FAMILY_LAYOUTS`) gets the generic one (``direct.ring_layout``).

    >>> from generators.topologies.crossbar import crossbar
    >>> lay = layout(crossbar(3, nbl=1.0))
    >>> sorted(lay.positions), [e.links for e in lay.edges][0], dict(lay.node_links)["host-0"]
    (['host-0', 'host-1', 'host-2', 'xbar'], ('host-0_to_xbar', 'xbar_to_host-0'), ('host-0_nbl',))
    """
    family_layout = FAMILY_LAYOUTS.get(platform.family, ring_layout)  # a new family is drawn before it has its own
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
