"""Quantum ESPRESSO's pw.x (Debian's source package ``espresso`` 6.7), unmodified: a Fortran 90 MPI code whose
ranks each write their own files, judged by its own test suite's reference energy.

The code is fetched and built once per machine (``study_runner.simulation.debian_source``) with the MPI's Fortran
compiler (smpif90 or MPICH's mpif90), QE's own ``configure`` without ScaLAPACK or OpenMP (BLAS and LAPACK: Debian's
OpenBLAS, FFT: QE's internal one) and ``make pw``. One build setting is set by hand: ``FOX_FLAGS = -fPIC`` in
``make.inc``, the flags of QE's bundled XML library, which ``configure`` means to set and leaves empty (its test
``"try_foxflags" != ""`` compares a literal); smpif90 links pw.x as a shared object, which needs position-independent
code throughout.

The run is QE's own test ``test-suite/pw_scf/scf-disk_io.in`` (silicon, two k-points, ``disk_io = 'medium'``): every
rank writes its wavefunctions to its own file ``out/pwscf.wfcN`` (Fortran I/O on a unit found free by
``find_free_unit``, the idiom that failed when the ranks shared one gfortran runtime), rank 0 the XML data file.
A run verifies when the total energy matches the test suite's benchmark within its tolerance (8e-4 Ry,
``test-suite/userconfig.tmp``) and each rank wrote its file. The pseudopotential the test names, ``Si.pz-vbc.UPF``, is
not in ``pseudo/`` (the test suite downloads it); the tarball's copy in ``EPW/examples/sic/pp`` is the same file (the
MD5 the benchmark prints). Under SMPI, two SimGrid patches make it run: 0010 (each rank its own gfortran runtime)
and 0013 (QE's ``MPI_GATHERV`` with ``MPI_IN_PLACE`` and ``MPI_DATATYPE_NULL``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from study_runner.errors import StudyError
from study_runner.simulation.cache import run_key
from study_runner.simulation.codes import compiler_identity
from study_runner.simulation.debian_source import Source
from study_runner.simulation.debian_source import build_once
from study_runner.simulation.debian_source import copy_tree
from study_runner.simulation.debian_source import fetch_source
from study_runner.simulation.debian_source import third_party_dir

__all__ = [
    "ENERGY_TOLERANCE_RY",
    "INPUT",
    "PH_MAX_RANKS",
    "PH_STEPS",
    "SOURCE",
    "build_qe",
    "ph_report",
    "ph_setup",
    "pw_report",
    "pw_setup",
]

SOURCE = Source(
    "espresso", "espresso", "espresso_6.7.orig.tar.gz",
    "8f06ea31ae52ad54e900a2f51afd5c70f78096d9dcf39c86c2b17dccb1ec9c87", "qe-6.7", "configure",
)  # fmt: skip
"""The upstream tarball Debian 12 ships for espresso 6.7, as fetched and checked by apt."""
COMPILERS = {"smpi": ("smpif90", "smpicc"), "mpich": ("mpif90", "mpicc")}
PROGRAMS = {"pw.x": "PW/src/pw.x", "ph.x": "PHonon/PH/ph.x"}
"""The programs built, and where QE's build leaves them."""
CONFIGURE = ("--with-scalapack=no", "--enable-openmp=no")
TEST = "test-suite/pw_scf/scf-disk_io.in"
BENCHMARK = "test-suite/pw_scf/benchmark.out.git.inp=scf-disk_io.in"
PSEUDO = ("EPW/examples/sic/pp/Si.pz-vbc.UPF", "6dfa03ddd5817404712e03e4d12deb78")
INPUT = "scf-disk_io.in"
ENERGY_TOLERANCE_RY = 8.0e-4
MAX_RANKS = 16
"""The test's dense FFT grid has 15 or 16 planes: QE needs a plane per rank."""
_ENERGY = re.compile(r"^!\s+total energy\s+=\s+(-?\d+\.\d+) Ry", re.MULTILINE)
_PROCESSES = re.compile(r"running on\s+(\d+) processors")
_WALL = re.compile(r"^\s+PWSCF\s+:.*?([\d.]+)s WALL", re.MULTILINE)


def build_qe(cache_dir: Path | None, mpi: str, program: str = "pw.x", jobs: int = 2) -> Path:
    """QE's ``program`` (one of ``PROGRAMS``) built with ``mpi``'s Fortran compiler (smpi: smpif90; mpich: mpif90),
    once per machine with the others (``third_party_dir``)."""
    if mpi not in COMPILERS:
        raise StudyError(f"mpi must be one of {', '.join(COMPILERS)}, got {mpi!r}")
    if program not in PROGRAMS:
        raise StudyError(f"program must be one of {', '.join(PROGRAMS)}, got {program!r}")
    cache_dir = third_party_dir(cache_dir)
    source = fetch_source(SOURCE, cache_dir)
    f90, cc = COMPILERS[mpi]
    key = run_key(
        source=SOURCE.sha256, configure=CONFIGURE, fox="-fPIC", programs=PROGRAMS, compiler=compiler_identity(f90)
    )[:16]

    def make(scratch: Path, out: Path) -> None:
        tree = scratch / SOURCE.top
        copy_tree(source, tree)
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        configure = ["./configure", f"MPIF90={f90}", f"CC={cc}", f"F90={f90}", f"F77={f90}", *CONFIGURE]
        log = _step(configure, tree, env, "configure")
        settings = (tree / "make.inc").read_text()
        (tree / "make.inc").write_text(re.sub(r"^FOX_FLAGS\s*=.*$", "FOX_FLAGS = -fPIC", settings, flags=re.M))
        for target in ("pw", "ph"):
            log += _step(["nice", "-n", "10", "make", f"-j{jobs}", target], tree, env, f"make {target}")
        (out / "build.log").write_text(log)
        for name, path in PROGRAMS.items():
            shutil.copy2(tree / path, out / name)

    built = build_once(cache_dir / SOURCE.name / "build" / f"{mpi}-{key}", "ph.x", make)
    return built.parent / program


def _step(command: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()][-3:]
        raise StudyError(f"building Quantum ESPRESSO: {what} failed: {' / '.join(tail)}")
    return done.stdout + done.stderr


def _pseudopotential(workdir: Path, cache_dir: Path | None) -> Path:
    """``workdir/pseudo`` holding the pseudopotential the tests name, checked against the benchmark's MD5."""
    pseudo = workdir / "pseudo"
    pseudo.mkdir(exist_ok=True)
    path, md5 = PSEUDO
    data = (fetch_source(SOURCE, cache_dir) / path).read_bytes()
    if hashlib.md5(data).hexdigest() != md5:  # the checksum QE's benchmark prints
        raise StudyError(f"{path} is not the pseudopotential QE's benchmark used (MD5 {md5})")
    (pseudo / Path(path).name).write_bytes(data)
    return pseudo


def _input(test: str, workdir: Path, settings: dict[str, str], cache_dir: Path | None) -> None:
    """The test suite's input ``test`` in ``workdir``, its first namelist setting ``settings`` instead of its own."""
    text = (fetch_source(SOURCE, cache_dir) / test).read_text()
    text = re.sub(rf"^\s*({'|'.join(settings)})\s*=.*\n", "", text, flags=re.M | re.I)
    given = "".join(f"\n    {name} = '{value}'" for name, value in settings.items())
    text = re.sub(r"(&\w+)", lambda m: m.group(1) + given, text, count=1)
    (workdir / Path(test).name).write_text(text)


def pw_setup(workdir: Path, cache_dir: Path | None = None) -> None:
    """The test's input in ``workdir``, reading the pseudopotential from ``workdir/pseudo`` and writing to
    ``workdir/out``."""
    pseudo = _pseudopotential(workdir, cache_dir)
    _input(TEST, workdir, {"pseudo_dir": str(pseudo), "outdir": "./out"}, cache_dir)


def pw_report(stdout: str, workdir: Path, label: str, cache_dir: Path | None = None) -> dict[str, Any]:
    """The run's verdict: its total energy against the benchmark's, and the wavefunction file of each rank."""
    energies, processes = _ENERGY.findall(stdout), _PROCESSES.search(stdout)
    if not energies or processes is None:
        raise StudyError(f"{label}: pw.x printed no total energy or no process count")
    benchmark = _ENERGY.findall((fetch_source(SOURCE, cache_dir) / BENCHMARK).read_text())
    energy, reference, ranks = float(energies[-1]), float(benchmark[-1]), int(processes.group(1))
    wall = _WALL.search(stdout)
    failed = [] if abs(energy - reference) <= ENERGY_TOLERANCE_RY else [f"energy {energy} Ry, not {reference}"]
    files = _rank_files(workdir / "out", "pwscf.wfc", ranks)
    failed += [files] if files else []
    return {
        "verified": not failed,
        "failed": failed,
        "energy_Ry": energy,
        "benchmark_Ry": reference,
        "wavefunction_files": len(list((workdir / "out").glob("pwscf.wfc*"))),
        "time_s": float(wall.group(1)) if wall else None,
    }


PH_STEPS = ("test-suite/ph_base/si.scf.in", "test-suite/ph_base/si.phG.in")
"""QE's test ``ph_base`` for silicon at Gamma: pw.x's SCF, then ph.x's phonons and dielectric constant."""
PH_BENCHMARK = "test-suite/ph_base/benchmark.out.git.inp=si.phG.in.args=2"
FREQUENCY_TOLERANCE_CM = 2.0
"""Of a phonon frequency, in cm^-1 (``phfreq`` in the test suite's ``userconfig.tmp``)."""
DIELECTRIC_TOLERANCE = 5.0e-2
"""Of the dielectric constant (``diel`` there)."""
PH_MAX_RANKS = 20
"""The test's dense FFT grid is 20 x 20 x 20: QE needs a plane per rank."""
_FREQUENCY = re.compile(r"^\s+freq \(\s*\d+\) =\s+\S+ \[THz\] =\s+(-?\d+\.\d+) \[cm-1\]", re.MULTILINE)
_DIELECTRIC = re.compile(r"Dielectric constant in cartesian axis\s*\n\s*\n\s*\(\s*(-?\d+\.\d+)")
_PH_WALL = re.compile(r"^\s+PHONON\s+:.*?([\d.]+)s WALL", re.MULTILINE)


def ph_setup(workdir: Path, cache_dir: Path | None = None) -> None:
    """The two steps' inputs in ``workdir``: pw.x reads ``workdir/pseudo``, both write to ``workdir/out``."""
    scf, phonons = PH_STEPS
    _input(scf, workdir, {"pseudo_dir": str(_pseudopotential(workdir, cache_dir)), "outdir": "./out"}, cache_dir)
    _input(phonons, workdir, {"outdir": "./out"}, cache_dir)


def ph_report(stdout: str, workdir: Path, label: str, cache_dir: Path | None = None) -> dict[str, Any]:
    """ph.x's verdict: each phonon frequency and the dielectric constant against the benchmark's, and the file each
    rank wrote for itself: ph.x reads the wavefunctions pw.x collected in ``out/silicon.save`` and writes them again
    distributed, ``out/silicon.wfcN`` by rank N - 1 (pw.x, at this test's ``disk_io``, leaves none)."""
    frequencies, dielectric = _FREQUENCY.findall(stdout), _DIELECTRIC.search(stdout)
    processes = _PROCESSES.search(stdout)
    if not frequencies or dielectric is None or processes is None:
        raise StudyError(f"{label}: ph.x printed no frequencies, no dielectric constant or no process count")
    benchmark = (fetch_source(SOURCE, cache_dir) / PH_BENCHMARK).read_text()
    reference = [float(f) for f in _FREQUENCY.findall(benchmark)]
    found = [float(f) for f in frequencies]
    epsilon, epsilon_reference = float(dielectric.group(1)), float(_DIELECTRIC.search(benchmark).group(1))
    ranks = int(processes.group(1))
    failed = []
    if len(found) != len(reference) or any(
        abs(a - b) > FREQUENCY_TOLERANCE_CM for a, b in zip(found, reference, strict=True)
    ):
        failed.append(f"frequencies {found} cm-1, not {reference}")
    if abs(epsilon - epsilon_reference) > DIELECTRIC_TOLERANCE:
        failed.append(f"dielectric constant {epsilon}, not {epsilon_reference}")
    files = _rank_files(workdir / "out", "silicon.wfc", ranks)
    if files:
        failed.append(files)
    wall = _PH_WALL.search(stdout)
    return {
        "verified": not failed,
        "failed": failed,
        "frequencies_cm": found,
        "benchmark_frequencies_cm": reference,
        "dielectric": epsilon,
        "benchmark_dielectric": epsilon_reference,
        "wavefunction_files": len(list((workdir / "out").glob("silicon.wfc*"))),
        "time_s": float(wall.group(1)) if wall else None,
    }


def _rank_files(directory: Path, prefix: str, ranks: int) -> str:
    """What is wrong with the files ``prefix1`` .. ``prefix<ranks>`` that QE's ranks each write in ``directory``
    (their Fortran unit's file, one per rank), or ``""``."""
    files = sorted(path.name for path in directory.glob(f"{prefix}*"))
    return "" if files == sorted(f"{prefix}{n}" for n in range(1, ranks + 1)) else f"wavefunction files {files}"
