"""Sweeps on a real Slurm: the single-node cluster of scripts/local-slurm (started once for these tests, stopped by
PID after them), the same rows as the local engine, and the faults a batch system brings: a job cancelled or a
worker killed mid-sweep (every point still done, none simulated twice, the progress says what happened), a job
the cluster refuses and a cluster that cannot be reached (one error, exit 2, no results)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_jobs import SHARED_SWEEP
from tests.test_sweep import PINGPONG
from tests.test_sweep import expected_oneway
from tests.test_sweep import read_table
from tests.test_sweep import write

LOCAL_SLURM = REPO / "scripts" / "local-slurm"
SWEEP_TIMEOUT_S = 240
COSTS = {"cached", "sim_wall_s", "sim_peak_memory_mib"}
LONG_POINTS = PINGPONG.replace("size = [1000, 100000]", "size = [1000, 10000, 100000, 1000000]").replace(
    '"-i", "2"', '"-i", "1500"'
)  # 16 points of about a second each


def local_slurm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LOCAL_SLURM), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A running single-node Slurm; its environment (SLURM_CONF)."""
    directory = tmp_path_factory.mktemp("slurm")
    started = local_slurm("start", str(directory))
    assert started.returncode == 0, started.stderr
    try:
        yield {**os.environ, "SLURM_CONF": str(directory / "slurm.conf")}
    finally:
        local_slurm("stop", str(directory))


def sweep(path: Path, tmp_path: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    """The sweep CLI on one Slurm job of one core, in the background."""
    command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(path), "--slurm", "--scheduler-host",
               "127.0.0.1", "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "cache"),
               *extra]  # fmt: skip
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        _, stderr = process.communicate(timeout=SWEEP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
        pytest.fail(f"the sweep did not finish within {SWEEP_TIMEOUT_S} s:\n{stderr}")
    return process.returncode, stderr


def cached_entries(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "cache").glob("*/*.json"))


def jobs(env: dict[str, str]) -> list[str]:
    return subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, env=env).stdout.split()


def when_some_points_are_done(tmp_path: Path, process: subprocess.Popen[str], env: dict[str, str]) -> str:
    """Wait until 3 points are cached and a job runs; its id."""
    deadline = time.monotonic() + 120
    while len(cached_entries(tmp_path)) < 3 or not jobs(env):
        assert time.monotonic() < deadline and process.poll() is None, "the sweep did not get going"
        time.sleep(0.1)
    return jobs(env)[0]


@pytest.mark.simgrid
class TestSlurmSweeps:
    def test_the_same_rows_as_the_local_engine(self, tmp_path: Path, slurm: dict[str, str]) -> None:
        path = write(tmp_path, PINGPONG)
        status, stderr = finish(sweep(path, tmp_path / "slurm", slurm))
        assert status == 0, stderr
        assert "on 1 slurm job(s) of 1 core(s)" in stderr and "joined" in stderr
        local = subprocess.run(
            [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(path), "--workers", "2",
             "--results", str(tmp_path / "local" / "results"), "--cache", str(tmp_path / "local" / "cache")],
            cwd=REPO, capture_output=True, text=True, timeout=SWEEP_TIMEOUT_S,
        )  # fmt: skip
        assert local.returncode == 0, local.stderr
        on_slurm = read_table(tmp_path / "slurm" / "results" / "pp" / "points.parquet")
        at_home = read_table(tmp_path / "local" / "results" / "pp" / "points.parquet")
        assert len(on_slurm) == len(at_home) == 8
        for a, b in zip(on_slurm, at_home, strict=True):
            assert {k: v for k, v in a.items() if k not in COSTS} == {k: v for k, v in b.items() if k not in COSTS}
            assert a["oneway_s_max"] == pytest.approx(expected_oneway(a, a["size"]), rel=1e-9)
        assert list((tmp_path / "slurm" / "results" / ".jobs").glob("*.out"))  # the job's own output

    def test_a_study_on_slurm_gives_the_local_results(self, tmp_path: Path, slurm: dict[str, str]) -> None:
        """scripts/repro takes the sweep's engine options: the quick sanity study's simulated values on Slurm are the
        local run's, value for value."""
        outputs = {}
        for where, extra in (("slurm", ["--slurm", "--cores", "2", "--scheduler-host", "127.0.0.1"]), ("local", [])):
            done = subprocess.run(
                [sys.executable, "-m", "study_runner", "sanity-alpha-beta", "--quick", *extra,
                 "--results", str(tmp_path / where), "--cache", str(tmp_path / where / "cache")],
                cwd=REPO, env=slurm, capture_output=True, text=True, timeout=SWEEP_TIMEOUT_S,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            summary = json.loads((tmp_path / where / "sanity-alpha-beta" / "summary.json").read_text())
            outputs[where] = [(check["id"], check["simulated"], check["pass"]) for check in summary["checks"]]
        assert outputs["slurm"] == outputs["local"] and all(ok for _, _, ok in outputs["slurm"])

    def test_a_sweep_of_shared_machines_gives_the_local_rows(self, tmp_path: Path, slurm: dict[str, str]) -> None:
        """Jobs in a sweep (``run.neighbours``): an all-to-all of 16 ranks beside a random-permutation background on
        a 4x4x2 torus, its hosts the first 16 (a plane of its own: exactly 1) or drawn at random (slower), on Slurm
        and locally: the same rows."""
        path = write(tmp_path, SHARED_SWEEP)
        rows = {}
        for where, extra in (("slurm", ("--slurm", "--scheduler-host", "127.0.0.1")), ("local", ("--workers", "2"))):
            out = tmp_path / where
            command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(path), *extra,
                       "--results", str(out / "results"), "--cache", str(out / "cache")]  # fmt: skip
            done = subprocess.run(command, cwd=REPO, env=slurm, capture_output=True, text=True, timeout=SWEEP_TIMEOUT_S)
            assert done.returncode == 0, done.stderr
            rows[where] = read_table(tmp_path / where / "results" / "shared" / "points.parquet")
        assert [{k: v for k, v in row.items() if k not in COSTS} for row in rows["slurm"]] == [
            {k: v for k, v in row.items() if k not in COSTS} for row in rows["local"]
        ]
        slowdown = {row["allocation"]: row["slowdown"] for row in rows["slurm"]}
        assert slowdown["contiguous"] == 1.0 and slowdown["random:1"] > 1.05, slowdown
        assert all(row["background_ranks"] == 16 for row in rows["slurm"])

    @pytest.mark.parametrize("fault", ["scancel", "kill worker"])
    def test_a_lost_job_loses_no_point(self, tmp_path: Path, slurm: dict[str, str], fault: str) -> None:
        """The job is cancelled, or its worker killed, while it simulates: a new job takes over, every point is
        done once, and the progress says what happened."""
        process = sweep(write(tmp_path, LONG_POINTS), tmp_path, slurm)
        job = when_some_points_are_done(tmp_path, process, slurm)
        if fault == "scancel":
            subprocess.run(["scancel", job], check=True, env=slurm)
        else:
            pids = subprocess.run(["scontrol", "listpids", job], capture_output=True, text=True, env=slurm).stdout
            workers = [int(line.split()[0]) for line in pids.splitlines()[1:] if "dask_worker" in _cmdline(line)]
            assert workers, pids
            os.kill(workers[0], signal.SIGKILL)
        status, stderr = finish(process)
        assert status == 0, stderr
        assert "left (its job ended or was cancelled, or it was killed)" in stderr
        assert stderr.count("joined") >= 2
        summary = json.loads((tmp_path / "results" / "pp" / "sweep.json").read_text())
        assert summary["points"] == 16 and summary["simulated"] == 16 and summary["cached"] == 0
        table = read_table(tmp_path / "results" / "pp" / "points.parquet")
        assert sorted(row["point"] for row in table) == list(range(16))
        for row in table:
            assert row["oneway_s_max"] == pytest.approx(expected_oneway(row, row["size"]), rel=1e-9)

    def test_a_killed_sweep_resumes_from_the_cache(self, tmp_path: Path, slurm: dict[str, str]) -> None:
        """SIGKILL the sweep while its job simulates: the rerun simulates only what the cache lacks."""
        path = write(tmp_path, LONG_POINTS)
        process = sweep(path, tmp_path, slurm)
        when_some_points_are_done(tmp_path, process, slurm)
        process.kill()
        process.communicate()
        finished = len(cached_entries(tmp_path))
        assert 3 <= finished < 16 and not (tmp_path / "results" / "pp").exists()
        status, stderr = finish(sweep(path, tmp_path, slurm))
        assert status == 0, stderr
        summary = json.loads((tmp_path / "results" / "pp" / "sweep.json").read_text())
        assert (summary["cached"], summary["simulated"]) == (finished, 16 - finished)

    def test_a_refused_job_is_one_error(self, tmp_path: Path, slurm: dict[str, str]) -> None:
        status, stderr = finish(sweep(write(tmp_path, PINGPONG), tmp_path, slurm, "--memory", "100000GiB"))
        assert status == 2
        assert stderr.strip().splitlines()[-1] == (
            "scripts/sweep: error: slurm would not take the job: allocation failure: Requested node configuration "
            "is not available"
        )
        assert not (tmp_path / "results" / "pp").exists() and not cached_entries(tmp_path)
        assert not jobs(slurm)

    def test_an_unreachable_cluster_is_one_error(self, tmp_path: Path) -> None:
        directory = tmp_path / "gone"
        assert local_slurm("start", str(directory)).returncode == 0
        assert local_slurm("stop", str(directory)).returncode == 0
        env = {**os.environ, "SLURM_CONF": str(directory / "slurm.conf")}
        status, stderr = finish(sweep(write(tmp_path, PINGPONG), tmp_path, env))
        assert status == 2
        assert "slurm would not take the job: allocation failure: Unable to contact slurm controller" in stderr
        assert not (tmp_path / "results" / "pp").exists()


def _cmdline(listpids_line: str) -> str:
    """The command line of the process a ``scontrol listpids`` line names ('' if it has gone)."""
    try:
        return Path(f"/proc/{listpids_line.split()[0]}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (OSError, ValueError, IndexError):
        return ""


class TestLocalSlurmScript:
    def test_start_is_idempotent_and_survives_a_killed_cluster(self, tmp_path: Path) -> None:
        directory = str(tmp_path / "cluster")
        try:
            assert local_slurm("start", directory).returncode == 0
            again = local_slurm("start", directory)
            assert again.returncode == 0 and "already running" in again.stderr
            assert local_slurm("status", directory).stdout.strip() == "idle"
            for daemon in ("slurmd", "slurmctld", "munged"):  # killed as the OOM killer or a reboot would
                os.kill(int((tmp_path / "cluster" / f"{daemon}.pid").read_text()), signal.SIGKILL)
            time.sleep(0.5)
            assert local_slurm("status", directory).returncode == 1
            restarted = local_slurm("start", directory)
            assert restarted.returncode == 0 and "running in" in restarted.stderr, restarted.stderr
        finally:
            local_slurm("stop", directory)
        assert local_slurm("status", directory).returncode == 1
        assert (tmp_path / "cluster" / "log" / "slurmctld.log").stat().st_size > 0  # kept for debugging

    def test_it_never_touches_the_systems_slurm(self, tmp_path: Path) -> None:
        assert local_slurm("env", str(tmp_path)).stdout == f"export SLURM_CONF={tmp_path}/slurm.conf\n"
        text = LOCAL_SLURM.read_text()
        assert "/etc/slurm" not in text and "/etc/munge" not in text and "systemctl" not in text

    def test_bad_usage(self) -> None:
        done = local_slurm("restart")
        assert done.returncode == 2 and done.stderr.startswith("local-slurm: error: usage:")
