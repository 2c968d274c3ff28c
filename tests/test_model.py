"""The platform model's links know what they are: every family gives each link its kind and ends, names it by the
one convention the model declares (the writer writes the names; nothing else reads meaning from them), and the
model refuses links that contradict themselves or the platform."""

from __future__ import annotations

from typing import Any

import pytest

from generators import TopologyError
from generators import build_platform
from generators.model import CABLE
from generators.model import LINK_KINDS
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.model import node_link
from generators.model import node_link_name
from tests.test_drawing import SMALL

# Every kind of link in one place: limiters (crossbar, fat tree, MLFM, Three Quads, tori), fabrics (enterprise,
# Three Quads), FATPIPE ports (graph-written tori), intra-node paths (a node with shm_bw).
PLATFORMS = {**SMALL, "torus-shm": ("torus", {"dims": "3x2", "cores": 4, "shm_bw": "10GBps"})}


@pytest.fixture(scope="module", params=sorted(PLATFORMS))
def platform(request: pytest.FixtureRequest) -> Platform:
    family, params = PLATFORMS[request.param]
    return build_platform(family, params)


def test_every_link_is_named_by_its_kind_and_ends(platform: Platform) -> None:
    nodes = set(platform.host_names) | set(platform.routers)
    for name, link in platform.links.items():
        a, b = link.ends
        assert link.name == name and {a, b} <= nodes
        lane = name.partition("#")[2]  # one of parallel cables (generators.model.duplex_link)
        cable = f"{a}_to_{b}" + (f"#{lane}" if lane.isdigit() else "")
        assert name == (cable if link.kind == CABLE else node_link_name(a, link.kind))


def test_every_kind_is_written_by_some_family() -> None:
    kinds = {
        link.kind for family, params in PLATFORMS.values() for link in build_platform(family, params).links.values()
    }
    assert kinds == set(LINK_KINDS)


def test_cables_keeps_the_cables_of_a_per_link_mapping() -> None:
    p = build_platform("crossbar", {"hosts": 3, "nbl": 1})
    loads = {name: 1 for name in p.route("host-0", "host-2")} | {"__loopback__": 5}
    assert list(p.cables(loads)) == ["host-0_to_xbar", "xbar_to_host-2"]
    assert [p.link_kind(name) for name in loads] == ["limiter", CABLE, CABLE, "limiter", None]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Link("a_to_b", 1.0, 0.0, kind="wormhole", ends=("a", "b")), r"kind must be one of"),
        (lambda: Link("a_to_a", 1.0, 0.0, kind=CABLE, ends=("a", "a")), r"a cable joins two nodes"),
        (lambda: Link("a_nbl", 1.0, 0.0, kind="limiter", ends=("a", "b")), r"any other link is one node's"),
        (lambda: node_link("a", "wormhole", 1.0), r"wormhole"),
    ],
)
def test_a_link_that_contradicts_itself_is_refused(make: Any, message: str) -> None:
    with pytest.raises((TopologyError, KeyError), match=message):
        make()


def test_a_link_whose_ends_are_not_the_platforms_is_refused() -> None:
    stray = node_link("elsewhere", "limiter", 1.0)
    with pytest.raises(TopologyError, match=r"links whose ends are not its hosts or routers: \['elsewhere_nbl'\]"):
        Platform("p", [Host("host-0")], [], {stray.name: stray}, lambda s, d: [])
