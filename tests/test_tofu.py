"""Tofu (FX10): 6-D shape and cables, routes through SimGrid's loader, the scheduler's virtual 3-D folding and the
``shape:`` placement."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators import place_ranks
from generators import tofu
from generators import write_platform
from generators.model import Platform
from generators.topologies.tofu import fx10
from generators.topologies.tofu import physical_dims
from generators.topologies.tofu import shape_hosts
from generators.topologies.tofu import virtual_dims
from generators.topologies.tofu import virtual_to_host
from generators.topologies.torus import coordinates
from tests.conftest import route_args
from tests.conftest import simgrid_link_count
from tests.test_generators_cli import run_cli

AXES = "XYZABC"


@pytest.fixture(scope="module")
def machine() -> Platform:
    return fx10()


def cables(p: Platform, route: list[str]) -> list[str]:
    """The cables of a route (no limiter)."""
    return [name for name in route if p.link_kind(name) == "cable"]


def cables_per_dimension(p: Platform) -> Counter[str]:
    """Full-duplex cables along each physical dimension (each cable counted once)."""
    assert p.grid is not None
    dims = p.grid.dims
    found: Counter[str] = Counter()
    for link in p.links.values():
        if link.kind != "cable":
            continue
        a, b = (int(host.removeprefix("host-")) for host in link.ends)
        if a < b:
            pairs = zip(coordinates(a, dims), coordinates(b, dims), strict=True)
            (axis,) = [i for i, (x, y) in enumerate(pairs) if x != y]
            found[AXES[axis]] += 1
    return found


class TestShape:
    def test_fx10_is_768_nodes_in_a_virtual_8x12x8(self, machine: Platform) -> None:
        assert len(machine.hosts) == 768 and machine.name == "tofu-4x4x4" and machine.family == "tofu"
        assert machine.grid is not None and machine.grid.dims == (4, 4, 4, 2, 3, 2)
        assert machine.params["preset"] == "fx10" and machine.params["xyz"] is None  # as given: the preset's xyz
        assert virtual_dims((4, 4, 4)) == (8, 12, 8) and math.prod(virtual_dims((4, 4, 4))) == 768
        assert machine.compiled is not None and machine.graph is None
        assert not machine.compiled.parameters.startswith("name")  # the writer names the zone by its platform

    @pytest.mark.parametrize(
        ("wrap", "flags"),
        [("yes", (True, True, True)), ("no", (False, False, False)), ("1,1,0", (True, True, False))],
    )
    def test_cables_per_dimension_and_wrap_flags(self, wrap: str, flags: tuple[bool, ...]) -> None:
        p = build_platform("tofu", {"preset": "fx10", "xyz_wrap": wrap})
        assert p.params["xyz_wrap"] == (flags if wrap == "1,1,0" else flags[:1])
        assert p.grid is not None and p.grid.wraps == (*flags, False, True, False)  # A, C meshes of 2; B a ring of 3
        rings = 768 // 4
        expected = {axis: (4 if w else 3) * rings for axis, w in zip("XYZ", flags, strict=True)}
        expected |= {"A": 1 * 384, "B": 3 * 256, "C": 1 * 384}  # one cable per pair, 3 per ring of 3
        assert cables_per_dimension(p) == expected
        limiters = [link for link in p.links.values() if link.kind == "limiter"]
        assert len(limiters) == 768 and {link.bandwidth for link in limiters} == {4 * 5e9}
        assert len(p.links) == 2 * sum(expected.values()) + 768

    def test_defaults_are_documented_figures(self, machine: Platform) -> None:
        link = machine.links["host-0_to_host-1"]
        assert (link.bandwidth, link.latency) == (5e9, 100e-9)  # Table I's 5 GB/s; assumed 100 ns per hop
        assert machine.params["nbl"] == 4.0 and machine.links["host-0_nbl"].bandwidth == 20e9

    def test_auto_zone_on_request(self) -> None:
        assert tofu((3, 2, 1), zone="auto").graph is not None  # every ring odd or <= 2: a routing graph
        assert tofu((4, 1, 1), zone="auto").compiled is None and tofu((4, 1, 1)).compiled is not None


class TestRoutes:
    @pytest.mark.parametrize(
        ("xyz", "wrap", "nbl", "zone", "suffix"),
        [((2, 2, 1), True, 4.0, "compiled", ".so"), ((3, 2, 1), True, None, "compiled", ".so"),
         ((4, 1, 1), (False, True, True), 4.0, "compiled", ".so"), ((3, 2, 1), True, 4.0, "auto", ".xml")],
    )  # fmt: skip
    def test_loader_routes_equal_model(
        self,
        tmp_path: Path,
        load_platform: Callable[..., dict[str, Any]],
        xyz: tuple[int, int, int],
        wrap: bool | tuple[bool, ...],
        nbl: float | None,
        zone: str,
        suffix: str,
    ) -> None:
        model = tofu(xyz, xyz_wrap=wrap, nbl=nbl, zone=zone)
        write_platform(model, tmp_path / f"t{suffix}")
        loaded = load_platform(tmp_path / f"t{suffix}", "--all-routes")
        n = 12 * math.prod(xyz)
        assert (loaded["hosts"], loaded["links"]) == (n, simgrid_link_count(model))
        assert len(loaded["routes"]) == n * (n - 1)
        for route in loaded["routes"]:
            assert route["links"] == model.route(route["src"], route["dst"])

    def test_sampled_fx10_routes(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]], machine: Platform
    ) -> None:
        write_platform(machine, tmp_path / "fx10.so")
        pairs = [("host-0", "host-767"), ("host-767", "host-0"), ("host-2", "host-0"), ("host-5", "host-700")]
        pairs += [(f"host-{a}", f"host-{(a * 2654435761) % 768}") for a in range(1, 768, 53)]
        pairs = [(a, b) for a, b in pairs if a != b]
        loaded = load_platform(tmp_path / "fx10.so", *route_args(pairs))
        assert (loaded["hosts"], loaded["links"]) == (768, simgrid_link_count(machine))
        assert [r["links"] for r in loaded["routes"]] == [machine.route(*pair) for pair in pairs]
        assert machine.route("host-0", "host-767") == [
            "host-0_nbl", "host-0_to_host-3", "host-3_to_host-15", "host-15_to_host-63",  # X, Y, Z the short way
            "host-63_to_host-127", "host-127_to_host-383", "host-383_to_host-767", "host-767_nbl",  # A, B (wrap), C
        ]  # fmt: skip


def virtual_points(size: tuple[int, ...]) -> list[tuple[int, int, int]]:
    return list(itertools.product(*(range(s) for s in size)))  # type: ignore[arg-type]


class TestFolding:
    @pytest.mark.parametrize("fold", ["snake", "block"])
    def test_virtual_coordinates_are_a_bijection(self, machine: Platform, fold: str) -> None:
        hosts = {virtual_to_host(machine, v, fold) for v in virtual_points(virtual_dims((4, 4, 4)))}
        assert hosts == set(machine.host_names)

    def test_snake_neighbours_are_one_cable_apart(self, machine: Platform) -> None:
        size = virtual_dims((4, 4, 4))
        for v in virtual_points(size):
            for axis in range(3):
                if v[axis] + 1 < size[axis]:
                    w = tuple(c + (i == axis) for i, c in enumerate(v))
                    route = machine.route(virtual_to_host(machine, v), virtual_to_host(machine, w))  # type: ignore[arg-type]
                    assert len(cables(machine, route)) == 1, (v, w)

    def test_block_is_two_hops_at_the_fold_boundary(self, machine: Platform) -> None:
        size, units = virtual_dims((4, 4, 4)), (2, 3, 2)
        for v in virtual_points(size):
            for axis in range(3):
                if v[axis] + 1 < size[axis]:
                    w = tuple(c + (i == axis) for i, c in enumerate(v))
                    src, dst = (virtual_to_host(machine, p, "block") for p in (v, w))  # type: ignore[arg-type]
                    boundary = (v[axis] + 1) % units[axis] == 0
                    assert len(cables(machine, machine.route(src, dst))) == (2 if boundary else 1), (v, w)

    def test_fold_examples(self) -> None:
        # virtual x = 0..3 of a 4x4x4 machine: (x, a) = (0,0) (0,1) (1,1) (1,0) snake, (0,0) (0,1) (1,0) (1,1) block
        assert [virtual_to_host((4, 4, 4), (v, 0, 0)) for v in range(4)] == ["host-0", "host-64", "host-65", "host-1"]
        assert [virtual_to_host(physical_dims((4, 4, 4)), (v, 0, 0), "block") for v in range(4)] == [
            "host-0", "host-64", "host-1", "host-65",
        ]  # fmt: skip
        # along B (n = 3): y = 1 runs b backwards
        assert [virtual_to_host((4, 4, 4), (0, v, 0)) for v in range(3, 6)] == ["host-260", "host-132", "host-4"]


class TestShapePlacement:
    def test_rank_order_first_virtual_dimension_fastest(self, machine: Platform) -> None:
        hosts = place_ranks(machine, 24, "shape:2x3x4")
        expected = [virtual_to_host(machine, (r % 2, r // 2 % 3, r // 6)) for r in range(24)]
        assert hosts == expected
        assert hosts[:7] == ["host-0", "host-64", "host-128", "host-192", "host-256", "host-320", "host-384"]

    @pytest.mark.parametrize(
        "spec", ["shape:2x3x4", "shape:1x6x4", "shape:2x3x4/block", "shape:1x6x4@7,6,4", "shape:2x3x4@6,9,4/snake"]
    )
    def test_24_distinct_hosts(self, machine: Platform, spec: str) -> None:
        hosts = place_ranks(machine, 24, spec)
        assert len(set(hosts)) == 24

    def test_offset_and_fold(self, machine: Platform) -> None:
        assert place_ranks(machine, 24, "shape:2x3x4@1,0,0") == shape_hosts(machine, (2, 3, 4), (1, 0, 0))
        assert place_ranks(machine, 24, "shape:2x3x4@0,3,0/block") == shape_hosts(
            machine, (2, 3, 4), (0, 3, 0), "block"
        )
        assert place_ranks(machine, 24, "shape:2x3x4/block") != place_ranks(machine, 24, "shape:2x3x4@0,0,0/snake")
        everything = [virtual_to_host(machine, (x, y, z)) for z in range(8) for y in range(12) for x in range(8)]
        assert shape_hosts(machine, (8, 12, 8)) == everything

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            ("shape:9x1x1", r"shape 9x1x1 at offset 0,0,0 does not fit the virtual 8x12x8 machine"),
            ("shape:2x3x4@7,0,0", r"shape 2x3x4 at offset 7,0,0 does not fit the virtual 8x12x8 machine"),
            ("shape:1x1x1@0,12,0", r"shape 1x1x1 at offset 0,12,0 does not fit the virtual 8x12x8 machine"),
            ("shape:2x3x0", r"shape 2x3x0 at offset \(0, 0, 0\): need three sizes >= 1"),
            ("shape:2x3", r"placement shape needs S1xS2xS3\[@O1,O2,O3\]\[/snake\|/block\]"),
            ("shape:axbxc", r"placement shape needs S1xS2xS3"),
            ("shape:2x3x4@1,0", r"placement shape needs S1xS2xS3"),
            ("shape:2x3x4@-1,0,0", r"placement shape needs S1xS2xS3"),
            ("shape:2x3x4/zigzag", r"placement shape needs S1xS2xS3"),
            ("shape:", r"placement shape needs S1xS2xS3"),
            (
                "allocation:2,3,4",
                r"tofu has no placement 'allocation' \(named placements: contiguous, random, random-chunks, shape, "
                r"stride; or a list of hosts: host-0,host-1\)",
            ),
        ],
    )
    def test_bad_placement(self, machine: Platform, spec: str, message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            place_ranks(machine, 1, spec)

    def test_bad_virtual_coordinates(self, machine: Platform) -> None:
        with pytest.raises(TopologyError, match=r"virtual coordinates \(8, 0, 0\) are outside the virtual 8x12x8"):
            virtual_to_host(machine, (8, 0, 0))
        with pytest.raises(TopologyError, match=r"fold must be one of snake, block, got 'zigzag'"):
            virtual_to_host(machine, (0, 0, 0), "zigzag")
        with pytest.raises(TopologyError, match=r"is not a tofu platform"):
            virtual_to_host(build_platform("torus", {"dims": "4x4x4x2x3x2"}), (0, 0, 0))


class TestParameters:
    @pytest.mark.parametrize(
        ("params", "message"),
        [
            ({"xyz": "4x0x4"}, r"xyz must be an integer >= 1, got 0"),
            ({"xyz": "4x4"}, r"xyz must be three integers >= 1 \(X x Y x Z, e.g. 4x4x4\), got \(4, 4\)"),
            ({}, r"tofu needs xyz \(X x Y x Z Tofu units, e.g. 4x4x4\) or a preset \(fx10\)"),
            ({"preset": "k"}, r"preset must be one of fx10, got 'k'"),
            ({"preset": "fx10", "xyz": "2x2x2"}, r"preset fx10 is xyz 4x4x4; got xyz 2x2x2 too"),
            (
                {"xyz": "4x4x4", "xyz_wrap": "1,0"},
                r"xyz_wrap must be one flag or one per X, Y, Z dimension \(3\), got 2",
            ),
            ({"xyz": "4x4x4", "zone": "xml"}, r"zone must be one of compiled, auto"),
            ({"xyz": "4x4x4", "nbl": "-1"}, r"nbl must be 'none', 'nominal' or a number"),
        ],
    )
    def test_bad_parameters(self, params: dict[str, object], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            build_platform("tofu", params)

    def test_build_platform_spellings(self) -> None:
        p = build_platform("tofu", {"xyz": "3x2x1", "xyz_wrap": "1,1,0", "nbl": "none", "zone": "auto"})
        assert p.name == "tofu-3x2x1-wrap110" and len(p.hosts) == 72 and p.compiled is None
        assert p.grid is not None and p.grid.wraps == (True, True, False, False, True, False)
        assert p.params["nbl"] is None
        assert build_platform("tofu", {"preset": "fx10", "xyz": "4,4,4"}).name == "tofu-4x4x4"

    def test_cli_writes_fx10_and_shape_hostfile(self, tmp_path: Path, machine: Platform) -> None:
        files = ("-o", str(tmp_path / "x.so"), "--hostfile", str(tmp_path / "x.hosts"))
        done = run_cli("tofu", "--preset", "fx10", *files, "--placement", "shape:2x3x4", "--ranks", "24")
        assert done.returncode == 0, done.stderr
        assert f"768 hosts, {len(machine.links)} links" in done.stderr
        assert (tmp_path / "x.params").read_text().splitlines()[1:3] == ["name tofu-4x4x4", "dims 4 4 4 2 3 2"]
        assert (tmp_path / "x.hosts").read_text().split() == place_ranks(machine, 24, "shape:2x3x4")

    def test_cli_rejects_a_shape_that_does_not_fit(self, tmp_path: Path) -> None:
        files = ("-o", str(tmp_path / "x.so"), "--hostfile", str(tmp_path / "x.hosts"))
        done = run_cli("tofu", "--preset", "fx10", *files, "--placement", "shape:9x1x1")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip().splitlines() == [
            "python -m generators: error: shape 9x1x1 at offset 0,0,0 does not fit the virtual 8x12x8 machine "
            "(2X x 3Y x 2Z of xyz 4x4x4)"
        ]
        assert not list(tmp_path.iterdir())
