"""Messages that say what happened (issue 61, point 7): a failed run's "last words" are the application's own last
line, not smpirun's words after the failure (``Generated unrolled hostfile ... kept.``) nor jobs_run's records of
the jobs; a ``--list`` stopped by Ctrl-C or by a closed pipe says nothing of points or runs simulated, and a closed
pipe is no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from study_runner import cli as repro_cli
from study_runner.errors import StudyError
from study_runner.simulation.smpi import failure_message
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.smpi import smpirun_command
from study_runner.sweeps import sweep_cli
from study_runner.tools.run_jobs import main as run_jobs_main
from tests.conftest import REPO
from tests.conftest import pingpong_sweep
from tests.test_jobs import jobs_file

FAILED = (
    "[0.1] smpi_global.cpp:665: [smpi_kernel/ERROR] The MPI application failed: rank 1 (on host-1) returned 2 from "
    "main; exit status 2"
)
USAGE = "usage: fail abort|exit|return|crash|deadlock|no-finalize|none [RANK [CODE]]"


@pytest.mark.parametrize(
    "after",
    [
        "/tmp/fail --cfg=smpi/privatization:1 /tmp/p.xml\nGenerated unrolled hostfile /tmp/smpitmp-hostfX kept.\n"
        "Execution failed with code 2.",
        'jobs_run: {"job":"good","ranks":4,"start_s":0,"end_s":0.01,"time_s":0.01}\n'
        'jobs_run: {"job":"bad","ranks":4,"start_s":0,"end_s":0,"time_s":0}',
        "./fail bogus\nExecution failed with code 2.",
    ],
    ids=["smpirun's kept hostfile", "jobs_run's records", "a relative program"],
)
def test_the_last_words_are_the_applications_line_before_simgrids(after: str) -> None:
    """What smpirun or jobs_run print after SimGrid's line of failure is theirs, never the application's."""
    stderr = f"{USAGE}\n[0.0] x.cpp:338: [smpi_kernel/WARNING] SMPI process did not return 0\n{FAILED}\n{after}\n"
    message = failure_message("run r", 2, stderr)
    assert message.endswith(f"exit status 2 (its last words: {USAGE})"), message


@pytest.mark.simgrid
def test_a_failed_run_under_a_directory_with_a_blank_quotes_the_app(tmp_path: Path, bin_dir: Path) -> None:
    """A hostfile under a blank is copied by smpirun (``Generated unrolled hostfile ... kept.`` after a failure),
    as in a sweep under ``TMPDIR="$HOME/a b"``: the message quotes the app's usage line."""
    from generators import crossbar
    from generators import write_platform

    spaced = tmp_path / "a b"
    spaced.mkdir()
    (spaced / "hosts").write_text("host-0\nhost-1\n")
    write_platform(crossbar(2), spaced / "p.xml")
    command = smpirun_command(bin_dir / "fail", ["bogus"], spaced / "p.xml", spaced / "hosts", 2)
    with pytest.raises(StudyError) as raised:
        run_smpirun_measured(command, spaced, 120, "point 0")
    assert str(raised.value).endswith(f"(its last words: {USAGE})"), raised.value


@pytest.mark.simgrid
def test_an_online_job_that_fails_is_quoted_in_its_own_words(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """run-jobs --online: the failing job's line, not jobs_run's record of a job printed after the failure."""
    good = '[[jobs]]\nname = "good"\napp = "shift"\nranks = 4\n'
    bad = '[[jobs]]\nname = "bad"\napp = "shift"\nargs = ["-S", "9"]\nranks = 4\n'
    assert run_jobs_main([str(jobs_file(tmp_path, good + bad)), "--online"]) == 1
    error = capsys.readouterr().err.strip()
    assert "rank 0 of bad" in error and error.endswith(
        "(its last words: shift: error: --shifts 9 needs more than 9 MPI ranks (a shift is 1 .. N-1))"
    ), error


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


def test_an_interrupted_sweep_list_says_nothing_was_simulated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while ``scripts/sweep FILE --list`` reads the file: one line, 130, and no word of a cache."""
    path = tmp_path / "sweep.toml"
    path.write_text(pingpong_sweep([1000], 2, "pingpong"))
    monkeypatch.setattr(sweep_cli, "load_sweep", _interrupt)
    assert sweep_cli.main([str(path), "--list", "--results", str(tmp_path / "results")]) == 130
    assert capsys.readouterr().err == "scripts/sweep: interrupted\n"


def test_an_interrupted_study_list_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C during ``scripts/repro --list``: one line and 130, no traceback, no word of runs in the cache."""
    monkeypatch.setattr(repro_cli, "study_listing", _interrupt)
    assert repro_cli.main(["--list"]) == 130
    assert capsys.readouterr().err == "scripts/repro: interrupted\n"


def test_repro_list_into_a_closed_pipe_is_quiet() -> None:
    """``scripts/repro --list | head -1`` with PYTHONUNBUFFERED=1 ended in a BrokenPipeError traceback: every write
    into a pipe whose reader is gone now ends the listing quietly (128 + SIGPIPE, as other Unix tools)."""
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the first line: every write fails, deterministically
    try:
        done = subprocess.run(
            [sys.executable, "-m", "study_runner", "--list"], stdout=writer, stderr=subprocess.PIPE, text=True,
            cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (141, "")
