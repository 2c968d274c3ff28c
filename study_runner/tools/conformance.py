"""MPICH's test suite under topolab's standard options: does legal MPI, C and Fortran, run on topolab's platforms?

The tests are MPICH's own, those SimGrid's source distribution ships (``teshsuite/smpi/mpich3-test``: every C
directory, and f77 and f90), built once into the cache with ``smpicc``, ``smpiff`` and ``smpif90``, and run by
``smpirun-on``'s own preparation (so with exactly the options and platforms users get) on several families and
rank counts; Fortran tests get gfortran's runtime privatized (``smpi/privatize-libs``), as SimGrid documents.

Which tests: every test of each directory's ``testlist`` that SimGrid itself runs; every source left out is listed
with the reason (``excluded_sources``), as is every test this check leaves out (``EXCLUDED``). A test passes when
it exits 0 and prints MTest's `` No Errors`` (or, where its testlist says ``resultTest=TestStatus`` or
``TestErrFatal``, when it exits non-zero); a rank count it is not written for (``WRITTEN_FOR``, or its own refusal)
is n/a; a call SMPI does not implement is named (``Not yet implemented: ...`` at run time, undefined at link time).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from generators.errors import TopologyError
from generators.files import atomic_write_text
from generators.params import positive_int
from study_runner.errors import StudyError
from study_runner.simulation import simgrid_options
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.codes import sdist
from study_runner.simulation.smpi import start_smpirun
from study_runner.simulation.workdirs import unwinding_signals
from study_runner.simulation.workdirs import work_directory
from study_runner.tools.conformance_build import build_tests
from study_runner.tools.conformance_build import c_name
from study_runner.tools.conformance_build import unpack_suite
from study_runner.tools.conformance_build import warn_only
from study_runner.tools.conformance_rules import EXCLUDED
from study_runner.tools.conformance_rules import EXCLUDED_DIRECTORIES
from study_runner.tools.conformance_rules import KNOWN_FAILURES
from study_runner.tools.conformance_rules import KNOWN_HANGS
from study_runner.tools.conformance_rules import WRITTEN_FOR
from study_runner.tools.conformance_rules import excluded_sources
from study_runner.tools.conformance_rules import excluded_variants
from study_runner.tools.conformance_rules import excluded_with_lacks
from study_runner.tools.conformance_rules import written_for
from study_runner.tools.conformance_suite import MPICH_TIME_LIMIT
from study_runner.tools.conformance_suite import SOURCE_OF
from study_runner.tools.conformance_suite import Test
from study_runner.tools.conformance_suite import directories
from study_runner.tools.conformance_suite import read_testlist
from study_runner.tools.smpirun_on import UsageError
from study_runner.tools.smpirun_on import prepare

__all__ = [
    "EXCLUDED",
    "KNOWN_FAILURES",
    "PLATFORMS",
    "SOURCE_OF",
    "WRITTEN_FOR",
    "Outcome",
    "default_cache_dir",
    "excluded_sources",
    "main",
    "run_on",
    "run_test",
    "testlist",
    "unpack_suite",
]

PLATFORMS = {
    "crossbar": ["--hosts", "16"],
    "torus": ["--dims", "4x4"],
    "mlfm": ["--d", "3"],
    "tofu": ["--xyz", "1x1x2"],
}
"""The four families of the check, each with at least 16 hosts; a run of N ranks uses the first N."""
RANKS = (2, 4, 8, 16)
PRECONDITION = re.compile(r"At least \d+ processes required|Number of processors must divide \d+")
"""What MPICH's tests print when they cannot run at a rank count (e.g. coll2 needs one that divides 10)."""
NO_ERRORS = re.compile(r"^\s*No Errors\s*$", re.IGNORECASE | re.MULTILINE)
"""What a test prints on rank 0 when all went well (MTest_Finalize; some tests print it themselves, as " No errors",
Fortran's print * as "  No Errors")."""
NO_FINALIZE = re.compile(r"application failed: rank \d+ \(on [^)]*\) returned from main without calling MPI_Finalize")
"""smpirun's line for a rank that returned without MPI_Finalize (SimGrid patch 0009). SimGrid's copy of MTest's
``MTest_Finalize`` does not finalize MPI (its comment says so, ``util/mtest.c``), and 13 of its tests end with it and
return: such a run passes when that is its only failure and the test said it found no errors."""
NOT_IMPLEMENTED = re.compile(r"Not yet implemented: (P?MPI_\w+)")
"""What SMPI says when a program calls what it declares but does not implement (smpi_mpi.cpp), then it aborts."""
UNDEFINED = re.compile(r"undefined reference to `(MPI_\w+|mpi_\w+_)'")
QUICK_TESTS = (
    "allred", "bcasttest", "reduce_mpich", "alltoall1", "allgather2", "scatter2", "coll2",  # coll
    "attrt", "attrorder", "dup", "commcreate1", "contents", "struct-pack", "commcall", "groupcreate", "infodup",
    "finalized", "sendrecvl", "sendrecv1", "anyall", "isendrecv", "putfence1", "accfence1", "lockcontention",
    "cartshift1", "uallreducef", "allpairf", "winfencef", "uallreducef90", "allpairf90", "winfencef90",
)  # fmt: skip
"""``--quick``: coll's seven, and two or three quick tests of each other directory."""
_QUIET = threading.Lock()
"""Held while ``prepare`` runs with its notices silenced (``sys.stderr`` is the process's, not the thread's)."""


@dataclass(frozen=True)
class Outcome:
    """One test on one platform at one rank count."""

    test: str
    family: str
    ranks: int
    status: str  # "pass", "fail" or "n/a" (the test is not written for this rank count)
    detail: str  # why it failed or does not apply
    directory: str = "coll"
    lacks: tuple[str, ...] = ()
    """The MPI calls SMPI lacks that made it fail (named at run time or at link time)."""
    seconds: float = 0.0
    """The run's wall time (0 when it did not run)."""

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def testlist(suite: Path, directory: str = "coll") -> list[str]:
    """The names of the tests SimGrid runs in ``directory``: its testlist's lines that are not comments, in order."""
    return list(dict.fromkeys(test.name for test in read_testlist(suite, directory).tests))


def _communicate(command: Sequence[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (``simulation.smpi.start_smpirun``), all of its process group killed after ``timeout`` s."""
    with start_smpirun(command, cwd) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except BaseException:  # the timeout, or this process unwinding: smpirun and its simulation go too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def run_on(
    family: str,
    params: Sequence[str],
    ranks: int,
    program: Sequence[str],
    cfg: Sequence[str] = (),
    timeout: float = 300.0,
) -> subprocess.CompletedProcess[str]:
    """``program`` under ``smpirun-on FAMILY PARAMS --np RANKS`` (topolab's standard options, then ``cfg``).

    Each run has a directory of its own, its working directory (tests may write files there). smpirun-on's notices
    (the platform it reuses, computation not simulated) are not shown. Raises ``subprocess.TimeoutExpired`` when
    the run takes longer than ``timeout`` seconds (the simulation is killed).
    """
    options = [simgrid_options.cfg(option) for option in cfg]
    with _QUIET, contextlib.redirect_stderr(io.StringIO()):
        command = prepare([family, *params, "--np", str(ranks), *options, "--", *program])
    with work_directory("conformance") as scratch:
        return _communicate(command, scratch, timeout)


def _lacks(text: str) -> tuple[str, ...]:
    """The MPI calls SMPI said it does not implement, or the linker did not find, in ``text``."""
    return tuple(dict.fromkeys(map(c_name, NOT_IMPLEMENTED.findall(text) + UNDEFINED.findall(text))))


_SIMGRID_LOG = re.compile(r"\[[^\]\n]*\] (?:\S+:\d+: )?\[[\w.]+/(\w+)\] ([^\n]*)")
"""A SimGrid log line: ``[host-0:0:(1) 0.000000] file.cpp:192: [root/CRITICAL] message`` (category, message)."""


def _why(done: subprocess.CompletedProcess[str]) -> str:
    """The most telling line of a failed run: SMPI's abort or SimGrid's deadlock after the test's last words, else
    SimGrid's error, else the test's first complaint with its count of errors."""
    logs = _SIMGRID_LOG.findall(done.stderr)
    # What the test printed: everything but SimGrid's log lines and smpirun's words after a failure (the
    # command it ran, "Execution failed with code N."); a log line may follow the test's words on one line.
    said = [
        line.strip()
        for line in _SIMGRID_LOG.sub("\n", done.stdout + "\n" + done.stderr).splitlines()
        if line.strip()
        and not line.startswith(("/", "Execution failed with code", "Backtrace", "(the backtrace"))
        and line.strip() not in ("Aborted", "Process called exit when leaving - Skipping cleanups")
    ]
    last = f" after the test said {said[-1]!r}" if said else ""
    if any("MPI_Abort was called" in message for _, message in logs):
        return f"the test called MPI_Abort{last}"
    if any("Deadlock detected" in message for _, message in logs):
        return f"SimGrid detected a deadlock{last}"
    errors = [message for level, message in logs if level in ("CRITICAL", "ERROR")]
    found = [line for line in said if re.match(r"Found \d+ errors", line)]
    complaints = [line for line in said if line not in found]  # the first says most, "Found N errors" how many
    if errors:
        return errors[0]
    return ": ".join(found[:1] + complaints[:1]) or "no output"


def judge(test: Test, done: subprocess.CompletedProcess[str]) -> tuple[str, str, tuple[str, ...]]:
    """Status, detail and calls SMPI lacks of a finished run of ``test``, as MPICH's runtests judges it."""
    lacks = _lacks(done.stdout + done.stderr)
    if test.result:  # TestStatus, TestErrFatal: the test checks that MPI reports its error status
        if done.returncode != 0 and not lacks:
            return "pass", "", ()
        if done.returncode == 0:
            return "fail", f"exit 0, but {test.result} expects a non-zero exit status", lacks
    elif done.returncode == 0 and NO_ERRORS.search(done.stdout):
        return "pass", "", ()
    elif done.returncode == 1 and NO_ERRORS.search(done.stdout) and NO_FINALIZE.search(done.stderr):
        return "pass", "", ()
    if lacks:
        return "fail", f"exit {done.returncode}: SMPI does not implement {', '.join(lacks)}", lacks
    refusal = PRECONDITION.search(done.stdout + done.stderr)
    if refusal is not None:
        return "n/a", f"the test says {refusal.group(0)!r}", ()
    return "fail", f"exit {done.returncode}: {_why(done)}"[:300], ()


def run_test(binary: Path, family: str, ranks: int, timeout: float, test: Test | None = None) -> Outcome:
    """One MPICH test on one of ``PLATFORMS``, judged by :func:`judge` (``test`` defaults to coll's test of the
    binary's name, without arguments)."""
    test = test or Test("coll", binary.name, sources=(SOURCE_OF.get(binary.name, f"{binary.name}.c"),))
    label = test.label

    def outcome(status: str, detail: str, lacks: tuple[str, ...] = ()) -> Outcome:
        return Outcome(label, family, ranks, status, detail, test.directory, lacks)

    why = written_for(test.name, ranks, test.label)
    if why is not None:
        return outcome("n/a", why)
    start = time.monotonic()
    try:
        done = run_on(family, PLATFORMS[family], ranks, [str(binary), *test.args], timeout=timeout)
    except subprocess.TimeoutExpired:
        return replace(outcome("fail", f"no result after {timeout:.0f} s"), seconds=time.monotonic() - start)
    return replace(outcome(*judge(test, done)), seconds=time.monotonic() - start)


def _group(directory: str) -> str:
    """The table's row group of a directory: f77/coll and f77/rma are f77."""
    return directory.split("/")[0]


def summary_table(outcomes: Sequence[Outcome], families: Sequence[str], ranks: Sequence[int]) -> str:
    """Passed/run per directory and family (rows) and rank count (columns), as a Markdown table; n/a runs are not
    counted. With several directories, an ``all`` row per family sums them."""
    groups = list(dict.fromkeys(_group(o.directory) for o in outcomes))
    head = "| directory | family | " + " | ".join(f"{n} rank{'s' * (n != 1)}" for n in ranks) + " |"
    rows = [head, "|---|---|" + "---|" * len(ranks)]
    for group in [*groups, "all"] if len(groups) > 1 else groups:
        for family in families:
            cells = []
            runs = [o for o in outcomes if o.family == family and group in ("all", _group(o.directory))]
            for n in ranks:
                counted = [o for o in runs if o.ranks == n and o.status != "n/a"]
                cells.append(f"{sum(o.passed for o in counted)}/{len(counted)}")
            rows.append(f"| {group} | {family} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _names(text: str, known: Sequence[str], what: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in known]
    if unknown or not all(names):
        listed = ", ".join(known) if len(known) <= 20 else f"{len(known)} names, e.g. {', '.join(known[:8])}"
        raise StudyError(f"unknown {what} {', '.join(map(repr, unknown or ['']))}: known are {listed}")
    return names


def _directories(text: str | None, known: Sequence[str]) -> list[str]:
    """The directories ``--dirs`` names: a directory, or f77/f90 for all of theirs."""
    if text is None:
        return list(known)
    tops = list(dict.fromkeys([*known, *(_group(d) for d in known)]))
    chosen = _names(text, tops, "directory")
    return [d for d in known if d in chosen or _group(d) in chosen]


def _select(args: argparse.Namespace, available: Sequence[Test]) -> list[Test]:
    if args.tests:
        names = _names(args.tests, list(dict.fromkeys(n for t in available for n in (t.name, t.label))), "test")
        return [t for t in available if t.name in names or t.label in names]
    if args.quick:
        return [t for t in available if t.name in QUICK_TESTS and not t.args]
    return list(available)


def main(argv: Sequence[str] | None = None) -> int:
    """Build and run the tests; print a table and every failure; exit 1 if any test failed, 2 on bad usage."""
    parser = argparse.ArgumentParser(prog="check-mpi-conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--dirs", help="comma-separated directories, f77 and f90 for all of theirs (default: all)")
    parser.add_argument("--quick", action="store_true", help=f"only {len(QUICK_TESTS)} tests, a few per directory")
    parser.add_argument("--tests", help="comma-separated tests (default: all of SimGrid's testlists)")
    parser.add_argument("--families", default=",".join(PLATFORMS), help="comma-separated (default: %(default)s)")
    parser.add_argument("--ranks", default=",".join(map(str, RANKS)), help="comma-separated (default: %(default)s)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds per run (default: %(default)s); a test whose testlist sets timeLimit=T gets T/180 times more",
    )
    parser.add_argument("--jobs", default="1", help="runs at a time (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="also write every outcome to this JSON file")
    args = parser.parse_args(argv)
    with unwinding_signals():  # a SIGTERM removes the runs' work directories too
        return _check(args)


def _exclusions(suite: Path, chosen: Sequence[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The lines naming every source and test left out of ``chosen`` directories with the reason, and for each
    call SMPI lacks, the excluded sources that make it."""
    lines, lacks = [], {}
    for directory in chosen:
        if directory in EXCLUDED_DIRECTORIES:
            for test in read_testlist(suite, directory).tests:
                lines.append(f"excluded: {directory}/{test.label}: {EXCLUDED_DIRECTORIES[directory]}")
        for source, (reason, missing) in excluded_with_lacks(suite, directory).items():
            lines.append(
                f"excluded: {directory}/{source}: {reason}" + (f"; SMPI lacks {', '.join(missing)}" * bool(missing))
            )
            for call in missing:
                lacks.setdefault(call, []).append(f"{directory}/{source}")
        for name, (source, reason) in excluded_variants(suite, directory).items():
            built = f"built from {source}, which other tests use" if source else "no source of that name here"
            lines.append(f"excluded: {directory}/{name} ({built}): {reason}")
        for test in read_testlist(suite, directory).tests:
            if test.name in EXCLUDED:
                lines.append(f"excluded: {directory}/{test.label}: {EXCLUDED[test.name]}")
    return lines, lacks


def _run_all(
    runs: Sequence[tuple[Test, str, int]],
    binaries: dict[Test, Path],
    broken: dict[Test, str],
    args: argparse.Namespace,
) -> list[Outcome]:
    """Every run (``--jobs`` at a time), in order, with a progress line each on stderr."""
    progress, done, lock = sys.stderr, [0], threading.Lock()

    def one(run: tuple[Test, str, int]) -> Outcome:
        test, family, n = run
        if test in broken and written_for(test.name, n, test.label) is None:
            outcome = Outcome(test.label, family, n, "fail", broken[test], test.directory, _lacks(broken[test]))
        else:
            binary = binaries.get(test, Path("/not-built") / test.name)
            limit = args.timeout * max(1.0, test.time_limit / MPICH_TIME_LIMIT)
            limit = min(limit, KNOWN_HANGS.get(test.name, limit))
            outcome = run_test(binary, family, n, limit, test)
        verdict = {"pass": "pass", "n/a": f"n/a ({outcome.detail})"}.get(outcome.status, f"FAIL ({outcome.detail})")
        with lock:
            done[0] += 1
            print(f"[{done[0]}/{len(runs)}] {test.label} on {family}, {n} ranks: {verdict}", file=progress, flush=True)
        return outcome

    with ThreadPoolExecutor(positive_int(args.jobs, "--jobs")) as pool:
        return list(pool.map(one, runs))


def _report(
    outcomes: Sequence[Outcome], families: Sequence[str], ranks: Sequence[int], lacks: dict, warns: frozenset[str]
) -> None:
    """The table, then every n/a and failure with its reason, the known causes, and what SMPI lacks."""
    print(summary_table(outcomes, families, ranks))
    for o in outcomes:
        if o.status == "n/a":
            print(f"n/a: {o.test} on {o.family}, {o.ranks} ranks: {o.detail}")
    failed = [o for o in outcomes if o.status == "fail"]
    for o in failed:
        known = " (known: see below)" if o.test in KNOWN_FAILURES else ""
        print(f"failed: {o.test} on {o.family}, {o.ranks} ranks: {o.detail}{known}")
    for name in sorted({o.test for o in failed} & set(KNOWN_FAILURES)):
        print(f"known: {name}: {KNOWN_FAILURES[name]}")
    at_run_time: dict[str, list[str]] = {}
    for o in failed:
        for call in o.lacks:
            at_run_time.setdefault(call, []).append(f"{o.directory}/{o.test}")
    for call in sorted(set(at_run_time) | set(lacks)):
        where = [f"run by {', '.join(dict.fromkeys(at_run_time[call]))}"] if call in at_run_time else []
        where += [f"in excluded {', '.join(lacks[call])}"] if call in lacks else []
        kind = " (it warns once and returns MPI_SUCCESS, doing nothing)" if call in warns else ""
        print(f"SMPI lacks {call}{kind}: {'; '.join(where)}")
    passed = sum(o.passed for o in outcomes)
    print(f"{passed} of {len(outcomes)} runs passed, {len(failed)} failed, {len(outcomes) - passed - len(failed)} n/a")


def _check(args: argparse.Namespace) -> int:
    try:
        suite = unpack_suite(sdist(), default_cache_dir())
        chosen = _directories(args.dirs, directories(suite))
        available = [
            test
            for directory in chosen
            if directory not in EXCLUDED_DIRECTORIES
            for test in read_testlist(suite, directory).tests
            if test.name not in EXCLUDED
        ]
        tests = _select(args, available)
        families = _names(args.families, list(PLATFORMS), "family")
        ranks = [positive_int(text, "--ranks") for text in args.ranks.split(",")]
        positive_int(args.jobs, "--jobs")
        lines, lacks = _exclusions(suite, chosen)
        print("\n".join(lines))
        if not tests:
            raise StudyError(f"no test to run in {', '.join(chosen)}: every test there is excluded (see above)")
        binaries, broken = build_tests(suite, tests)
        runs = [(test, family, n) for family in families for n in ranks for test in tests]
        outcomes = _run_all(runs, binaries, broken, args)
    except (StudyError, UsageError, TopologyError) as err:
        print(f"check-mpi-conformance: error: {err}", file=sys.stderr)
        return 2
    _report(outcomes, families, ranks, lacks, warn_only(suite))
    if args.json is not None:
        atomic_write_text(args.json, json.dumps([asdict(o) for o in outcomes], indent=1) + "\n")
    return 1 if any(o.status == "fail" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
