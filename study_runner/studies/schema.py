"""The grammar of study files and sweep files as JSON Schema: one description of a run, published for editors and
used by the loaders, whose errors name the dotted path of the bad field.

A run has the same fields wherever it is written (:data:`RUN_PROPERTIES`): a study's ``[[runs]]`` (which add their
id, platform and quick and full variants, :data:`STUDY_RUN_PROPERTIES`), a study's ``[generate.run]`` and a sweep's
``[run]``, whose values may also be templates (``study_runner.studies.templates``): there a string holding ``{`` is
left to the check of each rendered point. :func:`check` validates a document against a schema with the kept
``jsonschema`` library and raises ``StudyError`` naming the first bad field by its path (``runs[2].ranks``).

The schemas are published in ``schemas/`` (``study.schema.json``, ``sweep.schema.json``), written by
``python -m study_runner.studies.schema`` and compared with what this module gives by ``tests/test_schema.py``; a
study or sweep file's first line ``#:schema ../schemas/study.schema.json`` lets TOML editors (Taplo, Even Better
TOML) check and complete it.

>>> check({"app": "pingpong", "ranks": 0}, RUN_SCHEMA, "run pp")
Traceback (most recent call last):
...
study_runner.errors.StudyError: run pp: ranks: 0 is less than the minimum of 1
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import pkgutil
import sys
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.compute import COMPUTE_MODES
from study_runner.simulation.outputs import OUTPUT_FORMATS
from study_runner.studies.checks import KINDS
from study_runner.studies.checks import RELATIONS

__all__ = [
    "JOBS_FILE_SCHEMA",
    "JOB_PROPERTIES",
    "JOB_SCHEMA",
    "LOADER_ONLY",
    "PLOT_KEYS",
    "RUN_PROPERTIES",
    "RUN_SCHEMA",
    "SCHEMA_DIR",
    "STUDY_RUN_PROPERTIES",
    "STUDY_RUN_SCHEMA",
    "check",
    "jobs_schema",
    "published_schemas",
    "study_schema",
    "sweep_schema",
]

SCHEMA_DIR = REPO / "schemas"
LOADER_ONLY = (
    "What JSON Schema cannot say, the loader adds (tests/test_schema.py checks that it refuses each): a number that "
    "is NaN; ids used twice (runs, checks, grids, jobs, a run's neighbours); a run naming a platform the file does "
    "not declare; a [figures] run id naming no run; the lists of a [[zip]] of unequal lengths, a variable declared "
    "twice; a family parameter's value beyond an integer's bounds (python -m generators FAMILY --help: units, choices, "
    "dimensions), and the parameters of a family that is a "
    "template (a sweep's); the grids an analysis reads; a sweep's output.baseline naming a variable and one of its "
    "values; a jobs file's apps, options and fit on the machine."
)
"""The rules the loaders add to the published schemas (their descriptions say so)."""
_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_WORDS = {"type": "array", "items": {"type": ["string", "number"]}, "description": "words (numbers as their text)"}
_POSITIVE = {"type": "number", "exclusiveMinimum": 0, "maximum": sys.float_info.max}  # finite: inf is refused


def _described(schema: Mapping[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


def _table(properties: Mapping[str, Any], required: Sequence[str], description: str = "") -> dict[str, Any]:
    table = {"type": "object", "properties": dict(properties), "required": list(required)}
    return {**table, "additionalProperties": False, **({"description": description} if description else {})}


JOB_PROPERTIES: dict[str, dict[str, Any]] = {
    "name": _described({"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"}, "the job's name, unique"),
    "app": _described({"type": "string", "minLength": 1}, "a topolab app (build/bin) or a path to your own binary"),
    "args": _described(_WORDS, "the app's arguments"),
    "ranks": _described({"type": "integer", "minimum": 1}, "the number of MPI processes"),
    "background": _described({"const": True}, "instead of ranks: every host the other jobs leave free"),
    "start_s": _described({"type": "number", "minimum": 0}, "when it starts, in simulated seconds (default 0)"),
    "ranks_per_node": _described({"type": "integer", "minimum": 1}, "consecutive ranks on each host"),
    "placement": _described({"type": ["string", "array"], "items": {"type": "string"}},
                            "its own hosts (a list, or a named placement) instead of the allocation's next free ones"),
}  # fmt: skip
"""A job sharing the machine (``study_runner.simulation.jobs``): a run's neighbour, or a job of a jobs file."""

JOB_SCHEMA = {
    **_table(JOB_PROPERTIES, ("name", "app")),
    "oneOf": [{"required": ["ranks"]}, {"required": ["background"]}],
}

RUN_PROPERTIES: dict[str, dict[str, Any]] = {
    "app": _described({"type": "string", "minLength": 1}, "a topolab app (build/bin), a path to your own binary, "
                      "or a third-party code topolab builds (nas:is, nas:ep, nas:dt)"),
    "ranks": _described({"type": "integer", "minimum": 1}, "the number of MPI processes"),
    "args": _described(_WORDS, "the app's arguments"),
    "placement": _described({"type": ["string", "array"], "items": {"type": "string"}},
                            "the host of each rank, or a named placement of the family (\"allocation:2,4,3\")"),
    "options": _described(_WORDS, "extra smpirun --cfg flags (after those of the typed fields below)"),
    "folded_buffers": _described({"type": "integer", "minimum": 1},
                                 "bytes: every allocation at least this large is folded into shared memory that is "
                                 "never touched, for a timing run that never reads its data (smpi/shared-malloc:local; "
                                 "study_runner.simulation.smpi.folded_buffer_options)"),
    "collectives": _described({"type": "object", "minProperties": 1,
                               "propertyNames": {"pattern": "^[a-z_]+$"},
                               "additionalProperties": {"type": "string", "pattern": "^[A-Za-z0-9_]+$"}},
                              "SMPI's algorithm for each collective, e.g. {barrier = \"ompi_bruck\", allreduce = "
                              "\"rdb\"} (smpi/<collective>:<algorithm>)"),
    "message_overhead": _described({**_POSITIVE},
                                   "seconds of software overhead per eager message, half on each side (smpi/os, "
                                   "smpi/ois, smpi/or: study_runner.simulation.smpi.message_overhead_options)"),
    "privatization": _described({"type": "boolean"}, "each rank its own copy of the app's globals (default true; "
                                "false for an app without mutable globals: one memory map fewer per rank)"),
    "stack_guard": _described({"type": "boolean"}, "a guard page below each rank's stack (default true; false: one "
                              "memory map fewer per rank)"),
    "timeout": _described(_POSITIVE, "seconds (default 600)"),
    "size": _described(_POSITIVE, "the run's relative cost, for the estimate of the time left only"),
    "compute": _described({"enum": list(COMPUTE_MODES)}, "charge the app's CPU bursts (\"benchmark\"), their memory "
                          "part at the node's memory bandwidth too (\"memory\"), or not (\"off\", the default)"),
    "memory_fraction": _described({"type": "number", "minimum": 0, "maximum": 1},
                                  "with compute = \"memory\": the part of the code's bursts that moves memory, from "
                                  "0 to 1 (scripts/measure-memory-fraction measures it)"),
    "ranks_per_node": _described({"type": "integer", "minimum": 1}, "consecutive ranks on each host"),
    "output": _described({"enum": list(OUTPUT_FORMATS)}, "what the app prints: JSON lines or a third-party report"),
    "replay": _described({"type": "boolean"}, "record the app's trace once and replay it (needs compute = \"off\")"),
    "neighbours": _described({"type": "array", "minItems": 1, "items": JOB_SCHEMA},
                             "other jobs on the machine meanwhile: the run's records are then each job's time alone "
                             "and shared, and its slowdown (study_runner.simulation.jobs)"),
    "online": _described({"type": "boolean"},
                         "with neighbours: run the jobs' app binaries together in one simulation instead of replaying "
                         "their recorded traces (default false)"),
    "allocation": _described({"type": "string", "minLength": 1},
                             "with neighbours: the policy that gives the jobs their hosts (contiguous, random:SEED, "
                             "stride:K, random-chunks:C,SEED, or the family's own; default contiguous)"),
    "counters": _described({"type": "boolean"},
                           "network counters: also run it traced by SimGrid and write its bytes and utilisation per "
                           "link, their time series and a heat map into counters/<run>/ of its results (needs "
                           "compute = \"off\", no replay, no neighbours; default false)"),
}  # fmt: skip
"""The fields of every run, a study's and a sweep's alike."""

STUDY_RUN_PROPERTIES: dict[str, dict[str, Any]] = {
    "id": _described({"type": "string", "minLength": 1}, "the run's name, unique in the study"),
    "platform": _described({"type": "string", "minLength": 1}, "a platform of [platforms]"),
    "quick_args": _described(_WORDS, "the app's arguments under --quick"),
    "quick": _described({"type": "boolean"}, "part of the --quick study (default true)"),
    "full_only": _described({"type": "boolean"}, "run under --full only (default false)"),
    "full_args": _described(_WORDS, "the app's arguments under --full"),
    "full_timeout": _described(_POSITIVE, "seconds, under --full"),
    "trace_links": _described(
        {"type": "boolean"},
        "also run it traced by SimGrid: the bytes each link carried, for the analysis's traced heatmap (default false)",
    ),
}
"""What a study's run has beside :data:`RUN_PROPERTIES`."""

_TEMPLATE = {"type": "string", "pattern": "[{]"}


def _templated(properties: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Each property as given, or a template string (checked once rendered, at each point); so too the fields of
    the tables of a list of tables (a run's neighbours)."""
    templated = {}
    for name, schema in properties.items():
        items = schema.get("items", {})
        if "properties" in items:
            schema = {**schema, "items": {**items, "properties": _templated(items["properties"])}}
        templated[name] = {"if": _TEMPLATE, "then": True, "else": dict(schema)}
    return templated


RUN_SCHEMA = {"$schema": _DIALECT, **_table(RUN_PROPERTIES, ("app", "ranks"))}
"""A sweep point's run, rendered (every value concrete)."""
STUDY_RUN_SCHEMA = {
    "$schema": _DIALECT,
    **_table({**STUDY_RUN_PROPERTIES, **RUN_PROPERTIES}, ("id", "platform", "app", "ranks")),
}
"""A study's run, rendered."""

_AXIS_VALUE = {"type": ["string", "number", "boolean"], "maximum": sys.float_info.max,
               "minimum": -sys.float_info.max}  # fmt: skip
_AXIS = {"type": "array", "minItems": 1, "items": _AXIS_VALUE, "description": "the variable's values (not empty)"}
_VARIABLES = {"type": "object", "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}, "additionalProperties": _AXIS}
_AXES = {
    "grid": _described({**_VARIABLES, "minProperties": 1}, "variables, each an axis of its own (a cartesian product)"),
    "zip": _described({"type": "array", "items": {**_VARIABLES, "minProperties": 1}},
                      "axes whose variables vary together (lists of equal length: the loader checks it)"),
}  # fmt: skip
_SOME_AXIS = {"anyOf": [{"required": ["grid"]}, {"required": ["zip"], "properties": {"zip": {"minItems": 1}}}]}
"""A grid has a point: declare variables in [grid] or [[zip]]."""
_TEXT = {"type": "string"}


def _family(template: bool = False) -> dict[str, Any]:
    """A platform table: a topology family and its parameters, by name (their values are the family's own check:
    ``python -m generators FAMILY --help``); the family may be a template in a sweep."""
    from generators.families import FAMILIES
    from generators.params import REQUIRED

    family = _described({"enum": sorted(FAMILIES)}, "a topology family (python -m generators --list)")
    if template:
        family = {"if": _TEMPLATE, "then": True, "else": family, "description": family["description"]}
    each = []
    for name, declared in FAMILIES.items():
        required = [param.name for param in declared.params if param.default is REQUIRED]
        params = {param.name: _described(param.schema, param.help) for param in declared.params}
        parameters = {"properties": {"family": {}, **params}, "required": required, "additionalProperties": False}
        each.append({"if": {"properties": {"family": {"const": name}}, "required": ["family"]}, "then": parameters})
    return {"type": "object", "properties": {"family": family}, "required": ["family"], "allOf": each}


def _platform(template: bool) -> dict[str, Any]:
    from generators.machines import load_catalogue

    schema = _family(template)
    if template:
        return _described(schema, "a topology family and its parameters; every value may be a template")
    machine = _described({"enum": sorted(load_catalogue())},
                         "a ready platform of platforms/machines.toml, <machine>/<file>")  # fmt: skip
    ready = {"type": "object", "properties": {"machine": machine}, "additionalProperties": False}
    choice = {"if": {"type": "object", "required": ["machine"]}, "then": ready, "else": schema}
    return _described(choice, "a topology family and its parameters, or a ready platform")


_OR_TEMPLATE = {"type": "string", "pattern": "[{]"}
"""A value rendered at each point of the check (``"{tolerance_of(servers)}"``)."""


def _rendered(schema: Mapping[str, Any], description: str) -> dict[str, Any]:
    """A check field: ``schema``, or a template rendered at each point."""
    return {"anyOf": [dict(schema), _OR_TEMPLATE], "description": description}


CHECK_FIELDS: dict[str, dict[str, Any]] = {
    "id": _described({"type": "string", "minLength": 1}, "the check's name, unique in the study (a template)"),
    "simulated": _described({"type": ["string", "number"]}, "the simulated value: a template calling the analysis's "
                            "metrics (\"{throughput(run)}\"), or a number"),
    "value": _described({"type": ["string", "number"]}, "the published number, or a template"),
    "unit": _TEXT,
    "tolerance": _rendered({"type": "number", "minimum": 0, "maximum": sys.float_info.max},
                           "relative tolerance (0.10: 10%)"),
    "kind": _rendered({"enum": list(KINDS)}, "calibration, prediction or exact"),
    "what": _TEXT,
    "source": _described(_TEXT, "where the published number is (an exact check may have none)"),
    "relation": _rendered({"enum": list(RELATIONS)}, "how simulated and published compare (default within)"),
    "miss": _described({"type": "string", "minLength": 1}, "why the simulated value misses: a documented miss"),
    "miss_range": _described({"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                             "[low, high]: the simulated values the miss explains"),
}  # fmt: skip
"""The fields of a check (``studies.study_checks``), in a ``[[checks]]`` table or one of its ``by`` tables."""

CHECK_POINTS: dict[str, dict[str, Any]] = {
    "grid": _described({"type": ["string", "object"]}, "a [[generate]] grid's name, or the check's own axes"),
    "over": _described({"type": "array", "items": _TEXT}, "the grid's axes the checks are projected on"),
    "when": _described({"type": ["string", "boolean"]}, "which of the grid's points count: a comparison"),
    "runs": _described({"type": "object", "additionalProperties": _TEXT}, "names for run id templates"),
    "zip": _AXES["zip"],
    "by": _described({"type": "object", "additionalProperties": {"type": "object", "additionalProperties":
                      _table(CHECK_FIELDS, ())}},
                     "[checks.by.<variable>.<value>]: the fields that differ where a variable has a value"),
    "records": _described({"type": "string", "minLength": 1}, "one check per record this run prints"),
}  # fmt: skip
"""Where a ``[[checks]]`` table's checks are: a run grid, axes of its own, or a run's records."""

CHECK_SCHEMA = _table({**CHECK_POINTS, **CHECK_FIELDS}, (), "a published value and its metric, at each point")


def study_schema() -> dict[str, Any]:
    """The schema of a study file (``study_runner.studies.study``)."""
    run = {**STUDY_RUN_PROPERTIES, **RUN_PROPERTIES}
    required = STUDY_RUN_SCHEMA["required"]
    generate = _table(
        {"name": _described(_TEXT, "the grid's name: the analysis reads its axes"), **_AXES,
         "run": _table(_templated(run), required, "a run whose values may be templates")},
        ("name", "run"),
    ) | _SOME_AXIS  # fmt: skip
    reference = _table({"source": {"type": "string", "minLength": 1}, "value": {}, "unit": _TEXT}, ("source", "value"))
    measured = _table(
        {"default_s": _described(_POSITIVE, "the default run: the sum of its simulations' wall times (sim_wall_s)"),
         "quick_s": _described(_POSITIVE, "the same under --quick, where it was measured"),
         "source": _described({"type": "string", "minLength": 1}, "the doc that records these measurements")},
        ("default_s", "source"),
        "how long the study took on a 2-core machine, as its docs record it (scripts/repro --list shows it)",
    )  # fmt: skip
    properties = {
        "name": _TEXT,
        "title": _TEXT,
        "description": _TEXT,
        "analysis": _described(_TEXT, "the module of study_runner.studies.analyses that reads the runs"),
        "platforms": {"type": "object", "minProperties": 1, "additionalProperties": _platform(False)},
        "runs": {"type": "array", "items": _table(run, required)},
        "generate": {"type": "array", "items": generate},
        "checks": {"type": "array", "items": CHECK_SCHEMA, "description": "published values and their metrics"},
        "figures": _described({"type": "object"}, "what the figures show: the fields the analysis declares"),
        "reference": {"type": "object", "additionalProperties": reference},
        "measured_wall_time": measured,
    }
    schema = _table(properties, ("name", "title", "analysis", "platforms"), "A topolab study file. " + LOADER_ONLY)
    return {"$schema": _DIALECT, "$id": "study.schema.json", "title": "topolab study", **schema, "allOf": _figures()}


def _figures() -> list[dict[str, Any]]:
    """For each analysis module, the ``[figures]`` it reads (its ``FIGURES``): every key it declares, no other."""
    from study_runner.studies import analyses

    each = []
    for module in pkgutil.iter_modules(analyses.__path__):
        declared = getattr(importlib.import_module(f"{analyses.__name__}.{module.name}"), "FIGURES", {})
        fields = {key: _described(field.schema, field.what) for key, field in sorted(declared.items())}
        figures = {"type": "object", "properties": fields, "required": sorted(fields), "additionalProperties": False}
        condition = {"properties": {"analysis": {"const": module.name}}, "required": ["analysis"]}
        then = {"properties": {"figures": figures}, **({"required": ["figures"]} if fields else {})}
        each.append({"if": condition, "then": then})
    return each


_OCCUPIED = _table(
    {"sizes": _described({"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}},
                         "the sizes of its jobs in hosts, drawn from seed"),
     "occupancy": _described({"type": "number"}, "they take at most this fraction of the hosts (0 to 1)"),
     "released": _described({"type": "number"}, "then this fraction of them end (0 to 1, default 0)"),
     "seed": _described({"type": "integer"}, "the seed of the draws (default 0)"),
     "app": _described(JOB_PROPERTIES["app"], "what its running jobs run (idle without)"),
     "args": _described(_WORDS, "the app's arguments")},
    ("sizes", "occupancy"),
    "a machine in use before the jobs (generators.allocation.fill)",
)  # fmt: skip
JOBS_FILE_SCHEMA = {
    "$schema": _DIALECT,
    **_table(
        {"allocation": _described({"type": "string", "minLength": 1},
                                  "the policy that gives the jobs their hosts (default contiguous)"),
         "options": _described(_WORDS, "the SMPI options of every job (one simulation has one set)"),
         "platform": _described(_family(), "a topology family and its parameters"),
         "jobs": {"type": "array", "minItems": 1, "items": JOB_SCHEMA},
         "occupied": _OCCUPIED},
        ("platform", "jobs"),
        "A jobs file of scripts/run-jobs (study_runner.tools.run_jobs)",
    ),
}  # fmt: skip
"""A jobs file (``scripts/run-jobs``): the machine, the allocation policy, the SMPI options, the jobs."""

PLOT_KEYS = {
    "lines": ({"kind", "x"}, {"series", "facets", "logx", "logy", "title"}),
    "regime": ({"kind", "x", "y", "compare"}, {"facets", "logx", "title"}),
    "split": ({"kind", "x"}, {"facets", "title"}),
}
"""The keys of a sweep's plot of each kind: required, optional (``study_runner.sweeps.sweep``)."""


def sweep_schema() -> dict[str, Any]:
    """The schema of a sweep file (``study_runner.sweeps.sweep``)."""
    plot = _table(
        {"kind": {"enum": list(PLOT_KEYS)}, "x": _TEXT, "y": _TEXT, "series": _TEXT, "compare": _TEXT,
         "facets": {"type": ["string", "array"], "items": _TEXT}, "logx": {"type": "boolean"},
         "logy": {"type": "boolean"}, "title": _TEXT},
        ("kind", "x"),
    )  # fmt: skip
    output = _table(
        {"metric": _described({"type": "string", "minLength": 1}, "the field of the app's records the plots show"),
         "better": {"enum": ["lower", "higher"]}, "plots": {"type": "array", "items": plot},
         "baseline": _described({"type": "string", "minLength": 1},
                                "VARIABLE=VALUE: the printed table's speed-ups are over that point (as --baseline)")},
        (),
    )  # fmt: skip
    properties = {
        "name": _described({"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"}, "results/sweeps/<name>/"),
        "title": _TEXT,
        "description": _TEXT,
        **_AXES,
        "platform": _platform(True),
        "run": _table(_templated(RUN_PROPERTIES), ("app", "ranks"), "the run of every point; values may be templates"),
        "output": output,
    }
    schema = _table(properties, ("name", "platform", "run"), "A topolab sweep file. " + LOADER_ONLY)
    return {"$schema": _DIALECT, "$id": "sweep.schema.json", "title": "topolab sweep", **schema, **_SOME_AXIS}


def jobs_schema() -> dict[str, Any]:
    """The schema of a jobs file (``scripts/run-jobs``), as published."""
    described = {**JOBS_FILE_SCHEMA, "description": f"{JOBS_FILE_SCHEMA['description']}. {LOADER_ONLY}"}
    return {**described, "$id": "jobs.schema.json", "title": "topolab jobs"}


def published_schemas() -> dict[str, dict[str, Any]]:
    """The files of ``schemas/`` and what each holds."""
    return {"study.schema.json": study_schema(), "sweep.schema.json": sweep_schema(), "jobs.schema.json": jobs_schema()}


@functools.cache
def _validator(text: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(json.loads(text))


def _path(parts: Sequence[str | int], prefix: str = "") -> str:
    """``runs[2].ranks`` from ``["runs", 2, "ranks"]``, after ``prefix``."""
    text = prefix
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def check(data: Mapping[str, Any], schema: Mapping[str, Any], where: str, path: str = "") -> None:
    """``data`` (found at ``path`` of its file) against ``schema``; ``StudyError`` naming ``where``, the bad field's
    path and what is wrong."""
    error = best_match(_validator(json.dumps(schema, sort_keys=True)).iter_errors(data))
    if error is None:
        return
    parent = error.parent
    if parent is not None and parent.validator == "anyOf" and parent.validator_value[-1] == _OR_TEMPLATE:
        # a value or a template: what is wrong with it as a value, not that it is no template
        error = next(e for e in parent.context if e.relative_schema_path[0] == 0)
    message = error.message
    for found in (error, parent):  # a family's integer (or its text): the words of the family's own check
        if found is not None and found.validator == "anyOf" and found.validator_value[0].get("type") == "integer":
            error, message = (
                found,
                f"must be an integer >= {found.validator_value[0]['minimum']}, got {found.instance!r}",
            )
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {})
        unknown = sorted(set(error.instance) - set(known))
        message = f"unknown key {unknown[0]!r}; known: {', '.join(sorted(known))}"
    elif error.validator == "required":
        message = f"missing {error.message.split(' is a required')[0]}"
    elif error.validator == "enum" and error.absolute_path and error.absolute_path[-1] == "family":
        message = f"unknown topology family {error.instance!r}; known families: {', '.join(error.validator_value)}"
    elif error.validator == "enum" and error.absolute_path and error.absolute_path[-1] == "machine":
        message = f"no ready platform {error.instance!r} ({', '.join(error.validator_value)})"
    elif error.validator in ("minItems", "minProperties") and not error.instance:
        message = "is empty"
    elif error.validator == "maximum" and error.validator_value == sys.float_info.max:
        message = f"must be a finite number, got {error.instance!r}"
    elif error.validator == "anyOf" and error.validator_value == _SOME_AXIS["anyOf"]:
        message = "the grid is empty: declare variables in [grid] or [[zip]]"
    elif error.validator == "oneOf" and all(set(choice) == {"required"} for choice in error.validator_value):
        keys = [choice["required"][0] for choice in error.validator_value]
        message = f"needs exactly one of {' or '.join(keys)}"
    bad = _path(list(error.absolute_path), path)
    joined = f"{bad} " if message.startswith(("is ", "must ")) else f"{bad}: "  # "grid.n is empty", "x.y: 3 is ..."
    raise StudyError(f"{where}: {joined if bad else ''}{message}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m study_runner.studies.schema", description="Write the published schemas (schemas/*.json)."
    )
    parser.add_argument("--dir", type=Path, default=SCHEMA_DIR, help="where to write them (default: schemas/)")
    arguments = parser.parse_args(argv)
    arguments.dir.mkdir(parents=True, exist_ok=True)
    for name, schema in published_schemas().items():
        temporary = arguments.dir / f".{name}.tmp"
        temporary.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
        temporary.replace(arguments.dir / name)
        print(arguments.dir / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
