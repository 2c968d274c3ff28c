"""scripts/lib/simgrid.sh: one build at a time per prefix (SimGrid, the Python dependencies), and commands that
answer without SimGrid.

``build_once`` is the function scripts/setup builds SimGrid and installs the machine's Python dependencies through;
here its build command is a stand-in that takes a second and records each time it runs, so that two setups started
together are seen to build once.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / "scripts" / "lib" / "simgrid.sh"

# A stand-in for scripts/setup's build: one line in BUILDS per run, then the prefix with its fingerprint.
FAKE_SETUP = r"""
set -euo pipefail
. "$1"
prefix=$2; builds=$3; what=$4
fake_build() {
  echo "$$" >>"$builds"
  sleep 1
  mkdir -p "$prefix"
  echo fingerprint-1 >"$prefix/.topolab-fingerprint"
}
if [ "$what" = SimGrid ]; then simgrid_build_once "$prefix" fingerprint-1 fake_build
else build_once "$what" "$prefix" fingerprint-1 fake_build; fi
echo "done"
"""


def _start(tmp_path: Path, what: str = "SimGrid") -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["bash", "-c", FAKE_SETUP, "fake-setup", str(LIB), str(tmp_path / "simgrid"), str(tmp_path / "builds"), what],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("what", ["SimGrid", "Python dependencies"])
def test_two_setups_started_together_build_once(tmp_path: Path, what: str) -> None:
    first = _start(tmp_path, what)
    time.sleep(0.3)  # the first holds the lock and builds
    second = _start(tmp_path, what)
    outputs = [process.communicate(timeout=30) for process in (first, second)]
    assert [process.returncode for process in (first, second)] == [0, 0], outputs
    assert len((tmp_path / "builds").read_text().splitlines()) == 1
    waited = outputs[1][1]
    assert f"another setup is building {what} into" in waited
    assert f"reusing the {what} the other setup built" in waited


def test_a_prefix_with_the_fingerprint_is_not_rebuilt(tmp_path: Path) -> None:
    (tmp_path / "simgrid").mkdir()
    (tmp_path / "simgrid" / ".topolab-fingerprint").write_text("fingerprint-1\n")
    process = _start(tmp_path)
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert not (tmp_path / "builds").exists()


def test_a_failed_build_fails_setup_and_frees_the_lock(tmp_path: Path) -> None:
    script = f'. "{LIB}"; simgrid_build_once "{tmp_path}/simgrid" f false; echo "status $?"'
    for _ in range(2):  # the second call is not blocked by the first one's lock
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=10)
        assert result.stdout.strip() == "status 1"


@pytest.mark.parametrize(
    ("args", "answers_alone"),
    [
        (["--list"], True),
        (["sweeps/x.toml", "--help"], True),
        (["-h"], True),
        (["--quick"], False),
        (["interconnects"], False),
        (["FILE", "--", "app", "--help"], False),  # the program's own --help is not ours
    ],
)
def test_help_and_listings_need_no_simgrid(args: list[str], answers_alone: bool) -> None:
    result = subprocess.run(["bash", "-c", f'. "{LIB}"; needs_no_simgrid "$@"', "check", *args], check=False)
    assert (result.returncode == 0) == answers_alone
