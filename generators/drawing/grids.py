"""Layout of the torus-like families (torus, mesh, Tofu): a grid of grids read from ``platform.grid``.

The two dimensions of the inner block are one unit apart; each outer level is a grid of the blocks below
it, two dimensions (across, up) per level. Tofu's inner block is its 2x3x2 (A, B, C) unit: B across, the
A x C 4-cycle up.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from generators.drawing.elements import Draft
from generators.drawing.elements import Group
from generators.drawing.elements import Route
from generators.drawing.elements import host_index
from generators.drawing.geometry import Path2D
from generators.drawing.geometry import Point
from generators.drawing.geometry import arc
from generators.drawing.geometry import box
from generators.drawing.style import palette_color
from generators.model import Platform
from generators.topologies.tofu import UNIT
from generators.topologies.torus import coordinates

__all__ = ["torus_layout"]

_LEVEL_GAPS = (0.0, 2.0, 3.4, 5.0, 7.0)  # space between the blocks of level 1, 2 ... (the last for all above)
_INNER_ARC = 0.27  # apex of an inner long cable (wrap) below its row / left of its column
_LANES = (0.22, 0.42)  # heights above a row (right of a column) of the cables between neighbouring blocks
_WRAP_LANES = (0.5, 0.68)  # ... and of the wrap-around cables between blocks
_ASPECT = 1.6  # width / height that a lone outer dimension aims the picture at

# The rows of the Tofu unit: (A, C) in the order of the 4-cycle that the 2x2 A x C mesh is.
_TOFU_AC_ROWS = {(0, 0): 0, (1, 0): 1, (1, 1): 2, (0, 1): 3}
_TOFU_NAMES = ("X", "Y", "Z", "A", "B", "C")
_TOFU_UNIT_DIMS = (3, 4, 5)  # A, B, C: the dimensions inside a Tofu unit, after X, Y, Z

Outer = list[tuple[int | None, int | None]]
"""Per outer level, its (across, up) dimensions (None: unused)."""


@dataclass
class _Grid:
    """Nested grid placement: an inner block (``inner(coords)``, one unit pitch, size ``extent``), then each
    outer level a grid of the blocks below; ``outer[k]`` is the (horizontal, vertical) dimension of level k + 1
    (None: unused)."""

    dims: tuple[int, ...]
    inner: Callable[[tuple[int, ...]], Point]
    extent: Point
    outer: Outer
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

    def levels(self, orient: str) -> list[int]:
        """The levels that place a dimension across (``"h"``) or up (``"v"``)."""
        side = 0 if orient == "h" else 1
        return [k for k, pair in enumerate(self.outer, start=1) if pair[side] is not None]


def _nest(
    dims: tuple[int, ...], inner: Callable[[tuple[int, ...]], Point], extent: Point, outer_dims: Sequence[int]
) -> _Grid:
    """Pair ``outer_dims`` (across, up) level by level; a lone last one goes where the picture stays squarer."""
    outer: Outer = []
    for start in range(0, len(outer_dims), 2):
        pair = list(outer_dims[start : start + 2])
        if len(pair) == 2:
            outer.append((pair[0], pair[1]))
        else:
            options = [[*outer, (pair[0], None)], [*outer, (None, pair[0])]]

            def badness(option: Outer) -> float:
                w, h = _Grid(dims, inner, extent, option).extents[-1]
                return abs(math.log((w + 1.0) / (h + 1.0) / _ASPECT))

            outer = min(options, key=badness)
    return _Grid(dims, inner, extent, outer)


@dataclass(frozen=True)
class _Shape:
    """What a torus-like platform is drawn as: its dimensions, their names, the inner block's and the grid."""

    dims: tuple[int, ...]
    wraps: tuple[bool, ...]
    names: tuple[str, ...]
    inner_dims: tuple[int, ...]
    grid: _Grid
    tofu: bool

    @property
    def outer_dims(self) -> list[int]:
        return [d for d in range(len(self.dims)) if d not in self.inner_dims]

    def describe(self, dim: int, arrow: str) -> str:
        """``d0 (4, ring) across``: a dimension, its length and shape, and where it goes in the picture."""
        n = self.dims[dim]
        shape = "ring" if self.wraps[dim] and n > 2 else "mesh" if n > 2 else "one cable" if n == 2 else "flat"
        return f"{self.names[dim]} ({n}, {shape}) {arrow}"


def _shape(platform: Platform) -> _Shape:
    """The picture's shape of a torus, mesh or Tofu platform, from the grid its family gives it."""
    assert platform.grid is not None  # the torus-like families give their grid
    dims, wraps = platform.grid.dims, platform.grid.wraps
    if platform.family == "tofu":
        a, b, c = _TOFU_UNIT_DIMS

        def in_unit(co: tuple[int, ...]) -> Point:  # B across, the A x C 4-cycle up
            return (float(co[b]), float(_TOFU_AC_ROWS[(co[a], co[c])]))

        grid = _nest(dims, in_unit, (dims[b] - 1.0, 3.0), range(a))  # units placed by X, Y, Z
        return _Shape(dims, wraps, _TOFU_NAMES, _TOFU_UNIT_DIMS, grid, tofu=True)
    extent = (dims[0] - 1.0, dims[1] - 1.0 if len(dims) > 1 else 0.0)
    grid = _nest(dims, lambda co: (float(co[0]), float(co[1]) if len(co) > 1 else 0.0), extent, range(2, len(dims)))
    names = tuple(f"d{i}" for i in range(len(dims)))
    return _Shape(dims, wraps, names, tuple(range(min(2, len(dims)))), grid, tofu=False)


def _cable_route(
    shape: _Shape, positions: dict[str, Point], local: dict[str, Point], coords_of: dict[str, tuple[int, ...]]
) -> Route:
    """Cables coloured by dimension. Inside a block: straight between neighbours, an arc below the row (left of
    the column) for a wrap-around. Between blocks: along a lane just above the node's row (right of its column),
    one lane per node position and level, wrap-arounds in higher lanes."""
    grid = shape.grid
    lane_x = {x: i for i, x in enumerate(sorted({p[0] for p in local.values()}))}
    lane_y = {y: i for i, y in enumerate(sorted({p[1] for p in local.values()}))}
    levels = {"h": grid.levels("h"), "v": grid.levels("v")}

    def lane(band: tuple[float, float], rank: int, ranks: int, level: int, orient: str) -> float:
        total = ranks * len(levels[orient])
        i = rank * len(levels[orient]) + levels[orient].index(level)
        return band[0] + (band[1] - band[0]) * (i / (total - 1) if total > 1 else 0.5)

    def route(a: str, b: str) -> tuple[Path2D | None, str, str | None]:
        ca, cb = coords_of[a], coords_of[b]
        moved = [d for d in range(len(shape.dims)) if ca[d] != cb[d]]
        if len(moved) != 1:
            return None, "cable", None
        d = moved[0]
        kind = "wrap" if abs(ca[d] - cb[d]) > 1 else "cable"
        color = palette_color(d)
        p, q = positions[a], positions[b]
        level, orient = grid.level_of(d)
        if level == 0:
            if math.dist(p, q) < 1.01:
                return None, kind, color
            offset = (0.0, -_INNER_ARC) if abs(p[1] - q[1]) < 1e-9 else (-_INNER_ARC, 0.0)
            return arc(p, q, offset), kind, color
        band = _WRAP_LANES if kind == "wrap" else _LANES
        if orient == "h":
            up = lane(band, lane_x[local[a][0]], len(lane_x), level, orient)
            s = 1.0 if q[0] > p[0] else -1.0
            return (p, (p[0] + 0.2 * s, p[1] + up), (q[0] - 0.2 * s, q[1] + up), q), kind, color
        right = lane(band, lane_y[local[a][1]], len(lane_y), level, orient)
        s = 1.0 if q[1] > p[1] else -1.0
        return (p, (p[0] + right, p[1] + 0.2 * s), (q[0] + right, q[1] - 0.2 * s), q), kind, color

    return route


def _block_groups(shape: _Shape, positions: dict[str, Point], coords_of: dict[str, tuple[int, ...]]) -> list[Group]:
    """One box per block (Tofu: per unit), captioned with its outer coordinates; none when there is one block."""
    outer_dims = shape.outer_dims
    if not shape.tofu and all(shape.dims[d] <= 1 for d in outer_dims):
        return []
    blocks: dict[tuple[int, ...], list[Point]] = {}
    for h, coords in coords_of.items():
        blocks.setdefault(tuple(coords[d] for d in outer_dims), []).append(positions[h])
    groups = []
    for key, members in blocks.items():
        caption = ("unit " if shape.tofu else "") + "(" + ",".join(map(str, key)) + ")"
        groups.append(Group(caption, box(members, 0.5, 1.05), "#4c72b0" if shape.tofu else "#888888"))
    return groups


def _notes(shape: _Shape) -> list[str]:
    """What the axes of the picture are, and what dashed cables and lanes mean."""
    dims, grid = shape.dims, shape.grid
    axes = []
    for k, (hd, vd) in enumerate(grid.outer, start=1):
        parts = [shape.describe(x, arrow) for x, arrow in ((hd, "across"), (vd, "up")) if x is not None]
        axes.append(("units: " if shape.tofu and k == 1 else f"level {k} blocks: ") + ", ".join(parts))
    if shape.tofu:
        notes = [
            f"Tofu {'x'.join(map(str, dims[:3]))} units of {'x'.join(map(str, UNIT))} nodes (boxed, unit (x,y,z)): "
            f"inside a unit {shape.describe(_TOFU_UNIT_DIMS[1], 'across')}, rows (A,C) = 00, 10, 11, 01 upwards "
            "(the 2x2 A x C mesh is a 4-cycle)",
            "; ".join(axes),
        ]
    else:
        kind = "torus" if all(shape.wraps) else "mesh" if not any(shape.wraps) else "mixed mesh/torus"
        arrows = zip(shape.inner_dims, ("across", "up"), strict=False)  # a 1-D torus has no "up"
        inner = ", ".join(shape.describe(x, arrow) for x, arrow in arrows)
        notes = [f"{kind} {'x'.join(map(str, dims))}: in a block {inner}" + ("; " + "; ".join(axes) if axes else "")]
        if shape.outer_dims:
            notes[0] += " (block captions: coordinates " + ",".join(shape.names[d] for d in shape.outer_dims) + ")"
    lines = []
    if any(w and n > 2 for w, n in zip(shape.wraps, dims, strict=True)):
        lines.append("dashed: wrap-around cables (arcs inside a block, higher lanes between blocks)")
    if grid.outer:
        lines.append(
            "cables between the same node of neighbouring blocks run in lanes just above its row / right of its column"
        )
    if lines:
        notes.append("; ".join(lines))
    return notes


def torus_layout(platform: Platform) -> Draft:
    """A grid of grids: dims 0, 1 inside a block (one unit apart), dims 2, 3 a grid of blocks, dims 4, 5 a grid of
    those ...; Tofu: the 2x3x2 (A, B, C) unit inside (B across, the A x C 4-cycle up), X, Y, then Z outside.

    Inner wrap-around cables are dashed arcs below their row (left of their column); a cable between the same
    node of two neighbouring blocks runs in a lane just above the node's row (right of its column), one lane per
    node position, and a wrap-around between blocks in a higher, dashed lane."""
    shape = _shape(platform)
    positions: dict[str, Point] = {}
    local: dict[str, Point] = {}  # position inside the block
    coords_of: dict[str, tuple[int, ...]] = {}
    labels: dict[str, str] = {}
    for h in platform.host_names:
        coords = coordinates(host_index(h), shape.dims)
        coords_of[h] = coords
        positions[h] = shape.grid.position(coords)
        local[h] = shape.grid.inner(coords)
        labels[h] = str(host_index(h))
    legend = [(f"{shape.names[d]} cables", palette_color(d)) for d in range(len(shape.dims)) if shape.dims[d] > 1]
    return Draft(
        positions,
        _block_groups(shape, positions, coords_of),
        labels,
        notes=_notes(shape),
        legend=legend,
        route=_cable_route(shape, positions, local, coords_of),
    )
