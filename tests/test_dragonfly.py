"""generators/topologies/dragonfly.py: the closed forms of Kim et al.'s dragonfly (counts, cables per router, hops), the
throughput limits of static routing under uniform and adversarial traffic, and SimGrid's own DRAGONFLY against the
model. The compiled zone (simgrid_cpp/dragonfly_zone.cpp) through SimGrid's loader, up to a Frontier-shaped machine:
tests/test_compiled_zones.py."""

from __future__ import annotations

import itertools
import math
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators import write_platform
from generators.analysis import link_loads
from generators.mixing import mix
from generators.model import Platform
from generators.topologies.dragonfly import Dragonfly
from generators.topologies.dragonfly import dragonfly
from generators.topologies.dragonfly import host_coordinates
from tests.conftest import shift_times

BALANCED = {"groups": 9, "routers": 4, "hosts": 2, "global_ports": 2}  # a = 2p = 2h, g = ah + 1 (Kim et al.)


def router_of(link: str, end: int) -> tuple[int, int] | None:
    """(group, router) of one end of a router-to-router cable, None for a host cable's end."""
    node = link.split("_to_")[end]
    if not node.startswith("router-"):
        return None
    g, r = node.removeprefix("router-").split("-")
    return int(g), int(r)


def global_cables(p: Platform) -> list[str]:
    """The directed links of the global cables: router to router across groups."""
    ends = [(name, router_of(name, 0), router_of(name, 1)) for name in p.cables(p.links)]
    return [name for name, a, b in ends if a and b and a[0] != b[0]]


def hops(route: list[str]) -> tuple[int, int]:
    """(router-to-router cables, global cables) of a route."""
    between = [(router_of(link, 0), router_of(link, 1)) for link in route if "_to_" in link]
    routers = [(a, b) for a, b in between if a and b]
    return len(routers), sum(a[0] != b[0] for a, b in routers)


@pytest.mark.parametrize(
    ("params", "counts"),
    [
        (BALANCED, (72, 36, 9 * 6 + 36)),
        ({"groups": 74, "routers": 32, "hosts": 16, "global_ports": 16, "links_per_pair": 4},
         (37888, 2368, 74 * 496 + 4 * 74 * 73 // 2)),
        ({"groups": 6, "routers": 4, "hosts": 3, "global_ports": 3, "links_per_pair": 2, "arrangement": "relative"},
         (72, 24, 6 * 6 + 2 * 15)),
    ],
)  # fmt: skip
def test_counts(params: dict[str, Any], counts: tuple[int, int, int]) -> None:
    """g a p hosts, g a routers, g a(a-1)/2 local + m g(g-1)/2 global cables (two directed links each)."""
    p = build_platform("dragonfly", params)
    hosts, routers, cables = counts
    assert (len(p.hosts), len(p.routers)) == (hosts, routers)
    assert len(p.cables(p.links)) == 2 * (hosts + cables)


@pytest.mark.parametrize("arrangement", ["absolute", "relative"])
@pytest.mark.parametrize(
    ("groups", "routers", "ports", "copies"), [(9, 4, 2, 1), (74, 32, 16, 4), (7, 4, 3, 2), (37, 18, 9, 4)]
)
def test_every_pair_of_groups_has_its_cables_spread_over_the_routers(
    arrangement: str, groups: int, routers: int, ports: int, copies: int
) -> None:
    """Exactly links_per_pair cables join each pair of groups; a router holds floor or ceil of the group's
    m(g-1) global cables over its a routers, never more than global_ports; every router pair at most one cable."""
    shape = Dragonfly(groups, routers, 1, copies, arrangement)
    cables = shape.global_cables()
    assert Counter((a[0], b[0]) for a, b in cables) == {
        pair: copies for pair in itertools.combinations(range(groups), 2)
    }
    assert len(set(cables)) == len(cables)
    held = Counter(end for cable in cables for end in cable)
    share = copies * (groups - 1) / routers
    assert set(held.values()) <= {math.floor(share), math.ceil(share)} and len(held) == groups * routers
    assert max(held.values()) <= ports


def test_balanced_dragonfly_uses_every_global_port() -> None:
    """Kim et al.'s largest balanced machine, g = ah + 1: every router has exactly h global cables."""
    p = build_platform("dragonfly", BALANCED)
    per_router = Counter(link.split("_to_")[0] for link in global_cables(p))
    assert set(per_router.values()) == {2} and len(per_router) == 36


def test_arrangements_differ_and_relative_is_a_circulant() -> None:
    """Absolute and relative put the cables on different routers; relative is invariant under a shift of groups."""
    absolute, relative = Dragonfly(9, 4, 1, 1, "absolute"), Dragonfly(9, 4, 1, 1, "relative")
    assert set(absolute.global_cables()) != set(relative.global_cables())
    for g, k in itertools.permutations(range(9), 2):
        assert relative.gateway(g, k, 0) == relative.gateway((g + 1) % 9, (k + 1) % 9, 0)


@pytest.mark.parametrize("routing", ["minimal", "valiant"])
def test_hops(routing: str) -> None:
    """Minimal: inside a group 0 or 1 local hop, to another group exactly one global cable and at most 3 router hops;
    Valiant: exactly two global cables through a third group, at most 5 router hops."""
    p = build_platform("dragonfly", {**BALANCED, "routing": routing})
    longest = Counter()
    for src, dst, route in p.routes():
        (g, r, _), (k, s, _) = host_coordinates(src), host_coordinates(dst)
        routers, globals_ = hops(route)
        if g == k:
            assert (routers, globals_) == (int(r != s), 0)
            continue
        assert globals_ == (1 if routing == "minimal" else 2), (src, dst, route)
        longest[routers] += 1
        if routing == "valiant":
            visited = {router_of(link, 1)[0] for link in route[1:-1]}
            assert len(visited - {g, k}) == 1
    assert max(longest) == (3 if routing == "minimal" else 5)


def adversarial(p: Platform) -> list[tuple[str, str]]:
    """Every host of group i sends to the host in the same place in group i + 1 (Kim et al., Sect. 4.2: WC)."""
    groups = p.params["groups"]
    return [(h, "host-" + "-".join(map(str, ((g + 1) % groups, r, k)))) for h in p.host_names
            for g, r, k in [host_coordinates(h)]]  # fmt: skip


def test_throughput_limits_of_static_routing() -> None:
    """Kim et al., Sect. 4.2: under the adversarial pattern, minimal routing sends a group's a p hosts through its one
    cable to the next group (a per-host rate of 1/(a p) = 1/8 of a link here); Valiant spreads them over every
    group's cables, each flow crossing two (expected rate m(g-1)/(2 a p) = 1/2 of a link). In an all-to-all, minimal
    routing puts on each global cable the (a p)^2 flows from one group to the other."""
    minimal = build_platform("dragonfly", BALANCED)
    flows = adversarial(minimal)
    loads = link_loads(minimal, flows)
    assert max(loads[link] for link in global_cables(minimal)) == 4 * 2
    valiant = build_platform("dragonfly", {**BALANCED, "routing": "valiant"})
    loads = link_loads(valiant, flows)
    worst = max(loads[link] for link in global_cables(valiant))
    assert sum(loads[link] for link in global_cables(valiant)) == 2 * len(flows)  # two global cables per flow
    assert worst < 8  # the mean is 2 x 72 flows / 72 directed cables = 2; the hash's worst cable carries 5
    everyone = [(src, dst) for src, dst, _ in minimal.routes()]  # all-to-all: each cable carries its 2 groups'
    assert {link_loads(minimal, everyone)[link] for link in global_cables(minimal)} == {(4 * 2) ** 2}


def test_valiant_intermediate_groups_are_spread() -> None:
    """The hash picks every other group as an intermediate about as often (a random choice would)."""
    shape = Dragonfly(9, 4, 2, 1, "absolute")
    counts = Counter(shape.intermediate(0, 1, mix(pair)) for pair in range(7000))
    assert set(counts) == set(range(2, 9)) and max(counts.values()) < 1.1 * min(counts.values())


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"groups": 10, "routers": 4, "hosts": 2, "global_ports": 2}, r"4 x 2 = 8 global ports, fewer than .* = 9"),
        ({"groups": 3, "routers": 2, "hosts": 1, "global_ports": 3, "links_per_pair": 3}, "same two routers"),
        ({"groups": 2, "routers": 1, "hosts": 1, "global_ports": 1, "routing": "valiant"}, "at least 3 groups"),
        ({"groups": 3, "routers": 2, "hosts": 1, "global_ports": 1, "arrangement": "random"}, "one of absolute"),
    ],
)
def test_bad_shapes_are_refused(params: dict[str, Any], message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        build_platform("dragonfly", params)


def simgrid_dragonfly_xml(path: Path, groups: int, routers: int, hosts: int, bw: str, lat: str) -> None:
    """SimGrid 4.1's own DRAGONFLY cluster of one chassis per group (in a zone: a cluster alone as the platform
    crashes the loader), split-duplex links, hosts ``node-<i>`` numbered as this family numbers its hosts."""
    count = groups * routers * hosts
    path.write_text(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        '<platform version="4.1"><zone id="world" routing="Full">\n'
        f'<cluster id="df" prefix="node-" suffix="" radical="0-{count - 1}" speed="1Gf" bw="{bw}" lat="{lat}" '
        f'sharing_policy="SPLITDUPLEX" topology="DRAGONFLY" topo_parameters="{groups},1;1,1;{routers},1;{hosts}"/>\n'
        "</zone></platform>\n"
    )


def simgrid_link_as_ours(name: str, routers: int, hosts: int, groups: int) -> str:
    """Our name of the link SimGrid's DRAGONFLY zone calls ``name`` (its names number routers globally; a green
    link's group is known from its creation number only: the host links come first, then each group's)."""
    up = name.endswith("_UP")
    words = name.removesuffix("_UP").removesuffix("_DOWN").split("_")
    if words[0] == "local":  # local_link_from_router_R_to_node_N_ID
        router, node = int(words[4]), int(words[7])
        a, b = f"host-{router // routers}-{router % routers}-{node}", f"router-{router // routers}-{router % routers}"
    elif words[0] == "green":  # green_link_in_chassis_0_between_routers_J_and_K_ID
        group = (int(words[10]) - groups * routers * hosts) // (routers * (routers - 1) // 2)
        a, b = f"router-{group}-{words[7]}", f"router-{group}-{words[9]}"
    else:  # blue_link_between_group_I_and_J_routers_RI_and_RJ_ID
        ri, rj = int(words[8]), int(words[10])
        a, b = f"router-{ri // routers}-{ri % routers}", f"router-{rj // routers}-{rj % routers}"
    return f"{a}_to_{b}" if up else f"{b}_to_{a}"


class TestSimGridDragonfly:
    """Where SimGrid's DRAGONFLY describes the same machine (one chassis per group, routers >= groups, one cable per
    pair of groups: the ``simgrid`` arrangement), its routes are this family's, link for link."""

    @pytest.mark.parametrize(("groups", "routers", "hosts"), [(3, 4, 2), (5, 5, 1), (4, 6, 2)])
    def test_routes_equal_simgrid_dragonfly(
        self, tmp_path: Path, load_platform: Callable[..., dict[str, Any]], groups: int, routers: int, hosts: int
    ) -> None:
        simgrid_dragonfly_xml(tmp_path / "sg.xml", groups, routers, hosts, "25GBps", "100ns")
        ours = dragonfly(groups, routers, hosts, 1, arrangement="simgrid")
        theirs = load_platform(tmp_path / "sg.xml", "--all-routes")
        names = {f"node-{i}": host for i, host in enumerate(ours.host_names)}
        assert theirs["hosts"] == len(ours.hosts) and len(theirs["routes"]) == len(names) * (len(names) - 1)
        for route in theirs["routes"]:
            src, dst = names[route["src"]], names[route["dst"]]
            assert [simgrid_link_as_ours(n, routers, hosts, groups) for n in route["links"]] == ours.route(src, dst)
            assert route["latency"] == pytest.approx(ours.route_latency(src, dst), rel=1e-12)

    def test_simgrid_dragonfly_needs_routers_for_every_group(self, tmp_path: Path, bin_dir: Path) -> None:
        """SimGrid's DRAGONFLY puts the cable to group k on router k: with more groups than routers it crashes,
        where this family builds the machine (docs/dragonfly.md)."""
        simgrid_dragonfly_xml(tmp_path / "sg.xml", 5, 4, 1, "25GBps", "100ns")
        done = subprocess.run([str(bin_dir / "platform_check"), str(tmp_path / "sg.xml"), "--all-routes"],
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == -11  # SIGSEGV, not an error message
        assert len(list(dragonfly(5, 4, 1, 1).routes())) == 20 * 19


def test_simulated_times_equal_simgrid_dragonfly(tmp_path: Path, bin_dir: Path) -> None:
    """The same machine in SimGrid's DRAGONFLY zone and in this family's compiled zone: every shift permutation of
    48 ranks takes the same simulated time, to 1e-12 (not to the last bit: the max-min system holds the links and
    flows in another order, which moves the last bits of some ranks' times)."""
    simgrid_dragonfly_xml(tmp_path / "sg.xml", 4, 6, 2, "25GBps", "100ns")
    ours = dragonfly(4, 6, 2, 1, arrangement="simgrid")
    write_platform(ours, tmp_path / "ours.so")
    theirs = shift_times(tmp_path, bin_dir, tmp_path / "sg.xml", [f"node-{i}" for i in range(48)])
    mine = shift_times(tmp_path, bin_dir, tmp_path / "ours.so", ours.host_names)
    assert len(mine) == 47
    times = ("time_s_min", "time_s_avg", "time_s_max", "rate_bps")
    for a, b in zip(mine, theirs, strict=True):
        assert {k: v for k, v in a.items() if k not in times} == {k: v for k, v in b.items() if k not in times}
        assert [a[k] for k in times] == pytest.approx([b[k] for k in times], rel=1e-12)
