"""One grammar for a run, wherever it is written: a study's ``[[runs]]`` (and its ``[[generate.run]]``) and a sweep's
``[run]`` (rendered at each point) have the same fields (``study_runner.studies.schema``), checked by
:func:`run_fields` with the same rules and defaults, and held by one dataclass, ``batch.runs.RunSpec``. A study run
adds its id, its platform and its quick and full variants (``studies.study``); a sweep point its variables and its
platform (``sweeps.sweep``).

>>> fields = run_fields({"app": "pingpong", "ranks": 2, "args": ["-s", 8]}, "run pp")
>>> fields["args"], fields["timeout"], fields["replay"], fields["compute"]
(('-s', '8'), 600.0, False, 'off')
>>> run_fields({"app": "pingpong", "ranks": 2, "timeout": float("nan")}, "run pp")  # what JSON Schema cannot say
Traceback (most recent call last):
...
study_runner.errors.StudyError: run pp: run.timeout must be a finite number of seconds > 0, got nan
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from study_runner.errors import StudyError
from study_runner.simulation.codes import app_path
from study_runner.simulation.jobs import MEASURED
from study_runner.simulation.jobs import Job
from study_runner.simulation.smpi import option_groups
from study_runner.studies.schema import RUN_PROPERTIES
from study_runner.studies.schema import RUN_SCHEMA
from study_runner.studies.schema import check
from study_runner.studies.templates import positive_number

__all__ = ["RUN_FIELDS", "job_of", "run_fields", "strings", "whole"]

RUN_FIELDS = tuple(RUN_PROPERTIES)
"""The fields every run has (a study run and a sweep point alike)."""


def strings(value: object) -> tuple[str, ...]:
    """A list of words (numbers taken as their text), as the schema let it through."""
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def whole(value: Any) -> Any:
    """An integer field's value as an ``int``: JSON Schema's integers include ``2.0`` (TOML's float), which the
    schema lets through and the loaders take as 2.

    >>> whole(2.0), whole(3), whole(None)
    (2, 3, None)
    """
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _placement(raw: object) -> tuple[str, ...] | str | None:
    """A list of hosts, or a named placement of the platform's family (one string, "allocation:2,4,3")."""
    if raw is None or raw == [] or raw == "":
        return None
    return raw if isinstance(raw, str) else strings(raw)


def run_fields(
    raw: Mapping[str, Any], where: str, path: str = "run", schema: Mapping[str, Any] = RUN_SCHEMA
) -> dict[str, Any]:
    """The :data:`RUN_FIELDS` of ``raw`` (a run table at ``path`` of its file, its values all given, no template
    left), checked against ``schema`` and the rules a schema cannot say, with their defaults; ``StudyError`` naming
    ``where`` and the field's path otherwise."""
    check(raw, schema, where, path)
    timeout, size = raw.get("timeout", 600), raw.get("size")
    if not positive_number(timeout):
        raise StudyError(f"{where}: {path}.timeout must be a finite number of seconds > 0, got {timeout!r}")
    if size is not None and not positive_number(size):
        raise StudyError(f"{where}: {path}.size must be a finite number > 0, got {size!r}")
    compute, replay = raw.get("compute", "off"), raw.get("replay", False)
    if replay and compute != "off":
        raise StudyError(
            f'{where}: {path}: replay = true needs compute = "off" (a trace replays the app\'s MPI calls and modelled '
            f"computation; benchmarked computation is measured anew in every run), got {compute!r}"
        )
    fraction = raw.get("memory_fraction")
    if (compute == "memory") != (fraction is not None):
        raise StudyError(
            f'{where}: {path}: compute = "memory" needs memory_fraction, the part of the code\'s bursts that moves '
            "memory (scripts/measure-memory-fraction measures it)"
            if fraction is None
            else f'{where}: {path}.memory_fraction is about compute = "memory"; this run\'s compute is {compute!r}'
        )
    neighbours = _neighbours(raw.get("neighbours", []), where, path)
    if neighbours and (replay or compute != "off"):
        raise StudyError(
            f'{where}: {path}: neighbours need compute = "off" and no replay (the jobs are recorded and replayed '
            "together: study_runner.simulation.jobs)"
        )
    if raw.get("counters", False) and (replay or compute != "off" or neighbours):
        raise StudyError(
            f'{where}: {path}: counters = true traces the app\'s own run: it needs compute = "off", no replay and no '
            "neighbours"
        )
    for key in ("allocation", "online"):
        if key in raw and not neighbours:
            raise StudyError(f"{where}: {path}.{key} is about the jobs of a run with neighbours; this run has none")
    return {
        "app": raw["app"],
        "ranks": whole(raw["ranks"]),
        "args": strings(raw.get("args", [])),
        "placement": _placement(raw.get("placement")),
        "options": (*_option_groups(raw), *strings(raw.get("options", []))),
        "timeout": float(timeout),
        "size": None if size is None else float(size),
        "compute": compute,
        "memory_fraction": None if fraction is None else float(fraction),
        "ranks_per_node": whole(raw.get("ranks_per_node", 1)),
        "output": raw.get("output", "json"),
        "replay": replay,
        "neighbours": neighbours,
        "allocation": raw.get("allocation", "contiguous"),
        "online": raw.get("online", False),
        "counters": raw.get("counters", False),
    }


def _option_groups(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The SMPI options of the run's typed fields (``simulation.smpi.option_groups``), checked by the schema."""
    overhead = raw.get("message_overhead")
    return option_groups(
        whole(raw.get("folded_buffers")), raw.get("collectives"), None if overhead is None else float(overhead),
        raw.get("privatization", True), raw.get("stack_guard", True),
    )  # fmt: skip


def _neighbours(raw: list[dict[str, Any]], where: str, path: str) -> tuple[Job, ...]:
    """The jobs beside a run (checked by the schema), each name its own and none the run's (:data:`MEASURED`)."""
    names = [job["name"] for job in raw]
    for name in names:
        if name == MEASURED or names.count(name) > 1:
            why = "names the run's own job" if name == MEASURED else "is the name of two neighbours"
            raise StudyError(f"{where}: {path}.neighbours: {name!r} {why}")
    return tuple(job_of(job) for job in raw)


def job_of(raw: Mapping[str, Any]) -> Job:
    """A job table that ``studies.schema.JOB_SCHEMA`` let through (a run's neighbour, a job of a jobs file) as a
    :class:`Job`, its app as written (``simulation.codes.app_path``: resolved as a run's ``app`` when it runs)."""
    start_s, ranks_per_node = float(raw.get("start_s", 0)), whole(raw.get("ranks_per_node", 1))
    args, placement = strings(raw.get("args", [])), _placement(raw.get("placement"))
    return Job(raw["name"], app_path(raw["app"]), args, whole(raw.get("ranks")), start_s, ranks_per_node, placement)
