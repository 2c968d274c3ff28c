"""generators/topologies/hyperx.py: the closed forms of Ahn et al.'s HyperX (counts, switch degrees, hops, lanes), the
loads of static dimension-ordered routing under shifts and all-to-all. The compiled zone (simgrid_cpp/hyperx_zone.cpp)
through SimGrid's loader, up to a 6174-host machine of 36-port switches: tests/test_compiled_zones.py."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

import pytest

from generators import TopologyError
from generators.analysis import link_loads
from generators.model import Platform
from generators.params import check_params
from generators.size import Size
from generators.topologies.hyperx import HyperX
from generators.topologies.hyperx import host_coordinates
from generators.topologies.hyperx import hyperx
from generators.topologies.torus import coordinates
from tests.test_size import counted


def switch_of(node: str) -> int | None:
    """The number of a switch, None for a host."""
    return int(node.removeprefix("switch-")) if node.startswith("switch-") else None


def switch_hops(route: list[str]) -> list[tuple[int, int, str]]:
    """The switch-to-switch links of a route as (from, to, lane suffix)."""
    hops = []
    for link in route:
        if "_to_" not in link:
            continue
        a, b = link.split("_to_")
        b, _, lane = b.partition("#")
        if switch_of(a) is not None and switch_of(b) is not None:
            hops.append((switch_of(a), switch_of(b), lane))
    return hops


def shape_of(p: Platform) -> HyperX:
    return HyperX(p.params["dims"], p.params["links"], p.params["hosts"])


def switch_loads(p: Platform, flows: list[tuple[str, str]]) -> dict[str, int]:
    """The flows crossing each switch-to-switch link (links crossed by none left out)."""
    return {link: load for link, load in p.cables(link_loads(p, flows)).items() if switch_hops([link])}


@pytest.mark.parametrize(
    "params",
    [
        {"dims": "3x3", "hosts": 2},
        {"dims": "4x3x2", "hosts": 3, "links": 2, "nbl": 1},
        {"dims": "5", "hosts": 1, "links": 3},
        {"dims": "3x1x2", "hosts": 2, "shm_bw": "10GBps"},
        {"dims": "1", "hosts": 4},
        {"dims": "7x7x7", "hosts": 18},
    ],
)
def test_counts(params: dict[str, Any]) -> None:
    """T prod(S) hosts, prod(S) switches, K prod(S) sum(S_i - 1) / 2 switch-to-switch cables (two directed links
    each), every switch T + K sum(S_i - 1) ports; the estimate counts what the builder builds."""
    p = hyperx(**params)
    dims, k, t = p.params["dims"], p.params["links"], p.params["hosts"]
    switches = math.prod(dims)
    assert (len(p.hosts), len(p.routers)) == (t * switches, switches)
    between = [name for name in p.cables(p.links) if all(switch_of(end) is not None for end in p.links[name].ends)]
    assert len(between) == 2 * k * switches * sum(size - 1 for size in dims) // 2
    assert len(p.cables(p.links)) == 2 * len(p.hosts) + len(between)
    ports = Counter(p.links[name].ends[0] for name in p.cables(p.links) if switch_of(p.links[name].ends[0]) is not None)
    assert set(ports.values()) == {t + k * sum(size - 1 for size in dims)} and len(ports) == switches
    values = check_params("hyperx", hyperx.family.params, params)
    assert hyperx.estimate(values) == p.size
    assert counted(p) == Size(**{**p.size.__dict__, "hint": ""})


def test_names_and_order() -> None:
    """Hosts switch by switch, port fastest; switches in order; the name gives the shape and K > 1."""
    p = hyperx(dims=(3, 2), hosts=2, links=2)
    assert p.name == "hyperx-3x2-k2" and hyperx(dims="7x7x7", hosts=1).name == "hyperx-7x7x7"
    assert p.host_names[:5] == ["host-0-0", "host-0-1", "host-1-0", "host-1-1", "host-2-0"]
    assert [host_coordinates(h) for h in p.host_names] == [(i, k) for i in range(6) for k in range(2)]
    assert p.routers == [f"switch-{i}" for i in range(6)]
    assert {"switch-0_to_switch-3#0", "switch-3_to_switch-0#1", "host-5-1_to_switch-5"} <= p.links.keys()
    assert "switch-0_to_switch-3" not in p.links and "switch-1_to_switch-2#0" in p.links  # (1, 0) and (2, 0)
    assert "switch-1_to_switch-4#0" in p.links and "switch-1_to_switch-5#0" not in p.links  # two coordinates apart


@pytest.mark.parametrize(("dims", "diameter"), [((3, 3), 2), ((4, 3, 2), 3), ((3, 1, 2), 2), ((5,), 1), ((1,), 0)])
def test_hops_are_dimension_ordered(dims: tuple[int, ...], diameter: int) -> None:
    """A route crosses one cable per differing coordinate, dimension 0 first, each hop straight to the destination's
    coordinate; the diameter is the number of dimensions longer than 1. Hosts of one switch go up and down."""
    p = hyperx(dims=dims, hosts=2, nbl=1)
    longest = 0
    for src, dst, route in p.routes():
        (a, _), (b, _) = host_coordinates(src), host_coordinates(dst)
        ca, cb = coordinates(a, dims), coordinates(b, dims)
        hops = switch_hops(route)
        assert len(hops) == sum(x != y for x, y in zip(ca, cb, strict=True))
        assert len(route) == len(hops) + 4  # two limiters, up and down
        changed = []
        for x, y, _ in hops:
            cx, cy = coordinates(x, dims), coordinates(y, dims)
            (d,) = [d for d in range(len(dims)) if cx[d] != cy[d]]
            assert cy[d] == cb[d]
            changed.append(d)
        assert changed == sorted(changed) and (hops[-1][1] if hops else a) == b
        longest = max(longest, len(hops))
    assert longest == diameter


@pytest.mark.parametrize(("dims", "hosts", "lanes"), [((4, 3), 3, 2), ((3, 3), 3, 3), ((5,), 4, 3)])
def test_lanes_are_used_evenly(dims: tuple[int, ...], hosts: int, lanes: int) -> None:
    """Every hop of a route is on the same lane, mix(src * H + dst) mod K; over all pairs every lane is used, the
    counts within 20% of each other."""
    p = hyperx(dims=dims, hosts=hosts, links=lanes)
    shape, names = shape_of(p), p.host_names
    used = Counter()
    for src, dst, route in p.routes():
        hops = switch_hops(route)
        if not hops:
            continue
        (lane,) = {lane for _, _, lane in hops}
        assert int(lane) == shape.lane(names.index(src), names.index(dst))
        used[int(lane)] += 1
    assert set(used) == set(range(lanes))
    assert max(used.values()) <= 1.2 * min(used.values())


@pytest.mark.parametrize(("size", "hosts"), [(5, 3), (8, 2), (4, 4)])
def test_shifts_by_whole_switches_load_one_cable_per_switch_with_t_flows(size: int, hosts: int) -> None:
    """On a 1-D HyperX (a clique of switches), the shift r -> r + T s sends the T hosts of each switch to the next
    switch s along: each switch uses one cable out, which carries exactly its T flows."""
    p = hyperx(dims=(size,), hosts=hosts)
    names = p.host_names
    for s in range(1, size):
        flows = [(names[r], names[(r + hosts * s) % len(names)]) for r in range(len(names))]
        between = switch_loads(p, flows)
        assert sorted(between) == sorted(f"switch-{a}_to_switch-{(a + s) % size}" for a in range(size))
        assert set(between.values()) == {hosts}


@pytest.mark.parametrize(("size", "hosts"), [(5, 3), (4, 2)])
def test_all_to_all_loads_every_cable_with_t_squared_flows(size: int, hosts: int) -> None:
    """In an all-to-all on a 1-D HyperX, the cable from switch a to switch b carries the T x T flows between their
    hosts, and nothing else (one hop between any two switches)."""
    p = hyperx(dims=(size,), hosts=hosts)
    between = switch_loads(p, [(src, dst) for src, dst, _ in p.routes()])
    assert len(between) == size * (size - 1) and set(between.values()) == {hosts * hosts}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"dims": "3x3", "hosts": 2, "links": 0}, "links must be an integer >= 1, got 0"),
        ({"dims": "x".join(["1"] * 33), "hosts": 1}, "dims must have at most 32 dimensions, got 33"),
        ({"dims": "3x0", "hosts": 1}, "dims must be an integer >= 1, got 0"),
        ({"dims": "1x1", "hosts": 2, "links": 2}, r"links=2 parallel cables need two switches to join, but dims 1x1"),
        ({"dims": "1", "hosts": 1, "links": 10**30}, "need two switches"),  # K would count for nothing in the size
        ({"dims": "3x3", "hosts": 0}, "hosts must be an integer >= 1, got 0"),
        ({"dims": "3x3"}, "hyperx: parameter hosts is required"),
        ({"dims": "1000x1000x1000", "hosts": 1}, "hyperx: too large to build"),
    ],
)
def test_bad_shapes_are_refused(params: dict[str, Any], message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        hyperx(**params)


def test_every_pair_of_neighbours_is_one_coordinate_apart() -> None:
    """The cables join exactly the pairs of switches that differ in one coordinate, each pair once."""
    shape = HyperX((4, 3, 2), 1, 1)
    expected = {
        (a, b)
        for a, b in itertools.combinations(range(shape.switch_count), 2)
        if sum(x != y for x, y in zip(coordinates(a, shape.dims), coordinates(b, shape.dims), strict=True)) == 1
    }
    assert shape.cables() == sorted(expected)
