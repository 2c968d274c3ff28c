"""``smpirun-on --counters DIR``: per-link bytes, utilisation over time and a cropped heat map of any run, from
SimGrid's link tracing (study_runner/tools/counters.py, study_runner/simulation/link_series.py,
generators/drawing/crop.py)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from generators import build_platform
from generators.analysis import link_loads
from generators.drawing import draw_platform
from generators.drawing import layout
from generators.drawing.crop import crop
from generators.drawing.crop import job_nodes
from generators.errors import TopologyError
from study_runner.simulation.counters import LINKS_COLUMNS
from study_runner.simulation.counters import SERIES_COLUMNS
from study_runner.simulation.counters import write_counters
from study_runner.simulation.link_series import NS_PER_S
from study_runner.simulation.link_series import LinkSeries
from study_runner.simulation.tracing import link_bytes
from tests.test_smpirun_on import PINGPONG
from tests.test_smpirun_on import run
from tests.test_tracing import PINGPONG as PINGPONG_ARGS
from tests.test_tracing import PINGPONG_BYTES
from tests.test_tracing import TRACE
from tests.test_tracing import TRACE_BYTES

SHIFT = "build/bin/shift"
DRAGONFLY = ["dragonfly", "--groups", "4", "--routers", "2", "--hosts", "2", "--global-ports", "2"]
DRAGONFLY_PARAMS = {"groups": 4, "routers": 2, "hosts": 2, "global_ports": 2}


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def overlap(start: float, end: float, low: float, high: float) -> float:
    return max(0.0, min(end, high) - max(start, low))


stretches = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.floats(0, 5e-3),  # start, s
        st.floats(0, 5e-3),  # length, s
        st.floats(-1e9, 5e10).filter(lambda rate: rate != 0),  # B/s (SimGrid's residues may be negative)
    ),
    max_size=40,
)


class TestLinkSeries:
    @settings(max_examples=200, deadline=None)
    @given(stretches)
    def test_each_interval_holds_the_bytes_of_its_time(
        self, given_stretches: list[tuple[str, float, float, float]]
    ) -> None:
        series = LinkSeries()
        for link, start, length, rate in given_stretches:
            series.add(link, start, start + length, rate)
        scale = round(series.width * NS_PER_S)
        assert scale in {10**k * f for k in range(12) for f in (1, 2)}  # 1, 2, 10, 20, 100 ... ns
        ends = [start + length for _, start, length, _ in given_stretches if start + length > start]
        assert series.end == pytest.approx(max(ends, default=0.0), abs=0)
        assert series.used_intervals() <= series.intervals
        if series.end > series.intervals / NS_PER_S:  # once merged, the run fills at least a fifth of them
            assert series.used_intervals() >= series.intervals // 5
        for link in "abc":
            row = series.bytes.get(link, [0.0] * series.intervals)
            for k, amount in enumerate(row):
                low, high = k * series.width, (k + 1) * series.width
                expected = sum(
                    rate * overlap(start, start + length, low, high)
                    for name, start, length, rate in given_stretches
                    if name == link
                )
                assert math.isclose(amount, expected, rel_tol=1e-9, abs_tol=1e-3), (link, k, amount, expected)

    def test_rows_skip_idle_intervals(self) -> None:
        series = LinkSeries(intervals=10)
        series.add("b", 0.0, 2e-9, 1e9)  # 1 byte in each of the first two ns
        series.add("a", 5e-9, 6e-9, 3e9)
        assert list(series.rows()) == [(0, "b", pytest.approx(1.0)), (1, "b", pytest.approx(1.0)),
                                       (5, "a", pytest.approx(3.0))]  # fmt: skip
        with pytest.raises(ValueError, match="multiple of 10"):
            LinkSeries(intervals=15)

    def test_link_bytes_fills_the_series_with_what_it_integrates(self, tmp_path: Path) -> None:
        trace = tmp_path / "run.trace"
        trace.write_text(TRACE)
        series = LinkSeries()
        totals = link_bytes(trace, series)
        assert totals == pytest.approx(TRACE_BYTES, rel=1e-15)
        assert {link: sum(row) for link, row in series.bytes.items()} == pytest.approx(
            {link: amount for link, amount in TRACE_BYTES.items() if amount > 0}, rel=1e-12
        )
        assert series.end == 3.5 and series.width == 0.02  # 3.5 s in intervals of 1, 2, 10, 20 ... ns: 20 ms
        assert sum(series.bytes["a_to_b"][50:75]) == pytest.approx(500)  # 1000 B/s over [1, 1.5] s


class TestCrop:
    def test_keeps_the_job_and_what_its_traffic_crossed(self) -> None:
        platform = build_platform("dragonfly", DRAGONFLY_PARAMS)
        job = ["host-0-0-0", "host-2-1-1"]
        loads = link_loads(platform, [(job[0], job[1])])
        lay = layout(platform)
        kept = job_nodes(lay, job, loads)
        route = platform.route(job[0], job[1])
        assert set(job) <= kept and len(kept) == len(route) + 1  # a route of n cables joins n + 1 nodes
        cropped = crop(lay, kept)
        assert set(cropped.positions) == kept and set(cropped.hosts) == set(job)
        assert {link for edge in cropped.edges for link in edge.links} >= set(route)
        assert all(edge.a in kept and edge.b in kept for edge in cropped.edges)
        assert len(cropped.edges) < len(lay.edges) and cropped.notes[-1].startswith("Cropped to the job: 2 of 16 hosts")
        assert crop(lay, lay.positions) is lay  # the whole machine: nothing to crop

    def test_a_cropped_heat_map_is_smaller(self, tmp_path: Path) -> None:
        platform = build_platform("tofu", {"xyz": "2x2x2"})
        job = platform.host_names[:2]
        loads = link_loads(platform, [(job[0], job[1])])
        draw_platform(platform, tmp_path / "whole.png", link_loads=loads)
        draw_platform(platform, tmp_path / "job.png", link_loads=loads, crop_to=job)
        assert (tmp_path / "job.png").stat().st_size < (tmp_path / "whole.png").stat().st_size / 2
        with pytest.raises(TopologyError, match="no such host"):
            draw_platform(platform, tmp_path / "bad.png", link_loads=loads, crop_to=["host-x"])
        assert not (tmp_path / "bad.png").exists()


def test_counters_of_a_platform_without_a_model(tmp_path: Path) -> None:
    """A trace of a platform topolab did not write: bytes and series, no kinds, bandwidths or heat map."""
    (tmp_path / "run.trace").write_text(TRACE)
    counters = write_counters(tmp_path, tmp_path / "run.trace", None, ["host-0"])
    links = read_csv(tmp_path / "links.csv")
    assert tuple(links[0]) == LINKS_COLUMNS
    assert [row["link"] for row in links] == ["a_to_b", "link with spaces", "idle"]  # busiest first
    assert {row["link"]: float(row["bytes"]) for row in links} == pytest.approx(TRACE_BYTES, rel=1e-12)
    assert all(row["kind"] == row["bandwidth_Bps"] == row["utilisation"] == "" for row in links)
    series = read_csv(tmp_path / "link_series.csv")
    assert tuple(series[0]) == SERIES_COLUMNS and {row["link"] for row in series} == {"a_to_b", "link with spaces"}
    assert not (tmp_path / "heatmap.png").exists() and counters.heatmap.startswith("no heat map")


@pytest.mark.usefixtures("bin_dir")
class TestCountersOfARun:
    def test_static_run_agrees_with_the_static_link_loads(self, tmp_path: Path) -> None:
        """A ping-pong across a minimally routed dragonfly (one message at a time, so every flow runs alone and
        SimGrid's trace is exact): each link carries the run's bytes times the flows the static analysis puts on it
        (generators.analysis.link_loads on the model's routes), and the other links nothing."""
        platform = build_platform("dragonfly", DRAGONFLY_PARAMS)
        pair = ("host-0-0-0", "host-3-1-1")
        out = tmp_path / "counters"
        done = run(tmp_path, *DRAGONFLY, "--placement", ",".join(pair), "--counters", str(out), "--", PINGPONG,
                   *PINGPONG_ARGS)  # fmt: skip
        assert done.returncode == 0, done.stderr
        traced = {row["link"]: float(row["bytes"]) for row in read_csv(out / "links.csv")}
        loads = link_loads(platform, [pair, pair[::-1]])
        assert set(loads.values()) == {1} and len(loads) == 8  # each way: host, global, local and host cables
        expected = {name: loads[name] * PINGPONG_BYTES for name in platform.links}
        assert {name: traced[name] for name in platform.links} == pytest.approx(expected, rel=1e-9, abs=1e-6)
        assert "heat map of the job's 2 hosts" in done.stderr

    def test_ugal_g_run_writes_csvs_and_a_cropped_heat_map(self, tmp_path: Path) -> None:
        out = tmp_path / "counters"
        done = run(tmp_path, *DRAGONFLY, "--routing", "ugal-g", "--placement", "random:3", "--np", "6",
                   "--counters", str(out), "--", SHIFT, "-S", "3", "-s", "256K", "-i", "1", "-w", "0")  # fmt: skip
        assert done.returncode == 0, done.stderr
        platform = build_platform("dragonfly", {**DRAGONFLY_PARAMS, "routing": "ugal-g"})
        links = read_csv(out / "links.csv")
        assert {row["link"] for row in links} >= set(platform.links)
        amounts = [float(row["bytes"]) for row in links]
        assert amounts == sorted(amounts, reverse=True) and amounts[0] > 0.5 * 256 * 1024
        series = read_csv(out / "link_series.csv")
        for row in links:
            in_series = sum(float(r["bytes"]) for r in series if r["link"] == row["link"])
            assert in_series == pytest.approx(float(row["bytes"]), rel=1e-9, abs=1e-6)
            if row["kind"] == "cable":  # a cable never carries more than its bandwidth
                assert float(row["bandwidth_Bps"]) == platform.links[row["link"]].bandwidth
                assert 0 <= float(row["utilisation"]) <= float(row["peak_utilisation"]) <= 1 + 1e-9
        widths = {round(float(r["end_s"]) - float(r["start_s"]), 15) for r in series}
        assert len(widths) == 1 and 40 <= max(float(r["end_s"]) for r in series) / widths.pop() <= 200
        assert (out / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "heat map of the job's 6 hosts" in done.stderr and "busiest:" in done.stderr

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            (["--counters", "FILE"], "--counters {tmp}/file: not a directory"),
            (["--counters", "DIR", "--cfg=tracing/precision:3"], "--counters traces the run itself: drop"),
            (["--counters", ""], "--counters"),
        ],
    )
    def test_bad_counters_are_one_line(self, tmp_path: Path, options: list[str], message: str) -> None:
        (tmp_path / "file").write_text("")
        options = [{"FILE": str(tmp_path / "file"), "DIR": str(tmp_path / "dir")}.get(o, o) for o in options]
        done = run(tmp_path, "crossbar", "--hosts", "2", *options, "--", SHIFT)
        assert done.returncode == 2
        (line,) = done.stderr.splitlines()
        assert line.startswith("smpirun-on: error: ") and message.format(tmp=tmp_path) in line
        assert not (tmp_path / "dir").exists() and not (tmp_path / "cache" / "platforms").exists()
