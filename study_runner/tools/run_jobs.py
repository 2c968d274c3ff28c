"""``scripts/run-jobs JOBS.toml``: several MPI jobs sharing one machine, each job's time shared and alone, and its
slowdown (``study_runner.simulation.jobs``).

A jobs file names the machine (a family and its parameters), the allocation policy that gives the jobs their hosts,
the SMPI options of the simulation, and the jobs::

    allocation = "random:7"            # generators.allocation: contiguous[:START], stride:K, random:SEED, ...
    options = []                       # SMPI options of every job (one simulation has one set)
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

Each job's app is recorded as a trace on its hosts, then the traces are replayed together and each alone; with
``--online`` the apps' binaries run together instead (and each alone), with no recording (SimGrid patch 0018).
It prints a table, one row a job (its ranks, hosts, time alone, time shared, slowdown), and with ``--json FILE``
writes one JSON object a job. Bad input (an unknown family or policy, jobs that share a host, more ranks than free
hosts, a missing binary) is one ``error:`` line and exit status 2, with nothing written; a job whose app fails
stops the run with its error, exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
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
from study_runner.simulation.codes import app_binary
from study_runner.simulation.jobs import Job
from study_runner.simulation.jobs import JobTime
from study_runner.simulation.jobs import run_jobs
from study_runner.studies.schema import JOB_SCHEMA
from study_runner.studies.schema import check
from study_runner.studies.study import read_toml

__all__ = ["jobs_of", "main"]

_FILE_KEYS = {"allocation", "options", "platform", "jobs", "occupied"}
_OCCUPIED_KEYS = {"sizes", "occupancy", "released", "seed", "app", "args"}


def _job(raw: dict[str, Any], where: str) -> Job:
    """A job table of the file (the grammar of a run's neighbours: ``studies.schema.JOB_SCHEMA``), its binary
    found."""
    try:
        check(raw, JOB_SCHEMA, where)
    except StudyError as err:
        raise TopologyError(str(err)) from None
    try:
        binary = app_binary(str(raw["app"]))
    except StudyError as err:
        raise TopologyError(f"{where}: {err}") from None
    placement = raw.get("placement")
    placement = tuple(placement) if isinstance(placement, list) else placement
    args = tuple(str(word) for word in raw.get("args", []))
    return Job(str(raw["name"]), binary.absolute(), args, raw.get("ranks"), float(raw.get("start_s", 0.0)),
               raw.get("ranks_per_node", 1), placement)  # fmt: skip


def jobs_of(data: dict[str, Any], where: str) -> tuple[dict[str, Any], list[Job], str, tuple[str, ...]]:
    """The platform table, the jobs, the allocation policy and the SMPI options of a jobs file."""
    unknown = sorted(set(data) - _FILE_KEYS)
    if unknown:
        raise TopologyError(f"{where}: unknown key {unknown[0]!r} (a jobs file takes {', '.join(sorted(_FILE_KEYS))})")
    if not isinstance(data.get("platform"), dict) or "family" not in data["platform"]:
        raise TopologyError(f"{where}: [platform] needs a family and its parameters")
    raw_jobs = data.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        raise TopologyError(f"{where}: no [[jobs]]")
    jobs = [_job(raw, f"{where}: jobs[{i}]") for i, raw in enumerate(raw_jobs)]
    options = tuple(str(word) for word in data.get("options", []))
    return data["platform"], jobs, str(data.get("allocation", "contiguous")), options


def occupied_jobs(
    raw: dict[str, Any], platform: Platform, allocation: str, where: str
) -> tuple[list[list[str]], list[Job]]:
    """The machine's jobs of ``[occupied]`` (``generators.allocation.fill``): idle ones as the hosts they hold, or,
    with an app, as jobs of their own (``fill-0``, ...) that run it on their hosts."""
    unknown = sorted(set(raw) - _OCCUPIED_KEYS)
    if unknown or not {"sizes", "occupancy"} <= set(raw):
        what = f"unknown key {unknown[0]!r}" if unknown else "needs sizes and occupancy"
        raise TopologyError(f"{where}: [occupied] {what} (it takes {', '.join(sorted(_OCCUPIED_KEYS))})")
    held = fill(platform, allocation, raw["sizes"], raw["occupancy"], raw.get("released", 0.0), raw.get("seed", 0))
    if "app" not in raw:
        return held, []
    app = _job({"name": "fill", "app": raw["app"], "args": raw.get("args", []), "ranks": 1}, f"{where}: [occupied]")
    return [], [Job(f"fill-{n}", app.app, app.args, len(hosts), placement=tuple(hosts)) for n, hosts in enumerate(held)]


def table(times: Sequence[JobTime]) -> list[str]:
    """Markdown rows: each job's ranks, hosts, time alone and shared, and its slowdown."""
    rows = ["| job | ranks | hosts | alone (s) | shared (s) | slowdown |", "|---|---:|---|---:|---:|---:|"]
    for t in times:
        hosts = ", ".join(t.hosts[:3]) + (f", ... ({len(t.hosts)})" if len(t.hosts) > 3 else "")
        rows.append(f"| {t.job} | {t.ranks} | {hosts} | {t.alone_s:.6g} | {t.shared_s:.6g} | {t.slowdown:.4f} |")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/run-jobs", description=__doc__.splitlines()[0])
    parser.add_argument("jobs", type=Path, help="the jobs file (TOML)")
    parser.add_argument("--json", type=Path, help="also write one JSON object a job to this file")
    parser.add_argument(
        "--online",
        action="store_true",
        help="run the jobs' app binaries together in one simulation instead of replaying their recorded traces",
    )
    args = parser.parse_args(argv)
    try:
        where = str(args.jobs)
        data = read_toml(args.jobs, "jobs file")
        platform_table, jobs, allocation, options = jobs_of(data, where)
        family = platform_table["family"]
        platform = build_platform(family, {k: v for k, v in platform_table.items() if k != "family"})
        held, fillers = occupied_jobs(data["occupied"], platform, allocation, where) if "occupied" in data else ([], [])
        with tempfile.TemporaryDirectory(prefix="topolab-jobs-") as scratch:
            platform_file = Path(scratch) / f"{platform.name}{platform_suffix(platform)}"
            write_platform(platform, platform_file)
            times = run_jobs(
                platform, platform_file, [*jobs, *fillers], Path(scratch), allocation, options, held, args.online
            )
    except (TopologyError, StudyError) as err:
        print(f"scripts/run-jobs: error: {err}", file=sys.stderr)
        return 2 if isinstance(err, TopologyError) else 1
    print("\n".join(table(times)))
    if args.json is not None:
        records = [{"job": t.job, "ranks": t.ranks, "hosts": list(t.hosts), "alone_s": t.alone_s,
                    "shared_s": t.shared_s, "slowdown": t.slowdown} for t in times]  # fmt: skip
        atomic_write_text(args.json, "".join(json.dumps(record) + "\n" for record in records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
