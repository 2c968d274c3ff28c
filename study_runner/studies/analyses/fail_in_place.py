"""Analysis of ``fail-in-place``: a fat tree with failed cables, routed by OpenSM's engines (Domke et al., SC14).

The runs are ``apps/bench/shift`` on platforms routed by OpenSM (``opensm = ENGINE``, ``fail_cables``: the
``generators.subnet`` parameters) of a fat tree and a dragonfly: three random permutations, and the all-to-all in
shift order, sampled (a shift from each of equal slices, and the bisection shift). Their checks use
the shift metrics of ``interconnects`` (the static bottleneck of the routes, the slowest rate); this module adds
the throughput of a run (the block over the mean time of its permutations or shifts, as a fraction of a cable), the
notes that put each failure level beside the whole network, the figure of throughput against failed cables, and a
static heatmap of the most degraded fat tree.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from study_runner.studies import heatmaps
from study_runner.studies.analyses.interconnects import link_rate
from study_runner.studies.analyses.interconnects import model_ratio
from study_runner.studies.analyses.interconnects import sampled_shifts
from study_runner.studies.analyses.interconnects import shift_loads
from study_runner.studies.analyses.interconnects import worst_rate_fraction
from study_runner.studies.context import StudyContext
from study_runner.studies.figure_fields import FigureField
from study_runner.studies.grid_fields import GridRead

FIGURES: dict[str, FigureField] = {}  # the figure is drawn from the runs alone (figure_fields)
NETWORKS = {"": "fat tree, 128 servers", "dragonfly-": "dragonfly, 342 servers"}  # the grids' prefix: the network
PATTERNS = {"random": "three random permutations", "alltoall": "all-to-all, sampled shifts"}
GRIDS = {net + pattern: GridRead(engine=(), percent=(0,), seed=()) for net in NETWORKS for pattern in PATTERNS}
TEMPLATE_FUNCTIONS = {"sampled_shifts": sampled_shifts}


def throughput(ctx: StudyContext, run: str) -> float:
    """A server's rate in the run, as a fraction of a cable: its block over the mean time of its shifts (each
    lasting as long as its slowest flow), so that every permutation weighs as much as the time it takes."""
    records = ctx.records(run)
    mean_time = statistics.fmean(float(r["time_s_max"]) for r in records)
    return int(records[0]["bytes"]) / mean_time / link_rate(ctx, run)


METRICS = {"throughput": throughput, "model_ratio": model_ratio, "worst_rate_fraction": worst_rate_fraction}


def _levels(ctx: StudyContext, grid: str, engine: str) -> dict[int, list[float]]:
    """The throughput of every run of ``grid`` and ``engine`` that ran, by failed percentage (one per seed)."""
    levels: dict[int, list[float]] = {}
    for spec in ctx.study.runs:
        if spec.grid == grid and spec.variables["engine"] == engine and spec.id in ctx.results:
            levels.setdefault(int(spec.variables["percent"]), []).append(throughput(ctx, spec.id))
    return dict(sorted(levels.items()))


def _unrouted(ctx: StudyContext, run: str) -> int:
    """Ordered pairs of servers the run's platform has no route for (cut apart by its failed cables)."""
    platform = ctx.platform_of(run)
    names = [host.name for host in platform.hosts]
    return ctx.once(("unrouted", run), lambda: sum(not platform.route(a, b) for a in names for b in names if a != b))


def notes(ctx: StudyContext) -> list[str]:
    """Per network, pattern and engine: the throughput at each failure level (mean and range over seeds), and at the
    most failed level as a share of the whole network's (the degradation Domke et al. call manageable); pairs cut
    apart."""
    out = []
    for grid, what in _grids():
        for engine in ctx.study.values(grid, "engine"):
            levels = _levels(ctx, grid, engine)
            if not levels:
                continue
            cells = [f"{p}%: {statistics.fmean(v):.3f} ({min(v):.3f}-{max(v):.3f})" for p, v in levels.items()]
            whole, worst = statistics.fmean(levels[min(levels)]), statistics.fmean(levels[max(levels)])
            out.append(
                f"{what}, {engine}: per-server rate as a share of a cable, mean (range over seeds) by failed cables: "
                f"{'; '.join(cells)}; at {max(levels)}% failed {worst / whole:.2f} of the whole network's"
            )
    cut = {spec.id: _unrouted(ctx, spec.id) for spec in ctx.study.runs if spec.id in ctx.results}
    out.append(f"pairs of servers without a route: {sum(cut.values())} over {len(cut)} runs' platforms")
    return out


def _grids() -> list[tuple[str, str]]:
    """Every grid of the study and what it is: the network, then the pattern."""
    return [(net + pattern, f"{name}: {what}") for net, name in NETWORKS.items() for pattern, what in PATTERNS.items()]


def figures(ctx: StudyContext, out_dir: Path) -> None:
    """``throughput.png``: each network's and pattern's per-server rate against the share of failed cables, a line
    per engine (mean over seeds, their range as error bars), ftree's whole tree as a point; a static heatmap."""
    fig, axes = plt.subplots(len(NETWORKS), len(PATTERNS), figsize=(11, 8), sharey=True, squeeze=False)
    for axis, (grid, what) in zip(axes.flat, _grids(), strict=True):
        for engine in ctx.study.values(grid, "engine"):
            levels = _levels(ctx, grid, engine)
            means = [statistics.fmean(v) for v in levels.values()]
            low = [m - min(v) for m, v in zip(means, levels.values(), strict=True)]
            high = [max(v) - m for m, v in zip(means, levels.values(), strict=True)]
            axis.errorbar(list(levels), means, yerr=[low, high], marker="o", capsize=3, label=engine)
        if grid == "alltoall" and "alltoall.ftree.0.1" in ctx.results:
            axis.plot([0], [throughput(ctx, "alltoall.ftree.0.1")], "k*", markersize=10, label="ftree (whole)")
        axis.set_title(f"{what} (simulated)", fontsize=10)
        axis.set_xlabel("cables between switches failed (%)")
        axis.grid(alpha=0.3)
        axis.legend()
    for axis in axes[:, 0]:
        axis.set_ylabel("per-server rate (share of a 4 GB/s cable)")
    axes[0, 0].set_ylim(bottom=0)
    fig.suptitle("Routed by OpenSM around failed cables")
    fig.tight_layout()
    fig.savefig(out_dir / "throughput.png", dpi=110)
    plt.close(fig)
    _heatmap(ctx, out_dir)


def _heatmap(ctx: StudyContext, out_dir: Path) -> None:
    """The most failed fabric that ran under dfsssp: the flows on each link in its first random permutation."""
    runs = [
        s for s in ctx.study.runs if s.grid == "random" and s.id in ctx.results and s.variables["engine"] == "dfsssp"
    ]
    spec = max(runs, key=lambda s: (int(s.variables["percent"]), -int(s.variables["seed"])))
    loads = shift_loads(ctx, spec.id, 0)
    most = max(ctx.platform_of(spec.id).cables(loads).values())
    percent = spec.variables["percent"]
    title = f"fat tree, {percent}% of its cables between switches failed, dfsssp: a random permutation"
    caption = (
        f"the flows on each link in the first random permutation of {spec.id}: at most {most} on a cable; the failed "
        "cables carry none (OpenSM's tables route around them)."
    )
    heatmaps.draw_static(ctx.platform_of(spec.id), out_dir, "dfsssp_failed", loads, title, caption)
