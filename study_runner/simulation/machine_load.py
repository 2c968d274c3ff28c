"""Whether this machine is busy, for the measurements topolab takes of it and caches: the compute speed
(``scripts/calibrate-compute``), the memory bandwidth, the intra-node path (``smpirun-on this-machine``) and a code's
memory fraction (``scripts/measure-memory-fraction``). A figure measured while other work runs is wrong (a busy core
computes, streams and answers a ping-pong slower), and a cached one is used by every later run.

:func:`busy_cores` samples ``/proc/stat`` over half a second while this process sleeps: the cores that other work
kept busy (user, nice, system, interrupts, and the time the hypervisor gave to other machines, steal). Over
:data:`BUSY_CORES`, :func:`check_quiet` refuses a measurement asked for by name (the commands above, unless
``--busy-ok``), or takes one that a run needs, flags it and says so; the measurement records the figure
(``busy_cores``) and every later use of a flagged one says how to measure again (:func:`warn_if_flagged`).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from study_runner.errors import StudyError

__all__ = ["BUSY_CORES", "BusyMachine", "busy_cores", "busy_note", "check_quiet", "warn_if_flagged"]

BUSY_CORES = 0.5
"""Cores taken by other work above which a measurement of this machine is refused or flagged: half a core, well
above this 2-core VM's idle background (0.02-0.1 cores of steal and daemons, measured 2026-12-03)."""
WINDOW_S = 0.5
"""The sample: long enough for a busy loop to show, short beside any measurement."""
_BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # user nice system [idle iowait] irq softirq steal (guest is within user)
_warned: set[str] = set()


class BusyMachine(StudyError):
    """A measurement asked for by name while other work keeps this machine busy."""


def _cpu_times(stat: Path) -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot, from the first line of ``/proc/stat``."""
    fields = [int(value) for value in stat.read_text().split("\n", 1)[0].split()[1:9]]
    return sum(fields[i] for i in _BUSY_FIELDS), sum(fields)


def busy_cores(window: float = WINDOW_S, stat: Path = Path("/proc/stat")) -> float:
    """Cores kept busy by other work over ``window`` seconds while this process sleeps (0 without ``/proc/stat``)."""
    try:
        busy, total = _cpu_times(stat)
        time.sleep(window)
        busy_after, total_after = _cpu_times(stat)
    except (OSError, ValueError, IndexError):
        return 0.0
    elapsed = total_after - total
    return (busy_after - busy) / elapsed * (os.cpu_count() or 1) if elapsed > 0 else 0.0


def check_quiet(what: str, again: str, *, refuse: bool) -> float:
    """The cores other work keeps busy now; over :data:`BUSY_CORES`, ``BusyMachine`` when ``refuse`` (one line with
    the figures and what to do), else a warning on stderr that ``what`` is measured anyway and flagged."""
    busy = busy_cores()
    if busy <= BUSY_CORES:
        return busy
    found = (
        f"this machine is busy: {busy:.1f} of {os.cpu_count() or 1} cores taken by other work over {WINDOW_S} s, "
        f"so {what} measured now would be wrong, and cached for every later run"
    )
    if refuse:
        raise BusyMachine(f"{found}; measure again when it is idle, or give --busy-ok to keep it flagged as busy")
    print(f"topolab: warning: {found}: measured and flagged; when it is idle: {again}", file=sys.stderr)
    return busy


def busy_note(busy: float, again: str) -> str:
    """What a description of a measurement adds when it was taken busy: the figure and how to measure again."""
    return "" if busy <= BUSY_CORES else f"; MEASURED BUSY ({busy:.1f} cores taken by other work): {again}"


def warn_if_flagged(what: str, busy: float, again: str) -> None:
    """Say once per process that the cached ``what`` a run uses was measured busy, and how to measure it again."""
    if busy > BUSY_CORES and what not in _warned:
        _warned.add(what)
        print(
            f"topolab: warning: {what} was measured while this machine was busy ({busy:.1f} cores taken by other "
            f"work): the figures that use it are off; when it is idle: {again}",
            file=sys.stderr,
        )
