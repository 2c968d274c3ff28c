"""A sweep's last line reports this run's own counts: two runs of one sweep on one cache put their results in the
same place, and the line read back from the directory could be the other run's (the crash-safety soak found a pair
whose two sweeps each said 0 of 8 points simulated, one of which had simulated all 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study_runner.sweeps import sweep_cli

SWEEP = """
name = "line"
title = "two pings"
[grid]
size = [1000, 10000]
[platform]
family = "crossbar"
hosts = 2
[run]
app = "pingpong"
ranks = 2
args = ["-s", "{size}", "-i", "10"]
"""


def test_the_last_line_counts_this_runs_simulations(
    tmp_path: Path, bin_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = sweep_cli.run_sweep

    def then_another_run_replaces_it(*args, **kwargs):  # the other run's summary lands after this run's
        final, summary = real(*args, **kwargs)
        (final / "sweep.json").write_text(json.dumps({**summary, "simulated": 0, "cached": 2}), encoding="utf-8")
        return final, summary

    monkeypatch.setattr(sweep_cli, "run_sweep", then_another_run_replaces_it)
    (tmp_path / "line.toml").write_text(SWEEP, encoding="utf-8")
    argv = [str(tmp_path / "line.toml"), "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "cache")]
    assert sweep_cli.main([*argv, "--bin", str(bin_dir), "--workers", "1"]) == 0
    assert "line: 2 points (2 simulated, 0 from cache)" in capsys.readouterr().err
