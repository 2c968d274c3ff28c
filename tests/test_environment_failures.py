"""A failing environment is one error line, never a traceback (issue 41): a full disk under the cache or the results,
a cache that is not a directory, a bad TOPOLAB_WORKERS, bytes that are not UTF-8 on an app's stderr, Ctrl-C, a
closed output pipe. Exit status 2 for bad input or environment (1 is "a check failed"), 130 for Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from study_runner.errors import StudyError
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import REPO
from tests.conftest import ctrl_c_while_simulating
from tests.conftest import pingpong_sweep
from tests.conftest import run_module


def sweep_file(tmp_path: Path, app: str = "pingpong", iterations: int = 2) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(pingpong_sweep([1000, 2000], iterations, app))
    return path


def one_error_line(stderr: str, prog: str) -> str:
    """The command's one error line (progress lines may come before it); no traceback anywhere."""
    assert "Traceback" not in stderr, stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith(f"{prog}: ")]
    return line


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, already full (needs the right to mount, as root in CI; else skipped)."""
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root)")
    try:
        with (mount / "filler").open("wb", buffering=0) as filler:
            try:
                while True:
                    filler.write(b"\0" * 4096)
            except OSError:
                pass
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_bad_topolab_workers_is_one_error(tmp_path: Path) -> None:
    env = {**os.environ, "TOPOLAB_WORKERS": "abc"}
    command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(sweep_file(tmp_path)),
               "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "cache")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert done.returncode == 2
    assert one_error_line(done.stderr, "scripts/sweep") == (
        "scripts/sweep: error: TOPOLAB_WORKERS must be a whole number of simulations at once >= 1, got 'abc'"
    )


def test_a_closed_output_pipe_ends_the_listing_quietly(tmp_path: Path) -> None:
    """``scripts/sweep F --list | head -1``: a BrokenPipeError traceback before. The listing (3000 points, 200 kB) is
    longer than a pipe holds (64 KiB), so the reader closes it while the listing is still being written."""
    (tmp_path / "long.toml").write_text(pingpong_sweep(range(1, 3001), 1))
    command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(tmp_path / "long.toml"), "--list"]
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # what head does after its line
        stderr = process.stderr.read().decode()
    assert process.returncode == 128 + signal.SIGPIPE
    assert stderr == ""


@pytest.mark.simgrid
class TestRunsInAFailingEnvironment:
    def test_a_full_disk_under_the_cache_or_the_results(self, tmp_path: Path, full_disk: Path, bin_dir: Path) -> None:
        path = sweep_file(tmp_path)
        for where in ("--cache", "--results"):
            command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(path), "--workers", "1",
                       "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "cache")]  # fmt: skip
            command[command.index(where) + 1] = str(full_disk / "inside")
            done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300)
            assert done.returncode == 2, done.stderr
            line = one_error_line(done.stderr, "scripts/sweep")
            assert line.startswith(f"scripts/sweep: error: No space left on device: {full_disk / 'inside'}"), line

    def test_a_cache_that_is_not_a_directory(self, tmp_path: Path, bin_dir: Path) -> None:
        (tmp_path / "cache").write_text("a file")
        done = run_module("study_runner.sweeps.sweep_cli", str(sweep_file(tmp_path)), tmp_path=tmp_path)
        assert done.returncode == 2
        assert one_error_line(done.stderr, "scripts/sweep").startswith(
            f"scripts/sweep: error: Not a directory: {tmp_path / 'cache'}"
        )

    def test_ctrl_c_is_one_line_and_status_130(self, tmp_path: Path, bin_dir: Path) -> None:
        own = tmp_path / "pingpong-interrupted-under-test"
        own.write_bytes((bin_dir / "pingpong").read_bytes())
        own.chmod(0o755)
        command = [
            sys.executable,
            "-m",
            "study_runner.sweeps.sweep_cli",
            str(sweep_file(tmp_path, str(own), 10**8)),
            "--workers",
            "1",
            "--results",
            str(tmp_path / "results"),
            "--cache",
            str(tmp_path / "cache"),
        ]
        done = ctrl_c_while_simulating(command, own)
        assert done.returncode == 130
        assert one_error_line(done.stderr, "scripts/sweep") == (
            "scripts/sweep: interrupted; the points simulated so far are in the cache"
        )
        assert not list((tmp_path / "results").glob("*"))  # nothing staged or half-written left behind

    def test_paths_with_spaces(self, tmp_path: Path, bin_dir: Path) -> None:
        """The issue's finding: every sweep point and every smpirun-on run failed under a directory with a space
        (SimGrid splits the hostfile's path, which smpirun passes as --cfg=smpi/hostfile:PATH); and smpirun split a
        program's arguments at spaces and globbed them (SimGrid patch 0014); a TMPDIR with whitespace or a comma
        cannot be given to SimGrid at all: runs get a link to it (smpi.smpi_tmpdir; smpirun's -tmpdir, patch 0015)."""
        spaced = tmp_path / "dir with space, and a comma"
        (spaced / "tmp\tdir").mkdir(parents=True)  # a TMPDIR that SimGrid cannot be told (patch 0015, smpi_tmpdir)
        environment = {**os.environ, "TMPDIR": str(spaced / "tmp\tdir")}
        command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(sweep_file(tmp_path)), "--workers", "1",
                   "--results", str(spaced / "results"), "--cache", str(spaced / "cache")]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300, env=environment)
        assert done.returncode == 0, done.stderr
        assert (spaced / "results" / "pp" / "points.parquet").is_file()
        source = tmp_path / "args.c"
        source.write_text(
            "#include <mpi.h>\n#include <stdio.h>\nint main(int argc, char **argv) {\n  int rank;\n"
            "  MPI_Init(&argc, &argv);\n  MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
            '  for (int i = 1; rank == 0 && i < argc; i++) printf("[%s]\\n", argv[i]);\n'
            "  MPI_Finalize();\n  return 0;\n}\n"
        )
        (spaced / "app dir").mkdir()
        app = spaced / "app dir" / "args"
        built = subprocess.run(["smpicc", str(source), "-o", str(app)], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        (tmp_path / "c-glob-target").write_text("")  # what "c*" would have matched in the working directory
        given = ["a b", "", "c*", "x,y", "--cfg-like"]
        env = {**environment, "TOPOLAB_CACHE": str(spaced / "cache")}
        kept = subprocess.run(
            [str(REPO / "scripts" / "smpirun-on"), "crossbar", "--hosts", "2", "--keep", str(spaced / "kept dir"),
             "--", str(app), *given],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
        )  # fmt: skip
        assert kept.returncode == 0, kept.stderr
        assert kept.stdout.splitlines() == [f"[{arg}]" for arg in given]
        assert " -tmpdir /tmp/topolab-links-" in (spaced / "kept dir" / "smpirun.sh").read_text()
        rerun = subprocess.run(["sh", str(spaced / "kept dir" / "smpirun.sh")], capture_output=True, text=True,
                               cwd=tmp_path)  # fmt: skip
        assert rerun.returncode == 0 and rerun.stdout == kept.stdout, rerun.stderr

    def test_bytes_that_are_not_utf8_on_an_apps_stderr(self, tmp_path: Path) -> None:
        """An app printing invalid UTF-8 made the runner die of a UnicodeDecodeError: its output is now read with
        the invalid bytes replaced, and its failure is its one line."""
        source = tmp_path / "latin1.c"
        source.write_text(
            "#include <mpi.h>\n#include <stdio.h>\nint main(int argc, char **argv) {\n  int rank;\n"
            "  MPI_Init(&argc, &argv);\n  MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
            '  fprintf(stderr, "caf\\xe9 \\xff\\n");\n  printf("{\\"rank\\": %d}\\n", rank);\n  MPI_Finalize();\n'
            "  return argc > 1 ? 3 : 0;\n}\n"
        )
        built = subprocess.run(["smpicc", str(source), "-o", str(tmp_path / "latin1")], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        (tmp_path / "hosts").write_text("host-0\nhost-1\n")
        from generators import crossbar
        from generators import write_platform

        write_platform(crossbar(2), tmp_path / "p.xml")
        command = smpirun_command(tmp_path / "latin1", [], tmp_path / "p.xml", tmp_path / "hosts", 2)
        outcome = run_smpirun_measured(command, tmp_path, 120, "latin1")
        assert "caf\ufffd \ufffd" in outcome.stderr and '{"rank": 0}' in outcome.stdout
        failing = smpirun_command(tmp_path / "latin1", ["fail"], tmp_path / "p.xml", tmp_path / "hosts", 2)
        with pytest.raises(StudyError, match="returned 3 from main; exit status 3 \\(its last words: caf\ufffd"):
            run_smpirun_measured(failing, tmp_path, 120, "latin1")
