"""Routing modes of the families that offer a choice (docs/adaptive-routing.md): messages spread over several paths
(SimGrid patch 0008's shares), and adaptive routes chosen from the network's state when a message starts.

Spread routes are the model's to the last bit (links, order, shares, latency), through SimGrid's loader; an adaptive
zone's route on an idle network is the model's. What an adaptive run does depends on the other messages: its
simulated times are checked for determinism and against the static rules on patterns with a known answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import write_platform
from generators.analysis import link_loads
from generators.errors import TopologyError
from generators.families import build_platform
from generators.schedules import shift_steps
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from tests.conftest import assert_loader_routes_equal_model

BALANCED = {"groups": 9, "routers": 4, "hosts": 2, "global_ports": 2}  # Kim et al.'s balanced a = 2p = 2h, g = ah + 1
KIM = {**BALANCED, "port_order": "consecutive"}

# fmt: off
SPREAD = [
    ("dragonfly", {"groups": 5, "routers": 4, "hosts": 2, "global_ports": 2, "links_per_pair": 2, "spread": "packet"}),
    ("dragonfly", {**BALANCED, "routing": "valiant", "spread": "packet", "nbl": 1, "global_lat": "1us"}),
    ("dragonfly", {"groups": 6, "routers": 4, "hosts": 1, "global_ports": 3, "links_per_pair": 2, "routing": "valiant",
                   "spread": "packet", "arrangement": "relative"}),
    ("dragonfly", {**KIM, "routing": "valiant", "spread": "packet"}),
    ("fattree", {"radix": 4, "levels": 3, "spread": "packet"}),
    ("fattree", {"radix": 6, "spread": "packet", "nbl": 1, "servers_per_leaf": 4}),
    ("hyperx", {"dims": "3x2", "hosts": 2, "links": 2, "spread": "packet", "shm_bw": "10GBps"}),
    ("hyperx", {"dims": "3x3", "hosts": 2, "links": 2, "routing": "valiant", "spread": "packet"}),
    ("slimfly", {"q": 3, "spread": "packet"}),
    ("slimfly", {"q": 3, "routing": "valiant", "spread": "packet"}),
    ("mlfm", {"d": 3, "spread": "packet", "spine_choice": "destination"}),
]
# fmt: on

ADAPTIVE = [  # every adaptive rule of every family, per message and per packet
    ("dragonfly", {**BALANCED, "routing": "ugal-l"}),
    ("dragonfly", {**BALANCED, "routing": "ugal-l", "spread": "packet"}),
    ("dragonfly", {**BALANCED, "routing": "ugal-g"}),
    ("dragonfly", {**BALANCED, "routing": "ugal-g", "spread": "packet", "links_per_pair": 2, "global_ports": 4}),
    ("fattree", {"radix": 4, "routing": "adaptive"}),
    ("fattree", {"radix": 4, "levels": 3, "routing": "adaptive", "spread": "packet"}),
    ("hyperx", {"dims": "3x3", "hosts": 2, "links": 2, "routing": "dal"}),
    ("hyperx", {"dims": "3x3", "hosts": 2, "routing": "dal", "spread": "packet"}),
    ("slimfly", {"q": 3, "routing": "ugal-l"}),
    ("slimfly", {"q": 3, "routing": "ugal-g", "spread": "packet"}),
    ("mlfm", {"d": 3, "routing": "adaptive"}),
    ("mlfm", {"d": 3, "routing": "adaptive", "spread": "packet"}),
]

REVISITED = [  # every family's adaptive rule with its decisions revisited while the messages flow (1 MiB: 42 us), and
    # UGAL-L seeing the cables after its own port (backpressure)
    ("dragonfly", {**BALANCED, "routing": "ugal-g", "revisit": "5us"}),
    ("dragonfly", {**BALANCED, "routing": "ugal-l", "spread": "packet", "revisit": "5us"}),
    ("fattree", {"radix": 4, "levels": 3, "routing": "adaptive", "revisit": "5us"}),
    ("hyperx", {"dims": "3x3", "hosts": 2, "routing": "dal", "spread": "packet", "revisit": "5us"}),
    ("slimfly", {"q": 3, "routing": "ugal-g", "revisit": "5us"}),
    ("mlfm", {"d": 3, "routing": "adaptive", "revisit": "5us"}),
    ("dragonfly", {**BALANCED, "routing": "ugal-l", "backpressure": 1}),
    ("slimfly", {"q": 3, "routing": "ugal-l", "spread": "packet", "backpressure": 2, "revisit": "5us"}),
]


def _id(case: tuple[str, dict[str, Any]]) -> str:
    family, params = case
    return family + "-" + "-".join(str(value) for value in params.values())


@pytest.mark.parametrize("case", SPREAD, ids=map(_id, SPREAD))
def test_spread_routes_are_the_models(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], case: tuple[str, dict[str, Any]]
) -> None:
    """Every pair's links, in order, with the model's shares to the last bit and its latency (the longest path's)."""
    model = build_platform(*case)
    assert model.spread_rule is not None
    loaded = assert_loader_routes_equal_model(load_platform, model, tmp_path / "p.so")
    assert any("shares" in route for route in loaded["routes"])  # some message is spread


@pytest.mark.parametrize("case", [c for c in ADAPTIVE if c[1].get("spread") != "packet"], ids=_id)
def test_an_idle_network_routes_adaptive_messages_as_the_model(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], case: tuple[str, dict[str, Any]]
) -> None:
    """On an idle network every candidate is equally loaded, so the tie rule (minimal, the static rule's path first)
    gives the model's route, whole."""
    model = build_platform(*case)
    assert model.adaptive
    loaded = assert_loader_routes_equal_model(load_platform, model, tmp_path / "p.so")
    assert not any("shares" in route for route in loaded["routes"])


@pytest.mark.parametrize("case", [c for c in ADAPTIVE if c[1].get("spread") == "packet"], ids=_id)
def test_an_idle_network_spreads_adaptive_packets_over_minimal_paths(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], case: tuple[str, dict[str, Any]]
) -> None:
    """By packet, the parts of a message spread over equally idle paths that are not detours (as packets over empty
    queues): each link carries a whole number of the 64 parts, the host's own links all of them, and no part's path
    is a detour (the shares add up to at most the static route's length plus two local hops: the copies of a
    dragonfly's global cable sit on other routers)."""
    model = build_platform(*case)
    write_platform(model, tmp_path / "p.so")
    loaded = load_platform(tmp_path / "p.so", "--all-routes")
    for route in loaded["routes"]:
        static = model.route(route["src"], route["dst"])
        shares = route.get("shares", [1.0] * len(route["links"]))
        assert all(share * 64 == round(share * 64) for share in shares)
        assert len(static) - 2 <= sum(shares) <= len(static) + 2
        ends = [share for link, share in zip(route["links"], shares, strict=True) if link in (static[0], static[-1])]
        assert (route["links"][0], route["links"][-1], ends) == (static[0], static[-1], [1.0, 1.0])


def test_spread_shares_sum_to_one_message_per_cut() -> None:
    """Per-packet Valiant on a dragonfly: every message leaves its group over the group's global cables, so the
    shares of its route on the global cables out of its group sum to 1, and so do those into the destination's."""
    model = build_platform("dragonfly", {**BALANCED, "routing": "valiant", "spread": "packet"})
    for src, dst in [("host-0-0-0", "host-4-2-1"), ("host-3-1-1", "host-8-0-0")]:
        shares = dict(model.route_shares(src, dst))
        g, k = src.split("-")[1], dst.split("-")[1]
        out = sum(s for name, s in shares.items() if _groups(name)[0] == g and _groups(name)[1] != g)
        into = sum(s for name, s in shares.items() if _groups(name)[1] == k and _groups(name)[0] != k)
        assert out == pytest.approx(1, rel=1e-12) and into == pytest.approx(1, rel=1e-12)


def _groups(link: str) -> tuple[str, str]:
    """The groups of a dragonfly cable's two routers ("" for a host's own link)."""
    a, b = link.split("_to_")
    return (a.split("-")[1] if a.startswith("router") else "", b.split("-")[1] if b.startswith("router") else "")


def _shift(tmp_path: Path, bin_dir: Path, family: str, params: dict[str, Any], shift: int, relabel: int = 0):
    """One shift of 1 MiB on the platform, rank i on host i: the app's record."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    model = build_platform(family, params)
    write_platform(model, tmp_path / "p.so")
    records = shift_times_of(tmp_path, bin_dir, tmp_path / "p.so", model.host_names, shift, relabel)
    return model, records[0]


def shift_times_of(
    tmp_path: Path, bin_dir: Path, platform: Path, hosts: list[str], shift: int, relabel: int
) -> list[dict[str, Any]]:
    from study_runner.batch.execute import parse_records
    from study_runner.simulation.smpi import run_smpirun
    from study_runner.simulation.smpi import smpirun_command

    (tmp_path / "hosts").write_text("".join(f"{host}\n" for host in hosts))
    args = ["-S", str(shift), "-R", str(relabel), "-s", "1M", "-i", "1", "-w", "0"]
    command = smpirun_command(bin_dir / "shift", args, platform, tmp_path / "hosts", len(hosts))
    return parse_records(run_smpirun(command, tmp_path, timeout=300, label="shift"), "shift")


def _fluid_time(model: Any, shift: int, relabel: int, size: int = 1 << 20) -> float:
    """The fluid bound of the static (or spread) routes: the busiest link's load in messages times a message's time."""
    hosts = model.host_names
    (step,) = shift_steps(len(hosts), [shift], relabel or None)
    loads = link_loads(model, [(hosts[a], hosts[b]) for a, b in step])
    return max(loads.values()) * (size + SMPI_ENVELOPE_BYTES) / float(model.params["link_bw"])


def test_spread_valiant_runs_at_the_fluid_bound_of_its_routes(tmp_path: Path, bin_dir: Path) -> None:
    """The adversarial pattern (every host of group i to group i + 1) with per-packet Valiant takes the busiest
    link's load (the sum of the shares of the messages crossing it, from the model) of message times: exactly with
    0 ns cables, where SimGrid's CM02 shares a link equally; with 100 ns cables a little longer, CM02 weighing the
    messages sharing a link by their routes' latencies (docs/simgrid.md), within 3% on Kim et al.'s balanced
    machine as they draw it (consecutive ports) and 1% with round-robin ports."""
    cases = [("consecutive", "0ns", 1e-5), ("round-robin", "0ns", 1e-5), ("consecutive", "100ns", 0.03),
             ("round-robin", "100ns", 0.01)]  # fmt: skip
    for ports, lat, within in cases:
        params = {**BALANCED, "port_order": ports, "routing": "valiant", "spread": "packet", "link_bw": "4GBps",
                  "link_lat": lat, "global_lat": lat}  # fmt: skip
        model, record = _shift(tmp_path / ports / lat, bin_dir, "dragonfly", params, shift=8)
        ratio = float(record["time_s_max"]) / _fluid_time(model, 8, 0)
        assert 1 - 1e-9 <= ratio <= 1 + within, (ports, lat, ratio)


def test_simulated_times_of_adaptive_runs_are_deterministic(tmp_path: Path, bin_dir: Path) -> None:
    """The same command twice: the same simulated times, bit for bit (the candidates a decision draws are a function
    of the pair and of the decision's rank, and SimGrid routes messages in a deterministic order)."""
    for family, params in ADAPTIVE + REVISITED:
        runs = [_shift(tmp_path / f"{family}{i}", bin_dir, family, params, shift=3, relabel=1)[1] for i in (0, 1)]
        assert runs[0]["time_s_max"] == runs[1]["time_s_max"] and runs[0]["time_s_avg"] == runs[1]["time_s_avg"]


def test_revisited_decisions_balance_the_adversarial_pattern(tmp_path: Path, bin_dir: Path) -> None:
    """Kim et al.'s machine as they draw it (9 groups), every host of group i to group i + 1, 1 MiB (42 us at 25 GB/s):
    revisiting UGAL-G's decisions every 5 us shortens the phase both per packet (80.0 us against 87.1 decided once,
    per-packet Valiant 98.5) and per message (108.5 us against 138.8): the routes a revisit gives are taken, not
    only computed, and the remaining bytes move with them."""
    shift = BALANCED["routers"] * BALANCED["hosts"]

    def phase(**params: Any) -> float:
        name = "-".join(str(value) for value in params.values())
        return float(_shift(tmp_path / name, bin_dir, "dragonfly", {**KIM, **params}, shift=shift)[1]["time_s_max"])

    valiant = phase(routing="valiant", spread="packet")
    once, revisited = (phase(routing="ugal-g", spread="packet", **extra) for extra in ({}, {"revisit": "5us"}))
    assert revisited < 0.95 * once and revisited < valiant, (once, revisited, valiant)
    once, revisited = (phase(routing="ugal-g", **extra) for extra in ({}, {"revisit": "5us"}))
    assert revisited < 0.9 * once, (once, revisited)


def test_a_revisit_moves_a_message_only_to_a_cheaper_route(tmp_path: Path, bin_dir: Path) -> None:
    """Kim et al.'s machine, every host of group i to group i + 1, UGAL-G per message revisited every 5 us (the zone
    logs each revisit: --log=topolab_revisit.thres:verbose). The first revisit moves the most (the messages that the
    decisions taken one after the other at the start left on a costlier route), a few more follow, and then, while all
    72 messages flow and nothing changes, none: a message stays on its route unless another is strictly cheaper
    (SimGrid patch 0033 shows the zone the route a message has; decided afresh, with new Valiant candidates, 40 to 56
    of the 72 moved at every revisit; here 21 moves in all, 14 at the first revisit)."""
    import subprocess

    from study_runner.simulation.smpi import smpirun_command

    model = build_platform("dragonfly", {**KIM, "routing": "ugal-g", "revisit": "5us"})
    write_platform(model, tmp_path / "p.so")
    (tmp_path / "hosts").write_text("".join(f"{host}\n" for host in model.host_names))
    args = ["-S", str(BALANCED["routers"] * BALANCED["hosts"]), "-s", "1M", "-i", "1", "-w", "0"]
    command = smpirun_command(
        bin_dir / "shift", args, tmp_path / "p.so", tmp_path / "hosts", 72, ["--log=topolab_revisit.thres:verbose"]
    )
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    revisits = [tuple(map(int, m)) for m in re.findall(r"revisit at \S+ s: (\d+) of (\d+) messages moved", done.stderr)]
    while_all_flow = [moved for moved, flowing in revisits if flowing == 72]
    assert len(while_all_flow) >= 10 and while_all_flow[0] > max(while_all_flow[1:]), revisits
    assert while_all_flow[-5:] == [0] * 5 and sum(while_all_flow) < 72, revisits


@pytest.mark.parametrize(
    ("family", "params"),
    [("dragonfly", BALANCED), ("fattree", {"radix": 4}), ("hyperx", {"dims": "3x3", "hosts": 2}),
     ("slimfly", {"q": 3, "routing": "valiant"}), ("mlfm", {"d": 3})],
)  # fmt: skip
def test_revisiting_needs_an_adaptive_rule(family: str, params: dict[str, Any]) -> None:
    """A static rule has no decision to revisit: refused with one line that names the parameter."""
    with pytest.raises(TopologyError, match="revisit needs an adaptive routing"):
        build_platform(family, {**params, "revisit": "10us"})


def test_backpressure_lets_ugal_l_see_the_congested_global_cable(tmp_path: Path, bin_dir: Path) -> None:
    """Kim et al.'s machine as they draw it, every host of group i to group i + 1: the congested cable is the global one
    on the gateway router, which UGAL-L on the other routers does not see from their own ports (210.7 us per message).
    With one cable of backpressure their port to the gateway reflects it and they deroute: 130.5 us, UGAL-G's 138.8;
    per packet 106.0 us against 126.9."""
    shift = BALANCED["routers"] * BALANCED["hosts"]

    def phase(**params: Any) -> float:
        name = "-".join(str(value) for value in params.values())
        return float(_shift(tmp_path / name, bin_dir, "dragonfly", {**KIM, **params}, shift=shift)[1]["time_s_max"])

    for spread in ("message", "packet"):
        alone, backed = (phase(routing="ugal-l", spread=spread, backpressure=b) for b in (0, 1))
        assert backed < 0.9 * alone, (spread, alone, backed)


@pytest.mark.parametrize("routing", ["ugal-g", "valiant"])
def test_backpressure_needs_ugal_l(routing: str) -> None:
    """Only a local view has a port whose queue backpressure can fill: refused with one line elsewhere."""
    with pytest.raises(TopologyError, match="backpressure needs routing ugal-l"):
        build_platform("dragonfly", {**BALANCED, "routing": routing, "backpressure": "1"})
