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

__all__ = ["REGISTRY", "Builder", "builds", "family"]


def _signature(declared: Sequence[Param]) -> inspect.Signature:
    """The public signature of a builder: its declared parameters, in order, with their defaults."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature(
        [
            inspect.Parameter(p.name, kind, default=inspect.Parameter.empty if p.default is REQUIRED else p.default)
            for p in declared
        ]
    )


class Builder:
    r"""The public builder of a family (what :func:`builds` makes of its building function): callers pass the
    ``declared`` parameters (in order, or by name); the function receives them checked, defaults filled from the
    ``Param``\ s, but the node's (``generators.node.APPLIED``) and the subnet manager's
    (``generators.subnet.SUBNET_APPLIED``), applied to the platform it returns. Before building, :meth:`estimate`
    says what it would build (:mod:`generators.size`): a model beyond the memory limit is refused. The platform records
    the family, the checked values (``params``), the arguments as given (``given``) and the estimate (``size``); the
    public signature shows the declared defaults. Each step is a method: a parameter's trail is :meth:`request`
    (checked, estimated), then :meth:`make` (built, node and subnet applied).

    >>> from generators.topologies.crossbar import crossbar
    >>> p = crossbar(2, link_lat="100ns")
    >>> p.params["link_lat"], p.params["link_bw"], p.given
    (1e-07, 1000000000.0, {'hosts': 2, 'link_lat': '100ns'})
    >>> crossbar(0)
    Traceback (most recent call last):
    ...
    generators.errors.TopologyError: hosts must be an integer >= 1, got 0
    """

    family: Family | None = None
    """The family it builds, once :func:`family` has registered it."""

    def __init__(
        self,
        name: str,
        declared: Sequence[Param],
        estimate: Callable[[Mapping[str, Any]], Size],
        build: Callable[..., Platform],
    ) -> None:
        functools.update_wrapper(self, build)
        self.name, self.declared, self._estimate, self._build = name, tuple(declared), estimate, build
        self.__signature__ = _signature(declared)
        names = [param.name for param in declared]
        self._applied = APPLIED if set(APPLIED) <= set(names) else ()
        self._routed = SUBNET_APPLIED if set(SUBNET_APPLIED) <= set(names) else ()

    def _own(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The values the family's function takes: all but the node's and the subnet manager's."""
        return {k: v for k, v in values.items() if k not in self._applied + self._routed}

    def estimate(self, values: Mapping[str, Any]) -> Size:
        """The family's estimate of what the checked ``values`` build, plus the node's links and routes, as routed."""
        size = self._estimate(self._own(values))
        if self._applied:
            check_node(values)
            size = node_size(size, values["shm_bw"])
        return subnet_size(self.name, self.declared, size, values) if self._routed else size

    def request(self, given: Mapping[str, object], written: bool) -> PlatformRequest:
        """The parameters ``given`` checked and estimated, refused when too large (to ``written`` or not)."""
        values = check_params(self.name, self.declared, given)
        size = self.estimate(values)
        check_size(self.name, size, written=written)
        return PlatformRequest(self.name, dict(given), values, size, self.make)

    def make(self, request: PlatformRequest) -> Platform:
        """Build what ``request`` asks for: the family's function, then the subnet manager's routes and the node."""
        values = request.values
        platform = self._build(**self._own(values))
        if self._routed:
            platform = apply_subnet(self.name, self.declared, platform, values)
        if self._applied:
            platform = apply_node(platform, **{k: values[k] for k in self._applied})
        platform.family, platform.params, platform.size = self.name, values, request.size
        platform.given = request.given
        platform.unrecorded = tuple(
            p.name
            for p in self.declared
            if not p.recorded_when_default and values[p.name] == p.convert(p.default, p.name)
        )
        return platform

    def __call__(self, *args: object, **kwargs: object) -> Platform:
        try:
            given = self.__signature__.bind_partial(*args, **kwargs).arguments
        except TypeError as err:
            names = ", ".join(param.name for param in self.declared)
            raise TypeError(f"{self.name}(): {err}; its parameters are {names}") from None
        return self.request(given, False).build()


def builds(
    family: str, declared: Sequence[Param], estimate: Callable[[Mapping[str, Any]], Size]
) -> Callable[[Callable[..., Platform]], Builder]:
    """Make the :class:`Builder` of ``family`` from its building function (a decorator), which takes the
    ``declared`` parameters and ``estimate`` says the size of."""

    def decorate(build: Callable[..., Platform]) -> Builder:
        return Builder(family, declared, estimate, build)

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
) -> Callable[[Callable[..., Platform]], Builder]:
    """Declare the topology family the decorated builder builds, once, and register it (:data:`REGISTRY`): its
    name is the builder's, ``summary`` its line in ``--help``, ``params`` what it takes (the builder receives them
    checked, in this order), ``estimate`` what they build, ``placements`` its named rank placements, ``smallest``
    and ``drawn`` its examples (the tests' smallest platform, the picture's). The public builder (:func:`builds`)
    carries the :class:`Family` as ``.family``, and its documentation gains a Parameters section written from
    ``params``.

    >>> from generators.topologies.crossbar import crossbar
    >>> crossbar.family.name, [param.name for param in crossbar.family.params][:2]
    ('crossbar', ['hosts', 'link_bw'])
    >>> [line.strip() for line in crossbar.__doc__.split("Parameters")[1].splitlines()[2:4]]
    ['hosts : int >= 1', 'number of hosts N.']
    """

    params = (*params, *SUBNET_PARAMS)  # every family: routed by OpenSM, around failures, on request

    def declare(build: Callable[..., Platform]) -> Builder:
        builder = builds(build.__name__, params, estimate)(build)
        builder.__doc__ = _documented(build.__doc__ or "", params)
        declared = Family(build.__name__, builder, tuple(params), summary, dict(placements or {}), smallest, drawn)
        taken = sorted(set(declared.placements) & set(ALLOCATION_POLICIES))
        if taken:
            raise ValueError(f"{declared.name}: placement {taken[0]!r} is an allocation policy of every family")
        if REGISTRY.get(declared.name, declared).build.__module__ != builder.__module__:
            raise ValueError(f"two families are named {declared.name!r}")
        builder.family = REGISTRY[declared.name] = declared
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
