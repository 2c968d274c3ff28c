"""Until each family declares its defaults once (issue 16), both places must say the same: the builder's signature
(what Python callers get) and the family's Params (what the CLI, study files and sweeps get)."""

from __future__ import annotations

import inspect

import pytest

from generators import build_platform
from generators.families import FAMILIES
from generators.mlfm import mlfm
from generators.params import REQUIRED, Param


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_signature_and_the_params_give_the_same_defaults(family: str) -> None:
    spec = FAMILIES[family]
    signature = inspect.signature(spec.build).parameters
    for param in spec.params:
        assert param.name in signature, f"{family}: {param.name} is declared but the builder does not take it"
        default = signature[param.name].default
        if param.default is REQUIRED:
            assert default is inspect.Parameter.empty, f"{family}: {param.name} is required on the CLI only"
            continue
        assert default is not inspect.Parameter.empty, f"{family}: {param.name} is required in Python only"

        assert _typed(param, default) == _typed(param, param.default), (
            f"{family}: {param.name} defaults to {default!r} in the builder but to {param.default!r} in its Param"
        )


def _typed(param: Param, value: object) -> object:
    return None if value is None else param.convert(value, param.name)


def test_mlfm_spines_follow_the_link_bandwidth_both_ways() -> None:
    """mlfm(3, link_bw=5e9) and ``--d 3 --link-bw 5GBps`` build the same spines (the CLI used to keep 4 GB/s)."""
    by_function = mlfm(3, link_bw=5e9)
    by_text = build_platform("mlfm", {"d": 3, "link_bw": "5GBps"})
    spine = next(name for name in by_function.links if "spine" in name)
    assert by_text.links[spine].bandwidth == by_function.links[spine].bandwidth == 5e9
