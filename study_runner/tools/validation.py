"""Validation against real runs: the same third-party codes run for real under MPICH on this machine and simulated on
a platform of this machine, at 1 and 2 ranks; predicted / measured time per code.

The platform of this machine (``study_runner.tools.this_machine``: its cores at the calibrated speed, its intra-node
path from an MPICH ping-pong) is the one users get with ``scripts/smpirun-on this-machine``.

With ``--memory``, each code's memory fraction is measured first (``study_runner.tools.memory_fraction``, at 1 rank)
and every simulation runs twice, with ``--compute benchmark`` and with ``--compute memory`` at that fraction.

What the comparison can show: whether benchmarked computation plus the alpha-beta intra-node path predict a real
code's time here. What it cannot: SMPI runs the ranks one after another on one core, so two ranks that would compete
for the memory bus and the shared cache in a real run each run alone in the simulation (a memory-bound code is then
predicted faster than it runs, unless ``--compute memory`` charges its memory part at their share); MPICH's
shared-memory protocols are not one latency and one bandwidth.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from contextlib import chdir
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators.errors import missing_build
from generators.files import atomic_write_text
from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.compute import calibrate
from study_runner.simulation.compute import calibration
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.workdirs import work_directory
from study_runner.tools.realcodes import Code
from study_runner.tools.realcodes import hpcc
from study_runner.tools.realcodes import nas
from study_runner.tools.realcodes import run_steps_before
from study_runner.tools.smpirun_on import prepare
from study_runner.tools.this_machine import THIS_MACHINE
from study_runner.tools.this_machine import intra_node
from study_runner.tools.this_machine import measure_intra_node

__all__ = ["HPCG_BOX", "VALIDATED", "Comparison", "compare", "hpcg_code", "memory_fraction"]

HPCG_BOX = 48
"""Grid points per dimension and rank of the HPCG validation: 48^3 rows, about 45 MB per rank, beyond this
machine's 32 MiB last-level cache (the 32^3 box is partly cached: 1.56 Gflop/s here against 1.27 at 48^3 and 1.31
at 64^3)."""


def _topolab_app(name: str, mpi: str) -> Path:
    """An app of topolab's own (apps/), as scripts/build built it (check-real-codes runs it first): with smpicc into
    build/, with MPICH's mpicc into build-mpi/ (``--real-mpi``)."""
    real = mpi == "mpich"
    binary = REPO / ("build-mpi" if real else "build") / "bin" / name
    if not binary.is_file():
        raise StudyError(missing_build(str(binary)) + (" --real-mpi" if real else ""))
    return binary


def _hpcg_report(stdout: str, label: str) -> dict[str, Any]:
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if len(lines) != 1:
        raise StudyError(f"{label}: expected one JSON line from hpcg, got {len(lines)}")
    return json.loads(lines[0])


def hpcg_code(box: int = HPCG_BOX) -> Code:
    """topolab's HPCG (apps/hpcg, the specification's reference algorithms) on a box^3 grid per rank, verified."""
    return Code(
        f"hpcg.{box}",
        lambda cache, mpi: _topolab_app("hpcg", mpi),
        lambda n: [f"--nx={box}", f"--ny={box}", f"--nz={box}", "--verify"],
        read=lambda stdout, workdir, label: _hpcg_report(stdout, label),
    )


VALIDATED: dict[str, Code] = {
    "is.B": nas("is", "B"),
    "ep.A": nas("ep", "A"),
    "dt.S": nas("dt", "S"),
    "hpcc.default": hpcc("default"),
    f"hpcg.{HPCG_BOX}": hpcg_code(),
}
"""The codes validated against real runs (DT's graph needs more processes than 1 or 2: shown as not applicable;
HPCC's time is HPL's; HPCG, topolab's own implementation of its specification, is the memory-bound one)."""


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
    memory_s: tuple[float, ...] = ()
    """Simulated with ``--compute memory`` at the code's measured memory fraction (``--memory``), else empty."""
    memory_fraction: float | None = None

    @property
    def ratio(self) -> float | None:
        """Predicted / measured, medians."""
        if not self.real_s or not self.simulated_s:
            return None
        return median(list(self.simulated_s)) / median(list(self.real_s))

    @property
    def memory_ratio(self) -> float | None:
        """Predicted with the node's memory / measured, medians."""
        if not self.real_s or not self.memory_s:
            return None
        return median(list(self.memory_s)) / median(list(self.real_s))


def _run_real(code: Code, ranks: int, cache_dir: Path) -> float:
    binary = code.build(cache_dir, "mpich")
    label = f"{code.name} under MPICH, {ranks} ranks"
    with work_directory("validate") as scratch:
        code.setup(scratch, ranks)
        for program, args, ok in [*((first, args, (0,)) for first, args in code.before(cache_dir, "mpich")),
                                  (binary, code.args(ranks), code.exit_ok)]:  # fmt: skip
            done = subprocess.run(
                ["mpiexec", "-n", str(ranks), str(program), *args],
                cwd=scratch, capture_output=True, text=True, timeout=3600, check=False,
            )  # fmt: skip
            if done.returncode not in ok:
                raise StudyError(f"{label}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-200:]}")
        record = code.read(done.stdout, scratch, label)
    if not record.get("verified"):
        raise StudyError(f"{label}: the code's own verification failed")
    return float(record["time_s"])


def _run_simulated(code: Code, ranks: int, cache_dir: Path, memory_fraction: float | None = None) -> float:
    binary = code.build(cache_dir, "smpi")
    mode = ["benchmark"] if memory_fraction is None else ["memory", "--memory-fraction", repr(memory_fraction)]
    argv = [THIS_MACHINE, "--np", str(ranks), "--compute", *mode]
    command = prepare([*argv, *code.options, "--", str(binary), *code.args(ranks)])
    label = f"{code.name} simulated on this machine, {ranks} ranks"
    with work_directory("validate") as scratch:
        code.setup(scratch, ranks)
        run_steps_before(code, cache_dir, [*argv, *code.options], scratch, 3600, label)
        outcome = run_smpirun_measured(command, scratch, 3600, label, code.exit_ok)
        record = code.read(outcome.stdout, scratch, label)
    if not record.get("verified"):
        raise StudyError(f"{label}: the code's own verification failed")
    return float(record["time_s"])


def memory_fraction(code: Code, repeats: int, cache_dir: Path) -> float:
    """The code's memory fraction, measured at 1 rank by contention (``scripts/measure-memory-fraction``)."""
    from study_runner.tools.memory_fraction import measure_fraction

    binary = code.build(cache_dir, "smpi")
    with work_directory("validate") as scratch, chdir(scratch):
        code.setup(scratch, 1)
        measured = measure_fraction([str(binary), *code.args(1)], 1, repeats, code.options)
    print(f"{code.name}: memory fraction {measured.fraction:.3f} (x{measured.ratio:.3f} with the other cores "
          f"streaming)", file=sys.stderr)  # fmt: skip
    return measured.fraction


def compare(code: Code, ranks: int, repeats: int, cache_dir: Path, memory_fraction: float | None = None) -> Comparison:
    """``code`` at ``ranks`` ranks, run for real and simulated ``repeats`` times each, alternately; with a
    ``memory_fraction``, simulated with ``--compute memory`` as well."""
    why = code.unfit(ranks)
    if why is not None:
        return Comparison(code.name, ranks, (), (), why)
    real, simulated, memory = [], [], []
    for _ in range(repeats):
        real.append(_run_real(code, ranks, cache_dir))
        simulated.append(_run_simulated(code, ranks, cache_dir))
        if memory_fraction is not None:
            memory.append(_run_simulated(code, ranks, cache_dir, memory_fraction))
    return Comparison(code.name, ranks, tuple(real), tuple(simulated), "", tuple(memory), memory_fraction)


def table(comparisons: list[Comparison]) -> list[str]:
    """Markdown rows: the code's own time, real and simulated (median, with the range over the repeats), and the
    ratio of the medians."""

    def spread(values: tuple[float, ...]) -> str:
        return f"{median(list(values)):.2f} ({min(values):.2f}-{max(values):.2f})" if values else ""

    def shown(ratio: float | None) -> str:
        return "" if ratio is None else f"{ratio:.3f}"

    memory = any(c.memory_s for c in comparisons)
    head = "| code | ranks | real MPICH (s) | simulated (s) | simulated / real |"
    rows = [head + (" memory fraction | with memory (s) | with memory / real |" if memory else "")]
    rows.append("|---|---:|---:|---:|---:|" + ("---:|---:|---:|" if memory else ""))
    for c in comparisons:
        row = f"| {c.code} | {c.ranks} | {spread(c.real_s)} | {spread(c.simulated_s)} | {shown(c.ratio) or c.detail} |"
        if memory:
            fraction = "" if c.memory_fraction is None else f"{c.memory_fraction:.3f}"
            row += f" {fraction} | {spread(c.memory_s)} | {shown(c.memory_ratio)} |"
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    """``scripts/check-real-codes --validate``: the table of predicted / measured times at 1 and 2 ranks."""
    import argparse

    parser = argparse.ArgumentParser(prog="check-real-codes --validate", description=__doc__.splitlines()[0])
    parser.add_argument("--validate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--codes", default=",".join(VALIDATED), help="comma-separated (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each kind (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="also write every comparison to this JSON file")
    parser.add_argument("--recalibrate", action="store_true", help="measure this machine's cores and path again")
    parser.add_argument(
        "--memory", action="store_true", help="also measure each code's memory fraction and predict with it"
    )
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
            fraction = memory_fraction(VALIDATED[name], args.repeats, cache_dir) if args.memory else None
            for ranks in (1, 2):
                comparisons.append(compare(VALIDATED[name], ranks, args.repeats, cache_dir, fraction))
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
