"""Rank placement: which host each MPI rank runs on, written as an smpirun hostfile.

A placement is the platform's host order (the default), an explicit list of hosts, or a named
placement of the platform's family, ``"<name>:<argument>"`` (e.g. ``"allocation:2,4,3"`` on an MLFM:
the servers of the paper's allocation n = 2, l = 4, m = 3, in the schedule's rank order).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from generators.errors import TopologyError
from generators.files import atomic_write_text
from generators.model import Platform

__all__ = ["named_placement", "place_ranks", "write_hostfile"]


def named_placement(platform: Platform, spec: str) -> list[str]:
    """The hosts of the family placement ``"<name>:<argument>"`` of ``platform``, in rank order."""
    from generators.families import FAMILIES  # the registry imports the families, which import this module

    name, _, argument = spec.partition(":")
    placements = FAMILIES[platform.family].placements
    if name not in placements:
        known = ", ".join(sorted(placements)) or "none"
        raise TopologyError(f"{platform.family} has no placement {name!r} (named placements: {known})")
    return placements[name](platform, argument)


def place_ranks(platform: Platform, ranks: int | None, order: Sequence[str] | str | None = None) -> list[str]:
    """Return the host of each rank: rank i on ``order[i]`` (default: the platform's host order).

    ``order`` may also be a named placement of the platform's family (``"allocation:2,4,3"``); ``ranks``
    None means one rank on every host of the order. One rank per host; ``TopologyError`` if there are
    more ranks than hosts, or if ``order`` names an unknown host or a host twice.
    """
    if isinstance(order, str):
        order = named_placement(platform, order)
    hosts = list(order) if order is not None else platform.host_names
    ranks = len(hosts) if ranks is None else ranks
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise TopologyError(f"ranks must be an integer >= 1, got {ranks!r}")
    for name in hosts:
        platform.host(name)
    if len(set(hosts)) != len(hosts):
        raise TopologyError("placement order names a host twice (one rank per host)")
    if ranks > len(hosts):
        raise TopologyError(f"{ranks} ranks do not fit on {len(hosts)} hosts of {platform.name} (one rank per host)")
    return hosts[:ranks]


def write_hostfile(hosts: Sequence[str], path: str | os.PathLike[str]) -> None:
    """Write an smpirun hostfile: one host per line, rank i on line i."""
    atomic_write_text(path, "".join(f"{h}\n" for h in hosts))
