"""generators.schedules, the one home of every app's communication schedule.

Two kinds of test: closed forms of each schedule (pure Python), and each app's ``--print-schedule`` against the
Python schedule on several shapes. The static analyses, heat maps and predictors walk only these schedules, so an
app that sent anywhere else would make them describe another program.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from generators import crossbar
from generators.schedules import allgather_steps
from generators.schedules import alltoall_steps
from generators.schedules import combine_steps
from generators.schedules import pairing_partner
from generators.schedules import pairing_steps
from generators.schedules import pipe_node
from generators.schedules import shift_steps
from generators.schedules import transpose_steps
from generators.topologies.torus import coordinates
from study_runner.batch.execute import parse_records
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import WrittenPlatform

Steps = list[list[tuple[int, ...]]]
Dims = tuple[int, ...]


def hop_distance(a: Sequence[int], b: Sequence[int], dims: Dims) -> int:
    """Fewest hops between two torus nodes (every dimension wrapped)."""
    return sum(min(abs(x - y), length - abs(x - y)) for x, y, length in zip(a, b, dims, strict=True))


# ---------------------------------------------------------------------------------------------------------------------
# Closed forms.


class TestPairing:
    @pytest.mark.parametrize(
        "dims", [(2,), (4,), (4, 2), (2, 2, 2), (4, 4), (6, 1, 2), (8, 4, 1), (16, 12, 8, 4, 2)], ids=str
    )
    def test_perfect_matching_at_maximal_distance(self, dims: Dims) -> None:
        nodes = math.prod(dims)
        partners = [pairing_partner(r, dims) for r in range(nodes)]
        assert all(partners[p] == r != p for r, p in enumerate(partners))  # an involution without fixed points
        diameter = sum(length // 2 for length in dims)
        for r in range(0, nodes, max(1, nodes // 97)):
            assert hop_distance(coordinates(r, dims), coordinates(partners[r], dims), dims) == diameter

    @pytest.mark.parametrize("dims", [(4,), (4, 2), (2, 2, 2), (6, 4)], ids=str)
    def test_the_partner_is_the_only_node_that_far(self, dims: Dims) -> None:
        nodes, diameter = math.prod(dims), sum(length // 2 for length in dims)
        for r in range(nodes):
            here = coordinates(r, dims)
            furthest = [k for k in range(nodes) if hop_distance(here, coordinates(k, dims), dims) == diameter]
            assert furthest == [pairing_partner(r, dims)]

    def test_odd_rings_have_no_antipode(self) -> None:
        # On a ring of 3 the "half ring" map is a rotation, not an involution: the app refuses odd lengths.
        assert [pairing_partner(r, (3,)) for r in range(3)] == [1, 2, 0]
        assert pairing_steps((4,)) == [[(0, 2), (1, 3), (2, 0), (3, 1)]]


class TestCombine:
    SHAPES = ((2, 1), (1, 4), (3, 3), (4, 3), (5, 2), (8, 8))

    @pytest.mark.parametrize(("width", "height"), SHAPES)
    def test_tree_reduces_to_the_root_and_broadcasts_back(self, width: int, height: int) -> None:
        """Every node but the root sends its partial vector once and receives the final one once; each step's
        senders are distinct; a node only sends its partial vector once every child's has arrived."""
        steps = combine_steps("tree", width, height)
        nodes = width * height
        assert len(steps) == 2 * (math.ceil(math.log2(width)) + math.ceil(math.log2(height)))
        half = len(steps) // 2
        partial = [src for step in steps[:half] for src, _, _ in step]
        final = [dst for step in steps[half:] for _, dst, _ in step]
        assert sorted(partial) == sorted(final) == list(range(1, nodes))
        sent_at = {src: t for t, step in enumerate(steps[:half]) for src, _, _ in step}
        for t, step in enumerate(steps[:half]):
            assert all(sent_at.get(dst, half) > t for _, dst, _ in step)  # the receiver has not sent yet

    @pytest.mark.parametrize("algorithm", ["snake", "fence"])
    @pytest.mark.parametrize(("width", "height"), SHAPES)
    @pytest.mark.parametrize("blocks", [1, 2, 7])
    def test_pipeline_moves_every_block_once_each_way(
        self, algorithm: str, width: int, height: int, blocks: int
    ) -> None:
        """Each block goes up every tree edge once and down it once; the step count is the paper's timeline."""
        steps = combine_steps(algorithm, width, height, blocks)
        nodes = width * height
        count = 2 * nodes + blocks - 3 if algorithm == "snake" else 2 * width + 2 * height + blocks - 5
        assert len(steps) == count
        parents = {r: pipe_node(algorithm, width, height, r).parent for r in range(nodes)}
        assert sorted(r for r, p in parents.items() if p < 0) == [0]
        messages = Counter((src, dst, block) for step in steps for src, dst, block in step)
        expected = {(r, p, b) for r, p in parents.items() if p >= 0 for b in range(blocks)}
        expected |= {(p, r, b) for r, p in parents.items() if p >= 0 for b in range(blocks)}
        assert messages == Counter(expected)


class TestAllgather:
    @pytest.mark.parametrize("ranks", [2, 3, 5, 8, 24, 31])
    @pytest.mark.parametrize("algorithm", ["ring", "bruck"])
    def test_every_rank_receives_the_other_blocks(self, algorithm: str, ranks: int) -> None:
        steps = allgather_steps(algorithm, ranks)
        assert len(steps) == (ranks - 1 if algorithm == "ring" else math.ceil(math.log2(ranks)))
        for step in steps:
            assert sorted(dst for _, dst, _ in step) == list(range(ranks))  # one message into every rank
        received = Counter(dst for step in steps for _, dst, blocks in step for _ in range(blocks))
        assert received == Counter({r: ranks - 1 for r in range(ranks)})


# ---------------------------------------------------------------------------------------------------------------------
# Each app's --print-schedule is the Python schedule.


def transpose_assignment(path: Path, seed: int) -> list[int]:
    """A random placement of the 64 blocks, written as the app's --assignment file."""
    ranks = list(range(64))
    random.Random(seed).shuffle(ranks)
    path.write_text("\n".join(" ".join(map(str, ranks[k : k + 8])) for k in range(0, 64, 8)) + "\n")
    return ranks


def combine_case(algorithm: str, width: int, height: int, elements: int, block: int) -> tuple[Any, ...]:
    args = ["-a", algorithm, "-W", str(width), "-H", str(height), "-n", str(elements), "-S", str(block)]
    steps = combine_steps(algorithm, width, height, 1 if algorithm == "tree" else -(-elements // block))
    return ("combine", width * height, args, steps)


def pairing_case(dims: Dims) -> tuple[Any, ...]:
    return ("bisection_pairing", math.prod(dims), ["-d", ",".join(map(str, dims))], pairing_steps(dims))


CASES = [
    ("transpose", 64, ["-a", "two-step"], transpose_steps(4, "two-step")),
    ("transpose", 64, ["-a", "direct"], transpose_steps(4, "direct")),
    ("alltoall", 7, ["-a", "pairwise"], alltoall_steps("pairwise", 7)),
    ("alltoall", 12, ["-a", "mlfm", "--shape", "2,3,2"], alltoall_steps("mlfm", 12, (2, 3, 2))),
    ("alltoall", 24, ["-a", "mlfm", "--shape", "2,4,3"], alltoall_steps("mlfm", 24, (2, 4, 3))),
    *(combine_case(a, w, h, 10, 3) for a in ("tree", "snake", "fence") for w, h in [(1, 4), (3, 1), (4, 3), (5, 2)]),
    combine_case("fence", 4, 4, 100, 100),
    *(pairing_case(dims) for dims in [(2,), (4, 2), (6, 1, 2), (4, 4, 2)]),
    *(("allgather", p, ["-a", a], allgather_steps(a, p)) for a in ("ring", "bruck") for p in (2, 5, 8, 12)),
    ("shift", 5, [], shift_steps(5)),
    ("shift", 9, ["-S", "8,3,3"], shift_steps(9, [8, 3, 3])),
    ("shift", 11, ["-S", "1,5", "-R", "7"], shift_steps(11, [1, 5], relabel=7)),
]


def print_schedule(
    written_platform: WrittenPlatform, bin_dir: Path, tmp_path: Path, app: str, ranks: int, args: list[str]
) -> list[dict[str, Any]]:
    xml, hosts = written_platform(crossbar(ranks))
    command = smpirun_command(bin_dir / app, [*args, "--print-schedule"], xml, hosts, ranks)
    return parse_records(run_smpirun(command, tmp_path, timeout=120, label=app), app)


def as_printed(app: str, steps: Steps) -> list[dict[str, Any]]:
    """The lines --print-schedule prints for ``steps`` (messages in rank order within a step)."""
    return [{"app": app, "step": t, "messages": sorted(map(list, step))} for t, step in enumerate(steps)]


@pytest.mark.simgrid
@pytest.mark.parametrize(("app", "ranks", "args", "steps"), CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_print_schedule_is_the_python_schedule(
    written_platform: WrittenPlatform,
    bin_dir: Path,
    tmp_path: Path,
    app: str,
    ranks: int,
    args: list[str],
    steps: Steps,
) -> None:
    records = print_schedule(written_platform, bin_dir, tmp_path, app, ranks, args)
    printed = [record | {"messages": sorted(record["messages"])} for record in records]
    assert printed == as_printed(app, steps)


@pytest.mark.simgrid
def test_print_schedule_follows_the_transpose_assignment(
    written_platform: WrittenPlatform, bin_dir: Path, tmp_path: Path
) -> None:
    assignment = transpose_assignment(tmp_path / "perm.txt", seed=2018)
    for algorithm in ("two-step", "direct"):
        args = ["-a", algorithm, "--assignment", "perm.txt"]
        records = print_schedule(written_platform, bin_dir, tmp_path, "transpose", 64, args)
        printed = [record | {"messages": sorted(record["messages"])} for record in records]
        assert printed == as_printed("transpose", transpose_steps(4, algorithm, assignment))


@pytest.mark.parametrize("relabel", [None, 0, 12345])
def test_every_shift_is_a_permutation_without_fixed_points(relabel: int | None) -> None:
    """Relabelled or not, each shift sends one message from and to every rank, never to itself."""
    for step in shift_steps(13, relabel=relabel):
        assert sorted(a for a, _ in step) == sorted(b for _, b in step) == list(range(13))
        assert all(a != b for a, b in step)
