"""``scripts/repro`` prepares each study while the previous one's simulations run (``cli._run_studies``): the next
study's platforms are built beside them, not after; a study whose preparation may measure this machine is not
(the measurement would be a busy one); an earlier study's failure removes what was prepared ahead and is the error
reported; a study prepared ahead that fails is reported when its turn comes, after the studies before it ran."""

from __future__ import annotations

import argparse
import threading
from contextlib import ExitStack
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from study_runner import cli
from study_runner.errors import StudyError

WAIT_S = 20.0


class Recorder:
    """Fakes of the pipeline's steps that record what happens, in order, and hold a study's simulations until the
    next study is prepared (or the wait runs out)."""

    def __init__(self, failing_run: str | None = None, failing_prepare: str | None = None) -> None:
        self.events: list[str] = []
        self.closed: list[str] = []
        self.prepared = {name: threading.Event() for name in "ABC"}
        self.failing_run = failing_run
        self.failing_prepare = failing_prepare

    def ready_study(self, study: Any, quick: bool, bin_dir: Path, cache: Any) -> Any:
        self.events.append(f"prepare {study.name}")
        if study.name == self.failing_prepare:
            raise StudyError(f"{study.name}: platform p: a bad parameter")
        scratch = ExitStack()
        scratch.callback(self.closed.append, study.name)
        self.prepared[study.name].set()
        return SimpleNamespace(study=study, scratch=scratch)

    def run_study(self, ready: Any, quick: bool, cache: Any, engine: Any) -> Any:
        name = ready.study.name
        following = chr(ord(name) + 1)
        ahead = following in self.prepared and self.prepared[following].wait(WAIT_S)
        self.events.append(f"run {name} ({following} prepared)" if ahead else f"run {name}")
        with ready.scratch:
            if name == self.failing_run:
                raise StudyError(f"{name}/run: the simulation failed")
        return SimpleNamespace(study=ready.study)

    def install(self, monkeypatch: pytest.MonkeyPatch, measuring: frozenset[str]) -> None:
        monkeypatch.setattr(cli, "ready_study", self.ready_study)
        monkeypatch.setattr(cli, "run_study", self.run_study)
        monkeypatch.setattr(cli, "write_study", lambda ctx, stage: (SimpleNamespace(passed=True), []))
        monkeypatch.setattr(cli, "draw_families", lambda results, stage: [])
        monkeypatch.setattr(cli, "measures_machine", lambda study, quick: study.name in measuring)


def run(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, measuring: frozenset[str] = frozenset()
) -> None:
    recorder.install(monkeypatch, measuring)
    studies: Any = [SimpleNamespace(name=name, title=f"study {name}") for name in "ABC"]
    args = argparse.Namespace(quick=True, full=False, bin=tmp_path, results=tmp_path)
    cli._run_studies(studies, args, cache=None, engine=None, stage=tmp_path)  # type: ignore[arg-type]


def test_the_next_study_is_prepared_while_the_simulations_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    recorder = Recorder()
    run(recorder, monkeypatch, tmp_path)
    assert recorder.events == [
        "prepare A",
        "prepare B",
        "run A (B prepared)",
        "prepare C",
        "run B (C prepared)",
        "run C",
    ]
    assert recorder.closed == ["A", "B", "C"]


def test_a_study_that_may_measure_this_machine_is_prepared_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """B's runs model computation: it is prepared after A's simulations, when nothing else runs."""
    recorder = Recorder()
    recorder.prepared["B"].set()  # so that A's fake run does not wait for a preparation that must not come
    run(recorder, monkeypatch, tmp_path, measuring=frozenset("B"))
    assert recorder.events.index("prepare B") > recorder.events.index("run A (B prepared)")
    assert recorder.events[-2:] == ["run B (C prepared)", "run C"]


def test_a_failure_removes_what_was_prepared_ahead(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    recorder = Recorder(failing_run="A")
    with pytest.raises(StudyError, match=r"^A/run: the simulation failed$"):
        run(recorder, monkeypatch, tmp_path)
    assert recorder.closed == ["A", "B"]  # B was prepared ahead, its work directory removed
    assert "run B" not in " ".join(recorder.events)


def test_a_study_prepared_ahead_fails_in_its_turn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """B's preparation fails while A's simulations run: A still runs to its end, then B's error is the run's."""
    recorder = Recorder(failing_prepare="B")
    recorder.prepared["B"].set()
    with pytest.raises(StudyError, match=r"^B: platform p: a bad parameter$"):
        run(recorder, monkeypatch, tmp_path)
    assert recorder.events[-1] == "run A (B prepared)"
    assert recorder.closed == ["A"]
