"""The loader check: every generated platform loads in SimGrid, and SimGrid's routes are the model's."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators import crossbar
from generators import write_platform
from tests.conftest import route_args

# SimGrid adds one link of its own to every platform (``__loopback__``).
SIMGRID_OWN_LINKS = 1


@pytest.mark.parametrize("nbl", [None, 1.0, 2.5])
@pytest.mark.parametrize("hosts", [1, 2, 5, 16])
def test_crossbar_counts_and_every_route(
    tmp_path: Path, load_platform: Callable[..., dict[str, Any]], hosts: int, nbl: float | None
) -> None:
    model = crossbar(hosts, link_bw=1.25e9, link_lat=3e-7, nbl=nbl)
    write_platform(model, tmp_path / "p.xml")
    loaded = load_platform(tmp_path / "p.xml", "--all-routes", "--list-hosts")
    assert loaded["hosts"] == hosts
    assert loaded["links"] == len(model.links) + SIMGRID_OWN_LINKS
    assert loaded["host_names"] == sorted(model.host_names)
    assert len(loaded["routes"]) == hosts * (hosts - 1)
    for route in loaded["routes"]:
        assert route["links"] == model.route(route["src"], route["dst"])
        assert route["latency"] == pytest.approx(model.route_latency(route["src"], route["dst"]), rel=1e-12)


def test_named_routes_in_order(tmp_path: Path, load_platform: Callable[..., dict[str, Any]]) -> None:
    model = crossbar(4, nbl=1.0)
    write_platform(model, tmp_path / "p.xml")
    pairs = [("host-3", "host-0"), ("host-0", "host-3")]
    loaded = load_platform(tmp_path / "p.xml", *route_args(pairs))
    assert [(r["src"], r["dst"]) for r in loaded["routes"]] == pairs
    assert loaded["routes"][0]["links"] == ["host-3_nbl", "host-3_to_xbar", "xbar_to_host-0", "host-0_nbl"]


@pytest.mark.parametrize(
    ("content", "args", "status", "message"),
    [
        (None, [], 1, "does not exist"),
        ("<platform version='4.1'><zone", [], 1, "platform_check: error:"),
        ("GOOD", ["--route", "host-0", "host-9"], 2, "host-9"),
    ],
)
def test_errors_are_clear(
    tmp_path: Path, bin_dir: Path, content: str | None, args: list[str], status: int, message: str
) -> None:
    path = tmp_path / "p.xml"
    if content == "GOOD":
        write_platform(crossbar(2), path)
    elif content is not None:
        path.write_text(content)
    done = subprocess.run([str(bin_dir / "platform_check"), str(path), *args], capture_output=True, text=True)
    assert done.returncode == status
    assert message in done.stderr
    assert done.stdout == ""
