"""Failed cables and switches (``generators.faults``) routed around by OpenSM (``generators.opensm``): hosts cut from
the subnet manager are counted in closed form, drawn faults are the seed's, a platform gives no route to a pair cut
apart and SimGrid refuses a run that needs one, and bad fault specs are one error line."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generators.errors import TopologyError
from generators.families import build_platform
from generators.faults import draw
from generators.opensm import cables_of
from generators.opensm import fabric_of
from generators.opensm import run_opensm
from generators.opensm_cli import compare

REPO = Path(__file__).resolve().parent.parent
TREE = {"radix": 8, "levels": 3}  # 128 servers, 4 a leaf; 256 switch-to-switch cables, 80 switches


def faults(cables: str | None = None, switches: str | None = None, seed: int = 1, params: dict | None = None):
    platform = build_platform("fattree", params or TREE)
    whole = fabric_of(platform)
    return platform, draw(cables, switches, seed, cables_of(platform), whole.switches, frozenset(whole.hosts))


@pytest.mark.parametrize("engine", ["minhop", "updn", "dfsssp"])
def test_a_leaf_cut_from_the_tree_loses_exactly_its_servers_pairs(engine: str) -> None:
    """Every up cable of leaf-0 failed: its s = 4 servers reach no one, not even each other (no subnet manager
    gives them LIDs), 2 s (H - s) + s (s - 1) = 1004 of the 16,256 pairs; every other pair is routed."""
    platform, cut = faults(",".join(f"leaf-0/agg2-0-{p}" for p in range(4)))
    fabric = fabric_of(platform, cut)
    result = compare(platform, fabric, run_opensm(fabric, engine))
    assert result["pairs_cut_off"] == 2 * 4 * 124 + 4 * 3
    assert result["pairs_routed"] == result["pairs"] - result["pairs_cut_off"]
    assert result["pairs_unrouted"] == 0


def test_a_failed_host_cable_cuts_that_host_only() -> None:
    platform, cut = faults("server-0-0/leaf-0")
    fabric = fabric_of(platform, cut)
    result = compare(platform, fabric, run_opensm(fabric, "minhop"))
    assert result["pairs_cut_off"] == 2 * 127 and result["pairs_routed"] == 128 * 127 - 2 * 127


def test_drawn_faults_are_the_seeds_and_fractions_count_the_switch_cables() -> None:
    _, first = faults("5%", "2", seed=7)
    _, again = faults("5%", "2", seed=7)
    _, other = faults("5%", "2", seed=8)
    assert first == again != other
    assert len(first.cables) == round(256 * 0.05) and len(first.switches) == 2
    assert not any(name.startswith("server-") for cable in first.cables for name in cable)
    assert len(faults("0%")[1].cables) == 0 and len(faults("100%")[1].cables) == 256


def test_a_failed_switch_is_gone_and_the_rest_still_routes_every_pair() -> None:
    platform, dead = faults(switches="spine-0")
    fabric = fabric_of(platform, dead)
    assert "spine-0" not in fabric.switches and "spine-0" not in fabric.ports
    assert all(other != "spine-0" for ports in fabric.ports.values() for other, _ in ports.values())
    result = compare(platform, fabric, run_opensm(fabric, "minhop"))
    assert result["switches"] == 79 and result["pairs_routed"] == result["pairs"]


@pytest.mark.parametrize(
    ("cables", "switches", "message"),
    [
        ("leaf-0/spine-3", None, "--fail-cables: no cable 'leaf-0/spine-3' in this fabric"),
        ("101%", None, "--fail-cables: 101% is more than all of them"),
        ("257", None, "--fail-cables: 257 asked, the fabric has 256"),
        (None, "spine-99", "--fail-switches: no switch 'spine-99' in this fabric"),
    ],
)
def test_bad_fault_specs_are_one_clear_error(cables: str | None, switches: str | None, message: str) -> None:
    with pytest.raises(TopologyError, match=f"^{re.escape(message)}$"):
        faults(cables, switches)


def test_a_run_between_hosts_cut_apart_fails_with_simgrids_reason(tmp_path: Path, bin_dir: Path) -> None:
    """The platform has no route for the pairs the faults cut apart (58 of 240 on the 16-server tree with leaf-0 cut
    off); a shift that needs one stops with SimGrid's one line naming the two hosts and a non-zero status."""
    platform = tmp_path / "cut.xml"
    command = [sys.executable, "-m", "generators.opensm", "fattree", "--radix", "4", "--levels", "3"]
    made = subprocess.run(
        [*command, "--engine", "minhop", "--fail-cables", "leaf-0/agg2-0-0,leaf-0/agg2-0-1", "-o", str(platform)],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert '"pairs_cut_off": 58' in made.stdout
    assert platform.read_text().count("<route ") == 240 - 58
    run = subprocess.run(
        [str(REPO / "scripts" / "smpirun-on"), str(platform), "--", str(bin_dir / "shift"), "-S", "1", "-s", "1M"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode != 0
    assert "from server-0-1 to server-0-0 but there is no connecting path" in run.stderr


def test_the_failure_sweep_writes_a_row_per_point_and_a_figure(tmp_path: Path) -> None:
    """minhop and ftree on the 16-server tree at 0% and 10% (3 of 32 cables), two seeds: 6 rows; ftree refuses the
    degraded trees with OpenSM's reason, minhop routes every pair of them."""
    command = [sys.executable, "-m", "generators.opensm_failures", "fattree", "--radix", "4", "--levels", "3"]
    done = subprocess.run(
        [*command, "--engines", "minhop,ftree", "--percents", "0,10", "--seeds", "2", "--out", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "opensm_failures: 6/6: ftree, 10% failed, seed 2" in done.stderr
    with open(tmp_path / "failures.csv", newline="") as table:
        rows = list(csv.DictReader(table))
    assert [(r["engine"], r["failed_percent"], r["seed"]) for r in rows][:3] == [
        ("minhop", "0.0", "1"), ("minhop", "10.0", "1"), ("minhop", "10.0", "2"),
    ]  # fmt: skip
    assert all(r["failed_cables"] == "3" for r in rows if r["failed_percent"] == "10.0")
    assert all(r["refused"] == "" and r["pairs_unrouted"] == "0" for r in rows if r["engine"] == "minhop")
    assert [bool(r["refused"]) for r in rows if r["engine"] == "ftree"] == [False, True, True]
    assert (tmp_path / "failures.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--engines", "minhop,fttree"], "unknown OpenSM routing engine 'fttree'"),
        (["--percents", "0,ten"], "--percents must be numbers, got '0,ten'"),
        (["--percents", "0,101"], "--percents between 0 and 100"),
    ],
)
def test_a_bad_sweep_is_one_error_and_writes_nothing(tmp_path: Path, options: list[str], message: str) -> None:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "generators.opensm_failures", "fattree", "--radix", "4", "--out", str(out)]
    command += ["--levels", "3"]
    done = subprocess.run([*command, *options], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2 and message in done.stderr and done.stderr.count("\n") == 1
    assert not out.exists()
