"""MPICH's collective tests under topolab's standard options: does legal MPI run on topolab's platforms?

The tests are MPICH's own (``teshsuite/smpi/mpich3-test/coll`` of the SimGrid source distribution that
``scripts/setup`` downloaded and verified), built with ``smpicc`` once into the cache, and run by
``smpirun-on``'s own preparation (so with exactly the options and platforms users get) on several families and
rank counts. A test passes when it exits 0 and prints MTest's `` No Errors``; a rank count it is not written for
(``WRITTEN_FOR``, or its own refusal) is n/a.

Which tests: every test of SimGrid's ``coll/testlist`` that SimGrid itself runs; the source files it leaves out
are listed with the reason (``excluded_sources``), and so is every test this check leaves out (``EXCLUDED``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from generators.errors import TopologyError
from generators.files import atomic_write_text
from generators.params import positive_int
from study_runner.cache import default_cache_dir
from study_runner.errors import StudyError
from study_runner.smpi import TOPOLAB_SIMGRID
from study_runner.smpirun_on import UsageError, prepare
from study_runner.workdirs import unwinding_signals, work_directory

SUITE = "teshsuite/smpi/mpich3-test"
UTIL_SOURCES = ("util/mtest.c", "util/dtypes.c", "util/mtest_datatype.c", "util/mtest_datatype_gen.c")
SOURCE_OF = {"bcast_full": "bcast.c", "reduce_mpich": "reduce.c"}
"""Tests built from another test's source (SimGrid's coll/CMakeLists.txt); every other test X is X.c."""

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
NO_ERRORS = re.compile(r"^ No Errors$", re.IGNORECASE | re.MULTILINE)
"""What a test prints on rank 0 when all went well (MTest_Finalize; some tests print it themselves, as " No errors")."""
QUICK_TESTS = ("allred", "bcasttest", "reduce_mpich", "alltoall1", "allgather2", "scatter2", "coll2")

EXCLUDED: dict[str, str] = {}
"""Tests of SimGrid's testlist that this check does not run, each with the reason."""

_AT_MOST_10 = (
    "written for at most 10 processes (MAX_PROCESSES): beyond, only 10 ranks call its collectives on "
    "MPI_COMM_WORLD, which is erroneous MPI"
)
WRITTEN_FOR: dict[str, tuple[int, int, str]] = {
    "iallred": (2, 2, "asserts that it runs on 2 processes"),
    "bcastzerotype": (1, 12, "stores rank * 10 + i in a char and checks it: from rank 12 on the char overflows"),
    "allred": (
        1,
        8,
        "compares the float complex MPI_PROD i^N exactly: beyond 2^24 the rounding depends on the "
        "order of the multiplications, hence on the reduction tree (MPICH runs it at 4 and 7 ranks)",
    ),
    **{name: (1, 10, _AT_MOST_10) for name in ("coll2", "coll3", "coll5", "coll7", "gatherv")},
}
"""Rank counts a test is written for (read from its source), with why it cannot run at others: n/a there."""

KNOWN_FAILURES = {
    "bcast_full": (
        "SMPI's ports of Open MPI's segmented bcast (the ompi selector's choice) split the message by elements of "
        "each rank's own datatype, and bcast.c gives the root and the others different datatypes of one signature "
        "(legal MPI): the segments disagree, MPI_ERR_TRUNCATE, then a deadlock. It passes with "
        "--cfg=smpi/bcast:binomial_tree or :mpich; SimGrid's own CI runs the suite so under the ompi selector"
    ),
}
"""Failures understood but not fixed, each with its cause (still failures: printed with the cause, exit 1)."""

_COMMENTED_OUT = (
    (
        re.compile(r"^ic|inter$"),
        "an intercommunicator test: SMPI has no MPI_Intercomm_create (commented out in SimGrid's testlist)",
    ),
    (
        re.compile(r"^bcast_(min_datatypes|comm_world)$"),
        "commented out in SimGrid's testlist: a 10-rank run of over 7 minutes",
    ),
    (re.compile(r"^nb"), "needs MPICH's nbc_pmpi_adaptor.o (commented out in SimGrid's testlist)"),
)


@dataclass(frozen=True)
class Outcome:
    """One test on one platform at one rank count."""

    test: str
    family: str
    ranks: int
    status: str  # "pass", "fail" or "n/a" (the test refused this rank count)
    detail: str  # why it failed or does not apply

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def sdist() -> Path:
    """The SimGrid source distribution ``scripts/setup`` verified and kept next to the SimGrid it built."""
    prefix = TOPOLAB_SIMGRID.resolve()
    candidates = sorted(prefix.parent.glob("simgrid-*.tar.gz"))
    wanted = prefix.parent / f"{prefix.name}.tar.gz"
    if not wanted.is_file():
        found = ", ".join(map(str, candidates)) or "none"
        raise StudyError(f"no SimGrid source distribution {wanted} (found: {found}): run scripts/setup")
    return wanted


def testlist(suite: Path) -> list[str]:
    """The tests SimGrid runs: the names of ``coll/testlist``'s lines that are not comments, in order."""
    names: list[str] = []
    for line in (suite / "coll" / "testlist").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#") and fields[0] not in names:
            names.append(fields[0])
    return names


def excluded_sources(suite: Path) -> dict[str, str]:
    """Each ``coll/*.c`` that no test of the testlist is built from, with the reason it is left out."""
    used = {SOURCE_OF.get(name, f"{name}.c") for name in testlist(suite)}
    reasons = {}
    for source in sorted(path.name for path in (suite / "coll").glob("*.c")):
        if source not in used:
            stem = source.removesuffix(".c")
            reason = next((why for pattern, why in _COMMENTED_OUT if pattern.search(stem)), "not in SimGrid's testlist")
            reasons[source] = reason
    return reasons


def unpack_suite(tarball: Path, cache_dir: Path) -> Path:
    """The suite's ``coll``, ``util`` and ``include`` directories, unpacked once per tarball into the cache."""
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()[:16]
    root = cache_dir / "mpich3-test" / digest
    if (root / "coll" / "testlist").is_file():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with work_directory("unpack", root.parent) as scratch, tarfile.open(tarball) as tar:
        prefix = f"{tar.getnames()[0].split('/')[0]}/{SUITE}/"
        members = [m for m in tar.getmembers() if m.name.startswith(prefix) and m.name.count("/") >= 4]
        for member in members:
            if member.name[len(prefix) :].split("/")[0] in ("coll", "util", "include"):
                member.name = member.name[len(prefix) :]
                tar.extract(member, scratch, filter="data")
        os.replace(scratch, root)  # atomic: a half-unpacked suite is never seen
    return root


def _compile(command: Sequence[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise StudyError(f"smpicc failed on {what}: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")


def build_tests(suite: Path, tests: Iterable[str], jobs: int = 2) -> dict[str, Path]:
    """Each test built with smpicc into ``suite/bin`` (once: an existing binary is kept)."""
    bin_dir = suite / "bin"
    bin_dir.mkdir(exist_ok=True)
    flags = ["-O1", "-w", f"-I{suite / 'include'}"]  # MPICH's tests have many warnings; SimGrid silences them too
    objects = []
    for source in UTIL_SOURCES:
        obj = bin_dir / (Path(source).stem + ".o")
        if not obj.is_file():
            _compile(["smpicc", *flags, "-fPIC", "-c", str(suite / source), "-o", f"{obj}.tmp.o"], source)
            os.replace(f"{obj}.tmp.o", obj)
        objects.append(str(obj))
    binaries = {name: bin_dir / name for name in tests}

    def build(name: str) -> None:
        if binaries[name].is_file():
            return
        source = suite / "coll" / SOURCE_OF.get(name, f"{name}.c")
        tmp = f"{binaries[name]}.tmp"
        _compile(["smpicc", *flags, str(source), *objects, "-o", tmp], source.name)
        os.replace(tmp, binaries[name])

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(build, binaries))
    return binaries


def run_on(
    family: str,
    params: Sequence[str],
    ranks: int,
    program: Sequence[str],
    cfg: Sequence[str] = (),
    timeout: float = 300.0,
) -> subprocess.CompletedProcess[str]:
    """``program`` under ``smpirun-on FAMILY PARAMS --np RANKS`` (topolab's standard options, then ``cfg``).

    Each run has a directory of its own, its working directory (tests may write files there).
    """
    options = [f"--cfg={option}" for option in cfg]
    command = prepare([family, *params, "--np", str(ranks), *options, "--", *program])
    with work_directory("conformance") as scratch:
        return subprocess.run(command, cwd=scratch, capture_output=True, text=True, timeout=timeout, check=False)


def run_test(binary: Path, family: str, ranks: int, timeout: float) -> Outcome:
    """One MPICH test on one of ``PLATFORMS``: passed when it exits 0 and prints `` No Errors`` (any case)."""
    low, high, why = WRITTEN_FOR.get(binary.name, (1, ranks, ""))
    if not low <= ranks <= high:
        return Outcome(binary.name, family, ranks, "n/a", why)
    try:
        done = run_on(family, PLATFORMS[family], ranks, [str(binary)], timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome(binary.name, family, ranks, "fail", f"no result after {timeout:.0f} s")
    if done.returncode == 0 and NO_ERRORS.search(done.stdout):
        return Outcome(binary.name, family, ranks, "pass", "")
    refusal = PRECONDITION.search(done.stdout + done.stderr)
    if refusal is not None:
        return Outcome(binary.name, family, ranks, "n/a", f"the test says {refusal.group(0)!r}")
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip() and not line.startswith("[")]
    return Outcome(
        binary.name, family, ranks, "fail", f"exit {done.returncode}: {lines[-1] if lines else 'no output'}"[:200]
    )


def summary_table(outcomes: Sequence[Outcome], families: Sequence[str], ranks: Sequence[int]) -> str:
    """Passed/run per family (rows) and rank count (columns), as a Markdown table; n/a runs are not counted."""
    head = "| family | " + " | ".join(f"{n} ranks" for n in ranks) + " |"
    rows = [head, "|---|" + "---|" * len(ranks)]
    for family in families:
        cells = []
        for n in ranks:
            runs = [o for o in outcomes if o.family == family and o.ranks == n and o.status != "n/a"]
            cells.append(f"{sum(o.passed for o in runs)}/{len(runs)}")
        rows.append(f"| {family} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _names(text: str, known: Sequence[str], what: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in known]
    if unknown or not all(names):
        raise StudyError(f"unknown {what} {', '.join(map(repr, unknown or ['']))}: known are {', '.join(known)}")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    """Build and run the tests; print a table and every failure; exit 1 if any test failed, 2 on bad usage."""
    parser = argparse.ArgumentParser(prog="check-mpi-conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_TESTS)}")
    parser.add_argument("--tests", help="comma-separated tests (default: all of SimGrid's testlist)")
    parser.add_argument("--families", default=",".join(PLATFORMS), help="comma-separated (default: %(default)s)")
    parser.add_argument("--ranks", default=",".join(map(str, RANKS)), help="comma-separated (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="also write every outcome to this JSON file")
    args = parser.parse_args(argv)
    with unwinding_signals():  # a SIGTERM removes the runs' work directories too
        return _check(args)


def _check(args: argparse.Namespace) -> int:
    try:
        suite = unpack_suite(sdist(), default_cache_dir())
        available = [name for name in testlist(suite) if name not in EXCLUDED]
        tests = _names(args.tests, available, "test") if args.tests else list(QUICK_TESTS if args.quick else available)
        families = _names(args.families, list(PLATFORMS), "family")
        ranks = [positive_int(text, "--ranks") for text in args.ranks.split(",")]
        binaries = build_tests(suite, tests)
        for source, reason in excluded_sources(suite).items():
            print(f"excluded: {source}: {reason}")
        for name, reason in EXCLUDED.items():
            print(f"excluded: {name}: {reason}")
        outcomes = []
        total = len(tests) * len(families) * len(ranks)
        for family in families:
            for n in ranks:
                for name in tests:
                    outcome = run_test(binaries[name], family, n, args.timeout)
                    outcomes.append(outcome)
                    verdict = {"pass": "pass", "n/a": f"n/a ({outcome.detail})"}.get(
                        outcome.status, f"FAIL ({outcome.detail})"
                    )
                    print(f"[{len(outcomes)}/{total}] {name} on {family}, {n} ranks: {verdict}", file=sys.stderr)
    except (StudyError, UsageError, TopologyError) as err:
        print(f"check-mpi-conformance: error: {err}", file=sys.stderr)
        return 2
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
    if args.json is not None:
        atomic_write_text(args.json, json.dumps([asdict(o) for o in outcomes], indent=1) + "\n")
    passed = sum(o.passed for o in outcomes)
    print(f"{passed} of {len(outcomes)} runs passed, {len(failed)} failed, {len(outcomes) - passed - len(failed)} n/a")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
