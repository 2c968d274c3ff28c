"""What an analysis receives (``study_runner.studies.context``): a run it asks for that did not run, or its link
bytes, is one clear error naming the study and the run."""

from __future__ import annotations

import pytest

from study_runner.errors import StudyError
from study_runner.studies.context import StudyContext
from study_runner.studies.study import load_study


def test_asking_for_a_run_that_did_not_run_names_it() -> None:
    ctx = StudyContext(load_study("sanity-alpha-beta"), False, {}, {})
    with pytest.raises(StudyError, match=r"sanity-alpha-beta: analysis asks for run 'pingpong', which did not run"):
        ctx.records("pingpong")
    with pytest.raises(StudyError, match=r"analysis asks for the link bytes of run 'pingpong', which did not run"):
        ctx.traced_link_bytes("pingpong")
    assert ctx.declared_checks({}) == []  # no run ran: no check is made


def test_a_derived_value_is_computed_once_per_key() -> None:
    ctx = StudyContext(load_study("sanity-alpha-beta"), False, {}, {})
    calls: list[str] = []

    def derive(key: str) -> str:
        calls.append(key)
        return key.upper()

    assert [ctx.once(("loads", k), lambda k=k: derive(k)) for k in ("a", "b", "a", "a", "b")] == list("ABAAB")
    assert calls == ["a", "b"]
