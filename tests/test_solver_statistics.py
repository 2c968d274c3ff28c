"""SimGrid patch 0035: with ``--log=ker_statistics.thres:info`` a simulation ends by printing what it cost, one line
for the run (its event dates and the wall time per date) and one for each model's max-min system (its solves, the
constraints and variables they solved on average, their wall time). ``simgrid_cpp/maxmin_incremental_check.cpp``
(seeded random networks of spread routes and computations) runs with and without it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from study_runner.simulation.solver_statistics import STATISTICS_LOG
from study_runner.simulation.solver_statistics import printed_statistics

QUIET = "--log=root.thres:critical"


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
    """The run's counts and each model's, as the project reads them."""
    run, models = printed_statistics(stderr)
    assert run is not None, stderr[-2000:]
    return run, models


@pytest.mark.parametrize("seed", [1, 2])
def test_counting_changes_no_end_date(bin_dir: Path, seed: int) -> None:
    quiet = run(bin_dir, seed)
    counted = run(bin_dir, seed, STATISTICS_LOG)
    assert counted.stdout == quiet.stdout
    assert "ker_statistics" not in quiet.stderr
    assert "ker_statistics" in counted.stderr


def test_the_counts_describe_the_run(bin_dir: Path) -> None:
    whole_run, whole = statistics(run(bin_dir, 3, STATISTICS_LOG, "--cfg=maxmin/incremental:no").stderr)
    incremental_run, incremental = statistics(run(bin_dir, 3, STATISTICS_LOG).stderr)
    # the same simulation, event for event, whichever way the solver works
    assert incremental_run["event_dates"] == whole_run["event_dates"] > 300
    assert incremental_run["simulated_s"] == whole_run["simulated_s"] > 0
    for counted_run, models in ((whole_run, whole), (incremental_run, incremental)):
        # the loop's wall time is printed in ms, each date's in us
        rounding = 1e6 * 0.0005 / counted_run["event_dates"] + 0.005
        per_date = 1e6 * counted_run["loop_wall_s"] / counted_run["event_dates"]
        assert counted_run["us_per_date"] == pytest.approx(per_date, abs=rounding)
        assert set(models) == {"Network_LegrandVelho", "Cpu_Cas01"}
        for counts in models.values():
            # a model solves at most once an engine's step: at each date, and once more where it finds none
            assert 0 < counts["solves"] <= counted_run["event_dates"] + 1
            assert 0 <= counts["solve_s"] <= counted_run["loop_wall_s"]
    # the network's solves: the same ones, a whole connected part of the system each without maxmin/incremental,
    # what the change can move with it
    network, whole_network = incremental["Network_LegrandVelho"], whole["Network_LegrandVelho"]
    assert network["solves"] == whole_network["solves"]
    assert network["constraints_per_solve"] < whole_network["constraints_per_solve"]
    assert network["variables_per_solve"] < whole_network["variables_per_solve"]
