"""Why a test of MPICH's suite does not run, or does not run at a rank count, or fails: each rule with its reason,
read from the test's source, its testlist or SimGrid's sources.

- ``excluded_sources``: every source of a directory that no test of its testlist is built from, with the reason
  (the testlist's comment above the commented-out line, a reason of ``SOURCE_REASONS``, or "not in SimGrid's
  testlist"), and the MPI calls of it that SMPI lacks.
- ``EXCLUDED``: tests of a testlist that this check does not run, with the reason.
- ``WRITTEN_FOR``: the rank counts a test is written for; at others it is n/a.
- ``KNOWN_FAILURES``: failures understood but not fixed, each with its cause (still failures).
"""

from __future__ import annotations

import re
from pathlib import Path

from study_runner.tools.conformance_build import lacking_calls
from study_runner.tools.conformance_suite import EXTRA_SOURCES
from study_runner.tools.conformance_suite import SOURCE_OF
from study_runner.tools.conformance_suite import read_testlist
from study_runner.tools.conformance_suite import source_suffixes

__all__ = [
    "EXCLUDED",
    "EXCLUDED_DIRECTORIES",
    "KNOWN_FAILURES",
    "KNOWN_HANGS",
    "WRITTEN_FOR",
    "excluded_sources",
    "excluded_variants",
    "excluded_with_lacks",
    "written_for",
]

_NO_DISK = (
    "SMPI's MPI-IO reads and writes the disks of the platform's hosts (SimGrid runs io on hosts_with_disks.xml); "
    "topolab's platforms have none, and MPI_File_open then aborts: 'SMPI/IO : Trying to open file on a diskless host'"
)
EXCLUDED_DIRECTORIES = {"io": _NO_DISK}
"""Directories whose tests this check does not run, with the reason."""
EXCLUDED: dict[str, str] = {}
"""Tests of SimGrid's testlists that this check does not run (beyond ``EXCLUDED_DIRECTORIES``), with the reason."""

_AT_MOST_10 = (
    "written for at most 10 processes (MAX_PROCESSES): beyond, only 10 ranks call its collectives on "
    "MPI_COMM_WORLD, which is erroneous MPI"
)
_ABORTS = "says {!r} and calls MPI_Abort otherwise"
_TWO_ONLY = (
    "{}: beyond 2 ranks the others wait forever, erroneous MPI (MPICH 4.0.2 hangs too; its testlist runs it at 2)"
)
_LOCK_DT = _TWO_ONLY.format("only its origin (rank 0) and target (the last rank) call MPI_Barrier on the communicator")
WRITTEN_FOR: dict[str, tuple[int, int, str]] = {
    "iallred": (2, 2, "asserts that it runs on 2 processes"),
    "bcastzerotype": (1, 12, "stores rank * 10 + i in a char and checks it: from rank 12 on the char overflows"),
    "allred": (
        1,
        8,
        "compares the float complex MPI_PROD i^N exactly: beyond 2^24 the rounding depends on the "
        "order of the multiplications, hence on the reduction tree (MPICH runs it at 4 and 7 ranks)",
    ),
    "allred 100": (
        1,
        4,
        "with 100 elements it compares the float MPI_PROD i^N (i up to 99) exactly: beyond 4 ranks the partial "
        "products exceed 2^24, and their rounding depends on the reduction tree (MPICH runs it at 4)",
    ),
    **{name: (1, 10, _AT_MOST_10) for name in ("coll2", "coll3", "coll5", "coll7", "gatherv")},
    "commcreate1": (
        3,
        1 << 30,
        "makes the group of ranks wsize/2+1 to wsize-1 with MPI_Group_range_incl: at 2 ranks its first rank, 2, is "
        "not a rank of MPI_COMM_WORLD, and the call fails (MPICH 4.0.2's too; its testlist runs it at 8)",
    ),
    "cmsplit": (4, 1 << 30, _ABORTS.format("This test requires at least four processes.")),
    "zeroparms": (
        1,
        1,
        "every rank sends one message to rank 0 and receives one from it, but rank 0 exchanges with itself only: "
        "beyond 1 rank the others wait forever (MPICH 4.0.2 hangs too; its testlist runs it at 1)",
    ),
    "struct-ezhov": (
        1,
        1,
        "every rank sends one message to rank 0 and receives one from it, but rank 0 exchanges with itself only: "
        "beyond 1 rank the others wait forever (MPICH 4.0.2 hangs too, measured at 2 ranks; rank 0 prints No Errors "
        "first, which passed the deadlock before smpirun failed deadlocked runs, SimGrid patch 0009)",
    ),
    "subarray": (2, 2, _TWO_ONLY.format("rank 0 sends one message to rank 1, and every other rank receives one too")),
    "grouptest": (
        8,
        1 << 30,
        "puts ranks 2 and 7 of MPI_COMM_WORLD in groups ('Test requires 8 processes (16 preferred)'): below 8 ranks "
        "its MPI_Group_incl is erroneous (MPICH 4.0.2 aborts too)",
    ),
    "grouptest2": (
        3,
        1 << 30,
        "compares {rank, rank+1} and {rank, rank-1} (mod size) as different groups: at 2 ranks they are the same "
        "group (MPICH 4.0.2 fails it too)",
    ),
    "gtranks": (4, 1 << 30, _ABORTS.format("This test requiers at least 4 processes")),
    "transp-datatype": (2, 2, _ABORTS.format("This test must be run with 2 processes")),
    "sendrecv3": (
        2,
        2,
        _TWO_ONLY.format("ranks 0 and 1 exchange with partner (rank + 1) % size, ranks 2 and up never"),
    ),
    **{name: (2, 2, _ABORTS.format("Launch with two processes")) for name in ("huge_dupcomm", "huge_ssend")},
    "multi_psend_derived": (2, 2, _ABORTS.format("Launch with two processes")),
    "dtype_send": (2, 2, _TWO_ONLY.format("rank 0 sends to rank 1 (!rank), and every other rank receives from 0")),
    "adlb_mimic1": (3, 1 << 30, _ABORTS.format("This test requires at least 3 processes")),
    "lockcontention": (3, 1 << 30, _ABORTS.format("Run this program with 3 or more processes")),
    "lockcontention3": (3, 1 << 30, _ABORTS.format("This test requires at least 3 processes")),
    **{name: (2, 2, _LOCK_DT) for name in ("lock_dt", "lock_dt_flush", "lock_dt_flushlocal")},
    "at_complete": (
        2,
        2,
        _TWO_ONLY.format("only ranks 0 and 1 call MPI_Win_fence on a window of MPI_COMM_WORLD, a collective call"),
    ),
    "manyget": (2, 2, _ABORTS.format("test must be run with 2 processes!")),
    "win_shared_put_flush_get": (4, 4, _ABORTS.format("Error: must be run with four processes")),
}
"""Rank counts a test is written for (read from its source, checked on MPICH 4.0.2), with why it cannot run at
others: n/a there. Keyed by the test's name, or its name and arguments (``allred 100``)."""

KNOWN_FAILURES: dict[str, str] = {
    "typename": (
        "each rank renames MPI_INT to 'int' at the end, and SMPI's predefined datatypes are single objects of "
        "libsimgrid shared by every simulated process (smpi_datatype.cpp's CREATE_MPI_DATATYPE): the ranks that "
        "come later read 'int' (SimGrid's testlist runs it at 1 rank only)"
    ),
    "initstat": (
        "SMPI's MPI_Is_thread_main answers true on the process of pid 1 only, rank 0 (smpi_pmpi.cpp, marked FIXME): "
        "every other rank's main thread, which called MPI_Init_thread, is told it is not the main thread"
    ),
    "nestvec2": (
        "its struct type spans from a stack variable to a heap buffer (absolute addresses, packed from MPI_BOTTOM), "
        "an extent of terabytes that overflows SMPI's int sizes ('Memory allocation of 18446744071834644768 bytes "
        "failed'); where the addresses happen to be close it passes. MPICH 4.0.2 fails it too (MPI_Pack: Invalid "
        "argument), and MPICH's testlist marks it xfail=ticket1788"
    ),
    **dict.fromkeys(
        ("fkeyval", "fkeyvalcomm"),
        "SMPI keeps one MPI_COMM_WORLD object for all the ranks of a run (smpi_deployment.cpp), so an attribute one "
        "rank puts on it is every rank's: each rank's MPI_Comm_dup calls the copy function of every rank's "
        "attribute, which increments that rank's counter; whether a rank sees a wrong count depends on how the "
        "ranks interleave, hence on the platform (measured at 4 ranks: passes on crossbar, fails on torus, mlfm "
        "and tofu)",
    ),
    **dict.fromkeys(
        ("linked_list_bench_lock_all", "linked_list_bench_lock_excl"),
        "from 4 ranks on, rank 0 polls the list's head, in its own window, with MPI_Get_accumulate and MPI_Win_flush "
        "until its neighbour has appended; SMPI completes these local calls without advancing the simulated clock "
        "or yielding, and under smpi/simulate-computation:no (topolab's standard option) no computation is charged "
        "between them: rank 0 spins at one simulated instant forever and the other ranks never run (measured: "
        "millions of calls at 16 us). With computation simulated, SMPI's default, they pass at 4, 8 and 16 ranks",
    ),
}
"""Failures understood but not fixed, each with its cause (still failures: printed with the cause, exit 1)."""
KNOWN_HANGS = {"linked_list_bench_lock_all": 30.0, "linked_list_bench_lock_excl": 30.0}
"""Known failures that never end: the seconds a run gets (instead of ``--timeout``'s) before it is counted failed."""

SOURCE_REASONS = (
    (
        re.compile(r"^coll/(ic|.*inter$)"),
        "an intercommunicator test: SMPI has no MPI_Intercomm_create (commented out in SimGrid's testlist)",
    ),
    (
        re.compile(r"^coll/bcast_(min_datatypes|comm_world)$"),
        "commented out in SimGrid's testlist: a 10-rank run of over 7 minutes",
    ),
    (re.compile(r"^coll/nb"), "needs MPICH's nbc_pmpi_adaptor.o (commented out in SimGrid's testlist)"),
)
"""Reasons for tests SimGrid comments out without saying why, or says it less precisely (``dir/name`` patterns)."""


def written_for(name: str, ranks: int, label: str = "") -> str | None:
    """Why test ``name`` (with arguments: ``label``) does not apply at ``ranks`` ranks, or None when it does."""
    low, high, why = WRITTEN_FOR.get(label, WRITTEN_FOR.get(name, (1, ranks, "")))
    return None if low <= ranks <= high else why


def _reason(directory: str, name: str, commented: dict[str, str]) -> str:
    """Why test ``name`` of ``directory`` does not run: a curated reason, else its testlist's comment."""
    curated = next((why for pattern, why in SOURCE_REASONS if pattern.search(f"{directory}/{name}")), None)
    if curated is not None:
        return curated
    if name not in commented:
        return "not in SimGrid's testlist"
    comment = commented[name]
    return (
        f"commented out in SimGrid's testlist, under the comment {comment!r}"
        if comment
        else "commented out in SimGrid's testlist"
    )


def excluded_with_lacks(suite: Path, directory: str) -> dict[str, tuple[str, list[str]]]:
    """Each source of ``directory`` that no test of its testlist is built from: the reason it is left out, and the
    MPI calls of it that SMPI lacks (declared unimplemented in smpi_mpi.cpp, or not in libsimgrid)."""
    listing = read_testlist(suite, directory)
    used = {source for test in listing.tests for source in test.sources}
    users: dict[str, str] = {}  # a source -> the commented-out test built from it
    for name, helpers in EXTRA_SOURCES.items():
        users.update(dict.fromkeys(helpers, name))
    for name in listing.commented:
        users.setdefault(SOURCE_OF.get(name, name), name)
    excluded = {}
    suffixes = source_suffixes(directory)
    for path in sorted(p for p in (suite / directory).iterdir() if p.suffix in suffixes):
        if path.name not in used:
            name = users.get(path.name, users.get(path.stem, path.stem))
            excluded[path.name] = (_reason(directory, name, listing.commented), lacking_calls(suite, path))
    return excluded


def excluded_sources(suite: Path, directory: str = "coll") -> dict[str, str]:
    """Each source of ``directory`` that no test of its testlist is built from, with the reason it is left out
    (and the MPI calls of it that SMPI lacks)."""
    return {
        source: f"{reason}; SMPI lacks {', '.join(lacks)}" if lacks else reason
        for source, (reason, lacks) in excluded_with_lacks(suite, directory).items()
    }


def excluded_variants(suite: Path, directory: str) -> dict[str, tuple[str | None, str]]:
    """Each commented-out test of ``directory`` whose source other tests are built from (bcast_min_datatypes,
    from bcast.c), or that has no source here (MPICH builds fetch_and_op_char from fetch_and_op.c): its source (or
    None) and the reason it is left out."""
    listing = read_testlist(suite, directory)
    built = {test.name for test in listing.tests}
    used = {source for test in listing.tests for source in test.sources}
    variants = {}
    for name in listing.commented:
        source = SOURCE_OF.get(name) or next(
            (name + s for s in source_suffixes(directory) if (suite / directory / (name + s)).is_file()), None
        )
        if name not in built and (source is None or source in used):
            variants[name] = (source, _reason(directory, name, listing.commented))
    return variants
