"""Torus / mesh: counts, wrap, dimension-ordered routes, endpoint-only NBL, agreement with SimGrid's TORUS."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators import graph_routes
from generators import mesh
from generators import torus
from generators import write_platform
from generators.model import Grid
from generators.model import Platform
from generators.topologies.torus import MAX_EXPLICIT_HOSTS
from generators.topologies.torus import coordinates
from tests.conftest import compiled_zone_error
from tests.conftest import simgrid_link_count


def cables(dims: tuple[int, ...], wraps: tuple[bool, ...]) -> int:
    """Closed form: cables along each dimension = (d if wrapped and d > 2 else d - 1) * (nodes / d)."""
    nodes = math.prod(dims)
    return sum((d if w and d > 2 else d - 1) * nodes // d for d, w in zip(dims, wraps, strict=True))


def distance(a: tuple[int, ...], b: tuple[int, ...], dims: tuple[int, ...], wraps: tuple[bool, ...]) -> int:
    return sum(
        min(abs(x - y), d - abs(x - y)) if w else abs(x - y) for x, y, d, w in zip(a, b, dims, wraps, strict=True)
    )


def cables_of(p: Platform, route: list[str]) -> list[str]:
    """The router-to-router cables of a route (no limiter, no port)."""
    return [name for name in route if p.link_kind(name) == "cable"]


def node_path(p: Platform, route: list[str], src: str) -> list[str]:
    """Nodes visited by a model route (limiters skipped)."""
    return [src] + [p.links[name].ends[1] for name in cables_of(p, route)]


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
            assert len(cables_of(p, route)) == distance(a, b, dims, wraps)  # minimal in every dimension

    def test_ring_of_four_is_a_cycle(self) -> None:
        p = torus((4,))
        degree = Counter(link.ends[0] for link in p.links.values())
        assert set(degree.values()) == {2}
        assert p.route("host-0", "host-3") == ["host-0_to_host-3"]

    def test_mesh_has_no_wrap(self) -> None:
        p = mesh(4, 3)
        assert "host-0_to_host-3" not in p.links
        assert p.route("host-0", "host-3") == [
            "host-0_port", "host-0_to_host-1", "host-1_to_host-2", "host-2_to_host-3", "host-3_port",
        ]  # fmt: skip
        assert max(len(cables_of(p, r)) for _, _, r in p.routes()) == 3 + 2  # diameter W-1 + H-1

    def test_length_two_dimension_has_one_cable(self) -> None:
        p = torus((2, 3, 2), wrap=True)
        # +x (length 2: one cable), +y and -y (ring of 3), +z (length 2): 4, not 6
        assert sorted(n for n in p.links if n.startswith("host-0_to_")) == [
            "host-0_to_host-1", "host-0_to_host-2", "host-0_to_host-4", "host-0_to_host-6",
        ]  # fmt: skip

    def test_dimension_order_x_first(self) -> None:
        p = mesh(3, 3)
        assert node_path(p, p.route("host-0", "host-8"), "host-0") == ["host-0", "host-1", "host-2", "host-5", "host-8"]

    def test_tie_rule_of_simgrid(self) -> None:
        p = torus((4,))
        # ties on a ring of 4, as SimGrid routes them (test_routes_follow_simgrids_torus checks every pair)
        assert node_path(p, p.route("host-0", "host-2"), "host-0") == ["host-0", "host-1", "host-2"]
        assert node_path(p, p.route("host-2", "host-0"), "host-2") == ["host-2", "host-1", "host-0"]
        assert node_path(p, p.route("host-3", "host-1"), "host-3") == ["host-3", "host-0", "host-1"]
        assert node_path(p, p.route("host-1", "host-3"), "host-1") == ["host-1", "host-2", "host-3"]


class TestNbl:
    def test_limiter_only_at_the_endpoints(self) -> None:
        p = mesh(3, 3, nbl=1.0)
        route = p.route("host-0", "host-8")
        assert [n for n in route if p.link_kind(n) == "limiter"] == ["host-0_nbl", "host-8_nbl"]
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
        limited = torus((4, 4), nbl=1.0)
        model = limited.route("host-0", "host-10")
        assert [n for n in model if limited.link_kind(n) == "limiter"] == ["host-0_nbl", "host-10_nbl"]


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
        assert simgrid_nodes == node_path(model, model.route(route["src"], route["dst"]), route["src"])


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
    assert loaded["links"] == simgrid_link_count(model)
    for route in loaded["routes"]:
        assert route["links"] == model.route(route["src"], route["dst"])


class TestCompiledZone:
    """The compiled zone (simgrid_cpp/torus_zone.cpp) builds the model's hosts, links and routes in SimGrid."""

    @pytest.mark.parametrize(
        ("dims", "wrap", "nbl"),
        [((4,), True, None), ((4, 3, 2), True, 1.0), ((2, 2), True, None), ((3, 3), False, 2.0),
         ((4, 3), (True, False), None), ((6, 2, 2), True, 1.0), ((1, 4, 3), True, None), ((8, 2), True, 0.5)],
    )  # fmt: skip
    def test_loader_routes_equal_model(
        self,
        tmp_path: Path,
        load_platform: Callable[..., dict[str, Any]],
        dims: tuple[int, ...],
        wrap: bool | tuple[bool, ...],
        nbl: float | None,
    ) -> None:
        model = torus(dims, wrap, link_lat=3e-7, nbl=nbl, zone="compiled")
        assert model.compiled is not None and model.graph is None
        write_platform(model, tmp_path / "t.so")
        loaded = load_platform(tmp_path / "t.so", "--all-routes")
        assert loaded["hosts"] == math.prod(dims)
        assert loaded["links"] == simgrid_link_count(model)
        assert len(loaded["routes"]) == math.prod(dims) * (math.prod(dims) - 1)
        for route in loaded["routes"]:
            assert route["links"] == model.route(route["src"], route["dst"])
            assert route["latency"] == pytest.approx(model.route_latency(route["src"], route["dst"]), rel=1e-12)

    def test_large_even_tori_are_compiled(self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]]) -> None:
        """Above MAX_EXPLICIT_HOSTS an even torus needs the compiled zone; auto picks it."""
        model = torus((64, 64), nbl=1.0)
        assert len(model.hosts) > MAX_EXPLICIT_HOSTS and model.compiled is not None
        assert torus((32, 32)).compiled is None
        write_platform(model, tmp_path / "big.so")
        pairs = [(f"host-{a}", f"host-{(a * 2654435761) % 4096}") for a in range(0, 4096, 37)]
        pairs = [(a, b) for a, b in pairs if a != b]
        loaded = load_platform(tmp_path / "big.so", *[x for pair in pairs for x in ("--route", *pair)])
        assert loaded["hosts"] == 4096
        for route in loaded["routes"]:
            assert route["links"] == model.route(route["src"], route["dst"])

    def test_whole_of_mira_loads(self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]]) -> None:
        """Mira, 4x4x3x2 midplanes of 4x4x4x4x2 nodes: 49152 nodes; routes as the model's."""
        model = torus((16, 16, 12, 8, 2), nbl=1.0)
        write_platform(model, tmp_path / "mira.so")
        pairs = [("host-0", "host-49151"), ("host-5", "host-40000"), ("host-24575", "host-3"), ("host-8", "host-0")]
        loaded = load_platform(tmp_path / "mira.so", *[x for pair in pairs for x in ("--route", *pair)])
        assert (loaded["hosts"], loaded["links"]) == (49152, simgrid_link_count(model))
        assert [r["links"] for r in loaded["routes"]] == [model.route(*pair) for pair in pairs]

    def test_platform_file_must_end_in_so(self, tmp_path: Path) -> None:
        with pytest.raises(TopologyError, match=r"compiled zone .* must end in .so"):
            write_platform(torus((4,), zone="compiled"), tmp_path / "t.xml")
        assert not list(tmp_path.iterdir())

    @pytest.mark.parametrize(
        ("params", "message"),
        [
            (None, "cannot read the parameter file"),
            ("dims 4 x\nwrap 1\nlink_bw 1\nlink_lat 0\nnbl none\nhost_speed 1\n", "must be a list of integers"),
            ("dims 4 0\nwrap 1 1\nlink_bw 1\nlink_lat 0\nnbl none\nhost_speed 1\n", "every dimension must be >= 1"),
            ("dims 4\nwrap 1\nlink_bw -1\nlink_lat 0\nnbl none\nhost_speed 1\n", "'link_bw' must be a positive"),
            ("dims 4\nwrap 1\nlink_bw 1\nlink_lat 0\nhost_speed 1\n", "must give link_bw, link_lat, nbl"),
            ("dims 4\nwrap 1 1\nlink_bw 1\nlink_lat 0\nnbl 1\nhost_speed 1\n", "one wrap flag per dimension"),
            ("dims 4\ncolour red\n", "unknown parameter 'colour'"),
        ],
    )
    def test_bad_parameter_file(self, tmp_path: Path, bin_dir: Path, params: str | None, message: str) -> None:
        write_platform(torus((4,), zone="compiled"), tmp_path / "t.so")
        (tmp_path / "t.params").unlink()
        if params is not None:
            (tmp_path / "t.params").write_text(params)
        assert message in compiled_zone_error(bin_dir, tmp_path / "t.so", "torus")


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
            ("torus", {"dims": "4x4", "zone": "xml"}, r"zone must be one of"),
            ("mesh", {"width": 4, "height": -1}, r"height must be an integer >= 1, got -1"),
            ("mesh", {"width": 4}, r"mesh: parameter height is required"),
        ],
    )
    def test_bad_parameters(self, family: str, params: dict[str, object], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            build_platform(family, params)

    def test_cli_spellings(self) -> None:
        p = build_platform("torus", {"dims": "4,3x2", "wrap": "yes,no,1"})
        assert p.grid == Grid((4, 3, 2), (True, False, True)) and p.params["dims"] == (4, 3, 2)
        assert build_platform("mesh", {"width": "16", "height": "32", "nbl": "nominal"}).name == "mesh-16x32"
