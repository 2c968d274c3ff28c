"""``python -m generators FAMILY ... --picture FILE`` draws from the Python model and needs no build (issue 59): the
dragonfly and the fat tree of three levels, compiled zones, asked for ``scripts/build``'s shared object because the
picture came with a platform file to write, ``-o`` being required; only writing that file needs the build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generators.errors import BUILD_HINT
from tests.conftest import REPO

PNG = b"\x89PNG\r\n\x1a\n"
COMPILED = {
    "dragonfly": ["--groups", "3", "--routers", "2", "--hosts", "1", "--global-ports", "1"],
    "fattree": ["--radix", "4", "--levels", "3"],
}


def generate(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m generators ARGS`` with ``TOPOLAB_BUILD_DIR`` an empty directory: no compiled zone is built."""
    (tmp_path / "no-build").mkdir(exist_ok=True)
    environment = {**os.environ, "TOPOLAB_BUILD_DIR": str(tmp_path / "no-build")}
    return subprocess.run(
        [sys.executable, "-m", "generators", *args], capture_output=True, text=True, cwd=REPO, env=environment
    )


@pytest.mark.parametrize("family", sorted(COMPILED))
def test_a_compiled_family_is_drawn_without_its_zone(tmp_path: Path, family: str) -> None:
    picture = tmp_path / f"{family}.png"
    done = generate(tmp_path, family, *COMPILED[family], "--picture", str(picture))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"wrote {picture}"]
    assert picture.stat().st_size > 1000 and picture.read_bytes().startswith(PNG)
    # Writing the platform file is what needs the build: one error, and nothing drawn or written.
    written = generate(tmp_path, family, *COMPILED[family], "-o", str(tmp_path / "p.so"), "--picture", str(picture))
    assert written.returncode == 2 and written.stderr.count("\n") == 1 and BUILD_HINT in written.stderr
    assert not (tmp_path / "p.so").exists()


def test_something_must_be_written(tmp_path: Path) -> None:
    done = generate(tmp_path, "crossbar", "--hosts", "2")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "python -m generators: error: nothing to write: give -o FILE (the platform), --picture FILE.png or "
        "--hostfile FILE"
    ]
