"""Files nothing removed (issue 61, point 3): what smpirun keeps after a failed ``scripts/smpirun-on`` run, and what a
killed write leaves under its temporary name.

smpirun copies a hostfile whose path holds a blank (here the platform cache's) into its temporary directory as
``smpitmp-hostf*`` and keeps it when the app fails, to help debugging: nothing removed it from TMPDIR. smpirun-on
now gives smpirun a directory named for its own process, which smpirun becomes (``workdirs.owned_directory``): the
next topolab run removes it once smpirun has ended.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from generators.files import atomic_path
from generators.owners import owner_tag
from study_runner.simulation.workdirs import remove_stale
from tests.conftest import REPO


def _smpirun_on(tmp_path: Path, bin_dir: Path, how: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "TOPOLAB_CACHE": str(tmp_path / "my cache")}
    command = [str(REPO / "scripts" / "smpirun-on"), "crossbar", "--hosts", "2", "--", str(bin_dir / "fail"), how]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)


def test_a_failed_run_keeps_its_files_in_its_own_directory_until_the_next_run(tmp_path: Path, bin_dir: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    failed = _smpirun_on(tmp_path, bin_dir, "abort")
    assert failed.returncode != 0 and "kept" in failed.stderr
    assert not list(tmp.glob("smpitmp-*"))  # nothing of smpirun's in TMPDIR itself
    (owned,) = tmp.glob("topolab-smpirun-*")
    assert list(owned.glob("smpitmp-hostf*"))  # the hostfile smpirun kept, in the run's own directory
    done = _smpirun_on(tmp_path, bin_dir, "none")
    assert done.returncode == 0, done.stderr
    assert not owned.exists()  # removed by the next run, its owner gone
    assert not list(tmp.glob("smpitmp-*"))


def test_a_file_a_killed_write_left_is_removed_by_the_next_run(tmp_path: Path) -> None:
    """``.REPORT.md.*.tmp``, what a write killed between its write and its rename left (``generators.files``): its
    name says which process wrote it, so the next run that works in that directory removes it when that process has
    ended, and never a file another process is writing."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = owner_tag().replace(f"{os.getpid()}.", f"{int(done.stdout)}.", 1)
    left = tmp_path / f".REPORT.md-{dead}-abc123_x.tmp"
    writing = tmp_path / f".REPORT.md-{owner_tag()}-def456_y.tmp"
    foreign = tmp_path / ".notes.tmp"  # not topolab's
    for path in (left, writing, foreign):
        path.write_text("half")
    with atomic_path(tmp_path / "REPORT.md") as temporary:
        assert temporary.name.startswith(f".REPORT.md-{owner_tag()}-")  # how a write names its file
        temporary.write_text("whole")
    assert remove_stale(tmp_path) == [left]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([writing.name, foreign.name, "REPORT.md"])
