"""Two runs on one cache never simulate the same point twice (``study_runner.batch.claims``; issue 41: two concurrent
``scripts/sweep`` or ``scripts/repro`` simulated every shared point twice)."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest

from study_runner.batch.claims import Claims
from tests.conftest import REPO
from tests.conftest import pingpong_sweep

KEY = "ab" * 32
OTHER = "cd" * 32


def _hold(directory: str, key: str, ready: multiprocessing.Event, go: multiprocessing.Event) -> None:
    with Claims(Path(directory)) as claims:
        assert claims.claim(key)
        ready.set()
        go.wait(30)
        time.sleep(0.3)  # the waiter is blocked meanwhile


def test_a_claim_excludes_other_processes_until_released(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    ready, go = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(str(tmp_path), KEY, ready, go))
    holder.start()
    try:
        assert ready.wait(30)
        with Claims(tmp_path) as claims:
            assert not claims.claim(KEY)  # another process holds it
            assert claims.claim(OTHER)  # another key is free
            go.set()
            started = time.monotonic()
            claims.wait(KEY)  # returns when the holder has released it (here: by exiting)
            assert time.monotonic() - started >= 0.2
            assert claims.claim(KEY)
    finally:
        holder.join(30)
    assert holder.exitcode == 0
    assert [p.name for p in tmp_path.iterdir()] == ["claims.lock"]  # one file, whatever the number of keys


def test_a_killed_claimers_claim_goes_with_it(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\nfrom study_runner.batch.claims import "
         "Claims\nc = Claims(Path(sys.argv[1]))\nassert c.claim(sys.argv[2])\nprint('held', flush=True)\n"
         "time.sleep(60)\n", str(tmp_path), KEY],
        cwd=REPO / "scripts", stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    with holder:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with Claims(tmp_path) as claims:
            assert not claims.claim(KEY)
            holder.kill()
            holder.wait()
            claims.wait(KEY)
            assert claims.claim(KEY)


@pytest.mark.simgrid
def test_two_sweeps_on_one_cache_simulate_each_point_once(tmp_path: Path, bin_dir: Path) -> None:
    (tmp_path / "sweep.toml").write_text(pingpong_sweep([1000, 2000, 3000, 4000, 5000, 6000], 20000))
    command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(tmp_path / "sweep.toml"), "--workers", "1",
               "--cache", str(tmp_path / "cache"), "--results"]  # fmt: skip
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    started = [subprocess.Popen([*command, str(tmp_path / f"results-{n}")], cwd=REPO, **pipes) for n in range(2)]
    for process in started:
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr
    summaries = [json.loads((tmp_path / f"results-{n}" / "pp" / "sweep.json").read_text()) for n in range(2)]
    assert sum(summary["simulated"] for summary in summaries) == 6  # each point once, by one of the two
    assert all(summary["points"] == 6 for summary in summaries)
    import pyarrow.parquet as pq

    rows = [pq.read_table(tmp_path / f"results-{n}" / "pp" / "points.parquet").to_pylist() for n in range(2)]
    strip = ("cached",)
    assert [{k: v for k, v in r.items() if k not in strip} for r in rows[0]] == [
        {k: v for k, v in r.items() if k not in strip} for r in rows[1]
    ]
