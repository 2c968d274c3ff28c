"""SimGrid patch 0008: a route may give each link the share of a message that crosses it, and a link tells how many
messages cross it now (``simgrid_cpp/route_shares_check.cpp`` builds the platform and the scenes; its comment derives
the closed forms checked here)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

# CM02 without a rate cap from the latency (TCP-gamma 0 disables it) nor acknowledgements on the way back
# (crosstraffic): times are latency + bytes / rate.
CLEAN_NETWORK = [
    "--cfg=network/model:CM02",
    "--cfg=network/TCP-gamma:0",
    "--cfg=network/crosstraffic:0",
    "--log=root.thres:critical",
]


@pytest.fixture(scope="module")
def scenes(bin_dir: Path) -> dict[str, list[dict[str, Any]]]:
    done = subprocess.run(
        [str(bin_dir / "route_shares_check"), *CLEAN_NETWORK], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, list[dict[str, Any]]] = {}
    for line in done.stdout.splitlines():
        record = json.loads(line)
        out.setdefault(record["scene"], []).append(record)
    return out


def test_a_link_carrying_half_a_message_does_not_bound_it(scenes: dict[str, list[dict[str, Any]]]) -> None:
    """a -> b crosses p1 and p2 with half of its bytes each: its host links (1e9 B/s) bound it, not p1 or p2."""
    (alone,) = scenes["alone"]
    assert alone["time"] == pytest.approx(1e-3 + 1.0, rel=1e-9)


def test_max_min_charges_each_link_its_share(scenes: dict[str, list[dict[str, Any]]]) -> None:
    """With c -> d whole on p1: 0.5 x + y <= 1e9 gives both 1e9 / 1.5 until c's 5e8 bytes are through (0.75 s), then
    a's remaining 5e8 go at 1e9 (0.5 s more). Without the shares p1 would give each 5e8 and a's would take 2 s."""
    (together,) = scenes["together"]
    assert together["cd_time"] == pytest.approx(1e-3 + 0.75, rel=1e-9)
    assert together["ab_time"] == pytest.approx(1e-3 + 1.25, rel=1e-9)


def test_flow_count_sees_messages_in_their_latency(scenes: dict[str, list[dict[str, Any]]]) -> None:
    """Right after both messages start (both still in their 1 ms latency, which a rate-based load does not see) p1
    carries 1/2 + 1 of them, p2 1/2, a_out 1; once both ended, none."""
    started, ended = scenes["counts"]
    assert (started["when"], started["p1"], started["p2"], started["a_out"]) == ("started", 1.5, 0.5, 1.0)
    assert (ended["when"], ended["p1"], ended["p2"], ended["a_out"]) == ("ended", 0.0, 0.0, 0.0)
