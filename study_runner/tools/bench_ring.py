"""Benchmark: what the simulator spends per message, measured on a token ring.

    scripts/bench-ring                                      # 64 ... 16384 ranks, the SimGrid of .venv/simgrid
    scripts/bench-ring --ranks 64,1024 --label quick        # some sizes
    scripts/bench-ring --simgrid /opt/other --label before  # another SimGrid install (its bin/smpirun), same app

The ring app (``apps/bench/ring``) passes a token of 8 bytes around N ranks, one message at a time, on SimGrid's
flat cluster (one star: a route costs a lookup), one copy of the app for all ranks, so what a message costs is the
engine's: context switches, simcalls, SMPI's request path, the solve of one flow. Each size runs with L and 2L
timed laps, three times each in turn (``--repeat``); the cost per message is the difference of the two median wall
times over the N x L messages between them, so start-up, platform loading and the ranks' creation cancel out.
Results: ``results/benchmarks/ring-<label>.{json,md}``. The wall times are this machine's: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from generators import write_hostfile
from generators.files import atomic_write_text
from study_runner.batch.execute import parse_records
from study_runner.errors import StudyError
from study_runner.paths import BIN_DIR
from study_runner.paths import REPO
from study_runner.simulation.prepared import smpirun_simulation
from study_runner.simulation.smpi import NO_PRIVATIZATION
from study_runner.simulation.smpi import NO_STACK_GUARD
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.tools.bench_sim import flat_cluster

RANKS = (64, 256, 1024, 4096, 16384)
MESSAGES = 1 << 17
"""Messages in the shorter of a size's two runs (its laps are this over the ranks, 4 at least)."""
TIMEOUT_S = 3600.0
RESULTS = REPO / "results" / "benchmarks"
OPTIONS = (NO_PRIVATIZATION, NO_STACK_GUARD)
"""As the largest cases of scripts/bench-sim: no per-rank copy of the app (it has no mutable globals) and no guard
page below each stack. With SMPI's default copy, 16384 ranks died of SIGABRT here (one copy and its maps per rank)."""


def laps(ranks: int) -> int:
    """The shorter run's timed laps at ``ranks``: about :data:`MESSAGES` messages.

    >>> laps(64), laps(16384), laps(65536)
    (2048, 8, 4)
    """
    return max(4, MESSAGES // ranks)


def _run(ranks: int, timed_laps: int, work: Path) -> dict[str, Any]:
    platform = work / f"flat-{ranks}.xml"
    if not platform.is_file():
        write_hostfile([f"host-{k}" for k in range(ranks)], work / f"flat-{ranks}.hosts")  # first: a platform
        atomic_write_text(platform, flat_cluster("10GBps")(ranks))  # written whole means both are there
    args = ["--laps", str(timed_laps), "--warmup", "1"]
    command = smpirun_simulation(BIN_DIR / "ring", args, platform, work / f"flat-{ranks}.hosts", ranks, OPTIONS).argv
    outcome = run_smpirun_measured(command, work, TIMEOUT_S, f"ring of {ranks} ranks, {timed_laps} laps")
    (record,) = parse_records(outcome.stdout, "ring")
    return {"wall_s": outcome.wall_s, "peak_memory_mib": outcome.peak_memory_mib, "hop_s": record["hop_s"]}


def measure(ranks: int, work: Path, repeat: int = 3) -> dict[str, Any]:
    """The two runs at ``ranks``, each ``repeat`` times in turn, and the wall time per message between their
    medians."""
    runs: dict[int, list[dict[str, Any]]] = {laps(ranks): [], 2 * laps(ranks): []}
    for _ in range(repeat):
        for timed_laps, done in runs.items():
            done.append(_run(ranks, timed_laps, work))
    short, long = (statistics.median(run["wall_s"] for run in done) for done in runs.values())
    messages = ranks * laps(ranks)
    return {
        "ranks": ranks,
        "messages": messages,
        "repeat": repeat,
        "short_wall_s": short,
        "long_wall_s": long,
        "us_per_message": (long - short) / messages * 1e6,
        "spread_s": max(max(r["wall_s"] for r in done) - min(r["wall_s"] for r in done) for done in runs.values()),
        "peak_memory_mib": max(run["peak_memory_mib"] for done in runs.values() for run in done),
        "simulated_hop_s": runs[2 * laps(ranks)][0]["hop_s"],
    }


def markdown(rows: list[dict[str, Any]], label: str, simgrid: str) -> str:
    lines = [
        f"# Token ring, wall time per message ({label})",
        "",
        f"SimGrid: `{simgrid}`. Written by `scripts/bench-ring` (`study_runner/tools/bench_ring.py` says how).",
        "",
        "| ranks | messages between the runs | wall, L laps (s) | wall, 2L laps (s) | widest spread of a run (s) "
        "| us per message | peak memory (MiB) | simulated time per message (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        walls = f"{r['short_wall_s']:.2f} | {r['long_wall_s']:.2f} | {r['spread_s']:.2f}"
        rest = f"{r['us_per_message']:.2f} | {r['peak_memory_mib']:.0f} | {r['simulated_hop_s']:.4g}"
        lines.append(f"| {r['ranks']} | {r['messages']} | {walls} | {rest} |")
    return "\n".join(lines) + "\n"


def error_line(prog: str, message: str, status: int = 2) -> int:
    """Print ``<prog>: error: <message>`` on stderr and return the exit status, ``status`` (2: a bad argument)."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return status


def write_results(stem: str, data: dict[str, Any], text: str) -> None:
    """Write a benchmark's results, ``data`` to ``results/benchmarks/<stem>.json`` and its table ``text`` (also
    printed) to ``<stem>.md``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    atomic_write_text(RESULTS / f"{stem}.json", json.dumps(data, indent=1) + "\n")
    atomic_write_text(RESULTS / f"{stem}.md", text)
    print(text)


def use_simgrid(prefix: Path | None, prog: str) -> Path | None:
    """Put the SimGrid installed at ``prefix`` (default: .venv/simgrid) first on PATH and return its resolved path;
    None, after one error line naming ``prog``, where it has no bin/smpirun."""
    simgrid = (prefix or REPO / ".venv" / "simgrid").resolve()
    if not (simgrid / "bin" / "smpirun").is_file():
        error_line(prog, f"no SimGrid at {simgrid} (no bin/smpirun)")
        return None
    os.environ["PATH"] = f"{simgrid / 'bin'}{os.pathsep}{os.environ['PATH']}"
    return simgrid


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scripts/bench-ring", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default=",".join(map(str, RANKS)), help="comma-separated rank counts (>= 2)")
    parser.add_argument("--simgrid", type=Path, help="a SimGrid install prefix to run (default: .venv/simgrid)")
    parser.add_argument("--label", default="current", help="names the results: ring-LABEL.{json,md}")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each length, in turn; their medians count")
    parser.add_argument("--work", type=Path, default=REPO / "results" / "benchmarks" / "ring-work",
                        help="where the platforms and runs go")  # fmt: skip
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        sizes = [int(word) for word in args.ranks.split(",")]
    except ValueError:
        sizes = []
    if args.repeat < 1:
        return error_line("bench-ring", f"--repeat takes a count of 1 or more, got {args.repeat}")
    if not sizes or min(sizes) < 2:
        return error_line("bench-ring", f"--ranks takes rank counts of 2 or more, got {args.ranks!r}")
    simgrid = use_simgrid(args.simgrid, "bench-ring")
    if simgrid is None:
        return 2
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for ranks in sizes:
            rows.append(measure(ranks, args.work, args.repeat))
            print(f"bench-ring: {ranks} ranks: {rows[-1]['us_per_message']:.2f} us per message", file=sys.stderr)
    except StudyError as error:
        return error_line("bench-ring", str(error), 1)
    data = {"label": args.label, "simgrid": str(simgrid), "rows": rows}
    write_results(f"ring-{args.label}", data, markdown(rows, args.label, str(simgrid)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
