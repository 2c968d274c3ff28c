"""A study file's ``[[checks]]``: one table, one check per point of a run grid (projected, filtered, keyed) or
of its own axes, evaluated with the analysis's metrics; bad tables are errors when the study loads."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from study_runner.batch.execute import RunResult
from study_runner.errors import StudyError
from study_runner.studies.context import StudyContext
from study_runner.studies.study import Study
from study_runner.studies.study import load_study
from study_runner.studies.study import study_names
from tests.conftest import exact_check

HEADER = """
name = "demo"
title = "demo"
analysis = "none"

[platforms.pair]
family = "crossbar"
hosts = 2

[[generate]]
name = "scan"
[[generate.zip]]
servers = ["12", "24B"]
ranks = [2, 2]
[generate.grid]
algorithm = ["mlfm", "pairwise"]
size = [16, 256]
[generate.run]
id = "a2a.{servers}.{algorithm}.{size}M"
platform = "pair"
app = "alltoall"
ranks = "{ranks}"
quick = "{size == 16}"
"""

FIELDS = """
unit = "MiB/s"
tolerance = 0.1
kind = "prediction"
what = "throughput, {servers} servers"
source = "Fig. 3"
"""


def load(tmp_path: Path, checks: str) -> Study:
    path = tmp_path / "demo.toml"
    path.write_text(HEADER + checks)
    return load_study(path)


def context(study: Study, throughputs: dict[str, float]) -> StudyContext:
    """A context whose runs printed ``throughput_mibs`` (only the runs named: the others did not run)."""
    specs = {run.id: run for run in study.runs}
    results = {
        run: RunResult(specs[run], ["host-0", "host-1"], [{"throughput_mibs": value}], False, None)
        for run, value in throughputs.items()
    }
    return StudyContext(study, False, {}, results)


def throughput(ctx: StudyContext, run: str) -> float:
    (record,) = ctx.records(run)
    return float(record["throughput_mibs"])


METRICS: dict[str, Any] = {"throughput": throughput}


def test_a_check_per_run_of_the_grid_in_the_loop_order_over_names(tmp_path: Path) -> None:
    study = load(
        tmp_path,
        '[[checks]]\ngrid = "scan"\nover = ["servers", "size", "algorithm"]\nid = "fig3.{servers}.{algorithm}.{size}"\n'
        'simulated = "{throughput(run)}"\nvalue = 3770\n' + FIELDS,
    )
    assert [c.id for c in study.checks] == [
        "fig3.12.mlfm.16", "fig3.12.pairwise.16", "fig3.12.mlfm.256", "fig3.12.pairwise.256",
        "fig3.24B.mlfm.16", "fig3.24B.pairwise.16", "fig3.24B.mlfm.256", "fig3.24B.pairwise.256",
    ]  # fmt: skip
    assert [run.id for run in study.runs][:2] == ["a2a.12.mlfm.16M", "a2a.12.mlfm.256M"]  # the runs keep theirs
    assert study.checks[1].runs == ("a2a.12.pairwise.16M",)
    assert study.checks[1].fields["what"] == "throughput, 12 servers"


def test_projection_filter_named_runs_and_a_keyed_value(tmp_path: Path) -> None:
    study = load(
        tmp_path,
        """
[[checks]]
grid = "scan"
over = ["servers"]
when = "{size == 256}"
runs = { fast = "a2a.{servers}.mlfm.256M", slow = "a2a.{servers}.pairwise.256M" }
id = "ratio.{servers}"
simulated = "{throughput(fast) / throughput(slow)}"
value = 1.0
relation = "above"
"""
        + FIELDS
        + """
[checks.by.servers.24B]
value = 2.2
relation = "within"
what = "the 2.2x"
""",
    )
    ratio_12, _ = study.checks
    assert (ratio_12.id, ratio_12.runs) == ("ratio.12", ("a2a.12.mlfm.256M", "a2a.12.pairwise.256M"))
    assert "run" not in ratio_12.variables and ratio_12.variables["ranks"] == 2  # constant over the projection
    runs = {"a2a.12.mlfm.256M": 3000.0, "a2a.12.pairwise.256M": 1500.0}
    runs |= {"a2a.24B.mlfm.256M": 3300.0, "a2a.24B.pairwise.256M": 1500.0}
    first, second = context(study, runs).declared_checks(METRICS)
    assert (first.simulated, first.published, first.relation, first.passed) == (2.0, 1.0, "above", True)
    assert (second.simulated, second.published, second.relation, second.what) == (
        2.2,
        2.2,
        "within",
        "the 2.2x (Fig. 3)",
    )


def test_a_published_table_on_axes_of_its_own(tmp_path: Path) -> None:
    table = exact_check(
        id="table6.{nodes}",
        simulated="{nodes // 2}",
        value="{bisection}",
        unit="links",
        what="bisection of {nodes} nodes",
        source="Table 6",
    )
    study = load(tmp_path, table + "[[checks.zip]]\nnodes = [512, 1024]\nbisection = [256, 512]\n")
    checks = context(study, {}).declared_checks({})
    assert [(c.id, c.published, c.simulated, c.passed) for c in checks] == [
        ("table6.512", 256.0, 256.0, True),
        ("table6.1024", 512.0, 512.0, True),
    ]


def test_checks_of_runs_that_did_not_run_are_left_out(tmp_path: Path) -> None:
    study = load(
        tmp_path, '[[checks]]\ngrid = "scan"\nid = "t.{run}"\nsimulated = "{throughput(run)}"\nvalue = 1\n' + FIELDS
    )
    quick = {run.id: 1.0 for run in study.selected_runs(quick=True)}
    assert [c.id for c in context(study, quick).declared_checks(METRICS)] == [f"t.{run}" for run in quick]
    assert len(study.checks) == 8 and len(quick) == 4


def test_the_published_value_a_figure_draws(tmp_path: Path) -> None:
    study = load(
        tmp_path, '[[checks]]\nid = "cal"\nsimulated = "{1}"\nvalue = 3770\n' + FIELDS.replace("{servers}", "x")
    )
    assert study.published_value("cal") == 3770.0
    with pytest.raises(StudyError, match="no published number for check 'other'"):
        study.published_value("other")
    assert study.run_at("scan", servers="24B", algorithm="pairwise", size=16) == "a2a.24B.pairwise.16M"
    with pytest.raises(StudyError, match="has 2 runs at servers='12', size=16, not one"):
        study.run_at("scan", servers="12", size=16)


BASE = '[[checks]]\ngrid = "scan"\nid = "c.{run}"\nsimulated = "{throughput(run)}"\nvalue = 1\n' + FIELDS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BASE + "colour = 1\n", "checks[0]: unknown key 'colour'; known: by, grid"),
        (BASE.replace('unit = "MiB/s"\n', ""), "no 'unit' (in the table or its by tables)"),
        (BASE.replace('grid = "scan"', 'grid = "fig9"'), "grid 'fig9' is not a [[generate]] grid of the file (scan)"),
        (BASE + 'over = ["colour"]\n', "over names 'colour', which is not a variable of the grid"),
        (BASE + 'when = "{size}"\n', "when must be a comparison, got 16"),
        (BASE + "[by.colour.red]\nvalue = 2\n", "by names 'colour', which is not a variable of its points"),
        (BASE + "[by.servers.12]\ncolour = 2\n", "checks[0].by.servers.12: unknown key 'colour'"),
        (BASE.replace('"prediction"', '"guess"'), "checks[0].kind: 'guess' is not one of ['calibration'"),
        (BASE + 'miss = "why"\n', "a miss needs miss_range"),
        (BASE.replace('id = "c.{run}"', 'id = "c"'), "check 'c' is declared twice"),
    ],
)
def test_bad_check_tables_are_errors_when_the_study_loads(tmp_path: Path, text: str, message: str) -> None:
    text = text.replace("[by.", "[checks.by.")
    with pytest.raises(StudyError, match=re.escape(message)):
        load(tmp_path, text)


def test_a_metric_that_is_not_a_number_names_the_check(tmp_path: Path) -> None:
    study = load(
        tmp_path, '[[checks]]\nid = "cal"\nsimulated = "{name}"\nvalue = 1\n' + FIELDS.replace("{servers}", "x")
    )
    with pytest.raises(StudyError, match=r"check cal: .*unknown variable 'name'"):
        context(study, {}).declared_checks({})


def test_the_mlfm_study_declares_its_whole_experiment() -> None:
    """Fig. 3's grid is the file's: 24 all-to-all runs, a check per run and per allocation, none in code."""
    study = load_study("mlfm-alltoall")
    servers = study.values("fig3", "servers")
    assert len([run for run in study.runs if run.grid == "fig3"]) == len(servers) * 2 * 3 == 24
    ids = [check.id for check in study.checks]
    assert len(ids) == 1 + 24 + 2 * len(servers)
    assert Path(study.path or "").read_text().count("\n") < 125  # with its measured wall times (repro --list)


def test_a_check_per_record_of_a_run_and_a_comparison_is_one_when_it_holds(tmp_path: Path) -> None:
    """``records``: the sizes a ping-pong printed are the points (only known when it ran)."""
    table = exact_check(
        records="a2a.12.mlfm.16M",
        id="size.{bytes}",
        simulated="{bytes > 10}",
        value=1,
        unit="bool",
        what="{bytes} B",
        source="",
    )
    study = load(tmp_path, table)
    ctx = context(study, {"a2a.12.mlfm.16M": 1.0})
    records = [{"bytes": 8, "oneway_s": 1e-6}, {"bytes": 64, "oneway_s": 2e-6}]
    ctx.results["a2a.12.mlfm.16M"].records[:] = records
    checks = ctx.declared_checks({})
    assert [(c.id, c.simulated, c.passed, c.what) for c in checks] == [
        ("size.8", 0.0, False, "8 B"),  # an exact check may have no source: its what says it all
        ("size.64", 1.0, True, "64 B"),
    ]
    assert context(study, {}).declared_checks({}) == []  # the run did not run: no check


def test_only_an_exact_check_may_go_without_a_source(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="source must say where the published number is"):
        load(tmp_path, BASE.replace('source = "Fig. 3"', 'source = ""'))


def test_a_check_naming_a_run_the_study_does_not_declare_is_an_error(tmp_path: Path) -> None:
    """Checks are made when their runs ran: a misspelt run would drop its check silently."""
    text = BASE.replace('id = "c.{run}"', 'id = "c.{run}"\nruns = { other = "a2a.{servers}.mlfm.16" }')
    with pytest.raises(StudyError, match=re.escape("names run 'a2a.12.mlfm.16', which the study does not declare")):
        load(tmp_path, text)
    with pytest.raises(StudyError, match="names run 'nothing', which the study does not declare"):
        load(tmp_path, BASE.replace('grid = "scan"\n', 'records = "nothing"\n').replace("{run}", "{bytes}"))


@pytest.mark.parametrize("name", study_names())
def test_every_study_declares_its_checks_in_its_file(name: str) -> None:
    """The study file is the whole experiment: its analysis module makes no check of its own."""
    study = load_study(name)
    analysis = importlib.import_module(f"study_runner.studies.analyses.{study.analysis}")
    assert study.checks and not hasattr(analysis, "checks")
