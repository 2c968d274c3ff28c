"""One study from its file to results/ (``study_runner.studies.pipeline`` under ``scripts/repro``): bad input is one
error with no partial results, a failing run leaves earlier results untouched, a distorted model fails its checks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.conftest import run_module
from tests.test_study import GOOD_STUDY
from tests.test_study import write_study


def run_runner(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return run_module("study_runner", *args, tmp_path=tmp_path)


BAD_INPUTS = [
    ("unknown family", lambda s: s.replace('family = "crossbar"', 'family = "hypercube"', 1),
     "unknown topology family 'hypercube'"),
    ("zero hosts", lambda s: s.replace("hosts = 2", "hosts = 0"), "hosts must be an integer >= 1, got 0"),
    ("negative hosts", lambda s: s.replace("hosts = 2", "hosts = -4"), "hosts must be an integer >= 1, got -4"),
    ("non-integer hosts", lambda s: s.replace("hosts = 2", "hosts = 2.5"), "hosts must be an integer >= 1, got 2.5"),
    ("missing binary", lambda s: s.replace('app = "pingpong"', 'app = "no_such_app"'),
     "app binary"),
    ("failing smpirun", lambda s: s.replace('"-i", "1"', '"-i", "0"'),
     "rank 0 (on host-0) returned 2 from main; exit status 2"),
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
    text = (REPO / "studies" / "sanity-alpha-beta.toml").read_text()
    text = text.replace('id = "pingpong"', "id = \"pingpong\"\noptions = ['--cfg=network/model:SMPI']")
    done = run_runner(str(write_study(tmp_path, text)), "--quick", tmp_path=tmp_path)
    assert done.returncode == 1, done.stderr
    summary = json.loads((tmp_path / "results" / "sanity-alpha-beta" / "summary.json").read_text())
    verdicts = {c["id"]: c["pass"] for c in summary["checks"]}
    assert verdicts["nbl.two_exchanges"] is True
    assert not all(verdicts[k] for k in verdicts if k.startswith("alpha_beta."))
    assert "**FAIL**" in (tmp_path / "results" / "REPORT.md").read_text()


def test_traced_runs_are_those_the_study_file_declares(tmp_path: Path, bin_dir: Path) -> None:
    """The study file says which runs are traced (``trace_links``): the batch runs their twins beside the others, the
    analysis draws the traced heatmaps of those it draws, and a traced run no figure reads is reported."""
    text = GOOD_STUDY.replace('args = ["-p", "1", "-s", "1M"]', 'args = ["-p", "1", "-s", "1M"]\ntrace_links = true')
    done = run_runner(str(write_study(tmp_path, text)), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "mini/pingpong (traced): simulated" in done.stderr and "mini/exchange_one (traced): simulated" in done.stderr
    warning = "warning: mini: run exchange_one is traced (trace_links) but no figure reads its link bytes"
    assert done.stderr.count("warning: ") == 1 and warning in done.stderr
    drawn = sorted(p.name for p in (tmp_path / "results" / "mini").glob("heatmap_traced_*.png"))
    assert drawn == ["heatmap_traced_pingpong.png"]
    untraced = run_runner(str(write_study(tmp_path, GOOD_STUDY.replace("trace_links = true\n", ""))), tmp_path=tmp_path)
    assert untraced.returncode == 0 and "(traced)" not in untraced.stderr
    assert not list((tmp_path / "results" / "mini").glob("heatmap_traced_*.png"))


def test_a_study_is_written_beside_the_next_ones_simulations(tmp_path: Path, bin_dir: Path) -> None:
    # scripts/repro writes a study's checks and figures in a thread while the next study simulates: each study's
    # checks are printed under its name; a later study's failing run changes nothing under results/ (issue 61:
    # results/ changes only as a whole).
    first = tmp_path / "first.toml"
    first.write_text(GOOD_STUDY.replace('name = "mini"', 'name = "mini-one"', 1))
    second = tmp_path / "second.toml"
    second.write_text(GOOD_STUDY.replace('name = "mini"', 'name = "mini-two"', 1))
    done = run_runner(str(first), str(second), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    one, two = lines.index("mini-one: checks"), lines.index("mini-two: checks")
    assert one < two and any(line.startswith("  pass ") for line in lines[one:two])
    assert {p.name for p in (tmp_path / "results").iterdir() if p.is_dir()} >= {"mini-one", "mini-two"}
    written = (tmp_path / "results" / "mini-one" / "summary.json").read_bytes()
    second.write_text(second.read_text().replace('"-i", "1"', '"-i", "0"'))
    (tmp_path / "results" / "mini-one").rename(tmp_path / "gone")  # written again only if the whole run completes
    before = sorted(p.name for p in (tmp_path / "results").iterdir())
    failed = run_runner(str(first), str(second), tmp_path=tmp_path)
    assert failed.returncode == 2, failed.stderr
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == before and "mini-one" not in before
    assert (tmp_path / "gone" / "summary.json").read_bytes() == written


def test_a_run_declared_counters_gets_its_counters_and_no_warning(tmp_path: Path, bin_dir: Path) -> None:
    """``counters = true`` on a study run: its twin is simulated, ``counters/<run>/`` written (``links.csv``,
    ``link_series.csv``, a heat map), and its trace counts as read (no warning)."""
    text = GOOD_STUDY.replace('args = ["-p", "1", "-s", "1M"]', 'args = ["-p", "1", "-s", "1M"]\ncounters = true')
    done = run_runner(str(write_study(tmp_path, text)), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "mini/exchange_one (traced): simulated" in done.stderr and "warning: " not in done.stderr
    counters = tmp_path / "results" / "mini" / "counters"
    assert sorted(p.name for p in counters.iterdir()) == ["exchange_one"]
    assert sorted(p.name for p in (counters / "exchange_one").iterdir()) == ["heatmap.png", "link_series.csv",
                                                                              "links.csv"]  # fmt: skip
    rows = (counters / "exchange_one" / "links.csv").read_text().splitlines()
    assert rows[0].startswith("link,kind,bandwidth_Bps,bytes") and float(rows[1].split(",")[3]) > 0
