"""Third-party codes as proof: the NAS Parallel Benchmarks, the HPC Challenge suite and Quantum ESPRESSO, unmodified,
on topolab's machines with computation modelled, each run judged by the code's own verification.

The codes come from the package registries only: NAS IS, EP and DT from the SimGrid source distribution that
``scripts/setup`` verified (``examples/smpi/NAS``: SimGrid's ports of NPB 3.3), HPCC from Debian's source package
``hpcc`` (``study_runner.tools.hpcc``). Each is built once into the cache with ``smpicc`` (and with MPICH's
``mpicc`` for the validation against real runs, ``study_runner.tools.validation``), then run through
``smpirun-on``'s own preparation with ``--compute benchmark`` on several families at several rank counts. Quantum
ESPRESSO's pw.x (Debian's ``espresso``, ``study_runner.tools.espresso``) is the Fortran code whose ranks each write
files.

A run passes when it exits 0 and the code's verification says so: NAS prints ``Verification = SUCCESSFUL``, HPCC
its tests' residual checks. EP's main loop is an ``SMPI_SAMPLE_GLOBAL`` loop and its tallies are
``SMPI_SHARED_MALLOC`` memory: it runs with ``smpi/sample-skip:no`` (SimGrid patch 0004) and
``smpi/shared-malloc:no`` so that it computes its real result; DT's class A black-hole and shuffle graphs fail their
verification under MPICH as well (the port's reference values), so DT runs the white-hole graph.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.codes import build_nas
from study_runner.simulation.compute import calibration
from study_runner.simulation.compute import compute_timing
from study_runner.simulation.outputs import parse_nas
from study_runner.simulation.simgrid_options import cfg
from study_runner.simulation.smpi import EXACT_COMPUTATION
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.workdirs import work_directory
from study_runner.tools.smpirun_on import prepare

__all__ = [
    "CODES",
    "QUICK_CODES",
    "TARGETS",
    "Code",
    "Outcome",
    "Target",
    "nas",
    "run_case",
    "run_steps_before",
]


@dataclass(frozen=True)
class Code:
    """A third-party code: how to build it, its arguments at a rank count, and how to read its verdict."""

    name: str
    build: Callable[[Path, str], Path]
    """``build(cache_dir, mpi)``: the binary."""
    args: Callable[[int], list[str]]
    """Its command line at a rank count."""
    unfit: Callable[[int], str | None] = lambda ranks: None
    """Why it cannot run at a rank count (None: it can)."""
    options: tuple[str, ...] = ()
    """SMPI options it needs under smpirun (not under a real MPI)."""
    setup: Callable[[Path, int], None] = lambda workdir, ranks: None
    """Writes its input files into the run's working directory."""
    read: Callable[[str, Path, str], dict[str, Any]] = lambda stdout, workdir, label: parse_nas(stdout, label)[0]
    """The code's report as one record with ``verified`` (and its own ``time_s``)."""
    exit_ok: tuple[int, ...] = (0,)
    """Exit statuses of a run that reached its report (NAS DT's main returns 1 always, under MPICH too)."""
    before: Callable[[Path, str], list[tuple[Path, list[str]]]] = lambda cache, mpi: []
    """``before(cache_dir, mpi)``: runs (binary, arguments) made first, in the same working directory, on the same
    target and ranks, each of which must succeed (QE's pw.x, whose files ph.x reads)."""


DT_GRAPH_NODES = {"S": 5, "W": 11, "A": 21, "B": 43}
"""Processes DT's white-hole graph needs per class (what dt.c prints when there are fewer)."""
EP_OPTIONS = EXACT_COMPUTATION
"""EP computes its real result: every iteration of its sampled loop runs, and each rank has its own tallies."""


def _unfit(code: str, klass: str) -> Callable[[int], str | None]:
    """Why NAS ``code`` of class ``klass`` cannot run at a rank count: IS needs a power of two, DT its graph's nodes."""
    if code == "is":
        return lambda n: None if n & (n - 1) == 0 else "IS needs a power-of-two number of processes"
    if code == "dt":
        need = DT_GRAPH_NODES[klass]
        return lambda n: None if n >= need else f"DT class {klass} needs {need} processes (its graph's nodes)"
    return lambda n: None


def nas(code: str, klass: str) -> Code:
    """NAS ``code`` (is, ep, dt) of class ``klass`` as SimGrid ships it (DT on its white-hole graph)."""
    return Code(
        f"{code}.{klass}",
        lambda cache, mpi: build_nas(cache, code, mpi),
        (lambda n: [str(n), klass, "WH"]) if code == "dt" else (lambda n: [str(n), klass]),
        _unfit(code, klass),
        EP_OPTIONS if code == "ep" else (),
        exit_ok=(0, 1) if code == "dt" else (0,),
    )


def _hpcc_report(workdir: Path, label: str) -> dict[str, Any]:
    from study_runner.tools.hpcc import OUTPUT
    from study_runner.tools.hpcc import parse_hpcc

    path = workdir / OUTPUT
    if not path.is_file():
        raise StudyError(f"{label}: HPCC wrote no {OUTPUT}")
    record = parse_hpcc(path.read_text(errors="replace"))
    failed = [name for name, passed in record["checks"].items() if not passed] + record["missing"]
    return {
        "verified": record["verified"],
        "time_s": record["time_s"],
        "failed": failed,
        **{key: record["figures"].get(key) for key in ("HPL_Tflops", "PTRANS_GBs", "MPIRandomAccess_GUPs")},
    }


def hpcc(problem: str) -> Code:
    """The HPC Challenge suite (``study_runner.tools.hpcc``) on one of its problems, judged by every check HPCC makes;
    its time is HPL's."""
    from study_runner.tools.hpcc import INPUT
    from study_runner.tools.hpcc import build_hpcc
    from study_runner.tools.hpcc import hpcc_input

    return Code(
        f"hpcc.{problem}",
        lambda cache, mpi: build_hpcc(cache, mpi),
        lambda n: [],
        setup=lambda workdir, n: (workdir / INPUT).write_text(hpcc_input(n, problem)),
        read=lambda stdout, workdir, label: _hpcc_report(workdir, label),
    )


def espresso() -> Code:
    """Quantum ESPRESSO's pw.x on its test ``scf-disk_io`` (``study_runner.tools.espresso``): Fortran, every rank
    writing its own files; judged by the test suite's benchmark energy and each rank's file."""
    from study_runner.tools.espresso import INPUT
    from study_runner.tools.espresso import MAX_RANKS
    from study_runner.tools.espresso import build_qe
    from study_runner.tools.espresso import pw_report
    from study_runner.tools.espresso import pw_setup

    return Code(
        "qe.scf-disk_io",
        lambda cache, mpi: build_qe(cache, mpi),
        lambda n: ["-in", INPUT],
        lambda n: None if n <= MAX_RANKS else f"the test's FFT grid has {MAX_RANKS} planes, fewer than {n} ranks",
        setup=lambda workdir, n: pw_setup(workdir),
        read=lambda stdout, workdir, label: pw_report(stdout, workdir, label),
    )


def phonons() -> Code:
    """Quantum ESPRESSO's ph.x on its test ``ph_base`` (silicon at Gamma) after pw.x's SCF: a second Fortran program
    of the suite, reading what pw.x wrote and writing its own files per rank; judged by the benchmark's frequencies
    and dielectric constant (``study_runner.tools.espresso``)."""
    from study_runner.tools.espresso import PH_MAX_RANKS
    from study_runner.tools.espresso import PH_STEPS
    from study_runner.tools.espresso import build_qe
    from study_runner.tools.espresso import ph_report
    from study_runner.tools.espresso import ph_setup

    scf, phonon = (Path(step).name for step in PH_STEPS)
    return Code(
        "qe.ph-si-gamma",
        lambda cache, mpi: build_qe(cache, mpi, "ph.x"),
        lambda n: ["-in", phonon],
        lambda n: None if n <= PH_MAX_RANKS else f"the test's FFT grid has {PH_MAX_RANKS} planes, fewer than {n} ranks",
        setup=lambda workdir, n: ph_setup(workdir),
        read=lambda stdout, workdir, label: ph_report(stdout, workdir, label),
        before=lambda cache, mpi: [(build_qe(cache, mpi, "pw.x"), ["-in", scf])],
    )


CODES: dict[str, Code] = {
    **{name: nas(*name.split(".")) for name in ("is.B", "ep.A", "dt.W")},
    "hpcc.default": hpcc("default"),
    "qe.scf-disk_io": espresso(),
    "qe.ph-si-gamma": phonons(),
}
"""The codes of the check, by name (code.class or code.problem)."""
QUICK_CODES: dict[str, Code] = {
    **{name: nas(*name.split(".")) for name in ("is.S", "ep.S", "dt.S")},
    "hpcc.small": hpcc("small"),
    "qe.scf-disk_io": espresso(),
    "qe.ph-si-gamma": phonons(),
}
"""``--quick``: the same codes at class S, HPCC's small problem."""


@dataclass(frozen=True)
class Target:
    """Where a code runs: smpirun-on's platform arguments (a family and its parameters, or a ready platform file,
    ``{reference}`` standing for this machine's calibrated core speed) and the ranks placed on each host."""

    platform: tuple[str, ...]
    ranks_per_node: int = 1
    what: str = ""

    def arguments(self, reference: float) -> list[str]:
        """The platform arguments, this machine's speed filled in."""
        return [arg.replace("{reference}", f"{reference!r}f") for arg in self.platform]


READY = REPO / "build" / "platforms"
TARGETS: dict[str, Target] = {
    "crossbar": Target(
        ("crossbar", "--hosts", "64", "--host-speed", "{reference}"), 1, "64 nodes of this machine's cores"
    ),
    "bgq": Target(
        (str(READY / "bgq-partitions" / "16x4x4x4x2.so"),), 16, "Blue Gene/Q partition 16x4x4x4x2, 16 ranks per node"
    ),
    "mlfm": Target(("mlfm", "--d", "4", "--host-speed", "{reference}"), 1, "MLFM d = 4 (80 servers)"),
    "tofu": Target((str(READY / "fx10" / "fx10.so"),), 1, "the FX10's Tofu, one rank per node"),
    "threequads": Target(("threequads", "--q", "4", "--host-speed", "{reference}"), 1, "Three Quads q = 4"),
}
"""Where the codes run. Nodes the papers leave open run at this machine's per-core speed."""


@dataclass(frozen=True)
class Outcome:
    """One code at one rank count on one target."""

    code: str
    target: str
    ranks: int
    status: str  # "pass", "fail" or "n/a"
    detail: str = ""
    wall_s: float | None = None
    peak_mib: float | None = None
    record: dict[str, Any] = field(default_factory=dict)


def run_steps_before(code: Code, cache_dir: Path, argv: list[str], workdir: Path, timeout: float, label: str) -> None:
    """``code``'s runs before its own (``Code.before``), each under smpirun-on's ``argv`` in ``workdir``; a failed
    one is ``StudyError``."""
    for first, args in code.before(cache_dir, "smpi"):
        run_smpirun_measured(prepare([*argv, "--", str(first), *args]), workdir, timeout, f"{label}: {first.name}")


def run_case(code: Code, target: str, ranks: int, cache_dir: Path, timeout: float = 3600.0) -> Outcome:
    """``code`` at ``ranks`` ranks on ``TARGETS[target]`` with computation benchmarked, judged by its verification."""
    why = code.unfit(ranks)
    if why is not None:
        return Outcome(code.name, target, ranks, "n/a", why)
    place = TARGETS[target]
    reference = calibration(cache_dir).flops
    binary = code.build(cache_dir, "smpi")
    argv = [*place.arguments(reference), "--np", str(ranks), "--ranks-per-node", str(place.ranks_per_node)]
    argv += ["--compute", "benchmark", *(cfg(o) for o in code.options)]
    command = prepare([*argv, "--", str(binary), *code.args(ranks)])
    label = f"{code.name} on {target}, {ranks} ranks"
    with work_directory("realcode") as scratch:
        code.setup(scratch, ranks)
        try:
            run_steps_before(code, cache_dir, argv, scratch, timeout, label)
            outcome = run_smpirun_measured(command, scratch, timeout, label, code.exit_ok)
            record = {**code.read(outcome.stdout, scratch, label), **compute_timing(outcome.stderr)}
        except StudyError as err:
            return Outcome(code.name, target, ranks, "fail", " ".join(str(err).split())[:400])
    status = "pass" if record.get("verified") else "fail"
    failed = record.get("failed")
    detail = (
        "" if status == "pass" else "the code's own verification failed" + (f": {', '.join(failed)}" if failed else "")
    )
    return Outcome(code.name, target, ranks, status, detail, outcome.wall_s, outcome.peak_memory_mib, record)


def outcome_rows(outcomes: Sequence[Outcome]) -> list[str]:
    """A Markdown table of every run: verdict, the code's time, SMPI's simulated time, wall time and memory."""
    rows = ["| code | target | ranks | verdict | code's time (s) | simulated (s) | wall (s) | peak (MiB) |"]
    rows.append("|---|---|---:|---|---:|---:|---:|---:|")
    for o in outcomes:
        r = o.record

        def number(value: float | None, digits: int = 2) -> str:
            return "" if value is None else f"{value:.{digits}f}"

        rows.append(
            f"| {o.code} | {o.target} | {o.ranks} | {o.status}{(': ' + o.detail) if o.detail else ''} "
            f"| {number(r.get('time_s'))} | {number(r.get('simulated_s'), 3)} | {number(o.wall_s, 1)} "
            f"| {number(o.peak_mib, 0)} |"
        )
    return rows


def _names(text: str, known: Sequence[str], what: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in known]
    if unknown or not all(names):
        raise StudyError(f"unknown {what} {', '.join(map(repr, unknown or ['']))}: known are {', '.join(known)}")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    """Build and run the codes; print a table of every run and every failure; exit 1 if any run failed."""
    import argparse
    import json
    import sys

    from generators.files import atomic_write_text
    from generators.params import positive_int
    from study_runner.simulation.cache import default_cache_dir
    from study_runner.simulation.workdirs import unwinding_signals

    parser = argparse.ArgumentParser(prog="check-real-codes", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="class S codes on crossbar and bgq at 4 and 16 ranks")
    parser.add_argument("--codes", help=f"comma-separated (default: {', '.join(CODES)})")
    parser.add_argument("--targets", help=f"comma-separated (default: {', '.join(TARGETS)})")
    parser.add_argument("--ranks", help="comma-separated rank counts (default: 16,64)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="also write every outcome to this JSON file")
    args = parser.parse_args(argv)
    codes = QUICK_CODES if args.quick else CODES
    try:
        chosen = _names(args.codes, list(codes), "code") if args.codes else list(codes)
        targets = (
            _names(args.targets, list(TARGETS), "target")
            if args.targets
            else (["crossbar", "bgq"] if args.quick else list(TARGETS))
        )
        ranks = [positive_int(t, "--ranks") for t in (args.ranks or ("4,16" if args.quick else "16,64")).split(",")]
    except (StudyError, ValueError) as err:
        print(f"check-real-codes: error: {err}", file=sys.stderr)
        return 2
    outcomes: list[Outcome] = []
    total = len(chosen) * len(targets) * len(ranks)
    with unwinding_signals():
        for name in chosen:
            for target in targets:
                for n in ranks:
                    outcome = run_case(codes[name], target, n, default_cache_dir(), args.timeout)
                    outcomes.append(outcome)
                    verdict = outcome.status + (f" ({outcome.detail})" if outcome.detail else "")
                    wall = f", {outcome.wall_s:.1f} s" if outcome.wall_s is not None else ""
                    print(f"[{len(outcomes)}/{total}] {name} on {target}, {n} ranks: {verdict}{wall}", file=sys.stderr)
    print("\n".join(outcome_rows(outcomes)))
    if args.json is not None:
        atomic_write_text(args.json, json.dumps([o.__dict__ for o in outcomes], indent=1, default=str) + "\n")
    failed = [o for o in outcomes if o.status == "fail"]
    for o in failed:
        print(f"failed: {o.code} on {o.target}, {o.ranks} ranks: {o.detail}")
    passed = sum(o.status == "pass" for o in outcomes)
    print(f"{passed} of {len(outcomes)} runs passed, {len(failed)} failed, {len(outcomes) - passed - len(failed)} n/a")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
