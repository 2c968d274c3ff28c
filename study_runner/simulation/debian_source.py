"""Third-party code from Debian's source packages, fetched, unpacked and built once per machine.

A code is the upstream tarball of a Debian source package (``scripts/fetch-debian-source``), checked against the
SHA-256 its release ships, unpacked once into ``<builds>/<name>/src/<digest>/`` and built once per source, flags and
compiler into ``<builds>/<name>/build/<key>/``. ``<builds>`` is the machine's (:func:`third_party_dir`), beside
SimGrid's build, so that every clone and every CI run on a clean checkout reuses them; a cache directory given
explicitly (a test's) is used instead. Every step works in a work directory and ends with an atomic rename,
so a half-downloaded tarball, a half-unpacked tree or a half-built binary is never seen, and two processes that do
the same step at once both end with the one result.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.cache import file_digest
from study_runner.simulation.workdirs import work_directory

__all__ = ["Source", "build_once", "fetch_source", "third_party_dir"]

FETCH = REPO / "scripts" / "fetch-debian-source"


def third_party_dir(cache_dir: Path | None = None) -> Path:
    """Where third-party sources and builds live: ``cache_dir`` when one other than the clone's default cache is
    given; else the machine's, as SimGrid's prefix (scripts/lib/simgrid.sh): ``$TOPOLAB_BUILDS``, or
    ``/opt/topolab/builds`` for root, or ``$XDG_DATA_HOME/topolab/builds`` (``~/.local/share``)."""
    if cache_dir is not None and Path(cache_dir).resolve() != default_cache_dir().resolve():
        return Path(cache_dir)
    if os.environ.get("TOPOLAB_BUILDS"):
        return Path(os.environ["TOPOLAB_BUILDS"])
    if os.geteuid() == 0:
        return Path("/opt/topolab/builds")
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "topolab" / "builds"


@dataclass(frozen=True)
class Source:
    """A Debian source package's upstream tarball: its name in the cache, the package, the tarball, its SHA-256, the
    directory it unpacks to, and a file that a complete tree has (relative to that directory)."""

    name: str
    package: str
    tarball: str
    sha256: str
    top: str
    marker: str


def fetch_source(source: Source, cache_dir: Path | None = None) -> Path:
    """The unpacked source tree of ``source``, downloaded and unpacked once (module docstring)."""
    base = third_party_dir(cache_dir) / source.name
    tarball = base / "download" / source.tarball
    root = base / "src" / source.sha256[:16]
    if (root / source.top / source.marker).is_file():
        return root / source.top
    if not tarball.is_file():
        tarball.parent.mkdir(parents=True, exist_ok=True)
        with work_directory("fetch", tarball.parent) as scratch:
            command = [str(FETCH), source.package, str(scratch)]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0 or not (scratch / source.tarball).is_file():
                why = (done.stderr.strip().splitlines() or ["no output"])[-1]
                raise StudyError(f"scripts/fetch-debian-source {source.package} gave no {source.tarball}: {why}")
            os.replace(scratch / source.tarball, tarball)
    digest = file_digest(tarball)
    if digest != source.sha256:
        raise StudyError(f"{tarball} has SHA-256 {digest}, not Debian's {source.tarball} ({source.sha256})")
    root.parent.mkdir(parents=True, exist_ok=True)
    with work_directory("unpack", root.parent) as scratch, tarfile.open(tarball) as tar:
        tar.extractall(scratch, filter=_inside)
        try:
            os.replace(scratch, root)  # atomic: a half-unpacked tree is never seen
        except OSError:  # another process unpacked it first
            if not (root / source.top / source.marker).is_file():
                raise
    return root / source.top


def _inside(member: tarfile.TarInfo, destination: str) -> tarfile.TarInfo | None:
    """tarfile's ``data`` filter, except that a symbolic link out of the tree is left out rather than refused (QE's
    tarball links its GUI's library to an absolute path, which no build uses)."""
    try:
        return tarfile.data_filter(member, destination)
    except (tarfile.AbsoluteLinkError, tarfile.LinkOutsideDestinationError):
        return None


def build_once(target: Path, product: str, build: Callable[[Path, Path], None]) -> Path:
    """``target/product``, made once: ``build(scratch, out)`` works in the empty directory ``scratch`` and leaves
    what to keep (``product`` and any log) in ``out``, which is then renamed to ``target``; it raises
    ``StudyError`` when the build fails."""
    if (target / product).exists():
        return target / product
    target.parent.mkdir(parents=True, exist_ok=True)
    with work_directory("build", target.parent) as scratch:
        out = scratch / "out"
        out.mkdir()
        build(scratch, out)
        if not (out / product).exists():
            raise StudyError(f"the build of {target.name} left no {product}")
        try:
            os.replace(out, target)  # atomic: a half-built product is never seen
        except OSError:  # another process built it first
            if not (target / product).exists():
                raise
    return target / product


def copy_tree(source: Path, destination: Path) -> None:
    """A copy of an unpacked source tree to build in (the cached tree stays pristine)."""
    shutil.copytree(source, destination, symlinks=True)
