"""The XML writer: structure, exact values, determinism, atomicity (hostfiles: tests/test_placement.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from generators import crossbar
from generators import write_platform
from generators.model import Platform


def test_structure_and_order(tmp_path: Path) -> None:
    path = tmp_path / "p.xml"
    write_platform(crossbar(3, nbl=2.0), path)
    root = etree.parse(str(path)).getroot()
    assert root.tag == "platform" and root.get("version") == "4.1"
    (zone,) = root.findall("zone")
    assert zone.get("routing") == "Full"
    tags = [child.tag for child in zone if isinstance(child.tag, str)]
    order = {"host": 0, "router": 1, "link": 2, "route": 3}
    assert tags == sorted(tags, key=order.__getitem__)
    assert tags.count("host") == 3 and tags.count("link") == 9 and tags.count("route") == 6
    nbl = zone.find("link[@id='host-1_nbl']")
    assert nbl.get("bandwidth") == "2000000000.0Bps"
    assert nbl.get("sharing_policy") == "SHARED"
    route = zone.find("route[@src='host-2'][@dst='host-0']")
    assert route.get("symmetrical") == "NO"
    assert [c.get("id") for c in route] == ["host-2_nbl", "host-2_to_xbar", "xbar_to_host-0", "host-0_nbl"]


def test_values_round_trip_exactly(tmp_path: Path) -> None:
    path = tmp_path / "p.xml"
    bw, lat = 5.2e6 / 3, 1.54e-6 / 7
    write_platform(crossbar(2, link_bw=bw, link_lat=lat), path)
    link = etree.parse(str(path)).getroot().find(".//link[@id='host-0_to_xbar']")
    assert float(link.get("bandwidth").removesuffix("Bps")) == bw
    assert float(link.get("latency").removesuffix("s")) == lat


def test_same_model_same_bytes(tmp_path: Path) -> None:
    write_platform(crossbar(5, nbl=1.0), tmp_path / "a.xml")
    write_platform(crossbar(5, nbl=1.0), tmp_path / "b.xml")
    assert (tmp_path / "a.xml").read_bytes() == (tmp_path / "b.xml").read_bytes()


def test_failure_leaves_no_file(tmp_path: Path) -> None:
    good = crossbar(2)

    def broken_rule(src: str, dst: str) -> list[str]:
        raise RuntimeError("routing exploded")

    broken = Platform("broken", good.hosts, good.routers, good.links, broken_rule)
    with pytest.raises(RuntimeError, match="routing exploded"):
        write_platform(broken, tmp_path / "p.xml")
    assert list(tmp_path.iterdir()) == []


def test_provenance_comment_gives_the_parameters_as_given_and_as_built(tmp_path: Path) -> None:
    write_platform(crossbar(2, link_lat="100ns", nbl="nominal"), tmp_path / "p.xml")
    text = (tmp_path / "p.xml").read_text()
    assert (
        '<!-- topolab platform crossbar-2: family crossbar, parameters as given {"hosts": 2, "link_lat": "100ns", '
        '"nbl": "nominal"}, as built {"cores": 1, "host_speed": 1000000000.0, "hosts": 2, "link_bw": 1000000000.0, '
        '"link_lat": 1e-07, "nbl": 1.0, "shm_bw": null, "shm_lat": 0.0} -->'
    ) in text


@pytest.mark.parametrize(
    ("family", "options", "given"),
    [
        ("slimfly", ["--q", "5"], {"q": "5"}),
        (
            "crossbar",
            ["--hosts", "2", "--shm-bw", "10GBps", "--cores", "2"],
            {"cores": "2", "hosts": "2", "shm_bw": "10GBps"},
        ),
    ],
)
def test_every_path_records_what_the_user_gave(family: str, options: list[str], given: dict, tmp_path: Path) -> None:
    """ "As given" is what the user wrote (issue 42: every platform the CLI or build_platform wrote recorded the
    converted values with every default filled in, the same as "as built")."""
    from generators import build_platform
    from generators import platform_suffix
    from generators.cli import main

    output = tmp_path / f"p{'.so' if family == 'slimfly' else '.xml'}"
    assert main([family, *options, "-o", str(output)]) == 0
    written = output.with_suffix(".params") if output.suffix == ".so" else output
    first = next(line for line in written.read_text().splitlines() if "parameters as given" in line)
    assert f"parameters as given {json.dumps(given, sort_keys=True)}, as built" in first
    platform = build_platform(family, given)
    assert platform.given == given and platform_suffix(platform) == output.suffix
