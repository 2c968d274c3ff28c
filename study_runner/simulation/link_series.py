"""Bytes per link over simulated time, in intervals of one width, read from SimGrid's trace in one pass.

:func:`study_runner.simulation.tracing.link_bytes` hands every stretch of a link's ``bandwidth_used`` (a rate, B/s,
held from one time to the next) to a :class:`LinkSeries`, which spreads its bytes over fixed intervals of simulated
time starting at 0. The run's length is not known while the trace is read, so the width grows as the trace goes on:
it starts at 1 ns and, whenever a stretch ends beyond ``INTERVALS`` intervals, neighbouring intervals
are merged, by 2 and 5 in turn. Widths are therefore 1, 2, 10, 20, 100 ... ns, and a run is cut into between
``INTERVALS / 5`` and ``INTERVALS`` intervals (fewer only for a run shorter than ``INTERVALS`` ns). Merging only
adds intervals together, so each link's intervals always sum to the bytes :func:`~tracing.link_bytes` integrates
for it (to rounding).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

__all__ = ["INTERVALS", "NS_PER_S", "LinkSeries"]

INTERVALS = 200
"""The most intervals a series holds (a multiple of 10: merging by 2 and by 5 keeps every interval whole)."""

NS_PER_S = 1_000_000_000
"""The width of an interval before any merging is 1 ns; a width is a whole number of ns (``scale / NS_PER_S``, so
that 1000 ns is printed as 1e-06 s, not 1.0000000000000002e-06)."""


class LinkSeries:
    """Bytes each link carried in each interval ``[k * width, (k + 1) * width)`` of simulated time.

    >>> series = LinkSeries()
    >>> series.add("a", 0.0, 1e-7, 2e9)     # 2 GB/s for 100 ns: 200 bytes
    >>> series.width, series.end
    (1e-09, 1e-07)
    >>> series.add("a", 3e-7, 4e-7, 1e9)    # a stretch ending past 200 ns merges intervals by 2
    >>> series.width, round(sum(series.bytes["a"]), 6)
    (2e-09, 300.0)
    """

    def __init__(self, intervals: int = INTERVALS) -> None:
        if intervals < 10 or intervals % 10:
            raise ValueError(f"a series holds a multiple of 10 intervals, not {intervals}")
        self.intervals = intervals
        self._scale = 1  # the width in ns
        self.width = self._scale / NS_PER_S
        """The width of every interval (seconds)."""
        self.end = 0.0
        """The end of the last stretch with traffic (seconds of simulated time)."""
        self.bytes: dict[str, list[float]] = {}
        """Link -> bytes in each interval (``intervals`` of them; those after ``end`` are 0)."""
        self._merges = 0

    def add(self, link: str, start: float, end: float, rate: float) -> None:
        """``link`` carried ``rate`` bytes/s from ``start`` to ``end`` (seconds)."""
        if end <= start or rate == 0:
            return
        while end > self.intervals * self.width:
            self._merge()
        self.end = max(self.end, end)
        row = self.bytes.get(link)
        if row is None:
            row = self.bytes[link] = [0.0] * self.intervals
        width = self.width
        first = min(int(start / width), self.intervals - 1)
        last = min(int(end / width), self.intervals - 1)
        if first == last:
            row[first] += rate * (end - start)
            return
        row[first] += rate * ((first + 1) * width - start)
        for k in range(first + 1, last):
            row[k] += rate * width
        row[last] += rate * (end - last * width)

    def _merge(self) -> None:
        """Merge neighbouring intervals by 2 or 5 (in turn): the series then covers that many times longer."""
        factor = 2 if self._merges % 2 == 0 else 5
        self._merges += 1
        self._scale *= factor
        self.width = self._scale / NS_PER_S
        kept = self.intervals // factor
        for link, row in self.bytes.items():
            merged = [sum(row[k * factor : (k + 1) * factor]) for k in range(kept)]
            self.bytes[link] = merged + [0.0] * (self.intervals - kept)

    def used_intervals(self) -> int:
        """How many intervals the traffic spans: the last one holds ``end``."""
        if self.end <= 0:
            return 0
        return min(max(1, -int(-self.end // self.width)), self.intervals)

    def rows(self) -> Iterator[tuple[int, str, float]]:
        """(interval, link, bytes) of every interval in which a link carried bytes, in time order, links by name."""
        names = sorted(self.bytes)
        for k in range(self.used_intervals()):
            for link in names:
                amount = self.bytes[link][k]
                if amount > 0:
                    yield k, link, amount

    def record(self) -> dict[str, Any]:
        """The series as JSON values (a cached result's): the width in ns, the end, and its non-zero intervals.

        >>> series = LinkSeries()
        >>> series.add("a", 0.0, 1e-7, 2e9)
        >>> copy = LinkSeries.of_record(series.record())
        >>> (copy.width, copy.end, list(copy.rows())) == (series.width, series.end, list(series.rows()))
        True
        """
        rows = [[k, link, amount] for k, link, amount in self.rows()]
        return {"intervals": self.intervals, "width_ns": self._scale, "merges": self._merges, "end": self.end,
                "rows": rows}  # fmt: skip

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> LinkSeries:
        """The series :meth:`record` gave."""
        series = cls(int(record["intervals"]))
        series._scale, series._merges = int(record["width_ns"]), int(record["merges"])
        series.width = series._scale / NS_PER_S
        series.end = float(record["end"])
        for k, link, amount in record["rows"]:
            series.bytes.setdefault(str(link), [0.0] * series.intervals)[int(k)] = float(amount)
        return series
