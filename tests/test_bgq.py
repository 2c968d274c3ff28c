"""generators.bgq against the paper's Tables 1, 2, 6, 7 (Oltchik & Schwartz) and a brute-force min balanced cut."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from generators.bgq import JUQUEEN
from generators.bgq import MIDPLANE_NODES
from generators.bgq import MIRA
from generators.bgq import MIRA_CURRENT
from generators.bgq import MIRA_PROPOSED
from generators.bgq import SEQUOIA
from generators.bgq import best_partition
from generators.bgq import bisection
from generators.bgq import fits
from generators.bgq import geometries
from generators.bgq import isoperimetric_bound
from generators.bgq import node_dims
from generators.bgq import parse_machine
from generators.bgq import partition_bisection
from generators.bgq import partitions
from generators.bgq import worst_partition
from generators.errors import TopologyError
from paper_models.bgq import main

ROOT = Path(__file__).resolve().parents[1]

# Rows transcribed from the paper: (P nodes, midplanes, geometry, BW, better geometry or None, its BW or None).
# Table 1 prints again the rows of Table 6 where the bisection rises (current -> proposed): its midplane counts.
TABLE_1_MIDPLANES = [4, 8, 16, 24]
# Table 6 (Mira, all predefined partitions): current -> new.
TABLE_6 = [
    (512, 1, (1, 1, 1, 1), 256, None, None),
    (1024, 2, (2, 1, 1, 1), 256, None, None),
    (2048, 4, (4, 1, 1, 1), 256, (2, 2, 1, 1), 512),
    (4096, 8, (4, 2, 1, 1), 512, (2, 2, 2, 1), 1024),
    (8192, 16, (4, 4, 1, 1), 1024, (2, 2, 2, 2), 2048),
    (12288, 24, (4, 3, 2, 1), 1536, (3, 2, 2, 2), 2048),
    (16384, 32, (4, 4, 2, 1), 2048, None, None),
    (24576, 48, (4, 4, 3, 1), 3072, None, None),
    (32768, 64, (4, 4, 2, 2), 4096, None, None),
    (49152, 96, (4, 4, 3, 2), 6144, None, None),
]
# Table 2 prints again the rows of Table 7 where best and worst differ (worst -> best): its midplane counts.
TABLE_2_MIDPLANES = [4, 6, 8, 12, 16, 24]
# Table 7 (JUQUEEN, every size that fits): worst -> proposed (blank where best == worst).
TABLE_7 = [
    (512, 1, (1, 1, 1, 1), 256, None, None),
    (1024, 2, (2, 1, 1, 1), 256, None, None),
    (1536, 3, (3, 1, 1, 1), 256, None, None),
    (2048, 4, (4, 1, 1, 1), 256, (2, 2, 1, 1), 512),
    (2560, 5, (5, 1, 1, 1), 256, None, None),
    (3072, 6, (6, 1, 1, 1), 256, (3, 2, 1, 1), 512),
    (3584, 7, (7, 1, 1, 1), 256, None, None),
    (4096, 8, (4, 2, 1, 1), 512, (2, 2, 2, 1), 1024),
    (5120, 10, (5, 2, 1, 1), 512, None, None),
    (6144, 12, (6, 2, 1, 1), 512, (3, 2, 2, 1), 1024),
    (7168, 14, (7, 2, 1, 1), 512, None, None),
    (8192, 16, (4, 2, 2, 1), 1024, (2, 2, 2, 2), 2048),
    (10240, 20, (5, 2, 2, 1), 1024, None, None),
    (12288, 24, (6, 2, 2, 1), 1024, (3, 2, 2, 2), 2048),
    (14336, 28, (7, 2, 2, 1), 1024, None, None),
    (16384, 32, (4, 2, 2, 2), 2048, None, None),
    (20480, 40, (5, 2, 2, 2), 2048, None, None),
    (24576, 48, (6, 2, 2, 2), 2048, None, None),
    (28672, 56, (7, 2, 2, 2), 2048, None, None),
]


def _ids(rows):
    return [f"{r[1]}mp" for r in rows]


@pytest.mark.parametrize("row", TABLE_6, ids=_ids(TABLE_6))
def test_mira_tables_1_and_6(row):
    p, m, current, bw, new, new_bw = row
    assert p == m * MIDPLANE_NODES
    assert MIRA_CURRENT[m] == current
    assert math.prod(current) == m and fits(current, MIRA)
    assert partition_bisection(current) == bw
    best, best_bw = best_partition(MIRA, m)
    if new is None:
        assert m not in MIRA_PROPOSED
        assert best_bw == bw  # no geometry of this size that fits Mira does better
    else:
        assert MIRA_PROPOSED[m] == new
        assert partition_bisection(new) == new_bw > bw
        assert (best, best_bw) == (new, new_bw)


def test_mira_table_1_is_table_6_where_bisection_rises():
    assert TABLE_1_MIDPLANES == [r[1] for r in TABLE_6 if r[4] is not None]
    assert sorted(MIRA_CURRENT) == [r[1] for r in TABLE_6]


@pytest.mark.parametrize("row", TABLE_7, ids=_ids(TABLE_7))
def test_juqueen_tables_2_and_7(row):
    p, m, worst, worst_bw, best, best_bw = row
    assert p == m * MIDPLANE_NODES
    assert worst_partition(JUQUEEN, m) == (worst, worst_bw)
    if best is None:
        best, best_bw = worst, worst_bw
    assert best_partition(JUQUEEN, m) == (best, best_bw)


def test_juqueen_table_7_lists_every_size_and_table_2_every_difference():
    sizes = sorted({math.prod(g) for g in partitions(JUQUEEN)})
    assert sizes == [r[1] for r in TABLE_7]
    assert TABLE_2_MIDPLANES == [r[1] for r in TABLE_7 if r[4] is not None]


def test_machines_and_node_dims():
    assert (MIRA, JUQUEEN, SEQUOIA) == ((4, 4, 3, 2), (7, 2, 2, 2), (4, 4, 4, 3))
    assert node_dims(MIRA) == (16, 16, 12, 8, 2) and math.prod(node_dims(MIRA)) == 49152
    assert node_dims(JUQUEEN) == (28, 8, 8, 8, 2) and math.prod(node_dims(JUQUEEN)) == 28672
    assert node_dims(SEQUOIA) == (16, 16, 16, 12, 2) and math.prod(node_dims(SEQUOIA)) == 98304
    # The paper's 3x2x1x1 example: 12x4x4x4x2 (3x1x1x1 midplanes) has 256 links in its bisection.
    assert bisection((12, 4, 4, 4, 2)) == 256 and bisection((8, 6, 4, 4, 2)) == 384
    assert bisection((8, 8, 4, 4, 2)) == 512


def test_orientation_any_permutation_fits():
    assert fits((1, 1, 2, 1), (1, 2, 1, 1)) and not fits((2, 2, 1, 1), (7, 1, 1, 1))
    assert geometries("2x1x2x1", 2) == [(2, 1, 1, 1)]
    assert geometries(SEQUOIA, 48) == [(4, 3, 2, 2), (4, 4, 3, 1)]


def test_ties_are_deterministic():
    # Mira, 48 midplanes: 4x3x2x2 and 4x4x3x1 both have longest dimension 4, bisection 3072.
    assert best_partition(MIRA, 48) == ((4, 3, 2, 2), 3072)
    assert worst_partition(MIRA, 48) == ((4, 4, 3, 1), 3072)


def test_bisection_is_theorem_3_1_bound_at_half():
    for dims in [(4, 4, 4, 4, 2), (28, 8, 8, 8, 2), (16, 16, 12, 8, 2), (12, 8, 4, 4, 2), (2, 2), (6, 3)]:
        assert bisection(dims) == isoperimetric_bound(dims, math.prod(dims) // 2)


# --- brute force ---------------------------------------------------------------------------------------
# A ring of length 2 is modelled as ONE edge of weight 2: both the + and the - port of a node lead to the
# other node, i.e. two links (the paper's graph is 2D-regular; Lemma 3.2's all-2 case is Harper's hypercube
# with every link doubled). With weight 1 (one cable, as generators.topologies.torus writes it) the formula is wrong
# for tori made only of length-2 rings, e.g. a 2x2 torus (a 4-cycle) has bisection 2, not 4.


def _torus(dims: tuple[int, ...], length2_links: int) -> nx.Graph:
    g = nx.Graph()
    nodes = list(itertools.product(*(range(d) for d in dims)))
    g.add_nodes_from(nodes)
    for v in nodes:
        for i, d in enumerate(dims):
            if d > 1:
                u = (*v[:i], (v[i] + 1) % d, *v[i + 1 :])
                g.add_edge(v, u, weight=length2_links if d == 2 else 1)
    return g


def _min_balanced_cut(dims: tuple[int, ...], length2_links: int = 2) -> int:
    """Exact minimum cut over all vertex subsets of floor(N/2) nodes (node 0 on one side, by symmetry)."""
    g = _torus(dims, length2_links)
    first, *rest = list(g)
    half = g.number_of_nodes() // 2
    return min(nx.cut_size(g, (first, *s), weight="weight") for s in itertools.combinations(rest, half - 1))


EVEN_LONGEST = [(2, 2), (4, 2), (2, 2, 2), (4, 4), (2, 2, 2, 2), (4, 3), (6, 2), (6, 3), (4, 2, 2)]


@pytest.mark.parametrize("dims", EVEN_LONGEST, ids=str)
def test_bisection_equals_brute_force_min_cut(dims):
    assert bisection(dims) == _min_balanced_cut(dims)


@pytest.mark.parametrize(
    ("dims", "single_cable"), [((2, 2), 2), ((2, 2, 2), 4), ((2, 2, 2, 2), 8), ((4, 2), 4), ((4, 4), 8)], ids=str
)
def test_length_2_convention(dims, single_cable):
    """One cable per length-2 ring matches the formula only when a longer ring is the one cut."""
    assert _min_balanced_cut(dims, length2_links=1) == single_cable
    assert (single_cable == bisection(dims)) == (max(dims) > 2)


@pytest.mark.parametrize(("dims", "brute"), [((3, 3), 8), ((3, 2, 2), 12), ((3, 2), 6), ((5, 2), 6)], ids=str)
def test_odd_longest_dimension_bound_not_attained(dims, brute):
    """With an odd longest ring Theorem 3.1's bound is strict, and bisection() refuses the torus."""
    assert _min_balanced_cut(dims) == brute
    assert isoperimetric_bound(dims, math.prod(dims) // 2) < brute
    with pytest.raises(TopologyError, match="even longest dimension"):
        bisection(dims)


# --- errors and CLI ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: parse_machine("4x4x3"), "AxBxCxD"),
        (lambda: parse_machine((4, 0, 3, 2)), ">= 1"),
        (lambda: geometries(JUQUEEN, 9), "no cuboid of 9 midplanes"),
        (lambda: geometries(MIRA, 97), "at most the machine's 96"),
        (lambda: geometries(MIRA, 0), ">= 1"),
        (lambda: bisection((4, 0)), ">= 1"),
        (lambda: isoperimetric_bound((4, 4), 9), "t must be"),
    ],
)
def test_bad_input_raises(call, message):
    with pytest.raises(TopologyError, match=message):
        call()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paper_models.bgq", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_cli_text_and_json():
    out = _cli("--machine", "juqueen", "--midplanes", "6")
    assert out.returncode == 0, out.stderr
    assert "best  3x2x1x1 midplanes = 12x8x4x4x2 nodes, bisection 512 links" in out.stdout
    assert "worst 6x1x1x1 midplanes = 24x4x4x4x2 nodes, bisection 256 links" in out.stdout
    out = _cli("--machine", "4x4x3x2", "--nodes", "12288", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["midplanes"] == 24 and data["nodes"] == 12288
    assert data["best"] == {"geometry": [3, 2, 2, 2], "node_dims": [12, 8, 8, 8, 2], "bisection": 2048}
    assert data["worst"] == {"geometry": [4, 3, 2, 1], "node_dims": [16, 12, 8, 4, 2], "bisection": 1536}


@pytest.mark.parametrize(
    "args",
    [
        ["--machine", "0x2x2x2", "--midplanes", "1"],
        ["--machine", "7x2x2", "--midplanes", "1"],
        ["--machine", "bluegene", "--midplanes", "1"],
        ["--machine", "mira", "--nodes", "1000"],
        ["--machine", "juqueen", "--nodes", "4608"],
        ["--machine", "mira", "--midplanes", "97"],
        ["--machine", "mira", "--midplanes", "-3"],
        ["--machine", "mira", "--midplanes", "two"],
    ],
    ids=lambda a: " ".join(a),
)
def test_cli_bad_input(args):
    out = _cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bgq: error: ")


def test_main_in_process(capsys):
    assert main(["--machine", "sequoia", "--midplanes", "48"]) == 0
    assert "best  4x3x2x2" in capsys.readouterr().out
