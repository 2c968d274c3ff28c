"""``scripts/measure-memory-fraction``: how much of a code's computation is memory traffic, measured by contention.

::

    scripts/measure-memory-fraction [--np N] [--repeats R] -- ./app [ARG ...]

``--compute memory`` needs, for each code, the fraction ``m`` of its benchmarked computation that moves memory:
that part is charged at the rank's share of the target node's memory bandwidth, the rest at the core's speed
(``study_runner.simulation.node_memory``). Hardware counters would give the bytes, but many machines (virtual ones
among them) have none, so ``m`` is measured by what it means, on any machine with two cores or more:

1. the app runs under ``smpirun-on this-machine --compute benchmark`` alone, and its computation is timed
   (``t_alone``): at one rank the simulated time, every burst at the CPU time it took (those of ``SMPI_SAMPLE_*``
   blocks too, which SMPI's sum of benchmarked bursts leaves out: NAS EP's whole computation), at more ranks that
   sum;
2. it runs again while every other core streams memory (STREAM's Add kernel, :data:`node_memory.ELEMENTS`
   doubles per array, in a loop), and is timed again (``t_loaded``);
3. with every core streaming, a core gets the fraction ``s`` of its own bandwidth (this machine's memory
   calibration, ``MemoryBandwidth.share``), so the burst's memory part takes ``1 / s`` times as long and its compute
   part is unchanged: ``t_loaded / t_alone = (1 - m) + m / s``, hence ``m = (r - 1) / (1 / s - 1)``.

The runs alternate, ``R`` of each, and ``r`` is the ratio of the medians. What it assumes: the streaming cores slow
the app only through memory bandwidth (they also take their part of a shared last-level cache, so a code that lives
in that cache counts as memory-bound, as it would among the ranks of a full node); the code's memory traffic is
bandwidth-bound (a latency-bound code suffers less from contention, so its ``m`` comes out low); the machine is
otherwise idle. It cannot work where the cores do not compete for memory (``s`` near 1): then it says so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from study_runner.errors import StudyError
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.compute import ONE_THREAD
from study_runner.simulation.compute import compute_timing
from study_runner.simulation.machine_load import BusyMachine
from study_runner.simulation.machine_load import check_quiet
from study_runner.simulation.machine_load import figure_doubts
from study_runner.simulation.node_memory import ELEMENTS
from study_runner.simulation.node_memory import memory_bandwidth
from study_runner.tools.smpirun_on import UsageError
from study_runner.tools.smpirun_on import prepare

__all__ = ["Fraction", "fraction_from_ratio", "measure_fraction"]

PROG = "measure-memory-fraction"
LEAST_CONTENTION = 0.9
"""Above this share (a core keeps 90% of its bandwidth with every core streaming), contention says too little."""
_STREAM = """
import sys, numpy
n = int(sys.argv[1])
a, b, c = numpy.zeros(n), numpy.ones(n), numpy.full(n, 2.0)
while True:
    numpy.add(b, c, out=a)
"""
"""A core streaming memory until it is stopped: STREAM's Add kernel in a loop."""


@dataclass(frozen=True)
class Fraction:
    """A code's memory fraction and the measurements it comes from."""

    fraction: float
    alone_s: tuple[float, ...]
    loaded_s: tuple[float, ...]
    share: float
    busy_cores: float = 0.0
    """Cores other work kept busy before the measurement (``machine_load``)."""

    @property
    def doubts(self) -> tuple[str, ...]:
        """Runs alone, or loaded, far apart (``machine_load.figure_doubts``): something else ran beside some."""
        return figure_doubts({}, {"runs alone": self.alone_s, "runs loaded": self.loaded_s})

    @property
    def ratio(self) -> float:
        """Median computation time with the other cores streaming over the median alone."""
        return statistics.median(self.loaded_s) / statistics.median(self.alone_s)


def fraction_from_ratio(ratio: float, share: float) -> float:
    """``m`` from ``r = (1 - m) + m / s``, clipped to [0, 1] (noise can put ``r`` a little below 1).

    >>> fraction_from_ratio(1.0, 0.5), fraction_from_ratio(2.0, 0.5), fraction_from_ratio(1.25, 0.5)
    (0.0, 1.0, 0.25)
    """
    if not 0.0 < share < 1.0:
        raise StudyError(f"a core's share of memory bandwidth must be between 0 and 1, got {share!r}")
    return min(1.0, max(0.0, (ratio - 1.0) / (1.0 / share - 1.0)))


SHORTEST_S = 0.05
"""Computation shorter than this is too little to see contention in (a run's noise is milliseconds)."""


def _computation_s(command: list[str], ranks: int) -> float:
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise StudyError(f"the app failed (exit status {done.returncode}): {tail}")
    timing = compute_timing(done.stderr)
    if "benchmarked_s" not in timing or "simulated_s" not in timing:
        raise StudyError("SMPI printed no timing summary: the app did not run under --compute benchmark")
    seconds = timing["simulated_s"] if ranks == 1 else timing["benchmarked_s"]
    if seconds < SHORTEST_S:
        counted = "its simulated time" if ranks == 1 else "the CPU time of its bursts (sampled blocks not counted)"
        raise StudyError(f"the app computes {seconds:.3g} s ({counted}): too little to measure contention in")
    return seconds


def _start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` processes streaming STREAM's Add kernel until stopped."""
    hogs = []
    for _ in range(count):
        command = [sys.executable, "-c", _STREAM, str(ELEMENTS)]
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        hogs.append(subprocess.Popen(command, env={**os.environ, **ONE_THREAD}, **quiet))
    return hogs


def measure_fraction(
    app: Sequence[str], ranks: int = 1, repeats: int = 3, options: Sequence[str] = (), *, busy_ok: bool = False
) -> Fraction:
    """Measure ``app``'s memory fraction on this machine (module docstring); ``options`` are smpirun-on's (SMPI
    options the app needs). Refused on a busy machine (``machine_load.BusyMachine``) unless ``busy_ok``."""
    cores = os.cpu_count() or 1
    if cores < 2:
        raise StudyError("measuring by contention needs a second core to stream memory, and this machine has one")
    busy = check_quiet("a memory fraction", f"{PROG} again", refuse=not busy_ok)
    memory = memory_bandwidth(default_cache_dir())
    if memory.share > LEAST_CONTENTION:
        raise StudyError(
            f"this machine's cores hardly compete for memory (each keeps {memory.share:.0%} of its bandwidth with "
            "every core streaming): contention cannot tell memory traffic from computation here"
        )
    command = prepare(["this-machine", "--np", str(ranks), "--compute", "benchmark", *options, "--", *app])
    alone, loaded = [], []
    for _ in range(repeats):
        alone.append(_computation_s(command, ranks))
        hogs = _start_hogs(cores - 1)
        try:
            loaded.append(_computation_s(command, ranks))
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
    ratio = statistics.median(loaded) / statistics.median(alone)
    return Fraction(fraction_from_ratio(ratio, memory.share), tuple(alone), tuple(loaded), memory.share, busy)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the fraction, its evidence and the option that uses it."""
    args = list(sys.argv[1:] if argv is None else argv)
    cut = args.index("--") if "--" in args else len(args)
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--np", type=int, default=1, help="ranks of the app (default 1)")
    parser.add_argument("--repeats", type=int, default=3, help="runs alone and loaded, each (default 3)")
    parser.add_argument(
        "--busy-ok", action="store_true", help="measure even while other work keeps this machine busy (flagged)"
    )
    options = parser.parse_args(args[:cut])
    app = args[cut + 1 :]
    if not app:
        print(f"{PROG}: error: no program after '--': {PROG} [--np N] -- ./app [args]", file=sys.stderr)
        return 2
    try:
        result = measure_fraction(app, options.np, options.repeats, busy_ok=options.busy_ok)
    except (UsageError, BusyMachine) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except StudyError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    print(json.dumps({"memory_fraction": round(result.fraction, 3), "ratio": result.ratio, "share": result.share,
                      "alone_s": result.alone_s, "loaded_s": result.loaded_s,
                      "busy_cores": round(result.busy_cores, 3), "doubts": list(result.doubts)}))  # fmt: skip
    if result.doubts:
        print(f"{PROG}: warning: doubtful ({'; '.join(result.doubts)}): measure again when this machine is idle",
              file=sys.stderr)  # fmt: skip
    print(
        f"{PROG}: computation {statistics.median(result.alone_s):.3f} s alone, "
        f"{statistics.median(result.loaded_s):.3f} s with the other cores streaming (x{result.ratio:.3f}; a core "
        f"keeps {result.share:.2f} of its bandwidth): memory fraction {result.fraction:.3f}, "
        f"for smpirun-on --compute memory --memory-fraction {result.fraction:.3f}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
