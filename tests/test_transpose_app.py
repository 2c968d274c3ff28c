"""The transpose app (the Three Quads paper's parallel matrix transpose) under smpirun and under MPICH.

q = 4 means 64 ranks and an 8 x 8 grid of blocks (s = 2); q = 1 is the one-rank degenerate case. Every smpirun here
uses topolab's standard options on a crossbar with 1 GBps / 1 us host cables (2 us between two hosts).
"""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import crossbar
from generators.schedules import transpose_steps
from study_runner.batch.execute import parse_records
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import WrittenPlatform
from tests.conftest import mpiexec

Q = 4
S = 2
SIDE = S * Q  # blocks per side of the matrix at q = 4
RANKS = Q**3
ROUTE_LATENCY = 2e-6  # two 1 us cables between any two hosts of the crossbar
LINK_BW = 1e9
SIDE_OF = {1: 1, RANKS: SIDE}  # blocks per side of the matrix for a rank count

PER_RANK_KEYS = [
    "rank", "block_i", "block_j", "init_s", "transpose_s", "step1_s", "wait_s", "step2_s", "total_s",
    "step1_partner", "step2_partner",
]  # fmt: skip

Run = Callable[..., tuple[list[dict[str, Any]], dict[str, Any]]]
UsageError = Callable[[int, list[str], str], None]


def paper_rank(i: int, j: int) -> int:
    """The paper's default placement for 64 nodes (section 4.1.1): the rank holding block M_ij."""
    return (i // 4) * 32 + (i % 4) * 4 + (j // 4) * 16 + (j % 4)


def coordinates(rank: int) -> tuple[int, int, int]:
    """(z, y, x) of a rank of the q = 4 cube: rank = z*16 + y*4 + x."""
    return rank // (Q * Q), rank // Q % Q, rank % Q


@pytest.fixture(scope="module")
def platforms(written_platform: WrittenPlatform) -> dict[int, tuple[Path, Path]]:
    """Crossbar platform and hostfile for 1, 8 and 64 ranks."""
    return {n: written_platform(crossbar(n, link_bw=LINK_BW, link_lat=ROUTE_LATENCY / 2)) for n in (1, 8, RANKS)}


@pytest.fixture
def transpose(platforms: dict[int, tuple[Path, Path]], bin_dir: Path, tmp_path: Path) -> Run:
    """Run the app under smpirun; return (per-rank records, summary record)."""

    def run(ranks: int, *args: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        xml, hosts = platforms[ranks]
        command = smpirun_command(bin_dir / "transpose", list(args), xml, hosts, ranks)
        records = parse_records(run_smpirun(command, tmp_path, timeout=120, label="transpose"), "transpose")
        *per_rank, summary = records
        assert summary.get("summary") is True
        assert [r["rank"] for r in per_rank] == list(range(ranks))
        return per_rank, summary

    return run


def holders(per_rank: list[dict[str, Any]]) -> dict[tuple[int, int], int]:
    """Block (i, j) -> the rank holding it, from the per-rank lines."""
    return {(r["block_i"], r["block_j"]): r["rank"] for r in per_rank}


class TestVerify:
    @pytest.mark.parametrize("duplex", ["half", "full"])
    @pytest.mark.parametrize("algorithm", ["two-step", "direct"])
    @pytest.mark.parametrize("ranks", [RANKS, 1])
    def test_result_is_the_transpose(self, transpose: Run, ranks: int, algorithm: str, duplex: str) -> None:
        per_rank, summary = transpose(ranks, "-a", algorithm, "-d", duplex, "-n", "4", "--verify")
        side = SIDE_OF[ranks]
        expected = {"app": "transpose", "version": 1, "algorithm": algorithm, "duplex": duplex, "block": 4}
        expected |= {"q": Q if ranks == RANKS else 1, "ranks": ranks, "warmup": 0, "iterations": 1}
        assert summary == expected | {"summary": True, "elapsed_s": summary["elapsed_s"], "verified": True}
        assert all({k: r[k] for k in expected} == expected for r in per_rank)
        assert summary["elapsed_s"] == max(r["total_s"] for r in per_rank)
        assert sorted(holders(per_rank)) == [(i, j) for i in range(side) for j in range(side)]
        assert list(per_rank[0]) == [*expected, *PER_RANK_KEYS]
        assert list(summary) == ["app", "version", "summary", *list(expected)[2:], "elapsed_s", "verified"]

    def test_odd_block_size_verifies(self, transpose: Run) -> None:
        _, summary = transpose(RANKS, "-n", "7", "--verify")
        assert summary["verified"] is True

    def test_random_permutation_verifies(self, transpose: Run, tmp_path: Path) -> None:
        ranks = list(range(RANKS))
        random.Random(2018).shuffle(ranks)
        rows = [" ".join(map(str, ranks[k : k + SIDE])) for k in range(0, RANKS, SIDE)]
        (tmp_path / "perm.txt").write_text("\n".join(rows) + "\n")
        for algorithm in ("two-step", "direct"):
            per_rank, summary = transpose(RANKS, "-a", algorithm, "-n", "4", "--assignment", "perm.txt", "--verify")
            assert summary["verified"] is True
            assert all(ranks[r["block_i"] * SIDE + r["block_j"]] == r["rank"] for r in per_rank)

    def test_without_verify_verified_is_null(self, transpose: Run) -> None:
        _, summary = transpose(1, "-n", "4")
        assert "verified" in summary and summary["verified"] is None


class TestPaperStructure:
    def test_default_assignment_is_the_papers_formula(self, transpose: Run) -> None:
        per_rank, _ = transpose(RANKS, "-n", "4")
        assert all(paper_rank(r["block_i"], r["block_j"]) == r["rank"] for r in per_rank)

    def test_two_step_partners_keep_the_papers_claims(self, transpose: Run) -> None:
        # The partners themselves are generators.schedules.transpose_steps (test_partners_are_the_analysed_schedule).
        per_rank, _ = transpose(RANKS, "-a", "two-step", "-n", "4")
        for r in per_rank:
            # The paper's congestion-free claim: step 1 stays inside one SW-Z switch (same z), and a step-2 pair
            # shares x and y (one SW-X and one SW-Y switch).
            me = coordinates(r["rank"])
            if r["step1_partner"] >= 0:
                assert coordinates(r["step1_partner"])[0] == me[0]
            if r["step2_partner"] >= 0:
                assert coordinates(r["step2_partner"])[1:] == me[1:]
        for step in ("step1_partner", "step2_partner"):  # every exchange is a pair
            assert all(per_rank[r[step]][step] == r["rank"] for r in per_rank if r[step] >= 0)
        # The paper's four groups of nodes: no communication, step 1 only, step 2 only, both.
        groups = [(r["step1_partner"] >= 0, r["step2_partner"] >= 0) for r in per_rank]
        assert [groups.count(g) for g in [(False, False), (True, False), (False, True), (True, True)]] == [8, 24, 8, 24]

    @pytest.mark.parametrize("algorithm", ["two-step", "direct"])
    def test_partners_are_the_analysed_schedule(self, transpose: Run, algorithm: str) -> None:
        # The static link-load analysis walks generators.schedules; the app must do exactly that.
        per_rank, _ = transpose(RANKS, "-a", algorithm, "-n", "4")
        for number, step in enumerate(transpose_steps(Q, algorithm), 1):
            done = {(r["rank"], r[f"step{number}_partner"]) for r in per_rank if r[f"step{number}_partner"] >= 0}
            assert done == set(step)

    def test_direct_partners_hold_the_mirrored_block(self, transpose: Run) -> None:
        per_rank, _ = transpose(RANKS, "-a", "direct", "-n", "4")
        holder = holders(per_rank)
        for r in per_rank:
            i, j = r["block_i"], r["block_j"]
            assert r["step1_partner"] == (holder[j, i] if i != j else -1)
            assert r["step2_partner"] == -1 and r["wait_s"] == 0 and r["step2_s"] == 0

    @pytest.mark.parametrize(("duplex", "directions"), [("full", 1), ("half", 2)])
    def test_swap_time_is_alpha_beta(self, transpose: Run, duplex: str, directions: int) -> None:
        # Full duplex: both directions at once on the two directed cables; half duplex: one after the other.
        # 128 KiB blocks: above SMPI's 64 KiB eager limit, so a blocking MPI_Send lasts the whole transfer.
        per_rank, _ = transpose(RANKS, "-a", "direct", "-d", duplex, "-n", "128")
        one_way = ROUTE_LATENCY + (128 * 128 * 8 + SMPI_ENVELOPE_BYTES) / LINK_BW
        for r in per_rank:
            swapped = r["step1_partner"] >= 0
            assert r["step1_s"] == pytest.approx(directions * one_way if swapped else 0, rel=1e-9, abs=1e-15)

    def test_repeated_transposes_report_each_phase_mean(self, transpose: Run) -> None:
        # Identical transposes in a deterministic simulation: the mean over 3 timed ones (after a warm-up) is
        # one transpose's time, and every one of them verifies.
        once, _ = transpose(RANKS, "-a", "two-step", "-n", "32")
        repeated, summary = transpose(RANKS, "-a", "two-step", "-n", "32", "-w", "1", "-i", "3", "--verify")
        assert summary["warmup"] == 1 and summary["iterations"] == 3 and summary["verified"] is True
        for a, b in zip(once, repeated, strict=True):
            for key in ("init_s", "transpose_s", "step1_s", "wait_s", "step2_s", "total_s"):
                assert b[key] == pytest.approx(a[key], rel=1e-9, abs=1e-15)

    def test_transpose_cost_is_modelled(self, transpose: Run) -> None:
        per_rank, _ = transpose(1, "-n", "100", "--local-transpose", "skip", "--transpose-cost", "1e-6")
        assert per_rank[0]["transpose_s"] == pytest.approx(100 * 100 * 1e-6, rel=1e-12)


def write(path: Path, values: list[int]) -> str:
    path.write_text(" ".join(map(str, values)) + "\n")
    return str(path)


@pytest.fixture
def usage_error(platforms: dict[int, tuple[Path, Path]], bin_dir: Path, tmp_path: Path) -> UsageError:
    """Assert that a run fails with exit status 2, no JSON and one error line starting with ``message``."""

    def check(ranks: int, args: list[str], message: str) -> None:
        # Not through run_smpirun: its error keeps 8 lines of stderr, fewer than the 64 ranks' exit warnings.
        xml, hosts = platforms[ranks]
        command = smpirun_command(bin_dir / "transpose", args, xml, hosts, ranks)
        done = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 2, done.stderr
        assert not any(line.startswith("{") for line in done.stdout.splitlines())  # no result printed
        errors = [line for line in done.stderr.splitlines() if line.startswith("transpose:")]
        assert len(errors) == 1 and errors[0].startswith(message), done.stderr

    return check


class TestBadInput:
    @pytest.mark.parametrize(
        ("ranks", "args", "message"),
        [
            (8, [], "transpose: error: needs P = q^3 MPI ranks with q a perfect square, i.e. 1, 64, 729, 4096"),
            (RANKS, ["-n", "0"], "transpose: error: invalid -n value '0': value out of range"),
            (RANKS, ["-i", "0"], "transpose: error: invalid -i value '0': value out of range"),
            (RANKS, ["--warmup=-1"], "transpose: error: invalid --warmup value '-1'"),
            (RANKS, ["--block=x"], "transpose: error: invalid --block value 'x': invalid syntax"),
            (RANKS, ["--verify", "--local-transpose", "skip"], "transpose: error: --verify needs the data"),
            (RANKS, ["-a", "three-step"], "transpose: error: invalid -a value 'three-step': unknown name"),
            (RANKS, ["--verify=yes"], "transpose: error: option --verify takes no value"),
            (RANKS, ["--assignment"], "transpose: error: option --assignment needs a value"),
        ],
    )
    def test_bad_arguments(self, usage_error: UsageError, ranks: int, args: list[str], message: str) -> None:
        usage_error(ranks, args, message)

    def test_assignment_with_a_duplicate(self, usage_error: UsageError, tmp_path: Path) -> None:
        values = list(range(RANKS))
        values[5] = 9
        path = write(tmp_path / "dup.txt", values)
        message = (
            f"transpose: error: assignment file '{path}' is not a permutation of 0..63: rank 9 holds both "
            "block (0, 5) and block (1, 1), and rank 5 holds none"
        )
        usage_error(RANKS, ["--assignment", path], message)

    @pytest.mark.parametrize("count", [RANKS - 1, RANKS + 1])
    def test_assignment_with_the_wrong_count(self, usage_error: UsageError, tmp_path: Path, count: int) -> None:
        path = write(tmp_path / "count.txt", [k % RANKS for k in range(count)])
        usage_error(
            RANKS,
            ["--assignment", path],
            f"transpose: error: assignment file '{path}' has {count} entries, expected 64",
        )

    def test_assignment_out_of_range(self, usage_error: UsageError, tmp_path: Path) -> None:
        path = write(tmp_path / "range.txt", [*range(RANKS - 1), RANKS])
        message = f"transpose: error: assignment file '{path}': entry 64 (block (7, 7)) is rank 64, outside 0..63"
        usage_error(RANKS, ["--assignment", path], message)


@pytest.fixture(scope="module")
def real_mpi_transpose(real_mpi_bin: Path) -> Path:
    """The transpose app built with MPICH's mpicc (conftest's real_mpi_bin)."""
    return real_mpi_bin / "transpose"


class TestUnderRealMpi:
    @pytest.mark.parametrize("algorithm", ["two-step", "direct"])
    def test_one_rank_verifies(self, real_mpi_transpose: Path, algorithm: str) -> None:
        done = mpiexec(real_mpi_transpose, 1, "-a", algorithm, "-n", "7", "--verify")
        assert done.returncode == 0, done.stderr
        *per_rank, summary = [json.loads(line) for line in done.stdout.splitlines()]
        assert len(per_rank) == 1 and summary["verified"] is True and summary["q"] == 1

    def test_eight_ranks_is_a_usage_error(self, real_mpi_transpose: Path) -> None:
        done = subprocess.run(
            ["mpiexec", "-n", "8", str(real_mpi_transpose)], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("transpose: error: needs P = q^3 MPI ranks") == 1
