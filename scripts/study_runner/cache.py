"""Content-addressed cache of simulation results.

A run's key is the SHA-256 of everything that decides its output: the platform XML and hostfile
bytes, the app binary bytes, its arguments, the rank count, every smpirun option and the SimGrid
version. Paths do not enter the key, so the same inputs anywhere hit the same entry. Entries are
written atomically, so a killed run never leaves a corrupt entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from generators.files import atomic_write_text

__all__ = ["Cache", "default_cache_dir", "file_digest", "run_key"]


def default_cache_dir() -> Path:
    """``$TOPOLAB_CACHE`` or ``.topolab-cache/`` at the repository root."""
    env = os.environ.get("TOPOLAB_CACHE")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".topolab-cache"


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def run_key(**inputs: Any) -> str:
    """SHA-256 of the canonical JSON of ``inputs``."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


class Cache:
    """Results by key, one JSON file per entry under ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[dict[str, Any]] | None:
        """The app's result records for ``key``, or None when absent (or unreadable)."""
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        records = entry.get("records") if isinstance(entry, dict) else None
        return records if isinstance(records, list) else None

    def measured(self, key: str) -> dict[str, float]:
        """What the simulation of ``key`` cost when it ran (``wall_s``, ``peak_private_mib``), if recorded."""
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        measured = entry.get("measured") if isinstance(entry, dict) else None
        if not isinstance(measured, dict):
            return {}
        return {k: float(v) for k, v in measured.items() if isinstance(v, int | float) and not isinstance(v, bool)}

    def put(
        self, key: str, records: list[dict[str, Any]], inputs: dict[str, Any], measured: dict[str, float] | None = None
    ) -> None:
        """Store the records with the inputs that produced them (and what the simulation cost)."""
        entry = {"inputs": inputs, "records": records, "measured": measured or {}}
        atomic_write_text(self._path(key), json.dumps(entry))
