"""Slim Fly: the McKay-Miller-Siran graphs of diameter 2 as router graphs, with hosts on every router.

The topology of Besta and Hoefler, "Slim Fly: A Cost Effective Low-Diameter Network Topology" (SC 2014, Sect. 3):
for a prime power ``q = 4w + delta``, delta in {-1, 0, 1}, the router graph is the McKay-Miller-Siran (MMS) graph
(McKay, Miller and Siran, "A note on large graphs of diameter two and given maximum degree", JCTB 1998; Hafner,
"Geometric realisation of the graphs of McKay-Miller-Siran", JCTB 2004): 2q^2 routers of network radix
``k' = (3q - delta) / 2`` and diameter 2, close to the Moore bound k'^2 + 1 (q = 5: the Hoffman-Singleton graph,
50 routers of radix 7, a Moore graph). Each router has ``hosts`` hosts (p); the paper's balanced choice, the
default, is p = ceil(k'/2).

Construction (Besta and Hoefler, Sect. 3.1): routers (s, x, y), s in {0, 1}, x and y in GF(q)
(``generators.finite_field``); xi a primitive element of GF(q); the generator sets X and X' of powers of xi:

* delta = 1: X = {1, xi^2, ..., xi^(q-3)}, X' = {xi, xi^3, ..., xi^(q-2)};
* delta = 0: X = {1, xi^2, ..., xi^(q-2)}, X' = {xi, xi^3, ..., xi^(q-1)};
* delta = -1: X = {1, xi^2, ..., xi^(2w-2)} + {xi^(2w-1), xi^(2w+1), ..., xi^(4w-3)},
  X' = {xi, xi^3, ..., xi^(2w-1)} + {xi^(2w), xi^(2w+2), ..., xi^(4w-2)};

(each closed under negation, so that the graph is undirected) and the edges

* (0, x, y) ~ (0, x, y') iff y - y' in X (|X| neighbours in its column),
* (1, m, c) ~ (1, m, c') iff c - c' in X' (|X'| = |X| neighbours),
* (0, x, y) ~ (1, m, c) iff y = m x + c (one per m, q neighbours: the points and lines of an affine plane).

Names (``generators.router_graph``): router (s, x, y) is number ``r = s q^2 + x q + y`` (x and y by their
encoding in ``generators.finite_field``), ``router-<r>``; hosts ``host-<r>-<k>``, router by router, port fastest,
host number ``r p + k``. Each host's cable, then one cable per edge of the router graph.

Routing: minimal and oblivious (``generators.router_graph``): at most 2 router-to-router cables; where two routers
are not adjacent, the pair of hosts picks one of their common neighbours by the hash ``mix(src * H + dst)``.

Representation: always a compiled zone, the generic ``simgrid_cpp/router_graph_zone.cpp`` (the router graph in
its parameter file; distances at load time, routes on demand by the same rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generators.declare import family
from generators.errors import TopologyError
from generators.finite_field import FiniteField
from generators.finite_field import prime_power
from generators.model import Host
from generators.model import Platform
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import cable_params
from generators.params import choice
from generators.params import nbl_param
from generators.params import optional
from generators.params import positive_int
from generators.router_graph import RouterGraph
from generators.router_graph import cables
from generators.router_graph import compiled_zone
from generators.router_graph import host_name
from generators.router_graph import route_rule
from generators.router_graph import router_name
from generators.router_graph import spread_rule
from generators.size import Size
from generators.size import switched_size
from generators.spread import ROUTING_MODES
from generators.spread import backpressure_param
from generators.spread import revisit_param
from generators.spread import spread_param
from generators.spread import zone_routing

__all__ = ["MAX_Q", "delta", "estimate", "generator_sets", "mms_graph", "network_radix", "router_number", "slimfly"]

MAX_Q = 64
"""The largest q built: 2 x 64^2 = 8192 routers of radix 96 (the compiled zone holds R^2 bytes of distances, and
computes them by R breadth-first searches at load time)."""


def delta(q: int) -> int:
    """delta in q = 4w + delta, for q mod 4 in {0, 1, 3}.

    >>> delta(5), delta(7), delta(8)
    (1, -1, 0)
    """
    return {0: 0, 1: 1, 3: -1}[q % 4]


def network_radix(q: int) -> int:
    """k' = (3q - delta) / 2: every router's number of router-to-router cables."""
    return (3 * q - delta(q)) // 2


def check_q(q: int) -> None:
    """``TopologyError`` unless q is a prime power >= 3 with q mod 4 in {0, 1, 3}, at most :data:`MAX_Q`."""
    if q > MAX_Q:
        raise TopologyError(
            f"q must be at most {MAX_Q} (2q^2 = {2 * MAX_Q**2} routers: the compiled zone holds the R^2 distances "
            f"between routers), got {q}"
        )
    if prime_power(q) is None or q % 4 == 2:  # q = 2 is 2 mod 4: the smallest q is 3
        reason = "not a prime power" if prime_power(q) is None else "q mod 4 = 2"
        raise TopologyError(
            "q must be a prime power >= 3 with q mod 4 in {0, 1, 3} (q = 4w + delta, delta in {-1, 0, 1}: the MMS "
            f"graph is built on the field GF(q)), got {q}: {reason}"
        )


def generator_sets(field: FiniteField) -> tuple[frozenset[int], frozenset[int]]:
    """X and X' of the module docstring: powers of the field's primitive element.

    >>> x, x_prime = generator_sets(FiniteField.of(5))  # xi = 2: X = {1, 4}, X' = {2, 3}
    >>> sorted(x), sorted(x_prime)
    ([1, 4], [2, 3])
    """
    q, powers = field.q, [*field.powers(), 1]  # xi^0 .. xi^(q-1) = 1
    w, d = (q - delta(q)) // 4, delta(q)
    if d == 1:
        exponents = list(range(0, q - 2, 2)), list(range(1, q - 1, 2))
    elif d == 0:
        exponents = list(range(0, q - 1, 2)), list(range(1, q, 2))
    else:
        exponents = (
            [*range(0, 2 * w - 1, 2), *range(2 * w - 1, 4 * w - 2, 2)],
            [*range(1, 2 * w, 2), *range(2 * w, 4 * w - 1, 2)],
        )
    return frozenset(powers[e] for e in exponents[0]), frozenset(powers[e] for e in exponents[1])


def router_number(s: int, x: int, y: int, q: int) -> int:
    """The number r = s q^2 + x q + y of router (s, x, y)."""
    return (s * q + x) * q + y


def mms_graph(q: int) -> tuple[tuple[int, ...], ...]:
    """The MMS graph of q: each router's neighbours, increasing (module docstring: the three edge rules).

    >>> graph = mms_graph(3)
    >>> len(graph), {len(around) for around in graph}, graph[0]
    (18, {5}, (1, 2, 9, 12, 15))
    """
    check_q(q)
    f = FiniteField.of(q)
    x_set, x_prime = generator_sets(f)
    elements = range(q)
    graph: list[tuple[int, ...]] = []
    for x in elements:  # s = 0: (0, x, y)
        for y in elements:
            column = [router_number(0, x, other, q) for other in elements if f.sub(y, other) in x_set]
            lines = [router_number(1, m, f.sub(y, f.mul(m, x)), q) for m in elements]  # y = m x + c
            graph.append(tuple(sorted(column + lines)))
    for m in elements:  # s = 1: (1, m, c)
        for c in elements:
            column = [router_number(1, m, other, q) for other in elements if f.sub(c, other) in x_prime]
            points = [router_number(0, x, f.add(f.mul(m, x), c), q) for x in elements]
            graph.append(tuple(sorted(column + points)))
    return tuple(graph)


def _hosts(params: Mapping[str, Any]) -> int:
    """p: the hosts per router given, or the paper's balanced ceil(k'/2)."""
    return params["hosts"] if params["hosts"] is not None else (network_radix(params["q"]) + 1) // 2


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`slimfly` builds: 2q^2 routers of p hosts (their cables and limiters), 2q^2 k' / 2 router
    cables; a compiled zone.

    >>> size = estimate({"q": 5, "hosts": None, "nbl": None})
    >>> size.hosts, size.routers, size.links
    (200, 50, 750)
    """
    q = params["q"]
    check_q(q)
    return switched_size(2 * q * q * _hosts(params), 2 * q * q, q * q * network_radix(q), params["nbl"] is not None)


@family(
    summary="Slim Fly (Besta and Hoefler 2014): the MMS router graph of diameter 2; minimal, Valiant or UGAL",
    params=(
        Param("q", positive_int, "the prime power q = 4w + delta, delta in {-1, 0, 1}: 2q^2 routers"),
        Param(
            "hosts",
            optional(positive_int),
            "hosts per router (p); none: ceil(k'/2), the paper's balanced choice",
            "none",
        ),
        *cable_params("25GBps", "100ns"),
        nbl_param(),
        *NODE_PARAMS,
        Param(
            "routing",
            choice(*ROUTING_MODES),
            "minimal, valiant (through a random router), ugal-l or ugal-g (adaptive: docs/adaptive-routing.md)",
            "minimal",
            recorded_when_default=False,
        ),
        spread_param(),
        revisit_param(),
        backpressure_param(),
    ),
    estimate=estimate,
    smallest={"q": 3},
    drawn={"q": 5, "hosts": 1},  # the Hoffman-Singleton graph: 50 routers of radix 7, diameter 2
)
def slimfly(
    q: int,
    hosts: int | None,
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
    routing: str,
    spread: str,
    revisit: float,
    backpressure: int,
) -> Platform:
    """Return the Slim Fly ``slimfly-q<q>`` (``-p<hosts>`` appended when hosts is not the default, then the routing
    rule and ``-packet`` when not the default).

    Examples
    --------
    >>> p = slimfly(q=3)
    >>> p.name, len(p.hosts), len(p.routers)
    ('slimfly-q3', 54, 18)
    >>> p.route("host-0-0", "host-3-1")  # points (0, 0, 0) and (0, 1, 0): through the line y = 0, router (1, 0, 0)
    ['host-0-0_to_router-0', 'router-0_to_router-9', 'router-9_to_router-3', 'router-3_to_host-3-1']
    """
    p = _hosts({"q": q, "hosts": hosts})
    graph = RouterGraph(mms_graph(q), p)
    default = hosts is None or hosts == _hosts({"q": q, "hosts": None})
    suffix = ("" if routing == "minimal" else f"-{routing}") + ("-packet" if spread == "packet" else "")
    limited = nbl is not None
    spreading = None
    adaptive = routing.startswith("ugal")
    if spread == "packet" and not adaptive:
        spreading = spread_rule(graph, limited, routing == "valiant", link_lat)
    return Platform(
        name=f"slimfly-q{q}" + ("" if default else f"-p{p}") + suffix,
        hosts=[Host(host_name(r, k), host_speed) for r in range(graph.router_count) for k in range(p)],
        routers=[router_name(r) for r in range(graph.router_count)],
        links=cables(graph, link_bw, link_lat, nbl),
        route_rule=route_rule(graph, limited, routing, spreading),
        compiled=compiled_zone(
            graph,
            link_bw,
            link_lat,
            nbl,
            host_speed,
            zone_routing(routing, "minimal", spread, revisit, adaptive, backpressure),
        ),
        spread_rule=spreading,
        adaptive=adaptive,
    )
