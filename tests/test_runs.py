"""What one simulation is (``study_runner.batch.runs``): its arguments in full and quick mode."""

from __future__ import annotations

from study_runner.batch.runs import RunSpec


def spec(**changes: object) -> RunSpec:
    fields = {"id": "r", "platform": "p", "app": "pingpong", "ranks": 2, "args": ("-s", "1M"), "quick_args": (),
              "quick": True, "options": (), "placement": None, "timeout": 60.0}  # fmt: skip
    return RunSpec(**{**fields, **changes})  # type: ignore[arg-type]


def test_quick_arguments_replace_the_full_ones_under_quick_only() -> None:
    run = spec(quick_args=("-s", "1K"))
    assert run.arguments(quick=False) == ("-s", "1M") and run.arguments(quick=True) == ("-s", "1K")


def test_without_quick_arguments_quick_runs_the_full_ones() -> None:
    assert spec().arguments(quick=True) == ("-s", "1M")
