"""Study ``tofu-allgather``: Ring and Bruck allgather on Tofu shapes, the collision-aware model vs simulation.

The model (``paper_models.collision_allgather``) is built exactly as the paper builds it, from
micro-benchmarks run on the same platform: the one-hop ping-pong's one-way times (communication) and the
memcpy cost (memory copies; computation is not simulated, so the allgather app charges every copy
``bytes / MEMCPY_RATE`` through topolab's one modelling shim and the model uses the same figure). Each
prediction is then compared with the simulated allgather, without and with the collisions of each step
routed on the platform with the run's placement.

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
from study_runner import heatmaps
from study_runner.checks import Check
from study_runner.context import StudyContext
from study_runner.smpi import SMPI_ENVELOPE_BYTES, folded_buffer_options
from study_runner.study import PlatformSpec

__all__ = ["checks", "figures", "generated_runs", "notes", "predictions"]

RANKS = 24
SHAPES = ("1x6x4", "2x3x4")
KIB, MIB = 1 << 10, 1 << 20
SIZES = tuple(KIB * 4**k for k in range(8))  # 1 KiB .. 16 MiB
QUICK_SIZES = SIZES[:6]  # --quick: 1 KiB .. 1 MiB, one iteration (real memcpy of the folded buffers costs wall time)
PINGPONG_SIZES = tuple(KIB * 4**k for k in range(11))  # 1 KiB .. 1 GiB: covers C x the largest Bruck step
MEMCPY_RATE = 42.5e9
"""Bytes/s of a memcpy on an FX10 node: half the SPARC64 IXfx's 85 GB/s memory bandwidth (Fujitsu's data
sheet; a copy reads and writes every byte). An upper bound for one core: an assumption, stated as such."""
FIG4 = ("bruck", "1x6x4")
FIG5 = ("ring", "2x3x4")
CROSSOVER_SHAPE = "2x3x4"
SHARED_BUFFERS = folded_buffer_options(1 << 20)


def run_id(algorithm: str, shape: str) -> str:
    return f"allgather.{algorithm}.{shape}"


def _allgather_args(algorithm: str, sizes: tuple[int, ...], iterations: int, warmup: int) -> list[str]:
    sizes_text = ",".join(map(str, sizes))
    timing = ["-i", str(iterations), "-w", str(warmup)]
    return ["-a", algorithm, "-s", sizes_text, *timing, "--memcpy-rate", repr(MEMCPY_RATE)]


def generated_runs(platforms: dict[str, PlatformSpec]) -> list[dict[str, Any]]:
    """The one-hop ping-pong, and both algorithms on both shapes over every size."""
    runs: list[dict[str, Any]] = [
        {
            "id": "pingpong",
            "platform": "fx10",
            "app": "pingpong",
            "ranks": 2,
            "placement": ["host-0", "host-1"],  # x = 0 and x = 1: one cable
            "args": ["-s", ",".join(map(str, PINGPONG_SIZES)), "-i", "2", "-w", "1"],
            "options": list(SHARED_BUFFERS),
        }
    ]
    for algorithm in model.ALGORITHMS:
        for shape in SHAPES:
            runs.append(
                {
                    "id": run_id(algorithm, shape),
                    "platform": "fx10",
                    "app": "allgather",
                    "ranks": RANKS,
                    "placement": f"shape:{shape}",
                    "args": _allgather_args(algorithm, SIZES, iterations=2, warmup=1),
                    "quick_args": _allgather_args(algorithm, QUICK_SIZES, iterations=1, warmup=0),
                    # The dissemination barrier releases every rank at the same instant (the app's header).
                    "options": [*SHARED_BUFFERS, "--cfg=smpi/barrier:ompi_bruck"],
                }
            )
    return runs


# --- model inputs -------------------------------------------------------------------------------------------------


def comm_table(ctx: StudyContext) -> dict[int, float]:
    """One-way time of the one-hop ping-pong by size (the model's communication benchmark)."""
    return {int(r["bytes"]): float(r["oneway_s_avg"]) for r in ctx.records("pingpong")}


def memcpy_table() -> dict[int, float]:
    """The memcpy benchmark's times: what the app charges (``bytes / MEMCPY_RATE``), at the ping-pong sizes."""
    return {size: size / MEMCPY_RATE for size in PINGPONG_SIZES}


def collisions(platform: Platform, hosts: list[str], algorithm: str) -> list[int]:
    """C of every step of ``algorithm`` with ranks on ``hosts`` (step sizes do not matter)."""
    return [model.step_collisions(platform, hosts, messages) for messages, _ in model.steps(algorithm, len(hosts), 1)]


def _sizes(ctx: StudyContext) -> list[int]:
    """The sizes the allgather runs simulated (all of SIZES, or QUICK_SIZES under --quick)."""
    return sorted(int(r["bytes"]) for r in ctx.records(run_id(*FIG4)))


def predictions(ctx: StudyContext, algorithm: str, shape: str) -> dict[str, list[float]]:
    """Simulated (slowest rank) and predicted times per size: plain and with collisions."""
    rid = run_id(algorithm, shape)
    result = ctx.results[rid]
    counts = collisions(ctx.platform_of(rid), result.hosts, algorithm)
    comm, memcpy = comm_table(ctx), memcpy_table()
    simulated = {int(r["bytes"]): float(r["time_s_max"]) for r in result.records}
    sizes = _sizes(ctx)
    return {
        "simulated": [simulated[m] for m in sizes],
        "plain": [model.predict(algorithm, RANKS, m, comm, memcpy) for m in sizes],
        "collisions": [model.predict(algorithm, RANKS, m, comm, memcpy, counts) for m in sizes],
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


def checks(ctx: StudyContext) -> list[Check]:
    """Fig. 4 / 5 at the largest size (16 MiB; 1 MiB under --quick), and the Ring/Bruck crossover on 2x3x4."""
    out = []
    for figure, (algorithm, shape) in (("fig4", FIG4), ("fig5", FIG5)):
        p = predictions(ctx, algorithm, shape)
        with_c, plain = p["collisions"][-1] / p["simulated"][-1], p["plain"][-1] / p["simulated"][-1]
        out.append(ctx.check(f"{figure}.large_message_ratio", with_c))
        out.append(ctx.check(f"{figure}.collisions_closer", abs(1 - plain) - abs(1 - with_c)))
    cross = _crossovers(ctx, CROSSOVER_SHAPE)
    out.append(ctx.check("crossover.simulated", cross["simulated"] or 0.0))
    coll, plain_factor = _factor(cross["collisions"], cross["simulated"]), _factor(cross["plain"], cross["simulated"])
    out.append(ctx.check("crossover.predicted_collisions", coll))
    out.append(ctx.check("crossover.predicted_plain", plain_factor / coll if math.isfinite(coll) else 0.0))
    return out


def _size(value: float | None) -> str:
    return "none in the sizes run" if value is None else f"{value / KIB:.1f} KiB"


def notes(ctx: StudyContext) -> list[str]:
    """Collision counts, both crossovers, and the small-message ratios the paper discusses."""
    out = []
    for algorithm in model.ALGORITHMS:
        for shape in SHAPES:
            p = predictions(ctx, algorithm, shape)
            ratios = ", ".join(
                f"{m // KIB}K {c / s:.2f} ({q / s:.2f})"
                for m, s, q, c in zip(_sizes(ctx), p["simulated"], p["plain"], p["collisions"], strict=True)
            )
            out.append(
                f"{algorithm} on {shape}: collisions per step C = {[int(c) for c in p['counts']]}; "
                f"predicted/simulated with collisions (plain) by size: {ratios}."
            )
    for shape in SHAPES:
        c = _crossovers(ctx, shape)
        out.append(
            f"Ring/Bruck crossover on {shape}: simulated {_size(c['simulated'])}, predicted with collisions "
            f"{_size(c['collisions'])}, predicted plain {_size(c['plain'])}."
        )
    comm = comm_table(ctx)
    out.append(
        f"Small messages: the one-hop ping-pong costs {comm[KIB] * 1e6:.2f} us one way at 1 KiB. The paper's "
        "small-message underestimates come from hop latency (its ping-pong is one hop, the allgather's messages "
        "cross several) and load imbalance (steps that do not start together). The simulated platform has "
        "100 ns per hop and every message of a step leaves together after a dissemination barrier, so only the "
        "hop term appears here; the ratios above at 1-16 KiB show how much of it there is."
    )
    return out


HEATMAP_SHAPE = "2x3x4"


def _heatmaps(ctx: StudyContext, out_dir: Path) -> None:
    """Ring and Bruck on shape 2x3x4: the most messages per link in one step (static), Ring traced."""
    for algorithm in model.ALGORITHMS:
        rid = run_id(algorithm, HEATMAP_SHAPE)
        platform, hosts = ctx.platform_of(rid), ctx.results[rid].hosts
        loads = heatmaps.step_loads(platform, hosts, [messages for messages, _ in model.steps(algorithm, RANKS, 1)])
        title = f"FX10 Tofu, {RANKS} ranks on shape {HEATMAP_SHAPE}: {algorithm.capitalize()} allgather"
        counts = collisions(platform, hosts, algorithm)
        per_step = f"C = {counts[0]} in each of the {len(counts)} steps" if len(set(counts)) == 1 else f"C = {counts}"
        caption = (
            f"the most messages a link carries in one step: the collisions of the model ({per_step}); a node's "
            "limiter (node colour) carries its messages in and out."
        )
        heatmaps.draw_static(platform, out_dir, f"{algorithm}_{HEATMAP_SHAPE}", loads, title, caption, "messages")
        if algorithm != "ring":
            continue
        args = ctx.results[rid].spec.arguments(ctx.quick)
        warmup = int(args[args.index("-w") + 1])  # not in the app's records
        sent = []
        for record in ctx.records(rid):
            repeats = warmup + int(record["iterations"])
            for messages, size in model.steps(algorithm, RANKS, int(record["bytes"])):
                sent.append((messages, repeats * (size + SMPI_ENVELOPE_BYTES)))
        scheduled = heatmaps.schedule_bytes(platform, hosts, sent)
        caption = "bytes per link over the run, every size."
        heatmaps.draw_traced(ctx, out_dir, f"{algorithm}_{HEATMAP_SHAPE}", rid, scheduled, title, caption)


def figures(ctx: StudyContext, out_dir: Path) -> None:
    """Fig. 4 / 5 (predicted / simulated against size) and Fig. 6 / 7 (times and the crossover); heatmaps."""
    _heatmaps(ctx, out_dir)
    for figure, (algorithm, shape) in (("fig4", FIG4), ("fig5", FIG5)):
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
    for figure, kind in (("fig6", "plain"), ("fig7", "collisions")):
        fig, ax = plt.subplots(figsize=(7, 4))
        for algorithm, colour in (("ring", "tab:blue"), ("bruck", "tab:red")):
            p = predictions(ctx, algorithm, CROSSOVER_SHAPE)
            ax.loglog(_sizes(ctx), p["simulated"], "-", color=colour, label=f"{algorithm} simulated")
            ax.loglog(_sizes(ctx), p[kind], "--", color=colour, label=f"{algorithm} predicted ({kind})")
        ax.set_xlabel("message size per rank (bytes)")
        ax.set_ylabel("allgather time (s)")
        ax.set_title(f"{figure.capitalize()} - Ring vs Bruck on {CROSSOVER_SHAPE}, prediction {kind}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / f"{figure}_crossover_{kind}.png", dpi=120)
        plt.close(fig)
