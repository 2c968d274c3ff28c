"""Hostile input for the property tests (tests/test_hostile_input.py): every family's parameters, each drawn value
knowing whether it is valid, so that a test can assert "exit 0 if and only if valid".

A value is valid, invalid, on an edge (a unit that brings 1e309 back into the doubles, 2.2e-308), huge (sizes
that the limits of generators/size.py refuse), empty, NaN/inf or malformed. Valid sizes stay small (a few dozen
hosts), so every accepted platform can be written and loaded in SimGrid in a fraction of a second; sizes between
"small" and "huge" are the unit tests' business (tests/test_size.py). The rules encoded here are the
specification, written from the parameters' help and docs, not from the code under test; only the defaults are
read from the families' declarations.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from fractions import Fraction
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from generators.families import FAMILIES
from generators.params import REQUIRED

SMALLEST = sys.float_info.min  # SimGrid reads no subnormal double
INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")
QUANTITY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*")

_SI = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
BANDWIDTH = {f"{p}Bps": Fraction(f) for p, f in _SI.items()} | {f"{p}bps": Fraction(f, 8) for p, f in _SI.items()}
BANDWIDTH |= {f"{p}iBps": Fraction(2 ** (10 * i)) for i, p in enumerate("KMGT", 1)}
TIME = {  # text without a unit is refused, but for 0 (_bare)
    "s": Fraction(1),
    "ms": Fraction(1, 10**3),
    "us": Fraction(1, 10**6),
    "ns": Fraction(1, 10**9),
    "ps": Fraction(1, 10**12),
}
SPEED = {f"{p}f": Fraction(f) for p, f in _SI.items()}
NUMBER = {"": Fraction(1)}

BLANK = st.sampled_from(["", " ", "\t", "  "])
MALFORMED = st.sampled_from(
    [
        "nan",
        "NaN",
        "inf",
        "-inf",
        "Infinity",
        "0x10",
        "1_0",
        "\u0663",
        "\u00b2",
        "3.5.1",
        "--1",
        "1 2",
        "4,",
        "x4",
        "1e",
        "e5",
        ".",
        "+",
        "-",
        "\x00",
        "4\x00",
        "\u200b4",
        "\uff11",
    ]
)


@dataclass(frozen=True)
class Drawn:
    """One drawn value: its text on the command line, whether it is valid alone, and its meaning when it is."""

    text: str
    ok: bool
    value: Any = None


@dataclass(frozen=True)
class Domain:
    """The values of one parameter: ``good`` ones (valid, but for the rules between parameters) and ``bad`` ones."""

    good: st.SearchStrategy[Drawn]
    bad: st.SearchStrategy[Drawn]

    @property
    def fault(self) -> st.SearchStrategy[Drawn]:
        """Bad or blank: an empty value, the commonest slip, is never the default."""
        return st.one_of(self.bad, BLANK.map(lambda t: Drawn(t, False)))

    @property
    def any(self) -> st.SearchStrategy[Drawn]:
        return st.one_of(self.good, self.fault)


def _garbage(valid: Callable[[str], bool]) -> st.SearchStrategy[Drawn]:
    """Blank, malformed or random text, none of it valid by ``valid``."""
    text = st.one_of(BLANK, MALFORMED, st.text(max_size=12), st.text("0123456789+-.eExX, ", max_size=8))
    return text.filter(lambda t: not valid(t)).map(lambda t: Drawn(t, False))


def _spellings(text: str) -> st.SearchStrategy[str]:
    return st.sampled_from([text, f" {text}", f"{text} ", f"\t{text}"])


def count(lo: int, hi: int, rule: Callable[[int], bool] | None = None) -> Domain:
    """An integer parameter whose good small values are ``lo .. hi`` (those ``rule`` refuses are bad); huge ones are
    refused by the size limits (the most frequent bad values: the issue's point); below 1, too many digits, blank or
    malformed are invalid."""
    spelled = st.integers(lo, hi).flatmap(
        lambda n: st.sampled_from([str(n), f"+{n}", f"0{n}", f" {n}\t"]).map(
            lambda t: Drawn(t, rule is None or rule(n), n)
        )
    )
    low = st.integers(-3, lo - 1).map(lambda n: Drawn(str(n), False))
    huge = st.one_of(
        st.integers(10**7, 10**30), st.sampled_from([10**9, 99999999999999999999999, 2**63, 10**4299])
    ).map(lambda n: Drawn(str(n), False))
    digits = st.just(Drawn("1" + "0" * 5000, False))
    garbage = _garbage(lambda t: INTEGER.fullmatch(t) is not None)
    refused = [spelled.filter(lambda d: not d.ok)] if rule is not None else []
    return Domain(spelled.filter(lambda d: d.ok), st.one_of(huge, huge, huge, low, digits, garbage, *refused))


def _exact(mantissa: str, units: Mapping[str, Fraction], unit: str, allow_zero: bool) -> Drawn:
    """The value of ``mantissa`` in ``unit`` as SimGrid will read it: exact, rounded once; a latency below the
    doubles vanishes to 0, a bandwidth or speed there is invalid, and so is anything past them."""
    exact = Fraction(mantissa) * units[unit]
    try:
        value = float(exact)
    except OverflowError:
        return Drawn(mantissa + unit, False)
    if value < SMALLEST:
        return Drawn(mantissa + unit, allow_zero, 0.0)
    return Drawn(mantissa + unit, True, value)


def _unitless(
    mantissa: st.SearchStrategy[str], units: Mapping[str, Fraction], allow_zero: bool
) -> tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]:
    """Numbers without a unit where ``units`` need one (``NUMBER`` needs none), as (good, bad): refused, as nothing
    says which unit was meant, but for 0, which needs none (valid where 0 is)."""
    if "" in units:
        return st.nothing(), st.nothing()
    zero = st.sampled_from(["0", "0.0", "000", "0e5", ".0", " 0 "]).map(lambda t: Drawn(t, allow_zero, 0.0))
    number = st.one_of(mantissa.filter(lambda m: Fraction(m) != 0), st.sampled_from(["5", "100", "1e-7", "2.5"]))
    refused = st.one_of(number.map(lambda t: Drawn(t, False)), *([] if allow_zero else [zero]))
    return (zero if allow_zero else st.nothing()), refused


def quantity(units: Mapping[str, Fraction], allow_zero: bool = False) -> Domain:
    """A number with a unit: ordinary values, edges of the doubles (exponents up to +-340, which a unit may bring
    back), zero, negative, without a unit, wrong units, NaN/inf and malformed text."""
    whole = st.one_of(st.just(""), st.integers(0, 10**6).map(str), st.just("0" * 30 + "1"))
    fraction = st.one_of(st.just(""), st.integers(0, 10**6).map(lambda n: "." + str(n).zfill(3)))
    point = st.tuples(whole, fraction).map("".join).filter(lambda m: m != "")
    exponent = st.one_of(st.none(), st.integers(-340, 340), st.integers(-20, 20)).map(
        lambda e: "" if e is None else f"e{e}"
    )
    mantissa = st.tuples(point, exponent, st.sampled_from(["e", "E"])).map(lambda m: m[0] + m[1].replace("e", m[2]))
    exact = st.tuples(mantissa, st.sampled_from(sorted(units))).map(lambda mu: _exact(mu[0], units, mu[1], allow_zero))
    typical = st.sampled_from(["1", "2.5", "100", "0.125", "3e2", "1.54"]).flatmap(
        lambda n: st.sampled_from(sorted(units)).map(lambda u: _exact(n, units, u, allow_zero))
    )
    unitless_good, unitless_bad = _unitless(mantissa, units, allow_zero)
    wrong = st.sampled_from(["Hz", "GHz", "B", "bit", "s", "Bps", "f", "gbps", "m", "us", "Gf"]).filter(
        lambda u: u not in units
    )
    bad = st.one_of(
        exact.filter(lambda d: not d.ok),
        unitless_bad,
        st.sampled_from(["-1", "-0.5", "1e999999", "+1"]).flatmap(
            lambda n: st.sampled_from(sorted(units)).map(lambda u: Drawn(n + u, False))
        ),
        wrong.map(lambda u: Drawn("1" + u, False)),
        _garbage(lambda t: QUANTITY.fullmatch(t) is not None),
    )
    return Domain(st.one_of(typical, exact.filter(lambda d: d.ok), unitless_good), bad)


def words(*names: str) -> Domain:
    """One of ``names`` in any case and spacing, or a word that is not."""
    valid = {n.lower() for n in names}
    good = st.sampled_from(sorted(valid)).flatmap(
        lambda n: (
            st.sampled_from([n, n.upper(), n.capitalize()])
            .flatmap(_spellings)
            .map(lambda t: Drawn(t, True, t.strip().lower()))
        )
    )
    return Domain(good, _garbage(lambda t: t.strip().lower() in valid))


def _reserving(inner: st.SearchStrategy[Drawn], *reserved: str) -> st.SearchStrategy[Drawn]:
    """``inner`` without the invalid values that happen to spell one of ``reserved`` (valid where they are)."""
    return inner.filter(lambda d: d.text.strip().lower() not in reserved)


def optional(inner: Domain) -> Domain:
    """``none`` (any case) for None, or ``inner``; an empty value is not ``none``."""
    none = st.sampled_from(["none", "None", "NONE", " none "]).map(lambda t: Drawn(t, True, None))
    return Domain(st.one_of(none, inner.good), _reserving(inner.bad, "none"))


def nbl() -> Domain:
    """A node-bandwidth limit: none, nominal or a number of link bandwidths > 0."""
    nominal = st.sampled_from(["nominal", "Nominal", " NOMINAL"]).map(lambda t: Drawn(t, True, 1.0))
    number = quantity(NUMBER)
    return optional(Domain(st.one_of(nominal, number.good), _reserving(number.bad, "nominal")))


FLAG_WORDS = {"1": True, "0": False, "true": True, "false": False, "yes": True, "no": False}


def flags() -> Domain:
    """Comma-separated wrap-around flags, good when each is a flag word (how many: the family's rule)."""
    word = st.sampled_from(sorted(FLAG_WORDS)).flatmap(lambda w: st.sampled_from([w, w.upper(), f" {w}"]))
    listed = st.lists(word, min_size=1, max_size=4).map(
        lambda ws: Drawn(",".join(ws), True, tuple(FLAG_WORDS[w.strip().lower()] for w in ws))
    )
    return Domain(
        listed, st.sampled_from(["maybe", "2", "1,,0", ",", "yes;no", "on", ""]).map(lambda t: Drawn(t, False))
    )


def tuple_of(item: Domain, lengths: tuple[int, int], sep: str = "x", good: tuple[int, int] | None = None) -> Domain:
    """Values joined by ``sep`` (or a comma): good when every item is (how many: the family's rule; ``good``: how
    many good ones have, ``lengths`` by default)."""

    def joined(items: st.SearchStrategy[Drawn], sizes: tuple[int, int]) -> st.SearchStrategy[Drawn]:
        items = items.filter(lambda d: "x" not in d.text and "," not in d.text)  # a bad item must not split in two
        return st.tuples(st.lists(items, min_size=sizes[0], max_size=sizes[1]), st.sampled_from([sep, ","])).map(
            lambda t: Drawn(t[1].join(d.text for d in t[0]), all(d.ok for d in t[0]), tuple(d.value for d in t[0]))
        )

    bad = st.sampled_from(["", ",", "4x", "x4", "4,,4", "4xx4", "4x4x"]).map(lambda t: Drawn(t, False))
    return Domain(joined(item.good, good or lengths), st.one_of(joined(item.any, lengths), bad))


@dataclass
class Case:
    """A drawn family request: its command-line parameters, and what the oracle says of it."""

    family: str
    argv: list[str]
    ok: bool
    hosts: int = 0
    compiled: bool = False
    values: dict[str, Any] = field(default_factory=dict)


Rule = Callable[[dict[str, Any]], tuple[bool, int, bool]]
"""From every parameter's meaning (defaults filled in): (valid together, number of hosts, compiled zone)."""


def family_case(
    family: str,
    params: Mapping[str, Domain],
    rule: Rule,
    always: frozenset[str] | set[str] = frozenset(),
    slow: Callable[[dict[str, Any]], bool] = lambda values: False,
) -> Callable[[int], st.SearchStrategy[Case]]:
    """Each parameter drawn or left to its default (required ones and ``always`` always drawn); valid when every
    value is and ``rule`` agrees. Valid cases that ``slow`` says are too long to write and load are not drawn.

    ``faults``: how many parameters take a bad or blank value, the others good values only (which the rules may
    still refuse); -1 for any value of every parameter. One fault among good values is what catches an invalid
    value accepted.
    """
    declared = {p.name: p for p in FAMILIES[family].params}

    @st.composite
    def case(draw: st.DrawFn, faults: int) -> Case:
        argv, ok, values = [family], True, {}
        order = draw(st.permutations(sorted(params)))
        faulty = set(order if faults < 0 else order[:faults])
        for name, domain in params.items():
            param = declared[name]
            given = param.default is REQUIRED or name in always or name in faulty
            strategy = (domain.any if faults < 0 else domain.fault) if name in faulty else domain.good
            drawn = draw(strategy if given else st.one_of(st.none(), strategy))
            if drawn is None:
                values[name] = param.convert(param.default, name)  # the declared default
                continue
            argv += [f"{param.option}={drawn.text}"]
            ok = ok and drawn.ok
            values[name] = drawn.value
        if not ok:
            return Case(family, argv, False, values=values)
        valid, hosts, compiled = rule(values)
        valid = valid and ("cores" not in values or node_ok(values))
        assume(not (valid and slow(values)))
        return Case(family, argv, valid, hosts, compiled, values)

    return case


def limiter_ok(values: Mapping[str, Any], bandwidth: str = "link_bw") -> bool:
    """The limiter's bandwidth, nbl x the link's, is a double SimGrid reads (the product may overflow or vanish)."""
    if values["nbl"] is None:
        return True
    product = values["nbl"] * values[bandwidth]
    return math.isfinite(product) and product >= SMALLEST


MAX_CORES = 2**31 - 1  # SimGrid reads a host's core count as a C int


def cores() -> Domain:
    """Cores per host: 1 .. 2^31 - 1 (a core count is no size: a huge one builds nothing more), and beyond that,
    below 1, blank or malformed, invalid."""
    most = st.just(Drawn(str(MAX_CORES), True, MAX_CORES))
    beyond = st.one_of(st.integers(MAX_CORES + 1, 10**30), st.just(10**4299)).map(lambda n: Drawn(str(n), False))
    low = st.integers(-3, 0).map(lambda n: Drawn(str(n), False))
    garbage = _garbage(lambda t: INTEGER.fullmatch(t) is not None)
    return Domain(st.one_of(count(1, 64).good, most), st.one_of(beyond, low, garbage))


def node_ok(values: Mapping[str, Any]) -> bool:
    """The node values go together: shm_lat only with shm_bw (a latency of 0 is no latency), and a host's total speed,
    cores x host_speed, is a double SimGrid reads."""
    if values["shm_bw"] is None and values["shm_lat"] != 0:
        return False
    return math.isfinite(values["cores"] * values["host_speed"])


def common_params(*, link: str = "link_bw") -> dict[str, Domain]:
    """The domains of the parameters every family shares (the link, the NBL limiter, the node values)."""
    return {
        link: quantity(BANDWIDTH),
        "link_lat": quantity(TIME, allow_zero=True),
        "nbl": nbl(),
        "host_speed": quantity(SPEED),
        "cores": cores(),
        "shm_bw": optional(quantity(BANDWIDTH)),
        "shm_lat": quantity(TIME, allow_zero=True),
    }
