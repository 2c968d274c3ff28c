"""The platform of this machine: the one a user's own code can be validated on against a real run here.

It is calibrated from two measurements, each cached per machine beside the compute calibration
(``study_runner.simulation.compute``) and measured on first use:

- its cores: one host with this machine's cores, each of the speed the DGEMM calibration measured, so that a burst
  benchmarked here is charged exactly its own duration (``--compute benchmark``: reference / core speed = 1);
- its intra-node path: an MPICH ping-pong between two ranks here (topolab's ``pingpong`` built with ``mpicc``): the
  latency is the one-way time of a 1-byte message, the bandwidth the slope between 1 MiB and 16 MiB.

``scripts/smpirun-on this-machine [--np N] [--ranks-per-node K] --compute benchmark -- ./app`` runs on it;
``scripts/check-real-codes --validate`` compares third-party codes' real runs with simulations on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.compute import cached_measurement
from study_runner.simulation.compute import calibration
from study_runner.simulation.compute import machine_key
from study_runner.simulation.compute import store_measurement
from study_runner.simulation.machine_load import Bound
from study_runner.simulation.machine_load import busy_note
from study_runner.simulation.machine_load import check_quiet
from study_runner.simulation.machine_load import figure_doubts
from study_runner.simulation.machine_load import measured_with_doubts
from study_runner.simulation.machine_load import read_doubts
from study_runner.simulation.machine_load import warn_if_flagged
from study_runner.simulation.node_memory import memory_bandwidth

__all__ = [
    "THIS_MACHINE",
    "IntraNode",
    "describe_this_machine",
    "intra_node",
    "measure_intra_node",
    "this_machine",
]

PINGPONG_SIZES = (1, 1 << 20, 16 << 20)
"""Bytes of the calibrating ping-pong: the latency at 1 B, the bandwidth between 1 MiB and 16 MiB."""


@dataclass(frozen=True)
class IntraNode:
    """The intra-node path of this machine, from an MPICH ping-pong between two of its ranks."""

    latency_s: float
    bandwidth_Bps: float
    oneway_s: dict[str, float]
    """The measured one-way times (minimum over the iterations), by message size in bytes."""
    method: str
    measured: str
    busy_cores: float = 0.0
    """Cores other work kept busy just before (``machine_load``): over ``BUSY_CORES``, the figures are flagged."""
    doubts: tuple[str, ...] = ()
    """Why the figures are doubtful (``machine_load.figure_doubts``), when they still were measured again."""

    def find_doubts(self) -> tuple[str, ...]:
        """What is doubtful in this path: a latency or a bandwidth outside what shared memory gives."""
        return figure_doubts({"latency": (self.latency_s, LATENCY), "bandwidth": (self.bandwidth_Bps, BANDWIDTH)})


LATENCY = Bound(5e-8, 2e-5, "us", 1e-6)
BANDWIDTH = Bound(5e8, 2e11, "GB/s", 1e9)
"""Where the one-way latency and the bandwidth between two ranks of one machine lie through an MPI library's shared
memory: from some 0.1 us and a few GB/s on a server of 2010 to some 100 GB/s (this VM's: 0.30-0.63 us, 2.7-10.4 GB/s;
measured busy: 1330 us)."""


def _again(cache_dir: Path | None) -> str:
    return f"remove {_intra_path(cache_dir)} (the next smpirun-on this-machine measures it again)"


def _real_mpi_pingpong() -> Path:
    """topolab's ping-pong built with the system's mpicc (``scripts/build --real-mpi``), built now if missing."""
    binary = REPO / "build-mpi" / "bin" / "pingpong"
    if not binary.is_file():
        done = subprocess.run([str(REPO / "scripts" / "build"), "--real-mpi"], capture_output=True, text=True)
        if done.returncode != 0 or not binary.is_file():
            raise StudyError(f"cannot build the apps with mpicc: {(done.stderr or done.stdout).strip()[-300:]}")
    return binary


def measure_intra_node(cache_dir: Path | None = None) -> IntraNode:
    """Measure the intra-node path now (an MPICH ping-pong, 2 ranks here) and cache it; flagged when the machine is
    busy (``machine_load``)."""
    busy = check_quiet("the intra-node path", _again(cache_dir), refuse=False)
    result = measured_with_doubts(
        lambda: _pingpong(busy), IntraNode.find_doubts, "the intra-node path", _again(cache_dir)
    )
    store_measurement(_intra_path(cache_dir), result)
    return result


def _pingpong(busy: float) -> IntraNode:
    """The MPICH ping-pong between two ranks of this machine, as its intra-node path."""
    sizes = ",".join(map(str, PINGPONG_SIZES))
    command = ["mpiexec", "-n", "2", str(_real_mpi_pingpong()), "-s", sizes, "-i", "50", "-w", "5"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise StudyError(f"the MPICH ping-pong failed: {(done.stderr or done.stdout).strip()[-300:]}")
    oneway = {str(r["bytes"]): r["oneway_s_min"] for r in map(json.loads, done.stdout.splitlines())}
    small, mid, large = (oneway[str(size)] for size in PINGPONG_SIZES)
    return IntraNode(
        latency_s=small,
        bandwidth_Bps=(PINGPONG_SIZES[2] - PINGPONG_SIZES[1]) / (large - mid),
        oneway_s=oneway,
        method="MPICH ping-pong between 2 ranks of this machine, minimum of 50 round trips per size: latency = "
        "one-way time of 1 B, bandwidth = (16 MiB - 1 MiB) / (its one-way time difference)",
        measured=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        busy_cores=round(busy, 3),
    )


def _intra_path(cache_dir: Path | None) -> Path:
    return (cache_dir or default_cache_dir()) / "calibration" / f"intra-node-{machine_key()}.json"


def intra_node(cache_dir: Path | None = None) -> IntraNode:
    """This machine's cached intra-node path, measured first if there is none."""
    found = cached_measurement(
        _intra_path(cache_dir),
        lambda raw: IntraNode(**{**raw, "doubts": read_doubts(raw)}),
        lambda: measure_intra_node(cache_dir),
        "an intra-node calibration",
        remedy=_again(cache_dir),
    )
    assert found is not None  # measured when not cached
    warn_if_flagged("this machine's intra-node path", found.busy_cores, _again(cache_dir), found.doubts)
    return found


THIS_MACHINE = "this-machine"
"""smpirun-on's name for the platform of this machine (``scripts/smpirun-on this-machine -- ./app``)."""


def this_machine(cache_dir: Path | None = None) -> list[str]:
    """smpirun-on's arguments for a platform of this machine: one host, its cores at the calibrated core speed, its
    intra-node path and its memory (node and one core) as measured (each measured on first use, then cached per
    machine)."""
    compute, path, memory = calibration(cache_dir), intra_node(cache_dir), memory_bandwidth(cache_dir)
    assert memory is not None  # measured when not cached
    # The node has at least what one of its cores draws alone: where one core saturates it, all cores together
    # measure a little less (2% here on 2026-11-29, their own overhead), which is no smaller node.
    node_Bps = max(memory.node_Bps, memory.core_Bps)
    return [
        "crossbar", "--hosts", "1", "--cores", str(os.cpu_count() or 1),
        "--host-speed", f"{compute.flops!r}f",
        "--shm-bw", f"{path.bandwidth_Bps!r}Bps", "--shm-lat", f"{path.latency_s!r}s",
        "--memory-bw", f"{node_Bps!r}Bps", "--core-memory-bw", f"{memory.core_Bps!r}Bps",
    ]  # fmt: skip


def describe_this_machine(cache_dir: Path | None = None) -> str:
    """One line: what the platform of this machine is made of, each figure with how and when it was measured."""
    compute, path = calibration(cache_dir), intra_node(cache_dir)
    return (
        f"{THIS_MACHINE}: 1 host, {os.cpu_count() or 1} cores of {compute.describe()}; intra-node path "
        f"{path.latency_s * 1e6:.2f} us, {path.bandwidth_Bps / 1e9:.2f} GB/s "
        f"(MPICH ping-pong, measured {path.measured}{busy_note(path.busy_cores, _again(cache_dir))}); "
        f"{memory_bandwidth(cache_dir).describe()}"
    )
