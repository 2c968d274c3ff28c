"""Every study's --quick reproduction passes, draws its link-load heatmaps and the family pictures, and a rerun is
served from the cache bit for bit (runs and their traced twins alike)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from generators.families import FAMILIES
from study_runner.studies.study import load_study
from study_runner.studies.study import study_names
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
    # Link-load heatmaps: a static one at least, each captioned (traced ones: exact or a lower bound), all in
    # the report; and a picture of every family in results/families, embedded in the report too.
    heatmaps = sorted(p.name for p in study_dir.glob("heatmap_*.png"))
    assert any(h.startswith("heatmap_static_") for h in heatmaps), "every study draws a static heatmap"
    captions = json.loads((study_dir / "captions.json").read_text())
    assert set(captions) == set(heatmaps)
    traced = [h for h in heatmaps if h.startswith("heatmap_traced_")]
    assert all(("Exact:" in captions[h]) != ("A lower bound" in captions[h]) for h in traced)
    report = (tmp_path / "results" / "REPORT.md").read_text()
    assert all(f"]({name}/{h})\n\n*{captions[h]}*" in report for h in heatmaps)
    assert sorted(p.stem for p in (tmp_path / "results" / "families").glob("*.png")) == sorted(FAMILIES)
    assert all(f"](families/{family}.png)" in report for family in FAMILIES)

    outputs = {p.name: p.read_bytes() for p in study_dir.iterdir() if p.suffix in (".json", ".csv")}
    second = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert second.returncode == 0, second.stderr
    runs = load_study(name).selected_runs(quick=True)
    assert len([run for run in runs if run.trace_links]) == len(traced)  # each traced run is drawn
    assert second.stderr.count(": from cache") == len(runs) + len(traced)  # their traced twins too
    assert "simulated in" not in second.stderr
    assert {p.name: p.read_bytes() for p in study_dir.iterdir() if p.suffix in (".json", ".csv")} == outputs
