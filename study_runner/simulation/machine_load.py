"""Whether this machine is busy, for the measurements topolab takes of it and caches: the compute speed
(``scripts/calibrate-compute``), the memory bandwidth, the intra-node path (``smpirun-on this-machine``) and a code's
memory fraction (``scripts/measure-memory-fraction``). A figure measured while other work runs is wrong (a busy core
computes, streams and answers a ping-pong slower), and a cached one is used by every later run.

:func:`busy_cores` samples ``/proc/stat`` over half a second while this process sleeps: the cores that other work
kept busy (user, nice, system, interrupts, and the time the hypervisor gave to other machines, steal). Over
:data:`BUSY_CORES`, :func:`check_quiet` refuses a measurement asked for by name (the commands above, unless
``--busy-ok``), or takes one that a run needs, flags it and says so; the measurement records the figure
(``busy_cores``) and every later use of a flagged one says how to measure again (:func:`warn_if_flagged`).

A quiet start does not make a figure right: other work may start during the measurement, or the host may be having a
slow stretch. :func:`measured_with_doubts` checks each figure against the range any machine topolab runs on can give
(:class:`Bound`) and the spread of its repeats (over :data:`WIDE_SPREAD`); a doubtful measurement is taken once
more, and one still doubtful is kept with its doubts recorded (``doubts``), said at once and at every later use.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import TypeVar

from study_runner.errors import StudyError

__all__ = [
    "BUSY_CORES",
    "WIDE_SPREAD",
    "Bound",
    "BusyMachine",
    "busy_cores",
    "busy_note",
    "check_quiet",
    "figure_doubts",
    "measured_with_doubts",
    "read_doubts",
    "warn_if_flagged",
]

BUSY_CORES = 0.5
"""Cores taken by other work above which a measurement of this machine is refused or flagged: half a core, well
above this 2-core VM's idle background (0.02-0.1 cores of steal and daemons, measured 2026-12-03)."""
WINDOW_S = 0.5
"""The sample: long enough for a busy loop to show, short beside any measurement."""
WIDE_SPREAD = 1.5
"""The largest of a measurement's repeats over its smallest above which the measurement is doubtful: idle, this VM's
repeats stay within 1.06 (DGEMM 80.0-84.6 Gflop/s over 7 runs) to 1.3 (a memory pass); a repeat 1.5 times slower
than another was disturbed."""
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


def _flags(busy: float, doubts: Sequence[str]) -> tuple[str | None, str | None]:
    """What flags a measurement, in the words both :func:`busy_note` and :func:`warn_if_flagged` put in parentheses:
    the cores other work took when it was taken busy, and its doubts (None for each flag it does not have)."""
    taken = f"{busy:.1f} cores taken by other work" if busy > BUSY_CORES else None
    return taken, "; ".join(doubts) if doubts else None


def busy_note(busy: float, again: str, doubts: Sequence[str] = ()) -> str:
    """What a description of a measurement adds when it was taken busy, or is doubtful: the figures and how to
    measure again."""
    taken, doubtful = _flags(busy, doubts)
    said = [f"MEASURED BUSY ({taken})"] * (taken is not None) + [f"DOUBTFUL ({doubtful})"] * (doubtful is not None)
    return f"; {', '.join(said)}: {again}" if said else ""


def warn_if_flagged(what: str, busy: float, again: str, doubts: Sequence[str] = ()) -> None:
    """Say once per process that the cached ``what`` a run uses was measured busy, or is doubtful, and how to measure
    it again."""
    taken, doubtful = _flags(busy, doubts)
    if (taken or doubtful) and what not in _warned:
        _warned.add(what)
        why = [f"measured while this machine was busy ({taken})"] * (taken is not None)
        why += [f"doubtful ({doubtful})"] * (doubtful is not None)
        print(
            f"topolab: warning: {what} was {' and is '.join(why)}: the figures that use it are off; "
            f"when it is idle: {again}",
            file=sys.stderr,
        )


@dataclass(frozen=True)
class Bound:
    """The range a figure of any machine topolab runs on lies in (its sanity bound), and the unit to say it in."""

    low: float
    high: float
    unit: str
    scale: float
    """The figure divided by ``scale`` is in ``unit``."""

    def times(self, factor: float) -> Bound:
        """The bound of ``factor`` such figures together."""
        return dataclasses.replace(self, low=self.low * factor, high=self.high * factor)

    def doubt(self, name: str, value: float) -> str | None:
        """Why ``value`` of the figure ``name`` is doubtful (outside the bound), or None."""
        if self.low <= value <= self.high:
            return None
        return (
            f"{name} {value / self.scale:.3g} {self.unit} is outside "
            f"{self.low / self.scale:.3g}-{self.high / self.scale:.3g} {self.unit}"
        )


def figure_doubts(
    figures: Mapping[str, tuple[float, Bound]], repeats: Mapping[str, Sequence[float]] | None = None
) -> tuple[str, ...]:
    """What is doubtful in a measurement: each of its ``figures`` (name: value and bound) outside its bound, and each
    set of ``repeats`` (name: the figure each repeat gave) whose largest is over :data:`WIDE_SPREAD` times its
    smallest.

    >>> latency = Bound(5e-8, 2e-5, "us", 1e-6)
    >>> figure_doubts({"latency": (1.33e-3, latency)}, {"passes": [2.0, 2.1, 3.4]})
    ('latency 1.33e+03 us is outside 0.05-20 us', 'passes spread 1.7x (2-3.4)')
    >>> figure_doubts({"latency": (4e-7, latency)}, {"passes": [2.0, 2.1]})
    ()
    """
    found = [doubt for name, (value, bound) in figures.items() if (doubt := bound.doubt(name, value)) is not None]
    for name, samples in (repeats or {}).items():
        low, high = min(samples), max(samples)
        if low > 0 and high / low > WIDE_SPREAD:
            found.append(f"{name} spread {high / low:.2g}x ({low:.3g}-{high:.3g})")
    return tuple(found)


M = TypeVar("M")


def measured_with_doubts(
    measure: Callable[[], M], doubts_of: Callable[[M], tuple[str, ...]], what: str, again: str
) -> M:
    """``measure()``, taken once more when ``doubts_of`` finds it doubtful; the second still doubtful is kept with
    its ``doubts`` field set and said on stderr (with the figures and how to measure again)."""
    first = measure()
    doubts = doubts_of(first)
    if not doubts:
        return first
    print(f"topolab: {what} looks wrong ({'; '.join(doubts)}): measuring it again", file=sys.stderr)
    second = measure()
    doubts = doubts_of(second)
    if doubts:
        print(
            f"topolab: warning: {what} measured twice still looks wrong ({'; '.join(doubts)}): kept, flagged "
            f"DOUBTFUL; when this machine is idle: {again}",
            file=sys.stderr,
        )
    return dataclasses.replace(second, doubts=doubts)  # type: ignore[type-var]


def read_doubts(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``doubts`` of a cached measurement's JSON (none in one cached before they were recorded)."""
    return tuple(raw.get("doubts", ()))
