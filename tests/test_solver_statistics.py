"""SimGrid patch 0035: with ``--log=ker_statistics.thres:info`` a simulation ends by printing what it cost, one line
for the run (its event dates and the wall time per date) and one for each model's max-min system (its solves, the
constraints and variables they solved on average, their wall time). ``simgrid_cpp/maxmin_incremental_check.cpp``
(seeded random networks of spread routes and computations) runs with and without it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

QUIET = "--log=root.thres:critical"
COUNTED = "--log=ker_statistics.thres:info"
RUN = re.compile(
    r"\[ker_statistics/INFO\] (?P<simulated>\S+) s simulated in (?P<wall>\S+) s of wall time: "
    r"(?P<dates>\d+) event dates, (?P<per_date>\S+) us of wall time each$"
)
MODEL = re.compile(
    r"\[ker_statistics/INFO\] (?P<model>\w+): (?P<solves>\d+) solves of (?P<constraints>\S+) constraints and "
    r"(?P<variables>\S+) variables on average, (?P<seconds>\S+) s \((?P<share>\S+)% of the wall time\)$"
)


def run(bin_dir: Path, seed: int, *options: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(bin_dir / "maxmin_incremental_check"), str(seed), "300", *options, QUIET],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def statistics(stderr: str) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The run's line and each model's, as numbers."""
    runs = [m.groupdict() for line in stderr.splitlines() if (m := RUN.search(line))]
    models = {m["model"]: m.groupdict() for line in stderr.splitlines() if (m := MODEL.search(line))}
    assert len(runs) == 1, stderr[-2000:]
    numbers = {key: float(value) for key, value in runs[0].items()}
    return numbers, {name: {k: float(v) for k, v in fields.items() if k != "model"} for name, fields in models.items()}


@pytest.mark.parametrize("seed", [1, 2])
def test_counting_changes_no_end_date(bin_dir: Path, seed: int) -> None:
    quiet = run(bin_dir, seed)
    counted = run(bin_dir, seed, COUNTED)
    assert counted.stdout == quiet.stdout
    assert "ker_statistics" not in quiet.stderr
    assert "ker_statistics" in counted.stderr


def test_the_counts_describe_the_run(bin_dir: Path) -> None:
    whole_run, whole = statistics(run(bin_dir, 3, COUNTED, "--cfg=maxmin/incremental:no").stderr)
    incremental_run, incremental = statistics(run(bin_dir, 3, COUNTED).stderr)
    # the same simulation, event for event, whichever way the solver works
    assert incremental_run["dates"] == whole_run["dates"] > 300
    assert incremental_run["simulated"] == whole_run["simulated"] > 0
    for counted_run, models in ((whole_run, whole), (incremental_run, incremental)):
        rounding = 1e6 * 0.0005 / counted_run["dates"] + 0.005  # the wall time is printed in ms, each date's in us
        per_date = 1e6 * counted_run["wall"] / counted_run["dates"]
        assert counted_run["per_date"] == pytest.approx(per_date, abs=rounding)
        assert set(models) == {"Network_LegrandVelho", "Cpu_Cas01"}
        for counts in models.values():
            # a model solves at most once an engine's step: at each date, and once more where it finds none
            assert 0 < counts["solves"] <= counted_run["dates"] + 1
            assert 0 <= counts["seconds"] <= counted_run["wall"]
    # the network's solves: the same ones, a whole connected part of the system each without maxmin/incremental,
    # what the change can move with it
    assert incremental["Network_LegrandVelho"]["solves"] == whole["Network_LegrandVelho"]["solves"]
    assert incremental["Network_LegrandVelho"]["constraints"] < whole["Network_LegrandVelho"]["constraints"]
    assert incremental["Network_LegrandVelho"]["variables"] < whole["Network_LegrandVelho"]["variables"]
