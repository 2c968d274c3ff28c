"""Results put in place never leak and never race (``study_runner.simulation.workdirs``: ``replace_dir`` under the
results directory's lock, staging in work directories that the next run sweeps; ``studies.report``: read under the
same lock, never from a hidden directory)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import traceback
from pathlib import Path

from study_runner.simulation import workdirs
from study_runner.simulation.workdirs import owner_tag
from study_runner.simulation.workdirs import remove_stale
from study_runner.simulation.workdirs import replace_dir
from study_runner.simulation.workdirs import work_directory
from study_runner.studies.checks import Check
from study_runner.studies.checks import summary_json
from study_runner.studies.report import write_report
from tests.conftest import REPO


def summary(study: str, simulated: float) -> str:
    check = Check(f"{study}.x", "x", 1.0, simulated, "s", 0.5, "prediction")
    return summary_json(study, study.title(), False, [check])


def put_study(results: Path, study: str, simulated: float) -> None:
    """What the study pipeline does: stage the study's files, then put the directory in place."""
    results.mkdir(parents=True, exist_ok=True)
    with work_directory(f"{study}.staged", parent=results) as staging:
        (staging / "summary.json").write_text(summary(study, simulated), encoding="utf-8")
        (staging / "runs.csv").write_text("run\n", encoding="utf-8")
        replace_dir(staging, results / study)


def test_a_killed_runs_staging_is_never_read_and_goes_with_the_next_run(tmp_path: Path, monkeypatch) -> None:
    """The issue's finding: a SIGKILL while results were put in place left a staged copy that the report listed
    twice (the stale copy first) and whose empty summary.json made every later report a JSONDecodeError."""
    results = tmp_path / "results"
    put_study(results, "sanity", 1.0)
    child = subprocess.run(  # a process that stages a study and is killed before putting it in place
        [sys.executable, "-c", "import os, signal, sys\n"
         "from pathlib import Path\n"
         "from study_runner.simulation.workdirs import work_directory\n"
         "with work_directory('sanity.staged', parent=Path(sys.argv[1])) as staging:\n"
         "    (staging / 'summary.json').write_text('')\n"
         "    os.kill(os.getpid(), signal.SIGKILL)\n", str(results)],
        cwd=REPO / "scripts", check=False,
    )  # fmt: skip
    assert child.returncode == -signal.SIGKILL
    (left,) = results.glob(".sanity.staged.work-*")
    assert (left / "summary.json").read_text() == ""
    report = write_report(results).read_text()
    assert report.count("| sanity |") == 1 and ".staged" not in report
    monkeypatch.setattr(workdirs, "_SWEPT", set())  # as in the next run (a new process)
    put_study(results, "other", 1.0)  # its first work directory there sweeps the dead one's
    assert not left.exists()
    assert sorted(p.name for p in results.iterdir()) == [".lock", "REPORT.md", "other", "sanity"]


def test_a_summary_that_cannot_be_read_is_left_out_with_one_warning(tmp_path: Path, capsys) -> None:
    put_study(tmp_path, "good", 1.0)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "summary.json").write_text("")
    report = write_report(tmp_path).read_text()
    assert "| good |" in report and "broken" not in report
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"warning: {tmp_path / 'broken' / 'summary.json'} is not a summary topolab wrote")


def test_an_old_copy_of_a_killed_replace_is_swept_or_put_back(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    old = tmp_path / f".sanity.work-{owner_tag(os.getpid()).replace(str(os.getpid()), str(pid), 1)}-old"
    old.mkdir()
    (tmp_path / "sanity").mkdir()  # its replace was done
    assert remove_stale(tmp_path) == [old] and not old.exists()
    (old / "inside").mkdir(parents=True)  # its owner died between its two renames: the study's place is empty
    (tmp_path / "sanity").rmdir()
    assert remove_stale(tmp_path) == [old] and (tmp_path / "sanity" / "inside").is_dir() and not old.exists()


def _writer(results: str, study: str, rounds: int, failures: multiprocessing.Queue) -> None:
    try:
        for round_ in range(rounds):
            put_study(Path(results), study, float(round_))
    except BaseException:
        failures.put(traceback.format_exc(limit=3))


def _reporter(results: str, rounds: int, failures: multiprocessing.Queue) -> None:
    try:
        for _ in range(rounds):
            text = write_report(Path(results)).read_text()
            for study in ("alpha", "beta"):
                if text.count(f"| {study} |") > 1:
                    failures.put(f"{study} listed {text.count(f'| {study} |')} times")
    except BaseException:
        failures.put(traceback.format_exc(limit=3))


def test_two_writers_and_a_reporter_never_race(tmp_path: Path) -> None:
    """The issue's stress test of the real functions: two runs putting the same studies in place while a third
    writes the report, 300 rounds (before: 'Directory not empty', studies listed twice, readers crashing on a
    half-written summary.json)."""
    results = tmp_path / "results"
    put_study(results, "alpha", 0.0)
    put_study(results, "beta", 0.0)
    context = multiprocessing.get_context("fork")
    failures = context.Queue()
    workers = [
        context.Process(target=_writer, args=(str(results), "alpha", 300, failures)),
        context.Process(target=_writer, args=(str(results), "alpha", 300, failures)),
        context.Process(target=_writer, args=(str(results), "beta", 300, failures)),
        context.Process(target=_reporter, args=(str(results), 300, failures)),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    found = []
    while not failures.empty():
        found.append(failures.get())
    assert found == [] and all(worker.exitcode == 0 for worker in workers)
    assert sorted(p.name for p in results.iterdir() if not p.name.startswith(".")) == ["REPORT.md", "alpha", "beta"]
    assert not list(results.glob(".*.work-*"))
    for study in ("alpha", "beta"):
        assert json.loads((results / study / "summary.json").read_text())["checks"][0]["simulated"] == 299.0


def _tree(results: Path) -> dict[str, bytes]:
    return {str(p.relative_to(results)): p.read_bytes() for p in sorted(results.rglob("*")) if p.is_file()}


def test_a_run_that_fails_on_the_way_leaves_results_as_they_were(tmp_path: Path, monkeypatch, capsys) -> None:
    """The issue's finding: on a full disk, a study was swapped in and the family pictures half drawn before the
    error, and REPORT.md was not rewritten. Now a run stages everything and swaps it in at the end: a failure after
    its study was written (here the disk filling while the pictures are drawn) changes nothing under results/."""
    import errno

    from study_runner import cli

    results, cache = tmp_path / "results", tmp_path / "cache"
    argv = ["sanity-alpha-beta", "--quick", "--results", str(results), "--cache", str(cache), "--workers", "1"]
    assert cli.main(argv) == 0
    before = _tree(results)
    assert "REPORT.md" in before and any(name.startswith("sanity-alpha-beta/") for name in before)
    (results / "sanity-alpha-beta" / "summary.json").write_text(summary("sanity-alpha-beta", 1.0), encoding="utf-8")
    before = _tree(results)  # a results tree the run would change: its study's summary is another

    def full_disk(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli, "draw_families", full_disk)
    assert cli.main(argv) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert _tree(results) == before
    assert sorted(p.name for p in results.iterdir() if p.name.startswith(".")) == [".lock"]
