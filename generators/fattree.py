"""Two-level fat tree (leaf/spine) of radix-r switches: the baseline of the MLFM paper (Fig. 1a).

Each leaf switch has r/2 servers below and one cable to each of the r/2 spine switches above; each
spine has one cable to each of up to r leaves. Full size: r leaves x r/2 servers = r^2/2 servers
(36-port switches: 648 servers, 36 leaves and 18 spines; MLFM connects 6156 with the same switches).

Names: server ``server-a-k`` (leaf a, port k), ``leaf-a``, ``spine-s``. Hosts are listed leaf by
leaf, port k fastest.

Routing: same leaf through the leaf; otherwise up to spine s = k' (the destination's port) and down,
destination-modulo-k routing as InfiniBand's destination-based forwarding tables give it (one spine
per destination port): the shift pattern of all-to-all is then congestion-free on a full tree, since
the r/2 flows entering a leaf in a phase have r/2 different destination ports.

Representation: a SimGrid Dijkstra zone whose graph has a direct edge from each spine to the servers
of its port index only (through their leaf's cable), so that the fewest-links path is the rule's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generators.errors import TopologyError
from generators.model import (
    Host,
    Link,
    Platform,
    RouteRule,
    RoutingGraph,
    add_links,
    duplex_link,
    host_cable,
    node_link_name,
    with_nbl,
)
from generators.node import NODE_PARAMS
from generators.params import Param, bandwidth, family, latency, nbl_cap, optional, positive_int
from generators.size import Size

__all__ = ["estimate", "fattree"]


def server_name(a: int, k: int) -> str:
    """Name of the server on port k of leaf a."""
    return f"server-{a}-{k}"


def _coordinates(host: str) -> tuple[int, int]:
    """(a, k) of ``server-a-k``."""
    a, k = host.removeprefix("server-").split("-")
    return int(a), int(k)


def _leaves(radix: int, leaves: int | None) -> int:
    """The leaves built, after checking the radix (even, >= 2) and the leaves (1 .. radix; None: radix)."""
    if isinstance(radix, bool) or not isinstance(radix, int) or radix < 2 or radix % 2:
        raise TopologyError(f"radix must be an even integer >= 2, got {radix!r}")
    leaves = radix if leaves is None else leaves
    if not 1 <= leaves <= radix:
        raise TopologyError(f"leaves must be between 1 and radix={radix}, got {leaves}")
    return leaves


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`fattree` builds: radix/2 servers per leaf with their cables (and limiters), a cable from every
    leaf to every spine; a routing graph of 3 edges per server and one per leaf-spine cable.

    >>> estimate({"radix": 36, "leaves": None, "nbl": None}).hosts
    648
    """
    leaves, ports = _leaves(params["radix"], params["leaves"]), params["radix"] // 2
    servers, limited = leaves * ports, params["nbl"] is not None
    return Size(
        hosts=servers,
        routers=leaves + ports,
        links=(2 + limited) * servers + 2 * leaves * ports,
        edges=3 * servers + leaves * ports,
        edge_links=(4 + 3 * limited) * servers + leaves * ports,
    )


@family(
    summary="Two-level fat tree (leaf/spine) of radix-r switches: r^2/2 servers, destination-modulo routing",
    params=(
        Param("radix", positive_int, "switch ports (even): radix/2 servers per leaf, radix/2 spines", "36"),
        Param("leaves", optional(positive_int), "leaf switches built (1..radix), or none for radix", "none"),
        Param("link_bw", bandwidth, "cable bandwidth per direction (4x QDR InfiniBand data rate)", "4GBps"),
        Param("link_lat", latency, "latency of every cable", "100ns"),
        Param("nbl", nbl_cap, "node-bandwidth limit: none, nominal (=1) or k link bandwidths", "none"),
        *NODE_PARAMS,
    ),
    estimate=estimate,
)
def fattree(
    radix: int,
    leaves: int | None,
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
) -> Platform:
    """Return the two-level fat tree of radix-``radix`` switches.

    Examples
    --------
    >>> p = fattree(36)
    >>> len(p.hosts), len(p.routers)
    (648, 54)
    >>> p.route("server-0-3", "server-5-7")
    ['server-0-3_to_leaf-0', 'leaf-0_to_spine-7', 'spine-7_to_leaf-5', 'leaf-5_to_server-5-7']
    """
    leaves = _leaves(radix, leaves)
    ports = radix // 2
    servers = [(a, k) for a in range(leaves) for k in range(ports)]
    limited = nbl is not None
    return Platform(
        name=f"fattree-{radix}",
        hosts=[Host(server_name(a, k), host_speed) for a, k in servers],
        routers=[f"leaf-{a}" for a in range(leaves)] + [f"spine-{s}" for s in range(ports)],
        links=_cables(servers, leaves, ports, link_bw, link_lat, nbl),
        route_rule=_route_rule(limited),
        graph=_routing_graph(servers, leaves, ports, limited),
    )


def _cables(
    servers: list[tuple[int, int]], leaves: int, ports: int, link_bw: float, link_lat: float, nbl: float | None
) -> dict[str, Link]:
    """Every server's cable to its leaf (and its limiter when ``nbl`` is set), then every leaf's to every spine."""
    links: dict[str, Link] = {}
    for a, k in servers:
        add_links(links, *host_cable(server_name(a, k), f"leaf-{a}", link_bw, link_lat, nbl))
    for a in range(leaves):
        for s in range(ports):
            add_links(links, *duplex_link(f"leaf-{a}", f"spine-{s}", link_bw, link_lat))
    return links


def _route_rule(limited: bool) -> RouteRule:
    """Through the leaf, or up to the spine of the destination's port and down (module docstring)."""

    def route(src: str, dst: str) -> list[str]:
        (a, _), (b, k2) = _coordinates(src), _coordinates(dst)
        hops = [f"{src}_to_leaf-{a}"]
        if a != b:
            hops += [f"leaf-{a}_to_spine-{k2}", f"spine-{k2}_to_leaf-{b}"]
        hops.append(f"leaf-{b}_to_{dst}")
        return with_nbl(src, dst, hops, limited)

    return route


def _routing_graph(servers: list[tuple[int, int]], leaves: int, ports: int, limited: bool) -> RoutingGraph:
    """Servers to their leaf and back, each spine straight down to the servers of its port index, leaves up."""
    edges: list[tuple[str, str, tuple[str, ...]]] = []
    for a, k in servers:
        server = server_name(a, k)
        limiter = (node_link_name(server, "limiter"),) if limited else ()
        edges.append((server, f"leaf-{a}", (*limiter, f"{server}_to_leaf-{a}")))
        edges.append((f"leaf-{a}", server, (f"leaf-{a}_to_{server}", *limiter)))
        edges.append((f"spine-{k}", server, (f"spine-{k}_to_leaf-{a}", f"leaf-{a}_to_{server}", *limiter)))
    for a in range(leaves):
        for s in range(ports):
            edges.append((f"leaf-{a}", f"spine-{s}", (f"leaf-{a}_to_spine-{s}",)))
    return RoutingGraph((), tuple(edges))
