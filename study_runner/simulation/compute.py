"""Computation in the model: ``--compute off``, ``benchmark`` or ``memory``, and this machine's calibrated speed.

SMPI runs the application's code for real. Between two MPI calls, a rank computes; what that costs in simulated
time is the mode's choice:

``off``
    Computation costs nothing: simulated times are communication only (and what an app injects explicitly with
    ``smpi_execute_flops``), bit for bit the same on every run and every machine. The papers' studies run so.
``benchmark``
    SMPI's *benchmarked* computation (``smpi/simulate-computation:yes``, the name SMPI's documentation uses): every
    CPU burst between two MPI calls is timed on this machine (the thread's CPU time), converted to flops at this
    machine's speed (``smpi/host-speed``, the calibration below) and executed on the rank's simulated host at the
    platform's core speed. A burst of t seconds here takes ``t * reference / core_speed`` simulated seconds there.
    Not deterministic: the measured times vary from run to run like the real code's.
``memory``
    As ``benchmark``, but the part of each burst that moves memory (the code's memory fraction, measured by
    ``scripts/measure-memory-fraction``) is charged at the rank's share of the simulated node's memory bandwidth
    (``simulation.node_memory``); a study or sweep run gives ``memory_fraction``, its platform ``memory_bw``.

The reference speed is this machine's, measured once by :func:`calibrate` (``scripts/calibrate-compute``) and
cached per machine with the figure, how it was measured and when; ``--force`` measures again. It is the rate of a
double-precision matrix product (DGEMM, the kernel of HPL) on one core, through the optimised BLAS that numpy
links: the same notion as the peak per-core speed of a data sheet, which topolab's machines give their hosts, so
that the ratio of the two is the ratio of what a core can do at best. ``docs/computation.md`` discusses what the
prediction means and its error sources (a code that is not DGEMM-like reaches another fraction of each machine's
peak).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import TypeVar

from generators.files import atomic_write_text
from study_runner.errors import StudyError
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.machine_load import Bound
from study_runner.simulation.machine_load import BusyMachine
from study_runner.simulation.machine_load import busy_note
from study_runner.simulation.machine_load import check_quiet
from study_runner.simulation.machine_load import figure_doubts
from study_runner.simulation.machine_load import measured_with_doubts
from study_runner.simulation.machine_load import read_doubts
from study_runner.simulation.machine_load import warn_if_flagged
from study_runner.simulation.simgrid_options import cfg

__all__ = [
    "COMPUTE_MODES",
    "OFF_NOTICE",
    "SIMULATED_TIME_OPTIONS",
    "Calibration",
    "calibrate",
    "calibration",
    "calibration_path",
    "compute_options",
    "compute_timing",
    "machine_key",
]

COMPUTE_MODES = ("off", "benchmark", "memory")
"""The ``--compute`` choices (module docstring)."""

OFF_NOTICE = (
    "computation is not simulated (--compute off): reported times are communication only; "
    "--compute benchmark times each CPU burst on this machine and charges it at the platform's core speed"
)
"""What a run with computation off says once on stderr."""

MATRIX_ORDER = 2000
"""n of the n x n DGEMM that calibrates (2 n^3 = 1.6e10 flop, a fraction of a second on a current core)."""
REPEATS = 7
"""Timed products after one warm-up; the calibration is their median."""

_MEASURE = f"""
import json, time, numpy
n = {MATRIX_ORDER}
rng = numpy.random.default_rng(1)
a, b = rng.random((n, n)), rng.random((n, n))
a @ b
samples = []
for _ in range({REPEATS}):
    start = time.thread_time()
    a @ b
    samples.append(2.0 * n**3 / (time.thread_time() - start))
print(json.dumps({{"samples": samples, "numpy": numpy.__version__}}))
"""
"""The measurement, run in a child Python with one BLAS thread (the variables must be set before numpy loads)."""

AGAIN = "scripts/calibrate-compute --force"
"""How to measure this machine's cores and memory again."""

ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
"""The environment of a measuring child: one BLAS and OpenMP thread (set before numpy loads)."""


@dataclass(frozen=True)
class Calibration:
    """This machine's speed for SMPI's benchmarked computation, and how it was measured."""

    flops: float
    """Reference speed of one core of this machine, flop/s (the median of ``samples``)."""
    samples: tuple[float, ...]
    method: str
    cpu: str
    machine: str
    measured: str
    """When, ISO 8601 (UTC)."""
    busy_cores: float = 0.0
    """Cores other work kept busy just before (``machine_load``): over ``BUSY_CORES``, the figure is flagged."""
    doubts: tuple[str, ...] = ()
    """Why the figure is doubtful (``machine_load.figure_doubts``), when it still was measured again."""

    def describe(self) -> str:
        """One line: the figure, its spread and how it was measured."""
        low, high = min(self.samples), max(self.samples)
        return (
            f"{self.flops / 1e9:.2f} Gflop/s per core ({low / 1e9:.2f}-{high / 1e9:.2f} over {len(self.samples)} "
            f"runs) on {self.cpu}, {self.method}, measured {self.measured}"
            f"{busy_note(self.busy_cores, AGAIN, self.doubts)}"
        )

    def find_doubts(self) -> tuple[str, ...]:
        """What is doubtful in this calibration: a speed no core has, or runs far apart."""
        return figure_doubts({"speed": (self.flops, CORE_SPEED)}, {"runs": self.samples})


CORE_SPEED = Bound(2e9, 5e11, "Gflop/s", 1e9)
"""DGEMM on one core of any machine topolab runs on: a 2 GHz core of 2010 with SSE2 does 8 Gflop/s, an AVX-512 core
with two FMA units at 4 GHz peaks at 256 (this VM's: 35-83)."""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_key() -> str:
    """What tells this machine from another: host name, CPU model and the systemd machine id, hashed."""
    try:
        machine_id = Path("/etc/machine-id").read_text().strip()
    except OSError:
        machine_id = ""
    text = "\0".join((socket.gethostname(), _cpu_model(), machine_id, str(os.cpu_count())))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


T = TypeVar("T")


def store_measurement(path: Path, result: object) -> None:
    """Cache a measurement of this machine (a dataclass) at ``path``, atomically."""
    atomic_write_text(path, json.dumps(asdict(result), indent=1) + "\n")  # type: ignore[call-overload]


def cached_measurement(
    path: Path,
    read: Callable[[dict[str, Any]], T],
    measure: Callable[[], T] | None,
    what: str,
    remedy: str = f"remove it, or run {AGAIN}",
) -> T | None:
    """The measurement cached at ``path`` (``read`` from its JSON), or ``measure()`` when there is none (None without
    ``measure``); ``StudyError`` naming ``what`` it should be, and the ``remedy``, when the file is not one topolab
    wrote."""
    try:
        return read(json.loads(path.read_text()))
    except FileNotFoundError:
        return measure() if measure is not None else None
    except (ValueError, TypeError, KeyError):
        raise StudyError(f"{path} is not {what} topolab wrote: {remedy}") from None


def calibration_path(cache_dir: Path | None = None) -> Path:
    """Where this machine's calibration is cached: ``<cache>/calibration/compute-<machine key>.json``."""
    return (cache_dir or default_cache_dir()) / "calibration" / f"compute-{machine_key()}.json"


def calibrate(cache_dir: Path | None = None, *, refuse_busy: bool = False) -> Calibration:
    """Measure this machine's reference speed now and cache it (replacing an earlier calibration); on a busy machine
    refused when ``refuse_busy`` (``machine_load.BusyMachine``), else measured and flagged."""
    busy = check_quiet("the compute speed", AGAIN, refuse=refuse_busy)
    result = measured_with_doubts(lambda: _measure_speed(busy), Calibration.find_doubts, "the compute speed", AGAIN)
    store_measurement(calibration_path(cache_dir), result)
    return result


def _measure_speed(busy: float) -> Calibration:
    """The DGEMM runs of a child Python (one BLAS thread), as a calibration."""
    environment = {**os.environ, **ONE_THREAD}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE], capture_output=True, text=True, env=environment, timeout=600, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise StudyError(f"the compute calibration failed: {tail}")
    measured = json.loads(done.stdout)
    samples = tuple(float(s) for s in measured["samples"])
    return Calibration(
        flops=statistics.median(samples),
        samples=samples,
        method=(
            f"DGEMM n = {MATRIX_ORDER} (2n^3 flop) through numpy {measured['numpy']}'s BLAS on one thread, "
            f"thread CPU time, median of {REPEATS} after a warm-up"
        ),
        cpu=_cpu_model(),
        machine=socket.gethostname(),
        measured=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        busy_cores=round(busy, 3),
    )


def calibration(cache_dir: Path | None = None, *, measure: bool = True) -> Calibration | None:
    """This machine's cached calibration; measured first if there is none and ``measure`` (else None). A calibration
    measured busy says so (once)."""
    found = cached_measurement(
        calibration_path(cache_dir),
        lambda raw: Calibration(**{**raw, "samples": tuple(raw["samples"]), "doubts": read_doubts(raw)}),
        (lambda: calibrate(cache_dir)) if measure else None,
        "a calibration",
    )
    if found is not None:
        warn_if_flagged("this machine's compute speed", found.busy_cores, AGAIN, found.doubts)
    return found


def compute_options(
    mode: str, reference_flops: float | None = None, local_work_flops: float | None = None
) -> tuple[str, ...]:
    """The SMPI options of a compute mode, to come after topolab's standard options (which switch computation off).
    ``local_work_flops`` converts the copies and reductions an MPI call makes in a rank's own memory (SimGrid patches
    0011 and 0019) where they are not charged like the bursts (``--compute memory``: they are all memory).

    >>> compute_options("off")
    ()
    >>> compute_options("benchmark", 4e10)[:2]
    ('--cfg=smpi/simulate-computation:yes', '--cfg=smpi/host-speed:40000000000.0f')
    >>> compute_options("benchmark", 4e10, 1e10)[2]
    '--cfg=smpi/local-work-speed:10000000000.0f'
    """
    if mode == "off":
        return ()
    if mode not in COMPUTE_MODES:
        raise StudyError(f"compute must be one of {', '.join(COMPUTE_MODES)}, got {mode!r}")
    if reference_flops is None or not reference_flops > 0:
        raise StudyError(f"--compute {mode} needs this machine's speed (> 0 flop/s), got {reference_flops!r}")
    if mode == "memory" and local_work_flops is None:
        raise StudyError("--compute memory charges an MPI call's own copies and reductions: it needs their speed")
    local_work = () if local_work_flops is None else (cfg(f"smpi/local-work-speed:{float(local_work_flops)!r}f"),)
    return (
        cfg("smpi/simulate-computation:yes"),
        cfg(f"smpi/host-speed:{float(reference_flops)!r}f"),
        *local_work,
        cfg("smpi/display-timing:yes"),
        "--log=smpi_utils.thres:info",  # the timing summary is an INFO message; the standard options show warnings
    )


SIMULATED_TIME_OPTIONS: tuple[str, ...] = (
    cfg("smpi/display-timing:yes"),
    "--log=smpi_utils.thres:info",
    # The summary prints the simulated time with 6 significant digits; this prefix prints SimGrid's clock, the same
    # value, with 15 decimals (the layout's %r; %e is a space).
    "--log=smpi_utils.fmt:[%.15r]%e%m%n",
)
"""smpirun options that print SMPI's timing summary with the simulated time in full (read by :func:`compute_timing`):
what a replay reports, and what an online run reports too (``simulated_s``) when its options include them."""


_CLOCK = re.compile(r"^\[([0-9.]+)\]\s*$")


def compute_timing(stderr: str) -> dict[str, float]:
    """SMPI's timing summary (``smpi/display-timing``): the simulated time and the seconds of real computation that
    were benchmarked, summed over every rank; empty when the run printed none. The simulated time is read from the
    line's ``[clock]`` prefix when :data:`SIMULATED_TIME_OPTIONS` printed it (15 decimals), else from the message
    (6 significant digits).

    >>> text = "[3.5] [smpi_utils/INFO] Simulated time: 3.5 seconds. \\n\\nThe simulation took 9 seconds (after "
    >>> text += "parsing and platform setup)\\n2.25 seconds were actual computation of the application"
    >>> compute_timing(text)
    {'simulated_s': 3.5, 'benchmarked_s': 2.25}
    >>> compute_timing("[0.002516458000000] Simulated time: 0.00251646 seconds. ")
    {'simulated_s': 0.002516458}
    """
    timing: dict[str, float] = {}
    for line in stderr.splitlines():
        if "Simulated time:" in line:
            prefix, message = line.split("Simulated time:", 1)
            clock = _CLOCK.match(prefix)  # SIMULATED_TIME_OPTIONS' prefix, else SimGrid's own ([clock] [category])
            timing["simulated_s"] = float(clock[1] if clock else message.split()[0])
        elif line.endswith("seconds were actual computation of the application"):
            timing["benchmarked_s"] = float(line.split()[0])
    return timing


def main(argv: list[str] | None = None) -> int:
    """``scripts/calibrate-compute``: print this machine's calibration, measuring it if there is none (``--force``:
    measure again)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="calibrate-compute", description="This machine's speed for --compute benchmark (cached per machine)."
    )
    parser.add_argument("--force", action="store_true", help="measure again, replacing the cached calibration")
    parser.add_argument("--json", action="store_true", help="print the calibration as JSON")
    parser.add_argument(
        "--busy-ok", action="store_true", help="measure even while other work keeps this machine busy (flagged)"
    )
    args = parser.parse_args(argv)
    from study_runner.simulation.node_memory import measure_memory
    from study_runner.simulation.node_memory import memory_bandwidth
    from study_runner.simulation.node_memory import memory_path

    try:
        cached = None if args.force else calibration(measure=False)
        cached_memory = None if args.force else memory_bandwidth(measure=False)
        if cached is None or cached_memory is None:
            print("calibrate-compute: measuring this machine's cores and memory (a few seconds)", file=sys.stderr)
        result = cached or calibrate(refuse_busy=not args.busy_ok)
        memory = cached_memory or measure_memory(refuse_busy=not args.busy_ok)
    except BusyMachine as err:
        print(f"calibrate-compute: error: {err}", file=sys.stderr)
        return 2
    except StudyError as err:
        print(f"calibrate-compute: error: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({**asdict(result), "memory": asdict(memory)}, indent=1))
    else:
        print(result.describe())
        print(memory.describe())
        again = "" if cached is None or cached_memory is None else " (--force measures again)"
        print(f"cached in {calibration_path()} and {memory_path()}{again}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
