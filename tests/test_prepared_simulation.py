"""A prepared run is one value (``simulation.prepared.Simulation``): its cache key, the provenance stored with its
result and its history key all come from it, and what runs is its argv. Each thing that changes what runs changes
the key (issue 62: the provenance had drifted from the command, and a run with neighbours was keyed by a command
built only for the key); what does not run leaves it; a rebuild of the same app keeps the history key."""

from __future__ import annotations

import ast
import dataclasses
import shutil
from pathlib import Path

import pytest

from study_runner.batch import execute
from study_runner.batch.execute import PreparedRun
from study_runner.batch.prepare import prepare_runs
from study_runner.batch.runs import PlatformSpec
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.simulation import jobs as jobs_module
from study_runner.simulation import replay as replay_module
from study_runner.simulation.jobs import Job
from study_runner.simulation.prepared import Steps
from study_runner.simulation.replay import REPLAY_OPTIONS
from study_runner.simulation.replay import TraceStore
from study_runner.simulation.smpi import SmpirunOutcome
from tests.conftest import REPO

PLATFORMS = {"four": PlatformSpec("four", "crossbar", {"hosts": 4})}
BASE = RunSpec("base", "four", "pingpong", 2, args=("-s", "1K", "-i", "1", "-w", "0"))


@pytest.fixture
def apps(tmp_path: Path, bin_dir: Path) -> Path:
    """A directory of the apps this test edits: copies of the built pingpong and shift."""
    directory = tmp_path / "apps"
    directory.mkdir()
    for app in ("pingpong", "shift"):
        shutil.copy2(bin_dir / app, directory / app)
    return directory


def prepared_all(
    spec: RunSpec, apps: Path, workdir: Path, platforms: dict[str, PlatformSpec] = PLATFORMS
) -> list[PreparedRun]:
    """The runs ``spec`` gives (itself, and its traced twin if it has one), its app taken from ``apps``."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec = dataclasses.replace(spec, app=str(apps / spec.app))
    return prepare_runs("keys", platforms, [spec], False, apps, workdir, TraceStore(workdir / "traces"))[1]


def prepared(spec: RunSpec, apps: Path, workdir: Path, platforms: dict[str, PlatformSpec] = PLATFORMS) -> PreparedRun:
    (run,) = prepared_all(spec, apps, workdir, platforms)
    return run


def rebuilt(binary: Path) -> None:
    """The same app built again: other bytes (a note appended past its end), the same name."""
    with binary.open("ab") as stream:
        stream.write(b"rebuilt")


def with_neighbour(spec: RunSpec, apps: Path) -> RunSpec:
    return dataclasses.replace(spec, neighbours=(Job("background", apps / "shift", ("-S", "1", "-s", "1K"), None),))


def test_what_runs_changes_the_key(tmp_path: Path, apps: Path) -> None:
    base = prepared(BASE, apps, tmp_path / "base").simulation
    changed = {
        "an argument": prepared(
            dataclasses.replace(BASE, args=("-s", "2K", "-i", "1", "-w", "0")), apps, tmp_path / "a"
        ),
        "an option": prepared(dataclasses.replace(BASE, options=("--cfg=smpi/os:1e-6",)), apps, tmp_path / "o"),
        "the placement": prepared(dataclasses.replace(BASE, placement=("host-2", "host-3")), apps, tmp_path / "p"),
        "the platform file": prepared(
            BASE, apps, tmp_path / "f", {"four": PlatformSpec("four", "crossbar", {"hosts": 4, "link_bw": "1GBps"})}
        ),
    }
    for what, run in changed.items():
        simulation = run.simulation
        assert simulation.key != base.key, what
        assert simulation.history_key != base.history_key, what
        assert simulation.provenance() != base.provenance(), what


def test_a_rebuild_changes_the_key_and_keeps_the_history(tmp_path: Path, apps: Path) -> None:
    for spec in (BASE, with_neighbour(BASE, apps)):
        before = prepared(spec, apps, tmp_path / "before").simulation
        rebuilt(apps / ("shift" if spec.neighbours else "pingpong"))  # a neighbour's binary, or the run's own
        after = prepared(spec, apps, tmp_path / "after").simulation
        assert after.key != before.key and after.history_key == before.history_key
        assert after.files != before.files and after.provenance() != before.provenance()


def test_an_option_group_changes_the_key(tmp_path: Path, apps: Path) -> None:
    base = prepared(BASE, apps, tmp_path / "base").simulation
    (run, twin) = prepared_all(dataclasses.replace(BASE, trace_links=True), apps, tmp_path / "t")
    assert run.key == base.key and twin.key != base.key
    assert any(word.startswith("--cfg=tracing") for word in twin.simulation.argv)
    replayed = prepared(dataclasses.replace(BASE, replay=True), apps, tmp_path / "r")
    assert replayed.key != base.key and [r.key != base.key for r in replayed.recordings] == [True]


def test_a_run_with_neighbours_is_keyed_by_every_option_its_simulations_get(tmp_path: Path, apps: Path) -> None:
    spec = with_neighbour(BASE, apps)
    base = prepared(spec, apps, tmp_path / "base").simulation
    online = prepared(dataclasses.replace(spec, online=True), apps, tmp_path / "online").simulation
    optioned = prepared(dataclasses.replace(spec, options=("--cfg=smpi/os:1e-6",)), apps, tmp_path / "o").simulation
    assert len({base.key, online.key, optioned.key}) == 3
    for step in base.steps.values():  # what the jobs' replay gets: the recordings do not
        assert step.argv[-len(REPLAY_OPTIONS) :] == REPLAY_OPTIONS


def test_what_does_not_run_keeps_the_key(tmp_path: Path, apps: Path) -> None:
    base = prepared(BASE, apps, tmp_path / "base").simulation
    renamed = dataclasses.replace(BASE, id="other", timeout=30.0, size=9.0, grid="g", variables={"n": 1})
    same = prepared(renamed, apps, tmp_path / "elsewhere").simulation
    assert same.key == base.key and same.history_key == base.history_key
    assert same.argv != base.argv  # its files are elsewhere: paths are never in a key


def test_the_provenance_is_what_runs(tmp_path: Path, apps: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The executor runs the simulation's argv, word for word: the provenance stored with the result is it."""
    run = prepared(BASE, apps, tmp_path / "base")
    ran: list[tuple[str, ...]] = []

    def recorded(command: tuple[str, ...], *args: object) -> None:
        ran.append(tuple(command))
        raise StudyError("stop here")

    monkeypatch.setattr(execute, "run_smpirun_measured", recorded)
    assert isinstance(execute._simulate(run), StudyError)
    assert ran == [run.simulation.argv] and run.simulation.provenance()["argv"] == list(ran[0])
    assert set(run.simulation.provenance()["files"]) == {str(run.binary), str(run.platform_file), str(run.hostfile)}


def test_every_entry_point_prepares_through_one_step() -> None:
    """``smpirun_simulation`` is the one step that makes an smpirun command: no other module of the runner calls
    ``smpirun_command`` (smpirun-on spliced its own options into the command it returned; the benchmarks built their
    own), and each entry point that starts smpirun reaches it (run-jobs through its jobs' recordings)."""
    callers = {}
    for path in sorted((REPO / "study_runner").rglob("*.py")):
        nodes = list(ast.walk(ast.parse(path.read_text())))
        names = {node.id for node in nodes if isinstance(node, ast.Name)}
        names |= {alias.name for node in nodes if isinstance(node, ast.ImportFrom) for alias in node.names}
        callers[path.relative_to(REPO).as_posix()] = names  # what it uses (smpi.py defines smpirun_command)
    building = sorted(path for path, names in callers.items() if "smpirun_command" in names)
    assert building == ["study_runner/simulation/prepared.py"]
    entry_points = ("tools/smpirun_on.py", "simulation/replay.py", "tools/bench_sim.py", "tools/bench_ring.py",
                    "batch/prepare.py", "simulation/tracing.py")  # fmt: skip
    assert all("smpirun_simulation" in callers[f"study_runner/{path}"] for path in entry_points)
    # run-jobs and a study's neighbours: one prepare step of shared machines, whose recordings are the replay's
    assert (
        "prepare_jobs" in callers["study_runner/simulation/jobs.py"]
        and "prepare_jobs" in callers["study_runner/batch/prepare.py"]
    )
    assert "trace_recording" in callers["study_runner/simulation/jobs.py"]
    assert "run_jobs" in callers["study_runner/tools/run_jobs.py"]


def test_a_run_with_neighbours_runs_its_recordings_then_its_steps(
    tmp_path: Path, apps: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run among neighbours is a small graph of prepared simulations: each job's recording (only while its trace is
    not stored), then its steps (the jobs together, then each alone). The executor runs their argv, word for word,
    in that order, and nothing else; the run's key is its steps' and each step reads its jobs' traces by key."""
    run = prepared(with_neighbour(BASE, apps), apps, tmp_path / "base")
    assert run.jobs is not None and isinstance(run.simulation, Steps)
    assert list(run.simulation.steps) == ["together", "measured", "background"]
    assert [recording.key for recording in run.recordings] == [r.key for r in run.jobs.recordings.values()]
    for step in run.simulation.steps.values():
        jobs_file = Path(step.argv[2])
        assert any(str(run.jobs.traces.path(r.key)) in jobs_file.read_text() for r in run.recordings)
    ran: list[tuple[str, ...]] = []
    stored: set[str] = set()

    def simulated(command: tuple[str, ...], workdir: Path, *args: object) -> SmpirunOutcome:
        ran.append(tuple(command))
        jobs = [line.split()[0] for line in Path(command[2]).read_text().splitlines()] if command[0].endswith(
            "jobs_run") else []  # fmt: skip
        lines = "".join(f'jobs_run: {{"job": "{job}", "time_s": 1.0}}\n' for job in dict.fromkeys(jobs))
        return SmpirunOutcome("", 0.1, 1.0, lines)

    monkeypatch.setattr(jobs_module, "run_smpirun_measured", simulated)
    monkeypatch.setattr(replay_module, "run_smpirun_measured", simulated)  # the recordings
    monkeypatch.setattr(TraceStore, "has", lambda self, key: key in stored)
    monkeypatch.setattr(TraceStore, "store", lambda self, key, *args: stored.add(key))
    records, _ = execute._simulate(run)  # type: ignore[misc]
    recordings = [recording.simulation.argv for recording in run.recordings]
    assert ran == [*recordings, *(step.argv for step in run.simulation.steps.values())]
    assert records[0]["slowdown"] == 1.0 and records[0]["background_slowdown"] == 1.0
    ran.clear()
    execute._simulate(run)  # the traces are stored now: only the steps run
    assert ran == [step.argv for step in run.simulation.steps.values()]


def test_a_job_recording_is_shared_by_the_runs_that_run_it_on_the_same_hosts(tmp_path: Path, apps: Path) -> None:
    """A job's trace is recorded once for every run that runs the same app on the same hosts of the same platform
    (a neighbour beside runs of other arguments); on other hosts it is another recording (an app that times itself,
    a background job sending at a rate, sends otherwise: ``sweeps/interference-load.toml`` measured it)."""
    spec = with_neighbour(BASE, apps)
    here = prepared(spec, apps, tmp_path / "here")
    other = prepared(dataclasses.replace(spec, args=("-s", "2K", "-i", "1", "-w", "0")), apps, tmp_path / "other")
    own, neighbour = (recording.key for recording in other.recordings)
    assert own != here.recordings[0].key and neighbour == here.recordings[1].key  # only its own app runs otherwise
    there = prepared(dataclasses.replace(spec, placement=("host-2", "host-3")), apps, tmp_path / "there")
    assert not {r.key for r in here.recordings} & {r.key for r in there.recordings}
