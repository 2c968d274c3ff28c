"""What a simulation cost, as SimGrid counts it (patch 0035): with ``STATISTICS_LOG`` among smpirun's options, the
run ends with a line for the simulation loop (its wall time, its event dates) and one for each model's max-min
solves (how many, the constraints and variables each solved on average, their wall time). How to read them:
docs/simulation-speed.md."""

from __future__ import annotations

import re
from typing import Any

STATISTICS_LOG = "--log=ker_statistics.thres:info"
"""The smpirun option that makes SimGrid print the counts."""

_RUN = re.compile(
    r"\[ker_statistics/INFO\] (?P<simulated_s>\S+) s simulated in (?P<loop_wall_s>\S+) s of wall time: "
    r"(?P<event_dates>\d+) event dates, (?P<us_per_date>\S+) us of wall time each$"
)
_MODEL = re.compile(
    r"\[ker_statistics/INFO\] (?P<model>\w+): (?P<solves>\d+) solves of (?P<constraints_per_solve>\S+) constraints "
    r"and (?P<variables_per_solve>\S+) variables on average, (?P<solve_s>\S+) s \(\S+% of the wall time\)$"
)


def _numbers(match: re.Match[str]) -> dict[str, Any]:
    return {key: int(value) if value.isdigit() else float(value) for key, value in match.groupdict().items()
            if key != "model"}  # fmt: skip


def printed_statistics(stderr: str) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """The counts a run printed on ``stderr``: the loop's (None where it printed none), and each model's by name."""
    lines = stderr.splitlines()
    run = next((_numbers(m) for line in lines if (m := _RUN.search(line))), None)
    models = {m["model"]: _numbers(m) for line in lines if (m := _MODEL.search(line))}
    return run, models


def solver_statistics(stderr: str) -> dict[str, Any] | None:
    """The loop's counts and its network model's, in one record, or None where the run printed none.

    >>> solver_statistics("[0.1] [ker_statistics/INFO] 0.1 s simulated in 2.000 s of wall time: 40 event dates, "
    ...     "50000.00 us of wall time each\\n[0.1] [ker_statistics/INFO] Network_CM02: 41 solves of 3.5 constraints "
    ...     "and 2.0 variables on average, 1.000 s (50.0% of the wall time)")  # doctest: +NORMALIZE_WHITESPACE
    {'simulated_s': 0.1, 'loop_wall_s': 2.0, 'event_dates': 40, 'us_per_date': 50000.0, 'solves': 41,
     'constraints_per_solve': 3.5, 'variables_per_solve': 2.0, 'solve_s': 1.0}
    """
    run, models = printed_statistics(stderr)
    if run is None:
        return None
    network = next((counts for name, counts in models.items() if name.startswith("Network")), {})
    return run | network
