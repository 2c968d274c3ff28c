"""Several jobs on one machine: each job's MPI app recorded once as a time-independent trace on its own hosts, then
all the jobs replayed together in one simulation (``simgrid_cpp/jobs_run.cpp``), each as an MPI application of its
own, so that they share the platform's links as the jobs of a shared machine do; and each job replayed alone on the
same hosts, for its slowdown. Or online: the jobs' app binaries themselves run together in one simulation, then each
alone (``jobs_run --online``, SimGrid patch 0018), with the same times where both apply (``tests/test_jobs.py``).

The hosts of the jobs come from one allocation policy of the machine (``generators.allocation``: ``contiguous``,
``random:SEED``, ...): the jobs, in their order, each take the next free hosts of the policy's order, as a batch
scheduler fills a machine; or a job gives its own placement (a host list, or a named placement such as a torus's
``block:4x4x1@0,0,1``), which no other job may share. A background job (no rank count) takes every host the others
leave free: traffic of the rest of the machine, whose intensity is its app's (shift permutations, an all-to-all, a
hot spot; ``--interval`` of shift and hotspot: a rate).

What a job's time means: from its start to its last rank's end, replayed (the replay of a trace reproduces the app's
own run: ``simulation.replay``) or online; alone, it is exactly the simulated time of the app run by smpirun on the
same hosts (``tests/test_jobs.py``). Every job of a simulation has the same SMPI options: a simulation has one set
(its collective algorithms, its network model).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generators import TopologyError
from generators import place_ranks
from generators import platform_files
from generators import write_hostfile
from generators.errors import missing_build
from generators.model import Platform
from study_runner.errors import StudyError
from study_runner.paths import BIN_DIR
from study_runner.paths import app_not_found
from study_runner.simulation.cache import file_digest
from study_runner.simulation.prepared import Simulation
from study_runner.simulation.prepared import Steps
from study_runner.simulation.prepared import command_key
from study_runner.simulation.replay import REPLAY_OPTIONS
from study_runner.simulation.replay import TraceStore
from study_runner.simulation.replay import trace_recording
from study_runner.simulation.simgrid_options import cfg
from study_runner.simulation.smpi import STANDARD_OPTIONS
from study_runner.simulation.smpi import binary_options
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.smpi import simgrid_version

__all__ = [
    "JOBS_RUN",
    "MEASURED",
    "TOGETHER",
    "Job",
    "JobTime",
    "SharedMachine",
    "allocate",
    "cables_per_job",
    "jobs_file_word",
    "jobs_run_options",
    "prepare_jobs",
    "run_jobs",
]

JOBS_RUN = BIN_DIR / "jobs_run"
"""topolab's replayer of several jobs (built by ``scripts/build``)."""

MEASURED = "measured"
"""The name of a study run's or sweep point's own job among its neighbours (``RunSpec.neighbours``)."""

JOBS_RUN_PREFIX = "jobs_run: "
"""How each job's times start on the stderr of ``jobs_run`` (one JSON object a line after it)."""

ONLINE_OPTIONS = (cfg("smpi/privatization:ON"),)
"""What smpirun gives an app's simulation (each rank its own copy of the app's globals), given to online jobs."""

SMPIRUN_OPTIONS = (cfg("precision/timing:1e-9"), cfg("network/model:SMPI"))
"""What smpirun gives every simulation before the user's options (its script): the replayer gets them too, so that a
job alone takes exactly the time of ``smpirun -replay``."""


@dataclass(frozen=True)
class Job:
    """One MPI job: an app with its arguments, its ranks, when it starts, and where (its own placement, or None: the
    next free hosts of the machine's allocation policy). ``ranks`` None: the background job, on every host the
    other jobs leave free (``ranks_per_node`` ranks each), allocated last."""

    name: str
    app: Path
    args: tuple[str, ...]
    ranks: int | None
    start_s: float = 0.0
    ranks_per_node: int = 1
    placement: tuple[str, ...] | str | None = None


@dataclass(frozen=True)
class JobTime:
    """A job's time shared with the others and alone on the same hosts (simulated seconds), and the hosts it ran on."""

    job: str
    ranks: int
    hosts: tuple[str, ...]
    shared_s: float
    alone_s: float

    @property
    def slowdown(self) -> float:
        """Shared over alone: 1 when nothing of the other jobs reached this one. A job that takes no simulated time
        alone (no message that costs time: an app with nothing to do) has slowdown 1 when it takes none shared
        either, and infinity when the others made it take some."""
        if self.alone_s == 0:
            return 1.0 if self.shared_s == 0 else math.inf
        return self.shared_s / self.alone_s

    def record(self) -> dict[str, object]:
        """The job's JSON record: its name, ranks, hosts, times and slowdown."""
        return {"job": self.job, "ranks": self.ranks, "hosts": len(self.hosts), "alone_s": self.alone_s,
                "shared_s": self.shared_s, "slowdown": self.slowdown}  # fmt: skip


def allocate(
    platform: Platform, jobs: Sequence[Job], allocation: str = "contiguous", occupied: Sequence[Sequence[str]] = ()
) -> dict[str, list[str]]:
    """The host of each rank of each job, by job name; ``occupied``: hosts that idle jobs of the machine hold
    (``generators.allocation.fill``). ``TopologyError`` for a job that does not fit, a placement the platform does not
    have, or two jobs on one host."""
    owner: dict[str, str] = {host: "the machine's other jobs" for hosts in occupied for host in hosts}
    order = place_ranks(platform, None, allocation)
    placed: dict[str, list[str]] = {}
    if sum(job.ranks is None for job in jobs) > 1:
        raise TopologyError("one background job at most (ranks left out: every host the other jobs leave free)")
    # own placements first (the policy fills around them), the background last
    for job in sorted(jobs, key=lambda job: (job.placement is None, job.ranks is None)):
        free = [host for host in order if host not in owner]
        if job.ranks is None:
            if not free:
                raise TopologyError(f"job {job.name}: the other jobs leave no host of {platform.name} free")
            hosts = place_ranks(platform, None, free, job.ranks_per_node)
        elif job.placement is not None:
            hosts = place_ranks(platform, job.ranks, job.placement, job.ranks_per_node)
        else:
            needed = math.ceil(job.ranks / job.ranks_per_node)
            if needed > len(free):
                raise TopologyError(
                    f"job {job.name}: {job.ranks} ranks need {needed} hosts; {len(free)} of {platform.name}'s "
                    f"{len(order)} are free"
                )
            hosts = place_ranks(platform, job.ranks, free[:needed], job.ranks_per_node)
        for host in dict.fromkeys(hosts):
            if host in owner:
                raise TopologyError(f"jobs {owner[host]} and {job.name} both use {host}: a job's hosts are its own")
            owner[host] = job.name
        placed[job.name] = hosts
    return {job.name: placed[job.name] for job in jobs}


def jobs_file_word(word: str) -> str:
    """``word`` (a trace file, a binary, an argument) as ``simgrid_cpp/jobs_run.cpp`` reads it from a line of words:
    a blank or a ``%`` as ``%XX``, each byte of its UTF-8, and the empty word as a lone ``%``.

    >>> jobs_file_word("/tmp/a b/trace"), jobs_file_word("50%"), jobs_file_word("")
    ('/tmp/a%20b/trace', '50%25', '%')
    """
    if not word:
        return "%"
    return "".join("".join(f"%{byte:02X}" for byte in c.encode()) if c.isspace() or c == "%" else c for c in word)


def jobs_run_options(jobs: Sequence[Job], options: Sequence[str], online: bool) -> tuple[str, ...]:
    """Every SimGrid option ``jobs_run`` gets after its jobs file, for ``jobs`` with the SMPI ``options`` of the
    simulation after topolab's standard ones: what smpirun gives every simulation, and the replay's options, or
    online what smpirun would give each binary (a Fortran runtime privatized), for all of them."""
    if online:
        needed = dict.fromkeys(option for job in jobs for option in binary_options(job.app, options))
        return (*ONLINE_OPTIONS, *SMPIRUN_OPTIONS, *STANDARD_OPTIONS, *options, *needed)
    return (*SMPIRUN_OPTIONS, *STANDARD_OPTIONS, *options, *REPLAY_OPTIONS)


@dataclass(frozen=True)
class SharedMachine:
    """Jobs prepared to simulate together (:func:`prepare_jobs`): every job (its binary resolved) with the host of
    each of its ranks, the recording of each replayed job's trace (by job name; none online, where the binaries
    themselves run), the store its traces go to, and the steps that time them (:class:`Steps`, each step's argv what
    runs, its jobs file written when prepared): the jobs together, then each alone. Its key, history key and
    provenance are its steps'; the recordings enter them through the traces the steps read, by their keys."""

    jobs: tuple[Job, ...]
    hosts: Mapping[str, tuple[str, ...]]
    recordings: Mapping[str, Simulation]
    steps: Steps
    traces: TraceStore | None

    def time(self, workdir: Path, timeout: float = 3600) -> list[JobTime]:
        """Run, in ``workdir``, each recording whose trace the store lacks, then each step, each within ``timeout``:
        every job's time shared with the others and alone. ``StudyError`` naming the step that failed."""
        for name, recording in self.recordings.items():
            assert self.traces is not None
            if not self.traces.has(recording.key):
                directory = workdir / f"record-{name}"
                directory.mkdir()
                label = f"job {name} (recording its trace)"
                self.traces.record(recording, len(self.hosts[name]), directory, timeout, label)
        every = [job.name for job in self.jobs]
        times = {name: _step_times(step, workdir, timeout, name, every if name == TOGETHER else [name])
                 for name, step in self.steps.steps.items()}  # fmt: skip
        return [JobTime(job.name, len(self.hosts[job.name]), tuple(dict.fromkeys(self.hosts[job.name])),
                        times[TOGETHER][job.name], times[job.name][job.name]) for job in self.jobs]  # fmt: skip


TOGETHER = "together"
"""The name of the step that runs every job at once (each other step runs one job alone, under its name)."""


def prepare_jobs(
    platform_file: Path,
    jobs: Sequence[Job],
    hosts: Mapping[str, Sequence[str]],
    workdir: Path,
    options: Sequence[str] = (),
    online: bool = False,
    traces: TraceStore | None = None,
    prefix: str = "jobs",
    platform_digest: str | None = None,
) -> SharedMachine:
    """Prepare ``jobs`` (each on its ``hosts``: :func:`allocate`'s) to run together on the platform of
    ``platform_file`` with the SMPI ``options`` after topolab's standard ones: each job's hostfile and each step's
    jobs file written in ``workdir`` (named from ``prefix``), each replayed job's recording, its trace kept in
    ``traces`` (by default a store in ``workdir``). ``platform_digest``: the platform file's, if already known."""
    if not JOBS_RUN.is_file():
        raise StudyError(missing_build(str(JOBS_RUN)))
    traces = TraceStore(workdir / "traces") if traces is None and not online else traces
    if platform_digest is None:
        platform_digest = "+".join(file_digest(part) for part in platform_files(Path(platform_file)))
    recordings: dict[str, Simulation] = {}
    runs: dict[str, list[list[str]]] = {}
    read: dict[Path, tuple[str, str]] = {}  # what each file a step names contributes to its key and its history key
    for job in jobs:
        job_hosts = list(hosts[job.name])
        hostfile = workdir / f"{prefix}.{job.name}.hosts"
        write_hostfile(job_hosts, hostfile)
        if online:
            runs[job.name] = [[str(job.app), *job.args]] * len(job_hosts)
            read[job.app] = (file_digest(job.app), f"built {job.app.name}")
            continue
        assert traces is not None
        read_by_recording = {
            Path(platform_file): platform_digest,
            hostfile: file_digest(hostfile),
            job.app: file_digest(job.app),
        }  # its hosts too: a job may time itself (a rate)
        recording = trace_recording(job.app, job.args, platform_file, hostfile, len(job_hosts), options,
                                    read_by_recording)  # fmt: skip
        recordings[job.name] = recording
        files = traces.rank_files(recording.key, len(job_hosts))
        runs[job.name] = [[str(path)] for path in files]
        read.update({path: (f"trace {recording.key} rank {rank}", f"trace {recording.history_key} rank {rank}")
                     for rank, path in enumerate(files)})  # fmt: skip
    played = {job.name: (job.start_s, list(hosts[job.name]), runs[job.name]) for job in jobs}
    shared = jobs_run_options(jobs, options, online)
    steps = {}
    for name in (TOGETHER, *played):
        chosen = played if name == TOGETHER else {name: played[name]}
        jobs_file = workdir / f"{prefix}.{name}.jobs"
        steps[name] = _jobs_step(platform_file, platform_digest, chosen, shared, online, jobs_file, read)
    hosts_of = {job.name: tuple(hosts[job.name]) for job in jobs}
    return SharedMachine(tuple(jobs), hosts_of, recordings, Steps(steps), traces)


def _jobs_step(
    platform_file: Path,
    platform_digest: str,
    played: Mapping[str, tuple[float, list[str], list[list[str]]]],
    options: Sequence[str],
    online: bool,
    jobs_file: Path,
    read: Mapping[Path, tuple[str, str]],
) -> Simulation:
    """The simulation of the ``played`` jobs (name -> start, host of each rank, what each rank runs: its trace, or
    online its binary and arguments) together, by ``simgrid_cpp/jobs_run.cpp`` with every option ``options``
    (:func:`jobs_run_options`): its jobs file written to ``jobs_file``, which stands in its keys for its words with
    each file it names replaced by what that file contributes (``read``: to the key, to the history key)."""
    lines = [[name, repr(start), host, *words] for name, (start, hosts, runs) in played.items()
             for host, words in zip(hosts, runs, strict=True)]  # fmt: skip
    jobs_file.write_text("".join(" ".join(map(jobs_file_word, line)) + "\n" for line in lines), encoding="utf-8")
    words = [word for line in lines for word in (*line, "\n")]
    present = set(words)
    named = {path: read[path] for path in read if str(path) in present}
    binaries = list(named) if online else []  # online the files named are the binaries; replayed, the traces
    files = {
        Path(platform_file): platform_digest,
        JOBS_RUN: file_digest(JOBS_RUN),
        jobs_file: f"jobs {command_key(words, {path: key for path, (key, _) in named.items()})}",
        **{path: named[path][0] for path in binaries},
    }
    history = {jobs_file: f"jobs {command_key(words, {path: past for path, (_, past) in named.items()})}"}
    argv = (str(JOBS_RUN), str(Path(platform_file).absolute()), str(jobs_file.absolute()),
            *(["--online"] if online else []), *options)  # fmt: skip
    return Simulation(argv, files, simgrid_version(), "jobs", built=(JOBS_RUN, *binaries), history=history)


def _step_times(step: Simulation, workdir: Path, timeout: float, name: str, jobs: Sequence[str]) -> dict[str, float]:
    """Each job's simulated time (from its start to its last rank's end) in the step ``step`` called ``name``, which
    runs the ``jobs`` (run in ``workdir``, its ``TMPDIR``: online, SMPI copies the binaries there), by job name."""
    what = "the jobs together" if name == TOGETHER else f"job {name} alone"
    outcome = run_smpirun_measured(step.argv, workdir, timeout, what)
    times = {}
    for line in outcome.stderr.splitlines():
        if line.startswith(JOBS_RUN_PREFIX):
            record = json.loads(line.removeprefix(JOBS_RUN_PREFIX))
            times[record["job"]] = float(record["time_s"])
    if set(times) != set(jobs):
        raise StudyError(f"{what}: the simulation reported the jobs {', '.join(times) or 'none'}")
    return times


def run_jobs(
    platform: Platform,
    platform_file: Path,
    jobs: Sequence[Job],
    workdir: Path,
    allocation: str = "contiguous",
    options: Sequence[str] = (),
    occupied: Sequence[Sequence[str]] = (),
    online: bool = False,
) -> list[JobTime]:
    """Every job's time shared with the others and alone on the same hosts (``platform_file`` is ``platform``
    written), replayed or ``online``: :func:`prepare_jobs` in ``workdir``, then :meth:`SharedMachine.time`.
    ``TopologyError`` for jobs that do not fit (nothing runs), ``StudyError`` for a run that fails."""
    names = [job.name for job in jobs]
    if len(set(names)) != len(names) or not jobs:
        raise TopologyError("jobs need names of their own" if jobs else "no job to run")
    for job in jobs:
        if not job.app.is_file():
            raise StudyError(f"job {job.name}: {app_not_found(job.app, BIN_DIR in job.app.parents)}")
    hosts = allocate(platform, jobs, allocation, occupied)
    workdir.mkdir(parents=True, exist_ok=True)
    machine = prepare_jobs(platform_file, jobs, hosts, workdir, options, online)
    return machine.time(workdir)


def cables_per_job(platform: Platform, flows: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, dict[str, int]]:
    """The cables each job's flows (host pairs) cross under the platform's routes, with how many of its flows cross
    each: what explains a slowdown (the cables two jobs both load) or its absence (none)."""
    from generators.analysis import link_loads

    return {job: {cable: int(n) for cable, n in platform.cables(link_loads(platform, pairs)).items() if n > 0}
            for job, pairs in flows.items()}  # fmt: skip
