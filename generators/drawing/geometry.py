"""Plane geometry of the layouts: points, cable paths (curves) and boxes, in layout units (one host pitch)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["Box", "Path2D", "Point", "arc", "box", "scurve", "spread"]

Point = tuple[float, float]
Path2D = tuple[Point, ...]
Box = tuple[float, float, float, float]
"""(x0, y0, x1, y1): lower left and upper right corners."""


def _sampled(curve: np.ndarray) -> Path2D:
    """The rows (x, y) of a sampled curve as a path of plain floats."""
    return tuple((float(x), float(y)) for x, y in curve)


def arc(p: Point, q: Point, offset: Point, points: int = 12) -> Path2D:
    """A quadratic curve from p to q whose middle is displaced by ``offset`` from the chord's middle.

    >>> arc((0.0, 0.0), (2.0, 0.0), (0.0, -0.5), points=3)
    ((0.0, 0.0), (1.0, -0.5), (2.0, 0.0))
    """
    control = np.array([(p[0] + q[0]) / 2 + 2 * offset[0], (p[1] + q[1]) / 2 + 2 * offset[1]])
    t = np.linspace(0.0, 1.0, points)[:, None]
    return _sampled((1 - t) ** 2 * np.array(p) + 2 * t * (1 - t) * control + t**2 * np.array(q))


def scurve(p: Point, q: Point, points: int = 16) -> Path2D:
    """A cubic curve from p to q leaving p and reaching q vertically (layered drawings)."""
    dy = (q[1] - p[1]) * 0.5
    c1, c2 = np.array([p[0], p[1] + dy]), np.array([q[0], q[1] - dy])
    t = np.linspace(0.0, 1.0, points)[:, None]
    return _sampled(
        (1 - t) ** 3 * np.array(p) + 3 * t * (1 - t) ** 2 * c1 + 3 * t**2 * (1 - t) * c2 + t**3 * np.array(q)
    )


def box(points: Sequence[Point], pad: float = 0.6, top: float | None = None) -> Box:
    """The bounding box of ``points`` padded by ``pad`` (``top``: extra room above for a caption).

    >>> box([(0.0, 0.0), (2.0, 1.0)], 0.5, 1.0)
    (-0.5, -0.5, 2.5, 2.0)
    """
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + (pad if top is None else top))


def spread(count: int, x0: float, x1: float) -> list[float]:
    """``count`` evenly spaced positions centred in [x0, x1].

    >>> spread(2, 0.0, 4.0), spread(1, 0.0, 4.0)
    ([1.0, 3.0], [2.0])
    """
    if count <= 1:
        return [(x0 + x1) / 2] * count
    step = (x1 - x0) / count
    return [x0 + step * (i + 0.5) for i in range(count)]
