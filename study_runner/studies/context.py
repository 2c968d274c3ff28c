"""What an analysis module receives: the study, its platform models and its run results.

An analysis module (``study_runner/studies/analyses/<name>.py``) defines

* ``figures(ctx: StudyContext, out_dir: Path) -> None`` — its PNG figures, and optionally
* ``METRICS`` — the functions ``f(ctx, *arguments)`` the study file's ``[[checks]]`` call (``throughput(run)``),
* ``notes(ctx: StudyContext) -> list[str]`` — findings to report beside the checks (misses explained,
  numbers reported without a tolerance).

``ctx.traced_link_bytes(run_id)`` gives the bytes each link carried in a run that the study file declares
``trace_links = true`` (``ctx.traced(run_id)``): the batch runs its traced twin with the other runs
(``batch.prepare``, cached like them). The study file decides which runs are traced; an analysis draws a traced
heatmap of each traced run among those it draws (``studies.heatmaps``), and a traced run that no figure read is
reported (:meth:`StudyContext.unread_traces`).

Published numbers live in the study file, with the checks that compare them (``[[checks]]``,
``study_runner.studies.study_checks``); :meth:`StudyContext.declared_checks` makes those checks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import TypeVar

from generators.model import Platform
from study_runner.batch.execute import RunResult
from study_runner.batch.runs import TRACED_SUFFIX
from study_runner.errors import StudyError
from study_runner.studies.checks import Check
from study_runner.studies.study import Study
from study_runner.studies.study_checks import DeclaredCheck
from study_runner.studies.study_checks import RecordChecks

__all__ = ["StudyContext"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class StudyContext:
    """The inputs of an analysis."""

    study: Study
    quick: bool
    """Whether the study runs in its reduced form (``--quick``)."""
    platforms: dict[str, Platform]
    """The platform model of each of the study's platforms, by name."""
    results: dict[str, RunResult]
    """Every run's result by run id (a traced run's twin under ``<id>.links``)."""
    read_traces: set[str] = field(default_factory=set)
    """The traced runs whose link bytes the analysis read."""
    derived: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False, compare=False)
    """What the analysis derived once and reads in several places (:meth:`once`)."""

    def once(self, key: tuple[Any, ...], compute: Callable[[], _T]) -> _T:
        """``compute()`` the first time ``key`` is asked for in this study, the same value after: a value the checks
        and the figures both read (the link loads of a run's pattern, from the model's routes) is derived once."""
        if key not in self.derived:
            self.derived[key] = compute()
        value: _T = self.derived[key]
        return value

    def records(self, run_id: str) -> list[dict[str, Any]]:
        """The JSON records printed by run ``run_id``."""
        try:
            return self.results[run_id].records
        except KeyError:
            raise StudyError(f"{self.study.name}: analysis asks for run {run_id!r}, which did not run") from None

    def platform_of(self, run_id: str) -> Platform:
        """The platform model run ``run_id`` ran on."""
        return self.platforms[self.results[run_id].spec.platform]

    def traced(self, run_id: str) -> bool:
        """Whether run ``run_id`` ran traced (the study file declares it ``trace_links = true``)."""
        return f"{run_id}{TRACED_SUFFIX}" in self.results

    def unread_traces(self) -> list[str]:
        """The traced runs whose link bytes the analysis never read: a simulation the study file asked for in
        vain."""
        return sorted(spec.id for spec in self.study.runs if self.traced(spec.id) and spec.id not in self.read_traces)

    def traced_link_bytes(self, run_id: str) -> dict[str, float]:
        """Bytes each link carried in run ``run_id`` (links that carried nothing left out), from SimGrid's trace of
        its traced twin, which printed what the run printed. Exact when the run's flows are uncontended, a lower
        bound otherwise (``study_runner.simulation.tracing``). ``StudyError`` if the study file does not declare the
        run ``trace_links = true``."""
        if run_id not in self.results:
            raise StudyError(
                f"{self.study.name}: analysis asks for the link bytes of run {run_id!r}, which did not run"
            )
        traced = self.results.get(f"{run_id}{TRACED_SUFFIX}")
        if traced is None:
            raise StudyError(
                f"{self.study.name}: analysis asks for the link bytes of run {run_id!r}, which the study file does "
                "not declare trace_links = true"
            )
        (result,) = traced.records
        self.read_traces.add(run_id)
        if result["records"] != self.records(run_id):
            raise StudyError(f"{self.study.name}: traced run {run_id} printed other results than the run")
        return {str(name): float(value) for name, value in result["link_bytes"].items()}

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
