"""The registry of topology families: name -> the family each builder declares (``generators.declare.family``).

A family is a module of ``generators.topologies`` that declares one (``@family(...)`` before its builder): importing
this module imports every module of that package, and the declaration registers the family. Adding a family is adding
its module there.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from typing import Any

from generators import topologies
from generators.declare import REGISTRY
from generators.errors import TopologyError
from generators.errors import shown
from generators.model import Platform
from generators.params import Family
from generators.params import PlatformRequest
from generators.params import check_params
from generators.size import Size

__all__ = [
    "FAMILIES",
    "build_platform",
    "check_file_params",
    "platform_request",
    "platform_size",
    "refuse_numbers_without_unit",
]


def _declared_families() -> dict[str, Family]:
    """Import every module of ``generators.topologies``; the families they registered, by name."""
    for module in sorted(pkgutil.iter_modules(topologies.__path__), key=lambda found: found.name):
        importlib.import_module(f"{topologies.__name__}.{module.name}")
    return dict(sorted(REGISTRY.items()))


FAMILIES: dict[str, Family] = _declared_families()


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


def refuse_numbers_without_unit(family: str, params: Mapping[str, object]) -> None:
    """TopologyError for a number that a file a user wrote (a study's or a sweep's TOML) gives to a quantity with a
    unit: ``link_lat = 5`` is refused as ``--link-lat 5`` is (5 s or 5 us?), 0 aside. From Python a number is in the
    quantity's base unit (``crossbar(4, link_lat=1e-6)``), and a file's text says its unit (``link_lat = "1us"``).

    >>> refuse_numbers_without_unit("crossbar", {"hosts": 4, "link_lat": 0, "link_bw": "1GBps"})
    >>> refuse_numbers_without_unit("crossbar", {"hosts": 4, "link_lat": 5})
    Traceback (most recent call last):
    ...
    generators.errors.TopologyError: link_lat 5: give a unit (e.g. 5us or 5ns; units s, ms, us, ns, ps)
    """
    known = FAMILIES.get(family)  # an unknown family is the family's check's error
    declared = {param.name: param for param in known.params} if known is not None else {}
    for name, value in params.items():
        param = declared.get(name)
        if param is not None and param.needs_unit and isinstance(value, int | float) and not isinstance(value, bool):
            param.convert(str(value), name)  # as its text: refused unless 0


def check_file_params(family: str, params: Mapping[str, object]) -> dict[str, Any]:
    """The checked values of ``params`` for ``family`` as a file a user wrote gives them (a study's platform, a sweep
    point's): an unknown family or parameter, a bad value, a number without its unit are a ``TopologyError``; nothing
    is estimated or built.

    >>> check_file_params("crossbar", {"hosts": 2, "colour": 1})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    generators.errors.TopologyError: crossbar: unknown parameter 'colour'; known parameters: core_memory_bw, ...
    """
    spec = _family(family)
    refuse_numbers_without_unit(family, params)
    return check_params(family, spec.params, params)


def _family(family: str) -> Family:
    try:
        return FAMILIES[family]
    except KeyError:
        known = ", ".join(sorted(FAMILIES))
        raise TopologyError(f"unknown topology family {shown(family)}; known families: {known}") from None
