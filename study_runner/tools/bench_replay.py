"""Benchmark: a sweep replayed against the same sweep run online ("record once, replay many", docs/sweeps.md).

    scripts/bench-replay sweeps/replay-combine-mesh.toml              # both ways, a summary on stdout
    scripts/bench-replay FILE --workers 1 --json results/benchmarks/replay.json

Every point of the sweep runs twice, each time from an empty cache and on the same local Dask cluster: online (the
app runs at every point; its options print SMPI's timing summary, ``simulation.compute.SIMULATED_TIME_OPTIONS``, so
that every point reports ``simulated_s``) and replayed (``replay = true``: the app runs once per trace, recording it,
and every point replays the trace: ``simulation.replay``). The report gives both wall times (the replayed one
includes the recordings) and the largest difference between the two simulated times over the points. The sweep's
plots are not drawn. Times are this machine's: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generators.files import atomic_write_text
from study_runner.batch.engine import Engine
from study_runner.batch.execute import default_workers
from study_runner.errors import StudyError
from study_runner.paths import BIN_DIR
from study_runner.simulation.cache import Cache
from study_runner.simulation.compute import SIMULATED_TIME_OPTIONS
from study_runner.simulation.replay import REPLAY_METRIC
from study_runner.simulation.replay import TraceStore
from study_runner.simulation.smpi import simgrid_version
from study_runner.simulation.workdirs import STOPPING
from study_runner.simulation.workdirs import stopped
from study_runner.simulation.workdirs import unwinding_signals
from study_runner.simulation.workdirs import work_directory
from study_runner.sweeps.sweep import Sweep
from study_runner.sweeps.sweep import load_sweep
from study_runner.sweeps.sweep_cli import run_sweep

__all__ = ["Comparison", "compare", "main", "variants"]


@dataclass(frozen=True)
class Comparison:
    """One sweep run online and replayed: wall times, and each point's simulated time both ways."""

    sweep: str
    points: int
    platforms: int
    """Distinct platforms among the points."""
    traces: int
    """Traces the replayed run recorded (one per distinct app, arguments, ranks, options and host speeds)."""
    online_wall_s: float
    replay_wall_s: float
    """End to end: the sweep's preparation, its simulations on the cluster, its table (and the recordings)."""
    online_simulations_s: float
    replay_simulations_s: float
    """The points' own smpirun wall times, summed (the recordings are not points)."""
    online_s: tuple[float, ...]
    replay_s: tuple[float, ...]

    def largest_difference(self) -> tuple[float, float, int]:
        """The largest |replayed - online| simulated time (s), the largest relative to the online one, and the point
        of the largest absolute one."""
        differences = [abs(r - o) for o, r in zip(self.online_s, self.replay_s, strict=True)]
        relative = max((d / o if o else d) for d, o in zip(differences, self.online_s, strict=True))
        worst = max(range(len(differences)), key=differences.__getitem__)
        return differences[worst], relative, worst

    def summary(self) -> str:
        absolute, relative, worst = self.largest_difference()
        faster = self.online_wall_s / self.replay_wall_s if self.replay_wall_s > 0 else float("inf")
        return (
            f"{self.sweep}: {self.points} points on {self.platforms} platforms\n"
            f"  online:   {self.points} runs of the app in {self.online_wall_s:.1f} s "
            f"(the simulations: {self.online_simulations_s:.1f} s)\n"
            f"  replayed: {self.traces} recording(s) + {self.points} replays in {self.replay_wall_s:.1f} s "
            f"(the replays: {self.replay_simulations_s:.1f} s), {faster:.2f}x faster\n"
            f"  largest simulated-time difference: {absolute:.3g} s ({relative:.3g} of the online time), point {worst}"
        )


def variants(sweep: Sweep) -> tuple[Sweep, Sweep]:
    """The sweep run online (every point reporting SMPI's simulated time) and replayed, without plots."""

    def variant(suffix: str, replay: bool) -> Sweep:
        extra = () if replay else SIMULATED_TIME_OPTIONS
        points = tuple(
            dataclasses.replace(point, replay=replay, options=(*point.options, *extra)) for point in sweep.points
        )
        return dataclasses.replace(sweep, name=f"{sweep.name}-{suffix}", points=points, plots=(), metric=REPLAY_METRIC)

    return variant("online", False), variant("replayed", True)


def _simulated(directory: Path) -> tuple[dict[int, float], float]:
    """Each point's simulated time from a sweep's ``points.parquet`` (every record of a point carries the same), and
    the points' smpirun wall times summed."""
    import pyarrow.parquet as pq

    times: dict[int, float] = {}
    walls: dict[int, float] = {}
    for row in pq.read_table(directory / "points.parquet").to_pylist():
        if not isinstance(row.get(REPLAY_METRIC), float):
            raise StudyError(f"{directory}: point {row['point']} reports no {REPLAY_METRIC}")
        times.setdefault(int(row["point"]), row[REPLAY_METRIC])
        walls.setdefault(int(row["point"]), row["sim_wall_s"] or 0.0)
    return times, sum(walls.values())


def compare(sweep: Sweep, bin_dir: Path, engine: Engine, scratch: Path) -> Comparison:
    """Run ``sweep`` online, then replayed, each from an empty cache under ``scratch``; compare them.

    What the first run would pay alone is paid before either is timed: Dask's import and SimGrid's version (part of
    every cache key, asked of smpirun once).
    """
    import dask.distributed  # noqa: F401

    simgrid_version()
    walls, simulations, times, traces = [], [], [], 0
    for variant in variants(sweep):
        cache = Cache(scratch / variant.name / "cache")
        started = time.monotonic()
        final, _ = run_sweep(variant, scratch / "results", bin_dir, cache, engine)
        walls.append(time.monotonic() - started)
        by_point, simulated = _simulated(final)
        simulations.append(simulated)
        times.append(tuple(by_point[index] for index in range(len(sweep.points))))
        traces = sum(1 for _ in TraceStore.of_cache(cache.directory).root.glob("*/*"))
    online, replayed = 0, 1
    return Comparison(
        sweep=sweep.name,
        points=len(sweep.points),
        platforms=len(sweep.platforms),
        traces=traces,
        online_wall_s=walls[online],
        replay_wall_s=walls[replayed],
        online_simulations_s=simulations[online],
        replay_simulations_s=simulations[replayed],
        online_s=times[online],
        replay_s=times[replayed],
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``scripts/bench-replay FILE``: print the comparison (and write it as JSON with ``--json``)."""
    parser = argparse.ArgumentParser(
        prog="scripts/bench-replay",
        description="Run a sweep online and replayed (record once, replay many); compare wall and simulated times.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="the sweep file (TOML; see sweeps/)")
    parser.add_argument(
        "--workers", type=int, default=None, help="simulations at once (default: TOPOLAB_WORKERS or cores)"
    )
    parser.add_argument("--bin", type=Path, default=BIN_DIR, help="directory of the built apps")
    parser.add_argument("--json", type=Path, default=None, help="also write the comparison to this JSON file")
    args = parser.parse_args(argv)
    try:
        args.workers = max(1, args.workers or default_workers())
        sweep = load_sweep(args.file)
        with unwinding_signals(), work_directory("bench-replay") as scratch:
            result = compare(sweep, args.bin, Engine(workers=args.workers), scratch)
    except STOPPING as failure:
        return stopped(parser.prog, failure, "simulations")
    print(result.summary())
    if args.json is not None:
        absolute, relative, worst = result.largest_difference()
        report = {**dataclasses.asdict(result), "workers": args.workers}
        report |= {"largest_difference_s": absolute, "largest_relative_difference": relative, "worst_point": worst}
        atomic_write_text(args.json, json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
