"""The two-level fat tree (the machine the MLFM paper compares with): counts, routes, the routing graph's exactness,
SimGrid's routes equal to the model's, the shift all-to-all congestion-free (the MLFM paper's Fig. 1), bad input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError, build_platform, fattree, write_platform
from generators.schedules import alltoall_steps
from tests.test_mlfm import cable_loads, kind_count, p_graph_exact


def test_36_port_switches() -> None:
    assert len(fattree(36).hosts) == 648
    assert (kind_count(fattree(36), "leaf-"), kind_count(fattree(36), "spine-")) == (36, 18)


class TestRoutes:
    def test_routes(self) -> None:
        p = fattree(4)
        assert p.route("server-0-0", "server-0-1") == ["server-0-0_to_leaf-0", "leaf-0_to_server-0-1"]
        assert p.route("server-0-0", "server-3-1")[1:3] == ["leaf-0_to_spine-1", "spine-1_to_leaf-3"]

    def test_shift_pattern_is_congestion_free(self) -> None:
        """The paper's Fig. 1: on a full fat tree every phase of the shift all-to-all is congestion-free."""
        p = fattree(8)
        hosts = p.host_names
        for step in alltoall_steps("pairwise", len(hosts)):
            assert max(cable_loads(p, [(hosts[a], hosts[b]) for a, b in step]).values()) == 1

    @pytest.mark.parametrize("params", [{"radix": 4}, {"radix": 6, "nbl": 1.0}, {"radix": 8, "leaves": 5}])
    def test_loader_routes_equal_model(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]], params: dict[str, Any]
    ) -> None:
        model = build_platform("fattree", params)
        write_platform(model, tmp_path / "ft.xml")
        loaded = load_platform(tmp_path / "ft.xml", "--all-routes")
        assert loaded["hosts"] == len(model.hosts) and loaded["links"] == len(model.links) + 1
        for route in loaded["routes"]:
            assert route["links"] == model.route(route["src"], route["dst"])
        assert p_graph_exact(model)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"radix": 7}, r"radix must be an even integer >= 2, got 7"),
        ({"radix": 4, "leaves": 5}, r"leaves must be between 1 and radix=4, got 5"),
    ],
)
def test_bad_parameters(params: dict[str, Any], message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        build_platform("fattree", params)
