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
from fractions import Fraction

from generators.errors import TopologyError

__all__ = ["format_bandwidth", "format_speed", "format_time", "parse_bandwidth", "parse_speed", "parse_time"]

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


def _exact_product(number: str, factor: Fraction) -> float:
    """``number * factor`` rounded once; inf when it overflows (huge exponents never reach the fraction)."""
    approximate = float(number)
    if not math.isfinite(approximate) or approximate == 0.0:
        return approximate
    try:
        return float(Fraction(number) * factor)
    except (OverflowError, ValueError):  # past the float range, or more digits than Python converts
        return math.inf


def _parse(name: str, value: object, units: dict[str, Fraction], example: str, allow_zero: bool) -> float:
    if isinstance(value, bool):
        raise TopologyError(f"{name} must be a quantity such as {example!r}, got {value!r}")
    if isinstance(value, int | float):
        result = float(value)
    elif isinstance(value, str):
        match = _NUMBER_UNIT.match(value)
        if not match or match.group(2) not in units:
            known = ", ".join(sorted(u for u in units if u))
            raise TopologyError(f"{name} must be a number with a unit ({known}) such as {example!r}, got {value!r}")
        result = _exact_product(match.group(1), units[match.group(2)])
    else:
        raise TopologyError(f"{name} must be a quantity such as {example!r}, got {value!r}")
    if not math.isfinite(result) or result < 0 or (result == 0 and not allow_zero):
        rule = ">= 0" if allow_zero else "> 0"
        raise TopologyError(f"{name} must be finite and {rule}, got {value!r}")
    return result


def parse_bandwidth(value: object, name: str = "bandwidth") -> float:
    """Return a bandwidth in bytes/s from ``"1GBps"``, ``"10Gbps"``, ``"125MiBps"`` or a number of B/s."""
    return _parse(name, value, _BANDWIDTH_UNITS, "1GBps", allow_zero=False)


def parse_time(value: object, name: str = "latency") -> float:
    """Return a time in seconds from ``"1us"``, ``"54us"``, ``"0"`` or a number of seconds."""
    return _parse(name, value, _TIME_UNITS, "1us", allow_zero=True)


def parse_speed(value: object, name: str = "speed") -> float:
    """Return a host speed in flop/s from ``"1Gf"`` or a number of flop/s."""
    return _parse(name, value, _SPEED_UNITS, "1Gf", allow_zero=False)


def format_bandwidth(bytes_per_second: float) -> str:
    """SimGrid text of a bandwidth, exact to the last bit (``1e9`` -> ``"1000000000.0Bps"``)."""
    return f"{float(bytes_per_second)!r}Bps"


def format_time(seconds: float) -> str:
    """SimGrid text of a time, exact to the last bit (shortest round-trip repr)."""
    return f"{float(seconds)!r}s"


def format_speed(flops: float) -> str:
    """SimGrid text of a host speed, exact to the last bit."""
    return f"{float(flops)!r}f"
