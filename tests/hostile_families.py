"""The hostile-input domains of every family's parameters and their rules (the oracle: valid together, hosts,
compiled zone), one ``family_case`` per family (``FAMILY_CASES``), written from the parameters' help and docs, not
from the code under test (tests/hostile.py has the value domains)."""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from tests.hostile import BANDWIDTH
from tests.hostile import TIME
from tests.hostile import Case
from tests.hostile import Domain
from tests.hostile import Drawn
from tests.hostile import common_params
from tests.hostile import count
from tests.hostile import family_case
from tests.hostile import flags
from tests.hostile import limiter_ok
from tests.hostile import optional
from tests.hostile import quantity
from tests.hostile import tuple_of
from tests.hostile import words


def _torus_rule(values: dict[str, Any]) -> tuple[bool, int, bool]:
    dims, wrap = values["dims"], values["wrap"]
    ok = len(dims) <= 32 and len(wrap) in (1, len(dims)) and limiter_ok(values)
    return ok, math.prod(dims), values["zone"] == "compiled"


def mlfm_layers(values: Mapping[str, Any]) -> tuple[int, ...] | None:
    """Servers per leaf of each layer built, or None when the layers or the counts break the rules."""
    d = values["d"]
    layers = d if values["layers"] is None else values["layers"]
    given = (d,) if values["servers_per_leaf"] is None else values["servers_per_leaf"]
    if not 1 <= layers <= d or len(given) not in (1, layers) or not all(1 <= n <= d for n in given):
        return None
    return given * layers if len(given) == 1 else given


def _mlfm_rule(values: dict[str, Any]) -> tuple[bool, int, bool]:
    per_leaf = mlfm_layers(values)
    ok = per_leaf is not None and limiter_ok(values)
    return ok, (values["d"] + 1) * sum(per_leaf or ()), values["zone"] == "compiled"


def _tofu_rule(values: dict[str, Any]) -> tuple[bool, int, bool]:
    xyz = values["xyz"]
    if values["preset"] == "fx10":
        if xyz is not None and xyz != (4, 4, 4):
            return False, 0, False
        xyz = (4, 4, 4)
    ok = xyz is not None and len(xyz) == 3 and len(values["xyz_wrap"]) in (1, 3) and limiter_ok(values)
    hosts = 12 * math.prod(xyz or ())
    return ok, hosts, values["zone"] == "compiled"


PERMUTATIONS = ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx")
_DIMS = tuple_of(count(1, 4), (1, 3))
SMALL_DIMS = Domain(
    _DIMS.good,
    st.one_of(
        _DIMS.bad,
        st.just(Drawn("x".join(["1"] * 40), True, (1,) * 40)),  # 40 dimensions: more than a torus may have
        st.just(Drawn("x".join(["2"] * 20), False)),  # 20 dimensions of 2: a million nodes, refused by size
    ),
)


def _fattree_rule(values: dict[str, Any]) -> tuple[bool, int, bool]:
    """Whole subtrees of the top: leaves a multiple of (r/2)^(h-2), at most 2 (r/2)^(h-1) (r at two levels); a leaf
    keeps an up port: 1 <= servers_per_leaf < r (r/2 when none)."""
    radix, levels = values["radix"], values["levels"]
    half, servers = radix // 2, values["servers_per_leaf"] or radix // 2
    leaves = values["leaves"] or 2 * half ** (levels - 1)
    ok = 2 <= levels <= 8 and leaves % half ** (levels - 2) == 0 and leaves <= 2 * half ** (levels - 1)
    return ok and servers < radix and limiter_ok(values), leaves * servers, levels > 2


def _hyperx_rule(values: dict[str, Any]) -> tuple[bool, int, bool]:
    """At most 32 dimensions (as a torus); parallel cables (links > 1) need two switches to join."""
    dims = values["dims"]
    ok = len(dims) <= 32 and (values["links"] == 1 or math.prod(dims) > 1) and limiter_ok(values)
    return ok, math.prod(dims) * values["hosts"], True


def _slimfly_rule(values: dict[str, Any]) -> tuple[bool, int, bool]:
    """q a prime power >= 3 with q mod 4 in {0, 1, 3} (3, 4, 5 among 1 .. 5); p hosts per router, by default
    ceil(k'/2), k' = (3q - delta)/2 with q = 4w + delta."""
    q = values["q"]
    radix = (3 * q - {0: 0, 1: 1, 3: -1}.get(q % 4, 0)) // 2
    p = values["hosts"] if values["hosts"] is not None else (radix + 1) // 2
    return limiter_ok(values), 2 * q * q * p, True


def _dragonfly_rule(values: dict[str, Any]) -> tuple[bool, int, bool]:
    """The global cables fit the ports; no two copies join the same routers (the copies to one group sit on
    consecutive routers: at most a of them); Valiant needs an intermediate group."""
    g, a, m = values["groups"], values["routers"], values["links_per_pair"]
    ok = m * (g - 1) <= a * values["global_ports"] and m <= a and limiter_ok(values)
    ok = ok and (values["arrangement"] != "simgrid" or (a >= g and m == 1))  # router k holds the cable to group k
    return ok and (values["routing"] == "minimal" or g >= 3), g * a * values["hosts"], True


FAMILY_CASES: dict[str, Callable[[int], st.SearchStrategy[Case]]] = {
    "crossbar": family_case(
        "crossbar", {"hosts": count(1, 5), **common_params()}, lambda v: (limiter_ok(v), v["hosts"], False)
    ),
    "dragonfly": family_case(
        "dragonfly",
        {
            "groups": count(1, 5),
            "routers": count(1, 4),
            "hosts": count(1, 3),
            "global_ports": count(1, 4),
            "links_per_pair": count(1, 3),
            "arrangement": words("absolute", "relative", "simgrid"),
            "routing": words("minimal", "valiant"),
            "global_lat": quantity(TIME, allow_zero=True),
            **common_params(),
        },
        _dragonfly_rule,
    ),
    "enterprise": family_case(
        "enterprise",
        {
            "modules": count(1, 3),
            "ports": count(1, 3),
            "module_uplink": quantity(BANDWIDTH),
            "backplane": optional(quantity(BANDWIDTH)),
            "module_fabric": optional(quantity(BANDWIDTH)),
            **common_params(),
        },
        lambda v: (limiter_ok(v), v["modules"] * v["ports"], False),
    ),
    "threequads": family_case(
        "threequads",
        {
            "q": count(1, 3, lambda q: q >= 2),
            "switch_fabric": optional(quantity(BANDWIDTH)),
            "subnet_order": words(*PERMUTATIONS),
            **common_params(),
        },
        lambda v: (limiter_ok(v), v["q"] ** 3, False),
    ),
    "fattree": family_case(
        "fattree",
        {
            "radix": count(1, 6, lambda r: r % 2 == 0),
            "leaves": optional(count(1, 7)),
            "levels": count(2, 4, lambda n: n <= 8),
            "servers_per_leaf": optional(count(1, 7)),
            **common_params(),
        },
        _fattree_rule,
        always={"radix"},  # its default, 36, is 648 servers: valid, but too slow to load in every case
    ),
    "hyperx": family_case(
        "hyperx", {"dims": SMALL_DIMS, "hosts": count(1, 3), "links": count(1, 3), **common_params()}, _hyperx_rule
    ),
    "slimfly": family_case(
        "slimfly",
        {"q": count(1, 5, lambda q: q in (3, 4, 5)), "hosts": optional(count(1, 3)), **common_params()},
        _slimfly_rule,
    ),
    "mlfm": family_case(
        "mlfm",
        {
            "d": count(1, 3),
            "layers": optional(count(1, 4)),
            "servers_per_leaf": optional(tuple_of(count(1, 4), (1, 4), sep=",")),
            "spine_bw": optional(quantity(BANDWIDTH)),
            "spine_choice": words("source", "destination"),
            "zone": words("auto", "compiled"),
            **common_params(),
        },
        _mlfm_rule,
    ),
    "mesh": family_case(
        "mesh",
        {"width": count(1, 4), "height": count(1, 4), **common_params()},
        lambda v: (limiter_ok(v), v["width"] * v["height"], False),
    ),
    "torus": family_case(
        "torus",
        {"dims": SMALL_DIMS, "wrap": flags(), "zone": words("auto", "compiled"), **common_params()},
        _torus_rule,
    ),
    "tofu": family_case(
        "tofu",
        {
            "xyz": optional(tuple_of(count(1, 2), (1, 4), good=(3, 3))),
            "preset": optional(words("fx10")),
            "xyz_wrap": flags(),
            "zone": words("compiled", "auto"),
            **common_params(),
        },
        _tofu_rule,
        slow=lambda v: v["preset"] == "fx10" and v["zone"] == "auto",  # 768 nodes of explicit routes: 80 MB
    ),
}
