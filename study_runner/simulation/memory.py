"""What a simulation really holds in memory, and the limit it runs under.

SMPI's folded buffers (``smpi/shared-malloc:local``) are POSIX shared memory (``shm_open``: /dev/shm, which is RAM),
mapped once per rank. A process's ``RssShmem`` counts a page once per mapping, so 24 ranks of one 256 MiB folded
buffer show as 6 GiB where the machine holds 256 MiB; ``RssAnon`` misses them altogether. What the run holds is its
anonymous memory plus its proportional share of the shared memory it maps (``Pss_Shmem`` of
``/proc/PID/smaps_rollup``: a page mapped N times counts 1/N per mapping, once in all).

Reading ``smaps_rollup`` walks every mapping: 20 to 40 ms for a 6000-rank simulation (500 MB, 6000 maps; measured),
where ``/proc/PID/status`` takes 0.1 ms. :class:`MemorySampler` reads ``status`` at every sample and
``smaps_rollup`` only while the run maps shared memory at all, at most once per ``ROLLUP_DUTY`` times its own cost
(2% of a core), and always before it declares the limit overrun.

Scheduling. Before it starts, a simulation's memory is estimated (:func:`estimate_mib`: from the cache's history
of the same configuration, else from its ranks); the local and batch engines give each worker its memory as a Dask
resource and each simulation its estimate, so that the simulations running at once fit (``batch.engine``).

The limit. Every simulation runs under one (:func:`memory_limit_mib`: ``$TOPOLAB_MEMORY_LIMIT`` in MiB, else 90% of
the machine's memory), and the machine keeps a reserve: a simulation is stopped when what it holds passes its limit,
or when the machine's available memory falls below ``RESERVE_FRACTION`` of its total, whatever holds it, with one
error naming the run, its limit and what it held: never the kernel's OOM killer.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from study_runner.errors import StudyError

__all__ = ["MemorySampler", "estimate_mib", "machine_memory_mib", "memory_limit_mib", "overrun"]

ROLLUP_DUTY = 50
"""``smaps_rollup`` is read at most once per ROLLUP_DUTY times what its last read cost (2% of a core)."""

RESERVE_FRACTION = 0.03
"""A simulation is stopped when the machine's available memory falls below this fraction of its total."""

LIMIT_FRACTION = 0.9
"""The default limit of one simulation: this fraction of the machine's memory."""

MARGIN = 1.25
"""A simulation run before is expected to hold this much more than its measured peak (sampling misses spikes)."""

BASE_MIB = 100.0
PER_RANK_MIB = 0.5
"""A simulation never measured is expected to hold BASE_MIB + PER_RANK_MIB per rank: SMPI's state per rank (measured
about 450 KB at 37888 ranks: docs/dragonfly.md) and the simulator's own (about 30 MiB at two ranks)."""


def _meminfo_kib(field: str) -> int:
    """One field of /proc/meminfo, KiB (0 where there is none)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def machine_memory_mib() -> float:
    """The machine's memory, MiB."""
    return _meminfo_kib("MemTotal") / 1024


def memory_limit_mib() -> float:
    """The memory one simulation may hold, MiB: ``$TOPOLAB_MEMORY_LIMIT`` (MiB, > 0), else 90% of the machine's."""
    value = os.environ.get("TOPOLAB_MEMORY_LIMIT", "").strip()
    if not value:
        return LIMIT_FRACTION * machine_memory_mib()
    limit = float(value) if re.fullmatch(r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?", value) else -1.0
    if not 0 < limit < math.inf:
        raise StudyError(f"TOPOLAB_MEMORY_LIMIT must be a number of MiB > 0, got {value!r}")
    return limit


def estimate_mib(ranks: int, measured_peak_mib: float | None) -> float:
    """What a simulation is expected to hold, MiB: its last measured peak with a margin, else the per-rank model.

    >>> estimate_mib(6000, None), estimate_mib(6000, 480.0)
    (3100.0, 600.0)
    """
    if measured_peak_mib is not None:
        return MARGIN * measured_peak_mib
    return BASE_MIB + PER_RANK_MIB * ranks


def _tree(pid: int) -> Iterator[int]:
    """A process and its descendants (those that have gone are skipped)."""
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        yield current
        stack += [int(child) for child in children]


def _fields_kib(path: str, names: tuple[str, ...]) -> dict[str, int]:
    """The named ``Name: N kB`` fields of a /proc file; {} if the process has gone."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return {}
    return {line.split(":")[0]: int(line.split()[1]) for line in lines if line.split(":")[0] in names}


@dataclass
class MemorySampler:
    """Samples what the process tree of ``pid`` holds, KiB (module docstring); ``peak_kib``: the largest sample."""

    pid: int
    peak_kib: int = 0
    shmem_kib: int = 0
    """The tree's proportional share of shared memory at the last ``smaps_rollup`` read."""
    next_rollup: float = 0.0

    def _rollup(self, pids: list[int]) -> None:
        start = time.perf_counter()
        self.shmem_kib = sum(_fields_kib(f"/proc/{p}/smaps_rollup", ("Pss_Shmem",)).get("Pss_Shmem", 0) for p in pids)
        cost = time.perf_counter() - start
        self.next_rollup = time.monotonic() + ROLLUP_DUTY * cost

    def sample(self, exact: bool = False) -> int:
        """What the tree holds now, KiB: its anonymous memory and its share of the shared memory it maps (read
        from ``smaps_rollup`` when due, or when ``exact``)."""
        pids = list(_tree(self.pid))
        anon = shmem_mapped = 0
        for p in pids:
            fields = _fields_kib(f"/proc/{p}/status", ("RssAnon", "RssShmem"))
            anon += fields.get("RssAnon", 0)
            shmem_mapped += fields.get("RssShmem", 0)
        if shmem_mapped == 0:
            self.shmem_kib = 0
        elif exact or time.monotonic() >= self.next_rollup:
            self._rollup(pids)
        held = anon + min(self.shmem_kib, shmem_mapped)
        self.peak_kib = max(self.peak_kib, held)
        return held


def overrun(sampler: MemorySampler, limit_mib: float, label: str) -> str | None:
    """None while the run keeps to its limit and the machine to its reserve; else the one-line error that stops it."""
    held = sampler.sample()
    if held / 1024 > limit_mib:
        held = sampler.sample(exact=True)  # a stale share of shared memory never stops a run
        if held / 1024 > limit_mib:
            return (
                f"{label}: stopped at {held / 1024:.0f} MiB, over its memory limit of {limit_mib:.0f} MiB (anonymous "
                "and shared memory of its processes; set TOPOLAB_MEMORY_LIMIT in MiB to change the limit)"
            )
    available, total = _meminfo_kib("MemAvailable"), _meminfo_kib("MemTotal")
    if total and available < RESERVE_FRACTION * total:
        return (
            f"{label}: stopped at {held / 1024:.0f} MiB because the machine has {available / 1024:.0f} MiB of "
            f"{total / 1024:.0f} MiB left (a reserve of {RESERVE_FRACTION:.0%} keeps it up; run fewer simulations at "
            "once: TOPOLAB_WORKERS)"
        )
    return None
