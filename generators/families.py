"""The registry of topology families: name -> builder and its declared parameters."""

from __future__ import annotations

from collections.abc import Mapping

from generators.crossbar import FAMILY as CROSSBAR
from generators.enterprise import FAMILY as ENTERPRISE
from generators.errors import TopologyError, shown
from generators.fattree import FAMILY as FATTREE
from generators.mlfm import FAMILY as MLFM
from generators.model import Platform
from generators.params import Family, check_params
from generators.size import Size
from generators.threequads import FAMILY as THREEQUADS
from generators.tofu import FAMILY as TOFU
from generators.torus import MESH_FAMILY, TORUS_FAMILY

__all__ = ["FAMILIES", "build_platform", "platform_size"]

FAMILIES: dict[str, Family] = {
    family.name: family for family in (CROSSBAR, ENTERPRISE, FATTREE, MESH_FAMILY, MLFM, THREEQUADS, TOFU, TORUS_FAMILY)
}


def build_platform(family: str, params: Mapping[str, object]) -> Platform:
    """Validate ``params`` for ``family`` and build the platform model.

    >>> build_platform("crossbar", {"hosts": "4"}).host_names
    ['host-0', 'host-1', 'host-2', 'host-3']
    """
    spec = _family(family)
    return spec.build(**check_params(family, spec.params, params))


def platform_size(family: str, params: Mapping[str, object]) -> Size:
    """Validate ``params`` for ``family`` and estimate what they build (``generators.size``), building nothing.

    >>> size = platform_size("crossbar", {"hosts": "99999999999999999999999"})
    >>> size.hosts, size.xml_bytes > 10**40
    (99999999999999999999999, True)
    """
    spec = _family(family)
    return spec.estimate(check_params(family, spec.params, params))


def _family(family: str) -> Family:
    try:
        return FAMILIES[family]
    except KeyError:
        known = ", ".join(sorted(FAMILIES))
        raise TopologyError(f"unknown topology family {shown(family)}; known families: {known}") from None
