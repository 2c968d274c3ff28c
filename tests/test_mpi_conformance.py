"""Legal MPI runs under topolab's standard options: count-0 collectives and MPICH's tests (C, f77, f90).

SimGrid 4.1 crashed on count-0 collectives (SIGFPE in bcast__ompi_pipeline, reached by MPI_Allreduce under the
ompi selector); scripts/simgrid-patches/0002-zero-data-collectives-complete-at-once.patch completes them at once.
SimGrid's segmented bcast algorithms lost data when processes described it with different datatypes of one type
signature; scripts/simgrid-patches/0003-bcast-by-type-signature.patch gives every algorithm the signature's bytes.
These tests are those patches' tests: they fail on an unpatched SimGrid. The last ones check
scripts/check-mpi-conformance itself on a few tests of MPICH's suite (docs/mpi-conformance.md).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from study_runner.simulation.smpi import binary_options
from study_runner.simulation.smpi import fortran_runtime
from study_runner.tools import conformance
from study_runner.tools import conformance_build
from study_runner.tools import conformance_rules
from study_runner.tools.conformance_suite import Test
from study_runner.tools.conformance_suite import directories
from study_runner.tools.conformance_suite import read_testlist
from study_runner.tools.conformance_suite import source_suffixes

pytestmark = pytest.mark.simgrid

ZERO_COUNT_COLLECTIVES = [
    "allreduce", "reduce", "bcast", "allgather", "allgatherv", "alltoall",
    "gather", "scatter", "iallreduce", "ireduce", "ibcast",
]  # fmt: skip

CRASHED_AT_COUNT_0 = [
    "allgather:GB", "allgather:impi", "allgatherv:GB", "allgatherv:ompi",
    "allreduce:impi", "allreduce:lr", "allreduce:ompi_ring_segmented", "allreduce:rab", "allreduce:redbcast",
    "allreduce:smp_binomial_pipeline", "bcast:ompi_pipeline",
    "reduce:ompi_binary", "reduce:ompi_binomial", "reduce:ompi_chain", "reduce:ompi_in_order_binary",
    "reduce:ompi_pipeline", "reduce:rab",
]  # fmt: skip
"""Every SMPI algorithm that unpatched SimGrid 4.1 killed at count 0 and ran at count 1 (SIGFPE or SIGSEGV),
measured over all algorithms of the eight collectives at 2 to 64 ranks on a crossbar."""


def zero_count_records(bin_dir: Path, ranks: int, cfg: tuple[str, ...] = ()) -> list[dict]:
    done = conformance.run_on("crossbar", ["--hosts", str(ranks)], ranks, [str(bin_dir / "zero_count")], cfg, 120)
    assert done.returncode == 0, done.stderr[-500:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 7, 8, 9, 16, 24, 31, 32, 64])
def test_count_0_collectives_complete_and_write_nothing(bin_dir: Path, ranks: int) -> None:
    # Under the standard options (the ompi selector), e.g. MPI_Allreduce at 2-5, 7, 16, 24, 31, 32 ranks used to
    # die of SIGFPE; now every collective completes and leaves every receive buffer as it was.
    records = zero_count_records(bin_dir, ranks)
    assert [r["collective"] for r in records] == ZERO_COUNT_COLLECTIVES
    assert all(r["ranks"] == ranks and r["errors"] == 0 for r in records)


def test_count_0_collectives_on_a_real_mpi(real_mpi_bin: Path) -> None:
    # The reference: MPICH completes every one of them and writes nothing.
    command = ["mpiexec", "-n", "4", str(real_mpi_bin / "zero_count")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["collective"] for r in records] == ZERO_COUNT_COLLECTIVES
    assert all(r["errors"] == 0 for r in records)


@pytest.mark.parametrize("ranks", [2, 5, 8])
@pytest.mark.parametrize("algorithm", CRASHED_AT_COUNT_0)
def test_count_0_never_reaches_an_algorithm(bin_dir: Path, algorithm: str, ranks: int) -> None:
    collective, name = algorithm.split(":")
    records = zero_count_records(bin_dir, ranks, (f"smpi/{collective}:{name}",))
    assert len(records) == len(ZERO_COUNT_COLLECTIVES) and all(r["errors"] == 0 for r in records)


BCAST_ALGORITHMS = [
    "ompi", "ompi_pipeline", "ompi_split_bintree", "NTSL", "NTSB", "binomial_tree", "mvapich2_knomial_intra_node",
    "scatter_rdb_allgather", "scatter_LR_allgather", "mpich", "mvapich2", "NTSL_Isend", "arrival_pattern_aware_wait",
]  # fmt: skip
"""The ompi selector itself and every algorithm it picks (smpi_openmpi_selector.cpp's bcast__ompi), then others that
failed only for mixed datatypes before patch 0003. Those that fail with one datatype everywhere are left out (the
patch's header lists them): no datatype handling makes a wrong algorithm right."""
BCAST_COUNTS = {"ompi_split_bintree": "1000,100000,1000000"}
"""ompi_split_bintree crashes on a 4-byte message with one datatype everywhere (the selector picks it from 16 KiB)."""


@pytest.mark.parametrize("ranks", [2, 5, 8])
@pytest.mark.parametrize("algorithm", BCAST_ALGORITHMS)
def test_bcast_is_right_whatever_datatypes_describe_the_signature(bin_dir: Path, algorithm: str, ranks: int) -> None:
    # Root and receivers with the same datatype, a contiguous type at the root, a vector with holes at the receivers:
    # 1, 1000, 1e5 and 1e6 ints, each checked on every receiver.
    counts = BCAST_COUNTS.get(algorithm, "1,1000,100000,1000000")
    program = [str(bin_dir / "bcast_signature"), "-n", counts]
    done = conformance.run_on("crossbar", ["--hosts", "8"], ranks, program, (f"smpi/bcast:{algorithm}",), 120)
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and len(records) == 3 * len(counts.split(",")), done.stderr[-500:]
    assert {(r["pairing"], r["count"]): r["errors"] for r in records if r["errors"]} == {}


def test_bcast_with_mixed_datatypes_on_a_real_mpi(real_mpi_bin: Path) -> None:
    # The reference: MPICH broadcasts every pairing right.
    command = ["mpiexec", "-n", "5", str(real_mpi_bin / "bcast_signature")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == 12 and all(r["errors"] == 0 for r in records)


def test_mpich_collective_tests_pass_on_two_families(capsys: pytest.CaptureFixture[str]) -> None:
    # bcast_full passes since patch 0003: it is no known failure any more. "allred" is allred and allred 100.
    assert "bcast_full" not in conformance.KNOWN_FAILURES
    tests = "allred,bcasttest,bcast_full,reduce_mpich,alltoall1,allgather2,scatter2"
    assert conformance.main(["--tests", tests, "--families", "crossbar,tofu", "--ranks", "4"]) == 0
    out = capsys.readouterr().out
    assert "| coll | crossbar | 8/8 |" in out and "| coll | tofu | 8/8 |" in out


def test_a_run_without_a_result_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance.main(["--tests", "allred", "--families", "crossbar", "--ranks", "4", "--timeout", "0.01"]) == 1
    assert "failed: allred on crossbar, 4 ranks: no result after 0 s" in capsys.readouterr().out


def test_every_source_left_out_has_a_reason() -> None:
    suite = conformance.unpack_suite(conformance.sdist(), conformance.default_cache_dir())
    run = set(conformance.testlist(suite))
    excluded = conformance.excluded_sources(suite)
    assert {"allred", "bcast_full", "reduce_mpich", "coll13"} <= run
    assert excluded["icallreduce.c"].startswith("an intercommunicator test")
    every = {path.name for path in (suite / "coll").glob("*.c")}
    built = {conformance.SOURCE_OF.get(name, f"{name}.c") for name in run}
    assert every == built | set(excluded)  # nothing silently dropped


def test_bad_names_are_one_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance.main(["--families", "crossbar,nope", "--tests", "allred"]) == 2
    assert capsys.readouterr().err.startswith("check-mpi-conformance: error: unknown family 'nope'")


def test_a_test_that_refuses_the_rank_count_does_not_apply(capsys: pytest.CaptureFixture[str]) -> None:
    # coll2 needs a rank count that divides 10: at 4 ranks it says so and aborts; at 2 it runs.
    assert conformance.main(["--tests", "coll2", "--families", "crossbar", "--ranks", "2,4"]) == 0
    out = capsys.readouterr().out
    assert "n/a: coll2 on crossbar, 4 ranks: the test says 'Number of processors must divide 10'" in out
    assert "| crossbar | 1/1 | 0/0 |" in out


def test_rank_counts_a_test_is_not_written_for_do_not_apply() -> None:
    # Decided from the test's source before anything runs: iallred asserts 2 processes, coll2 is erroneous MPI
    # beyond 10 (only 10 ranks call its collectives on MPI_COMM_WORLD).
    iallred = conformance.run_test(Path("/nowhere/iallred"), "crossbar", 4, 10)
    coll2 = conformance.run_test(Path("/nowhere/coll2"), "torus", 16, 10)
    assert (iallred.status, coll2.status) == ("n/a", "n/a")
    assert "2 processes" in iallred.detail and "at most 10 processes" in coll2.detail


def test_tests_of_other_directories_pass(capsys: pytest.CaptureFixture[str]) -> None:
    tests = "sendrecv1,anyall,putfence1,accfence1,contents,struct-pack"
    argv = ["--dirs", "pt2pt,rma,datatype", "--tests", tests, "--families", "crossbar", "--ranks", "4"]
    assert conformance.main(argv) == 0
    out = capsys.readouterr().out
    assert {"| pt2pt | crossbar | 2/2 |", "| rma | crossbar | 2/2 |", "| datatype | crossbar | 2/2 |"} <= set(
        out.splitlines()
    )


def test_fortran_tests_pass_with_gfortran_privatized(capsys: pytest.CaptureFixture[str]) -> None:
    # uallreducef (f77, smpiff) and uallreducef90 (f90, smpif90, the mpi module); each links gfortran's runtime,
    # which every topolab run privatizes (smpi/privatize-libs, smpi.binary_options) as SimGrid documents.
    argv = ["--dirs", "f77,f90", "--tests", "uallreducef,uallreducef90", "--families", "crossbar", "--ranks", "4"]
    assert conformance.main(argv) == 0
    out = capsys.readouterr().out
    assert "| f77 | crossbar | 1/1 |" in out and "| f90 | crossbar | 1/1 |" in out
    suite = conformance.unpack_suite(conformance.sdist(), conformance.default_cache_dir())
    for binary in (suite / "bin" / "f77" / "coll" / "uallreducef", suite / "bin" / "f90" / "coll" / "uallreducef90"):
        assert (fortran_runtime(binary) or "").startswith("libgfortran.so.")
        assert binary_options(binary) == (f"--cfg=smpi/privatize-libs:{fortran_runtime(binary)}",)


def test_every_source_of_every_directory_runs_or_is_listed() -> None:
    # C directories, and f77's and f90's: each source builds a test of its testlist, or is excluded with a reason;
    # a test of an excluded directory (io: SMPI's MPI-IO needs disks, topolab's platforms have none) too.
    suite = conformance.unpack_suite(conformance.sdist(), conformance.default_cache_dir())
    found = directories(suite)
    assert {"attr", "coll", "pt2pt", "rma", "io", "perf", "f77/coll", "f77/ext", "f90/rma"} <= set(found)
    assert {d for d in found if (suite / d / "testlist").is_file()} == set(found)
    for directory in found:
        tests = read_testlist(suite, directory).tests
        every = {p.name for p in (suite / directory).iterdir() if p.suffix in source_suffixes(directory)}
        excluded = conformance.excluded_sources(suite, directory)
        built = {source for test in tests for source in test.sources}
        assert every == built | set(excluded), directory
        assert all(reason for reason in excluded.values())
    assert "io" in conformance_rules.EXCLUDED_DIRECTORIES
    assert conformance.excluded_sources(suite, "comm")["ic1.c"].endswith("SMPI lacks MPI_Intercomm_create")


def test_a_call_smpi_does_not_implement_is_named() -> None:
    # datatype/tmatchsize is left out of SimGrid's testlist ("needs MPI_Type_match_size"): the listing says what
    # SMPI lacks, and run anyway it fails with that call named (SMPI: "Not yet implemented: PMPI_Type_match_size").
    suite = conformance.unpack_suite(conformance.sdist(), conformance.default_cache_dir())
    assert conformance.excluded_sources(suite, "datatype")["tmatchsize.c"].endswith("SMPI lacks MPI_Type_match_size")
    test = Test("datatype", "tmatchsize", sources=("tmatchsize.c",))
    binaries, broken = conformance_build.build_tests(suite, [test])
    assert broken == {}
    outcome = conformance.run_test(binaries[test], "crossbar", 2, 60, test)
    assert (outcome.status, outcome.lacks) == ("fail", ("MPI_Type_match_size",))
    assert "SMPI does not implement MPI_Type_match_size" in outcome.detail


def test_a_missing_call_is_listed_with_the_tests_that_need_it(capsys: pytest.CaptureFixture[str]) -> None:
    # errhan/errfatal, which SimGrid's testlist runs, calls MPI_Add_error_class: SMPI only warns that it does not
    # implement it and returns no class, then the test crashes (it should abort through MPI_ERRORS_ARE_FATAL).
    assert conformance.main(["--dirs", "errhan", "--tests", "errfatal", "--families", "crossbar", "--ranks", "2"]) == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith("failed: errfatal on crossbar, 2 ranks: exit ")]
    assert len(failed) == 1 and "SMPI does not implement MPI_Add_error_class" in failed[0]
    lacks = (
        "SMPI lacks MPI_Add_error_class (it warns once and returns MPI_SUCCESS, doing nothing): run by errhan/errfatal"
    )
    assert f"{lacks}; in excluded errhan/adderr.c" in out
    assert "excluded: errhan/adderr.c: commented out in SimGrid's testlist" in out


def test_a_test_that_returns_without_finalize_passes_only_with_no_errors() -> None:
    # SimGrid's MTest_Finalize does not finalize MPI; smpirun fails such a run (patch 0009) with one line, which the
    # check forgives when the test found no errors, and only then.
    test = Test("pt2pt", "isendrecv", sources=("isendrecv.c",))
    line = "[0.1] f.cpp:9: [smpi_kernel/ERROR] The MPI application failed: rank 1 (on host-1) returned from main "
    line += "without calling MPI_Finalize; exit status 1\n"

    def run(stdout: str, status: int = 1) -> str:
        return conformance.judge(test, subprocess.CompletedProcess([], status, stdout, line))[0]

    assert run(" No Errors\n") == "pass"
    assert run(" Found 2 errors\n") == "fail"
    assert run(" No Errors\n", status=3) == "fail"
