"""A program built with a real MPI's ``mpicc`` instead of SimGrid's ``smpicc`` is refused before anything runs
(issue 59): SimGrid itself said ``dlopen failed ...``, printed an empty backtrace and exited 134. One ``error:`` line
says what the program is and how to rebuild it, exit status 2, for ``scripts/smpirun-on`` and a study's or a sweep's
runs alike (``study_runner.simulation.binaries``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from study_runner.errors import StudyError
from study_runner.simulation.binaries import REBUILD_HINT
from study_runner.simulation.binaries import elf_linkage
from study_runner.simulation.binaries import smpi_binary_problem
from study_runner.studies.pipeline import prepare_study
from study_runner.studies.study import load_study
from tests.conftest import REPO
from tests.test_study import GOOD_STUDY
from tests.test_study import write_study

HELLO = """#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("hello from %d\\n", rank);
  MPI_Finalize();
  return 0;
}
"""
FOREIGN = "was not built with SimGrid's compiler wrappers: it is an executable of its own linked with libmpich.so"


def built_with(compiler: str, directory: Path) -> Path:
    """The MPI hello built by ``compiler`` in ``directory`` (the test is skipped without it)."""
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    (directory / "hello.c").write_text(HELLO)
    binary = directory / f"hello-{compiler}"
    subprocess.run([compiler, str(directory / "hello.c"), "-o", str(binary)], check=True, capture_output=True)
    return binary


def test_smpirun_on_refuses_a_program_built_with_mpicc(tmp_path: Path) -> None:
    binary = built_with("mpicc", tmp_path)
    environment = {**os.environ, "TOPOLAB_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [str(REPO / "scripts" / "smpirun-on"), "crossbar", "--hosts", "2", "--", f"./{binary.name}"],
        capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"smpirun-on: error: program ./{binary.name} {FOREIGN}")
    assert line.endswith(REBUILD_HINT) and done.stdout == ""
    assert not (tmp_path / "cache" / "platforms").exists()  # refused before anything is written


def test_a_study_run_refuses_a_program_built_with_mpicc(tmp_path: Path) -> None:
    binary = built_with("mpicc", tmp_path)
    study = load_study(write_study(tmp_path, GOOD_STUDY.replace('app = "pingpong"', f'app = "{binary}"', 1)))
    with pytest.raises(StudyError, match=f"^mini/pingpong: program {binary} {FOREIGN}"):
        prepare_study(study, False, tmp_path / "no-bin", tmp_path)


def test_what_smpicc_builds_is_a_program_smpi_loads(tmp_path: Path) -> None:
    # A shared object that SMPI dlopens; it may not even name libsimgrid (its MPI calls are weak symbols, which
    # --as-needed does not count), hence no check that it does.
    binary = built_with("smpicc", tmp_path)
    linkage = elf_linkage(binary)
    assert linkage is not None and not linkage.executable
    assert smpi_binary_problem(binary) is None


def test_what_is_no_elf_file_is_left_to_smpirun(tmp_path: Path) -> None:
    script = tmp_path / "app"
    script.write_text("#!/bin/sh\n")
    assert elf_linkage(script) is None and smpi_binary_problem(script) is None
    assert smpi_binary_problem(tmp_path / "missing") is None and smpi_binary_problem(tmp_path) is None
    truncated = tmp_path / "truncated"
    truncated.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(20))  # a header that points nowhere
    assert smpi_binary_problem(truncated) is None


def test_a_program_rebuilt_under_the_same_name_is_read_again(tmp_path: Path) -> None:
    """The headers are read once per version of a file (``elf_linkage``): rebuilt with mpicc where smpicc's build
    was, the same path is refused."""
    loadable = built_with("smpicc", tmp_path)
    foreign = built_with("mpicc", tmp_path)
    path = tmp_path / "app"
    shutil.copy(loadable, path)
    assert smpi_binary_problem(path) is None
    shutil.copy(foreign, path)
    assert smpi_binary_problem(path) is not None
