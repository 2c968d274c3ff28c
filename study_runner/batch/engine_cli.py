"""Where simulations run, as command-line options: the one set ``scripts/sweep`` and ``scripts/repro`` share
(``--workers``, ``--scheduler``, ``--slurm`` / ``--pbs`` and the batch jobs' options), and the :class:`Engine` they
give."""

from __future__ import annotations

import argparse
from pathlib import Path

from study_runner.batch.engine import BatchJobs
from study_runner.batch.engine import Engine
from study_runner.batch.execute import default_workers
from study_runner.errors import StudyError

__all__ = ["add_engine_arguments", "engine_from_args"]


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options that choose the engine to ``parser``."""
    parser.add_argument("--workers", type=int, default=None, help="local simulations at once (default: CPU cores)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask scheduler (tcp://host:port)")
    where.add_argument("--slurm", action="store_true", help="start Dask workers as Slurm jobs (dask-jobqueue)")
    where.add_argument("--pbs", action="store_true", help="start Dask workers as PBS jobs (dask-jobqueue)")
    batch = parser.add_argument_group("batch jobs (--slurm / --pbs)")
    batch.add_argument("--jobs", type=int, default=1, help="jobs to start (default: 1)")
    batch.add_argument("--cores", type=int, default=1, help="cores per job, one simulation each (default: 1)")
    batch.add_argument("--memory", default="4GiB", help="memory per job, shared by its simulations (default: 4GiB)")
    batch.add_argument("--walltime", default="01:00:00", help="wall time per job, [H]H:MM:SS (default: 01:00:00)")
    batch.add_argument("--queue", help="queue (Slurm partition)")
    batch.add_argument("--account", help="account / project to charge")
    batch.add_argument("--directive", action="append", default=[], help="an extra #SBATCH / #PBS directive")
    batch.add_argument("--prologue", action="append", default=[], help="a shell line the job runs first")
    batch.add_argument("--scheduler-host", help="address the scheduler listens on (default: the machine's)")
    batch.add_argument("--job-script", action="store_true", help="print the job script and exit (nothing runs)")
    batch.add_argument(
        "--job-logs", type=Path, default=None, help="where the jobs write their own output (default: RESULTS/.jobs)"
    )


def engine_from_args(args: argparse.Namespace, results: Path) -> Engine:
    """The engine the options of :func:`add_engine_arguments` ask for (batch jobs' output under ``results``)."""
    if args.slurm or args.pbs:
        jobs = BatchJobs(
            system="slurm" if args.slurm else "pbs",
            jobs=args.jobs,
            cores=args.cores,
            memory=args.memory,
            walltime=args.walltime,
            queue=args.queue,
            account=args.account,
            directives=tuple(args.directive),
            prologue=tuple(args.prologue),
            scheduler_host=args.scheduler_host,
            log_directory=str(args.job_logs or results / ".jobs"),
        )
        return Engine(batch=jobs)
    if args.job_script:
        raise StudyError("--job-script needs --slurm or --pbs")
    if args.workers is not None and args.workers < 1:
        raise StudyError(f"--workers must be >= 1, got {args.workers}")
    return Engine(workers=args.workers or default_workers(), scheduler=args.scheduler)
