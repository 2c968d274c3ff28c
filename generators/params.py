"""Declared, validated family parameters, shared by the CLI, the study files and sweeps.

A family is declared once, by ``generators.declare.family`` on its builder: its name (the builder's), a one-line
summary, its parameters (:class:`Param`: name, converter, help and default), its size estimate and its named
placements. From that declaration come the :class:`Family` the registry lists (``generators.families``), the CLI's
options and help (``generators.cli``), the builder's public signature and the Parameters section of its
documentation. :func:`check_params` turns user input (CLI strings, TOML values or Python arguments) into typed
values, rejecting unknown names, missing values and bad values with one :class:`~generators.errors.TopologyError`
that names the parameter, the rule and the value, so Python callers get the same defaults and checks as the CLI and
the study files, and the builder receives the checked values: the defaults live in the ``Param`` only, never in a
signature.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

from generators.errors import TopologyError
from generators.errors import shown
from generators.size import Size
from generators.units import parse_bandwidth
from generators.units import parse_number
from generators.units import parse_speed
from generators.units import parse_time

if TYPE_CHECKING:
    from generators.model import Platform

__all__ = [
    "REQUIRED",
    "Family",
    "Param",
    "PlatformRequest",
    "accepts",
    "bandwidth",
    "check_params",
    "choice",
    "flag_tuple",
    "int_or_ints",
    "int_tuple",
    "latency",
    "letter_order",
    "nbl_cap",
    "nbl_param",
    "nonnegative_int",
    "optional",
    "optional_bandwidth",
    "positive_int",
    "speed",
]

REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """One parameter of a topology family.

    ``convert(value, name)`` returns the typed value or raises ``TopologyError``.
    """

    name: str
    convert: Callable[[object, str], Any]
    help: str
    default: Any = REQUIRED
    recorded_when_default: bool = True
    """False for a parameter added after platforms were published: a platform's file records it only when it is not
    the default, so the files written before it existed stay byte for byte the same."""

    @property
    def option(self) -> str:
        """The command-line spelling, ``--link-bw`` for ``link_bw``."""
        return "--" + self.name.replace("_", "-")

    @property
    def needs_unit(self) -> bool:
        """Whether the parameter is a quantity with a unit (a bandwidth, a time, a speed): text without one is refused,
        and so is a number from a file a user wrote (:func:`generators.families.refuse_numbers_without_unit`)."""
        return bool(getattr(self.convert, "unit", False))

    @property
    def schema(self) -> dict[str, Any]:
        """What JSON Schema can say of the values it accepts in a file (empty: anything; the loader checks)."""
        return dict(getattr(self.convert, "schema", {}))

    @property
    def kind(self) -> str:
        """What the parameter accepts, in words (its converter's ``kind``): ``int >= 1``, ``bandwidth``, ..."""
        return str(getattr(self.convert, "kind", self.convert.__name__))


class Building(Protocol):
    """What a family's public builder does (``generators.declare.Builder``): build from the parameters as given,
    estimate what checked values build, and take a request."""

    def __call__(self, *args: Any, **kwargs: Any) -> Platform: ...

    def estimate(self, values: Mapping[str, Any]) -> Size: ...

    def request(self, given: Mapping[str, object], written: bool) -> PlatformRequest: ...


@dataclass(frozen=True)
class Family:
    """A topology family: its builder, its parameters, a one-line summary for ``--help``, and its
    named rank placements (``placements["allocation"](platform, "2,4,3")`` -> hosts in rank order)."""

    name: str
    build: Building
    params: tuple[Param, ...]
    summary: str
    placements: Mapping[str, Callable[[Any, str], list[str]]] = field(default_factory=dict)
    smallest: Mapping[str, object] = field(default_factory=dict)
    """The parameters (as text) of the smallest platform of the family: what tests build of every family."""
    drawn: Mapping[str, object] = field(default_factory=dict)
    """The parameters (as text) it is drawn with (``generators.drawing``): close to the papers' machines."""

    def estimate(self, values: Mapping[str, Any]) -> Size:
        """What the builder would build from the checked ``values`` (:mod:`generators.size`), without building it."""
        return self.build.estimate(values)

    def request(self, given: Mapping[str, object], *, written: bool = False) -> PlatformRequest:
        """The platform asked for with the parameters ``given`` (names and values as the user wrote them), checked,
        estimated and refused when too large (to build, or when it is to be ``written``, to write) once; built by
        :meth:`PlatformRequest.build`."""
        return self.build.request(given, written)


@dataclass(frozen=True)
class PlatformRequest:
    """A platform asked for and accepted: the parameters as given, as checked (``values``, defaults filled) and
    what they build (``size``, within the limits of :func:`generators.size.check_size`), each worked out once."""

    family: str
    given: dict[str, object]
    values: dict[str, Any]
    size: Size
    make: Callable[[PlatformRequest], Platform]

    def build(self) -> Platform:
        """The platform; it records ``family``, the values as built (``params``), the parameters as given
        (``given``) and the estimate (``size``)."""
        return self.make(self)


_INTEGER = re.compile(r"[+-]?[0-9]+")
Converter = Callable[[object, str], Any]


def accepts(
    text: str, *, unit: bool = False, schema: Mapping[str, Any] | None = None
) -> Callable[[Converter], Converter]:
    """Mark a converter with what it accepts, in words (``Param.kind``: the CLI help and the builders' docs), whether
    its quantity has a ``unit`` (``Param.needs_unit``), and what JSON Schema can say of a value it accepts
    (``Param.schema``: the published schemas of study, sweep and jobs files; empty: anything, the loader checks)."""

    def mark(convert: Converter) -> Converter:
        convert.kind = text  # type: ignore[attr-defined]
        convert.unit = unit  # type: ignore[attr-defined]
        convert.schema = dict(schema or {})  # type: ignore[attr-defined]
        return convert

    return mark


def _integer_schema(minimum: int) -> dict[str, Any]:
    """An integer >= ``minimum`` in a file, or its text (which the loader reads: ``"4"``, ``"+4"``)."""
    return {"anyOf": [{"type": "integer", "minimum": minimum}, {"type": "string"}]}


def _integer(value: object, name: str, minimum: int) -> int:
    """An integer >= ``minimum``, given as an int or as its decimal text: ASCII digits, an optional sign and
    surrounding blanks (``" 4"``, ``"+4"``; not ``"4.5"``, ``"1_000"``, ``"\u0664"`` or ``True``)."""
    if isinstance(value, str):
        text = value.strip()
        if not _INTEGER.fullmatch(text):
            raise TopologyError(f"{name} must be an integer >= {minimum}, got {shown(value)}")
        try:
            value = int(text)
        except ValueError:  # Python converts at most 4300 digits: far beyond any size a limit admits
            raise TopologyError(f"{name} has too many digits ({len(text)}), got {shown(value)}") from None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TopologyError(f"{name} must be an integer >= {minimum}, got {shown(value)}")
    return value


@accepts("int >= 1", schema=_integer_schema(1))
def positive_int(value: object, name: str) -> int:
    """An integer >= 1, given as an int or as the text of one (``"4"``, not ``"4.5"`` or ``True``)."""
    return _integer(value, name, 1)


@accepts("int >= 0", schema=_integer_schema(0))
def nonnegative_int(value: object, name: str) -> int:
    """An integer >= 0, given as an int or as the text of one."""
    return _integer(value, name, 0)


@accepts("bandwidth with a SimGrid unit ('2GBps', '10Gbps'), or a Python number of bytes/s", unit=True)
def bandwidth(value: object, name: str) -> float:
    """A bandwidth (bytes/s) with a SimGrid unit: text without one is refused."""
    return parse_bandwidth(value, name)


@accepts("time with a SimGrid unit ('100ns', '1us'; 0 needs none), or a Python number of seconds", unit=True)
def latency(value: object, name: str) -> float:
    """A latency (s) with a SimGrid unit: text without one is refused, but for 0; zero is allowed."""
    return parse_time(value, name)


@accepts("speed with a SimGrid unit ('1Gf'), or a Python number of flop/s", unit=True)
def speed(value: object, name: str) -> float:
    """A host speed (flop/s) with a SimGrid unit: text without one is refused."""
    return parse_speed(value, name)


@accepts("bandwidth or 'none'", unit=True)
def optional_bandwidth(value: object, name: str) -> float | None:
    """A bandwidth, or ``"none"`` for no limit."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    return parse_bandwidth(value, name)


def _ints(value: object, name: str) -> tuple[int, ...]:
    items = value if isinstance(value, list | tuple) else str(value).replace("x", ",").split(",")
    if not items:
        raise TopologyError(f"{name} must be a list of integers >= 1 such as '4x4x2', got {shown(value)}")
    return tuple(positive_int(item, name) for item in items)


@accepts("ints >= 1 ('4x4x2', '4,4,2' or a list)")
def int_tuple(value: object, name: str) -> tuple[int, ...]:
    """A non-empty tuple of integers >= 1, from ``"4x4x2"``, ``"4,4,2"`` or a list. An integer alone is refused: in
    a file, ``dims = 442`` is more likely a slip for ``"4x4x2"`` than the 442-node ring it would be."""
    if isinstance(value, int) and not isinstance(value, bool):
        raise TopologyError(
            f"{name} must be a list of integers >= 1 such as '4x4x2' or [4, 4, 2], got the integer {value} "
            f"(one dimension of {value}: [{value}] or '{value}')"
        )
    return _ints(value, name)


@accepts("an int >= 1, or ints >= 1 ('3,3,2' or a list)")
def int_or_ints(value: object, name: str) -> tuple[int, ...]:
    """One integer >= 1, or a non-empty tuple of them (``3``, ``"3,3,2"``, a list): one value for all, or one each."""
    return (
        (positive_int(value, name),) if isinstance(value, int) and not isinstance(value, bool) else _ints(value, name)
    )


@accepts("flags ('1,1,0', 'yes', 'no' or a list)")
def flag_tuple(value: object, name: str) -> tuple[bool, ...]:
    """Per-dimension booleans from ``"1,1,0"``, ``"yes"``/``"no"`` (all dimensions) or a list."""
    words = {"1": True, "0": False, "true": True, "false": False, "yes": True, "no": False}
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    flags = [item if isinstance(item, bool) else words.get(str(item).strip().lower()) for item in items]
    if None in flags:
        raise TopologyError(f"{name} must be flags such as '1,1,0' or 'yes', got {shown(value)}")
    return tuple(flags)


def optional(convert: Callable[[object, str], Any]) -> Callable[[object, str], Any]:
    """A converter that also accepts ``"none"`` for None. An empty value is an error, not the default: a user who
    typed ``--layers ''`` meant something, and silence would build another machine than the one meant.

    >>> optional(positive_int)("none", "layers"), optional(positive_int)("3", "layers")
    (None, 3)
    """

    def convert_optional(value: object, name: str) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
            return None
        return convert(value, name)

    kind = f"{getattr(convert, 'kind', convert.__name__)} or 'none'"
    return accepts(kind, unit=getattr(convert, "unit", False), schema=getattr(convert, "schema", {}))(convert_optional)


def choice(*names: str) -> Callable[[object, str], str]:
    """A converter accepting one of ``names`` (case-insensitive)."""

    def convert(value: object, name: str) -> str:
        text = str(value).strip().lower()
        if text not in names:
            raise TopologyError(f"{name} must be one of {', '.join(names)}, got {shown(value)}")
        return text

    return accepts("one of " + ", ".join(names))(convert)


def letter_order(letters: str) -> Callable[[object, str], str]:
    """A converter accepting any ordering of ``letters`` (e.g. ``"xyz"``, ``"zxy"``), lower-cased."""

    def convert(value: object, name: str) -> str:
        text = str(value).strip().lower()
        if sorted(text) != sorted(letters):
            raise TopologyError(f"{name} must be an ordering of the letters {letters!r}, got {shown(value)}")
        return text

    return accepts(f"an ordering of the letters {letters!r}")(convert)


@accepts("'none', 'nominal' or a number of link bandwidths > 0")
def nbl_cap(value: object, name: str) -> float | None:
    """Node-bandwidth limit: ``"none"`` (no limiter) or k > 0, a cap of k host-link bandwidths.

    With k = 1 ("nominal" in the NBL paper) all traffic into and out of a node shares one link's
    bandwidth, f(L) = L; with a cap of k links, f(L) = max(1, L/k).
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    if isinstance(value, str) and value.strip().lower() == "nominal":
        return 1.0
    try:
        return parse_number(value, name)
    except TopologyError:
        raise TopologyError(
            f"{name} must be 'none', 'nominal' or a number of link bandwidths > 0, got {shown(value)}"
        ) from None


def nbl_param(cable: str = "link", limit: str = "node-bandwidth limit", help: str = "", default: str = "none") -> Param:
    """The ``nbl`` parameter (:func:`nbl_cap`), declared here for every family: ``help`` says what it limits, by
    default the ``limit`` in ``cable`` bandwidths (what the family calls a host's cable)."""
    return Param("nbl", nbl_cap, help or f"{limit}: none, nominal (=1) or k {cable} bandwidths", default)


def cable_params(
    bandwidth_default: str, latency_default: str, cables: str = "every cable", bw_note: str = "", lat_note: str = ""
) -> tuple[Param, Param]:
    """The ``link_bw`` and ``link_lat`` parameters, declared here for every family that declares them side by side
    (mlfm has ``spine_bw`` between them): the bandwidth per direction and the latency of ``cables`` (what the family
    calls the cables they set), each help ended by its note (where the figure comes from, which cables it leaves to
    another parameter)."""
    return (
        Param("link_bw", bandwidth, f"bandwidth of {cables}, per direction{f' ({bw_note})' if bw_note else ''}",
              bandwidth_default),
        Param("link_lat", latency, f"latency of {cables}{f' ({lat_note})' if lat_note else ''}", latency_default),
    )  # fmt: skip


def check_params(family: str, declared: Sequence[Param], given: Mapping[str, object]) -> dict[str, Any]:
    """Validate ``given`` against the ``declared`` parameters of ``family``; return typed values."""
    known = {p.name for p in declared}
    unknown = sorted(set(given) - known)
    if unknown:
        raise TopologyError(f"{family}: unknown parameter {unknown[0]!r}; known parameters: {', '.join(sorted(known))}")
    values: dict[str, Any] = {}
    for param in declared:
        if param.name in given:
            values[param.name] = param.convert(given[param.name], param.name)
        elif param.default is REQUIRED:
            raise TopologyError(f"{family}: parameter {param.name} is required ({param.help})")
        else:
            values[param.name] = param.convert(param.default, param.name)
    return values
