"""MPICH's tests out of SimGrid's source distribution, built with SimGrid's compiler wrappers into the cache, and
what SMPI lacks of the MPI calls they make.

The suite is unpacked once per tarball (``teshsuite/smpi/mpich3-test`` and SMPI's ``smpi_mpi.cpp``, which declares
the calls SMPI does not implement); each test is built once with ``smpicc``, ``smpiff`` or ``smpif90`` (rebuilt
when its command changes). A test that does not build is a result, not an error: its runs fail with the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
from collections.abc import Iterable
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from study_runner.errors import StudyError
from study_runner.simulation.smpi import TOPOLAB_SIMGRID
from study_runner.simulation.workdirs import work_directory
from study_runner.tools.conformance_suite import SUITE
from study_runner.tools.conformance_suite import Test

__all__ = ["build_tests", "c_name", "lacking_calls", "unpack_suite", "warn_only"]

UTIL_SOURCES = {
    "c": ("util/mtest.c", "util/dtypes.c", "util/mtest_datatype.c", "util/mtest_datatype_gen.c"),
    "f77": ("f77/util/mtestf.f",),
    "f90": ("f90/util/mtestf90.f90",),
}
"""SimGrid's mtest_c, mtest_f77 and mtest_f90 libraries, linked into every test of the language."""
COMPILER = {"c": "smpicc", "f77": "smpiff", "f90": "smpif90"}
_BASE_FLAGS = ("-O1", "-w")  # MPICH's tests have many warnings; SimGrid silences them too
_SMPI_MPI = "src/smpi/bindings/smpi_mpi.cpp"
_UNIMPLEMENTED = re.compile(r"^UNIMPLEMENTED_WRAPPED_PMPI_CALL\w*\(\s*[^,]+,\s*(MPI_\w+)", re.MULTILINE)


def unpack_suite(tarball: Path, cache_dir: Path) -> Path:
    """The whole ``mpich3-test`` directory and SMPI's ``smpi_mpi.cpp``, unpacked once per tarball into the cache."""
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()[:16]
    root = cache_dir / "mpich3-suite" / digest
    if (root / "smpi_mpi.cpp").is_file():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with work_directory("unpack", root.parent) as scratch, tarfile.open(tarball) as tar:
        top = tar.getnames()[0].split("/")[0]
        prefix = f"{top}/{SUITE}/"
        for member in tar.getmembers():
            if member.name.startswith(prefix) and len(member.name) > len(prefix):
                member.name = member.name[len(prefix) :]
                tar.extract(member, scratch, filter="data")
        bindings = tar.getmember(f"{top}/{_SMPI_MPI}")
        bindings.name = "smpi_mpi.cpp"
        tar.extract(bindings, scratch, filter="data")
        os.replace(scratch, root)  # atomic: a half-unpacked suite is never seen
    return root


def _run(command: Sequence[str], cwd: Path) -> str | None:
    """None when ``command`` succeeded, else its most telling line (a link error names the missing symbol)."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    telling = [line for line in lines if "undefined reference" in line or "error" in line.lower()]
    return ((telling or lines or [f"exit status {done.returncode}"])[0])[:300]


def _util_objects(suite: Path, language: str) -> list[str]:
    """The mtest objects of ``language``, built once."""
    out = suite / "bin" / "util"
    out.mkdir(parents=True, exist_ok=True)
    objects = []
    for source in UTIL_SOURCES[language]:
        obj = out / (Path(source).stem + ".o")
        if not obj.is_file():
            compiler = COMPILER[language]
            command = [compiler, *_BASE_FLAGS, f"-I{suite / 'include'}", "-fPIC", "-c", str(suite / source)]
            problem = _run([*command, "-o", f"{obj}.tmp.o"], out)
            if problem is not None:
                raise StudyError(f"{compiler} failed on {source}: {problem}")
            os.replace(f"{obj}.tmp.o", obj)
        objects.append(str(obj))
    return objects


def _typeaints(suite: Path) -> Path:
    """f77/datatype's typeaints.h, configured as SimGrid's CMake does (an address-sized integer: 8 bytes)."""
    header = suite / "bin" / "f77" / "datatype" / "typeaints.h"
    if not header.is_file():
        header.parent.mkdir(parents=True, exist_ok=True)
        template = (suite / "f77" / "datatype" / "typeaints.h.in").read_text()
        header.write_text(template.replace("@CMAKE_SIZEOF_VOID_P@", "8"))
    return header.parent


def _build_one(suite: Path, test: Test) -> str | None:
    """Build ``test`` into ``suite/bin/DIRECTORY/NAME``; None when built (or already built the same way)."""
    out = suite / "bin" / test.directory
    out.mkdir(parents=True, exist_ok=True)
    binary, source_dir = out / test.name, suite / test.directory
    includes = [f"-I{suite / 'include'}", f"-I{source_dir}", f"-I{suite / 'bin' / 'f77' / 'datatype'}"]
    own, *extra = test.sources
    objects = []
    for helper in extra:
        if Path(helper).suffix == ".c" and test.language != "c":
            obj = out / f"{test.name}.{Path(helper).stem}.o"
            problem = _run(["smpicc", *_BASE_FLAGS, *includes, "-c", str(source_dir / helper), "-o", str(obj)], out)
            if problem is not None:
                return problem
            objects.append(str(obj))
        else:
            objects.append(str(source_dir / helper))
    util = _util_objects(suite, test.language)
    flags = [*_BASE_FLAGS, *test.flags]
    command = [COMPILER[test.language], *flags, *includes, str(source_dir / own), *objects, *util]
    recipe = binary.with_name(f"{test.name}.command")
    if binary.is_file() and recipe.is_file() and recipe.read_text() == "\n".join(command):
        return None
    with work_directory("build", out) as scratch:  # Fortran writes its .mod files in the working directory
        problem = _run([*command, "-o", str(scratch / test.name)], scratch)
        if problem is None:
            os.replace(scratch / test.name, binary)
            recipe.write_text("\n".join(command))
    return problem


def build_tests(suite: Path, tests: Iterable[Test], jobs: int = 2) -> tuple[dict[Test, Path], dict[Test, str]]:
    """Each test built into ``suite/bin`` (once): the binaries, and for each test that does not build, why."""
    todo = [test for test in dict.fromkeys(tests) if test.sources]
    for language in {test.language for test in todo}:
        _util_objects(suite, language)
    _typeaints(suite)
    with ThreadPoolExecutor(jobs) as pool:
        problems = dict(zip(todo, pool.map(lambda test: _build_one(suite, test), todo), strict=True))
    binaries = {t: suite / "bin" / t.directory / t.name for t, problem in problems.items() if problem is None}
    failed = {t: f"does not build: {problem}" for t, problem in problems.items() if problem is not None}
    return binaries, failed


def c_name(symbol: str) -> str:
    """The C name of an MPI call from a symbol of it, C or Fortran.

    >>> c_name("mpi_type_create_f90_integer_"), c_name("PMPI_Win_sync")
    ('MPI_Type_create_f90_integer', 'MPI_Win_sync')
    """
    symbol = symbol.removeprefix("P")
    if symbol.startswith("MPI"):
        return symbol
    return "MPI_" + symbol.removeprefix("mpi_").removesuffix("_").capitalize()


@cache
def _smpi_symbols() -> frozenset[str]:
    """The MPI symbols libsimgrid defines (C ``MPI_Send`` and Fortran ``mpi_send_``)."""
    smpicc = shutil.which("smpicc")
    prefix = Path(smpicc).resolve().parents[1] if smpicc else TOPOLAB_SIMGRID
    library = prefix / "lib" / "libsimgrid.so"
    done = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise StudyError(f"cannot list the symbols of {library}: {done.stderr.strip()[:200]}")
    return frozenset(line.split()[-1] for line in done.stdout.splitlines() if re.search(r" (P?MPI_|mpi_)", line))


@cache
def _unimplemented(suite: Path) -> frozenset[str]:
    """The calls SMPI declares but dies in (``UNIMPLEMENTED_WRAPPED_PMPI_CALL`` of its smpi_mpi.cpp)."""
    return frozenset(_UNIMPLEMENTED.findall((suite / "smpi_mpi.cpp").read_text()))


HELPER_CALLS = {"MTestGetIntercomm": ("MPI_Intercomm_create",)}
"""MTest's helpers that make calls SMPI lacks (util/mtest.c: MTestGetIntercomm builds its intercommunicators with
MPI_Intercomm_create)."""


def warn_only(suite: Path) -> frozenset[str]:
    """The unimplemented calls SMPI only warns about, doing nothing (``UNIMPLEMENTED_WRAPPED_PMPI_CALL_NOFAIL``)."""
    text = (suite / "smpi_mpi.cpp").read_text()
    return frozenset(re.findall(r"^UNIMPLEMENTED_WRAPPED_PMPI_CALL_NOFAIL\(\s*[^,]+,\s*(MPI_\w+)", text, re.MULTILINE))


_C_CALL = re.compile(r"\b(MPIX?_[A-Z][a-z0-9_]*)\s*\(")
_FORTRAN_CALL = re.compile(r"\bcall\s+(mpix?_\w+)|\b(mpi_(?:wtime|wtick|aint_add|aint_diff))\s*\(", re.IGNORECASE)


def lacking_calls(suite: Path, source: Path) -> list[str]:
    """The MPI calls of ``source`` that SMPI lacks: declared unimplemented, or absent from libsimgrid (for a
    Fortran source, absent from its Fortran bindings), each named as in C (``MPI_Intercomm_create``)."""
    text = source.read_text(errors="replace")
    symbols, unimplemented = _smpi_symbols(), _unimplemented(suite)
    by_lower = {name.lower(): name for name in symbols | unimplemented if name.startswith("MPI")}
    helpers = [call for helper, calls in HELPER_CALLS.items() if helper in text for call in calls]
    lacking = [call for call in helpers if call in unimplemented or call not in symbols]
    if source.suffix == ".c":
        for name in dict.fromkeys(_C_CALL.findall(text)):
            if name.endswith("_function") or name in ("MPI_Aint", "MPI_Fint", "MPI_Offset", "MPI_Count"):
                continue  # types and callback types, not calls
            if (name in unimplemented or name not in symbols) and name not in lacking:
                lacking.append(name)
    else:
        for match in _FORTRAN_CALL.finditer(text):
            lower = (match.group(1) or match.group(2)).lower()
            name = by_lower.get(lower, c_name(lower))
            if name in symbols and name not in unimplemented:
                name += " (its Fortran binding)"  # SMPI has the C call, not the Fortran one
            if (name in unimplemented or f"{lower}_" not in symbols) and name not in lacking:
                lacking.append(name)
    return lacking
