"""Torus / mesh: counts, wrap, dimension-ordered routes, endpoint-only NBL, agreement with SimGrid's TORUS."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError, build_platform, graph_routes, mesh, torus, write_platform
from generators.torus import coordinates

SIMGRID_OWN_LINKS = 1


def cables(dims: tuple[int, ...], wraps: tuple[bool, ...]) -> int:
    """Closed form: cables along each dimension = (d if wrapped and d > 2 else d - 1) * (nodes / d)."""
    nodes = math.prod(dims)
    return sum((d if w and d > 2 else d - 1) * nodes // d for d, w in zip(dims, wraps, strict=True))


def distance(a: tuple[int, ...], b: tuple[int, ...], dims: tuple[int, ...], wraps: tuple[bool, ...]) -> int:
    return sum(
        min(abs(x - y), d - abs(x - y)) if w else abs(x - y) for x, y, d, w in zip(a, b, dims, wraps, strict=True)
    )


def cables_of(route: list[str]) -> list[str]:
    """The router-to-router cables of a route (no limiter, no port)."""
    return [name for name in route if "_to_" in name]


def node_path(route: list[str], src: str) -> list[str]:
    """Nodes visited by a model route (limiters skipped)."""
    return [src] + [name.split("_to_")[1] for name in route if "_to_" in name]


class TestShapes:
    @pytest.mark.parametrize(
        ("dims", "wrap"),
        [((4,), True), ((4, 4), True), ((4, 4), False), ((2, 3, 4), True), ((3, 5), (True, False)), ((2, 2), True)],
    )
    def test_counts_degrees_and_distances(self, dims: tuple[int, ...], wrap: bool | tuple[bool, ...]) -> None:
        p = torus(dims, wrap)
        wraps = (wrap,) * len(dims) if isinstance(wrap, bool) else wrap
        assert len(p.hosts) == math.prod(dims)
        ports = len(p.hosts) if p.graph is not None else 0  # graph-written platforms frame routes with a port
        assert len(p.links) == 2 * cables(dims, wraps) + ports
        for src, dst, route in p.routes():
            a, b = coordinates(int(src[5:]), dims), coordinates(int(dst[5:]), dims)
            assert len(cables_of(route)) == distance(a, b, dims, wraps)  # minimal in every dimension

    def test_ring_of_four_is_a_cycle(self) -> None:
        p = torus((4,))
        degree = Counter(name.split("_to_")[0] for name in p.links)
        assert set(degree.values()) == {2}
        assert p.route("host-0", "host-3") == ["host-0_to_host-3"]

    def test_mesh_has_no_wrap(self) -> None:
        p = mesh(4, 3)
        assert "host-0_to_host-3" not in p.links
        assert p.route("host-0", "host-3") == [
            "host-0_port", "host-0_to_host-1", "host-1_to_host-2", "host-2_to_host-3", "host-3_port",
        ]  # fmt: skip
        assert max(len(cables_of(r)) for _, _, r in p.routes()) == 3 + 2  # diameter W-1 + H-1

    def test_length_two_dimension_has_one_cable(self) -> None:
        p = torus((2, 3, 2), wrap=True)
        # +x (length 2: one cable), +y and -y (ring of 3), +z (length 2): 4, not 6
        assert sorted(n for n in p.links if n.startswith("host-0_to_")) == [
            "host-0_to_host-1", "host-0_to_host-2", "host-0_to_host-4", "host-0_to_host-6",
        ]  # fmt: skip

    def test_dimension_order_x_first(self) -> None:
        p = mesh(3, 3)
        assert node_path(p.route("host-0", "host-8"), "host-0") == ["host-0", "host-1", "host-2", "host-5", "host-8"]

    def test_tie_rule_of_simgrid(self) -> None:
        p = torus((4,))
        # ties on a ring of 4, as SimGrid 3.32 routes them (measured with the loader on a TORUS cluster)
        assert node_path(p.route("host-0", "host-2"), "host-0") == ["host-0", "host-1", "host-2"]
        assert node_path(p.route("host-2", "host-0"), "host-2") == ["host-2", "host-1", "host-0"]
        assert node_path(p.route("host-3", "host-1"), "host-3") == ["host-3", "host-0", "host-1"]
        assert node_path(p.route("host-1", "host-3"), "host-1") == ["host-1", "host-2", "host-3"]


class TestNbl:
    def test_limiter_only_at_the_endpoints(self) -> None:
        p = mesh(3, 3, nbl=1.0)
        route = p.route("host-0", "host-8")
        assert [n for n in route if n.endswith("_nbl")] == ["host-0_nbl", "host-8_nbl"]
        assert route[0] == "host-0_nbl" and route[-1] == "host-8_nbl"

    def test_simgrid_torus_limiter_charges_transit_nodes(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]]
    ) -> None:
        # The reason topolab writes explicit routes: SimGrid's TORUS cluster puts the limiter of every node on
        # the path into the route, so transit traffic consumes the node's budget; the model does not.
        xml = tmp_path / "cluster.xml"
        xml.write_text(_torus_cluster((4, 4), limiter="1GBps"))
        (route,) = load_platform(xml, "--route", "host-0", "host-10")["routes"]
        limiters = [n for n in route["links"] if n.endswith("_limiter")]
        assert limiters == ["t_link_0_limiter", "t_link_1_limiter", "t_link_2_limiter", "t_link_6_limiter",
                            "t_link_10_limiter"]  # fmt: skip
        model = torus((4, 4), nbl=1.0).route("host-0", "host-10")
        assert [n for n in model if n.endswith("_nbl")] == ["host-0_nbl", "host-10_nbl"]


def _torus_cluster(dims: tuple[int, ...], limiter: str) -> str:
    n = math.prod(dims)
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1"><zone id="world" routing="Full">'
        f'<cluster id="t" prefix="host-" radical="0-{n - 1}" suffix="" speed="1Gf" bw="1GBps" lat="1us" '
        f'topology="TORUS" topo_parameters="{",".join(map(str, dims))}" loopback_bw="100GBps" loopback_lat="0" '
        f'limiter_link="{limiter}"/></zone></platform>\n'
    )


@pytest.mark.parametrize("dims", [(4, 4), (3, 5), (2, 3, 4), (5,), (6, 2), (8,)])
def test_routes_follow_simgrids_torus(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], dims: tuple[int, ...]
) -> None:
    """Node by node, the model's torus routes are SimGrid's TORUS routes (read off its per-node limiters)."""
    xml = tmp_path / "cluster.xml"
    xml.write_text(_torus_cluster(dims, limiter="1GBps"))
    model = torus(dims)
    for route in load_platform(xml, "--all-routes")["routes"]:
        simgrid_nodes = [
            f"host-{m.group(1)}" for n in route["links"] if (m := re.fullmatch(r"t_link_(\d+)_limiter", n))
        ]
        assert simgrid_nodes == node_path(model.route(route["src"], route["dst"]), route["src"])


@pytest.mark.parametrize(
    ("dims", "wrap", "nbl"),
    [
        ((4, 4), False, 1.0),
        ((2, 3, 4), True, None),
        ((3, 3), True, 2.0),
        ((5, 3), False, None),
        ((3, 4, 2), (True, False, True), None),
    ],
)
def test_loader_routes_equal_model(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], dims: tuple[int, ...], wrap: bool, nbl: float | None
) -> None:
    model = torus(dims, wrap, nbl=nbl)
    write_platform(model, tmp_path / "t.xml")
    loaded = load_platform(tmp_path / "t.xml", "--all-routes")
    assert loaded["hosts"] == math.prod(dims)
    assert loaded["links"] == len(model.links) + SIMGRID_OWN_LINKS
    for route in loaded["routes"]:
        assert route["links"] == model.route(route["src"], route["dst"])


class TestLayeredGraph:
    """Meshes and odd rings are written as a graph whose only fewest-links paths are the dimension-ordered routes."""

    @pytest.mark.parametrize(
        ("dims", "wrap", "nbl"),
        [((4, 4), False, None), ((5, 3), False, 1.0), ((3, 5, 2), True, None), ((3, 4, 2), (True, False, True), 2.0),
         ((1, 4), False, None), ((7,), True, None)],
    )  # fmt: skip
    def test_graph_has_exactly_the_rules_routes(
        self, dims: tuple[int, ...], wrap: bool | tuple[bool, ...], nbl: float | None
    ) -> None:
        p = torus(dims, wrap, nbl=nbl)
        assert p.graph is not None
        for src, dst, route in p.routes():
            assert graph_routes(p.graph, src, dst) == {tuple(route)}, (src, dst)

    def test_a_dimension_of_length_one_has_no_layer(self) -> None:
        """A router nobody enters would make SimGrid's Dijkstra loop for ever (cost overflow): none is built."""
        p = mesh(4, 1)
        assert p.graph is not None
        assert not [r for r in p.graph.virtual_routers if r.endswith(".d1")]

    def test_even_rings_keep_explicit_routes(self) -> None:
        assert torus((4, 3)).graph is None and torus((4, 3), (False, True)).graph is not None

    def test_port_never_constrains(self) -> None:
        port = mesh(3, 3).links["host-4_port"]
        assert (port.sharing, port.bandwidth, port.latency) == ("FATPIPE", 2e9, 0.0)
        assert "host-4_port" not in mesh(3, 3, nbl=1.0).links

    def test_64_by_64_mesh_is_linear(self) -> None:
        p = mesh(64, 64, nbl=1.0)
        assert p.graph is not None and len(p.hosts) == 4096
        assert len(p.graph.edges) < 12 * 4096
        assert graph_routes(p.graph, "host-0", "host-4095") == {tuple(p.route("host-0", "host-4095"))}


class TestParameters:
    @pytest.mark.parametrize(
        ("family", "params", "message"),
        [
            ("torus", {"dims": "4x0"}, r"dims must be an integer >= 1, got 0"),
            ("torus", {"dims": "4x4", "wrap": "1,0,1"}, r"wrap must have one flag per dimension \(2\), got 3"),
            ("torus", {"dims": "4x4", "wrap": "maybe"}, r"wrap must be flags such as"),
            ("torus", {"dims": "64x64"}, r"4096 nodes with a wrapped dimension of even length >= 4; such tori need "),
            ("mesh", {"width": 4, "height": -1}, r"height must be an integer >= 1, got -1"),
            ("mesh", {"width": 4}, r"mesh: parameter height is required"),
        ],
    )
    def test_bad_parameters(self, family: str, params: dict[str, object], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            build_platform(family, params)

    def test_cli_spellings(self) -> None:
        p = build_platform("torus", {"dims": "4,3x2", "wrap": "yes,no,1"})
        assert p.params["dims"] == [4, 3, 2] and p.params["wrap"] == [True, False, True]
        assert build_platform("mesh", {"width": "16", "height": "32", "nbl": "nominal"}).name == "mesh-16x32"
