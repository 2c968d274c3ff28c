"""SimGrid patch 0032: a communication in flight can be routed again, its remaining bytes moved onto the route the
platform gives now; patch 0033: the platform sees the route the communication has while it is asked again, and a
communication given that route stays as it is (``simgrid_cpp/reroute_check.cpp`` builds the platform and the scenes;
its comment derives the closed forms checked here), with both of SimGrid's update algorithms."""

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


@pytest.fixture(scope="module", params=["Lazy", "Full"])
def scenes(request: pytest.FixtureRequest, bin_dir: Path) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [str(bin_dir / "reroute_check"), *CLEAN_NETWORK, f"--cfg=network/optim:{request.param}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    return {record["scene"]: record for record in records}


def test_a_flow_in_its_latency_keeps_its_route(scenes: dict[str, dict[str, Any]]) -> None:
    """At 0.5 ms a -> b is still paying its 1 ms latency: nothing is rerouted."""
    assert scenes["in_latency"]["moved"] == 0


def test_a_rerouted_flow_takes_the_route_of_the_network_without_it(scenes: dict[str, dict[str, Any]]) -> None:
    """a -> b chose p1 when both links were idle; taken off p1 at 0.2 s, it sees p1 carry c -> d and p2 nothing, and
    moves to p2: one flow on each link right after."""
    moved = scenes["moved"]
    assert (moved["moved"], moved["p1"], moved["p2"]) == (1, 1.0, 1.0)


def test_a_rerouted_flow_keeps_its_progress_and_not_its_latency(scenes: dict[str, dict[str, Any]]) -> None:
    """From 1 ms to 0.2 s both share p1 at 5e8 B/s (9.95e7 bytes each); then a -> b has 9.005e8 bytes left at 1e9 B/s
    (ends at 1.1005 s: its latency not paid again) and c -> d 1.9005e9 (2.1005 s). Unmoved: 2.001 s and 3.001 s."""
    times = scenes["moved_times"]
    assert times["ab_time"] == pytest.approx(0.2 + 0.9005, rel=1e-9)
    assert times["cd_time"] == pytest.approx(0.2 + 1.9005, rel=1e-9)


def test_the_platform_sees_the_route_a_rerouted_flow_has(scenes: dict[str, dict[str, Any]]) -> None:
    """Asked again, the zone reads a -> b's route (every link whole); in the second reroute the last asked is c -> d.
    Outside reroutes the route in flight is empty, and inside one never (patch 0033)."""
    assert scenes["moved"]["crossed"] == "a_out:1.000000 p1:1.000000 b_in:1.000000"
    assert scenes["every"]["crossed"] == "c_out:1.000000 p1:1.000000 d_in:1.000000"
    assert scenes["in_flight"] == {"scene": "in_flight", "asked": 3, "mismatches": 0}


def test_a_flow_rerouted_onto_its_own_route_stays_and_loses_nothing(scenes: dict[str, dict[str, Any]]) -> None:
    """Rerouting both flows: c -> d is given p1 again, the only route it has, and is not moved (patch 0033: one
    moved, a -> b); the dates are those of the reroute of a -> b alone."""
    assert scenes["every"]["moved"] == 1
    times = scenes["every_times"]
    assert times["ab_time"] == pytest.approx(0.2 + 0.9005, rel=1e-9)
    assert times["cd_time"] == pytest.approx(0.2 + 1.9005, rel=1e-9)
