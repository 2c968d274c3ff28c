"""Blue Gene/Q torus partitions and their internal bisection (Oltchik & Schwartz, isoperimetric analysis).

Analysis only (no platform is written): the paper's Sect. 3 and Tables 1, 2, 6 and 7.

Machine model. A midplane is a 4x4x4x4x2 torus of 512 compute nodes (dimensions A, B, C, D, E; E of
length 2 is internal to the midplane). A machine is a 4-dimensional torus of midplanes, e.g. Mira
4x4x3x2, JUQUEEN 7x2x2x2, Sequoia 4x4x4x3. A partition is a cuboid of whole midplanes ``a1 x .. x a4``
with wrap-around links in every dimension (the BG/Q cabling allows it even when the cuboid does not
span the machine), so its node network is the torus ``4a1 x 4a2 x 4a3 x 4a4 x 2``. As in the paper,
geometries are canonical: sorted by decreasing length, rotations being one geometry; a geometry fits
a machine if some permutation of it fits, i.e. if, both sorted decreasingly, it is <= the machine
dimension by dimension (the paper: a 2x2x2x1x1 network fits 2x1x1x1x1 partitions).

Bisection convention (reproduces Tables 1, 2, 6, 7 exactly). The bisection is the number of
bidirectional links (each full-duplex cable counted once, normalised by the capacity of one link, not
per direction) cut by a minimum balanced cut. Every node of a D-torus has 2D link ports, one + and one
- per dimension; in a ring of length 2 both ports of a node reach the same neighbour, so a length-2
ring counts as TWO links between its two nodes (the graph stays 2D-regular, as the paper's Eq. 1 and
its Harper case of Lemma 3.2 need: a 2x2 torus has bisection 4, not 2). This differs from
``generators.topologies.torus``, which writes one cable for a length-2 dimension; for BG/Q partitions it makes no
difference to the tables (cutting E never beats cutting the longest dimension). The cut of Lemma 3.2
halves the longest dimension ``L``: ``2 * N / L`` links (the paper's ``2 N/L B``), e.g. 256 for one
midplane. Theorem 3.1's bound (Eq. 3) is ``isoperimetric_bound``.

Ties. Bisection depends only on the longest dimension (Corollary 3.4), so several geometries of one
size may tie. ``best_partition`` takes the highest bisection and, among ties, the lexicographically
smallest canonical geometry; ``worst_partition`` the lowest bisection and, among ties, the
lexicographically largest (e.g. the most ring-like).

The torus family's ``partition`` placement allocates these partitions (``generators.topologies.torus``); the command
that prints the best and worst geometries is ``python -m paper_models.bgq``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from collections.abc import Sequence
from itertools import product

from generators.errors import TopologyError

__all__ = [
    "JUQUEEN",
    "MACHINES",
    "MIDPLANE",
    "MIDPLANE_NODES",
    "MIRA",
    "MIRA_CURRENT",
    "MIRA_PROPOSED",
    "SEQUOIA",
    "best_partition",
    "bisection",
    "fits",
    "geometries",
    "isoperimetric_bound",
    "midplanes_for_nodes",
    "node_dims",
    "parse_machine",
    "partition_bisection",
    "partitions",
    "worst_partition",
]

Geometry = tuple[int, int, int, int]

MIDPLANE: tuple[int, ...] = (4, 4, 4, 4, 2)
MIDPLANE_NODES = math.prod(MIDPLANE)

MIRA: Geometry = (4, 4, 3, 2)
JUQUEEN: Geometry = (7, 2, 2, 2)
SEQUOIA: Geometry = (4, 4, 4, 3)
MACHINES: dict[str, Geometry] = {"mira": MIRA, "juqueen": JUQUEEN, "sequoia": SEQUOIA}

# Mira's predefined partitions by midplane count (Table 6, "Current Geometry"), and the paper's proposed
# replacements where they raise the bisection (Table 6 / Table 1, "New Geometry").
MIRA_CURRENT: dict[int, Geometry] = {
    1: (1, 1, 1, 1),
    2: (2, 1, 1, 1),
    4: (4, 1, 1, 1),
    8: (4, 2, 1, 1),
    16: (4, 4, 1, 1),
    24: (4, 3, 2, 1),
    32: (4, 4, 2, 1),
    48: (4, 4, 3, 1),
    64: (4, 4, 2, 2),
    96: (4, 4, 3, 2),
}
MIRA_PROPOSED: dict[int, Geometry] = {
    4: (2, 2, 1, 1),
    8: (2, 2, 2, 1),
    16: (2, 2, 2, 2),
    24: (3, 2, 2, 2),
}


def _dims(dims: Sequence[int], what: str, length: int | None = None) -> tuple[int, ...]:
    if isinstance(dims, str | bytes) or not isinstance(dims, Sequence):
        raise TopologyError(f"{what} must be a sequence of integers, got {dims!r}")
    if length is not None and len(dims) != length:
        raise TopologyError(f"{what} must have {length} dimensions, got {len(dims)} ({dims!r})")
    if not dims:
        raise TopologyError(f"{what} must have at least one dimension, got {dims!r}")
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise TopologyError(f"{what} dimensions must be integers >= 1, got {dims!r}")
    return tuple(dims)


def _canonical(dims: Sequence[int]) -> Geometry:
    a, b, c, d = sorted(dims, reverse=True)
    return (a, b, c, d)


def bisection(node_dims: Sequence[int]) -> int:
    """Internal bisection of a torus of ``node_dims`` nodes, in links (a length-2 ring counts 2 links).

    Lemma 3.2's cut: halving the longest dimension ``L`` cuts ``2 * N / L`` links, the minimum over all
    balanced cuts (checked by brute force in tests/test_bgq.py) and equal to Theorem 3.1's bound at
    ``t = N/2``. Defined when ``L`` is even, as for every BG/Q partition; with an odd longest dimension
    the bound is not attained and the true minimum is no such formula (e.g. 6 links for 5x2, not 4 or
    10), so that raises TopologyError. Length-1 dimensions carry no links.

    >>> bisection((4, 4, 4, 4, 2))  # one midplane
    256
    >>> bisection((12, 8, 4, 4, 2))  # 3x2x1x1 midplanes
    512
    >>> bisection((2, 2))  # a 4-cycle whose rings of length 2 count twice
    4
    """
    dims = _dims(node_dims, "node_dims")
    longest = max(dims)
    if longest % 2:
        raise TopologyError(f"bisection needs an even longest dimension (Lemma 3.2), got {dims!r}")
    return 2 * math.prod(dims) // longest


def isoperimetric_bound(dims: Sequence[int], t: int) -> float:
    """Theorem 3.1 (Eq. 3): lower bound on the perimeter of a cuboid of ``t <= |V|/2`` torus nodes.

    ``min over r in 0..D-1 of 2 (D-r) (product of the r smallest a_i)^(1/(D-r)) t^((D-r-1)/(D-r))``.

    >>> isoperimetric_bound((4, 4, 4, 4, 2), 256)
    256.0
    >>> isoperimetric_bound((4, 4), 4)  # a 2x2 square: 8 edges leave it
    8.0
    """
    a = sorted(_dims(dims, "dims"), reverse=True)
    n = math.prod(a)
    if isinstance(t, bool) or not isinstance(t, int) or not 1 <= t <= n // 2:
        raise TopologyError(f"t must be an integer in 1..{n // 2} (half the {n} nodes), got {t!r}")
    d = len(a)
    best = math.inf
    for r in range(d):
        k = math.prod(a[d - r :])  # the r smallest dimensions
        value = 2 * (d - r) * k ** (1 / (d - r)) * t ** ((d - r - 1) / (d - r))
        best = min(best, value)
    rounded = round(best)
    return float(rounded) if math.isclose(best, rounded, rel_tol=1e-12) else best


def parse_machine(spec: str | Sequence[int]) -> Geometry:
    """A machine's midplane dimensions from a preset name or ``AxBxCxD`` (or 4 ints), as given.

    >>> parse_machine("mira")
    (4, 4, 3, 2)
    >>> parse_machine("7x2x2x2")
    (7, 2, 2, 2)
    """
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in MACHINES:
            return MACHINES[key]
        if not re.fullmatch(r"[+-]?\d+(x[+-]?\d+){3}", key):
            names = "|".join(MACHINES)
            raise TopologyError(f"machine must be {names} or AxBxCxD (4 midplane counts), got {spec!r}")
        spec = [int(p) for p in key.split("x")]
        if min(spec) < 1:
            raise TopologyError(f"machine dimensions must be integers >= 1, got {key!r}")
    a, b, c, d = _dims(spec, "machine", length=4)
    return (a, b, c, d)


def fits(geometry: Sequence[int], machine: Sequence[int]) -> bool:
    """Whether a cuboid of midplanes fits the machine in some orientation.

    >>> fits((3, 3, 1, 1), JUQUEEN), fits((3, 2, 2, 1), JUQUEEN)
    (False, True)
    """
    g = _canonical(_dims(geometry, "geometry", length=4))
    m = _canonical(parse_machine(machine))
    return all(x <= y for x, y in zip(g, m, strict=True))


def node_dims(geometry: Sequence[int]) -> tuple[int, ...]:
    """Node torus of a cuboid of midplanes: ``(4a1, 4a2, 4a3, 4a4, 2)`` (canonical order).

    >>> node_dims((1, 3, 2, 1))
    (12, 8, 4, 4, 2)
    """
    g = _canonical(_dims(geometry, "geometry", length=4))
    return tuple(m * x for m, x in zip(MIDPLANE, g, strict=False)) + MIDPLANE[4:]


def partition_bisection(geometry: Sequence[int]) -> int:
    """Bisection (links) of a partition given in midplanes.

    >>> partition_bisection((4, 4, 3, 2))  # all of Mira
    6144
    """
    return bisection(node_dims(geometry))


def partitions(machine: Sequence[int] | str) -> Iterator[Geometry]:
    """Every canonical cuboid geometry that fits the machine, in lexicographic order.

    >>> list(partitions((2, 1, 1, 1)))
    [(1, 1, 1, 1), (2, 1, 1, 1)]
    """
    m = _canonical(parse_machine(machine))
    for g in product(*(range(1, x + 1) for x in m)):
        if list(g) == sorted(g, reverse=True):
            yield (g[0], g[1], g[2], g[3])


def geometries(machine: Sequence[int] | str, midplanes: int) -> list[Geometry]:
    """Canonical geometries of ``midplanes`` midplanes that fit the machine (TopologyError if none).

    >>> geometries("juqueen", 6)
    [(3, 2, 1, 1), (6, 1, 1, 1)]
    """
    m = parse_machine(machine)
    total = math.prod(m)
    if isinstance(midplanes, bool) or not isinstance(midplanes, int) or midplanes < 1:
        raise TopologyError(f"midplanes must be an integer >= 1, got {midplanes!r}")
    if midplanes > total:
        raise TopologyError(f"midplanes must be at most the machine's {total} midplanes, got {midplanes}")
    found = [g for g in partitions(m) if math.prod(g) == midplanes]
    if not found:
        shape = "x".join(map(str, m))
        raise TopologyError(f"no cuboid of {midplanes} midplanes fits the {shape} machine")
    return found


def ranked_partitions(machine: Sequence[int] | str, midplanes: int) -> list[tuple[Geometry, int]]:
    """Every geometry of ``midplanes`` midplanes that fits ``machine``, with its bisection: highest bisection first,
    ties in lexicographic order.

    >>> ranked_partitions("juqueen", 16)[:2]
    [((2, 2, 2, 2), 2048), ((4, 2, 2, 1), 1024)]
    """
    return sorted(((g, partition_bisection(g)) for g in geometries(machine, midplanes)), key=lambda gb: (-gb[1], gb[0]))


def best_partition(machine: Sequence[int] | str, midplanes: int) -> tuple[Geometry, int]:
    """Geometry with the highest bisection (ties: lexicographically smallest) and that bisection: ``mira``, 16
    midplanes: ((2, 2, 2, 2), 2048)."""
    return ranked_partitions(machine, midplanes)[0]


def worst_partition(machine: Sequence[int] | str, midplanes: int) -> tuple[Geometry, int]:
    """Geometry with the lowest bisection (ties: lexicographically largest) and that bisection.

    >>> worst_partition("juqueen", 16)
    ((4, 2, 2, 1), 1024)
    """
    return ranked_partitions(machine, midplanes)[-1]


def midplanes_for_nodes(nodes: int) -> int:
    """Midplane count of a node count (a positive multiple of 512).

    >>> midplanes_for_nodes(3072)
    6
    """
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1 or nodes % MIDPLANE_NODES:
        raise TopologyError(f"nodes must be a positive multiple of {MIDPLANE_NODES} (whole midplanes), got {nodes!r}")
    return nodes // MIDPLANE_NODES
