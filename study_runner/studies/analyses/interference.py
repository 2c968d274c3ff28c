"""Analysis of ``interference``: a job beside a communication-heavy neighbour, by placement and network.

Each run of the grid ``jobs`` is one job (an all-to-all or a 1-D halo exchange, both of ``apps/bench/shift``) among
neighbours (``RunSpec.neighbours``): its records are every job's time shared and alone on the same hosts
(``simulation.jobs``). The checks read the job's slowdown (``METRICS``); the notes explain each slowdown by the
cables the job shares with its neighbour: every message of each job (all are ``shift`` jobs, whose permutations
``generators.schedules.shift_steps`` draws as the app does) routed on the platform model
(``generators.analysis.link_loads``); the figure draws the slowdowns, static heatmaps the links the jobs share.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from generators.analysis import link_loads
from generators.schedules import shift_steps
from study_runner.simulation.jobs import MEASURED
from study_runner.simulation.jobs import Job
from study_runner.simulation.jobs import allocate
from study_runner.studies import heatmaps
from study_runner.studies.context import StudyContext
from study_runner.studies.grid_fields import GridRead

GRID = "jobs"  # the study file's run grid: net, placement, job, scale
GRIDS = {GRID: GridRead(scale=(), net=(), placement=("isolated", "random"), job=("alltoall",))}  # (grid_fields)
FIGURES: dict = {}  # the figure reads the grid only


def job_args(job: str, ranks: int, size: str) -> list[str]:
    """The ``shift`` arguments of ``job``: every shift 1 .. N-1 for the all-to-all (shift's default: Open MPI's
    pairwise order), shifts 1 and N-1 for the halo exchange (both ring neighbours); ``size`` bytes a message.

    >>> job_args("halo", 64, "1M")
    ['-S', '1,63', '-s', '1M', '-i', '1', '-w', '0']
    """
    shifts = [] if job == "alltoall" else ["-S", f"1,{ranks - 1}"]
    return [*shifts, "-s", size, "-i", "1", "-w", "0"]


def own_placement(placement: str, partition: str) -> str:
    """The job's own hosts: its partition when it is ``isolated`` there (a torus), else none (the allocation's)."""
    return partition if placement == "isolated" else ""


TEMPLATE_FUNCTIONS = {"job_args": job_args, "own_placement": own_placement}


def _job(ctx: StudyContext, run: str, job: str = MEASURED) -> dict:
    """The figures of one job of the run: its own (the record's fields) or a neighbour's (``<name>_<field>``)."""
    (record,) = ctx.records(run)
    if job == MEASURED:
        return record
    return {key.removeprefix(f"{job}_"): value for key, value in record.items() if key.startswith(f"{job}_")}


def slowdown(ctx: StudyContext, run: str) -> float:
    """The run's own job's time beside its neighbours over its time alone on the same hosts."""
    return float(_job(ctx, run)["slowdown"])


METRICS = {"slowdown": slowdown}


def _shift_flows(args: tuple[str, ...], hosts: list[str]) -> list[tuple[str, str]]:
    """The host pairs of every message of a ``shift`` job (its ``-S`` shifts and ``-R`` relabelling, as the app
    draws them: ``generators.schedules.shift_steps``), each rank on its host."""
    words = dict(itertools.pairwise(args))
    shifts = [int(s) for s in words["-S"].split(",")] if "-S" in words else None
    steps = shift_steps(len(hosts), shifts, int(words.get("-R", 0)) or None)
    return [(hosts[src], hosts[dst]) for step in steps for src, dst in step]


def _link_loads(ctx: StudyContext, run: str) -> dict[str, Counter[str]]:
    """The flows each job of the run puts on each link: its messages routed on the platform model."""
    spec = next(s for s in ctx.study.runs if s.id == run)
    platform = ctx.platform_of(run)
    jobs = [Job(MEASURED, Path(spec.app), spec.args, spec.ranks, placement=spec.placement), *spec.neighbours]
    hosts = allocate(platform, jobs, spec.allocation)
    return {job.name: link_loads(platform, _shift_flows(job.args, hosts[job.name])) for job in jobs}


def shared_cables(ctx: StudyContext, run: str) -> tuple[int, int]:
    """How many of the cables the run's job loads its neighbours load too, and how many it loads."""
    platform = ctx.platform_of(run)
    loads = {name: set(platform.cables(per_link)) for name, per_link in _link_loads(ctx, run).items()}
    others = set().union(*(cables for name, cables in loads.items() if name != MEASURED))
    return len(loads[MEASURED] & others), len(loads[MEASURED])


def _heatmaps(ctx: StudyContext, out_dir: Path) -> None:
    """The job's flows on the links its neighbour loads too (the shared ones): on the dragonfly with random hosts,
    and on the torus in its partition (none)."""
    runs = _runs(ctx)
    scale = next(iter(runs))[0]  # the first size that ran (the default's)
    for net, placement in (("dragonfly", "random"), ("torus", "isolated")):
        run = runs.get((scale, net, placement, "alltoall"))
        if run is None:
            continue
        loads = _link_loads(ctx, run)
        theirs = set().union(*(set(per_link) for name, per_link in loads.items() if name != MEASURED))
        shared = {link: flows for link, flows in loads[MEASURED].items() if link in theirs}
        common, loaded = shared_cables(ctx, run)
        heatmaps.draw_static(
            ctx.platform_of(run),
            out_dir,
            f"{net}_{placement}_shared",
            shared,
            f"{net}, the all-to-all job {placement}: its flows on the links its neighbour loads too",
            f"every message of the all-to-all job ({run}) routed on the model, counted on the links that the "
            f"neighbour's messages cross too: {common} of the {loaded} cables the job loads are shared.",
        )


def _runs(ctx: StudyContext) -> dict[tuple[str, str, str, str], str]:
    """The grid's runs that ran, by (scale, net, placement, job)."""
    keys = ("scale", "net", "placement", "job")
    return {tuple(r.variables[k] for k in keys): r.id
            for r in ctx.study.runs if r.grid == GRID and r.id in ctx.results}  # type: ignore[misc]  # fmt: skip


def notes(ctx: StudyContext) -> list[str]:
    """Per run: the job's slowdown and its neighbour's, and the cables they share; and whether the neighbour ran
    throughout the job (its time alone at least the job's time shared)."""
    out = []
    for (_, net, placement, job), run in sorted(_runs(ctx).items(), key=lambda item: item[1]):
        mine, neighbour = _job(ctx, run), _job(ctx, run, "neighbour")
        shared, loaded = shared_cables(ctx, run)
        throughout = "throughout" if neighbour["alone_s"] >= mine["shared_s"] else "NOT throughout (it ends first)"
        out.append(
            f"{net} of {len(ctx.platform_of(run).hosts)} nodes, {placement}, {job} of {mine['ranks']} ranks: slowdown "
            f"{mine['slowdown']:.4f} (alone {mine['alone_s'] * 1e3:.3f} ms, shared {mine['shared_s'] * 1e3:.3f} ms); "
            f"it loads {loaded} cables, {shared} of them loaded by the neighbour too; the neighbour "
            f"({neighbour['ranks']} ranks) slows down {neighbour['slowdown']:.4f} and runs {throughout}"
        )
    return out


def figures(ctx: StudyContext, out_dir: Path) -> None:
    """``interference.png``: the slowdown of each job by network, isolated and random placement side by side; a row
    of panels per machine size that ran."""
    runs = _runs(ctx)
    scales = list(dict.fromkeys(key[0] for key in runs))
    nets = list(dict.fromkeys(key[1] for key in runs))
    jobs = list(dict.fromkeys(key[3] for key in runs))
    fig, panels = plt.subplots(len(scales), len(jobs), figsize=(5.2 * len(jobs), 4.0 * len(scales)), sharey=True,
                               squeeze=False)  # fmt: skip
    for row, scale in zip(panels, scales, strict=True):
        for panel, job in zip(row, jobs, strict=True):
            _bars(ctx, panel, [runs[scale, net, placement, job] for placement in PLACEMENTS for net in nets], nets)
            ranks = ctx.results[runs[scale, nets[0], "isolated", job]].records[0]["ranks"]
            panel.set_title(f"{job} job of {ranks} ranks beside a random-permutation neighbour", fontsize=10)
        row[0].set_ylabel("slowdown (shared / alone)")
    panels[0][0].legend(title="the job's nodes")
    fig.suptitle("isolated: a Blue Gene/Q partition (torus), whole groups (dragonfly), whole leaves (fat tree)")
    fig.tight_layout()
    fig.savefig(out_dir / "interference.png", dpi=110)
    plt.close(fig)
    _heatmaps(ctx, out_dir)


PLACEMENTS = ("isolated", "random")


def _bars(ctx: StudyContext, panel: Any, runs: list[str], nets: list[str]) -> None:
    """Two bars per network, isolated then random (``runs``: the isolated runs of every net, then the random)."""
    for offset, colour in enumerate(("C0", "C3")):
        values = [slowdown(ctx, run) for run in runs[offset * len(nets) : (offset + 1) * len(nets)]]
        xs = [i + (offset - 0.5) * 0.38 for i in range(len(nets))]
        panel.bar_label(panel.bar(xs, values, 0.36, color=colour, label=PLACEMENTS[offset]), fmt="%.3f", fontsize=8)
    panel.axhline(1.0, color="0.3", linewidth=0.8)
    labels = [
        f"{net} ({len(ctx.platform_of(run).hosts)} nodes)" for net, run in zip(nets, runs[: len(nets)], strict=True)
    ]
    panel.set_xticks(range(len(nets)), labels)
    panel.grid(True, axis="y", alpha=0.3)
