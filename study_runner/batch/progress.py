"""Progress of a batch of simulations on stderr: one line per run (studies) or a bar with an ETA (sweeps).

Both show the same estimate of the time left (``study_runner.batch.eta``): what the simulations not finished yet are
expected to cost, from their history or their size. Results served from the cache take no time and do not enter it.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol
from typing import TextIO

from study_runner.batch.eta import Estimate

__all__ = ["BarProgress", "LineProgress", "Progress", "format_duration"]


def format_duration(seconds: float) -> str:
    """``73`` -> ``1:13``, ``3725`` -> ``1:02:05``.

    >>> format_duration(73), format_duration(3725), format_duration(5.4)
    ('1:13', '1:02:05', '0:05')
    """
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress(Protocol):
    """What the executor reports while it works."""

    def begin(self, total: int, cached: int, estimate: Estimate | None = None) -> None:
        """``total`` runs, ``cached`` of them already done (served from the cache); ``estimate`` of the others."""

    def advance(self, label: str, cached: bool, wall_s: float | None, peak_memory_mib: float | None) -> None:
        """One more run is done."""

    def end(self) -> None:
        """Every run is done (or the batch stopped)."""

    def note(self, text: str) -> None:
        """Something happened that the user should know of (a batch job's worker left or joined)."""


class _Clock:
    """Counts and the estimate of the time left, shared by both displays."""

    def __init__(self) -> None:
        self.total = self.done = self.cached = self.simulated = 0
        self.started = time.monotonic()
        self.estimate: Estimate | None = None

    def begin(self, total: int, cached: int, estimate: Estimate | None = None) -> None:
        self.total, self.cached, self.estimate = total, cached, estimate
        self.started = time.monotonic()

    def count(self, label: str, cached: bool, wall_s: float | None) -> None:
        self.done += 1
        if not cached:
            self.simulated += 1
            if self.estimate is not None:
                self.estimate.finish(label, wall_s)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def eta(self) -> float | None:
        """Seconds left (None without an estimate, when nothing is left, or before anything can be estimated)."""
        return None if self.estimate is None or self.done >= self.total else self.estimate.seconds_left()


class LineProgress(_Clock):
    """One line per run: ``[done/total] label: simulated in 1.2 s, 80 MiB (3.4 s elapsed, about 9 s left)``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__()
        self.stream = stream or sys.stderr

    def advance(self, label: str, cached: bool, wall_s: float | None, peak_memory_mib: float | None) -> None:
        self.count(label, cached, wall_s)
        if cached:
            what = "from cache"
        else:
            memory = "" if peak_memory_mib is None else f", {peak_memory_mib:.0f} MiB"
            what = f"simulated in {wall_s or 0.0:.1f} s{memory}"
        eta = self.eta()
        left = f", about {eta:.0f} s left" if eta is not None else ""
        print(f"[{self.done}/{self.total}] {label}: {what} ({self.elapsed():.1f} s elapsed{left})", file=self.stream)
        self.stream.flush()

    def end(self) -> None:
        pass

    def note(self, text: str) -> None:
        print(f"{text} ({self.elapsed():.1f} s elapsed)", file=self.stream)
        self.stream.flush()


class BarProgress(_Clock):
    """A bar redrawn in place on a terminal; elsewhere (logs, CI) a line every ``every`` seconds and at the end."""

    WIDTH = 30

    def __init__(self, what: str = "points", stream: TextIO | None = None, every: float = 10.0) -> None:
        super().__init__()
        self.what = what
        self.stream = stream or sys.stderr
        self.every = every
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.last_line = float("-inf")

    def line(self) -> str:
        """The current state, e.g. ``[#######-------] 57/225 points (12 cached) 1:23 elapsed, ETA 1:05``."""
        filled = self.WIDTH * self.done // self.total if self.total else self.WIDTH
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        eta = self.eta()
        left = f", ETA {format_duration(eta)}" if eta is not None else ""
        return (
            f"[{bar}] {self.done}/{self.total} {self.what} ({self.cached} cached, {self.simulated} simulated) "
            f"{format_duration(self.elapsed())} elapsed{left}"
        )

    def _show(self, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r" + self.line() + ("\n" if final else ""))
        elif final or time.monotonic() - self.last_line >= self.every:
            self.stream.write(self.line() + "\n")
            self.last_line = time.monotonic()
        self.stream.flush()

    def begin(self, total: int, cached: int, estimate: Estimate | None = None) -> None:
        super().begin(total, cached, estimate)
        self.done = cached
        self._show()

    def advance(self, label: str, cached: bool, wall_s: float | None, peak_memory_mib: float | None) -> None:
        if cached:  # counted at begin()
            return
        self.count(label, cached, wall_s)
        self._show()

    def end(self) -> None:
        self._show(final=True)

    def note(self, text: str) -> None:
        """On its own line (a terminal's bar is redrawn below it)."""
        self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
        self.last_line = float("-inf")
        self._show()
