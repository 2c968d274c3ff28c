"""``python -m study_runner [STUDY ...] [--quick | --full]``: run studies, write ``results/``, check them.

For each study: build its platforms, run its simulations (cached, in parallel on Dask), compute its
checks and figures, then move ``runs.csv``, ``summary.json`` and the figures into
``results/<study>/`` in one rename; then draw a picture of every topology family into ``results/families/``
(skipped when up to date) and rewrite ``results/REPORT.md``. Exit status: 0 when every check
passes, 1 when a check fails, 2 for bad input (unknown study, malformed file, missing binary, failed
smpirun), in which case nothing under ``results/`` is changed.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from study_runner.cache import Cache, default_cache_dir
from study_runner.checks import criterion_text, summary_json
from study_runner.context import RunTracer, StudyContext
from study_runner.errors import StudyError
from study_runner.execute import RunResult, execute_runs, prepare_runs
from study_runner.report import draw_families, write_report
from study_runner.study import Study, load_study, study_names
from study_runner.workdirs import Terminated, unwinding_signals, work_directory

__all__ = ["main", "replace_dir", "run_study"]

REPO = Path(__file__).resolve().parents[2]


def _analysis(study: Study) -> ModuleType:
    try:
        module = importlib.import_module(f"study_runner.analyses.{study.analysis}")
    except ModuleNotFoundError:
        raise StudyError(
            f"{study.name}: analysis module {study.analysis!r} not found in study_runner/analyses"
        ) from None
    if not callable(getattr(module, "figures", None)):
        raise StudyError(f"{study.name}: analysis module {study.analysis!r} has no figures() function")
    return module


def _write_runs_csv(path: Path, study: Study, results: dict[str, RunResult], quick: bool) -> None:
    fixed = ["run", "platform", "machine", "app", "ranks", "args", "sim_wall_s", "sim_peak_private_mib"]
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
                wall, memory = result.wall_s, result.peak_private_mib
                row["sim_wall_s"] = "" if wall is None else f"{wall:.2f}"
                row["sim_peak_private_mib"] = "" if memory is None else f"{memory:.0f}"
                row.update({k: repr(v) if isinstance(v, float) else v for k, v in record.items()})
                writer.writerow(row)


def replace_dir(staging: Path, final: Path) -> None:
    """Put the complete directory ``staging`` in the place of ``final`` (renames: never half of either)."""
    old = final.with_name(f".{final.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def run_study(study: Study, quick: bool, results_dir: Path, bin_dir: Path, cache: Cache, workers: int | None) -> bool:
    """Run one study and write ``results_dir/<study>/``; return whether every check passed."""
    analysis = _analysis(study)
    # The scratch directory (platform files, hostfiles) lives until the analysis is done: a traced heatmap
    # reruns one of the runs (ctx.traced_link_bytes).
    with work_directory(study.name) as scratch:
        platforms, runs = prepare_runs(study, quick, bin_dir, scratch)
        results = execute_runs(runs, cache, workers)
        ctx = StudyContext(study, quick, platforms, results, RunTracer(runs, cache, scratch))
        checks = ctx.declared_checks(getattr(analysis, "METRICS", {}), getattr(analysis, "TEMPLATE_FUNCTIONS", {}))
        if not checks:
            raise StudyError(f"{study.name}: the analysis produced no check")
        results_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{study.name}.tmp-", dir=results_dir))
        try:
            _write_runs_csv(staging / "runs.csv", study, results, quick)
            analysis.figures(ctx, staging)
            notes = analysis.notes(ctx) if callable(getattr(analysis, "notes", None)) else []
            summary = summary_json(study.name, study.title, quick, checks, notes)
            (staging / "summary.json").write_text(summary, encoding="utf-8")
            staging.chmod(0o755)
            replace_dir(staging, results_dir / study.name)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    for check in checks:
        outside = f"; outside its documented miss range {list(check.miss_range)}" if check.miss_range else ""
        print(
            f"  {check.verdict} {check.id}: simulated {check.simulated:.6g} {check.unit},"
            f" published {check.published:.6g}"
            f" (rel. error {check.rel_error:.2%}, passes when {criterion_text(check.relation, check.tolerance)},"
            f" {check.kind}){outside if not check.accepted else ''}",
            file=sys.stderr,
        )
    return all(check.accepted for check in checks)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scripts/repro", description="Run topolab studies and write results/.")
    parser.add_argument("studies", nargs="*", metavar="STUDY", help="studies to run (default: all)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the reduced version of each study (what CI runs)")
    size.add_argument(
        "--full",
        action="store_true",
        help="the papers' whole benchmarks where the default runs a reduced one (runs with full_args; slow)",
    )
    parser.add_argument("--list", action="store_true", help="list the studies and exit")
    parser.add_argument("--results", type=Path, default=REPO / "results", help="results directory")
    parser.add_argument("--bin", type=Path, default=REPO / "build" / "bin", help="directory of the built apps")
    parser.add_argument("--cache", type=Path, default=None, help="result cache (default: .topolab-cache)")
    parser.add_argument("--workers", type=int, default=None, help="simulations at once (default: CPU cores)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the studies named in ``argv``; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(study_names()))
        return 0
    cache = Cache(args.cache or default_cache_dir())
    started = time.monotonic()
    try:
        studies = [load_study(name) for name in (args.studies or study_names())]
        if args.full:
            studies = [study.full_benchmark() for study in studies]
        verdicts = {}
        with unwinding_signals():
            for study in studies:
                mode = " (quick)" if args.quick else " (full benchmark)" if args.full else ""
                print(f"{study.name}{mode}: {study.title}", file=sys.stderr)
                verdicts[study.name] = run_study(study, args.quick, args.results, args.bin, cache, args.workers)
            draw_families(args.results)
            report = write_report(args.results)
    except StudyError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    except Terminated as stop:
        print(f"{parser.prog}: {stop}; the runs simulated so far are in the cache", file=sys.stderr)
        return int(stop.code or 1)
    failed = [name for name, ok in verdicts.items() if not ok]
    elapsed = time.monotonic() - started
    print(
        f"wrote {report} in {elapsed:.1f} s; {len(verdicts) - len(failed)}/{len(verdicts)} studies pass",
        file=sys.stderr,
    )
    if failed:
        print(f"{parser.prog}: checks failed in: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
