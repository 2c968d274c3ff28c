"""The compiled zones (simgrid_cpp/*_zone.cpp) in SimGrid, each property written once for every family that has one:
the loader builds the model's hosts and links and routes every pair by its rule; a machine of thousands of hosts
loads with the model's routes; a bad line in the zone's parameter file is one error line, exit status 2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import NamedTuple

import pytest

from generators import build_platform
from generators import write_platform
from tests.conftest import assert_loader_routes_equal_model
from tests.conftest import compiled_zone_error
from tests.conftest import route_args
from tests.conftest import scattered_pairs
from tests.conftest import simgrid_link_count

pytestmark = pytest.mark.simgrid

BALANCED = {"groups": 9, "routers": 4, "hosts": 2, "global_ports": 2}  # a = 2p = 2h, g = ah + 1 (Kim et al.)
TESTBED = {"d": 3, "servers_per_leaf": (3, 3, 2)}  # the MLFM paper's 32-server testbed (Sect. 3)


def _id(family: str, params: dict[str, Any]) -> str:
    return family + "-" + "-".join(str(value) for value in params.values())


# fmt: off
ROUTED = [  # (family, params): small compiled zones, every option of the zone's rule and of its links
    ("dragonfly", BALANCED),
    ("dragonfly", {**BALANCED, "routing": "valiant", "arrangement": "relative", "nbl": 1, "global_lat": "1us"}),
    ("dragonfly", {"groups": 6, "routers": 4, "hosts": 1, "global_ports": 3, "links_per_pair": 2,
                   "routing": "valiant"}),
    ("dragonfly", {"groups": 4, "routers": 4, "hosts": 2, "global_ports": 3, "links_per_pair": 3, "shm_bw": "10GBps"}),
    ("dragonfly", {"groups": 1, "routers": 3, "hosts": 2, "global_ports": 1}),
    ("fattree", {"radix": 4, "levels": 3}),
    ("fattree", {"radix": 6, "levels": 3, "leaves": 6, "nbl": 1}),
    ("fattree", {"radix": 4, "levels": 4}),
    ("fattree", {"radix": 4, "levels": 3, "shm_bw": "10GBps"}),
    ("hyperx", {"dims": "3x3", "hosts": 2}),
    ("hyperx", {"dims": "4x3", "hosts": 2, "links": 2, "link_lat": "1us"}),
    ("hyperx", {"dims": "3x1x2", "hosts": 2, "links": 2, "nbl": 1}),
    ("hyperx", {"dims": "1x3", "hosts": 2}),
    ("hyperx", {"dims": "2x3", "hosts": 2, "links": 3, "shm_bw": "10GBps", "shm_lat": "500ns"}),
    ("hyperx", {"dims": "5", "hosts": 3, "links": 2, "nbl": "nominal", "link_bw": "1GBps"}),
    ("hyperx", {"dims": "1", "hosts": 3}),
    ("slimfly", {"q": 3}),
    ("slimfly", {"q": 3, "hosts": 1, "nbl": 1, "shm_bw": "10GBps"}),
    ("slimfly", {"q": 4, "hosts": 1, "link_lat": "1us"}),
]
# fmt: on


@pytest.mark.parametrize(("family", "params"), ROUTED, ids=[_id(*case) for case in ROUTED])
def test_loader_routes_equal_model(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], family: str, params: dict[str, Any]
) -> None:
    """Every ordered pair of hosts (each host to itself included) over the model's links, in order, at its latency."""
    model = build_platform(family, params)
    assert model.compiled is not None
    assert_loader_routes_equal_model(load_platform, model, tmp_path / "p.so")


class Large(NamedTuple):
    """A machine of thousands of hosts: the routes of every ``stride``-th host to one far from it (and, every 331st
    host, to the host ``next_layer`` places on: 0 for none) are the model's."""

    family: str
    params: dict[str, Any]
    hosts: int
    stride: int
    next_layer: int = 0


FRONTIER = {"groups": 74, "routers": 32, "hosts": 16, "global_ports": 16, "links_per_pair": 4, "routing": "valiant"}
LARGE = [
    Large("dragonfly", FRONTIER, 37888, 997),  # Frontier-shaped: 74 groups of 32 routers of 16 hosts, Valiant
    Large("fattree", {"radix": 36, "levels": 3}, 11664, 331),  # three levels of 36-port switches
    Large("hyperx", {"dims": "7x7x7", "hosts": 18}, 6174, 61),  # 7 x 7 x 7 switches of 36 ports, 18 hosts each
    # the 6156 servers of 36-port switches, same-column pairs and pairs of the next layer included
    Large("mlfm", {"d": 18, "zone": "compiled", "spine_choice": "destination"}, 6156, 37, next_layer=19 * 18),
    Large("slimfly", {"q": 16}, 6144, 37),  # q = 16: 512 routers of radix 24, 12 hosts each
]


@pytest.mark.parametrize("large", LARGE, ids=[f"{large.family}-{large.hosts}" for large in LARGE])
def test_thousands_of_hosts_load_with_the_models_routes(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], large: Large
) -> None:
    model = build_platform(large.family, large.params)
    assert model.compiled is not None
    write_platform(model, tmp_path / "p.so")
    names = model.host_names
    pairs = scattered_pairs(names, large.stride)
    if large.next_layer:
        pairs += [(names[i], names[i + large.next_layer]) for i in range(0, len(names) - large.next_layer, 331)]
    loaded = load_platform(tmp_path / "p.so", *route_args(pairs))
    assert (loaded["hosts"], loaded["links"]) == (large.hosts, simgrid_link_count(model))
    assert len(loaded["routes"]) == len(pairs) > 30
    for route in loaded["routes"]:
        assert route["links"] == model.route(route["src"], route["dst"])
        assert route["latency"] == pytest.approx(model.route_latency(route["src"], route["dst"]), rel=1e-12)


SMALL = {  # family: (the zone's name in its errors, a small platform whose parameter file is spoiled below)
    "dragonfly": ("dragonfly", BALANCED),
    "fattree": ("fattree", {"radix": 4, "levels": 3}),
    "hyperx": ("hyperx", {"dims": "3x3", "hosts": 2}),
    "mlfm": ("mlfm", {**TESTBED, "zone": "compiled"}),
    "slimfly": ("router graph", {"q": 3}),
    "torus": ("torus", {"dims": "4", "zone": "compiled"}),
}

BAD_LINES = [  # (family, line added to the parameter file, what the zone's one error line says)
    ("dragonfly", "routing adaptive\n", "parameter 'routing' must be one of its choices, got 'adaptive'"),
    ("dragonfly", "groups 0\n", "parameter 'groups' must be one integer >= 1"),
    ("dragonfly", "global_ports 1\n", "the global cables do not fit the global ports"),
    ("dragonfly", "colour red\n", "unknown parameter 'colour'"),
    ("hyperx", "colour red\n", "unknown parameter 'colour'"),
    ("hyperx", "links 0\n", "parameter 'links' must be one integer >= 1"),
    ("hyperx", "hosts 2 3\n", "parameter 'hosts' must be one integer >= 1"),
    ("hyperx", "dims 3 0\n", "every dimension must be >= 1"),
    ("hyperx", "dims " + " ".join(["1"] * 33) + "\n", "parameter 'dims' must give 1 to 32 dimensions"),
    ("hyperx", "dims 3 x\n", "parameter 'dims' must be a list of integers"),
    ("hyperx", "dims 1048576 1048576 1048576\n", "the machine is too large"),
    ("hyperx", "dims 1 1\nlinks 2\n", "need two switches to join, and dims is a single switch"),
    ("mlfm", "colour red\n", "unknown parameter 'colour'"),
    ("mlfm", "spine_choice random\n", "parameter 'spine_choice' must be one of its choices, got 'random'"),
    ("mlfm", "d 0\n", "parameter 'd' must be one integer >= 1"),
    ("mlfm", "d 65536\n", "parameter 'd' must be at most 65535"),
    ("mlfm", "layers 4\n", "parameter 'layers' must be at most d = 3"),
    ("mlfm", "servers_per_leaf 3 3\n", "'servers_per_leaf' needs one value or one per layer (3)"),
    ("mlfm", "servers_per_leaf 3 4 2\n", "every 'servers_per_leaf' value must be from 1 to d = 3"),
    ("mlfm", "servers_per_leaf 3 x 2\n", "parameter 'servers_per_leaf' must be a list of integers"),
    ("mlfm", "spine_bw 0\n", "parameter 'spine_bw' must be a positive number"),
]
BAD_NODE_LINES = [  # the node's keys (simgrid_cpp/zone_common.hpp), which every compiled zone reads
    ("shm_lat 1e-06\n", "gives shm_lat without shm_bw"),
    ("cores 0\n", "'cores' must be an integer from 1 to 2147483647"),
    ("cores 2147483648\n", "'cores' must be an integer from 1 to 2147483647"),
    ("cores 4.5\n", "'cores' must be an integer from 1 to 2147483647"),
    ("shm_bw -1\n", "'shm_bw' must be a positive number"),
    ("shm_bw 1e9\nshm_lat -1\n", "'shm_lat' must be a non-negative number"),
    ("shm_speed 1\n", "unknown parameter 'shm_speed'"),
]
BAD_LINES += [(family, line, message) for family in SMALL for line, message in BAD_NODE_LINES]


@pytest.mark.parametrize(
    ("family", "line", "message"), BAD_LINES, ids=[f"{family}-{line.strip()[:20]}" for family, line, _ in BAD_LINES]
)
def test_a_bad_parameter_line_is_one_error(tmp_path: Path, bin_dir: Path, family: str, line: str, message: str) -> None:
    zone, params = SMALL[family]
    write_platform(build_platform(family, params), tmp_path / "p.so")
    with (tmp_path / "p.params").open("a") as file:
        file.write(line)
    assert message in compiled_zone_error(bin_dir, tmp_path / "p.so", zone)
