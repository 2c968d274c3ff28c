"""Where simulations run: a Dask client on a local cluster, an existing scheduler, or Slurm / PBS jobs.

Every simulation is one Dask task that starts ``smpirun`` and waits for it, so a worker thread per core
is the right shape everywhere: the local cluster runs in this process (threads, nothing to start), and a
batch job runs one Dask worker process with one thread per core it asked for.

Remote workers (``--scheduler`` or batch jobs) must see the same files at the same paths: the sweep's
platforms, hostfiles and app binaries live under the repository (results/ and build/), so the
repository must be on a file system the compute nodes share, with topolab's ``.venv`` on it (the job
script starts workers with this very Python interpreter).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from study_runner.errors import StudyError

if TYPE_CHECKING:
    from dask.distributed import Client

__all__ = ["BATCH_SYSTEMS", "BatchJobs", "Engine", "batch_cluster", "job_script"]

BATCH_SYSTEMS = ("slurm", "pbs")

_WALLTIME = re.compile(r"^(\d+:)?\d{1,2}:\d{2}:\d{2}$")
_MEMORY = re.compile(r"^\d+(\.\d+)?\s*(B|[kKMGTP]i?B)$")


@dataclass(frozen=True)
class BatchJobs:
    """Dask workers started as batch jobs (dask-jobqueue): one worker process per job, one thread per core."""

    system: str
    jobs: int = 1
    cores: int = 1
    memory: str = "4GiB"
    walltime: str = "01:00:00"
    queue: str | None = None
    account: str | None = None
    directives: tuple[str, ...] = ()
    prologue: tuple[str, ...] = ()
    scheduler_host: str | None = None

    def __post_init__(self) -> None:
        if self.system not in BATCH_SYSTEMS:
            raise StudyError(f"batch system must be one of {', '.join(BATCH_SYSTEMS)}, got {self.system!r}")
        for name in ("jobs", "cores"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise StudyError(f"{self.system} {name} must be an integer >= 1, got {value!r}")
        if not _WALLTIME.match(self.walltime):
            raise StudyError(f"{self.system} walltime must be [H]H:MM:SS, got {self.walltime!r}")
        if not _MEMORY.match(self.memory):
            raise StudyError(f"{self.system} memory must be a size such as 4GiB or 500MB, got {self.memory!r}")
        for directive in self.directives:
            if "\n" in directive:
                raise StudyError(f"{self.system} directive must be one line, got {directive!r}")

    def cluster_options(self) -> dict[str, object]:
        """Keyword arguments of the dask-jobqueue cluster class."""
        scheduler: dict[str, object] = {"dashboard_address": ":0"}  # any free port: never a clash
        if self.scheduler_host:
            scheduler["host"] = self.scheduler_host
        options: dict[str, object] = {
            "cores": self.cores,
            "processes": 1,
            "memory": self.memory,
            "walltime": self.walltime,
            "job_name": "topolab-sweep",
            "job_extra_directives": list(self.directives),
            "job_script_prologue": list(self.prologue),
            "scheduler_options": scheduler,
        }
        if self.queue:
            options["queue"] = self.queue
        if self.account:
            options["account"] = self.account
        return options


def _quiet() -> None:
    """Dask's own warnings (e.g. about tasks cancelled after a failure) would bury the one error message."""
    logging.getLogger("distributed").setLevel(logging.ERROR)
    logging.getLogger("dask_jobqueue").setLevel(logging.ERROR)


def batch_cluster(jobs: BatchJobs):  # -> dask_jobqueue.JobQueueCluster
    """The dask-jobqueue cluster for ``jobs`` (its scheduler starts here; no job is submitted yet)."""
    _quiet()
    try:
        import dask_jobqueue
    except ImportError:
        raise StudyError("dask-jobqueue is not installed: run scripts/setup") from None
    cluster_class = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}[jobs.system]
    try:
        return cluster_class(**jobs.cluster_options())
    except (ValueError, TypeError) as err:
        raise StudyError(f"invalid {jobs.system} configuration: {err}") from None


def job_script(jobs: BatchJobs) -> str:
    """The batch script one job of ``jobs`` runs (nothing is submitted)."""
    cluster = batch_cluster(jobs)
    try:
        return cluster.job_script()
    finally:
        cluster.close()


@dataclass(frozen=True)
class Engine:
    """How to get a Dask client: ``local`` (default), ``scheduler`` (an address) or ``batch`` (Slurm/PBS jobs)."""

    workers: int = 1
    scheduler: str | None = None
    batch: BatchJobs | None = None
    _kind: str = field(init=False, default="local")

    def __post_init__(self) -> None:
        if self.scheduler and self.batch:
            raise StudyError("give either a scheduler address or a batch system, not both")
        kind = "scheduler" if self.scheduler else "batch" if self.batch else "local"
        object.__setattr__(self, "_kind", kind)

    def describe(self) -> str:
        """One line for the log: where the simulations run."""
        if self.scheduler:
            return f"the Dask scheduler at {self.scheduler}"
        if self.batch:
            return f"{self.batch.jobs} {self.batch.system} job(s) of {self.batch.cores} core(s)"
        return f"a local Dask cluster of {self.workers} thread(s)"

    @contextlib.contextmanager
    def client(self, tasks: int) -> Iterator[Client]:
        """A connected client (and its cluster, closed on exit) for ``tasks`` independent simulations."""
        from dask.distributed import Client, LocalCluster

        _quiet()
        if self.scheduler:
            try:
                client = Client(self.scheduler, timeout=30)
            except (OSError, TimeoutError) as err:
                raise StudyError(f"cannot connect to the Dask scheduler at {self.scheduler}: {err}") from None
            with client:
                yield client
            return
        if self.batch:
            with batch_cluster(self.batch) as cluster, Client(cluster) as client:
                cluster.scale(jobs=self.batch.jobs)
                yield client
            return
        threads = max(1, min(self.workers, tasks))
        # In this process, and whatever it listens on only on the loopback interface.
        local = LocalCluster(
            n_workers=1,
            threads_per_worker=threads,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            dashboard_address=None,
        )
        with local as cluster, Client(cluster) as client:
            yield client
