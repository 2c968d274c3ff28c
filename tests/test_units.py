"""Quantities with SimGrid units parse to the float nearest the decimal value written, whatever the unit."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from generators import build_platform
from generators.errors import TopologyError
from generators.units import parse_bandwidth
from generators.units import parse_speed
from generators.units import parse_time


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("100ns", 1e-7),  # 100 * 1e-9 is 1.0000000000000001e-07
        ("1.54us", 1.54e-6),  # 1.54 * 1e-6 is 1.5399999999999999e-06
        ("1.7us", 1.7e-6),
        ("54us", 54e-6),
        ("0.3ms", 3e-4),
        ("250ps", 2.5e-10),
        ("0", 0.0),  # the one number that needs no unit (tests/test_units_bare_numbers.py)
        ("2.5s", 2.5),
    ],
)
def test_times_are_the_nearest_float(text: str, value: float) -> None:
    assert parse_time(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2GBps", 2e9),
        ("117685305.6Bps", 117685305.6),
        ("5.194805194805195MBps", 5194805.194805195),
        ("10Gbps", 1.25e9),
        ("1.1Gbps", 1.375e8),
        ("125MiBps", 125 * 2**20),
        ("0.1GiBps", float(Fraction("0.1") * 2**30)),
    ],
)
def test_bandwidths_are_the_nearest_float(text: str, value: float) -> None:
    assert parse_bandwidth(text) == value


def test_speeds_are_the_nearest_float() -> None:
    assert parse_speed("1.7Gf") == 1.7e9 and parse_speed("0.3Tf") == 3e11


@pytest.mark.parametrize("digits", ["1.1", "0.7", "3.3", "12.34", "9.99", "1e-3", "123456789.123"])
@pytest.mark.parametrize(
    ("unit", "scale"), [("ns", Fraction(1, 10**9)), ("us", Fraction(1, 10**6)), ("ms", Fraction(1, 1000))]
)
def test_every_time_unit_is_exact(digits: str, unit: str, scale: Fraction) -> None:
    assert parse_time(digits + unit) == float(Fraction(digits) * scale)


def test_the_generator_and_the_cli_spelling_write_the_same_latency() -> None:
    """torus((3, 3)) and ``--dims 3x3`` (whose default is the text "100ns") give the same link latency."""
    from generators.topologies.torus import torus

    by_function = torus((3, 3)).links["host-0_to_host-1"].latency
    by_text = build_platform("torus", {"dims": "3x3"}).links["host-0_to_host-1"].latency
    assert by_function == by_text == 1e-7


@pytest.mark.parametrize("text", ["1e999GBps", "nanGBps", "-1GBps", "GBps", "1 GB ps"])
def test_bad_bandwidths_are_refused(text: str) -> None:
    with pytest.raises(TopologyError):
        parse_bandwidth(text)


def test_huge_values_are_refused_not_infinite() -> None:
    with pytest.raises(TopologyError, match="finite"):
        parse_time("1e400s")
    assert math.isfinite(parse_time("1e300s"))


@pytest.mark.parametrize("text", ["1e9999999s", "1" * 5000 + "s"])
def test_absurd_numbers_are_refused_at_once(text: str) -> None:
    with pytest.raises(TopologyError, match="finite"):
        parse_time(text)


def test_a_unit_that_overflows_is_refused() -> None:
    with pytest.raises(TopologyError, match="finite"):
        parse_bandwidth("1e308TBps")


def test_vanishing_numbers_are_zero() -> None:
    assert parse_time("1e-9999999s") == 0.0
    with pytest.raises(TopologyError, match="> 0"):
        parse_bandwidth("1e-9999999GBps")
