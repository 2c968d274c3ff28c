"""Third-party codes built into the cache (``study_runner.simulation.codes``): which apps are third-party codes,
and a clear error for one that is not known."""

from __future__ import annotations

import pytest

from study_runner.errors import StudyError
from study_runner.simulation.codes import COMPILERS
from study_runner.simulation.codes import NAS_SOURCES
from study_runner.simulation.codes import third_party


def test_an_app_of_the_build_is_no_third_party_code() -> None:
    assert third_party("pingpong") is None and third_party("nasty") is None


def test_an_unknown_nas_code_names_the_known_ones() -> None:
    with pytest.raises(StudyError, match=r"unknown third-party code 'nas:cg': known are nas:is, nas:ep, nas:dt"):
        third_party("nas:cg")
    assert set(NAS_SOURCES) == {"is", "ep", "dt"} and set(COMPILERS) == {"smpi", "mpich"}
