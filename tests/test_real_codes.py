"""Third-party codes on topolab's machines (``study_runner.tools.realcodes``): SimGrid's NAS ports build unmodified, run
with computation benchmarked, and pass their own verification; EP computes its real result only with SimGrid patch
0004's ``smpi/sample-skip:no`` (this file is that patch's test).

Benchmarked computation is measured, not deterministic: the tests check verdicts and ratios, never digits.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.compute import compute_timing
from study_runner.simulation.outputs import parse_nas
from study_runner.tools import realcodes
from study_runner.tools.realcodes import QUICK_CODES
from study_runner.tools.realcodes import nas
from study_runner.tools.realcodes import run_case
from study_runner.tools.smpirun_on import prepare
from tests.conftest import smpicc_test_program

pytestmark = pytest.mark.simgrid


@pytest.mark.parametrize("code", sorted(name for name in QUICK_CODES if name.split(".")[0] in ("is", "ep", "dt")))
@pytest.mark.parametrize("target", ["crossbar", "bgq"])
def test_nas_class_s_passes_its_own_verification(bin_dir: Path, code: str, target: str) -> None:
    outcome = run_case(QUICK_CODES[code], target, 8, default_cache_dir(), timeout=300)
    assert outcome.status == "pass", outcome.detail
    record = outcome.record
    assert record["verified"] is True and record["processes"] == 8
    # Computation benchmarked: SMPI charged some, and the run ends after it.
    assert record["benchmarked_s"] > 0 and record["simulated_s"] >= record["time_s"] - 0.01


def test_a_code_that_cannot_run_at_a_rank_count_does_not_apply() -> None:
    outcome = run_case(nas("dt", "S"), "crossbar", 4, default_cache_dir())
    assert (outcome.status, outcome.detail) == ("n/a", "DT class S needs 5 processes (its graph's nodes)")
    assert run_case(nas("is", "S"), "crossbar", 6, default_cache_dir()).detail.startswith("IS needs a power-of-two")


def _ep(cfg: list[str]) -> dict:
    binary = realcodes.build_nas(default_cache_dir(), "ep", "smpi")
    command = prepare(["crossbar", "--hosts", "4", "--compute", "benchmark", *cfg, "--", str(binary), "4", "S"])
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    return {**parse_nas(done.stdout, "ep")[0], **compute_timing(done.stderr)}


def test_ep_computes_its_real_result_only_when_its_sampled_loop_runs_in_full() -> None:
    # SimGrid's EP samples its main loop (SMPI_SAMPLE_GLOBAL) and keeps its tallies in one SMPI_SHARED_MALLOC block
    # for all ranks: its verification fails unless every iteration runs and each rank has its own tallies.
    full = _ep(["--cfg=smpi/sample-skip:no", "--cfg=smpi/shared-malloc:no"])
    sampled = _ep(["--cfg=smpi/shared-malloc:no"])
    shared = _ep(["--cfg=smpi/sample-skip:no"])
    assert (full["verified"], sampled["verified"], shared["verified"]) == (True, False, False)
    # The same time model either way: the sampled iterations' mean times their count. Both are measured times: on
    # this machine they agree within 2% (three pairs, 2026-12-06), but a pair measured while the host slowed down
    # once differed by 39% (sampled 8.28 s against 5.96 s); such a pair is measured again once, and the second must
    # agree.
    if full["simulated_s"] != pytest.approx(sampled["simulated_s"], rel=0.25):
        full = _ep(["--cfg=smpi/sample-skip:no", "--cfg=smpi/shared-malloc:no"])
        sampled = _ep(["--cfg=smpi/shared-malloc:no"])
    assert full["simulated_s"] == pytest.approx(sampled["simulated_s"], rel=0.25)


def test_the_ports_build_with_a_real_mpi(real_mpi_bin: Path) -> None:
    # apps/smpi_compat lets SimGrid's ports build with MPICH's mpicc; the real runs pass their verification.
    for code, args, ranks in (("is", ["2", "S"], 2), ("ep", ["2", "S"], 2), ("dt", ["5", "S", "WH"], 5)):
        binary = realcodes.build_nas(default_cache_dir(), code, "mpich")
        done = subprocess.run(["mpiexec", "-n", str(ranks), str(binary), *args], capture_output=True, text=True)
        assert parse_nas(done.stdout, code)[0]["verified"] is True, done.stdout[-300:]


def test_hpcc_passes_its_own_checks_on_a_crossbar() -> None:
    outcome = run_case(QUICK_CODES["hpcc.small"], "crossbar", 4, default_cache_dir(), timeout=300)
    assert outcome.status == "pass", outcome.detail
    assert outcome.record["verified"] is True and outcome.record["HPL_Tflops"] > 0


def test_mpi_test_on_a_null_request_sets_its_flag(tmp_path: Path) -> None:
    # SimGrid patch 0006: MPI 3.1 Sect. 3.7.3, flag = true for MPI_REQUEST_NULL whatever the status argument.
    binary = smpicc_test_program("null_request", tmp_path)
    done = subprocess.run(prepare(["crossbar", "--hosts", "2", "--", str(binary)]), capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == '{"flag_ignore":1,"flag_status":1}', done.stderr[-300:]


def test_hpcc_standard_random_access_ends_and_verifies(tmp_path: Path) -> None:
    # HPCC's standard Global RandomAccess polls MPI_Test on a null request before its first send: it spun forever
    # before patch 0006 (and MPI_Testany's injected sleeps grew without bound whatever smpi/grow-injected-times).
    from study_runner.tools.hpcc import build_hpcc
    from study_runner.tools.hpcc import run_hpcc

    binary = build_hpcc(default_cache_dir(), "smpi", ra="standard")
    cfg = ["--compute", "benchmark", "--cfg=smpi/grow-injected-times:no"]
    command = prepare(["crossbar", "--hosts", "4", "--np", "4", *cfg, "--", str(binary)])
    record = run_hpcc(command, 4, "small", tmp_path, timeout=300)
    assert record["verified"] and record["checks"]["MPIRandomAccess"], record["evidence"]


def test_the_table_shows_every_run() -> None:
    outcomes = [
        realcodes.Outcome("is.B", "bgq", 64, "pass", "", 9.6, 417.0, {"time_s": 0.45, "simulated_s": 0.839}),
        realcodes.Outcome("dt.S", "crossbar", 4, "n/a", "DT class S needs 5 processes"),
    ]
    rows = realcodes.outcome_rows(outcomes)
    assert rows[2] == "| is.B | bgq | 64 | pass | 0.45 | 0.839 | 9.6 | 417 |"
    assert rows[3].startswith("| dt.S | crossbar | 4 | n/a: DT class S needs 5 processes |")
