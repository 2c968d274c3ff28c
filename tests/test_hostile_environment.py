"""Hostile environments, property-based (issue 41): what killed and concurrent runs leave in a results directory,
paths with any characters in them, and bad environment variables. For every drawn case:

- **leftovers**: the report lists each study with a readable summary once, nothing hidden, and one warning per
  unreadable summary; the next run's first work directory there removes what dead runs left, nothing of live ones;
- **concurrent writers**: runs putting studies in place while another writes the report, one of them killed at a
  random moment: each study is one writer's complete version, listed once, and nothing is left once a next run
  has started;
- **paths**: a cache, a TMPDIR, a kept directory and a program under a directory of any name run as under plain
  ones (smpirun-on, and a sweep);
- **environment**: a bad ``TOPOLAB_WORKERS``, ``TOPOLAB_MEMORY_LIMIT`` or ``TOPOLAB_CACHE`` is exit 2 and one
  error line; good values (an unusable TMPDIR included: Python and topolab find another) run.

The suite's profile draws a few cases of each (the two that run SimGrid fewest); ``scripts/check-hostile-input``
draws many and counts them in its report (tests/hostile_judge.py).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from study_runner.simulation import workdirs
from study_runner.simulation.workdirs import owner_tag
from study_runner.studies.checks import Check
from study_runner.studies.checks import summary_json
from study_runner.studies.report import write_report
from tests.conftest import BIN
from tests.conftest import REPO
from tests.conftest import pingpong_sweep
from tests.hostile_commands import Command
from tests.hostile_judge import Judge
from tests.hostile_judge import Outcome
from tests.hostile_judge import run_command
from tests.hostile_judge import run_in_process

STUDIES = ("alpha", "beta", "gamma")
UNREADABLE = [  # summary.json texts that are not summaries topolab wrote
    "", "\xff\xfe garbage", "[]", "null", '{"checks": 1}', '{"study": "x", "title": "t"}', '{"checks": [1]}',
    '{"study": "x", "title": "t", "checks": [{}]}', '{"study": 3, "title": "t", "checks": []}',
    summary_json("x", "X", False, [Check("x.c", "c", 1.0, 1.0, "s", 0.1, "exact")])[:40],
]  # fmt: skip
EXAMPLES = settings().max_examples
"""Cases per property in the current profile: the cheap properties draw this many, the costly ones fewer."""


def summary(study: str, value: float) -> str:
    return summary_json(study, study.title(), False, [Check(f"{study}.x", "x", 1.0, value, "s", 0.5, "prediction")])


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


DEAD_TAG = owner_tag().replace(f"{os.getpid()}.", f"{_dead_pid()}.", 1)


@st.composite
def results_trees(draw: st.DrawFn) -> list[tuple[str, str, str | None]]:
    """What a results directory may hold after killed and running runs: (kind, name, summary text or None) with
    kind ``study`` (a study put in place), ``dead``/``live`` (a work directory of a dead or running owner: staged,
    or the old copy of a replace) or ``foreign`` (a hidden directory or a file topolab did not make)."""
    items = []
    for name in draw(st.lists(st.sampled_from(STUDIES), unique=True, max_size=3)):
        text = draw(st.one_of(st.just(summary(name, 1.0)), st.sampled_from(UNREADABLE), st.none()))
        items.append(("study", name, text))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["dead", "live", "foreign"]))
        text = draw(st.one_of(st.just(summary("x", 2.0)), st.sampled_from(UNREADABLE), st.none()))
        items.append((kind, draw(st.sampled_from(STUDIES)), text))
    return items


def _lay_out(results: Path, items: list[tuple[str, str, str | None]]) -> dict[str, list[Path]]:
    made: dict[str, list[Path]] = {"dead": [], "live": [], "foreign": []}
    for number, (kind, name, text) in enumerate(items):
        if kind == "study":
            directory = results / name
        elif kind == "foreign":
            directory = results / f".{name}.tmp-{number}"
            results.mkdir(parents=True, exist_ok=True)
            (results / f"notes-{number}.txt").write_text("not a study\n")
        else:
            tag = owner_tag() if kind == "live" else DEAD_TAG
            suffix = random.Random(number).choice([f"{number}abc", "old"])
            directory = results / f".{name}{'.staged' if suffix != 'old' else ''}.work-{tag}-{suffix}"
        directory.mkdir(parents=True, exist_ok=True)
        if kind != "study":
            made[kind].append(directory)
        if text is not None:
            (directory / "summary.json").write_text(text, encoding="utf-8", errors="surrogateescape")
    return made


def _put_study(results: Path, study: str, value: float) -> None:
    """What the study pipeline does: stage, then put in place (tests/test_results_staging.py does the same)."""
    results.mkdir(parents=True, exist_ok=True)
    with workdirs.work_directory(f"{study}.staged", parent=results) as staging:
        (staging / "summary.json").write_text(summary(study, value), encoding="utf-8")
        workdirs.replace_dir(staging, results / study)


def _listed(report: str) -> list[str]:
    return [line.split("|")[1].strip() for line in report.splitlines() if line.startswith("| ") and "/" in line]


def _leftovers_kind(results: Path, items: list[tuple[str, str, str | None]], made: dict[str, list[Path]]) -> str:
    readable = sorted(name for kind, name, text in items if kind == "study" and text == summary(name, 1.0))
    unreadable = [name for kind, name, text in items if kind == "study" and text is not None and name not in readable]
    stderr_lines: list[str] = []
    outcome = run_in_process(lambda _: _report_into(results, stderr_lines), [])
    if outcome.failure is not None:
        return outcome.failure
    if sorted(_listed(stderr_lines.pop())) != readable:
        return "report lists other studies"
    lines = outcome.stderr.splitlines()
    if len(lines) != len(unreadable) or not all(line.startswith("warning: ") for line in lines):
        return f"bad_stderr: {outcome.stderr}"
    workdirs._SWEPT.discard(results)  # the next run: a new process sweeps the place again
    _put_study(results, "delta", 3.0)
    if any(path.exists() for path in made["dead"]) or not all(path.exists() for path in made["live"] + made["foreign"]):
        return "swept the wrong directories"
    return "ok"


def _report_into(results: Path, out: list[str]) -> int:
    out.append(write_report(results).read_text())
    return 0


def test_results_left_by_killed_and_running_runs(tmp_path: Path) -> None:
    judge = Judge("results leftovers")

    @given(results_trees())
    def case(items: list[tuple[str, str, str | None]]) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as name:
            results = Path(name) / "results"
            made = _lay_out(results, items)
            start = time.perf_counter()
            kind = _leftovers_kind(results, items, made)
            argv = [repr(item) for item in items]
            judge(Command(argv, True), argv, Outcome(0, ""), time.perf_counter() - start, kind)

    case()
    judge.finish()


def _writer(results: str, study: str, first: int, rounds: int) -> None:
    for round_ in range(rounds):
        _put_study(Path(results), study, float(first + round_))


def _reporter(results: str, rounds: int) -> None:
    for _ in range(rounds):
        report = write_report(Path(results)).read_text()
        listed = _listed(report)
        if len(listed) != len(set(listed)):
            raise AssertionError(f"a study listed twice: {listed}")


@st.composite
def writer_schedules(draw: st.DrawFn) -> tuple[list[tuple[str, int]], int, tuple[int, float] | None]:
    """Writers (the study each puts in place, how many times), the reporter's rounds, and which process is killed
    after how many seconds (None: none)."""
    writers = draw(st.lists(st.tuples(st.sampled_from(STUDIES[:2]), st.integers(1, 12)), min_size=2, max_size=3))
    killed = draw(st.one_of(st.none(), st.tuples(st.integers(0, len(writers)), st.floats(0.0, 0.05))))
    return writers, draw(st.integers(0, 12)), killed


def _concurrent_kind(
    results: Path, writers: list[tuple[str, int]], reports: int, killed: tuple[int, float] | None
) -> str:
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_writer, args=(str(results), study, 1000 * number, rounds))
                 for number, (study, rounds) in enumerate(writers)]  # fmt: skip
    processes.append(context.Process(target=_reporter, args=(str(results), reports)))
    for process in processes:
        process.start()
    if killed is not None:
        time.sleep(killed[1])
        with contextlib.suppress(ProcessLookupError):  # it may have ended (and been reaped) already
            os.kill(processes[killed[0]].pid, signal.SIGKILL)
    for process in processes:
        process.join(timeout=120)
    died = [n for n, p in enumerate(processes) if p.exitcode != 0 and (killed is None or n != killed[0])]
    if died:
        return f"process {died[0]} failed (exit {processes[died[0]].exitcode})"
    workdirs._SWEPT.discard(results)
    _put_study(results, "gamma", 0.0)  # the next run
    if list(results.glob(".*.work-*")):
        return f"left {sorted(p.name for p in results.glob('.*.work-*'))}"
    return _final_state(results, writers, killed)


def _final_state(results: Path, writers: list[tuple[str, int]], killed: tuple[int, float] | None) -> str:
    for study in {study for study, _ in writers}:
        if not (results / study).exists():
            if all(n == (killed or (-1,))[0] for n, (s, _) in enumerate(writers) if s == study):
                continue  # its only writer was killed before it put the study in place
            return f"{study} missing"
        value = json.loads((results / study / "summary.json").read_text())["checks"][0]["simulated"]
        mine = [(1000 * n, rounds) for n, (s, rounds) in enumerate(writers) if s == study]
        lasts = {first + rounds - 1 for first, rounds in mine}
        any_round = {first + r for first, rounds in mine for r in range(rounds)}
        cut = killed is not None and killed[0] < len(writers) and writers[killed[0]][0] == study
        if value not in (any_round if cut else lasts):
            return f"{study} holds {value}, not one writer's version"
    listed = _listed(write_report(results).read_text())
    return "ok" if len(listed) == len(set(listed)) else "report lists a study twice"


def test_concurrent_writers_and_a_kill(tmp_path: Path) -> None:
    judge = Judge("concurrent writers")

    @settings(max_examples=max(5, EXAMPLES // 12), deadline=None)
    @given(writer_schedules())
    def case(schedule: tuple[list[tuple[str, int]], int, tuple[int, float] | None]) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as name:
            results = Path(name) / "results"
            start = time.perf_counter()
            kind = _concurrent_kind(results, *schedule)
            judge(Command([repr(schedule)], True), [repr(schedule)], Outcome(0, ""), time.perf_counter() - start, kind)

    case()
    judge.finish()


NAMES = st.text(st.characters(exclude_characters="/\0", exclude_categories=("Cs",)), min_size=1, max_size=8).filter(
    lambda name: name not in (".", "..")
)
"""A directory name: any characters a Linux file name can hold."""


def _records(outcome: Outcome) -> list[dict[str, object]]:
    return [json.loads(line) for line in outcome.stdout.splitlines() if line.startswith("{")]


def _paths_kind(base: Path, sweep: bool) -> tuple[str, Outcome]:
    for sub in ("tmp", "app"):
        (base / sub).mkdir(parents=True)
    app = base / "app" / base.name
    shutil.copy(BIN / "pingpong", app)
    env = {**os.environ, "TMPDIR": str(base / "tmp"), "TOPOLAB_CACHE": str(base / "cache")}
    smpirun_on = [str(REPO / "scripts" / "smpirun-on"), "crossbar", "--hosts", "2", "--keep", str(base / "kept"),
                  "--", str(app), "-s", "1000", "-i", "2"]  # fmt: skip
    outcome = run_command(smpirun_on, env, base)
    if outcome.failure is not None or outcome.status != 0:
        return outcome.failure or f"exit {outcome.status}", outcome
    if [r.get("bytes") for r in _records(outcome)] != [1000]:
        return "no pingpong record", outcome
    if not sweep:
        return "ok", outcome
    (base / "sweep.toml").write_text(pingpong_sweep([1000, 2000], 2))
    command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(base / "sweep.toml"), "--workers", "1",
               "--results", str(base / "results")]  # fmt: skip
    outcome = run_command(command, {**env, "PYTHONPATH": str(REPO / "scripts")}, REPO, seconds=120)
    if outcome.failure is not None or outcome.status != 0:
        return outcome.failure or f"sweep exit {outcome.status}", outcome
    return "ok" if (base / "results" / "pp" / "points.parquet").is_file() else "no points.parquet", outcome


@pytest.mark.simgrid
def test_paths_with_any_characters(tmp_path: Path) -> None:
    """smpirun-on (its cache, its TMPDIR, its kept files, the program) and a sweep (its results too) under a
    directory of any name (issue 41: a space made every run fail; a TMPDIR with one still did)."""
    judge = Judge("paths")

    @settings(max_examples=max(3, EXAMPLES // 30), deadline=None)
    @given(NAMES, st.integers(0, 3))
    @example("with space, comma", 0)  # the case, in every profile
    @example("\t$'\"*\n", 1)
    @example("F%41 %", 1)  # found by check-hostile-input: libxml2 unescaped a '%' in the platform's path
    def case(name: str, sweep_one_in_four: int) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as place:
            base = Path(place) / name
            start = time.perf_counter()
            kind, outcome = _paths_kind(base, sweep_one_in_four == 0)
            judge(Command([name], True), [name], outcome, time.perf_counter() - start, kind)

    case()
    judge.finish()


WORKERS = {None: True, "": True, "1": True, " 2 ": True, "abc": False, "0": False, "-1": False, "1.5": False,
           "\u0662": False, "2x": False}  # fmt: skip
MEMORY = {None: True, "": True, "4096": True, " 1e4 ": True, "512.5": True, "abc": False, "0": False, "-5": False,
          "nan": False, "inf": False, "1e400": False, "\u0662": False}  # fmt: skip
CACHES = {"fresh": True, "fresh/nested": True, "a file": False, "a file/below": False}
TMPDIRS = {None: True, "tmp, spaced": True, "missing": True, "a file": True}  # Python and topolab find another
READS = {"sweep": ("workers", "memory", "cache"), "smpirun-on": ("cache",)}
"""Which of the drawn variables each command reads (smpirun-on runs no batch and bounds no memory)."""


@st.composite
def environments(draw: st.DrawFn) -> tuple[str, dict[str, str | None], bool]:
    """A command, the environment it runs in, and whether that environment is good for it."""
    command = draw(st.sampled_from(sorted(READS)))
    drawn = {name: draw(st.sampled_from(list(values))) for name, values in
             (("workers", WORKERS), ("memory", MEMORY), ("cache", CACHES), ("tmpdir", TMPDIRS))}  # fmt: skip
    table = {"workers": WORKERS, "memory": MEMORY, "cache": CACHES}
    return command, drawn, all(table[name][drawn[name]] for name in READS[command])


def _environment_kind(base: Path, command: str, drawn: dict[str, str | None], good: bool) -> tuple[str, Outcome]:
    (base / "a file").write_text("not a directory\n")
    env = {**os.environ, "TOPOLAB_CACHE": str(base / str(drawn["cache"])), "PYTHONPATH": str(REPO / "scripts")}
    for name, value in (("TOPOLAB_WORKERS", drawn["workers"]), ("TOPOLAB_MEMORY_LIMIT", drawn["memory"])):
        env.pop(name, None) if value is None else env.update({name: value})
    if drawn["tmpdir"] is not None:
        env["TMPDIR"] = str(base / drawn["tmpdir"])
        (base / "tmp, spaced").mkdir(exist_ok=True)
    if command == "sweep":
        (base / "sweep.toml").write_text(pingpong_sweep([1000, 2000], 2))
        argv = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(base / "sweep.toml"),
                "--results", str(base / "results")]  # fmt: skip
    else:
        argv = [str(REPO / "scripts" / "smpirun-on"), "crossbar", "--hosts", "2", "--", str(BIN / "pingpong"), "-s",
                "1000", "-i", "2"]  # fmt: skip
    outcome = run_command(argv, env, REPO, seconds=120)
    if outcome.failure is not None:
        return outcome.failure, outcome
    if good:
        done = (base / "results" / "pp" / "points.parquet").is_file() if command == "sweep" else _records(outcome)
        return ("ok" if outcome.status == 0 and done else "valid_refused"), outcome
    errors = [line for line in outcome.stderr.splitlines() if "error:" in line]
    return ("ok" if outcome.status == 2 and len(errors) == 1 else "bad_status_or_stderr"), outcome


@pytest.mark.simgrid
def test_environment_variables(tmp_path: Path) -> None:
    """Good environments run; a bad one is exit 2 and one error line (issue 41: tracebacks, or exit 1)."""
    judge = Judge("environment")

    @settings(max_examples=max(4, EXAMPLES // 30), deadline=None)
    @given(environments())
    def case(drawn: tuple[str, dict[str, str | None], bool]) -> None:
        command, variables, good = drawn
        with tempfile.TemporaryDirectory(dir=tmp_path) as place:
            start = time.perf_counter()
            kind, outcome = _environment_kind(Path(place), command, variables, good)
            argv = [command, repr(variables)]
            judge(Command(argv, good), argv, outcome, time.perf_counter() - start, kind)

    case()
    judge.finish()
