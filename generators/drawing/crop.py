"""A layout cropped to one job: its hosts and the switches and hosts its traffic crossed, nothing else.

A heatmap of a 24-node job on a machine of thousands of nodes is mostly idle cables; :func:`crop` keeps the nodes
that matter to the job (its own hosts, every node at either end of a cable that carried something, every node whose
limiter, port, fabric or intra-node link did), the cables between them, and the family's boxes that overlap them,
cut to their extent. The picture is then sized from what is left (``render``), so the job fills it.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from generators.drawing.elements import Layout
from generators.errors import TopologyError

__all__ = ["crop", "job_nodes"]

_MARGIN = 1.0
"""Layout units kept around the job's nodes when a family's box is cut to them."""


def job_nodes(lay: Layout, hosts: Collection[str], loads: Mapping[str, float]) -> set[str]:
    """The nodes of ``lay`` a job on ``hosts`` touches: those hosts, the two ends of every cable whose ``loads`` are
    above 0, and every node whose own links' are. ``TopologyError`` for a host the layout does not have."""
    unknown = [host for host in hosts if host not in lay.positions]
    if unknown:
        raise TopologyError(f"cannot crop the picture to host {unknown[0]!r}: the platform has no such host")
    kept = set(hosts)
    for edge in lay.edges:
        if any(loads.get(link, 0.0) > 0 for link in edge.links):
            kept.update((edge.a, edge.b))
    kept.update(node for node, links in lay.node_links.items() if any(loads.get(link, 0.0) > 0 for link in links))
    return kept


def crop(lay: Layout, nodes: Collection[str]) -> Layout:
    """``lay`` with only ``nodes`` (and the cables between two of them), the family's boxes that overlap their extent
    cut to it, and a note saying what was left out. ``lay`` itself when ``nodes`` are all of it."""
    kept = set(nodes)
    if not kept:
        raise TopologyError("cannot crop a picture to no nodes")
    if kept >= set(lay.positions):
        return lay
    xs = [lay.positions[node][0] for node in kept]
    ys = [lay.positions[node][1] for node in kept]
    x0, y0, x1, y1 = min(xs) - _MARGIN, min(ys) - _MARGIN, max(xs) + _MARGIN, max(ys) + _MARGIN
    groups = []
    for group in lay.groups:
        gx0, gy0, gx1, gy1 = group.box
        if gx0 <= x1 and x0 <= gx1 and gy0 <= y1 and y0 <= gy1:
            groups.append(replace(group, box=(max(gx0, x0), max(gy0, y0), min(gx1, x1), min(gy1, y1))))
    hosts = tuple(host for host in lay.hosts if host in kept)
    switches = tuple(switch for switch in lay.switches if switch in kept)
    counts = f"{len(hosts)} of {len(lay.hosts)} hosts"
    if lay.switches:
        counts += f" and {len(switches)} of {len(lay.switches)} switches"
    note = f"Cropped to the job: {counts} (the job's hosts and every node its traffic crossed)."
    return replace(
        lay,
        positions=MappingProxyType({node: at for node, at in lay.positions.items() if node in kept}),
        hosts=hosts,
        switches=switches,
        edges=tuple(edge for edge in lay.edges if edge.a in kept and edge.b in kept),
        node_links=MappingProxyType({node: links for node, links in lay.node_links.items() if node in kept}),
        groups=tuple(groups),
        labels=MappingProxyType({node: text for node, text in lay.labels.items() if node in kept}),
        colors=MappingProxyType({node: color for node, color in lay.colors.items() if node in kept}),
        notes=(*lay.notes, note),
    )
