"""One grammar for a run, wherever it is written: a study's ``[[runs]]`` (and its ``[[generate.run]]``) and a sweep's
``[run]`` (rendered at each point) have the same fields, checked by :func:`run_fields` with the same rules and
defaults. A study run adds its id, its platform and its quick and full variants (``studies.study``); a sweep point
its variables and its platform (``sweeps.sweep``).

>>> fields = run_fields({"app": "pingpong", "ranks": 2, "args": ["-s", 8]}, "run pp")
>>> fields["args"], fields["timeout"], fields["replay"], fields["compute"]
(('-s', '8'), 600.0, False, 'off')
>>> run_fields({"app": "pingpong", "ranks": 0}, "run pp")
Traceback (most recent call last):
...
study_runner.errors.StudyError: run pp: ranks must be an integer >= 1, got 0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from study_runner.errors import StudyError
from study_runner.simulation.compute import COMPUTE_MODES
from study_runner.simulation.outputs import OUTPUT_FORMATS
from study_runner.studies.templates import positive_number

__all__ = ["RUN_FIELDS", "run_execution", "run_fields", "strings"]

RUN_FIELDS = ("app", "ranks", "args", "placement", "options", "timeout", "size", "compute", "ranks_per_node",
              "output", "replay")  # fmt: skip
"""The fields every run has (a study run and a sweep point alike)."""


def strings(value: object, where: str) -> tuple[str, ...]:
    """A list of strings (numbers taken as their text)."""
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise StudyError(f"{where} must be a list of strings, got {value!r}")
    return tuple(str(v) for v in value)


def _placement(raw: object, where: str) -> tuple[str, ...] | str | None:
    """A list of hosts, or a named placement of the platform's family (one string, "allocation:2,4,3")."""
    if raw is None or raw == [] or raw == "":
        return None
    if isinstance(raw, str):
        return raw
    return strings(raw, f"{where}: placement")


def run_execution(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A run's optional ``compute`` mode, ``ranks_per_node`` and ``output`` format, checked."""
    compute = raw.get("compute", "off")
    if compute not in COMPUTE_MODES:
        raise StudyError(f"{where}: compute must be one of {', '.join(COMPUTE_MODES)}, got {compute!r}")
    per_node = raw.get("ranks_per_node", 1)
    if isinstance(per_node, bool) or not isinstance(per_node, int) or per_node < 1:
        raise StudyError(f"{where}: ranks_per_node must be an integer >= 1, got {per_node!r}")
    output = raw.get("output", "json")
    if output not in OUTPUT_FORMATS:
        raise StudyError(f"{where}: output must be one of {', '.join(OUTPUT_FORMATS)}, got {output!r}")
    return {"compute": compute, "ranks_per_node": per_node, "output": output}


def run_fields(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The :data:`RUN_FIELDS` of ``raw``, checked and with their defaults (``app`` and ``ranks`` are required);
    ``StudyError`` naming ``where`` and the field otherwise."""
    for key in ("app", "ranks"):
        if key not in raw:
            raise StudyError(f"{where}: run is missing {key!r}")
    app, ranks = raw["app"], raw["ranks"]
    if not isinstance(app, str) or not app:
        raise StudyError(f"{where}: app must be a non-empty string, got {app!r}")
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise StudyError(f"{where}: ranks must be an integer >= 1, got {ranks!r}")
    timeout, size = raw.get("timeout", 600), raw.get("size")
    if not positive_number(timeout):
        raise StudyError(f"{where}: timeout must be a finite number of seconds > 0, got {timeout!r}")
    if size is not None and not positive_number(size):
        raise StudyError(f"{where}: size must be a finite number > 0, got {size!r}")
    execution = run_execution(raw, where)
    replay = raw.get("replay", False)
    if not isinstance(replay, bool):
        raise StudyError(f"{where}: replay must be true or false, got {replay!r}")
    if replay and execution["compute"] != "off":
        raise StudyError(
            f'{where}: replay = true needs compute = "off" (a trace replays the app\'s MPI calls and modelled '
            f"computation; benchmarked computation is measured anew in every run), got {execution['compute']!r}"
        )
    return {
        "app": app,
        "ranks": ranks,
        "args": strings(raw.get("args", []), f"{where}: args"),
        "placement": _placement(raw.get("placement"), where),
        "options": strings(raw.get("options", []), f"{where}: options"),
        "timeout": float(timeout),
        "size": None if size is None else float(size),
        **execution,
        "replay": replay,
    }
