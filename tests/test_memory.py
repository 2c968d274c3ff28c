"""What a simulation holds (anonymous memory and its share of shared memory, each page once) and the limit it runs
under: an overrun is one clear error naming the run and its limit, the process tree is gone, and the machine keeps
its reserve."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from study_runner.errors import StudyError
from study_runner.simulation import memory
from study_runner.simulation.smpi import run_smpirun_measured
from tests.conftest import REPO
from tests.conftest import crossbar_study

MIB = 1 << 20


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def hold_anonymous(mib: int, seconds: float = 1.0) -> list[str]:
    """A process that touches ``mib`` MiB of private memory and keeps it ``seconds``."""
    touch = f"b = bytearray({mib} * {MIB}); b[::4096] = b'x' * len(b[::4096])"
    return python(f"import time; {touch}; time.sleep({seconds})")


def map_shared(mib: int, times: int) -> list[str]:
    """A process that maps one ``mib`` MiB POSIX shared-memory object ``times`` times (as SMPI maps a folded buffer
    once per rank), touches every mapping and keeps them a second."""
    return python(
        "import mmap, time\n"
        "from multiprocessing import shared_memory\n"
        f"shm = shared_memory.SharedMemory(create=True, size={mib * MIB})\n"
        "maps = []\n"
        f"for _ in range({times}):\n"
        f"    m = mmap.mmap(shm._fd, {mib * MIB})\n"
        f"    m[::4096] = b'x' * len(m[::4096])\n"
        "    maps.append(m)\n"
        "time.sleep(1.0)\n"
        "[m.close() for m in maps]\n"
        "shm.close(); shm.unlink()\n"
    )


def test_an_overrun_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StudyError) as caught:
        run_smpirun_measured(hold_anonymous(400, 30), tmp_path, 60, "big.run", memory_limit_mib=100)
    message = str(caught.value)
    assert message.startswith("big.run: stopped at ") and "over its memory limit of 100 MiB" in message
    assert "TOPOLAB_MEMORY_LIMIT" in message


def test_a_run_within_its_limit_reports_what_it_held(tmp_path: Path) -> None:
    outcome = run_smpirun_measured(hold_anonymous(200), tmp_path, 60, "small.run", memory_limit_mib=1000)
    assert 200 <= outcome.peak_memory_mib < 260


def test_shared_memory_mapped_many_times_counts_once(tmp_path: Path) -> None:
    """The design reason: 8 mappings of one 64 MiB object are 64 MiB of the machine's, which RssShmem counts 8 times
    and RssAnon not at all; the figure is the share of it (and a limit of 200 MiB does not stop it)."""
    outcome = run_smpirun_measured(map_shared(64, 8), tmp_path, 60, "shm.run", memory_limit_mib=200)
    assert 64 <= outcome.peak_memory_mib < 64 + 60  # the interpreter's own memory is the rest


def test_the_machine_keeps_its_reserve(monkeypatch: pytest.MonkeyPatch) -> None:
    sampler = memory.MemorySampler(999_999_999)  # no such process: it holds nothing
    assert memory.overrun(sampler, 100, "r") is None
    fake = {"MemTotal": 24 << 20, "MemAvailable": 500 << 10}  # KiB: 24 GiB, 500 MiB left
    monkeypatch.setattr(memory, "_meminfo_kib", lambda field: fake.get(field, 0))
    problem = memory.overrun(sampler, 100, "r")
    assert problem is not None and problem.startswith("r: stopped at 0 MiB because the machine has 500 MiB of 24576")


@pytest.mark.parametrize("value", ["0", "-5", "lots", "nan"])
def test_a_bad_limit_is_named(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TOPOLAB_MEMORY_LIMIT", value)
    with pytest.raises(StudyError, match=f"TOPOLAB_MEMORY_LIMIT must be a number of MiB > 0, got '{value}'"):
        memory.memory_limit_mib()


def test_a_bad_limit_stops_a_study_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "study_runner", "sanity-alpha-beta", "--quick", "--results", str(tmp_path / "r"),
         "--cache", str(tmp_path / "c")],
        cwd=REPO, env={**os.environ, "TOPOLAB_MEMORY_LIMIT": "lots"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "scripts/repro: error: TOPOLAB_MEMORY_LIMIT must be a number of MiB > 0, got 'lots'"
    )


def test_the_default_limit_is_most_of_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOPOLAB_MEMORY_LIMIT", raising=False)
    assert memory.memory_limit_mib() == pytest.approx(0.9 * memory.machine_memory_mib())
    monkeypatch.setenv("TOPOLAB_MEMORY_LIMIT", "1234.5")
    assert memory.memory_limit_mib() == 1234.5


TWICE = """[[generate]]
name = "twice"
[generate.grid]
n = [1, 2]
[generate.run]
id = "pingpong.{n}"
platform = "crossbar"
app = "pingpong"
ranks = 2
args = ["-s", "{n}K", "-i", "20000", "-w", "0"]
"""
TWO_RUNS = crossbar_study("pair", "two ping-pongs", 2, TWICE)


@pytest.mark.simgrid
@pytest.mark.parametrize("peak_mib", [None, 500.0])
def test_simulations_run_together_only_when_they_fit(
    tmp_path: Path, bin_dir: Path, monkeypatch: pytest.MonkeyPatch, peak_mib: float | None
) -> None:
    """Two simulations on two worker threads with 1000 MiB: together when never measured (about 100 MiB each), one
    after the other when each once held 500 MiB (625 with the margin)."""
    from study_runner.batch import execute
    from study_runner.simulation.cache import Cache
    from study_runner.studies.pipeline import prepare_study
    from study_runner.studies.study import load_study

    monkeypatch.setenv("TOPOLAB_MEMORY_LIMIT", "1000")
    (tmp_path / "pair.toml").write_text(TWO_RUNS)
    study = load_study(tmp_path / "pair.toml")
    cache = Cache(tmp_path / "cache")
    _, runs = prepare_study(study, False, bin_dir, tmp_path)
    if peak_mib is not None:
        for run in runs:
            cache.record_history(run.simulation.history_key, {"wall_s": 1.0, "peak_memory_mib": peak_mib})
    results = execute.execute_runs(runs, cache, 2)
    (a, b) = sorted((execute._STARTED[run.label], results[run.spec.id].wall_s) for run in runs)
    overlap = a[0] + a[1] > b[0]
    assert overlap == (peak_mib is None)
