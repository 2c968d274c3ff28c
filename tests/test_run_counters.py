"""Network counters of a sweep's or a study's runs (``counters = true``): each run's traced twin simulated and cached
beside it, and ``counters/<run>/`` written as ``smpirun-on --counters`` writes its directory
(study_runner/simulation/counters.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from generators import build_platform
from generators.analysis import link_loads
from study_runner.errors import StudyError
from study_runner.sweeps import sweep_cli
from study_runner.sweeps.sweep import load_sweep
from tests.test_counters import DRAGONFLY_PARAMS
from tests.test_tracing import PINGPONG as PINGPONG_ARGS
from tests.test_tracing import PINGPONG_BYTES

PAIR = ("host-0-0-0", "host-3-1-1")

SWEEP = f"""
name = "counted"
[grid]
routing = ["minimal", "ugal-g"]
[platform]
family = "dragonfly"
groups = 4
routers = 2
hosts = 2
global_ports = 2
routing = "{{routing}}"
[run]
app = "pingpong"
ranks = 2
args = {json.dumps(PINGPONG_ARGS)}
placement = {json.dumps(list(PAIR))}
counters = true
"""


def _links(path: Path) -> dict[str, float]:
    with path.open(newline="") as file:
        return {row["link"]: float(row["bytes"]) for row in csv.DictReader(file)}


def test_a_sweeps_counters_agree_with_the_static_link_loads_and_come_back_from_the_cache(
    tmp_path: Path, bin_dir: Path
) -> None:
    """A ping-pong across a minimally routed dragonfly (every flow alone, so SimGrid's trace is exact): each link of
    point 0 carries the run's bytes times the flows the static analysis puts on it; a rerun reads the points and
    their twins from the cache and writes the same counters."""
    (tmp_path / "counted.toml").write_text(SWEEP, encoding="utf-8")
    argv = [str(tmp_path / "counted.toml"), "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "c"),
            "--bin", str(bin_dir), "--workers", "1"]  # fmt: skip
    assert sweep_cli.main(argv) == 0
    out = tmp_path / "results" / "counted"
    platform = build_platform("dragonfly", DRAGONFLY_PARAMS)
    loads = link_loads(platform, [PAIR, PAIR[::-1]])
    traced = _links(out / "counters" / "point-0" / "links.csv")
    assert set(traced) >= set(platform.links)
    expected = {name: loads[name] * PINGPONG_BYTES for name in platform.links}
    assert {name: traced[name] for name in platform.links} == pytest.approx(expected, rel=1e-9, abs=1e-6)
    assert (out / "counters" / "point-1" / "heatmap.png").read_bytes()[:4] == b"\x89PNG"
    with (out / "points.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    busiest = max(traced.values())
    assert [float(row["busiest_link_bytes"]) for row in rows if row["point"] == "0"] == pytest.approx([busiest] * 2)
    assert json.loads((out / "sweep.json").read_text())["counters"] == 2
    before = {p.name: p.read_bytes() for p in (out / "counters").rglob("*.csv")}
    assert sweep_cli.main(argv) == 0
    assert json.loads((out / "sweep.json").read_text())["simulated"] == 0
    assert {p.name: p.read_bytes() for p in (out / "counters").rglob("*.csv")} == before


@pytest.mark.parametrize(
    "extra", ['compute = "benchmark"', "replay = true", 'neighbours = [{name = "n", app = "shift", ranks = 2}]']
)
def test_counters_need_the_apps_own_run(tmp_path: Path, extra: str) -> None:
    (tmp_path / "bad.toml").write_text(SWEEP.replace("counters = true", f"counters = true\n{extra}"), encoding="utf-8")
    with pytest.raises(StudyError, match=r"counters = true traces the app's own run"):
        load_sweep(tmp_path / "bad.toml")
