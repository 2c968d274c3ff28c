"""A study's runs made ready (``study_runner.batch.prepare``): what is wrong with a study is found before
anything is simulated, and a prepared run is keyed by what decides its result, not by its name."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from study_runner.errors import StudyError
from study_runner.simulation import prepared
from study_runner.studies.pipeline import prepare_study
from study_runner.studies.study import load_study
from tests.conftest import REPO
from tests.test_study import GOOD_STUDY
from tests.test_study import write_study


def test_a_missing_binary_is_found_before_any_simulation(tmp_path: Path) -> None:
    study = load_study(write_study(tmp_path, GOOD_STUDY))
    with pytest.raises(StudyError, match=r"mini/pingpong: app binary .*pingpong is missing: run scripts/build"):
        prepare_study(study, False, tmp_path / "no-bin", tmp_path)


def test_a_run_of_your_own_binary_is_the_path_it_gives(tmp_path: Path) -> None:
    # A run's app, like a job's, is a topolab app in build/bin or a path to the user's own binary (the schema says
    # so); a path was looked up under build/bin, and a missing one of the user's told to run scripts/build.
    study = load_study(write_study(tmp_path, GOOD_STUDY.replace('app = "pingpong"', 'app = "./mine"', 1)))
    with pytest.raises(StudyError, match=r"^mini/pingpong: app binary mine not found$"):
        prepare_study(study, False, tmp_path / "no-bin", tmp_path)


def test_ranks_that_do_not_fit_the_platform(tmp_path: Path, bin_dir: Path) -> None:
    study = load_study(write_study(tmp_path, GOOD_STUDY.replace("ranks = 2", "ranks = 3", 1)))
    with pytest.raises(StudyError, match=r"mini/pingpong: 3 ranks do not fit on 2 hosts"):
        prepare_study(study, False, bin_dir, tmp_path)


def test_the_key_is_what_decides_the_result(tmp_path: Path, bin_dir: Path) -> None:
    """Renaming the study keeps its runs' cache keys (a key is what decides the result); another argument gives
    another one."""
    first = load_study(write_study(tmp_path, GOOD_STUDY))
    renamed = load_study(write_study(tmp_path, GOOD_STUDY.replace('name = "mini"', 'name = "other"')))
    changed = load_study(write_study(tmp_path, GOOD_STUDY.replace('"-s", "1K"', '"-s", "2K"')))
    keys = [
        {run.spec.app: run.key for run in prepare_study(s, False, bin_dir, tmp_path)[1]}
        for s in (first, renamed, changed)
    ]
    assert keys[0]["pingpong"] == keys[1]["pingpong"] != keys[2]["pingpong"]
    assert keys[0]["exchange"] == keys[2]["exchange"]


def test_the_key_is_made_from_the_command(tmp_path: Path, bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever changes the smpirun command changes the key (issue 42: the key was assembled beside the command, so
    a change to ``smpirun_command`` would have served stale results); the work directory's path is not in it."""
    study = load_study(write_study(tmp_path, GOOD_STUDY))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    before = {run.spec.app: run.key for run in prepare_study(study, False, bin_dir, tmp_path / "a")[1]}
    assert before == {run.spec.app: run.key for run in prepare_study(study, False, bin_dir, tmp_path / "b")[1]}
    original = prepared.smpirun_command
    monkeypatch.setattr(
        prepared, "smpirun_command", lambda *a: [*original(*a)[:-2], "--cfg=smpi/os:1e-6", *original(*a)[-2:]]
    )
    after = {run.spec.app: run.key for run in prepare_study(study, False, bin_dir, tmp_path / "a")[1]}
    assert before.keys() == after.keys() and all(before[app] != after[app] for app in before)


def test_an_option_simgrid_does_not_know_is_found_before_any_simulation(tmp_path: Path, bin_dir: Path) -> None:
    """Each distinct option set is checked by SimGrid when ``scripts/repro`` loads its studies (issue 62), so that a
    reproduction stops before its first study runs, and again when a study is prepared (issue 42: only smpirun-on
    did; a study or sweep with a typo aborted its first simulation with a C++ backtrace)."""
    bad = GOOD_STUDY.replace('"-w", "0"]', '"-w", "0"]\noptions = ["--cfg=network/modle:CM02"]', 1)
    path = write_study(tmp_path, bad)
    unknown = "--cfg: SimGrid has no option 'network/modle' (smpirun --help-cfg lists them)"
    assert load_study(path).simgrid_options_problem() == f"{path}: run pingpong: {unknown}"
    done = subprocess.run(
        [sys.executable, "-m", "study_runner", "sanity-alpha-beta", str(path), "--results", str(tmp_path / "r"),
         "--cache", str(tmp_path / "c")],
        capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"scripts/repro: error: {path}: run pingpong: {unknown}"
    ]
    assert not (tmp_path / "r").exists()  # sanity-alpha-beta, first, did not run
    study = load_study(write_study(tmp_path, GOOD_STUDY))
    study = replace(study, runs=tuple(replace(run, options=("--cfg=network/modle:CM02",)) for run in study.runs))
    with pytest.raises(StudyError, match=r"mini/pingpong: --cfg: SimGrid has no option 'network/modle'"):
        prepare_study(study, False, bin_dir, tmp_path)
