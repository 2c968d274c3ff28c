"""topolab's standard smpirun invocation: its standard options (each written by ``simgrid_options.cfg``, the one
place that writes a SimGrid option's smpirun word) and the command that runs a simulation.

The options give the clean, deterministic alpha-beta network model measured in docs/simgrid.md:
CM02 without SMPI's piecewise bandwidth/latency factors, no cross-traffic, no TCP-gamma window
limit, no cost injected by MPI_Wtime, and computation that costs nothing unless a study injects it.
A one-way message of S bytes on one route then takes ``latency + (S + SMPI_ENVELOPE_BYTES) / bandwidth``.

SimGrid is the one ``scripts/setup`` built for this clone (``.venv/simgrid``, a link to the machine's SimGrid 4.1
prefix): importing this module puts its ``bin`` on ``PATH`` unless it is there already (the shell commands in
``scripts/`` put it first themselves), so ``smpirun`` means that SimGrid for every topolab command.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from study_runner.errors import StudyError
from study_runner.simulation import memory
from study_runner.simulation.binaries import elf_linkage
from study_runner.simulation.simgrid_options import cfg
from study_runner.simulation.simgrid_options import cfgs

__all__ = [
    "EAGER_LIMIT_BYTES",
    "EXACT_COMPUTATION",
    "NO_PRIVATIZATION",
    "NO_STACK_GUARD",
    "SETUP_HINT",
    "SMPI_ENVELOPE_BYTES",
    "STANDARD_OPTIONS",
    "SmpirunOutcome",
    "allow_simulations",
    "binary_options",
    "cfg",
    "collective_option",
    "failure_message",
    "folded_buffer_options",
    "fortran_runtime",
    "message_overhead_options",
    "option_groups",
    "run_smpirun",
    "run_smpirun_measured",
    "simgrid_version",
    "smpi_tmpdir",
    "smpirun_command",
    "start_smpirun",
    "stop_simulations",
]

TOPOLAB_SIMGRID = Path(sys.prefix) / "simgrid"
"""The SimGrid that ``scripts/setup`` built for this clone (a link in the Python environment)."""
SETUP_HINT = "run scripts/setup (it builds SimGrid 4.1 once per machine)"


def _topolab_simgrid_on_path() -> None:
    """Put ``TOPOLAB_SIMGRID/bin`` first on ``PATH`` unless it is on it already (then its place was chosen)."""
    simgrid_bin = TOPOLAB_SIMGRID / "bin"
    path = os.environ.get("PATH", "")
    if simgrid_bin.is_dir() and str(simgrid_bin) not in path.split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([str(simgrid_bin), *filter(None, [path])])


_topolab_simgrid_on_path()

SMPI_ENVELOPE_BYTES = 16
"""Bytes SMPI adds to every point-to-point message (measured: docs/simgrid.md, the sanity-alpha-beta study)."""

EAGER_LIMIT_BYTES = 65536
"""SMPI's default ``smpi/send-is-detached-thresh``: messages below it are sent eagerly (detached)."""

STANDARD_OPTIONS: tuple[str, ...] = (
    *cfgs(
        "network/model:CM02",
        "network/crosstraffic:0",
        "network/TCP-gamma:1e12",
        "smpi/wtime:0",
        "smpi/simulate-computation:no",
        "smpi/coll-selector:ompi",
    ),
    "--log=root.thres:warning",
)


def collective_option(collective: str, algorithm: str) -> str:
    """The option that makes SMPI run ``collective`` (``barrier``, ``allgather``, ...) with ``algorithm``."""
    return cfg(f"smpi/{collective}:{algorithm}")


NO_PRIVATIZATION = cfg("smpi/privatization:0")
"""Ranks share the program's globals (no per-rank copy of it): for apps that keep no state in globals."""
NO_STACK_GUARD = cfg("contexts/guard-size:0")
"""No guard page below each rank's stack: one memory map fewer per rank (``vm.max_map_count``)."""
EXACT_COMPUTATION = (cfg("smpi/sample-skip:no"), cfg("smpi/shared-malloc:no"))
"""Every iteration of a sampled loop runs and every rank has its own buffers: the program computes its real result
(NAS EP's tallies)."""


def option_groups(
    folded_buffers: int | None = None,
    collectives: Mapping[str, str] | None = None,
    message_overhead: float | None = None,
    privatization: bool = True,
    stack_guard: bool = True,
) -> tuple[str, ...]:
    """The SMPI options of a run's typed fields (a study's or sweep's run names these groups instead of spelling
    ``--cfg`` words), in this order: :func:`folded_buffer_options`, a :func:`collective_option` for each collective,
    :func:`message_overhead_options`, :data:`NO_PRIVATIZATION`, :data:`NO_STACK_GUARD`.

    >>> option_groups(65536, {"barrier": "ompi_bruck"}, privatization=False)[1:]
    ('--cfg=smpi/auto-shared-malloc-thresh:65536', '--cfg=smpi/barrier:ompi_bruck', '--cfg=smpi/privatization:0')
    """
    return (
        *(folded_buffer_options(folded_buffers) if folded_buffers is not None else ()),
        *(collective_option(name, algorithm) for name, algorithm in (collectives or {}).items()),
        *(message_overhead_options(message_overhead) if message_overhead is not None else ()),
        *(() if privatization else (NO_PRIVATIZATION,)),
        *(() if stack_guard else (NO_STACK_GUARD,)),
    )


def message_overhead_options(alpha: float) -> tuple[str, ...]:
    """SMPI options that cost every eager message ``alpha`` seconds of software overhead, half on each side.

    The sender's processor is busy ``alpha/2`` before the message leaves (``smpi/os`` for MPI_Send,
    ``smpi/ois`` for MPI_Isend), the receiver's ``alpha/2`` after it has arrived (``smpi/or``), so one
    message between idle nodes takes ``alpha + S/bandwidth`` (a ping-pong's one-way time), and a node
    that handles L messages spends ``L*alpha/2`` of its own time on them. Measured (tests/test_combine_app.py):
    SMPI charges these overheads to eager messages only, those below ``EAGER_LIMIT_BYTES``; a larger
    (rendezvous) message gets none. Each is one value, not a piecewise ``0:alpha/2:0``: SimGrid 4.1 applies a
    piece to the sizes above its bound only, so a 0-byte message (every barrier's) would cost nothing (3.32
    charged it; measured on both).

    >>> message_overhead_options(54e-6)
    ('--cfg=smpi/os:2.7e-05', '--cfg=smpi/ois:2.7e-05', '--cfg=smpi/or:2.7e-05')
    """
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0 seconds, got {alpha!r}")
    half = repr(alpha / 2)
    return (cfg(f"smpi/os:{half}"), cfg(f"smpi/ois:{half}"), cfg(f"smpi/or:{half}"))


def folded_buffer_options(threshold_bytes: int) -> tuple[str, ...]:
    """SMPI options for a timing run that never reads its data: every allocation of at least ``threshold_bytes``
    is folded into shared memory that costs neither memory nor page tables until it is touched.

    SMPI then maps one sparse shared-memory file per allocation site for all ranks (``smpi/shared-malloc:local``),
    lazily, and copies no bytes between such buffers, so the contents are garbage and simulated times are those
    of the real run. SMPI's other folding mode (``global``, with ``smpi/shared-malloc-blocksize``) maps every
    buffer with MAP_POPULATE: 65536 page-table entries per rank for two 128 MiB buffers, made and torn down in
    every run, which dominated the profile of the 4096-rank pairing (docs/simulation-speed.md). Each folded
    allocation is one memory map per rank: Linux allows 65530 by default (``vm.max_map_count``). Apps check
    their data with ``--verify``, which must run without these options.

    >>> folded_buffer_options(1 << 20)
    ('--cfg=smpi/shared-malloc:local', '--cfg=smpi/auto-shared-malloc-thresh:1048576')
    """
    if threshold_bytes < 1:
        raise ValueError(f"threshold_bytes must be >= 1, got {threshold_bytes!r}")
    return (cfg("smpi/shared-malloc:local"), cfg(f"smpi/auto-shared-malloc-thresh:{threshold_bytes}"))


@cache
def simgrid_version() -> str:
    """SimGrid's version string as smpirun reports it, and the build's fingerprint (part of every cache key).

    The fingerprint (``scripts/setup``: source, options and patches) tells apart builds of one version: a result of
    a SimGrid without a patch is not a result of the SimGrid with it.
    """
    smpirun = shutil.which("smpirun")
    if smpirun is None:
        raise StudyError(f"smpirun not found: {SETUP_HINT}")
    done = subprocess.run([smpirun, "-version"], capture_output=True, text=True, timeout=60)
    fingerprint = Path(smpirun).resolve().parents[1] / ".topolab-fingerprint"
    build = fingerprint.read_text().strip() if fingerprint.is_file() else "not built by scripts/setup"
    return f"{(done.stdout + done.stderr).strip()} (build {build})"


def smpirun_command(
    binary: Path,
    args: Sequence[str],
    platform_xml: Path,
    hostfile: Path,
    ranks: int,
    options: Sequence[str] = (),
    launcher: Sequence[str] = (),
) -> list[str]:
    """The full smpirun command line: smpirun's own options (``launcher``: ``-tmpdir``, ``-keep-temps``...) after its
    platform and hostfile, then topolab's standard options, the options ``binary`` needs (its Fortran runtime
    privatized: :func:`fortran_runtime`), and the run's own ``options`` after (they win). Called by
    ``simulation.prepared.smpirun_simulation`` only: a simulation is prepared one way.

    What ``binary`` needs follows from its bytes, which every cache key holds: a key is still made of what is run.
    """
    return [
        "smpirun",
        "-np",
        str(ranks),
        "-platform",
        # SimGrid dlopens a compiled platform (.so), and dlopen needs a path with a '/'.
        str(Path(platform_xml).absolute()) if Path(platform_xml).suffix == ".so" else str(platform_xml),
        "-hostfile",
        str(hostfile),
        *launcher,
        *STANDARD_OPTIONS,
        *binary_options(binary, options),
        *options,
        str(binary),
        *args,
    ]


@cache
def fortran_runtime(binary: Path) -> str | None:
    """The gfortran runtime that ``binary`` itself links (``libgfortran.so.5``: a ``NEEDED`` entry of its dynamic
    section, :func:`~study_runner.simulation.binaries.elf_linkage`), or None. Not ``ldd``: libsimgrid links that
    runtime too, so ``ldd`` lists it for C programs as well."""
    linkage = elf_linkage(binary)
    needed = linkage.needed if linkage is not None else ()
    return next((name for name in needed if re.fullmatch(r"libgfortran\.so\.\d+", name)), None)


def binary_options(binary: Path, options: Sequence[str] = ()) -> tuple[str, ...]:
    """The SMPI options that ``binary`` needs to run right, unless ``options`` set them already.

    A Fortran program gets its gfortran runtime privatized (``smpi/privatize-libs``): one copy per rank, each with
    its own unit table, or ranks that open files on units they pick by INQUIRE collide (SimGrid patch 0010,
    docs/smpirun-on.md "Fortran codes").
    """
    runtime = fortran_runtime(Path(binary))
    if runtime is None or any(option.startswith(cfg("smpi/privatize-libs:")) for option in options):
        return ()
    return (cfg(f"smpi/privatize-libs:{runtime}"),)


@dataclass(frozen=True)
class SmpirunOutcome:
    """What one smpirun printed, how long it took and how much private memory it used at most."""

    stdout: str
    wall_s: float
    peak_memory_mib: float
    """Peak of what smpirun's process tree held, sampled every ``MEMORY_SAMPLE_S``: its anonymous memory and its
    share of the shared memory it maps (SMPI's folded buffers), each page once (``simulation.memory``). The
    kernel's max RSS counts a folded page once per rank that maps it, hence not used."""
    stderr: str = ""
    """What smpirun printed on stderr (SimGrid's messages, e.g. the timing summary of ``smpi/display-timing``)."""


MEMORY_SAMPLE_S = 0.2

STOP_WAIT_S = 10.0
"""How long :func:`stop_simulations` waits for the simulations it stops (each is killed within MEMORY_SAMPLE_S)."""

_STOP = threading.Event()
"""Set by :func:`stop_simulations`: every smpirun this process is waiting for is killed."""

_RUNNING = threading.Condition()
_running = 0
"""How many calls of :func:`run_smpirun_measured` are under way in this process (guarded by ``_RUNNING``)."""

_ORPHAN_GUARD = ("setpriv", "--pdeathsig", "TERM", "--") if shutil.which("setpriv") else ()
"""smpirun gets SIGTERM if the thread that started it dies, even by SIGKILL of this process (util-linux's
setpriv sets the parent-death signal, then execs smpirun; smpirun's own trap then ends the simulation)."""


def stop_simulations() -> None:
    """Kill every simulation this process is running now (a batch that failed, or was interrupted), and wait until
    they have gone (at most ``STOP_WAIT_S``): the caller then removes their work directories, which a simulation
    still running could write into again."""
    _STOP.set()
    with _RUNNING:
        _RUNNING.wait_for(lambda: _running == 0, timeout=STOP_WAIT_S)


def _count_running(change: int) -> None:
    global _running
    with _RUNNING:
        _running += change
        _RUNNING.notify_all()


def allow_simulations() -> None:
    """Let simulations run again (a new batch starts)."""
    _STOP.clear()


SPLITS_OPTION_VALUES = re.compile(r"[\s,]")
"""Where SimGrid's option syntax (``xbt::config::set_parse``) splits a value, with no escape: smpirun hands SMPI its
temporary directory as ``--cfg=smpi/tmpdir:DIR``, so a DIR holding one of these cannot be given (SimGrid patch 0014
makes smpirun say so instead of aborting in the option parser)."""
LINK_PLACES = ("/tmp", "/var/tmp", "/dev/shm")
"""Where :func:`smpi_tmpdir` may put its links: the system's usual temporary directories."""


def smpi_tmpdir(directory: Path | None = None) -> Path:
    """``directory`` (default: the temporary directory, as Python finds it) as SMPI can be told about it: itself, or
    when its path holds whitespace or a comma (:data:`SPLITS_OPTION_VALUES`) the same directory through a link
    without either, ``<place>/topolab-links-<uid>/<hash>`` to the deepest such part of the path (made once, kept:
    the files stay where the user put them, and a link costs nothing). StudyError when no place takes a link."""
    directory = Path(os.path.abspath(tempfile.gettempdir() if directory is None else directory))
    parts = directory.parts
    cut = [i for i, part in enumerate(parts) if SPLITS_OPTION_VALUES.search(part)]
    if not cut:
        return directory
    target, rest = Path(*parts[: cut[-1] + 1]), parts[cut[-1] + 1 :]
    name = hashlib.sha256(os.fsencode(target)).hexdigest()[:16]
    for place in LINK_PLACES:
        links = Path(place) / f"topolab-links-{os.getuid()}"
        try:
            links.mkdir(mode=0o700, exist_ok=True)
            if links.is_symlink() or links.stat().st_uid != os.getuid():
                continue  # another user's: never follow links it could change
            link = links / name
            if not (link.is_symlink() and os.readlink(link) == str(target)):
                made = links / f".{name}.{os.getpid()}"
                made.unlink(missing_ok=True)
                os.symlink(target, made)
                os.replace(made, link)
            return link.joinpath(*rest)
        except OSError:
            continue
    raise StudyError(
        f"the temporary directory {str(directory)!r} holds whitespace or a comma, which SimGrid's options cannot "
        f"hold, and none of {', '.join(LINK_PLACES)} takes a link to it: set TMPDIR to a directory without"
    )


def start_smpirun(command: Sequence[str], workdir: Path) -> subprocess.Popen[bytes]:
    """Start ``command`` (an smpirun) in ``workdir`` as topolab starts every one: in a process group of its own (to
    be killed as a whole), with the parent-death guard (:data:`_ORPHAN_GUARD`), stdin closed, its output read
    through pipes (a full disk under TMPDIR must not take the message that says so), and ``workdir`` as its TMPDIR
    (through a link if SimGrid cannot be told its path, :func:`smpi_tmpdir`):
    SMPI's per-rank copies of the program go with the run."""
    try:
        return subprocess.Popen(
            [*_ORPHAN_GUARD, *command],
            cwd=workdir,
            env={**os.environ, "TMPDIR": str(smpi_tmpdir(workdir))},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise StudyError(f"smpirun not found: {SETUP_HINT}") from None


def run_smpirun_measured(
    command: Sequence[str],
    workdir: Path,
    timeout: float,
    label: str,
    ok_status: Sequence[int] = (0,),
    memory_limit_mib: float | None = None,
) -> SmpirunOutcome:
    """Run ``command`` in ``workdir``, sampling its memory; raise ``StudyError`` naming ``label`` on failure (an exit
    status not in ``ok_status``: a third-party code may return 1 on success), or when it holds more than
    ``memory_limit_mib`` (default :func:`~study_runner.simulation.memory.memory_limit_mib`) or the machine runs out
    of memory (``simulation.memory``: the run is stopped before the kernel's OOM killer would).

    ``workdir`` is the command's ``TMPDIR`` too: smpirun gives it to SMPI as ``smpi/tmpdir``, where SMPI copies the
    app once per rank (privatization), so that a simulation killed mid-copy leaves its copies in a directory that
    goes with the run's (``study_runner.simulation.workdirs``), not in /tmp.
    """
    _count_running(+1)  # the whole call, so that stop_simulations also waits for a command being started
    try:
        limit = memory_limit_mib if memory_limit_mib is not None else memory.memory_limit_mib()
        return _run_measured(command, workdir, timeout, label, ok_status, limit)
    finally:
        _count_running(-1)


def _run_measured(
    command: Sequence[str], workdir: Path, timeout: float, label: str, ok_status: Sequence[int], limit_mib: float
) -> SmpirunOutcome:
    start = time.monotonic()
    process = start_smpirun(command, workdir)
    sampler = memory.MemorySampler(process.pid)
    try:
        pause = 0.005  # short runs end quickly; long ones are sampled every MEMORY_SAMPLE_S
        while True:
            problem = memory.overrun(sampler, limit_mib, label)
            if problem:
                raise StudyError(problem)
            if time.monotonic() - start > timeout:
                raise StudyError(f"{label}: smpirun did not finish within {timeout:.0f} s")
            if _STOP.is_set():
                raise StudyError(f"{label}: stopped")
            # Waiting (not sleeping) returns as soon as smpirun ends: the wall time is exact to a few ms, not to the
            # sampling period (it is the data of the estimate of the time left). communicate() keeps what it has
            # read when it times out, and is called again.
            try:
                out, err = process.communicate(timeout=pause)
                break
            except subprocess.TimeoutExpired:
                pause = min(2 * pause, MEMORY_SAMPLE_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    # An app may print any bytes: what is not UTF-8 is shown as U+FFFD, not a UnicodeDecodeError.
    stdout, stderr = out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace")
    if process.returncode not in ok_status:
        raise StudyError(failure_message(label, process.returncode, stderr))
    return SmpirunOutcome(stdout, time.monotonic() - start, sampler.peak_kib / 1024, stderr)


APP_FAILED = "The MPI application failed: "
"""How SimGrid (patch 0009) begins the one line that says how the application failed: MPI_Abort, a rank's non-zero
exit, a rank that left without MPI_Finalize, a deadlock."""


def failure_message(label: str, status: int, stderr: str) -> str:
    """What went wrong in a run that exited with ``status`` (not a good one) and printed ``stderr``.

    One line when the application failed (SimGrid's own line, or the signal that killed the simulation: a crash of
    the application's code kills SimGrid's process with it); else the end of stderr, where SimGrid says why it
    stopped.

    >>> failure_message("s/r", 3, "[0.1] f.cpp:9: [smpi_kernel/ERROR] The MPI application failed: rank 1 "
    ...                 "(on h1) called MPI_Abort with error code 3; exit status 3\\nExecution failed with code 3.")
    's/r: the MPI application failed: rank 1 (on h1) called MPI_Abort with error code 3; exit status 3'
    >>> failure_message("s/r", 2, "app: error: bad -s\\n[0.1] f.cpp:9: [smpi_kernel/ERROR] The MPI application "
    ...                 "failed: rank 0 (on h0) returned 2 from main; exit status 2")[33:]
    'rank 0 (on h0) returned 2 from main; exit status 2 (its last words: app: error: bad -s)'
    >>> failure_message("s/r", 139, "Segmentation fault.")
    's/r: the MPI application crashed: the simulation died of SIGSEGV (exit status 139)'
    """
    lines = stderr.splitlines()
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if APP_FAILED in line:
            said = _last_words(lines[:index])
            last = f" (its last words: {said})" if said else ""
            return f"{label}: the MPI application failed: {line.split(APP_FAILED, 1)[1].strip()}{last}"
    number = status - 128 if status > 128 else -status  # the shell's 128 + N, or Python's -N
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = None
    if name is not None:
        died = f"the simulation died of {name} (exit status {status})"
        crash = number in (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT)
        return f"{label}: the MPI application crashed: {died}" if crash else f"{label}: {died}"
    lines = [line for line in stderr.strip().splitlines() if "did not return 0" not in line]
    errors = [line for line in lines if "error" in line.lower()]
    tail = "\n    ".join((errors or lines)[-8:])
    return f"{label}: smpirun failed with exit status {status}; last lines of stderr:\n    {tail}"


def _last_words(before_failure: Sequence[str]) -> str | None:
    """The application's own last line on stderr, among the ``before_failure`` lines (those before SimGrid's line
    that says how it failed: after it come smpirun's own words, the command it ran, ``Generated unrolled hostfile
    ... kept.``, ``Execution failed with code N.``, and jobs_run's records of the jobs): not SimGrid's log
    (``[time] ... [category/LEVEL] ...``).

    >>> _last_words(["app: error: bad -s", "[0.1] f.cpp:9: [smpi_kernel/WARNING] SMPI process did not return 0"])
    'app: error: bad -s'
    """
    for line in reversed(before_failure):
        text = line.strip()
        if text and not text.startswith(("[", "Process called exit")):
            return text[:300]
    return None


def run_smpirun(command: Sequence[str], workdir: Path, timeout: float, label: str) -> str:
    """Run ``command`` in ``workdir``; return its stdout, or raise ``StudyError`` naming ``label``."""
    return run_smpirun_measured(command, workdir, timeout, label).stdout
