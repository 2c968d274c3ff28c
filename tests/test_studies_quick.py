"""Every study's --quick reproduction passes, and a rerun is served from the cache bit for bit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from study_runner.study import load_study, study_names
from tests.conftest import REPO

SUMMARY_KEYS = {
    "id",
    "what",
    "published",
    "simulated",
    "unit",
    "rel_error",
    "tolerance",
    "kind",
    "relation",
    "miss",
    "pass",
}


@pytest.mark.parametrize("name", study_names())
def test_quick_study_passes_and_reruns_from_cache(tmp_path: Path, bin_dir: Path, name: str) -> None:
    command = [sys.executable, "-m", "study_runner", name, "--quick",
               "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "cache")]  # fmt: skip
    first = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=1800)
    assert first.returncode == 0, first.stderr
    study_dir = tmp_path / "results" / name
    summary = json.loads((study_dir / "summary.json").read_text())
    assert summary["study"] == name and summary["quick"] is True
    assert summary["checks"] and all(set(c) == SUMMARY_KEYS for c in summary["checks"])
    assert all(c["kind"] in ("calibration", "prediction", "exact") for c in summary["checks"])
    # A check passes, or fails with its miss documented in the study file (reported as MISS).
    assert all(c["pass"] or c["miss"] for c in summary["checks"]), [c for c in summary["checks"] if not c["pass"]]
    assert list(study_dir.glob("*.png")), "every study draws at least one figure"
    assert (tmp_path / "results" / "REPORT.md").is_file()

    outputs = {p.name: p.read_bytes() for p in study_dir.iterdir() if p.suffix in (".json", ".csv")}
    second = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert second.returncode == 0, second.stderr
    runs = len(load_study(name).selected_runs(quick=True))
    assert second.stderr.count(": from cache") == runs
    assert {p.name: p.read_bytes() for p in study_dir.iterdir() if p.suffix in (".json", ".csv")} == outputs
