"""Generated runs: a study's many similar runs written as a grid in its file, in the sweep grammar.

A ``[[generate]]`` table declares axes (``[generate.grid]``, ``[[generate.zip]]``, as in a sweep file) and one
run table, ``[generate.run]``, whose values are templates (``study_runner.studies.templates``); every point of the grid
gives one run, validated exactly like a ``[[runs]]`` table::

    [[generate]]
    name = "fig4"                             # names the grid: the analysis reads its axes (Study.values)
    [generate.grid]
    algorithm = ["snake", "fence"]
    block = [20, 40, 60]
    [generate.run]
    id = "fig4.{algorithm}.S{block}"
    platform = "mesh4x4"
    app = "combine"
    ranks = 16
    args = ["-a", "{algorithm}", "-S", "{block}"]
    quick = "{block <= 40}"                   # a template may be a comparison

A value the paper's model derives (an optimal block size) is a call in a template: the study's analysis
module lists the functions templates may call in ``TEMPLATE_FUNCTIONS``, so the grid stays data and the
model stays code.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from study_runner.errors import StudyError
from study_runner.studies.templates import assignments
from study_runner.studies.templates import axes
from study_runner.studies.templates import render

__all__ = ["GeneratedRun", "generated_runs"]


@dataclass(frozen=True)
class GeneratedRun:
    """One point of a ``[[generate]]`` grid: its run table (rendered, not yet validated) and its variables."""

    block: str
    """The grid's name (``[[generate]]``'s ``name``)."""
    number: int
    """The grid's place among the file's ``[[generate]]`` tables, from 0."""
    variables: dict[str, Any]
    table: dict[str, Any]

    @property
    def label(self) -> str:
        """``point a=1, b='x'``: where the run is in its grid."""
        return "point " + ", ".join(f"{k}={v!r}" for k, v in self.variables.items())


def generated_runs(
    raw: list[dict[str, Any]], functions: Mapping[str, Callable[..., Any]], where: str
) -> list[GeneratedRun]:
    """Every run of the file's ``[[generate]]`` tables (their form checked by the study's schema), grid by grid, the
    last axis varying fastest."""
    runs: list[GeneratedRun] = []
    names: set[str] = set()
    for number, table in enumerate(raw):
        label = f"{where}: generate[{number}]"
        name, template = table["name"], table["run"]
        if not name or name in names:
            raise StudyError(f"{label}: name must be a non-empty string used by no other grid, got {name!r}")
        names.add(name)
        try:
            grid = assignments(axes(table, f"{label} ({name})"))
        except StudyError as err:
            raise StudyError(f"{label} ({name}): {err}") from None
        for variables in grid:
            try:
                rendered = {key: render(value, variables, functions) for key, value in template.items()}
            except StudyError as err:
                point = GeneratedRun(name, number, variables, {}).label
                raise StudyError(f"{label} ({name}), {point}: {err}") from None
            runs.append(GeneratedRun(name, number, variables, rendered))
    return runs
