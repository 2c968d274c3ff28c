"""Execute prepared runs (``study_runner.studies.prepare``, a sweep's points): cached results first, the rest on
Dask.

Independent simulations run in parallel on Dask (``study_runner.batch.engine``: by default a LocalCluster of
threads, each one only waits for its smpirun process). A replay (``RunSpec.replay``) waits for the recording of its
trace (``study_runner.simulation.replay``) when the trace store lacks it: one recording for all the replays of a
trace. Results already in the cache are served without starting the cluster. Progress, with the number done and an
estimate of the time left (``study_runner.batch.eta``: each simulation's history in the cache, or its size), goes to
stderr. Each simulation runs in a work directory of its own (``study_runner.simulation.workdirs``), which goes with
it however the batch ends.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from study_runner.batch.claims import Claims
from study_runner.batch.engine import MEMORY_RESOURCE
from study_runner.batch.engine import Engine
from study_runner.batch.eta import Estimate
from study_runner.batch.eta import Expected
from study_runner.batch.progress import LineProgress
from study_runner.batch.progress import Progress
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.simulation.cache import Cache
from study_runner.simulation.compute import compute_timing
from study_runner.simulation.jobs import SharedMachine
from study_runner.simulation.link_series import LinkSeries
from study_runner.simulation.memory import estimate_mib
from study_runner.simulation.outputs import parse_output
from study_runner.simulation.prepared import Simulation
from study_runner.simulation.prepared import Steps
from study_runner.simulation.replay import TraceStore
from study_runner.simulation.replay import replayed_records
from study_runner.simulation.smpi import SmpirunOutcome
from study_runner.simulation.smpi import allow_simulations
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.smpi import stop_simulations
from study_runner.simulation.tracing import LINKS_TRACE_NAME
from study_runner.simulation.tracing import link_bytes
from study_runner.simulation.workdirs import work_directory

__all__ = ["PreparedRun", "RunResult", "execute_runs", "parse_records"]


@dataclass(frozen=True)
class PreparedRun:
    """A run with its files generated: the simulation that serves it (its argv, what it reads, its keys) and the host
    of each of its ranks."""

    spec: RunSpec
    label: str
    simulation: Simulation | Steps
    hosts: list[str]
    binary: Path
    platform_file: Path
    hostfile: Path
    compute_scale: float | None = None
    """For ``compute = "benchmark"``: simulated seconds of computation per rank per benchmarked second (this
    machine's speed / (the platform's core speed x ranks)); None when computation is off."""
    recordings: tuple[PreparedRun, ...] = ()
    """For a replay: the run that records the trace it replays; for a run with neighbours, each job's (each one's
    ``key`` is its trace's)."""
    traces: TraceStore | None = None
    """For a recording: the store its trace goes to, under its ``key``."""
    links_traced: bool = False
    """Traced by SimGrid (``simulation.tracing``): its one record holds the bytes each link carried
    (``link_bytes``) and what the app printed (``records``), and for a run declared ``counters = true`` their time
    series (``link_series``: ``LinkSeries.record``)."""
    jobs: SharedMachine | None = None
    """For a run with neighbours: its jobs (the run's own first), their hosts and its steps (its ``simulation``); its
    record is each job's time alone and shared (``simulation.jobs``)."""

    @property
    def command(self) -> tuple[str, ...]:
        """What runs the simulation, word for word (a run of one simulation: not one with neighbours)."""
        assert isinstance(self.simulation, Simulation)
        return self.simulation.argv

    @property
    def key(self) -> str:
        """The cache key of its result (``Simulation.key``)."""
        return self.simulation.key


@dataclass(frozen=True)
class RunResult:
    """The JSON records a run's app printed, whether they came from the cache, and what the simulation cost
    (wall time and peak private memory of smpirun, as measured when it ran; None if not recorded)."""

    spec: RunSpec
    hosts: list[str]
    records: list[dict[str, Any]]
    cached: bool
    wall_s: float | None
    peak_memory_mib: float | None = None


def parse_records(stdout: str, label: str) -> list[dict[str, Any]]:
    """The JSON objects an app printed, one per line; anything else on stdout is an error."""
    records = []
    for number, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise StudyError(f"{label}: line {number} of the app's stdout is not JSON: {line[:120]!r}") from None
        if not isinstance(record, dict):
            raise StudyError(f"{label}: line {number} of the app's stdout is not a JSON object")
        records.append(record)
    if not records:
        raise StudyError(f"{label}: the app printed no result")
    return records


_STARTED: dict[str, float] = {}
"""When each simulation of the current batch started (``time.monotonic()``), by label: written by the Dask tasks that
run in this process (the local engine's threads; remote workers' tasks write their own copy), read by the
estimate of the time left."""


def _simulate(run: PreparedRun, after: object = None) -> tuple[list[dict[str, Any]], SmpirunOutcome] | StudyError:
    """Run one simulation; a failure is returned, not raised, so that Dask does not log a traceback. ``after`` is
    what the simulation waited for (Dask passes the result of the recording a replay needs): its failure is this
    one's: a recording, or for a run with neighbours the list of its jobs' recordings."""
    failed = [done for done in (after if isinstance(after, list) else [after]) if isinstance(done, StudyError)]
    if failed:
        return failed[0]
    _STARTED[run.label] = time.monotonic()
    if run.jobs is not None:
        return _simulate_jobs(run)
    try:
        with work_directory("run") as scratch:
            if run.traces is not None:  # a recording: its output is its trace
                assert isinstance(run.simulation, Simulation)
                return [], run.traces.record(run.simulation, run.spec.ranks, scratch, run.spec.timeout, run.label)
            outcome = run_smpirun_measured(run.command, scratch, run.spec.timeout, run.label)
            traced = _traced_links(run, scratch)
        if run.spec.replay:
            records = replayed_records(outcome.stderr, run.label)
        elif run.spec.output == "json":
            records = parse_records(outcome.stdout, run.label)
        else:
            records = parse_output(run.spec.output, outcome.stdout, run.label)
        records = _with_timing(run, records, outcome)
        return ([{**traced, "records": records}] if traced is not None else records), outcome
    except StudyError as err:
        return err


def _simulate_jobs(run: PreparedRun) -> tuple[list[dict[str, Any]], SmpirunOutcome] | StudyError:
    """A run among neighbours: one record, its own job's (``JobTime.record``: ``ranks``, ``hosts``, ``alone_s``,
    ``shared_s``, ``slowdown``) with each neighbour's as ``<name>_<field>`` (``background_slowdown``)."""
    assert run.jobs is not None
    start = time.monotonic()
    try:
        with work_directory("jobs") as scratch:
            times = run.jobs.time(scratch, run.spec.timeout)
    except StudyError as err:
        return StudyError(f"{run.label}: {err}")
    record = times[0].record()  # the run's own job, then each neighbour's figures under its name
    for other in times[1:]:
        record.update({f"{other.job}_{key}": value for key, value in other.record().items() if key != "job"})
    return [record], SmpirunOutcome("", time.monotonic() - start, 0.0)


def _traced_links(run: PreparedRun, scratch: Path) -> dict[str, Any] | None:
    """The bytes per link (those that carried nothing left out) of a traced run, from the trace it wrote in
    ``scratch``, and their time series for a run declared ``counters = true``; None for another run."""
    if not run.links_traced:
        return None
    trace = scratch / LINKS_TRACE_NAME
    if not trace.is_file():
        raise StudyError(f"{run.label}: smpirun wrote no trace {LINKS_TRACE_NAME}")
    series = LinkSeries() if run.spec.counters else None
    used = {name: value for name, value in sorted(link_bytes(trace, series).items()) if value > 0}
    return {"link_bytes": used, **({"link_series": series.record()} if series is not None else {})}


def _with_timing(run: PreparedRun, records: list[dict[str, Any]], outcome: SmpirunOutcome) -> list[dict[str, Any]]:
    """With computation benchmarked, each record also gets SMPI's simulated end time (``simulated_s``) and the
    simulated computation of an average rank (``computation_s``): the run's split between computing and the rest
    (communicating and waiting). Without, a run whose options print SMPI's timing summary
    (``simulation.compute.SIMULATED_TIME_OPTIONS``) gets ``simulated_s``."""
    timing = compute_timing(outcome.stderr)
    if run.compute_scale is None:
        if "simulated_s" not in timing:
            return records
        return [{**record, "simulated_s": timing["simulated_s"]} for record in records]
    if "benchmarked_s" not in timing:
        raise StudyError(f"{run.label}: smpirun printed no timing summary (smpi/display-timing)")
    extra = {"simulated_s": timing["simulated_s"], "computation_s": timing["benchmarked_s"] * run.compute_scale}
    return [{**record, **extra} for record in records]


def default_workers() -> int:
    """``$TOPOLAB_WORKERS`` (unset or blank: the number of CPU cores)."""
    given = os.environ.get("TOPOLAB_WORKERS", "")
    if not given.strip():
        return os.cpu_count() or 1
    if not re.fullmatch(r"\s*[0-9]+\s*", given) or int(given) < 1:
        raise StudyError(f"TOPOLAB_WORKERS must be a whole number of simulations at once >= 1, got {given!r}")
    return int(given)


def _served(runs: list[PreparedRun], cache: Cache) -> dict[str, RunResult]:
    """The results of the runs that are in the cache, by run id."""
    results = {}
    for run in runs:
        records = cache.get(run.key)
        if records is not None:
            cost = cache.measured(run.key)
            results[run.spec.id] = RunResult(
                run.spec, run.hosts, records, True, cost.get("wall_s"), cost.get("peak_memory_mib")
            )
    return results


def _estimate(simulations: list[PreparedRun], cache: Cache) -> Estimate:
    """The estimate of the time left: each simulation's size (its declared one, or its rank count) and history."""
    _STARTED.clear()
    expected = [
        Expected(run.label, run.spec.size or float(run.spec.ranks), cache.history(run.simulation.history_key))
        for run in simulations
    ]
    return Estimate(expected, started=_STARTED)


def _slots(client: Any, engine: Engine) -> int:
    """How many simulations run at once: the connected workers' threads, or what the batch jobs asked for (their
    workers may still be queued)."""
    threads = sum(client.nthreads().values())
    if engine.batch is not None:
        threads = max(threads, engine.batch.jobs * engine.batch.cores)
    return max(1, threads)


def execute_runs(
    runs: list[PreparedRun],
    cache: Cache,
    workers: int | None = None,
    engine: Engine | None = None,
    progress: Progress | None = None,
) -> dict[str, RunResult]:
    """Results of every run by run id: from the cache, or simulated on Dask (``engine``: a local cluster of
    ``workers`` threads by default). Each simulation's result enters the cache as soon as it is done, so an
    interrupted batch loses only the simulations in flight.

    A simulation that another run on the same cache is already simulating (``batch.claims``) is left to it: after
    its own simulations, this batch waits for that one and reads its result from the cache.

    The first failing simulation raises ``StudyError``; nothing is cached for it.
    """
    progress = progress or LineProgress()
    results = _served(runs, cache)
    # Runs with the same inputs (same key) are one simulation: it runs once and serves them all.
    pending: dict[str, list[PreparedRun]] = {}
    for run in runs:
        if run.spec.id not in results:
            pending.setdefault(run.key, []).append(run)
    estimate = _estimate([group[0] for group in pending.values()], cache)
    progress.begin(len(runs), len(results), estimate)
    for run in runs:
        if run.spec.id in results:
            result = results[run.spec.id]
            progress.advance(run.label, True, result.wall_s, result.peak_memory_mib)
    engine = engine or Engine(workers=workers or default_workers())
    try:
        if pending:  # (a batch served from the cache alone claims nothing: its cache may even be read-only)
            with Claims(cache.directory) as claims:
                while pending:
                    mine = {key: group for key, group in pending.items() if claims.claim(key)}
                    if mine:
                        _simulate_groups(list(mine.values()), cache, engine, progress, estimate, results, claims)
                    others = [group for key, group in pending.items() if key not in mine]
                    pending = _from_other_runs(others, cache, claims, progress, results)
    finally:
        progress.end()
    return {run.spec.id: results[run.spec.id] for run in runs}


def _from_other_runs(
    groups: list[list[PreparedRun]], cache: Cache, claims: Claims, progress: Progress, results: dict[str, RunResult]
) -> dict[str, list[PreparedRun]]:
    """Wait for the simulations that other runs claimed and put their results in ``results``; return those still to
    simulate (their claimer failed or was killed before writing a result)."""
    left: dict[str, list[PreparedRun]] = {}
    for group in groups:
        progress.note(f"{group[0].label}: another run on this cache is simulating it; waiting for its result")
        claims.wait(group[0].key)
        records = cache.get(group[0].key)
        if records is None:
            left[group[0].key] = group
            continue
        cost = cache.measured(group[0].key)
        for run in group:
            result = RunResult(run.spec, run.hosts, records, True, cost.get("wall_s"),
                               cost.get("peak_memory_mib"))  # fmt: skip
            results[run.spec.id] = result
            progress.advance(run.label, True, result.wall_s, result.peak_memory_mib)
    return left


def _simulate_groups(
    groups: list[list[PreparedRun]],
    cache: Cache,
    engine: Engine,
    progress: Progress,
    estimate: Estimate,
    results: dict[str, RunResult],
    claims: Claims,
) -> None:
    """Simulate one simulation per group on Dask (the recordings their replays need first), each result into the
    cache as soon as it is done and its claim released then."""
    from dask.distributed import as_completed

    recordings = _recordings(groups)
    allow_simulations()
    with engine.client(len(groups) + len(recordings)) as client, engine.watch(client, progress.note):
        estimate.slots = _slots(client, engine)
        futures = _submit(client, engine, cache, groups, recordings)
        try:
            for future in as_completed(futures):
                group = futures[future]
                outcome = future.result()
                if isinstance(outcome, StudyError):
                    raise outcome
                records, cost = outcome
                measured = {"wall_s": cost.wall_s, "peak_memory_mib": cost.peak_memory_mib}
                if group[0].traces is not None:  # a recording: its trace is stored, its replays may start
                    cache.record_history(group[0].simulation.history_key, measured)
                    progress.note(f"{group[0].label}: trace recorded in {cost.wall_s:.1f} s")
                    continue
                simulation = group[0].simulation
                cache.put(simulation.key, records, simulation.provenance(), measured, simulation.history_key)
                claims.release(group[0].key)
                for run in group:
                    results[run.spec.id] = RunResult(
                        run.spec, run.hosts, records, False, cost.wall_s, cost.peak_memory_mib
                    )
                    progress.advance(run.label, False, cost.wall_s, cost.peak_memory_mib)
        except BaseException:
            for future in futures:
                future.cancel()
            # The local simulations in flight (nothing of theirs would be kept); it waits until they have gone, so
            # that their work directories go too.
            stop_simulations()
            raise


def _recordings(groups: list[list[PreparedRun]]) -> dict[str, PreparedRun]:
    """The trace recordings that the replays among ``groups`` need and the trace store lacks, by trace key."""
    needed: dict[str, PreparedRun] = {}
    for group in groups:
        for recording in group[0].recordings:
            if recording.traces is not None and not recording.traces.has(recording.key):
                needed.setdefault(recording.key, recording)
    return needed


RECORDING_PRIORITY = 1 << 30
"""Dask priority of a recording: above any simulation's (their rank count), since replays wait for it."""


def _submit(
    client: Any, engine: Engine, cache: Cache, groups: list[list[PreparedRun]], recordings: dict[str, PreparedRun]
) -> dict[Any, list[PreparedRun]]:
    """Submit the recordings, then one simulation per group (a replay, or a run with neighbours, after the recordings
    of its traces); return the futures with the runs each one serves.

    Larger runs first (Dask runs higher priorities first), so that the last ones to finish are small and the
    workers end together; in a study of 2- to 512-rank runs, the long ones have the most ranks. Each asks for its
    memory estimate, at most a worker's memory (more would never run): the simulations running at once on a worker
    fit in its memory.
    """
    worker_mib = engine.memory_mib()

    def resources(run: PreparedRun) -> dict[str, float] | None:
        if worker_mib is None:
            return None
        need = estimate_mib(run.spec.ranks, cache.history(run.simulation.history_key, "peak_memory_mib"))
        return {MEMORY_RESOURCE: min(need, worker_mib)}

    futures: dict[Any, list[PreparedRun]] = {}
    recorded: dict[str, Any] = {}
    for key, run in recordings.items():
        recorded[key] = client.submit(_simulate, run, pure=False, priority=RECORDING_PRIORITY, resources=resources(run))
        futures[recorded[key]] = [run]
    for group in groups:
        run = group[0]
        after = [recorded[recording.key] for recording in run.recordings if recording.key in recorded]
        future = client.submit(_simulate, run, after, pure=False, priority=run.spec.ranks, resources=resources(run))
        futures[future] = group
    return futures
