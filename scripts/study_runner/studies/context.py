"""What an analysis module receives: the study, its platform models and its run results.

An analysis module (``study_runner/studies/analyses/<name>.py``) defines

* ``figures(ctx: StudyContext, out_dir: Path) -> None`` — its PNG figures, and optionally
* ``METRICS`` — the functions ``f(ctx, *arguments)`` the study file's ``[[checks]]`` call (``throughput(run)``),
* ``notes(ctx: StudyContext) -> list[str]`` — findings to report beside the checks (misses explained,
  numbers reported without a tolerance).

``ctx.traced_link_bytes(run_id)`` reruns one run with SimGrid's link tracing and returns the bytes each link
carried (``study_runner.simulation.tracing``; cached like the runs, see :class:`RunTracer`), for a traced heatmap.

Published numbers live in the study file, with the checks that compare them (``[[checks]]``,
``study_runner.studies.study_checks``); :meth:`StudyContext.declared_checks` makes those checks.
"""

from __future__ import annotations

import functools
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators.model import Platform
from study_runner.batch.execute import PreparedRun, RunResult, parse_records
from study_runner.errors import StudyError
from study_runner.simulation.cache import Cache, run_key
from study_runner.simulation.tracing import TRACING_OPTIONS, traced_run
from study_runner.studies.checks import Check
from study_runner.studies.study import Study
from study_runner.studies.study_checks import DeclaredCheck, RecordChecks

__all__ = ["LINK_BYTES_FORMAT", "RunTracer", "StudyContext", "trace_key"]

LINK_BYTES_FORMAT = 1
"""Version of what a trace cache entry holds (bump when ``tracing.link_bytes`` changes what it counts)."""


def trace_key(run: PreparedRun) -> str:
    """Cache key of the link bytes of ``run`` traced: the run's own key, "trace", the tracing flags."""
    return run_key(run=run.key, kind="trace", tracing=list(TRACING_OPTIONS), format=LINK_BYTES_FORMAT)


class RunTracer:
    """Traced reruns of a study's prepared runs, their link bytes cached under :func:`trace_key`.

    ``workdir`` must still hold the platform files and hostfiles the runs' commands name (``pipeline.run_study``
    keeps its scratch directory until the analysis is done).
    """

    def __init__(self, runs: Iterable[PreparedRun], cache: Cache, workdir: Path) -> None:
        self.runs = {run.spec.id: run for run in runs}
        self.cache = cache
        self.workdir = workdir

    def link_bytes(self, run_id: str, records: list[dict[str, Any]]) -> dict[str, float]:
        """Bytes per link (links that carried nothing left out) of run ``run_id`` rerun with tracing.

        The rerun is the run's exact command plus ``tracing.TRACING_OPTIONS``; what the app prints must equal
        ``records`` (the run's result: tracing changes no simulated time), else ``StudyError``.
        """
        run = self.runs[run_id]
        key = trace_key(run)
        cached = self.cache.get(key)
        if cached is not None and len(cached) == 1 and isinstance(cached[0].get("link_bytes"), dict):
            print(f"traced {run.label}: link bytes cached", file=sys.stderr)
            return {str(k): float(v) for k, v in cached[0]["link_bytes"].items()}
        args = tuple(run.inputs["args"])
        binary, platform, hostfile = run.binary, run.platform_file, run.hostfile
        with tempfile.TemporaryDirectory(prefix="trace-", dir=self.workdir) as scratch:
            traced = traced_run(
                binary,
                args,
                platform,
                hostfile,
                run.spec.ranks,
                Path(scratch) / f"{run_id}.trace",
                run.spec.options,
                2 * run.spec.timeout,
                f"traced {run.label}",
            )
        if parse_records(traced.stdout, f"traced {run.label}") != records:
            raise StudyError(f"traced {run.label}: the traced rerun printed other results than the run")
        used = {name: value for name, value in sorted(traced.link_bytes.items()) if value > 0}
        measured = {"wall_s": traced.wall_s, "parse_s": traced.parse_s, "trace_bytes": float(traced.trace_size)}
        self.cache.put(key, [{"link_bytes": used}], {"run_key": run.key, "run": run.inputs}, measured)
        print(
            f"traced {run.label}: {traced.wall_s:.1f} s, trace {traced.trace_size / 1e6:.1f} MB, "
            f"parsed in {traced.parse_s:.1f} s",
            file=sys.stderr,
        )
        return used


@dataclass(frozen=True)
class StudyContext:
    """The inputs of an analysis."""

    study: Study
    quick: bool
    platforms: dict[str, Platform]
    results: dict[str, RunResult]
    tracer: RunTracer | None = None

    def records(self, run_id: str) -> list[dict[str, Any]]:
        """The JSON records printed by run ``run_id``."""
        try:
            return self.results[run_id].records
        except KeyError:
            raise StudyError(f"{self.study.name}: analysis asks for run {run_id!r}, which did not run") from None

    def platform_of(self, run_id: str) -> Platform:
        """The platform model run ``run_id`` ran on."""
        return self.platforms[self.results[run_id].spec.platform]

    def traced_link_bytes(self, run_id: str) -> dict[str, float]:
        """Bytes each link carried in run ``run_id``, from SimGrid's trace of a rerun of its exact command
        (links that carried nothing are left out). Exact when the run's flows are uncontended, a lower bound
        otherwise (``study_runner.simulation.tracing``). Cached: a second call, or a second ``scripts/repro``, does not
        rerun it."""
        if run_id not in self.results:
            raise StudyError(f"{self.study.name}: analysis asks to trace run {run_id!r}, which did not run")
        if self.tracer is None:
            raise StudyError(f"{self.study.name}: no tracer to rerun {run_id!r} with (StudyContext without one)")
        return self.tracer.link_bytes(run_id, self.results[run_id].records)

    def declared_checks(
        self, metrics: Mapping[str, Callable[..., Any]], functions: Mapping[str, Callable[..., Any]] | None = None
    ) -> list[Check]:
        """The study file's ``[[checks]]`` whose runs ran (all, but those of runs left out by ``--quick``),
        with ``metrics`` (``f(ctx, *arguments)``) callable from their templates as ``f(*arguments)``, beside the
        model's plain ``functions`` (``TEMPLATE_FUNCTIONS``)."""
        bound = {**(functions or {}), **{name: functools.partial(f, self) for name, f in metrics.items()}}
        declared: list[DeclaredCheck] = []
        for item in self.study.checks:
            if isinstance(item, RecordChecks):
                declared += item.expand(self.records(item.run)) if item.run in self.results else []
            elif all(run in self.results for run in item.runs):
                declared.append(item)
        return [check.check(bound) for check in declared]
