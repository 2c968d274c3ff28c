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
        (["crossbar", "--hosts", "\u00b2"], "hosts must be an integer >= 1, got '\u00b2'"),
        (["crossbar", "--hosts", "\u0664"], "hosts must be an integer >= 1, got '\u0664'"),
        (["crossbar", "--hosts", "2", "--frob", "1"], "unrecognized arguments: --frob 1"),
        # issue 19: an empty value is an error, not the default
        (["crossbar", "--hosts", "2", "--nbl", ""], "nbl must be 'none', 'nominal' or a number of link bandwidths"),
        (["mlfm", "--d", "3", "--layers", ""], "layers must be an integer >= 1, got ''"),
        (["fattree", "--radix", "4", "--leaves", ""], "leaves must be an integer >= 1, got ''"),
        (["mlfm", "--d", "3", "--servers-per-leaf", ""], "servers_per_leaf must be an integer >= 1, got ''"),
        (["crossbar", "--hosts", "2", "--hostfile", ""], "argument --hostfile: must not be empty"),
        (["crossbar", "--hosts", "2", "--picture", " "], "argument --picture: must not be empty"),
        # options that only shape the hostfile need one; --ranks 0 is refused like --ranks -3
        (["mlfm", "--d", "2", "--placement", "bogus:1"], "--placement needs --hostfile"),
        (["mlfm", "--d", "2", "--placement", "allocation:1,1,1"], "--placement needs --hostfile"),
        (["crossbar", "--hosts", "2", "--ranks", "1"], "--ranks needs --hostfile"),
        (["crossbar", "--hosts", "2", "--ranks", "0", "--hostfile", "H"], "ranks must be an integer >= 1, got 0"),
        (["crossbar", "--hosts", "2", "--ranks", "-3", "--hostfile", "H"], "ranks must be an integer >= 1, got -3"),
        (["mlfm", "--d", "2", "--placement", "bogus:1", "--hostfile", "H"], "mlfm has no placement 'bogus'"),
        # values SimGrid cannot read, given or derived (a limiter is nbl x link_bw)
        (["crossbar", "--hosts", "2", "--link-bw", "5e-324Bps"], "at least 2.2250738585072014e-308"),
        (["crossbar", "--hosts", "2", "--nbl", "1e300", "--link-bw", "1e300Bps"], "bandwidth must be finite"),
        (["crossbar", "--hosts", "99999999999999999999999"], "crossbar: too large to build: 1.00e23 hosts"),
    ],
)
def test_bad_input_one_clear_error_and_no_file(tmp_path: Path, args: list[str], message: str) -> None:
    args = [a if a != "H" else str(tmp_path / "h") for a in args]
    done = run_cli(*args, "-o", str(tmp_path / "out.xml"))
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr  # one line, no usage dump, no traceback
    assert " error: " in done.stderr
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("", "argument -o/--output: must not be empty"),
        ("{tmp}/x.so", "the platform is XML: its file name must not end in .so"),
    ],
)
def test_bad_output_name(tmp_path: Path, output: str, message: str) -> None:
    done = run_cli("crossbar", "--hosts", "2", "-o", output.format(tmp=tmp_path))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"python -m generators{' crossbar' if not output else ''}: error: {message}")
    assert list(tmp_path.iterdir()) == []
