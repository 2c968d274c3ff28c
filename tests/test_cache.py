"""The result cache proves its entries when it reads them: an entry that parses but was edited, truncated, emptied,
moved under another key or written by an older topolab is a miss with one warning naming it, never a result
(``study_runner.simulation.cache``; the trace store's own proof is tested in tests/test_replay.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from study_runner.simulation.cache import Cache
from study_runner.simulation.cache import run_key

RECORDS = [
    {"app": "pingpong", "bytes": 1, "oneway_s_min": 1.25e-07},
    {"app": "pingpong", "bytes": 1024, "oneway_s_min": 6.3e-07},
    {"app": "exchange", "bytes": 64, "time_s_min": 2.5e-07},
]
INPUTS = {"app": "pingpong", "ranks": 2, "options": ["--cfg=smpi/host-speed:1Gf"]}
KEY = run_key(**INPUTS)
OTHER_KEY = run_key(**{**INPUTS, "ranks": 4})


def stored(tmp_path: Path) -> tuple[Cache, Path]:
    cache = Cache(tmp_path / "cache")
    cache.put(KEY, RECORDS, INPUTS, {"wall_s": 0.5})
    return cache, tmp_path / "cache" / KEY[:2] / f"{KEY}.json"


def edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    entry = json.loads(path.read_text())
    change(entry)
    path.write_text(json.dumps(entry))


def test_an_entry_is_read_back_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache, path = stored(tmp_path)
    assert cache.get(KEY) == RECORDS
    assert cache.get(OTHER_KEY) is None  # absent: a plain miss, no warning
    assert cache.measured(KEY) == {"wall_s": 0.5}
    entry = json.loads(path.read_text())
    assert entry["key"] == KEY and entry["record_counts"] == {"pingpong": 2, "exchange": 1}
    assert capsys.readouterr().err == ""


def _set_records(value: object) -> Callable[[dict[str, Any]], None]:
    return lambda entry: entry.__setitem__("records", value)


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    # the findings: an emptied entry, an edited value, half the records
    "records emptied": (lambda p: edit(p, _set_records([])), "records are missing or empty"),
    "a value edited": (
        lambda p: edit(p, lambda e: e["records"][0].__setitem__("oneway_s_min", 123.0)),
        "do not match their SHA-256",
    ),
    "half the records": (lambda p: edit(p, lambda e: e.__setitem__("records", e["records"][:1])), "records per app"),
    "a record added": (lambda p: edit(p, lambda e: e["records"].append({"app": "x"})), "records per app"),
    "records not a list": (lambda p: edit(p, _set_records({"a": 1})), "records are missing or empty"),
    "truncated": (lambda p: p.write_text(p.read_text()[:40]), "not JSON"),
    "garbage bytes": (lambda p: p.write_bytes(b"\xff\xfe\x00garbage"), "unreadable"),
    "empty file": (lambda p: p.write_text(""), "not JSON"),
    "a JSON list": (lambda p: p.write_text("[1, 2]"), "not a JSON object"),
    "format 1 (no proof)": (
        lambda p: p.write_text(json.dumps({"inputs": INPUTS, "records": RECORDS, "measured": {}})),
        "format 1, not 2",
    ),
    "a count as true": (
        lambda p: edit(p, lambda e: e.__setitem__("record_counts", {"pingpong": 2, "exchange": True})),
        "records per app",
    ),
    "format as 2.0": (lambda p: edit(p, lambda e: e.__setitem__("format", 2.0)), "format 2.0, not 2"),
    "another key's entry": (lambda p: edit(p, lambda e: e.__setitem__("key", OTHER_KEY)), "written for key"),
    "line breaks in a field": (  # found by check-hostile-input: the warning was cut into several lines
        lambda p: edit(p, lambda e: e.__setitem__("record_counts", "a\x0bb\x1ec\u2028d\x85e")),
        "records per app",
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_entry_is_a_miss_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    cache, path = stored(tmp_path)
    harm, why = DAMAGE[damage]
    harm(path)
    assert cache.get(KEY) is None
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"warning: cache entry {path} is damaged (") and why in line
    assert line.endswith(": simulating it again")
    cache.put(KEY, RECORDS, INPUTS)  # what the caller does next: the entry is whole again
    assert cache.get(KEY) == RECORDS


def test_an_unreadable_entry_is_a_miss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache, path = stored(tmp_path)
    path.unlink()
    path.mkdir()  # reading it is an OSError (a directory), as an unreadable file would be
    assert cache.get(KEY) is None
    assert "is damaged (unreadable" in capsys.readouterr().err
