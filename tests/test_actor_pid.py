"""SimGrid patch 0031: the engine finds an actor by its pid in an array indexed by pid (SMPI does it several times per
message), and answers as the search tree it replaces did: ``simgrid_cpp/actor_pid_check.cpp`` starts 200 actors
that end in an order unlike their pids' and looks every pid up at each end (its comment says what it checks)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def test_living_actors_are_found_by_pid_and_ended_or_unknown_ones_are_not(bin_dir: Path) -> None:
    done = subprocess.run(
        [str(bin_dir / "actor_pid_check"), "--log=root.thres:critical"], capture_output=True, text=True, timeout=60
    )
    *failed, summary = [json.loads(line) for line in done.stdout.splitlines()]
    assert not failed and done.returncode == 0, (failed[:5], done.stderr[-500:])
    # 202 rounds of 200 children and 4 pids no actor has, and the running actor finding itself
    assert summary == {"lookups": 202 * 204 + 1, "failures": 0}
