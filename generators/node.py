"""Nodes: every host's cores and the intra-node path between ranks of one host, declared once for every family.

Real HPC jobs run 16 to 64 ranks per node, and a message between two ranks of one node goes through shared memory,
never the network. Every family declares the same node parameters, :data:`NODE_PARAMS`:

* ``host_speed``: the speed of each core (flop/s); the family's builder receives it, as before;
* ``cores``: cores per host, SimGrid's ``core`` attribute of ``<host>`` (written only when > 1); the ranks placed
  on one host (``generators.placement.place_ranks(..., ranks_per_node=K)``) share them;
* ``shm_bw`` and ``shm_lat``: the intra-node path. ``none`` (the default) writes no link: SimGrid's implicit
  loopback carries a message from a host to itself (``network/loopback-bw``, 10 GBps, latency 0, FATPIPE; the
  compiled zone makes its twin, the link ``loopback``, since a zone in a shared object cannot reach the network
  model's), and the model has no such route (``Platform.route(h, h)`` raises). With a bandwidth, each host gets one link
  ``<host>_shm`` of ``shm_bw`` and ``shm_lat``, and the route from a host to itself is exactly that link, in every
  representation: a Full zone gets the explicit route ``h -> h`` (SimGrid 4.1's ``FullZone::do_seal`` puts its
  loopback only where the routing table has no route from a host to itself), a Dijkstra zone the graph edge
  ``h -> h`` (``DijkstraZone::do_seal`` adds the loopback only to a node without a self-edge; a self-edge is never
  on a shortest path between two nodes, so no other route changes), and the compiled zone (``.params`` keys
  ``cores``, ``shm_bw``, ``shm_lat``, written only when not the default) pushes the link in ``get_local_route``.
* ``memory_bw`` and ``core_memory_bw``: the node's memory bandwidth, shared by the ranks placed on it, and what one
  core draws alone (:data:`MEMORY`). They change nothing in the topology: the file records them in its provenance
  line (only when given, so the files written before they existed are unchanged), where ``smpirun-on --compute
  memory`` reads them.

The link is FATPIPE, like SimGrid's loopback: every intra-node message gets the whole ``shm_bw`` however many run
at once. Contention for the memory bus between the ranks of a node is NOT modelled (a SHARED link would only make
every message of the node share one bandwidth, no better a model of a memory system). With topolab's standard SMPI
options a message of S bytes between two ranks of one host takes ``shm_lat + (S + 16) / shm_bw`` (the 16 bytes are
SMPI's envelope). ``shm_lat`` means nothing without ``shm_bw``: a non-zero one alone is refused.

Builders never see ``cores``, ``shm_bw``, ``shm_lat`` and the memory figures (:data:`APPLIED`):
``generators.declare.builds`` takes them out of the checked values, builds, and applies them to the platform built
with :func:`apply_node`; its estimate
adds what they add (:func:`node_size`). So every family and every representation gets them from one place, and a
builder that calls another (tofu calls torus, mesh calls torus) leaves them to its own wrapper: the inner call
gets the defaults, which change nothing, and the node values are applied once, by the outer one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from generators.errors import TopologyError
from generators.errors import shown
from generators.model import FATPIPE
from generators.model import CompiledZone
from generators.model import Platform
from generators.model import RoutingGraph
from generators.model import add_links
from generators.model import node_link
from generators.model import node_link_name
from generators.params import Param
from generators.params import accepts
from generators.params import latency
from generators.params import optional_bandwidth
from generators.params import positive_int
from generators.params import speed
from generators.size import Size
from generators.units import check_quantity

__all__ = ["APPLIED", "MAX_CORES", "MEMORY", "NODE_PARAMS", "apply_node", "check_node", "core_count", "node_size"]

MAX_CORES = 2**31 - 1
"""The most cores a host may have: SimGrid 4.1 reads a ``<host>``'s ``core`` as a C int (``std::stoi``)."""


@accepts(f"int, 1 to {MAX_CORES}")
def core_count(value: object, name: str) -> int:
    """Cores per host: an integer from 1 to :data:`MAX_CORES`.

    >>> core_count("16", "cores")
    16
    >>> try:
    ...     core_count(2**31, "cores")
    ... except TopologyError as err:
    ...     print(err)
    cores must be at most 2147483647 (SimGrid reads a core count as a C int), got 2147483648
    """
    cores = positive_int(value, name)
    if cores > MAX_CORES:
        raise TopologyError(
            f"{name} must be at most {MAX_CORES} (SimGrid reads a core count as a C int), got {shown(value)}"
        )
    return cores


NODE_PARAMS = (
    Param("host_speed", speed, "speed of each core (flop/s)", "1Gf"),
    Param("cores", core_count, "cores per host; the ranks placed on one host share them", 1),
    Param(
        "shm_bw",
        optional_bandwidth,
        "bandwidth of the intra-node path between two ranks of one host (a FATPIPE link <host>_shm; memory-bus "
        "contention is not modelled), or none: SimGrid's implicit loopback (10 GBps, latency 0)",
        "none",
    ),
    Param("shm_lat", latency, "latency of the intra-node path (needs shm_bw)", "0s"),
    Param(
        "memory_bw",
        optional_bandwidth,
        "the node's memory bandwidth, shared by its ranks (a data-sheet figure), or none; recorded in the file for "
        "smpirun-on --compute memory, the topology does not use it",
        "none",
        recorded_when_default=False,
    ),
    Param(
        "core_memory_bw",
        optional_bandwidth,
        "what one core draws from memory alone (needs memory_bw, at most it), or none: a rank alone gets the node's",
        "none",
        recorded_when_default=False,
    ),
)
"""The node parameters every family declares (in place of its own ``host_speed``)."""

APPLIED = ("cores", "shm_bw", "shm_lat", "memory_bw", "core_memory_bw")
"""The node parameters that ``generators.declare.builds`` applies to the platform built instead of passing them."""

MEMORY = ("memory_bw", "core_memory_bw")
"""The node's memory figures: no part of the topology, only recorded (the file's provenance line, "as built") for the
computation model that charges memory time (``smpirun-on --compute memory``, docs/computation.md)."""


def check_node(values: Mapping[str, Any]) -> None:
    """``TopologyError`` unless the checked node values go together: ``shm_lat`` only with ``shm_bw``, and a host's
    total speed, ``cores`` x ``host_speed``, a double SimGrid reads (the product may overflow).

    >>> try:
    ...     check_node({"host_speed": 1e9, "cores": 4, "shm_bw": None, "shm_lat": 1e-6})
    ... except TopologyError as err:
    ...     print(str(err)[:86])
    shm_lat needs shm_bw: the intra-node path is a link only with a bandwidth (shm_bw none
    """
    if values["shm_bw"] is None and values["shm_lat"] != 0:
        raise TopologyError(
            "shm_lat needs shm_bw: the intra-node path is a link only with a bandwidth (shm_bw none: SimGrid's "
            f"implicit loopback, latency 0), got shm_lat {values['shm_lat']!r} with shm_bw none"
        )
    node, core = values.get("memory_bw"), values.get("core_memory_bw")
    if core is not None and (node is None or core > node):
        raise TopologyError(
            f"core_memory_bw ({core!r} B/s) needs memory_bw, the node's, at least as large (got {node!r})"
        )
    total = values["cores"] * values["host_speed"]
    check_quantity(total, f"cores x host_speed ({values['cores']} x {values['host_speed']!r})", allow_zero=False)


def node_size(size: Size, shm_bw: float | None) -> Size:
    """``size`` (a family's estimate) plus what the intra-node path adds: one link per host, and one route from each
    host to itself, an explicit route in a Full zone or a graph edge in a Dijkstra zone (none in a compiled zone,
    which computes it).

    >>> node_size(Size(hosts=3, routers=1, links=6, routes=6, route_links=12), 1e10)
    Size(hosts=3, routers=1, links=9, routes=9, route_links=15, edges=0, edge_links=0, compiled=False, hint='')
    """
    if shm_bw is None:
        return size
    n = size.hosts
    if size.compiled:
        return dataclasses.replace(size, links=size.links + n)
    if size.edges:  # a routing graph: every host has edges in and out, so a graph platform always has some
        return dataclasses.replace(size, links=size.links + n, edges=size.edges + n, edge_links=size.edge_links + n)
    return dataclasses.replace(size, links=size.links + n, routes=size.routes + n, route_links=size.route_links + n)


def _parameter_lines(cores: int, shm_bw: float | None, shm_lat: float) -> str:
    """The compiled zone's node keys, each only when it is not the default (so that default files do not change)."""
    lines = [] if cores == 1 else [f"cores {cores}\n"]
    if shm_bw is not None:
        lines.append(f"shm_bw {float(shm_bw)!r}\n")
    if shm_lat != 0:
        lines.append(f"shm_lat {float(shm_lat)!r}\n")
    return "".join(lines)


def apply_node(
    platform: Platform,
    cores: int = 1,
    shm_bw: float | None = None,
    shm_lat: float = 0.0,
    memory_bw: float | None = None,
    core_memory_bw: float | None = None,
) -> Platform:
    """``platform`` with ``cores`` cores per host and, when ``shm_bw`` is set, the intra-node path (module docstring).

    The default values return ``platform`` itself, untouched. Otherwise a new platform: every host with its
    cores; with ``shm_bw``, the links ``<host>_shm`` (FATPIPE, after the family's links), the graph edge from each
    host to itself when the platform has a routing graph, and ``shm`` set; a compiled zone's parameter file gets
    the non-default node keys. A platform whose node values were already applied is refused (applied once).

    >>> from generators.topologies.crossbar import crossbar
    >>> p = apply_node(crossbar(2), cores=4, shm_bw=1e10, shm_lat=5e-7)
    >>> p.hosts[0], p.route("host-1", "host-1"), p.links["host-1_shm"].sharing
    (Host(name='host-0', speed=1000000000.0, cores=4), ['host-1_shm'], 'FATPIPE')
    """
    fastest = max((host.speed for host in platform.hosts), default=1.0)
    check_node(
        {"cores": cores, "shm_bw": shm_bw, "shm_lat": shm_lat, "host_speed": fastest, "memory_bw": memory_bw,
         "core_memory_bw": core_memory_bw}
    )  # fmt: skip
    if cores == 1 and shm_bw is None:
        return platform
    if platform.shm or any(host.cores != 1 for host in platform.hosts):
        raise TopologyError(f"platform {platform.name}: its node values (cores, shm_bw) are already applied")
    hosts = [dataclasses.replace(host, cores=cores) for host in platform.hosts]
    links, graph, compiled = platform.links, platform.graph, platform.compiled
    if shm_bw is not None:
        links = dict(links)
        add_links(links, *(node_link(host.name, "shm", shm_bw, shm_lat, FATPIPE) for host in hosts))
        if graph is not None:
            loops = tuple((host.name, host.name, (node_link_name(host.name, "shm"),)) for host in hosts)
            graph = RoutingGraph(graph.virtual_routers, (*graph.edges, *loops))
    if compiled is not None:
        compiled = CompiledZone(compiled.library, compiled.parameters + _parameter_lines(cores, shm_bw, shm_lat))
    return dataclasses.replace(
        platform, hosts=hosts, links=links, graph=graph, compiled=compiled, shm=shm_bw is not None
    )
