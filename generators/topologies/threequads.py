"""Three Quads: q^3 nodes on three subnetworks of q switches each (Zhang, Mori, Tomita, IPSJ 2018).

Nodes are labelled (z, y, x) in [0, q)^3 and named ``host-<k>`` with ``k = z*q*q + y*q + x``. Every
node has three NICs, one per subnetwork: node (i, *, *) is cabled to switch ``swz-i``, (*, j, *) to
``swy-j`` and (*, *, k) to ``swx-k``, so each switch has q^2 ports. With q = 4 this is the 64-node
Scube cluster of the paper (12 switches of 16 GbE ports).

Routing
-------
* Nodes that share exactly one coordinate talk through that coordinate's switch in one hop.
* Nodes that share two coordinates could use either switch: ``subnet_order`` (an ordering of
  ``"xyz"``) picks the first shared subnetwork in that order. The default ``"xyz"`` sends such pairs
  over SW-X, as the paper's experiment does in step 2 of its transpose.
* Nodes that share no coordinate are relayed by the node m = (z_src, y_dst, x_dst): src reaches m
  through ``swz-<z_src>``, then m reaches dst (with which it shares y and x) through the switch chosen
  by ``subnet_order``. Both hops use m's NIC cables, which approximates software forwarding by m's
  network stack; m's CPU and its NBL limiter are not charged (an approximation: the paper's transpose
  never relays, its communication is one-hop by construction).

Hardware elements: each cable is ``link_bw`` per direction (GbE: the effective payload rate is the
parameter), ``link_lat``; each switch may have an internal fabric capacity ``switch_fabric`` shared by
all traffic crossing it (a SHARED link ``<switch>_fabric`` on every route through it); ``nbl`` caps
each node's total traffic over its three NICs.

Written as a SimGrid Full zone with explicit routes (q = 4: 4032 routes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generators.declare import family
from generators.errors import TopologyError
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import RouteRule
from generators.model import add_links
from generators.model import duplex_link
from generators.model import nbl_link
from generators.model import node_link
from generators.model import node_link_name
from generators.model import with_nbl
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import cable_params
from generators.params import letter_order
from generators.params import nbl_param
from generators.params import optional_bandwidth
from generators.params import positive_int
from generators.size import Size

__all__ = ["coordinates", "estimate", "host_name", "switch_of", "threequads"]

AXES = "zyx"


def host_name(z: int, y: int, x: int, q: int) -> str:
    """Name of node (z, y, x)."""
    return f"host-{(z * q + y) * q + x}"


def coordinates(host: str, q: int) -> tuple[int, int, int]:
    """(z, y, x) of ``host-<k>``."""
    k = int(host.removeprefix("host-"))
    return k // (q * q), (k // q) % q, k % q


def switch_of(axis: str, coords: tuple[int, int, int]) -> str:
    """The switch of subnetwork ``axis`` ("z", "y" or "x") that a node with ``coords`` is cabled to."""
    return f"sw{axis}-{coords[AXES.index(axis)]}"


def _check_q(q: int) -> None:
    if q < 2:
        raise TopologyError(f"q must be an integer >= 2, got {q}")


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`threequads` builds: q^3 nodes of three cables each (and a limiter), 3q switches (and fabrics),
    and every ordered pair's route: one switch hop for pairs sharing a coordinate, two through a relay otherwise.

    >>> estimate({"q": 4, "switch_fabric": None, "nbl": None}).links
    384
    """
    q = params["q"]
    _check_q(q)
    fabric, limited = params["switch_fabric"] is not None, params["nbl"] is not None
    nodes = q**3
    sharing, relayed = 3 * (q - 1) + 3 * (q - 1) ** 2, (q - 1) ** 3  # per source: pairs sharing a coordinate, none
    pairs = nodes * (nodes - 1)
    return Size(
        hosts=nodes,
        routers=3 * q,
        links=(6 + limited) * nodes + fabric * 3 * q,
        routes=pairs,
        route_links=nodes * (sharing * (2 + fabric) + relayed * (4 + 2 * fabric)) + pairs * 2 * limited,
    )


@family(
    summary="Three Quads: q^3 nodes, three subnetworks (SW-Z, SW-Y, SW-X) of q switches",
    params=(
        Param("q", positive_int, "nodes per axis (q^3 nodes, 3q switches of q^2 ports), >= 2"),
        *cable_params("125MBps", "1us", "each NIC cable", bw_note="effective GbE payload rate"),
        Param("switch_fabric", optional_bandwidth, "internal capacity of each switch, or none", "none"),
        Param("subnet_order", letter_order("xyz"), "subnetwork preference for pairs sharing two coordinates", "xyz"),
        nbl_param("NIC"),
        *NODE_PARAMS,
    ),
    estimate=estimate,
    smallest={"q": 2},
    drawn={"q": 4},  # the paper's 64-node Scube
)
def threequads(
    q: int,
    link_bw: float,
    link_lat: float,
    switch_fabric: float | None,
    subnet_order: str,
    nbl: float | None,
    host_speed: float,
) -> Platform:
    """Return the Three Quads model of q^3 nodes.

    Examples
    --------
    >>> p = threequads(4)
    >>> len(p.hosts), len(p.routers), len(p.links)
    (64, 12, 384)
    >>> p.route("host-0", "host-5")  # (0,0,0) -> (0,1,1): share z only
    ['host-0_to_swz-0', 'swz-0_to_host-5']
    >>> p.route("host-0", "host-16")  # (0,0,0) -> (1,0,0): share y and x, X first
    ['host-0_to_swx-0', 'swx-0_to_host-16']
    >>> len(p.route("host-0", "host-21"))  # (0,0,0) -> (1,1,1): relayed by host-5
    4
    """
    _check_q(q)
    names = [host_name(z, y, x, q) for z in range(q) for y in range(q) for x in range(q)]
    switches = [f"sw{axis}-{i}" for axis in AXES for i in range(q)]
    return Platform(
        name=f"threequads-{q}",
        hosts=[Host(name, host_speed) for name in names],
        routers=switches,
        links=_links(names, switches, q, link_bw, link_lat, switch_fabric, nbl),
        route_rule=_route_rule(q, switch_fabric is not None, subnet_order, nbl is not None),
    )


def _links(
    names: list[str],
    switches: list[str],
    q: int,
    link_bw: float,
    link_lat: float,
    switch_fabric: float | None,
    nbl: float | None,
) -> dict[str, Link]:
    """Node by node its three NIC cables (and its limiter when ``nbl`` is set), then the switches' fabrics."""
    links: dict[str, Link] = {}
    for name in names:
        coords = coordinates(name, q)
        for axis in AXES:
            add_links(links, *duplex_link(name, switch_of(axis, coords), link_bw, link_lat))
        if nbl is not None:
            add_links(links, nbl_link(name, nbl * link_bw))
    if switch_fabric is not None:
        add_links(links, *(node_link(sw, "fabric", switch_fabric) for sw in switches))
    return links


def _route_rule(q: int, fabric: bool, subnet_order: str, limited: bool) -> RouteRule:
    """One hop through the first shared subnetwork in ``subnet_order``, or two through a relay (module docstring)."""

    def route(src: str, dst: str) -> list[str]:
        s, d = coordinates(src, q), coordinates(dst, q)
        axis = _shared_axis(s, d, subnet_order)
        if axis is not None:
            hops = _hop(src, dst, axis, q, fabric)
        else:
            relay = host_name(s[0], d[1], d[2], q)
            shared = _shared_axis(coordinates(relay, q), d, subnet_order) or "x"
            hops = _hop(src, relay, "z", q, fabric) + _hop(relay, dst, shared, q, fabric)
        return with_nbl(src, dst, hops, limited)

    return route


def _shared_axis(a: tuple[int, int, int], b: tuple[int, int, int], subnet_order: str) -> str | None:
    """The first subnetwork in ``subnet_order`` on whose coordinate nodes ``a`` and ``b`` agree, or None."""
    shared = [axis for axis in subnet_order if a[AXES.index(axis)] == b[AXES.index(axis)]]
    return shared[0] if shared else None


def _hop(src: str, dst: str, axis: str, q: int, fabric: bool) -> list[str]:
    """The links from ``src`` to ``dst`` through the switch of subnetwork ``axis`` they share (and its fabric)."""
    switch = switch_of(axis, coordinates(src, q))
    return [f"{src}_to_{switch}", *([node_link_name(switch, "fabric")] if fabric else []), f"{switch}_to_{dst}"]
