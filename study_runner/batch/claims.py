"""Claims on simulations: two runs on one cache never simulate the same thing twice.

A run claims each simulation it is about to start by a lock on one byte of ``<cache>/claims.lock`` (``fcntl``
record locks; the byte's offset comes from the simulation's key), and holds the claim until the result is in the
cache or the simulation has failed. Another run (``scripts/repro`` or ``scripts/sweep`` beside it, on the same cache)
finds the claim taken: it leaves that simulation to its claimer, does its own work first, then waits for the claim
and reads the result from the cache (or, if the claimer failed or was killed, claims and simulates it itself). The
kernel releases a dead process's locks, so a killed run never leaves a claim behind, and the one file never grows.

Record locks belong to a process, not to a thread or a file descriptor, and closing any descriptor of the file drops
all of the process's locks on it: one :class:`Claims` per batch holds the one descriptor, in the thread that runs the
batch.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

__all__ = ["Claims"]

_OFFSET_HEX_DIGITS = 15
"""A claim's byte is at the offset given by the key's first 15 hex digits (60 bits: keys never share one)."""


class Claims:
    """This process's claims on simulations in the cache at ``directory``."""

    def __init__(self, directory: Path) -> None:
        if directory.exists() and not directory.is_dir():  # mkdir would say "File exists"
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(directory))
        directory.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(directory / "claims.lock", os.O_RDWR | os.O_CREAT, 0o644)
        self._held: set[str] = set()

    @staticmethod
    def _offset(key: str) -> int:
        return int(key[:_OFFSET_HEX_DIGITS], 16)

    def claim(self, key: str) -> bool:
        """Claim the simulation ``key`` for this run; False if another run holds it."""
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, self._offset(key))
        except (BlockingIOError, PermissionError):
            return False
        self._held.add(key)
        return True

    def release(self, key: str) -> None:
        """Give up the claim on ``key`` (its result is in the cache, or it failed)."""
        if key in self._held:
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, self._offset(key))
            self._held.discard(key)

    def wait(self, key: str) -> None:
        """Wait until no other run holds a claim on ``key`` (its claimer wrote the result, failed or died)."""
        fcntl.lockf(self._fd, fcntl.LOCK_EX, 1, self._offset(key))
        fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, self._offset(key))

    def close(self) -> None:
        """Release every claim (closing the file does: the kernel drops the process's locks on it)."""
        os.close(self._fd)
        self._held.clear()

    def __enter__(self) -> Claims:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
