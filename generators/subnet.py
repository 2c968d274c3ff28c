"""Every family routed by InfiniBand's subnet manager, whole or with failed cables and switches: its parameters.

Every family declares :data:`SUBNET_PARAMS` (``generators.declare.family`` adds them): ``opensm`` names an OpenSM
routing engine (``generators.opensm.ENGINES``) that routes the family's cables in place of its own rule, and
``fail_cables``, ``fail_switches`` and ``fail_seed`` name the parts that failed (``generators.faults``: names, a
count or a percentage drawn with the seed) and are left in place while OpenSM routes around them. ``builds`` applies
them to the platform built (:func:`apply_subnet`): the fabric of its cables but the failed ones is routed by OpenSM
under ibsim, and the platform's routes become the paths through OpenSM's forwarding tables, a compiled zone that
follows them (``simgrid_cpp/tables_zone.cpp``, up to :data:`MAX_TABLE_HOSTS` hosts); a pair that failures cut
apart has no route, and a run that needs it stops with SimGrid's "no connecting path" error.

topolab's own rules (D-mod-K, dimension order, minimal, the adaptive ones) have no fault-tolerant form: failures
without ``opensm`` are refused, as is ``opensm`` beside a family routing or spreading of its own (one of them routes).
At their defaults none of these is recorded in a platform's file, so the files written before they existed stay
byte for byte the same.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from generators.errors import TopologyError
from generators.errors import shown
from generators.faults import draw
from generators.model import Platform
from generators.opensm import ENGINES
from generators.opensm import MAX_HOSTS
from generators.opensm import MAX_TABLE_HOSTS
from generators.opensm import cables_of
from generators.opensm import fabric_of
from generators.opensm import opensm_platform
from generators.opensm import run_opensm
from generators.params import Param
from generators.params import accepts
from generators.params import choice
from generators.params import nonnegative_int
from generators.params import optional
from generators.size import Size

__all__ = ["ENGINES", "MAX_HOSTS", "MAX_TABLE_HOSTS", "SUBNET_APPLIED", "SUBNET_PARAMS", "apply_subnet", "subnet_size"]

_SPEC = re.compile(r"\d+(\.\d+)?%|\d+|[^,\s]+(\s*,\s*[^,\s]+)*")


@accepts("names (a,b,...), a count N or a share P%")
def fault_spec(value: object, name: str) -> str:
    """A set of failed parts as ``generators.faults`` reads it: names separated by commas, a count or a share."""
    text = str(value).strip()
    if not _SPEC.fullmatch(text):
        raise TopologyError(f"{name} must be names (a,b,...), a count N or a share P%, got {shown(value)}")
    return text


SUBNET_PARAMS = (
    Param(
        "opensm",
        choice("none", *(engine.lower() for engine in ENGINES)),
        "route the cables as OpenSM's routing engine does, run once under ibsim (docs/opensm.md), or none: the "
        "family's own rule",
        "none",
        recorded_when_default=False,
    ),
    Param(
        "fail_cables",
        optional(fault_spec),
        "cables between switches that failed and stay in place (needs opensm): A/B names, a count N or a share P% "
        "drawn with fail_seed",
        "none",
        recorded_when_default=False,
    ),
    Param(
        "fail_switches",
        optional(fault_spec),
        "switches that failed (needs opensm): names, a count N or a share P% drawn with fail_seed",
        "none",
        recorded_when_default=False,
    ),
    Param("fail_seed", nonnegative_int, "seed of the failures drawn", 0, recorded_when_default=False),
)
"""The subnet manager's parameters, which every family declares after its own."""

SUBNET_APPLIED = tuple(param.name for param in SUBNET_PARAMS)
"""What ``generators.declare.builds`` applies to the platform built instead of passing it to the builder."""

_ENGINE = {engine.lower(): engine for engine in ENGINES}

_ROUTED: dict[tuple[str, str], Any] = {}
"""OpenSM's tables by the digest of the fabric's net file and the engine, the last ``_ROUTED_KEPT`` of this process:
a study routes each platform to write it and again to analyse it."""
_ROUTED_KEPT = 64


def check_subnet(family: str, declared: Sequence[Param], values: Mapping[str, Any]) -> str | None:
    """The OpenSM engine asked for (its own spelling), or None; failures without one, or an engine beside the
    family's own routing or spreading, are a ``TopologyError``."""
    engine = values["opensm"]
    if engine == "none":
        for name in ("fail_cables", "fail_switches"):
            if values[name] is not None:
                raise TopologyError(
                    f"{family}: {name} needs opensm (an OpenSM routing engine): {family}'s own routing has no "
                    "fault-tolerant form"
                )
        return None
    defaults = {p.name: p.convert(p.default, p.name) for p in declared if p.name in ("routing", "spread")}
    for name, default in defaults.items():
        if values[name] != default:
            raise TopologyError(f"{family}: {name} = {values[name]} and opensm = {engine}: give one of them")
    return _ENGINE[engine]


def subnet_size(family: str, declared: Sequence[Param], size: Size, values: Mapping[str, Any]) -> Size:
    """``size`` as the subnet manager's routes write it: a compiled zone of the tables (a parameter file), refused
    beyond ``MAX_TABLE_HOSTS`` hosts before anything is built or routed."""
    if check_subnet(family, declared, values) is None:
        return size
    if size.hosts > MAX_TABLE_HOSTS:
        raise TopologyError(
            f"{family} with opensm: {size.hosts} hosts, and a platform of OpenSM's routes has at most "
            f"{MAX_TABLE_HOSTS} hosts (its zone holds a forwarding entry per switch and host)"
        )
    return dataclasses.replace(size, routes=0, route_links=0, edges=0, edge_links=0, compiled=True)


def apply_subnet(family: str, declared: Sequence[Param], platform: Platform, values: Mapping[str, Any]) -> Platform:
    """``platform`` routed by the OpenSM engine ``values`` name, around the failures they draw; itself without one."""
    engine = check_subnet(family, declared, values)
    if engine is None:
        return platform
    whole = fabric_of(platform)
    faults = draw(
        values["fail_cables"], values["fail_switches"], values["fail_seed"], cables_of(platform), whole.switches,
        frozenset(whole.hosts),
    )  # fmt: skip
    fabric = fabric_of(platform, faults)
    key = (hashlib.sha256(fabric.net_text().encode()).hexdigest(), engine)
    if key not in _ROUTED:  # the same fabric and engine, routed again in this process: OpenSM's tables once
        while len(_ROUTED) >= _ROUTED_KEPT:
            del _ROUTED[next(iter(_ROUTED))]
        _ROUTED[key] = run_opensm(fabric, engine)
    return opensm_platform(platform, fabric, _ROUTED[key], compiled=True)
