"""Allocation policies of every family (``generators.allocation``): each orders every host once, keeps its
contiguity, repeats itself for a seed, and refuses an impossible request with one clear error."""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import pytest

from generators import TopologyError
from generators import build_platform
from generators import place_ranks
from generators.allocation import ALLOCATION_POLICIES
from generators.allocation import fill
from generators.families import FAMILIES
from generators.model import Platform

POLICIES = ["contiguous", "contiguous:1", "stride:3", "stride:2,1", "random:7", "random-chunks:2,7"]


def smallest(family: str) -> Platform:
    return build_platform(family, FAMILIES[family].smallest)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_policy_orders_every_host_once(family: str, policy: str) -> None:
    platform = smallest(family)
    hosts = place_ranks(platform, None, policy)
    assert sorted(hosts) == sorted(platform.host_names) and len(set(hosts)) == len(hosts)
    assert place_ranks(platform, None, policy) == hosts  # a policy is a function of its argument and seed


def test_contiguous_is_the_host_order_from_its_start() -> None:
    platform = build_platform("torus", {"dims": "4x4"})
    names = platform.host_names
    assert place_ranks(platform, 16, "contiguous") == names
    assert place_ranks(platform, 5, "contiguous:14") == [names[14], names[15], *names[:3]]  # wraps round


def test_stride_takes_every_kth_host_then_the_next_residue() -> None:
    names = build_platform("crossbar", {"hosts": 10}).host_names
    order = place_ranks(build_platform("crossbar", {"hosts": 10}), None, "stride:4,1")
    assert order == [names[i] for i in (1, 5, 9, 2, 6, 0, 3, 7, 4, 8)]  # every 4th of 1, 2, ..., 9, 0


@pytest.mark.parametrize("chunk", [1, 3, 4, 7])
def test_random_chunks_keep_their_chunks_whole(chunk: int) -> None:
    platform = build_platform("fattree", {"radix": 6, "leaves": 6})
    index = {name: i for i, name in enumerate(platform.host_names)}
    order = [index[h] for h in place_ranks(platform, None, f"random-chunks:{chunk},3")]
    runs, first = [], 0
    while first < len(order):  # cut the order where it leaves the platform's host order
        last = first
        while last + 1 < len(order) and order[last + 1] == order[last] + 1 and (order[last] + 1) % chunk:
            last += 1
        runs.append(order[first : last + 1])
        first = last + 1
    assert all(run[0] % chunk == 0 and len(run) == min(chunk, len(order) - run[0]) for run in runs)


def test_seeds_draw_different_orders_and_the_same_seed_the_same() -> None:
    platform = build_platform("dragonfly", {"groups": 5, "routers": 2, "hosts": 2, "global_ports": 2})
    orders = {tuple(place_ranks(platform, None, f"random:{seed}")) for seed in range(8)}
    assert len(orders) == 8
    assert place_ranks(platform, 6, "random:5") == place_ranks(platform, None, "random:5")[:6]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("random:x", "placement random: takes a seed, an integer >= 0, got 'x'"),
        ("random:", "placement random: takes a seed, an integer >= 0, got ''"),
        ("random:-1", "placement random: takes a seed, an integer >= 0, got '-1'"),
        ("stride:0", "placement stride: takes k[,start]: a stride >= 1 and a first host index >= 0, got '0'"),
        ("stride:2,1,0", "placement stride: takes k[,start]"),
        ("contiguous:16", "placement contiguous: host 16 does not exist (torus-4x4 has 16)"),
        ("random-chunks:3", "placement random-chunks: takes c,seed: a chunk of c >= 1 consecutive hosts"),
        ("random-chunks:0,1", "placement random-chunks: takes c,seed"),
        (
            "packed:1",
            "torus has no placement 'packed' (named placements: block, contiguous, partition, random, random-chunks, "
            "stride; or a list of hosts: host-0,host-1)",
        ),
    ],
)
def test_an_impossible_request_is_one_clear_error(policy: str, message: str) -> None:
    with pytest.raises(TopologyError) as raised:
        place_ranks(build_platform("torus", {"dims": "4x4"}), 4, policy)
    assert str(raised.value).startswith(message)


def test_more_ranks_than_the_policy_has_hosts_are_refused() -> None:
    with pytest.raises(TopologyError, match=r"17 ranks do not fit on 16 hosts"):
        place_ranks(build_platform("torus", {"dims": "4x4"}), 17, "random:1")


def test_a_family_placement_cannot_take_a_policy_name() -> None:
    from generators.declare import family

    with pytest.raises(ValueError, match=r"placement 'random' is an allocation policy of every family"):
        family(
            "x", (), FAMILIES["crossbar"].estimate, {"random": ALLOCATION_POLICIES["random"]}, smallest={}, drawn={}
        )(lambda: None)


def test_the_generator_cli_writes_a_policy_hostfile(tmp_path: object) -> None:
    from pathlib import Path

    from generators.cli import main

    out = Path(str(tmp_path))
    args = ["torus", "--dims", "4x4", "-o", str(out / "t.xml"), "--hostfile", str(out / "hosts")]
    assert main([*args, "--ranks", "6", "--placement", "random:7"]) == 0
    platform = build_platform("torus", {"dims": "4x4"})
    assert (out / "hosts").read_text().split() == place_ranks(platform, 6, "random:7")


@pytest.mark.parametrize(
    ("family", "params", "placement", "box"),
    [
        ("torus", {"dims": "4x4x2"}, "block:2x2x2@1,2,0", ((1, 2), (2, 3), (0, 1))),
        ("torus", {"dims": "4x4x4x4x2"}, "block:4x4x2x2x2@0,0,2,0,0", ((0, 3), (0, 3), (2, 3), (0, 1), (0, 1))),
        ("mesh", {"width": 6, "height": 3}, "block:3x2@3,1", ((3, 5), (1, 2))),
    ],
)
def test_a_block_is_the_box_of_a_torus_or_mesh(
    family: str, params: dict[str, object], placement: str, box: tuple[tuple[int, int], ...]
) -> None:
    """A torus's own allocation: a box of the machine (a Blue Gene/Q partition), its hosts in the machine's order."""
    from generators.topologies.torus import coordinates

    platform = build_platform(family, params)
    dims = tuple(platform.params.get("dims") or (platform.params["width"], platform.params["height"]))
    hosts = place_ranks(platform, None, placement)

    def within(name: str) -> bool:
        place = coordinates(int(name.removeprefix("host-")), dims)
        return all(lo <= c <= hi for c, (lo, hi) in zip(place, box, strict=True))

    inside = [name for name in platform.host_names if within(name)]
    assert hosts == inside and len(hosts) == math.prod(hi - lo + 1 for lo, hi in box)


@pytest.mark.parametrize(
    ("placement", "message"),
    [
        ("block:2x2", "placement block: a block of the 4x4x2 machine has 3 dimensions"),
        ("block:2x2x2@3,0,0", "placement block: dimension 0 holds 3..4, outside the machine's 0..3"),
        ("block:2xax2", "placement block needs AxBx...[@o1,o2,...]"),
        ("block:0x2x2", "placement block: dimension 0 holds 0..-1"),
    ],
)
def test_a_block_outside_the_machine_is_refused(placement: str, message: str) -> None:
    with pytest.raises(TopologyError) as raised:
        place_ranks(build_platform("torus", {"dims": "4x4x2"}), None, placement)
    assert str(raised.value).startswith(message)


class TestFill:
    """A machine in use (``allocation.fill``): jobs drawn from a size distribution fill it by the policy, some end."""

    MACHINE = build_platform("torus", {"dims": "8x8"})

    @pytest.mark.parametrize("seed", range(6))
    def test_jobs_fill_to_the_occupancy_and_some_end(self, seed: int) -> None:
        full = fill(self.MACHINE, "contiguous", [2, 4, 8], 0.75, 0.0, seed)
        taken = sum(len(job) for job in full)
        assert 0.75 * 64 - 8 < taken <= 0.75 * 64 and all(len(job) in (2, 4, 8) for job in full)
        assert [h for job in full for h in job] == self.MACHINE.host_names[:taken]  # contiguous: in host order
        running = fill(self.MACHINE, "contiguous", [2, 4, 8], 0.75, 0.5, seed)
        assert len(running) == len(full) - round(0.5 * len(full)) and all(job in full for job in running)
        assert fill(self.MACHINE, "contiguous", [2, 4, 8], 0.75, 0.5, seed) == running  # the seed decides

    def test_the_holes_fragment_a_new_job(self) -> None:
        from study_runner.simulation.jobs import Job
        from study_runner.simulation.jobs import allocate

        held = fill(self.MACHINE, "contiguous", [2, 4], 0.9, 0.5, 3)
        (hosts,) = allocate(self.MACHINE, [Job("new", Path("app"), (), 16)], "contiguous", held).values()
        index = sorted(int(host.removeprefix("host-")) for host in hosts)
        assert not set(hosts) & {h for job in held for h in job}
        assert index[-1] - index[0] + 1 > 16  # not one block: holes of ended jobs

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (("contiguous", [], 0.5, 0.0, 1), "job sizes must be whole numbers of hosts, 1 to 64"),
            (("contiguous", [0], 0.5, 0.0, 1), "job sizes must be whole numbers of hosts"),
            (("contiguous", [65], 0.5, 0.0, 1), "job sizes must be whole numbers of hosts"),
            (("contiguous", [2], 1.5, 0.0, 1), "occupancy must be a fraction from 0 to 1, got 1.5"),
            (("contiguous", [2], 0.5, -0.1, 1), "released must be a fraction from 0 to 1"),
            (("block:2x2", [2], 0.5, 0.0, 1), "'block' is not an allocation policy"),
        ],
    )
    def test_an_impossible_machine_is_one_error(self, args: tuple[object, ...], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            fill(self.MACHINE, *args)  # type: ignore[arg-type]


class TestFamilyAllocations:
    """A dragonfly's groups, a fat tree's leaves and pods: whole units of the machine, as their schedulers allocate."""

    DRAGONFLY = build_platform("dragonfly", {"groups": 5, "routers": 2, "hosts": 2, "global_ports": 2})
    TREE = build_platform("fattree", {"radix": 4, "levels": 3})

    def test_groups_are_their_hosts_group_by_group(self) -> None:
        from generators.topologies.dragonfly import host_coordinates

        hosts = place_ranks(self.DRAGONFLY, None, "groups:3,0-1")
        assert [host_coordinates(h)[0] for h in hosts] == [3] * 4 + [0] * 4 + [1] * 4
        assert hosts[:4] == [h for h in self.DRAGONFLY.host_names if h.startswith("host-3-")]

    def test_leaves_and_pods_are_their_servers(self) -> None:
        from generators.topologies.fattree import server_coordinates

        leaves = [server_coordinates(h)[0] for h in place_ranks(self.TREE, None, "leaves:0,3")]
        assert leaves == [0, 0, 3, 3]  # radix 4: 2 servers a leaf
        pods = [server_coordinates(h)[0] for h in place_ranks(self.TREE, None, "pods:1")]
        assert pods == [2, 2, 3, 3]  # 3 levels of radix 4: a pod is 2 leaves
        assert sorted(place_ranks(self.TREE, None, "pods:0-3")) == sorted(self.TREE.host_names)

    @pytest.mark.parametrize(
        ("placement", "message"),
        [
            ("groups:5", "placement groups: 5 is not one of the 5 groups, got '5'"),
            ("groups:1,1", "placement groups: names one of the groups twice"),
            ("groups:x", "placement groups: takes a list of groups, e.g. 0,2,5-7, got 'x'"),
            ("groups:", "placement groups: takes a list of groups"),
        ],
    )
    def test_a_unit_that_does_not_exist_is_one_error(self, placement: str, message: str) -> None:
        with pytest.raises(TopologyError) as raised:
            place_ranks(self.DRAGONFLY, None, placement)
        assert str(raised.value).startswith(message)
        with pytest.raises(TopologyError, match=r"placement pods: 4 is not one of the 4 pods"):
            place_ranks(self.TREE, None, "pods:4")


BLUE_GENE_Q_DIMS = {"MIRA": "16x16x12x8x2", "JUQUEEN": "28x8x8x8x2"}


@functools.cache
def blue_gene_q(machine: str) -> Platform:
    """Mira's or JUQUEEN's whole torus (49,152 and 28,672 nodes: seconds to build), built when a test first needs
    it, not when the module is collected (every ``pytest`` run and every worker of ``scripts/test --quick`` does)."""
    return build_platform("torus", {"dims": BLUE_GENE_Q_DIMS[machine], "zone": "compiled"})


class TestBlueGeneQPartitions:
    """``partition:MIDPLANES[,KIND][@m1,m2,m3,m4]``: the partitions Mira and JUQUEEN allocated (the partition paper,
    Table 6 and Sect. 3), as blocks of whole midplanes of the machine's torus."""

    @staticmethod
    def extents(platform: Platform, hosts: list[str]) -> tuple[int, ...]:
        """The extent of each dimension of the box ``hosts`` fill (and that they fill it)."""
        from generators.topologies.torus import coordinates

        dims = tuple(platform.params["dims"])
        points = [coordinates(int(host.removeprefix("host-")), dims) for host in hosts]
        extents = tuple(len({p[axis] for p in points}) for axis in range(len(dims)))
        assert math.prod(extents) == len(set(hosts)) == len(hosts)
        return extents

    @pytest.mark.parametrize("midplanes", [1, 2, 4, 8, 16, 24, 32, 48, 64, 96])
    def test_mira_current_partitions_are_table_6(self, midplanes: int) -> None:
        from generators import bgq

        hosts = place_ranks(blue_gene_q("MIRA"), None, f"partition:{midplanes}")
        assert len(hosts) == 512 * midplanes
        geometry = tuple(e // 4 for e in self.extents(blue_gene_q("MIRA"), hosts)[:4])
        assert sorted(geometry) == sorted(bgq.MIRA_CURRENT[midplanes])
        assert bgq.partition_bisection(geometry) == bgq.partition_bisection(bgq.MIRA_CURRENT[midplanes])

    @pytest.mark.parametrize("midplanes", [4, 8, 16, 24])
    def test_the_proposed_ones_raise_the_bisection(self, midplanes: int) -> None:
        from generators import bgq

        current = place_ranks(blue_gene_q("MIRA"), None, f"partition:{midplanes},current")
        proposed = place_ranks(blue_gene_q("MIRA"), None, f"partition:{midplanes},proposed")
        bisection = [
            bgq.partition_bisection([e // 4 for e in self.extents(blue_gene_q("MIRA"), h)[:4]])
            for h in (current, proposed)
        ]
        assert bisection[1] > bisection[0]

    def test_juqueen_best_and_worst_and_the_corner(self) -> None:
        from generators import bgq

        for kind, choose in (("best", bgq.best_partition), ("worst", bgq.worst_partition)):
            hosts = place_ranks(blue_gene_q("JUQUEEN"), None, f"partition:16,{kind}")
            geometry = [e // 4 for e in self.extents(blue_gene_q("JUQUEEN"), hosts)[:4]]
            assert bgq.partition_bisection(geometry) == choose("juqueen", 16)[1]
        first = place_ranks(blue_gene_q("JUQUEEN"), None, "partition:1@0,0,0,0")
        other = place_ranks(blue_gene_q("JUQUEEN"), None, "partition:1@6,1,1,1")
        assert not set(first) & set(other) and len(other) == 512

    @pytest.mark.parametrize(
        ("platform", "placement", "message"),
        [
            ("MIRA", "partition:5", "Mira has no current partition of 5 midplanes"),
            ("MIRA", "partition:4,odd", "KIND is current, proposed, best or worst"),
            ("MIRA", "partition:x", "needs MIDPLANES[,KIND][@m1,m2,m3,m4]"),
            ("MIRA", "partition:1@0,0", "its first midplane has 4 coordinates"),
            ("MIRA", "partition:2@3,0,0,0", "outside the machine"),
            ("JUQUEEN", "partition:4,current", "Mira has no current partition of 4"),
            ("JUQUEEN", "partition:9", "no cuboid of 9 midplanes fits"),
        ],
    )
    def test_an_impossible_partition_is_one_error(self, platform: str, placement: str, message: str) -> None:
        with pytest.raises(TopologyError, match=re.escape(message)):
            place_ranks(blue_gene_q(platform), None, placement)

    def test_only_a_machine_of_whole_midplanes_has_them(self) -> None:
        with pytest.raises(TopologyError, match="needs a Blue Gene/Q torus of whole midplanes"):
            place_ranks(build_platform("torus", {"dims": "4x4x2x2x2"}), None, "partition:1")
