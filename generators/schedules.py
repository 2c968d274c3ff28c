"""Communication schedules of the apps, as data for the static analyses: the one home of every schedule.

Each schedule is a list of steps; a step is the list of messages that are in flight at the same time,
each a tuple (source rank, destination rank) or, where messages differ in what they carry,
(source rank, destination rank, part): combine's block index, allgather's number of blocks.
The C apps implement the same rules; each app's ``--print-schedule`` prints its messages step by step
as JSON lines, and the tests compare them with these functions on several shapes. Static analyses,
heat maps and predictors call only these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from generators.errors import TopologyError
from generators.mixing import mix

__all__ = [
    "ALLGATHER_ALGORITHMS",
    "ALLTOALL_ALGORITHMS",
    "COMBINE_ALGORITHMS",
    "PipeNode",
    "allgather_steps",
    "alltoall_destinations",
    "alltoall_steps",
    "check_mlfm_allocation",
    "combine_steps",
    "default_transpose_assignment",
    "mlfm_column_offset",
    "mlfm_coordinates",
    "mlfm_destination",
    "pairing_partner",
    "pairing_steps",
    "pipe_node",
    "relabelling",
    "shift_steps",
    "transpose_grid_side",
    "transpose_steps",
]

ALLTOALL_ALGORITHMS = ("pairwise", "mlfm")
COMBINE_ALGORITHMS = ("tree", "snake", "fence")
ALLGATHER_ALGORITHMS = ("ring", "bruck")

Message = tuple[int, ...]
"""(source rank, destination rank) or (source rank, destination rank, part)."""


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


def transpose_steps(q: int, algorithm: str, assignment: Sequence[int] | None = None) -> list[list[Message]]:
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
# servers per leaf; rank r is server (i, j, k) with r = (i*l + j)*m + k. docs/mlfm.md (its section on the partial
# all-to-all schedule) derives it and its condition 1 <= m <= l - 1 <= d.


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


def alltoall_steps(algorithm: str, ranks: int, shape: tuple[int, int, int] | None = None) -> list[list[Message]]:
    """The messages of phases 1 .. N-1 (phase 0 is local), as (source, destination) rank pairs."""
    phases = alltoall_destinations(algorithm, ranks, shape)[1:]
    return [[(r, dst) for r, dst in enumerate(phase) if dst != r] for phase in phases]


def relabelling(ranks: int, seed: int) -> list[int]:
    """``rank_of[l]``, the rank with label l under ``apps/bench/shift --relabel SEED``: Fisher-Yates from the last
    position down, position i swapped with position mix(seed * N + i) mod (i + 1).

    >>> relabelling(5, 0)
    [0, 2, 4, 1, 3]
    """
    rank_of = list(range(ranks))
    for i in range(ranks - 1, 0, -1):
        j = mix(seed * ranks + i) % (i + 1)
        rank_of[i], rank_of[j] = rank_of[j], rank_of[i]
    return rank_of


def shift_steps(ranks: int, shifts: Sequence[int] | None = None, relabel: int | None = None) -> list[list[Message]]:
    """The permutations of ``apps/bench/shift``, one step per shift (default: every shift 1 .. N-1): rank r sends
    to (r + s) mod N, or with ``relabel`` (a seed >= 1; 0 or None: none), the rank with label (label(r) + s) mod N
    (:func:`relabelling`).

    >>> shift_steps(3)
    [[(0, 1), (1, 2), (2, 0)], [(0, 2), (1, 0), (2, 1)]]
    """
    chosen = range(1, ranks) if shifts is None else shifts
    rank_of = relabelling(ranks, relabel) if relabel else list(range(ranks))
    label = {r: l for l, r in enumerate(rank_of)}  # noqa: E741
    return [[(r, rank_of[(label[r] + s) % ranks]) for r in range(ranks)] for s in chosen]


# --- combine: Littlefield's tree, snake and fence on a W x H mesh (apps/combine) -------------------------------------
#
# Rank r is mesh node (x, y) = (r % W, r // W); rank 0 = (0, 0) is the root. A message is (source, destination,
# block): tree sends whole vectors (block 0), snake and fence pipeline the vector in B blocks.


def _tree_steps(width: int, height: int) -> list[list[Message]]:
    """Binomial reduction along x in every row, then along y in column 0; the broadcast retraces it backwards.

    In the reduction step of distance d along a line, the node at c = d mod 2d sends to c - d; the broadcast
    sends the other way. 2 (ceil(log2 W) + ceil(log2 H)) steps.

    >>> _tree_steps(3, 1)
    [[(1, 0, 0)], [(2, 0, 0)], [(0, 2, 0)], [(0, 1, 0)]]
    """

    def pairs(k: int, along_x: bool) -> list[tuple[int, int]]:
        """(upper, lower) rank of every pair at distance 2^k: along each row, or along column 0."""
        d = 1 << k
        if along_x:
            return [(y * width + c, y * width + c - d) for y in range(height) for c in range(d, width, 2 * d)]
        return [(c * width, (c - d) * width) for c in range(d, height, 2 * d)]

    def reduce(k: int, along_x: bool) -> list[Message]:
        return [(upper, lower, 0) for upper, lower in pairs(k, along_x)]

    def broadcast(k: int, along_x: bool) -> list[Message]:
        return [(lower, upper, 0) for upper, lower in pairs(k, along_x)]

    kx, ky = (width - 1).bit_length(), (height - 1).bit_length()  # ceil(log2 n)
    return (
        [reduce(k, True) for k in range(kx)]
        + [reduce(k, False) for k in range(ky)]
        + [broadcast(k, False) for k in reversed(range(ky))]
        + [broadcast(k, True) for k in reversed(range(kx))]
    )


@dataclass(frozen=True)
class PipeNode:
    """A node of the snake or fence pipeline: partial block b goes to ``parent`` in step b + ``send_offset``;
    final block b arrives from the parent (the root: is complete) in step b + ``final_offset`` and goes on to
    the ``children`` in the next step. Both offsets change by one from a node to its child, so every send
    meets its receive in the same step."""

    parent: int  # -1 at the root
    children: tuple[int, ...]
    send_offset: int
    final_offset: int


def pipe_node(algorithm: str, width: int, height: int, rank: int) -> PipeNode:
    """The pipeline node of ``rank`` (apps/combine's snake_node and fence_node).

    snake: the boustrophedon path (even rows left to right, odd rows right to left); node i's parent is
    node i - 1. fence: partial blocks go down every column, then left along the bottom row y = 0; columns are
    staggered so that the two inputs of a bottom-row node arrive in the same step.

    >>> pipe_node("snake", 3, 2, 5)  # (2, 1): index 3 of the path 0 1 2 5 4 3
    PipeNode(parent=2, children=(4,), send_offset=2, final_offset=7)
    >>> pipe_node("fence", 3, 2, 1)  # (1, 0): from (1, 1) and (2, 0), to (0, 0)
    PipeNode(parent=0, children=(4, 2), send_offset=2, final_offset=3)
    """
    x, y = rank % width, rank // width
    if algorithm == "snake":
        nodes = width * height

        def along(i: int) -> int:  # rank of path index i
            row, j = divmod(i, width)
            return row * width + (j if row % 2 == 0 else width - 1 - j)

        i = y * width + (x if y % 2 == 0 else width - 1 - x)
        children = (along(i + 1),) if i + 1 < nodes else ()
        return PipeNode(along(i - 1) if i > 0 else -1, children, nodes - 1 - i, nodes - 2 + i)
    if algorithm == "fence":
        parent = rank - width if y > 0 else rank - 1 if x > 0 else -1
        children = ((rank + width,) if y + 1 < height else ()) + ((rank + 1,) if y == 0 and x + 1 < width else ())
        return PipeNode(parent, children, (width - 1 - x) + (height - 1 - y), width + height - 3 + x + y)
    raise TopologyError(f"pipelined algorithm must be 'snake' or 'fence', got {algorithm!r}")


def combine_steps(algorithm: str, width: int, height: int, blocks: int = 1) -> list[list[Message]]:
    """The messages (source, destination, block) of every global step of ``algorithm`` on a W x H mesh.

    Snake and fence send partial block b to the parent in step b + send_offset and final block b to the
    children in step b + final_offset + 1: 2P + B - 3 steps (snake) or 2W + 2H + B - 5 (fence) for P >= 2.
    One node: no step.

    >>> [len(combine_steps(a, 4, 3, 5)) for a in COMBINE_ALGORITHMS]
    [8, 26, 14]
    """
    for name, value in (("width", width), ("height", height), ("blocks", blocks)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TopologyError(f"combine: {name} must be an integer >= 1, got {value!r}")
    nodes = width * height
    if algorithm == "tree":
        return _tree_steps(width, height)
    if algorithm not in COMBINE_ALGORITHMS:
        raise TopologyError(f"algorithm must be one of {', '.join(COMBINE_ALGORITHMS)}, got {algorithm!r}")
    if nodes == 1:
        return []
    count = 2 * nodes + blocks - 3 if algorithm == "snake" else 2 * width + 2 * height + blocks - 5
    steps: list[list[Message]] = [[] for _ in range(count)]
    for rank in range(nodes):
        node = pipe_node(algorithm, width, height, rank)
        for block in range(blocks):
            if node.parent >= 0:
                steps[block + node.send_offset].append((rank, node.parent, block))
            for child in node.children:
                steps[block + node.final_offset + 1].append((rank, child, block))
    return steps


# --- bisection pairing: every node exchanges with its antipode (apps/bisection_pairing) ------------------------------


def pairing_partner(rank: int, dims: Sequence[int]) -> int:
    """The antipode of ``rank`` on a torus of ``dims`` (first dimension fastest): (c_i + L_i/2) mod L_i in every
    dimension, the furthest node.

    >>> [pairing_partner(k, (4, 3)) for k in range(12)]  # (x, y) -> (x + 2 mod 4, y + 1 mod 3)
    [6, 7, 4, 5, 10, 11, 8, 9, 2, 3, 0, 1]
    """
    partner, stride, rest = 0, 1, rank
    for length in dims:
        rest, c = divmod(rest, length)
        partner += (c + length // 2) % length * stride
        stride *= length
    return partner


def pairing_steps(dims: Sequence[int]) -> list[list[Message]]:
    """One step: every node sends to its antipode (the app repeats it for every chunk of every round)."""
    return [[(k, pairing_partner(k, dims)) for k in range(math.prod(dims))]]


# --- allgather: Sugiyama et al.'s Ring (Fig. 1) and Bruck (Fig. 2) (apps/allgather) ---------------------------------


def allgather_steps(algorithm: str, ranks: int) -> list[list[Message]]:
    """The messages (source, destination, blocks) of every step of the allgather on P ranks.

    ring: P - 1 steps; in each, rank r sends one block to r + 1. bruck: ceil(log2 P) steps; in step i (distance
    d = 2^i) rank r sends min(d, P - d) blocks to r - d.

    >>> [step[1] for step in allgather_steps("bruck", 5)]
    [(1, 0, 1), (1, 4, 2), (1, 2, 1)]
    """
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 2:
        raise TopologyError(f"the allgather needs an integer >= 2 ranks, got {ranks!r}")
    if algorithm == "ring":
        return [[(r, (r + 1) % ranks, 1) for r in range(ranks)] for _ in range(ranks - 1)]
    if algorithm == "bruck":
        distances = [1 << i for i in range((ranks - 1).bit_length())]
        return [[(r, (r - d) % ranks, min(d, ranks - d)) for r in range(ranks)] for d in distances]
    raise TopologyError(f"algorithm must be one of {', '.join(ALLGATHER_ALGORITHMS)}, got {algorithm!r}")
