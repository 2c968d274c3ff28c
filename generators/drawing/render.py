"""Drawing a :class:`~generators.drawing.elements.Layout` with matplotlib: a structure picture, or a heatmap of
link loads. Everything is sized from the layout's extent, so that any platform gets a legible, bounded figure."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from generators.drawing.elements import Layout
from generators.drawing.style import CABLE
from generators.drawing.style import HOST
from generators.drawing.style import SWITCH
from generators.drawing.style import si
from generators.model import NODE_LINK_SUFFIXES
from generators.model import Platform

__all__ = ["DPI", "render"]

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
_OUTLINE = "#222222"  # marker edges, switch labels
_DASHED = (0, (3, 2))
DPI = 110
_MAX_WIDTH_IN, _MAX_HEIGHT_IN, _MAX_UNIT_IN = 22.0, 18.0, 0.42  # figure limits; a layout unit is one host pitch
_CABLE_STYLES = (("cable", "solid"), ("wrap", _DASHED))  # wrap-around cables dashed


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


@dataclass(frozen=True)
class _Sizes:
    """Sizes in points: ``unit`` points per layout unit (the scale of the picture), and each marker, line and
    text size a fraction of it, kept within legible bounds."""

    unit: float
    host: float
    switch: float
    line: float
    label: float
    caption: float

    @classmethod
    def at(cls, unit: float) -> _Sizes:
        return cls(
            unit,
            host=_clamp(0.42 * unit, 1.5, 12.0),
            switch=_clamp(0.62 * unit, 3.0, 16.0),
            line=_clamp(0.05 * unit, 0.3, 1.4),
            label=_clamp(0.3 * unit, 0.0, 7.0),
            caption=_clamp(0.38 * unit, 4.0, 9.0),
        )


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
    fig = Figure(figsize=(fig_w, fig_h), dpi=DPI)
    left = (fig_w - side - plot_w) / 2
    ax = fig.add_axes((left / fig_w, footer / fig_h, plot_w / fig_w, plot_h / fig_h))
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return fig, ax, _Sizes.at(scale * 72), notes


def _draw_groups(ax: Any, lay: Layout, sizes: _Sizes) -> None:
    """The family's boxes, captioned when the captions are legible or few."""
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
    for kind, style in _CABLE_STYLES:
        chosen = [(e, bw) for e, bw in zip(lay.edges, bandwidth, strict=True) if e.kind == kind]
        if chosen:
            widths = [sizes.line * min(1 + 0.5 * math.log2(bw / thinnest), 4.0) for _, bw in chosen]
            colors = [e.color or CABLE for e, _ in chosen]
            paths = [e.path for e, _ in chosen]
            ax.add_collection(
                LineCollection(paths, colors=colors, linewidths=widths, linestyles=style, alpha=0.8, zorder=2)
            )


def _draw_heat_edges(ax: Any, lay: Layout, edge_load: list[float], norm: Normalize, sizes: _Sizes) -> None:
    """Unused cables thin and light grey; used ones coloured by load, the heaviest drawn last."""
    for kind, style in _CABLE_STYLES:
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
        (lay.hosts, "o", sizes.host, HOST),
        (lay.switches, "s", sizes.switch, SWITCH),
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
            edgecolors=_OUTLINE,
            linewidths=_clamp(size / 12, 0.2, 0.7),
            zorder=4,
        )


def _draw_labels(ax: Any, lay: Layout, sizes: _Sizes) -> None:
    """Short node labels when they are legible: switches beside their marker, hosts below theirs."""
    if sizes.label < 4.0 or len(lay.positions) > 400:
        return
    beside = {
        "xytext": (sizes.switch / 2 + 1.5, 0),
        "ha": "left",
        "va": "center",
        "fontsize": min(sizes.label * 1.2, 8.0),
        "color": _OUTLINE,
        "bbox": {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8},
    }
    below = {
        "xytext": (0, -sizes.host / 2 - 1),
        "ha": "center",
        "va": "top",
        "fontsize": sizes.label,
        "color": "#333333",
    }
    switches = set(lay.switches)
    for n, text in lay.labels.items():
        style = beside if n in switches else {**below, "rotation": 0 if len(text) <= 3 else 90}
        ax.annotate(text, lay.positions[n], textcoords="offset points", zorder=5, **style)


def _marker(marker: str, face: Any, label: str) -> Line2D:
    """A legend entry showing a node marker."""
    return Line2D([], [], marker=marker, ls="none", color=face, markeredgecolor=_OUTLINE, label=label)


def _legend(platform: Platform, lay: Layout, heat: bool) -> list[Line2D]:
    """Legend entries: the node kinds, the cable kinds, and in a heatmap what a node's colour means."""
    handles = [_marker("o", "white" if heat else HOST, f"host ({len(lay.hosts)})")]
    if lay.switches:
        handles.append(_marker("s", "white" if heat else SWITCH, f"switch / router ({len(lay.switches)})"))
    cable = "cable: the larger of its two directed loads" if heat else "cable, both directions"
    handles.append(Line2D([], [], color=_HEAT(0.5) if heat else CABLE, lw=1.2, label=f"{cable} ({len(lay.edges)})"))
    if heat:
        handles.append(Line2D([], [], color=_UNUSED, lw=1.0, label="unused cable"))
    if any(e.kind == "wrap" for e in lay.edges):
        handles.append(Line2D([], [], color=CABLE, lw=1.2, ls=_DASHED, label="wrap-around cable"))
    if heat and lay.node_links:
        kinds = sorted(
            {NODE_LINK_SUFFIXES[platform.links[link].kind] for links in lay.node_links.values() for link in links}
        )
        text = "node colour: load of its " + " / ".join(f"_{k}" for k in kinds) + " link"
        handles.append(_marker("o", _HEAT(0.6), text))
    if not heat:
        handles += [Line2D([], [], color=color, lw=2, label=label) for label, color in lay.legend]
    return handles


def _heading(platform: Platform, lay: Layout, title: str | None, peak: str | None) -> str:
    """``title``, or what the picture shows: the platform, its counts and (heatmap, ``peak`` given) the largest
    load."""
    counts = [f"{len(lay.hosts)} hosts"]
    if lay.switches:
        counts.append(f"{len(lay.switches)} switch{'es' if len(lay.switches) > 1 else ''}")
    counts.append(f"{len(lay.edges)} cables")
    heading = title or f"{platform.name} ({platform.family}): " + ", ".join(counts)
    if peak is not None and title is None:
        heading += f" — link loads (max {peak})"
    return heading


def _draw_loads(ax: Any, lay: Layout, loads: Mapping[str, float], sizes: _Sizes) -> Normalize:
    """The heatmap's cables and nodes, each cable at the larger of its two directed loads; return the colour
    scale (0 to the largest load)."""
    edge_load = [max(loads.get(link, 0.0) for link in e.links) for e in lay.edges]
    node_load = {n: max(loads.get(link, 0.0) for link in links) for n, links in lay.node_links.items()}
    peak = max([*edge_load, *node_load.values(), 0.0])
    norm = Normalize(0.0, peak if peak > 0 else 1.0)
    _draw_heat_edges(ax, lay, edge_load, norm, sizes)
    _draw_nodes(ax, lay, node_load, norm, sizes)
    return norm


def render(
    platform: Platform, lay: Layout, loads: Mapping[str, float] | None, title: str | None, load_label: str
) -> Figure:
    """The figure of ``lay``: its structure, or with ``loads`` (link -> amount in ``load_label``) a heatmap."""
    heat = loads is not None
    fig, ax, sizes, notes = _frame(lay, heat)
    _draw_groups(ax, lay, sizes)
    norm = None
    if loads is None:
        _draw_structure_edges(ax, platform, lay, sizes)
        _draw_nodes(ax, lay, None, None, sizes)
    else:
        norm = _draw_loads(ax, lay, loads, sizes)
    _draw_labels(ax, lay, sizes)

    handles = _legend(platform, lay, heat)
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=min(len(handles), 4),
        fontsize=8,
        frameon=False,
        bbox_to_anchor=(0.5, 0.0),
    )
    fig_w, fig_h = fig.get_size_inches()
    heading = _heading(platform, lay, title, None if norm is None else f"{si(norm.vmax)}{load_label}")
    fig.text(0.5, 1 - 0.3 / fig_h, heading, ha="center", va="center", fontsize=11, weight="bold")
    for i, note in enumerate(notes):
        fig.text(0.5, 1 - (0.58 + 0.19 * i) / fig_h, note, ha="center", va="center", fontsize=8, color="#333333")
    if norm is not None:
        plot_h = ax.get_position().height * fig_h
        cax = fig.add_axes(((fig_w - 1.0) / fig_w, 0.85 / fig_h, 0.18 / fig_w, max(plot_h * 0.6, 1.0) / fig_h))
        fig.colorbar(ScalarMappable(norm=norm, cmap=_HEAT), cax=cax).set_label(load_label)
    return fig
