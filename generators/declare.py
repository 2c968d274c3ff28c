"""Declaring a topology family: :func:`family` on its builder registers it (:data:`REGISTRY`), and :func:`builds`
makes the public builder that checks its parameters (``generators.params``), estimates what they build and refuses
it when too large (``generators.size``), builds, and applies what every family shares: the node's values
(``generators.node``) and the subnet manager's routes (``generators.subnet``). Above the parameters, the node and
the subnet manager, below the families: each family module imports :func:`family` from here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from generators.allocation import ALLOCATION_POLICIES
from generators.model import Platform
from generators.node import APPLIED
from generators.node import apply_node
from generators.node import check_node
from generators.node import node_size
from generators.params import REQUIRED
from generators.params import Family
from generators.params import Param
from generators.params import PlatformRequest
from generators.params import check_params
from generators.size import Size
from generators.size import check_size
from generators.subnet import SUBNET_APPLIED
from generators.subnet import SUBNET_PARAMS
from generators.subnet import apply_subnet
from generators.subnet import subnet_size

__all__ = ["REGISTRY", "builds", "family"]


def _signature(declared: Sequence[Param]) -> inspect.Signature:
    """The public signature of a builder: its declared parameters, in order, with their defaults."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature(
        [
            inspect.Parameter(p.name, kind, default=inspect.Parameter.empty if p.default is REQUIRED else p.default)
            for p in declared
        ]
    )


def builds(
    family: str, declared: Sequence[Param], estimate: Callable[[Mapping[str, Any]], Size]
) -> Callable[[Callable[..., Platform]], Callable[..., Platform]]:
    r"""Decorate the builder of ``family``: callers pass the ``declared`` parameters (in order, or by name); the
    builder receives them checked, defaults filled from the ``Param``\ s, but the node's (``generators.node.APPLIED``)
    and the subnet manager's (``generators.subnet.SUBNET_APPLIED``), applied to the platform it returns. Before
    building, ``estimate(values)`` and what those add say what it would build (:mod:`generators.size`): a model
    beyond the memory limit is refused. The platform records ``family``, the checked values (``params``), the
    arguments as given (``given``) and the estimate (``size``); the public signature shows the declared defaults.

    >>> from generators.crossbar import crossbar
    >>> p = crossbar(2, link_lat="100ns")
    >>> p.params["link_lat"], p.params["link_bw"], p.given
    (1e-07, 1000000000.0, {'hosts': 2, 'link_lat': '100ns'})
    >>> crossbar(0)
    Traceback (most recent call last):
    ...
    generators.errors.TopologyError: hosts must be an integer >= 1, got 0
    """
    names = tuple(param.name for param in declared)
    applied = APPLIED if set(APPLIED) <= set(names) else ()
    routed = SUBNET_APPLIED if set(SUBNET_APPLIED) <= set(names) else ()
    signature = _signature(declared)

    def sized(values: Mapping[str, Any]) -> Size:
        """The family's estimate of the values it builds, plus the node's links and routes, as routed."""
        size = estimate({k: v for k, v in values.items() if k not in applied + routed})
        if applied:
            check_node(values)
            size = node_size(size, values["shm_bw"])
        return subnet_size(family, declared, size, values) if routed else size

    def decorate(build: Callable[..., Platform]) -> Callable[..., Platform]:
        def make(request: PlatformRequest) -> Platform:
            values = request.values
            platform = build(**{k: v for k, v in values.items() if k not in applied + routed})
            if routed:
                platform = apply_subnet(family, declared, platform, values)
            if applied:
                platform = apply_node(platform, **{k: values[k] for k in applied})
            platform.family, platform.params, platform.size = family, values, request.size
            platform.given = request.given
            platform.unrecorded = tuple(
                p.name
                for p in declared
                if not p.recorded_when_default and values[p.name] == p.convert(p.default, p.name)
            )
            return platform

        def request(given: Mapping[str, object], written: bool) -> PlatformRequest:
            values = check_params(family, declared, given)
            size = sized(values)
            check_size(family, size, written=written)
            return PlatformRequest(family, dict(given), values, size, make)

        @functools.wraps(build)
        def builder(*args: object, **kwargs: object) -> Platform:
            try:
                given = signature.bind_partial(*args, **kwargs).arguments
            except TypeError as err:
                raise TypeError(f"{family}(): {err}; its parameters are {', '.join(names)}") from None
            return request(given, False).build()

        builder.__signature__ = signature  # type: ignore[attr-defined]
        builder.declared = tuple(declared)  # type: ignore[attr-defined]
        builder.estimate = sized  # type: ignore[attr-defined]
        builder.request = request  # type: ignore[attr-defined]
        return builder

    return decorate


REGISTRY: dict[str, Family] = {}
"""Every family declared (:func:`family`), by name: ``generators.families.FAMILIES`` once every module that declares
one is imported."""


def family(
    summary: str,
    params: Sequence[Param],
    estimate: Callable[[Mapping[str, Any]], Size],
    placements: Mapping[str, Callable[[Any, str], list[str]]] | None = None,
    *,
    smallest: Mapping[str, object],
    drawn: Mapping[str, object],
) -> Callable[[Callable[..., Platform]], Callable[..., Platform]]:
    """Declare the topology family the decorated builder builds, once, and register it (:data:`REGISTRY`): its
    name is the builder's, ``summary`` its line in ``--help``, ``params`` what it takes (the builder receives them
    checked, in this order), ``estimate`` what they build, ``placements`` its named rank placements, ``smallest``
    and ``drawn`` its examples (the tests' smallest platform, the picture's). The public builder (:func:`builds`)
    carries the :class:`Family` as ``.family``, and its documentation gains a Parameters section written from
    ``params``.

    >>> from generators.crossbar import crossbar
    >>> crossbar.family.name, [param.name for param in crossbar.family.params][:2]
    ('crossbar', ['hosts', 'link_bw'])
    >>> [line.strip() for line in crossbar.__doc__.split("Parameters")[1].splitlines()[2:4]]
    ['hosts : int >= 1', 'number of hosts N.']
    """

    params = (*params, *SUBNET_PARAMS)  # every family: routed by OpenSM, around failures, on request

    def declare(build: Callable[..., Platform]) -> Callable[..., Platform]:
        builder = builds(build.__name__, params, estimate)(build)
        builder.__doc__ = _documented(build.__doc__ or "", params)
        declared = Family(build.__name__, builder, tuple(params), summary, dict(placements or {}), smallest, drawn)
        taken = sorted(set(declared.placements) & set(ALLOCATION_POLICIES))
        if taken:
            raise ValueError(f"{declared.name}: placement {taken[0]!r} is an allocation policy of every family")
        if REGISTRY.get(declared.name, declared).build.__module__ != builder.__module__:
            raise ValueError(f"two families are named {declared.name!r}")
        builder.family = REGISTRY[declared.name] = declared  # type: ignore[attr-defined]
        return builder

    return declare


def _documented(doc: str, params: Sequence[Param]) -> str:
    """``doc`` (a numpydoc docstring whose body is indented by four spaces) with a Parameters section written
    from ``params``, before its Examples (or at its end)."""
    lines = ["Parameters", "----------"]
    for param in params:
        default = "" if param.default is REQUIRED else f", default {param.default!r}"
        lines += [f"{param.name} : {param.kind}{default}", f"    {param.help}."]
    section = "".join(f"    {line}\n" for line in lines)
    head, examples, tail = doc.partition("\n    Examples\n")
    if not examples:
        return f"{doc.rstrip()}\n\n{section}"
    return f"{head.rstrip()}\n\n{section}\n    Examples\n{tail}"
