"""Communication schedules of the apps, as data for the static analyses.

Each schedule is a list of steps; a step is the list of (source rank, destination rank) messages
that are in flight at the same time. The same rules are implemented by the C apps; tests check that
the partners an app reports equal these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from generators.errors import TopologyError

__all__ = [
    "ALLTOALL_ALGORITHMS",
    "alltoall_destinations",
    "alltoall_steps",
    "check_mlfm_allocation",
    "default_transpose_assignment",
    "mlfm_column_offset",
    "mlfm_coordinates",
    "mlfm_destination",
    "transpose_grid_side",
    "transpose_steps",
]

ALLTOALL_ALGORITHMS = ("pairwise", "mlfm")


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


# --- all-to-all: Open MPI's pairwise (shift) pattern and the MLFM partial schedule ------------------------------------
#
# Both are lists of N phases; in phase p rank r sends one block to destination[p][r]. Phase 0 is every rank's own
# block (a local copy). The MLFM schedule (Shimizu, Miwa, Nakashima) runs on an allocation of n layers x l columns x m
# servers per leaf; rank r is server (i, j, k) with r = (i*l + j)*m + k. docs/mlfm-schedule.md derives it and its
# condition 1 <= m <= l - 1 <= d.


def check_mlfm_allocation(n: int, l: int, m: int, ranks: int | None = None) -> None:  # noqa: E741 (the paper's l)
    """Raise ``TopologyError`` unless (n, l, m) is an allocation the MLFM schedule serves (and has ``ranks`` ranks).

    The condition is n >= 1 and 1 <= m <= l - 1: the m servers of a leaf must reach m different other columns at
    once. (The platform adds l <= d + 1, n <= d and m <= the servers per leaf of the layers used.)

    >>> check_mlfm_allocation(3, 4, 2)
    >>> check_mlfm_allocation(2, 3, 3)
    Traceback (most recent call last):
    ...
    generators.errors.TopologyError: MLFM allocation (n=2, l=3, m=3): needs 1 <= m <= l - 1 (m servers per leaf \
send to m different other columns at once)
    """
    for name, value in (("n", n), ("l", l), ("m", m)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TopologyError(f"MLFM allocation: {name} must be an integer >= 1, got {value!r}")
    if not m <= l - 1:
        raise TopologyError(
            f"MLFM allocation (n={n}, l={l}, m={m}): needs 1 <= m <= l - 1 "
            "(m servers per leaf send to m different other columns at once)"
        )
    if ranks is not None and ranks != n * l * m:
        raise TopologyError(f"MLFM allocation (n={n}, l={l}, m={m}) has {n * l * m} servers, not {ranks} ranks")


def mlfm_coordinates(rank: int, l: int, m: int) -> tuple[int, int, int]:  # noqa: E741
    """Server (i, j, k) of ``rank`` in an allocation with l columns and m servers per leaf.

    >>> mlfm_coordinates(23, 4, 3)
    (1, 3, 2)
    """
    return rank // (l * m), rank // m % l, rank % m


def mlfm_column_offset(t: int, k: int, l: int) -> int:  # noqa: E741
    """Column offset of server k's destination in phase class t: 0 for t = 0, else the (t + k)-th other column.

    Other columns are counted cyclically from j + 1, skipping column j itself: t + k + 1 while that is below l,
    t + k + 2 after the wrap (the paper's two cases).

    >>> [mlfm_column_offset(t, 0, 4) for t in range(4)], [mlfm_column_offset(t, 2, 4) for t in range(4)]
    ([0, 2, 3, 5], [0, 5, 6, 7])
    """
    if t == 0:
        return 0
    return t + k + 1 if t + k + 1 < l else t + k + 2


def mlfm_destination(rank: int, phase: int, n: int, l: int, m: int) -> int:  # noqa: E741
    """Destination of ``rank`` in ``phase`` = (s*l + t)*m + u of the MLFM schedule (no validity check).

    Server (i, j, k) sends to ((i + s) % n, (j + offset(t, k)) % l, (k + u) % m).
    """
    i, j, k = mlfm_coordinates(rank, l, m)
    s, t, u = mlfm_coordinates(phase, l, m)
    return (((i + s) % n) * l + (j + mlfm_column_offset(t, k, l)) % l) * m + (k + u) % m


def alltoall_destinations(algorithm: str, ranks: int, shape: tuple[int, int, int] | None = None) -> list[list[int]]:
    """``destinations[p][r]``: where rank r sends in phase p (phase 0: to itself).

    >>> alltoall_destinations("pairwise", 3)
    [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    >>> alltoall_destinations("mlfm", 6, (1, 3, 2))[2]  # (s, t, u) = (0, 1, 0): the next other column
    [4, 3, 0, 5, 2, 1]
    """
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise TopologyError(f"ranks must be an integer >= 1, got {ranks!r}")
    if algorithm == "pairwise":
        return [[(r + p) % ranks for r in range(ranks)] for p in range(ranks)]
    if algorithm == "mlfm":
        if shape is None:
            raise TopologyError("the mlfm schedule needs the allocation shape (n, l, m)")
        n, l, m = shape  # noqa: E741
        check_mlfm_allocation(n, l, m, ranks)
        return [[mlfm_destination(r, p, n, l, m) for r in range(ranks)] for p in range(ranks)]
    raise TopologyError(f"algorithm must be one of {', '.join(ALLTOALL_ALGORITHMS)}, got {algorithm!r}")


def alltoall_steps(
    algorithm: str, ranks: int, shape: tuple[int, int, int] | None = None
) -> list[list[tuple[int, int]]]:
    """The messages of phases 1 .. N-1 (phase 0 is local), as (source, destination) rank pairs."""
    phases = alltoall_destinations(algorithm, ranks, shape)[1:]
    return [[(r, dst) for r, dst in enumerate(phase) if dst != r] for phase in phases]
