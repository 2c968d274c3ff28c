"""Work directories that leave nothing behind: removed on exit, on SIGTERM, and after SIGKILL by the next run.

Every scratch directory topolab makes (a study's platform files, one simulation's files with SMPI's copies of the
app, a benchmark's files, a sweep's work files beside its results) comes from :func:`work_directory`, and its name
says which process owns it: ``topolab-<purpose>-<pid>.<start>.<domain>-<random>`` in the temporary directory, or
``.<purpose>.work-<pid>.<start>.<domain>-<random>`` in a given one. ``start`` is the owner's start time
(``/proc/<pid>/stat``), so that a reused PID is not taken for the owner; ``domain`` names the boot and the PID
namespace the owner ran in, since a directory on a shared file system (or in a /tmp that containers share) may
belong to a process this one cannot see.

A directory goes when its ``with`` block ends, however it ends: :func:`unwinding_signals` turns SIGTERM and SIGHUP
into an exception (as Ctrl-C already is) so that the blocks end, and an exit hook removes the directories that
threads still held. SIGKILL ends the process without either, so the first directory a process makes in a place
first removes the directories there whose owner has gone: the next run cleans up after a killed one, and never
after a live one (another topolab run may be running beside this one).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from generators.owners import owner_gone
from generators.owners import owner_tag
from study_runner.errors import StudyError

__all__ = [
    "STOPPING",
    "Terminated",
    "owned_directory",
    "owner_tag",
    "remove_stale",
    "replace_dir",
    "results_lock",
    "stopped",
    "unwinding_signals",
    "visible",
    "work_directory",
]

# No lock guards these: a signal handler that raises (unwinding_signals) could leave a lock held, and the exit hook
# would then wait for it forever. Adding to and discarding from a set is atomic in CPython, and a place swept twice
# by two threads at once is only swept twice.
_LIVE: set[Path] = set()
_SWEPT: set[Path] = set()


def _pattern(parent: Path | None) -> str:
    return "topolab-*" if parent is None else ".*.work-*"


def remove_stale(parent: Path | None = None) -> list[Path]:
    """Remove the work directories in ``parent`` (default: the temporary directory) whose owner has ended, except
    the old copy of a replace that died between its renames, which is put back in its empty place; return them."""
    where = Path(tempfile.gettempdir()) if parent is None else parent
    stale = [path for path in where.glob(_pattern(parent)) if path.is_dir() and owner_gone(path.name)]
    for path in stale:
        if not _put_back(path):
            shutil.rmtree(path, ignore_errors=True)
    files = [path for path in where.glob(".*.tmp") if path.is_file() and owner_gone(path.name)]  # atomic_path's
    for path in files:
        path.unlink(missing_ok=True)
    return stale + files


def _put_back(old: Path) -> bool:
    """Put a dead :func:`replace_dir`'s old copy back in its place when it died between its two renames (the place
    is empty): the results it replaced are not lost. Whether it did."""
    if not old.name.endswith("-old"):
        return False
    final = old.with_name(old.name[1 : old.name.rindex(".work-")])
    with results_lock(old.parent):
        if final.exists():
            return False
        old.rename(final)
    return True


@contextlib.contextmanager
def work_directory(purpose: str, parent: Path | None = None) -> Iterator[Path]:
    """A new directory for ``purpose``, in the temporary directory or in ``parent``, removed when the block ends.

    The first one this process makes in a place first removes the stale ones there (:func:`remove_stale`).
    """
    path = owned_directory(purpose, parent)
    _LIVE.add(path)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        _LIVE.discard(path)


def owned_directory(purpose: str, parent: Path | None = None) -> Path:
    """A new directory for ``purpose`` named for this process (:func:`work_directory`'s names), which nothing
    removes while the process lives, nor at its exit: the next run removes it once the process has ended. For a
    process that becomes another program (``os.exec*`` keeps the PID and the start time): smpirun-on's smpirun keeps
    its files there, the hostfile it keeps when the app fails among them."""
    place = Path(tempfile.gettempdir()) if parent is None else parent
    if place not in _SWEPT:
        _SWEPT.add(place)
        remove_stale(parent)
    prefix = f"topolab-{purpose}-" if parent is None else f".{purpose}.work-"
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{owner_tag()}-", dir=parent))


@atexit.register
def _remove_live() -> None:
    """At exit, the directories of threads that were still working (Dask's, after an interrupt)."""
    for path in list(_LIVE):
        shutil.rmtree(path, ignore_errors=True)


class Terminated(SystemExit):
    """The process received SIGTERM or SIGHUP: unwind (``with`` blocks end) and exit with 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signal = signal.Signals(signum)

    def __str__(self) -> str:
        return f"terminated by {self.signal.name}"


STOPPING = (StudyError, Terminated, OSError, KeyboardInterrupt)
"""What stops a command (``scripts/repro``, ``scripts/sweep``): each is one line on stderr (:func:`stopped`)."""


def stopped(prog: str, failure: BaseException, kept: str | None = None) -> int:
    """The exit status of command ``prog`` stopped by ``failure`` (one of :data:`STOPPING`), after its one line on
    stderr: 2 for bad input or a failing environment (``StudyError``; ``OSError``: a full disk, a directory that
    cannot be written), 130 for Ctrl-C and 128 + the signal when terminated (what was simulated, ``kept``, is in the
    cache; a command without a cache, ``kept`` None, says nothing of it). A closed output pipe
    (``scripts/sweep F --list | head``) ends it quietly, as it ends other Unix tools."""
    if isinstance(failure, BrokenPipeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to flush into the pipe
        return 128 + signal.SIGPIPE
    if isinstance(failure, StudyError):
        print(f"{prog}: error: {failure}", file=sys.stderr)
        return 2
    if isinstance(failure, OSError):
        where = f": {failure.filename}" if failure.filename else ""
        print(f"{prog}: error: {failure.strerror or failure}{where}", file=sys.stderr)
        return 2
    cached = "" if kept is None else f"; the {kept} simulated so far are in the cache"
    if isinstance(failure, KeyboardInterrupt):
        print(f"{prog}: interrupted{cached}", file=sys.stderr)
        return 128 + signal.SIGINT
    print(f"{prog}: {failure}{cached}", file=sys.stderr)
    return int(getattr(failure, "code", 1) or 1)


@contextlib.contextmanager
def unwinding_signals() -> Iterator[None]:
    """While the block runs (in the main thread), SIGTERM and SIGHUP raise :class:`Terminated`.

    Python's default for both is to die at once, leaving the work directories and unfinished files behind. A
    second signal during the unwinding is ignored, so that the cleanup finishes (SIGKILL still stops everything;
    the next run then cleans up).
    """
    handled = (signal.SIGTERM, signal.SIGHUP)

    def terminate(signum: int, _frame: FrameType | None) -> None:
        for number in handled:
            signal.signal(number, signal.SIG_IGN)
        raise Terminated(signum)

    previous = {number: signal.signal(number, terminate) for number in handled}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def results_lock(directory: Path) -> Iterator[None]:
    """Hold the lock of a results directory (``fcntl.flock`` on its ``.lock``) while the block runs: what puts results
    in place (:func:`replace_dir`) and what reads them all (the report) take it, so that two runs never interleave
    there. The kernel releases it when its holder dies, however it dies."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def replace_dir(staging: Path, final: Path) -> None:
    """Put the complete directory ``staging`` in the place of ``final`` (renames: never half of either), under the
    lock of ``final``'s parent (:func:`results_lock`)."""
    old = final.with_name(f".{final.name}.work-{owner_tag()}-old")  # swept as a work directory if its owner dies
    with results_lock(final.parent):
        if final.exists():
            final.rename(old)
        staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def visible(paths: Iterable[Path]) -> list[Path]:
    """The paths whose parent directory is not hidden: results, not a run's staging or work directories."""
    return sorted(path for path in paths if not path.parent.name.startswith("."))
