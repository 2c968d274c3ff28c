"""Three Quads: counts, one-switch routes, relays, policy, fabric, loader check, transpose schedule."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import product
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators import link_loads
from generators import max_link_load
from generators import place_ranks
from generators import write_platform
from generators.schedules import default_transpose_assignment
from generators.schedules import transpose_steps
from generators.topologies.enterprise import BACKPLANE
from generators.topologies.threequads import coordinates
from generators.topologies.threequads import threequads

SIMGRID_OWN_LINKS = 1


def shared(a: tuple[int, int, int], b: tuple[int, int, int]) -> list[str]:
    return [axis for axis, u, v in zip("zyx", a, b, strict=True) if u == v]


class TestThreeQuads:
    @pytest.mark.parametrize("q", [2, 3, 4])
    def test_counts(self, q: int) -> None:
        p = threequads(q)
        assert len(p.hosts) == q**3
        assert len(p.routers) == 3 * q
        assert len(p.links) == 2 * 3 * q**3  # three duplex NIC cables per node
        ports = Counter(link.ends[1] for link in p.links.values() if link.ends[0] in p.host_names)
        assert set(ports) == set(p.routers)
        assert set(ports.values()) == {q * q}  # q^2 ports per switch

    @pytest.mark.parametrize("q", [2, 3, 4])
    def test_routes_one_switch_or_relay(self, q: int) -> None:
        p = threequads(q)
        for src, dst, route in p.routes():
            s, d = coordinates(src, q), coordinates(dst, q)
            if shared(s, d):
                assert len(route) == 2
                switch = p.links[route[0]].ends[1]
                assert switch[2] in shared(s, d)
                assert route == [f"{src}_to_{switch}", f"{switch}_to_{dst}"]
            else:
                assert len(route) == 4  # two switch hops through the relay's NIC cables
                relay = p.links[route[1]].ends[1]
                assert route[2].startswith(f"{relay}_to_")
                assert shared(s, coordinates(relay, q)) and shared(coordinates(relay, q), d)

    def test_diameter_two_switch_hops(self) -> None:
        p = threequads(3)
        hops = Counter(len(route) // 2 for _, _, route in p.routes())
        assert set(hops) == {1, 2}
        # pairs sharing no coordinate: q^3 * (q-1)^3
        assert hops[2] == 27 * 8

    @pytest.mark.parametrize(("order", "switch"), [("xyz", "swx-0"), ("yxz", "swy-0"), ("zyx", "swy-0")])
    def test_policy_for_two_shared_coordinates(self, order: str, switch: str) -> None:
        # host-0 = (0,0,0) and host-16 = (1,0,0) share y and x
        p = build_platform("threequads", {"q": 4, "subnet_order": order})
        assert p.route("host-0", "host-16") == [f"host-0_to_{switch}", f"{switch}_to_host-16"]

    def test_switch_fabric_and_nbl(self) -> None:
        p = build_platform("threequads", {"q": 2, "switch_fabric": "1GBps", "nbl": "nominal"})
        # (0,0,0) and (0,0,1) share z and y; with the default order "xyz" the pair uses SW-Y
        assert p.route("host-0", "host-1") == ["host-0_nbl", "host-0_to_swy-0", "swy-0_fabric", "swy-0_to_host-1",
                                               "host-1_nbl"]  # fmt: skip
        assert p.links["swz-0_fabric"].bandwidth == 1e9

    @pytest.mark.parametrize(
        ("params", "message"),
        [
            ({"q": 1}, r"q must be an integer >= 2, got 1"),
            ({"q": 0}, r"q must be an integer >= 1, got 0"),
            ({"q": "3.5"}, r"q must be an integer >= 1, got '3.5'"),
            ({"q": 2, "subnet_order": "xxz"}, r"subnet_order must be an ordering of the letters 'xyz'"),
            ({"q": 2, "switch_fabric": "-1GBps"}, r"switch_fabric must be a number with a unit"),
        ],
    )
    def test_bad_parameters(self, params: dict[str, object], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            build_platform("threequads", params)


@pytest.mark.parametrize("q", [2, 3, 4])
def test_loader_routes_equal_model(tmp_path: Path, load_platform: Callable[..., dict[str, Any]], q: int) -> None:
    model = threequads(q, switch_fabric=2e9 if q == 3 else None)
    write_platform(model, tmp_path / "tq.xml")
    loaded = load_platform(tmp_path / "tq.xml", "--all-routes")
    assert loaded["hosts"] == q**3
    assert loaded["links"] == len(model.links) + SIMGRID_OWN_LINKS
    assert len(loaded["routes"]) == q**3 * (q**3 - 1)
    for route in loaded["routes"]:
        assert route["links"] == model.route(route["src"], route["dst"])


class TestTransposeSchedule:
    def test_default_assignment_is_the_papers(self) -> None:
        a = default_transpose_assignment(4)
        assert a == [(i // 4) * 32 + (i % 4) * 4 + (j // 4) * 16 + (j % 4) for i, j in product(range(8), range(8))]

    @pytest.mark.parametrize("algorithm", ["two-step", "direct"])
    def test_composition_is_the_transpose(self, algorithm: str) -> None:
        a = default_transpose_assignment(4)
        where = {rank: divmod(b, 8) for b, rank in enumerate(a)}  # rank -> (i, j) it holds
        holder = {v: k for k, v in where.items()}
        block_at = dict(where)  # position (rank) -> original block
        for step in transpose_steps(4, algorithm):
            sent = {dst: block_at[src] for src, dst in step}
            block_at.update(sent)
        assert all(block_at[holder[(i, j)]] == (j, i) for i, j in product(range(8), range(8)))

    def test_group_sizes_of_the_paper(self) -> None:
        step1, step2 = transpose_steps(4, "two-step")
        in1, in2 = {s for s, _ in step1}, {s for s, _ in step2}
        everyone = set(range(64))
        groups = (len(everyone - in1 - in2), len(in1 - in2), len(in2 - in1), len(in1 & in2))
        assert groups == (8, 24, 8, 24)

    def test_two_step_is_congestion_free_on_three_quads(self) -> None:
        p = threequads(4)
        hosts = place_ranks(p, 64)
        for step in transpose_steps(4, "two-step"):
            flows = [(hosts[s], hosts[d]) for s, d in step]
            assert max_link_load(p, flows) == 1
            assert all(len(p.route(*f)) == 2 for f in flows)  # one switch hop, no relay

    def test_steps_use_one_subnetwork_each(self) -> None:
        p = threequads(4)
        hosts = place_ranks(p, 64)
        used = []
        for step in transpose_steps(4, "two-step"):
            used.append({p.links[p.route(hosts[s], hosts[d])[0]].ends[1][:3] for s, d in step})
        assert used == [{"swz"}, {"swx"}]

    def test_direct_swap_loads_enterprise_uplinks(self) -> None:
        p = build_platform("enterprise", {"modules": 4, "ports": 16})
        hosts = place_ranks(p, 64)
        (step,) = transpose_steps(4, "direct")
        loads = link_loads(p, [(hosts[s], hosts[d]) for s, d in step])
        uplinks = {name: n for name, n in p.cables(loads).items() if BACKPLANE in p.links[name].ends}
        # quadrant B (module 1) swaps with quadrant C (module 2): 16 flows each way
        assert uplinks == {"module-1_to_backplane": 16, "backplane_to_module-2": 16,
                           "module-2_to_backplane": 16, "backplane_to_module-1": 16}  # fmt: skip

    def test_not_a_permutation(self) -> None:
        with pytest.raises(TopologyError, match="permutation"):
            transpose_steps(4, "direct", [0] * 64)

    def test_q_must_be_a_square(self) -> None:
        with pytest.raises(TopologyError, match="perfect square"):
            transpose_steps(2, "two-step")
