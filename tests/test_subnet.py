"""Every family routed by OpenSM on request (``opensm = ENGINE``, ``generators.subnet``), whole or around failed
cables and switches: the routes are the tables', a run on them is the run on the same routes, the faults a seed
draws are the same every time, the file says how it was routed, and what cannot be routed is one error before
OpenSM runs."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path

import pytest

from generators import opensm
from generators.errors import TopologyError
from generators.families import build_platform
from generators.families import check_file_params
from generators.writer import write_platform

REPO = Path(__file__).resolve().parent.parent
TREE = {"radix": 4, "levels": 3}  # 16 servers, 20 switches, 32 cables between switches


def routes(platform) -> dict[tuple[str, str], list[str]]:
    names = [host.name for host in platform.hosts]
    return {(a, b): platform.route(a, b) for a, b in itertools.permutations(names, 2)}


def test_ftree_as_a_family_parameter_routes_every_pair_as_d_mod_k() -> None:
    """OpenSM's ftree on a full fat tree is D-mod-K (Zahavi's rule, topolab's own): every one of the 240 routes."""
    routed = build_platform("fattree", {**TREE, "opensm": "ftree"})
    assert routed.params["opensm"] == "ftree" and routed.compiled.library == "topolab_tables_zone"
    assert routes(routed) == routes(build_platform("fattree", TREE))


def test_drawn_failures_are_the_seeds_and_the_routes_avoid_them() -> None:
    failed = {**TREE, "opensm": "minhop", "fail_cables": "4", "fail_seed": 3}
    first, again = routes(build_platform("fattree", failed)), routes(build_platform("fattree", failed))
    other = routes(build_platform("fattree", {**failed, "fail_seed": 4}))
    whole = routes(build_platform("fattree", {**TREE, "opensm": "minhop"}))
    assert first == again != other and first != whole
    used = {link for route in first.values() for link in route}
    unused = {link for route in whole.values() for link in route} - used
    assert len(unused) >= 4  # at least the failed cables' directions that minhop used on the whole tree


def test_the_file_records_how_it_was_routed_and_default_files_do_not(tmp_path: Path) -> None:
    write_platform(build_platform("fattree", {**TREE, "opensm": "dfsssp", "fail_cables": "1"}), tmp_path / "r.so")
    write_platform(build_platform("crossbar", {"hosts": 4}), tmp_path / "c.xml")
    routed = (tmp_path / "r.params").read_text()
    assert '"opensm": "dfsssp"' in routed and '"fail_cables": "1"' in routed and "\nfwd " in routed
    for name in ("opensm", "fail_cables", "fail_switches", "fail_seed"):
        assert name not in (tmp_path / "c.xml").read_text()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"fail_cables": "2"}, "fattree: fail_cables needs opensm (an OpenSM routing engine)"),
        ({"fail_switches": "spine-0"}, "fattree: fail_switches needs opensm"),
        ({"opensm": "ftree", "routing": "adaptive"}, "fattree: routing = adaptive and opensm = ftree: give one"),
        ({"opensm": "ftree", "spread": "packet"}, "fattree: spread = packet and opensm = ftree: give one"),
        ({"opensm": "minhops"}, "opensm must be one of none, minhop, updn"),
        ({"opensm": "minhop", "fail_cables": "a b"}, "fail_cables must be names (a,b,...), a count N or a share P%"),
        ({"radix": 34, "opensm": "ftree"}, "fattree with opensm: 9826 hosts, and a platform of OpenSM's routes"),
    ],
)
def test_what_cannot_be_routed_is_one_error_before_opensm_runs(
    monkeypatch: pytest.MonkeyPatch, params: dict[str, object], message: str
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("OpenSM ran")

    monkeypatch.setattr(opensm, "run_opensm", never)
    with pytest.raises(TopologyError, match=re.escape(message)):
        check_file_params("fattree", {**TREE, **params})
        build_platform("fattree", {**TREE, **params})


def test_an_engine_that_refuses_the_degraded_fabric_says_why() -> None:
    with pytest.raises(TopologyError, match="OpenSM's ftree engine did not route this fabric"):
        build_platform("fattree", {**TREE, "opensm": "ftree", "fail_cables": "10%", "fail_seed": 1})


def smpirun_on(bin_dir: Path, *params: str) -> list[float]:
    command = [str(REPO / "scripts" / "smpirun-on"), "fattree", "--radix", "4", "--levels", "3", *params]
    done = subprocess.run(
        [*command, "--", str(bin_dir / "shift"), "-S", "1,3,5,8", "-R", "1", "-s", "1M", "-i", "1", "-w", "0"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line)["time_s_max"] for line in done.stdout.splitlines()]


def test_smpirun_on_a_family_routed_by_opensm_runs_on_its_tables(bin_dir: Path) -> None:
    """``--opensm ftree``: the same simulated times as the family's D-mod-K zone to the last bit; minhop's tables put
    two flows on a cable in these shifts (ranks relabelled at random), and the shifts take longer."""
    d_mod_k, ftree = smpirun_on(bin_dir), smpirun_on(bin_dir, "--opensm", "ftree")
    assert len(ftree) == 4 and ftree == d_mod_k
    assert all(m > 1.3 * f for m, f in zip(smpirun_on(bin_dir, "--opensm", "minhop"), ftree, strict=True))
