"""This machine's memory bandwidth: what one core gets alone and what all its cores get together, measured once and
cached per machine beside the compute calibration (``<cache>/calibration/memory-<machine key>.json``).

The measurement is STREAM's *Add* kernel, ``a[i] = b[i] + c[i]`` over arrays far larger than any cache, through
numpy (``numpy.add(b, c, out=a)``: one pass, no temporary), counted as STREAM counts it: 24 bytes per element (two
8-byte reads and one 8-byte write; the read a write-allocating cache makes of ``a`` is not counted, so the figure is
the bandwidth a code sees, as STREAM's is). Each rate is the wall-clock time of one pass, the best kernel of STREAM
being the median here (a noisy machine would otherwise report its luckiest pass).

- **one core**: one process alone, median of :data:`REPEATS` passes after a warm-up;
- **the node**: one process per core (``os.cpu_count()``), every pass started together behind a barrier; the node's
  rate of a pass is the bytes all processes moved over the longest process's time, and the figure is the median of
  :data:`REPEATS` such passes.

Both measure the same work in each process: arrays of :data:`ELEMENTS` doubles (3 x 32 MiB, three times this
machine's 32 MiB last-level cache), :data:`ADDS_PER_PASS` Adds a pass. A pass has to last far longer than the
barrier takes to release every process (about a millisecond), or the processes stream one after another and the
node seems to have as much bandwidth as its cores have alone: with one Add a pass (3 ms at this machine's 30 GB/s),
and larger arrays alone than together, a core kept 103-121% of its own rate with every core streaming on
2026-11-29, where 32 Adds a pass give 48-57%. The memory each process holds stays 96 MiB however many cores there are.

The ratio of the two says how much the cores of this machine compete for memory: 1 would be a memory system that
gives every core its full rate whatever the others do; 1 / cores one that a single core saturates. Two ranks of a
memory-bound code that run alone in the simulation (SMPI runs ranks one after another) compete so in a real run.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from study_runner.errors import StudyError
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.compute import AGAIN
from study_runner.simulation.compute import ONE_THREAD
from study_runner.simulation.compute import cached_measurement
from study_runner.simulation.compute import machine_key
from study_runner.simulation.compute import store_measurement
from study_runner.simulation.machine_load import Bound
from study_runner.simulation.machine_load import busy_note
from study_runner.simulation.machine_load import check_quiet
from study_runner.simulation.machine_load import figure_doubts
from study_runner.simulation.machine_load import measured_with_doubts
from study_runner.simulation.machine_load import read_doubts
from study_runner.simulation.machine_load import warn_if_flagged

__all__ = [
    "ADDS_PER_PASS",
    "ELEMENTS",
    "REPEATS",
    "MemoryBandwidth",
    "MemoryTarget",
    "measure_memory",
    "memory_bandwidth",
    "memory_mode_speed",
    "memory_speed",
    "pass_rates",
]

ELEMENTS = 1 << 22
"""Doubles per array and process, alone and with every core at once (32 MiB each, 96 MiB per process)."""
ADDS_PER_PASS = 32
"""Adds a timed pass makes (about 0.1 s here): long beside the barrier's release, so the processes stream together."""
REPEATS = 7
BYTES_PER_ELEMENT = 24
"""STREAM's count for Add: two reads and one write of 8 bytes."""

_MEASURE = """
import json, sys, time, multiprocessing as mp
import numpy

def passes(n, adds, repeats, barrier=None, out=None):
    a, b, c = numpy.zeros(n), numpy.ones(n), numpy.full(n, 2.0)
    numpy.add(b, c, out=a)  # warm-up: pages touched, code loaded
    times = []
    for _ in range(repeats):
        if barrier is not None:
            barrier.wait()
        start = time.perf_counter()
        for _ in range(adds):
            numpy.add(b, c, out=a)
        times.append(time.perf_counter() - start)
    if a[n // 2] != 3.0:
        raise SystemExit("the Add kernel computed a wrong value")
    if out is not None:
        out.put(times)
    return times

if __name__ == "__main__":
    mode, n, adds, repeats, processes = sys.argv[1], *map(int, sys.argv[2:6])
    if mode == "core":
        print(json.dumps({"times": [passes(n, adds, repeats)]}))
    else:
        barrier, out = mp.Barrier(processes), mp.Queue()
        workers = [mp.Process(target=passes, args=(n, adds, repeats, barrier, out)) for _ in range(processes)]
        for worker in workers:
            worker.start()
        times = [out.get(timeout=600) for _ in workers]
        for worker in workers:
            worker.join()
        print(json.dumps({"times": times}))
"""
"""The measurement, run in a child Python: ``core N ADDS REPEATS 1`` or ``node N ADDS REPEATS PROCESSES``; it prints
every process's pass times."""


@dataclass(frozen=True)
class MemoryBandwidth:
    """This machine's memory bandwidth (bytes/s), one core alone and all cores together, and how it was measured."""

    core_Bps: float
    """What one core streams alone."""
    node_Bps: float
    """What all cores stream together."""
    cores: int
    core_samples: tuple[float, ...]
    node_samples: tuple[float, ...]
    method: str
    measured: str
    """When, ISO 8601 (UTC)."""
    busy_cores: float = 0.0
    """Cores other work kept busy just before (``machine_load``): over ``BUSY_CORES``, the figures are flagged."""
    doubts: tuple[str, ...] = ()
    """Why the figures are doubtful (``machine_load.figure_doubts``), when they still were measured again."""

    @property
    def share(self) -> float:
        """What a core gets when every core streams, as a fraction of what it gets alone."""
        return self.node_Bps / self.cores / self.core_Bps

    def describe(self) -> str:
        """One line: both figures, their spread and the method."""

        def spread(samples: tuple[float, ...]) -> str:
            return f"{min(samples) / 1e9:.2f}-{max(samples) / 1e9:.2f} over {len(samples)} passes"

        return (
            f"memory {self.core_Bps / 1e9:.2f} GB/s for one core ({spread(self.core_samples)}), "
            f"{self.node_Bps / 1e9:.2f} GB/s for all {self.cores} cores together ({spread(self.node_samples)}; "
            f"{self.share:.2f} of a core's own rate each), {self.method}, measured {self.measured}"
            f"{busy_note(self.busy_cores, AGAIN, self.doubts)}"
        )

    def find_doubts(self) -> tuple[str, ...]:
        """What is doubtful in this measurement: a bandwidth no core has, or passes far apart."""
        return figure_doubts(
            {"one core": (self.core_Bps, CORE_MEMORY), "all cores": (self.node_Bps, CORE_MEMORY.times(self.cores))},
            {"one core's passes": self.core_samples, "all cores' passes": self.node_samples},
        )


CORE_MEMORY = Bound(1e9, 2e11, "GB/s", 1e9)
"""What one core streams on any machine topolab runs on: DDR3 of 2010 gives a core several GB/s, HBM parts of today
up to some 100 (this VM's: 12.6-35.8)."""


def _run(mode: str, processes: int) -> list[list[float]]:
    command = [sys.executable, "-c", _MEASURE, mode, str(ELEMENTS), str(ADDS_PER_PASS), str(REPEATS), str(processes)]
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **ONE_THREAD}, timeout=900, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise StudyError(f"the memory bandwidth measurement ({mode}) failed: {tail}")
    return [list(map(float, times)) for times in json.loads(done.stdout)["times"]]


def pass_rates(times: list[list[float]]) -> tuple[float, ...]:
    """The rate (bytes/s) of each pass of one or several processes streaming together, ``times[process][pass]``:
    the bytes every process moved in the pass (the same work each, :data:`ELEMENTS` and :data:`ADDS_PER_PASS`) over
    the slowest process's time."""
    moved = len(times) * BYTES_PER_ELEMENT * ELEMENTS * ADDS_PER_PASS
    return tuple(moved / max(process[i] for process in times) for i in range(len(times[0])))


def measure_memory(cache_dir: Path | None = None, *, refuse_busy: bool = False) -> MemoryBandwidth:
    """Measure this machine's memory bandwidth now and cache it (replacing an earlier measurement); on a busy machine
    refused when ``refuse_busy``, else measured and flagged (``machine_load``)."""
    busy = check_quiet("the memory bandwidth", AGAIN, refuse=refuse_busy)
    result = measured_with_doubts(
        lambda: _measure_bandwidth(busy), MemoryBandwidth.find_doubts, "the memory bandwidth", AGAIN
    )
    store_measurement(memory_path(cache_dir), result)
    return result


def _measure_bandwidth(busy: float) -> MemoryBandwidth:
    """STREAM's Add by one core alone, then by every core at once, in child Pythons."""
    cores = os.cpu_count() or 1
    core_samples = pass_rates(_run("core", 1))
    node_samples = pass_rates(_run("node", cores))
    return MemoryBandwidth(
        core_Bps=statistics.median(core_samples),
        node_Bps=statistics.median(node_samples),
        cores=cores,
        core_samples=core_samples,
        node_samples=node_samples,
        method=(
            f"STREAM's Add kernel (24 bytes per element) through numpy's add, {ELEMENTS} doubles per array and "
            f"{ADDS_PER_PASS} Adds a pass in each process, alone and with every core at once, wall clock, median of "
            f"{REPEATS} passes"
        ),
        measured=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        busy_cores=round(busy, 3),
    )


def memory_path(cache_dir: Path | None = None) -> Path:
    """Where this machine's memory bandwidth is cached."""
    return (cache_dir or default_cache_dir()) / "calibration" / f"memory-{machine_key()}.json"


def memory_bandwidth(cache_dir: Path | None = None, *, measure: bool = True) -> MemoryBandwidth | None:
    """This machine's cached memory bandwidth; measured first if there is none and ``measure`` (else None). One
    measured busy says so (once)."""
    found = cached_measurement(
        memory_path(cache_dir),
        lambda raw: MemoryBandwidth(
            **{**raw, **{key: tuple(raw[key]) for key in ("core_samples", "node_samples")}, "doubts": read_doubts(raw)}
        ),
        (lambda: measure_memory(cache_dir)) if measure else None,
        "a memory bandwidth",
    )
    if found is not None:
        warn_if_flagged("this machine's memory bandwidth", found.busy_cores, AGAIN, found.doubts)
    return found


@dataclass(frozen=True)
class MemoryTarget:
    """The memory a rank gets on the simulated node: the node's bandwidth, shared by the ranks placed on it, and at
    most what one core can draw alone."""

    node_Bps: float
    ranks_on_node: int
    core_Bps: float | None = None
    """One core's own bandwidth on the target (None: not known; a rank alone gets the node's)."""

    @property
    def share_Bps(self) -> float:
        """What one rank gets when every rank of the node streams at once."""
        share = self.node_Bps / self.ranks_on_node
        return share if self.core_Bps is None else min(share, self.core_Bps)


def memory_speed(
    flops_here: float, here: MemoryBandwidth, fraction: float, core_flops: float, target: MemoryTarget
) -> float:
    """The ``smpi/host-speed`` that charges a burst of ``t`` seconds here ``(1 - m) t P_here / P + m t B_here / B``
    on a core of ``P = core_flops`` whose rank gets ``B = target.share_Bps``: the part ``m = fraction`` of the
    burst that moved memory here at one core's rate ``B_here = here.core_Bps`` moves it there at the rank's share,
    the rest scales with the cores' peak rates as in ``--compute benchmark``. SMPI charges ``t * host_speed / P``.

    >>> here = MemoryBandwidth(1e10, 1.6e10, 2, (1e10,), (1.6e10,), "Add", "today")
    >>> memory_speed(4e10, here, 0.0, 1e10, MemoryTarget(4e10, 16))  # no memory traffic: --compute benchmark's
    40000000000.0
    >>> memory_speed(4e10, here, 0.5, 4e10, MemoryTarget(1.6e10, 2, 1e10))  # this machine, both cores streaming
    45000000000.0
    """
    if not 0.0 <= fraction <= 1.0:
        raise StudyError(f"the memory fraction must be between 0 and 1, got {fraction!r}")
    return (1.0 - fraction) * flops_here + fraction * core_flops * here.core_Bps / target.share_Bps


def memory_mode_speed(
    flops_here: float, memory_fraction: float, core_flops: float, target: MemoryTarget, cache_dir: Path | None = None
) -> tuple[float, float, str]:
    """SMPI's ``smpi/host-speed`` for ``compute = "memory"`` (:func:`memory_speed` with this machine's memory
    bandwidth, cached in ``cache_dir``), its ``smpi/local-work-speed`` (the copies and reductions an MPI call makes in
    a rank's own memory: all memory, charged as a burst of fraction 1), and the line that says both."""
    here = memory_bandwidth(cache_dir)
    speed = memory_speed(flops_here, here, memory_fraction, core_flops, target)
    local_work = memory_speed(flops_here, here, 1.0, core_flops, target)
    line = (
        f"memory: {memory_fraction:.3f} of each burst moves memory, charged at {target.share_Bps / 1e9:.3g} GB/s per "
        f"rank ({target.node_Bps / 1e9:.3g} GB/s per node, {target.ranks_on_node} ranks on the fullest) against "
        f"this machine's {here.core_Bps / 1e9:.3g} GB/s per core; the rest at the core speed "
        f"(smpi/host-speed {speed / 1e9:.4g} Gf for cores of {core_flops / 1e9:.4g} Gf); an MPI call's own copies "
        f"and reductions all memory (smpi/local-work-speed {local_work / 1e9:.4g} Gf)"
    )
    return speed, local_work, line
