"""scripts/setup and scripts/build show a CMake build's progress (``cmake_progress`` of scripts/lib/simgrid.sh): in a
log (stderr not a terminal) a line at each quarter, from Makefiles' ``[ 42%]`` or Ninja's ``[12/58]`` lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parent.parent / "scripts" / "lib" / "simgrid.sh"


@pytest.mark.parametrize(
    ("lines", "shown"),
    [
        (["[ 10%] Building a", "[ 30%] Building b", "warning: x", "[ 55%] c", "[ 60%] d", "[100%] Linking"],
         ["x: 30%", "x: 55%", "x: 100%"]),
        (["[1/8] cc a", "[2/8] cc b", "[3/8] cc c", "[4/8] cc d", "[6/8] e", "[8/8] link"],
         ["x: 25%", "x: 50%", "x: 75%", "x: 100%"]),
        (["no progress here"], []),
    ],
)  # fmt: skip
def test_a_line_at_each_quarter_in_a_log(lines: list[str], shown: list[str]) -> None:
    done = subprocess.run(
        ["bash", "-c", f'. "{LIB}"; cmake_progress "x:"'], input="\n".join(lines) + "\n", capture_output=True,
        text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.splitlines() == shown
