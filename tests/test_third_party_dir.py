"""Third-party builds (Quantum ESPRESSO, HPCC) live once per machine, beside SimGrid's build, not in each clone's
cache: a fresh clone, or CI's clean checkout, reuses them
(``study_runner.simulation.debian_source.third_party_dir``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.debian_source import third_party_dir


def test_the_clones_cache_maps_to_the_machines_builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TOPOLAB_BUILDS", raising=False)
    monkeypatch.delenv("TOPOLAB_CACHE", raising=False)
    machine = Path("/opt/topolab/builds") if os.geteuid() == 0 else None
    for given in (None, default_cache_dir()):
        found = third_party_dir(given)
        assert not found.is_relative_to(default_cache_dir())
        if machine is not None:
            assert found == machine
    monkeypatch.setenv("TOPOLAB_BUILDS", str(tmp_path / "builds"))
    assert third_party_dir(None) == tmp_path / "builds" == third_party_dir(default_cache_dir())


def test_a_cache_given_explicitly_is_used_as_it_is(tmp_path: Path) -> None:
    assert third_party_dir(tmp_path / "elsewhere") == tmp_path / "elsewhere"
