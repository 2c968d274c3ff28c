"""Executing prepared runs (``study_runner.batch.execute``): what an app prints is its records, a run is simulated
once and then served from the cache with the same records, bit for bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from study_runner.batch.execute import execute_runs
from study_runner.batch.execute import parse_records
from study_runner.errors import StudyError
from study_runner.simulation.cache import Cache
from study_runner.studies.pipeline import prepare_study
from study_runner.studies.study import load_study
from tests.test_study import GOOD_STUDY
from tests.test_study import write_study


@pytest.mark.parametrize(
    ("stdout", "message"),
    [
        ('{"a": 1}\nnot json\n', r"line 2 of the app's stdout is not JSON: 'not json'"),
        ("[1, 2]\n", r"line 1 of the app's stdout is not a JSON object"),
        ("\n\n", r"the app printed no result"),
    ],
)
def test_what_an_app_prints_is_json_objects(stdout: str, message: str) -> None:
    with pytest.raises(StudyError, match=message):
        parse_records(stdout, "demo/run")
    assert parse_records('{"a": 1}\n\n{"b": 2.5}\n', "demo/run") == [{"a": 1}, {"b": 2.5}]


@pytest.mark.simgrid
def test_a_run_is_simulated_once_then_served_from_the_cache(tmp_path: Path, bin_dir: Path) -> None:
    study = load_study(write_study(tmp_path, GOOD_STUDY))
    cache = Cache(tmp_path / "cache")
    _, runs = prepare_study(study, False, bin_dir, tmp_path)
    first = execute_runs(runs, cache, 1)
    again = execute_runs(prepare_study(study, False, bin_dir, tmp_path)[1], cache, 1)
    assert not any(result.cached for result in first.values()) and all(result.cached for result in again.values())
    assert {run: result.records for run, result in again.items()} == {
        run: result.records for run, result in first.items()
    }
    assert set(first) == {"pingpong", "pingpong.links", "exchange_one", "exchange_two"}  # a traced twin too


@pytest.mark.simgrid
def test_a_quick_run_builds_only_the_platforms_its_runs_use(tmp_path: Path, bin_dir: Path) -> None:
    study = load_study("interference")  # its quick runs leave out the 512-node torus (16 s of XML routes to write)
    used = {spec.platform for spec in study.selected_runs(True)}
    platforms, runs = prepare_study(study, True, bin_dir, tmp_path)
    assert set(platforms) == used and used < set(study.platforms) and "torus-large" not in used
    assert {run.spec.platform for run in runs} == used
    assert not list(tmp_path.glob("torus-large*"))
