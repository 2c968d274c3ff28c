"""Whether a program can run under SMPI: built with SimGrid's compiler wrappers, not with a real MPI's.

``smpicc``, ``smpicxx`` and ``smpif90`` link a program as a shared object (``-shared``) against libsimgrid: SMPI's
``smpimain`` dlopens it once per rank and calls its ``main``, so its MPI calls are SimGrid's. A program built with
a real MPI's ``mpicc`` is an executable of its own (position-independent or not) linked with that MPI's library:
dlopen refuses it, and SimGrid aborts with its raw ``dlopen failed ...`` text, an empty backtrace and exit status
134. :func:`check_smpi_binary` says so in one line before anything runs, from the program's ELF headers alone.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.construct import ConstructError
from elftools.elf.dynamic import DynamicSegment
from elftools.elf.elffile import ELFFile

from study_runner.errors import StudyError

__all__ = ["REBUILD_HINT", "Linkage", "check_smpi_binary", "elf_linkage", "smpi_binary_problem"]

REBUILD_HINT = (
    "rebuild it with smpicc, smpicxx or smpif90 in place of mpicc, mpicxx or mpif90 (SimGrid's wrappers, in "
    ".venv/simgrid/bin after scripts/setup)"
)

_ELF_MAGIC = b"\x7fELF"
_DF_1_PIE = 0x08000000
_REAL_MPI = re.compile(r"lib(mpi|mpich|mpicxx|mpifort|mpi_mpifh|mpi_cxx)\.so")
"""The libraries of a real MPI (MPICH's ``libmpich.so.12``, Open MPI's ``libmpi.so.40``, their C++ and Fortran
bindings)."""


@dataclass(frozen=True)
class Linkage:
    """What an ELF file's headers say of how it is loaded: ``executable`` when it is a program of its own (an
    ``ET_EXEC``, or an ``ET_DYN`` flagged ``DF_1_PIE``), which dlopen refuses; the libraries it ``needed`` (its
    dynamic section's ``NEEDED`` entries, not those of the libraries it loads, as ``ldd`` would list)."""

    executable: bool
    needed: tuple[str, ...]


def elf_linkage(binary: Path) -> Linkage | None:
    """The linkage of ``binary``, or None when it is not an ELF file, or one that cannot be read or is damaged. Its
    program headers are read (section headers may be stripped): the dynamic segment's entries. Read once per version
    of the file (its inode, size and modification time): a study's runs ask about the same few apps hundreds of
    times."""
    try:
        found = binary.stat()
    except OSError:
        return None
    return _read_linkage(binary.resolve(), found.st_ino, found.st_size, found.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _read_linkage(binary: Path, inode: int, size: int, mtime_ns: int) -> Linkage | None:
    """:func:`elf_linkage` of one version of a file (the last three arguments name the version)."""
    try:
        with open(binary, "rb") as file:
            if file.read(4) != _ELF_MAGIC:
                return None
            file.seek(0)
            elf = ELFFile(file)
            dynamic = next((s for s in elf.iter_segments() if isinstance(s, DynamicSegment)), None)
            needed: tuple[str, ...] = ()
            flags = 0
            if dynamic is not None:
                needed = tuple(str(tag.needed) for tag in dynamic.iter_tags("DT_NEEDED"))
                flags = next((int(tag.entry.d_val) for tag in dynamic.iter_tags("DT_FLAGS_1")), 0)
            kind = elf.header.e_type
            return Linkage(kind == "ET_EXEC" or (kind == "ET_DYN" and bool(flags & _DF_1_PIE)), needed)
    except (OSError, ELFError, ConstructError, ValueError, KeyError, IndexError):  # unreadable, truncated, malformed
        return None


def smpi_binary_problem(binary: Path) -> str | None:
    """Why SMPI cannot load ``binary``, in words, or None when it can as far as its headers tell (and for a file that
    is no ELF file or a damaged one: smpirun is left to say what it makes of it)."""
    linkage = elf_linkage(binary)
    if linkage is None:
        return None
    real_mpi = [name for name in linkage.needed if _REAL_MPI.match(name)]
    linked = f" linked with {real_mpi[0]}" if real_mpi else ""
    if linkage.executable:
        return f"it is an executable of its own{linked}, which SMPI cannot load"
    if real_mpi and not any(name.startswith("libsimgrid") for name in linkage.needed):
        return f"it is linked with {real_mpi[0]}, a real MPI, not with SimGrid"
    return None


def check_smpi_binary(binary: Path, shown: str) -> None:
    """StudyError, one line naming the program as ``shown`` and how to rebuild it, unless SMPI can load ``binary``
    (:func:`smpi_binary_problem`): what every user's program goes through before it is run."""
    problem = smpi_binary_problem(binary)
    if problem is not None:
        raise StudyError(f"program {shown} was not built with SimGrid's compiler wrappers: {problem}; {REBUILD_HINT}")
