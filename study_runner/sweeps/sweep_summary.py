"""A sweep's points as a table on the terminal: the sweep variables and the metrics, aligned, the middle of a big
table left out (``points.csv`` has it all), and with ``--baseline VARIABLE=VALUE`` each metric's speed-up over the
baseline point.

The speed-up of a row is how many times better its metric is than the baseline row's: the baseline's value over the
row's when lower is better (a time), the row's over the baseline's when higher is (a bandwidth). The baseline row of
a row has the baseline value and every other variable equal, except the variables zipped with the baseline's (they
move with it), and is the same record of its point (the first record against the first, ...). A row without a
baseline shows ``-``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from study_runner.errors import StudyError
from study_runner.sweeps.sweep import Sweep
from study_runner.sweeps.sweep_table import INPUT_COLUMNS
from study_runner.sweeps.sweep_table import Row

__all__ = ["Baseline", "format_points", "parse_baseline", "table_metrics", "with_speedups"]

SHOWN_ROWS = 30
"""A table of more rows shows its first ``SHOWN_ROWS - TAIL_ROWS`` and last ``TAIL_ROWS`` rows."""
TAIL_ROWS = 5


@dataclass(frozen=True)
class Baseline:
    """The points the others are compared with: those where ``variable`` has ``value`` (as text)."""

    variable: str
    value: str
    moving: tuple[str, ...]
    """The variables that move with ``variable`` (a ``[[zip]]`` axis): not required equal."""


def parse_baseline(text: str, sweep: Sweep, given: str = "--baseline") -> Baseline:
    """``VARIABLE=VALUE`` naming a variable of the sweep and one of its values; ``StudyError`` otherwise, naming where
    it was ``given`` (the option, or the sweep file's ``output.baseline``)."""
    variable, equals, value = text.partition("=")
    variable, value = variable.strip(), value.strip()
    if not equals or variable not in sweep.variables:
        known = ", ".join(sweep.variables)
        raise StudyError(f"{given} {text!r}: expected VARIABLE=VALUE with a variable of the sweep ({known})")
    values = list(dict.fromkeys(str(point.variables[variable]) for point in sweep.points))
    if value not in values:
        raise StudyError(f"{given} {text!r}: {variable} is never {value!r} (its values: {', '.join(values)})")
    axis = next((axis for axis in sweep.axes if variable in axis), (variable,))
    return Baseline(variable, value, tuple(name for name in axis if name != variable))


def table_metrics(sweep: Sweep, table_rows: Sequence[Row]) -> list[str]:
    """The metrics the table shows: the sweep's ``output.metric``, else every floating-point field of the records."""
    if sweep.metric:
        return [sweep.metric]
    inputs = {*INPUT_COLUMNS, *sweep.variables}
    names = dict.fromkeys(name for row in table_rows for name in row)
    return [
        name
        for name in names
        if name not in inputs
        and not name.startswith("point_")
        and any(isinstance(row.get(name), float) for row in table_rows)
    ]


def _speedup(value: Any, base: Any, better: str) -> float | None:
    numbers = [v for v in (value, base) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)]
    if len(numbers) < 2 or value == 0 or base == 0:
        return None
    return base / value if better == "lower" else value / base


def with_speedups(
    sweep: Sweep, table_rows: Sequence[Row], metrics: Sequence[str], baseline: Baseline
) -> tuple[list[Row], list[str]]:
    """The rows with a ``<metric>_speedup`` column per metric (None without a baseline row), and those columns."""
    fixed = [name for name in sweep.variables if name != baseline.variable and name not in baseline.moving]
    ordinals: dict[Any, int] = {}
    keyed = []
    for row in table_rows:
        ordinal = ordinals[row["point"]] = ordinals.get(row["point"], -1) + 1
        keyed.append(((*(row[name] for name in fixed), ordinal), row))
    bases = {key: row for key, row in keyed if str(row[baseline.variable]) == baseline.value}
    columns = [f"{metric}_speedup" for metric in metrics]
    extended = []
    for key, row in keyed:
        base = bases.get(key)
        speedups = {
            column: None if base is None else _speedup(row.get(metric), base.get(metric), sweep.better)
            for column, metric in zip(columns, metrics, strict=True)
        }
        extended.append({**row, **speedups})
    return extended, columns


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def format_points(table_rows: Sequence[Row], columns: Sequence[str], full_table: Path) -> str:
    """The rows' ``columns`` as aligned text (numbers to the right), at most ``SHOWN_ROWS`` rows, and a last line
    naming ``full_table``."""
    shown: list[Row | None] = list(table_rows)
    if len(table_rows) > SHOWN_ROWS:
        shown = [*table_rows[: SHOWN_ROWS - TAIL_ROWS], None, *table_rows[-TAIL_ROWS:]]
    cells = [[_cell(row.get(column)) for column in columns] for row in shown if row is not None]
    widths = [max([len(column)] + [len(line[k]) for line in cells]) for k, column in enumerate(columns)]
    numeric = [all(_is_number(row.get(c)) or row.get(c) is None for row in table_rows) for c in columns]

    def line(texts: Sequence[str]) -> str:
        parts = [t.rjust(w) if right else t.ljust(w) for t, w, right in zip(texts, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    lines = [line(columns)]
    rows_left = iter(cells)
    for row in shown:
        if row is None:
            lines.append(f"... {len(table_rows) - SHOWN_ROWS} more rows ...")
        else:
            lines.append(line(next(rows_left)))
    lines.append(f"{len(table_rows)} rows; every column of every row: {full_table}")
    return "\n".join(lines)
