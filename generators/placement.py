"""Rank placement: which host each MPI rank runs on, written as an smpirun hostfile."""

from __future__ import annotations

import os
from collections.abc import Sequence

from generators.errors import TopologyError
from generators.files import atomic_write_text
from generators.model import Platform

__all__ = ["place_ranks", "write_hostfile"]


def place_ranks(platform: Platform, ranks: int, order: Sequence[str] | None = None) -> list[str]:
    """Return the host of each rank: rank i on ``order[i]`` (default: the platform's host order).

    One rank per host; ``TopologyError`` if there are more ranks than hosts, or if ``order`` names an
    unknown host or a host twice.
    """
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise TopologyError(f"ranks must be an integer >= 1, got {ranks!r}")
    hosts = list(order) if order is not None else platform.host_names
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
