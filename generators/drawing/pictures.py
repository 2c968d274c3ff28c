"""The pictures as files: one platform to a PNG (structure or heatmap), and every family at a representative size."""

from __future__ import annotations

import math
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from generators.drawing.crop import crop
from generators.drawing.crop import job_nodes
from generators.drawing.elements import Layout
from generators.drawing.layout import layout
from generators.drawing.render import DPI
from generators.drawing.render import render
from generators.errors import TopologyError
from generators.families import FAMILIES
from generators.families import build_platform
from generators.files import atomic_path
from generators.model import Platform

__all__ = ["REPRESENTATIVE", "check_picture", "draw_all_families", "draw_platform"]

#: The parameters each family is drawn with by :func:`draw_all_families`: what it declares (``drawn``).
REPRESENTATIVE: dict[str, dict[str, object]] = {name: dict(spec.drawn) for name, spec in FAMILIES.items()}


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
    crop_to: Collection[str] | None = None,
) -> None:
    """Draw ``platform`` to the PNG ``path`` (written atomically).

    Without ``link_loads``: the structure (hosts as circles, switches as squares, the family's groups).
    With ``link_loads`` (link name -> amount, e.g. bytes or flows): a heatmap, each cable coloured by the
    larger of its two directed loads (unused cables thin and light grey), each node's limiter or fabric load on
    its marker. With ``crop_to`` (a job's hosts): only those hosts and the nodes the loads show their traffic
    crossed (``generators.drawing.crop``). ``TopologyError`` for a link or host the platform does not have (nothing
    is written).
    """
    lay = check_picture(platform, path)
    loads = _check_loads(platform, link_loads) if link_loads is not None else None
    if crop_to is not None:
        lay = crop(lay, job_nodes(lay, crop_to, loads or {}))
    fig = render(platform, lay, loads, title, load_label)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, pil_kwargs={"compress_level": 2})


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
