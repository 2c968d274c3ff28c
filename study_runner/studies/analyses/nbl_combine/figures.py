"""nbl-combine's figures: Table 1, Fig. 4, the regime maps, model vs simulation, Fig. 7 and the heat maps."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from generators.schedules import combine_steps
from paper_models import vector_combining as vc
from study_runner.errors import StudyError
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.studies import heatmaps
from study_runner.studies.analyses.nbl_combine.results import fig4_optimum
from study_runner.studies.analyses.nbl_combine.results import fig4_scan
from study_runner.studies.analyses.nbl_combine.results import jig_axes
from study_runner.studies.analyses.nbl_combine.results import jig_table
from study_runner.studies.analyses.nbl_combine.results import lengths_run
from study_runner.studies.analyses.nbl_combine.results import model_vs_sim_rows
from study_runner.studies.analyses.nbl_combine.results import nbl_f
from study_runner.studies.analyses.nbl_combine.results import run_time
from study_runner.studies.analyses.nbl_combine.results import table1_published
from study_runner.studies.analyses.nbl_combine.results import winners
from study_runner.studies.analyses.nbl_combine.runs import COLOURS
from study_runner.studies.analyses.nbl_combine.runs import FIG4
from study_runner.studies.analyses.nbl_combine.runs import MACHINE
from study_runner.studies.analyses.nbl_combine.runs import PLATFORMS
from study_runner.studies.analyses.nbl_combine.runs import algorithms
from study_runner.studies.analyses.nbl_combine.runs import fig4_case
from study_runner.studies.analyses.nbl_combine.runs import model_block
from study_runner.studies.analyses.nbl_combine.runs import model_time
from study_runner.studies.analyses.nbl_combine.runs import platforms
from study_runner.studies.analyses.nbl_combine.runs import sweep_run
from study_runner.studies.context import StudyContext


def _plot_table1(ctx: StudyContext, out_dir: Path) -> None:
    """``table1_testjig.png``: the testjig's T against S beside the DELTA's, and its f(L) beside Table 1's."""
    table = jig_table(ctx, ctx.study.figures["testjig"])
    jig_links, jig_sizes = jig_axes(table)
    published_t = {int(links): times for links, times in ctx.study.reference["table1_times"].items()}
    published_f: dict[int, list[float]] = {}  # Table 1's f(L) by L, one per S (the study file's table1 checks)
    for (links, _), f in table1_published(ctx).items():
        published_f.setdefault(links, []).append(f)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, links in enumerate(jig_links):
        colour = f"C{i}"
        left.plot(
            jig_sizes, [table[links][s] * 1e6 for s in jig_sizes], "o-", color=colour, label=f"L={links} simulated"
        )
        left.plot(jig_sizes, published_t[links], "s--", color=colour, alpha=0.6, label=f"L={links} DELTA")
    left.set_xlabel("S (doubles per message)")
    left.set_ylabel("T (us)")
    left.set_title("Testjig time: nominal platform vs the DELTA (Table 1)")
    left.legend(fontsize=7, ncol=2)
    left.grid(alpha=0.3)
    x = np.arange(3)
    for i, links in enumerate(jig_links[1:]):
        right.bar(
            x + i * 0.27 - 0.27,
            [nbl_f(table, links, s) for s in jig_sizes[:-1]],
            0.25,
            color=f"C{i + 1}",
            label=f"f({links}) simulated",
        )
        right.plot(x + i * 0.27 - 0.27, published_f[links], "k_", markersize=18, mew=2)
    right.plot([], [], "k_", markersize=12, mew=2, label="DELTA (Table 1)")
    right.set_xticks(x, [f"S={s}->{jig_sizes[j + 1]}" for j, s in enumerate(jig_sizes[:-1])])
    right.set_ylabel("f(L) = dT(L) / dT(1)")
    right.set_title("NBL function: nominal (f = L) vs measured")
    right.legend(fontsize=8)
    right.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "table1_testjig.png", dpi=110)
    plt.close(fig)


def _plot_fig4(ctx: StudyContext, out_dir: Path) -> None:
    """``fig4_block_size.png``: Snake and Fence against S in the Fig. 4 case, model and simulation, optima marked."""
    width, height, length, scanned = fig4_case(ctx)
    fig, ax = plt.subplots(figsize=(7, 4.6))
    dense = np.unique(np.geomspace(scanned[0], scanned[-1], 120).astype(int))
    for platform in ctx.study.values(FIG4, "nbl"):
        f, style = PLATFORMS[platform], "-" if platform == "standard" else "--"
        for algorithm in ctx.study.values(FIG4, "algorithm"):
            colour = COLOURS[algorithm]
            model = [model_time(algorithm, length, int(s), width, height, f) * 1e3 for s in dense]
            ax.plot(dense, model, style, color=colour, alpha=0.6, label=f"{algorithm}, {platform} model")
            blocks, times = fig4_scan(ctx, platform, algorithm)
            marker = "o" if platform == "standard" else "s"
            ax.plot(
                blocks,
                [t * 1e3 for t in times],
                marker,
                color=colour,
                mfc="none" if platform == "nominal" else colour,
                label=f"{algorithm}, {platform} simulated",
            )
            best, best_t = fig4_optimum(ctx, platform, algorithm)
            ax.annotate(
                f"{best}",
                (best, best_t * 1e3),
                textcoords="offset points",
                xytext=(0, -12),
                ha="center",
                fontsize=7,
                color=colour,
            )
    ax.set_xscale("log")
    ax.set_xlabel("block size S (doubles)")
    ax.set_ylabel("time (ms)")
    ax.set_title(f"Fig. 4: Snake and Fence vs block size, {width}x{height}, N = {length:g} (optima annotated)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(out_dir / "fig4_block_size.png", dpi=110)
    plt.close(fig)


def _regime_axes(ax, cells: dict[tuple[int, int], str], lengths: list[int], meshes: list[int], title: str) -> None:
    """One regime map: the fastest algorithm of each (P, N) cell, a colour per algorithm."""
    cmap = ListedColormap([COLOURS[a] for a in vc.ALGORITHMS])
    # A cell the quick study did not run stays blank.
    grid = np.ma.masked_less(
        np.array([[vc.ALGORITHMS.index(cells[p, n]) if (p, n) in cells else -1 for n in lengths] for p in meshes]), 0
    )
    ax.pcolormesh(np.arange(len(lengths) + 1), np.arange(len(meshes) + 1), grid, cmap=cmap, vmin=0, vmax=2)
    step_x = max(1, len(lengths) // 6)
    step_y = max(1, len(meshes) // 8)
    ax.set_xticks(np.arange(len(lengths))[::step_x] + 0.5, [f"{n:.0e}" for n in lengths][::step_x], fontsize=7)
    ax.set_yticks(np.arange(len(meshes))[::step_y] + 0.5, [str(p) for p in meshes][::step_y], fontsize=7)
    ax.set_xlabel("vector length N")
    ax.set_ylabel("nodes P")
    ax.set_title(title, fontsize=9)


def _plot_regimes(ctx: StudyContext, out_dir: Path) -> None:
    """``fig5_fig8_regimes.png``: the model's fastest algorithm (Fig. 5) above the simulation's (cf. Fig. 8)."""
    lengths = sorted({round(v) for v in np.geomspace(100, 1e6, 25)})
    sides = [(w, h) for w, h in ((2, 2), (4, 2), (4, 4), (8, 4), (8, 8), (16, 8), (16, 16), (32, 16), (32, 32))]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    for col, platform in enumerate(platforms(ctx)):
        f, cells = PLATFORMS[platform], {}
        for w, h in sides:
            for n in lengths:
                cells[w * h, n] = vc.fastest(n, w, h, MACHINE, f).winner
        _regime_axes(axes[0, col], cells, lengths, [w * h for w, h in sides], f"model, {platform} (Fig. 5)")
        simulated = winners(ctx, platform)
        meshes = sorted({w * h for w, h, _ in simulated})
        sim_lengths = sorted({n for _, _, n in simulated})
        sim_cells = {(w * h, n): a for (w, h, n), a in simulated.items()}
        _regime_axes(axes[1, col], sim_cells, sim_lengths, meshes, f"simulation, {platform} (cf. Fig. 8)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[a]) for a in vc.ALGORITHMS]
    fig.legend(handles, vc.ALGORITHMS, loc="upper center", ncol=3)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out_dir / "fig5_fig8_regimes.png", dpi=110)
    plt.close(fig)


def _plot_model_vs_sim(ctx: StudyContext, rows: list[dict[str, Any]], out_dir: Path) -> None:
    """Simulated over modelled time of each algorithm against N, a panel per platform, a line per mesh of ``rows``."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, platform in zip(axes, platforms(ctx), strict=True):
        for algorithm in algorithms(ctx):
            for mesh, marker in zip(sorted({r["mesh"] for r in rows}), "osD^v", strict=False):
                chosen = [
                    r for r in rows if r["platform"] == platform and r["algorithm"] == algorithm and r["mesh"] == mesh
                ]
                ax.plot(
                    [r["N"] for r in chosen],
                    [100 * r["rel_diff"] for r in chosen],
                    marker + "-",
                    color=COLOURS[algorithm],
                    alpha=0.8,
                    label=f"{algorithm} {mesh}",
                )
        ax.axhline(0, color="0.3", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("vector length N")
        ax.set_title(f"{platform}: simulated / model - 1")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("%")
    axes[1].legend(fontsize=6, ncol=3)
    fig.tight_layout()
    fig.savefig(out_dir / "model_vs_simulation.png", dpi=110)
    plt.close(fig)


def _plot_fig7(ctx: StudyContext, out_dir: Path, width: int, height: int, nbl: str) -> None:
    """Each algorithm's simulated time on one mesh and platform of the sweep over the model's, with the paper's
    fitted model beside it."""
    lengths = lengths_run(ctx, width, height)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    x = np.arange(len(lengths))
    for i, algorithm in enumerate(algorithms(ctx)):
        sim = [run_time(ctx, sweep_run(ctx, width, height, nbl, algorithm, n)) for n in lengths]
        model = [
            model_time(algorithm, n, model_block(algorithm, n, width, height, nbl), width, height, PLATFORMS[nbl])
            for n in lengths
        ]
        fitted = []
        for n in lengths:
            s = n if algorithm == "tree" else vc.integer_optimal_block(algorithm, n, width, height, MACHINE, vc.FITTED)
            fitted.append(model_time(algorithm, n, s, width, height, vc.FITTED))
        base = [model[j] for j in range(len(lengths))]
        ax.bar(
            x + (i - 1) * 0.27,
            [s / b for s, b in zip(sim, base, strict=True)],
            0.25,
            color=COLOURS[algorithm],
            label=f"{algorithm} simulated",
        )
        ax.plot(x + (i - 1) * 0.27, [f / b for f, b in zip(fitted, base, strict=True)], "k_", markersize=14, mew=2)
    ax.plot([], [], "k_", markersize=12, mew=2, label="paper's fitted model")
    ax.axhline(1, color="0.3", lw=0.8, label=f"{nbl} model")
    ax.set_xticks(x, [f"N={n:.0e}" for n in lengths])
    ax.set_ylabel(f"time / {nbl} model's time")
    ax.set_title(f"Fig. 7 analogue: P = {width * height} ({width}x{height}), {nbl} NBL")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "fig7_p16.png", dpi=110)
    plt.close(fig)


def _heatmaps(ctx: StudyContext, out_dir: Path, width: int, height: int, nbl: str, length: int) -> None:
    """Snake and Fence on one mesh, platform and N of the sweep (the runs' block size): the most flows per link in
    one step (static), and the Fence run's bytes per link (traced)."""
    for algorithm in vc.PIPELINED:
        run = sweep_run(ctx, width, height, nbl, algorithm, length)
        platform, hosts = ctx.platform_of(run), ctx.results[run].hosts
        (record,) = ctx.records(run)
        n, s, blocks = int(record["elements"]), int(record["block"]), int(record["blocks"])
        steps = combine_steps(algorithm, width, height, blocks)
        if len(steps) != int(record["steps"]):
            raise StudyError(f"nbl-combine: {run} ran {record['steps']} steps, combine_steps() has {len(steps)}")
        loads = heatmaps.step_loads(platform, hosts, [[(a, b) for a, b, _ in step] for step in steps])
        busiest = max(load for name, load in loads.items() if platform.link_kind(name) == "limiter")
        title = f"{algorithm.capitalize()} on the {nbl} {width}x{height} mesh, N = {n}, S = {s} ({blocks} blocks)"
        caption = (
            f"the most flows a link carries in one of the {len(steps)} steps: every cable 1 (no link conflicts), "
            f"a node's limiter (node colour) up to {busiest}, the L of the Appendix's busiest row, the links the "
            "node uses at once."
        )
        heatmaps.draw_static(platform, out_dir, f"{algorithm}_{width}x{height}", loads, title, caption)
        if not ctx.traced(run):
            continue
        repeats = int(record["warmup"]) + int(record["iterations"])
        messages = [
            ([(a, b)], repeats * (8 * min(s, n - block * s) + SMPI_ENVELOPE_BYTES))
            for step in steps
            for a, b, block in step
        ]
        scheduled = heatmaps.schedule_bytes(platform, hosts, messages)
        caption = (
            "bytes per link over the run: each edge of the fence carries the vector once each way; cables off the "
            "fence carry only the barrier and the collectives that gather the times (a few hundred bytes). Blocks "
            "of successive steps overlap on the limiters and on the cables (eager sends return at once)."
        )
        heatmaps.draw_traced(ctx, out_dir, f"{algorithm}_{width}x{height}", run, scheduled, title, caption)


def figures(ctx: StudyContext, out_dir: Path) -> None:
    """Table 1, Fig. 4, Fig. 5/8 maps, Fig. 7 and the model-vs-simulation plot, plus model_vs_sim.csv; heatmaps:
    the runs and meshes the study file's ``[figures]`` names."""
    shown = ctx.study.figures
    _heatmaps(ctx, out_dir, **shown["heatmaps"])
    _plot_table1(ctx, out_dir)
    _plot_fig4(ctx, out_dir)
    _plot_regimes(ctx, out_dir)
    _plot_fig7(ctx, out_dir, **shown["fig7"])
    rows = model_vs_sim_rows(ctx)
    chosen = [r for r in rows if r["mesh"] in shown["model_vs_sim"]]
    _plot_model_vs_sim(ctx, chosen, out_dir)
    with (out_dir / "model_vs_sim.csv").open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
