"""Where simulations run: a Dask client on a local cluster, an existing scheduler, or Slurm / PBS jobs.

Every simulation is one Dask task that starts ``smpirun`` and waits for it, so a worker thread per core
is the right shape everywhere: the local cluster runs in this process (threads, nothing to start), and a
batch job runs one Dask worker process with one thread per core it asked for.

Remote workers (``--scheduler`` or batch jobs) must see the same files at the same paths: the sweep's
platforms, hostfiles and app binaries live under the repository (results/ and build/), so the
repository must be on a file system the compute nodes share, with topolab's ``.venv`` on it (the job
script starts workers with this very Python interpreter).

Batch jobs. Before anything is submitted, Slurm is asked whether it would take the job (``sbatch --test-only``): a
controller that cannot be reached or a job it refuses (more memory than a node has, a queue that does not exist) is
one error, before any simulation. The jobs are then kept at their number (Dask's adaptive scaling with a minimum and
a maximum of ``jobs``): a job that ends, is cancelled (``scancel``) or whose worker is killed is replaced by a new
submission, and the simulations it was running go to the other workers (the executor reports both).
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from study_runner.errors import StudyError
from study_runner.simulation.memory import memory_limit_mib
from study_runner.simulation.workdirs import work_directory

MEMORY_RESOURCE = "MEMORY"
"""The Dask resource (MiB) a worker has and each simulation asks for its memory estimate (``simulation.memory``)."""

LOST_WORKER_TIMEOUT = "5s"
"""How long a batch job's lost worker is waited for before its job is submitted anew."""


if TYPE_CHECKING:
    from dask.distributed import Client

__all__ = ["BATCH_SYSTEMS", "BatchJobs", "Engine", "batch_cluster", "check_submission", "job_script"]

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
    log_directory: str | None = None  # the jobs' own output (the batch system's default: the submitting directory)

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

    def memory_mib(self) -> float:
        """The memory a job asks for, MiB: what its worker's simulations may hold at once."""
        from dask.utils import parse_bytes

        return parse_bytes(self.memory.replace(" ", "")) / 2**20

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
            # A simulation in a job holds at most the job's memory: over it, one clear error rather than the batch
            # system's kill (and its job resubmitted again and again).
            "job_script_prologue": [f"export TOPOLAB_MEMORY_LIMIT={self.memory_mib():.0f}", *self.prologue],
            "scheduler_options": scheduler,
        }
        if self.log_directory:
            options["log_directory"] = self.log_directory
        options["worker_extra_args"] = ["--resources", f"{MEMORY_RESOURCE}={self.memory_mib():.0f}"]
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
    import dask

    # A lost job's worker is forgotten (and so replaced: Engine.client) after this; Dask's default is 15 s.
    dask.config.set({"distributed.deploy.lost-worker-timeout": LOST_WORKER_TIMEOUT})
    cluster_class = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}[jobs.system]
    try:
        return cluster_class(**jobs.cluster_options())
    except (ValueError, TypeError) as err:
        raise StudyError(f"invalid {jobs.system} configuration: {err}") from None


def job_script(jobs: BatchJobs) -> str:
    """The batch script one job of ``jobs`` runs (nothing is submitted, and nothing is left on disk: the directory
    of the jobs' output, which dask-jobqueue makes, goes again if it made it)."""
    made = _missing_parents(Path(jobs.log_directory)) if jobs.log_directory else []
    cluster = batch_cluster(jobs)
    try:
        return cluster.job_script()
    finally:
        cluster.close()
        for directory in made:
            with contextlib.suppress(OSError):  # not empty: something else wrote there meanwhile
                directory.rmdir()


def _missing_parents(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


SUBMISSION_CHECK_TIMEOUT_S = 120.0
"""How long ``sbatch --test-only`` may take (it retries an unreachable controller before it gives up)."""


def check_submission(jobs: BatchJobs) -> None:
    """Raise ``StudyError`` unless the batch system would take one job of ``jobs`` (Slurm: ``sbatch --test-only``,
    which submits nothing; PBS has no such test: its job script is all that is checked)."""
    if jobs.system != "slurm":
        return
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise StudyError("sbatch is not on PATH: --slurm needs Slurm's client commands (Debian: slurm-client)")
    with tempfile.NamedTemporaryFile("w", prefix="topolab-job-", suffix=".sh") as script:
        script.write(job_script(jobs))
        script.flush()
        try:
            done = subprocess.run(
                [sbatch, "--test-only", script.name], capture_output=True, text=True, timeout=SUBMISSION_CHECK_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            raise StudyError(
                f"slurm did not answer sbatch --test-only within {SUBMISSION_CHECK_TIMEOUT_S:.0f} s"
            ) from None
    if done.returncode != 0:
        lines = [line.removeprefix("sbatch: error: ") for line in done.stderr.strip().splitlines() if line.strip()]
        raise StudyError(f"slurm would not take the job: {'; '.join(lines[-2:]) or f'sbatch exit {done.returncode}'}")


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

    def memory_mib(self) -> float | None:
        """The memory of each worker, MiB, as a Dask resource that simulations ask for their estimate: the local
        cluster's is the memory limit of one simulation, a batch job's what it asks for; None for workers started
        elsewhere (``--scheduler``), whose resources are not known."""
        if self.batch:
            return self.batch.memory_mib()
        return None if self.scheduler else memory_limit_mib()

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
        from dask.distributed import Client

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
            check_submission(self.batch)
            with batch_cluster(self.batch) as cluster, Client(cluster) as client:
                # Adaptive between jobs and jobs: a job that ends or is cancelled is submitted anew.
                cluster.adapt(minimum_jobs=self.batch.jobs, maximum_jobs=self.batch.jobs)
                yield client
            return
        threads = max(1, min(self.workers, tasks))
        # Its worker's scratch space (dask-scratch-space, else left in TMPDIR) in a work directory of this process:
        # removed afterwards, or by the next run if this one is killed (study_runner.simulation.workdirs).
        import dask

        with (
            work_directory("dask") as scratch,
            dask.config.set({"temporary-directory": str(scratch)}),
            self._local(threads, scratch) as client,
        ):
            yield client

    @contextlib.contextmanager
    def _local(self, threads: int, scratch: Path) -> Iterator[Client]:
        from dask.distributed import Client
        from dask.distributed import LocalCluster

        # In this process, and whatever it listens on only on the loopback interface.
        local = LocalCluster(
            n_workers=1,
            threads_per_worker=threads,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            # No dashboard, and the scheduler's HTTP endpoint on a free loopback port: with None it takes 8787, and
            # a second run at once warns "Port 8787 is already in use".
            dashboard_address="127.0.0.1:0",
            scheduler_kwargs={"dashboard": False},
            resources={MEMORY_RESOURCE: self.memory_mib()},
            local_directory=str(scratch),
        )
        with local as cluster, Client(cluster) as client:
            yield client

    @contextlib.contextmanager
    def watch(self, client: Client, report: Callable[[str], None]) -> Iterator[None]:
        """While the block runs, ``report`` each worker that joins or leaves a batch or remote cluster (the
        scheduler's own events, as they happen); the local cluster's one worker never does."""
        if self._kind == "local":
            yield
            return
        replaced = " and a new job is submitted in its place" if self.batch else ""

        def on_event(event: tuple[float, object]) -> None:
            message = event[1]
            if not isinstance(message, dict):
                return
            worker = message.get("worker")
            if message.get("action") == "add-worker":
                report(f"worker {worker} joined")
            elif message.get("action") == "remove-worker" and not message.get("expected"):
                flight = len(message.get("processing-tasks") or ())
                report(
                    f"worker {worker} left (its job ended or was cancelled, or it was killed): its {flight} "
                    f"simulation(s) in flight go to the other workers{replaced}"
                )

        client.subscribe_topic("all", on_event)
        try:
            yield
        finally:
            client.unsubscribe_topic("all")
