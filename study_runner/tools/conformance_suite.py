"""What MPICH's test suite, as SimGrid's source distribution ships it, holds: its directories, the tests of each
directory's ``testlist`` (SimGrid's own choice of what runs), how each test is built, and why each source left out
is left out.

SimGrid's own files are the reference: ``teshsuite/smpi/mpich3-test/*/testlist`` says which tests run (a line
``name np [key=value ...]``; ``arg=`` is the program's argument, ``resultTest=`` how the result is judged), and
each directory's ``CMakeLists.txt`` how a test is built (``SOURCE_OF``, ``EXTRA_SOURCES``, ``FLAGS``). A test of the
testlist that is commented out keeps the comment above it as its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path

__all__ = [
    "C_DIRECTORIES",
    "EXTRA_SOURCES",
    "FORTRAN_DIRECTORIES",
    "SOURCE_OF",
    "SUITE",
    "Listing",
    "Test",
    "directories",
    "read_testlist",
    "source_suffixes",
    "sources_of",
]

SUITE = "teshsuite/smpi/mpich3-test"
C_DIRECTORIES = (
    "attr", "coll", "comm", "datatype", "errhan", "group", "info", "init", "io", "perf", "pt2pt", "rma", "topo",
)  # fmt: skip
"""The C directories: each has a testlist and SimGrid's ctest runs it (its CMakeLists.txt's ADD_TEST; the suite's
top testlist comments out errhan, io and perf, but their own ADD_TEST runs them)."""
FORTRAN_DIRECTORIES = ("f77", "f90")
"""Their subdirectories (f77/coll, ...) are those their testlist names; SimGrid's ctest runs both."""

SOURCE_OF = {
    "bcast_full": "bcast.c",
    "bcast_min_datatypes": "bcast.c",
    "bcast_comm_world": "bcast.c",
    "reduce_mpich": "reduce.c",
    "transpose3_shm": "transpose3.c",
}
"""Tests built from another test's source (SimGrid's coll and rma CMakeLists.txt); every other test X is X.c,
X.f or X.f90."""
EXTRA_SOURCES = {
    "c2f2cf": ("c2f2c.c",),
    "ctypesinf": ("ctypesfromc.c",),
    "greqf": ("dummyf.f",),
    "greqf90": ("dummyf90.f90",),
    "c2f2cwinf": ("c2f2cwin.c",),
    "c2f2cwinf90": ("c2f902cwin.c",),
}
"""Sources linked into a test besides its own (C helpers of the Fortran interoperability tests, Fortran helpers)."""
_RMA_FLAGS = (
    "-DHAVE_STDLIB_H=1", "-DHAVE_UNISTD_H=1", "-DHAVE_STRING_H=1", "-DUSE_STDARG=1", "-DHAVE_LONG_DOUBLE=1",
    "-DHAVE_PROTOTYPES=1", "-DHAVE_SIGNAL_H=1", "-DHAVE_SIGACTION=1", "-DHAVE_SLEEP=1", "-DHAVE_SYSCONF=1",
)  # fmt: skip
_LEGACY = ("-std=legacy",)  # gfortran >= 10 refuses these sources' argument mismatches without it (SimGrid's flag)
DIRECTORY_FLAGS = {"rma": _RMA_FLAGS, "f77/coll": _LEGACY, "f77/datatype": _LEGACY, "f90/coll": _LEGACY}
DIRECTORY_FLAGS["f90/datatype"] = _LEGACY
FLAGS = {
    "allred": ("-O0",),
    "hindexed_block": ("-DTEST_HINDEXED_BLOCK",),
    "transpose3_shm": ("-DUSE_WIN_ALLOCATE",),
    "bcast_min_datatypes": ("-DBCAST_MIN_DATATYPES_ONLY",),
    "bcast_comm_world": ("-DBCAST_COMM_WORLD_ONLY",),
    "allpairf": _LEGACY,
}
"""Compiler flags of one test (after its directory's), as SimGrid's CMakeLists.txt sets them."""
MPICH_TIME_LIMIT = 180.0
"""MPICH's runtests gives a test 180 s unless its testlist line says ``timeLimit=``."""


def source_suffixes(directory: str) -> tuple[str, ...]:
    """The suffixes of a directory's test sources, its own language's first (f77/ext has C tests too)."""
    top = directory.split("/")[0]
    return {"f77": (".f", ".c"), "f90": (".f90", ".c")}.get(top, (".c",))


@dataclass(frozen=True)
class Test:
    """One test of a testlist: a program, its arguments, and how runtests judges it."""

    __test__ = False  # not a pytest test class
    directory: str
    name: str
    args: tuple[str, ...] = ()
    result: str = ""
    """runtests' ``resultTest``: "" (exit 0 and `` No Errors``), ``TestStatus`` or ``TestErrFatal`` (a non-zero
    exit status is the expected result)."""
    time_limit: float = MPICH_TIME_LIMIT
    sources: tuple[str, ...] = ()
    """The test's own source first, then the extra ones, relative to its directory."""
    ranks: tuple[int, ...] = field(default=(), compare=False)
    """The rank counts its testlist runs it at (MPICH's choice; this check runs its own ``RANKS``)."""

    @property
    def label(self) -> str:
        """The name, followed by the arguments when there are some (``allred 100``)."""
        return " ".join((self.name, *self.args))

    @property
    def language(self) -> str:
        """``c``, ``f77`` or ``f90``: that of its own source (the compiler that links it)."""
        suffix = Path(self.sources[0]).suffix if self.sources else ".c"
        return {".f": "f77", ".f90": "f90"}.get(suffix, "c")

    @property
    def flags(self) -> tuple[str, ...]:
        return (*DIRECTORY_FLAGS.get(self.directory, ()), *FLAGS.get(self.name, ()))


def sources_of(suite: Path, directory: str, name: str) -> tuple[str, ...]:
    """The sources of test ``name`` of ``directory`` (its own first), or () when the suite has none."""
    own = SOURCE_OF.get(name)
    if own is None:
        own = next((name + s for s in source_suffixes(directory) if (suite / directory / (name + s)).is_file()), None)
    return () if own is None else (own, *EXTRA_SOURCES.get(name, ()))


@dataclass(frozen=True)
class Listing:
    """A directory's testlist: the tests SimGrid runs, and those it comments out with the comment above each."""

    tests: tuple[Test, ...]
    commented: dict[str, str]
    """Each test name of a commented-out line, with the comment block just above it ("" when none)."""


_TEST_LINE = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s+(\d+)(\s.*)?$")


def _options(text: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for word in text.split():
        key, _, value = word.partition("=")
        value = value.strip('"')
        options[key] = f"{options[key]} {value}" if key == "arg" and key in options else value
    return options


def _about(comment: list[str], name: str, directory: Path) -> str:
    """The comment block above commented-out test ``name``, unless it is about another test ("ic2 needs ...")."""
    first = comment[0].split()[0] if comment else ""
    other = first != name and any((directory / (first + s)).is_file() for s in (".c", ".f", ".f90"))
    return "" if other else " ".join(comment)


def read_testlist(suite: Path, directory: str) -> Listing:
    """The tests of ``directory/testlist`` in order, one per program and arguments (the rank counts of its lines
    gathered), and its commented-out tests with their reasons."""
    tests: dict[tuple[str, tuple[str, ...]], Test] = {}
    commented: dict[str, str] = {}
    comment: list[str] = []
    after_test = False  # a comment after commented-out tests starts a new block
    for line in (suite / directory / "testlist").read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            text = stripped.lstrip("#").strip()
            found = _TEST_LINE.match(text)
            if found:
                commented.setdefault(found.group(1), _about(comment, found.group(1), suite / directory))
            elif text:
                comment = [*([] if after_test else comment), text]
            after_test = bool(found)
            continue
        comment, after_test = [], False
        found = _TEST_LINE.match(stripped)
        if not found:
            continue
        name, ranks, options = found.group(1), int(found.group(2)), _options(found.group(3) or "")
        args = tuple(options["arg"].split()) if "arg" in options else ()
        key = (name, args)
        known = tests.get(key)
        if known is None:
            limit = float(options.get("timeLimit", MPICH_TIME_LIMIT))
            sources = sources_of(suite, directory, name)
            known = Test(directory, name, args, options.get("resultTest", ""), limit, sources, ())
        tests[key] = replace(known, ranks=(*known.ranks, ranks))
    return Listing(tuple(tests.values()), commented)


def directories(suite: Path) -> list[str]:
    """Every test directory: the C ones, then the Fortran subdirectories that f77/testlist and f90/testlist name
    and the suite has."""
    found = [name for name in C_DIRECTORIES if (suite / name / "testlist").is_file()]
    for top in FORTRAN_DIRECTORIES:
        if not (suite / top / "testlist").is_file():
            continue
        for line in (suite / top / "testlist").read_text().splitlines():
            words = line.split()
            if words and not words[0].startswith("#") and (suite / top / words[0] / "testlist").is_file():
                found.append(f"{top}/{words[0]}")
    return found
