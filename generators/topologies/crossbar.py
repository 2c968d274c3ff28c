"""Crossbar: N hosts on one non-blocking switch.

The simplest platform and the reference for alpha-beta checks: every host has one full-duplex cable
to the switch, and a message from host i to host j crosses ``host-i_to_xbar`` then ``xbar_to_host-j``
(plus the two hosts' NBL limiters when they are set). With one flow, the one-way time of S bytes is
``2 * link_lat + (S + envelope) / link_bw``.

Written as a SimGrid Full zone with explicit routes (N^2 routes; fine up to a few hundred hosts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generators.declare import family
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import add_links
from generators.model import host_cable
from generators.model import with_nbl
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import cable_params
from generators.params import nbl_param
from generators.params import positive_int
from generators.size import Size

__all__ = ["crossbar", "estimate"]

SWITCH = "xbar"


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`crossbar` builds: N hosts, each a cable (two links) and maybe a limiter; N(N-1) routes of 2 links
    (4 with limiters).

    >>> size = estimate({"hosts": 3, "nbl": 1.0})
    >>> size.hosts, size.links, size.routes, size.route_links
    (3, 9, 6, 24)
    """
    n, limited = params["hosts"], params["nbl"] is not None
    return Size(
        hosts=n, routers=1, links=(2 + limited) * n, routes=n * (n - 1), route_links=n * (n - 1) * (2 + 2 * limited)
    )


@family(
    summary="N hosts on one non-blocking switch (the alpha-beta reference platform)",
    params=(
        Param("hosts", positive_int, "number of hosts N"),
        *cable_params("1GBps", "1us", "each host cable"),
        nbl_param(),
        *NODE_PARAMS,
    ),
    estimate=estimate,
    smallest={"hosts": 2},
    drawn={"hosts": 16},
)
def crossbar(
    hosts: int,
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
) -> Platform:
    """Return the model of ``hosts`` hosts on one switch.

    Examples
    --------
    >>> p = crossbar(3, nbl=1.0)
    >>> len(p.hosts), len(p.links)
    (3, 9)
    >>> p.route("host-0", "host-2")
    ['host-0_nbl', 'host-0_to_xbar', 'xbar_to_host-2', 'host-2_nbl']
    """
    names = [f"host-{i}" for i in range(hosts)]
    links: dict[str, Link] = {}
    for name in names:
        add_links(links, *host_cable(name, SWITCH, link_bw, link_lat, nbl))

    def route(src: str, dst: str) -> list[str]:
        return with_nbl(src, dst, [f"{src}_to_{SWITCH}", f"{SWITCH}_to_{dst}"], nbl is not None)

    return Platform(
        name=f"crossbar-{hosts}",
        hosts=[Host(name, host_speed) for name in names],
        routers=[SWITCH],
        links=links,
        route_rule=route,
    )
