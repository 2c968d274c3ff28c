"""smpirun-on's cache of platforms and hostfiles: content-addressed, written whole, checked before reuse.

A family's platform is written once into ``<cache>/platforms/<key>/`` (the key: family, validated parameters,
generator source, compiled library), with a ``platform.json`` record that lists the SHA-256 of each platform file;
a directory whose files do not match it is written again, with one warning. A hostfile is named by its content
and rewritten when it no longer holds it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from generators.families import platform_request
from generators.model import Platform
from generators.placement import write_hostfile
from generators.writer import compiled_library
from generators.writer import platform_files
from generators.writer import platform_suffix
from generators.writer import write_platform
from study_runner.paths import REPO
from study_runner.simulation.cache import file_digest
from study_runner.simulation.cache import run_key

__all__ = ["CachedPlatform", "hostfile_path", "platform_directory", "write_platform_directory"]

GENERATORS = REPO / "generators"


@cache
def generators_digest() -> str:
    """SHA-256 of the generators' Python source: a new generator version gives new platform directories."""
    digest = hashlib.sha256()
    for path in sorted(GENERATORS.rglob("*.py")):
        digest.update(path.relative_to(GENERATORS).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def platform_key(family: str, params: dict[str, Any], platform: Platform) -> str:
    """The content address of a platform: family, validated parameters, generator source (and library)."""
    library = compiled_library(platform.compiled.library) if platform.compiled is not None else None
    return run_key(
        kind="topolab-platform",
        family=family,
        params=params,  # validated values: every spelling of the same platform gives the same key
        generators=generators_digest(),
        library=file_digest(library) if library is not None else None,
    )


@dataclass(frozen=True)
class CachedPlatform:
    """A family's platform model and where its file is (or will be) in the cache."""

    family: str
    params: dict[str, Any]
    """The validated family parameters (defaults filled in)."""
    platform: Platform
    path: Path
    """``<cache>/platforms/<key>/<platform name>.xml`` (or ``.so``, with ``.params`` beside it)."""

    @property
    def exists(self) -> bool:
        """Whether the platform's files are written and intact (see :meth:`problem`)."""
        return self.problem() is None

    def problem(self) -> str | None:
        """Why the platform's directory cannot be reused (absent, a file missing, or a file that does not match the
        SHA-256 its ``platform.json`` records), or None when it can."""
        try:
            recorded = json.loads((self.path.parent / "platform.json").read_text(encoding="utf-8"))["files_sha256"]
        except FileNotFoundError:
            return "absent"
        except (OSError, ValueError, KeyError, TypeError):
            return "its platform.json records no digest of its files"
        for file in platform_files(self.path):
            if not file.is_file():
                return f"{file.name} is missing"
            if not isinstance(recorded, dict) or recorded.get(file.name) != file_digest(file):
                return f"{file.name} does not match its SHA-256"
        return None


def platform_directory(family: str, given: dict[str, Any], cache_dir: Path) -> CachedPlatform:
    """Build the platform of ``family`` with ``given`` parameters and find its place in the cache.

    The place is ``cache_dir/platforms/<key>/``; :func:`write_platform_directory` writes it. A platform beyond the
    size limits (``generators.size``) is refused from its estimate, before it is built.
    """
    request = platform_request(family, given, written=True)
    platform = request.build()
    key = platform_key(family, request.values, platform)
    path = cache_dir / "platforms" / key / f"{platform.name}{platform_suffix(platform)}"
    return CachedPlatform(family, request.values, platform, path)


def write_platform_directory(cached: CachedPlatform) -> None:
    """Write the platform with a ``platform.json`` record beside it, the directory as a whole.

    The directory appears complete under its final name or not at all; a concurrent writer of the same
    key wins harmlessly (same content).
    """
    platform, path = cached.platform, cached.path
    directory = path.parent
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name[:16]}.", dir=directory.parent))
    try:
        write_platform(platform, staging / path.name)
        files = platform_files(staging / path.name)
        record = {
            "family": cached.family,
            "parameters": cached.params,
            "generators_sha256": generators_digest(),
            "hosts": len(platform.hosts),
            "links": len(platform.links),
            "files_sha256": {file.name: file_digest(file) for file in files},
        }
        (staging / "platform.json").write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
        staging.chmod(0o755)
        if cached.exists:  # a concurrent call wrote the same platform meanwhile
            return
        if directory.exists():  # incomplete (a file was removed by hand): replace it
            shutil.rmtree(directory)
        try:
            staging.rename(directory)
        except OSError:
            if not cached.exists:  # not a concurrent writer of the same key
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def hostfile_path(hosts: Sequence[str], cache_dir: Path) -> Path:
    """The cached hostfile of ``hosts`` (rank i on line i), ``<cache>/hostfiles/`` named by its content: written
    when absent or when what is there is not its placement (then with one warning)."""
    text = "".join(f"{h}\n" for h in hosts)
    path = cache_dir / "hostfiles" / f"{hashlib.sha256(text.encode()).hexdigest()[:20]}.hosts"
    try:
        intact = path.read_text(encoding="utf-8") == text
    except (OSError, ValueError):
        intact = False
    if not intact:
        if path.exists():
            print(f"warning: cached hostfile {path} does not hold its placement: writing it again", file=sys.stderr)
        write_hostfile(hosts, path)
    return path
