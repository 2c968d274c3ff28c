"""The compiled zone of OpenSM's forwarding tables (``simgrid_cpp/tables_zone.cpp``, ``generators.opensm.tables_zone``):
SimGrid loads from it every route, links and latency, of the XML platform of the same tables; a family routed by
OpenSM gets it (1024 servers too), and routes as the family's own zone where the engine is its rule; a pair cut apart
stops a run with SimGrid's words; a malformed file is one error line."""

from __future__ import annotations

import itertools
import random
import subprocess
from pathlib import Path

import pytest

from generators import opensm
from generators.errors import TopologyError
from generators.families import build_platform
from generators.faults import draw
from generators.opensm import cables_of
from generators.opensm import fabric_of
from generators.opensm import opensm_platform
from generators.opensm import run_opensm
from generators.writer import write_platform
from tests.conftest import Edit
from tests.conftest import apply_edit
from tests.conftest import edit_cases

REPO = Path(__file__).resolve().parent.parent


def routed(family: str, params: dict[str, object], engine: str, cables: str | None = None):
    platform = build_platform(family, params)
    whole = fabric_of(platform)
    faults = draw(cables, None, 0, cables_of(platform), whole.switches, frozenset(whole.hosts))
    fabric = fabric_of(platform, faults)
    tables = run_opensm(fabric, engine)
    return opensm_platform(platform, fabric, tables, compiled=True), opensm_platform(platform, fabric, tables, False)


def all_routes(load_platform, path: Path) -> dict[tuple[str, str], tuple[list[str], float]]:
    report = load_platform(path, "--all-routes")
    return {(r["src"], r["dst"]): (r["links"], r["latency"]) for r in report["routes"]}


@pytest.mark.parametrize(
    ("family", "params", "engine", "pairs"),
    [
        ("fattree", {"radix": 4, "levels": 3}, "minhop", 240),
        ("torus", {"dims": "3x3", "nbl": "0.5", "cores": 2, "shm_bw": "10GBps"}, "dor", 72),
        ("hyperx", {"dims": "3x2", "hosts": 2, "nbl": "0.5"}, "lash", 132),
    ],
)
def test_the_zone_gives_every_route_of_the_xml_platform_of_the_same_tables(
    tmp_path: Path, load_platform, family: str, params: dict[str, object], engine: str, pairs: int
) -> None:
    """Links and latency, pair by pair, on a fat tree, a torus of NBL-limited nodes (a node's own switch is the node)
    and a HyperX; and each route is the model's (the tables' path) too."""
    compiled, xml = routed(family, params, engine)
    assert compiled.compiled is not None and xml.compiled is None
    write_platform(compiled, tmp_path / "z.so")
    write_platform(xml, tmp_path / "x.xml")
    from_zone, from_xml = all_routes(load_platform, tmp_path / "z.so"), all_routes(load_platform, tmp_path / "x.xml")
    assert len(from_zone) == pairs and from_zone == from_xml
    cores = [load_platform(tmp_path / name, "--list-cores")["host_cores"] for name in ("z.so", "x.xml")]
    assert cores[0] == cores[1]  # the node's cores, applied before the tables were read, kept
    assert all(links == compiled.route(a, b) for (a, b), (links, _) in from_zone.items())


def test_the_family_parameter_builds_the_zone_and_ftree_routes_1024_servers_as_d_mod_k(
    tmp_path: Path, load_platform
) -> None:
    """1024 servers, 320 switches: OpenSM's ftree through SimGrid's loader, 400 random pairs, as the family's own
    D-mod-K zone (links and latency)."""
    tree = {"radix": 16, "levels": 3}
    platform = build_platform("fattree", {**tree, "opensm": "ftree"})
    assert platform.compiled is not None and platform.compiled.library == "topolab_tables_zone"
    write_platform(platform, tmp_path / "ftree.so")
    write_platform(build_platform("fattree", tree), tmp_path / "d-mod-k.so")
    names = [host.name for host in platform.hosts]
    pairs = [random.Random(7).sample(names, 2) for _ in range(400)]
    asked = list(itertools.chain.from_iterable(("--route", a, b) for a, b in pairs))
    ftree = load_platform(tmp_path / "ftree.so", *asked)["routes"]
    assert len(ftree) == 400 and ftree == load_platform(tmp_path / "d-mod-k.so", *asked)["routes"]


def test_a_fabric_too_large_for_the_zone_is_refused_before_opensm_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opensm, "run_opensm", lambda *args: pytest.fail("OpenSM ran"))
    with pytest.raises(TopologyError, match=r"fattree with opensm: 9826 hosts, .* at most 8192 hosts"):
        build_platform("fattree", {"radix": 34, "levels": 3, "opensm": "minhop"})


def test_a_run_between_hosts_cut_apart_stops_with_simgrids_words(tmp_path: Path, bin_dir: Path) -> None:
    compiled, _ = routed("fattree", {"radix": 4, "levels": 3}, "minhop", "leaf-0/agg2-0-0,leaf-0/agg2-0-1")
    write_platform(compiled, tmp_path / "cut.so")
    run = subprocess.run(
        [str(REPO / "scripts" / "smpirun-on"), str(tmp_path / "cut.so"), "--", str(bin_dir / "shift"), "-S", "1"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode != 0
    assert "from server-0-1 to server-0-0 but there is no connecting path between these two hosts" in run.stderr


@edit_cases(
    (("fwd 20 ", "fwd 21 "), "fwd lines must follow the switches in order"),
    (("\nnodes 16 20\n", "\nnodes 16 21\n"), "must give 'nodes H S' and as many host and switch lines"),
    (("\nattach 3 ", "\nattach 4 "), "bad attach 'attach 4"),
    (("fwd 35 71", "fwd 35 999"), "bad entry in the forwarding table of switch 35"),
)
def test_a_malformed_table_is_one_error_line(tmp_path: Path, bin_dir: Path, edit: Edit, message: str):
    compiled, _ = routed("fattree", {"radix": 4, "levels": 3}, "ftree")
    write_platform(compiled, tmp_path / "t.so")
    params = tmp_path / "t.params"
    params.write_text(apply_edit(params.read_text(), edit, 1))
    done = subprocess.run([str(bin_dir / "platform_check"), str(tmp_path / "t.so")], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("topolab tables zone: error: ") and message in done.stderr
    assert done.stderr.count("\n") == 1
