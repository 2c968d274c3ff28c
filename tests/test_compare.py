"""study_runner.studies.compare: which simulated values differ between two results trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from study_runner.studies.checks import Check
from study_runner.studies.checks import summary_json
from study_runner.studies.compare import Difference
from study_runner.studies.compare import compare_studies
from study_runner.studies.compare import main

HEADER = "run,platform,sim_wall_s,sim_peak_memory_mib,bytes,time_s\n"


def write_study(root: Path, runs: str, simulated: float, passed: bool = True, header: str = HEADER) -> Path:
    study = root / "demo"
    study.mkdir(parents=True)
    (study / "runs.csv").write_text(header + runs)
    published = simulated if passed else 2 * simulated  # tolerance 0: passes exactly when equal
    checks = [
        Check("c1", "c1", published, simulated, "s", 0.0, "exact"),
        Check("c2", "c2", 2.0, 2.0, "s", 0.0, "exact"),
    ]
    (study / "summary.json").write_text(summary_json("demo", "Demo", False, checks))
    return root


def test_identical_trees_differ_in_nothing_but_cost(tmp_path: Path) -> None:
    old = write_study(tmp_path / "old", "a,p,1.0,10,8,0.5\na,p,1.0,10,16,1.0\n", 0.25)
    new = write_study(tmp_path / "new", "a,p,9.0,99,8,0.50\na,p,9.0,99,16,1.0\n", 0.25)  # 0.50 == 0.5
    assert compare_studies(old, new, "demo") == []
    assert main([str(old), str(new)]) == 0


def test_moved_values_are_listed_record_by_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write_study(tmp_path / "old", "a,p,1,1,8,0.5\na,p,1,1,16,1.0\nb,p,1,1,8,2.0\n", 0.25)
    new = write_study(tmp_path / "new", "a,p,1,1,8,0.5\na,p,1,1,16,1.5\n", 0.2, passed=False)
    found = compare_studies(old, new, "demo")
    assert found == [
        Difference("demo", "check c1 simulated", "0.25", "0.2"),
        Difference("demo", "check c1 pass", "True", "False"),
        Difference("demo", "run a record 1 time_s", "1.0", "1.5"),
        Difference("demo", "run b", "present", "absent"),
    ]
    assert found[2].relative == pytest.approx(0.5) and found[3].relative is None
    markdown = tmp_path / "moved.md"
    assert main([str(old), str(new), "--markdown", str(markdown)]) == 1
    assert "demo: run a record 1 time_s: 1.0 -> 1.5 (+5.000e-01)" in capsys.readouterr().out
    assert "| demo | run a record 1 time_s | 1.0 | 1.5 | +5.00e-01 |" in markdown.read_text()


def test_a_new_column_is_one_difference(tmp_path: Path) -> None:
    old = write_study(tmp_path / "old", "a,p,1,1,8,0.5\n", 0.25)
    new = write_study(tmp_path / "new", "a,p,1,1,8,0.5,3\n", 0.25, header=HEADER.strip() + ",phases\n")
    assert compare_studies(old, new, "demo") == [Difference("demo", "runs.csv column phases", "absent", "present")]


def test_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write_study(tmp_path / "old", "a,p,1,1,8,0.5\n", 0.25)
    assert main([str(old), str(tmp_path / "missing")]) == 2
    assert "is not a results directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main([str(old), str(tmp_path / "empty"), "--study", "demo"]) == 2
    assert "has no summary.json and runs.csv" in capsys.readouterr().err
