"""The bgq-pairing study's analysis: the furthest-node pairing, its per-link loads, the runs it generates."""

from __future__ import annotations

import math

import pytest

from generators import torus
from paper_models import bgq
from study_runner.analyses import bgq_pairing
from study_runner.study import load_study


@pytest.mark.parametrize(
    ("dims", "busiest"),
    # SimGrid's tie rule sends every antipodal flow of a ring "+" except the one from the middle node: the busiest
    # cable of a ring of L carries L/2 flows, so the longest ring decides.
    [((4, 4, 2), 2), ((8, 4, 2), 4), ((6, 4), 3), ((16, 4, 4, 4, 2), 8), ((8, 8, 4, 4, 2), 4), ((2, 2), 1)],
)
def test_busiest_cable_carries_half_the_longest_ring(dims: tuple[int, ...], busiest: int) -> None:
    platform = torus(dims, zone="compiled")
    loads = bgq_pairing.pairing_link_loads(platform)
    assert max(loads.values()) == busiest == max(dims) // 2
    assert loads and all(platform.link_kind(name) == "cable" for name in loads)


def test_ratio_of_busiest_cables_is_the_bisection_ratio_at_24_midplanes() -> None:
    """Mira, 24 midplanes: 16 / 12 = 2048 / 1536 = 1.33 (the paper's text says 1.50)."""
    current, proposed = bgq.MIRA_CURRENT[24], bgq.MIRA_PROPOSED[24]
    loads = [max(bgq_pairing.pairing_link_loads(torus(bgq.node_dims(g))).values()) for g in (current, proposed)]
    assert loads == [8, 6]
    assert loads[0] / loads[1] == bgq.partition_bisection(proposed) / bgq.partition_bisection(current)


def test_the_pairing_grid_holds_every_compared_geometry_once_at_full_scale() -> None:
    # The grid is data (the study file); the geometries come from the model (comparisons): they must agree.
    study = load_study("bgq-pairing")
    runs = {run.id: run for run in study.runs}
    geometries = {g for row in bgq_pairing.comparisons() for g in row[2:]}
    assert len(runs) == len(geometries) == 14
    for geometry in geometries:
        run = runs[bgq_pairing.run_id(geometry)]
        assert run.ranks == math.prod(bgq.node_dims(geometry)) == math.prod(geometry) * bgq.MIDPLANE_NODES
        assert run.args[:2] == ("-d", ",".join(map(str, bgq.node_dims(geometry))))
        assert run.full_args[-6:] == ("-c", "16", "-i", "26", "-w", "4")
    assert {run.ranks for run in runs.values()} == {2048, 3072, 4096, 6144, 8192, 12288}
    assert sorted(run.id for run in study.selected_runs(quick=True)) == [
        "pairing.16x4x4x4x2",
        "pairing.8x8x4x4x2",
    ]
    assert study.full_benchmark().runs[0].args == study.runs[0].full_args


def test_published_ratios_are_the_tables_bisection_ratios() -> None:
    study = load_study("bgq-pairing")
    for prefix, _, slow, fast in bgq_pairing.comparisons():
        expected = bgq.partition_bisection(fast) / bgq.partition_bisection(slow)
        assert study.published[f"{prefix}.ratio"]["value"] == pytest.approx(expected, rel=1e-12)
