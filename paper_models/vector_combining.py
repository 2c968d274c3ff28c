"""Littlefield (1992): the NBL communication model and the Tree, Snake and Fence vector-combining models.

Source: R. J. Littlefield, *Modeling Node Bandwidth Limits and Their Effect on Vector Combining Algorithms*,
PNL-SA-20425 (1992), Sect. 2, 4.1, 4.2 and the Appendix. A node that has ``L`` links nominally active in one step
takes (Sect. 2)

    T(L) = L*alpha + f(L)*beta*S

to send its ``L`` messages of ``S`` doubles; ``f`` is the NBL function (``f(1) = 1``; ``f(L) = 1``: perfect overlap,
the *standard* model; ``f(L) = L``: no overlap, the *nominal* NBL model). The busiest node of a step also combines
``S`` elements at ``c2`` (two vectors) or ``c3`` (three vectors) per element. The Snake and Fence models are the
Appendix's step tables, rows of (number of steps, L, combining), summed with that cost per step
(:func:`step_table_time`); ``B = ceil(N/S)`` blocks, and both tables need ``B >= 3``.

**How the Appendix is read.** Its expanded sums write each row as ``L * (alpha + f(L)*beta*S)``, which multiplies
the transfer term by ``L`` a second time: it would make ``f(L) = 1`` the no-overlap case, contradicting Sect. 2.
The printed closed form for Fence (eq. (1)) is exactly ``dT/dS = 0`` of the tables with Sect. 2's
``L*alpha + f(L)*beta*S``, term for term, and only that reading reproduces Sect. 4's claims (Fig. 5; Snake
asymptotically 33% faster than Fence under the nominal model). This module therefore uses Sect. 2's step cost. The
literal reading is ``f'(L) = L*f(L)`` in this model: pass ``times_links(f)`` to evaluate it.

**The printed Snake optimum.** ``S_opt = (N*alpha / ((P-2)(c2 + 2*beta*f(2)) + 2*beta*f(3) - 3*beta*f(4)))^(1/2)``
differs from the derivation (``symbolic_optimal_block``) in two terms: the numerator is ``4*N*alpha`` (the
``B - 3`` row has 4 links, so ``4*alpha`` per block) and the denominator lacks ``+ 2*beta*f(1)`` (the first and last
rows). ``paper_models.vector_combining_symbolic`` derives the optimum with sympy (``optimal_block``) and
evaluates the forms as printed (``paper_optimal_block``).

Times are in seconds, sizes in doubles (elements).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from numbers import Integral
from numbers import Real
from typing import Any
from typing import NamedTuple

import numpy as np

__all__ = [
    "ALGORITHMS",
    "DELTA",
    "FITTED",
    "NOMINAL",
    "PIPELINED",
    "STANDARD",
    "Fastest",
    "MachineParams",
    "NBLFunction",
    "StepRow",
    "cap",
    "fastest",
    "fence_step_table",
    "fence_time",
    "integer_optimal_block",
    "snake_step_table",
    "snake_time",
    "step_table_time",
    "times_links",
    "tree_time",
]

ALGORITHMS = ("tree", "snake", "fence")
PIPELINED = ("snake", "fence")
COMBINE_KINDS = ("c2", "c3", "none")


def _require_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


# --- machine parameters and NBL functions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MachineParams:
    """Machine constants of the model, in seconds.

    Attributes
    ----------
    alpha
        Start-up cost of one message.
    beta
        Transfer time per double on one link.
    c2, c3
        Cost per element of combining two (``v1 = v1 + v2``) or three (``v1 = v1 + v2 + v3``) vectors.

    >>> DELTA.alpha, DELTA.beta
    (5.4e-05, 1.54e-06)
    >>> MachineParams(alpha=-1.0, beta=0.0, c2=0.0, c3=0.0)
    Traceback (most recent call last):
    ...
    ValueError: MachineParams: alpha must be a finite number >= 0, got -1.0
    """

    alpha: float
    beta: float
    c2: float
    c3: float

    def __post_init__(self) -> None:
        for name in ("alpha", "beta", "c2", "c3"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Real) or not (math.isfinite(value) and value >= 0):
                raise ValueError(f"MachineParams: {name} must be a finite number >= 0, got {value!r}")

    def combine_cost(self, kind: str) -> float:
        """Per-element cost of a step table's combining kind: ``c2``, ``c3`` or ``none`` (0)."""
        return {"c2": self.c2, "c3": self.c3, "none": 0.0}[kind]


DELTA = MachineParams(alpha=54e-6, beta=1.54e-6, c2=0.25e-6, c3=0.37e-6)
"""The Touchstone DELTA parameters of the Appendix (Sect. 7.2; beta was halved during those tests)."""


@dataclass(frozen=True)
class NBLFunction:
    """An NBL function ``f(L)``: the transfer time of ``L`` simultaneous messages in units of one message's.

    ``rule`` maps ``L >= 1`` to ``f(L)``; ``f(1)`` must be 1 (the paper's definition).

    >>> STANDARD(4), NOMINAL(4), FITTED(4), cap(2)(6)
    (1.0, 4.0, 3.9, 3.0)
    >>> FITTED(5)
    Traceback (most recent call last):
    ...
    ValueError: NBL function 'fitted' is not defined for L=5 (only L in 1, 2, 3, 4, 6)
    """

    name: str
    rule: Callable[[int], float] = field(repr=False)

    def __post_init__(self) -> None:
        if self(1) != 1:
            raise ValueError(f"NBL function {self.name!r}: f(1) must be 1, got {self(1)!r}")

    def __call__(self, links: int) -> float:
        links = _require_int("L", links, 1)
        return float(self.rule(links))


def _fitted_rule(links: int) -> float:
    values = {1: 1.0, 2: 1.1, 3: 1.3, 4: 3.9, 6: 5.1}
    if links not in values:
        known = ", ".join(str(key) for key in values)
        raise ValueError(f"NBL function 'fitted' is not defined for L={links} (only L in {known})")
    return values[links]


STANDARD = NBLFunction("standard", lambda links: 1.0)
"""``f(L) = 1``: no node bandwidth limit (perfect overlap of the links)."""
NOMINAL = NBLFunction("nominal", lambda links: float(links))
"""``f(L) = L``: node bandwidth equals link bandwidth (no overlap)."""
FITTED = NBLFunction("fitted", _fitted_rule)
"""Sect. 4.2's fit to the DELTA measurements: f(2) = 1.1, f(3) = 1.3, f(4) = 3.9, f(6) = 5.1 (no other L)."""


def cap(k: float) -> NBLFunction:
    """``f(L) = max(1, L/k)``: up to ``k`` links overlap perfectly, then the node's bandwidth is the limit.

    >>> [cap(2)(links) for links in (1, 2, 3, 4)]
    [1.0, 1.0, 1.5, 2.0]
    >>> cap(2).name
    'cap(2)'
    """
    if isinstance(k, bool) or not isinstance(k, Real) or not (math.isfinite(k) and k >= 1):
        raise ValueError(f"cap(k) needs a finite k >= 1 (so that f(1) = 1), got {k!r}")
    return NBLFunction(f"cap({k:g})", lambda links: max(1.0, links / k))


def times_links(f: NBLFunction) -> NBLFunction:
    """``f'(L) = L*f(L)``: the Appendix's rows ``L*(alpha + f(L)*beta*S)`` read literally, in this model.

    >>> times_links(NOMINAL)(4), times_links(STANDARD).name
    (16.0, 'standard*L')
    """
    return NBLFunction(f"{f.name}*L", lambda links: links * f(links))


# --- step tables ------------------------------------------------------------------------------------------------------


class StepRow(NamedTuple):
    """One row of an Appendix step table.

    ``steps`` steps in which the busiest node has ``links`` links active and combines with ``combine`` (``c2``,
    ``c3`` or ``none``). ``steps`` is an int in the tables returned here (a sympy expression or numpy array inside
    the derivation and the search for the best block size).
    """

    steps: Any
    links: int
    combine: str
    comment: str


def _snake_rows(p: Any, blocks: Any) -> list[StepRow]:
    """The Appendix's Snake table (P = W*H nodes in a line, B >= 3 blocks)."""
    return [
        StepRow(1, 1, "c2", "Node P-1 sends, P-2 receives"),
        StepRow(p - 2, 2, "c2", "Some node sends and receives partially combined data (PCD)"),
        StepRow(1, 3, "c2", "Node 1 also receives final result"),
        StepRow(blocks - 3, 4, "c2", "Node 1 sends and receives data and final results"),
        StepRow(1, 3, "c2", "Node 1 sends PCD, sends and receives final results"),
        StepRow(p - 2, 2, "none", "Some node sends and receives final results"),
        StepRow(1, 1, "none", "Node P-2 sends P-1 final results"),
    ]


def _fence_rows(width: Any, height: Any, blocks: Any) -> list[StepRow]:
    """The Appendix's Fence table (W x H mesh, B >= 3 blocks)."""
    return [
        StepRow(1, 1, "c2", "First block starts down from top"),
        StepRow(height - 1, 2, "c2", "First block continues down, turns corner"),
        StepRow(width - 2, 3, "c3", "3-way combining along bottom row"),
        StepRow(1, 4, "c3", "Result turns around at node 0,0"),
        StepRow(blocks - 3, 6, "c3", "3-way combining and 2-way fanout along bottom row"),
        StepRow(1, 4, "c3", "Final block goes to node 0,0"),
        StepRow(width - 2, 3, "none", "Results return along bottom row."),
        StepRow(height - 1, 2, "none", "Last result block turns corner and goes up"),
        StepRow(1, 1, "none", "Last block enters upper right node"),
    ]


def _rows(algorithm: str, width: Any, height: Any, blocks: Any) -> list[StepRow]:
    if algorithm == "snake":
        return _snake_rows(width * height, blocks)
    return _fence_rows(width, height, blocks)


def _sum_rows(
    rows: Sequence[StepRow],
    s: Any,
    alpha: Any,
    beta: Any,
    combine: Mapping[str, Any],
    f: Callable[[int], Any],
) -> Any:
    """Sum of ``steps * (L*alpha + f(L)*beta*S + c*S)`` over the rows (numbers, numpy arrays or sympy symbols)."""
    return sum(row.steps * (row.links * alpha + f(row.links) * beta * s + combine[row.combine] * s) for row in rows)


def step_table_time(rows: Sequence[StepRow], s: int, machine: MachineParams, f: NBLFunction) -> float:
    """Total time of a step table with blocks of ``s`` doubles: the sum of ``steps * (T(L) + c*S)``.

    >>> rows = [StepRow(2, 1, "c2", ""), StepRow(1, 3, "none", "")]  # 2*(alpha + beta*S + c2*S) + 3*alpha + beta*S
    >>> round(step_table_time(rows, 10, DELTA, STANDARD) * 1e6, 6)
    321.2
    """
    for row in rows:
        if row.combine not in COMBINE_KINDS:
            raise ValueError(f"step table: combine must be one of {COMBINE_KINDS}, got {row.combine!r}")
    costs = {kind: machine.combine_cost(kind) for kind in COMBINE_KINDS}
    return float(_sum_rows(rows, s, machine.alpha, machine.beta, costs, f))


# --- validation -------------------------------------------------------------------------------------------------------


def _check_algorithm(algorithm: str, choices: tuple[str, ...] = PIPELINED) -> None:
    if algorithm not in choices:
        raise ValueError(f"algorithm must be one of {', '.join(choices)}, got {algorithm!r}")


def _check_mesh(algorithm: str, width: Any, height: Any) -> tuple[int, int]:
    """(W, H) after checking that the algorithm's table has no negative step counts."""
    width = _require_int("width", width, 1)
    height = _require_int("height", height, 1)
    if algorithm == "snake" and width * height < 2:
        raise ValueError(f"snake needs P = W*H >= 2 nodes (its table has P - 2 steps), got {width}x{height}")
    if algorithm == "fence" and width < 2:
        raise ValueError(f"fence needs width W >= 2 (its table has W - 2 steps), got {width}x{height}")
    return width, height


def _blocks(algorithm: str, n: Any, s: Any) -> int:
    """B = ceil(N/S), checked to be >= 3 as the Appendix's tables assume."""
    n = _require_int("n", n, 1)
    s = _require_int("s", s, 1)
    blocks = -(-n // s)
    if blocks < 3:
        raise ValueError(
            f"{algorithm}: the Appendix's model assumes B = ceil(N/S) >= 3 blocks, got B={blocks} "
            f"(N={n}, S={s}); use S <= {(n - 1) // 2} (needs N >= 3)"
        )
    return blocks


# --- the three models -------------------------------------------------------------------------------------------------


def tree_time(n: int, width: int, height: int, machine: MachineParams, f: NBLFunction) -> float:
    """Tree: ``(log2 W + log2 H) * (2*(alpha + f(1)*beta*N) + c2*N)`` (no pipelining, one link per step).

    The formula is used as printed: for a W or H that is not a power of two the step count is fractional. A single
    node (1x1) takes 0.

    >>> round(tree_time(1000, 4, 4, DELTA, STANDARD), 9)  # (2 + 2) * (2*(54e-6 + 1.54e-3) + 0.25e-3)
    0.013752
    """
    n = _require_int("n", n, 1)
    width, height = _check_mesh("tree", width, height)
    return (math.log2(width) + math.log2(height)) * (2 * (machine.alpha + f(1) * machine.beta * n) + machine.c2 * n)


def snake_step_table(n: int, s: int, width: int, height: int) -> list[StepRow]:
    """The Appendix's Snake timeline for N elements in blocks of S on P = W*H nodes: 2P + B - 3 steps in all.

    >>> for row in snake_step_table(1000, 100, 4, 4):
    ...     print(row.steps, row.links, row.combine)
    1 1 c2
    14 2 c2
    1 3 c2
    7 4 c2
    1 3 c2
    14 2 none
    1 1 none
    """
    width, height = _check_mesh("snake", width, height)
    return _snake_rows(width * height, _blocks("snake", n, s))


def fence_step_table(n: int, s: int, width: int, height: int) -> list[StepRow]:
    """The Appendix's Fence timeline for N elements in blocks of S on a W x H mesh: 2(H-1) + 2(W-2) + B + 1 steps.

    >>> [row.steps for row in fence_step_table(1000, 100, 4, 4)]
    [1, 3, 2, 1, 7, 1, 2, 3, 1]
    """
    width, height = _check_mesh("fence", width, height)
    return _fence_rows(width, height, _blocks("fence", n, s))


def snake_time(n: int, s: int, width: int, height: int, machine: MachineParams, f: NBLFunction) -> float:
    """Snake: the sum of :func:`snake_step_table` (a line through all P = W*H nodes, pipelined in blocks of S).

    >>> round(snake_time(1000, 100, 4, 4, DELTA, NOMINAL) * 1e3, 4)
    19.736
    """
    return step_table_time(snake_step_table(n, s, width, height), s, machine, f)


def fence_time(n: int, s: int, width: int, height: int, machine: MachineParams, f: NBLFunction) -> float:
    """Fence: the sum of :func:`fence_step_table` (down the columns, along the bottom row, pipelined in blocks of S).

    >>> round(fence_time(1000, 100, 4, 4, DELTA, NOMINAL) * 1e3, 4)
    16.315
    """
    return step_table_time(fence_step_table(n, s, width, height), s, machine, f)


_TIME = {"snake": snake_time, "fence": fence_time}


# --- integer block size and the fastest algorithm -----------------------------------------------------------------


def _times_for_blocks(
    algorithm: str, n: int, s: np.ndarray, width: int, height: int, machine: MachineParams, f: NBLFunction
) -> np.ndarray:
    """T for an array of block sizes (all with B >= 3): the same table and sum as the scalar functions."""
    rows = _rows(algorithm, width, height, -(-n // s))
    costs = {kind: machine.combine_cost(kind) for kind in COMBINE_KINDS}
    return _sum_rows(rows, s, machine.alpha, machine.beta, costs, f)


def integer_optimal_block(
    algorithm: str, n: int, width: int, height: int, machine: MachineParams, f: NBLFunction
) -> int:
    """The integer S (1 <= S, B = ceil(N/S) >= 3) that minimises the model's time (the smallest one on a tie).

    Exact, in O(sqrt N) evaluations: for a fixed B, T grows with S (every row's S coefficient is >= 0), so the best
    S of each B is the smallest, ceil(N/B); those are all S <= isqrt(N) + 1 and ceil(N/B) for B <= isqrt(N) + 2.
    Needs N >= 3.

    >>> integer_optimal_block("fence", 10_000, 16, 16, DELTA, STANDARD)  # continuous optimum 180.3
    182
    """
    _check_algorithm(algorithm)
    n = _require_int("n", n, 1)
    width, height = _check_mesh(algorithm, width, height)
    s_max = (n - 1) // 2  # the largest S with ceil(N/S) >= 3
    if s_max < 1:
        raise ValueError(f"{algorithm}: the model needs B = ceil(N/S) >= 3 blocks, so N >= 3, got N={n}")
    root = math.isqrt(n)
    small = np.arange(1, min(s_max, root + 1) + 1, dtype=np.int64)
    large = -(-n // np.arange(3, root + 3, dtype=np.int64))
    candidates = np.unique(np.concatenate([small, large]))
    candidates = candidates[candidates <= s_max]
    times = _times_for_blocks(algorithm, n, candidates, width, height, machine, f)
    return int(candidates[int(np.argmin(times))])


@dataclass(frozen=True)
class Fastest:
    """The result of :func:`fastest`: the winner, each algorithm's time (s) and the block sizes used."""

    winner: str
    times: dict[str, float]
    blocks: dict[str, int]


def fastest(n: int, width: int, height: int, machine: MachineParams, f: NBLFunction) -> Fastest:
    """Which of Tree, Snake and Fence is fastest for N elements on W x H, each pipelined one at its integer optimum.

    Snake and Fence are left out where their model does not apply (N < 3; P < 2 for Snake; W < 2 for Fence). A tie
    goes to the earlier of tree, snake, fence.

    >>> result = fastest(100, 16, 16, DELTA, STANDARD)
    >>> result.winner, sorted(result.times), result.blocks
    ('tree', ['fence', 'snake', 'tree'], {'snake': 5, 'fence': 20})
    """
    n = _require_int("n", n, 1)
    width, height = _check_mesh("tree", width, height)
    times = {"tree": tree_time(n, width, height, machine, f)}
    blocks: dict[str, int] = {}
    for algorithm in PIPELINED:
        applicable = n >= 3 and (width * height >= 2 if algorithm == "snake" else width >= 2)
        if applicable:
            blocks[algorithm] = integer_optimal_block(algorithm, n, width, height, machine, f)
            times[algorithm] = _TIME[algorithm](n, blocks[algorithm], width, height, machine, f)
    winner = min(times, key=lambda name: (times[name], ALGORITHMS.index(name)))
    return Fastest(winner, times, blocks)
