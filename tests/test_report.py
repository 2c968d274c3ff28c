"""The report (``study_runner.studies.report``): every check listed, documented misses shown as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study_runner.studies.checks import Check
from study_runner.studies.checks import summary_json
from study_runner.studies.report import write_report


def test_a_documented_miss_is_reported_not_hidden(tmp_path: Path) -> None:
    documented = {"relation": "at_least", "miss": "because", "miss_range": (0.2, 0.3)}
    missed = Check("a.miss", "m", 1.0, 0.25, "", 0.0, "prediction", **documented)  # type: ignore[arg-type]
    assert not missed.passed and missed.accepted and missed.verdict == "MISS"
    assert missed.as_dict()["pass"] is False and missed.as_dict()["miss"] == "because"
    assert "miss_range" not in missed.as_dict()
    fixed = Check("a.miss", "m", 1.0, 1.0, "", 0.0, "prediction", **documented)  # type: ignore[arg-type]
    assert fixed.passed and fixed.verdict == "pass"  # a miss that disappears shows as a pass
    worse = Check("a.miss", "m", 1.0, 0.15, "", 0.0, "prediction", **documented)  # type: ignore[arg-type]
    assert not worse.accepted and worse.verdict == "FAIL" and worse.as_dict()["miss"] == ""  # left its range
    with pytest.raises(ValueError, match="needs both its explanation and its miss_range"):
        Check("a.miss", "m", 1.0, 0.25, "", 0.0, "prediction", miss="because")
    failed = Check("a.fail", "f", 1.0, 0.25, "", 0.0, "prediction", relation="at_least")
    assert not failed.accepted and failed.verdict == "FAIL"
    assert json.loads(summary_json("s", "t", False, [missed]))["passed"] is True
    assert json.loads(summary_json("s", "t", False, [missed, failed]))["passed"] is False
    study = tmp_path / "demo"
    study.mkdir()
    (study / "summary.json").write_text(summary_json("demo", "Demo", False, [missed, fixed]))
    text = write_report(tmp_path).read_text()
    assert "| demo | 1/2 | pass, 1 documented miss(es) |" in text
    assert "MISS (documented)" in text and "- **Miss `a.miss`**: because" in text


def test_report_lists_every_check(tmp_path: Path) -> None:
    study = tmp_path / "demo"
    study.mkdir()
    checks = [
        Check("a.one", "one", 1.0, 1.0, "s", 0.01, "exact").as_dict(),
        Check("a.two", "two", 1.0, 2.0, "s", 0.01, "prediction").as_dict(),
    ]
    (study / "summary.json").write_text(json.dumps({"study": "demo", "title": "Demo", "checks": checks}))
    (study / "fig.png").write_bytes(b"")
    text = write_report(tmp_path).read_text()
    assert "| demo | 1/2 | **FAIL** |" in text
    assert "`a.two` | prediction" in text
    assert "![fig](demo/fig.png)" in text
