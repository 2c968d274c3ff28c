"""The hosts of a ready compiled platform (``study_runner.simulation.platform_files.compiled_hosts``): rebuilt once from
its ``.params`` provenance line, then read from the cache (Fugaku's 158,976 nodes took 14.6 s to rebuild, silent, in
every smpirun-on run before; 0.8 s to smpirun with the list kept)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from study_runner.simulation import platform_files
from study_runner.simulation.platform_files import compiled_hosts
from tests.conftest import REPO

PARAMS = REPO / "platforms" / "bgq-partitions" / "16x4x4x4x2.params"


def test_the_hosts_are_rebuilt_once_then_read_and_a_damaged_list_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(PARAMS, tmp_path / "p.params")
    said: list[str] = []
    first = compiled_hosts(tmp_path / "p.so", tmp_path / "cache", said.append)
    assert len(first) == 16 * 4 * 4 * 4 * 2 and len(said) == 1 and "building its model again" in said[0]
    assert first == compiled_hosts(tmp_path / "p.so")  # as the model gives them, in order
    (listed,) = (tmp_path / "cache" / "hosts").iterdir()
    monkeypatch.setattr(platform_files, "platform_model", lambda path: None)  # a rebuild would now fail
    assert compiled_hosts(tmp_path / "p.so", tmp_path / "cache", said.append) == first and len(said) == 1
    listed.write_text("\n".join(listed.read_text().split("\n")[:-5]) + "\n")  # truncated: fewer hosts than its count
    monkeypatch.undo()
    assert compiled_hosts(tmp_path / "p.so", tmp_path / "cache", said.append) == first and len(said) == 2
