"""SimGrid patch 0021: SimGrid's default (lazy) update re-solves only the constraints a change reaches, and a
variable enabled after its first constraint was reached from another one had its other constraints left out, so
flows that left their latency at the same instant could each get a whole shared cable.

Four hosts on a line, 2 GB/s and 100 ns a cable: ranks 0 and 1 send 4 KiB to ranks 2 and 3 and receive from them, all
at once; 0 -> 2 and 1 -> 3 cross the cable 1 -> 2, 2 -> 0 and 3 -> 1 the cable 2 -> 1. Measured before the patch,
lazy: ranks 0 and 1 done at 2.256 us (their incoming flows at the whole 2 GB/s each), ranks 2 and 3 at 4.312 us;
SimGrid's full update (network/optim:Full): all at 4.312 us."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from generators import build_platform
from generators import write_hostfile
from generators import write_platform
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import smpicc_test_program

UPDATES = {
    "lazy": (),
    "lazy, whole solves": ("--cfg=maxmin/incremental:no",),
    "full": ("--cfg=network/optim:Full", "--cfg=maxmin/incremental:no"),
}


def done_dates(tmp_path: Path, binary: Path, *options: str) -> list[float]:
    platform = build_platform("torus", {"dims": "4", "wrap": "no", "link_bw": "2GBps", "link_lat": "100ns"})
    write_platform(platform, tmp_path / "line.xml")
    write_hostfile(platform.host_names, tmp_path / "hosts")
    command = smpirun_command(binary, ["4096", "2"], tmp_path / "line.xml", tmp_path / "hosts", 4, options)
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    records = sorted((json.loads(line) for line in done.stdout.splitlines()), key=lambda record: record["rank"])
    assert [record["rank"] for record in records] == [0, 1, 2, 3]
    return [record["done_s"] for record in records]


@pytest.mark.simgrid
def test_flows_that_start_together_share_their_cable(tmp_path: Path) -> None:
    binary = smpicc_test_program("pair_exchange", tmp_path)
    dates = {update: done_dates(tmp_path, binary, *options) for update, options in UPDATES.items()}
    for update, ranks in dates.items():
        # Each cable carries two 4 KiB flows side by side: 4 KiB at 1 GB/s each, after two cables' latency.
        assert ranks[0] > 200e-9 + 4096 / 1e9, (update, ranks)
        assert ranks == pytest.approx([ranks[0]] * 4, rel=1e-12), (update, ranks)
        assert ranks == pytest.approx(dates["full"], rel=1e-12), (update, ranks)
