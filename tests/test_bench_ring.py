"""scripts/bench-ring's arguments: a wrong rank count or SimGrid is one error line before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from study_runner.tools import bench_ring


@pytest.mark.parametrize("ranks", ["1", "64,x", ""])
def test_a_bad_rank_count_is_refused(ranks: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_ring.main(["--ranks", ranks]) == 2
    assert capsys.readouterr().err == (f"bench-ring: error: --ranks takes rank counts of 2 or more, got {ranks!r}\n")


def test_a_missing_simgrid_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_ring.main(["--simgrid", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"bench-ring: error: no SimGrid at {tmp_path.resolve()} (no bin/smpirun)\n"


def test_a_repeat_below_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_ring.main(["--repeat", "0"]) == 2
    assert capsys.readouterr().err == "bench-ring: error: --repeat takes a count of 1 or more, got 0\n"
