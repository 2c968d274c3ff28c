"""Link-load heatmaps of a study, written beside its figures: ``heatmap_static_<what>.png`` and
``heatmap_traced_<what>.png``, each with a caption for the report (``captions.json``).

* **static**: what a communication schedule puts on every link under the platform's routes, from the model
  alone (``generators.analysis.link_loads``). For a schedule in steps, :func:`step_loads` is the most flows a
  link carries in any one step: a congestion-free step schedule is 1 on every cable.
* **traced**: the bytes each link carried in one real run of the study, from SimGrid's link tracing of its traced
  twin, which the batch runs when the study file declares the run ``trace_links = true``
  (``StudyContext.traced_link_bytes``). SimGrid traces a flow's bytes exactly only while no other flow
  changes its rate (``study_runner.simulation.tracing``), so a traced heatmap is compared with what the run's schedule
  sends on each link (:func:`schedule_bytes`): it is labelled *exact* when every link the schedule uses
  carried its bytes within ``EXACT_TOLERANCE`` (the run's flows were uncontended), else a *lower bound*,
  with the share of the bytes the trace holds.

Drawing is ``generators.drawing.draw_platform``: each cable coloured by the larger of its two directed loads,
the load of a node's limiter (``_nbl``) or switch fabric (``_fabric``) on its marker; a traced heatmap is cropped to
its run's hosts and the nodes their traffic crossed (``generators.drawing.crop``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generators.analysis import link_loads
from generators.drawing import draw_platform
from generators.errors import TopologyError
from generators.files import atomic_write_text
from generators.model import Platform
from study_runner.errors import StudyError
from study_runner.studies.context import StudyContext

__all__ = [
    "CAPTIONS",
    "EXACT_TOLERANCE",
    "Agreement",
    "captions",
    "compare",
    "draw_static",
    "draw_traced",
    "schedule_bytes",
    "step_loads",
]

CAPTIONS = "captions.json"
"""The file of a study's results directory that holds the report's caption of each figure (name -> text)."""

EXACT_TOLERANCE = 1e-3
"""Largest relative difference between traced and scheduled bytes of a link that still counts as exact: what
the schedule leaves out (barriers, SMPI's envelope of zero-byte messages) is a few 1e-6 in the studies."""

Flows = Sequence[tuple[int, int]]
"""Messages of one step as (source rank, destination rank)."""


def step_loads(platform: Platform, hosts: Sequence[str], steps: Iterable[Flows]) -> Counter[str]:
    """The most flows each link carries in one step of ``steps`` (rank r on ``hosts[r]``)."""
    most: Counter[str] = Counter()
    for step in steps:
        for name, load in link_loads(platform, [(hosts[src], hosts[dst]) for src, dst in step]).items():
            most[name] = max(most[name], load)
    return most


def schedule_bytes(platform: Platform, hosts: Sequence[str], messages: Iterable[tuple[Flows, float]]) -> Counter[str]:
    """Bytes each link carries when every (flows, bytes) of ``messages`` is sent once: each flow's bytes on
    every link of its route (a limiter carries its host's messages in and out)."""
    total: Counter[str] = Counter()
    for flows, size in messages:
        for name, load in link_loads(platform, [(hosts[src], hosts[dst]) for src, dst in flows]).items():
            total[name] += load * size
    return total


@dataclass(frozen=True)
class Agreement:
    """Traced bytes of the links a schedule uses, against the schedule's bytes on them."""

    lowest: float
    """Smallest traced / scheduled ratio of a link."""
    highest: float
    """Largest traced / scheduled ratio of a link."""
    recorded: float
    """Traced / scheduled bytes over all the schedule's links."""
    links: int
    """Links the schedule uses."""

    @property
    def exact(self) -> bool:
        """Every link carried its scheduled bytes within ``EXACT_TOLERANCE``."""
        return self.links > 0 and 1 - EXACT_TOLERANCE <= self.lowest and self.highest <= 1 + EXACT_TOLERANCE

    @property
    def verdict(self) -> str:
        """``exact (uncontended flows)`` or ``LOWER BOUND (contended flows, N% of the bytes traced)``."""
        if self.exact:
            return "exact (uncontended flows)"
        return f"LOWER BOUND ({self.recorded:.0%} of the bytes: contended flows)"

    def describe(self) -> str:
        """One sentence for the caption."""
        if self.exact:
            deviation = max(1 - self.lowest, self.highest - 1)
            return (
                f"Exact: each of the {self.links} links the schedule uses carried the schedule's bytes, to "
                f"{deviation:.1e} relative."
            )
        return (
            f"A lower bound: SimGrid traces only the last constant-rate stretch of a flow whose rate changes "
            f"(contention), so the trace holds {self.recorded:.1%} of the bytes the schedule sends on its "
            f"{self.links} links ({self.lowest:.1%} to {self.highest:.1%} per link)."
        )


def compare(traced: Mapping[str, float], scheduled: Mapping[str, float]) -> Agreement:
    """How ``traced`` bytes per link compare with ``scheduled`` on the links the schedule uses."""
    used = {name: amount for name, amount in scheduled.items() if amount > 0}
    if not used:
        return Agreement(0.0, 0.0, 0.0, 0)
    ratios = [traced.get(name, 0.0) / amount for name, amount in used.items()]
    recorded = sum(traced.get(name, 0.0) for name in used) / sum(used.values())
    return Agreement(min(ratios), max(ratios), recorded, len(used))


def captions(out_dir: Path) -> dict[str, str]:
    """The captions recorded in ``out_dir`` so far (figure file name -> text)."""
    path = out_dir / CAPTIONS
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _caption(out_dir: Path, figure: Path, text: str) -> None:
    recorded = captions(out_dir)
    recorded[figure.name] = text
    atomic_write_text(out_dir / CAPTIONS, json.dumps(recorded, indent=2, sort_keys=True) + "\n")


def _peaks(platform: Platform, loads: Mapping[str, float], unit: str) -> str:
    """``max 1 flows per cable, 2 per limiter``: the largest load of each kind of link."""
    peaks: dict[str | None, float] = {}
    for name, load in loads.items():
        kind = platform.link_kind(name)
        peaks[kind] = max(peaks.get(kind, 0.0), load)
    parts = [f"{peaks[kind]:g} per {kind}" for kind in ("cable", "limiter", "fabric", "port", "shm") if kind in peaks]
    return f"max {', '.join(parts) or '0'} ({unit})"


def draw_static(
    platform: Platform,
    out_dir: Path,
    what: str,
    loads: Mapping[str, float],
    title: str,
    caption: str,
    load_label: str = "flows",
) -> Path:
    """``heatmap_static_<what>.png``: ``loads`` (from the model) on ``platform``, captioned ``Static: ...``."""
    path = out_dir / f"heatmap_static_{what}.png"
    heading = f"{title}\nstatic (model routes): {_peaks(platform, loads, load_label)}"
    draw_platform(platform, path, link_loads=loads, title=heading, load_label=load_label)
    _caption(out_dir, path, f"Static heatmap (model routes, no simulation): {caption}")
    return path


def draw_traced(
    ctx: StudyContext, out_dir: Path, what: str, run_id: str, scheduled: Mapping[str, float], title: str, caption: str
) -> Path:
    """``heatmap_traced_<what>.png``: the bytes per link of run ``run_id`` from SimGrid's trace, its title and
    caption saying whether they are exact or a lower bound (compared with ``scheduled``, the bytes the run's
    schedule sends per link). ``StudyError`` if a link carried more than ``scheduled`` (beyond
    ``EXACT_TOLERANCE``): a trace never counts more than was sent, so the schedule is wrong."""
    traced = ctx.traced_link_bytes(run_id)
    agreement = compare(traced, scheduled)
    if agreement.highest > 1 + EXACT_TOLERANCE:  # a trace is exact or less: the schedule misses traffic
        raise StudyError(
            f"{ctx.study.name}: run {run_id} carried {agreement.highest:.4g} times the bytes its schedule sends "
            "on a link: the schedule given for its traced heatmap is incomplete"
        )
    path = out_dir / f"heatmap_traced_{what}.png"
    heading = f"{title}\ntraced bytes (SimGrid): {agreement.verdict}"
    try:
        # cropped to the run's hosts and the nodes its traffic crossed: 24 ranks on a 768-node Tofu draw 31 hosts
        draw_platform(
            ctx.platform_of(run_id), path, link_loads=traced, title=heading, crop_to=ctx.results[run_id].hosts
        )
    except TopologyError as err:  # a link SimGrid used that the model does not have
        raise StudyError(f"{ctx.study.name}: traced heatmap of {run_id}: {err}") from None
    text = f"Traced heatmap (SimGrid link tracing of run `{run_id}`): {caption} {agreement.describe()}"
    _caption(out_dir, path, text)
    return path
