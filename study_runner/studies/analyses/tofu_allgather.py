"""Study ``tofu-allgather``: Ring and Bruck allgather on Tofu shapes, the collision-aware model vs simulation.

The model (``paper_models.collision_allgather``) is built exactly as the paper builds it, from
micro-benchmarks run on the same platform: the one-hop ping-pong's one-way times (communication) and the
memcpy cost (memory copies; computation is not simulated, so the allgather app charges every copy
``bytes / memcpy_rate``, the study file's figure, through topolab's one modelling shim, and the model uses the
same figure). Each prediction is then compared with the simulated allgather, without and with the collisions
of each step routed on the platform with the run's placement.

Heatmaps (shape 2x3x4): the most messages a link carries in one step of Ring and of Bruck (static: the
collisions C of the model), and the Ring run's bytes per link (traced).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from generators.model import Platform
from paper_models import collision_allgather as model
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.studies import heatmaps
from study_runner.studies.context import StudyContext
from study_runner.studies.figure_fields import run_id
from study_runner.studies.figure_fields import text
from study_runner.studies.figure_fields import texts_by_name
from study_runner.studies.grid_fields import GridRead

FIGURES = {  # what Fig. 4-7 and the heatmaps show (figure_fields)
    "pingpong": run_id(),
    "ratios": texts_by_name(words=2),  # figure -> "<algorithm> <shape>" of the allgather grid
    "crossover_shape": text(),
    "heatmap_shape": text(),
}

__all__ = ["METRICS", "figures", "notes", "predictions"]

KIB = 1 << 10
GRID = "allgather"  # the study file's runs: algorithm x shape
GRIDS = {GRID: GridRead(algorithm=("ring", "bruck"), shape=())}  # (grid_fields)


def run_id(ctx: StudyContext, algorithm: str, shape: str) -> str:
    """The allgather run of ``algorithm`` on virtual shape ``shape``."""
    return ctx.study.run_at(GRID, algorithm=algorithm, shape=shape)


def _grid(ctx: StudyContext, variable: str) -> list[Any]:
    """The values of a variable of the study file's ``allgather`` grid."""
    return ctx.study.values(GRID, variable)


def ranks(ctx: StudyContext) -> int:
    """The allgather's rank count (one per grid: every shape holds it)."""
    (count,) = _grid(ctx, "ranks")
    return int(count)


# --- model inputs -------------------------------------------------------------------------------------------------


def comm_table(ctx: StudyContext) -> dict[int, float]:
    """One-way time of the one-hop ping-pong by size (the model's communication benchmark)."""
    return {int(r["bytes"]): float(r["oneway_s_avg"]) for r in ctx.records(ctx.study.figures["pingpong"])}


def memcpy_table(ctx: StudyContext) -> dict[int, float]:
    """The memcpy benchmark's times: what the app charges (``bytes / memcpy_rate``), at the ping-pong sizes."""
    (rate,) = _grid(ctx, "memcpy_rate")
    return {size: size / float(rate) for size in sorted(comm_table(ctx))}


def collisions(platform: Platform, hosts: list[str], algorithm: str) -> list[int]:
    """C of every step of ``algorithm`` with ranks on ``hosts`` (step sizes do not matter)."""
    return [model.step_collisions(platform, hosts, messages) for messages, _ in model.steps(algorithm, len(hosts), 1)]


def _sizes(ctx: StudyContext) -> list[int]:
    """The sizes the allgather runs simulated (their arguments, or their quick arguments under --quick)."""
    return sorted(int(r["bytes"]) for r in ctx.records(ctx.study.runs_of(GRID)[0]))


def predictions(ctx: StudyContext, algorithm: str, shape: str) -> dict[str, list[float]]:
    """Simulated (slowest rank) and predicted times per size: plain and with collisions."""
    rid = run_id(ctx, algorithm, shape)
    result = ctx.results[rid]
    counts = collisions(ctx.platform_of(rid), result.hosts, algorithm)
    comm, memcpy, count = comm_table(ctx), memcpy_table(ctx), ranks(ctx)
    simulated = {int(r["bytes"]): float(r["time_s_max"]) for r in result.records}
    sizes = _sizes(ctx)
    return {
        "simulated": [simulated[m] for m in sizes],
        "plain": [model.predict(algorithm, count, m, comm, memcpy) for m in sizes],
        "collisions": [model.predict(algorithm, count, m, comm, memcpy, counts) for m in sizes],
        "counts": [float(c) for c in counts],
    }


def _crossovers(ctx: StudyContext, shape: str) -> dict[str, float | None]:
    ring, bruck = predictions(ctx, "ring", shape), predictions(ctx, "bruck", shape)
    sizes = _sizes(ctx)
    return {kind: model.crossover(sizes, ring[kind], bruck[kind]) for kind in ("simulated", "plain", "collisions")}


def _factor(a: float | None, b: float | None) -> float:
    """How many times apart two sizes are (>= 1), infinite if either is missing."""
    if a is None or b is None:
        return math.inf
    return max(a / b, b / a)


def largest_size_ratio(ctx: StudyContext, algorithm: str, shape: str, kind: str) -> float:
    """Predicted (``plain`` or with ``collisions``) / simulated time at the largest size the run simulated."""
    p = predictions(ctx, algorithm, shape)
    return p[kind][-1] / p["simulated"][-1]


def crossover_bytes(ctx: StudyContext, shape: str, kind: str) -> float:
    """The size where Ring becomes faster than Bruck on ``shape`` (``simulated``, ``plain`` or ``collisions``
    prediction), 0 when it does not in the sizes run."""
    return _crossovers(ctx, shape)[kind] or 0.0


def crossover_factor(ctx: StudyContext, shape: str, kind: str) -> float:
    """How many times apart the ``kind`` prediction's crossover and the simulated one are (>= 1; inf if either
    is missing)."""
    cross = _crossovers(ctx, shape)
    return _factor(cross[kind], cross["simulated"])


def crossover_factor_ratio(ctx: StudyContext, shape: str) -> float:
    """The plain prediction's crossover factor over the collision-aware one's (0 when the latter is infinite)."""
    collisions_factor = crossover_factor(ctx, shape, "collisions")
    plain_factor = crossover_factor(ctx, shape, "plain")
    return plain_factor / collisions_factor if math.isfinite(collisions_factor) else 0.0


METRICS = {
    "largest_size_ratio": largest_size_ratio,
    "crossover_bytes": crossover_bytes,
    "crossover_factor": crossover_factor,
    "crossover_factor_ratio": crossover_factor_ratio,
}


def _size(value: float | None) -> str:
    return "none in the sizes run" if value is None else f"{value / KIB:.1f} KiB"


def notes(ctx: StudyContext) -> list[str]:
    """Collision counts, both crossovers, and the small-message ratios the paper discusses."""
    out = []
    for algorithm in model.ALGORITHMS:
        for shape in _grid(ctx, "shape"):
            p = predictions(ctx, algorithm, shape)
            ratios = ", ".join(
                f"{m // KIB}K {c / s:.2f} ({q / s:.2f})"
                for m, s, q, c in zip(_sizes(ctx), p["simulated"], p["plain"], p["collisions"], strict=True)
            )
            out.append(
                f"{algorithm} on {shape}: collisions per step C = {[int(c) for c in p['counts']]}; "
                f"predicted/simulated with collisions (plain) by size: {ratios}."
            )
    for shape in _grid(ctx, "shape"):
        c = _crossovers(ctx, shape)
        out.append(
            f"Ring/Bruck crossover on {shape}: simulated {_size(c['simulated'])}, predicted with collisions "
            f"{_size(c['collisions'])}, predicted plain {_size(c['plain'])}."
        )
    comm = comm_table(ctx)
    out.append(
        f"Small messages: the one-hop ping-pong costs {comm[KIB] * 1e6:.2f} us one way at 1 KiB; the ratios above at "
        "1-16 KiB show the hop latency the one-hop benchmark leaves out (docs/tofu-allgather.md)."
    )
    return out


def _heatmaps(ctx: StudyContext, out_dir: Path) -> None:
    """Ring and Bruck on the ``[figures]`` heatmap shape: the most messages per link in one step (static), and the
    bytes per link of those the study file traces (``trace_links``)."""
    shape = ctx.study.figures["heatmap_shape"]
    for algorithm in model.ALGORITHMS:
        rid, count = run_id(ctx, algorithm, shape), ranks(ctx)
        platform, hosts = ctx.platform_of(rid), ctx.results[rid].hosts
        loads = heatmaps.step_loads(platform, hosts, [messages for messages, _ in model.steps(algorithm, count, 1)])
        title = f"FX10 Tofu, {count} ranks on shape {shape}: {algorithm.capitalize()} allgather"
        counts = collisions(platform, hosts, algorithm)
        per_step = f"C = {counts[0]} in each of the {len(counts)} steps" if len(set(counts)) == 1 else f"C = {counts}"
        caption = (
            f"the most messages a link carries in one step: the collisions of the model ({per_step}); a node's "
            "limiter (node colour) carries its messages in and out."
        )
        heatmaps.draw_static(platform, out_dir, f"{algorithm}_{shape}", loads, title, caption, "messages")
        if not ctx.traced(rid):
            continue
        args = ctx.results[rid].spec.arguments(ctx.quick)
        warmup = int(args[args.index("-w") + 1])  # not in the app's records
        sent = []
        for record in ctx.records(rid):
            repeats = warmup + int(record["iterations"])
            for messages, size in model.steps(algorithm, count, int(record["bytes"])):
                sent.append((messages, repeats * (size + SMPI_ENVELOPE_BYTES)))
        scheduled = heatmaps.schedule_bytes(platform, hosts, sent)
        caption = "bytes per link over the run, every size."
        heatmaps.draw_traced(ctx, out_dir, f"{algorithm}_{shape}", rid, scheduled, title, caption)


def figures(ctx: StudyContext, out_dir: Path) -> None:
    """Fig. 4 / 5 (predicted / simulated against size) and Fig. 6 / 7 (times and the crossover); heatmaps."""
    _heatmaps(ctx, out_dir)
    for figure, run in ctx.study.figures["ratios"].items():
        algorithm, shape = run.split()
        p = predictions(ctx, algorithm, shape)
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.semilogx(_sizes(ctx), [q / s for q, s in zip(p["plain"], p["simulated"], strict=True)], "s--",
                    label="no consideration (no collisions)")  # fmt: skip
        ax.semilogx(_sizes(ctx), [c / s for c, s in zip(p["collisions"], p["simulated"], strict=True)], "o-",
                    label="in consideration (collisions)")  # fmt: skip
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xlabel("message size per rank (bytes)")
        ax.set_ylabel("predicted / simulated time")
        ax.set_title(f"{figure.capitalize()} - {algorithm.capitalize()} on shape {shape} (24 ranks, FX10)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out_dir / f"{figure}_{algorithm}_{shape}_ratio.png", dpi=120)
        plt.close(fig)
    crossover_shape = ctx.study.figures["crossover_shape"]
    for figure, kind in (("fig6", "plain"), ("fig7", "collisions")):
        fig, ax = plt.subplots(figsize=(7, 4))
        for algorithm, colour in (("ring", "tab:blue"), ("bruck", "tab:red")):
            p = predictions(ctx, algorithm, crossover_shape)
            ax.loglog(_sizes(ctx), p["simulated"], "-", color=colour, label=f"{algorithm} simulated")
            ax.loglog(_sizes(ctx), p[kind], "--", color=colour, label=f"{algorithm} predicted ({kind})")
        ax.set_xlabel("message size per rank (bytes)")
        ax.set_ylabel("allgather time (s)")
        ax.set_title(f"{figure.capitalize()} - Ring vs Bruck on {crossover_shape}, prediction {kind}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / f"{figure}_crossover_{kind}.png", dpi=120)
        plt.close(fig)
