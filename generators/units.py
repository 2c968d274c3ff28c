"""Parsing and formatting of the physical quantities written into SimGrid platforms.

Internally topolab keeps bandwidths in bytes per second, latencies in seconds and host speeds
in flop/s. Users may write them with SimGrid's units (``"1GBps"``, ``"10Gbps"``, ``"1.54us"``).
"""

from __future__ import annotations

import math
import re

from generators.errors import TopologyError

__all__ = ["format_bandwidth", "format_speed", "format_time", "parse_bandwidth", "parse_speed", "parse_time"]

_NUMBER_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}

_BANDWIDTH_UNITS: dict[str, float] = {}
for _prefix, _factor in (_DECIMAL | _BINARY).items():
    _BANDWIDTH_UNITS[_prefix + "Bps"] = _factor
    _BANDWIDTH_UNITS[_prefix + "bps"] = _factor / 8.0

_TIME_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}
_SPEED_UNITS = {p + "f": f for p, f in _DECIMAL.items()} | {"": 1.0}


def _parse(name: str, value: object, units: dict[str, float], example: str, allow_zero: bool) -> float:
    if isinstance(value, bool):
        raise TopologyError(f"{name} must be a quantity such as {example!r}, got {value!r}")
    if isinstance(value, int | float):
        number, factor = float(value), 1.0
    elif isinstance(value, str):
        match = _NUMBER_UNIT.match(value)
        if not match or match.group(2) not in units:
            known = ", ".join(sorted(u for u in units if u))
            raise TopologyError(f"{name} must be a number with a unit ({known}) such as {example!r}, got {value!r}")
        number, factor = float(match.group(1)), units[match.group(2)]
    else:
        raise TopologyError(f"{name} must be a quantity such as {example!r}, got {value!r}")
    result = number * factor
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
