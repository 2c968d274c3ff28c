"""Rank placement: which host each MPI rank runs on, written as an smpirun hostfile.

A placement is the platform's host order (the default), an explicit list of hosts, or a named
placement, ``"<name>:<argument>"``: an allocation policy of every family (``generators.allocation``:
``random:7``, ``contiguous:16``, ``stride:4``, ``random-chunks:8,7``) or one of the platform's family
(e.g. ``"allocation:2,4,3"`` on an MLFM: the servers of the paper's allocation n = 2, l = 4, m = 3, in the
schedule's rank order). Each host of it takes
one rank, or ``ranks_per_node`` consecutive ranks (block placement).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from generators.allocation import ALLOCATION_POLICIES
from generators.errors import TopologyError
from generators.families import FAMILIES
from generators.files import atomic_write_text
from generators.model import Platform
from generators.size import count_text

__all__ = ["MAX_RANKS", "named_placement", "place_ranks", "write_hostfile"]

MAX_RANKS = 10**7
"""The most ranks a placement holds: 200 times Mira's 49152 (SMPI runs every rank as an actor with its own stack;
33 s for Mira's), a hostfile of about 150 MB. A larger request is refused rather than listed."""


def named_placement(platform: Platform, spec: str) -> list[str]:
    """The hosts of the named placement ``"<name>:<argument>"`` of ``platform``, in rank order: an allocation policy
    of every family (``generators.allocation``: contiguous, stride, random, random-chunks) or the family's own."""
    name, _, argument = spec.partition(":")
    placements = {**ALLOCATION_POLICIES, **FAMILIES[platform.family].placements}
    if name not in placements:
        known = ", ".join(sorted(placements))
        hosts = ",".join(platform.host_names[:2])
        raise TopologyError(
            f"{platform.family} has no placement {name!r} (named placements: {known}; or a list of hosts: {hosts})"
        )
    return placements[name](platform, argument)


def place_ranks(
    platform: Platform, ranks: int | None, order: Sequence[str] | str | None = None, ranks_per_node: int = 1
) -> list[str]:
    """Return the host of each rank: ``ranks_per_node`` consecutive ranks on each host of ``order`` in turn.

    ``order`` is the hosts' order (default: the platform's host order) or a named placement of the platform's
    family (``"allocation:2,4,3"``). Block placement: ranks 0 .. K-1 on ``order[0]``, K .. 2K-1 on ``order[1]``,
    and so on, as jobs fill nodes; the ranks of one host share its cores and talk through its intra-node path
    (``generators.node``). ``ranks`` None means every slot (hosts x ``ranks_per_node``). ``TopologyError`` if the
    ranks do not fit, or if ``order`` names an unknown host or a host twice.

    >>> from generators.topologies.crossbar import crossbar
    >>> place_ranks(crossbar(3), 5, ranks_per_node=2)
    ['host-0', 'host-0', 'host-1', 'host-1', 'host-2']
    """
    if isinstance(order, str):
        order = named_placement(platform, order)
    hosts = list(order) if order is not None else platform.host_names
    if isinstance(ranks_per_node, bool) or not isinstance(ranks_per_node, int) or ranks_per_node < 1:
        raise TopologyError(f"ranks per node must be an integer >= 1, got {ranks_per_node!r}")
    slots = len(hosts) * ranks_per_node
    ranks = slots if ranks is None else ranks
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise TopologyError(f"ranks must be an integer >= 1, got {ranks!r}")
    for name in hosts:
        platform.host(name)
    if len(set(hosts)) != len(hosts):
        raise TopologyError(
            "placement order names a host twice (each host of the order takes ranks_per_node consecutive ranks)"
        )
    if ranks > slots:
        raise TopologyError(
            f"{count_text(ranks)} ranks do not fit on {len(hosts)} hosts \u00d7 {count_text(ranks_per_node)} ranks per "
            f"node of {platform.name}"
        )
    if ranks > MAX_RANKS:
        raise TopologyError(
            f"{count_text(ranks)} ranks: a placement holds at most {MAX_RANKS} (generators/placement.py says why)"
        )
    return [hosts[rank // ranks_per_node] for rank in range(ranks)]


def write_hostfile(hosts: Sequence[str], path: str | os.PathLike[str]) -> None:
    """Write an smpirun hostfile: one line per rank, rank i on line i (a host of several ranks is named on each of
    their lines; SimGrid's smpirun places rank i on the i-th non-empty line)."""
    atomic_write_text(path, "".join(f"{h}\n" for h in hosts))
