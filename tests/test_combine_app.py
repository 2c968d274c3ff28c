"""The combine app (Littlefield's Tree, Snake and Fence vector combining) and the nbl_testjig under smpirun and MPICH.

Every smpirun here uses topolab's standard options on a W x H mesh (generators.mesh: rank r on host-r, node
(r % W, r / W)) of 1 GBps / 1 us links, optionally with node-bandwidth limiters (nbl, in link bandwidths).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import mesh
from generators import place_ranks
from generators import write_hostfile
from generators import write_platform
from generators.schedules import combine_steps
from study_runner.batch.execute import parse_records
from study_runner.simulation.smpi import EAGER_LIMIT_BYTES
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import message_overhead_options
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import WrittenPlatform
from tests.conftest import assert_usage_error
from tests.conftest import mpiexec

LINK_BW = 1e9
LINK_LAT = 1e-6
KEYS = [
    "app", "version", "algorithm", "width", "height", "ranks", "elements", "block", "blocks", "steps", "c2", "c3",
    "warmup", "iterations", "time_s_min", "time_s_avg", "time_s_max", "verified",
]  # fmt: skip
JIG_KEYS = ["app", "version", "links", "doubles", "iterations", "time_s"]

Shape = tuple[int, int]
Platforms = Callable[[Shape, float | None], tuple[Path, Path]]
Run = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="module")
def platforms(written_platform: WrittenPlatform) -> Platforms:
    """Mesh platform and hostfile for a shape (and NBL cap)."""
    return lambda shape, nbl=None: written_platform(mesh(*shape, link_bw=LINK_BW, link_lat=LINK_LAT, nbl=nbl))


def app_command(
    platforms: Platforms,
    bin_dir: Path,
    app: str,
    shape: Shape,
    args: list[str],
    nbl: float | None = None,
    options: tuple[str, ...] = (),
) -> list[str]:
    xml, hosts = platforms(shape, nbl)
    return smpirun_command(bin_dir / app, args, xml, hosts, shape[0] * shape[1], options)


@pytest.fixture
def run(platforms: Platforms, bin_dir: Path, tmp_path: Path) -> Run:
    """Run an app on a mesh under smpirun; return the JSON records it printed."""

    def go(
        app: str, shape: Shape, *args: str, nbl: float | None = None, options: tuple[str, ...] = ()
    ) -> list[dict[str, Any]]:
        command = app_command(platforms, bin_dir, app, shape, list(args), nbl, options)
        return parse_records(run_smpirun(command, tmp_path, timeout=120, label=app), app)

    return go


def combine_args(algorithm: str, shape: Shape, elements: int, block: int, *extra: str) -> list[str]:
    return ["-a", algorithm, "-W", str(shape[0]), "-H", str(shape[1]), "-n", str(elements), "-S", str(block), *extra]


def expected_steps(algorithm: str, shape: Shape, blocks: int) -> int:
    """Global steps of the schedule (tests/test_schedules.py checks them against the Appendix's timelines)."""
    return len(combine_steps(algorithm, *shape, blocks)) if shape[0] * shape[1] > 1 else 0


def message_time(doubles: int) -> float:
    """One message of `doubles` between mesh neighbours, alone on its link."""
    return LINK_LAT + (8 * doubles + SMPI_ENVELOPE_BYTES) / LINK_BW


SHAPES = [(1, 1), (2, 1), (3, 3), (4, 4), (4, 2), (5, 3)]
SIZES = [(1000, 125), (1000, 64), (1000, 7), (1, 5), (5, 100)]  # (N, S): S divides N, does not, N < S (1 block)


class TestVerify:
    @pytest.mark.parametrize(("elements", "block"), SIZES, ids=[f"N{n}-S{s}" for n, s in SIZES])
    @pytest.mark.parametrize("shape", SHAPES, ids=[f"{w}x{h}" for w, h in SHAPES])
    @pytest.mark.parametrize("algorithm", ["tree", "snake", "fence"])
    def test_every_rank_holds_the_sum(self, run: Run, algorithm: str, shape: Shape, elements: int, block: int) -> None:
        args = combine_args(algorithm, shape, elements, block, "-w", "1", "-i", "2", "--verify")
        (record,) = run("combine", shape, *args)
        assert list(record) == KEYS and record["verified"] is True
        blocks = 1 if algorithm == "tree" else math.ceil(elements / block)
        expected = {"app": "combine", "version": 1, "algorithm": algorithm, "width": shape[0], "height": shape[1]}
        expected |= {"ranks": shape[0] * shape[1], "elements": elements, "block": block, "blocks": blocks}
        expected |= {"steps": expected_steps(algorithm, shape, blocks), "c2": 0.25e-6, "c3": 0.37e-6}
        expected |= {"warmup": 1, "iterations": 2}
        assert {k: record[k] for k in expected} == expected

    def test_one_rank_does_nothing(self, run: Run) -> None:
        (record,) = run("combine", (1, 1), "-W", "1", "-H", "1", "-n", "100", "--verify")
        assert record["steps"] == 0 and record["time_s_max"] == 0 and record["verified"] is True


class TestTiming:
    N = 100_000  # 800 kB messages: far above SMPI's eager limit

    def test_tree_on_two_nodes_is_two_messages(self, run: Run) -> None:
        # Rank 1 sends its vector to rank 0, which combines and sends the sum back.
        (record,) = run("combine", (2, 1), *combine_args("tree", (2, 1), self.N, 1, "--c2", "0", "--c3", "0"))
        assert record["time_s_min"] == pytest.approx(2 * message_time(self.N), rel=1e-9)
        assert record["time_s_max"] == pytest.approx(2 * message_time(self.N), rel=1e-9)

    @pytest.mark.parametrize(
        ("algorithm", "shape", "costs", "combines"),
        [
            ("tree", (2, 1), (1e-9, 0), 1),  # rank 0 combines once
            ("tree", (2, 2), (1e-9, 0), 2),  # row, then column: two combines on the way to (0,0)
            ("tree", (2, 2), (0, 1e-9), 0),  # tree never combines three vectors
            ("fence", (2, 2), (1e-9, 0), 1),  # (1,0) combines two vectors, then (0,0) three ...
            ("fence", (2, 2), (0, 1e-9), 1),  # ... once, with c3 (not twice c2)
        ],
    )
    def test_combining_cost_on_the_critical_path(
        self, run: Run, algorithm: str, shape: Shape, costs: tuple[float, float], combines: int
    ) -> None:
        # One block (S = N): the critical path holds exactly `combines` combinations of N elements.
        c2, c3 = costs
        (free,) = run("combine", shape, *combine_args(algorithm, shape, self.N, self.N, "--c2", "0", "--c3", "0"))
        (costly,) = run(
            "combine", shape, *combine_args(algorithm, shape, self.N, self.N, "--c2", str(c2), "--c3", str(c3))
        )
        added = combines * max(c2, c3) * self.N
        for key in ("time_s_min", "time_s_max"):
            assert costly[key] - free[key] == pytest.approx(added, rel=1e-9, abs=1e-15)
        if algorithm == "tree":  # one message per step, all between neighbours here
            assert free["time_s_min"] == pytest.approx(free["steps"] * message_time(self.N), rel=1e-9)

    @pytest.mark.parametrize("nbl", [None, 1.0], ids=["no-nbl", "nbl1"])
    @pytest.mark.parametrize("shape", [(4, 4), (5, 3)], ids=["4x4", "5x3"])
    @pytest.mark.parametrize("algorithm", ["snake", "fence"])
    def test_pipeline_follows_the_papers_timeline(
        self, run: Run, algorithm: str, shape: Shape, nbl: float | None
    ) -> None:
        # The Appendix's step tables, (number of steps, active links of the busiest node). The steps are loosely
        # synchronous: each costs one latency plus, behind a limiter of one link bandwidth, L transfers of S doubles.
        width, height = shape
        nodes, blocks, block = width * height, 10, self.N // 10
        if algorithm == "snake":
            timeline = [(1, 1), (nodes - 2, 2), (1, 3), (blocks - 3, 4), (1, 3), (nodes - 2, 2), (1, 1)]
        else:
            timeline = [(1, 1), (height - 1, 2), (width - 2, 3), (1, 4), (blocks - 3, 6), (1, 4), (width - 2, 3)]
            timeline += [(height - 1, 2), (1, 1)]
        args = combine_args(algorithm, shape, self.N, block, "--c2", "0", "--c3", "0", "-w", "0", "-i", "1")
        (record,) = run("combine", shape, *args, nbl=nbl)
        assert record["blocks"] == blocks
        assert record["steps"] == sum(n for n, _ in timeline) == expected_steps(algorithm, shape, blocks)
        transfer = message_time(block) - LINK_LAT
        expected = sum(n * (LINK_LAT + (links if nbl else 1) * transfer) for n, links in timeline)
        # ompi's barrier releases the ranks of a non-power-of-two count up to a few barrier messages apart.
        skew = 0 if nodes & (nodes - 1) == 0 else 3 * LINK_LAT
        assert expected * (1 - 1e-9) <= record["time_s_max"] <= expected * (1 + 1e-9) + skew

    def test_runs_are_deterministic(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        command = app_command(platforms, bin_dir, "combine", (4, 4), combine_args("fence", (4, 4), 10_000, 300))
        first, second = (run_smpirun(command, tmp_path, timeout=120, label="combine") for _ in range(2))
        assert first == second and first.count("\n") == 1


class TestTestjig:
    def test_one_line_per_case_links_outer(self, run: Run) -> None:
        records = run("nbl_testjig", (3, 3), "-L", "1", "-L", "2,4", "-s", "60,120", "-s", "300", "-i", "2")
        assert [list(r) for r in records] == [JIG_KEYS] * 9
        assert [(r["links"], r["doubles"]) for r in records] == [(L, s) for L in (1, 2, 4) for s in (60, 120, 300)]
        assert all(r["app"] == "nbl_testjig" and r["version"] == 1 and r["iterations"] == 2 for r in records)
        assert all(r["time_s"] > 0 for r in records)

    @pytest.mark.parametrize("nbl", [1.0, 2.0, 3.0, None], ids=["nbl1", "nbl2", "nbl3", "no-nbl"])
    def test_the_limiter_shows_in_the_jig(self, run: Run, nbl: float | None) -> None:
        # f(L) = T(L) / T(1) at a large S: max(1, L/k) with a limiter of k link bandwidths (k = 1: the paper's
        # nominal NBL model, f(L) = L), 1 without (every flow has its own link).
        size = 100_000
        records = run("nbl_testjig", (3, 3), "-s", str(size), "-i", "2", "-w", "1", nbl=nbl)
        time = {r["links"]: r["time_s"] for r in records}
        assert list(time) == [1, 2, 4, 6]
        assert time[1] == pytest.approx(message_time(size), rel=1e-6)
        for links in (2, 4, 6):
            assert time[links] / time[1] == pytest.approx(max(1.0, links / nbl) if nbl else 1.0, rel=0.05)

    def test_transit_traffic_spares_the_limiter(self) -> None:
        # The jig's neighbours 3 and 5 (and 1 and 7) talk through the centre's router, not through its limiter:
        # routers forward without the node processor. SimGrid's own TORUS limiter would be on those routes
        # (test_torus.py, test_simgrid_torus_limiter_charges_transit_nodes).
        model = mesh(3, 3, link_bw=LINK_BW, link_lat=LINK_LAT, nbl=1.0)
        assert model.route("host-3", "host-5") == ["host-3_nbl", "host-3_to_host-4", "host-4_to_host-5", "host-5_nbl"]
        assert "host-4_nbl" not in model.route("host-1", "host-7")


DELTA_BW = 8 / 1.54e-6  # the DELTA's beta: 1.54 us per double
ALPHA = 54e-6


class TestMessageOverhead:
    """alpha as SMPI software overhead (alpha/2 at each end): one message alpha + beta*S, not wire latency."""

    @pytest.fixture
    def delta_pair(self, tmp_path: Path) -> tuple[Path, Path]:
        model = mesh(2, 1, link_bw=DELTA_BW, link_lat=0.0)
        write_platform(model, tmp_path / "p.xml")
        write_hostfile(place_ranks(model, 2), tmp_path / "hosts")
        return tmp_path / "p.xml", tmp_path / "hosts"

    def test_pingpong_costs_alpha_plus_beta_s(self, delta_pair: tuple[Path, Path], bin_dir: Path, tmp_path: Path):
        doubles = [1, 60, 600, EAGER_LIMIT_BYTES // 8 - 1, EAGER_LIMIT_BYTES // 8]
        args = ["-s", ",".join(str(8 * d) for d in doubles), "-i", "2", "-w", "1"]
        command = smpirun_command(bin_dir / "pingpong", args, *delta_pair, 2, message_overhead_options(ALPHA))
        records = parse_records(run_smpirun(command, tmp_path, timeout=120, label="pingpong"), "pingpong")
        for record, count in zip(records, doubles, strict=True):
            transfer = (8 * count + SMPI_ENVELOPE_BYTES) / DELTA_BW
            # SMPI charges overheads to eager messages only (below its 64 KiB detached-send threshold).
            alpha = ALPHA if 8 * count < EAGER_LIMIT_BYTES else 0.0
            assert record["oneway_s_avg"] == pytest.approx(alpha + transfer, rel=1e-9), count

    def test_a_zero_byte_message_costs_alpha(self, delta_pair: tuple[Path, Path], bin_dir: Path, tmp_path: Path):
        """Every message pays alpha, empty ones too: a barrier is made of them. (SimGrid 4.1 skips a piecewise
        overhead 0:alpha/2:0 for size 0, which made barriers nearly free and moved the combine runs' start skew.)"""
        args = ["-s", "0,8", "-i", "2", "-w", "1"]
        command = smpirun_command(bin_dir / "pingpong", args, *delta_pair, 2, message_overhead_options(ALPHA))
        zero, eight = parse_records(run_smpirun(command, tmp_path, timeout=120, label="pingpong"), "pingpong")
        assert zero["oneway_s_avg"] == pytest.approx(ALPHA + SMPI_ENVELOPE_BYTES / DELTA_BW, rel=1e-9)
        assert eight["oneway_s_avg"] == pytest.approx(ALPHA + (8 + SMPI_ENVELOPE_BYTES) / DELTA_BW, rel=1e-9)

    def test_overhead_is_not_latency(self, delta_pair: tuple[Path, Path], bin_dir: Path, tmp_path: Path) -> None:
        # A latency would overlap across messages; an overhead adds up on the node that handles them: the centre of
        # the nominal jig exchanging with one neighbour (L = 2) pays alpha/2 for its send and alpha/2 for its
        # receive, in series with the transfers (2 x beta*S behind its limiter).
        jig = mesh(3, 3, link_bw=DELTA_BW, link_lat=0.0, nbl=1.0)
        write_platform(jig, tmp_path / "jig.xml")
        write_hostfile(place_ranks(jig, 9), tmp_path / "jig.hosts")
        args = ["-L", "1,2", "-s", "60,600", "-i", "2", "-w", "1"]
        options = message_overhead_options(ALPHA)
        command = smpirun_command(
            bin_dir / "nbl_testjig", args, tmp_path / "jig.xml", tmp_path / "jig.hosts", 9, options
        )
        records = parse_records(run_smpirun(command, tmp_path, timeout=120, label="jig"), "jig")
        for record in records:
            transfer = (8 * record["doubles"] + SMPI_ENVELOPE_BYTES) / DELTA_BW
            assert record["time_s"] == pytest.approx(ALPHA + record["links"] * transfer, rel=1e-6), record


class TestBadInput:
    @pytest.mark.parametrize(
        ("app", "shape", "args", "message"),
        [
            ("combine", (3, 3), ["-W", "3", "-H", "2"], "a 3 x 2 mesh has W*H = 6 nodes but there are 9 MPI ranks"),
            ("combine", (3, 3), ["-W", "3"], "the mesh shape is required: -W/--width W and -H/--height H"),
            ("combine", (3, 3), ["-W", "3", "-H", "3", "-n", "0"], "invalid -n value '0': value out of range"),
            ("combine", (3, 3), ["-W", "3", "-H", "3", "-S", "0"], "invalid -S value '0': value out of range"),
            ("combine", (3, 3), ["-W", "3", "-H", "3", "-a", "ring"], "invalid -a value 'ring': unknown name"),
            ("nbl_testjig", (4, 2), [], "needs exactly 9 MPI ranks (a 3 x 3 mesh with the centre at rank 4), got 8"),
            ("nbl_testjig", (3, 3), ["-L", "1,3"], "invalid --links value 3: L must be 1, 2, 4 or 6"),
            ("nbl_testjig", (3, 3), ["-s", "0"], "invalid -s value '0': value out of range"),
        ],
    )
    def test_bad_arguments(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, app: str, shape: Shape, args: list[str], message: str
    ) -> None:
        command = app_command(platforms, bin_dir, app, shape, args)
        assert_usage_error(command, tmp_path, app, message)


class TestUnderRealMpi:
    @pytest.mark.parametrize("algorithm", ["fence", "snake", "tree"])
    def test_verifies_with_mpiexec(self, real_mpi_bin: Path, algorithm: str) -> None:
        args = combine_args(algorithm, (3, 2), 100, 7, "--verify")
        done = mpiexec(real_mpi_bin / "combine", 6, *args)
        assert done.returncode == 0, done.stderr
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert list(record) == KEYS and record["verified"] is True and record["ranks"] == 6
        assert 0 < record["time_s_min"] <= record["time_s_avg"] <= record["time_s_max"]

    def test_testjig_with_mpiexec(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / "nbl_testjig", 9, "-s", "60", "-i", "2", "-w", "0")
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in done.stdout.splitlines()]
        assert [r["links"] for r in records] == [1, 2, 4, 6] and all(r["time_s"] > 0 for r in records)
