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
    r"\[ker_statistics/INFO\] \S+ s simulated in (?P<loop_wall_s>\S+) s of wall time: (?P<event_dates>\d+) event "
    r"dates, (?P<us_per_date>\S+) us of wall time each$"
)
_NETWORK = re.compile(
    r"\[ker_statistics/INFO\] Network\w*: (?P<solves>\d+) solves of (?P<constraints_per_solve>\S+) constraints "
    r"and (?P<variables_per_solve>\S+) variables on average, (?P<solve_s>\S+) s \(\S+% of the wall time\)$"
)


def solver_statistics(stderr: str) -> dict[str, Any] | None:
    """The counts a run printed on ``stderr``: the loop's and its network model's, or None where it printed none.

    >>> solver_statistics("[0.1] [ker_statistics/INFO] 0.1 s simulated in 2.000 s of wall time: 40 event dates, "
    ...     "50000.00 us of wall time each\\n[0.1] [ker_statistics/INFO] Network_CM02: 41 solves of 3.5 constraints "
    ...     "and 2.0 variables on average, 1.000 s (50.0% of the wall time)")  # doctest: +NORMALIZE_WHITESPACE
    {'loop_wall_s': 2.0, 'event_dates': 40, 'us_per_date': 50000.0, 'solves': 41, 'constraints_per_solve': 3.5,
     'variables_per_solve': 2.0, 'solve_s': 1.0}
    """
    lines = stderr.splitlines()
    run = next((m for line in lines if (m := _RUN.search(line))), None)
    if run is None:
        return None
    counts: dict[str, Any] = {}
    network = next((m for line in lines if (m := _NETWORK.search(line))), None)
    for match in (run, network):
        for key, value in (match.groupdict() if match else {}).items():
            counts[key] = int(value) if value.isdigit() else float(value)
    return counts
