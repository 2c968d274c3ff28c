"""A study's generated runs: ``[[generate]]`` grids in the sweep grammar, expanded and validated like ``[[runs]]``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paper_models import vector_combining as vc
from study_runner.errors import StudyError
from study_runner.studies.study import load_study

HEADER = """
name = "demo"
title = "demo"
analysis = "nbl_combine"

[platforms.small]
family = "mesh"
width = 4
height = 4

[platforms.big]
family = "mesh"
width = 8
height = 8
"""

GRID = """
[[generate]]
name = "sweep"
[[generate.zip]]
width = [4, 8]
size = ["small", "big"]
height = [4, 8]
[generate.grid]
length = [100, 100000]
algorithm = ["snake", "fence"]
nbl = ["nominal"]
[generate.run]
id = "scan.{size}.{algorithm}.N{length}"
platform = "{size}"
app = "combine"
ranks = "{width * width}"
args = ["-a", "{algorithm}", "-n", "{length}", "-S", "{model_block(algorithm, length, width, width, 'nominal')}"]
quick = "{width == 4 and length <= 100}"
timeout = 60
"""


FIGURES = """
[figures]  # what nbl_combine's figures read (its FIGURES): checked when the study loads
testjig = "scan.small.snake.N100"
heatmaps = { width = 4, height = 4, nbl = "nominal", length = 100 }
fig7 = { width = 4, height = 4, nbl = "nominal" }
model_vs_sim = ["4x4"]

[[generate]]  # and the grids its figures read (its GRIDS): the sweep above and this one
name = "fig4"
[generate.grid]
width = [4]
height = [4]
length = [10000]
nbl = ["nominal"]
algorithm = ["snake"]
block = [20]
[generate.run]
id = "fig4.{block}"
platform = "small"
app = "combine"
ranks = 16
quick = false
"""


def load(tmp_path: Path, text: str):
    path = tmp_path / "demo.toml"
    path.write_text(HEADER + text + (FIGURES if "scan.{size}" in text else ""))
    return load_study(path)


def test_a_grid_gives_one_run_per_point_zip_first_when_declared_first(tmp_path: Path) -> None:
    study = load(tmp_path, GRID)
    assert [run.id for run in study.runs if run.grid == "sweep"] == [
        "scan.small.snake.N100",
        "scan.small.fence.N100",
        "scan.small.snake.N100000",
        "scan.small.fence.N100000",
        "scan.big.snake.N100",
        "scan.big.fence.N100",
        "scan.big.snake.N100000",
        "scan.big.fence.N100000",
    ]
    big = study.run_at("sweep", size="big", length=100000, algorithm="fence")
    big = next(run for run in study.runs if run.id == big)
    assert big.ranks == 64 and big.platform == "big" and big.timeout == 60 and big.grid == "sweep"
    assert big.variables == {
        "width": 8,
        "size": "big",
        "height": 8,
        "length": 100000,
        "algorithm": "fence",
        "nbl": "nominal",
    }
    # A model value through the analysis's TEMPLATE_FUNCTIONS, rendered as an argument string.
    assert big.args[-1] == str(vc.integer_optimal_block("fence", 100000, 8, 8, vc.DELTA, vc.NOMINAL))
    assert [run.id for run in study.selected_runs(quick=True)] == ["scan.small.snake.N100", "scan.small.fence.N100"]


def test_values_reads_a_grid_axis_in_run_order(tmp_path: Path) -> None:
    study = load(tmp_path, GRID)
    assert study.values("sweep", "length") == [100, 100000]
    assert study.values("sweep", "width", "size") == [(4, "small"), (8, "big")]
    with pytest.raises(StudyError, match="no grid 'sweep' with variables depth"):
        study.values("sweep", "depth")
    with pytest.raises(StudyError, match="no grid 'other'"):
        study.values("other", "length")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('name = "sweep"', 'name = ""'), "name must be a non-empty string"),
        (('name = "sweep"', 'name = "sweep"\nrepeat = 2'), "generate[0]: unknown key 'repeat'"),
        (
            ("{width == 4 and length <= 100}", "{width}"),
            "generate[0].run.quick: 4 is not of type 'boolean'",
        ),
        (
            ("{width * width}", "{width * depth}"),
            "point width=4, size='small', height=4, length=100, algorithm='snake', nbl='nominal'",
        ),
        (("{width * width}", "{width * depth}"), "unknown variable 'depth'"),
        (("model_block(", "optimal_block("), "only arithmetic, comparisons"),
        (('platform = "{size}"', 'platform = "{size}x"'), "unknown platform 'smallx'"),
        (('size = ["small", "big"]', 'size = ["small"]'), "must have one length"),
        (("length = [100, 100000]", "length = []"), "is empty"),
    ],
)
def test_a_bad_grid_is_one_clear_error(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    assert change[0] in GRID
    with pytest.raises(StudyError, match=re.escape(message)):
        load(tmp_path, GRID.replace(*change, 1))


def test_two_grids_need_two_names_and_ids_stay_unique(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="used by no other grid"):
        load(tmp_path, GRID + GRID)
    with pytest.raises(StudyError, match=r"run id 'scan\.big\.fence\.N100' is used twice"):
        load(tmp_path, GRID + GRID.replace('name = "sweep"', 'name = "again"'))


def test_a_study_needs_a_run(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match=r"no run: declare \[\[runs\]\] or \[\[generate\]\]"):
        load(tmp_path, "")
