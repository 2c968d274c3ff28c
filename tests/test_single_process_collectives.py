"""Collectives on a communicator of one process are right under every algorithm: SimGrid patch 0005's tests.

Open MPI answers them in coll/self before any algorithm runs; SimGrid's ports of coll/tuned (and others) sent to rank
-1, deadlocked or returned garbage on one process. apps/bench/one_process calls 15 collectives on MPI_COMM_SELF and
checks every element.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study_runner.tools import conformance

pytestmark = pytest.mark.simgrid

FAILED_ON_ONE_PROCESS = [
    "reduce:ompi", "reduce:ompi_chain", "reduce:ompi_pipeline", "reduce:ompi_binary", "reduce:ompi_in_order_binary",
    "reduce:ompi_binomial", "reduce:NTSL", "reduce:rab", "allreduce:mpich", "allreduce:mvapich2", "allreduce:rab",
    "allreduce:redbcast", "reduce_scatter:ompi_butterfly", "allgather:2dmesh", "allgather:GB", "allgather:impi",
    "allgatherv:GB", "alltoall:2dmesh", "alltoall:3dmesh",
]  # fmt: skip
"""Algorithms that unpatched SimGrid 4.1 ran wrong on a single-process communicator (measured, 1 to 1e6 doubles)."""


def one_process(bin_dir: Path, ranks: int, cfg: tuple[str, ...] = ()) -> list[dict]:
    program = [str(bin_dir / "one_process"), "-n", "1,1000,1000000"]
    done = conformance.run_on("crossbar", ["--hosts", "2"], ranks, program, cfg, 120)
    assert done.returncode == 0, done.stderr[-500:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("ranks", [1, 2])
def test_every_collective_on_comm_self_is_a_local_copy(bin_dir: Path, ranks: int) -> None:
    records = one_process(bin_dir, ranks)
    assert len(records) == 15 * 3 and {r["ranks"] for r in records} == {ranks}
    assert [r for r in records if r["errors"]] == []


@pytest.mark.parametrize("algorithm", FAILED_ON_ONE_PROCESS)
def test_no_algorithm_meets_a_single_process(bin_dir: Path, algorithm: str) -> None:
    collective, name = algorithm.split(":")
    records = one_process(bin_dir, 1, (f"smpi/{collective}:{name}",))
    assert len(records) == 15 * 3 and [r for r in records if r["errors"]] == []
