"""Allocation policies: which hosts of a machine a job gets, on every family, as named placements
(``"<policy>:<argument>"``, ``generators.placement``).

A batch scheduler gives a job the nodes its allocation policy picks, and on a shared machine that choice decides
which cables the job shares with its neighbours. The packet-level simulators name the same policies (SST's
linear, random, random-linear and interval allocators; CODES' contiguous, random and stripe placements). Each
policy here orders *every* host of the platform; a job of N hosts takes the first N of that order
(``place_ranks``), so one policy serves any job size:

``contiguous[:start]``
    the platform's host order from host ``start`` on (default 0), wrapping round to host 0: a linear allocation.
``stride:k[,start]``
    every k-th host from ``start`` (an interval or stripe allocation), wrapping round: start, start + k, ..., then
    start + 1, start + 1 + k, ... until every host is listed.
``random:seed``
    the hosts in a random order drawn from ``seed`` (a fragmented machine); the same seed, the same order.
``random-chunks:c,seed``
    the hosts in chunks of c consecutive hosts (the last one may be shorter), the chunks in a random order drawn
    from ``seed``: a job gets whole chunks (SST's random-linear).

The platform's host order is its families' natural one (a torus's lexicographic coordinates, a fat tree's leaves
one after the other, a dragonfly's groups), so ``contiguous`` is a compact block of the machine where the family's
order is. A family's own named placements (an MLFM ``allocation``, a Tofu ``shape``) are declared with the family.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from collections.abc import Sequence

from generators.errors import TopologyError
from generators.errors import shown
from generators.model import Platform

__all__ = ["ALLOCATION_POLICIES", "contiguous", "fill", "index_list", "random_chunks", "random_order", "stride"]


def _integers(policy: str, argument: str, form: str, least: tuple[int, ...]) -> list[int]:
    """The comma-separated integers of ``argument`` (as many as ``least`` gives at most, each >= its bound);
    ``TopologyError`` naming the policy's ``form`` otherwise."""
    words = [word.strip() for word in argument.split(",")] if argument.strip() else []
    try:
        values = [int(word) for word in words]
    except ValueError:
        values = []
    if not values or len(values) > len(least) or any(v < bound for v, bound in zip(values, least, strict=False)):
        raise TopologyError(f"placement {policy}: takes {form}, got {shown(argument)}")
    return values


def contiguous(platform: Platform, argument: str) -> list[str]:
    """The hosts in the platform's order from host ``start`` on, wrapping round (``contiguous[:start]``)."""
    hosts = platform.host_names
    (start,) = _integers("contiguous", argument, "a first host index >= 0", (0,)) if argument else (0,)
    if start >= len(hosts):
        raise TopologyError(f"placement contiguous: host {start} does not exist ({platform.name} has {len(hosts)})")
    return hosts[start:] + hosts[:start]


def stride(platform: Platform, argument: str) -> list[str]:
    """Every k-th host from ``start``, then from start + 1, ... (``stride:k[,start]``)."""
    hosts = platform.host_names
    k, *rest = _integers("stride", argument, "k[,start]: a stride >= 1 and a first host index >= 0", (1, 0))
    start = rest[0] if rest else 0
    if start >= len(hosts):
        raise TopologyError(f"placement stride: host {start} does not exist ({platform.name} has {len(hosts)})")
    rotated = hosts[start:] + hosts[:start]
    return [host for offset in range(k) for host in rotated[offset::k]]


def random_order(platform: Platform, argument: str) -> list[str]:
    """The hosts in a random order drawn from ``seed`` (``random:seed``)."""
    (seed,) = _integers("random", argument, "a seed, an integer >= 0", (0,))
    hosts = list(platform.host_names)
    random.Random(seed).shuffle(hosts)
    return hosts


def random_chunks(platform: Platform, argument: str) -> list[str]:
    """Chunks of ``c`` consecutive hosts in a random order drawn from ``seed`` (``random-chunks:c,seed``)."""
    form = "c,seed: a chunk of c >= 1 consecutive hosts and a seed >= 0"
    values = _integers("random-chunks", argument, form, (1, 0))
    if len(values) != 2:
        raise TopologyError(f"placement random-chunks: takes {form}, got {shown(argument)}")
    size, seed = values
    hosts = platform.host_names
    chunks = [hosts[first : first + size] for first in range(0, len(hosts), size)]
    random.Random(seed).shuffle(chunks)
    return [host for chunk in chunks for host in chunk]


ALLOCATION_POLICIES: dict[str, Callable[[Platform, str], list[str]]] = {
    "contiguous": contiguous,
    "stride": stride,
    "random": random_order,
    "random-chunks": random_chunks,
}
"""The allocation policies every family has, by name (a family's own placements are declared with it)."""


def fill(
    platform: Platform, policy: str, sizes: Sequence[int], occupancy: float, released: float, seed: int
) -> list[list[str]]:
    """A machine in use, for the jobs to come: jobs of ``sizes`` hosts each (drawn from ``seed``) allocated one after
    the other by ``policy`` (the next free hosts of its order) while they fit in ``occupancy`` of the hosts, then a
    ``released`` fraction of them (drawn too) ended: the hosts of the jobs still running, job by job. The hosts the
    ended jobs leave are the holes a new job gets: fragmentation grows with occupancy and released.

    >>> from generators.topologies.crossbar import crossbar
    >>> [len(job) for job in fill(crossbar(16), "contiguous", [2, 4], 0.75, 0.5, 1)]
    [2, 4]
    """
    hosts = platform.host_names
    if not sizes or any(isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(hosts) for n in sizes):
        raise TopologyError(f"fill: job sizes must be whole numbers of hosts, 1 to {len(hosts)}, got {list(sizes)}")
    for name, value in (("occupancy", occupancy), ("released", released)):
        if not 0 <= value <= 1:
            raise TopologyError(f"fill: {name} must be a fraction from 0 to 1, got {value!r}")
    name, _, argument = policy.partition(":")
    if name not in ALLOCATION_POLICIES:
        raise TopologyError(f"fill: {name!r} is not an allocation policy ({', '.join(sorted(ALLOCATION_POLICIES))})")
    draw = random.Random(seed)
    order = ALLOCATION_POLICIES[name](platform, argument)
    jobs, taken = [], 0
    while True:
        size = draw.choice(list(sizes))
        if taken + size > occupancy * len(hosts):
            break
        jobs.append(order[taken : taken + size])
        taken += size
    ended = set(draw.sample(range(len(jobs)), round(released * len(jobs))))
    return [job for number, job in enumerate(jobs) if number not in ended]


def index_list(placement: str, argument: str, count: int, what: str) -> list[int]:
    """The indices of ``argument``, a comma-separated list of numbers and ranges (``0,2,5-7``), each below ``count``
    and none twice: the groups, leaves or pods of a family's own placement.

    >>> index_list("groups", "0,2,5-7", 8, "groups")
    [0, 2, 5, 6, 7]
    """
    indices: list[int] = []
    for word in argument.split(","):
        first, _, last = word.strip().partition("-")
        try:
            indices += range(int(first), int(last or first) + 1)
        except ValueError:
            raise TopologyError(
                f"placement {placement}: takes a list of {what}, e.g. 0,2,5-7, got {shown(argument)}"
            ) from None
    bad = [i for i in indices if not 0 <= i < count]
    if not indices or bad or len(set(indices)) != len(indices):
        problem = f"{bad[0]} is not one of the {count} {what}" if bad else f"names one of the {what} twice"
        raise TopologyError(f"placement {placement}: {problem}, got {shown(argument)}")
    return indices
