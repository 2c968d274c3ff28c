"""``python -m study_runner [STUDY ...] [--quick | --full]``: run studies, write ``results/``, check them.

For each study: build its platforms (in a thread, while the previous study's simulations run, unless that would
measure this machine), run its simulations (cached, in parallel on Dask: locally, or on a Dask scheduler or Slurm /
PBS jobs with the options ``scripts/sweep`` takes, ``batch.engine_cli``), compute its checks and figures (in a
thread, while the next study's simulations run), then move ``runs.csv``, ``summary.json`` and the figures into
``results/<study>/``; draw a picture of every topology family into ``results/families/`` (skipped when up to date;
in the same thread, first) and rewrite ``results/REPORT.md``, all of it staged in a hidden
directory of ``results/`` and put in place at the end, renames only (``report.swap_in``). Exit status: 0
when every check passes, 1 when a check fails, 2 for bad input or a failing environment (unknown study,
malformed file, missing binary, failed smpirun, a full disk, an unwritable cache), in which case nothing under
``results/`` is changed; 130 for Ctrl-C. Each failure is one line on stderr (``workdirs.stopped``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Future
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from study_runner.batch.engine import Engine
from study_runner.batch.engine import job_script
from study_runner.batch.engine_cli import add_engine_arguments
from study_runner.batch.engine_cli import engine_from_args
from study_runner.errors import StudyError
from study_runner.paths import BIN_DIR
from study_runner.paths import REPO
from study_runner.simulation.cache import Cache
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.workdirs import STOPPING
from study_runner.simulation.workdirs import stopped
from study_runner.simulation.workdirs import unwinding_signals
from study_runner.simulation.workdirs import work_directory
from study_runner.studies.checks import StudyOutcome
from study_runner.studies.checks import studies_pass_line
from study_runner.studies.listing import study_listing
from study_runner.studies.pipeline import ReadyStudy
from study_runner.studies.pipeline import measures_machine
from study_runner.studies.pipeline import ready_study
from study_runner.studies.pipeline import run_study
from study_runner.studies.pipeline import write_study
from study_runner.studies.report import draw_families
from study_runner.studies.report import swap_in
from study_runner.studies.report import write_report
from study_runner.studies.study import Study
from study_runner.studies.study import load_study
from study_runner.studies.study import study_names

__all__ = ["main"]


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
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the studies and exit: one line each, its name first (the first word), then the measured wall time "
        "of its default run and of --quick where documented, then its title",
    )
    parser.add_argument("--results", type=Path, default=REPO / "results", help="results directory")
    parser.add_argument("--bin", type=Path, default=BIN_DIR, help="directory of the built apps")
    parser.add_argument("--cache", type=Path, default=None, help="result cache (default: .topolab-cache)")
    add_engine_arguments(parser)
    return parser


_Written = tuple[str, "Future[tuple[StudyOutcome, list[str]]]"]
"""A study's name and its ``write_study`` running beside the next study's simulations."""


def _print_checks(verdicts: dict[str, StudyOutcome], written: _Written | None) -> None:
    """Wait for a study's checks and figures (``write_study``), print its checks, record its verdict."""
    if written is None:
        return
    name, future = written
    verdicts[name], lines = future.result()
    print(f"{name}: checks", file=sys.stderr)
    for line in lines:
        print(line, file=sys.stderr)


def _discard(ahead: Future[ReadyStudy] | None) -> None:
    """A study prepared ahead that will not run (an earlier study failed): its work directory removed."""
    if ahead is None:
        return
    try:
        ready = ahead.result()
    except BaseException:  # its own failure is not the one to report: the earlier study's is
        return
    ready.scratch.close()


def _run_studies(
    studies: list[Study], args: argparse.Namespace, cache: Cache, engine: Engine, stage: Path
) -> dict[str, StudyOutcome]:
    """Run each study's simulations, the next one prepared while they run (``ready_study``), and write each one's
    checks and figures into ``stage`` while the next one's run (``write_study``); return their outcomes."""
    verdicts: dict[str, StudyOutcome] = {}
    with (
        ThreadPoolExecutor(1, thread_name_prefix="write-study") as writer,
        ThreadPoolExecutor(1, thread_name_prefix="prepare-study") as preparer,
    ):
        pictures = writer.submit(draw_families, args.results, stage)
        written: _Written | None = None
        ahead: Future[ReadyStudy] | None = None
        try:
            for index, study in enumerate(studies):
                mode = " (quick)" if args.quick else " (full benchmark)" if args.full else ""
                print(f"{study.name}{mode}: {study.title}", file=sys.stderr)
                if ahead is not None:
                    ready, ahead = ahead.result(), None
                else:
                    ready = ready_study(study, args.quick, args.bin, cache)
                following = studies[index + 1] if index + 1 < len(studies) else None
                if following is not None and not measures_machine(following, args.quick):
                    ahead = preparer.submit(ready_study, following, args.quick, args.bin, cache)
                ctx = run_study(ready, args.quick, cache, engine)
                _print_checks(verdicts, written)  # the previous study's, written while this one's simulations ran
                written = (study.name, writer.submit(write_study, ctx, stage))
            _print_checks(verdicts, written)
        finally:
            _discard(ahead)
        pictures.result()
    return verdicts


def main(argv: Sequence[str] | None = None) -> int:
    """Run the studies named in ``argv``; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        try:
            print("\n".join(study_listing()))
        except STOPPING as failure:  # nothing was simulated: a closed pipe (--list | head) or Ctrl-C while listing
            return stopped(parser.prog, failure)
        return 0
    cache = Cache(args.cache or default_cache_dir())
    started = time.monotonic()
    kept: str | None = None  # what the cache holds of an interrupted run: once simulations start, the runs so far
    try:
        engine = engine_from_args(args, args.results)
        if args.job_script:
            assert engine.batch is not None
            print(job_script(engine.batch), end="")
            return 0
        studies = [load_study(name) for name in (args.studies or study_names())]
        for problem in filter(None, (study.simgrid_options_problem() for study in studies)):
            raise StudyError(problem)  # a typo in the last study is found before the first one runs
        if args.full:
            studies = [study.full_benchmark() for study in studies]
        kept = "runs"
        args.results.mkdir(parents=True, exist_ok=True)
        # Everything a run writes is staged in one hidden directory of results/ and swapped in at the end (renames
        # only): a full disk, a failure or a kill on the way leaves results/ as it was (the next run removes the stage).
        with unwinding_signals(), work_directory("run", parent=args.results) as stage:
            verdicts = _run_studies(studies, args, cache, engine, stage)
            write_report(args.results, stage)
            swap_in(stage, args.results)
            report = args.results / "REPORT.md"
    except STOPPING as failure:
        return stopped(parser.prog, failure, kept)
    failed = [name for name, outcome in verdicts.items() if not outcome.passed]
    elapsed = time.monotonic() - started
    print(f"wrote {report} in {elapsed:.1f} s; {studies_pass_line(list(verdicts.values()))}", file=sys.stderr)
    if failed:
        print(f"{parser.prog}: checks failed in: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
