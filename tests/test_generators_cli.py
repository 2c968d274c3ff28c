"""``python -m generators``: the real command, its exit status, stdout/stderr and files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generators", *args], capture_output=True, text=True, cwd=REPO)


def test_writes_platform_and_hostfile(tmp_path: Path) -> None:
    done = run_cli("crossbar", "--hosts", "4", "--nbl", "nominal", "-o", str(tmp_path / "x.xml"),
                   "--hostfile", str(tmp_path / "x.hosts"), "--ranks", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "4 hosts, 12 links" in done.stderr
    assert (tmp_path / "x.hosts").read_text() == "host-0\nhost-1\n"
    assert (tmp_path / "x.xml").read_text().count("<route ") == 12


def test_family_help_lists_parameters() -> None:
    done = run_cli("crossbar", "--help")
    assert done.returncode == 0
    for option in ("--hosts", "--link-bw", "--link-lat", "--nbl", "--output", "--hostfile"):
        assert option in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hypercube"], "invalid choice: 'hypercube'"),
        (["crossbar", "--hosts", "0"], "hosts must be an integer >= 1, got 0"),
        (["crossbar", "--hosts", "-2"], "hosts must be an integer >= 1, got -2"),
        (["crossbar", "--hosts", "3.5"], "hosts must be an integer >= 1, got '3.5'"),
        (["crossbar", "--hosts", "2", "--link-bw", "1GHz"], "link_bw must be a number with a unit"),
        (["crossbar", "--hosts", "2", "--ranks", "3", "--hostfile", "H"], "3 ranks do not fit on 2 hosts"),
    ],
)
def test_bad_input_one_clear_error_and_no_file(tmp_path: Path, args: list[str], message: str) -> None:
    args = [a if a != "H" else str(tmp_path / "h") for a in args]
    done = run_cli(*args, "-o", str(tmp_path / "out.xml"))
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []
