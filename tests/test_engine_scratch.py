"""A local Dask engine (``study_runner.batch.engine``) leaves nothing in TMPDIR (issue 61: a sweep left
``dask-scratch-space`` there): its worker's scratch is a directory of its own, removed afterwards."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from study_runner.batch.engine import Engine


def test_a_local_engine_leaves_no_dask_scratch_space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with Engine(workers=1).client(1) as client:
        assert client.submit(sum, [1, 2]).result() == 3
        assert list(tmp_path.iterdir())  # the scratch is there while the cluster runs
    assert list(tmp_path.iterdir()) == []
