"""SimGrid patch 0023: SMPI counts the messages of each (tag, source, destination) of a communicator, so that messages
with the same envelope never overtake each other, in maps it keyed by a string built at every send and every match;
the patch keys them by the three integers. What is counted, and so every match, must stay the same: messages of each
(source, tag) arrive in the order they were sent, eager and rendezvous, whether received by source and tag or with
MPI_ANY_SOURCE and MPI_ANY_TAG, on MPI_COMM_WORLD and beside a collective's own tags."""

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

RANKS = 6
ROUNDS, TAGS = 40, 4  # as in tests/data/c/message_order.c


@pytest.mark.simgrid
def test_messages_of_one_envelope_arrive_in_order(tmp_path: Path) -> None:
    binary = smpicc_test_program("message_order", tmp_path)
    platform = build_platform("crossbar", {"hosts": RANKS})
    write_platform(platform, tmp_path / "crossbar.xml")
    write_hostfile(platform.host_names, tmp_path / "hosts")
    command = smpirun_command(binary, [], tmp_path / "crossbar.xml", tmp_path / "hosts", RANKS, ())
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    records = {record["rank"]: record for record in map(json.loads, done.stdout.splitlines())}
    assert sorted(records) == list(range(RANKS))
    assert all(record["out_of_order"] == 0 for record in records.values()), records
    per_sender = ROUNDS * TAGS
    expected = {0: 0, RANKS - 1: (RANKS - 1) * per_sender} | {rank: per_sender for rank in range(1, RANKS - 1)}
    assert {rank: record["received"] for rank, record in records.items()} == expected
