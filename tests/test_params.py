"""A family is declared once (``generators.params``): its Params hold the defaults (the builder's own signature has
none), Python callers and the CLI get the same checked values and so the same platform, and the declaration writes
the builder's Parameters docs."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from generators import build_platform
from generators import mesh
from generators import torus
from generators.families import FAMILIES
from generators.node import APPLIED
from generators.params import REQUIRED
from generators.subnet import SUBNET_APPLIED
from generators.topologies.mlfm import mlfm


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_defaults_live_in_the_params_only(family: str) -> None:
    spec = FAMILIES[family]
    assert spec.build.declared == spec.params, f"{family}: the builder checks other Params than the family declares"
    inner = inspect.signature(spec.build.__wrapped__).parameters
    restated = [name for name, p in inner.items() if p.default is not inspect.Parameter.empty]
    assert not restated, f"{family}: the builder restates the defaults of {restated}"
    applied = APPLIED + SUBNET_APPLIED  # the node's values and the subnet manager's are applied after the build
    built = [param.name for param in spec.params if param.name not in applied]
    assert list(inner) == built, f"{family}: builder and Params disagree on order"
    public = inspect.signature(spec.build).parameters
    for param in spec.params:
        expected = inspect.Parameter.empty if param.default is REQUIRED else param.default
        assert public[param.name].default == expected


def _value(spec: Any, name: str, text: object) -> object:
    """The Python value of a parameter given as text (``"3x3"`` -> ``(3, 3)``)."""
    (param,) = [p for p in spec.params if p.name == name]
    return param.convert(text, name)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_python_callers_get_the_checked_defaults(family: str) -> None:
    """Every default goes through its converter, whoever calls: no raw ``"100ns"`` reaches a builder."""
    spec = FAMILIES[family]
    smallest = {key: _value(spec, key, text) for key, text in spec.smallest.items()}  # as a Python caller gives it
    by_python = spec.build(**smallest)
    by_text = build_platform(family, {key: _text(value) for key, value in smallest.items()})
    assert by_python.params == by_text.params
    assert by_python.links == by_text.links
    for param in spec.params:
        if param.name not in smallest:
            assert by_python.params[param.name] == param.convert(param.default, param.name)


def _text(value: object) -> str:
    return "x".join(map(str, value)) if isinstance(value, tuple) else str(value)


def test_a_torus_from_python_and_from_the_cli_has_the_same_latency() -> None:
    """torus((3, 3)) wrote 1e-07 s and ``--dims 3x3`` 1.0000000000000001e-07 s (100 * 1e-9) before units were exact."""
    link = "host-0_to_host-1"
    assert torus((3, 3)).links[link].latency == build_platform("torus", {"dims": "3x3"}).links[link].latency == 1e-7
    assert mesh(2, 2).links[link].latency == 1e-7


def test_mlfm_spines_follow_the_link_bandwidth_both_ways() -> None:
    """mlfm(3, link_bw=5e9) and ``--d 3 --link-bw 5GBps`` build the same spines (the CLI used to keep 4 GB/s)."""
    by_function = mlfm(3, link_bw=5e9)
    by_text = build_platform("mlfm", {"d": 3, "link_bw": "5GBps"})
    spine = next(name for name in by_function.links if "spine" in name)
    assert by_text.links[spine].bandwidth == by_function.links[spine].bandwidth == 5e9


def test_python_callers_are_checked_like_the_cli() -> None:
    with pytest.raises(TypeError, match=r"torus\(\): .*its parameters are dims, wrap"):
        torus((3, 3), bandwidth=5)
    with pytest.raises(Exception, match="link_bw must be"):
        torus((3, 3), link_bw=-1)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_declaration_writes_the_builders_parameters_docs(family: str) -> None:
    """One declaration: every Param is in the builder's Parameters section, with what it accepts and its default."""
    spec = FAMILIES[family]
    assert spec.name == spec.build.__name__  # one naming convention: the family is its builder's name
    section = spec.build.__doc__.split("    Parameters\n    ----------\n")[1]
    for param in spec.params:
        default = "" if param.default is REQUIRED else f", default {param.default!r}"
        assert f"    {param.name} : {param.kind}{default}\n        {param.help}.\n" in section
        assert param.kind != param.convert.__name__, f"{family}.{param.name}: its converter says not what it accepts"
