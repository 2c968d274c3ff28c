"""The registry of topology families: name -> the family each builder declares (``generators.params.family``)."""

from __future__ import annotations

from collections.abc import Mapping

from generators.crossbar import crossbar
from generators.dragonfly import dragonfly
from generators.enterprise import enterprise
from generators.errors import TopologyError, shown
from generators.fattree import fattree
from generators.hyperx import hyperx
from generators.mlfm import mlfm
from generators.model import Platform
from generators.params import Family, PlatformRequest, check_params
from generators.size import Size
from generators.slimfly import slimfly
from generators.threequads import threequads
from generators.tofu import tofu
from generators.torus import mesh, torus

__all__ = ["FAMILIES", "build_platform", "platform_request", "platform_size"]

FAMILIES: dict[str, Family] = {
    builder.family.name: builder.family  # type: ignore[attr-defined]
    for builder in (crossbar, dragonfly, enterprise, fattree, hyperx, mesh, mlfm, slimfly, threequads, tofu, torus)
}


def platform_request(family: str, params: Mapping[str, object], *, written: bool = False) -> PlatformRequest:
    """The platform of ``family`` asked for with ``params`` as given: checked, estimated and refused when too large
    to build (or when it is to be ``written``, to write) once, before anything is built; ``build()`` builds it.

    >>> request = platform_request("crossbar", {"hosts": "4", "link_bw": "1GBps"})
    >>> request.given, request.values["link_bw"], request.size.hosts
    ({'hosts': '4', 'link_bw': '1GBps'}, 1000000000.0, 4)
    """
    return _family(family).request(params, written=written)


def build_platform(family: str, params: Mapping[str, object]) -> Platform:
    """Validate ``params`` for ``family`` and build the platform model; it records ``params`` as given.

    >>> build_platform("crossbar", {"hosts": "4"}).host_names
    ['host-0', 'host-1', 'host-2', 'host-3']
    """
    return platform_request(family, params).build()


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
