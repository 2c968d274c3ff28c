"""Parsing and formatting of the physical quantities written into SimGrid platforms.

Internally topolab keeps bandwidths in bytes per second, latencies in seconds and host speeds
in flop/s. Users write them with SimGrid's units (``"1GBps"``, ``"10Gbps"``, ``"1.54us"``); text without a unit
(``"5"``) is refused, 0 aside, since nothing says whether 5 s or 5 us was meant (a Python number is in the base
unit). A file SimGrid reads may hold a number without a unit, in the base unit: ``in_base_unit=True`` reads it so.
A value written with a unit is the float nearest to the decimal quantity it spells: the number and the
unit's factor are multiplied exactly (fractions), then rounded once, so ``"100ns"`` is ``1e-07`` and not
``100 * 1e-9 = 1.0000000000000001e-07``, and the same quantity written two ways is the same float.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from fractions import Fraction

from generators.errors import TopologyError
from generators.errors import shown

__all__ = [
    "SMALLEST",
    "check_quantity",
    "format_bandwidth",
    "format_speed",
    "format_time",
    "parse_bandwidth",
    "parse_number",
    "parse_speed",
    "parse_time",
]

# SimGrid parses a value with strtod and refuses an underflow ("value out of range: 5e-324Bps", measured on 4.1):
# a quantity other than 0 must be a normal double, at least this.
SMALLEST = sys.float_info.min

_NUMBER_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

_DECIMAL = {"": Fraction(1), "k": Fraction(10**3), "K": Fraction(10**3), "M": Fraction(10**6),
            "G": Fraction(10**9), "T": Fraction(10**12)}  # fmt: skip
_BINARY = {"Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40)}

_BANDWIDTH_UNITS: dict[str, Fraction] = {}
for _prefix, _factor in (_DECIMAL | _BINARY).items():
    _BANDWIDTH_UNITS[_prefix + "Bps"] = _factor
    _BANDWIDTH_UNITS[_prefix + "bps"] = _factor / 8

_TIME_UNITS = {"s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9),
               "ps": Fraction(1, 10**12)}  # fmt: skip
_SPEED_UNITS = {p + "f": f for p, f in _DECIMAL.items()}


@dataclass(frozen=True)
class _Kind:
    """A kind of quantity: its units (the base unit's factor 1) and how a message names them."""

    units: dict[str, Fraction]
    example: str
    usual_units: tuple[str, ...]
    """The units a number typed without one most likely lacks: the examples of the message that asks for one."""
    listed: str
    """The units, in words, for the message that asks for one."""


_BANDWIDTH = _Kind(
    _BANDWIDTH_UNITS,
    example="1GBps",
    usual_units=("GBps", "Gbps"),
    listed="Bps for bytes/s, bps for bits/s, with a prefix k, M, G, T, Ki, Mi, Gi, Ti",
)
_TIME = _Kind(_TIME_UNITS, "100ns", ("us", "ns"), "s, ms, us, ns, ps")
_SPEED = _Kind(_SPEED_UNITS, "1Gf", ("Gf",), "f for flop/s, with a prefix k, M, G, T")
_NUMBER = _Kind({"": Fraction(1)}, "2", (), "none")


def _magnitude(number: str) -> int | None:
    """floor(log10(number)) read from the digits of a decimal text (None for zero), without converting it: an
    exponent of a million digits is read as a sign and a size. Every unit factor lies between 1e-12 and 2^40."""
    mantissa, _, exponent = number.lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    first = next((i for i, digit in enumerate(whole + fraction) if digit != "0"), None)
    if first is None:
        return None
    digits = exponent.lstrip("+-")
    if len(digits) > 9:
        return -(10**10) if exponent.startswith("-") else 10**10
    return int(exponent or "0") + len(whole) - 1 - first


def _exact_product(number: str, factor: Fraction) -> float:
    """``number * factor`` rounded once; inf when it overflows, 0 when it vanishes. A number beyond the doubles
    may come back into them through its unit (``"1e309ps"`` is 1e297 s): only magnitudes that no unit can bring
    back skip the exact fraction, whose power of ten would otherwise be computed however large."""
    magnitude = _magnitude(number)
    if magnitude is None:
        return 0.0
    if magnitude > 330:  # times at least 1e-12: still past 1.8e308
        return math.inf
    if magnitude < -345:  # times at most 2^40 < 1e13: still below half the smallest subnormal, 2.5e-324
        return 0.0
    try:
        return float(Fraction(number) * factor)
    except OverflowError:  # past the float range
        return math.inf
    except ValueError:  # more digits than Python converts to a fraction: round twice, not once
        return float(number) * float(factor)


def _parse(name: str, value: object, kind: _Kind, allow_zero: bool, in_base_unit: bool = False) -> float:
    if isinstance(value, bool):
        raise TopologyError(f"{name} must be a quantity such as {kind.example!r}, got {shown(value)}")
    if isinstance(value, int | float):
        try:
            result = float(value)
        except OverflowError:  # an int past the float range
            result = math.inf
    elif isinstance(value, str):
        result = _parse_text(name, value, kind, in_base_unit)
    else:
        raise TopologyError(f"{name} must be a quantity such as {kind.example!r}, got {shown(value)}")
    if allow_zero and 0 < result < SMALLEST:
        result = 0.0  # vanishes, as a number below the doubles does (SimGrid cannot read a subnormal)
    check_quantity(result, name, allow_zero, shown(value))
    return result


def _parse_text(name: str, text: str, kind: _Kind, in_base_unit: bool) -> float:
    """The value of ``text``, a number and a unit of ``kind``; without a unit, 0, or (``in_base_unit``) any number
    in the base unit, and any other number refused by :func:`_unit_missing`."""
    match = _NUMBER_UNIT.match(text)
    if not match:
        raise _not_a_quantity(name, text, kind)
    number, unit = match.groups()
    if unit in kind.units:
        return _exact_product(number, kind.units[unit])
    if unit:
        raise _not_a_quantity(name, text, kind)
    if in_base_unit or _magnitude(number) is None:  # no unit: the base unit, or 0, which needs none
        return _exact_product(number, Fraction(1))
    raise _unit_missing(name, number, kind)


def _not_a_quantity(name: str, text: str, kind: _Kind) -> TopologyError:
    known = ", ".join(sorted(u for u in kind.units if u))
    with_unit = f"a number with a unit ({known})" if known else "a number"
    return TopologyError(f"{name} must be {with_unit} such as {kind.example!r}, got {shown(text)}")


def _unit_missing(name: str, number: str, kind: _Kind) -> TopologyError:
    """The error for a number typed without the unit its quantity needs, e.g. ``link_lat 5: give a unit (e.g. 5us
    or 5ns; units s, ms, us, ns, ps)``: 5 s, as SimGrid would read it, is seldom what was meant."""
    typed, example = (number, number) if len(number) <= 20 else (shown(number), "1")
    examples = " or ".join(example + unit for unit in kind.usual_units)
    return TopologyError(f"{name} {typed}: give a unit (e.g. {examples}; units {kind.listed})")


def check_quantity(result: float, name: str, allow_zero: bool, given: str | None = None) -> None:
    """``TopologyError`` unless ``result`` is a value SimGrid reads: finite, >= 0 (> 0 unless ``allow_zero``),
    and 0 or at least :data:`SMALLEST`. ``given`` is how the value was written, for the message."""
    given = repr(result) if given is None else given
    if not math.isfinite(result) or result < 0 or (result == 0 and not allow_zero):
        rule = ">= 0" if allow_zero else "> 0"
        raise TopologyError(f"{name} must be finite and {rule}, got {given}")
    if 0 < result < SMALLEST:
        least = f"{'0 or ' if allow_zero else ''}at least {SMALLEST!r}"
        raise TopologyError(f"{name} must be {least} (the smallest SimGrid reads), got {given}")


def parse_bandwidth(value: object, name: str = "bandwidth") -> float:
    """Return a bandwidth in bytes/s from ``"1GBps"``, ``"10Gbps"``, ``"125MiBps"`` or a number of B/s (a Python
    number; text needs a unit)."""
    return _parse(name, value, _BANDWIDTH, allow_zero=False)


def parse_time(value: object, name: str = "latency") -> float:
    """Return a time in seconds from ``"1us"``, ``"54us"``, ``"0"`` or a number of seconds (a Python number; text
    needs a unit, 0 aside)."""
    return _parse(name, value, _TIME, allow_zero=True)


def parse_speed(value: object, name: str = "speed", *, in_base_unit: bool = False) -> float:
    """Return a host speed in flop/s from ``"1Gf"`` or a number of flop/s (a Python number; text needs a unit, or
    ``in_base_unit``: a file SimGrid reads, where ``"1e9"`` is in flop/s)."""
    return _parse(name, value, _SPEED, allow_zero=False, in_base_unit=in_base_unit)


def parse_number(value: object, name: str = "number") -> float:
    """Return a number > 0 without unit (``"2.5"``, ``"1e3"``), in the same ASCII grammar as the quantities."""
    return _parse(name, value, _NUMBER, allow_zero=False)


def format_bandwidth(bytes_per_second: float) -> str:
    """SimGrid text of a bandwidth, exact to the last bit (``1e9`` -> ``"1000000000.0Bps"``)."""
    return f"{float(bytes_per_second)!r}Bps"


def format_time(seconds: float) -> str:
    """SimGrid text of a time, exact to the last bit (shortest round-trip repr)."""
    return f"{float(seconds)!r}s"


def format_speed(flops: float) -> str:
    """SimGrid text of a host speed, exact to the last bit."""
    return f"{float(flops)!r}f"
