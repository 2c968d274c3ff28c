"""HyperX: switches at the points of a lattice, every two switches that differ in one coordinate joined directly.

The topology of Ahn, Binkert, Davis, McLaren and Schreiber, "HyperX: Topology, Routing, and Packaging of Efficient
Large-Scale Networks" (SC 2009, Sect. 2): switches at the points of an ``S1 x ... x SL`` lattice (``dims``), every
two switches whose coordinates differ in exactly one dimension joined by ``links`` cables (K), ``hosts`` hosts per
switch (T). Along each dimension the switches of a line form a clique, so a switch has ``K sum(S_i - 1)`` ports to
other switches and T to hosts (7 x 7 x 7 with T = 18: 6174 hosts on 343 switches of 36 ports). The flattened
butterfly of Kim, Dally and Abts (ISCA 2007) is a HyperX with K = 1 and every ``S_i`` equal; a 1-D HyperX is a
clique of switches.

Names: switch ``switch-<i>``, where i is the number of its coordinates with the first dimension fastest
(``generators.topologies.torus.index``); host ``host-<i>-<k>`` on port k of switch i. Hosts are listed switch by
switch, port fastest: host-i-k is host number ``i * hosts + k``. A cable between switches a < b is two directed links,
``switch-<a>_to_switch-<b>`` and ``switch-<b>_to_switch-<a>``; with K > 1 the parallel cables are lanes 0 .. K-1,
``switch-<a>_to_switch-<b>#<lane>`` and back (``generators.model.duplex_link``).

Routing: dimension-ordered and minimal, oblivious (a fixed route per pair of hosts, as SimGrid's static routes
need): for each dimension in order, dimension 0 first, where the source's and the destination's switches differ,
one hop straight to the switch with the destination's coordinate in that dimension. A route crosses as many
switch-to-switch cables as the two switches have differing coordinates (at most L, the diameter); hosts of one
switch go up and down only. With K > 1, a pair of hosts takes lane ``mix(src * H + dst) mod K`` (H hosts in all,
``generators.mixing.mix``) on every hop of its route, so that the pairs spread over the parallel cables as random
choices would.

``routing=dal`` is Ahn et al.'s dimensionally-adaptive, load-balanced routing (Sect. 4; docs/adaptive-routing.md):
at every switch a message takes the least loaded of its options, a straight hop in any dimension still to align or
one deroute per dimension to another switch of that line; an idle network's route is the dimension-ordered one,
the model's route. ``routing=valiant`` is oblivious: dimension-ordered to an intermediate switch, the
``((hash >> 32) mod (switches - 2))``-th other than the two ends, then dimension-ordered on, on the pair's lane.
``spread=packet`` spreads a message's packets over the K lanes (dimension-ordered routing), over every intermediate
switch (Valiant), or places it in parts, one after the other (DAL).

Representation: always a compiled zone (``simgrid_cpp/hyperx_zone.cpp``, sharing ``zone_common.hpp`` with the
other compiled zones), which builds the same hosts and links, name for name, and computes each route on demand
by the same rule, in memory linear in the machine. Explicit routes are hosts^2 (38 million for the 6174-host
machine). In a plain graph of switches, two switches that differ in two coordinates have two fewest-links paths;
a layered graph (one graph-only router per switch and dimension, as ``generators.topologies.torus`` does) would leave
only the dimension-ordered one, but no graph can choose a lane per pair of hosts.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
from generators.params import int_tuple
from generators.params import nbl_param
from generators.params import positive_int
from generators.router_graph import host_coordinates
from generators.router_graph import host_name
from generators.size import Size
from generators.size import switched_size
from generators.spread import framed
from generators.spread import hop_latency
from generators.spread import revisit_param
from generators.spread import spread_evenly
from generators.spread import spread_param
from generators.spread import zone_routing
from generators.topologies.torus import MAX_DIMS
from generators.topologies.torus import coordinates
from generators.topologies.torus import index

__all__ = ["HyperX", "estimate", "host_coordinates", "host_name", "hyperx", "switch_name"]


@dataclass(frozen=True)
class HyperX:
    """The shape of a HyperX: switches per dimension, cables per pair of neighbouring switches, hosts per switch."""

    dims: tuple[int, ...]
    links: int
    hosts: int

    @property
    def switch_count(self) -> int:
        """Switches in the machine: the product of the dimensions."""
        return math.prod(self.dims)

    @property
    def host_count(self) -> int:
        """Hosts in the machine."""
        return self.switch_count * self.hosts

    def neighbours(self, switch: int) -> list[int]:
        """The switches that differ from ``switch`` in exactly one coordinate, dimension by dimension.

        >>> HyperX((3, 2), 1, 1).neighbours(0)
        [1, 2, 3]
        """
        coords = coordinates(switch, self.dims)
        return [
            index((*coords[:d], v, *coords[d + 1 :]), self.dims)
            for d, size in enumerate(self.dims)
            for v in range(size)
            if v != coords[d]
        ]

    def cables(self) -> list[tuple[int, int]]:
        """Every pair of switches that differ in exactly one coordinate, lower number first, switch by switch
        (each pair stands for ``links`` cables)."""
        return [(a, b) for a in range(self.switch_count) for b in self.neighbours(a) if a < b]

    def switch_path(self, src: int, dst: int) -> list[int]:
        """The switches of the dimension-ordered route from switch ``src`` to switch ``dst`` (both ends included).

        >>> HyperX((3, 3, 2), 1, 1).switch_path(0, 17)  # (0, 0, 0) -> (2, 0, 0) -> (2, 2, 0) -> (2, 2, 1)
        [0, 2, 8, 17]
        """
        here, target = list(coordinates(src, self.dims)), coordinates(dst, self.dims)
        path = [src]
        for d, c in enumerate(target):
            if here[d] != c:
                here[d] = c
                path.append(index(tuple(here), self.dims))
        return path

    def lane(self, src_host: int, dst_host: int) -> int | None:
        """The lane of every hop of the route between hosts number ``src_host`` and ``dst_host`` (None: K = 1)."""
        return None if self.links == 1 else mix(src_host * self.host_count + dst_host) % self.links


def switch_name(switch: int) -> str:
    """The switch number ``switch``."""
    return f"switch-{switch}"


def _shape(params: Mapping[str, Any]) -> HyperX:
    """The checked shape: at most ``generators.topologies.torus.MAX_DIMS`` dimensions, and parallel cables only where
    there are two switches to join (so that K always counts in the size: a huge one is refused by the limits)."""
    dims = params["dims"]
    if len(dims) > MAX_DIMS:
        raise TopologyError(
            f"dims must have at most {MAX_DIMS} dimensions, got {len(dims)} (a dimension of length 1 adds nothing "
            "but work)"
        )
    shape = HyperX(tuple(dims), params["links"], params["hosts"])
    if shape.links > 1 and shape.switch_count == 1:
        raise TopologyError(
            f"links={shape.links} parallel cables need two switches to join, but dims "
            f"{'x'.join(map(str, dims))} is a single switch (give links=1)"
        )
    return shape


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`hyperx` builds: hosts with their cables (and limiters), and K cables per pair of switches that
    differ in one coordinate, ``K prod(S) sum(S_i - 1) / 2`` (each switch has ``K (S_i - 1)`` cables along
    dimension i, each counted at both ends); a compiled zone.

    >>> size = estimate({"dims": (7, 7, 7), "links": 1, "hosts": 18, "nbl": None})
    >>> size.hosts, size.routers, size.links
    (6174, 343, 18522)
    """
    shape = _shape(params)
    switches = shape.switch_count
    # switches * (S_i - 1) is even: S_i - 1 is, or S_i is and divides switches.
    cables = shape.links * sum(switches * (size - 1) // 2 for size in shape.dims)
    return switched_size(shape.host_count, switches, cables, params["nbl"] is not None)


@family(
    summary="HyperX (Ahn et al. 2009): a lattice of switches, each line a clique; dimension-ordered, Valiant or DAL "
    "routing",
    params=(
        Param("dims", int_tuple, "switches along each dimension, e.g. 7x7x7"),
        Param("hosts", positive_int, "hosts per switch (T)"),
        Param("links", positive_int, "cables between every two switches that differ in one coordinate (K)", "1"),
        *cable_params("25GBps", "100ns"),
        nbl_param(),
        *NODE_PARAMS,
        Param(
            "routing",
            choice("dimension-order", "dal", "valiant"),
            "dimension-order, dal (adaptive, Ahn et al.: docs/adaptive-routing.md) or valiant",
            "dimension-order",
            recorded_when_default=False,
        ),
        spread_param(packet="a message's packets spread over the lanes, or placed in parts"),
        revisit_param(),
    ),
    estimate=estimate,
    smallest={"dims": "2", "hosts": 1},
    drawn={"dims": "4x4", "hosts": 2},  # a 2-D HyperX: rows and columns of switches all-to-all
)
def hyperx(
    dims: tuple[int, ...],
    hosts: int,
    links: int,
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
    routing: str,
    spread: str,
    revisit: float,
) -> Platform:
    """Return the HyperX ``hyperx-<S1>x<S2>x...`` (``-k<K>`` appended when K > 1, ``-dal`` and ``-packet`` for those
    routing choices).

    Examples
    --------
    >>> p = hyperx(dims=(3, 3), hosts=2)
    >>> p.name, len(p.hosts), len(p.routers), len(p.links)
    ('hyperx-3x3', 18, 9, 72)
    >>> p.route("host-0-0", "host-8-1")  # (0, 0) -> (2, 0) -> (2, 2): dimension 0 first
    ['host-0-0_to_switch-0', 'switch-0_to_switch-2', 'switch-2_to_switch-8', 'switch-8_to_host-8-1']
    >>> hyperx(dims="4", links=2, hosts=1).route("host-3-0", "host-1-0")  # lane mix(3 * 4 + 1) mod 2
    ['host-3-0_to_switch-3', 'switch-3_to_switch-1#1', 'switch-1_to_host-1-0']
    """
    shape = _shape({"dims": dims, "links": links, "hosts": hosts})
    if routing == "valiant" and shape.switch_count < 3:
        raise TopologyError(f"valiant routing needs at least 3 switches, got {shape.switch_count}")
    suffix = ("" if routing == "dimension-order" else f"-{routing}") + ("-packet" if spread == "packet" else "")
    spread_rule = None
    if spread == "packet" and routing != "dal":
        spread_rule = _spread_rule(shape, nbl is not None, link_lat, routing == "valiant")
    return Platform(
        name="hyperx-" + "x".join(map(str, dims)) + (f"-k{links}" if links > 1 else "") + suffix,
        hosts=[Host(host_name(i, k), host_speed) for i in range(shape.switch_count) for k in range(hosts)],
        routers=[switch_name(i) for i in range(shape.switch_count)],
        links=_cables(shape, link_bw, link_lat, nbl),
        route_rule=_route_rule(shape, nbl is not None, spread_rule, routing == "valiant"),
        compiled=_compiled_zone(
            shape,
            link_bw,
            link_lat,
            nbl,
            host_speed,
            zone_routing(routing, "dimension-order", spread, revisit, routing == "dal"),
        ),
        spread_rule=spread_rule,
        adaptive=routing == "dal",
    )


def _cables(shape: HyperX, link_bw: float, link_lat: float, nbl: float | None) -> dict[str, Link]:
    """Every host's cable (and limiter), host by host, then the K cables of every pair of neighbouring switches."""
    links: dict[str, Link] = {}
    for i in range(shape.switch_count):
        for k in range(shape.hosts):
            add_links(links, *host_cable(host_name(i, k), switch_name(i), link_bw, link_lat, nbl))
    lanes: Sequence[int | None] = (None,) if shape.links == 1 else range(shape.links)
    for a, b in shape.cables():
        for lane in lanes:
            add_links(links, *duplex_link(switch_name(a), switch_name(b), link_bw, link_lat, lane))
    return links


def _hop(a: int, b: int, lane: int | None) -> str:
    """The directed link from switch ``a`` to switch ``b`` on ``lane`` (either way round: a cable is both)."""
    return f"{switch_name(a)}_to_{switch_name(b)}" + ("" if lane is None else f"#{lane}")


def _route_rule(shape: HyperX, limited: bool, spread: SpreadRule | None, valiant: bool) -> RouteRule:
    """Dimension-ordered (or Valiant) routing between the hosts' switches (module docstring), framed by the host
    cables; a spread route's links."""

    def route(src: str, dst: str) -> list[str]:
        if spread is not None:
            return [name for name, _ in spread(src, dst).shares]
        (a, p), (b, q) = host_coordinates(src), host_coordinates(dst)
        lane = shape.lane(a * shape.hosts + p, b * shape.hosts + q)
        switches = shape.switch_path(a, b)
        if valiant and a != b:
            middle = _intermediate(
                shape, a, b, mix((a * shape.hosts + p) * shape.host_count + b * shape.hosts + q) >> 32
            )
            switches = shape.switch_path(a, middle) + shape.switch_path(middle, b)[1:]
        hops = [_hop(x, y, lane) for x, y in itertools.pairwise(switches)]
        return with_nbl(src, dst, [f"{src}_to_{switch_name(a)}", *hops, f"{switch_name(b)}_to_{dst}"], limited)

    return route


def _intermediate(shape: HyperX, a: int, b: int, hashed: int) -> int:
    """Valiant's intermediate switch for switches a != b: the ``hashed mod (switches - 2)``-th other one."""
    m = hashed % (shape.switch_count - 2)
    for skipped in sorted((a, b)):
        m += m >= skipped
    return m


def _spread_rule(shape: HyperX, limited: bool, link_lat: float, valiant: bool) -> SpreadRule:
    """Packets spread evenly over the K lanes of the dimension-ordered path, the pair's lane first, or (Valiant)
    over every intermediate switch, on the pair's lane."""

    def route(src: str, dst: str) -> SpreadRoute:
        (a, p), (b, q) = host_coordinates(src), host_coordinates(dst)
        first = shape.lane(a * shape.hosts + p, b * shape.hosts + q)
        if valiant and a != b:
            lane = first
            paths = [shape.switch_path(a, m) + shape.switch_path(m, b)[1:] for m in range(shape.switch_count)
                     if m not in (a, b)]  # fmt: skip
            hops = [[_hop(x, y, lane) for x, y in itertools.pairwise(path)] for path in paths]
        else:
            lanes = [None] if first is None else [(first + lane) % shape.links for lane in range(shape.links)]
            path = shape.switch_path(a, b)
            hops = [[_hop(x, y, lane) for x, y in itertools.pairwise(path)] for lane in lanes]
        between = spread_evenly(hops)
        shares = framed(src, dst, f"{src}_to_{switch_name(a)}", f"{switch_name(b)}_to_{dst}", between, limited)
        mean = sum(hop_latency(len(h), link_lat) for h in hops) / len(hops)
        return SpreadRoute(shares, mean + 2 * link_lat)

    return route


def _compiled_zone(
    shape: HyperX, link_bw: float, link_lat: float, nbl: float | None, speed: float, chosen: Mapping[str, str]
) -> CompiledZone:
    """The compiled zone ``topolab_hyperx_zone`` and the parameters it reads (the writer puts the name first); the
    routing keys ``chosen`` (spread.zone_routing) only when not the default, so that older files read the same."""
    values = {"dims": " ".join(map(str, shape.dims)), "links": shape.links, "hosts": shape.hosts, **chosen,
              "link_bw": repr(float(link_bw)), "link_lat": repr(float(link_lat)),
              "nbl": "none" if nbl is None else repr(float(nbl)), "host_speed": repr(float(speed))}  # fmt: skip
    return CompiledZone("topolab_hyperx_zone", "".join(f"{key} {value}\n" for key, value in values.items()))
