"""Routes from OpenSM under ibsim (``generators.opensm``): the real subnet manager (Debian's opensm 3.3.23, on
ibsim-utils' simulated fabric) routes topolab's fabrics; its ftree engine on a full fat tree gives D-mod-K's routes
pair by pair; every pair's path follows the tables; bad input and failing engines are one error and leave nothing
running."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from generators import opensm
from generators.families import build_platform
from generators.opensm import OpenSMError
from generators.opensm import compare
from generators.opensm import fabric_of
from generators.opensm import run_opensm
from generators.opensm import switch_path

REPO = Path(__file__).resolve().parent.parent


def ours_running() -> list[str]:
    """ibsim or OpenSM processes started from one of generators.opensm's scratch directories."""
    done = subprocess.run(["pgrep", "-af", "topolab-opensm-"], capture_output=True, text=True)
    return [line for line in done.stdout.splitlines() if "pgrep" not in line]


def test_ftree_routes_a_full_three_level_fat_tree_as_d_mod_k_does() -> None:
    """Zahavi's D-mod-K is what OpenSM's ftree engine implements: the same switches for all 16,256 pairs of the
    128-server radix-8 tree, and no shift permutation puts two flows on a cable under either."""
    result = compare(build_platform("fattree", {"radix": 8, "levels": 3}), "ftree")
    assert (result["hosts"], result["switches"], result["pairs"]) == (128, 80, 128 * 127)
    assert result["pairs_as_rule"] == result["pairs"]
    assert result["worst_shift_flows"] == result["rule_worst_shift_flows"] == 1


def test_minhop_balances_less_than_ftree_on_the_same_tree() -> None:
    """The comparison compares something: minhop routes some pairs elsewhere and some shift puts 2 flows on a
    cable of the radix-4 tree."""
    result = compare(build_platform("fattree", {"radix": 4, "levels": 3}), "minhop")
    assert 0 < result["pairs_unlike_rule"] < result["pairs"]
    assert result["worst_shift_flows"] == 2


@pytest.mark.parametrize(
    ("family", "params", "engine"),
    [
        ("torus", {"dims": "4x3"}, "dor"),
        ("torus", {"dims": "4x4", "wrap": "no"}, "lash"),
        ("dragonfly", {"groups": 5, "routers": 4, "hosts": 2, "global_ports": 1}, "minhop"),
        ("fattree", {"radix": 6, "servers_per_leaf": 4}, "updn"),
        ("hyperx", {"dims": "3x3", "hosts": 2}, "dfsssp"),
    ],
)
def test_every_pair_follows_the_tables_to_its_host(family: str, params: dict[str, object], engine: str) -> None:
    """On direct networks (a switch per torus node), dragonflies, tapered trees and HyperX: each switch on the path
    forwards on its table's port for the destination's LID, and the walk reaches the destination through its own
    switch, minimal in switch hops for minhop."""
    platform = build_platform(family, params)
    fabric = fabric_of(platform)
    tables = run_opensm(fabric, engine)
    for src, dst in itertools.permutations(fabric.hosts, 2):
        path = switch_path(fabric, tables, src, dst)
        assert path[0] == fabric.ports[src][1][0] and path[-1] == fabric.ports[dst][1][0]
        for here, there in itertools.pairwise(path):
            assert there in {node for node, _ in fabric.ports[here].values()}
        assert len(set(path)) == len(path)


def test_the_net_file_has_every_cable_from_both_ends() -> None:
    fabric = fabric_of(build_platform("torus", {"dims": "3x3"}))
    assert len(fabric.switches) == 9 and all(len(fabric.ports[h]) == 1 for h in fabric.hosts)
    for node, ports in fabric.ports.items():
        for port, (other, back) in ports.items():
            assert fabric.ports[other][back] == (node, port)
    text = fabric.net_text()
    assert text.startswith('Switch\t5 "host-0-sw"\n[1]\t"host-0"[1]\n')
    assert text.count("Hca\t1 ") == 9


def test_an_engine_that_cannot_route_the_fabric_is_an_error_not_minhop() -> None:
    """OpenSM falls back to minhop when ftree finds no tree; that is refused, naming OpenSM's reason."""
    with pytest.raises(OpenSMError, match=r"OpenSM's ftree engine did not route this fabric \(.*root"):
        run_opensm(fabric_of(build_platform("torus", {"dims": "4x4"})), "ftree")
    assert ours_running() == []


def test_two_runs_at_once_do_not_clash_and_agree() -> None:
    fabric = fabric_of(build_platform("fattree", {"radix": 4, "levels": 3}))
    results: list[opensm.Tables] = []
    threads = [threading.Thread(target=lambda: results.append(run_opensm(fabric, "ftree"))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and all(r.lft == results[0].lft for r in results)
    assert ours_running() == []


@pytest.mark.parametrize(("timeout", "message"), [(0.005, "ibsim did not start"), (0.8, r"OpenSM \(dfsssp\) did not")])
def test_a_time_limit_stops_both_and_leaves_nothing(timeout: float, message: str) -> None:
    """dfsssp takes about 2 s on the 432-server tree: stopped while ibsim starts, then while OpenSM routes."""
    fabric = fabric_of(build_platform("fattree", {"radix": 12, "levels": 3}))
    with pytest.raises(OpenSMError, match=message):
        run_opensm(fabric, "dfsssp", timeout=timeout)
    assert ours_running() == []


def test_missing_tools_and_unknown_engines_are_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = fabric_of(build_platform("fattree", {"radix": 4}))
    with pytest.raises(OpenSMError, match="unknown OpenSM routing engine 'fttree'; known: minhop"):
        run_opensm(fabric, "fttree")
    monkeypatch.setattr(opensm, "UMAD2SIM", Path("/nonexistent/libumad2sim.so"))
    with pytest.raises(OpenSMError, match="not installed: install Debian's opensm, ibsim-utils and libumad2sim0"):
        run_opensm(fabric, "ftree")


def test_the_command_prints_one_json_object_or_one_error_line() -> None:
    command = [sys.executable, "-m", "generators.opensm", "fattree", "--radix", "4", "--engine"]
    done = subprocess.run([*command, "ftree"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"pairs_as_rule": 56' in done.stdout and done.stdout.count("\n") == 1
    bad = subprocess.run([*command, "fttree"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 2 and bad.stdout == "" and "invalid choice: 'fttree'" in bad.stderr
    torus = [sys.executable, "-m", "generators.opensm", "torus", "--dims", "4x4", "--engine", "updn"]
    failed = subprocess.run(torus, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert failed.returncode == 2 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and "updn engine did not route" in failed.stderr
