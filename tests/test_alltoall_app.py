"""The alltoall app (pairwise and MLFM all-to-all schedules) under smpirun and under MPICH.

Every smpirun here uses topolab's standard options on a crossbar with 1 GBps / 1 us host cables (2 us between two
hosts). A shape (n, l, m) is the MLFM allocation of n layers x l columns x m servers per leaf, n*l*m ranks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import crossbar
from generators import mlfm as mlfm_platform
from generators import place_ranks
from generators import write_hostfile
from generators import write_platform
from study_runner.batch.execute import parse_records
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import WrittenPlatform
from tests.conftest import assert_usage_error
from tests.conftest import mpiexec

ROUTE_LATENCY = 2e-6  # two 1 us cables between any two hosts of the crossbar
LINK_BW = 1e9
KEYS = [
    "app", "version", "algorithm", "ranks", "shape", "block_bytes", "phases", "warmup", "iterations",
    "time_s_min", "time_s_avg", "time_s_max", "throughput_mibs", "phase_end_s", "verified",
]  # fmt: skip

Shape = tuple[int, int, int]
Platforms = Callable[[int], tuple[Path, Path]]
Run = Callable[..., list[dict[str, Any]]]


def shape_args(shape: Shape | None) -> list[str]:
    return [] if shape is None else ["--shape", ",".join(map(str, shape))]


@pytest.fixture(scope="module")
def platforms(written_platform: WrittenPlatform) -> Platforms:
    """Crossbar platform and hostfile for a rank count."""
    return lambda ranks: written_platform(crossbar(ranks, link_bw=LINK_BW, link_lat=ROUTE_LATENCY / 2))


def alltoall_command(platforms: Platforms, bin_dir: Path, ranks: int, args: list[str]) -> list[str]:
    xml, hosts = platforms(ranks)
    return smpirun_command(bin_dir / "alltoall", args, xml, hosts, ranks)


@pytest.fixture
def alltoall(platforms: Platforms, bin_dir: Path, tmp_path: Path) -> Run:
    """Run the app under smpirun; return the JSON records it printed."""

    def run(ranks: int, *args: str) -> list[dict[str, Any]]:
        command = alltoall_command(platforms, bin_dir, ranks, list(args))
        return parse_records(run_smpirun(command, tmp_path, timeout=120, label="alltoall"), "alltoall")

    return run


def mlfm(*shapes: Shape) -> list[tuple[str, Shape, int]]:
    """Parameters (algorithm, shape, ranks) of MLFM runs on whole allocations."""
    return [("mlfm", shape, math.prod(shape)) for shape in shapes]


CASES = [*[("pairwise", None, ranks) for ranks in (1, 2, 5, 12, 24)], *mlfm((2, 3, 2), (2, 4, 3), (3, 4, 2), (1, 2, 1))]


class TestVerify:
    @pytest.mark.parametrize("size", [1000, 4097])
    @pytest.mark.parametrize(("algorithm", "shape", "ranks"), CASES)
    def test_every_block_arrives(
        self, alltoall: Run, algorithm: str, shape: Shape | None, ranks: int, size: int
    ) -> None:
        (record,) = alltoall(
            ranks, "-a", algorithm, *shape_args(shape), "-s", str(size), "-w", "1", "-i", "2", "--verify"
        )
        expected = {"app": "alltoall", "version": 1, "algorithm": algorithm, "ranks": ranks}
        expected |= {"shape": None if shape is None else list(shape), "block_bytes": size, "phases": ranks}
        expected |= {"warmup": 1, "iterations": 2}
        assert {k: record[k] for k in expected} == expected
        assert record["verified"] is True
        assert list(record) == KEYS

    @pytest.mark.parametrize(("algorithm", "shape", "ranks", "phases"), [("pairwise", None, 12, 5), *(
        (a, s, r, 4) for a, s, r in mlfm((2, 4, 3))), ("pairwise", None, 5, 1)])  # fmt: skip
    def test_the_first_phases_alone(
        self, alltoall: Run, algorithm: str, shape: Shape | None, ranks: int, phases: int
    ) -> None:
        """--phases K: only phases 0..K-1, every block of them verified, one phase end each; on the crossbar the
        phases of a permutation schedule end when they end in the whole all-to-all."""
        args = ["-a", algorithm, *shape_args(shape), "-s", "256K", "-i", "1"]
        (partial,) = alltoall(ranks, *args, "--phases", str(phases), "--verify")
        (whole,) = alltoall(ranks, *args)
        assert partial["verified"] is True and partial["phases"] == phases and whole["phases"] == ranks
        assert partial["phase_end_s"] == pytest.approx(whole["phase_end_s"][:phases], rel=1e-12)
        assert partial["throughput_mibs"] == pytest.approx(
            (phases - 1) * (256 << 10) / partial["time_s_max"] / 2**20 if phases > 1 else 0
        )

    def test_skipping_the_local_copy_changes_no_simulated_time(self, alltoall: Run) -> None:
        """--local-copy skip leaves out phase 0's memcpy, which SMPI does not time (no modelled computation):
        every simulated time is the same, bit for bit."""
        args = ["-a", "mlfm", "--shape", "2,3,2", "-s", "2M", "-i", "2", "-w", "1"]
        (real,) = alltoall(12, *args)
        (skipped,) = alltoall(12, *args, "--local-copy", "skip")
        assert skipped == real

    def test_pairwise_reports_a_given_shape(self, alltoall: Run) -> None:
        (record,) = alltoall(12, "--shape", "2,3,2", "-s", "1K", "--verify")
        assert record["algorithm"] == "pairwise" and record["shape"] == [2, 3, 2] and record["verified"] is True


class TestTiming:
    # 256 KiB blocks: above SMPI's 64 KiB eager limit, so each phase is one alpha-beta transfer each way.
    SIZE = 256 << 10
    PHASE = ROUTE_LATENCY + (SIZE + SMPI_ENVELOPE_BYTES) / LINK_BW

    @pytest.mark.parametrize(
        ("algorithm", "shape", "ranks"),
        [("pairwise", None, 8), ("pairwise", None, 12), *mlfm((2, 3, 2), (2, 4, 3))],
    )
    def test_congestion_free_phases_on_a_crossbar(
        self, alltoall: Run, algorithm: str, shape: Shape | None, ranks: int
    ) -> None:
        # Every phase of both schedules is a permutation, so on a crossbar no cable carries two flows.
        (record,) = alltoall(ranks, "-a", algorithm, *shape_args(shape), "-s", str(self.SIZE), "-w", "1", "-i", "2")
        assert list(record) == KEYS and record["verified"] is None
        # The last rank out of the barrier finds every partner ready: exactly N-1 phases. ompi's barrier releases
        # the others up to one barrier message (a route latency) earlier, which their phases may wait for.
        assert record["time_s_min"] == pytest.approx((ranks - 1) * self.PHASE, rel=1e-9)
        skew = record["time_s_max"] - record["time_s_min"]
        assert 0 <= skew <= 1.1 * ROUTE_LATENCY
        assert record["time_s_min"] <= record["time_s_avg"] <= record["time_s_max"]
        ends = record["phase_end_s"]
        assert len(ends) == ranks and ends[0] == 0
        assert all(
            p * self.PHASE * (1 - 1e-9) <= end <= (p * self.PHASE + skew) * (1 + 1e-9) for p, end in enumerate(ends)
        )
        assert ends[-1] == pytest.approx(record["time_s_max"], rel=1e-9) and ends == sorted(ends)
        assert record["throughput_mibs"] == pytest.approx((ranks - 1) * self.SIZE / record["time_s_max"] / 2**20)

    def test_power_of_two_ranks_leave_the_barrier_together(self, alltoall: Run) -> None:
        (record,) = alltoall(8, "-s", str(self.SIZE), "-i", "1")
        assert record["time_s_min"] == pytest.approx(record["time_s_max"], rel=1e-12)
        assert record["time_s_avg"] == pytest.approx(record["time_s_max"], rel=1e-12)

    def test_one_rank_only_copies(self, alltoall: Run) -> None:
        (record,) = alltoall(1, "-s", "1K")
        assert record["throughput_mibs"] == 0 and record["phase_end_s"] == [0] and record["time_s_max"] == 0

    def test_runs_are_deterministic(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        command = alltoall_command(platforms, bin_dir, 12, ["-a", "mlfm", "--shape", "2,3,2", "-s", "100K"])
        first, second = (run_smpirun(command, tmp_path, timeout=120, label="alltoall") for _ in range(2))
        assert first == second and first.count("\n") == 1


class TestBadInput:
    @pytest.mark.parametrize(
        ("ranks", "args", "message"),
        [
            (12, ["-a", "mlfm"], "-a mlfm needs the allocation shape: --shape n,l,m"),
            (18, ["-a", "mlfm", "--shape", "2,3,3"], "invalid --shape 2,3,3: mlfm needs 1 <= m <= l - 1"),
            (10, ["-a", "mlfm", "--shape", "2,3,2"], "--shape 2,3,2 has n*l*m = 12 servers but there are 10 MPI ranks"),
            (10, ["--shape", "2,3,2"], "--shape 2,3,2 has n*l*m = 12 servers but there are 10 MPI ranks"),
            (12, ["-a", "mlfm", "--shape", "2,3"], "invalid --shape value '2,3': expected n,l,m, three integers >= 1"),
            (12, ["-a", "mlfm", "--shape", "2,3,2,1"], "invalid --shape value '2,3,2,1': expected n,l,m"),
            (12, ["-a", "mlfm", "--shape", "a,b,c"], "invalid --shape value 'a,b,c': n must be an integer >= 1"),
            (12, ["-a", "mlfm", "--shape", "0,3,2"], "invalid --shape value '0,3,2': n must be an integer >= 1"),
            (12, ["-a", "mlfm", "--shape", "2,3,-2"], "invalid --shape value '2,3,-2': m must be an integer >= 1"),
            (12, ["-a", "alltoallv"], "invalid -a value 'alltoallv': unknown name (expected one of: pairwise, mlfm)"),
            (12, ["-s", "0"], "invalid --size value 0: the block size must be >= 1 byte"),
            (12, ["--size=2G"], "invalid --size value '2G': value out of range"),
            (12, ["-i", "0"], "invalid -i value '0': value out of range"),
            (12, ["--phases", "13"], "invalid --phases value 13: there are only 12 phases (one per rank)"),
            (12, ["--phases", "0"], "invalid --phases value '0': value out of range"),
            (
                12,
                ["--local-copy", "skip", "--verify"],
                "--verify needs the data: it cannot be combined with --local-copy skip",
            ),
            (
                12,
                ["--local-copy", "none"],
                "invalid --local-copy value 'none': unknown name (expected one of: real, skip)",
            ),
        ],
    )
    def test_bad_arguments(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, ranks: int, args: list[str], message: str
    ) -> None:
        # Not through run_smpirun, which keeps 8 lines of stderr.
        command = alltoall_command(platforms, bin_dir, ranks, args)
        assert_usage_error(command, tmp_path, "alltoall", message)


class TestUnderRealMpi:
    @pytest.mark.parametrize(
        ("ranks", "args"),
        [(4, ["-a", "pairwise", "-s", "1K"]), (6, ["-a", "mlfm", "--shape", "1,3,2", "-s", "4K"])],
    )
    def test_verifies_with_mpiexec(self, real_mpi_bin: Path, ranks: int, args: list[str]) -> None:
        done = mpiexec(real_mpi_bin / "alltoall", ranks, *args, "--verify")
        assert done.returncode == 0, done.stderr
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert record["verified"] is True and record["ranks"] == ranks and len(record["phase_end_s"]) == ranks
        assert 0 < record["time_s_min"] <= record["time_s_avg"] <= record["time_s_max"]

    def test_usage_error_prints_nothing_on_stdout(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / "alltoall", 4, "-a", "mlfm", "--shape", "1,2,1")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("alltoall: error: --shape 1,2,1 has n*l*m = 2 servers but there are 4 MPI ranks") == 1


@pytest.mark.parametrize("algorithm", ["pairwise", "mlfm"])
@pytest.mark.parametrize("shape", [(2, 3, 2), (2, 4, 3)], ids=["12", "24B"])
def test_verify_on_the_mlfm_testbed(bin_dir: Path, tmp_path: Path, algorithm: str, shape: Shape) -> None:
    """On the paper's 32-server MLFM testbed, ranks on the allocation's servers; mlfm runs at the link rate."""
    model = mlfm_platform(3, servers_per_leaf=(3, 3, 2), link_bw=LINK_BW, spine_bw=LINK_BW, link_lat=1e-7)
    ranks = math.prod(shape)
    write_platform(model, tmp_path / "testbed.xml")
    write_hostfile(place_ranks(model, ranks, "allocation:" + ",".join(map(str, shape))), tmp_path / "hosts")
    size = 256 * 1024  # above SMPI's eager limit: a rendezvous per message, as for the paper's sizes
    args = ["-a", algorithm, *shape_args(shape), "-s", str(size), "-w", "0", "-i", "1", "--verify"]
    command = smpirun_command(bin_dir / "alltoall", args, tmp_path / "testbed.xml", tmp_path / "hosts", ranks)
    (record,) = parse_records(run_smpirun(command, tmp_path, timeout=120, label="alltoall"), "alltoall")
    assert record["verified"] is True
    congestion_free = (ranks - 1) * (size + SMPI_ENVELOPE_BYTES) / LINK_BW
    if algorithm == "mlfm":  # every phase at the link rate: only route latencies on top
        assert congestion_free < record["time_s_max"] < congestion_free * 1.01
    else:  # pairwise shares cables in some phases
        assert record["time_s_max"] > congestion_free * 1.2
