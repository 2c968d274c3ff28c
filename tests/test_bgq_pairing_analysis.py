"""The bgq-pairing study's analysis: the furthest-node pairing, its per-link loads, the runs its file declares."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from generators import bgq
from generators import torus
from study_runner.studies.analyses import bgq_pairing
from study_runner.studies.study import Study
from study_runner.studies.study import load_study
from study_runner.studies.study_checks import DeclaredCheck


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


@pytest.mark.slow
def test_ratio_of_busiest_cables_is_the_bisection_ratio_at_24_midplanes() -> None:
    """Mira, 24 midplanes: 16 / 12 = 2048 / 1536 = 1.33 (the paper's text says 1.50)."""
    current, proposed = bgq.MIRA_CURRENT[24], bgq.MIRA_PROPOSED[24]
    loads = [max(bgq_pairing.pairing_link_loads(torus(bgq.node_dims(g))).values()) for g in (current, proposed)]
    assert loads == [8, 6]
    assert loads[0] / loads[1] == bgq.partition_bisection(proposed) / bgq.partition_bisection(current)


def test_the_template_functions_are_the_model() -> None:
    assert bgq_pairing.geometry("mira", "current", 24) == "4x3x2x1"
    assert bgq_pairing.geometry("mira", "proposed", 24) == "3x2x2x2"
    assert bgq_pairing.geometry("juqueen", "worst", 6) == "6x1x1x1"
    assert bgq_pairing.geometry("juqueen", "best", 6) == "3x2x1x1"
    assert bgq_pairing.node_dims("3x2x1x1") == "12x8x4x4x2"
    assert bgq_pairing.bisection("4x3x2x1") == 1536
    with pytest.raises(ValueError, match="no proposed partition of 32 midplanes on mira"):
        bgq_pairing.geometry("mira", "proposed", 32)


def _ratios(study: Study, figure: str) -> list[DeclaredCheck]:
    return [check for check in study.checks if check.id.startswith(f"{figure}.") and check.runs]


def _compared(midplanes: int, figure: str) -> tuple[bgq.Geometry, bgq.Geometry]:
    """The model's pair of geometries a figure compares: Mira's current and proposed, JUQUEEN's worst and best."""
    if figure == "fig3":
        return bgq.MIRA_CURRENT[midplanes], bgq.MIRA_PROPOSED[midplanes]
    return bgq.worst_partition(bgq.JUQUEEN, midplanes)[0], bgq.best_partition(bgq.JUQUEEN, midplanes)[0]


def test_the_pairing_grid_holds_every_compared_geometry_once_at_full_scale() -> None:
    # The grid and the comparisons are the study file's (a ratio check names its two runs): they must agree with
    # each other and with the model (Fig. 3: the sizes with a proposed partition; Fig. 4: JUQUEEN's sizes up to 24
    # midplanes where worst and best differ).
    study = load_study("bgq-pairing")
    runs = {run.id: run for run in study.runs}
    sizes = {"fig3": sorted(bgq.MIRA_PROPOSED)}
    sizes["fig4"] = [
        m
        for m in sorted({math.prod(g) for g in bgq.partitions(bgq.JUQUEEN)})
        if m <= 24 and bgq.worst_partition(bgq.JUQUEEN, m)[1] != bgq.best_partition(bgq.JUQUEEN, m)[1]
    ]
    geometries = set()
    for figure, expected in sizes.items():
        checks = _ratios(study, figure)
        assert [check.variables["midplanes"] for check in checks] == expected
        for check in checks:
            pair = _compared(check.variables["midplanes"], figure)
            dims = ["x".join(map(str, bgq.node_dims(g))) for g in pair]
            assert check.runs == tuple(study.run_at("pairing", dims=d) for d in dims)
            geometries |= set(pair)
    assert len(runs) == len(geometries) == 14
    for geometry in geometries:
        run = runs[study.run_at("pairing", dims="x".join(map(str, bgq.node_dims(geometry))))]
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
    runs = {run.id: run for run in study.runs}
    for check in _ratios(study, "fig3") + _ratios(study, "fig4"):
        slow, fast = (bgq.bisection(tuple(map(int, runs[run].variables["dims"].split("x")))) for run in check.runs)
        assert check.evaluate(check.value, {}) == pytest.approx(fast / slow, rel=1e-12)


def test_the_study_file_declares_every_table_row_and_the_model_matches_it() -> None:
    """Tables 6 and 7 are checks of the file (no published table, no check in code); each one passes exactly."""
    study = load_study("bgq-pairing")
    tables = [check for check in study.checks if not check.runs]
    assert [check.id for check in tables][:4] == [
        "table6.512.current",
        "table6.1024.current",
        "table6.2048.current",
        "table6.2048.proposed",
    ]
    assert len(tables) == 14 + 25 and len(study.checks) == 39 + 4 + 6
    assert all(check.check(bgq_pairing.TEMPLATE_FUNCTIONS).passed for check in tables)
    assert not hasattr(bgq_pairing, "checks")
    assert Path(study.path or "").read_text().count("\n") < 200
