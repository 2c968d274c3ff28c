"""The report (``study_runner.studies.report``): every check listed, documented misses shown as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study_runner.studies.checks import NO_RELATIVE_ERROR
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
    assert "| demo | 1/2 | pass with a documented miss |" in text
    assert "| pass with a documented miss |\n" in text and "- **Miss `a.miss`**: because" in text


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


def _write_summary(results: Path, study: str, checks: list[Check]) -> None:
    (results / study).mkdir()
    (results / study / "summary.json").write_text(summary_json(study, study.title(), False, checks))


def test_a_study_that_passes_only_by_documented_misses_says_so(tmp_path: Path) -> None:
    """Issue 59: "1/1 studies pass" hid that the pass rested on documented misses."""
    documented = {"miss": "explained", "miss_range": (0.2, 0.3)}
    missed = [Check(f"m.{i}", "m", 1.0, 0.25, "", 0.1, "prediction", **documented) for i in range(2)]  # type: ignore[arg-type]
    passing = Check("p.one", "p", 1.0, 1.0, "", 0.1, "exact")
    _write_summary(tmp_path, "clean", [passing])
    _write_summary(tmp_path, "one", [passing, missed[0]])
    _write_summary(tmp_path, "two", missed)
    text = write_report(tmp_path).read_text()
    assert "\n3/3 studies pass (2 with documented misses).\n" in text
    assert "| clean | 1/1 | pass |" in text
    assert "| one | 1/2 | pass with a documented miss |" in text
    assert "| two | 0/2 | pass with 2 documented misses |" in text
    assert "| `m.0` | prediction | 1 | 0.25 |  | 75.00% | within 10.00% | pass with a documented miss |" in text
    assert "MISS" not in text


def test_no_relative_error_against_a_published_zero(tmp_path: Path) -> None:
    """Issue 59: ``published 0 ... rel. error inf%`` was shown beside a pass; the difference is absolute there."""
    above_zero = Check("z.above", "z", 0.0, 0.25, "s", 0.0, "prediction", relation="above")
    exact_zero = Check("z.exact", "z", 0.0, 0.0, "s", 0.0, "exact")
    _write_summary(tmp_path, "zero", [above_zero, exact_zero])
    text = write_report(tmp_path).read_text()
    assert "inf" not in text
    assert "| `z.above` | prediction | 0 | 0.25 | s | abs. diff. 0.25 † | > published | pass |" in text
    assert "| `z.exact` | exact | 0 | 0 | s | abs. diff. 0 † | within 0.00% | pass |" in text
    assert f"\n† {NO_RELATIVE_ERROR}\n" in text
    _write_summary(tmp_path, "nonzero", [Check("n.x", "n", 2.0, 2.5, "s", 0.5, "prediction")])
    nonzero = write_report(tmp_path).read_text().split("## nonzero", 1)[1].split("\n## ", 1)[0]
    assert "| 25.00% |" in nonzero and "†" not in nonzero  # no footnote where no published value is 0
