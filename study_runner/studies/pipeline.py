"""One study from its file to ``results/<study>/``: prepare its runs (``ready_study``, which ``scripts/repro`` runs
beside the previous study's simulations) and execute them (``run_study``), then make its
checks, notes and figures and put the complete directory in place in one rename (``write_study``, which
``scripts/repro`` runs beside the next study's simulations)."""

from __future__ import annotations

import csv
import importlib
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from generators.files import naming
from generators.model import Platform
from study_runner.batch.engine import Engine
from study_runner.batch.execute import PreparedRun
from study_runner.batch.execute import RunResult
from study_runner.batch.execute import execute_runs
from study_runner.batch.prepare import prepare_runs
from study_runner.errors import StudyError
from study_runner.simulation.cache import Cache
from study_runner.simulation.counters import write_run_counters
from study_runner.simulation.replay import TraceStore
from study_runner.simulation.workdirs import replace_dir
from study_runner.simulation.workdirs import work_directory
from study_runner.studies.checks import StudyOutcome
from study_runner.studies.checks import criterion_text
from study_runner.studies.checks import error_text
from study_runner.studies.checks import summary_json
from study_runner.studies.checks import verdict_text
from study_runner.studies.context import StudyContext
from study_runner.studies.study import Study

__all__ = [
    "ReadyStudy",
    "measures_machine",
    "prepare_study",
    "ready_study",
    "run_study",
    "write_study",
]


def prepare_study(
    study: Study, quick: bool, bin_dir: Path, workdir: Path, traces: TraceStore | None = None
) -> tuple[dict[str, Platform], list[PreparedRun]]:
    """The study's runs (its quick ones under ``quick``) made ready under ``workdir`` (``batch.prepare``)."""
    return prepare_runs(study.name, study.platforms, study.selected_runs(quick), quick, bin_dir, workdir, traces)


def _analysis(study: Study) -> ModuleType:
    try:
        module = importlib.import_module(f"study_runner.studies.analyses.{study.analysis}")
    except ModuleNotFoundError:
        raise StudyError(
            f"{study.name}: analysis module {study.analysis!r} not found in study_runner/studies/analyses"
        ) from None
    if not callable(getattr(module, "figures", None)):
        raise StudyError(f"{study.name}: analysis module {study.analysis!r} has no figures() function")
    return module


def _write_runs_csv(path: Path, study: Study, results: dict[str, RunResult], quick: bool) -> None:
    fixed = ["run", "platform", "machine", "app", "ranks", "args", "sim_wall_s", "sim_peak_memory_mib"]
    keys: list[str] = []
    for spec in study.selected_runs(quick):
        for record in results[spec.id].records:
            keys += [k for k in record if k not in keys and k not in fixed]
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=fixed + keys, lineterminator="\n")
        writer.writeheader()
        for spec in study.selected_runs(quick):
            result = results[spec.id]
            for record in result.records:
                machine = study.platforms[spec.platform].machine
                row = {"run": spec.id, "platform": spec.platform, "machine": machine or "", "app": spec.app}
                row["ranks"] = spec.ranks
                row["args"] = " ".join(spec.arguments(quick))
                wall, memory = result.wall_s, result.peak_memory_mib
                row["sim_wall_s"] = "" if wall is None else f"{wall:.2f}"
                row["sim_peak_memory_mib"] = "" if memory is None else f"{memory:.0f}"
                row.update({k: repr(v) if isinstance(v, float) else v for k, v in record.items()})
                writer.writerow(row)


@dataclass
class ReadyStudy:
    """A study's runs made ready (``ready_study``): its platforms, its prepared runs, and the work directory that
    holds the platform files and hostfiles they read (removed when ``scratch`` closes, after ``run_study``)."""

    study: Study
    platforms: dict[str, Platform]
    runs: list[PreparedRun]
    scratch: ExitStack


def measures_machine(study: Study, quick: bool) -> bool:
    """Whether preparing ``study`` may measure this machine (a run that models computation reads this machine's
    calibration, measured first if there is none): such a study is not prepared beside other simulations, which
    would make the measurement a busy one."""
    return any(spec.compute != "off" for spec in study.selected_runs(quick))


def ready_study(study: Study, quick: bool, bin_dir: Path, cache: Cache) -> ReadyStudy:
    """The study's runs (its quick ones under ``quick``) prepared in a new work directory (``prepare_study``); a
    missing analysis module stops the study before anything is prepared. The caller runs it (``run_study``) or
    closes its ``scratch``."""
    _analysis(study)
    scratch = ExitStack()
    try:
        directory = scratch.enter_context(work_directory(study.name))  # the platform files and hostfiles runs read
        platforms, runs = prepare_study(study, quick, bin_dir, directory, TraceStore.of_cache(cache.directory))
    except BaseException:
        scratch.close()
        raise
    return ReadyStudy(study, platforms, runs, scratch)


def run_study(ready: ReadyStudy, quick: bool, cache: Cache, engine: Engine) -> StudyContext:
    """Run a prepared study's simulations (``engine``: where, ``batch.engine``), then remove its work directory:
    what its analysis reads."""
    with ready.scratch:
        results = execute_runs(ready.runs, cache, engine=engine)
    return StudyContext(ready.study, quick, ready.platforms, results)


def _write_counters(ctx: StudyContext, directory: Path) -> None:
    """The network counters of every run the study file declares ``counters = true`` (and that ran), in
    ``directory/<run id>/`` (``simulation.counters``)."""
    for spec in ctx.study.runs:
        twin = ctx.results.get(spec.traced_id)
        if spec.counters and twin is not None:
            (traced,) = twin.records
            write_run_counters(directory / spec.id, traced, ctx.platform_of(spec.id), ctx.results[spec.id].hosts)
            ctx.read_traces.add(spec.id)


def write_study(ctx: StudyContext, results_dir: Path) -> tuple[StudyOutcome, list[str]]:
    """Make the study's checks, notes and figures from its simulations (``run_study``) and put
    ``results_dir/<study>/`` in place in one rename; return its outcome (whether every check passed or missed as
    documented, and how many missed) and one line per check (what ``scripts/repro`` prints). It prints nothing
    itself, so that it can run beside the next study's simulations."""
    study, analysis = ctx.study, _analysis(ctx.study)
    checks = ctx.declared_checks(getattr(analysis, "METRICS", {}), getattr(analysis, "TEMPLATE_FUNCTIONS", {}))
    if not checks:
        raise StudyError(f"{study.name}: the analysis produced no check")
    lines = []
    results_dir.mkdir(parents=True, exist_ok=True)
    with naming(results_dir / study.name), work_directory(f"{study.name}.staged", parent=results_dir) as staging:
        _write_runs_csv(staging / "runs.csv", study, ctx.results, ctx.quick)
        analysis.figures(ctx, staging)
        _write_counters(ctx, staging / "counters")
        for run_id in ctx.unread_traces():
            lines.append(
                f"warning: {study.name}: run {run_id} is traced (trace_links) but no figure reads its link bytes"
            )
        notes = analysis.notes(ctx) if callable(getattr(analysis, "notes", None)) else []
        summary = summary_json(study.name, study.title, ctx.quick, checks, notes)
        (staging / "summary.json").write_text(summary, encoding="utf-8")
        staging.chmod(0o755)
        replace_dir(staging, results_dir / study.name)
    for check in checks:
        outside = f"; outside its documented miss range {list(check.miss_range)}" if check.miss_range else ""
        error = error_text(check.published, check.simulated)
        lines.append(
            f"  {verdict_text(check.verdict)} {check.id}: simulated {check.simulated:.6g} {check.unit},"
            f" published {check.published:.6g}"
            f" ({'' if check.published == 0 else 'rel. error '}{error},"
            f" passes when {criterion_text(check.relation, check.tolerance)},"
            f" {check.kind}){outside if not check.accepted else ''}"
        )
    return StudyOutcome.of_checks(checks), lines
