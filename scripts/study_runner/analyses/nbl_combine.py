"""Analysis of ``nbl-combine``: Littlefield's NBL model and vector combining on the DELTA mesh.

Runs (generated here, :func:`generated_runs`; every one with alpha as SMPI message overheads):

* ``pingpong``: one-way times on two neighbouring nodes, eager and rendezvous sizes;
* ``jig``: the 3x3 testjig on the nominal mesh (Table 1);
* ``sweep.<W>x<H>.<platform>.<algorithm>.N<N>``: every mesh x vector length x algorithm x platform
  (``standard`` or ``nominal``), Snake and Fence at the integer block size that is optimal for the model of
  that platform (f = 1 or f = L);
* ``fig4.<platform>.<algorithm>.S<S>``: the block-size scan of Fig. 4 (4x4, N = 1e4).

Heatmaps (4x4, nominal NBL, N = 1e4): the combine app's Snake and Fence schedule
(:func:`generators.schedules.combine_steps`), message by message; statically, the most flows each link carries
in one step (cables 1: both are free of link conflicts; limiters up to the Appendix's L, 4 for Snake and 6 for
Fence), and the Fence run traced.

The model is ``paper_models.vector_combining`` (DELTA parameters). Checks: the ping-pong is
alpha + beta*S, the simulated f(L) of Table 1, Fig. 4's optimum shift and reversal, the three claims of
Fig. 5 on the simulated regime map (the analogue of the paper's empirical Fig. 8), and Fig. 7's 33%.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap

from generators.schedules import combine_steps
from paper_models import vector_combining as vc
from study_runner import heatmaps
from study_runner.checks import Check
from study_runner.context import StudyContext
from study_runner.errors import StudyError
from study_runner.smpi import EAGER_LIMIT_BYTES, SMPI_ENVELOPE_BYTES, message_overhead_options
from study_runner.study import PlatformSpec

MACHINE = vc.DELTA
OVERHEADS = list(message_overhead_options(MACHINE.alpha))
PLATFORMS = {"standard": vc.STANDARD, "nominal": vc.NOMINAL}
MESHES = ((4, 4), (8, 8), (16, 16), (16, 32))
MODEL_VS_SIM_MESHES = ((4, 4), (16, 16), (16, 32))  # the paper's test meshes (Sect. 4.2)
LENGTHS = (100, 1_000, 10_000, 100_000, 500_000)
QUICK_MESHES = ((4, 4), (8, 8))
QUICK_MAX_LENGTH = 100_000  # on meshes other than 4x4
FIG4_MESH, FIG4_LENGTH = (4, 4), 10_000
FIG4_BLOCKS = (20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 225, 250, 275, 300, 350, 400, 450, 500, 600)
FIG7_LENGTHS = (100_000, 500_000)
JIG_SIZES = (60, 120, 300, 600)
JIG_LINKS = (1, 2, 4, 6)
PINGPONG_DOUBLES = (1, 60, 600, EAGER_LIMIT_BYTES // 8 - 1, EAGER_LIMIT_BYTES // 8, 100_000)
COLOURS = {"tree": "C2", "snake": "C0", "fence": "C3"}


def _mesh_name(width: int, height: int, platform: str) -> str:
    return f"mesh{width}x{height}.{platform}"


def sweep_id(width: int, height: int, platform: str, algorithm: str, n: int) -> str:
    """Run id of one point of the sweep."""
    return f"sweep.{width}x{height}.{platform}.{algorithm}.N{n}"


def model_block(algorithm: str, n: int, width: int, height: int, platform: str) -> int:
    """The block size a sweep run uses: the integer optimum of the model of its platform (Tree: the whole vector)."""
    if algorithm == "tree":
        return n
    return vc.integer_optimal_block(algorithm, n, width, height, MACHINE, PLATFORMS[platform])


def model_time(
    algorithm: str, n: int, s: int, width: int, height: int, f: vc.NBLFunction, machine: vc.MachineParams = MACHINE
) -> float:
    """The model's time of one algorithm at block size ``s`` (ignored by Tree)."""
    if algorithm == "tree":
        return vc.tree_time(n, width, height, machine, f)
    timing = vc.snake_time if algorithm == "snake" else vc.fence_time
    return timing(n, s, width, height, machine, f)


def _in_quick(width: int, height: int, n: int) -> bool:
    return (width, height) == (4, 4) or ((width, height) in QUICK_MESHES and n <= QUICK_MAX_LENGTH)


def _combine_run(run_id: str, platform: str, width: int, height: int, algorithm: str, n: int, s: int, quick: bool):
    return {
        "id": run_id,
        "platform": platform,
        "app": "combine",
        "ranks": width * height,
        "args": [
            "-a",
            algorithm,
            "-W",
            str(width),
            "-H",
            str(height),
            "-n",
            str(n),
            "-S",
            str(s),
            "-w",
            "0",
            "-i",
            "1",
        ],
        "options": OVERHEADS,
        "quick": quick,
        "timeout": 3600,
    }


def generated_runs(platforms: dict[str, PlatformSpec]) -> list[dict[str, Any]]:
    """Every run of the study (the study file declares only the platforms)."""
    runs: list[dict[str, Any]] = [
        {
            "id": "pingpong",
            "platform": "pair",
            "app": "pingpong",
            "ranks": 2,
            "args": ["-s", ",".join(str(8 * d) for d in PINGPONG_DOUBLES), "-i", "2", "-w", "1"],
            "options": OVERHEADS,
        },
        {
            "id": "jig",
            "platform": "jig",
            "app": "nbl_testjig",
            "ranks": 9,
            "args": ["-L", ",".join(map(str, JIG_LINKS)), "-s", ",".join(map(str, JIG_SIZES)), "-i", "2", "-w", "1"],
            "options": OVERHEADS,
        },
    ]
    for width, height in MESHES:
        for platform in PLATFORMS:
            for n in LENGTHS:
                for algorithm in vc.ALGORITHMS:
                    s = model_block(algorithm, n, width, height, platform)
                    run_id = sweep_id(width, height, platform, algorithm, n)
                    name = _mesh_name(width, height, platform)
                    runs.append(_combine_run(run_id, name, width, height, algorithm, n, s, _in_quick(width, height, n)))
    width, height = FIG4_MESH
    for platform in PLATFORMS:
        for algorithm in vc.PIPELINED:
            for s in FIG4_BLOCKS:
                run_id = f"fig4.{platform}.{algorithm}.S{s}"
                name = _mesh_name(width, height, platform)
                runs.append(_combine_run(run_id, name, width, height, algorithm, FIG4_LENGTH, s, True))
    return runs


# --- results ------------------------------------------------------------------------------------------------------


def _time(ctx: StudyContext, run_id: str) -> float:
    """The slowest rank's time of a combine run (every rank ends with the sum)."""
    (record,) = ctx.records(run_id)
    return float(record["time_s_max"])


def _meshes(ctx: StudyContext) -> list[tuple[int, int]]:
    """The meshes whose whole sweep ran (all of them, or the quick subset)."""
    return [m for m in MESHES if sweep_id(*m, "standard", "tree", LENGTHS[0]) in ctx.results]


def _lengths(ctx: StudyContext, width: int, height: int) -> list[int]:
    return [n for n in LENGTHS if sweep_id(width, height, "standard", "tree", n) in ctx.results]


def jig_table(ctx: StudyContext) -> dict[int, dict[int, float]]:
    """Simulated T (s) of the testjig by L, then S."""
    table: dict[int, dict[int, float]] = {}
    for record in ctx.records("jig"):
        table.setdefault(int(record["links"]), {})[int(record["doubles"])] = float(record["time_s"])
    return table


def jig_f(table: dict[int, dict[int, float]], links: int, s: int) -> float:
    """f(L) = dT(L)/dT(1), dT from S to the next larger S of Table 1."""
    nxt = JIG_SIZES[JIG_SIZES.index(s) + 1]
    return (table[links][nxt] - table[links][s]) / (table[1][nxt] - table[1][s])


def winners(ctx: StudyContext, platform: str) -> dict[tuple[int, int, int], str]:
    """The fastest simulated algorithm of every (W, H, N) of the sweep."""
    result = {}
    for width, height in _meshes(ctx):
        for n in _lengths(ctx, width, height):
            times = {a: _time(ctx, sweep_id(width, height, platform, a, n)) for a in vc.ALGORITHMS}
            result[width, height, n] = min(times, key=lambda a: (times[a], vc.ALGORITHMS.index(a)))
    return result


def _share(cells: dict[tuple[int, int, int], str], algorithm: str, keep) -> float:
    chosen = [winner for key, winner in cells.items() if keep(*key)]
    return sum(w == algorithm for w in chosen) / len(chosen) if chosen else math.nan


def fig4_scan(ctx: StudyContext, platform: str, algorithm: str) -> tuple[list[int], list[float]]:
    """Simulated T against S of the Fig. 4 case."""
    return list(FIG4_BLOCKS), [_time(ctx, f"fig4.{platform}.{algorithm}.S{s}") for s in FIG4_BLOCKS]


def _fig4_optimum(ctx: StudyContext, platform: str, algorithm: str) -> tuple[int, float]:
    blocks, times = fig4_scan(ctx, platform, algorithm)
    best = int(np.argmin(times))
    return blocks[best], times[best]


def _model_vs_sim_rows(ctx: StudyContext) -> list[dict[str, Any]]:
    """One row per (mesh, platform, N, algorithm) of the sweep: the block size, the model's and simulated times."""
    half = vc.MachineParams(MACHINE.alpha / 2, MACHINE.beta, MACHINE.c2, MACHINE.c3)
    rows = []
    for width, height in _meshes(ctx):
        for platform, f in PLATFORMS.items():
            for n in _lengths(ctx, width, height):
                for algorithm in vc.ALGORITHMS:
                    s = model_block(algorithm, n, width, height, platform)
                    model = model_time(algorithm, n, s, width, height, f)
                    simulated = _time(ctx, sweep_id(width, height, platform, algorithm, n))
                    rows.append(
                        {
                            "mesh": f"{width}x{height}",
                            "platform": platform,
                            "N": n,
                            "algorithm": algorithm,
                            "S": s,
                            "model_s": model,
                            "model_half_alpha_s": model_time(algorithm, n, s, width, height, f, half),
                            "simulated_s": simulated,
                            "rel_diff": simulated / model - 1,
                        }
                    )
    return rows


def fit_nbl(ctx: StudyContext, platform: str = "nominal") -> dict[str, float]:
    """The paper's fit (Sect. 4.2) on simulated data: least squares of the Snake and Fence times of ``platform``
    for alpha and f(2), f(3), f(4), f(6) (f(1) = 1), relative errors, every sweep point with B >= 3."""
    unknowns = ["alpha", "f2", "f3", "f4", "f6"]
    matrix, target = [], []
    for width, height in _meshes(ctx):
        for n in _lengths(ctx, width, height):
            for algorithm in vc.PIPELINED:
                s = model_block(algorithm, n, width, height, platform)
                rows = (vc.snake_step_table if algorithm == "snake" else vc.fence_step_table)(n, s, width, height)
                coefficient = dict.fromkeys(unknowns, 0.0)
                known = 0.0
                for row in rows:
                    coefficient["alpha"] += row.steps * row.links
                    transfer = row.steps * MACHINE.beta * s
                    if row.links == 1:
                        known += transfer
                    else:
                        coefficient[f"f{row.links}"] += transfer
                    known += row.steps * MACHINE.combine_cost(row.combine) * s
                simulated = _time(ctx, sweep_id(width, height, platform, algorithm, n))
                matrix.append([coefficient[u] / simulated for u in unknowns])
                target.append((simulated - known) / simulated)
    solution, *_ = np.linalg.lstsq(np.array(matrix), np.array(target), rcond=None)
    return dict(zip(unknowns, (float(v) for v in solution), strict=True))


# --- checks -------------------------------------------------------------------------------------------------------


def _pingpong_checks(ctx: StudyContext) -> list[Check]:
    platform = ctx.platform_of("pingpong")
    bandwidth = platform.route_bandwidth(*ctx.results["pingpong"].hosts[:2])
    result = []
    for record in ctx.records("pingpong"):
        size = int(record["bytes"])
        eager = size < EAGER_LIMIT_BYTES
        expected = (MACHINE.alpha if eager else 0.0) + (size + SMPI_ENVELOPE_BYTES) / bandwidth
        result.append(
            Check(
                id=f"pingpong.{size // 8}doubles",
                what=(
                    f"one-way ping-pong time of {size // 8} doubles between neighbours: "
                    + ("alpha + beta*S (eager message)" if eager else "beta*S (rendezvous: SMPI charges no overhead)")
                    + f" + the {SMPI_ENVELOPE_BYTES}-byte envelope"
                ),
                published=expected,
                simulated=float(record["oneway_s_avg"]),
                unit="s",
                tolerance=1e-6,
                kind="exact",
            )
        )
    return result


def checks(ctx: StudyContext) -> list[Check]:
    """Ping-pong, Table 1, Fig. 4, the claims of Fig. 5 and Fig. 7."""
    result = _pingpong_checks(ctx)
    table = jig_table(ctx)
    for links in JIG_LINKS[1:]:
        for s in JIG_SIZES[:-1]:
            result.append(ctx.check(f"table1.f{links}.S{s}", jig_f(table, links, s)))
        result.append(
            Check(
                id=f"jig.f{links}.nominal",
                what=f"f({links}) on the nominal testjig at S = 300 -> 600 equals L: the limiter is exactly nominal",
                published=float(links),
                simulated=jig_f(table, links, 300),
                unit="x",
                tolerance=0.01,
                kind="exact",
            )
        )
    optima = {(p, a): _fig4_optimum(ctx, p, a) for p in PLATFORMS for a in vc.PIPELINED}
    shift = min(optima["standard", a][0] / optima["nominal", a][0] for a in vc.PIPELINED)
    result.append(ctx.check("fig4.optimum_shift", shift))
    standard_ratio = optima["standard", "snake"][1] / optima["standard", "fence"][1]
    nominal_ratio = optima["nominal", "fence"][1] / optima["nominal", "snake"][1]
    result.append(ctx.check("fig4.reversal", min(standard_ratio, nominal_ratio)))
    standard, nominal = winners(ctx, "standard"), winners(ctx, "nominal")
    shortest = [w for cells in (standard, nominal) for (_, _, n), w in cells.items() if n == min(LENGTHS)]
    result.append(ctx.check("claim.tree_short_vectors", sum(w == "tree" for w in shortest) / len(shortest)))
    result.append(ctx.check("claim.fence_standard", _share(standard, "fence", lambda w, h, n: n >= 1_000)))
    result.append(ctx.check("claim.snake_nbl", _share(nominal, "snake", lambda w, h, n: n >= 100_000)))
    width, height = 4, 4
    gains = [
        1
        - _time(ctx, sweep_id(width, height, "nominal", "snake", n))
        / _time(ctx, sweep_id(width, height, "nominal", "fence", n))
        for n in FIG7_LENGTHS
    ]
    result.append(ctx.check("fig7.snake_over_fence", max(gains)))
    return result


# --- notes --------------------------------------------------------------------------------------------------------


def notes(ctx: StudyContext) -> list[str]:
    """Model vs simulation, the fit, and the misses explained."""
    table = jig_table(ctx)
    result = [
        "alpha is software overhead, not latency: SMPI charges alpha/2 to the sender before an eager message leaves "
        "and "
        "alpha/2 to the receiver after it arrives (smpi/os, ois, or), so a ping-pong takes alpha + beta*S one way "
        "(pingpong.* checks). A node handling L messages thus spends L*alpha/2 of its own time, where the paper's "
        "model "
        "charges L*alpha: in the model a lone message costs alpha while a node's L messages cost L*alpha, which no "
        "per-endpoint overhead reproduces both at once (the two ends' overheads would have to overlap). SMPI charges "
        f"overheads to eager messages only (< {EAGER_LIMIT_BYTES} B = {EAGER_LIMIT_BYTES // 8} doubles); larger "
        "messages "
        f"lose alpha, at most {MACHINE.alpha / (MACHINE.beta * EAGER_LIMIT_BYTES / 8):.2%} of their transfer time.",
        "Table 1 (simulated on the nominal 3x3 jig, us): "
        + "; ".join(
            f"L={links}: " + ", ".join(f"T({s})={table[links][s] * 1e6:.0f}" for s in JIG_SIZES) for links in JIG_LINKS
        )
        + ". Simulated f(L) at S = 60, 120, 300: "
        + "; ".join(
            f"f({links}) = " + ", ".join(f"{jig_f(table, links, s):.2f}" for s in JIG_SIZES[:-1])
            for links in JIG_LINKS[1:]
        )
        + ". The DELTA's f(L) is below L for short messages (some overlap) and close to L from 300 doubles on; the "
        "nominal platform has no overlap at any size, so it matches the long-message row (within 10%) and bounds the "
        "short-message rows from above (a documented miss of up to 48% at f(4), S = 60: the platform models no "
        "partial overlap). The DELTA's absolute T are also smaller than alpha + beta*S (T(1, 60) = 74 us < 54 + 92), "
        "i.e. the jig ran at a higher rate than the Appendix's beta.",
    ]
    rows = _model_vs_sim_rows(ctx)
    if rows:
        by_alg: dict[str, list[float]] = {}
        for row in rows:
            by_alg.setdefault(f"{row['algorithm']}/{row['platform']}", []).append(row["rel_diff"])
        result.append(
            "Model vs simulation (simulated/model - 1 over the sweep; every pair in model_vs_sim.csv): "
            + "; ".join(f"{k}: {min(v):+.1%} .. {max(v):+.1%}" for k, v in sorted(by_alg.items()))
            + "."
        )
        pipelined = [r for r in rows if r["algorithm"] != "tree"]
        half = [r["simulated_s"] / r["model_half_alpha_s"] - 1 for r in pipelined]
        result.append(
            "Snake and Fence run faster than the model, most at short blocks (short N), the pattern the paper reports "
            "for the DELTA ('a little better than predicted by the nominal f(L) = L'). The simulation's reason is the "
            "alpha accounting above: with alpha/2 per message per node (the simulator's per-node cost) the same model "
            f"is within {min(half):+.1%} .. {max(half):+.1%} of the simulation; the rest is overlap of one step's "
            "overheads with other nodes' transfers, which the step-synchronous model excludes."
        )
        tree = [r for r in rows if r["algorithm"] == "tree"]
        eager_tree = [r for r in tree if 8 * r["N"] < EAGER_LIMIT_BYTES]
        if eager_tree:
            result.append(
                "Tree matches the model exactly for rendezvous-size vectors (N >= 8192: "
                + ", ".join(f"{r['rel_diff']:+.2%}" for r in tree if 8 * r["N"] >= EAGER_LIMIT_BYTES)
                + ") and is slower for eager ones ("
                + ", ".join(f"{r['mesh']} {r['platform']} N={r['N']}: {r['rel_diff']:+.0%}" for r in eager_tree)
                + "): an eager MPI_Send returns at once, so in the broadcast a node's two sends overlap, and its "
                "message to x+2 shares the link to x+1 with the message to x+1 (and, nominal, the node's limiter); the "
                "model serialises the tree's steps."
            )
    if len(_meshes(ctx)) >= 2:
        fit = fit_nbl(ctx)
        result.append(
            "Pipeline fill and drain (the paper's suspicion): fitting alpha and f(2), f(3), f(4), f(6) to the "
            "simulated "
            "nominal Snake and Fence times, as the paper fitted the DELTA's, gives "
            + ", ".join(
                f"{k} = {v * 1e6:.1f} us" if k == "alpha" else f"{k[0]}({k[1]}) = {v:.2f}" for k, v in fit.items()
            )
            + " (paper on the DELTA: f(2) = 1.1, f(3) = 1.3, f(4) = 3.9, f(6) = 5.1). The platform's limiter is "
            "exactly nominal (jig.f*), so an f(L) fitted below L can only come from the dynamics the paper suspects: "
            "steps that the model charges with L active links while the nodes are not synchronised and fewer links "
            "are busy at once. "
            + _fit_verdict(fit)
            + " The fitted alpha is close to alpha/2, the simulator's per-node cost of a message (first note)."
        )
    standard, nominal = winners(ctx, "standard"), winners(ctx, "nominal")
    model = {
        p: {key: vc.fastest(key[2], key[0], key[1], MACHINE, f).winner for key in standard}
        for p, f in PLATFORMS.items()
    }
    for platform, cells in (("standard", standard), ("nominal", nominal)):
        agree = sum(model[platform][key] == w for key, w in cells.items())
        differ = [
            f"{w_}x{h_} N={n}: model {model[platform][(w_, h_, n)]}, simulated {w}"
            for (w_, h_, n), w in cells.items()
            if model[platform][(w_, h_, n)] != w
        ]
        result.append(
            f"Fastest algorithm, {platform}: the simulation agrees with the model's choice in {agree}/{len(cells)} "
            "cells" + (f"; differs at {'; '.join(differ)}" if differ else "") + "."
        )
    return result


def _fit_verdict(fit: dict[str, float]) -> str:
    """Which fitted f(L) fall clearly (by more than 20%) below L."""
    low = [f"f({k[1]})" for k, v in fit.items() if k != "alpha" and v < 0.8 * int(k[1])]
    high = [f"f({k[1]})" for k, v in fit.items() if k != "alpha" and v >= 0.8 * int(k[1])]
    if not low:
        return "The simulation shows no such effect: every fitted f(L) is within 20% of L."
    return f"The simulation shows the effect for {', '.join(low)} (fill and drain rows) and not for {', '.join(high)}."


# --- figures ------------------------------------------------------------------------------------------------------


def _plot_table1(ctx: StudyContext, out_dir: Path) -> None:
    table = jig_table(ctx)
    published_t = {
        1: (74, 139, 293, 525),
        2: (129, 235, 502, 942),
        4: (259, 398, 833, 1733),
        6: (345, 575, 1222, 2578),
    }
    published_f = {  # Table 1's f(L), the study file's published values of the table1.f<L>.S<S> checks
        links: [float(ctx.study.published[f"table1.f{links}.S{s}"]["value"]) for s in JIG_SIZES[:-1]]
        for links in JIG_LINKS[1:]
    }
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, links in enumerate(JIG_LINKS):
        colour = f"C{i}"
        left.plot(
            JIG_SIZES, [table[links][s] * 1e6 for s in JIG_SIZES], "o-", color=colour, label=f"L={links} simulated"
        )
        left.plot(JIG_SIZES, published_t[links], "s--", color=colour, alpha=0.6, label=f"L={links} DELTA")
    left.set_xlabel("S (doubles per message)")
    left.set_ylabel("T (us)")
    left.set_title("Testjig time: nominal platform vs the DELTA (Table 1)")
    left.legend(fontsize=7, ncol=2)
    left.grid(alpha=0.3)
    x = np.arange(3)
    for i, links in enumerate(JIG_LINKS[1:]):
        right.bar(
            x + i * 0.27 - 0.27,
            [jig_f(table, links, s) for s in JIG_SIZES[:-1]],
            0.25,
            color=f"C{i + 1}",
            label=f"f({links}) simulated",
        )
        right.plot(x + i * 0.27 - 0.27, published_f[links], "k_", markersize=18, mew=2)
    right.plot([], [], "k_", markersize=12, mew=2, label="DELTA (Table 1)")
    right.set_xticks(x, [f"S={s}->{JIG_SIZES[j + 1]}" for j, s in enumerate(JIG_SIZES[:-1])])
    right.set_ylabel("f(L) = dT(L) / dT(1)")
    right.set_title("NBL function: nominal (f = L) vs measured")
    right.legend(fontsize=8)
    right.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "table1_testjig.png", dpi=110)
    plt.close(fig)


def _plot_fig4(ctx: StudyContext, out_dir: Path) -> None:
    width, height = FIG4_MESH
    fig, ax = plt.subplots(figsize=(7, 4.6))
    dense = np.unique(np.geomspace(FIG4_BLOCKS[0], FIG4_BLOCKS[-1], 120).astype(int))
    for platform, style in (("standard", "-"), ("nominal", "--")):
        f = PLATFORMS[platform]
        for algorithm in vc.PIPELINED:
            colour = COLOURS[algorithm]
            model = [model_time(algorithm, FIG4_LENGTH, int(s), width, height, f) * 1e3 for s in dense]
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
            best, best_t = _fig4_optimum(ctx, platform, algorithm)
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
    ax.set_title(f"Fig. 4: Snake and Fence vs block size, {width}x{height}, N = {FIG4_LENGTH:g} (optima annotated)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(out_dir / "fig4_block_size.png", dpi=110)
    plt.close(fig)


def _regime_axes(ax, cells: dict[tuple[int, int], str], lengths: list[int], meshes: list[int], title: str) -> None:
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
    lengths = sorted({round(v) for v in np.geomspace(100, 1e6, 25)})
    sides = [(w, h) for w, h in ((2, 2), (4, 2), (4, 4), (8, 4), (8, 8), (16, 8), (16, 16), (32, 16), (32, 32))]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    for col, (platform, f) in enumerate(PLATFORMS.items()):
        cells = {}
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


def _plot_model_vs_sim(rows: list[dict[str, Any]], out_dir: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, platform in zip(axes, PLATFORMS, strict=True):
        for algorithm in vc.ALGORITHMS:
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


def _plot_fig7(ctx: StudyContext, out_dir: Path) -> None:
    width, height = 4, 4
    lengths = _lengths(ctx, width, height)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    x = np.arange(len(lengths))
    for i, algorithm in enumerate(vc.ALGORITHMS):
        sim = [_time(ctx, sweep_id(width, height, "nominal", algorithm, n)) for n in lengths]
        model = [
            model_time(algorithm, n, model_block(algorithm, n, width, height, "nominal"), width, height, vc.NOMINAL)
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
    ax.axhline(1, color="0.3", lw=0.8, label="nominal model")
    ax.set_xticks(x, [f"N={n:.0e}" for n in lengths])
    ax.set_ylabel("time / nominal model's time")
    ax.set_title("Fig. 7 analogue: P = 16 (4x4), nominal NBL")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "fig7_p16.png", dpi=110)
    plt.close(fig)


HEATMAP_MESH, HEATMAP_LENGTH = (4, 4), 10_000


def _heatmaps(ctx: StudyContext, out_dir: Path) -> None:
    """Snake and Fence on the nominal 4x4 mesh (N = 1e4, the runs' block size): the most flows per link in one
    step (static), and the Fence run's bytes per link (traced)."""
    width, height = HEATMAP_MESH
    for algorithm in vc.PIPELINED:
        run = sweep_id(width, height, "nominal", algorithm, HEATMAP_LENGTH)
        platform, hosts = ctx.platform_of(run), ctx.results[run].hosts
        (record,) = ctx.records(run)
        n, s, blocks = int(record["elements"]), int(record["block"]), int(record["blocks"])
        steps = combine_steps(algorithm, width, height, blocks)
        if len(steps) != int(record["steps"]):
            raise StudyError(f"nbl-combine: {run} ran {record['steps']} steps, combine_steps() has {len(steps)}")
        loads = heatmaps.step_loads(platform, hosts, [[(a, b) for a, b, _ in step] for step in steps])
        busiest = max(load for name, load in loads.items() if name.endswith("_nbl"))
        title = f"{algorithm.capitalize()} on the nominal {width}x{height} mesh, N = {n}, S = {s} ({blocks} blocks)"
        caption = (
            f"the most flows a link carries in one of the {len(steps)} steps: every cable 1 (no link conflicts), "
            f"a node's limiter (node colour) up to {busiest}, the L of the Appendix's busiest row, the links the "
            "node uses at once."
        )
        heatmaps.draw_static(platform, out_dir, f"{algorithm}_{width}x{height}", loads, title, caption)
        if algorithm != "fence":
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
    """Table 1, Fig. 4, Fig. 5/8 maps, Fig. 7 and the model-vs-simulation plot, plus model_vs_sim.csv; heatmaps."""
    _heatmaps(ctx, out_dir)
    _plot_table1(ctx, out_dir)
    _plot_fig4(ctx, out_dir)
    _plot_regimes(ctx, out_dir)
    _plot_fig7(ctx, out_dir)
    rows = _model_vs_sim_rows(ctx)
    chosen = [r for r in rows if tuple(map(int, r["mesh"].split("x"))) in MODEL_VS_SIM_MESHES]
    _plot_model_vs_sim(chosen, out_dir)
    with (out_dir / "model_vs_sim.csv").open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
