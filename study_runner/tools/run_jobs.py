"""``scripts/run-jobs JOBS.toml``: several MPI jobs sharing one machine, each job's time shared and alone, and its
slowdown (``study_runner.simulation.jobs``).

A jobs file names the machine (a family and its parameters), the allocation policy that gives the jobs their hosts,
the SMPI options of the simulation, and the jobs::

    allocation = "random:7"            # generators.allocation: contiguous[:START], stride:K, random:SEED, ...
    options = ["--cfg=smpi/alltoall:pair"]  # optional: SMPI options of every job (one simulation has one set)
    [platform]
    family = "dragonfly"
    groups = 5
    routers = 2
    hosts = 4
    global_ports = 2
    [[jobs]]
    name = "a2a"
    app = "alltoall"                   # a topolab app (build/bin), or a path to your own binary
    args = ["-s", "256K", "-i", "1", "-w", "0"]
    ranks = 16
    start_s = 0.0                      # optional: when it starts (simulated seconds)
    ranks_per_node = 1                 # optional
    placement = "block:4x4x1@0,0,1"    # optional: the job's own hosts instead of the policy's next free ones
    [[jobs]]
    name = "noise"
    app = "shift"
    args = ["-R", "1", "-s", "1M"]
    background = true                  # instead of ranks: every host the other jobs leave free
    [occupied]                         # optional: a machine in use (generators.allocation.fill), before the jobs
    sizes = [2, 4, 8]                  # its jobs' sizes in hosts, drawn from seed
    occupancy = 0.75                   # they take at most this fraction of the hosts,
    released = 0.5                     # then this fraction of them end: the holes the jobs above get
    seed = 1
    app = "shift"                      # optional: what its running jobs do (idle without)
    args = ["-R", "1", "-s", "1M"]

Each job's ``app`` is found as a study run's ``app`` is (``simulation.codes.app_binary``): a topolab app of
build/bin by its name, a third-party code (``nas:is``), or a path to your own binary, relative to the working
directory. Each job's app is recorded as a trace on its hosts, then the traces are replayed together and each alone;
with ``--online`` the apps' binaries run together instead (and each alone), with no recording (SimGrid patch 0018).
It prints a table, one row a job (its ranks, hosts, time alone, time shared, slowdown: shared over alone, 1 for a
job that takes no simulated time at all: ``JobTime.slowdown``), and with ``--json FILE`` writes one JSON object a
job.

Every field is checked before anything runs (``studies.schema.JOBS_FILE_SCHEMA``, the grammar of a run's neighbours
for each job). Bad input (a missing or unreadable file, one not UTF-8, malformed TOML, a field of the wrong type or
an unknown one, an SMPI option SimGrid does not know, an unknown family or policy, jobs that share a host, more ranks
than free hosts, a missing binary) is one ``error:`` line naming the file and the field, and exit status 2, with
nothing written; a job whose app fails stops the run with its error, exit status 1; Ctrl-C stops it with one line,
exit status 130 (``simulation.workdirs.stopped``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators import TopologyError
from generators import build_platform
from generators import platform_suffix
from generators import write_platform
from generators.allocation import fill
from generators.files import atomic_write_text
from generators.model import Platform
from study_runner.errors import StudyError
from study_runner.simulation.codes import runnable_binary
from study_runner.simulation.jobs import Job
from study_runner.simulation.jobs import JobTime
from study_runner.simulation.jobs import run_jobs
from study_runner.simulation.simgrid_options import options_problem
from study_runner.simulation.workdirs import STOPPING
from study_runner.simulation.workdirs import stopped
from study_runner.simulation.workdirs import unwinding_signals
from study_runner.simulation.workdirs import work_directory
from study_runner.studies.run_fields import job_of
from study_runner.studies.run_fields import strings
from study_runner.studies.run_fields import whole
from study_runner.studies.schema import JOBS_FILE_SCHEMA
from study_runner.studies.schema import check
from study_runner.studies.study import read_toml

__all__ = ["JobsFile", "main", "read_jobs_file", "table"]

PROG = "scripts/run-jobs"


@dataclass(frozen=True)
class JobsFile:
    """A jobs file read and checked, nothing run: the machine, every job (the file's, then ``[occupied]``'s running
    jobs that have an app), each app's binary found, the allocation policy, the SMPI options, and the hosts that the
    idle jobs of ``[occupied]`` hold."""

    platform: Platform
    jobs: tuple[Job, ...]
    allocation: str
    options: tuple[str, ...]
    occupied: tuple[tuple[str, ...], ...] = ()

    def run(self, workdir: Path, online: bool = False) -> list[JobTime]:
        """Each job's time shared and alone (``simulation.jobs.run_jobs``), the platform written into ``workdir``."""
        platform_file = workdir / f"{self.platform.name}{platform_suffix(self.platform)}"
        write_platform(self.platform, platform_file)
        return run_jobs(self.platform, platform_file, self.jobs, workdir, self.allocation, self.options, self.occupied,
                        online)  # fmt: skip


def _binary(app: str, where: str) -> Path:
    """The binary of a job's ``app``, as a run's (``simulation.codes.runnable_binary``); ``StudyError`` naming
    ``where``."""
    return runnable_binary(app, where).absolute()


def _occupied(
    raw: Mapping[str, Any] | None, platform: Platform, allocation: str, where: str
) -> tuple[tuple[tuple[str, ...], ...], list[Job]]:
    """The machine's jobs of ``[occupied]`` (``generators.allocation.fill``): idle ones as the hosts they hold, or,
    with an app, as jobs of their own (``fill-0``, ...) that run it on their hosts."""
    if raw is None:
        return (), []
    try:
        sizes, seed = [whole(size) for size in raw["sizes"]], whole(raw.get("seed", 0))
        held = fill(platform, allocation, sizes, raw["occupancy"], raw.get("released", 0.0), seed)
    except TopologyError as err:
        raise StudyError(f"{where}: occupied: {err}") from None
    if "app" not in raw:
        return tuple(tuple(hosts) for hosts in held), []
    app, args = _binary(raw["app"], f"{where}: occupied"), strings(raw.get("args", []))
    return (), [Job(f"fill-{n}", app, args, len(hosts), placement=tuple(hosts)) for n, hosts in enumerate(held)]


def read_jobs_file(path: Path) -> JobsFile:
    """The jobs file at ``path``, every field checked against ``studies.schema.JOBS_FILE_SCHEMA``, each app's binary
    found, its SMPI options asked of SimGrid and its machine built: ``StudyError`` naming the file and the bad field
    otherwise (nothing has run)."""
    where = str(path)
    data = read_toml(path, "jobs file")
    check(data, JOBS_FILE_SCHEMA, where)
    names = [raw["name"] for raw in data["jobs"]]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:  # what the schema cannot say (studies.schema.LOADER_ONLY)
        raise StudyError(f"{where}: job name {twice[0]!r} is used twice")
    jobs = [dataclasses.replace(job_of(raw), app=_binary(raw["app"], f"{where}: jobs[{i}]"))
            for i, raw in enumerate(data["jobs"])]  # fmt: skip
    options = strings(data.get("options", []))
    problem = options_problem(options)
    if problem is not None:
        raise StudyError(f"{where}: options: {problem}")
    family, params = data["platform"]["family"], {k: v for k, v in data["platform"].items() if k != "family"}
    try:
        platform = build_platform(family, params)
    except TopologyError as err:
        raise StudyError(f"{where}: platform: {err}") from None
    allocation = data.get("allocation", "contiguous")
    held, fillers = _occupied(data.get("occupied"), platform, allocation, where)
    return JobsFile(platform, (*jobs, *fillers), allocation, options, held)


def table(times: Sequence[JobTime]) -> list[str]:
    """Markdown rows: each job's ranks, hosts, time alone and shared, and its slowdown."""
    rows = ["| job | ranks | hosts | alone (s) | shared (s) | slowdown |", "|---|---:|---|---:|---:|---:|"]
    for t in times:
        hosts = ", ".join(t.hosts[:3]) + (f", ... ({len(t.hosts)})" if len(t.hosts) > 3 else "")
        rows.append(f"| {t.job} | {t.ranks} | {hosts} | {t.alone_s:.6g} | {t.shared_s:.6g} | {t.slowdown:.4f} |")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("jobs", type=Path, help="the jobs file (TOML)")
    parser.add_argument("--json", type=Path, help="also write one JSON object a job to this file")
    parser.add_argument(
        "--online",
        action="store_true",
        help="run the jobs' app binaries together in one simulation instead of replaying their recorded traces",
    )
    args = parser.parse_args(argv)
    try:
        with unwinding_signals():
            return _run(args.jobs, args.json, args.online)
    except STOPPING as failure:  # bad input (exit 2), a failing environment (2), Ctrl-C (130), SIGTERM (143)
        return stopped(PROG, failure)


def _run(path: Path, json_file: Path | None, online: bool) -> int:
    """Read the jobs file, run its jobs, print their table and write their records: 0, or 1 when a job's app failed
    (``StudyError`` for bad input)."""
    jobs_file = read_jobs_file(path)
    with work_directory("jobs") as scratch:
        try:
            times = jobs_file.run(scratch, online)
        except TopologyError as err:  # jobs that do not fit the machine: bad input, found before anything ran
            raise StudyError(f"{path}: {err}") from None
        except StudyError as err:
            print(f"{PROG}: error: {err}", file=sys.stderr)
            return 1
    print("\n".join(table(times)))
    if json_file is not None:
        records = [{"job": t.job, "ranks": t.ranks, "hosts": list(t.hosts), "alone_s": t.alone_s,
                    "shared_s": t.shared_s, "slowdown": t.slowdown} for t in times]  # fmt: skip
        atomic_write_text(json_file, "".join(json.dumps(record) + "\n" for record in records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
