"""A sweep's results as one table: a row per record an app printed, with the inputs of its point.

Columns: ``point`` (index in the sweep), every sweep variable (typed as in the file), the inputs
(``family``, ``params`` as JSON, ``app``, ``ranks``, ``args``, ``placement``, ``options``), where the
result came from (``cached``, ``sim_wall_s``, ``sim_peak_memory_mib``, ``key``: the cache entry) and then
every field of the record, under its own name. Two names clash in two ways only: a record field named like a sweep
variable (or ``point``) is stored as ``out_<name>`` (:func:`renamed_fields`: the command says so on stderr), and an
input named like a record field or a variable gives way, stored as ``point_<name>`` (an app that prints ``ranks``
keeps ``ranks``; the point's rank count is then ``point_ranks``). Written as Parquet (``points.parquet``) and as CSV
(``points.csv``: the same rows and columns, for any spreadsheet or ``csv`` reader), each atomically.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generators.files import atomic_path
from study_runner.batch.execute import RunResult
from study_runner.batch.runs import PlatformSpec
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.sweeps.sweep import Sweep

__all__ = ["INPUT_COLUMNS", "Row", "best_rows", "renamed_fields", "rows", "write_csv", "write_parquet"]

INPUT_COLUMNS = (
    "point",
    "family",
    "params",
    "app",
    "ranks",
    "args",
    "placement",
    "options",
    "cached",
    "sim_wall_s",
    "sim_peak_memory_mib",
    "key",
)

Row = dict[str, Any]


def renamed_fields(sweep: Sweep, results: Sequence[RunResult]) -> dict[str, str]:
    """The record fields stored under another name: those named like a sweep variable or ``point``."""
    reserved = {"point", *sweep.variables}
    fields = dict.fromkeys(field for result in results for record in result.records for field in record)
    return {field: f"out_{field}" for field in fields if field in reserved}


def rows(sweep: Sweep, results: Sequence[RunResult], keys: Sequence[str]) -> list[Row]:
    """The table's rows: for each point (in sweep order), one per record of its app."""
    renamed = renamed_fields(sweep, results)
    fields = {field for result in results for record in result.records for field in record}
    taken = {renamed.get(field, field) for field in fields} | set(sweep.variables)
    table: list[Row] = []
    for index, (point, result, key) in enumerate(zip(sweep.points, results, keys, strict=True)):
        inputs = _inputs(sweep.platforms[point.platform], point)
        inputs.update(
            cached=result.cached,
            sim_wall_s=result.wall_s,
            sim_peak_memory_mib=result.peak_memory_mib,
            key=key,
        )
        base: Row = {"point": index, **point.variables}
        base.update((f"point_{name}" if name in taken else name, value) for name, value in inputs.items())
        for record in result.records:
            table.append({**base, **{renamed.get(field, field): value for field, value in record.items()}})
    return table


def _inputs(platform: PlatformSpec, point: RunSpec) -> Row:
    return {
        "family": platform.family,
        "params": json.dumps(platform.params, sort_keys=True),
        "app": point.app,
        "ranks": point.ranks,
        "args": " ".join(point.args),
        "placement": point.placement or "",
        "options": " ".join(point.options),
    }


def _column(values: list[Any]):  # -> pyarrow.Array
    """One typed Parquet column: bool, int64, float64, or else text (JSON for lists and tables)."""
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.array(values, pa.bool_())
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, pa.int64())
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())

    def text(value: Any) -> str | None:
        if value is None:
            return None
        return value if isinstance(value, str) else json.dumps(value)

    return pa.array([text(v) for v in values], pa.string())


def _arrow_table(table_rows: list[Row]):  # -> pyarrow.Table
    """The rows as one typed table, columns in first-seen order."""
    import pyarrow as pa

    names: list[str] = []
    for row in table_rows:
        names += [name for name in row if name not in names]
    return pa.table({name: _column([row.get(name) for row in table_rows]) for name in names})


def write_parquet(table_rows: list[Row], path: Path) -> None:
    """Write the rows as a Parquet file (columns in first-seen order), atomically."""
    import pyarrow.parquet as pq

    with atomic_path(path) as tmp:
        pq.write_table(_arrow_table(table_rows), tmp)


def write_csv(table_rows: list[Row], path: Path) -> None:
    """Write the rows as CSV, the same columns as :func:`write_parquet` (a header line; an empty cell is no value;
    lists and tables as JSON), atomically."""
    import pyarrow.csv as pcsv

    with atomic_path(path) as tmp:
        pcsv.write_csv(_arrow_table(table_rows), tmp, pcsv.WriteOptions(quoting_style="needed"))


def best_rows(table_rows: list[Row], keep: Sequence[str], metric: str, better: str) -> list[Row]:
    """For every combination of the ``keep`` columns, the row with the best ``metric`` (the others reduced).

    >>> best_rows([{"a": 1, "b": 1, "t": 3.0}, {"a": 1, "b": 2, "t": 2.0}], ["a"], "t", "lower")
    [{'a': 1, 'b': 2, 't': 2.0}]
    """
    best: dict[tuple[Any, ...], Row] = {}
    for row in table_rows:
        value = row.get(metric)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise StudyError(
                f"point {row.get('point')}: the app's record has no numeric field {metric!r} (output.metric)"
            )
        group = tuple(row[name] for name in keep)
        current = best.get(group)
        if current is None or (value < current[metric] if better == "lower" else value > current[metric]):
            best[group] = row
    return list(best.values())
