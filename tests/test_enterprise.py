"""The modular enterprise chassis: module membership, intra- and cross-module routes, loader check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators import enterprise
from generators import write_platform
from generators.topologies.enterprise import module_of


class TestEnterprise:
    def test_counts_and_membership(self) -> None:
        p = enterprise(4, 16)
        assert len(p.hosts) == 64
        assert p.routers == ["module-0", "module-1", "module-2", "module-3", "backplane"]
        assert [module_of(h, 16) for h in p.host_names] == [k // 16 for k in range(64)]
        assert len(p.links) == 2 * 64 + 2 * 4

    def test_intra_module_route(self) -> None:
        assert enterprise(4, 16).route("host-17", "host-30") == ["host-17_to_module-1", "module-1_to_host-30"]

    def test_cross_module_route_through_backplane(self) -> None:
        p = enterprise(4, 16, module_uplink=2e9, backplane=3e9)
        assert p.route("host-63", "host-0") == [
            "host-63_to_module-3", "module-3_to_backplane", "backplane_fabric", "backplane_to_module-0",
            "module-0_to_host-0",
        ]  # fmt: skip
        assert p.links["module-3_to_backplane"].bandwidth == 2e9
        assert p.links["backplane_fabric"].bandwidth == 3e9
        assert p.route_bandwidth("host-63", "host-0") == 125e6

    def test_module_fabric_on_both_modules(self) -> None:
        p = enterprise(2, 3, module_fabric=1e9)
        assert p.route("host-0", "host-1") == ["host-0_to_module-0", "module-0_fabric", "module-0_to_host-1"]
        assert p.route("host-0", "host-4") == [
            "host-0_to_module-0", "module-0_fabric", "module-0_to_backplane", "backplane_to_module-1",
            "module-1_fabric", "module-1_to_host-4",
        ]  # fmt: skip

    @pytest.mark.parametrize(
        ("params", "message"),
        [
            ({"modules": 0, "ports": 16}, r"modules must be an integer >= 1, got 0"),
            ({"modules": 4}, r"enterprise: parameter ports is required"),
            ({"modules": 4, "ports": 16, "module_uplink": "none"}, r"module_uplink must be a number with a unit"),
        ],
    )
    def test_bad_parameters(self, params: dict[str, object], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            build_platform("enterprise", params)


@pytest.mark.parametrize(("modules", "ports", "backplane"), [(4, 16, None), (3, 5, 4e9), (1, 6, None)])
def test_loader_routes_equal_model(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], modules: int, ports: int, backplane: float | None
) -> None:
    model = enterprise(modules, ports, backplane=backplane, module_fabric=backplane)
    write_platform(model, tmp_path / "es.xml")
    loaded = load_platform(tmp_path / "es.xml", "--all-routes")
    assert loaded["hosts"] == modules * ports
    assert loaded["links"] == len(model.links) + 1  # SimGrid's own __loopback__
    for route in loaded["routes"]:
        assert route["links"] == model.route(route["src"], route["dst"])
