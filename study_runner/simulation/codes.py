"""Third-party codes built once into the cache: SimGrid's source distribution and the NAS kernels it ships.

A study or a tool that runs ``nas:is``, ``nas:ep`` or ``nas:dt`` gets its binary here (:func:`build_nas`), built with
SMPI's ``smpicc`` (or MPICH's ``mpicc`` for the validation against real runs), keyed by the compiler's identity
(:func:`compiler_identity`: another SimGrid, another binary).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from study_runner.errors import StudyError
from study_runner.paths import BIN_DIR
from study_runner.paths import REPO
from study_runner.paths import app_not_found
from study_runner.simulation.binaries import check_smpi_binary
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.cache import file_digest
from study_runner.simulation.smpi import TOPOLAB_SIMGRID
from study_runner.simulation.workdirs import work_directory

__all__ = [
    "COMPILERS",
    "NAS_SOURCES",
    "app_binary",
    "app_path",
    "build_nas",
    "compiler_identity",
    "nas_sources",
    "sdist",
    "third_party",
]

NAS_DIR = "examples/smpi/NAS"
COMPAT = REPO / "apps" / "smpi_compat"
"""Headers that let SimGrid's NAS ports build with a real MPI (never on an smpicc build's include path)."""
COMPILERS = {"smpi": "smpicc", "mpich": "mpicc"}
"""The compiler wrapper of each MPI: SimGrid's SMPI, or MPICH for runs on the real machine."""
THIRD_PARTY_PREFIX = "nas:"
"""How an app names a third-party code topolab builds (``nas:is``)."""
NAS_SOURCES = {
    "is": ("is.c", "nas_common.c"),
    "ep": ("ep.c", "nas_common.c"),
    "dt": ("dt.c", "nas_common.c", "DGraph.c"),
}


def sdist() -> Path:
    """The SimGrid source distribution ``scripts/setup`` verified and kept next to the SimGrid it built."""
    prefix = TOPOLAB_SIMGRID.resolve()
    candidates = sorted(prefix.parent.glob("simgrid-*.tar.gz"))
    wanted = prefix.parent / f"{prefix.name}.tar.gz"
    if not wanted.is_file():
        found = ", ".join(map(str, candidates)) or "none"
        raise StudyError(f"no SimGrid source distribution {wanted} (found: {found}): run scripts/setup")
    return wanted


def compiler_identity(compiler: str) -> str:
    """What decides what ``compiler`` produces: its wrapper script's bytes and the C compiler's version."""
    path = shutil.which(compiler)
    if path is None:
        raise StudyError(f"{compiler} not found on PATH (smpicc: run scripts/setup; mpicc: install libmpich-dev)")
    version = subprocess.run(["cc", "--version"], capture_output=True, text=True, check=False).stdout
    return f"{file_digest(Path(path))} {version.splitlines()[0] if version else ''}"


def nas_sources(cache_dir: Path) -> Path:
    """SimGrid's NAS sources, unpacked once per source distribution into ``<cache>/nas/<digest>/src``."""
    tarball = sdist()
    root = cache_dir / "nas" / hashlib.sha256(tarball.read_bytes()).hexdigest()[:16]
    if (root / "src" / "is.c").is_file():
        return root / "src"
    root.mkdir(parents=True, exist_ok=True)
    with work_directory("unpack", root) as scratch, tarfile.open(tarball) as tar:
        prefix = f"{tar.getnames()[0].split('/')[0]}/{NAS_DIR}/"
        for member in tar.getmembers():
            if member.name.startswith(prefix) and member.isfile():
                member.name = member.name[len(prefix) :]
                tar.extract(member, scratch, filter="data")
        os.replace(scratch, root / "src")  # atomic: a half-unpacked tree is never seen
    return root / "src"


def build_nas(cache_dir: Path, code: str, mpi: str) -> Path:
    """NAS ``code`` (is, ep, dt) built with ``mpi``'s compiler (smpi: smpicc; mpich: mpicc), once into the cache."""
    source = nas_sources(cache_dir)
    # The compiler wrapper names its MPI (smpicc: the SimGrid it links against): another one gives another binary.
    identity = hashlib.sha256(compiler_identity(COMPILERS[mpi]).encode()).hexdigest()[:12]
    binary = source.parent / f"{mpi}-{identity}" / code
    if binary.is_file():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    flags = ["-O2", "-w"] + ([f"-I{COMPAT}"] if mpi == "mpich" else [])
    tmp = f"{binary}.tmp"
    command = [COMPILERS[mpi], *flags, *(str(source / name) for name in NAS_SOURCES[code]), "-lm", "-o", tmp]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        raise StudyError(f"{COMPILERS[mpi]} failed on NAS {code.upper()}: {tail}")
    os.replace(tmp, binary)
    return binary


def app_binary(app: str, bin_dir: Path = BIN_DIR) -> Path:
    """The binary a run's or a job's ``app`` names: a third-party code (:func:`third_party`, built once into the
    cache), a path to the user's own binary (it has a ``/``), or one of topolab's apps in ``bin_dir``. StudyError
    when it is not there (``run scripts/build`` for topolab's own)."""
    built = third_party(app)
    own = _own_binary(app)
    binary = built or own or bin_dir / app
    if not binary.is_file():
        raise StudyError(app_not_found(binary, built is None and own is None))
    return binary


def runnable_binary(app: str, where: str, bin_dir: Path = BIN_DIR) -> Path:
    """The binary of ``app`` (:func:`app_binary`), refused unless SMPI can load it (built with SimGrid's wrappers:
    ``simulation.binaries``): StudyError naming ``where`` (the run or the job)."""
    try:
        binary = app_binary(app, bin_dir)
        check_smpi_binary(binary, app)
    except StudyError as err:
        raise StudyError(f"{where}: {err}") from None
    return binary


def app_path(app: str) -> Path:
    """A run's or a job's ``app`` held as a ``Path`` whose text :func:`app_binary` resolves as it resolves ``app``:
    the user's own binary made absolute (``Path("./mine")`` is ``mine``, which would name one of topolab's apps),
    a topolab app's or a third-party code's name as it is. Nothing is looked up."""
    own = _own_binary(app)
    return Path(app) if own is None else own.absolute()


def _own_binary(app: str) -> Path | None:
    """The path to the user's own binary that ``app`` gives (it holds a ``/``: relative to the working directory, as
    a shell's command), or None for a topolab app's or a third-party code's name."""
    return Path(app) if "/" in app and not app.startswith(THIRD_PARTY_PREFIX) else None


def third_party(app: str) -> Path | None:
    """The binary of a third-party code topolab builds (``nas:is``, ``nas:ep``, ``nas:dt``: SimGrid's NAS ports, built
    once into the cache), or None for any other app."""
    if not app.startswith(THIRD_PARTY_PREFIX):
        return None
    code = app.removeprefix(THIRD_PARTY_PREFIX)
    if code not in NAS_SOURCES:
        raise StudyError(f"unknown third-party code {app!r}: known are {', '.join(f'nas:{c}' for c in NAS_SOURCES)}")
    return build_nas(default_cache_dir(), code, "smpi")
