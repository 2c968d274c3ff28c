"""The grid grammar of study and sweep files (``study_runner.studies.templates``): expressions keep their type, parts
are formatted into strings, functions, and only arithmetic on known variables."""

from __future__ import annotations

import pytest

from study_runner.errors import StudyError
from study_runner.studies.templates import assignments
from study_runner.studies.templates import evaluate
from study_runner.studies.templates import render


class TestTemplates:
    def test_expression_keeps_its_type(self) -> None:
        assert render("{side * side}", {"side": 4}) == 16
        assert render("{n / 4}", {"n": 10}) == 2.5
        assert render("{name}", {"name": "fence"}) == "fence"

    def test_parts_are_formatted_into_the_string(self) -> None:
        assert render("{w}x{h}", {"w": 4, "h": 2}) == "4x2"
        assert render("{{literal}} {w}", {"w": 1}) == "{literal} 1"
        assert render(["-d", "{replace(d, 'x', ',')}"], {"d": "4x4x2"}) == ["-d", "4,4,2"]
        assert render(["-r", "{r}"], {"r": 0.5}) == ["-r", "0.5"]

    def test_values_within_the_bound_are_computed(self) -> None:
        assert evaluate("2 ** 1000", {}) == 1 << 1000
        assert evaluate("'ab' * 3 + str(n) * 2", {"n": 4}) == "ababab44"
        assert evaluate("2 ** -3", {}) == 0.125

    def test_a_grid_is_counted_before_it_is_expanded(self) -> None:
        axis = [{"v": value} for value in range(1000)]
        assert len(assignments([axis, [{"w": 1}, {"w": 2}]])) == 2000
        with pytest.raises(StudyError, match=r"the grid has 1,000,000,000 points \(1000 x 1000 x 1000\): more than "):
            assignments([axis, axis, axis])  # 10^9 points: refused at once, not expanded to a MemoryError

    def test_functions(self) -> None:
        assert evaluate("max(1, n // 128)", {"n": 100}) == 1
        assert evaluate("min(a, b) + 2 ** 3 % 5", {"a": 7, "b": 9}) == 10

    @pytest.mark.parametrize(
        ("expression", "message"),
        [
            ("__import__('os')", "only arithmetic"),
            ("n.real", "only arithmetic"),
            ("[n]", "only arithmetic"),
            ("max(n, key=abs)", "only arithmetic"),
            ("m + 1", "unknown variable 'm'"),
            ("n +", "malformed expression"),
            ("n // 0", "cannot be evaluated"),
            ("n + 'x'", "cannot be evaluated"),
            # bounded: refused before the value is computed, not after a hang or a MemoryError
            ("10 ** 10 ** 8", "more than 10000 digits or characters"),
            ("n ** 20000", "more than 10000 digits or characters"),
            ("'ab' * 10 ** 8", "more than 10000 digits or characters"),
            ("10 ** 8 * 'ab'", "more than 10000 digits or characters"),
            ("str(n) * 20000", "more than 10000 digits or characters"),
            ("replace(replace(replace(str(10 ** 999), '0', '0000'), '0', '0000'), '0', '00')", "more than 10000"),
            ("2.0 ** 10 ** 6", "cannot be evaluated"),
        ],
    )
    def test_only_arithmetic_on_known_variables(self, expression: str, message: str) -> None:
        with pytest.raises(StudyError, match=message):
            evaluate(expression, {"n": 4})
