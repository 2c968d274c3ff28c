"""Content-addressed cache of simulation results.

A run's key is the SHA-256 of everything that decides its output: the platform XML and hostfile
bytes, the app binary bytes, its arguments, the rank count, every smpirun option and the SimGrid
version. Paths do not enter the key, so the same inputs anywhere hit the same entry. Entries are
written atomically, so a killed run never leaves a corrupt entry.

An entry proves itself when it is read (:data:`ENTRY_FORMAT`): it names the key it was written for, how many records
each app printed and the SHA-256 of its records. An entry that fails any check (edited, truncated, moved under
another key, written by an older topolab) is a miss: the run is simulated again, and one warning names the entry.

Beside the entries, ``history/`` keeps what each simulation cost when it last ran, under its history key (its key
whatever build runs it: ``simulation.prepared.Simulation.history_key``): after a rebuild, the entries miss, and the
history still predicts how long each simulation will take (``study_runner.batch.eta``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from generators.files import atomic_write_text
from study_runner.paths import REPO

__all__ = ["ENTRY_FORMAT", "Cache", "default_cache_dir", "file_digest", "run_key"]

ENTRY_FORMAT = 2
"""The format of a cache entry: ``{"format", "key", "record_counts", "records_sha256", "inputs", "records",
"measured"}`` and, since 2026-12-04, ``history_key``; ``inputs`` is the provenance of the records
(``Simulation.provenance``). Format 1 (before 2026-11-29) carried no proof of its content: its entries are simulated
again."""


HISTORY_FIELDS = ("wall_s", "peak_memory_mib")
"""What the history keeps of a simulation's cost (the memory figure of runs measured since it counts shared memory:
older entries recorded ``peak_private_mib``, which is not read)."""


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def default_cache_dir() -> Path:
    """``$TOPOLAB_CACHE`` or ``.topolab-cache/`` at the repository root."""
    env = os.environ.get("TOPOLAB_CACHE")
    return Path(env) if env else REPO / ".topolab-cache"


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
        """The app's result records for ``key``, or None when absent or when the entry fails its checks (then one
        warning on stderr names it, and the caller simulates again and overwrites it)."""
        path = self._path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):  # absent (the cache directory itself may not be one yet)
            return None
        except (OSError, ValueError) as err:
            return _damaged(path, f"unreadable: {err}")
        try:
            entry = json.loads(text)
        except ValueError:
            return _damaged(path, "not JSON (truncated or overwritten)")
        why = entry_problem(entry, key)
        return _damaged(path, why) if why else entry["records"]

    def measured(self, key: str) -> dict[str, float]:
        """What the simulation of ``key`` cost when it ran (``wall_s``, ``peak_memory_mib``), if recorded."""
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        measured = entry.get("measured") if isinstance(entry, dict) else None
        if not isinstance(measured, dict):
            return {}
        return {k: float(v) for k, v in measured.items() if isinstance(v, int | float) and not isinstance(v, bool)}

    def put(
        self,
        key: str,
        records: list[dict[str, Any]],
        provenance: dict[str, Any],
        measured: dict[str, float] | None = None,
        history_key: str | None = None,
    ) -> None:
        """Store the records with what produced them (``provenance``), and what the simulation cost (``measured``),
        also in its history under ``history_key``."""
        entry = {
            "format": ENTRY_FORMAT,
            "key": key,
            "record_counts": _record_counts(records),
            "records_sha256": _records_digest(records),
            "inputs": provenance,
            "records": records,
            "measured": measured or {},
            **({"history_key": history_key} if history_key is not None else {}),
        }
        atomic_write_text(self._path(key), json.dumps(entry))
        if history_key is not None:
            self.record_history(history_key, measured or {})

    def _history_path(self, key: str) -> Path:
        return self.directory / "history" / key[:2] / f"{key}.json"

    def record_history(self, key: str, measured: dict[str, Any]) -> None:
        """Remember what the simulation of history key ``key`` cost (``HISTORY_FIELDS`` of ``measured``; :meth:`put`
        does)."""
        costs = {name: measured[name] for name in HISTORY_FIELDS if _positive(measured.get(name))}
        if "wall_s" in costs:
            atomic_write_text(self._history_path(key), json.dumps(costs))

    def history(self, key: str, field: str = "wall_s") -> float | None:
        """What the last run of the simulation of history key ``key`` cost, under any build: its wall time (s), or
        another of ``HISTORY_FIELDS`` (``peak_memory_mib``); None if unknown.

        A cache written before the history existed has its entries read into it once (those that name their
        history key: written since 2026-12-04).
        """
        if not (self.directory / "history" / ".complete").exists():
            self._fill_history()
        try:
            value = json.loads(self._history_path(key).read_text(encoding="utf-8")).get(field)
        except (OSError, ValueError, AttributeError):
            return None
        return float(value) if _positive(value) else None

    def _fill_history(self) -> None:
        """Record the history of every entry (those of a cache older than the history; once)."""
        for path in self.directory.glob("??/*.json"):
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(entry.get("history_key"), str):
                    self.record_history(entry["history_key"], entry["measured"])
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue
        if self.directory.is_dir():
            atomic_write_text(self.directory / "history" / ".complete", "")


def _records_digest(records: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()


def _record_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    """How many records each app printed (records without an ``app`` field count under "")."""
    return dict(Counter(str(record.get("app", "")) for record in records))


def _shown(value: object) -> str:
    """``value`` as JSON in ASCII, cut short: a damaged entry's bytes never break the warning's one line."""
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else f"{text[:37]}..."


def entry_problem(entry: object, key: str) -> str | None:
    """Why a cache entry read for ``key`` cannot be trusted, or None when it proves itself."""
    if not isinstance(entry, dict):
        return "not a JSON object"
    if not _same_json(entry.get("format"), ENTRY_FORMAT):
        return f"format {_shown(entry.get('format', 1))}, not {ENTRY_FORMAT} (written by another topolab)"
    if entry.get("key") != key:
        return f"written for key {_shown(entry.get('key'))}, not this one"
    records = entry.get("records")
    if not isinstance(records, list) or not records or not all(isinstance(r, dict) for r in records):
        return "its records are missing or empty"
    if not _same_json(entry.get("record_counts"), _record_counts(records)):
        return f"records per app {_shown(_record_counts(records))}, where it says {_shown(entry.get('record_counts'))}"
    if entry.get("records_sha256") != _records_digest(records):
        return "its records do not match their SHA-256 (edited)"
    return None


def _same_json(a: object, b: object) -> bool:
    """Equal as JSON (Python's ``==`` takes ``true``, ``1`` and ``1.0`` for one value)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _damaged(path: Path, why: str) -> None:
    print(f"warning: cache entry {path} is damaged ({why}): simulating it again", file=sys.stderr)
    return None
