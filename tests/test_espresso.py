"""Quantum ESPRESSO's pw.x and ph.x (Debian's espresso 6.7, ``study_runner.tools.espresso``), unmodified, under
smpirun: Fortran MPI codes whose ranks each write their own files (the case that failed while the ranks shared one
gfortran runtime), ph.x reading what pw.x wrote and calling the system BLAS's complex functions (the case that
crashed while smpif90 compiled with -ff2c), each judged by its own test suite's benchmark, on three families; and the
judgements can fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.debian_source import fetch_source
from study_runner.tools.espresso import PH_BENCHMARK
from study_runner.tools.espresso import SOURCE
from study_runner.tools.espresso import build_qe
from study_runner.tools.espresso import ph_report
from study_runner.tools.espresso import pw_report
from study_runner.tools.espresso import pw_setup
from study_runner.tools.realcodes import QUICK_CODES
from study_runner.tools.realcodes import run_case

pytestmark = pytest.mark.simgrid

CODE = QUICK_CODES["qe.scf-disk_io"]
PHONONS = QUICK_CODES["qe.ph-si-gamma"]


@pytest.fixture(scope="module")
def pw() -> Path:
    """pw.x and ph.x built with smpif90, once into the cache (about 3 minutes on 2 cores the first time)."""
    return build_qe(None, "smpi")


@pytest.mark.parametrize("target", ["crossbar", "tofu", "mlfm"])
def test_every_rank_writes_its_files_and_the_energy_is_the_benchmarks(pw: Path, target: str) -> None:
    outcome = run_case(CODE, target, 4, default_cache_dir(), timeout=600)
    assert outcome.status == "pass", outcome.detail
    record = outcome.record
    assert record["wavefunction_files"] == 4  # pwscf.wfc1 .. pwscf.wfc4, one per rank
    assert abs(record["energy_Ry"] - record["benchmark_Ry"]) < 1e-5  # the benchmark: -15.79449593 Ry


def test_a_wrong_energy_or_a_missing_file_fails(pw: Path, tmp_path: Path) -> None:
    pw_setup(tmp_path)
    assert "pseudo_dir" in (tmp_path / "scf-disk_io.in").read_text()
    (tmp_path / "out").mkdir()
    for n in (1, 2):
        (tmp_path / "out" / f"pwscf.wfc{n}").write_bytes(b"x")
    output = "     Parallel version (MPI), running on     2 processors\n"
    output += "!    total energy              =     -15.79449454 Ry\n"
    assert pw_report(output, tmp_path, "test")["verified"] is True
    wrong = pw_report(output.replace("-15.79449454", "-15.7900"), tmp_path, "test")
    assert wrong["verified"] is False and wrong["failed"][0].startswith("energy -15.79 Ry")
    (tmp_path / "out" / "pwscf.wfc2").unlink()
    assert pw_report(output, tmp_path, "test")["failed"] == ["wavefunction files ['pwscf.wfc1']"]


def test_more_ranks_than_the_test_has_planes_do_not_apply() -> None:
    outcome = run_case(CODE, "crossbar", 64, default_cache_dir())
    assert (outcome.status, outcome.detail) == ("n/a", "the test's FFT grid has 16 planes, fewer than 64 ranks")


@pytest.mark.parametrize("target", ["crossbar", "tofu", "mlfm"])
def test_phonons_read_what_pw_wrote_and_match_the_benchmark(pw: Path, target: str) -> None:
    outcome = run_case(PHONONS, target, 4, default_cache_dir(), timeout=600)
    assert outcome.status == "pass", outcome.detail
    record = outcome.record
    assert record["wavefunction_files"] == 4  # silicon.wfc1 .. silicon.wfc4, one per rank, written by ph.x
    assert len(record["frequencies_cm"]) == 6  # 3 acoustic and 3 optical modes of silicon at Gamma
    for found, published in zip(record["frequencies_cm"], record["benchmark_frequencies_cm"], strict=True):
        assert abs(found - published) <= 2.0  # QE's own tolerance (phfreq)


def test_a_wrong_frequency_or_a_missing_rank_file_fails(pw: Path, tmp_path: Path) -> None:
    benchmark = (fetch_source(SOURCE, None) / PH_BENCHMARK).read_text()
    output = benchmark.replace("running on     1 processors", "running on     2 processors")
    out = tmp_path / "out"
    out.mkdir()
    for n in (1, 2):
        (out / f"silicon.wfc{n}").write_bytes(b"x")
    assert ph_report(output, tmp_path, "test")["verified"] is True
    wrong = ph_report(output.replace("510.157229 [cm-1]", "515.157229 [cm-1]", 1), tmp_path, "test")
    assert wrong["verified"] is False and wrong["failed"][0].startswith("frequencies")
    (out / "silicon.wfc2").unlink()
    assert ph_report(output, tmp_path, "test")["failed"] == ["wavefunction files ['silicon.wfc1']"]
