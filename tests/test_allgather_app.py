"""The allgather app (Sugiyama et al.'s Ring and Bruck, Fig. 1 and 2) and memcpy_bench under smpirun and MPICH.

Every smpirun here uses topolab's standard options on a crossbar from generators.topologies.crossbar (rank r on host-r):
a message from host-i to host-j crosses host-i_to_xbar then xbar_to_host-j, one full-duplex cable per host, so in every
step of both algorithms (each rank sends one message and receives one, from distinct partners) every cable direction
carries exactly one message: no contention, a message of S bytes takes latency + (S + envelope) / bandwidth.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from generators import crossbar
from generators.schedules import allgather_steps
from study_runner.batch.execute import parse_records
from study_runner.simulation.smpi import EAGER_LIMIT_BYTES
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import WrittenPlatform
from tests.conftest import mpiexec

APP = "allgather"
BENCH = "memcpy_bench"
LINK_BW = 1e9
LINK_LAT = 1e-6
KEYS = [
    "app", "version", "algorithm", "ranks", "bytes", "steps", "iterations", "time_s_min", "time_s_avg", "time_s_max",
    "verified",
]  # fmt: skip
BENCH_KEYS = ["app", "version", "bytes", "iterations", "time_s", "rate_Bps"]
ALGORITHMS = ["ring", "bruck"]
# The dissemination barrier releases every rank at the same instant, so the steps start together (the paper's
# assumption) and per-rank times are exact; see TestTiming.test_default_barrier_releases_ranks_apart.
SYNC_BARRIER = ("--cfg=smpi/barrier:ompi_bruck",)

Platforms = Callable[..., tuple[Path, Path]]


@pytest.fixture(params=ALGORITHMS)
def algorithm(request: pytest.FixtureRequest) -> str:
    """Each algorithm of the app, for a test that asks for ``algorithm``."""
    return request.param


# ---------------------------------------------------------------------------------------------------------------------
# The algorithms, in Python: which block goes where, the message sizes and the memory copies.


def ring_reference(ranks: int) -> list[list[int | None]]:
    """Every rank's result buffer after Fig. 1 (the owner of each block; None: never arrived), moving blocks along
    ``allgather_steps``: in step i every rank passes on the block it received in step i - 1 (its own first)."""
    buffers: list[list[int | None]] = [[r if j == r else None for j in range(ranks)] for r in range(ranks)]
    for i, step in enumerate(allgather_steps("ring", ranks)):
        sent = {dst: ((src - i) % ranks, buffers[src][(src - i) % ranks]) for src, dst, _ in step}
        for r, (slot, owner) in sent.items():
            assert owner is not None  # the block received in the previous step
            buffers[r][slot] = owner
    return buffers


def bruck_reference(ranks: int) -> tuple[list[list[int | None]], dict[int, list[int]]]:
    """Every rank's result buffer after Fig. 2 as the app runs it (messages of ``allgather_steps``: the first
    ``count`` blocks land at the receiver's block 2^i), and each rank's memory copies (in blocks)."""
    work: list[list[int | None]] = [[r] + [None] * (ranks - 1) for r in range(ranks)]
    for i, step in enumerate(allgather_steps("bruck", ranks)):
        sent = {dst: (work[src][:count], count) for src, dst, count in step}
        for r, (blocks, count) in sent.items():
            work[r][1 << i : (1 << i) + count] = blocks
    copies: dict[int, list[int]] = {}
    for r, buffer in enumerate(work):
        assert buffer == [(r + j) % ranks for j in range(ranks)]  # block j: rank r + j
        copies[r] = []
        if r > 0:
            shift = buffer[: ranks - r]  # 1. (P - r) blocks to the shift buffer
            buffer[:r] = buffer[ranks - r :]  # 2. r blocks to the front
            buffer[r:] = shift  # 3. the shift buffer back
            copies[r] = [ranks - r, r, ranks - r]
    return work, copies


class TestReference:
    @pytest.mark.parametrize("ranks", range(2, 33))
    def test_both_algorithms_gather_in_rank_order(self, ranks: int) -> None:
        everything = [list(range(ranks))] * ranks
        assert ring_reference(ranks) == everything
        work, _ = bruck_reference(ranks)
        assert work == everything
        counts = [step[0][2] for step in allgather_steps("bruck", ranks)]
        assert all(c == 1 << i for i, c in enumerate(counts[:-1]))  # only the last step may send fewer than 2^i

    @pytest.mark.parametrize("ranks", range(2, 33))
    def test_bruck_copies_are_the_papers(self, ranks: int) -> None:
        # Fig. 2: memcpy((P-rank)*M); memcpy(rank*M); memcpy((P-rank)*M) on every rank but 0. Rank 1 copies the
        # most, M + 2 (P-1) M: the memory part of eq. (2), (L + alpha M) + 2 (L + alpha (P-1) M).
        _, copies = bruck_reference(ranks)
        assert copies[0] == []
        assert all(copies[r] == [ranks - r, r, ranks - r] for r in range(1, ranks))
        largest = max(range(ranks), key=lambda r: sum(copies[r]))
        assert largest == 1 and sorted(copies[1]) == [1, ranks - 1, ranks - 1]


# ---------------------------------------------------------------------------------------------------------------------
# Running the apps.


@pytest.fixture(scope="module")
def platforms(written_platform: WrittenPlatform) -> Platforms:
    """Crossbar platform and hostfile for a host count (and cable latency)."""
    return lambda ranks, link_lat=LINK_LAT: written_platform(crossbar(ranks, link_bw=LINK_BW, link_lat=link_lat))


def app_command(
    platforms: Platforms,
    bin_dir: Path,
    ranks: int,
    args: Sequence[str],
    app: str = APP,
    link_lat: float = LINK_LAT,
    options: Sequence[str] = (),
) -> list[str]:
    xml, hosts = platforms(ranks, link_lat)
    return smpirun_command(bin_dir / app, list(args), xml, hosts, ranks, options)


def run_app(
    platforms: Platforms, bin_dir: Path, tmp_path: Path, ranks: int, *args: str, app: str = APP, **kwargs: Any
) -> str:
    """Run an app on a crossbar of ``ranks`` hosts under smpirun; return its stdout."""
    return run_smpirun(app_command(platforms, bin_dir, ranks, args, app, **kwargs), tmp_path, timeout=120, label=app)


def run_records(
    platforms: Platforms, bin_dir: Path, tmp_path: Path, ranks: int, *args: str, app: str = APP, **kwargs: Any
) -> list[dict[str, Any]]:
    return parse_records(run_app(platforms, bin_dir, tmp_path, ranks, *args, app=app, **kwargs), app)


def sized_records(
    platforms: Platforms,
    bin_dir: Path,
    tmp_path: Path,
    ranks: int,
    algorithm: str,
    sizes: Sequence[int],
    *args: str,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """The records of ``algorithm`` on ``ranks`` ranks, one per message size of ``sizes``, in order."""
    sized = ("-a", algorithm, "-s", ",".join(map(str, sizes)), *args)
    return run_records(platforms, bin_dir, tmp_path, ranks, *sized, **kwargs)


def expected_steps(algorithm: str, ranks: int) -> int:
    return len(allgather_steps(algorithm, ranks))


VERIFY_RANKS = [2, 3, 4, 5, 6, 7, 8, 12, 16, 24]
VERIFY_SIZES = [1, 1000, 65536 + 3]  # eager and rendezvous messages, blocks that are not multiples of 8 bytes


class TestVerify:
    @pytest.mark.parametrize("ranks", VERIFY_RANKS)
    def test_every_rank_holds_every_block_in_rank_order(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, algorithm: str, ranks: int
    ) -> None:
        records = sized_records(platforms, bin_dir, tmp_path, ranks, algorithm, VERIFY_SIZES, "-i", "2", "--verify")
        assert [list(r) for r in records] == [KEYS] * len(VERIFY_SIZES)
        for record, size in zip(records, VERIFY_SIZES, strict=True):
            expected = {"app": APP, "version": 1, "algorithm": algorithm, "ranks": ranks, "bytes": size}
            expected |= {"steps": expected_steps(algorithm, ranks), "iterations": 2, "verified": True}
            assert {k: record[k] for k in expected} == expected
            assert 0 < record["time_s_min"] <= record["time_s_avg"] <= record["time_s_max"]

    def test_the_check_catches_wrong_data(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, algorithm: str
    ) -> None:
        # With SMPI's shared malloc every result buffer is one folded mapping: the blocks cannot all be right.
        args = ["-a", algorithm, "-s", "64K", "-i", "1", "--verify"]
        options = ("--cfg=smpi/auto-shared-malloc-thresh:1024",)
        done = subprocess.run(
            app_command(platforms, bin_dir, 4, args, options=options),
            cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        # smpirun writes its own failure messages on stderr (SimGrid patch 0009): stdout is the app's.
        (record,) = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert record["verified"] is False
        assert f"{APP}: error: verification failed: " in done.stderr and " wrong bytes" in done.stderr

    def test_without_verify_the_field_is_null(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        (record,) = run_records(platforms, bin_dir, tmp_path, 3, "-a", "bruck")
        assert list(record) == KEYS and record["verified"] is None
        assert record["bytes"] == 1024 and record["iterations"] == 3  # the defaults


# ---------------------------------------------------------------------------------------------------------------------
# Timing: cables of latency 0, so a message of S bytes alone on its cables takes exactly (S + envelope) / bandwidth.


def transfer(nbytes: int) -> float:
    return (nbytes + SMPI_ENVELOPE_BYTES) / LINK_BW


def ring_time(ranks: int, size: int) -> float:
    """P-1 steps of one block each."""
    return (ranks - 1) * transfer(size)


def bruck_time(ranks: int, size: int) -> float:
    """ceil(log2 P) steps of min(2^i, P - 2^i) blocks, one message each."""
    return sum(transfer(step[0][2] * size) for step in allgather_steps("bruck", ranks))


def copy_time(ranks: int, rank: int, size: int, rate: float, latency: float) -> float:
    """Rank ``rank``'s modelled copies after its last Bruck step: none on rank 0, else (P-r) M, r M, (P-r) M bytes."""
    _, copies = bruck_reference(ranks)
    return sum(latency + blocks * size / rate for blocks in copies[rank])


TIMING_RANKS = [2, 3, 5, 8, 12]
TIMING_SIZES = [EAGER_LIMIT_BYTES, 3 * EAGER_LIMIT_BYTES + 5]  # every message rendezvous


class TestTiming:
    @pytest.mark.parametrize("ranks", TIMING_RANKS)
    def test_steps_follow_the_message_sizes(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, algorithm: str, ranks: int
    ) -> None:
        # Eq. (3) and the communication part of eq. (2) without collisions: every rank ends every step together.
        records = sized_records(platforms, bin_dir, tmp_path, ranks, algorithm, TIMING_SIZES, "-i", "2", "-w", "1",
                                link_lat=0.0, options=SYNC_BARRIER)  # fmt: skip
        for record, size in zip(records, TIMING_SIZES, strict=True):
            expected = ring_time(ranks, size) if algorithm == "ring" else bruck_time(ranks, size)
            for key in ("time_s_min", "time_s_avg", "time_s_max"):
                assert record[key] == pytest.approx(expected, rel=1e-6), (key, size)

    @pytest.mark.parametrize("latency", [0.0, 2e-6])
    @pytest.mark.parametrize("ranks", [2, 3, 5, 8, 12, 24])
    def test_bruck_adds_the_modelled_copies(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, ranks: int, latency: float
    ) -> None:
        # After the last step rank r >= 1 copies (P-r + r + P-r) M bytes in three copies, rank 0 none: rank r's
        # iteration takes bruck_time + 3 L + (2P - r) M / R. The slowest is rank 1 (eq. (2): 3 L + (2P - 1) M / R),
        # the fastest rank 0.
        size, rate = EAGER_LIMIT_BYTES, 2e9
        args = ["-a", "bruck", "-s", str(size), "-i", "2", "--memcpy-rate", str(rate)]
        args += ["--memcpy-latency", str(latency)]
        (record,) = run_records(platforms, bin_dir, tmp_path, ranks, *args, link_lat=0.0, options=SYNC_BARRIER)
        comm = bruck_time(ranks, size)
        per_rank = [comm + copy_time(ranks, r, size, rate, latency) for r in range(ranks)]
        assert max(per_rank) == per_rank[1] == pytest.approx(comm + 3 * latency + (2 * ranks - 1) * size / rate)
        assert record["time_s_max"] == pytest.approx(per_rank[1], rel=1e-6)
        assert record["time_s_min"] == pytest.approx(per_rank[0], rel=1e-6)
        assert record["time_s_avg"] == pytest.approx(sum(per_rank) / ranks, rel=1e-6)

    def test_ring_copies_nothing(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        args = ["-a", "ring", "-s", "64K", "-i", "1", "--memcpy-rate", "1e9", "--memcpy-latency", "1e-3"]
        (record,) = run_records(platforms, bin_dir, tmp_path, 5, *args, link_lat=0.0, options=SYNC_BARRIER)
        assert record["time_s_max"] == pytest.approx(ring_time(5, 65536), rel=1e-6)

    @pytest.mark.parametrize("ranks", [5, 7, 12])
    def test_default_barrier_releases_ranks_apart(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, algorithm: str, ranks: int
    ) -> None:
        # Why the timing tests select the dissemination barrier: with the ompi selector's own barrier, ranks of a count
        # that is no power of two leave it a few barrier messages (envelope only) apart. The last one out measures the
        # exact time, the first one out that plus its head start.
        size = EAGER_LIMIT_BYTES
        (record,) = run_records(
            platforms, bin_dir, tmp_path, ranks, "-a", algorithm, "-s", str(size), "-i", "2", link_lat=0.0
        )
        expected = ring_time(ranks, size) if algorithm == "ring" else bruck_time(ranks, size)
        assert record["time_s_min"] == pytest.approx(expected, rel=1e-6)
        head_start = record["time_s_max"] - expected
        assert 0 < head_start <= (ranks - 1) * transfer(0) * (1 + 1e-6)

    def test_runs_are_deterministic(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        args = ["-a", "bruck", "-s", "1000,65539", "--memcpy-rate", "3e9", "--memcpy-latency", "1e-7"]
        first, second = (run_app(platforms, bin_dir, tmp_path, 6, *args) for _ in range(2))
        assert first == second and first.count("\n") == 2


# ---------------------------------------------------------------------------------------------------------------------
# memcpy_bench under smpirun: computation is not simulated (topolab's standard options), so only the output's shape.


class TestMemcpyBench:
    @pytest.mark.parametrize("ranks", [1, 2])
    def test_one_line_per_size(self, platforms: Platforms, bin_dir: Path, tmp_path: Path, ranks: int) -> None:
        records = run_records(platforms, bin_dir, tmp_path, ranks, "-s", "1,1K,1M", "-i", "5", app=BENCH)
        assert [list(r) for r in records] == [BENCH_KEYS] * 3
        assert [r["bytes"] for r in records] == [1, 1024, 1 << 20]
        for record in records:
            assert record["app"] == BENCH and record["version"] == 1 and record["iterations"] == 5
            assert isinstance(record["time_s"], float | int) and record["time_s"] >= 0
            # rate_Bps = bytes / time_s, null when the copies took no (simulated) time.
            if record["time_s"] > 0:
                assert record["rate_Bps"] == pytest.approx(record["bytes"] / record["time_s"])
            else:
                assert record["rate_Bps"] is None


# ---------------------------------------------------------------------------------------------------------------------
# Usage and bad input.


class TestBadInput:
    @pytest.mark.parametrize(
        ("app", "ranks", "args", "message"),
        [
            (APP, 1, ["-a", "ring"], "needs at least 2 MPI ranks (got 1)"),
            (APP, 1, ["-a", "bruck"], "needs at least 2 MPI ranks (got 1)"),
            (APP, 4, [], "the algorithm is required: -a/--algorithm ring|bruck"),
            (APP, 4, ["-a", "tree"], "invalid -a value 'tree': unknown name (expected one of: ring, bruck)"),
            (APP, 4, ["-a", "ring", "-s", "0"], "invalid -s/--sizes value 0: a block needs at least 1 byte"),
            (APP, 4, ["-a", "ring", "-s", "1K,0"], "invalid -s/--sizes value 0: a block needs at least 1 byte"),
            (APP, 4, ["-a", "ring", "-i", "0"], "invalid -i value '0': value out of range"),
            (APP, 4, ["-a", "ring", "-w", "-1"], "invalid -w value '-1': invalid syntax"),
            (APP, 4, ["-a", "ring", "--memcpy-rate", "-1"], "invalid --memcpy-rate value '-1': value out of range"),
            (APP, 4, ["-a", "bruck", "--memcpy-latency", "1e-6"], "--memcpy-latency 1e-06 needs --memcpy-rate > 0"),
            (BENCH, 1, ["-s", "0"], "invalid -s/--sizes value 0: a copy needs at least 1 byte"),
            (BENCH, 1, ["-i", "0"], "invalid -i value '0': value out of range"),
            (BENCH, 1, ["--cache", "x"], "invalid --cache value 'x': invalid syntax"),
        ],
    )
    def test_bad_arguments(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, app: str, ranks: int, args: list[str], message: str
    ) -> None:
        # The app must print no JSON (smpirun's own failure messages go to stderr: SimGrid patch 0009).
        done = subprocess.run(
            app_command(platforms, bin_dir, ranks, args, app),
            cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert not any(line.startswith("{") for line in done.stdout.splitlines())
        errors = [line for line in done.stderr.splitlines() if line.startswith(f"{app}:")]
        assert len(errors) == 1 and errors[0].startswith(f"{app}: error: {message}"), done.stderr

    def test_help(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        out = run_app(platforms, bin_dir, tmp_path, 2, "-h")
        assert out.startswith(f"usage: {APP} [-a ALGORITHM] [-s SIZES]") and "Sugiyama" in out
        assert "default: 1K" in out and "--memcpy-rate BYTES_PER_S" in out
        bench = run_app(platforms, bin_dir, tmp_path, 1, "-h", app=BENCH)
        assert bench.startswith(f"usage: {BENCH} [-s SIZES]") and "default: 32M" in bench
        assert "under SMPI with topolab's standard options computation is not simulated" in " ".join(bench.split())


# ---------------------------------------------------------------------------------------------------------------------
# A real MPI.


class TestUnderRealMpi:
    def test_verifies_with_mpiexec(self, real_mpi_bin: Path, algorithm: str) -> None:
        args = ["-a", algorithm, "-s", "1,1000,65539", "-i", "2", "--verify", "--memcpy-rate", "1e9"]
        done = mpiexec(real_mpi_bin / APP, 5, *args)
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in done.stdout.splitlines()]
        assert [list(r) for r in records] == [KEYS] * 3
        assert [r["bytes"] for r in records] == [1, 1000, 65539]
        for record in records:
            assert record["verified"] is True and record["ranks"] == 5
            assert record["steps"] == expected_steps(algorithm, 5)
            assert 0 < record["time_s_min"] <= record["time_s_avg"] <= record["time_s_max"]

    def test_one_rank_is_refused_with_mpiexec(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / APP, 1, "-a", "ring")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.splitlines()[0] == f"{APP}: error: needs at least 2 MPI ranks (got 1)"

    def test_memcpy_bench_measures_a_rate(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / BENCH, 1, "-s", "1K,1M", "-i", "20")
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in done.stdout.splitlines()]
        assert [list(r) for r in records] == [BENCH_KEYS] * 2
        assert [r["bytes"] for r in records] == [1024, 1 << 20]
        for record in records:
            assert record["time_s"] > 0 and record["rate_Bps"] > 0
            assert record["rate_Bps"] == pytest.approx(record["bytes"] / record["time_s"])
