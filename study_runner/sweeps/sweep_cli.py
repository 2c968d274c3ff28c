"""``scripts/sweep FILE``: run every point of a sweep on Dask, write its table and plots.

Results go to ``results/sweeps/<name>/``: ``points.parquet`` and ``points.csv`` (a row per app record, with the
inputs of its point), the declared plots (PNG and SVG), ``sweep.json`` (what ran, where, how long), and with
``[run] counters = true`` each point's network counters in ``counters/point-N/`` (``simulation.counters``: bytes and
utilisation per link, their time series, a heat map; its rows get ``busiest_link`` and ``busiest_link_bytes``); the
points are printed as a table at the end (``--baseline VARIABLE=VALUE`` adds speed-ups: ``sweep_summary``). The
directory is replaced in one rename at the end, so it always holds one complete sweep. Every point's result enters the
content-addressed cache as soon as it is simulated: a sweep stopped in any way (Ctrl-C, SIGKILL, a lost
batch job) resumes where it stopped, and a rerun of a finished sweep only reads the cache.

Engines: a local Dask cluster (default), ``--scheduler ADDRESS`` (an existing Dask scheduler whose workers
share this repository's file system), or ``--slurm`` / ``--pbs`` (dask-jobqueue starts the workers as
batch jobs; ``--job-script`` prints the script of one job and exits). Exit status 0 on success, 2 for a
bad sweep file or a failed simulation (with one error line, before anything runs when the file is bad).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from generators.files import naming
from generators.model import Platform
from study_runner.batch.engine import Engine
from study_runner.batch.engine import job_script
from study_runner.batch.engine_cli import add_engine_arguments
from study_runner.batch.engine_cli import engine_from_args
from study_runner.batch.execute import PreparedRun
from study_runner.batch.execute import RunResult
from study_runner.batch.execute import execute_runs
from study_runner.batch.prepare import prepare_runs
from study_runner.batch.progress import BarProgress
from study_runner.batch.progress import format_duration
from study_runner.batch.runs import RunSpec
from study_runner.paths import BIN_DIR
from study_runner.paths import REPO
from study_runner.simulation.cache import Cache
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.counters import write_run_counters
from study_runner.simulation.replay import TraceStore
from study_runner.simulation.workdirs import STOPPING
from study_runner.simulation.workdirs import replace_dir
from study_runner.simulation.workdirs import stopped
from study_runner.simulation.workdirs import unwinding_signals
from study_runner.simulation.workdirs import work_directory
from study_runner.sweeps.sweep import Sweep
from study_runner.sweeps.sweep import load_sweep
from study_runner.sweeps.sweep_plots import draw_plots
from study_runner.sweeps.sweep_summary import Baseline
from study_runner.sweeps.sweep_summary import format_points
from study_runner.sweeps.sweep_summary import parse_baseline
from study_runner.sweeps.sweep_summary import table_metrics
from study_runner.sweeps.sweep_summary import with_speedups
from study_runner.sweeps.sweep_table import renamed_fields
from study_runner.sweeps.sweep_table import rows
from study_runner.sweeps.sweep_table import write_csv
from study_runner.sweeps.sweep_table import write_parquet

__all__ = ["main", "run_sweep"]


def _own_binaries(sweep: Sweep) -> list[RunSpec]:
    """The sweep's points, a binary of the user's own (a path) taken relative to the sweep file."""
    return [
        replace(point, app=str((sweep.path.parent / point.app).resolve())) if "/" in point.app else point
        for point in sweep.points
    ]


def run_sweep(
    sweep: Sweep, results_dir: Path, bin_dir: Path, cache: Cache, engine: Engine
) -> tuple[Path, dict[str, Any]]:
    """Run (or read from the cache) every point and write ``results_dir/<name>/``; return that directory and this
    run's summary (its ``sweep.json``: read back from the directory, it may be another run's that replaced it)."""
    started = time.monotonic()
    results_dir.mkdir(parents=True, exist_ok=True)
    # The files the simulations read live beside the results (not in /tmp): remote workers see them there. Those
    # of an earlier run that was killed go as this one starts (study_runner.simulation.workdirs).
    with work_directory(sweep.name, parent=results_dir) as scratch:
        traces = TraceStore.of_cache(cache.directory)
        models, runs = prepare_runs(sweep.name, sweep.platforms, _own_binaries(sweep), False, bin_dir, scratch, traces)
        traced = sum(run.links_traced for run in runs)
        print(
            f"{sweep.name}: {len(runs) - traced} points{f' (and {traced} traced for counters)' if traced else ''}, "
            f"{len(sweep.platforms)} platforms, on {engine.describe()}",
            file=sys.stderr,
        )
        results = execute_runs(runs, cache, engine=engine, progress=BarProgress("points"))
    points = [run for run in runs if not run.links_traced]  # a point's traced twin follows it (counters = true)
    ordered = [results[run.spec.id] for run in points]
    for field, column in renamed_fields(sweep, ordered).items():
        print(f"{sweep.name}: the app's field {field!r} is named like a sweep variable: stored as {column!r}",
              file=sys.stderr)  # fmt: skip
    table = rows(sweep, ordered, [run.key for run in points])
    with naming(results_dir / sweep.name), work_directory(f"{sweep.name}.staged", parent=results_dir) as staging:
        busiest = _write_counters(staging / "counters", points, results, models)
        table = [{**row, **busiest.get(row["point"], {})} for row in table]
        write_parquet(table, staging / "points.parquet")
        write_csv(table, staging / "points.csv")
        plots = draw_plots(sweep, table, staging)
        simulated = sum(not result.cached for result in ordered)
        summary = {
            "sweep": sweep.name,
            "title": sweep.title,
            "file": str(sweep.path),
            "points": len(points),
            "rows": len(table),
            "simulated": simulated,
            "cached": len(points) - simulated,
            "engine": engine.describe(),
            "elapsed_s": round(time.monotonic() - started, 3),
            "plots": [path.name for path in plots],
            "counters": len(busiest),
        }
        (staging / "sweep.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        staging.chmod(0o755)
        final = results_dir / sweep.name
        replace_dir(staging, final)
    return final, summary


def _write_counters(
    directory: Path, points: Sequence[PreparedRun], results: Mapping[str, RunResult], models: Mapping[str, Platform]
) -> dict[int, dict[str, Any]]:
    """The network counters of every point declared ``counters = true``, in ``directory/point-N/``
    (``simulation.counters``); by point number, the columns its rows get: its busiest link and the bytes it
    carried."""
    busiest = {}
    for number, run in enumerate(points):
        twin = results.get(run.spec.traced_id)
        if twin is None:
            continue
        (traced,) = twin.records
        counters = write_run_counters(directory / run.spec.id, traced, models[run.spec.platform],
                                      results[run.spec.id].hosts)  # fmt: skip
        link, amount = next(iter(counters.link_bytes.items()), ("", 0.0))
        busiest[number] = {"busiest_link": link, "busiest_link_bytes": amount}
    return busiest


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scripts/sweep",
        description="Run a sweep file's grid of simulations on Dask; write results/sweeps/<name>/.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="the sweep file (TOML; see sweeps/)")
    parser.add_argument("--list", action="store_true", help="print the points and exit (nothing runs)")
    add_engine_arguments(parser)
    parser.add_argument("--results", type=Path, default=REPO / "results" / "sweeps", help="results directory")
    parser.add_argument("--bin", type=Path, default=BIN_DIR, help="directory of the built apps")
    parser.add_argument("--cache", type=Path, default=None, help="result cache (default: .topolab-cache)")
    parser.add_argument(
        "--baseline",
        metavar="VARIABLE=VALUE",
        help="print each metric's speed-up over the point with this value, the other variables equal (default: the "
        "file's output.baseline)",
    )
    return parser


def print_points(sweep: Sweep, directory: Path, baseline: Baseline | None) -> None:
    """The points of the sweep written to ``directory`` as a table on stdout (``sweep_summary``)."""
    import pyarrow.parquet as pq

    table = pq.read_table(directory / "points.parquet").to_pylist()
    metrics = table_metrics(sweep, table)
    columns = ["point", *sweep.variables, *metrics]
    if baseline is not None:
        table, speedups = with_speedups(sweep, table, metrics, baseline)
        columns += speedups
    print(format_points(table, columns, directory / "points.csv"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep named in ``argv``; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    kept: str | None = None  # what the cache keeps of an interrupted sweep: once its points run, the points made so far
    try:
        engine = engine_from_args(args, args.results)
        sweep = load_sweep(args.file)
        chosen = args.baseline or sweep.baseline  # the option wins over the file's output.baseline
        baseline = parse_baseline(chosen, sweep) if chosen else None
        if args.list:
            for index, point in enumerate(sweep.points):
                values = " ".join(f"{name}={value}" for name, value in point.variables.items())
                platform = sweep.platforms[point.platform]
                print(f"{index}\t{values}\t{platform.family} {json.dumps(platform.params)}\t{point.app} {point.args}")
            return 0
        if args.job_script:
            assert engine.batch is not None
            print(job_script(engine.batch), end="")
            return 0
        started, kept = time.monotonic(), "points"
        with unwinding_signals():
            final, summary = run_sweep(sweep, args.results, args.bin, Cache(args.cache or default_cache_dir()), engine)
    except STOPPING as failure:
        return stopped(parser.prog, failure, kept)
    print_points(sweep, final, baseline)
    print(
        f"{sweep.name}: {summary['points']} points ({summary['simulated']} simulated, {summary['cached']} from cache)"
        f" in {format_duration(time.monotonic() - started)}; wrote {final}/points.parquet, points.csv"
        + "".join(f", {name}" for name in summary["plots"])
        + (f", counters/ of {summary['counters']} points" if summary.get("counters") else ""),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
