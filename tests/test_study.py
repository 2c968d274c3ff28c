"""Study files (``study_runner.studies.study``): the shipped ones load, malformed ones are one clear error, and the
files' grids give the runs the paper's models ask for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from study_runner.errors import StudyError
from study_runner.studies.study import load_study
from study_runner.studies.study import study_names
from tests.conftest import REPO
from tests.conftest import Edit
from tests.conftest import apply_edit
from tests.conftest import edit_cases
from tests.conftest import exact_check
from tests.conftest import run_table

GOOD_STUDY = """
name = "mini"
title = "mini study"
analysis = "sanity_alpha_beta"

[platforms.pair]
family = "crossbar"
hosts = 2

[[runs]]
id = "pingpong"
platform = "pair"
app = "pingpong"
ranks = 2
args = ["-s", "1K", "-i", "1", "-w", "0"]
trace_links = true

[platforms.star]
family = "crossbar"
hosts = 3
nbl = "nominal"
"""
GOOD_STUDY += "".join(  # the exchange on the star's 3 ranks, rank 0 with 1 peer, then with 2
    f'\n{run_table(f"exchange_{word}", "exchange", 3, platform="star")}args = ["-p", "{peers}", "-s", "1M"]\n'
    for word, peers in (("one", 1), ("two", 2))
)
SANITY = (REPO / "studies" / "sanity-alpha-beta.toml").read_text()
GOOD_STUDY += SANITY[SANITY.index("\n[[checks]]") :]  # the sanity study's checks and figures, on these runs


EXACT_CHECK = exact_check(id="x", simulated="{1}", value=1, unit="", what="")


def write_study(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


class TestStudyFiles:
    def test_shipped_studies_load(self) -> None:
        names = study_names()
        assert "sanity-alpha-beta" in names
        for name in names:
            study = load_study(name)
            assert study.name == name
            assert study.selected_runs(quick=True)

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            (lambda s: "flavour = 3\n" + s, r"unknown key 'flavour'"),
            (lambda s: s.replace('platform = "pair"', 'platform = "quad"'), r"unknown platform 'quad'"),
            (lambda s: s.replace("ranks = 2", "ranks = 0"), r"runs\[0\].ranks: 0 is less than the minimum of 1"),
            (lambda s: s.replace("ranks = 2", 'ranks = "two"'), r"runs\[0\].ranks: 'two' is not of type 'integer'"),
            (lambda s: s.replace("[[runs]]", "[[runs]]\ncolour = 1"), r"runs\[\d\]: unknown key 'colour'; known: "),
            (lambda s: s.replace("ranks = 2", "ranks = 2\nsize = 0"), r"runs\[0\].size: 0 is less than or equal to"),
            (lambda s: s.replace("ranks = 2", "ranks = 2\nsize = 36"), r"run exchange_one has no size: declare"),
            (lambda s: s.replace('id = "pingpong"', ""), r"runs\[0\]: missing 'id'"),
            (
                lambda s: s + '[[runs]]\nid = "pingpong"\nplatform = "pair"\napp = "x"\nranks = 1\n',
                r"'pingpong' is used twice",
            ),
            (lambda s: s.replace("[[runs]]", "[[runs]"), r"malformed TOML"),
            (lambda s: s.replace('name = "mini"', ""), r"missing 'name'"),
            (
                lambda s: s + EXACT_CHECK + 'source = ""\nmiss = ""\n',
                r"checks\[2\].miss: '' should be non-empty",
            ),
            (
                lambda s: s + EXACT_CHECK + 'source = ""\nmiss = "why"\n',
                r"published.x: a miss needs miss_range = \[low, high\]",
            ),
            (
                lambda s: s + EXACT_CHECK + 'source = ""\nmiss = "why"\nmiss_range = [2, 1]\n',
                r"published.x.miss_range must be \[low, high\] with low <= high",
            ),
        ],
    )
    def test_malformed_study_files(self, tmp_path: Path, edit: object, message: str) -> None:
        path = write_study(tmp_path, edit(GOOD_STUDY))  # type: ignore[operator]
        with pytest.raises(StudyError, match=message):
            load_study(path)

    def test_unknown_study_name(self) -> None:
        with pytest.raises(StudyError, match=r"unknown study 'nope'; known studies: .*sanity-alpha-beta"):
            load_study("nope")


def test_nbl_combine_declares_its_sweep_as_grids() -> None:
    # The study file's grids give every run, pipelined ones at the model's integer optimal block size for the
    # run's platform (f = 1 or f = L), through the analysis's template function model_block.
    from paper_models import vector_combining as vc
    from study_runner.simulation.smpi import message_overhead_options

    study = load_study("nbl-combine")
    runs = {run.id: run for run in study.runs}
    blocks = study.values("fig4", "block")
    assert len(runs) == 2 + 4 * 2 * 5 * 3 + 2 * 2 * len(blocks) and len(blocks) == 19
    assert study.values("sweep", "width", "height") == [(4, 4), (8, 8), (16, 16), (16, 32)]
    # Every run charges the Appendix's alpha as SMPI overheads: the file's literal options are the model's.
    assert all(run.options == tuple(message_overhead_options(vc.DELTA.alpha)) for run in study.runs)
    snake = runs["sweep.16x32.nominal.snake.N500000"]
    assert snake.ranks == 512 and snake.platform == "mesh16x32.nominal" and not snake.quick
    block = vc.integer_optimal_block("snake", 500_000, 16, 32, vc.DELTA, vc.NOMINAL)
    assert snake.args[snake.args.index("-S") + 1] == str(block) == "178"
    # Its size, for the estimate of the time left, is the messages its ranks send: 2 (P - 1) N / S.
    assert snake.size == pytest.approx(2 * 511 * 500_000 / 178)
    assert runs["sweep.16x32.nominal.tree.N500000"].size == 2 * 511
    assert "--cfg=smpi/or:2.7e-05" in snake.options
    quick = {run.id for run in study.selected_runs(quick=True)}
    assert "sweep.4x4.standard.fence.N500000" in quick and "sweep.8x8.standard.fence.N500000" not in quick
    assert not any(".16x" in run_id for run_id in quick)


def test_full_only_runs_run_under_full_only(tmp_path: Path) -> None:
    """A run the default's time budget cannot hold (``full_only``) is left out of the default and quick studies, and
    runs, with its ``full_args``, under --full; a flag that is not a boolean is refused."""
    text = GOOD_STUDY.replace('args = ["-p", "2", "-s", "1M"]', 'args = ["-p", "2", "-s", "1M"]\nfull_only = true')
    study = load_study(write_study(tmp_path, text))
    assert [run.id for run in study.selected_runs(quick=False)] == ["pingpong", "exchange_one"]
    assert [run.id for run in study.selected_runs(quick=True)] == ["pingpong", "exchange_one"]
    full = study.full_benchmark()
    assert [run.id for run in full.selected_runs(quick=False)] == ["pingpong", "exchange_one", "exchange_two"]
    with pytest.raises(StudyError, match=r"runs\[2\].full_only: 'yes' is not of type 'boolean'"):
        load_study(write_study(tmp_path, text.replace("full_only = true", 'full_only = "yes"')))


@edit_cases(
    (('pingpong = "pingpong"', 'pingpnog = "pingpong"'), "figures: unknown key 'pingpnog'; known: pingpong, two_"),
    (('pingpong = "pingpong"', 'pingpong = "ping"'), "[figures] pingpong: 'ping' is not a run of the study"),
    (('two_exchanges = "exchange_two"\n', ""), "figures: missing 'two_exchanges'"),
    # a traced run's twin has an id of its own; a replay has no app run to trace
    (('id = "exchange_one"', 'id = "pingpong.links"'), "run id pingpong.links is the id of run pingpong's traced"),
    (("trace_links = true\n", "trace_links = true\nreplay = true\n"), "run pingpong: trace_links = true needs"),
    (("trace_links = true\n", 'trace_links = true\ncompute = "benchmark"\n'), 'and compute = "off"'),
)
def test_figures_keep_to_what_the_analysis_reads(edit: Edit, message: str, tmp_path: Path) -> None:
    """A study's [figures] is checked against its analysis's FIGURES when it loads (issue 42: a typo was a KeyError
    after every simulation had run)."""
    text = apply_edit(GOOD_STUDY, edit)
    with pytest.raises(StudyError, match=re.escape(message)):
        load_study(write_study(tmp_path, text))


def test_a_study_run_has_the_fields_of_a_sweep_point(tmp_path: Path) -> None:
    """One run grammar (studies.run_fields): a study run takes every field a sweep point does (issue 42: replay was
    accepted in a sweep and refused in a study), with the same rules."""
    from study_runner.studies.schema import RUN_PROPERTIES
    from study_runner.studies.schema import STUDY_RUN_PROPERTIES
    from study_runner.studies.schema import study_schema
    from study_runner.studies.schema import sweep_schema

    sweep_run = sweep_schema()["properties"]["run"]["properties"]
    study_run = study_schema()["properties"]["runs"]["items"]["properties"]
    assert set(sweep_run) == set(RUN_PROPERTIES) and set(study_run) == {*RUN_PROPERTIES, *STUDY_RUN_PROPERTIES}
    replayed = GOOD_STUDY.replace('args = ["-p", "2", "-s", "1M"]', 'args = ["-p", "2", "-s", "1M"]\nreplay = true')
    assert [run.replay for run in load_study(write_study(tmp_path, replayed)).runs] == [False, False, True]
    with pytest.raises(StudyError, match=r"runs\[0\]: replay = true needs compute = \"off\""):
        load_study(
            write_study(
                tmp_path, GOOD_STUDY.replace('"-w", "0"]', '"-w", "0"]\nreplay = true\ncompute = "benchmark"', 1)
            )
        )
