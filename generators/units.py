"""Parsing and formatting of the physical quantities written into SimGrid platforms.

Internally topolab keeps bandwidths in bytes per second, latencies in seconds and host speeds
in flop/s. Users may write them with SimGrid's units (``"1GBps"``, ``"10Gbps"``, ``"1.54us"``).
A value written with a unit is the float nearest to the decimal quantity it spells: the number and the
unit's factor are multiplied exactly (fractions), then rounded once, so ``"100ns"`` is ``1e-07`` and not
``100 * 1e-9 = 1.0000000000000001e-07``, and the same quantity written two ways is the same float.
"""

from __future__ import annotations

import math
import re
import sys
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

_TIME_UNITS = {"": Fraction(1), "s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6),
               "ns": Fraction(1, 10**9), "ps": Fraction(1, 10**12)}  # fmt: skip
_SPEED_UNITS = {p + "f": f for p, f in _DECIMAL.items()} | {"": Fraction(1)}


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


def _parse(name: str, value: object, units: dict[str, Fraction], example: str, allow_zero: bool) -> float:
    if isinstance(value, bool):
        raise TopologyError(f"{name} must be a quantity such as {example!r}, got {shown(value)}")
    if isinstance(value, int | float):
        try:
            result = float(value)
        except OverflowError:  # an int past the float range
            result = math.inf
    elif isinstance(value, str):
        match = _NUMBER_UNIT.match(value)
        if not match or match.group(2) not in units:
            known = ", ".join(sorted(u for u in units if u))
            with_unit = f"a number with a unit ({known})" if known else "a number"
            raise TopologyError(f"{name} must be {with_unit} such as {example!r}, got {shown(value)}")
        result = _exact_product(match.group(1), units[match.group(2)])
    else:
        raise TopologyError(f"{name} must be a quantity such as {example!r}, got {shown(value)}")
    if allow_zero and 0 < result < SMALLEST:
        result = 0.0  # vanishes, as a number below the doubles does (SimGrid cannot read a subnormal)
    check_quantity(result, name, allow_zero, shown(value))
    return result


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
    """Return a bandwidth in bytes/s from ``"1GBps"``, ``"10Gbps"``, ``"125MiBps"`` or a number of B/s."""
    return _parse(name, value, _BANDWIDTH_UNITS, "1GBps", allow_zero=False)


def parse_time(value: object, name: str = "latency") -> float:
    """Return a time in seconds from ``"1us"``, ``"54us"``, ``"0"`` or a number of seconds."""
    return _parse(name, value, _TIME_UNITS, "1us", allow_zero=True)


def parse_speed(value: object, name: str = "speed") -> float:
    """Return a host speed in flop/s from ``"1Gf"`` or a number of flop/s."""
    return _parse(name, value, _SPEED_UNITS, "1Gf", allow_zero=False)


def parse_number(value: object, name: str = "number") -> float:
    """Return a number > 0 without unit (``"2.5"``, ``"1e3"``), in the same ASCII grammar as the quantities."""
    return _parse(name, value, {"": Fraction(1)}, "2", allow_zero=False)


def format_bandwidth(bytes_per_second: float) -> str:
    """SimGrid text of a bandwidth, exact to the last bit (``1e9`` -> ``"1000000000.0Bps"``)."""
    return f"{float(bytes_per_second)!r}Bps"


def format_time(seconds: float) -> str:
    """SimGrid text of a time, exact to the last bit (shortest round-trip repr)."""
    return f"{float(seconds)!r}s"


def format_speed(flops: float) -> str:
    """SimGrid text of a host speed, exact to the last bit."""
    return f"{float(flops)!r}f"
