"""nbl-combine's simulated results, read from the runs: times, Table 1's f(L), the winners, the fit; and Table 1's
published f(L), as the study file's checks give them."""

from __future__ import annotations

from typing import Any

import numpy as np

from paper_models import vector_combining as vc
from study_runner.studies.analyses.nbl_combine.runs import FIG4
from study_runner.studies.analyses.nbl_combine.runs import MACHINE
from study_runner.studies.analyses.nbl_combine.runs import PLATFORMS
from study_runner.studies.analyses.nbl_combine.runs import algorithms
from study_runner.studies.analyses.nbl_combine.runs import fig4_case
from study_runner.studies.analyses.nbl_combine.runs import lengths
from study_runner.studies.analyses.nbl_combine.runs import meshes
from study_runner.studies.analyses.nbl_combine.runs import model_block
from study_runner.studies.analyses.nbl_combine.runs import model_time
from study_runner.studies.analyses.nbl_combine.runs import platforms
from study_runner.studies.analyses.nbl_combine.runs import sweep_run
from study_runner.studies.context import StudyContext


def run_time(ctx: StudyContext, run_id: str) -> float:
    """The slowest rank's time of a combine run (every rank ends with the sum)."""
    (record,) = ctx.records(run_id)
    return float(record["time_s_max"])


def _ran(ctx: StudyContext, width: int, height: int, n: int) -> bool:
    """Whether the sweep ran the W x H mesh at N = ``n`` (its first run there stands for all)."""
    return sweep_run(ctx, width, height, platforms(ctx)[0], algorithms(ctx)[0], n) in ctx.results


def meshes_run(ctx: StudyContext) -> list[tuple[int, int]]:
    """The meshes whose whole sweep ran (all of them, or the quick subset)."""
    shortest = lengths(ctx)[0]
    return [m for m in meshes(ctx) if _ran(ctx, *m, shortest)]


def lengths_run(ctx: StudyContext, width: int, height: int) -> list[int]:
    """The vector lengths N the sweep ran on the W x H mesh."""
    return [n for n in lengths(ctx) if _ran(ctx, width, height, n)]


def jig_table(ctx: StudyContext, run: str) -> dict[int, dict[int, float]]:
    """Simulated T (s) of the testjig run ``run`` by L, then S."""
    table: dict[int, dict[int, float]] = {}
    for record in ctx.records(run):
        table.setdefault(int(record["links"]), {})[int(record["doubles"])] = float(record["time_s"])
    return table


def jig_axes(table: dict[int, dict[int, float]]) -> tuple[list[int], list[int]]:
    """The testjig's L values and S values, as it ran them."""
    return sorted(table), sorted(table[1])


def nbl_f(table: dict[int, dict[int, float]], links: int, s: int) -> float:
    """f(L) = dT(L)/dT(1), dT from S to the next larger S of Table 1."""
    sizes = jig_axes(table)[1]
    nxt = sizes[sizes.index(s) + 1]
    return (table[links][nxt] - table[links][s]) / (table[1][nxt] - table[1][s])


def table1_published(ctx: StudyContext) -> dict[tuple[int, int], float]:
    """Table 1's f(L) by (L, S), the published values of the study file's ``table1.*`` checks, in their order."""
    return {
        (check.variables["links"], check.variables["s"]): check.evaluate(check.value, {})
        for check in ctx.study.checks
        if check.id.startswith("table1.")
    }


def winners(ctx: StudyContext, platform: str) -> dict[tuple[int, int, int], str]:
    """The fastest simulated algorithm of every (W, H, N) of the sweep."""
    result = {}
    for width, height in meshes_run(ctx):
        for n in lengths_run(ctx, width, height):
            times = {a: run_time(ctx, sweep_run(ctx, width, height, platform, a, n)) for a in algorithms(ctx)}
            result[width, height, n] = min(times, key=lambda a: (times[a], vc.ALGORITHMS.index(a)))
    return result


def fig4_scan(ctx: StudyContext, platform: str, algorithm: str) -> tuple[list[int], list[float]]:
    """Simulated T against S of the Fig. 4 case."""
    blocks = fig4_case(ctx)[3]
    return blocks, [run_time(ctx, ctx.study.run_at(FIG4, nbl=platform, algorithm=algorithm, block=s)) for s in blocks]


def fig4_optimum(ctx: StudyContext, platform: str, algorithm: str) -> tuple[int, float]:
    """The simulated optimal S of the Fig. 4 case, and its time."""
    blocks, times = fig4_scan(ctx, platform, algorithm)
    best = int(np.argmin(times))
    return blocks[best], times[best]


def model_vs_sim_rows(ctx: StudyContext) -> list[dict[str, Any]]:
    """One row per (mesh, platform, N, algorithm) of the sweep: the block size, the model's and simulated times."""
    half = vc.MachineParams(MACHINE.alpha / 2, MACHINE.beta, MACHINE.c2, MACHINE.c3)
    rows = []
    for width, height in meshes_run(ctx):
        for platform in platforms(ctx):
            f = PLATFORMS[platform]
            for n in lengths_run(ctx, width, height):
                for algorithm in algorithms(ctx):
                    s = model_block(algorithm, n, width, height, platform)
                    model = model_time(algorithm, n, s, width, height, f)
                    simulated = run_time(ctx, sweep_run(ctx, width, height, platform, algorithm, n))
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
    for width, height in meshes_run(ctx):
        for n in lengths_run(ctx, width, height):
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
                simulated = run_time(ctx, sweep_run(ctx, width, height, platform, algorithm, n))
                matrix.append([coefficient[u] / simulated for u in unknowns])
                target.append((simulated - known) / simulated)
    solution, *_ = np.linalg.lstsq(np.array(matrix), np.array(target), rcond=None)
    return dict(zip(unknowns, (float(v) for v in solution), strict=True))
