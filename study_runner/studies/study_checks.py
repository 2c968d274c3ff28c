"""Checks a study file declares: published values and the metrics they are compared with, templated over a grid.

A ``[[checks]]`` table is one check, or one check per point of a grid, in the grammar of ``[[generate]]``
(``study_runner.studies.templates``). Its points come from a run grid of the file or from axes of its own::

    [[checks]]
    grid = "fig3"                             # the points of [[generate]] grid "fig3" (one run each) ...
    over = ["servers", "size"]                # ... projected on these axes, in this loop order (default: all)
    when = "{algorithm == 'mlfm'}"            # optional: which of the grid's points count
    id = "fig3.{servers}.{size}MiB"
    simulated = "{throughput(run)}"           # a metric of the analysis module (METRICS) on the point's run
    value = 3770                              # the published number: a number or a template
    unit = "MiB/s"
    tolerance = 0.10
    kind = "prediction"
    what = "per-node throughput, {servers} servers, {size} MiB"
    source = "Sect. 3 and Fig. 3"
    # optional: relation, miss, miss_range (as in [published]); runs = {name = "<run id template>"}
    [checks.by.servers.24B]                   # fields that differ where a variable has a value (a published
    value = 2.2                               # table keyed by the grid's axis)

    [[checks]]                                # a published table: its own axes, values in a zip column
    [[checks.zip]]
    nodes = [512, 1024]
    bisection = [256, 256]
    id = "table6.{nodes}"
    simulated = "{bisection_of(nodes)}"
    value = "{bisection}"
    ...

A table with ``records = "<run id>"`` instead makes one check per record that run prints (a ping-pong's sizes,
which ``--quick`` may change), the record's fields its variables: ``simulated = "{oneway_s_avg}"``. An ``exact``
check may have an empty ``source`` (its ``what`` names the model); a comparison evaluates to 1 when it holds.

A point's variables are the grid's variables that are constant over the points it projects (a zip column
travels with its axis), ``run`` when exactly one run is at the point, and each name of ``runs`` (a run id
template, for a check that compares runs). Everything but ``simulated`` and ``value`` is rendered when the
study is loaded (ids are unique, keys are known, before anything runs); ``simulated`` and ``value`` are
evaluated by the analysis, where the templates may call the analysis module's ``METRICS``: functions of the
study context and their arguments, ``throughput(ctx, run_id)`` written ``throughput(run)``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from study_runner.errors import StudyError
from study_runner.studies.checks import KINDS
from study_runner.studies.checks import RELATIONS
from study_runner.studies.checks import Check
from study_runner.studies.schema import CHECK_FIELDS
from study_runner.studies.schema import CHECK_POINTS
from study_runner.studies.templates import assignments
from study_runner.studies.templates import axes
from study_runner.studies.templates import render

__all__ = ["DeclaredCheck", "RecordChecks", "declared_checks", "validate_published"]

_POINT_KEYS = set(CHECK_POINTS)  # grid: a run grid's name, or the check's own axes
_FIELDS = {"id", "simulated", "value", "unit", "tolerance", "kind", "what", "source"}  # every check has them
_OPTIONAL = set(CHECK_FIELDS) - _FIELDS
_KEYS = _POINT_KEYS | _FIELDS | _OPTIONAL


@dataclass(frozen=True)
class DeclaredCheck:
    """One check of the study file at one point: its fields rendered, ``simulated`` and ``value`` still
    templates (evaluated by :meth:`check` with the analysis's metrics)."""

    id: str
    simulated: str
    value: Any
    fields: dict[str, Any]
    variables: dict[str, Any]
    runs: tuple[str, ...] = ()  # the runs it compares: the check is made when they all ran

    def evaluate(self, template: Any, metrics: Mapping[str, Callable[..., Any]]) -> float:
        """A number from ``template`` (``simulated`` or ``value``) at this check's point; a comparison is 1 when
        it holds, 0 when not."""
        try:
            number = render(template, self.variables, metrics)
        except StudyError as err:
            raise StudyError(f"check {self.id}: {err}") from None
        if not isinstance(number, int | float):
            raise StudyError(f"check {self.id}: {template!r} is {number!r}, not a number")
        return float(number)

    def check(self, metrics: Mapping[str, Callable[..., Any]]) -> Check:
        """The check: published ``value`` against ``simulated``, both evaluated with ``metrics``."""
        entry = self.fields
        return Check(
            id=self.id,
            what=f"{entry['what']} ({entry['source']})" if entry["source"] else str(entry["what"]),
            published=self.evaluate(self.value, metrics),
            simulated=self.evaluate(self.simulated, metrics),
            unit=str(entry["unit"]),
            tolerance=float(entry["tolerance"]),
            kind=str(entry["kind"]),
            relation=str(entry.get("relation", "within")),
            miss=str(entry.get("miss", "")),
            miss_range=tuple(entry["miss_range"]) if "miss_range" in entry else None,
        )

    @property
    def constant_value(self) -> float | None:
        """The published value, when the file gives it as a number (a figure may draw it)."""
        value = self.value
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _projected(points: list[dict[str, Any]], over: list[str], where: str) -> list[list[dict[str, Any]]]:
    """The grid's points grouped by their values of ``over``, the groups in that loop order (last fastest)."""
    for name in over:
        if any(name not in point for point in points):
            raise StudyError(f"{where}: over names {name!r}, which is not a variable of the grid")
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for point in points:
        groups.setdefault(tuple(point[name] for name in over), []).append(point)
    orders = [list(dict.fromkeys(point[name] for point in points)) for name in over]
    return [groups[key] for key in itertools.product(*orders) if key in groups]


def _common(group: list[dict[str, Any]]) -> dict[str, Any]:
    """The variables that have one value over all of ``group``'s points."""
    return {name: value for name, value in group[0].items() if all(point.get(name) == value for point in group)}


def _points(
    table: dict[str, Any], run_grids: Mapping[str, list[tuple[str, dict[str, Any]]]], functions: Any, where: str
) -> list[dict[str, Any]]:
    """The variables of each point of a ``[[checks]]`` table, in order."""
    grid = table.get("grid")
    if isinstance(grid, str):
        if grid not in run_grids:
            raise StudyError(f"{where}: grid {grid!r} is not a [[generate]] grid of the file ({', '.join(run_grids)})")
        points = [{**variables, "run": run_id} for run_id, variables in run_grids[grid]]
    elif grid is None and "zip" not in table:
        points = [{}]
    else:
        points = assignments(axes(table, where))
    when = table.get("when", True)
    kept = []
    for point in points:
        keep = render(when, point, functions)
        if not isinstance(keep, bool):
            raise StudyError(f"{where}: when must be a comparison, got {keep!r}")
        if keep:
            kept.append(point)
    over = table.get("over", list(kept[0]) if kept else [])
    if not isinstance(over, list) or not all(isinstance(name, str) for name in over):
        raise StudyError(f"{where}: over must be a list of the grid's variable names")
    out = []
    for group in _projected(kept, over, where):
        variables = _common(group)
        if len(group) > 1:
            variables.pop("run", None)
        for name, template in table.get("runs", {}).items():
            variables[name] = render(template, variables, functions)
        out.append(variables)
    return out


@dataclass(frozen=True)
class RecordChecks:
    """A ``[[checks]]`` table with ``records = "<run id>"``: one check per record the run prints (a ping-pong's
    sizes), the record's fields its variables; made when the analysis has the records (:meth:`expand`)."""

    run: str
    table: dict[str, Any]
    functions: Mapping[str, Callable[..., Any]]
    where: str

    def expand(self, records: list[dict[str, Any]]) -> list[DeclaredCheck]:
        """The checks at each of ``records`` (scalar fields as variables, and ``run``)."""
        by = _by(self.table.get("by", {}), self.where)
        return [
            _at_point(self.table, by, _scalars(record) | {"run": self.run}, self.functions, self.where)
            for record in records
        ]


def _scalars(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if isinstance(value, int | float | str)}


def declared_checks(
    raw: object,
    run_grids: Mapping[str, list[tuple[str, dict[str, Any]]]],
    functions: Mapping[str, Callable[..., Any]],
    where: str,
) -> tuple[DeclaredCheck | RecordChecks, ...]:
    """The file's ``[[checks]]`` tables, each at each of its points, validated (``run_grids``: each
    ``[[generate]]`` grid's runs as (id, variables), in run order)."""
    if not isinstance(raw, list) or not all(isinstance(table, dict) for table in raw):
        raise StudyError(f"{where}: checks must be an array of tables ([[checks]])")
    out: list[DeclaredCheck | RecordChecks] = []
    for number, table in enumerate(raw, 1):
        label = f"{where}: checks[{number}]"
        unknown = sorted(set(table) - _KEYS)
        if unknown:
            raise StudyError(f"{label} has unknown key {unknown[0]!r}; keys: {', '.join(sorted(_KEYS))}")
        if not isinstance(table.get("runs", {}), dict):
            raise StudyError(f"{label}: runs must be a table of run id templates")
        by = _by(table.get("by", {}), label)
        if "records" in table:
            if not isinstance(table["records"], str) or set(table) & {"grid", "zip", "over", "when", "runs"}:
                raise StudyError(f"{label}: records names one run (a string), with no grid, zip, over, when or runs")
            missing = sorted(_FIELDS - set(table))
            if missing:
                raise StudyError(f"{label} is missing {missing[0]!r}")
            out.append(RecordChecks(table["records"], table, functions, label))
            continue
        out += [
            _at_point(table, by, variables, functions, label)
            for variables in _points(table, run_grids, functions, label)
        ]
    return tuple(out)


def _at_point(
    table: dict[str, Any], by: dict[str, Any], variables: dict[str, Any], functions: Any, label: str
) -> DeclaredCheck:
    """The check of ``table`` at the point with ``variables``: its fields, those of ``by`` that apply, rendered."""
    entry = {key: value for key, value in table.items() if key in _FIELDS | _OPTIONAL}
    for name, choices in by.items():
        if name not in variables:
            raise StudyError(f"{label}: by names {name!r}, which is not a variable of its points")
        entry.update(choices.get(str(variables[name]), {}))
    missing = sorted(_FIELDS - set(entry))
    if missing:
        raise StudyError(f"{label}, point {variables}: no {missing[0]!r} (in the table or its by tables)")
    try:
        fields = {key: render(value, variables, functions) if isinstance(value, str) else value
                  for key, value in entry.items() if key not in ("simulated", "value")}  # fmt: skip
    except StudyError as err:
        raise StudyError(f"{label}, point {variables}: {err}") from None
    validate_published(fields, f"{label}.published.{fields['id']}")
    runs = tuple(str(variables[name]) for name in ("run", *table.get("runs", {})) if name in variables)
    return DeclaredCheck(str(fields["id"]), entry["simulated"], entry["value"], fields, variables, runs)


def _by(raw: object, where: str) -> dict[str, dict[str, dict[str, Any]]]:
    """``[checks.by.<variable>.<value>]``: the fields that differ at the points where ``variable`` has ``value``."""
    if not isinstance(raw, dict) or not all(isinstance(choices, dict) for choices in raw.values()):
        raise StudyError(f"{where}: by must be tables [checks.by.<variable>.<value>] of check fields")
    for name, choices in raw.items():
        for value, fields in choices.items():
            if not isinstance(fields, dict) or not set(fields) <= _FIELDS | _OPTIONAL:
                raise StudyError(f"{where}: by.{name}.{value} must be a table of check fields ({', '.join(_FIELDS)})")
    return raw


def validate_published(entry: dict[str, Any], where: str) -> None:
    """The rendered fields of one check (``where`` names it, as ``...published.<id>``): kinds, relations,
    tolerances and documented misses that make sense."""
    if not isinstance(entry["id"], str) or not entry["id"]:
        raise StudyError(f"{where}.id must be a non-empty string")
    if entry["kind"] not in KINDS:
        raise StudyError(f"{where}.kind must be one of {KINDS}, got {entry['kind']!r}")
    if entry["kind"] != "exact" and not str(entry["source"]).strip():
        raise StudyError(f"{where}.source must say where the published number is (only an exact check has none)")
    if entry.get("relation", "within") not in RELATIONS:
        raise StudyError(f"{where}.relation must be one of {RELATIONS}")
    tolerance = entry["tolerance"]
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not tolerance >= 0:
        raise StudyError(f"{where}.tolerance must be a number >= 0")
    if "miss" in entry and (not isinstance(entry["miss"], str) or not entry["miss"].strip()):
        raise StudyError(f"{where}.miss must be a non-empty explanation")
    if ("miss" in entry) != ("miss_range" in entry):
        raise StudyError(
            f"{where}: a miss needs miss_range = [low, high], the simulated values it explains (and miss_range "
            "needs a miss)"
        )
    bounds = entry.get("miss_range", [0, 0])
    if (
        not isinstance(bounds, list)
        or len(bounds) != 2
        or not all(isinstance(b, int | float) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
        or not bounds[0] <= bounds[1]
    ):
        raise StudyError(f"{where}.miss_range must be [low, high] with low <= high")
