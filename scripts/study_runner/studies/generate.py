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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from study_runner.errors import StudyError
from study_runner.studies.templates import assignments, axes, render

__all__ = ["GeneratedRun", "generated_runs"]

_KEYS = {"name", "grid", "zip", "run"}


@dataclass(frozen=True)
class GeneratedRun:
    """One point of a ``[[generate]]`` grid: its run table (rendered, not yet validated) and its variables."""

    block: str
    variables: dict[str, Any]
    table: dict[str, Any]


def generated_runs(raw: object, functions: Mapping[str, Callable[..., Any]], where: str) -> list[GeneratedRun]:
    """Every run of the file's ``[[generate]]`` tables, grid by grid, the last axis varying fastest."""
    if not isinstance(raw, list) or not all(isinstance(table, dict) for table in raw):
        raise StudyError(f"{where}: generate must be an array of tables ([[generate]])")
    runs: list[GeneratedRun] = []
    names: set[str] = set()
    for number, table in enumerate(raw, 1):
        label = f"{where}: generate[{number}]"
        unknown = sorted(set(table) - _KEYS)
        if unknown:
            raise StudyError(f"{label} has unknown key {unknown[0]!r}; known: {', '.join(sorted(_KEYS))}")
        name, template = table.get("name"), table.get("run")
        if not isinstance(name, str) or not name or name in names:
            raise StudyError(f"{label}: name must be a non-empty string used by no other grid, got {name!r}")
        names.add(name)
        if not isinstance(template, dict):
            raise StudyError(f"{label} ({name}): run must be a table of templates ([generate.run])")
        try:
            grid = assignments(axes(table, f"{label} ({name})"))
        except StudyError as err:
            raise StudyError(f"{label} ({name}): {err}") from None
        for variables in grid:
            try:
                rendered = {key: render(value, variables, functions) for key, value in template.items()}
            except StudyError as err:
                point = ", ".join(f"{k}={v!r}" for k, v in variables.items())
                raise StudyError(f"{label} ({name}), point {point}: {err}") from None
            runs.append(GeneratedRun(name, variables, rendered))
    return runs
