"""The two-level fat tree (the machine the MLFM paper compares with): counts, routes, the routing graph's exactness,
SimGrid's routes equal to the model's, the shift all-to-all congestion-free (the MLFM paper's Fig. 1), bad input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators import fattree
from generators import write_platform
from generators.schedules import alltoall_steps
from generators.topologies.fattree import estimate
from tests.conftest import shift_times
from tests.conftest import simgrid_link_count
from tests.test_mlfm import cable_loads
from tests.test_mlfm import kind_count
from tests.test_mlfm import p_graph_exact


def test_36_port_switches() -> None:
    assert len(fattree(36).hosts) == 648
    assert (kind_count(fattree(36), "leaf-"), kind_count(fattree(36), "spine-")) == (36, 18)


class TestRoutes:
    def test_routes(self) -> None:
        p = fattree(4)
        assert p.route("server-0-0", "server-0-1") == ["server-0-0_to_leaf-0", "leaf-0_to_server-0-1"]
        assert p.route("server-0-0", "server-3-1")[1:3] == ["leaf-0_to_spine-1", "spine-1_to_leaf-3"]

    def test_shift_pattern_is_congestion_free(self) -> None:
        """The paper's Fig. 1: on a full fat tree every phase of the shift all-to-all is congestion-free."""
        p = fattree(8)
        hosts = p.host_names
        for step in alltoall_steps("pairwise", len(hosts)):
            assert max(cable_loads(p, [(hosts[a], hosts[b]) for a, b in step]).values()) == 1

    @pytest.mark.parametrize("params", [{"radix": 4}, {"radix": 6, "nbl": 1.0}, {"radix": 8, "leaves": 5}])
    def test_loader_routes_equal_model(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]], params: dict[str, Any]
    ) -> None:
        model = build_platform("fattree", params)
        write_platform(model, tmp_path / "ft.xml")
        loaded = load_platform(tmp_path / "ft.xml", "--all-routes")
        assert loaded["hosts"] == len(model.hosts) and loaded["links"] == len(model.links) + 1
        for route in loaded["routes"]:
            assert route["links"] == model.route(route["src"], route["dst"])
        assert p_graph_exact(model)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"radix": 7}, r"radix must be an even integer >= 2, got 7"),
        ({"radix": 4, "leaves": 5}, r"leaves must be between 1 and radix=4, got 5"),
        ({"radix": 4, "levels": 3, "leaves": 3}, r"leaves must be a multiple of \(radix/2\)\^\(levels-2\) = 2"),
        ({"radix": 4, "levels": 3, "leaves": 10}, r"between 2 and 2 \(radix/2\)\^\(levels-1\) = 8, got 10"),
        ({"radix": 4, "levels": 9}, r"levels must be between 2 and 8, got 9"),
    ],
)
def test_bad_parameters(params: dict[str, Any], message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        build_platform("fattree", params)


def simgrid_fat_tree_xml(path: Path, radix: int, levels: int, servers_per_leaf: int | None = None) -> None:
    """SimGrid 4.1's own FAT_TREE cluster of this family's full tree (XGFT: children s, r/2 .. r/2, r; parents 1,
    r - s, r/2 ..; s = r/2 untapered), split-duplex 4 GB/s, 100 ns links, in a zone, hosts ``node-<i>``."""
    half = radix // 2
    s = half if servers_per_leaf is None else servers_per_leaf
    children = ",".join([str(s)] + [str(half)] * (levels - 2) + [str(radix)])
    parents = ",".join(["1", str(radix - s)] + [str(half)] * (levels - 2))
    path.write_text(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        '<platform version="4.1"><zone id="world" routing="Full">\n'
        f'<cluster id="ft" prefix="node-" suffix="" radical="0-{s * radix * half ** (levels - 2) - 1}" speed="1Gf" '
        f'bw="4GBps" lat="100ns" sharing_policy="SPLITDUPLEX" topology="FAT_TREE" '
        f'topo_parameters="{levels};{children};{parents};{",".join(["1"] * levels)}"/>\n</zone></platform>\n'
    )


class TestLevels:
    """Fat trees of three or more levels (Zahavi's XGFT of radix-r switches, D-mod-K): closed forms, congestion-free
    shifts, the compiled zone's routes through the loader, and SimGrid's own FAT_TREE, route for route."""

    @pytest.mark.parametrize(("radix", "levels"), [(4, 3), (6, 3), (4, 4), (36, 3)])
    def test_counts(self, radix: int, levels: int) -> None:
        """2 (r/2)^h servers; 2 (r/2)^(h-1) switches on every level below the top, (r/2)^(h-1) on top; r/2 cables
        up from every switch below the top."""
        p, half = fattree(radix, levels=levels), radix // 2
        assert len(p.hosts) == 2 * half**levels
        for prefix, count in (("leaf-", 2 * half ** (levels - 1)), ("agg", 2 * half ** (levels - 1) * (levels - 2)),
                              ("spine-", half ** (levels - 1))):  # fmt: skip
            assert kind_count(p, prefix) == count
        assert len(p.cables(p.links)) == 2 * len(p.hosts) + 2 * (levels - 1) * 2 * half ** (levels - 1) * half

    @pytest.mark.parametrize(("radix", "levels"), [(4, 3), (6, 3), (4, 4)])
    def test_every_shift_is_congestion_free(self, radix: int, levels: int) -> None:
        """Zahavi's Theorem 1: D-mod-K routes every shift permutation of a full tree with one flow per cable."""
        p = fattree(radix, levels=levels)
        hosts = p.host_names
        for step in alltoall_steps("pairwise", len(hosts)):
            assert max(cable_loads(p, [(hosts[a], hosts[b]) for a, b in step]).values()) == 1

    def test_routes_climb_to_the_lowest_common_subtree(self) -> None:
        p, half = fattree(6, levels=3), 3
        for src, dst, route in p.routes():
            (a, _), (b, _) = (tuple(map(int, h.removeprefix("server-").split("-"))) for h in (src, dst))
            top = 1 if a == b else 2 if a // half == b // half else 3
            assert len(route) == 2 * top

    @pytest.mark.parametrize(
        ("radix", "levels", "servers"), [(4, 2, None), (4, 3, None), (6, 3, None), (4, 4, None), (6, 2, 4), (8, 3, 6),
                                         (6, 3, 2), (4, 4, 3)],
    )  # fmt: skip
    def test_routes_are_simgrid_fat_tree_routes(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]], radix: int, levels: int, servers: int | None
    ) -> None:
        """SimGrid's FAT_TREE of the same XGFT (children s, r/2 .. r/2, r; parents 1, r - s, r/2 ..), tapered or not,
        routes every pair over the same cables: one renaming of its nodes onto the model's maps every route onto the
        model's, direction and order included."""
        model = fattree(radix, levels=levels, servers_per_leaf=servers)
        simgrid_fat_tree_xml(tmp_path / "sg.xml", radix, levels, servers)
        theirs = load_platform(tmp_path / "sg.xml", "--all-routes")
        hosts = {f"node-{i}": host for i, host in enumerate(model.host_names)}
        renaming: dict[tuple[int, str], str] = {}  # SimGrid numbers hosts and switches apart: (level, number)
        for route in theirs["routes"]:
            ours = model.route(hosts[route["src"]], hosts[route["dst"]])
            top = len(ours) // 2
            assert len(route["links"]) == len(ours)
            for t, (link, mine) in enumerate(zip(route["links"], ours, strict=True)):
                _, _, child, parent, _, direction = link.split("_")  # link_from_<child>_<parent>_<n>_UP|DOWN
                above = t + 1 if t < top else 2 * top - t  # the level of the cable's upper end
                ends = [(above - 1, child), (above, parent)]
                for node, name in zip(ends if direction == "UP" else ends[::-1], mine.split("_to_"), strict=True):
                    assert renaming.setdefault(node, name) == name
        assert len(set(renaming.values())) == len(renaming) == len(model.hosts) + len(model.routers)

    def test_simulated_times_equal_simgrid_fat_tree(self, tmp_path: Path, bin_dir: Path) -> None:
        """The same three-level tree in SimGrid's FAT_TREE zone and in the compiled zone: every shift permutation of
        its 54 servers takes the same simulated time, to 1e-12 (tests/test_dragonfly.py says why not to the bit)."""
        simgrid_fat_tree_xml(tmp_path / "sg.xml", 6, 3)
        model = fattree(6, levels=3)
        write_platform(model, tmp_path / "ours.so")
        theirs = shift_times(tmp_path, bin_dir, tmp_path / "sg.xml", [f"node-{i}" for i in range(54)])
        mine = shift_times(tmp_path, bin_dir, tmp_path / "ours.so", model.host_names)
        times = ("time_s_min", "time_s_avg", "time_s_max", "rate_bps")
        assert len(mine) == 53
        for a, b in zip(mine, theirs, strict=True):
            assert {k: v for k, v in a.items() if k not in times} == {k: v for k, v in b.items() if k not in times}
            assert [a[k] for k in times] == pytest.approx([b[k] for k in times], rel=1e-12)


class TestTapered:
    """Trees tapered at their leaves (s servers, u = r - s ports up): closed forms, the shifts' busiest cable at s/u,
    the loader's routes (routing graph at two levels, compiled zone deeper); SimGrid's FAT_TREE: TestLevels."""

    @pytest.mark.parametrize(("radix", "levels", "servers"), [(6, 2, 4), (8, 3, 6), (36, 3, 24), (6, 4, 5)])
    def test_counts(self, radix: int, levels: int, servers: int) -> None:
        """r (r/2)^(h-2) leaves of s servers; L u / (r/2) switches on every level between, u (r/2)^(h-2) on top;
        u cables up from a leaf, r/2 from the switches between."""
        p, half, up = fattree(radix, levels=levels, servers_per_leaf=servers), radix // 2, radix - servers
        leaves = radix * half ** (levels - 2)
        assert len(p.hosts) == leaves * servers
        assert (kind_count(p, "leaf-"), kind_count(p, "agg"), kind_count(p, "spine-")) == (
            leaves, (levels - 2) * leaves * up // half, up * half ** (levels - 2))  # fmt: skip
        assert len(p.cables(p.links)) == 2 * len(p.hosts) + 2 * (levels - 1) * leaves * up
        assert len(p.routers) == estimate(p.params).routers

    @pytest.mark.parametrize(("radix", "levels", "servers"), [(6, 2, 4), (8, 2, 6), (6, 3, 4), (8, 3, 6), (4, 4, 3)])
    def test_every_shift_loads_the_busiest_cable_with_the_taper(self, radix: int, levels: int, servers: int) -> None:
        """With u dividing s, every shift permutation by s to N - s (every server sends out of its leaf) puts exactly
        s/u flows on its busiest cable, and no shift more: D-mod-K spreads a leaf's s consecutive destinations
        evenly over its u up ports and stays congestion-free above."""
        p = fattree(radix, levels=levels, servers_per_leaf=servers)
        hosts, taper = p.host_names, servers // (radix - servers)
        for shift in range(1, len(hosts)):
            flows = [(a, hosts[(i + shift) % len(hosts)]) for i, a in enumerate(hosts)]
            busiest = max(cable_loads(p, flows).values())
            assert busiest == taper if servers <= shift <= len(hosts) - servers else busiest <= taper

    def test_more_ports_up_than_servers_stay_congestion_free(self) -> None:
        p = fattree(6, levels=3, servers_per_leaf=2)
        hosts = p.host_names
        for step in alltoall_steps("pairwise", len(hosts)):
            assert max(cable_loads(p, [(hosts[a], hosts[b]) for a, b in step]).values()) == 1

    @pytest.mark.parametrize(
        "params", [{"radix": 6, "servers_per_leaf": 4}, {"radix": 8, "servers_per_leaf": 5, "leaves": 5, "nbl": 1},
                   {"radix": 8, "levels": 3, "servers_per_leaf": 6}, {"radix": 6, "levels": 3, "servers_per_leaf": 4,
                   "leaves": 3, "nbl": 1}],
    )  # fmt: skip
    def test_loader_routes_equal_model(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]], params: dict[str, Any]
    ) -> None:
        model = build_platform("fattree", params)
        suffix = ".so" if model.compiled else ".xml"
        write_platform(model, tmp_path / f"ft{suffix}")
        loaded = load_platform(tmp_path / f"ft{suffix}", "--all-routes")
        assert (loaded["hosts"], loaded["links"]) == (len(model.hosts), simgrid_link_count(model))
        for route in loaded["routes"]:
            assert route["links"] == model.route(route["src"], route["dst"])
            assert route["latency"] == pytest.approx(model.route_latency(route["src"], route["dst"]), rel=1e-12)
        if not model.compiled:
            assert p_graph_exact(model)

    def test_untapered_files_do_not_record_it(self) -> None:
        """servers_per_leaf = r/2 is the tree built before the parameter existed: the same name and zone file."""
        assert fattree(8, levels=3, servers_per_leaf=4).compiled == fattree(8, levels=3).compiled
        assert "servers_per_leaf 6\n" in getattr(fattree(8, levels=3, servers_per_leaf=6).compiled, "parameters", "")
        assert fattree(8, servers_per_leaf=4).name == "fattree-8"

    @pytest.mark.parametrize("servers", [0, 8, 9])
    def test_a_leaf_needs_a_server_and_an_up_port(self, servers: int) -> None:
        with pytest.raises(TopologyError, match=r"servers_per_leaf must be (between 1 and radix - 1 = 7|an integer)"):
            build_platform("fattree", {"radix": 8, "servers_per_leaf": servers})
