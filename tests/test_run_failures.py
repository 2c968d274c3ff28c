"""A failed MPI run fails: MPI_Abort (with its code), a rank's non-zero exit, a crash, a deadlock and a rank that
leaves without MPI_Finalize each make smpirun-on, a study run and a sweep point fail, with one line saying why, the
application's status where it has one, and nothing cached (SimGrid patch 0009; before it, the abort, the deadlock and
the missing MPI_Finalize exited 0). And a Fortran code whose ranks open files on units they pick by INQUIRE runs, its
runtime privatized per rank (patch 0010); Fortran calls that crashed the simulation run as under MPICH (patches 0012,
0013, and 0016: the system BLAS's COMPLEX functions).

The app is apps/bench/fail (``fail HOW [RANK [CODE]]``); MPICH's mpiexec gives 3, 5, 7 and 11 for the first four
(tests/test_run_failures.py::test_mpich_agrees), hangs on the deadlock and exits 0 without MPI_Finalize.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from study_runner.simulation import smpi  # noqa: F401  (puts topolab's SimGrid, and its smpif90, on PATH)
from tests.conftest import REPO
from tests.conftest import crossbar_study
from tests.conftest import run_module
from tests.conftest import run_table

SMPIRUN_ON = REPO / "scripts" / "smpirun-on"

# (how, fail's arguments after HOW, smpirun's exit status, the cause in SimGrid's one line)
FAILURES = [
    ("abort", ["1", "3"], 3, "rank 1 (on host-1) called MPI_Abort with error code 3; exit status 3"),
    ("abort-0", ["2", "0"], 1, "rank 2 (on host-2) called MPI_Abort with error code 0; exit status 1"),
    ("exit", ["1", "5"], 5, "rank 1 (on host-1) called exit(5); exit status 5"),
    ("return", ["3", "7"], 7, "rank 3 (on host-3) returned 7 from main; exit status 7"),
    ("crash", ["1"], 139, None),
    ("deadlock", [], 1, "the simulation deadlocked"),
    ("no-finalize", [], 1, "rank 0 (on host-0) returned from main without calling MPI_Finalize; exit status 1"),
]
IDS = [failure[0] for failure in FAILURES]


def fail_args(how: str, rest: list[str]) -> list[str]:
    return [how.split("-")[0] if how.startswith("abort") else how, *rest]


def smpirun_on(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SMPIRUN_ON), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def app_failed_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "The MPI application failed: " in line]


@pytest.mark.parametrize(("how", "rest", "status", "cause"), FAILURES, ids=IDS)
def test_smpirun_on_fails_with_the_status_and_one_line(
    how: str, rest: list[str], status: int, cause: str | None, bin_dir: Path, tmp_path: Path
) -> None:
    done = smpirun_on("crossbar", "--hosts", "4", "--", str(bin_dir / "fail"), *fail_args(how, rest), cwd=tmp_path)
    assert done.returncode == status, done.stderr[-600:]
    assert done.stdout == "", "smpirun's failure messages belong on stderr"
    if cause is None:  # the crash takes SimGrid's process with it: the shell's 128 + SIGSEGV
        assert "Segmentation fault" in done.stderr
    else:
        lines = app_failed_lines(done.stderr)
        assert len(lines) == 1 and cause in lines[0], done.stderr[-600:]


def test_a_good_run_still_succeeds(bin_dir: Path, tmp_path: Path) -> None:
    done = smpirun_on("crossbar", "--hosts", "4", "--", str(bin_dir / "fail"), "none", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-600:]
    assert json.loads(done.stdout) == {"app": "fail", "how": "none", "ranks": 4}
    assert app_failed_lines(done.stderr) == []


def test_mpich_agrees(real_mpi_bin: Path) -> None:
    # The statuses smpirun now gives are mpiexec's (the crash: MPICH gives the signal's number, a shell 128 + it).
    from tests.conftest import mpiexec

    for how, rest, status in [("abort", ["1", "3"], 3), ("return", ["3", "7"], 7), ("crash", ["1"], 11)]:
        done = mpiexec(real_mpi_bin / "fail", 4, how, *rest)
        assert done.returncode == status, (how, done.stderr[-300:])


def fortran(name: str, tmp_path: Path, *flags: str, compiler: str = "smpif90") -> Path:
    """``tests/data/fortran/<name>.f90`` built in ``tmp_path`` with ``compiler`` (topolab's smpif90 by default),
    after the module its verdict is printed by (``verdict.f90``)."""
    binary = tmp_path / f"{name}-{compiler}"
    sources = [str(REPO / "tests" / "data" / "fortran" / f"{file}.f90") for file in ("verdict", name)]
    # the flags after the sources: a library must follow the objects that use it
    subprocess.run([str(shutil.which(compiler)), *sources, *flags, "-o", str(binary)], check=True, cwd=tmp_path)
    return binary


def test_fortran_abort_fails_with_its_code(tmp_path: Path) -> None:
    done = smpirun_on("crossbar", "--hosts", "4", "--", str(fortran("abort", tmp_path)), cwd=tmp_path)
    assert done.returncode == 3, done.stderr[-600:]
    assert "rank 1 (on host-1) called MPI_Abort with error code 3" in app_failed_lines(done.stderr)[0]


def test_fortran_ranks_each_have_their_units(tmp_path: Path) -> None:
    # Rank 0 writes a deck on the first free unit (7), every rank then opens it on the first free unit: 7 for each
    # when each rank has its own gfortran runtime; with one shared runtime, ranks 1-3 saw unit 7 taken, picked 8
    # and failed with iostat 5004 (the file is connected to another unit).
    done = smpirun_on("crossbar", "--hosts", "4", "--", str(fortran("units", tmp_path)), "deck", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-600:]
    records = sorted((json.loads(line) for line in done.stdout.splitlines()), key=lambda record: record["rank"])
    expected = [{"app": "units", "rank": r, "unit": 7, "iostat": 0, "value": 42, "argument": "deck"} for r in range(4)]
    assert records == expected


# (program, its compiler flags, what each rank prints): SimGrid patches 0012, 0013 and 0016, each a run that died of
# SIGSEGV (139) before it; MPICH prints the same.
FORTRAN_CHECKS = [
    # MPI_Comm_split with MPI_UNDEFINED (MUMPS's scaling splits so), MPI_Comm_create outside the group and
    # MPI_Comm_split_type with MPI_UNDEFINED give MPI_COMM_NULL, which the Fortran bindings asked for its handle.
    ("comm_null", (), "comm_null: ok"),
    # MPI_GATHERV, MPI_ALLGATHERV and MPI_ALLGATHER with MPI_IN_PLACE and the ignored send type MPI_DATATYPE_NULL, as
    # Quantum ESPRESSO's pw.x calls them: Fortran's MPI_DATATYPE_NULL became a null pointer.
    ("null_datatype", ("-fallow-argument-mismatch",), "null_datatype: ok"),
    # ZDOTC, CDOTC, SDOT and SNRM2 of the system's OpenBLAS: smpif90 compiled with -ff2c (COMPLEX functions return
    # through a hidden argument), so ZDOTC read its length from the wrong argument (QE's ph.x died there).
    ("blas_functions", ("-lopenblas",), "blas_functions: ok"),
]


@pytest.mark.parametrize("ranks", [3, 4])
@pytest.mark.parametrize(("name", "flags", "line"), FORTRAN_CHECKS, ids=[check[0] for check in FORTRAN_CHECKS])
def test_fortran_calls_that_crashed(name: str, flags: tuple[str, ...], line: str, tmp_path: Path, ranks: int) -> None:
    # each crashed before its patch: the run died of SIGSEGV (exit status 139)
    done = smpirun_on("crossbar", "--hosts", str(ranks), "--", str(fortran(name, tmp_path, *flags)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-600:]
    assert done.stdout.splitlines() == [line]


@pytest.mark.skipif(shutil.which("mpif90") is None, reason="needs MPICH's mpif90")
def test_mpich_agrees_on_the_fortran_calls(tmp_path: Path) -> None:
    for name, flags, line in FORTRAN_CHECKS:
        binary = fortran(name, tmp_path, *flags, compiler="mpif90")
        done = subprocess.run(["mpiexec", "-n", "3", str(binary)], capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout.splitlines()) == (0, [line]), name


STUDY = crossbar_study("failing", "a failing run", 4, run_table("fail", "fail", 4) + "args = {args}\n")

SWEEP = """
name = "failing"
title = "a failing point"
[grid]
hosts = [4]
[platform]
family = "crossbar"
hosts = "{{hosts}}"
[run]
app = "fail"
ranks = 4
args = {args}
[output]
metric = "ranks"
"""

RUNNERS = {
    "study": ("study_runner", STUDY, "scripts/repro: error:"),
    "sweep": ("study_runner.sweeps.sweep_cli", SWEEP, "scripts/sweep: error:"),
}


def assert_one_failure_line(errors: list[str], stderr: str, status: int, cause: str | None) -> None:
    """The run's ``errors`` lines are one, saying the crash (``cause`` None) or SimGrid's ``cause``; no traceback."""
    assert len(errors) == 1, stderr[-800:]
    if cause is None:
        assert f"the MPI application crashed: the simulation died of SIGSEGV (exit status {status})" in errors[0]
    else:
        assert f"the MPI application failed: {cause}" in errors[0], errors[0]
    assert "Traceback" not in stderr


def cached_results(cache: Path) -> list[Path]:
    return sorted(cache.glob("[0-9a-f][0-9a-f]/*.json"))


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize(("how", "rest", "status", "cause"), FAILURES, ids=IDS)
def test_a_failing_run_fails_the_study_and_the_sweep(
    runner: str, how: str, rest: list[str], status: int, cause: str | None, bin_dir: Path, tmp_path: Path
) -> None:
    module, template, prefix = RUNNERS[runner]
    path = tmp_path / "failing.toml"
    path.write_text(template.format(args=json.dumps(fail_args(how, rest))))
    done = run_module(module, str(path), tmp_path=tmp_path)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith(prefix)]
    assert_one_failure_line(errors, done.stderr, status, cause)
    assert cached_results(tmp_path / "cache") == []


JOBS = """[platform]
family = "crossbar"
hosts = 4
[[jobs]]
name = "failing"
app = "fail"
ranks = 4
args = {args}
"""


@pytest.mark.parametrize(("how", "rest", "status", "cause"), FAILURES, ids=IDS)
def test_a_failing_job_fails_run_jobs_in_smpirun_ons_words(
    how: str, rest: list[str], status: int, cause: str | None, bin_dir: Path, tmp_path: Path
) -> None:
    """Issue 61, point 5: a job that fails fails ``scripts/run-jobs`` with one error line in the words of
    smpirun-on, a study and a sweep (a deadlock while the job's trace was recorded was said to be a SIGABRT crash:
    SimGrid's TI tracing aborted, fixed by SimGrid patch 0027, which this test is the test of)."""
    path = tmp_path / "jobs.toml"
    path.write_text(JOBS.format(args=json.dumps(fail_args(how, rest))))
    command = [sys.executable, "-m", "study_runner.tools.run_jobs", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("scripts/run-jobs: error:")]
    assert_one_failure_line(errors, done.stderr, status, cause)
