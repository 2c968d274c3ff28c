"""Dragonfly: groups of routers joined all-to-all inside the group and by global cables between groups.

The topology of Kim, Dally, Scott and Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology" (ISCA 2008,
Sect. 3): ``groups`` groups of ``routers`` routers (a), ``hosts`` hosts per router (p), every pair of routers of a
group joined by one local cable, every pair of groups by ``links_per_pair`` global cables, at most
``global_ports`` global cables per router (h). HPE Slingshot machines are dragonflies of this kind with several
global cables per pair of groups (De Sensi et al., "An In-Depth Analysis of the Slingshot Interconnect", SC 2020,
Sect. 2: 64-port switches, up to 16 hosts, 31 local and 16 global ports per switch in a group of 32).

Names: host ``host-g-r-k`` (group g, router r, port k), router ``router-g-r``. Hosts are listed group by group,
router by router, port fastest; host-g-r-k is host number ``(g * routers + r) * hosts + k``.

Global arrangement (Hastings et al., "Comparing Global Link Arrangements for Dragonfly Networks", CLUSTER 2015,
Sect. III): a group has ``links_per_pair x (groups - 1)`` global ports in use, numbered j; port j sits on router
``j mod routers`` (so the global cables spread evenly: Frontier's 292 per group give 9 or 10 per router), and
port ``j = t links_per_pair + c`` is copy c of the cable to the group at offset t (the copies to one group on
consecutive routers, so at most ``routers`` copies): in the ``absolute`` arrangement
the groups in increasing order skipping itself (t = k, or k - 1 above the group), in the ``relative`` one the
groups that follow it round the ring (t = (k - g - 1) mod groups). The ``simgrid`` arrangement is SimGrid 4.1's
own ``DRAGONFLY`` cluster's, t = k: router k of group g holds the cable to group k, so a machine cannot have more
groups than routers per group, nor more than one cable per pair of groups (docs/dragonfly.md); it exists so that
tests can compare this family with SimGrid's zone on the machines both describe. With ``port_order=consecutive``
port j sits on router ``j // global_ports`` instead (router r holds ports r h .. r h + h - 1, the numbering of Kim
et al.'s and Hastings et al.'s figures): the cables to consecutive offsets then share a router, so that a Valiant
path through a group from group i to group i + 1 mostly needs no local hop there (docs/adaptive-routing.md).

Routing (``routing``; docs/adaptive-routing.md), oblivious or adaptive:

* ``minimal`` (Kim et al., Sect. 4.1): inside a group, straight to the destination router; to another group, a
  local hop to the router holding the chosen global cable (none if the source holds it), the global cable, and a
  local hop to the destination router (none if it lands there): at most 3 router-to-router cables. Of the
  ``links_per_pair`` copies of the cable between two groups, each pair of hosts uses copy ``mix(pair) mod
  links_per_pair``.
* ``valiant`` (Kim et al., Sect. 4.1: Valiant's randomised routing made oblivious): to another group, minimally
  to an intermediate group, then minimally on to the destination; the intermediate group (never the source's or
  the destination's; needs 3 groups) and the copies of the two global cables are functions of the pair of hosts,
  ``mix(pair)``: SplitMix64's finaliser of ``src * host_count + dst``, so that an adversarial pattern spreads over
  every group as a random choice would. Inside a group, minimal. At most 5 router-to-router cables.
* ``ugal-l``, ``ugal-g`` (Kim et al., Sect. 4.2: UGAL, with the source router's view or the global one): when a
  message starts, the compiled zone weighs the minimal paths (every copy, the pair's own first) against two
  Valiant paths drawn for the decision by the load of their busiest visible cable (``simgrid_cpp/paths.hpp``); on an
  idle network every message takes its minimal route, which is the model's route.

``spread`` says how finely a message is routed: ``message`` (the default: one path per message, as above) or
``packet``: its packets spread over the rule's paths, modelled as one flow whose route gives every cable the share of
the message that crosses it (``generators.spread``): minimal routing spreads over the copies of the global cable,
Valiant over every intermediate group and every pair of copies, evenly; UGAL places the message in parts, each on
the path that is cheapest once the parts before it are placed.

Representation: always a compiled zone (``simgrid_cpp/dragonfly_zone.cpp``), which computes each route on
demand by the same rule: explicit routes are hosts^2 and no routing graph has exactly these routes (a graph's
fewest-links path may cut through a third group), and a Frontier-shaped machine has 37888 hosts.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generators.allocation import index_list
from generators.declare import family
from generators.errors import TopologyError
from generators.mixing import mix
from generators.model import CompiledZone
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import RouteRule
from generators.model import SpreadRoute
from generators.model import SpreadRule
from generators.model import add_links
from generators.model import duplex_link
from generators.model import host_cable
from generators.model import with_nbl
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import cable_params
from generators.params import choice
from generators.params import latency
from generators.params import nbl_param
from generators.params import positive_int
from generators.size import Size
from generators.size import switched_size
from generators.spread import ROUTING_MODES
from generators.spread import backpressure_param
from generators.spread import framed
from generators.spread import revisit_param
from generators.spread import spread_evenly
from generators.spread import spread_param
from generators.spread import zone_routing

__all__ = ["Dragonfly", "dragonfly", "estimate", "host_coordinates"]


@dataclass(frozen=True)
class Dragonfly:
    """The shape of a dragonfly and its arrangement of global cables (module docstring)."""

    groups: int
    routers: int
    """Routers per group (a)."""
    hosts: int
    """Hosts per router (p)."""
    links_per_pair: int
    arrangement: str
    port_order: str = "round-robin"
    global_ports: int = 1

    @property
    def host_count(self) -> int:
        """Hosts in the machine."""
        return self.groups * self.routers * self.hosts

    def index(self, g: int, r: int, k: int) -> int:
        """The number of host ``host-g-r-k`` (its place in the host list)."""
        return (g * self.routers + r) * self.hosts + k

    def offset(self, g: int, k: int) -> int:
        """The offset t of group k among the peers of group g (``g != k``)."""
        if self.arrangement == "relative":
            return (k - g - 1) % self.groups
        if self.arrangement == "simgrid":
            return k
        return k if k < g else k - 1

    def gateway(self, g: int, k: int, copy: int) -> int:
        """The router of group g that holds copy ``copy`` of the global cable to group k: the router of its port
        ``j = offset * links_per_pair + copy``, ``j mod routers`` (round-robin) or ``j // global_ports``
        (consecutive)."""
        port = self.offset(g, k) * self.links_per_pair + copy
        return port // self.global_ports if self.port_order == "consecutive" else port % self.routers

    def global_cables(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Every global cable as its two (group, router) ends, lower group first."""
        return [
            ((g, self.gateway(g, k, c)), (k, self.gateway(k, g, c)))
            for g in range(self.groups)
            for k in range(g + 1, self.groups)
            for c in range(self.links_per_pair)
        ]

    def router_hops(self, src: tuple[int, int], dst: tuple[int, int], copy: int) -> list[tuple[int, int]]:
        """The routers of the minimal path from router ``src`` to router ``dst`` (both ends included)."""
        (g, r), (k, s) = src, dst
        if g == k:
            return [src] if r == s else [src, dst]
        out, landing = (g, self.gateway(g, k, copy)), (k, self.gateway(k, g, copy))
        return [src, *([out] if out != src else []), landing, *([dst] if landing != dst else [])]

    def minimal_copies(self, src: tuple[int, int], dst: tuple[int, int], first: int) -> list[list[tuple[int, int]]]:
        """The routers of the minimal paths over every copy of the global cable, copy ``first`` first (one path
        inside a group)."""
        count = 1 if src[0] == dst[0] else self.links_per_pair
        return [self.router_hops(src, dst, (first + c) % self.links_per_pair) for c in range(count)]

    def valiant_hops(self, src: tuple[int, int], dst: tuple[int, int], middle: int, c1: int, c2: int) -> list:
        """The routers of the path minimally to group ``middle`` over copy c1, then minimally on over copy c2."""
        landing = (middle, self.gateway(middle, src[0], c1))
        return self.router_hops(src, landing, c1) + self.router_hops(landing, dst, c2)[1:]

    def intermediate(self, g: int, k: int, hashed: int) -> int:
        """Valiant's intermediate group for groups g != k: the ``hashed mod (groups - 2)``-th other group."""
        m = hashed % (self.groups - 2)
        for skipped in sorted((g, k)):
            m += m >= skipped
        return m


def host_coordinates(name: str) -> tuple[int, int, int]:
    """(group, router, port) of ``host-g-r-k``.

    >>> host_coordinates("host-3-1-0")
    (3, 1, 0)
    """
    g, r, k = name.removeprefix("host-").split("-")
    return int(g), int(r), int(k)


def _router(g: int, r: int) -> str:
    return f"router-{g}-{r}"


def _shape(params: Mapping[str, Any]) -> Dragonfly:
    """The checked shape: every group's global cables fit its ports, no two copies of a cable join the same two
    routers, and Valiant has an intermediate group."""
    shape = Dragonfly(
        params["groups"],
        params["routers"],
        params["hosts"],
        params["links_per_pair"],
        params["arrangement"],
        params.get("port_order", "round-robin"),
        params["global_ports"],
    )
    ports, needed = shape.routers * params["global_ports"], shape.links_per_pair * (shape.groups - 1)
    if needed > ports:
        raise TopologyError(
            f"a group has routers x global_ports = {shape.routers} x {params['global_ports']} = {ports} global "
            f"ports, fewer than the links_per_pair x (groups - 1) = {needed} its global cables need"
        )
    if shape.port_order == "consecutive" and (shape.links_per_pair != 1 or shape.arrangement == "simgrid"):
        raise TopologyError(
            "port_order=consecutive puts a group's consecutive global ports on one router, so the copies of a cable "
            "would join the same two routers: it needs links_per_pair = 1 and the absolute or relative "
            f"arrangement, got links_per_pair={shape.links_per_pair}, arrangement={shape.arrangement}"
        )
    if shape.arrangement == "simgrid" and (shape.routers < shape.groups or shape.links_per_pair != 1):
        raise TopologyError(
            "the simgrid arrangement puts the cable from group g to group k on router k of group g, as SimGrid's "
            f"DRAGONFLY does: it needs routers >= groups and links_per_pair = 1, got routers={shape.routers}, "
            f"groups={shape.groups}, links_per_pair={shape.links_per_pair}"
        )
    if params["routing"] != "minimal" and shape.groups < 3:
        raise TopologyError(
            f"{params['routing']} routing needs at least 3 groups (an intermediate one), got {shape.groups}"
        )
    # The copies of the cable to one group sit on consecutive routers: more copies than routers would join two
    # routers twice.
    if shape.links_per_pair > shape.routers:
        raise TopologyError(
            f"links_per_pair={shape.links_per_pair} is more than routers={shape.routers}: two copies of a global "
            "cable would join the same two routers (parallel cables are not modelled)"
        )
    return shape


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`dragonfly` builds: hosts with their cables (and limiters), a(a-1)/2 local cables per group,
    links_per_pair global cables per pair of groups; a compiled zone.

    >>> size = estimate({"groups": 9, "routers": 4, "hosts": 2, "global_ports": 2, "links_per_pair": 1,
    ...                  "arrangement": "absolute", "routing": "minimal", "nbl": None})
    >>> size.hosts, size.routers, size.links
    (72, 36, 324)
    """
    shape = _shape(params)
    routers = shape.groups * shape.routers
    cables = shape.groups * shape.routers * (shape.routers - 1) // 2
    cables += shape.links_per_pair * shape.groups * (shape.groups - 1) // 2
    return switched_size(shape.host_count, routers, cables, params["nbl"] is not None)


def _groups_placement(platform: Platform, argument: str) -> list[str]:
    """Named placement ``groups:0,2,5-7``: the hosts of those groups, group by group (a job a group or more, as
    dragonfly machines are often allocated; ``generators.allocation``)."""
    groups = index_list("groups", argument, int(platform.params["groups"]), "groups")
    by_group: dict[int, list[str]] = {}
    for host in platform.host_names:
        by_group.setdefault(host_coordinates(host)[0], []).append(host)
    return [host for g in groups for host in by_group[g]]


@family(
    summary="Dragonfly (Kim et al. 2008; HPE Slingshot): all-to-all groups, global cables; minimal, Valiant or UGAL",
    params=(
        Param("groups", positive_int, "groups of routers (g)"),
        Param("routers", positive_int, "routers per group, joined all-to-all (a)"),
        Param("hosts", positive_int, "hosts per router (p)"),
        Param("global_ports", positive_int, "global ports per router (h): at most this many global cables each"),
        Param("links_per_pair", positive_int, "global cables between every pair of groups", "1"),
        Param(
            "arrangement",
            choice("absolute", "relative", "simgrid"),
            "which router holds each global cable: absolute, relative or simgrid (router k: the cable to group k)",
            "absolute",
        ),
        Param(
            "port_order",
            choice("round-robin", "consecutive"),
            "how a group's global ports j sit on its routers: round-robin (router j mod a: the cables spread evenly) "
            "or consecutive (router j // h, as in Kim et al.'s and Hastings et al.'s figures)",
            "round-robin",
            recorded_when_default=False,
        ),
        Param(
            "routing",
            choice(*ROUTING_MODES),
            "minimal, valiant (through an intermediate group), ugal-l or ugal-g (adaptive: docs/adaptive-routing.md)",
            "minimal",
        ),
        spread_param(),
        revisit_param(),
        backpressure_param(),
        *cable_params("25GBps", "100ns", bw_note="Slingshot: 200 Gb/s", lat_note="a global cable's: global_lat"),
        Param("global_lat", latency, "latency of a global cable", "100ns"),
        nbl_param(),
        *NODE_PARAMS,
    ),
    estimate=estimate,
    placements={"groups": _groups_placement},
    smallest={"groups": 2, "routers": 1, "hosts": 1, "global_ports": 1},
    drawn={"groups": 9, "routers": 4, "hosts": 2, "global_ports": 2},  # Kim et al.'s balanced a = 2p = 2h
)
def dragonfly(
    groups: int,
    routers: int,
    hosts: int,
    global_ports: int,
    links_per_pair: int,
    arrangement: str,
    port_order: str,
    routing: str,
    spread: str,
    revisit: float,
    backpressure: int,
    link_bw: float,
    link_lat: float,
    global_lat: float,
    nbl: float | None,
    host_speed: float,
) -> Platform:
    """Return the dragonfly ``dragonfly-<groups>x<routers>x<hosts>`` (``-v`` appended for Valiant routing, ``-ugal-l``
    or ``-ugal-g`` for UGAL, then ``-packet`` when messages are spread by packet).

    Examples
    --------
    >>> p = dragonfly(groups=5, routers=2, hosts=2, global_ports=2)
    >>> len(p.hosts), len(p.routers)
    (20, 10)
    >>> p.route("host-0-0-0", "host-3-1-1")  # group 0's cable to group 3 is on its router 0 and lands on router 0
    ['host-0-0-0_to_router-0-0', 'router-0-0_to_router-3-0', 'router-3-0_to_router-3-1', 'router-3-1_to_host-3-1-1']
    """
    params = {"groups": groups, "routers": routers, "hosts": hosts, "global_ports": global_ports,
              "links_per_pair": links_per_pair, "arrangement": arrangement, "port_order": port_order,
              "routing": routing}  # fmt: skip
    shape = _shape(params)
    names = [host_name(g, r, k) for g in range(groups) for r in range(routers) for k in range(hosts)]
    suffix = {"minimal": "", "valiant": "-v"}.get(routing, f"-{routing}") + ("-packet" if spread == "packet" else "")
    spread_rule = None
    if spread == "packet" and routing in ("minimal", "valiant"):
        spread_rule = _spread_rule(shape, routing == "valiant", nbl is not None, link_lat, global_lat)
    zone_params = {key: value for key, value in params.items() if key != "port_order" or value != "round-robin"}
    adaptive = routing.startswith("ugal")
    zone_params |= zone_routing(routing, None, spread, revisit, adaptive, backpressure)
    return Platform(
        name=f"dragonfly-{groups}x{routers}x{hosts}{suffix}",
        hosts=[Host(name, host_speed) for name in names],
        routers=[_router(g, r) for g in range(groups) for r in range(routers)],
        links=_cables(shape, names, link_bw, link_lat, global_lat, nbl),
        route_rule=_route_rule(shape, routing == "valiant", nbl is not None, spread_rule),
        compiled=_compiled_zone(zone_params, link_bw, link_lat, global_lat, nbl, host_speed),
        spread_rule=spread_rule,
        adaptive=adaptive,
    )


def host_name(g: int, r: int, k: int) -> str:
    """The host on port k of router r of group g."""
    return f"host-{g}-{r}-{k}"


def _cables(
    shape: Dragonfly, names: list[str], link_bw: float, link_lat: float, global_lat: float, nbl: float | None
) -> dict[str, Link]:
    """Every host's cable (and limiter), every group's local cables, then the global cables."""
    links: dict[str, Link] = {}
    for name in names:
        g, r, _ = host_coordinates(name)
        add_links(links, *host_cable(name, _router(g, r), link_bw, link_lat, nbl))
    for g in range(shape.groups):
        for r in range(shape.routers):
            for s in range(r + 1, shape.routers):
                add_links(links, *duplex_link(_router(g, r), _router(g, s), link_bw, link_lat))
    for (g, r), (k, s) in shape.global_cables():
        add_links(links, *duplex_link(_router(g, r), _router(k, s), link_bw, global_lat))
    return links


def _hops(path: list[tuple[int, int]]) -> list[str]:
    """The cables between consecutive routers of a path."""
    return [f"{_router(*a)}_to_{_router(*b)}" for a, b in itertools.pairwise(path)]


def _route_rule(shape: Dragonfly, valiant: bool, limited: bool, spread: SpreadRule | None) -> RouteRule:
    """Minimal or Valiant routing between the hosts' routers (module docstring), framed by the host cables; with a
    spread rule, its cables. UGAL's route is the minimal one (an idle network's)."""
    copies = shape.links_per_pair

    def route(src: str, dst: str) -> list[str]:
        if spread is not None:
            return [name for name, _ in spread(src, dst).shares]
        (g, r, p), (k, s, q) = host_coordinates(src), host_coordinates(dst)
        hashed = mix(shape.index(g, r, p) * shape.host_count + shape.index(k, s, q))
        if valiant and g != k:
            middle = shape.intermediate(g, k, hashed)
            path = shape.valiant_hops((g, r), (k, s), middle, (hashed >> 20) % copies, (hashed >> 40) % copies)
        else:
            path = shape.router_hops((g, r), (k, s), hashed % copies)
        return with_nbl(src, dst, [f"{src}_to_{_router(g, r)}", *_hops(path), f"{_router(k, s)}_to_{dst}"], limited)

    return route


def _spread_rule(shape: Dragonfly, valiant: bool, limited: bool, link_lat: float, global_lat: float) -> SpreadRule:
    """Packets spread evenly over the minimal paths of every copy, or (Valiant) over every intermediate group and
    pair of copies: each cable with its share, in the compiled zone's order; the mean latency of the paths."""
    copies = shape.links_per_pair

    def latency(path: list[tuple[int, int]]) -> float:
        total = 0.0  # summed in route order, as the compiled zone does
        for a, b in itertools.pairwise(path):
            total += global_lat if a[0] != b[0] else link_lat
        return total

    def route(src: str, dst: str) -> SpreadRoute:
        (g, r, p), (k, s, q) = host_coordinates(src), host_coordinates(dst)
        first = mix(shape.index(g, r, p) * shape.host_count + shape.index(k, s, q)) % copies
        if valiant and g != k:
            others = [m for m in range(shape.groups) if m not in (g, k)]
            paths = [shape.valiant_hops((g, r), (k, s), m, c1, c2) for m in others for c1 in range(copies)
                     for c2 in range(copies)]  # fmt: skip
        else:
            paths = shape.minimal_copies((g, r), (k, s), first)
        between = spread_evenly(_hops(path) for path in paths)
        shares = framed(src, dst, f"{src}_to_{_router(g, r)}", f"{_router(k, s)}_to_{dst}", between, limited)
        return SpreadRoute(shares, sum(map(latency, paths)) / len(paths) + 2 * link_lat)

    return route


def _compiled_zone(
    params: Mapping[str, Any], link_bw: float, link_lat: float, global_lat: float, nbl: float | None, speed: float
) -> CompiledZone:
    """The compiled zone ``topolab_dragonfly_zone`` and the parameters it reads (the writer puts the name first)."""
    values = {**params, "link_bw": repr(float(link_bw)), "link_lat": repr(float(link_lat)),
              "global_lat": repr(float(global_lat)), "nbl": "none" if nbl is None else repr(float(nbl)),
              "host_speed": repr(float(speed))}  # fmt: skip
    return CompiledZone("topolab_dragonfly_zone", "".join(f"{key} {value}\n" for key, value in values.items()))
