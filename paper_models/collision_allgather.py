"""The allgather performance model of Sugiyama, Morie, Nanri ("Topology Aware
Performance Prediction of Collective Communication Algorithms on Multi-Dimensional Mesh/Torus").

An algorithm is a sequence of communication steps plus memory copies, each costed from micro-benchmarks:

* eq. (1): the time of an operation of M bytes is interpolated linearly between the two measured sizes
  nearest to M (:func:`interpolate`), separately for communication (a one-hop ping-pong's one-way time)
  and for memory copies (a memcpy benchmark);
* eq. (2): Bruck = the rank-order copies of the rank that copies most (rank 1: (P-1)M, M, (P-1)M) plus
  ceil(log2 P) steps of growing messages (M * min(2^i, P - 2^i));
* eq. (3): Ring = P - 1 steps of M;
* collisions (Sect. V): every message of a step is routed on the platform; C, the largest number of
  messages that use one directed link, turns the step into one message of C x M (:func:`step_collisions`).

Steps are assumed to start together on every rank and a step lasts as long as its slowest message
(Sect. IV-A). Ranks are numbered in placement order: rank r runs on ``hosts[r]``.

>>> interpolate({100: 1.0, 200: 2.0, 300: 4.0}, 150)
1.5
>>> [len(step) for step, _ in steps("bruck", 5, 1)], [size for _, size in steps("bruck", 5, 1)]
([5, 5, 5], [1, 2, 1])
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from collections.abc import Sequence

from generators.analysis import link_loads
from generators.model import Platform
from generators.schedules import allgather_steps

__all__ = [
    "ALGORITHMS",
    "Step",
    "bruck_copies",
    "interpolate",
    "predict",
    "step_collisions",
    "steps",
]

ALGORITHMS = ("ring", "bruck")
Step = tuple[list[tuple[int, int]], int]
"""The (source rank, destination rank) messages of one step and the bytes each carries."""


def interpolate(measured: Mapping[int, float], size: float) -> float:
    """Eq. (1): the time at ``size`` on the line through the two measured sizes nearest to it
    (the two smallest or the two largest outside the measured range)."""
    sizes = sorted(measured)
    if len(sizes) < 2:
        raise ValueError("eq. (1) needs at least two measured sizes")
    i = min(max(bisect.bisect_left(sizes, size), 1), len(sizes) - 1)
    lo, hi = sizes[i - 1], sizes[i]
    slope = (measured[hi] - measured[lo]) / (hi - lo)
    return measured[lo] + slope * (size - lo)


def steps(algorithm: str, ranks: int, size: int) -> list[Step]:
    """Fig. 1 (Ring) or Fig. 2 (Bruck) as the model costs it: each step's messages and the bytes each carries
    (the schedule of ``generators.schedules.allgather_steps``, every message of a step carrying as many blocks)."""
    return [([(src, dst) for src, dst, _ in step], step[0][2] * size) for step in allgather_steps(algorithm, ranks)]


def bruck_copies(ranks: int, size: int) -> list[int]:
    """The bytes of the three rank-order copies of the rank that copies most (rank 1), as eq. (2) counts."""
    return [(ranks - 1) * size, size, (ranks - 1) * size]


def step_collisions(platform: Platform, hosts: Sequence[str], step: list[tuple[int, int]]) -> int:
    """C of one step: the largest number of its messages on one directed cable (limiters excluded)."""
    loads = link_loads(platform, [(hosts[src], hosts[dst]) for src, dst in step])
    return max(platform.cables(loads).values(), default=0)


def predict(
    algorithm: str,
    ranks: int,
    size: int,
    comm: Mapping[int, float],
    memcpy: Mapping[int, float] | None = None,
    collisions: Sequence[int] | None = None,
) -> float:
    """Predicted time of one allgather of ``size`` bytes per rank: eq. (2) or (3), and with ``collisions``
    (C of each step, see :func:`step_collisions`) each step costed as one message of C x its size."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}")
    algorithm_steps = steps(algorithm, ranks, size)
    factors = list(collisions) if collisions is not None else [1] * len(algorithm_steps)
    if len(factors) != len(algorithm_steps):
        raise ValueError(f"{len(factors)} collision counts for {len(algorithm_steps)} steps")
    total = sum(
        interpolate(comm, max(c, 1) * step_size) for (_, step_size), c in zip(algorithm_steps, factors, strict=True)
    )
    if algorithm == "bruck" and memcpy is not None:
        total += sum(interpolate(memcpy, n) for n in bruck_copies(ranks, size))
    return total


def crossover(sizes: Sequence[int], ring: Sequence[float], bruck: Sequence[float]) -> float | None:
    """The size where Ring becomes faster than Bruck (log-linear interpolation of the time difference),
    or None if they do not cross in ``sizes``."""
    for i in range(1, len(sizes)):
        before, after = ring[i - 1] - bruck[i - 1], ring[i] - bruck[i]
        if before > 0 >= after:
            fraction = before / (before - after)
            return math.exp(math.log(sizes[i - 1]) + fraction * (math.log(sizes[i]) - math.log(sizes[i - 1])))
    return None
