"""The HPC Challenge suite (``study_runner.tools.hpcc``): Debian's hpcc 1.5.0 built unmodified with smpicc, its
input for a rank count, and its output judged by its own verification.

``tests/data/hpccoutf-smpi-4-small.txt`` is the output of a real run here: ``python -m study_runner.tools.hpcc
--mpi smpi --ranks 4 --problem small -- crossbar --hosts 4 --compute benchmark`` (its Star tests print process 0's
checks, its Single tests ran on process 2 and print none).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from study_runner.errors import StudyError
from study_runner.tools.hpcc import CHECKED
from study_runner.tools.hpcc import FIGURES
from study_runner.tools.hpcc import PROBLEMS
from study_runner.tools.hpcc import build_hpcc
from study_runner.tools.hpcc import hpcc_input
from study_runner.tools.hpcc import parse_hpcc
from study_runner.tools.hpcc import process_grid
from study_runner.tools.hpcc import run_hpcc

SAMPLE = Path(__file__).resolve().parent / "data" / "hpccoutf-smpi-4-small.txt"


@pytest.fixture(scope="module")
def sample() -> str:
    return SAMPLE.read_text()


@pytest.fixture(scope="session")
def hpcc_smpi() -> Path:
    """HPCC built with smpicc: fetched and built once per cache (about 35 s the first time), then reused."""
    return build_hpcc(None, "smpi")


class TestInput:
    GRIDS = ((1, (1, 1)), (2, (1, 2)), (4, (2, 2)), (6, (2, 3)), (7, (1, 7)), (16, (4, 4)), (32, (4, 8)),
             (64, (8, 8)), (128, (8, 16)))  # fmt: skip

    @pytest.mark.parametrize(("ranks", "grid"), GRIDS)
    def test_the_grid_is_as_square_as_possible_with_p_at_most_q(self, ranks: int, grid: tuple[int, int]) -> None:
        assert process_grid(ranks) == grid
        lines = hpcc_input(ranks, "small").splitlines()
        assert (lines[10], lines[11]) == (f"{grid[0]} Ps", f"{grid[1]} Qs")

    @pytest.mark.parametrize("name", sorted(PROBLEMS))
    def test_each_problem_sets_hpl_n_and_nb(self, name: str) -> None:
        lines = hpcc_input(16, name).splitlines()
        assert len(lines) == 36 and lines[5] == f"{PROBLEMS[name].n} Ns" and lines[7] == f"{PROBLEMS[name].nb} NBs"
        assert lines[31].startswith("#####") and lines[32].startswith("0 ")  # no extra PTRANS sizes

    @pytest.mark.parametrize(("ranks", "problem", "message"), [(0, "small", "at least one process"),
                                                               (4, "huge", "unknown HPCC problem")])  # fmt: skip
    def test_bad_input_is_one_error(self, ranks: int, problem: str, message: str) -> None:
        with pytest.raises(StudyError, match=message):
            hpcc_input(ranks, problem)


class TestParse:
    def test_a_real_run_verifies_with_every_figure(self, sample: str) -> None:
        record = parse_hpcc(sample)
        assert record["verified"] and record["success"] and record["complete"] and not record["missing"]
        assert set(record["checks"]) == set(CHECKED) and all(record["checks"].values())
        assert set(record["figures"]) == set(FIGURES)
        assert record["figures"]["HPL_Tflops"] == pytest.approx(0.00185001)
        assert record["figures"]["RandomlyOrderedRingLatency_usec"] > 0  # b_eff runs at 4 ranks
        assert record["summary"]["HPL_N"] == PROBLEMS["small"].n and record["summary"]["HPL_nprow"] == 2
        assert record["evidence"]["HPL"] == "residual checks 1/1 PASSED"
        assert record["evidence"]["SingleDGEMM"].startswith("ran on process 2: its verdict counts in Success")
        assert record["evidence"]["StarDGEMM"].startswith("scaled residual ")

    BROKEN = (
        ("...... PASSED", "...... FAILED", "HPL"),
        ("PASSED    0.085", "FAILED    0.085", "PTRANS"),
        ("locations (passed).\nCurrent", "locations (failed).\nCurrent", "MPIRandomAccess"),
        ("Scaled residual: 0.", "Scaled residual: 99", "StarDGEMM"),
        ("Solution Validates", "Failed Validation on array c[]", "StarSTREAM"),
        ("max(|x-x0|): 1.282e-15", "max(|x-x0|): 1.282e-10", "MPIFFT"),
        ("Node(s) with error 0\nNode selected 2\nSingle DGEMM", "Node(s) with error 1\nNode selected 2\nSingle DGEMM",
         "SingleDGEMM"),
    )  # fmt: skip

    @pytest.mark.parametrize(("old", "new", "test"), BROKEN)
    def test_a_failed_check_fails_its_test_and_the_run(self, sample: str, old: str, new: str, test: str) -> None:
        assert old in sample
        record = parse_hpcc(sample.replace(old, new, 1))
        assert record["checks"][test] is False and not record["verified"]
        assert [name for name, ok in record["checks"].items() if not ok] == [test]

    def test_hpccs_own_failure_flag_fails_the_run(self, sample: str) -> None:
        record = parse_hpcc(sample.replace("Success=1", "Success=0"))
        assert all(record["checks"].values()) and not record["success"] and not record["verified"]

    def test_a_run_that_stopped_early_is_not_verified(self, sample: str) -> None:
        record = parse_hpcc(sample[: sample.index("Begin of PTRANS section.")])
        assert not record["complete"] and not record["verified"] and "HPL" in record["missing"]
        assert parse_hpcc("")["checks"] == {}


@pytest.mark.simgrid
class TestRun:
    def test_built_once_into_the_cache(self, hpcc_smpi: Path) -> None:
        assert build_hpcc(None, "smpi") == hpcc_smpi
        symbols = subprocess.run(["nm", "-D", "--defined-only", str(hpcc_smpi)], capture_output=True, text=True)
        assert " T main\n" in symbols.stdout  # smpicc links a shared object: -Wl,--undefined=main pulls HPCC in
        assert "-DRA_SANDIA_OPT2" in (hpcc_smpi.parent / "Make.topolab_smpi").read_text()

    def test_the_small_problem_verifies_at_4_ranks_with_benchmarked_computation(
        self, hpcc_smpi: Path, tmp_path: Path
    ) -> None:
        from study_runner.tools.smpirun_on import prepare

        command = prepare(["crossbar", "--hosts", "4", "--np", "4", "--compute", "benchmark", "--", str(hpcc_smpi)])
        record = run_hpcc(command, 4, "small", tmp_path, timeout=120)
        assert record["returncode"] == 0, (tmp_path / "stderr.txt").read_text()[-2000:]
        assert record["verified"], record["evidence"]
        assert (record["summary"]["HPL_nprow"], record["summary"]["HPL_npcol"]) == (2, 2)
        assert record["summary"]["MPIRandomAccess_Algorithm"] == 2  # RA_SANDIA_OPT2
        # Computation was charged: the 1 Gflop/s cores take far longer than the benchmarked bursts did here.
        assert record["simulated_s"] > record["benchmarked_s"] > 0
