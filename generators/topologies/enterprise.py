"""Modular enterprise chassis switch: C modules of P ports joined by a backplane.

Models a chassis such as the HP ProCurve 4200vl used in the Three Quads paper (4 modules x 16 GbE
ports, 64 nodes). Host ``host-<k>`` sits on module ``module-<k // P>``. Inside a module, traffic goes
host cable -> module -> host cable. Between modules it also crosses the source module's uplink to the
backplane and the destination module's downlink from it (``module-<m>_to_backplane``,
``backplane_to_module-<m>``, ``module_uplink`` per direction each), and, when ``backplane`` is set, one
SHARED ``backplane_fabric`` link of that total capacity. When ``module_fabric`` is set, each module has
an internal capacity shared by every flow that enters or leaves it through its ports (a SHARED
``module-<m>_fabric`` link: once on an intra-module route, once per module on a cross-module one),
the "saturation inside a switch module" that the Three Quads paper observes under full duplex.
Logically the chassis is a crossbar; module uplinks and fabrics are where all-to-all traffic congests.

Written as a SimGrid Full zone with explicit routes (64 hosts: 4032 routes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generators.declare import family
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import RouteRule
from generators.model import add_links
from generators.model import duplex_link
from generators.model import host_cable
from generators.model import node_link
from generators.model import node_link_name
from generators.model import with_nbl
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import bandwidth
from generators.params import cable_params
from generators.params import nbl_param
from generators.params import optional_bandwidth
from generators.params import positive_int
from generators.size import Size

__all__ = ["enterprise", "estimate", "module_of"]

BACKPLANE = "backplane"


def module_of(host: str, ports: int) -> int:
    """The module that ``host-<k>`` is cabled to."""
    return int(host.removeprefix("host-")) // ports


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`enterprise` builds: C*P hosts with their cables (and limiters), C uplinks (and fabrics), and
    every ordered pair's route, through one module (2 cables) or across the backplane (2 cables, 2 uplinks).

    >>> estimate({"modules": 4, "ports": 16, "backplane": None, "module_fabric": None, "nbl": None}).links
    136
    """
    c, p = params["modules"], params["ports"]
    backplane, fabric, limited = (params[key] is not None for key in ("backplane", "module_fabric", "nbl"))
    hosts = c * p
    inside, across = c * p * (p - 1), hosts * (hosts - p)  # ordered pairs on one module, on two
    return Size(
        hosts=hosts,
        routers=c + 1,
        links=(2 + limited) * hosts + 2 * c + backplane + fabric * c,
        routes=inside + across,
        route_links=inside * (2 + fabric) + across * (4 + 2 * fabric + backplane) + (inside + across) * 2 * limited,
    )


@family(
    summary="modular chassis switch: C modules of P ports joined by a backplane",
    params=(
        Param("modules", positive_int, "switch modules in the chassis (C)"),
        Param("ports", positive_int, "host ports per module (P)"),
        *cable_params("125MBps", "1us", "each host cable", bw_note="effective GbE payload rate"),
        Param("module_uplink", bandwidth, "capacity of each module's backplane connection, per direction", "1GBps"),
        Param("backplane", optional_bandwidth, "total backplane capacity, or none", "none"),
        Param("module_fabric", optional_bandwidth, "internal capacity of each module (in + out), or none", "none"),
        nbl_param("host-cable"),
        *NODE_PARAMS,
    ),
    estimate=estimate,
    smallest={"modules": 2, "ports": 2},
    drawn={"modules": 4, "ports": 16},  # the Three Quads paper's 4 x 16 GbE chassis
)
def enterprise(
    modules: int,
    ports: int,
    link_bw: float,
    link_lat: float,
    module_uplink: float,
    backplane: float | None,
    module_fabric: float | None,
    nbl: float | None,
    host_speed: float,
) -> Platform:
    """Return the model of a chassis of ``modules`` x ``ports`` hosts.

    Examples
    --------
    >>> p = enterprise(4, 16)
    >>> len(p.hosts), len(p.routers), len(p.links)
    (64, 5, 136)
    >>> p.route("host-1", "host-2")
    ['host-1_to_module-0', 'module-0_to_host-2']
    >>> p.route("host-1", "host-17")
    ['host-1_to_module-0', 'module-0_to_backplane', 'backplane_to_module-1', 'module-1_to_host-17']
    """
    names = [f"host-{k}" for k in range(modules * ports)]
    module_names = [f"module-{m}" for m in range(modules)]
    links = _host_cables(names, module_names, ports, link_bw, link_lat, nbl)
    add_links(links, *_chassis_links(module_names, module_uplink, backplane, module_fabric))
    return Platform(
        name=f"enterprise-{modules}x{ports}",
        hosts=[Host(name, host_speed) for name in names],
        routers=[*module_names, BACKPLANE],
        links=links,
        route_rule=_route_rule(module_names, ports, backplane is not None, module_fabric is not None, nbl is not None),
    )


def _host_cables(
    names: list[str], module_names: list[str], ports: int, link_bw: float, link_lat: float, nbl: float | None
) -> dict[str, Link]:
    """Every host's cable to its module, and its limiter when ``nbl`` is set."""
    links: dict[str, Link] = {}
    for name in names:
        add_links(links, *host_cable(name, module_names[module_of(name, ports)], link_bw, link_lat, nbl))
    return links


def _chassis_links(
    module_names: list[str], module_uplink: float, backplane: float | None, module_fabric: float | None
) -> list[Link]:
    """The modules' uplinks to the backplane, then the backplane's and the modules' fabrics when they are set."""
    links = [link for module in module_names for link in duplex_link(module, BACKPLANE, module_uplink, 0.0)]
    if backplane is not None:
        links.append(node_link(BACKPLANE, "fabric", backplane))
    if module_fabric is not None:
        links += [node_link(module, "fabric", module_fabric) for module in module_names]
    return links


def _route_rule(module_names: list[str], ports: int, backplane: bool, module_fabric: bool, limited: bool) -> RouteRule:
    """Through the module, or up its uplink, across the backplane and down the other module's (module docstring)."""
    inside = {module: [node_link_name(module, "fabric")] if module_fabric else [] for module in module_names}
    fabric = [node_link_name(BACKPLANE, "fabric")] if backplane else []

    def route(src: str, dst: str) -> list[str]:
        a, b = module_names[module_of(src, ports)], module_names[module_of(dst, ports)]
        if a == b:
            hops = [f"{src}_to_{a}", *inside[a], f"{a}_to_{dst}"]
        else:
            hops = [f"{src}_to_{a}", *inside[a], f"{a}_to_{BACKPLANE}", *fabric, f"{BACKPLANE}_to_{b}",
                    *inside[b], f"{b}_to_{dst}"]  # fmt: skip
        return with_nbl(src, dst, hops, limited)

    return route
