"""Nodes with cores and an intra-node path (generators/node.py), in every family and every representation.

The defaults change nothing but the provenance; the intra-node path adds exactly one link per host and one route from
each host to itself, which the estimate counts exactly; ranks fill nodes in blocks; and SimGrid itself (the loader,
smpirun) routes a host to itself through ``<host>_shm``, gives each host its cores, puts rank i on line i of a
hostfile that repeats host names, and times an intra-node ping-pong at ``shm_lat + (S + 16) / shm_bw``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators import crossbar
from generators import graph_routes
from generators import link_loads
from generators import place_ranks
from generators import tofu
from generators import write_hostfile
from generators import write_platform
from generators.families import FAMILIES
from generators.families import platform_size
from generators.model import Platform
from generators.node import APPLIED
from generators.node import MAX_CORES
from generators.node import NODE_PARAMS
from generators.node import apply_node
from generators.size import Size
from generators.topologies.mlfm import allocation_hosts
from generators.writer import platform_suffix
from generators.writer import write_parameters
from study_runner.batch.execute import parse_records
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import REPO
from tests.conftest import route_args
from tests.conftest import simgrid_link_count
from tests.test_golden import CASES
from tests.test_golden import GOLDEN
from tests.test_size import SMALL

SHM = {"cores": 4, "shm_bw": "10GBps", "shm_lat": "500ns"}
SHM_BW, SHM_LAT = 1e10, 5e-7
DEFAULTS = {"cores": "1", "shm_bw": "none", "shm_lat": "0s"}
PROVENANCE = re.compile(r"^(<!--|#) topolab platform ")


def with_node(params: dict[str, object], node: dict[str, object] = SHM) -> dict[str, object]:
    return {**params, **node}


def written(model: Platform, directory: Path, name: str = "p") -> Path:
    """Write ``model``; the text file that holds it (the XML, or a compiled zone's parameter file)."""
    path = directory / f"{name}{platform_suffix(model)}"
    write_platform(model, path)
    return path.with_suffix(".params") if model.compiled is not None else path


def without_provenance(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not PROVENANCE.match(line)]


def counted(platform: Platform) -> Size:
    """What the model holds: hosts, routers and links, and its routes as written (self-routes included)."""
    graph = platform.graph
    routers = len(platform.routers) + (len(graph.virtual_routers) if graph else 0)
    hosts, links = len(platform.hosts), len(platform.links)
    if platform.compiled is not None:
        return Size(hosts, routers, links, compiled=True)
    if graph is not None:
        return Size(hosts, routers, links, edges=len(graph.edges), edge_links=sum(len(e[2]) for e in graph.edges))
    routes = [route for _, _, route in platform.routes(itself=True)]
    return Size(hosts, routers, links, len(routes), sum(map(len, routes)))


class TestDeclaration:
    @pytest.mark.parametrize("family", sorted(FAMILIES))
    def test_every_family_declares_the_node_params_once(self, family: str) -> None:
        names = [param.name for param in FAMILIES[family].params]
        for param in NODE_PARAMS:
            assert names.count(param.name) == 1 and param in FAMILIES[family].params

    def test_host_speed_is_the_speed_of_a_core(self) -> None:
        (host_speed,) = [param for param in NODE_PARAMS if param.name == "host_speed"]
        assert host_speed.help == "speed of each core (flop/s)" and host_speed.default == "1Gf"
        assert set(APPLIED) == {param.name for param in NODE_PARAMS} - {"host_speed"}


class TestDefaults:
    @pytest.mark.parametrize(
        "name", sorted(name for name, (_, params) in CASES.items() if not set(params) & set(APPLIED))
    )
    def test_explicit_defaults_write_the_golden_file(self, name: str, tmp_path: Path) -> None:
        family, params = CASES[name]
        path = written(build_platform(family, with_node(params, DEFAULTS)), tmp_path, name)
        golden = GOLDEN / path.name
        assert without_provenance(path) == without_provenance(golden)
        (line,) = [line for line in golden.read_text().splitlines() if PROVENANCE.match(line)]
        built = json.loads(line.partition(", as built ")[2].rstrip(" ->"))
        assert (built["cores"], built["shm_bw"], built["shm_lat"]) == (1, None, 0.0)  # recorded, not hidden

    @pytest.mark.parametrize(("family", "params"), SMALL)
    def test_defaults_leave_the_platform_untouched(self, family: str, params: dict[str, object]) -> None:
        model = build_platform(family, params)
        assert apply_node(model) is model and not model.shm
        assert all(host.cores == 1 for host in model.hosts)
        assert not [link for link in model.links.values() if link.kind == "shm"]

    def test_shm_lat_zero_alone_is_the_default(self) -> None:
        given = build_platform("crossbar", {"hosts": 2, "shm_lat": "0s"})
        assert given.links == crossbar(2).links and not given.shm


class TestWritten:
    @pytest.mark.parametrize(("family", "params"), SMALL)
    def test_the_node_adds_its_elements_and_nothing_else(
        self, family: str, params: dict[str, object], tmp_path: Path
    ) -> None:
        plain = written(build_platform(family, params), tmp_path, "plain")
        model = build_platform(family, with_node(params))
        node = written(model, tmp_path, "node")
        hosts = model.host_names
        if model.compiled is not None:
            assert without_provenance(node) == [*without_provenance(plain), "cores 4", "shm_bw 10000000000.0",
                                                "shm_lat 5e-07"]  # fmt: skip
            return
        lines = without_provenance(node)
        shm_links = [line for line in lines if re.match(r'<link id="[^"]+_shm" ', line)]
        loops = [
            line for line in lines if (m := re.match(r'<route src="([^"]+)" dst="([^"]+)"', line)) and m[1] == m[2]
        ]
        assert shm_links == [
            f'<link id="{h}_shm" bandwidth="10000000000.0Bps" latency="5e-07s" sharing_policy="FATPIPE"/>'
            for h in hosts
        ]
        assert sorted(loops) == sorted(
            f'<route src="{h}" dst="{h}" symmetrical="NO"><link_ctn id="{h}_shm"/></route>' for h in hosts
        )
        assert sum(' core="4"' in line for line in lines) == len(hosts)
        rest = [line.replace(' core="4"', "") for line in lines if line not in set(shm_links) | set(loops)]
        assert rest == without_provenance(plain)

    def test_one_core_writes_no_core_attribute(self, tmp_path: Path) -> None:
        text = written(crossbar(2, shm_bw="1GBps"), tmp_path).read_text()
        assert "core=" not in text and text.count("_shm") == 4  # two links, two routes
        text = written(crossbar(2, cores=2), tmp_path, "cores").read_text()
        assert text.count(' core="2"') == 2 and "_shm" not in text


class TestModel:
    @pytest.mark.parametrize(("family", "params"), SMALL)
    def test_the_estimate_counts_the_node_exactly(self, family: str, params: dict[str, object]) -> None:
        estimate, plain = platform_size(family, with_node(params)), platform_size(family, params)
        model = build_platform(family, with_node(params))
        assert estimate == model.size
        assert counted(model) == Size(**{**estimate.__dict__, "hint": ""})
        assert estimate.links == plain.links + plain.hosts
        loops = 0 if plain.compiled else plain.hosts
        assert (estimate.routes + estimate.edges, estimate.route_links + estimate.edge_links) == (
            plain.routes + plain.edges + loops,
            plain.route_links + plain.edge_links + loops,
        )

    @pytest.mark.parametrize(("family", "params"), SMALL)
    def test_a_host_routes_to_itself_through_its_shm_link(self, family: str, params: dict[str, object]) -> None:
        model, plain = build_platform(family, with_node(params)), build_platform(family, params)
        for host in model.hosts:
            link = model.links[f"{host.name}_shm"]
            assert host.cores == 4 and host.speed == plain.host(host.name).speed
            assert model.route(host.name, host.name) == [link.name]
            assert (link.bandwidth, link.latency, link.sharing) == (SHM_BW, SHM_LAT, "FATPIPE")
            assert model.route_latency(host.name, host.name) == SHM_LAT
        if model.graph is not None:  # the graph's edge from each host to itself is that route, and only that
            loops = {(a, links) for a, b, links in model.graph.edges if a == b}
            assert loops == {(h, (f"{h}_shm",)) for h in model.host_names}
        assert list(model.routes()) == list(plain.routes())  # every other route is unchanged

    def test_self_edges_are_on_no_shortest_path(self) -> None:
        model = build_platform("mesh", with_node({"width": 3, "height": 3, "nbl": 1}))
        assert model.graph is not None
        for src, dst, route in model.routes():
            assert graph_routes(model.graph, src, dst) == {tuple(route)}

    def test_without_shm_a_host_has_no_route_to_itself(self) -> None:
        with pytest.raises(TopologyError, match=r"no route from a host to itself \('host-1'\).*give shm_bw"):
            crossbar(2).route("host-1", "host-1")

    def test_link_loads_count_intra_node_flows_on_the_shm_link(self) -> None:
        model = crossbar(2, shm_bw="1GBps")
        loads = link_loads(model, [("host-0", "host-0"), ("host-0", "host-0"), ("host-0", "host-1")])
        assert (loads["host-0_shm"], loads["host-0_to_xbar"], loads["host-1_shm"]) == (2, 1, 0)

    def test_tofu_applies_its_node_values_once(self, tmp_path: Path) -> None:
        compiled = tofu((1, 1, 2), **SHM)  # tofu builds through torus, which gets the defaults
        write_parameters(compiled, tmp_path / "tofu.params")
        lines = (tmp_path / "tofu.params").read_text().splitlines()[1:]  # after the provenance comment
        assert lines[0] == "name tofu-1x1x2" and lines[-3:] == ["cores 4", "shm_bw 10000000000.0", "shm_lat 5e-07"]
        assert sum(line.split()[0] in APPLIED for line in lines) == 3
        auto = tofu((1, 1, 1), zone="auto", **SHM)
        assert auto.family == "tofu" and (auto.params["cores"], auto.params["shm_bw"]) == (4, SHM_BW)
        assert sum(link.kind == "shm" for link in auto.links.values()) == len(auto.hosts) == 12
        with pytest.raises(TopologyError, match="already applied"):
            apply_node(auto, cores=2)

    @pytest.mark.parametrize(
        ("params", "message"),
        [
            ({"shm_lat": "1us"}, r"shm_lat needs shm_bw: .* got shm_lat 1e-06 with shm_bw none"),
            ({"cores": "0"}, r"cores must be an integer >= 1, got 0"),
            (
                {"cores": str(MAX_CORES + 1)},
                r"cores must be at most 2147483647 \(SimGrid reads a core count as a C int",
            ),
            (
                {"cores": "1000000000", "host_speed": "1e300f"},
                r"cores x host_speed \(1000000000 x 1e\+300\) must be fin",
            ),
            ({"shm_bw": "0Bps"}, r"shm_bw"),
            ({"shm_bw": ""}, r"shm_bw"),
        ],
    )
    def test_bad_node_values(self, params: dict[str, object], message: str) -> None:
        for check in (build_platform, platform_size):  # refused by the estimate already, before anything is built
            with pytest.raises(TopologyError, match=message):
                check("crossbar", {"hosts": 2, **params})

    def test_the_cli_refuses_shm_lat_alone(self, tmp_path: Path) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "generators", "mesh", "--width", "2", "--height", "2", "--shm-lat", "1us",
             "-o", str(tmp_path / "m.xml")],
            capture_output=True, text=True, cwd=REPO, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2 and not (tmp_path / "m.xml").exists()
        assert done.stderr.count("\n") == 1 and "error: shm_lat needs shm_bw" in done.stderr


class TestRanksPerNode:
    @pytest.mark.parametrize("per_node", [1, 2, 3, 7])
    def test_block_placement(self, per_node: int) -> None:
        model = crossbar(5)
        slots = place_ranks(model, None, ranks_per_node=per_node)
        assert slots == [model.host_names[rank // per_node] for rank in range(5 * per_node)]
        order = ["host-3", "host-1"]
        assert place_ranks(model, None, order, per_node) == ["host-3"] * per_node + ["host-1"] * per_node
        assert place_ranks(model, per_node + 1, order, per_node) == ["host-3"] * per_node + ["host-1"]

    def test_named_placement_fills_each_server(self) -> None:
        model = build_platform("mlfm", {"d": 2})
        servers = allocation_hosts(model, 1, 2, 2)
        assert place_ranks(model, None, "allocation:1,2,2", 3) == [s for s in servers for _ in range(3)]

    @pytest.mark.parametrize(
        ("ranks", "order", "per_node", "message"),
        [
            (7, None, 2, r"7 ranks do not fit on 3 hosts \u00d7 2 ranks per node of crossbar-3"),
            (2, ["host-1", "host-1"], 2, r"names a host twice"),
            (1, None, 0, r"ranks per node must be an integer >= 1, got 0"),
            (1, None, True, r"ranks per node must be an integer >= 1, got True"),
            (0, None, 2, r"ranks must be an integer >= 1, got 0"),
            (None, None, 10**20, r"3.00e20 ranks: a placement holds at most 10000000"),
        ],
    )
    def test_bad_placements(self, ranks: int | None, order: list[str] | None, per_node: int, message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            place_ranks(crossbar(3), ranks, order, per_node)

    @pytest.mark.parametrize(
        ("extra", "status", "hosts"),
        [
            (["--ranks-per-node", "2", "--ranks", "3"], 0, "host-0\nhost-0\nhost-1\n"),
            (["--ranks-per-node", "2"], 0, "host-0\nhost-0\nhost-1\nhost-1\n"),
            (["--ranks-per-node", "0"], 2, "ranks per node must be an integer >= 1, got 0"),
            (["--ranks-per-node", "2", "--ranks", "5"], 2, "5 ranks do not fit on 2 hosts \u00d7 2 ranks per node"),
        ],
    )
    def test_cli(self, tmp_path: Path, extra: list[str], status: int, hosts: str) -> None:
        command = [sys.executable, "-m", "generators", "crossbar", "--hosts", "2", "-o", str(tmp_path / "x.xml")]
        done = subprocess.run([*command, "--hostfile", str(tmp_path / "h"), *extra], capture_output=True, text=True,
                              cwd=REPO, timeout=60)  # fmt: skip
        assert done.returncode == status
        if status == 0:
            assert (tmp_path / "h").read_text() == hosts
        else:
            assert hosts in done.stderr and done.stderr.count("\n") == 1 and not (tmp_path / "h").exists()
        alone = subprocess.run([*command, "--ranks-per-node", "2"], capture_output=True, text=True, cwd=REPO)
        assert alone.returncode == 2 and "--ranks-per-node needs --hostfile" in alone.stderr


REPRESENTATIONS = [  # one of each way SimGrid gets the routes
    ("crossbar", {"hosts": 3}),  # Full zone
    ("torus", {"dims": "4x2"}),  # Full zone (explicit routes of an even torus)
    ("mesh", {"width": 3, "height": 2}),  # Dijkstra zone over the layered graph
    ("mlfm", {"d": 2}),  # Dijkstra zone over the MLFM graph
    ("torus", {"dims": "4x2", "zone": "compiled"}),  # compiled zone
    ("tofu", {"xyz": "1x1x2"}),  # compiled zone, through tofu
    ("tofu", {"xyz": "1x1x1", "zone": "auto"}),  # Dijkstra zone, through tofu
]


@pytest.mark.simgrid
class TestSimGrid:
    @pytest.mark.parametrize(("family", "params"), REPRESENTATIONS)
    def test_simgrid_routes_a_host_to_itself_through_its_shm_link(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]], family: str, params: dict[str, object]
    ) -> None:
        model = build_platform(family, with_node(params))
        path = tmp_path / f"p{platform_suffix(model)}"
        write_platform(model, path)
        loops = [(h, h) for h in model.host_names]
        loaded = load_platform(path, "--list-cores", "--all-routes", *route_args(loops))
        assert loaded["hosts"] == len(model.hosts) and loaded["links"] == simgrid_link_count(model)
        assert loaded["host_cores"] == {h: 4 for h in model.host_names}
        for route in loaded["routes"]:
            assert route["links"] == model.route(route["src"], route["dst"])
            assert route["latency"] == pytest.approx(model.route_latency(route["src"], route["dst"]), rel=1e-12)
        assert [r["links"] for r in loaded["routes"][: len(loops)]] == [[f"{h}_shm"] for h, _ in loops]

    @pytest.mark.parametrize(("family", "params"), REPRESENTATIONS)
    def test_without_shm_simgrid_keeps_its_own_path(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]], family: str, params: dict[str, object]
    ) -> None:
        """SimGrid's implicit loopback (what ``shm_bw none`` means): the network model's ``__loopback__`` in XML zones,
        its twin ``loopback`` made by the compiled zone."""
        model = build_platform(family, params)
        path = tmp_path / f"p{platform_suffix(model)}"
        write_platform(model, path)
        loaded = load_platform(path, "--list-cores", "--route", model.host_names[-1], model.host_names[-1])
        assert set(loaded["host_cores"].values()) == {1}
        (route,) = loaded["routes"]
        assert (route["links"], route["latency"]) == (["loopback" if model.compiled else "__loopback__"], 0)

    def test_smpirun_puts_rank_i_on_line_i_of_a_hostfile_that_repeats_hosts(
        self, tmp_path: Path, bin_dir: Path
    ) -> None:
        model = crossbar(3)
        hosts = place_ranks(model, 5, ranks_per_node=2)
        write_platform(model, tmp_path / "p.xml")
        write_hostfile(hosts, tmp_path / "hosts")
        command = smpirun_command(bin_dir / "zero_count", [], tmp_path / "p.xml", tmp_path / "hosts", len(hosts),
                                  ["-map", "--log=smpi.thres:info"])  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stderr
        mapped = dict(re.findall(r"\[rank (\d+)\] -> (\S+)", done.stderr))
        assert (
            [mapped[str(rank)] for rank in range(len(hosts))] == hosts == ["host-0"] * 2 + ["host-1"] * 2 + ["host-2"]
        )

    @pytest.mark.parametrize("shm", [True, False])
    def test_intra_node_pingpong(self, tmp_path: Path, bin_dir: Path, shm: bool) -> None:
        """Two ranks on one host: shm_lat + (S + 16) / shm_bw with the intra-node link; without it, SimGrid's
        loopback (10 GBps, latency 0)."""
        model = crossbar(2, shm_bw="1GBps", shm_lat="1us") if shm else crossbar(2)
        hosts = place_ranks(model, 2, ranks_per_node=2)
        assert hosts == ["host-0", "host-0"]
        write_platform(model, tmp_path / "p.xml")
        write_hostfile(hosts, tmp_path / "hosts")
        command = smpirun_command(bin_dir / "pingpong", ["-s", "1,4K,1M", "-i", "2", "-w", "0"], tmp_path / "p.xml",
                                  tmp_path / "hosts", 2)  # fmt: skip
        records = parse_records(run_smpirun(command, tmp_path, timeout=120, label="pingpong"), "pingpong")
        assert [r["bytes"] for r in records] == [1, 4096, 1 << 20]
        latency, bandwidth = (1e-6, 1e9) if shm else (0.0, 10e9)
        if shm:
            assert (model.route_latency(*hosts), model.route_bandwidth(*hosts)) == (latency, bandwidth)
        for r in records:
            assert r["oneway_s_min"] == pytest.approx(
                latency + (r["bytes"] + SMPI_ENVELOPE_BYTES) / bandwidth, rel=1e-9
            )
