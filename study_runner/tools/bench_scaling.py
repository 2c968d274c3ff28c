"""Benchmark: how a simulation's wall time and memory grow with the machine, on the pairwise all-to-all.

    scripts/bench-scaling                                        # 256 ... 4096 ranks, minimal, UGAL-G, per packet
    scripts/bench-scaling --ranks 256,512 --routing minimal      # some sizes and routings
    scripts/bench-scaling --simgrid /opt/other --label before    # another SimGrid install (its bin/smpirun)

Each size runs Open MPI's pairwise all-to-all of 1 MiB blocks (every rank to every other, one phase after the
other) of N ranks on a dragonfly of matching size: N / 32 + 1 groups of 8 routers of 4 servers, joined all to all
(``bench_sim.dragonfly_alltoall``; 1024 ranks is the 1056-server dragonfly of ``interconnect-checks``), routed
minimally, by UGAL-G per message, or by UGAL-G with each message spread per packet. One simulation at a time, each
timed whole (start-up included) with its peak memory; a routing's larger sizes are skipped once one of its runs
takes longer than ``--max-wall`` (the series then says so). The growth exponent of a series is the slope of
log(wall time) against log(ranks), least squares over its measured sizes: 2 where the cost grows as the messages
(N^2 of them), more where each message costs more on a larger machine. Results:
``results/benchmarks/scaling-<label>.{json,md}``. The wall times are this machine's: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path
from typing import Any

from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.tools.bench_ring import error_line
from study_runner.tools.bench_ring import use_simgrid
from study_runner.tools.bench_ring import write_results
from study_runner.tools.bench_sim import dragonfly_alltoall
from study_runner.tools.bench_sim import measure

RANKS = (256, 512, 1024, 2048, 4096)
ROUTINGS = {"minimal": ("minimal", "message"), "ugal-g": ("ugal-g", "message"), "ugal-g-packet": ("ugal-g", "packet")}
RESULTS = REPO / "results" / "benchmarks"


def growth_exponent(points: list[tuple[int, float]]) -> float | None:
    """The least-squares slope of log(value) against log(ranks); None below two distinct sizes."""
    if len({ranks for ranks, _ in points}) < 2:
        return None
    logs = [(math.log(ranks), math.log(value)) for ranks, value in points]
    return statistics.linear_regression([x for x, _ in logs], [y for _, y in logs]).slope


def measure_series(routing: str, sizes: list[int], work: Path, max_wall: float) -> dict[str, Any]:
    """Run ``routing``'s sizes in increasing order, stopping once a run takes longer than ``max_wall``."""
    rule, spread = ROUTINGS[routing]
    rows: list[dict[str, Any]] = []
    skipped: list[int] = []
    for ranks in sorted(sizes):
        if rows and rows[-1]["wall_s"] > max_wall:
            skipped.append(ranks)
            continue
        case = dragonfly_alltoall(rule, ranks, spread)
        run = measure(case, work, reference=False)["topolab"]
        rows.append({"ranks": ranks, "machine": case.what, "wall_s": run["wall_s"],
                     "peak_memory_mib": run["peak_memory_mib"], "simulated_s": run["simulated_s"]})  # fmt: skip
        print(f"bench-scaling: {routing}, {ranks} ranks: {run['wall_s']:.1f} s", file=sys.stderr)
    walls = [(row["ranks"], row["wall_s"]) for row in rows]
    memories = [(row["ranks"], row["peak_memory_mib"]) for row in rows if row["peak_memory_mib"]]
    return {"routing": routing, "rows": rows, "skipped": skipped,
            "wall_exponent": growth_exponent(walls), "memory_exponent": growth_exponent(memories)}  # fmt: skip


def _exponent(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def markdown(series: list[dict[str, Any]], label: str, simgrid: str, max_wall: float) -> str:
    lines = [
        f"# Pairwise all-to-all on dragonflies of matching size ({label})",
        "",
        f"SimGrid: `{simgrid}`. Written by `scripts/bench-scaling` (`study_runner/tools/bench_scaling.py` says how).",
        "",
        "| routing | ranks | wall (s) | peak memory (MiB) | simulated time (s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for s in series:
        for row in s["rows"]:
            memory = "" if row["peak_memory_mib"] is None else f"{row['peak_memory_mib']:.0f}"
            lines.append(f"| {s['routing']} | {row['ranks']} | {row['wall_s']:.1f} | {memory} "
                         f"| {row['simulated_s']:.6g} |")  # fmt: skip
    lines += ["", "| routing | growth exponent, wall | growth exponent, memory | not run |", "|---|---:|---:|---|"]
    for s in series:
        skipped = ", ".join(map(str, s["skipped"])) + f" (a run took over {max_wall:.0f} s)" if s["skipped"] else ""
        lines.append(f"| {s['routing']} | {_exponent(s['wall_exponent'])} | {_exponent(s['memory_exponent'])} "
                     f"| {skipped} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scripts/bench-scaling", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ranks", default=",".join(map(str, RANKS)), help="comma-separated rank counts (multiples of 32)"
    )
    parser.add_argument("--routing", default=",".join(ROUTINGS), help=f"comma-separated, of {', '.join(ROUTINGS)}")
    parser.add_argument("--simgrid", type=Path, help="a SimGrid install prefix to run (default: .venv/simgrid)")
    parser.add_argument("--label", default="current", help="names the results: scaling-LABEL.{json,md}")
    parser.add_argument("--max-wall", type=float, default=1800.0,
                        help="seconds: a routing's larger sizes are skipped after a run this long")  # fmt: skip
    parser.add_argument("--work", type=Path, default=RESULTS / "scaling-work", help="where the platforms and runs go")
    return parser


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(word) for word in text.split(",")]
    except ValueError:
        return []
    return sizes if all(size >= 64 and size % 32 == 0 for size in sizes) else []


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    sizes = _sizes(args.ranks)
    if not sizes:
        return error_line("bench-scaling", f"--ranks takes multiples of 32 from 64, got {args.ranks!r}")
    routings = args.routing.split(",")
    if unknown := [r for r in routings if r not in ROUTINGS]:
        return error_line("bench-scaling", f"unknown routing {unknown[0]!r} (known: {', '.join(ROUTINGS)})")
    simgrid = use_simgrid(args.simgrid, "bench-scaling")
    if simgrid is None:
        return 2
    args.work.mkdir(parents=True, exist_ok=True)
    try:
        series = [measure_series(routing, sizes, args.work, args.max_wall) for routing in routings]
    except StudyError as error:
        return error_line("bench-scaling", str(error), 1)
    data = {"label": args.label, "simgrid": str(simgrid), "max_wall_s": args.max_wall, "series": series}
    write_results(f"scaling-{args.label}", data, markdown(series, args.label, str(simgrid), args.max_wall))
    return 0


if __name__ == "__main__":
    sys.exit(main())
