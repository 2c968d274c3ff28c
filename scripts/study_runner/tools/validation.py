"""Validation against real runs: the same third-party codes run for real under MPICH on this machine and simulated on
a platform of this machine, at 1 and 2 ranks; predicted / measured time per code.

The platform of this machine is calibrated from two measurements, each cached per machine beside the compute
calibration (``study_runner.simulation.compute``):

- its cores: one host with this machine's cores, each of the speed the DGEMM calibration measured, so that a burst
  benchmarked here is charged exactly its own duration (``--compute benchmark``: reference / core speed = 1);
- its intra-node path: an MPICH ping-pong between two ranks here (topolab's ``pingpong`` built with ``mpicc``): the
  latency is the one-way time of a 1-byte message, the bandwidth the slope between 1 MiB and 16 MiB.

What the comparison can show: whether benchmarked computation plus the alpha-beta intra-node path predict a real
code's time here. What it cannot: SMPI runs the ranks one after another on one core, so two ranks that would compete
for the memory bus and the shared cache in a real run each run alone in the simulation (a memory-bound code is then
predicted faster than it runs); MPICH's shared-memory protocols are not one latency and one bandwidth.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from generators.files import atomic_write_text
from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.compute import calibrate, calibration, machine_key
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.workdirs import work_directory
from study_runner.tools.realcodes import Code, hpcc, nas
from study_runner.tools.smpirun_on import prepare

__all__ = ["VALIDATED", "Comparison", "IntraNode", "compare", "intra_node", "measure_intra_node", "this_machine"]

VALIDATED: dict[str, Code] = {
    "is.B": nas("is", "B"),
    "ep.A": nas("ep", "A"),
    "dt.S": nas("dt", "S"),
    "hpcc.default": hpcc("default"),
}
"""The codes validated against real runs (DT's graph needs more processes than 1 or 2: shown as not applicable;
HPCC's time is HPL's)."""

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


def _real_mpi_pingpong() -> Path:
    """topolab's ping-pong built with the system's mpicc (``scripts/build --real-mpi``), built now if missing."""
    binary = REPO / "build-mpi" / "bin" / "pingpong"
    if not binary.is_file():
        done = subprocess.run([str(REPO / "scripts" / "build"), "--real-mpi"], capture_output=True, text=True)
        if done.returncode != 0 or not binary.is_file():
            raise StudyError(f"cannot build the apps with mpicc: {(done.stderr or done.stdout).strip()[-300:]}")
    return binary


def measure_intra_node(cache_dir: Path | None = None) -> IntraNode:
    """Measure the intra-node path now (an MPICH ping-pong, 2 ranks here) and cache it."""
    sizes = ",".join(map(str, PINGPONG_SIZES))
    command = ["mpiexec", "-n", "2", str(_real_mpi_pingpong()), "-s", sizes, "-i", "50", "-w", "5"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise StudyError(f"the MPICH ping-pong failed: {(done.stderr or done.stdout).strip()[-300:]}")
    oneway = {str(r["bytes"]): r["oneway_s_min"] for r in map(json.loads, done.stdout.splitlines())}
    small, mid, large = (oneway[str(size)] for size in PINGPONG_SIZES)
    result = IntraNode(
        latency_s=small,
        bandwidth_Bps=(PINGPONG_SIZES[2] - PINGPONG_SIZES[1]) / (large - mid),
        oneway_s=oneway,
        method="MPICH ping-pong between 2 ranks of this machine, minimum of 50 round trips per size: latency = "
        "one-way time of 1 B, bandwidth = (16 MiB - 1 MiB) / (its one-way time difference)",
        measured=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    atomic_write_text(_intra_path(cache_dir), json.dumps(asdict(result), indent=1) + "\n")
    return result


def _intra_path(cache_dir: Path | None) -> Path:
    return (cache_dir or default_cache_dir()) / "calibration" / f"intra-node-{machine_key()}.json"


def intra_node(cache_dir: Path | None = None) -> IntraNode:
    """This machine's cached intra-node path, measured first if there is none."""
    path = _intra_path(cache_dir)
    if not path.is_file():
        return measure_intra_node(cache_dir)
    try:
        return IntraNode(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        raise StudyError(f"{path} is not an intra-node calibration topolab wrote: remove it") from None


def this_machine(cache_dir: Path | None = None) -> list[str]:
    """smpirun-on's arguments for a platform of this machine: one host, its cores at the calibrated core speed, its
    intra-node path as measured."""
    compute, path = calibration(cache_dir), intra_node(cache_dir)
    return [
        "crossbar", "--hosts", "1", "--cores", str(os.cpu_count() or 1),
        "--host-speed", f"{compute.flops!r}f",
        "--shm-bw", f"{path.bandwidth_Bps!r}Bps", "--shm-lat", f"{path.latency_s!r}s",
    ]  # fmt: skip


def median(values: list[float]) -> float:
    """The median of measured times (the validation repeats every run)."""
    return statistics.median(values)


@dataclass(frozen=True)
class Comparison:
    """One code at one rank count: its own reported times, real and simulated, over the repeats."""

    code: str
    ranks: int
    real_s: tuple[float, ...]
    simulated_s: tuple[float, ...]
    detail: str = ""

    @property
    def ratio(self) -> float | None:
        """Predicted / measured, medians."""
        if not self.real_s or not self.simulated_s:
            return None
        return median(list(self.simulated_s)) / median(list(self.real_s))


def _run_real(code: Code, ranks: int, cache_dir: Path) -> float:
    binary = code.build(cache_dir, "mpich")
    label = f"{code.name} under MPICH, {ranks} ranks"
    with work_directory("validate") as scratch:
        code.setup(scratch, ranks)
        done = subprocess.run(
            ["mpiexec", "-n", str(ranks), str(binary), *code.args(ranks)],
            cwd=scratch, capture_output=True, text=True, timeout=3600, check=False,
        )  # fmt: skip
        if done.returncode not in code.exit_ok:
            raise StudyError(f"{label}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-200:]}")
        record = code.read(done.stdout, scratch, label)
    if not record.get("verified"):
        raise StudyError(f"{label}: the code's own verification failed")
    return float(record["time_s"])


def _run_simulated(code: Code, ranks: int, cache_dir: Path) -> float:
    binary = code.build(cache_dir, "smpi")
    argv = [*this_machine(cache_dir), "--np", str(ranks), "--ranks-per-node", str(ranks), "--compute", "benchmark"]
    command = prepare([*argv, *code.options, "--", str(binary), *code.args(ranks)])
    label = f"{code.name} simulated on this machine, {ranks} ranks"
    with work_directory("validate") as scratch:
        code.setup(scratch, ranks)
        outcome = run_smpirun_measured(command, scratch, 3600, label, code.exit_ok)
        record = code.read(outcome.stdout, scratch, label)
    if not record.get("verified"):
        raise StudyError(f"{label}: the code's own verification failed")
    return float(record["time_s"])


def compare(code: Code, ranks: int, repeats: int, cache_dir: Path) -> Comparison:
    """``code`` at ``ranks`` ranks, run for real and simulated ``repeats`` times each, alternately."""
    why = code.unfit(ranks)
    if why is not None:
        return Comparison(code.name, ranks, (), (), why)
    real, simulated = [], []
    for _ in range(repeats):
        real.append(_run_real(code, ranks, cache_dir))
        simulated.append(_run_simulated(code, ranks, cache_dir))
    return Comparison(code.name, ranks, tuple(real), tuple(simulated))


def table(comparisons: list[Comparison]) -> list[str]:
    """Markdown rows: the code's own time, real and simulated (median, with the range over the repeats), and the
    ratio of the medians."""

    def spread(values: tuple[float, ...]) -> str:
        return f"{median(list(values)):.2f} ({min(values):.2f}-{max(values):.2f})" if values else ""

    rows = ["| code | ranks | real MPICH (s) | simulated (s) | simulated / real |", "|---|---:|---:|---:|---:|"]
    for c in comparisons:
        ratio = "" if c.ratio is None else f"{c.ratio:.3f}"
        rows.append(f"| {c.code} | {c.ranks} | {spread(c.real_s)} | {spread(c.simulated_s)} | {ratio or c.detail} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    """``scripts/check-real-codes --validate``: the table of predicted / measured times at 1 and 2 ranks."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="check-real-codes --validate", description=__doc__.splitlines()[0])
    parser.add_argument("--validate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--codes", default=",".join(VALIDATED), help="comma-separated (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each kind (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="also write every comparison to this JSON file")
    parser.add_argument("--recalibrate", action="store_true", help="measure this machine's cores and path again")
    args = parser.parse_args(argv)
    cache_dir = default_cache_dir()
    if args.recalibrate:
        calibrate(cache_dir)
        measure_intra_node(cache_dir)
    comparisons = []
    try:
        names = [name.strip() for name in args.codes.split(",")]
        unknown = [name for name in names if name not in VALIDATED]
        if unknown:
            raise StudyError(f"unknown code {unknown[0]!r}: known are {', '.join(VALIDATED)}")
        intra = intra_node(cache_dir)
        print(f"this machine: {calibration(cache_dir).describe()}", file=sys.stderr)
        print(f"intra-node: {intra.latency_s * 1e6:.2f} us, {intra.bandwidth_Bps / 1e9:.2f} GB/s ({intra.method})",
              file=sys.stderr)  # fmt: skip
        for name in names:
            for ranks in (1, 2):
                comparisons.append(compare(VALIDATED[name], ranks, args.repeats, cache_dir))
                print(f"{name}, {ranks} ranks: {table(comparisons[-1:])[-1]}", file=sys.stderr)
    except StudyError as err:
        print(f"check-real-codes: error: {err}", file=sys.stderr)
        return 2
    print("\n".join(table(comparisons)))
    if args.json is not None:
        atomic_write_text(args.json, json.dumps([asdict(c) | {"ratio": c.ratio} for c in comparisons], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
