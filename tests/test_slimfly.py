"""generators/topologies/slimfly.py: the MMS router graphs of Besta and Hoefler's Slim Fly checked by their properties
(order 2q^2, degree (3q - delta)/2, diameter 2, undirected; q = 5 the Hoffman-Singleton graph), the finite fields they
are built on, the counts against the estimate, minimal routes, and the router graphs the generic compiled zone
(simgrid_cpp/router_graph_zone.cpp) refuses; its hosts, links and routes through SimGrid's loader:
tests/test_compiled_zones.py."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import write_platform
from generators.finite_field import FiniteField
from generators.finite_field import prime_power
from generators.model import CABLE
from generators.model import Platform
from generators.router_graph import RouterGraph
from generators.router_graph import host_coordinates
from generators.topologies.slimfly import mms_graph
from generators.topologies.slimfly import slimfly
from tests.conftest import compiled_zone_error

QS = [3, 4, 5, 7, 8, 9, 11, 13]


def radix(q: int) -> int:
    """(3q - delta) / 2 with q = 4w + delta (Besta and Hoefler, Sect. 3.1)."""
    d = {0: 0, 1: 1, 3: -1}[q % 4]
    return (3 * q - d) // 2


def adjacency(graph: tuple[tuple[int, ...], ...]) -> list[set[int]]:
    return [set(around) for around in graph]


def all_distances(adjacent: list[set[int]]) -> list[list[int]]:
    """Every distance, from the adjacency alone (repeated squaring would do as well; the graphs are small)."""
    table = []
    for source in range(len(adjacent)):
        row, frontier, step = [-1] * len(adjacent), {source}, 0
        while frontier:
            for v in frontier:
                row[v] = step
            frontier = {w for u in frontier for w in adjacent[u] if row[w] < 0}
            step += 1
        table.append(row)
    return table


@pytest.mark.parametrize("q", QS)
def test_mms_graph_is_undirected_regular_of_diameter_2(q: int) -> None:
    """2q^2 routers, each with (3q - delta)/2 distinct other routers as neighbours, symmetric, diameter 2."""
    graph = mms_graph(q)
    adjacent = adjacency(graph)
    assert len(graph) == 2 * q * q
    assert all(len(set(around)) == len(around) == radix(q) for around in graph)
    assert all(r not in around for r, around in enumerate(adjacent))
    assert all(r in adjacent[n] for r, around in enumerate(adjacent) for n in around)
    table = all_distances(adjacent)
    assert max(max(row) for row in table) == 2 and min(min(row) for row in table) == 0


def test_q5_is_the_hoffman_singleton_graph() -> None:
    """The Moore graph of degree 7: 50 vertices, 175 edges, girth 5 and diameter 2, so that two adjacent routers
    have no common neighbour and two non-adjacent ones exactly one (a strongly regular graph (50, 7, 0, 1))."""
    adjacent = adjacency(mms_graph(5))
    assert len(adjacent) == 50 and {len(a) for a in adjacent} == {7}
    assert sum(map(len, adjacent)) // 2 == 175
    for a, b in itertools.combinations(range(50), 2):
        assert len(adjacent[a] & adjacent[b]) == (0 if b in adjacent[a] else 1)
    assert max(max(row) for row in all_distances(adjacent)) == 2


@pytest.mark.parametrize("q", [4, 8, 9, 3, 5, 7])
def test_finite_field_axioms(q: int) -> None:
    """GF(q) is a field: both groups, distributivity, an inverse for every non-zero element, a primitive element
    whose powers are the multiplicative group; q elements encoded 0 .. q-1 with 0 and 1 the identities."""
    f = FiniteField.of(q)
    elements = range(q)
    assert prime_power(q) == (f.p, f.n)
    for a in elements:
        assert f.add(a, 0) == a and f.mul(a, 1) == a and f.mul(a, 0) == 0
        assert f.add(a, f.neg(a)) == 0 and f.sub(a, a) == 0
        if a:
            assert f.mul(a, f.inverse(a)) == 1
        for b in elements:
            assert f.add(a, b) == f.add(b, a) and f.mul(a, b) == f.mul(b, a)
            assert f.add(f.sub(a, b), b) == a
            assert (f.mul(a, b) == 0) == (a == 0 or b == 0)
            for c in elements:
                assert f.add(f.add(a, b), c) == f.add(a, f.add(b, c))
                assert f.mul(f.mul(a, b), c) == f.mul(a, f.mul(b, c))
                assert f.mul(a, f.add(b, c)) == f.add(f.mul(a, b), f.mul(a, c))
    assert sorted(f.powers()) == list(range(1, q)) and f.mul(f.powers()[-1], f.primitive) == 1
    assert all(f.add(a, a) == 0 for a in elements) == (f.p == 2)  # characteristic 2 exactly for q = 2^n
    with pytest.raises(ZeroDivisionError):
        f.inverse(0)


@pytest.mark.parametrize(
    ("params", "per_router"),
    [
        ({"q": 3}, 3),
        ({"q": 4, "hosts": 2, "nbl": 1}, 2),
        ({"q": 5}, 4),
        ({"q": 7, "shm_bw": "10GBps"}, 6),
        ({"q": 8, "hosts": "1"}, 1),
    ],
)
def test_counts_equal_the_estimate(params: dict[str, Any], per_router: int) -> None:
    """2q^2 routers of p hosts (default ceil(k'/2)), a cable per host and per edge (q^2 k' edges), two links each,
    plus the limiters and intra-node links; the estimate counts them exactly."""
    p = slimfly(**params)
    q = params["q"]
    hosts = 2 * q * q * per_router
    assert (len(p.hosts), len(p.routers)) == (hosts, 2 * q * q)
    assert len(p.cables(p.links)) == 2 * (hosts + q * q * radix(q))
    extra = hosts * (("nbl" in params) + ("shm_bw" in params))
    assert len(p.links) == 2 * hosts + 2 * q * q * radix(q) + extra
    assert p.size is not None and p.size.compiled
    assert (p.size.hosts, p.size.routers, p.size.links) == (hosts, 2 * q * q, len(p.links))
    assert slimfly.estimate(p.params) == p.size


def test_names_and_order() -> None:
    """router-<r> for r = s q^2 + x q + y; host-<r>-<k> router by router, port fastest; the name says p when it is
    not the default."""
    p = slimfly(q=3, hosts=2)
    assert p.name == "slimfly-q3-p2" and slimfly(q=3, hosts=3).name == slimfly(q=3).name == "slimfly-q3"
    assert p.host_names[:3] == ["host-0-0", "host-0-1", "host-1-0"] and p.routers[17] == "router-17"
    assert [host_coordinates(h) for h in p.host_names] == [(r, k) for r in range(18) for k in range(2)]


def router_path(p: Platform, route: list[str]) -> list[int]:
    """The routers a route crosses, checked to be a walk: each link leaves where the previous one arrived."""
    cables = [p.links[name] for name in route if p.links[name].kind == CABLE]
    assert all(a.ends[1] == b.ends[0] for a, b in itertools.pairwise(cables))
    return [int(link.ends[1].removeprefix("router-")) for link in cables[:-1]]


@pytest.mark.parametrize("params", [{"q": 3, "nbl": 1}, {"q": 4}, {"q": 5, "hosts": 2}, {"q": 7, "hosts": 1}])
def test_every_route_is_a_shortest_path(params: dict[str, Any]) -> None:
    """A route crosses as many router-to-router cables as the distance between its routers (at most 2), framed by
    the two host cables (and limiters)."""
    p = slimfly(**params)
    table = all_distances(adjacency(mms_graph(params["q"])))
    limited = "nbl" in params
    for src, dst, route in p.routes():
        (r, _), (s, _) = host_coordinates(src), host_coordinates(dst)
        path = router_path(p, route)
        assert path[0] == r and path[-1] == s and len(path) - 1 == table[r][s] <= 2
        assert len(route) == len(path) + 1 + 2 * limited
        if limited:
            assert route[0] == f"{src}_nbl" and route[-1] == f"{dst}_nbl"


def test_the_hash_spreads_pairs_over_common_neighbours() -> None:
    """Where two routers have several common neighbours (q = 7, not a Moore graph: 2 or 3 for some pairs), the pairs
    of hosts pick each about equally often, as random choices would."""
    p = slimfly(q=7, hosts=2)
    graph = RouterGraph(mms_graph(7), 2)
    picked: Counter[tuple[int, int]] = Counter()
    for src, dst, route in p.routes():
        (r, _), (s, _) = host_coordinates(src), host_coordinates(dst)
        candidates = graph.next_hops(r, s)
        if len(candidates) > 1:
            picked[(len(candidates), candidates.index(router_path(p, route)[1]))] += 1
    assert set(picked) == {(2, 0), (2, 1), (3, 0), (3, 1), (3, 2)}
    for count in (2, 3):
        total = sum(n for (c, _), n in picked.items() if c == count)
        assert total > 500 and all(abs(picked[(count, i)] * count / total - 1) < 0.2 for i in range(count))


@pytest.mark.parametrize(
    ("q", "reason"),
    [(2, "q mod 4 = 2"), (6, "not a prime power"), (10, "not a prime power"), (12, "not a prime power"),
     (1, "not a prime power"), (18, "not a prime power")],
)  # fmt: skip
def test_bad_q_is_refused(q: int, reason: str) -> None:
    """By the builder and by the estimate alone (what ``--size`` and the study files ask), naming the rule."""
    with pytest.raises(TopologyError, match=rf"q must be a prime power >= 3 with q mod 4 in \{{0, 1, 3\}}.*got {q}"):
        slimfly(q=q)
    values = {"q": q, "hosts": None, "nbl": None, "host_speed": 1e9, "cores": 1, "shm_bw": None, "shm_lat": 0.0}
    with pytest.raises(TopologyError, match=reason):
        slimfly.estimate(values)


@pytest.mark.parametrize("q", [67, 128, 10**40])
def test_huge_q_is_refused_before_anything_is_built(q: int) -> None:
    """Past q = 64 (8192 routers) nothing is built, and a huge q is not even factored."""
    with pytest.raises(TopologyError, match=f"q must be at most 64 .*got {q}"):
        slimfly(q=str(q))


def graph_file(text: str, neighbours: list[list[int]]) -> str:
    """A parameter file's text with its router graph replaced by ``neighbours``."""
    kept = re.sub(r"^(neighbours|routers) .*\n", "", text, flags=re.M)
    return (
        kept
        + f"routers {len(neighbours)}\n"
        + "".join(" ".join(map(str, ("neighbours", r, *around))) + "\n" for r, around in enumerate(neighbours))
    )


class TestCompiledZone:
    """simgrid_cpp/router_graph_zone.cpp refuses a bad router graph in its parameter file (its routes, a large
    machine and the node's keys: tests/test_compiled_zones.py)."""

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            (lambda t: t + "neighbours 0 1 2 9 12 15\n", "router 0 has two 'neighbours' lines"),
            (lambda t: re.sub(r"^neighbours 5 .*\n", "", t, flags=re.M), "router 5 has no 'neighbours' line"),
            (lambda t: re.sub(r"^neighbours 0 (.*) 15\n", r"neighbours 0 \1\n", t, flags=re.M),
             "not undirected: router 15 lists 0, which does not list it"),
            (lambda t: t + "neighbours 18 0\n", "'neighbours' line of router 18: out of range (routers 18)"),
            (lambda t: t.replace("neighbours 1 ", "neighbours 1 18 "), "router 1: neighbour 18 is not another router"),
            (lambda t: t.replace("neighbours 1 ", "neighbours 1 1 "), "router 1: neighbour 1 is not another router"),
            (lambda t: re.sub(r"^neighbours 0 (\d+) (\d+)", r"neighbours 0 \2 \1", t, flags=re.M),
             "router 0: its neighbours must be strictly increasing"),
            (lambda t: t + "neighbours 3 x\n", "a 'neighbours' line must be a router then its neighbours, integers"),
            (lambda t: t + "routers 0\n", "parameter 'routers' must be one integer >= 1"),
            (lambda t: t + "hosts -1\n", "parameter 'hosts' must be one integer >= 1"),
            (lambda t: t + "colour red\n", "unknown parameter 'colour'"),
            (lambda t: t + "routers 16385\n", "parameter 'routers' must be at most 16384"),
            (lambda t: graph_file(t, [[], []]), "not connected: router 0 reaches 1 of the 2 routers"),
            (lambda t: graph_file(t, [[n for n in (r - 1, r + 1) if 0 <= n < 300] for r in range(300)]),
             "the router graph's diameter must be below 255"),
        ],
    )  # fmt: skip
    def test_bad_parameter_file(self, tmp_path: Path, bin_dir: Path, edit: Callable[[str], str], message: str) -> None:
        write_platform(slimfly(q=3), tmp_path / "s.so")
        params = tmp_path / "s.params"
        edited = edit(params.read_text())
        assert edited != params.read_text()
        params.write_text(edited)
        assert message in compiled_zone_error(bin_dir, tmp_path / "s.so", "router graph")
