"""The network counters of one run, from SimGrid's link tracing: what ``smpirun-on --counters DIR`` writes, and a
study's or a sweep's run declared ``counters = true`` (``results/.../counters/<run>/``).

From the trace (``study_runner.simulation.tracing``: every link's ``bandwidth_used``) read in one pass, a directory
gets:

* ``links.csv``: one row per link of the platform, busiest first: ``link``, ``kind`` (cable, limiter, port,
  fabric, shm; empty for a link the platform's model does not have), ``bandwidth_Bps`` (its bandwidth, bytes/s),
  ``bytes`` (what it carried), ``utilisation`` (bytes / (bandwidth x the traffic's span), the span being simulated
  time 0 to the end of the last traffic on any link) and ``peak_utilisation`` (the same in its busiest interval of
  ``link_series.csv``);
* ``link_series.csv``: utilisation over time, one row per interval and link that carried bytes in it:
  ``start_s``, ``end_s`` (the interval, seconds of simulated time), ``link``, ``bytes``, ``utilisation``
  (bytes / (bandwidth x the interval)); intervals of one width, 40 to 200 of them over the span
  (``study_runner.simulation.link_series``);
* ``heatmap.png``: the bytes per link on the platform's picture, cropped to the job's hosts and the nodes its
  traffic crossed (``generators.drawing.crop``);

and the busiest links can be printed (``Counters.summary``). What SimGrid's trace holds is exact for flows whose
rate never changes while they transfer and a lower bound under contention (``study_runner.simulation.tracing``); a
FATPIPE link (a ``port``) caps each flow, not their sum, so its utilisation may exceed 1.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators.drawing import draw_platform
from generators.errors import TopologyError
from generators.files import atomic_write_text
from generators.model import Platform
from study_runner.simulation.link_series import LinkSeries
from study_runner.simulation.tracing import link_bytes

__all__ = [
    "HEATMAP",
    "LINKS_COLUMNS",
    "LINKS_CSV",
    "SERIES_COLUMNS",
    "SERIES_CSV",
    "Counters",
    "read_counters",
    "write_counter_files",
    "write_counters",
    "write_run_counters",
]

LINKS_CSV = "links.csv"
SERIES_CSV = "link_series.csv"
HEATMAP = "heatmap.png"
LINKS_COLUMNS = ("link", "kind", "bandwidth_Bps", "bytes", "utilisation", "peak_utilisation")
SERIES_COLUMNS = ("start_s", "end_s", "link", "bytes", "utilisation")
BUSIEST_SHOWN = 5
"""Links the summary on stderr names."""


@dataclass(frozen=True)
class Counters:
    """What :func:`write_counters` found: bytes per link (busiest first), their series, and the heat map's fate."""

    link_bytes: dict[str, float]
    series: LinkSeries
    heatmap: str
    """Where the heat map went, or why there is none."""

    def summary(self, shown: int = BUSIEST_SHOWN) -> list[str]:
        """Lines for stderr: the totals, the busiest links, the files."""
        used = [(name, amount) for name, amount in self.link_bytes.items() if amount > 0]
        lines = [
            f"{len(used)} of {len(self.link_bytes)} links carried bytes over {self.series.end:.6g} s of traffic "
            f"(intervals of {self.series.width:g} s); busiest:"
        ]
        lines += [f"  {name}: {amount:.6g} bytes" for name, amount in used[:shown]]
        caveat = "traced bytes are exact for flows that ran alone, a lower bound under contention (docs/smpirun-on.md)"
        return [*lines, caveat, self.heatmap]


def _number(value: float | None, digits: int = 15) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def _csv(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return text.getvalue()


def _bandwidth(model: Platform | None, link: str) -> float | None:
    return model.links[link].bandwidth if model is not None and link in model.links else None


def _links_rows(totals: dict[str, float], series: LinkSeries, model: Platform | None) -> list[list[str]]:
    rows = []
    for link, amount in totals.items():
        bandwidth = _bandwidth(model, link)
        kind = model.link_kind(link) if model is not None and link in model.links else None
        mean = peak = None
        if bandwidth is not None:
            mean = amount / (bandwidth * series.end) if series.end > 0 else 0.0
            peak = max(series.bytes.get(link, [0.0])) / (bandwidth * series.width)
        rows.append([link, kind or "", _number(bandwidth), _number(amount), _number(mean, 6), _number(peak, 6)])
    return rows


def _series_rows(series: LinkSeries, model: Platform | None) -> list[list[str]]:
    rows = []
    for k, link, amount in series.rows():
        bandwidth = _bandwidth(model, link)
        share = None if bandwidth is None else amount / (bandwidth * series.width)
        start, end = k * series.width, (k + 1) * series.width
        rows.append([_number(start, 12), _number(end, 12), link, _number(amount), _number(share, 6)])
    return rows


def _heatmap(directory: Path, model: Platform | None, totals: dict[str, float], hosts: Sequence[str]) -> str:
    """Draw ``heatmap.png``; return what was drawn, or why nothing was."""
    if model is None:
        return "no heat map: the platform file does not say which topolab family and parameters built it"
    drawn = {name: amount for name, amount in totals.items() if name in model.links}
    foreign = sorted(name for name, amount in totals.items() if amount > 0 and name not in model.links)
    if foreign:
        return f"no heat map: link {foreign[0]} carried bytes but the platform's model has no such link"
    title = (
        f"{model.name}: bytes per link, job on {len(hosts)} hosts\n"
        "SimGrid link tracing: exact for flows that ran alone, a lower bound under contention"
    )
    try:
        draw_platform(model, directory / HEATMAP, link_loads=drawn, title=title, crop_to=hosts)
    except TopologyError as err:
        return f"no heat map: {err}"
    return f"heat map of the job's {len(hosts)} hosts: {directory / HEATMAP}"


def read_counters(trace: Path) -> tuple[dict[str, float], LinkSeries]:
    """The bytes per link (busiest first) and their series, from SimGrid's trace; ``StudyError`` if it is
    unusable."""
    series = LinkSeries()
    traced = link_bytes(trace, series)
    return dict(sorted(traced.items(), key=lambda item: (-item[1], item[0]))), series


def write_counter_files(
    directory: Path, totals: dict[str, float], series: LinkSeries, model: Platform | None, hosts: Sequence[str]
) -> Counters:
    """Write ``links.csv``, ``link_series.csv`` and ``heatmap.png`` into ``directory`` (made if missing; each file
    atomically) for a job on ``hosts`` of the platform ``model`` (None: a platform topolab did not write, so no
    kinds, bandwidths, utilisations or heat map)."""
    totals = dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_text(directory / LINKS_CSV, _csv(LINKS_COLUMNS, _links_rows(totals, series, model)))
    atomic_write_text(directory / SERIES_CSV, _csv(SERIES_COLUMNS, _series_rows(series, model)))
    return Counters(totals, series, _heatmap(directory, model, totals, hosts))


def write_counters(directory: Path, trace: Path, model: Platform | None, hosts: Sequence[str]) -> Counters:
    """Read ``trace`` and write the counters of ``directory`` (:func:`write_counter_files`); ``StudyError`` for an
    unusable trace (nothing is written)."""
    totals, series = read_counters(trace)
    return write_counter_files(directory, totals, series, model, hosts)


def write_run_counters(directory: Path, traced: Mapping[str, Any], model: Platform, hosts: Sequence[str]) -> Counters:
    """The counters of a study's or a sweep's run declared ``counters = true``, from its traced twin's result
    (``batch.execute``: ``link_bytes`` of the links that carried some, ``link_series``), every link of ``model``
    listed (those that carried nothing with 0 bytes) as ``smpirun-on --counters`` lists them."""
    carried = {str(name): float(amount) for name, amount in traced["link_bytes"].items()}
    totals = {**dict.fromkeys(model.links, 0.0), **carried}
    return write_counter_files(directory, totals, LinkSeries.of_record(traced["link_series"]), model, hosts)
