"""Files nothing removed (issue 61, point 3): what smpirun keeps after a failed ``scripts/smpirun-on`` run.

smpirun copies a hostfile whose path holds a blank (here the platform cache's) into its temporary directory as
``smpitmp-hostf*`` and keeps it when the app fails, to help debugging: nothing removed it from TMPDIR. smpirun-on
now gives smpirun a directory named for its own process, which smpirun becomes (``workdirs.owned_directory``): the
next topolab run removes it once smpirun has ended.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

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
