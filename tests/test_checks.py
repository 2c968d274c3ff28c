"""Checks (``study_runner.studies.checks``): tolerances, one-sided relations, NaN, kinds, documented misses."""

from __future__ import annotations

import math

import pytest

from study_runner.studies.checks import Check


class TestChecks:
    def test_within_tolerance(self) -> None:
        check = Check("x", "x", published=2.0, simulated=2.015, unit="s", tolerance=0.01, kind="prediction")
        assert check.rel_error == pytest.approx(0.0075)
        assert check.passed

    def test_outside_tolerance(self) -> None:
        check = Check("x", "x", published=2.0, simulated=1.9, unit="s", tolerance=0.01, kind="prediction")
        assert not check.passed
        assert check.as_dict()["pass"] is False

    def test_nan_never_passes(self) -> None:
        assert not Check("x", "x", 1.0, math.nan, "s", 10.0, "exact").passed
        assert not Check("x", "x", 1.0, math.nan, "s", 10.0, "exact", relation="above").passed

    def test_at_least_is_one_sided(self) -> None:
        def at_least(simulated: float) -> bool:
            return Check("x", "x", 3770.0, simulated, "MiB/s", 0.10, "prediction", relation="at_least").passed

        assert at_least(3393.0) and at_least(5000.0)
        assert not at_least(3392.9)

    def test_above_is_strict(self) -> None:
        assert Check("x", "x", 1.0, 1.0001, "", 0.0, "prediction", relation="above").passed
        assert not Check("x", "x", 1.0, 1.0, "", 0.0, "prediction", relation="above").passed
        with pytest.raises(ValueError, match="relation must be one of"):
            Check("x", "x", 1.0, 1.0, "", 0.0, "prediction", relation="below")

    def test_kind_is_validated(self) -> None:
        with pytest.raises(ValueError, match="kind must be one of"):
            Check("x", "x", 1.0, 1.0, "s", 0.1, "guess")
