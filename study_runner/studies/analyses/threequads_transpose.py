"""Analysis of ``threequads-transpose``: the metrics of its checks (Table 1, speedups, ratios, node groups; the
study file declares them), notes, Fig. 3/4.

Each run prints one JSON line per rank (phase times and partners) and a summary line (elapsed time =
slowest rank). Groups are read from what each rank actually did: the partners it reports for step 1
and step 2 (-1: no exchange in that step).

Heatmaps: the most flows a link carries in one step of each transpose (static: Three Quads' two steps put
at most one flow on every cable), and the bytes per link of the full-duplex runs, traced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from generators import link_loads
from generators.schedules import transpose_steps
from generators.topologies.enterprise import BACKPLANE
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.studies import heatmaps
from study_runner.studies.context import StudyContext
from study_runner.studies.figure_fields import FigureField
from study_runner.studies.grid_fields import GridRead

FIGURES: dict[str, FigureField] = {}  # the figures are drawn from the runs alone (figure_fields)

PHASES = ("init_s", "transpose_s", "step1_s", "wait_s", "step2_s")
PHASE_LABELS = ("initialisation", "local transpose", "step 1", "wait", "step 2")


GRID = "transpose"  # the study file's runs: network (tq, es) x duplex (hd, fd)
GRIDS = {GRID: GridRead(network=("tq",), duplex=("hd", "fd"), algorithm=())}  # (grid_fields)


def _ranks(ctx: StudyContext, run: str) -> list[dict[str, Any]]:
    return [r for r in ctx.records(run) if not r.get("summary")]


def elapsed(ctx: StudyContext, run: str) -> float:
    """The run's elapsed time: its summary record's ``elapsed_s`` (the slowest node)."""
    (summary,) = [r for r in ctx.records(run) if r.get("summary")]
    return float(summary["elapsed_s"])


def group_size(ctx: StudyContext, run: str, group: str) -> int:
    """How many nodes of the run communicate in no step (``none``), step 1 only, step 2 only or ``both``."""
    counts = {"none": 0, "step1": 0, "step2": 0, "both": 0}
    for r in _ranks(ctx, run):
        one, two = r["step1_partner"] >= 0, r["step2_partner"] >= 0
        counts["both" if one and two else "step1" if one else "step2" if two else "none"] += 1
    return counts[group]


def slowest_step(ctx: StudyContext, run: str, phase: str) -> float:
    """The slowest node's time in ``phase`` (``step1_s``, ``step2_s``, ...) of the run."""
    return max(float(r[phase]) for r in _ranks(ctx, run))


METRICS = {"elapsed": elapsed, "group_size": group_size, "slowest_step": slowest_step}


def _run(ctx: StudyContext, network: str, duplex: str) -> str:
    return ctx.study.run_at(GRID, network=network, duplex=duplex)


def notes(ctx: StudyContext) -> list[str]:
    """The static link loads of every step, and the slowest node's full-duplex step times beside the paper's."""
    three_quads = _run(ctx, "tq", "fd")
    step1 = slowest_step(ctx, three_quads, "step1_s")
    step2 = slowest_step(ctx, three_quads, "step2_s")
    paper1 = ctx.study.published_value("calibration.tq_fd_step1")
    paper2 = float(ctx.study.reference["tq_fd_step2"])
    miss = (step2 - paper2) / paper2
    link_load_notes = []
    for network in ctx.study.values(GRID, "network"):
        run = _run(ctx, network, "fd")
        algorithm = ctx.results[run].spec.variables["algorithm"]
        platform, hosts = ctx.platform_of(run), ctx.results[run].hosts
        q = round(len(hosts) ** (1 / 3))
        for number, step in enumerate(transpose_steps(q, algorithm), 1):
            loads = link_loads(platform, [(hosts[a], hosts[b]) for a, b in step])
            cables = platform.cables(loads)  # not limiters or fabrics
            uplinks = {name: n for name, n in sorted(cables.items()) if BACKPLANE in platform.links[name].ends}
            detail = f"; module uplinks: {uplinks}" if uplinks else ""
            link_load_notes.append(
                f"Static link loads ({platform.name}, {algorithm} step {number}, {len(step)} flows): at most "
                f"{max(cables.values())} flow(s) per directed cable{detail}."
            )
    return [
        *link_load_notes,
        f"Slowest node, Three Quads full duplex: step 1 {step1:.2f} s (paper {paper1:g} s, the calibration point of "
        f"the node full-duplex limit), step 2 {step2:.2f} s (paper {paper2:g} s, {miss:+.0%}; why both steps run at "
        "the node limit, and what the simulation leaves out: docs/threequads-transpose.md).",
    ]


def figures(ctx: StudyContext, out_dir: Path) -> None:
    """``fig3_fig4_per_node.png``: per-node phase breakdown, nodes sorted by time, HD and FD."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    runs = [_run(ctx, "tq", duplex) for duplex in ("hd", "fd")]
    for axis, run, title in zip(axes, runs, ("Fig. 3: half duplex", "Fig. 4: full duplex"), strict=True):
        # by time, then by group (as the paper's bars), so that equal-time groups stay contiguous
        ranks = sorted(
            _ranks(ctx, run),
            key=lambda r: (round(r["total_s"], 3), r["step2_partner"] >= 0, r["step1_partner"] >= 0, r["rank"]),
        )
        bottom = [0.0] * len(ranks)
        for phase, label, colour in zip(PHASES, PHASE_LABELS, ("C7", "C8", "C0", "C3", "C2"), strict=True):
            values = [float(r[phase]) for r in ranks]
            axis.bar(range(len(ranks)), values, bottom=bottom, width=0.85, label=label, color=colour)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        axis.set_title(f"Three Quads, {title} (simulated)")
        axis.set_xlabel("nodes, sorted by execution time")
        axis.set_xticks([])
    axes[0].set_ylabel("time (s)")
    axes[1].legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out_dir / "fig3_fig4_per_node.png", dpi=110)
    plt.close(fig)
    _heatmaps(ctx, out_dir)


HEATMAPS = (  # network, file, title, caption: the full-duplex run of each network
    ("tq", "tq_two_step", "Three Quads, 64 nodes: two-step transpose",
     "Three Quads' two steps put at most {most} flow on any cable (the congestion-free claim); a node's "
     "limiter (node colour) carries its message out and its message in."),
    ("es", "es_direct", "4 x 16 chassis switch, 64 nodes: direct (pairwise swap) transpose",
     "the one-step swap crosses the backplane: a module uplink carries up to {most} flows at once."),
)  # fmt: skip


def _heatmaps(ctx: StudyContext, out_dir: Path) -> None:
    """Static: the most flows per link in one step; traced: the full-duplex run's bytes (its flows start and
    end together in every step, so the trace is exact)."""
    for network, what, title, caption in HEATMAPS:
        run = _run(ctx, network, "fd")
        algorithm = ctx.results[run].spec.variables["algorithm"]
        platform, hosts = ctx.platform_of(run), ctx.results[run].hosts
        steps = transpose_steps(round(len(hosts) ** (1 / 3)), algorithm)
        loads = heatmaps.step_loads(platform, hosts, steps)
        most = max(platform.cables(loads).values())
        caption = f"the most flows a link carries in one step: {caption.format(most=most)}"
        heatmaps.draw_static(platform, out_dir, what, loads, title, caption)
        block = int(_ranks(ctx, run)[0]["block"])
        message = block * block * 8 + SMPI_ENVELOPE_BYTES  # one block of doubles per message
        scheduled = heatmaps.schedule_bytes(platform, hosts, [(step, message) for step in steps])
        if ctx.traced(run):
            heatmaps.draw_traced(ctx, out_dir, what, run, scheduled, f"{title} ({run})", "bytes per link over the run.")
