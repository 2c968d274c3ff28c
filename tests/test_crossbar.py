"""The crossbar family: counts, routes, NBL limiter, and parameter validation."""

from __future__ import annotations

import pytest

from generators import TopologyError
from generators import build_platform
from generators import crossbar
from generators import link_loads
from generators import max_link_load


class TestCrossbar:
    @pytest.mark.parametrize("hosts", [1, 2, 7, 64])
    def test_counts_without_limiter(self, hosts: int) -> None:
        p = crossbar(hosts)
        assert len(p.hosts) == hosts
        assert len(p.links) == 2 * hosts
        assert p.routers == ["xbar"]
        assert sum(1 for _ in p.routes()) == hosts * (hosts - 1)

    @pytest.mark.parametrize("hosts", [2, 5])
    def test_counts_with_limiter(self, hosts: int) -> None:
        p = crossbar(hosts, nbl=1.0)
        assert len(p.links) == 3 * hosts
        assert {p.links[f"host-{i}_nbl"].bandwidth for i in range(hosts)} == {1e9}

    def test_route_is_one_switch_hop(self) -> None:
        p = crossbar(4)
        assert p.route("host-3", "host-1") == ["host-3_to_xbar", "xbar_to_host-1"]
        assert p.route_latency("host-3", "host-1") == pytest.approx(2e-6)
        assert p.route_bandwidth("host-3", "host-1") == 1e9

    def test_limiter_caps_route_bandwidth(self) -> None:
        p = crossbar(3, link_bw=1e9, nbl=0.5)
        assert p.route("host-0", "host-1")[0] == "host-0_nbl"
        assert p.route("host-0", "host-1")[-1] == "host-1_nbl"
        assert p.route_bandwidth("host-0", "host-1") == 0.5e9

    def test_no_self_route(self) -> None:
        with pytest.raises(TopologyError, match="no route from a host to itself"):
            crossbar(2).route("host-0", "host-0")

    def test_unknown_host(self) -> None:
        with pytest.raises(TopologyError, match="has no host 'host-9'"):
            crossbar(2).route("host-0", "host-9")


class TestLinkLoads:
    def test_permutation_is_congestion_free_without_limiter(self) -> None:
        p = crossbar(4)
        shift = [(f"host-{i}", f"host-{(i + 1) % 4}") for i in range(4)]
        assert max_link_load(p, shift) == 1

    def test_incast_loads_the_receiver_cable(self) -> None:
        p = crossbar(4)
        loads = link_loads(p, [(f"host-{i}", "host-0") for i in (1, 2, 3)])
        assert loads["xbar_to_host-0"] == 3
        assert loads["host-1_to_xbar"] == 1

    def test_limiter_counts_both_directions(self) -> None:
        p = crossbar(3, nbl=1.0)
        loads = link_loads(p, [("host-0", "host-1"), ("host-1", "host-0"), ("host-0", "host-2"), ("host-2", "host-0")])
        assert loads["host-0_nbl"] == 4
        assert loads["host-1_nbl"] == 2


class TestParameters:
    @pytest.mark.parametrize(
        ("params", "message"),
        [
            ({"hosts": 0}, r"hosts must be an integer >= 1, got 0"),
            ({"hosts": -3}, r"hosts must be an integer >= 1, got -3"),
            ({"hosts": "2.5"}, r"hosts must be an integer >= 1, got '2.5'"),
            ({"hosts": 2.0}, r"hosts must be an integer >= 1, got 2.0"),
            ({"hosts": True}, r"hosts must be an integer >= 1, got True"),
            ({}, r"crossbar: parameter hosts is required"),
            ({"hosts": 2, "link_bw": "0GBps"}, r"link_bw must be finite and > 0"),
            ({"hosts": 2, "link_bw": "fast"}, r"link_bw must be a number with a unit"),
            ({"hosts": 2, "link_lat": "-1us"}, r"link_lat must be a number with a unit"),
            ({"hosts": 2, "nbl": "0"}, r"nbl must be 'none', 'nominal' or a number of link bandwidths > 0"),
            ({"hosts": 2, "wings": 3}, r"crossbar: unknown parameter 'wings'"),
        ],
    )
    def test_bad_values_are_named(self, params: dict[str, object], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            build_platform("crossbar", params)

    def test_unknown_family(self) -> None:
        with pytest.raises(TopologyError, match=r"unknown topology family 'hypercube'; known families: crossbar"):
            build_platform("hypercube", {"hosts": 2})

    @pytest.mark.parametrize(
        ("text", "value"), [("1GBps", 1e9), ("10Gbps", 1.25e9), ("125MiBps", 125 * 2**20), (5e8, 5e8)]
    )
    def test_bandwidth_units(self, text: object, value: float) -> None:
        assert build_platform("crossbar", {"hosts": 2, "link_bw": text}).links["host-0_to_xbar"].bandwidth == value

    @pytest.mark.parametrize(("text", "value"), [("nominal", 1.0), ("none", None), ("2", 2.0), (4, 4.0)])
    def test_nbl_spellings(self, text: object, value: float | None) -> None:
        assert build_platform("crossbar", {"hosts": 2, "nbl": text}).params["nbl"] == value
