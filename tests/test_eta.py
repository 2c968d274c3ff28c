"""The estimate of the time left (study_runner.batch.eta) on synthetic batches, the two progress displays that show it,
and the cache's history that feeds it."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from study_runner.batch.eta import Estimate
from study_runner.batch.eta import Expected
from study_runner.batch.progress import BarProgress
from study_runner.batch.progress import LineProgress
from study_runner.simulation.cache import Cache
from study_runner.simulation.prepared import Simulation

SECONDS_PER_SIZE = 0.002


def sized_batch() -> list[Expected]:
    """Small runs first, then runs 10 to 1000 times larger: the average of the first says nothing of the rest."""
    return [Expected(f"run{i}", size) for i, size in enumerate([10] * 20 + [100] * 10 + [1000] * 5 + [10000] * 2)]


def cost(item: Expected) -> float:
    return SECONDS_PER_SIZE * item.size


class TestSizeModel:
    def test_remaining_runs_by_their_size_not_the_average_so_far(self) -> None:
        batch = sized_batch()
        estimate = Estimate(batch)
        for item in batch[:20]:  # every small run done: the 17 large ones are left
            estimate.finish(item.label, cost(item))
        left = sum(cost(item) for item in batch[20:])
        assert estimate.seconds_left(now=0.0) == pytest.approx(left)
        average_so_far = 17 * SECONDS_PER_SIZE * 10  # what extrapolating the finished runs' mean would say
        assert left > 50 * average_so_far

    def test_seconds_per_size_is_fitted_on_every_finished_run(self) -> None:
        estimate = Estimate([Expected("a", 1.0), Expected("b", 3.0), Expected("c", 10.0)])
        estimate.finish("a", 2.0)
        estimate.finish("b", 2.0)  # 4 s for 4 units of size: 1 s per unit
        assert estimate.costs() == {"c": pytest.approx(10.0)}

    def test_nothing_to_estimate_with_before_a_run_finishes(self) -> None:
        estimate = Estimate(sized_batch())
        assert estimate.costs() is None and estimate.seconds_left(now=0.0) is None

    def test_unknown_labels_and_unmeasured_runs(self) -> None:
        estimate = Estimate([Expected("a", 1.0), Expected("b", 1.0), Expected("c", 1.0)])
        estimate.finish("a-twin", 50.0)  # a run served by another's simulation: not one of the expected
        estimate.finish("a", None)  # finished, cost not measured: done, but no data
        assert estimate.seconds_left(now=0.0) is None
        estimate.finish("b", 4.0)
        estimate.finish("b", 400.0)  # counted once
        assert estimate.seconds_left(now=0.0) == pytest.approx(4.0)
        estimate.finish("c", 4.0)
        assert estimate.seconds_left(now=0.0) is None  # nothing left


class TestHistory:
    def test_history_wins_over_size_and_is_scaled_by_this_batch(self) -> None:
        """Runs that took twice their history: the others will too, whatever their size says."""
        batch = [Expected(f"h{i}", 1.0, history_s=float(i + 1)) for i in range(4)] + [Expected("new", 5.0)]
        estimate = Estimate(batch)
        estimate.finish("h0", 2.0)
        estimate.finish("h1", 4.0)
        costs = estimate.costs()
        assert costs == {"h2": pytest.approx(6.0), "h3": pytest.approx(8.0), "new": pytest.approx(15.0)}

    def test_history_gives_an_estimate_before_anything_finishes(self) -> None:
        batch = [Expected("a", 2.0, history_s=30.0), Expected("b", 1.0, history_s=10.0), Expected("c", 1.0)]
        estimate = Estimate(batch)
        # c has no history: its seconds per size come from the others' (40 s for 3 units).
        assert estimate.costs() == {"a": 30.0, "b": 10.0, "c": pytest.approx(40.0 / 3)}


class TestSlots:
    def test_runs_in_parallel_and_runs_in_flight(self) -> None:
        batch = [Expected(label, 1.0, history_s=10.0) for label in "abcd"]
        started: dict[str, float] = {}
        estimate = Estimate(batch, slots=2, started=started)
        assert estimate.seconds_left(now=0.0) == pytest.approx(20.0)  # 40 s of work on 2 slots
        started.update(a=0.0, b=0.0)
        assert estimate.seconds_left(now=4.0) == pytest.approx((6 + 6 + 10 + 10) / 2)
        estimate.finish("a", 10.0)
        estimate.finish("b", 10.0)
        started.update(c=10.0, d=10.0)
        assert estimate.seconds_left(now=19.0) == pytest.approx(1.0)
        assert estimate.seconds_left(now=25.0) == 0.0  # both overran their history: no time left to show

    def test_never_less_than_the_longest_run(self) -> None:
        batch = [Expected("long", 1.0, history_s=100.0)] + [Expected(f"s{i}", 1.0, history_s=1.0) for i in range(4)]
        assert Estimate(batch, slots=8).seconds_left(now=0.0) == pytest.approx(100.0)


class TestProgress:
    def test_bar_with_eta(self) -> None:
        stream = io.StringIO()
        bar = BarProgress("points", stream=stream, every=0.0)
        bar.begin(10, 4, Estimate([Expected(f"p{i}", 1.0) for i in range(6)]))
        assert "4/10 points (4 cached, 0 simulated)" in stream.getvalue() and "ETA" not in stream.getvalue()
        bar.advance("p0", False, 1.0, 1.0)
        last = stream.getvalue().strip().splitlines()[-1]
        assert last.startswith("[#####") and "5/10 points (4 cached, 1 simulated)" in last and "ETA 0:05" in last
        bar.end()
        assert stream.getvalue().endswith("\n")

    def test_no_eta_before_a_simulation_finishes(self) -> None:
        bar = BarProgress("points", stream=io.StringIO())
        bar.begin(3, 0, Estimate([Expected(f"p{i}", 1.0) for i in range(3)]))
        assert bar.eta() is None

    def test_eta_from_the_start_with_a_history(self) -> None:
        """The bar and the study's lines share one estimate: with a history, the bar shows the time left at once."""
        stream = io.StringIO()
        bar = BarProgress("points", stream=stream, every=0.0)
        bar.begin(2, 0, Estimate([Expected("a", 1.0, history_s=70.0), Expected("b", 1.0, history_s=3.0)]))
        assert "ETA 1:13" in stream.getvalue()


def test_line_progress_shows_the_estimate() -> None:
    stream = io.StringIO()
    progress = LineProgress(stream)
    batch = sized_batch()
    progress.begin(len(batch) + 1, 1, Estimate(batch))
    progress.advance("cached", True, 1.0, None)
    for item in batch[:20]:
        progress.advance(item.label, False, cost(item), 10.0)
    last = stream.getvalue().splitlines()[-1]
    left = sum(cost(item) for item in batch[20:])
    assert last.startswith("[21/38] run19: simulated in 0.0 s, 10 MiB (") and f"about {left:.0f} s left" in last


APP = Path("/opt/apps/a")
SIMULATION = Simulation(("smpirun", "-np", "1", str(APP), "-n", "1"), {APP: "old"}, "SimGrid 4.1", built=(APP,))


class TestCacheHistory:
    def test_a_rebuild_keeps_the_history(self, tmp_path: Path) -> None:
        cache = Cache(tmp_path)
        cache.put(SIMULATION.key, [{"t": 1}], SIMULATION.provenance(), {"wall_s": 12.5, "peak_memory_mib": 3.0},
                  SIMULATION.history_key)  # fmt: skip
        rebuilt = dataclasses.replace(SIMULATION, files={APP: "new"}, simgrid="SimGrid 4.2")
        assert rebuilt.key != SIMULATION.key and cache.history(rebuilt.history_key) == 12.5
        assert cache.history(rebuilt.history_key, "peak_memory_mib") == 3.0
        other = dataclasses.replace(SIMULATION, argv=(*SIMULATION.argv[:-1], "2"))  # another simulation
        assert cache.history(other.history_key) is None
        another_app = dataclasses.replace(SIMULATION, argv=(*SIMULATION.argv[:3], "/opt/apps/b", "-n", "1"),
                                          files={Path("/opt/apps/b"): "old"}, built=(Path("/opt/apps/b"),))  # fmt: skip
        assert cache.history(another_app.history_key) is None  # a rebuild keeps an app's name, another app has its own
        assert [path.parent.name for path in tmp_path.glob("*/*.json")] == [SIMULATION.key[:2]]  # entries only

    def test_an_older_cache_is_read_into_the_history_once(self, tmp_path: Path) -> None:
        entry = tmp_path / "ab" / "ab12.json"
        entry.parent.mkdir()
        entry.write_text(json.dumps({"inputs": SIMULATION.provenance(), "records": [{}], "measured": {"wall_s": 7.0},
                                     "history_key": SIMULATION.history_key}))  # fmt: skip
        (tmp_path / "cd").mkdir()
        (tmp_path / "cd" / "cd34.json").write_text("{torn")
        (tmp_path / "ef").mkdir()  # written before entries named their history key: nothing to read
        (tmp_path / "ef" / "ef56.json").write_text(
            json.dumps({"inputs": {}, "records": [{}], "measured": {"wall_s": 1}})
        )
        cache = Cache(tmp_path)
        assert cache.history(SIMULATION.history_key) == 7.0
        assert (tmp_path / "history" / ".complete").exists()
