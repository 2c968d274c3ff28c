"""The study runner: study files, checks, bad input with no partial results, cache and determinism."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from study_runner.errors import StudyError
from study_runner.studies.checks import Check, summary_json
from study_runner.studies.report import write_report
from study_runner.studies.study import load_study, study_names
from tests.conftest import REPO

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

[platforms.star]
family = "crossbar"
hosts = 3
nbl = "nominal"

[[runs]]
id = "exchange_one"
platform = "star"
app = "exchange"
ranks = 3
args = ["-p", "1", "-s", "1M"]

[[runs]]
id = "exchange_two"
platform = "star"
app = "exchange"
ranks = 3
args = ["-p", "2", "-s", "1M"]
"""
SANITY = (REPO / "scripts" / "studies" / "sanity-alpha-beta.toml").read_text()
GOOD_STUDY += SANITY[SANITY.index("\n[[checks]]") :]  # the sanity study's checks and figures, on these runs


EXACT_CHECK = (
    '[[checks]]\nid = "x"\nsimulated = "{1}"\nvalue = 1\nunit = ""\ntolerance = 0\nkind = "exact"\n' + 'what = ""\n'
)


def write_study(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


def run_runner(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "study_runner", *args, "--results", str(tmp_path / "results"),
         "--cache", str(tmp_path / "cache")],
        capture_output=True, text=True, cwd=REPO, timeout=900,
    )  # fmt: skip


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
            (lambda s: s.replace("ranks = 2", "ranks = 0"), r"ranks must be an integer >= 1, got 0"),
            (lambda s: s.replace("ranks = 2", 'ranks = "two"'), r"ranks must be an integer >= 1, got 'two'"),
            (lambda s: s.replace("[[runs]]", "[[runs]]\ncolour = 1"), r"runs\[0\] has unknown key 'colour'"),
            (lambda s: s.replace("ranks = 2", "ranks = 2\nsize = 0"), r"run pingpong: size must be a number > 0"),
            (lambda s: s.replace("ranks = 2", "ranks = 2\nsize = 36"), r"run exchange_one has no size: declare"),
            (lambda s: s.replace('id = "pingpong"', ""), r"runs\[0\] is missing 'id'"),
            (
                lambda s: s + '[[runs]]\nid = "pingpong"\nplatform = "pair"\napp = "x"\nranks = 1\n',
                r"'pingpong' is used twice",
            ),
            (lambda s: s.replace("[[runs]]", "[[runs]"), r"malformed TOML"),
            (lambda s: s.replace('name = "mini"', ""), r"missing 'name'"),
            (
                lambda s: s + EXACT_CHECK + 'source = ""\nmiss = ""\n',
                r"published.x.miss must be a non-empty explanation",
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


class TestChecks:
    def test_within_tolerance(self) -> None:
        check = Check("x", "x", published=2.0, simulated=2.015, unit="s", tolerance=0.01, kind="prediction")
        assert check.rel_error == pytest.approx(0.0075)
        assert check.passed

    def test_outside_tolerance(self) -> None:
        check = Check("x", "x", published=2.0, simulated=1.9, unit="s", tolerance=0.01, kind="prediction")
        assert not check.passed
        assert check.as_dict()["pass"] is False

    def test_nan_never_passes(self) -> None:
        assert not Check("x", "x", 1.0, math.nan, "s", 10.0, "exact").passed
        assert not Check("x", "x", 1.0, math.nan, "s", 10.0, "exact", relation="above").passed

    def test_at_least_is_one_sided(self) -> None:
        def at_least(simulated: float) -> bool:
            return Check("x", "x", 3770.0, simulated, "MiB/s", 0.10, "prediction", relation="at_least").passed

        assert at_least(3393.0) and at_least(5000.0)
        assert not at_least(3392.9)

    def test_above_is_strict(self) -> None:
        assert Check("x", "x", 1.0, 1.0001, "", 0.0, "prediction", relation="above").passed
        assert not Check("x", "x", 1.0, 1.0, "", 0.0, "prediction", relation="above").passed
        with pytest.raises(ValueError, match="relation must be one of"):
            Check("x", "x", 1.0, 1.0, "", 0.0, "prediction", relation="below")

    def test_kind_is_validated(self) -> None:
        with pytest.raises(ValueError, match="kind must be one of"):
            Check("x", "x", 1.0, 1.0, "s", 0.1, "guess")

    def test_a_documented_miss_is_reported_not_hidden(self, tmp_path: Path) -> None:
        documented = {"relation": "at_least", "miss": "because", "miss_range": (0.2, 0.3)}
        missed = Check("a.miss", "m", 1.0, 0.25, "", 0.0, "prediction", **documented)  # type: ignore[arg-type]
        assert not missed.passed and missed.accepted and missed.verdict == "MISS"
        assert missed.as_dict()["pass"] is False and missed.as_dict()["miss"] == "because"
        assert "miss_range" not in missed.as_dict()
        fixed = Check("a.miss", "m", 1.0, 1.0, "", 0.0, "prediction", **documented)  # type: ignore[arg-type]
        assert fixed.passed and fixed.verdict == "pass"  # a miss that disappears shows as a pass
        worse = Check("a.miss", "m", 1.0, 0.15, "", 0.0, "prediction", **documented)  # type: ignore[arg-type]
        assert not worse.accepted and worse.verdict == "FAIL" and worse.as_dict()["miss"] == ""  # left its range
        with pytest.raises(ValueError, match="needs both its explanation and its miss_range"):
            Check("a.miss", "m", 1.0, 0.25, "", 0.0, "prediction", miss="because")
        failed = Check("a.fail", "f", 1.0, 0.25, "", 0.0, "prediction", relation="at_least")
        assert not failed.accepted and failed.verdict == "FAIL"
        assert json.loads(summary_json("s", "t", False, [missed]))["passed"] is True
        assert json.loads(summary_json("s", "t", False, [missed, failed]))["passed"] is False
        study = tmp_path / "demo"
        study.mkdir()
        (study / "summary.json").write_text(summary_json("demo", "Demo", False, [missed, fixed]))
        text = write_report(tmp_path).read_text()
        assert "| demo | 1/2 | pass, 1 documented miss(es) |" in text
        assert "MISS (documented)" in text and "- **Miss `a.miss`**: because" in text

    def test_report_lists_every_check(self, tmp_path: Path) -> None:
        study = tmp_path / "demo"
        study.mkdir()
        checks = [
            Check("a.one", "one", 1.0, 1.0, "s", 0.01, "exact").as_dict(),
            Check("a.two", "two", 1.0, 2.0, "s", 0.01, "prediction").as_dict(),
        ]
        (study / "summary.json").write_text(json.dumps({"study": "demo", "title": "Demo", "checks": checks}))
        (study / "fig.png").write_bytes(b"")
        text = write_report(tmp_path).read_text()
        assert "| demo | 1/2 | **FAIL** |" in text
        assert "`a.two` | prediction" in text
        assert "![fig](demo/fig.png)" in text


BAD_INPUTS = [
    ("unknown family", lambda s: s.replace('family = "crossbar"', 'family = "hypercube"', 1),
     "unknown topology family 'hypercube'"),
    ("zero hosts", lambda s: s.replace("hosts = 2", "hosts = 0"), "hosts must be an integer >= 1, got 0"),
    ("negative hosts", lambda s: s.replace("hosts = 2", "hosts = -4"), "hosts must be an integer >= 1, got -4"),
    ("non-integer hosts", lambda s: s.replace("hosts = 2", "hosts = 2.5"), "hosts must be an integer >= 1, got 2.5"),
    ("missing binary", lambda s: s.replace('app = "pingpong"', 'app = "no_such_app"'),
     "app binary"),
    ("failing smpirun", lambda s: s.replace('"-i", "1"', '"-i", "0"'), "smpirun failed with exit status 2"),
    ("more ranks than hosts", lambda s: s.replace("ranks = 2", "ranks = 3"), "3 ranks do not fit on 2 hosts"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "edit", "message"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_one_error_no_partial_results(
    tmp_path: Path, bin_dir: Path, case: str, edit: object, message: str
) -> None:
    path = write_study(tmp_path, edit(GOOD_STUDY))  # type: ignore[operator]
    done = run_runner(str(path), tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("scripts/repro: error:")]
    assert len(errors) == 1 and message in errors[0], done.stderr
    assert "WARNING - " not in done.stderr
    assert "Traceback" not in done.stderr
    results = tmp_path / "results"
    assert not results.exists() or list(results.rglob("*")) == []


def test_failing_run_leaves_earlier_results_untouched(tmp_path: Path, bin_dir: Path) -> None:
    good = write_study(tmp_path, GOOD_STUDY)
    assert run_runner(str(good), tmp_path=tmp_path).returncode == 0
    before = {p: p.read_bytes() for p in (tmp_path / "results").rglob("*") if p.is_file()}
    bad = write_study(tmp_path, GOOD_STUDY.replace('"-i", "1"', '"-i", "0"'))
    assert run_runner(str(bad), tmp_path=tmp_path).returncode == 2
    after = {p: p.read_bytes() for p in (tmp_path / "results").rglob("*") if p.is_file()}
    assert after == before


def test_distorted_network_model_fails_the_checks(tmp_path: Path, bin_dir: Path) -> None:
    # SMPI's default network model (piecewise bandwidth/latency factors) is not the alpha-beta model:
    # the sanity checks must catch it, write the failing summary, and exit 1.
    text = (REPO / "scripts" / "studies" / "sanity-alpha-beta.toml").read_text()
    text = text.replace('id = "pingpong"', "id = \"pingpong\"\noptions = ['--cfg=network/model:SMPI']")
    done = run_runner(str(write_study(tmp_path, text)), "--quick", tmp_path=tmp_path)
    assert done.returncode == 1, done.stderr
    summary = json.loads((tmp_path / "results" / "sanity-alpha-beta" / "summary.json").read_text())
    verdicts = {c["id"]: c["pass"] for c in summary["checks"]}
    assert verdicts["nbl.two_exchanges"] is True
    assert not all(verdicts[k] for k in verdicts if k.startswith("alpha_beta."))
    assert "**FAIL**" in (tmp_path / "results" / "REPORT.md").read_text()


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
