"""``smpirun-on --counters DIR``: the network counters of one run, from SimGrid's link tracing.

The run is traced (``study_runner.simulation.tracing``: every link's ``bandwidth_used``, written to
``DIR/links.trace``); once it ends, the trace is read in one pass and ``DIR`` gets:

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

and the busiest links are printed on stderr. What SimGrid's trace holds is exact for flows whose rate never changes
while they transfer and a lower bound under contention (``study_runner.simulation.tracing``); a FATPIPE link (a
``port``) caps each flow, not their sum, so its utilisation may exceed 1.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generators.drawing import draw_platform
from generators.errors import TopologyError
from generators.files import atomic_write_text
from generators.model import Platform
from study_runner.errors import StudyError
from study_runner.simulation.link_series import LinkSeries
from study_runner.simulation.tracing import link_bytes
from study_runner.simulation.tracing import tracing_options
from study_runner.tools.platform_files import UsageError
from study_runner.tools.platform_files import platform_model
from study_runner.tools.platform_files import ranks_on_hosts

__all__ = [
    "HEATMAP",
    "LINKS_CSV",
    "SERIES_CSV",
    "TRACE",
    "Counters",
    "counters_directory",
    "counters_options",
    "run_with_counters",
    "write_counters",
]

TRACE = "links.trace"
LINKS_CSV = "links.csv"
SERIES_CSV = "link_series.csv"
HEATMAP = "heatmap.png"
LINKS_COLUMNS = ("link", "kind", "bandwidth_Bps", "bytes", "utilisation", "peak_utilisation")
SERIES_COLUMNS = ("start_s", "end_s", "link", "bytes", "utilisation")
BUSIEST_SHOWN = 5
"""Links the summary on stderr names."""


def counters_directory(text: str, cfg: Sequence[str]) -> Path:
    """The directory of ``--counters`` (made if missing), absolute; ``UsageError`` if it cannot be one, or if a
    ``--cfg`` option would change the tracing it needs."""
    tracing = [option for option in cfg if option.startswith("tracing")]
    if tracing:
        raise UsageError(f"--counters traces the run itself: drop --cfg={tracing[0]}")
    directory = Path(text).absolute()
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--counters {text}: not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def counters_options(directory: Path) -> tuple[str, ...]:
    """The smpirun options that trace a run's links into ``directory``."""
    return tracing_options(directory / TRACE)


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


def write_counters(directory: Path, trace: Path, model: Platform | None, hosts: Sequence[str]) -> Counters:
    """Read ``trace`` and write ``links.csv``, ``link_series.csv`` and ``heatmap.png`` into ``directory`` (each
    atomically) for a job on ``hosts`` of the platform ``model`` (None: a platform topolab did not write, so no
    kinds, bandwidths, utilisations or heat map). ``StudyError`` for an unusable trace (nothing is written)."""
    series = LinkSeries()
    traced = link_bytes(trace, series)
    totals = dict(sorted(traced.items(), key=lambda item: (-item[1], item[0])))
    links_text = _csv(LINKS_COLUMNS, _links_rows(totals, series, model))
    series_text = _csv(SERIES_COLUMNS, _series_rows(series, model))
    atomic_write_text(directory / LINKS_CSV, links_text)
    atomic_write_text(directory / SERIES_CSV, series_text)
    return Counters(totals, series, _heatmap(directory, model, totals, hosts))


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
