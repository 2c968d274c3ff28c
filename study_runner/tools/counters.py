"""``smpirun-on --counters DIR``: the network counters of one run, from SimGrid's link tracing.

The run is traced (``study_runner.simulation.tracing``: every link's ``bandwidth_used``, written to
``DIR/links.trace``); once it ends, ``DIR`` gets ``links.csv``, ``link_series.csv`` and ``heatmap.png``
(``study_runner.simulation.counters`` says what each holds, and how exact), and the busiest links are printed on
stderr.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from study_runner.errors import StudyError
from study_runner.errors import UsageError
from study_runner.simulation.counters import HEATMAP
from study_runner.simulation.counters import LINKS_CSV
from study_runner.simulation.counters import SERIES_CSV
from study_runner.simulation.counters import write_counters
from study_runner.simulation.platform_files import platform_model
from study_runner.simulation.platform_files import ranks_on_hosts
from study_runner.simulation.simgrid_options import cfg
from study_runner.simulation.tracing import tracing_options

__all__ = ["TRACE", "counters_directory", "counters_options", "run_with_counters"]

TRACE = "links.trace"


def counters_directory(text: str, options: Sequence[str]) -> Path:
    """The directory of ``--counters`` (made if missing), absolute; ``UsageError`` if it cannot be one, or if one of
    the ``--cfg`` ``options`` (NAME:VALUE) would change the tracing it needs."""
    tracing = [option for option in options if option.startswith("tracing")]
    if tracing:
        raise UsageError(f"--counters traces the run itself: drop {cfg(tracing[0])}")
    directory = Path(text).absolute()
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--counters {text}: not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def counters_options(directory: Path) -> tuple[str, ...]:
    """The smpirun options that trace a run's links into ``directory``."""
    return tracing_options(directory / TRACE)


def run_with_counters(command: Sequence[str], directory: Path, platform: Path, hostfile: Path, ranks: int) -> int:
    """Run the traced smpirun ``command`` (its output streams through), then write the counters of ``directory``;
    the exit status is smpirun's, or 1 when the counters cannot be read from the trace."""
    model = platform_model(platform)
    hosts = list(ranks_on_hosts(hostfile, ranks))
    for name in (TRACE, LINKS_CSV, SERIES_CSV, HEATMAP):  # nothing of an earlier run is left to pass for this one's
        (directory / name).unlink(missing_ok=True)
    # smpirun gets SIGKILL when this process dies, as it would by replacing it (smpirun_on.DIES_WITH_SMPIRUN)
    dies_with_us = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []
    try:
        status = subprocess.run([*dies_with_us, *command], check=False).returncode
    except KeyboardInterrupt:  # smpirun had the Ctrl-C too; subprocess.run has waited for it or killed it
        print("smpirun-on: interrupted: counters not written", file=sys.stderr)
        return 130
    if status != 0:
        print(f"smpirun-on: counters not written: smpirun exited with status {status}", file=sys.stderr)
        return status
    try:
        counters = write_counters(directory, directory / TRACE, model, hosts)
    except StudyError as err:
        print(f"smpirun-on: error: counters: {err}", file=sys.stderr)
        return 1
    for line in counters.summary():
        print(f"smpirun-on: counters: {line}", file=sys.stderr)
    print(f"smpirun-on: counters: wrote {directory / LINKS_CSV}, {SERIES_CSV}", file=sys.stderr, flush=True)
    return 0
