"""Communication schedules of the apps, as data for the static analyses.

Each schedule is a list of steps; a step is the list of (source rank, destination rank) messages
that are in flight at the same time. The same rules are implemented by the C apps; tests check that
the partners an app reports equal these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from generators.errors import TopologyError

__all__ = ["default_transpose_assignment", "transpose_grid_side", "transpose_steps"]


def transpose_grid_side(q: int) -> tuple[int, int]:
    """(s, s*q): quadrants per side and blocks per side of the transpose on q^3 ranks (q = s^2)."""
    s = math.isqrt(q)
    if q < 1 or s * s != q:
        raise TopologyError(f"the transpose needs q^3 ranks with q a perfect square (1, 4, 9, ...), got q={q}")
    return s, s * q


def default_transpose_assignment(q: int) -> list[int]:
    """Rank of block b = i*(s*q) + j: the paper's k = (i/4)*32 + (i%4)*4 + (j/4)*16 + (j%4) for q = 4.

    >>> a = default_transpose_assignment(4)
    >>> all(a[i * 8 + j] == (i // 4) * 32 + (i % 4) * 4 + (j // 4) * 16 + j % 4 for i in range(8) for j in range(8))
    True
    """
    s, side = transpose_grid_side(q)
    return [((i // q) * s + j // q) * q * q + (i % q) * q + j % q for i in range(side) for j in range(side)]


def transpose_steps(q: int, algorithm: str, assignment: Sequence[int] | None = None) -> list[list[tuple[int, int]]]:
    """The messages of each step of the transpose (both directions of every exchange).

    ``direct``: one step, block (i, j) <-> (j, i). ``two-step``: step 1 transposes inside each
    quadrant, (a*q + y, b*q + x) <-> (a*q + x, b*q + y); step 2 swaps quadrants (a, b) <-> (b, a).
    """
    _, side = transpose_grid_side(q)
    ranks = list(assignment) if assignment is not None else default_transpose_assignment(q)
    if sorted(ranks) != list(range(side * side)):
        raise TopologyError(f"assignment must be a permutation of 0..{side * side - 1}")

    def holder(i: int, j: int) -> int:
        return ranks[i * side + j]

    def step(partner: dict[tuple[int, int], tuple[int, int]]) -> list[tuple[int, int]]:
        return [(holder(*src), holder(*dst)) for src, dst in partner.items() if src != dst]

    blocks = [(i, j) for i in range(side) for j in range(side)]
    if algorithm == "direct":
        return [step({(i, j): (j, i) for i, j in blocks})]
    if algorithm == "two-step":
        inside = {(i, j): ((i // q) * q + j % q, (j // q) * q + i % q) for i, j in blocks}
        swap = {(i, j): ((j // q) * q + i % q, (i // q) * q + j % q) for i, j in blocks}
        return [step(inside), step(swap)]
    raise TopologyError(f"algorithm must be 'direct' or 'two-step', got {algorithm!r}")
