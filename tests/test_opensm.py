"""Routes from OpenSM under ibsim (``generators.opensm``): the real subnet manager (Debian's opensm 3.3.23, on
ibsim-utils' simulated fabric) routes topolab's fabrics; its ftree engine on a full fat tree gives D-mod-K's routes
pair by pair; every pair's path follows the tables; bad input and failing engines are one error and leave nothing
running."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from generators import opensm
from generators.families import build_platform
from generators.opensm import OpenSMError
from generators.opensm import fabric_of
from generators.opensm import opensm_platform
from generators.opensm import run_opensm
from generators.opensm import switch_path
from generators.opensm_cli import compare
from generators.writer import write_platform

REPO = Path(__file__).resolve().parent.parent


def ours_running() -> list[str]:
    """ibsim or OpenSM processes started from one of generators.opensm's scratch directories, and the fake sysfs
    trees (sys-PID) libumad2sim leaves in its working directory if that is not the scratch one."""
    done = subprocess.run(["pgrep", "-af", "topolab-opensm-"], capture_output=True, text=True)
    leftovers = [str(path) for path in Path.cwd().glob("sys-[0-9]*")]
    return [line for line in done.stdout.splitlines() if "pgrep" not in line] + leftovers


def routed(family: str, params: dict[str, object], engine: str) -> dict[str, object]:
    platform = build_platform(family, params)
    fabric = fabric_of(platform)
    return compare(platform, fabric, run_opensm(fabric, engine))


def test_ftree_routes_a_full_three_level_fat_tree_as_d_mod_k_does() -> None:
    """Zahavi's D-mod-K is what OpenSM's ftree engine implements: the same switches for all 16,256 pairs of the
    128-server radix-8 tree, and no shift permutation puts two flows on a cable under either."""
    result = routed("fattree", {"radix": 8, "levels": 3}, "ftree")
    assert (result["hosts"], result["switches"], result["pairs"]) == (128, 80, 128 * 127)
    assert result["pairs_as_rule"] == result["pairs"]
    assert result["worst_shift_flows"] == result["rule_worst_shift_flows"] == 1


def test_the_rules_routes_are_read_through_nbl_limiters_and_torus_nodes() -> None:
    """A host's NBL limiter is no hop of the family's route, and a torus node stands for its own switch: ftree still
    equals D-mod-K on every pair with NBL, and dor on a torus agrees with itself with or without NBL."""
    limited = routed("fattree", {"radix": 4, "levels": 3, "nbl": "0.5"}, "ftree")
    assert limited["pairs_as_rule"] == limited["pairs"] == 240
    torus = [routed("torus", {"dims": "4x4", **nbl}, "dor")["pairs_as_rule"] for nbl in ({}, {"nbl": "0.5"})]
    assert torus[0] == torus[1] > 0


def test_minhop_balances_less_than_ftree_on_the_same_tree() -> None:
    """The comparison compares something: minhop routes some pairs elsewhere and some shift puts 2 flows on a
    cable of the radix-4 tree."""
    result = routed("fattree", {"radix": 4, "levels": 3}, "minhop")
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


@pytest.mark.parametrize(
    ("timeout", "message"), [(0.005, "ibsim did not start"), (0.8, r"OpenSM \(dfsssp\) did not finish within")]
)
def test_a_time_limit_stops_both_and_leaves_nothing(timeout: float, message: str) -> None:
    """dfsssp takes about 3.8 s on the 1024-server tree (measured 2026-12-03; 1.3 s on the 432-server tree, which a
    quiet machine routed within the 0.8 s limit): stopped while ibsim starts, then while OpenSM routes."""
    fabric = fabric_of(build_platform("fattree", {"radix": 16, "levels": 3}))
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
    assert list(REPO.glob("sys-[0-9]*")) == []
    bad = subprocess.run([*command, "fttree"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 2 and bad.stdout == "" and "invalid choice: 'fttree'" in bad.stderr
    torus = [sys.executable, "-m", "generators.opensm", "torus", "--dims", "4x4", "--engine", "updn"]
    failed = subprocess.run(torus, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert failed.returncode == 2 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and "updn engine did not route" in failed.stderr


def shift_times(platform: Path, bin_dir: Path) -> list[float]:
    command = [str(REPO / "scripts" / "smpirun-on"), str(platform), "--", str(bin_dir / "shift")]
    done = subprocess.run(
        [*command, "-S", "1,3,5,8", "-R", "1", "-s", "1M", "-i", "1", "-w", "0"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line)["time_s_max"] for line in done.stdout.splitlines()]


def test_a_platform_of_ftree_tables_runs_as_the_d_mod_k_family_bit_for_bit(tmp_path: Path, bin_dir: Path) -> None:
    """The XML platform of OpenSM's ftree routes and topolab's compiled D-mod-K zone give the same simulated times
    to the last bit (same routes, same cables); minhop's tables, with 2 flows on a cable in some shifts, are slower."""
    command = [sys.executable, "-m", "generators.opensm", "fattree", "--radix", "4", "--levels", "3", "--engine"]
    for engine in ("ftree", "minhop"):
        done = subprocess.run([*command, engine, "-o", str(tmp_path / f"{engine}.xml")], cwd=REPO, timeout=120)
        assert done.returncode == 0
    generated = subprocess.run(
        [sys.executable, "-m", "generators", "fattree", "--radix", "4", "--levels", "3", "-o", str(tmp_path / "f.so")],
        cwd=REPO, capture_output=True, timeout=120,
    )  # fmt: skip
    assert generated.returncode == 0
    d_mod_k, ftree = shift_times(tmp_path / "f.so", bin_dir), shift_times(tmp_path / "ftree.xml", bin_dir)
    assert len(ftree) == 4 and ftree == d_mod_k
    assert all(m > 1.3 * f for m, f in zip(shift_times(tmp_path / "minhop.xml", bin_dir), ftree, strict=True))


@pytest.mark.parametrize(
    ("family", "params", "engine", "hosts"),
    [
        ("hyperx", {"dims": "3x2", "hosts": 2, "nbl": "0.5"}, "lash", 12),
        ("torus", {"dims": "3x3", "nbl": "0.5"}, "dor", 9),
    ],
)
def test_simgrid_routes_each_pair_through_the_tables(
    tmp_path: Path, load_platform, family: str, params: dict[str, object], engine: str, hosts: int
) -> None:
    """Every route SimGrid loads from the written platform is the links of the tables' path, framed by the limiters
    of a platform with NBL: on a HyperX, and on a torus whose nodes' switches are the nodes themselves."""
    platform = build_platform(family, params)
    fabric = fabric_of(platform)
    tables = run_opensm(fabric, engine)
    write_platform(opensm_platform(platform, fabric, tables, compiled=False), tmp_path / "p.xml")
    routes = load_platform(tmp_path / "p.xml", "--all-routes")["routes"]
    named = {link.ends: name for name, link in platform.links.items()}
    node = {f"{h}-sw": h for h in fabric.hosts}  # a torus node's switch is the node
    assert len(routes) == hosts * (hosts - 1)
    for route in routes:
        src, dst = route["src"], route["dst"]
        nodes = [src, *(node.get(s, s) for s in switch_path(fabric, tables, src, dst)), dst]
        nodes = [n for i, n in enumerate(nodes) if i == 0 or nodes[i - 1] != n]
        hops = [named[hop] for hop in itertools.pairwise(nodes)]
        assert route["links"] == [f"{src}_nbl", *hops, f"{dst}_nbl"]


def test_an_xml_platform_past_512_hosts_is_refused_before_opensm_runs(tmp_path: Path) -> None:
    """1024 hosts: ``-o p.xml`` (a route per pair) is refused, with what to write instead, and nothing is written."""
    command = [sys.executable, "-m", "generators.opensm", "fattree", "--radix", "16", "--levels", "3"]
    done = subprocess.run(
        [*command, "--engine", "ftree", "-o", str(tmp_path / "p.xml")], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 2 and "1024 hosts: an XML platform of OpenSM's routes" in done.stderr
    assert "write FILE.so" in done.stderr and done.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
