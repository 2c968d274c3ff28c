"""Pictures of platforms (generators.drawing): layouts drawn from the model, structure and heatmaps."""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from generators.analysis import link_loads
from generators.drawing import REPRESENTATIVE
from generators.drawing import Layout
from generators.drawing import draw_platform
from generators.drawing import layout
from generators.errors import TopologyError
from generators.families import FAMILIES
from generators.families import build_platform
from generators.model import CABLE
from generators.model import Platform
from generators.topologies.torus import coordinates
from tests.conftest import REPO

PNG = b"\x89PNG\r\n\x1a\n"

# Small platforms with every kind of link the families write (limiters, fabrics, FATPIPE ports, wrap-arounds of
# every ring length, partial MLFM builds), beside each registered family's smallest example (SMALL): a family added
# to generators/ is drawn and checked here without a line of this file.
LINK_KINDS = {
    "crossbar": ("crossbar", {"hosts": 5, "nbl": "nominal"}),
    "dragonfly": ("dragonfly", {"groups": 5, "routers": 3, "hosts": 2, "global_ports": 2, "nbl": 1}),
    "enterprise": ("enterprise", {"modules": 3, "ports": 4, "nbl": 1, "module_fabric": "1GBps", "backplane": "2GBps"}),
    "fattree": ("fattree", {"radix": 4, "leaves": 3, "nbl": 1}),
    "fattree-3": ("fattree", {"radix": 6, "levels": 3, "leaves": 6}),
    "fattree-tapered": ("fattree", {"radix": 6, "levels": 3, "leaves": 6, "servers_per_leaf": 4}),
    "hyperx": ("hyperx", {"dims": "3x2", "hosts": 2, "links": 2, "nbl": 1}),
    "slimfly": ("slimfly", {"q": 3, "hosts": 1, "nbl": 1}),
    "mesh": ("mesh", {"width": 4, "height": 3}),
    "torus-3d": ("torus", {"dims": "4x3x2", "nbl": 1}),
    "torus-rings": ("torus", {"dims": "4x4x4"}),
    "torus-5d": ("torus", {"dims": "3x2x3x2x2"}),
    "torus-mixed": ("torus", {"dims": "5x4x3", "wrap": "1,0,1"}),
    "tofu": ("tofu", {"xyz": "3x2x1", "zone": "auto"}),
    "mlfm": ("mlfm", {"d": 3, "servers_per_leaf": "3,3,2", "nbl": 1}),
    "threequads": ("threequads", {"q": 3, "switch_fabric": "1GBps", "nbl": 1}),
}
SMALL = {**{f"{name}.smallest": (name, dict(family.smallest)) for name, family in FAMILIES.items()}, **LINK_KINDS}


@pytest.fixture(scope="module", params=sorted(SMALL))
def small(request: pytest.FixtureRequest) -> tuple[Platform, Layout]:
    family, params = SMALL[request.param]
    platform = build_platform(family, params)
    return platform, layout(platform)


def cables_of(platform: Platform) -> dict[frozenset[str], set[str]]:
    """The model's cables, read independently: {a, b} -> its directed links."""
    cables: dict[frozenset[str], set[str]] = {}
    for name, link in platform.links.items():
        if link.kind == CABLE:
            cables.setdefault(frozenset(link.ends), set()).add(name)
    return cables


def inside(box: tuple[float, float, float, float], point: tuple[float, float]) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def disjoint(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[2] < b[0] or b[2] < a[0] or a[3] < b[1] or b[3] < a[1]


def test_every_registered_family_has_a_layout_and_a_representative_size() -> None:
    assert (
        set(FAMILIES)
        == set(REPRESENTATIVE)
        == {family for family, _ in SMALL.values()}
        >= {family for family, _ in LINK_KINDS.values()}
    )
    for name in FAMILIES:
        lay = layout(build_platform(name, REPRESENTATIVE[name]))
        assert lay.groups or name in ("crossbar", "hyperx", "mesh")  # a 2-D HyperX is one plane


def test_layout_covers_every_node_finitely_and_distinctly(small: tuple[Platform, Layout]) -> None:
    platform, lay = small
    endpoints = {node for pair in cables_of(platform) for node in pair}
    assert set(lay.positions) == set(platform.host_names) | set(platform.routers) >= endpoints
    assert set(lay.hosts) == set(platform.host_names) and set(lay.switches) == set(platform.routers)
    points = list(lay.positions.values())
    assert all(math.isfinite(x) and math.isfinite(y) for x, y in points)
    assert len(set(points)) == len(points)
    closest = min(math.dist(p, q) for i, p in enumerate(points) for q in points[i + 1 :])
    assert closest >= 0.99  # markers never overlap: hosts are at least one pitch apart


def test_every_cable_is_exactly_one_edge_and_every_link_is_drawn_once(small: tuple[Platform, Layout]) -> None:
    platform, lay = small
    edges = Counter(frozenset((e.a, e.b)) for e in lay.edges)
    assert max(edges.values()) == 1
    assert {frozenset((e.a, e.b)): set(e.links) for e in lay.edges} == cables_of(platform)
    drawn = [link for e in lay.edges for link in e.links] + [link for ls in lay.node_links.values() for link in ls]
    assert sorted(drawn) == sorted(platform.links)
    for node, links in lay.node_links.items():
        for link in links:
            assert platform.links[link].ends == (node, node) and platform.links[link].kind != CABLE
    for e in lay.edges:  # each drawn path joins its two nodes
        assert len(e.path) >= 2 and e.path[0] == lay.positions[e.a] and e.path[-1] == lay.positions[e.b]


def test_threequads_subnetworks_are_separated_and_quads_boxed() -> None:
    q = 4
    lay = layout(build_platform("threequads", {"q": q}))
    bands = {g.label[3]: g.box for g in lay.groups if g.label.startswith("SW-")}
    assert sorted(bands) == ["X", "Y", "Z"]
    assert all(disjoint(bands[a], bands[b]) for a in "XYZ" for b in "XYZ" if a < b)
    for axis in "xyz":
        switches = [f"sw{axis}-{i}" for i in range(q)]
        assert all(inside(bands[axis.upper()], lay.positions[s]) for s in switches)
        assert not any(inside(bands[axis.upper()], lay.positions[h]) for h in lay.hosts)
    quads = {int(g.label.split("=")[1]): g.box for g in lay.groups if g.label.startswith("quad")}
    for h in lay.hosts:
        z = int(h.removeprefix("host-")) // (q * q)
        assert [k for k, box in quads.items() if inside(box, lay.positions[h])] == [z]
    for i, box in quads.items():  # SW-Z_i right above its quad
        x, y = lay.positions[f"swz-{i}"]
        assert box[0] < x < box[2] and y > box[3]
    # every cable is coloured by its subnetwork; SW-Y(j) reaches exactly the nodes with y = j
    by_color = Counter(e.color for e in lay.edges)
    assert sorted(by_color.values()) == [q**3] * 3
    assert {e.a if e.b == "swy-1" else e.b for e in lay.edges if "swy-1" in (e.a, e.b)} == {
        f"host-{(z * q + 1) * q + x}" for z in range(q) for x in range(q)
    }


def test_mlfm_spines_above_leaves_above_servers_in_layer_boxes() -> None:
    platform = build_platform("mlfm", {"d": 3, "servers_per_leaf": "3,3,2"})
    lay = layout(platform)
    y = {
        kind: [lay.positions[n][1] for n in lay.positions if n.startswith(kind)] for kind in ("spine", "leaf", "server")
    }
    assert min(y["spine"]) > max(y["leaf"]) > max(y["server"])
    layers = {int(g.label.split()[1]): g.box for g in lay.groups if g.label.startswith("layer")}
    assert sorted(layers) == [0, 1, 2]
    assert all(disjoint(layers[a], layers[b]) for a in layers for b in layers if a < b)
    for node, point in lay.positions.items():
        if node.startswith(("server", "leaf")):
            assert [i for i, box in layers.items() if inside(box, point)] == [int(node.split("-")[1])]
    for h in lay.hosts:  # a server right under its leaf
        i, j, _ = h.removeprefix("server-").split("-")
        assert abs(lay.positions[h][0] - lay.positions[f"leaf-{i}-{j}"][0]) <= 1.5


def test_enterprise_modules_boxed_under_the_backplane() -> None:
    lay = layout(build_platform("enterprise", {"modules": 4, "ports": 16}))
    modules = {int(g.label.split()[1].rstrip(":")): g.box for g in lay.groups if g.label.startswith("module")}
    assert sorted(modules) == [0, 1, 2, 3]
    for h in lay.hosts:
        m = int(h.removeprefix("host-")) // 16
        assert [k for k, box in modules.items() if inside(box, lay.positions[h])] == [m]
        assert inside(modules[m], lay.positions[f"module-{m}"])
    assert all(lay.positions["backplane"][1] > box[3] for box in modules.values())


def test_fattree_levels() -> None:
    lay = layout(build_platform("fattree", {"radix": 8}))
    y = {
        kind: [lay.positions[n][1] for n in lay.positions if n.startswith(kind)] for kind in ("spine", "leaf", "server")
    }
    assert min(y["spine"]) > max(y["leaf"]) > max(y["server"])
    assert len(set(y["spine"])) == 1 and len(set(y["leaf"])) == 1


def test_mesh_is_a_unit_grid() -> None:
    platform = build_platform("mesh", {"width": 4, "height": 3})
    lay = layout(platform)
    x0, y0 = lay.positions["host-0"]
    for k in range(12):
        x, y = coordinates(k, (4, 3))
        assert lay.positions[f"host-{k}"] == (x0 + x, y0 + y)
    assert len(lay.edges) == 3 * 3 + 4 * 2
    for e in lay.edges:  # neighbours one unit apart, drawn straight
        assert math.dist(lay.positions[e.a], lay.positions[e.b]) == 1.0 and len(e.path) == 2 and e.kind == "cable"


def test_torus_wraps_are_marked_and_blocks_boxed() -> None:
    dims = (4, 4, 4)
    lay = layout(build_platform("torus", {"dims": "4x4x4"}))
    wraps = [e for e in lay.edges if e.kind == "wrap"]
    assert len(wraps) == 3 * 16  # one per ring of 4
    for e in lay.edges:
        ca, cb = (coordinates(int(n.removeprefix("host-")), dims) for n in (e.a, e.b))
        assert (e.kind == "wrap") == (max(abs(a - b) for a, b in zip(ca, cb, strict=True)) > 1)
        assert e.kind == "cable" or len(e.path) > 2  # a wrap is never a straight line over the ring
    blocks = [g.box for g in lay.groups]
    assert len(blocks) == 4 and all(disjoint(a, b) for i, a in enumerate(blocks) for b in blocks[i + 1 :])
    for h in lay.hosts:  # the block of d2 = c holds exactly the nodes with d2 = c
        c = coordinates(int(h.removeprefix("host-")), dims)[2]
        assert [i for i, box in enumerate(blocks) if inside(box, lay.positions[h])] == [c]


def test_bgq_five_d_and_tofu_units_are_boxed() -> None:
    lay = layout(build_platform("torus", {"dims": "4x4x4x2x2"}))
    assert len(lay.groups) == 16 and all(len([h for h in lay.hosts if inside(g.box, lay.positions[h])]) == 16
                                         for g in lay.groups)  # fmt: skip
    tofu = layout(build_platform("tofu", {"xyz": "2x2x2", "zone": "auto"}))
    units = [g for g in tofu.groups if g.label.startswith("unit")]
    assert len(units) == 8
    for unit in units:
        members = [h for h in tofu.hosts if inside(unit.box, tofu.positions[h])]
        assert len(members) == 12
        xyz = {coordinates(int(h.removeprefix("host-")), (2, 2, 2, 2, 3, 2))[:3] for h in members}
        assert len(xyz) == 1 and unit.label == "unit (" + ",".join(map(str, xyz.pop())) + ")"
    assert len([e for e in tofu.edges if e.kind == "wrap"]) == 8 * 4  # the B ring of 3 in every (unit, A, C)


def flows(platform: Platform) -> list[tuple[str, str]]:
    hosts = platform.host_names
    return [(hosts[i], hosts[(i + len(hosts) // 2) % len(hosts)]) for i in range(len(hosts))]


@pytest.mark.parametrize(
    "name", ["crossbar", "enterprise", "fattree", "mesh", "torus-5d", "tofu", "mlfm", "threequads"]
)
def test_heatmap_writes_a_png(name: str, tmp_path: Path) -> None:
    """One platform per family with loads (the structure pictures: test_module_draws_every_family)."""
    platform = build_platform(*SMALL[name])
    draw_platform(platform, tmp_path / "heat.png", link_loads=link_loads(platform, flows(platform)), load_label="flows")
    data = (tmp_path / "heat.png").read_bytes()
    assert data.startswith(PNG) and data.endswith(b"IEND\xaeB`\x82")
    assert [p.name for p in tmp_path.iterdir()] == ["heat.png"]  # no temporary file left


def test_idle_heatmap(tmp_path: Path) -> None:
    draw_platform(build_platform("crossbar", {"hosts": 3}), tmp_path / "idle.png", link_loads={}, title="nothing")
    assert (tmp_path / "idle.png").read_bytes().startswith(PNG)


def test_bad_loads_and_paths_write_nothing(tmp_path: Path) -> None:
    platform = build_platform("crossbar", {"hosts": 3})
    target = tmp_path / "x.png"
    with pytest.raises(TopologyError, match="'host-0_to_spine'"):
        draw_platform(platform, target, link_loads={"host-0_to_xbar": 1, "host-0_to_spine": 2, "zzz": 3})
    with pytest.raises(TopologyError, match="finite number >= 0"):
        draw_platform(platform, target, link_loads={"host-0_to_xbar": -1})
    with pytest.raises(TopologyError, match=r"\.png"):
        draw_platform(platform, tmp_path / "x.svg")
    assert list(tmp_path.iterdir()) == []
    draw_platform(platform, target)
    before = target.read_bytes()
    with pytest.raises(TopologyError):
        draw_platform(platform, target, link_loads={"nope": 1})
    assert target.read_bytes() == before and list(tmp_path.iterdir()) == [target]


def test_a_family_without_a_layout_of_its_own_gets_the_ring() -> None:
    """A new family is drawn before it has its own layout: routers on a circle, each host round its router."""
    alien = build_platform("dragonfly", {"groups": 3, "routers": 2, "hosts": 2, "global_ports": 1})
    alien.family = "hypercube"
    lay = layout(alien)
    assert set(lay.positions) == {*alien.host_names, *alien.routers}
    radius = {round(math.dist((0, 0), lay.positions[r]), 6) for r in alien.routers}
    assert len(radius) == 1  # on one circle
    assert len(lay.edges) == len(alien.cables(alien.links)) // 2  # each cable one edge


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=REPO)


def test_cli_picture(tmp_path: Path) -> None:
    done = run(
        "-m", "generators", "mlfm", "--d", "2", "-o", str(tmp_path / "m.xml"), "--picture", str(tmp_path / "m.png")
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m.png").read_bytes().startswith(PNG) and (tmp_path / "m.xml").is_file()
    bad = run("-m", "generators", "crossbar", "--hosts", "2", "-o", str(tmp_path / "c.xml"), "--picture",
              str(tmp_path / "c.jpg"))  # fmt: skip
    assert bad.returncode == 2 and "error: a picture must be a .png file" in bad.stderr
    assert not (tmp_path / "c.xml").exists() and not (tmp_path / "c.jpg").exists()


@pytest.mark.slow
def test_module_draws_every_family(tmp_path: Path) -> None:
    done = run("-m", "generators.drawing", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(tmp_path / f"{name}.png") for name in FAMILIES]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{name}.png" for name in FAMILIES)
    assert all(p.read_bytes().startswith(PNG) for p in tmp_path.iterdir())
    bad = run("-m", "generators.drawing", str(tmp_path / "more"), "--family", "mesh", "--family", "hypercube")
    assert bad.returncode == 2 and bad.stderr.startswith("generators.drawing: error: unknown topology family")
    assert len(bad.stderr.splitlines()) == 1 and not (tmp_path / "more").exists()
