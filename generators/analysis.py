"""Static analyses that walk the model's routes (the routes SimGrid uses)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from generators.model import Platform

__all__ = ["link_loads", "max_link_load"]


def link_loads(platform: Platform, flows: Iterable[tuple[str, str]]) -> Counter[str]:
    """Number of the concurrent ``(src, dst)`` flows that cross each link.

    Links crossed by no flow are absent from the result. On a platform that spreads a message over several paths
    (``Platform.route_shares``) a flow counts by the share of it that crosses the link: the load is then a sum of
    shares, and 1 / the busiest link's load is the rate max-min sharing gives the flows that cross it (the fluid
    bound of the routes). NBL limiter links count flows in both
    directions, as they carry both. A flow between two ranks of one host crosses the host's intra-node
    link ``<host>_shm`` (``generators.node``); without one the model has no such route (``TopologyError``).

    >>> from generators.topologies.crossbar import crossbar
    >>> p = crossbar(3, nbl=1.0)
    >>> loads = link_loads(p, [("host-0", "host-1"), ("host-0", "host-2"), ("host-1", "host-0")])
    >>> loads["host-0_to_xbar"], loads["host-0_nbl"], loads["xbar_to_host-0"]
    (2, 3, 1)
    """
    loads: Counter[str] = Counter()
    for src, dst in flows:
        if platform.spread_rule is None:
            loads.update(platform.route(src, dst))
        else:
            for name, share in platform.route_shares(src, dst):
                loads[name] += share
    return loads


def max_link_load(platform: Platform, flows: Iterable[tuple[str, str]]) -> float:
    """The largest number of flows sharing one link (0 for no flows); 1 means congestion-free."""
    loads = link_loads(platform, flows)
    return max(loads.values(), default=0)
