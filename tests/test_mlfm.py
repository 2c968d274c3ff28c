"""Multi-layer full mesh: counts, routes through SimGrid (the XML Dijkstra zone and the compiled zone), the routing
graph's exactness, and the partial all-to-all schedule (its condition proved both ways). The two-level fat tree:
tests/test_fattree.py."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators import graph_routes
from generators import mlfm
from generators import place_ranks
from generators import platform_suffix
from generators import write_platform
from generators.model import Platform
from generators.model import RoutingGraph
from generators.schedules import alltoall_steps
from generators.schedules import check_mlfm_allocation
from generators.schedules import mlfm_destination
from generators.subnet import SUBNET_APPLIED
from generators.topologies.mlfm import allocation_hosts
from study_runner.studies.study import load_study
from tests.conftest import REPO
from tests.conftest import assert_loader_routes_equal_model
from tests.conftest import shift_times
from tests.test_generators_cli import run_cli

TESTBED = {"d": 3, "servers_per_leaf": (3, 3, 2)}  # the paper's 32-server testbed (Sect. 3)
FIG3 = load_study("mlfm-alltoall").values("fig3", "servers", "n", "l", "m")
PAPER_CONFIGS = {servers: tuple(shape) for servers, *shape in FIG3}  # Fig. 3's allocations, from the study file


def kind_count(p: Platform, prefix: str) -> int:
    return sum(1 for r in p.routers if r.startswith(prefix))


def cable_loads(p: Platform, flows: list[tuple[str, str]]) -> Counter[str]:
    """Flows per directed cable (limiters excluded: they are not cables)."""
    loads: Counter[str] = Counter()
    for src, dst in flows:
        loads.update(p.cables(dict.fromkeys(p.route(src, dst), 1)))
    return loads


class TestCounts:
    @pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 18])
    def test_papers_counts(self, d: int) -> None:
        p = mlfm(d)
        assert len(p.hosts) == d * d * (d + 1)
        assert kind_count(p, "leaf-") == d * (d + 1)
        assert kind_count(p, "spine-") == d * (d + 1) // 2
        # radix 2d: a leaf has d servers and d spines, a spine one leaf of each of 2 columns in each of d layers
        ports = Counter(link.ends[0] for link in p.links.values())
        assert set(ports.values()) == {1, 2 * d}

    def test_36_port_switches(self) -> None:
        assert len(mlfm(18).hosts) == 6156

    def test_testbed(self) -> None:
        p = mlfm(**TESTBED)  # type: ignore[arg-type]
        assert len(p.hosts) == 32
        assert [h for h in p.host_names if h.startswith("server-2-0-")] == ["server-2-0-0", "server-2-0-1"]
        assert (kind_count(p, "leaf-"), kind_count(p, "spine-")) == (12, 6)


class TestRoutes:
    def test_three_cases(self) -> None:
        p = mlfm(3)
        assert p.route("server-1-2-0", "server-1-2-2") == ["server-1-2-0_to_leaf-1-2", "leaf-1-2_to_server-1-2-2"]
        assert p.route("server-0-3-1", "server-2-1-0") == [
            "server-0-3-1_to_leaf-0-3", "leaf-0-3_to_spine-1-3", "spine-1-3_to_leaf-2-1", "leaf-2-1_to_server-2-1-0",
        ]  # fmt: skip
        for k in range(3):  # same column 3, other layer: spine {3, (3 + k + 1) mod 4}
            assert p.route(f"server-0-3-{k}", "server-1-3-0")[1] == f"leaf-0-3_to_spine-{k}-3"

    def test_destination_choice(self) -> None:
        p = mlfm(3, spine_choice="destination")
        for k in range(3):
            assert p.route("server-0-3-0", f"server-1-3-{k}")[2] == f"spine-{k}-3_to_leaf-1-3"

    def test_nbl_frames_the_route(self) -> None:
        route = mlfm(2, nbl=1.0).route("server-0-0-0", "server-1-2-1")
        assert route[0] == "server-0-0-0_nbl" and route[-1] == "server-1-2-1_nbl" and len(route) == 6

    @pytest.mark.parametrize(
        "params",
        [{"d": 2}, {"d": 3}, TESTBED, {"d": 3, "spine_choice": "destination", "nbl": 1.0}, {"d": 4, "nbl": 2.5}],
        ids=["d2", "d3", "testbed", "d3-destination-nbl", "d4-nbl"],
    )
    def test_graph_has_exactly_the_rules_routes(self, params: dict[str, Any]) -> None:
        """Every fewest-links path of the routing graph has the rule's links: SimGrid cannot pick another."""
        p = mlfm(**params)
        assert p.graph is not None
        for src, dst, route in p.routes():
            assert graph_routes(p.graph, src, dst) == {tuple(route)}, (src, dst)

    def test_graph_exact_on_sampled_pairs_at_d18(self) -> None:
        p = mlfm(18)
        assert p.graph is not None
        rng = random.Random(18)
        for src, dst in (rng.sample(p.host_names, 2) for _ in range(30)):
            assert graph_routes(p.graph, src, dst) == {tuple(p.route(src, dst))}


@pytest.mark.parametrize("zone", ["auto", "compiled"])
@pytest.mark.parametrize(
    "params",
    [{"d": 2}, {"d": 3}, {"d": 4}, TESTBED, {"d": 3, "spine_choice": "destination", "nbl": "nominal"},
     {"d": 3, "layers": 2, "servers_per_leaf": 2}, {"d": 4, "spine_choice": "destination"},
     {"d": 3, "layers": 2, "servers_per_leaf": "1,3", "spine_bw": "3GBps", "link_lat": "1us", "nbl": 2},
     {"d": 2, "cores": 4, "shm_bw": "10GBps", "shm_lat": "500ns"}, {"d": 1}],
    ids=["d2", "d3", "d4", "testbed", "d3-destination-nbl", "d3-two-ports", "d4-destination",
         "d3-partial-spine-bw-nbl", "d2-shm", "d1"],
)  # fmt: skip
def test_loader_routes_equal_model(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], params: dict[str, Any], zone: str
) -> None:
    """The XML Dijkstra zone and the compiled zone (simgrid_cpp/mlfm_zone.cpp) hold the model's hosts and links,
    name for name (every link is on some route), and route every pair over the rule's links, in order."""
    model = build_platform("mlfm", {**params, "zone": zone})
    assert (model.compiled is not None, model.graph is None) == (zone == "compiled",) * 2
    loaded = assert_loader_routes_equal_model(load_platform, model, tmp_path / f"mlfm{platform_suffix(model)}")
    used = {link for route in loaded["routes"] for link in route["links"]}
    assert used - {"loopback", "__loopback__"} == set(model.links)


class TestCompiledZone:
    """zone=compiled: simgrid_cpp/mlfm_zone.cpp (routes against the model: test_loader_routes_equal_model)."""

    def test_xml_is_the_default_and_unrecorded(self) -> None:
        """The XML platforms written before the parameters existed are written the same: zone=auto, routing=static,
        spread=message and revisit=0 (the defaults) are not recorded, nor the node's memory figures
        (generators.node)."""
        p = mlfm(3)
        memory = ("memory_bw", "core_memory_bw")
        routed = SUBNET_APPLIED  # the subnet manager's parameters (generators.subnet), every family's last
        assert p.compiled is None and p.graph is not None
        assert p.unrecorded == (*memory, "zone", "routing", "spread", "revisit", *routed)
        assert mlfm(3, zone="compiled").unrecorded == (*memory, "routing", "spread", "revisit", *routed)

    def test_parameter_file(self) -> None:
        """Layers and servers per leaf as built (one value when every layer has the same), the spine bandwidth."""
        full, testbed = mlfm(3, zone="compiled", link_bw="2GBps"), mlfm(**TESTBED, zone="compiled")  # type: ignore[arg-type]
        assert full.compiled is not None and testbed.compiled is not None
        assert "layers 3\nservers_per_leaf 3\nspine_bw 2000000000.0\n" in full.compiled.parameters
        assert "servers_per_leaf 3 3 2\n" in testbed.compiled.parameters

    @pytest.mark.parametrize(
        "params", [{**TESTBED, "spine_bw": "3GBps", "nbl": 1}, {"d": 3, "spine_choice": "destination"}]
    )
    def test_simulated_times_equal_xml(self, tmp_path: Path, bin_dir: Path, params: dict[str, Any]) -> None:
        """Every shift permutation (1 MiB) takes the same simulated time in both representations, to the bit: the
        same links on every route, in the same order, created in the same order (the testbed's 32 ranks with spines
        slower than the server cables and NBL; 36 ranks, destination choice)."""
        xml, compiled = mlfm(**params), mlfm(**params, zone="compiled")
        write_platform(xml, tmp_path / "m.xml")
        write_platform(compiled, tmp_path / "m.so")
        theirs = shift_times(tmp_path, bin_dir, tmp_path / "m.xml", xml.host_names)
        mine = shift_times(tmp_path, bin_dir, tmp_path / "m.so", compiled.host_names)
        assert len(mine) == len(xml.hosts) - 1 and mine == theirs


def test_graph_nodes_nobody_enters_are_refused() -> None:
    """SimGrid's Dijkstra (3.32, 4.1) never returns when a node has out-edges but no in-edge: the model refuses it."""
    p = mlfm(2)
    assert p.graph is not None
    bad = RoutingGraph(
        (*p.graph.virtual_routers, "orphan"), (*p.graph.edges, ("orphan", "leaf-0-0", ("leaf-0-0_to_server-0-0-0",)))
    )
    with pytest.raises(TopologyError, match=r"routing graph nodes without an in-edge: \['orphan'\]"):
        Platform(p.name, p.hosts, p.routers, p.links, p.route_rule, bad)


def p_graph_exact(p: Platform) -> bool:
    assert p.graph is not None
    return all(graph_routes(p.graph, src, dst) == {tuple(route)} for src, dst, route in p.routes())


def allocations(d: int) -> list[tuple[int, int, int]]:
    """Every (n, l, m) the machine of radix 2d could hold: n <= d layers, 2 <= l <= d + 1 columns, m <= d."""
    return [(n, l, m) for n in range(1, d + 1) for l in range(2, d + 2) for m in range(1, d + 1)]  # noqa: E741


def schedule_flaws(p: Platform, n: int, l: int, m: int) -> list[str]:  # noqa: E741
    """What is wrong with the paper's formula on allocation (n, l, m) of ``p`` (empty: a valid schedule)."""
    ranks = n * l * m
    hosts = allocation_hosts(p, n, l, m)
    phases = [[mlfm_destination(r, phase, n, l, m) for r in range(ranks)] for phase in range(ranks)]
    flaws = []
    if phases[0] != list(range(ranks)):
        flaws.append("phase 0 is not the local copy")
    if any(sorted(phase) != list(range(ranks)) for phase in phases):
        flaws.append("a phase is not a permutation")
    if any(sorted(phases[p][r] for p in range(ranks)) != list(range(ranks)) for r in range(ranks)):
        flaws.append("a rank does not send to every rank exactly once")
    for phase in phases[1:]:
        loads = cable_loads(p, [(hosts[r], hosts[dst]) for r, dst in enumerate(phase) if dst != r])
        if max(loads.values(), default=0) > 1:
            flaws.append("two flows share a directed cable")
            break
    return flaws


class TestMlfmSchedule:
    @pytest.mark.parametrize("d", [1, 2, 3, 4])
    @pytest.mark.parametrize("spine_choice", ["source", "destination"])
    def test_valid_exactly_when_m_at_most_l_minus_1(self, d: int, spine_choice: str) -> None:
        """For every allocation of a d <= 4 machine: the formula is a congestion-free all-to-all iff m <= l - 1."""
        p = mlfm(d, spine_choice=spine_choice)
        valid = 0
        for n, l, m in allocations(d):  # noqa: E741
            flaws = schedule_flaws(p, n, l, m)
            if m <= l - 1:
                assert flaws == [], (n, l, m)
                check_mlfm_allocation(n, l, m)
                valid += 1
            else:
                assert "a rank does not send to every rank exactly once" in flaws, (n, l, m)
                with pytest.raises(TopologyError, match=r"needs 1 <= m <= l - 1"):
                    check_mlfm_allocation(n, l, m)
        assert valid == d * sum(min(l - 1, d) for l in range(2, d + 2))  # noqa: E741

    def test_printed_condition_is_extraction_damage(self) -> None:
        """The text's "1 <= l-1 <= m <= d" rejects its own 24A and admits allocations the formula cannot serve."""

        def printed(n: int, l: int, m: int, d: int = 3) -> bool:  # noqa: E741
            return 1 <= l - 1 <= m <= d and 1 <= n <= d

        assert not printed(*PAPER_CONFIGS["24A"])
        assert schedule_flaws(mlfm(**TESTBED), *PAPER_CONFIGS["24A"]) == []  # type: ignore[arg-type]
        assert printed(1, 3, 3) and schedule_flaws(mlfm(3), 1, 3, 3) != []

    @pytest.mark.parametrize("config", sorted(PAPER_CONFIGS))
    def test_papers_configurations_on_the_testbed(self, config: str) -> None:
        n, l, m = PAPER_CONFIGS[config]  # noqa: E741
        p = mlfm(**TESTBED)  # type: ignore[arg-type]
        assert schedule_flaws(p, n, l, m) == []
        assert len(place_ranks(p, n * l * m, f"allocation:{n},{l},{m}")) == int(config[:2])

    def test_pairwise_congests_where_mlfm_does_not(self) -> None:
        p = mlfm(**TESTBED)  # type: ignore[arg-type]
        hosts = allocation_hosts(p, 2, 4, 3)
        worst = [max(cable_loads(p, [(hosts[a], hosts[b]) for a, b in step]).values()) for step in
                 alltoall_steps("pairwise", 24)]  # fmt: skip
        assert max(worst) >= 3 and min(worst) == 1

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            ((2, 3, 3, None), r"needs 1 <= m <= l - 1"),
            ((3, 1, 1, None), r"needs 1 <= m <= l - 1"),
            ((0, 3, 2, None), r"n must be an integer >= 1, got 0"),
            ((2, 3, 2, 10), r"has 12 servers, not 10 ranks"),
        ],
    )
    def test_bad_allocation(self, args: tuple[int, int, int, int | None], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            check_mlfm_allocation(*args)


@pytest.mark.parametrize(
    ("family", "params", "message"),
    [
        ("mlfm", {"d": 0}, r"d must be an integer >= 1, got 0"),
        ("mlfm", {"d": 3, "layers": 4}, r"layers must be between 1 and d=3, got 4"),
        ("mlfm", {"d": 3, "servers_per_leaf": "3,4,2"}, r"servers_per_leaf values must be between 1 and d=3"),
        ("mlfm", {"d": 3, "servers_per_leaf": "3,3"}, r"needs one value or one per layer \(3\), got 2"),
        ("mlfm", {"d": 3, "spine_choice": "random"}, r"spine_choice must be one of source, destination"),
    ],
)
def test_bad_parameters(family: str, params: dict[str, Any], message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        build_platform(family, params)


@pytest.mark.parametrize(
    ("placement", "message"),
    [
        ("allocation:3,3,3", r"does not fit mlfm-3: it has no server-2-0-2"),
        ("allocation:3,4,3", r"does not fit mlfm-3: it needs 36 servers, the platform has 32"),
        ("allocation:2,x,3", r"placement allocation needs n,l,m \(three integers\)"),
        (
            "block:2",
            r"mlfm has no placement 'block' \(named placements: allocation, contiguous, random, random-chunks, "
            r"stride; or a list of hosts: server-0-0-0,server-0-0-1\)",
        ),
    ],
)
def test_bad_placement(placement: str, message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        place_ranks(mlfm(**TESTBED), 24, placement)  # type: ignore[arg-type]


@pytest.mark.parametrize("allocation", ["1000000000,1,1", "56879462421982879744," + "1" + "0" * 40 + ",3284954700"])
def test_a_huge_allocation_is_refused_from_its_count(tmp_path: Path, allocation: str) -> None:
    """The case of the long hostile-input run: itertools.product listed range(n) whole before its first server, so
    n = 1e9 took the machine's memory (here bounded: 2 GiB of address space, a MemoryError) and n = 5.7e19
    overflowed. Counted first, it is one error at once."""
    command = ["prlimit", f"--as={2 << 30}", "--", sys.executable, "-m", "generators", "mlfm", "--d", "3",
               "--placement", f"allocation:{allocation}", "-o", str(tmp_path / "m.xml"), "--hostfile",
               str(tmp_path / "m.hosts")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "does not fit mlfm-3: it needs" in done.stderr and "servers, the platform has 36" in done.stderr
    assert not (tmp_path / "m.xml").exists() and not (tmp_path / "m.hosts").exists()


def test_cli_writes_allocation_hostfile(tmp_path: Path) -> None:
    done = run_cli("mlfm", "--d", "3", "--servers-per-leaf", "3,3,2", "--placement", "allocation:2,3,2",
                   "-o", str(tmp_path / "m.xml"), "--hostfile", str(tmp_path / "m.hosts"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    hosts = (tmp_path / "m.hosts").read_text().split()
    assert hosts == [f"server-{i}-{j}-{k}" for i, j, k in itertools.product(range(2), range(3), range(2))]
    bad = run_cli("mlfm", "--d", "3", "--layers", "2", "--placement", "allocation:3,3,2", "-o",
                  str(tmp_path / "n.xml"), "--hostfile", str(tmp_path / "n.hosts"))  # fmt: skip
    assert bad.returncode == 2 and "does not fit" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "n.xml").exists() and not (tmp_path / "n.hosts").exists()
