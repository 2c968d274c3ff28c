"""``scripts/repro --list``: one line per study, its name first, then how long it took where that was measured, then
its title.

The times are a study file's ``[measured_wall_time]`` (``default_s``, ``quick_s``, and the ``source`` that recorded
them): figures measured on this repository's 2-core machine and written in its docs, never estimates; a study
without one, or without a ``--quick`` figure, says "not measured". The listing reads the study files' text only
(no run is generated, nothing is simulated), so it answers at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from study_runner.errors import StudyError
from study_runner.studies.study import STUDIES_DIR
from study_runner.studies.study import read_toml
from study_runner.studies.study import study_names

__all__ = ["NOT_MEASURED", "duration_text", "study_line", "study_listing"]

NOT_MEASURED = "not measured"
_NAME_WIDTH = 22
_TIME_WIDTH = len(f"--quick {NOT_MEASURED}")


def duration_text(seconds: float | None) -> str:
    """``~0.4 s``, ``~27 s``, ``~7.8 min``; :data:`NOT_MEASURED` for None.

    >>> duration_text(0.4), duration_text(26.6), duration_text(469.9), duration_text(None)
    ('~0.4 s', '~27 s', '~7.8 min', 'not measured')
    """
    if seconds is None:
        return NOT_MEASURED
    if seconds >= 60:
        return f"~{seconds / 60:.1f} min"
    return f"~{seconds:.2g} s" if seconds < 10 else f"~{seconds:.0f} s"


def study_line(name: str, data: dict[str, Any]) -> str:
    """The listing's line for study ``name`` from its parsed file ``data``: name, default and quick times, title."""
    measured = data.get("measured_wall_time", {})
    default = f"default {duration_text(measured.get('default_s'))}"
    quick = f"--quick {duration_text(measured.get('quick_s'))}"
    return f"{name:<{_NAME_WIDTH}} {default:<{_TIME_WIDTH}} {quick:<{_TIME_WIDTH}} {data.get('title', '')}".rstrip()


def study_listing(directory: Path = STUDIES_DIR) -> list[str]:
    """One line per study of ``directory``, sorted by name (:func:`study_line`); a file that cannot be read gives
    its name and the error instead."""
    lines = []
    for name in study_names(directory):
        try:
            data = read_toml(directory / f"{name}.toml", "study file")
        except StudyError as err:
            lines.append(f"{name:<{_NAME_WIDTH}} error: {err}")
            continue
        lines.append(study_line(name, data))
    return lines
