"""scripts/bench-scaling: its dragonflies of matching size, the growth exponent it fits, its arguments, and two real
runs of the smallest sizes; bench-sim's dragonfly cases compare routings on one machine."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from study_runner.tools import bench_scaling
from study_runner.tools.bench_sim import CASES
from study_runner.tools.bench_sim import dragonfly_alltoall


@pytest.mark.parametrize("ranks", [64, 256, 512, 1024, 2048, 4096])
def test_each_size_gets_a_dragonfly_that_holds_it_with_every_pair_of_groups_joined(ranks: int) -> None:
    params = dragonfly_alltoall("ugal-g", ranks).params
    servers = params["groups"] * params["routers"] * params["hosts"]
    assert ranks < servers <= ranks + 32
    assert params["routers"] * params["global_ports"] >= params["groups"] - 1  # a cable for every pair of groups
    assert params["routers"] * (params["global_ports"] - 1) < params["groups"] - 1  # and no more ports than that


def test_1024_ranks_is_the_dragonfly_of_interconnect_checks_and_bench_sim() -> None:
    case = dragonfly_alltoall("minimal", 1024)
    assert case.name == "dragonfly-1024-alltoall-minimal"
    assert (case.params["groups"], case.params["global_ports"], case.params["port_order"]) == (33, 4, "consecutive")
    assert "spread" not in case.params
    assert dragonfly_alltoall("ugal-g", 1024, "packet").params["spread"] == "packet"


@pytest.mark.parametrize("pattern", ["adversarial", "random"])
def test_the_shift_cases_compare_routings_on_the_machine_of_the_all_to_all(pattern: str) -> None:
    """bench-sim's one-shift cases (interconnect-checks' runs): minimal and UGAL-G per packet, the same shift and
    options, on the 1056-server dragonfly of the 1024-rank all-to-all."""
    cases = {case.name: case for case in CASES}
    minimal = cases[f"dragonfly-1056-shift-{pattern}-minimal"]
    packet = cases[f"dragonfly-1056-shift-{pattern}-ugal-g-packet"]
    assert (minimal.args, minimal.options, minimal.ranks) == (packet.args, packet.options, 1056)
    routing = {"routing", "spread"}
    machine = {k: v for k, v in dragonfly_alltoall("minimal", 1024).params.items() if k not in routing}
    for case in (minimal, packet):
        assert {k: v for k, v in case.params.items() if k not in routing} == machine
    assert minimal.params.get("routing", "minimal") == "minimal" and "spread" not in minimal.params
    assert (packet.params["routing"], packet.params["spread"]) == ("ugal-g", "packet")


@given(st.floats(0.5, 4.0), st.floats(1e-3, 1e3), st.lists(st.sampled_from([64, 256, 512, 1024, 4096]), min_size=2))
def test_the_growth_exponent_of_a_power_law_is_its_power(power: float, scale: float, sizes: list[int]) -> None:
    points = [(n, scale * n**power) for n in sizes]
    exponent = bench_scaling.growth_exponent(points)
    if len(set(sizes)) < 2:
        assert exponent is None
    else:
        assert exponent == pytest.approx(power, rel=1e-9)


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--ranks", "100"], "--ranks takes multiples of 32 from 64, got '100'"),
        (["--ranks", "32"], "--ranks takes multiples of 32 from 64, got '32'"),
        (["--ranks", "64,x"], "--ranks takes multiples of 32 from 64, got '64,x'"),
        (["--routing", "valiant"], "unknown routing 'valiant' (known: minimal, ugal-g, ugal-g-packet)"),
    ],
)
def test_bad_arguments_are_one_error_line(argv: list[str], error: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_scaling.main(argv) == 2
    assert capsys.readouterr().err == f"bench-scaling: error: {error}\n"


def test_a_missing_simgrid_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_scaling.main(["--simgrid", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"bench-scaling: error: no SimGrid at {tmp_path.resolve()} (no bin/smpirun)\n"


def test_a_series_runs_its_sizes_and_stops_after_a_long_run(bin_dir: Path, tmp_path: Path) -> None:
    """64 and 96 ranks, minimal: each a real simulation with its wall time and memory; with a 0 s limit the second
    size is skipped, and the table says so."""
    series = bench_scaling.measure_series("minimal", [96, 64], tmp_path, max_wall=3600)
    assert [row["ranks"] for row in series["rows"]] == [64, 96]
    for row in series["rows"]:
        assert row["wall_s"] > 0 and row["peak_memory_mib"] > 0
        # every rank sends ranks - 1 blocks of 1 MiB through its 4 GB/s host cable, one after the other
        assert row["simulated_s"] >= (row["ranks"] - 1) * 2**20 / 4e9
    assert series["wall_exponent"] is not None and math.isfinite(series["wall_exponent"])
    stopped = bench_scaling.measure_series("minimal", [64, 96], tmp_path, max_wall=0)
    assert [row["ranks"] for row in stopped["rows"]] == [64] and stopped["skipped"] == [96]
    table = bench_scaling.markdown([stopped], "test", "/simgrid", 0)
    assert "| minimal | 64 |" in table and "96 (a run took over 0 s)" in table
