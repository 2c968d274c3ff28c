"""bench-sim's report: beside each run's wall time, where it went as SimGrid counted it (patch 0035)."""

from __future__ import annotations

from study_runner.tools.bench_sim_report import markdown

COUNTS = {"loop_wall_s": 2.5, "event_dates": 7399, "us_per_date": 337.9, "solves": 7400,
          "constraints_per_solve": 636.4, "variables_per_solve": 42.8, "solve_s": 2.29}  # fmt: skip


def row(case: str, statistics: dict[str, float] | None) -> dict[str, object]:
    run = {"wall_s": 3.0, "peak_memory_mib": 70.0, "simulated_s": 0.0027, "statistics": statistics}
    return {"case": case, "what": "a shift", "ranks": 1056, "topolab": run}


def test_the_counts_of_each_run_that_has_them_are_a_table() -> None:
    report = markdown([row("counted", COUNTS), row("older", None)], "SimGrid 4.1")
    lines = report.splitlines()
    assert "| `counted` | after | 2.5 | 7399 | 337.9 | 7400 | 636.4 | 42.8 | 2.3 |" in lines
    assert not [line for line in lines if line.startswith("| `older` | after |")]


def test_no_counts_no_table() -> None:
    assert "Where the time went" not in markdown([row("older", None)], "SimGrid 4.1")
