"""Measurements of this machine taken while it is busy (``study_runner.simulation.machine_load``): beside CPU hogs,
``scripts/calibrate-compute`` refuses with one line and caches nothing, ``--busy-ok`` measures and flags, a
measurement a run needs is taken, flagged and said once, and every later use of a flagged figure says how to
measure again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from study_runner.simulation import compute
from study_runner.simulation import machine_load
from study_runner.simulation.compute import calibration
from study_runner.simulation.compute import calibration_path
from study_runner.simulation.machine_load import BUSY_CORES
from study_runner.simulation.machine_load import BusyMachine
from study_runner.simulation.machine_load import busy_cores

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def fake_dgemm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The calibration's child prints this VM's idle DGEMM runs instead of timing DGEMM (8 s): what these tests check
    is what is done with a measurement, not the measurement."""
    samples = [8.0e10, 8.2e10, 8.3e10, 8.3e10, 8.4e10, 8.4e10, 8.5e10]
    script = f"import json; print(json.dumps({{'samples': {samples!r}, 'numpy': 'test'}}))"
    monkeypatch.setattr(compute, "_MEASURE", script)


@pytest.fixture
def hogs() -> Iterator[None]:
    """A busy loop on every core of this machine (a synthetic load), stopped afterwards."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    time.sleep(0.5)
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def test_busy_loops_are_counted_as_busy_cores(hogs: None) -> None:
    assert busy_cores() > max(BUSY_CORES, 0.6 * (os.cpu_count() or 1))


def test_a_missing_proc_stat_counts_as_idle(tmp_path: Path) -> None:
    assert busy_cores(0.01, tmp_path / "stat") == 0.0


def test_calibrating_beside_a_cpu_hog_is_refused_and_caches_nothing(hogs: None, tmp_path: Path) -> None:
    env = {**os.environ, "TOPOLAB_CACHE": str(tmp_path)}
    command = [str(REPO / "scripts" / "calibrate-compute"), "--force"]
    refused = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert refused.returncode == 2 and refused.stderr.count("\n") <= 2, refused.stderr
    assert "calibrate-compute: error: this machine is busy: " in refused.stderr and "--busy-ok" in refused.stderr
    assert not calibration_path(tmp_path).exists()


def test_busy_ok_measures_and_flags(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path, fake_dgemm: None) -> None:
    monkeypatch.setenv("TOPOLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(machine_load, "busy_cores", lambda: 1.7)
    assert compute.main(["--force", "--busy-ok"]) == 0
    assert json.loads(calibration_path(tmp_path).read_text())["busy_cores"] == 1.7
    out = capsys.readouterr().out
    assert "MEASURED BUSY (1.7 cores" in out and "scripts/calibrate-compute --force" in out


def test_a_measurement_a_run_needs_is_taken_flagged_and_said_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_dgemm: None
) -> None:
    monkeypatch.setattr(machine_load, "busy_cores", lambda: 1.7)
    monkeypatch.setattr(machine_load, "_warned", set())
    first = calibration(tmp_path)  # none cached: measured now, as a run on this machine would
    assert first is not None and first.busy_cores == 1.7 and "MEASURED BUSY (1.7 cores" in first.describe()
    assert calibration(tmp_path) == first and calibration(tmp_path) == first  # cached: read, and said once
    said = capsys.readouterr().err
    assert "this machine is busy: 1.7 of" in said and "measured and flagged" in said
    assert said.count("compute speed was measured while this machine was busy") == 1


def test_an_idle_machine_is_measured_unflagged(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_dgemm: None
) -> None:
    monkeypatch.setattr(machine_load, "busy_cores", lambda: 0.05)
    measured = compute.calibrate(tmp_path, refuse_busy=True)
    assert measured.busy_cores == 0.05 and "BUSY" not in measured.describe()


def test_refusing_is_one_error_naming_the_figures(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(machine_load, "busy_cores", lambda: 1.25)
    with pytest.raises(BusyMachine, match=r"^this machine is busy: 1\.2 of \d+ cores taken by other work over 0\.5 s"):
        compute.calibrate(tmp_path, refuse_busy=True)
    assert not calibration_path(tmp_path).exists()


def _measuring_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, runs: list[list[float]]) -> None:
    """The DGEMM runs of each calibration's child, in turn: ``runs[i]`` are the samples of the i-th measurement."""
    queue = tmp_path / "runs.json"
    queue.write_text(json.dumps(runs))
    script = (
        f"import json, pathlib; queue = pathlib.Path({str(queue)!r}); runs = json.loads(queue.read_text()); "
        "print(json.dumps({'samples': runs.pop(0), 'numpy': 'test'})); queue.write_text(json.dumps(runs))"
    )
    monkeypatch.setattr(compute, "_MEASURE", script)
    monkeypatch.setattr(machine_load, "busy_cores", lambda: 0.05)
    monkeypatch.setattr(machine_load, "_warned", set())


def test_a_speed_no_core_has_is_measured_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _measuring_runs(monkeypatch, tmp_path, [[3e12] * 7, [5e10] * 7])
    measured = compute.calibrate(tmp_path)
    assert measured.flops == 5e10 and measured.doubts == () and "DOUBTFUL" not in measured.describe()
    said = capsys.readouterr().err
    assert "compute speed looks wrong (speed 3e+03 Gflop/s is outside 2-500 Gflop/s): measuring it again" in said


def test_runs_far_apart_twice_are_kept_flagged_and_said_at_every_use(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spread = [1e10, 3e10, 3e10, 3e10, 3e10, 3e10, 3e10]
    _measuring_runs(monkeypatch, tmp_path, [spread, spread])
    measured = compute.calibrate(tmp_path)
    assert measured.flops == 3e10 and measured.doubts == ("runs spread 3x (1e+10-3e+10)",)
    described = measured.describe()
    assert "DOUBTFUL (runs spread 3x" in described and "scripts/calibrate-compute --force" in described
    assert "measured twice still looks wrong (runs spread 3x" in capsys.readouterr().err
    assert json.loads(calibration_path(tmp_path).read_text())["doubts"] == ["runs spread 3x (1e+10-3e+10)"]
    assert calibration(tmp_path) == measured and calibration(tmp_path) == measured  # read back; said once
    assert capsys.readouterr().err.count("compute speed was doubtful (runs spread 3x") == 1


def test_the_busy_intra_node_path_and_memory_are_doubtful() -> None:
    from study_runner.simulation.node_memory import MemoryBandwidth
    from study_runner.tools.this_machine import IntraNode

    busy = IntraNode(1.33e-3, 1.37e9, {}, "ping-pong", "now")  # issue 61: measured beside other work
    assert busy.find_doubts() == ("latency 1.33e+03 us is outside 0.05-20 us",)
    assert IntraNode(4e-7, 3.7e9, {}, "ping-pong", "now").find_doubts() == ()  # this VM idle
    memory = MemoryBandwidth(2e10, 3e10, 2, (2e10, 2.1e10), (1e10, 3e10), "stream", "now")
    assert memory.find_doubts() == ("all cores' passes spread 3x (1e+10-3e+10)",)
    assert MemoryBandwidth(2e10, 3e10, 2, (2e10, 2.1e10), (2.9e10, 3e10), "stream", "now").find_doubts() == ()
