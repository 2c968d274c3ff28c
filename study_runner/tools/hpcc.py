"""The HPC Challenge suite (Debian's source package ``hpcc`` 1.5.0), unmodified: fetched, built with SimGrid's
``smpicc`` or MPICH's ``mpicc`` against Debian's single-threaded OpenBLAS, given an input, and judged by its own
verification.

::

    python -m study_runner.tools.hpcc --mpi mpich --ranks 2 --problem small
    python -m study_runner.tools.hpcc --mpi smpi --ranks 64 -- crossbar --hosts 64 --compute benchmark

The source is the upstream tarball of the package (``scripts/fetch-debian-source hpcc``), fetched once and
unpacked once per tarball into ``<builds>/hpcc/src/<digest>/``. A build is HPCC's own ``make arch=ARCH`` with
an arch Make file written here (:func:`arch_file`), once per source, compiler and flags into
``<builds>/hpcc/build/<key>/hpcc``. Nothing of HPCC is patched; two build choices are not HPCC's defaults:

``-Wl,--undefined=main`` (both MPIs)
    ``smpicc`` links a shared object, in which the linker pulls no member out of HPCC's ``libhpl.a`` (nothing
    is undefined there yet): the result is an empty 14 KB object. Asking for ``main`` pulls ``hpcc.o`` and all it
    needs, as an executable link does by itself.
``-DRA_SANDIA_OPT2`` (``ra="sandia"``, the default)
    HPCC's documented alternative for Global RandomAccess (``MPIRandomAccess_Algorithm=2`` in its summary):
    hypercube exchanges with ``MPI_Sendrecv``/``MPI_Wait``. The standard algorithm (``ra="standard"``) polls with
    ``MPI_Test`` once per update, and under SMPI its figure is SMPI's injected polling time (``smpi/test``, 0.1 ms
    a call), not the network's; before SimGrid patch 0006 it never ended at all (``MPI_Test`` on
    ``MPI_REQUEST_NULL`` with ``MPI_STATUS_IGNORE`` left ``flag`` unset; ``docs/hpcc.md`` has the evidence).

HPCC reads ``hpccinf.txt`` in its working directory and appends to ``hpccoutf.txt`` there. HPL's N fixes every
other size: each process gets ``8 N^2 / (P Q)`` bytes, from which STREAM, DGEMM, FFT and RandomAccess size their
local data, and PTRANS transposes an N/2 matrix (:data:`PROBLEMS`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from study_runner.errors import StudyError
from study_runner.simulation.cache import run_key
from study_runner.simulation.codes import COMPILERS
from study_runner.simulation.codes import compiler_identity
from study_runner.simulation.debian_source import Source
from study_runner.simulation.debian_source import build_once
from study_runner.simulation.debian_source import copy_tree
from study_runner.simulation.debian_source import fetch_source
from study_runner.simulation.debian_source import third_party_dir
from study_runner.simulation.workdirs import work_directory

__all__ = [
    "CHECKED",
    "FIGURES",
    "INPUT",
    "OUTPUT",
    "PROBLEMS",
    "Problem",
    "arch_file",
    "build_hpcc",
    "fetch_hpcc",
    "hpcc_input",
    "parse_hpcc",
    "process_grid",
    "run_hpcc",
]

TARBALL = "hpcc_1.5.0.orig.tar.gz"
TARBALL_SHA256 = "0a6fef7ab9f3347e549fed65ebb98234feea9ee18aea0c8f59baefbe3cf7ffb8"
"""The upstream tarball Debian ships for hpcc 1.5.0 (bookworm), as fetched and checked by apt."""
TOP = "hpcc-1.5.0"
SOURCE = Source("hpcc", "hpcc", TARBALL, TARBALL_SHA256, TOP, "Makefile")
BLAS_LIB = Path("/usr/lib/x86_64-linux-gnu/openblas-serial")
BLAS_INCLUDE = Path("/usr/include/x86_64-linux-gnu/openblas-serial")
"""Debian's single-threaded OpenBLAS (libopenblas-serial-dev), linked by path with an rpath to it."""
RA_DEFINES = {"sandia": ("-DRA_SANDIA_OPT2",), "standard": ()}
INPUT = "hpccinf.txt"
OUTPUT = "hpccoutf.txt"


@dataclass(frozen=True)
class Problem:
    """An HPCC problem: HPL's order ``n`` and block ``nb`` (every other size follows from n and the ranks)."""

    n: int
    nb: int
    what: str


PROBLEMS = {
    "small": Problem(2000, 40, "the tests' problem: 32 MB of HPL matrix in all, a few seconds at 4 ranks"),
    "default": Problem(6000, 80, "the real-code checks: 288 MB of HPL matrix in all, 64 ranks in about 2 minutes"),
}
"""The problems by name. N is fixed, not per rank: the work summed over ranks (what SMPI runs on one core) stays
about the same at any rank count (``docs/hpcc.md`` has the measured times and memory)."""

FIGURES = (
    "HPL_Tflops", "PTRANS_GBs", "MPIRandomAccess_GUPs", "MPIRandomAccess_LCG_GUPs", "StarRandomAccess_GUPs",
    "SingleRandomAccess_GUPs", "StarRandomAccess_LCG_GUPs", "SingleRandomAccess_LCG_GUPs", "MPIFFT_Gflops",
    "StarFFT_Gflops", "SingleFFT_Gflops", "StarSTREAM_Copy", "StarSTREAM_Scale", "StarSTREAM_Add",
    "StarSTREAM_Triad", "SingleSTREAM_Copy", "SingleSTREAM_Scale", "SingleSTREAM_Add", "SingleSTREAM_Triad",
    "StarDGEMM_Gflops", "SingleDGEMM_Gflops", "MaxPingPongLatency_usec", "MinPingPongLatency_usec",
    "AvgPingPongLatency_usec", "MaxPingPongBandwidth_GBytes", "MinPingPongBandwidth_GBytes",
    "AvgPingPongBandwidth_GBytes", "NaturallyOrderedRingLatency_usec", "RandomlyOrderedRingLatency_usec",
    "NaturallyOrderedRingBandwidth_GBytes", "RandomlyOrderedRingBandwidth_GBytes",
)  # fmt: skip
"""The figures of merit HPCC's summary gives (-1 when a test did not run: b_eff's at one rank)."""


def fetch_hpcc(cache_dir: Path | None = None) -> Path:
    """The unpacked HPCC source tree, ``<builds>/hpcc/src/<digest>/hpcc-1.5.0``: downloaded and unpacked once, the
    tarball checked against Debian's (``study_runner.simulation.debian_source``)."""
    return fetch_source(SOURCE, cache_dir)


def arch_file(mpi: str, ra: str = "sandia") -> str:
    """HPCC's arch Make file (``hpl/Make.<arch>``) for ``mpi``'s compiler and the RandomAccess algorithm ``ra``.

    >>> text = arch_file("smpi")
    >>> [line.split("=")[1].strip() for line in text.splitlines() if line.startswith(("CC ", "HPL_OPTS"))]
    ['-DHPL_CALL_CBLAS -DRA_SANDIA_OPT2', 'smpicc']
    """
    if mpi not in COMPILERS or ra not in RA_DEFINES:
        raise StudyError(f"mpi must be one of {', '.join(COMPILERS)} and ra one of {', '.join(RA_DEFINES)}")
    settings = {
        "SHELL": "/bin/sh", "CD": "cd", "CP": "cp", "LN_S": "ln -s", "MKDIR": "mkdir -p", "RM": "/bin/rm -f",
        "TOUCH": "touch", "ARCH": "$(arch)", "TOPdir": "../../..", "INCdir": "$(TOPdir)/include",
        "BINdir": "$(TOPdir)/bin/$(ARCH)", "LIBdir": "$(TOPdir)/lib/$(ARCH)", "HPLlib": "$(LIBdir)/libhpl.a",
        "LAinc": f"-I{BLAS_INCLUDE}", "LAlib": f"-L{BLAS_LIB} -Wl,-rpath,{BLAS_LIB} -lopenblas",
        "HPL_INCLUDES": "-I$(INCdir) -I$(INCdir)/$(ARCH) $(LAinc)", "HPL_LIBS": "$(HPLlib) $(LAlib) -lm",
        "HPL_OPTS": " ".join(("-DHPL_CALL_CBLAS", *RA_DEFINES[ra])), "HPL_DEFS": "$(HPL_OPTS) $(HPL_INCLUDES)",
        "CC": COMPILERS[mpi], "CCNOOPT": "$(HPL_DEFS)", "CCFLAGS": "$(HPL_DEFS) -O2",
        "LINKER": COMPILERS[mpi], "LINKFLAGS": "-O2 -Wl,--undefined=main",
        "ARCHIVER": "ar", "ARFLAGS": "r", "RANLIB": "echo",
    }  # fmt: skip
    lines = [f"{name:<12} = {value}" for name, value in settings.items()]
    return (
        f"# HPCC arch file written by study_runner.tools.hpcc ({mpi}, RandomAccess: {ra})\n" + "\n".join(lines) + "\n"
    )


def build_hpcc(cache_dir: Path | None, mpi: str, ra: str = "sandia", jobs: int = 2) -> Path:
    """The ``hpcc`` binary built with ``mpi``'s compiler (smpi: smpicc; mpich: mpicc), once per machine.

    The key is the source's digest, the arch file (every flag) and the compiler's identity; the build runs in a
    copy of the source in a work directory and its result (binary, arch file, make's log) is renamed into place.
    """
    cache_dir = third_party_dir(cache_dir)
    source = fetch_hpcc(cache_dir)
    arch = f"topolab_{mpi}"
    make_file = arch_file(mpi, ra)
    key = run_key(source=TARBALL_SHA256, arch=make_file, compiler=compiler_identity(COMPILERS[mpi]))[:16]
    target = cache_dir / "hpcc" / "build" / f"{mpi}-{ra}-{key}"

    def make(scratch: Path, out: Path) -> None:
        tree = scratch / TOP
        copy_tree(source, tree)
        (tree / "hpl" / f"Make.{arch}").write_text(make_file)
        command = ["nice", "-n", "10", "make", f"-j{jobs}", f"arch={arch}"]  # the machine is shared
        done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
        (out / "build.log").write_text(done.stdout + done.stderr)
        (out / f"Make.{arch}").write_text(make_file)
        if done.returncode != 0 or not (tree / "hpcc").is_file():
            tail = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()][-3:]
            raise StudyError(f"building HPCC with {COMPILERS[mpi]} failed: {' / '.join(tail)}")
        shutil.move(tree / "hpcc", out / "hpcc")

    return build_once(target, "hpcc", make)


def process_grid(ranks: int) -> tuple[int, int]:
    """HPL's P x Q grid for ``ranks`` processes: P <= Q, as square as possible.

    >>> [process_grid(n) for n in (1, 2, 4, 8, 12, 16, 64, 7)]
    [(1, 1), (1, 2), (2, 2), (2, 4), (3, 4), (4, 4), (8, 8), (1, 7)]
    """
    if ranks < 1:
        raise StudyError(f"HPCC needs at least one process, got {ranks}")
    p = max(d for d in range(1, math.isqrt(ranks) + 1) if ranks % d == 0)
    return p, ranks // p


def hpcc_input(ranks: int, problem: str = "default") -> str:
    """``hpccinf.txt`` for ``ranks`` processes and one of :data:`PROBLEMS`: HPL's sample input of the HPCC
    distribution (``_hpccinf.txt``) with this N, NB and P x Q grid, and no extra PTRANS sizes.

    >>> lines = hpcc_input(64, "small").splitlines()
    >>> lines[5:8], lines[10:12], len(lines)
    (['2000 Ns', '1 # of NBs', '40 NBs'], ['8 Ps', '8 Qs'], 36)
    """
    if problem not in PROBLEMS:
        raise StudyError(f"unknown HPCC problem {problem!r}: known are {', '.join(PROBLEMS)}")
    size, (p, q) = PROBLEMS[problem], process_grid(ranks)
    values = [
        "HPLinpack benchmark input file", "Innovative Computing Laboratory, University of Tennessee",
        "HPL.out output file name (if any)", "8 device out (6=stdout,7=stderr,file)",
        "1 # of problems sizes (N)", f"{size.n} Ns", "1 # of NBs", f"{size.nb} NBs",
        "0 PMAP process mapping (0=Row-,1=Column-major)", "1 # of process grids (P x Q)", f"{p} Ps", f"{q} Qs",
        "16.0 threshold", "1 # of panel fact", "2 PFACTs (0=left, 1=Crout, 2=Right)",
        "1 # of recursive stopping criterium", "4 NBMINs (>= 1)", "1 # of panels in recursion", "2 NDIVs",
        "1 # of recursive panel fact.", "1 RFACTs (0=left, 1=Crout, 2=Right)", "1 # of broadcast",
        "1 BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)", "1 # of lookahead depth", "1 DEPTHs (>=0)",
        "2 SWAP (0=bin-exch,1=long,2=mix)", "64 swapping threshold", "0 L1 in (0=transposed,1=no-transposed) form",
        "0 U  in (0=transposed,1=no-transposed) form", "1 Equilibration (0=no,1=yes)",
        "8 memory alignment in double (> 0)", "##### This line (no. 32) is ignored (it serves as a separator). ######",
        "0 Number of additional problem sizes for PTRANS", "1200 10000 30000 values of N",
        "0 number of additional blocking sizes for PTRANS", "40 9 8 13 13 20 16 32 64 values of NB",
    ]  # fmt: skip
    return "\n".join(values) + "\n"


_SECTION = re.compile(r"^Begin of (\w+) section\.\n(.*?)^End of \1 section\.$", re.MULTILINE | re.DOTALL)
_NODES_WITH_ERROR = re.compile(r"^Node\(s\) with error (\d+)$", re.MULTILINE)
_THRESHOLD = re.compile(r"Computational tests pass if scaled residuals are less than\s+(\S+)")


def _value(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _nodes_ok(body: str) -> tuple[bool, str]:
    """HPCC's count of processes whose test returned an error (Star and Single tests): none, or no count at all."""
    counts = [int(n) for n in _NODES_WITH_ERROR.findall(body)]
    return all(n == 0 for n in counts), f"nodes with error {counts[0]}" if counts else ""


def _detail(name: str, body: str, threshold: float, eps: float) -> tuple[bool, str] | None:
    """Test ``name``'s own check as HPCC's source applies it, from what it printed (None: it printed none)."""
    if name in ("HPL", "PTRANS"):
        pattern = r"\.\.\.\.\.\. (PASSED|FAILED)$" if name == "HPL" else r"^(?:WALL|CPU) .* (PASSED|FAILED) "
        verdicts = re.findall(pattern, body, re.MULTILINE)
        return set(verdicts) == {"PASSED"}, f"residual checks {verdicts.count('PASSED')}/{len(verdicts)} PASSED"
    if "RandomAccess" in name:  # failed when more than 1% of the table is wrong
        found = re.findall(r"^Found (\d+) errors in (\d+) locations \((passed|failed)\)", body, re.MULTILINE)
        text = "; ".join(f"{e} errors in {t} locations ({v})" for e, t, v in found)
        return (all(v == "passed" for *_, v in found), text) if found else None
    if name.endswith("DGEMM"):
        residual = re.search(r"^Scaled residual: (\S+)$", body, re.MULTILINE)
        return None if residual is None else (float(residual[1]) < threshold, f"scaled residual {residual[1]}")
    if name.endswith("STREAM"):
        if "Solution Validates" not in body and "Failed Validation" not in body:
            return None
        return "Failed Validation" not in body, "solution validates" if "Failed" not in body else "failed validation"
    size = re.search(r"^Vector size:\s+(\d+)$", body, re.MULTILINE)  # FFT: max|x - x0| / ln(n) / eps < threshold
    error = re.search(r"^max\(\|x-x0\|\):\s+(\S+)$", body, re.MULTILINE)
    if size is None or error is None:
        return None
    scaled = float(error[1]) / math.log(int(size[1])) / eps
    return scaled < threshold, f"max|x-x0|/ln(n)/eps = {scaled:.3g} (< {threshold:g})"


def _check(name: str, body: str, threshold: float, eps: float) -> tuple[bool, str]:
    """Whether test ``name`` passed, and the evidence. A Single test that ran on another process than 0 prints no
    detail (its verdict is broadcast into HPCC's failure flag, ``Success``); a Star test prints process 0's."""
    detail = _detail(name, body, threshold, eps)
    nodes, where = _nodes_ok(body)
    selected = re.search(r"^Node selected (\d+)$", body, re.MULTILINE)
    if detail is None and selected is not None and selected[1] != "0":
        return nodes, f"ran on process {selected[1]}: its verdict counts in Success; {where}"
    if detail is None:
        return False, f"no verdict printed; {where}".rstrip("; ")
    return detail[0] and nodes, f"{detail[1]}; {where}".rstrip("; ")


CHECKED = (
    "HPL", "PTRANS", "MPIRandomAccess", "StarRandomAccess", "SingleRandomAccess", "MPIRandomAccess_LCG",
    "StarRandomAccess_LCG", "SingleRandomAccess_LCG", "StarDGEMM", "SingleDGEMM", "StarSTREAM", "SingleSTREAM",
    "MPIFFT", "StarFFT", "SingleFFT",
)  # fmt: skip
"""The tests HPCC verifies (b_eff's LatencyBandwidth has no check)."""


def parse_hpcc(text: str) -> dict[str, Any]:
    """HPCC's ``hpccoutf.txt``: its summary, each test's figure and verdict, and whether everything verified.

    Returns ``figures`` (:data:`FIGURES` from the summary), ``checks`` (test: passed, by the criterion HPCC's source
    applies: HPL's and PTRANS's residual checks, RandomAccess's errors below 1% of the table, DGEMM's scaled
    residual and FFT's scaled error below the input's threshold, STREAM's validation, and no process with an
    error), ``evidence`` (test: what decided), ``success`` (the summary's ``Success=1``: no test set HPCC's failure
    flag, on any rank), ``complete`` (the run reached its end), ``verified`` (all of these), ``time_s`` (HPL's
    time) and ``summary`` (every ``key=value`` of the summary section).

    >>> parse_hpcc("Begin of HPL section.\\n...... PASSED\\nEnd of HPL section.\\n")["checks"]
    {'HPL': True}
    >>> parse_hpcc("")["verified"]
    False
    """
    sections = {name: body for name, body in _SECTION.findall(text)}
    summary = {
        key: _value(value)
        for key, _, value in (line.partition("=") for line in sections.get("Summary", "").splitlines())
        if value
    }
    threshold = float(match[1]) if (match := _THRESHOLD.search(text)) else 16.0
    eps = float(summary.get("dweps", 2.0**-53))
    checks, evidence = {}, {}
    for name in (name for name in CHECKED if name in sections):
        checks[name], evidence[name] = _check(name, sections[name], threshold, eps)
    missing = [name for name in CHECKED if name not in sections]
    complete = "End of HPC Challenge tests." in text and not missing and bool(summary)
    success = summary.get("Success") == 1
    return {
        "verified": complete and success and all(checks.values()),
        "success": success,
        "complete": complete,
        "missing": missing,
        "checks": checks,
        "evidence": evidence,
        "figures": {name: summary[name] for name in FIGURES if name in summary},
        "time_s": summary.get("HPL_time"),
        "summary": summary,
    }


def _time_report(text: str) -> dict[str, float]:
    """Wall time (s) and peak resident memory (MiB) from ``/usr/bin/time -v``'s report.

    >>> _time_report("Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.50\\nMaximum resident set size (kbytes): 2048")
    {'wall_s': 62.5, 'peak_mib': 2.0}
    """
    report: dict[str, float] = {}
    for line in text.splitlines():
        name, _, value = line.strip().rpartition(": ")
        if name.startswith("Elapsed (wall clock) time"):
            report["wall_s"] = sum(float(part) * 60**i for i, part in enumerate(reversed(value.split(":"))))
        elif name == "Maximum resident set size (kbytes)":
            report["peak_mib"] = int(value) / 1024
    return report


def run_hpcc(command: Sequence[str], ranks: int, problem: str, workdir: Path, timeout: float = 1800.0) -> dict:
    """Run ``command`` (HPCC under mpiexec or smpirun) in ``workdir`` with the input of ``ranks`` and ``problem``,
    under ``nice -n 10`` and ``/usr/bin/time -v`` (when installed); return :func:`parse_hpcc`'s record with the
    exit status, ``wall_s``, ``peak_mib`` (the largest process's peak resident memory) and, under SMPI with
    computation benchmarked, ``simulated_s`` and ``benchmarked_s``. ``stdout.txt`` and ``stderr.txt`` stay in
    ``workdir``; a run still going after ``timeout`` seconds is killed with its whole process group."""
    from study_runner.simulation.compute import compute_timing

    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / INPUT).write_text(hpcc_input(ranks, problem))
    (workdir / OUTPUT).unlink(missing_ok=True)
    report = workdir / "time.txt"
    timer = ["/usr/bin/time", "-v", "-o", str(report)] if Path("/usr/bin/time").is_file() else []  # Debian's time
    wrapped = [*timer, "nice", "-n", "10", *command]
    start = time.monotonic()
    with subprocess.Popen(
        wrapped, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the whole group: mpiexec's or smpirun's children too
            stdout, stderr = process.communicate()
            stderr += f"\nhpcc: killed after {timeout:.0f} s\n"
    done = subprocess.CompletedProcess(wrapped, process.returncode, stdout, stderr)
    (workdir / "stdout.txt").write_text(done.stdout)
    (workdir / "stderr.txt").write_text(done.stderr)
    output = workdir / OUTPUT
    record = parse_hpcc(output.read_text(errors="replace") if output.is_file() else "")
    record.update(returncode=done.returncode, wall_s=time.monotonic() - start, **compute_timing(done.stderr))
    record.update(_time_report(report.read_text() if report.is_file() else ""))
    record["verified"] = record["verified"] and done.returncode == 0
    return record


def _command(args: argparse.Namespace, binary: Path) -> list[str]:
    """mpiexec's command line, or smpirun's as ``smpirun-on`` prepares it from the platform arguments."""
    if args.mpi == "mpich":
        return ["mpiexec", "-n", str(args.ranks), str(binary)]
    if not args.platform:
        raise StudyError("--mpi smpi needs smpirun-on's platform arguments after '--' (e.g. crossbar --hosts 64)")
    from study_runner.tools.smpirun_on import prepare

    return prepare([*args.platform, "--np", str(args.ranks), "--", str(binary)])


def main(argv: Sequence[str] | None = None) -> int:
    """Build HPCC, run it once and print its record as JSON (without the summary); exit 0 when it verified."""
    argv = list(sys.argv[1:] if argv is None else argv)
    platform = argv[argv.index("--") + 1 :] if "--" in argv else []
    parser = argparse.ArgumentParser(prog="python -m study_runner.tools.hpcc", description=__doc__.splitlines()[0])
    parser.add_argument("--mpi", choices=COMPILERS, default="smpi", help="smpirun (default) or MPICH's mpiexec")
    parser.add_argument("--ranks", type=int, default=4, help="number of processes (default 4)")
    parser.add_argument("--problem", choices=PROBLEMS, default="small", help="problem size (default small)")
    parser.add_argument("--ra", choices=RA_DEFINES, default="sandia", help="Global RandomAccess algorithm")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds (default 1800)")
    parser.add_argument("--keep", type=Path, help="run in this directory and keep its files")
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    args.platform = platform
    try:
        binary = build_hpcc(None, args.mpi, args.ra)
        command = _command(args, binary)
        if args.keep is not None:
            record = run_hpcc(command, args.ranks, args.problem, args.keep.absolute(), args.timeout)
        else:
            with work_directory("hpcc") as scratch:
                record = run_hpcc(command, args.ranks, args.problem, scratch, args.timeout)
    except (StudyError, OSError) as err:
        print(f"hpcc: error: {err}", file=sys.stderr)
        return 2
    record.pop("summary")
    print(json.dumps({"mpi": args.mpi, "ranks": args.ranks, "problem": args.problem, **record}))
    return 0 if record["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
