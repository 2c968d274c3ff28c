"""The quick run (``scripts/test --quick``, tests/conftest.py): a test that starts SimGrid, MPICH, a built app or
a topolab command is skipped when it does, and only then; nothing is listed by hand."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROBES = """
import subprocess, sys

def test_runs_smpirun():
    subprocess.run(["smpirun", "-version"], check=False)

def test_runs_a_built_app():
    subprocess.run([r"{bin}/pingpong"], check=False)

def test_runs_a_runner_module():
    subprocess.run([sys.executable, "-m", "study_runner.sweeps.sweep_cli", "--help"], check=False)

def test_runs_python_only():
    assert subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True).stdout == b"1\\n"
"""


def test_a_test_that_starts_simgrid_is_skipped_and_only_it(tmp_path: Path) -> None:
    probe = REPO / "tests" / f"test_zz_quick_probe_{os.getpid()}.py"  # under tests/: the conftest applies
    probe.write_text(PROBES.replace("{bin}", str(REPO / "build" / "bin")))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", str(probe)],
            capture_output=True, text=True, cwd=REPO, env={**os.environ, "TOPOLAB_QUICK": "1"}, timeout=120,
        )  # fmt: skip
    finally:
        probe.unlink()
    assert "1 passed, 3 skipped" in done.stdout, done.stdout + done.stderr
    assert done.stdout.count("needs SimGrid or the build") == 3
