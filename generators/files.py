"""Atomic file output: a file appears complete under its final name or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from generators.owners import owner_tag

__all__ = ["atomic_path", "atomic_write_text", "naming"]


@contextlib.contextmanager
def naming(path: str | os.PathLike[str]) -> Iterator[None]:
    """Raise an ``OSError`` of the block that names no file (a full disk is found when data is written or flushed,
    not when a file is opened) naming ``path``: what was being written, for the one error line that reports it."""
    try:
        yield
    except OSError as err:
        if err.filename is None and not isinstance(err, BrokenPipeError):
            raise OSError(err.errno, err.strerror, str(path)) from err
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds.

    The temporary name says which process writes it (``generators.owners``): what a killed writer leaves is removed
    by the next run that makes a work directory there (``study_runner.simulation.workdirs.remove_stale``).

    On any exception the temporary file is removed and ``path`` is left untouched. An ``OSError`` that names no file
    (a full disk is found when the data is written, not when the file is opened) is raised naming ``path``.
    """
    final = Path(path)
    tmp: Path | None = None
    try:
        with naming(final):
            final.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{final.name}-{owner_tag()}-", suffix=".tmp", dir=final.parent)
            os.close(fd)
            tmp = Path(tmp_name)
            yield tmp
            os.chmod(tmp, 0o644)
            os.replace(tmp, final)
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
