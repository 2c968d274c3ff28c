"""Failed cables and switches of a fabric, as an operator names them or as a seeded draw picks them.

A fault set is given per kind (``--fail-cables``, ``--fail-switches`` of ``python -m generators.opensm``):

* names: ``leaf-0/spine-1,agg2-0-1/spine-3`` (a cable by its two ends, either order) or ``spine-0,spine-5``;
* a count, ``3``: that many drawn at random;
* a fraction, ``5%``: that share of them (rounded to the nearest whole one), drawn at random.

Drawn faults come from ``random.Random(seed)`` sampling the candidates in a fixed order (cables between two switches
sorted by their ends, switches in the fabric's order), so a seed names the same faults every time; each count is a
sample of its own. Cables of hosts are never drawn (a failed host cable only loses that host); they may be named.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from generators.errors import TopologyError

__all__ = ["NO_FAULTS", "Faults", "draw"]


@dataclass(frozen=True)
class Faults:
    """Failed cables (each the set of its two ends) and failed switches, by their platform names."""

    cables: frozenset[frozenset[str]] = frozenset()
    switches: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.cables or self.switches)


NO_FAULTS = Faults()


def _how_many(spec: str, candidates: int, what: str) -> int | None:
    """The count a ``N`` or ``P%`` spec asks for, or None when ``spec`` names elements."""
    if match := re.fullmatch(r"(\d+(?:\.\d+)?)%", spec):
        share = float(match[1])
        if share > 100:
            raise TopologyError(f"--fail-{what}: {spec} is more than all of them")
        return round(candidates * share / 100)
    if spec.isdigit():
        if int(spec) > candidates:
            raise TopologyError(f"--fail-{what}: {spec} asked, the fabric has {candidates}")
        return int(spec)
    return None


def _pick(spec: str, candidates: Sequence[str], named: dict[str, str], seed: int, what: str) -> list[str]:
    count = _how_many(spec.strip(), len(candidates), what)
    if count is not None:
        return random.Random(seed).sample(list(candidates), count)
    picked = []
    for name in (part.strip() for part in spec.split(",")):
        if name not in named:
            raise TopologyError(
                f"--fail-{what}: no {what.removesuffix('es') if what == 'switches' else what[:-1]} "
                f"{name!r} in this fabric"
            )
        picked.append(named[name])
    return picked


def draw(
    cables_spec: str | None,
    switches_spec: str | None,
    seed: int,
    cables: Sequence[tuple[str, str]],
    switches: Sequence[str],
    hosts: frozenset[str],
) -> Faults:
    """The faults the two specs ask for, among ``cables`` (pairs of platform nodes) and ``switches``."""
    faults_cables: frozenset[frozenset[str]] = frozenset()
    if cables_spec is not None:
        key = {f"{a}/{b}": f"{a}/{b}" for a, b in cables} | {f"{b}/{a}": f"{a}/{b}" for a, b in cables}
        inner = sorted(f"{a}/{b}" for a, b in cables if a not in hosts and b not in hosts)
        chosen = _pick(cables_spec, inner, key, seed, "cables")
        faults_cables = frozenset(frozenset(name.split("/")) for name in chosen)
    failed_switches: frozenset[str] = frozenset()
    if switches_spec is not None:
        failed_switches = frozenset(_pick(switches_spec, switches, {s: s for s in switches}, seed, "switches"))
    return Faults(faults_cables, failed_switches)
