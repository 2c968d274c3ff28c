"""``scripts/repro --list`` (``study_runner.studies.listing``): one line per study, its name first, then the wall
times its docs record for the default run and for --quick (never invented: "not measured" where none is), then its
title."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from study_runner.cli import main
from study_runner.paths import REPO
from study_runner.studies.listing import NOT_MEASURED
from study_runner.studies.listing import study_listing
from study_runner.studies.study import study_names


def test_list_prints_each_study_with_its_times_and_title(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == study_names()  # names stay the first field: `cut`, `awk`, loops
    for line in lines:
        name = line.split()[0]
        data = tomllib.loads((REPO / "studies" / f"{name}.toml").read_text(encoding="utf-8"))
        assert line.endswith(data["title"]), line
        assert re.search(r"\bdefault ~[0-9.]+ (s|min)\b", line), line
        assert re.search(rf"--quick (~[0-9.]+ (s|min)|{NOT_MEASURED})", line), line


def test_every_shipped_study_records_where_its_times_were_measured() -> None:
    """Each figure comes from a doc: the study file's ``source`` names files that exist, and the default figure
    is the one the cited benchmark table gives for the study."""
    for path in sorted((REPO / "studies").glob("*.toml")):
        measured = tomllib.loads(path.read_text(encoding="utf-8"))["measured_wall_time"]
        cited = re.findall(r"docs/[\w./-]+\.md", measured["source"])
        assert cited and all((REPO / doc).is_file() for doc in cited), path.name
        table = (REPO / cited[0]).read_text(encoding="utf-8")
        assert re.search(rf"^\| {re.escape(path.stem)} \| [0-9.]+ \| {measured['default_s']:.1f} \|", table, re.M)


def test_a_study_without_measurements_says_not_measured(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('name = "mine"\ntitle = "My study"\n', encoding="utf-8")
    timed = '[measured_wall_time]\ndefault_s = 90\nquick_s = 4\nsource = "docs/studies.md"\n'
    (tmp_path / "timed.toml").write_text(f'name = "timed"\ntitle = "Timed"\n{timed}', encoding="utf-8")
    (tmp_path / "broken.toml").write_text("name = \n", encoding="utf-8")
    broken, mine, timed_line = study_listing(tmp_path)
    assert mine.split() == ["mine", "default", "not", "measured", "--quick", "not", "measured", "My", "study"]
    assert timed_line.split() == ["timed", "default", "~1.5", "min", "--quick", "~4", "s", "Timed"]
    assert broken.split()[:2] == ["broken", "error:"]
