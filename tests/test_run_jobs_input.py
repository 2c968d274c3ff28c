"""``scripts/run-jobs`` at the level of the other entry points (issue 61, point 5): every field of a jobs file typed
before anything runs, bad input one ``error:`` line and exit status 2, Ctrl-C one line and exit status 130, a job of
no simulated time a slowdown and no ZeroDivisionError, and a job's app found as a run's ``app`` is; and (point 4)
paths with blanks, TMPDIR's and the app's own."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest

from study_runner.simulation.codes import app_binary
from study_runner.simulation.jobs import JobTime
from study_runner.tools import run_jobs as run_jobs_module
from study_runner.tools.run_jobs import main as run_jobs_main
from study_runner.tools.run_jobs import table
from tests.conftest import ctrl_c_while_simulating
from tests.test_jobs import SHARED_SWEEP
from tests.test_jobs import jobs_file

JOB = '[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 4\n'
"""A job that passes every check of the file (it never runs in these tests but one)."""
TORUS = '[platform]\nfamily = "torus"\ndims = "4x4x2"\n'


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one line run-jobs wrote on stderr, an ``error:`` line; nothing on stdout."""
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith("scripts/run-jobs: error: "), err
    return lines[0]


class TestZeroTimeJobs:
    def test_a_job_of_no_simulated_time_has_slowdown_one(self) -> None:
        """A job with nothing to do takes 0 s alone and shared: slowdown 1 (it was not slowed), in its record and
        its row; one that took 0 s alone but some time shared was slowed without bound."""
        idle = JobTime("idle", 1, ("host-0",), 0.0, 0.0)
        assert idle.slowdown == 1.0 and idle.record()["slowdown"] == 1.0
        assert table([idle])[-1] == "| idle | 1 | host-0 | 0 | 0 | 1.0000 |"
        assert JobTime("reached", 1, ("host-0",), 1e-6, 0.0).slowdown == math.inf

    def test_a_one_rank_job_beside_another_is_run(
        self, tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An all-to-all of one rank sends nothing over the network: 0 s alone and shared, slowdown 1 in the table
        and the JSON records (it ended run-jobs with a ZeroDivisionError)."""
        one = '[[jobs]]\nname = "one"\napp = "alltoall"\nargs = ["-s", "1K", "-i", "1", "-w", "0"]\nranks = 1\n'
        two = '[[jobs]]\nname = "two"\napp = "alltoall"\nargs = ["-s", "1K", "-i", "1", "-w", "0"]\nranks = 2\n'
        assert run_jobs_main([str(jobs_file(tmp_path, one + two)), "--json", str(tmp_path / "out.json")]) == 0
        assert "| one | 1 | host-0 | 0 | 0 | 1.0000 |" in capsys.readouterr().out
        records = [json.loads(line) for line in (tmp_path / "out.json").read_text().splitlines()]
        assert (records[0]["alone_s"], records[0]["shared_s"], records[0]["slowdown"]) == (0.0, 0.0, 1.0)


WRONG_FIELDS = [
    (f"options = 5\n{TORUS}{JOB}", "options: 5 is not of type 'array'"),
    (f'options = "--cfg=network/model:CM02"\n{TORUS}{JOB}',
     "options: '--cfg=network/model:CM02' is not of type 'array'"),
    (f"options = [[1]]\n{TORUS}{JOB}", "options[0]: [1] is not of type 'string', 'number'"),
    (f"occupied = 5\n{TORUS}{JOB}", "occupied: 5 is not of type 'object'"),
    (f"allocation = 5\n{TORUS}{JOB}", "allocation: 5 is not of type 'string'"),
    (f"platform = 5\n{JOB}", "platform: 5 is not of type 'object'"),
    (f'[platform]\ndims = "4x4x2"\n{JOB}', "platform: missing 'family'"),
    (f"[platform]\nfamily = 5\n{JOB}", "platform.family: unknown topology family 5; known families: crossbar, "),
    (f"jobs = 5\n{TORUS}", "jobs: 5 is not of type 'array'"),
    (f"jobs = []\n{TORUS}", "jobs is empty"),
    (TORUS, "missing 'jobs'"),
    (f"nodes = 4\n{TORUS}{JOB}", "unknown key 'nodes'; known: allocation, jobs, occupied, options, platform"),
    (f"{TORUS}[occupied]\nsizes = 5\noccupancy = 0.5\n{JOB}", "occupied.sizes: 5 is not of type 'array'"),
    (f"{TORUS}[occupied]\nsizes = [0]\noccupancy = 0.5\n{JOB}", "occupied.sizes[0]: 0 is less than the minimum"),
    (f'{TORUS}[occupied]\nsizes = [2]\noccupancy = "half"\n{JOB}',
     "occupied.occupancy: 'half' is not of type 'number'"),
    (f"{TORUS}[occupied]\nsizes = [2]\noccupancy = 0.5\nreleased = [1]\n{JOB}",
     "occupied.released: [1] is not of type 'number'"),
    (f'{TORUS}[occupied]\nsizes = [2]\noccupancy = 0.5\nseed = "x"\n{JOB}',
     "occupied.seed: 'x' is not of type 'integer'"),
    (f"{TORUS}[occupied]\nsizes = [2]\noccupancy = 0.5\napp = 5\n{JOB}", "occupied.app: 5 is not of type 'string'"),
    (f'{TORUS}[occupied]\nsizes = [2]\noccupancy = 0.5\napp = "/bin/true"\nargs = "-s 1M"\n{JOB}',
     "occupied.args: '-s 1M' is not of type 'array'"),
    (f"{TORUS}[occupied]\nsizes = [2]\n{JOB}", "occupied: missing 'occupancy'"),
    (f'{TORUS}{JOB}args = "-s 1M"\n', "jobs[0].args: '-s 1M' is not of type 'array'"),
]  # fmt: skip
"""A jobs file with one field of the wrong type (or missing, or unknown), and the start of what the error says."""


@pytest.mark.parametrize(("text", "message"), WRONG_FIELDS, ids=[message.split(":")[0] for _, message in WRONG_FIELDS])
def test_a_field_of_the_wrong_type_is_one_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    """Each top-level field and each key of [occupied] is typed before anything runs: one error line naming the
    field and what it should be, exit status 2 (a number where a list is: a TypeError traceback; a string of options
    was split into characters and given to SimGrid)."""
    path = tmp_path / "jobs.toml"
    path.write_text(text)
    assert run_jobs_main([str(path), "--json", str(tmp_path / "out.json")]) == 2
    assert one_error(capsys).startswith(f"scripts/run-jobs: error: {path}: {message}")
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read jobs file {path}: No such file or directory"),
        (b"\xff\xfeoptions = []\n", "{path}: not a text file (UTF-8)"),
        (b"options = [\n", "{path}: malformed TOML: "),
        (b"", "{path}: missing 'platform'"),
    ],
    ids=["missing", "not-utf8", "malformed", "empty"],
)
def test_a_file_that_cannot_be_read_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, message: str
) -> None:
    """A missing file, one not UTF-8, malformed TOML: exit status 2 (bad input, as scripts/sweep and smpirun-on say
    it), not 1 (a job's app failed)."""
    path = tmp_path / "jobs.toml"
    if content is not None:
        path.write_bytes(content)
    assert run_jobs_main([str(path)]) == 2
    assert one_error(capsys).startswith(f"scripts/run-jobs: error: {message.format(path=path)}")


def test_ctrl_c_is_one_line_and_status_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the jobs run (the simulation interrupted): one line, exit status 130, no traceback, the work
    directory removed (``workdirs.stopped``, as scripts/sweep and scripts/repro)."""

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_jobs_module, "run_jobs", interrupted)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr("tempfile.tempdir", None)
    (tmp_path / "tmp").mkdir()
    try:
        status = run_jobs_main([str(jobs_file(tmp_path, JOB))])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C ended run-jobs with a KeyboardInterrupt traceback")
    assert status == 130
    assert capsys.readouterr() == ("", "scripts/run-jobs: interrupted\n")
    assert not list((tmp_path / "tmp").iterdir())


def test_ctrl_c_stops_a_running_simulation_with_one_line(tmp_path: Path, bin_dir: Path) -> None:
    """The real thing: SIGINT to run-jobs while its job's app is being recorded (a ping-pong of 10^8 iterations,
    copied under a name of its own to be found): exit status 130, one line, no traceback, the simulation stopped
    and the work directory removed."""
    own = tmp_path / "pingpong-run-jobs-interrupted-under-test"
    own.write_bytes((bin_dir / "pingpong").read_bytes())
    own.chmod(0o755)
    path = jobs_file(tmp_path, f'[[jobs]]\nname = "pp"\napp = "{own}"\nargs = ["-i", "100000000"]\nranks = 2\n')
    (tmp_path / "tmp").mkdir()
    command = [sys.executable, "-m", "study_runner.tools.run_jobs", str(path)]
    environment = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    done = ctrl_c_while_simulating(command, own, environment)
    stdout, stderr = done.stdout, done.stderr
    assert done.returncode == 130 and "Traceback" not in stderr, stderr
    assert stderr.strip().splitlines()[-1] == "scripts/run-jobs: interrupted" and stdout == ""
    assert not list((tmp_path / "tmp").iterdir())


def test_a_jobs_app_is_found_as_a_runs_app_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``./good``, a binary of the working directory, is that binary for a run's app, for its neighbours and for the
    jobs of a jobs file alike (``simulation.codes.app_binary``); a neighbour's was shortened to ``good`` and looked
    up in build/bin."""
    from study_runner.sweeps.sweep import load_sweep

    monkeypatch.chdir(tmp_path)
    (tmp_path / "good").write_text("#!/bin/sh\n")
    sweep = tmp_path / "shared.toml"
    sweep.write_text(SHARED_SWEEP.replace('app = "shift"', 'app = "./good"'))
    point = load_sweep(sweep).points[0]
    (neighbour,) = point.neighbours
    no_bin = tmp_path / "no-bin"
    assert app_binary(point.app, no_bin).absolute() == app_binary(str(neighbour.app), no_bin) == tmp_path / "good"
    from study_runner.tools.run_jobs import read_jobs_file

    machine = read_jobs_file(jobs_file(tmp_path, JOB.replace("/bin/true", "./good")))
    assert [job.app for job in machine.jobs] == [tmp_path / "good"]


def test_a_run_among_neighbours_gets_the_binaries_it_names(
    tmp_path: Path, bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep point whose app and neighbour are ``./good`` (a copy of topolab's shift in the working directory):
    its prepared jobs run that binary, found as a run's app is, not build/bin's (``batch.prepare``)."""
    from study_runner.batch.prepare import prepare_runs
    from study_runner.sweeps.sweep import load_sweep

    monkeypatch.chdir(tmp_path)
    (tmp_path / "good").write_bytes((bin_dir / "shift").read_bytes())
    (tmp_path / "good").chmod(0o755)
    sweep = tmp_path / "shared.toml"
    sweep.write_text(SHARED_SWEEP.replace('app = "shift"', 'app = "./good"'))
    loaded = load_sweep(sweep)
    _, runs = prepare_runs("shared", loaded.platforms, loaded.points[:1], False, tmp_path / "no-bin", tmp_path)
    assert runs[0].jobs is not None and [job.app for job in runs[0].jobs.jobs] == [tmp_path / "good"] * 2


def test_paths_with_blanks_reach_the_jobs(tmp_path: Path, bin_dir: Path) -> None:
    """A work directory (TMPDIR's) and an app whose paths hold blanks, replayed and online: the times of the same
    jobs from plain paths, to the bit (``jobs_run`` reads its words %-encoded: ``simulation.jobs.jobs_file_word``);
    they were refused with "an argument is empty or holds a blank"."""
    from study_runner.simulation.jobs import Job
    from study_runner.simulation.jobs import run_jobs
    from tests.test_jobs import TORUS
    from tests.test_jobs import written

    spaced = tmp_path / "a b"
    spaced.mkdir()
    (spaced / "my shift").write_bytes((bin_dir / "shift").read_bytes())
    (spaced / "my shift").chmod(0o755)
    path = written(TORUS, tmp_path)
    args = ("-R", "2", "-s", "256K", "-i", "1", "-w", "0")
    for online in (False, True):
        ways = ((bin_dir / "shift", tmp_path / f"plain-{online}"), (spaced / "my shift", spaced / f"work {online}"))
        times = [
            run_jobs(TORUS, path, [Job("a", app, args, 8), Job("b", app, args, 8, start_s=1e-5)], work, "random:3",
                     online=online)
            for app, work in ways
        ]  # fmt: skip
        assert [(t.alone_s, t.shared_s) for t in times[1]] == [(t.alone_s, t.shared_s) for t in times[0]]
