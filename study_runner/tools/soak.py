"""``scripts/check-crash-safety``: results that survive kills and concurrent runs, measured.

Two soaks, each against a reference (the same commands run once, uninterrupted, on a fresh cache):

- **kill**: ``--kills N`` rounds, each on a fresh cache and results directory: a study (``scripts/repro --quick
  STUDY``), a sweep (``scripts/sweep FILE``) or a jobs file (``scripts/run-jobs FILE --json OUT``), in turn, is
  killed at a random moment of its run (uniform over the reference's wall time), by SIGKILL, or by SIGTERM every
  other turn of the three, then all three run to the end. The results must equal the reference's (the sweep's rows,
  the study's checks, less what a simulation cost, and the jobs' times), and nothing may be left: no hidden file or
  directory in the results but the lock, nothing in the soak's TMPDIR, no simulation running. A run stopped by
  SIGTERM must leave nothing even before the next run (it removes its own; a SIGKILLed one's are the next run's to
  remove) and exit 143 (or die of the signal, when it comes before the handler is in place, or end with 0 when it
  comes as the run ends).
- **concurrent**: ``--pairs K`` times, the study, the sweep and the jobs are each started twice at once on one cache
  and results directory (a fresh cache each time). Each pair must give the reference's results and a REPORT.md that
  lists the study once, and simulate each point once in all (``simulated`` of the two summaries adds up to the
  points, the study's run count likewise from its progress lines).

One line per round on stderr, then a summary; exit status 0 when every round held, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from study_runner.paths import REPO

__all__ = ["main"]

COST_FIELDS = {"cached", "sim_wall_s", "sim_peak_memory_mib"}
"""What differs between two runs of the same points: where a result came from and what its simulation cost."""

SWEEP = """
name = "soak"
title = "crash-safety soak: ping-pong on crossbars"
[grid]
size = [1000, 10000, 100000, 1000000]
hosts = [2, 4]
[platform]
family = "crossbar"
hosts = "{hosts}"
[run]
app = "pingpong"
ranks = 2
args = ["-s", "{size}", "-i", "20000"]
"""
"""The soak's sweep: 8 points, about 5 s in all on 2 cores."""

JOBS = """
allocation = "random:3"
[platform]
family = "torus"
dims = "8x8"
[[jobs]]
name = "a2a"
app = "alltoall"
args = ["-s", "64K", "-i", "20", "-w", "0"]
ranks = 32
[[jobs]]
name = "noise"
app = "shift"
args = ["-R", "20", "-s", "1M"]
background = true
"""
"""The soak's jobs file: two jobs sharing an 8 x 8 torus, about 4 s on 2 cores (each recorded, replayed together and
alone)."""

KINDS = ("study", "sweep", "jobs")


TMP = "tmp dir"
"""The soak's TMPDIR, under each place."""


@dataclass
class Place:
    """Where one soak's commands write: a cache, a results directory, a TMPDIR of its own (its name holds a blank:
    a TMPDIR with one works everywhere, issue 61)."""

    root: Path

    def __post_init__(self) -> None:
        for name in ("cache", "results", TMP):
            (self.root / name).mkdir(parents=True, exist_ok=True)

    def command(self, kind: str, study: str, files: Path) -> list[str]:
        """The study's, the sweep's or the jobs' command line, writing here (``files``: the sweep and jobs files)."""
        if kind == "study":  # scripts/repro's, scripts/sweep's, scripts/run-jobs' Python, without setup and build
            return [sys.executable, "-m", "study_runner", "--quick", study, "--results", str(self.root / "results"),
                    "--cache", str(self.root / "cache")]  # fmt: skip
        if kind == "jobs":
            return [sys.executable, "-m", "study_runner.tools.run_jobs", str(files / "soak-jobs.toml"), "--json",
                    str(self.root / "results" / "jobs.json")]  # fmt: skip
        return [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(files / "soak.toml"), "--results",
                str(self.root / "results" / "sweeps"), "--cache", str(self.root / "cache")]  # fmt: skip

    def start(self, command: Sequence[str]) -> subprocess.Popen[str]:
        env = {**os.environ, "TMPDIR": str(self.root / TMP)}
        return subprocess.Popen(
            command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )

    def outputs(self, study: str) -> dict[str, object]:
        """The results that must not depend on how the runs went: the study's checks, the sweep's rows, the jobs'
        times."""
        import pyarrow.parquet as pq

        summary = json.loads((self.root / "results" / study / "summary.json").read_text())
        rows = pq.read_table(self.root / "results" / "sweeps" / "soak" / "points.parquet").to_pylist()
        return {
            "checks": summary["checks"],
            "rows": [{k: v for k, v in r.items() if k not in COST_FIELDS} for r in rows],
            "jobs": (self.root / "results" / "jobs.json").read_text(),
        }

    def leftovers(self) -> list[str]:
        """What a run left behind: hidden files and directories in the results (a half-written report, a work
        directory), and anything in TMPDIR (topolab's work directories, smpirun's kept hostfiles, Dask's scratch)."""
        results = self.root / "results"
        hidden = [p for p in [*results.glob(".*"), *results.glob("sweeps/.*")] if p.name != ".lock"]
        return sorted(str(p) for p in [*hidden, *(self.root / TMP).iterdir()])


def _finish(process: subprocess.Popen[str], what: str) -> str:
    _, stderr = process.communicate(timeout=1800)
    if process.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {process.returncode}): {stderr.strip().splitlines()[-1:]}")
    return stderr


def _simulations_running(place: Place) -> bool:
    return subprocess.run(["pgrep", "-f", str(place.root)], capture_output=True).returncode == 0


def reference(root: Path, study: str, files: Path) -> tuple[dict[str, object], dict[str, float]]:
    """The uninterrupted results and each command's wall time."""
    place, walls = Place(root), {}
    for kind in KINDS:
        start = time.monotonic()
        _finish(place.start(place.command(kind, study, files)), f"the reference {kind}")
        walls[kind] = time.monotonic() - start
    return place.outputs(study), walls


def _stop(process: subprocess.Popen[str], signal_number: int, place: Place) -> list[str]:
    """Send the signal; what a SIGTERM left wrong (its exit status, what it did not remove) before any next run."""
    running = process.poll() is None
    process.send_signal(signal_number)
    process.communicate()
    if signal_number != signal.SIGTERM or not running:
        return []
    # 143 once its handler unwinds; killed by the signal itself (-15, which a shell shows as 143) before it has one;
    # 0 when the signal came as the run was ending, its work done (the results are compared after the resumption)
    ended = process.returncode in (143, -signal.SIGTERM, 0)
    found = [] if ended else [f"SIGTERM ended it with exit {process.returncode}, not 143"]
    return found + [f"left behind by SIGTERM: {path}" for path in place.leftovers()]


def kill_soak(root: Path, kills: int, study: str, files: Path, expected: dict[str, object],
              walls: dict[str, float], rng: random.Random) -> list[str]:  # fmt: skip
    """``kills`` rounds, each on a fresh cache and results directory: the study, the sweep or the jobs (in turn)
    stopped by SIGKILL (SIGTERM every other turn) at a random moment of its run, then all three run to the end; what
    went wrong (empty: nothing)."""
    problems = []
    for number in range(kills):
        place, kind = Place(root / f"round-{number}"), KINDS[number % len(KINDS)]
        signal_number = (signal.SIGKILL, signal.SIGTERM)[number // len(KINDS) % 2]
        delay = rng.uniform(0, walls[kind])
        process = place.start(place.command(kind, study, files))
        time.sleep(delay)
        running = process.poll() is None
        found = _stop(process, signal_number, place)
        for resumed in KINDS:
            _finish(place.start(place.command(resumed, study, files)), f"the {resumed} after the kill")
        deadline = time.monotonic() + 10
        while _simulations_running(place) and time.monotonic() < deadline:
            time.sleep(0.1)
        found += ["a simulation of the killed run is still running"] if _simulations_running(place) else []
        found += ["the results differ from the uninterrupted ones"] if place.outputs(study) != expected else []
        found += [f"left behind: {path}" for path in place.leftovers()]
        name = signal.Signals(signal_number).name
        what = f"stopped by {name} after {delay:.2f} s" if running else f"had ended before {name} at {delay:.2f} s"
        print(f"kill {number + 1}/{kills}: the {kind} {what}; resumed: {'; '.join(found) or 'as the reference'}",
              file=sys.stderr)  # fmt: skip
        problems += [f"kill {number + 1}: {problem}" for problem in found]
        shutil.rmtree(place.root, ignore_errors=True)
    return problems


def _simulated(stderr: str, kind: str) -> tuple[int, int]:
    """(simulated, in all) of one run, from its stderr: a study's progress lines ``[i/n] label: simulated in``, a
    sweep's last line ``N points (S simulated, C from cache)``."""
    if kind == "study":
        total = re.findall(r"^\[\d+/(\d+)\]", stderr, re.M)
        return stderr.count(": simulated in "), int(total[0]) if total else 0
    found = re.findall(r"(\d+) points \((\d+) simulated, \d+ from cache\)", stderr)
    return (int(found[-1][1]), int(found[-1][0])) if found else (0, 0)


def concurrent_soak(root: Path, pairs: int, study: str, files: Path, expected: dict[str, object]) -> list[str]:
    """``pairs`` rounds of the study, the sweep and the jobs each run twice at once; what went wrong (empty:
    nothing)."""
    problems = []
    for number in range(pairs):
        place = Place(root / f"pair-{number}")
        kinds = [kind for kind in KINDS for _ in range(2)]
        started = [place.start(place.command(kind, study, files)) for kind in kinds]
        counts = [_simulated(_finish(p, f"a concurrent {kind}"), kind) for p, kind in zip(started, kinds, strict=True)]
        # the jobs have no cache to share: only their times (in outputs) and what they leave count
        if place.outputs(study) != expected:
            problems.append(f"pair {number + 1}: results differ from the reference")
        listed = (place.root / "results" / "REPORT.md").read_text().count(f"| {study} |")
        if listed != 1:
            problems.append(f"pair {number + 1}: REPORT.md lists {study} {listed} times")
        for kind, (first, second) in (("study", counts[0:2]), ("sweep", counts[2:4])):
            simulated, total = first[0] + second[0], max(first[1], second[1])
            print(f"pair {number + 1}/{pairs}: {kind}: {first[0]} + {second[0]} simulations for {total}",
                  file=sys.stderr)  # fmt: skip
            if simulated != total:
                problems.append(f"pair {number + 1}: the two {kind} runs simulated {simulated} for {total}")
        problems += [f"pair {number + 1}: left behind: {path}" for path in place.leftovers()]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Run the soaks; print what went wrong and the wall times."""
    parser = argparse.ArgumentParser(prog="scripts/check-crash-safety", description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20,
                        help="kills of the kill soak, by SIGKILL or SIGTERM (default: %(default)s)")  # fmt: skip
    parser.add_argument("--pairs", type=int, default=3, help="rounds of the concurrent soak (default: %(default)s)")
    parser.add_argument("--study", default="sanity-alpha-beta", help="the study run (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the kill moments (default: random)")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    root = Path(tempfile.mkdtemp(prefix="topolab-soak-"))
    try:
        (root / "soak.toml").write_text(SWEEP)
        (root / "soak-jobs.toml").write_text(JOBS)
        started = time.monotonic()
        expected, walls = reference(root / "reference", args.study, root)
        references = ", ".join(f"{kind} {wall:.1f} s" for kind, wall in walls.items())
        print(f"reference: {references} (seed {seed})", file=sys.stderr)
        kill_start = time.monotonic()
        problems = kill_soak(root / "kill", args.kills, args.study, root, expected, walls, random.Random(seed))
        kill_wall = time.monotonic() - kill_start
        pair_start = time.monotonic()
        problems += concurrent_soak(root / "concurrent", args.pairs, args.study, root, expected)
        pair_wall = time.monotonic() - pair_start
    except RuntimeError as err:
        print(f"check-crash-safety: error: {err}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"kill soak: {args.kills} kills, {kill_wall:.0f} s; concurrent soak: {args.pairs} pairs, "
          f"{pair_wall:.0f} s; {time.monotonic() - started:.0f} s in all; {len(problems)} problems")  # fmt: skip
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
