"""Work directories leave nothing behind: removed on exit and on SIGTERM, and after SIGKILL by the next run, never
while their owner lives (study_runner.simulation.workdirs)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from study_runner.simulation import workdirs
from study_runner.simulation.smpi import TOPOLAB_SIMGRID
from study_runner.simulation.workdirs import owner_tag
from study_runner.simulation.workdirs import remove_stale
from study_runner.simulation.workdirs import work_directory
from tests.conftest import REPO
from tests.conftest import crossbar_study
from tests.conftest import run_table


def dead_pid() -> int:
    """The PID of a process that has ended (and been reaped)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


class TestOwners:
    def test_name_carries_the_owner_and_the_directory_goes(self, tmp_path: Path) -> None:
        with work_directory("unit", parent=tmp_path) as path:
            assert path.is_dir() and path.parent == tmp_path
            assert path.name.startswith(f".unit.work-{owner_tag()}-")
            (path / "file").write_text("x")
        assert not path.exists()
        with pytest.raises(RuntimeError), work_directory("unit", parent=tmp_path) as path:
            raise RuntimeError("a failed run")
        assert not path.exists()

    def test_only_directories_of_ended_owners_go(self, tmp_path: Path) -> None:
        pid, start, domain = owner_tag().split(".")
        sleeper = subprocess.Popen(["sleep", "30"])
        try:
            names = {
                "mine": f".s.work-{owner_tag()}-abc123de",
                "live other": f".s.work-{owner_tag(sleeper.pid)}-abc123de",
                "dead": f".s.work-{dead_pid()}.{start}.{domain}-abc123de",
                "reused pid": f".s.work-{pid}.{int(start) + 1}.{domain}-abc123de",  # my PID, another process's start
                "other machine": f".s.work-{dead_pid()}.{start}.0123abcd-abc123de",
                "not a work directory": ".s.work-old",
            }
            for name in names.values():
                (tmp_path / name).mkdir()
            removed = remove_stale(tmp_path)
        finally:
            sleeper.kill()
            sleeper.wait()
        assert sorted(path.name for path in removed) == sorted([names["dead"], names["reused pid"]])
        left = {path.name for path in tmp_path.iterdir()}
        assert left == {names[k] for k in ("mine", "live other", "other machine", "not a work directory")}

    def test_first_directory_in_a_place_removes_the_stale_ones(self, tmp_path: Path, monkeypatch) -> None:
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
        monkeypatch.setattr(workdirs, "_SWEPT", set())
        _, start, domain = owner_tag().split(".")
        stale = tmp_path / f"topolab-run-{dead_pid()}.{start}.{domain}-abc123de"
        stale.mkdir()
        other = tmp_path / "unrelated-dir"
        other.mkdir()
        with work_directory("run") as path:
            assert path.parent == tmp_path and path.name.startswith("topolab-run-")
            assert not stale.exists() and other.exists()


# --- a real study run, interrupted: smpirun is a stand-in that copies "the app" into its TMPDIR, as SMPI does, and
# waits; the app binary only has to exist.

FAKE_SMPIRUN = """#!/bin/sh
if [ "$1" = "-version" ]; then echo "fake smpirun"; exit 0; fi
echo $$ >> "$FAKE_PIDS"
touch "$TMPDIR/app_copy_0.so"
exec sleep 600
"""

STUDY = crossbar_study("mini", "mini", 2, run_table("wait", "pingpong", 2))


def start_study(tmp_path: Path, bin_dir: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """The study runner on the stand-in smpirun, with its own temporary directory ``tmp_path/tmp``."""
    fake = tmp_path / "fake"
    fake.mkdir(exist_ok=True)
    (fake / "smpirun").write_text(FAKE_SMPIRUN)
    (fake / "smpirun").chmod(0o755)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    (tmp_path / "study.toml").write_text(STUDY)
    path = os.pathsep.join([str(fake), str(TOPOLAB_SIMGRID / "bin"), os.environ["PATH"]])
    env = {**os.environ, "PATH": path, "TMPDIR": str(tmp_path / "tmp"), "FAKE_PIDS": str(tmp_path / "pids")}
    command = [sys.executable, "-m", "study_runner", str(tmp_path / "study.toml"), "--bin", str(bin_dir), "--workers",
               "1", "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "cache")]  # fmt: skip
    process = subprocess.Popen(command, cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "tmp").glob("topolab-run-*/app_copy_0.so")):  # SMPI's copy is in the run's directory
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "the simulation did not start"
        time.sleep(0.05)
    return process, env


def left_in(tmp: Path) -> list[str]:
    """What is in the temporary directory (Dask's scratch too: a local engine keeps it in a work directory)."""
    return sorted(path.name for path in tmp.iterdir())


def gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def fake_bin(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir(exist_ok=True)
    (tmp_path / "bin" / "pingpong").write_text("not run: smpirun is a stand-in")
    return tmp_path / "bin"


def test_sigterm_leaves_nothing_behind(tmp_path: Path) -> None:
    process, _ = start_study(tmp_path, fake_bin(tmp_path))
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "scripts/repro: terminated by SIGTERM" in stderr and "Traceback" not in stderr
    assert left_in(tmp_path / "tmp") == []  # neither the study's nor the run's directory, nor SMPI's copies
    assert all(gone(int(pid)) for pid in (tmp_path / "pids").read_text().split())
    assert not (tmp_path / "results").exists() or list((tmp_path / "results").iterdir()) == []


def test_sigkill_leftovers_go_when_the_next_run_starts(tmp_path: Path) -> None:
    process, env = start_study(tmp_path, fake_bin(tmp_path))
    process.kill()
    process.communicate(timeout=60)
    (pid,) = (tmp_path / "pids").read_text().split()
    deadline = time.monotonic() + 10
    while not gone(int(pid)):  # the parent-death signal ends the simulation (study_runner.simulation.smpi)
        assert time.monotonic() < deadline, "the simulation outlived the killed run"
        time.sleep(0.05)
    left = [name.split("-")[1] for name in left_in(tmp_path / "tmp")]
    assert left == ["dask", "mini", "run"]  # SIGKILL cannot be caught: the Dask worker's, study's and run's stay
    # The next run (it stops early, at a missing app binary) starts by removing them.
    (tmp_path / "empty").mkdir()
    command = [sys.executable, "-m", "study_runner", str(tmp_path / "study.toml"), "--bin", str(tmp_path / "empty"),
               "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "cache")]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "app binary" in done.stderr, done.stderr
    assert left_in(tmp_path / "tmp") == []
