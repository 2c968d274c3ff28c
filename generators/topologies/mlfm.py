"""Multi-layer full mesh (MLFM): Shimizu, Miwa, Nakashima, "Acceleration of All-to-all Communication
on Multi-Layer Full Mesh, Low-cost Connectable Network Topology".

With switches of radix 2d: d layers of d + 1 leaf switches, d servers per leaf; one spine switch
{a, b} for every pair of leaf columns a < b, cabled to leaf a and leaf b of every layer. Full size:
d^2 (d + 1) servers, d (d + 1) leaves, d (d + 1) / 2 spines (36-port switches, d = 18: 6156 servers).

Names: server (i, j, k) (layer i, column j, port k) is ``server-i-j-k``, leaf (i, j) ``leaf-i-j``,
spine {a, b} ``spine-a-b`` with a < b. Hosts are listed layer by layer, column by column, port by
port (k fastest): rank r of an allocation of n layers x l columns x m ports runs on server (i, j, k)
with r = (i*l + j)*m + k (:func:`allocation_hosts`), the rank order of the paper's schedule.

Routing (the paper's):

* same leaf: server -> leaf -> server;
* different columns j != j': leaf (i, j) -> spine {j, j'} -> leaf (i', j');
* same column j, different layer: leaf (i, j) -> spine {j, c} -> leaf (i', j), where the spine is
  chosen by the source's port k, c = (j + k + 1) mod (d + 1) (``spine_choice="source"``, the
  paper), or by the destination's port k' (``spine_choice="destination"``, what InfiniBand's
  destination-based forwarding gives with one LID per port; also congestion-free for the paper's
  schedule, see docs/mlfm.md).

``routing=adaptive`` (docs/adaptive-routing.md): same-column traffic takes, when a message starts, the spine {j, c}
whose cable up from the source's leaf is least loaded (the rule's spine first on a tie, so that an idle network's
route is the rule's); cross-column traffic has one spine. ``spread=packet`` spreads same-column traffic evenly over
the d spines (static) or places it in parts (adaptive). Both need the compiled zone.

Partial builds: ``layers`` < d and ``servers_per_leaf`` per layer (the paper's testbed: d = 3, three
layers with 3, 3 and 2 servers per leaf, 32 servers). Every leaf and spine of the full machine's
columns is present.

Representation (``zone``): by default (``auto``) a SimGrid Dijkstra zone over a graph that is linear in
the machine (about 3 edges per server and 3 per leaf-spine cable), built so that the only fewest-links
path between two servers is the rule's route. Each spine appears as two kinds of graph-only routers:
``spine-a-b.from-a`` (entered from column a, leaves towards column b: cross-column traffic) and
``spine-a-b.turn-a`` (reached only by the same-column traffic that this spine carries, and leading back
into column a). SimGrid runs a Dijkstra over the whole graph for every new source (about 7000 nodes at
d = 18) and walks the graph's edge lists for every route. With ``zone="compiled"``, a compiled zone
(``simgrid_cpp/mlfm_zone.cpp``, sharing ``zone_common.hpp`` with the other compiled zones) builds the
same hosts and links, name for name, and computes each route by the rule itself, in constant time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generators.declare import family
from generators.errors import TopologyError
from generators.errors import shown
from generators.model import CompiledZone
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import RouteRule
from generators.model import RoutingGraph
from generators.model import SpreadRoute
from generators.model import SpreadRule
from generators.model import add_links
from generators.model import duplex_link
from generators.model import host_cable
from generators.model import node_link_name
from generators.model import with_nbl
from generators.node import NODE_PARAMS
from generators.params import Param
from generators.params import bandwidth
from generators.params import choice
from generators.params import int_or_ints
from generators.params import latency
from generators.params import nbl_param
from generators.params import optional
from generators.params import optional_bandwidth
from generators.params import positive_int
from generators.size import Size
from generators.size import count_text
from generators.size import switched_size
from generators.spread import framed
from generators.spread import revisit_param
from generators.spread import spread_evenly
from generators.spread import spread_param
from generators.spread import zone_routing

__all__ = ["SPINE_CHOICES", "ZONES", "allocation_hosts", "estimate", "mlfm", "server_coordinates"]

SPINE_CHOICES = ("source", "destination")
ZONES = ("auto", "compiled")
"""The representations (module docstring): ``auto``, the XML Dijkstra zone, or ``compiled``."""


def server_name(i: int, j: int, k: int) -> str:
    """Name of server (i, j, k)."""
    return f"server-{i}-{j}-{k}"


def leaf_name(i: int, j: int) -> str:
    """Name of the leaf switch of layer i, column j."""
    return f"leaf-{i}-{j}"


def spine_name(a: int, b: int) -> str:
    """Name of the spine switch of leaf columns a and b."""
    return f"spine-{min(a, b)}-{max(a, b)}"


def server_coordinates(host: str) -> tuple[int, int, int]:
    """(i, j, k) of ``server-i-j-k``."""
    try:
        i, j, k = (int(part) for part in host.removeprefix("server-").split("-"))
    except ValueError:
        raise TopologyError(f"{host!r} is not an MLFM server name (server-<layer>-<column>-<port>)") from None
    return i, j, k


def allocation_hosts(platform: Platform, n: int, l: int, m: int) -> list[str]:  # noqa: E741 (the paper's l)
    """Servers (i, j, k) with i < n, j < l, k < m in rank order r = (i*l + j)*m + k.

    ``TopologyError`` if the allocation does not fit the platform (a layer, column or port it needs is
    missing).
    """
    built, hosts = set(platform.host_names), []
    if n * l * m > len(built):  # counted first: a listing of n l m servers could exhaust memory before it failed
        raise TopologyError(
            f"MLFM allocation n={n}, l={l}, m={m} does not fit {platform.name}: it needs {count_text(n * l * m)} "
            f"servers, the platform has {len(built)}"
        )
    # Stopping at the first server missing (itertools.product would list each range whole before its first tuple).
    for i, j, k in ((i, j, k) for i in range(n) for j in range(l) for k in range(m)):
        if server_name(i, j, k) not in built:
            raise TopologyError(
                f"MLFM allocation n={n}, l={l}, m={m} does not fit {platform.name}: it has no {server_name(i, j, k)} "
                f"(layers, columns and servers per leaf are limited by the build)"
            )
        hosts.append(server_name(i, j, k))
    return hosts


def _allocation_placement(platform: Platform, argument: str) -> list[str]:
    """Named placement ``allocation:n,l,m``."""
    parts = argument.replace("x", ",").split(",")
    if len(parts) != 3:
        raise TopologyError(f"placement allocation needs n,l,m (three integers), got {shown(argument)}")
    n, l, m = (positive_int(part, f"placement allocation {key}") for part, key in zip(parts, "nlm", strict=True))  # noqa: E741
    return allocation_hosts(platform, n, l, m)


def estimate(params: Mapping[str, Any]) -> Size:
    """What :func:`mlfm` builds, counted per column without listing the layers (``d`` may be huge): the servers
    with their cables (and limiters), the spine cables, and the routing graph (module docstring) or, compiled, the
    switches (leaves and spines) of a compiled zone.

    >>> params = {"d": 18, "layers": None, "servers_per_leaf": None, "spine_choice": "source", "nbl": None}
    >>> estimate({**params, "zone": "auto"}).hosts, estimate({**params, "zone": "compiled"}).links
    (6156, 24624)
    """
    d = params["d"]
    layers, given = _layer_counts(d, params["layers"], params["servers_per_leaf"])
    columns, limited = d + 1, params["nbl"] is not None
    servers = columns * (given[0] * layers if len(given) == 1 else sum(given))
    pairs = columns * (columns - 1)  # ordered pairs of columns
    # With source choice, ports k < max(per leaf) pick turn columns j+1 .. j+k+1: all distinct, never j itself.
    compiled = _needs_compiled(params.get("routing", "static"), params.get("spread", "message"))
    if params["zone"] == "compiled" or compiled:
        return switched_size(servers, layers * columns + pairs // 2, pairs * layers, limited)
    turns = columns * max(given) if params["spine_choice"] == "source" else pairs
    return Size(
        hosts=servers,
        routers=layers * columns + pairs // 2 + pairs + turns,
        links=(2 + limited) * servers + 2 * pairs * layers,
        edges=3 * servers + 2 * pairs * layers + turns * layers,
        edge_links=(4 + 3 * limited) * servers + 2 * pairs * layers + turns * layers,
    )


@family(
    summary="Multi-layer full mesh: d layers x (d+1) leaves x d servers, a spine per pair of leaf columns",
    params=(
        Param("d", positive_int, "half the switch radix: d+1 columns, up to d layers of leaves, d servers per leaf"),
        Param("layers", optional(positive_int), "layers built (partial build), 1..d, or none for d", "none"),
        Param(
            "servers_per_leaf", optional(int_or_ints), "servers per leaf, one value or one per layer ('3,3,2')", "none"
        ),
        Param("link_bw", bandwidth, "server-leaf cable bandwidth per direction (4x QDR InfiniBand data rate)", "4GBps"),
        Param(
            "spine_bw",
            optional_bandwidth,
            "leaf-spine cable bandwidth per direction, or none for link_bw (QDR: a QDR leaf port trains at QDR)",
            "none",
        ),
        Param("link_lat", latency, "latency of every cable", "100ns"),
        Param(
            "spine_choice",
            choice(*SPINE_CHOICES),
            "port that picks the spine of same-column traffic: source|destination",
            "source",
        ),
        nbl_param("server-link"),
        *NODE_PARAMS,
        Param(
            "zone",
            choice(*ZONES),
            "SimGrid representation: auto (XML: a Dijkstra zone over the routing graph) or compiled (a shared "
            "object that computes each route by the rule: the platform file must end in .so)",
            "auto",
            recorded_when_default=False,
        ),
        Param(
            "routing",
            choice("static", "adaptive"),
            "static (the spine_choice rule) or adaptive (same-column traffic's least loaded spine; compiled zone)",
            "static",
            recorded_when_default=False,
        ),
        spread_param("one spine per message", "same-column packets spread over every spine; compiled zone"),
        revisit_param(),
    ),
    estimate=estimate,
    placements={"allocation": _allocation_placement},
    smallest={"d": 2},
    drawn={"d": 3, "servers_per_leaf": "3,3,2"},  # the MLFM paper's 32-server testbed
)
def mlfm(
    d: int,
    layers: int | None,
    servers_per_leaf: tuple[int, ...] | None,
    link_bw: float,
    spine_bw: float | None,
    link_lat: float,
    spine_choice: str,
    nbl: float | None,
    host_speed: float,
    zone: str,
    routing: str,
    spread: str,
    revisit: float,
) -> Platform:
    """Return the MLFM model of radix 2d.

    Examples
    --------
    >>> p = mlfm(3)
    >>> len(p.hosts), len([r for r in p.routers if r.startswith("leaf")]), len([r for r in p.routers if "spine" in r])
    (36, 12, 6)
    >>> p.route("server-0-0-1", "server-2-3-0")  # different columns: spine {0, 3}
    ['server-0-0-1_to_leaf-0-0', 'leaf-0-0_to_spine-0-3', 'spine-0-3_to_leaf-2-3', 'leaf-2-3_to_server-2-3-0']
    >>> p.route("server-0-0-1", "server-1-0-2")[1]  # same column, source port 1: spine {0, 2}
    'leaf-0-0_to_spine-0-2'
    >>> mlfm(3, zone="compiled").compiled.library
    'topolab_mlfm_zone'
    """
    per_leaf = _servers_per_leaf(d, layers, servers_per_leaf)
    columns = d + 1
    limited = nbl is not None
    spine_bw = link_bw if spine_bw is None else spine_bw
    links = _server_cables(per_leaf, columns, link_bw, link_lat, nbl)
    add_links(links, *_spine_cables(len(per_leaf), columns, spine_bw, link_lat))
    chosen = zone_routing(routing, "static", spread, revisit, adaptive=routing == "adaptive")
    compiled = None
    if zone == "compiled" or _needs_compiled(routing, spread):
        compiled = _compiled_zone(d, per_leaf, spine_bw, spine_choice, link_bw, link_lat, nbl, host_speed, chosen)
    spread_rule = None
    if spread == "packet" and routing == "static":
        spread_rule = _spread_rule(columns, spine_choice, limited, link_lat)
    suffix = ("-adaptive" if routing == "adaptive" else "") + ("-packet" if spread == "packet" else "")
    return Platform(
        name=f"mlfm-{d}{suffix}",
        hosts=[Host(server_name(*s), host_speed) for s in _servers(per_leaf, columns)],
        routers=[leaf_name(i, j) for i in range(len(per_leaf)) for j in range(columns)]
        + [spine_name(*spine) for spine in _spines(columns)],
        links=links,
        route_rule=_route_rule(columns, spine_choice, limited, spread_rule),
        graph=None if compiled is not None else _routing_graph(per_leaf, columns, spine_choice, limited),
        spread_rule=spread_rule,
        adaptive=routing == "adaptive",
        compiled=compiled,
    )


def _layer_counts(d: int, layers: int | None, servers_per_leaf: tuple[int, ...] | None) -> tuple[int, tuple[int, ...]]:
    """The number of layers built and the servers per leaf as given (one value, or one per layer), checked against
    d without listing the layers."""
    layers = d if layers is None else layers
    if not 1 <= layers <= d:
        raise TopologyError(f"layers must be between 1 and d={d}, got {layers}")
    given = (d,) if servers_per_leaf is None else tuple(servers_per_leaf)
    if len(given) not in (1, layers):
        raise TopologyError(f"servers_per_leaf needs one value or one per layer ({layers}), got {len(given)}")
    if not all(1 <= count <= d for count in given):
        raise TopologyError(f"servers_per_leaf values must be between 1 and d={d}, got {shown(list(given))}")
    return layers, given


def _servers_per_leaf(d: int, layers: int | None, servers_per_leaf: tuple[int, ...] | None) -> tuple[int, ...]:
    """The servers on each leaf of every layer built (one value per layer), checked against d."""
    layers, given = _layer_counts(d, layers, servers_per_leaf)
    return given * layers if len(given) == 1 else given


def _servers(per_leaf: tuple[int, ...], columns: int) -> list[tuple[int, int, int]]:
    """(i, j, k) of every server, layer by layer, column by column, port by port: the hosts' order."""
    return [(i, j, k) for i in range(len(per_leaf)) for j in range(columns) for k in range(per_leaf[i])]


def _spines(columns: int) -> list[tuple[int, int]]:
    """(a, b) of every spine switch: one per pair of leaf columns a < b."""
    return [(a, b) for a in range(columns) for b in range(a + 1, columns)]


def _column_pairs(columns: int) -> list[tuple[int, int]]:
    """Every ordered pair (a, b) of distinct leaf columns, a slowest."""
    return [(a, b) for a in range(columns) for b in range(columns) if a != b]


def _turn_column(j: int, k: int, columns: int) -> int:
    """Column c of the spine {j, c} that same-column traffic of port k uses."""
    return (j + k + 1) % columns


def _server_cables(
    per_leaf: tuple[int, ...], columns: int, link_bw: float, link_lat: float, nbl: float | None
) -> dict[str, Link]:
    """The cable of every server to its leaf, and its limiter when ``nbl`` is set."""
    links: dict[str, Link] = {}
    for i, j, k in _servers(per_leaf, columns):
        add_links(links, *host_cable(server_name(i, j, k), leaf_name(i, j), link_bw, link_lat, nbl))
    return links


def _spine_cables(layers: int, columns: int, spine_bw: float, link_lat: float) -> list[Link]:
    """The cables of every spine {a, b} to leaf a and leaf b of every layer."""
    return [
        link
        for a, b in _spines(columns)
        for i in range(layers)
        for column in (a, b)
        for link in duplex_link(leaf_name(i, column), spine_name(a, b), spine_bw, link_lat)
    ]


def _needs_compiled(routing: str, spread: str) -> bool:
    """Adaptive routing and spread messages exist in the compiled zone only."""
    return routing != "static" or spread != "message"


def _route_rule(columns: int, spine_choice: str, limited: bool, spread: SpreadRule | None) -> RouteRule:
    """The paper's routing (module docstring): through the leaf, or up to the spine the rule picks and down; a
    spread route's links."""

    def route(src: str, dst: str) -> list[str]:
        if spread is not None:
            return [name for name, _ in spread(src, dst).shares]
        (i, j, k), (i2, j2, k2) = server_coordinates(src), server_coordinates(dst)
        hops = [f"{src}_to_{leaf_name(i, j)}"]
        if (i, j) != (i2, j2):
            if j != j2:
                spine = spine_name(j, j2)
            else:
                spine = spine_name(j, _turn_column(j, k if spine_choice == "source" else k2, columns))
            hops += [f"{leaf_name(i, j)}_to_{spine}", f"{spine}_to_{leaf_name(i2, j2)}"]
        hops.append(f"{leaf_name(i2, j2)}_to_{dst}")
        return with_nbl(src, dst, hops, limited)

    return route


def _spread_rule(columns: int, spine_choice: str, limited: bool, link_lat: float) -> SpreadRule:
    """Same-column traffic spread evenly over the d spines {j, c}, the rule's first (a message between two columns
    takes spine {j, j'} whole, one on one leaf no spine)."""

    def route(src: str, dst: str) -> SpreadRoute:
        (i, j, k), (i2, j2, k2) = server_coordinates(src), server_coordinates(dst)
        rule = _turn_column(j, k if spine_choice == "source" else k2, columns)
        turns = [(rule + n) % columns for n in range(columns) if (rule + n) % columns != j]
        via = [] if (i, j) == (i2, j2) else [j2] if j != j2 else turns
        leaf, leaf2 = leaf_name(i, j), leaf_name(i2, j2)
        between = spread_evenly((f"{leaf}_to_{spine_name(j, c)}", f"{spine_name(j, c)}_to_{leaf2}") for c in via)
        shares = framed(src, dst, f"{src}_to_{leaf}", f"{leaf2}_to_{dst}", between, limited)
        return SpreadRoute(shares, (2 * link_lat if via else 0.0) + 2 * link_lat)

    return route


def _routing_graph(per_leaf: tuple[int, ...], columns: int, spine_choice: str, limited: bool) -> RoutingGraph:
    """The routing graph (module docstring): servers and leaves, the spines' cross-column sides, their turn sides."""
    turns = _turn_routers(columns, max(per_leaf), spine_choice)
    edges = [
        *_server_edges(per_leaf, columns, limited),
        *_cross_column_edges(len(per_leaf), columns),
        *_turn_edges(per_leaf, columns, turns, spine_choice, limited),
    ]
    virtual = tuple(_side(a, b, "from") for a, b in _column_pairs(columns)) + tuple(
        _side(a, c, "turn") for a, c in turns
    )
    return RoutingGraph(virtual, tuple(edges))


def _side(a: int, b: int, kind: str) -> str:
    """The graph-only router ``spine-a-b.<kind>-a`` of spine {a, b} (kind ``from`` or ``turn``)."""
    return f"{spine_name(a, b)}.{kind}-{a}"


def _turn_routers(columns: int, ports: int, spine_choice: str) -> list[tuple[int, int]]:
    """(a, c) of every turn router ``spine-a-c.turn-a`` built.

    With source choice a turn router is entered only from the ports that pick it: build only those (a router
    without an in-edge breaks SimGrid's Dijkstra).
    """
    if spine_choice == "destination":
        return _column_pairs(columns)
    turns = {(a, _turn_column(a, k, columns)) for a in range(columns) for k in range(ports)}
    return [pair for pair in _column_pairs(columns) if pair in turns]


def _up(i: int, j: int, k: int, limited: bool) -> tuple[str, ...]:
    """The links from server (i, j, k) into its leaf, its limiter first.

    Hosts' own edges carry their limiter, so that every server-to-server path starts and ends with it.
    """
    name = server_name(i, j, k)
    return (
        (node_link_name(name, "limiter"), f"{name}_to_{leaf_name(i, j)}")
        if limited
        else (f"{name}_to_{leaf_name(i, j)}",)
    )


def _down(i: int, j: int, k: int, limited: bool) -> tuple[str, ...]:
    """The links from its leaf into server (i, j, k), its limiter last (see :func:`_up`)."""
    name = server_name(i, j, k)
    return (
        (f"{leaf_name(i, j)}_to_{name}", node_link_name(name, "limiter"))
        if limited
        else (f"{leaf_name(i, j)}_to_{name}",)
    )


def _server_edges(per_leaf: tuple[int, ...], columns: int, limited: bool) -> list[tuple[str, str, tuple[str, ...]]]:
    """Every server to its leaf and back."""
    edges: list[tuple[str, str, tuple[str, ...]]] = []
    for i, j, k in _servers(per_leaf, columns):
        edges.append((server_name(i, j, k), leaf_name(i, j), _up(i, j, k, limited)))
        edges.append((leaf_name(i, j), server_name(i, j, k), _down(i, j, k, limited)))
    return edges


def _cross_column_edges(layers: int, columns: int) -> list[tuple[str, str, tuple[str, ...]]]:
    """Cross-column traffic: from leaf (i, a) into side ``from-a`` of spine {a, b}, and on to leaf (i', b)."""
    edges: list[tuple[str, str, tuple[str, ...]]] = []
    for a, b in _column_pairs(columns):
        for i in range(layers):
            edges.append((leaf_name(i, a), _side(a, b, "from"), (f"{leaf_name(i, a)}_to_{spine_name(a, b)}",)))
            edges.append((_side(a, b, "from"), leaf_name(i, b), (f"{spine_name(a, b)}_to_{leaf_name(i, b)}",)))
    return edges


def _turn_edges(
    per_leaf: tuple[int, ...], columns: int, turns: list[tuple[int, int]], spine_choice: str, limited: bool
) -> list[tuple[str, str, tuple[str, ...]]]:
    """Same-column traffic: through turn router ``spine-j-c.turn-j`` back into column j.

    The port that picks the spine is bound to the turn router by a direct edge: from the source server
    (source choice) or to the destination server (destination choice); the other side of the turn router
    is open to every leaf of the column.
    """
    edges: list[tuple[str, str, tuple[str, ...]]] = []
    for i, j, k in _servers(per_leaf, columns):
        turn = _side(j, _turn_column(j, k, columns), "turn")
        spine = spine_name(j, _turn_column(j, k, columns))
        if spine_choice == "source":  # only port k's traffic reaches its turn router
            edges.append((server_name(i, j, k), turn, (*_up(i, j, k, limited), f"{leaf_name(i, j)}_to_{spine}")))
        else:  # the turn router leads only to the ports whose traffic it carries
            edges.append((turn, server_name(i, j, k), (f"{spine}_to_{leaf_name(i, j)}", *_down(i, j, k, limited))))
    for a, c in turns:
        for i in range(len(per_leaf)):
            if spine_choice == "source":
                edges.append((_side(a, c, "turn"), leaf_name(i, a), (f"{spine_name(a, c)}_to_{leaf_name(i, a)}",)))
            else:
                edges.append((leaf_name(i, a), _side(a, c, "turn"), (f"{leaf_name(i, a)}_to_{spine_name(a, c)}",)))
    return edges


def _compiled_zone(
    d: int,
    per_leaf: tuple[int, ...],
    spine_bw: float,
    spine_choice: str,
    link_bw: float,
    link_lat: float,
    nbl: float | None,
    host_speed: float,
    chosen: Mapping[str, str],
) -> CompiledZone:
    """The compiled zone ``topolab_mlfm_zone`` (module docstring) and the parameters it reads (the writer puts the
    platform's name first): the layers built and their servers per leaf, one value when every layer has the same."""
    counts = per_leaf[:1] if len(set(per_leaf)) == 1 else per_leaf
    values = {"d": d, "layers": len(per_leaf), "servers_per_leaf": " ".join(map(str, counts)),
              "spine_bw": repr(float(spine_bw)), "spine_choice": spine_choice, "link_bw": repr(float(link_bw)),
              "link_lat": repr(float(link_lat)), "nbl": "none" if nbl is None else repr(float(nbl)),
              "host_speed": repr(float(host_speed)), **chosen}  # fmt: skip
    return CompiledZone("topolab_mlfm_zone", "".join(f"{key} {value}\n" for key, value in values.items()))
