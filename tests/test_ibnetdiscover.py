"""A fabric as ibnetdiscover finds it (``generators.ibnetdiscover``): Debian's ibnetdiscover run on a fabric that
ibsim simulates gives back its cables, ports and names; the platform read from that output, routed by OpenSM,
runs as the family it came from; malformed files are one error naming the line or the cable."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generators.errors import TopologyError
from generators.families import build_platform
from generators.ibnetdiscover import discover
from generators.ibnetdiscover import read_fabric
from generators.opensm import fabric_of
from generators.opensm import run_opensm
from generators.opensm import switch_path

REPO = Path(__file__).resolve().parent.parent
IBSIM_EXAMPLE = Path("/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca")  # Debian's ibsim-utils


def test_ibnetdiscover_gives_back_every_cable_port_and_name() -> None:
    platform = build_platform("fattree", {"radix": 4, "levels": 3})
    fabric = fabric_of(platform)
    found, found_fabric = read_fabric(discover(fabric), "ft.txt", None, 1e-7)
    assert found.host_names == platform.host_names and sorted(found.routers) == sorted(platform.routers)
    assert found_fabric.ports == fabric.ports
    assert {link.ends for link in found.links.values()} == {link.ends for link in platform.links.values()}
    assert {link.bandwidth for link in found.links.values()} == {1e9}  # ibsim's cables are 4xSDR: 4 x 2 Gb/s


def test_a_discovered_fabric_routed_by_ftree_runs_as_the_family_it_came_from(tmp_path: Path, bin_dir: Path) -> None:
    """fattree radix 4, 3 levels -> ibsim -> ibnetdiscover -> file -> OpenSM ftree -> platform: the shift times are
    those of topolab's own D-mod-K zone to the last bit (4 GB/s and 100 ns cables given, as the family's)."""
    fabric_file = tmp_path / "fabric.txt"
    fabric_file.write_text(discover(fabric_of(build_platform("fattree", {"radix": 4, "levels": 3}))))
    command = [sys.executable, "-m", "generators.opensm", "fabric", str(fabric_file), "--link-bw", "4GBps"]
    done = subprocess.run(
        [*command, "--engine", "ftree", "-o", str(tmp_path / "p.xml")], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pairs_routed"] == 240
    family = tmp_path / "f.so"
    made = subprocess.run(
        [sys.executable, "-m", "generators", "fattree", "--radix", "4", "--levels", "3", "-o", str(family)], cwd=REPO
    )
    assert made.returncode == 0
    times = []
    for platform in (tmp_path / "p.xml", family):
        run = subprocess.run(
            [str(REPO / "scripts" / "smpirun-on"), str(platform), "--", str(bin_dir / "shift"), "-S", "1,3,5,8",
             "-R", "1", "-s", "1M", "-i", "1", "-w", "0"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-2000:]
        times.append([json.loads(line)["time_s_max"] for line in run.stdout.splitlines()])
    assert len(times[0]) == 4 and times[0] == times[1]


def test_ibsims_own_example_with_parallel_cables_is_routed_over_both() -> None:
    """Debian's example fabric: two switches joined by two cables (ports 3 and 5), two hosts on each."""
    platform, fabric = read_fabric(IBSIM_EXAMPLE.read_text(), str(IBSIM_EXAMPLE), 1e9, 1e-7)
    assert platform.host_names == ["Hca1", "Hca2", "Hca3", "Hca4"]
    assert {"Switch1_to_Switch2", "Switch1_to_Switch2_2"} <= platform.links.keys()
    tables = run_opensm(fabric, "minhop")
    assert switch_path(fabric, tables, "Hca1", "Hca2") == ["Switch1", "Switch2"]
    assert switch_path(fabric, tables, "Hca1", "Hca3") == ["Switch1"]


def test_speeds_are_width_times_lane_data_rate() -> None:
    text = (
        'Switch 2 "S-1" # "sw"\n[1] "H-1"[1](10) # "a" lid 1 4xQDR\n[2] "H-2"[1](11) # "b" lid 2 12xEDR\n\n'
        'Ca 1 "H-1" # "a"\n[1](10) "S-1"[1] # lid 1 lmc 0 "sw" lid 3 4xQDR\n\n'
        'Ca 1 "H-2" # "b"\n[1](11) "S-1"[2] # lid 2 lmc 0 "sw" lid 3 12xEDR\n'
    )
    platform, _ = read_fabric(text, "f.txt", None, 1e-7)
    assert platform.links["sw_to_a"].bandwidth == 4e9  # 4 x 8 Gb/s
    assert platform.links["b_to_sw"].bandwidth == 12 * 25e9 / 8


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'Switch 2 "S-1"\n[1] "H-1"[1]\n\nHca 1 "H-1"\n',
            "f.txt: S-1 port 1 leads to H-1[1], which does not lead back",
        ),
        (
            'Switch 2 "S-1"\nbogus line\n',
            "f.txt:2: not a line of ibnetdiscover's output or an ibsim net file: 'bogus line'",
        ),
        ("# nothing\n", "f.txt: no switch or channel adapter in the file"),
        (
            'Switch 2 "S-1"\n[1] "H-1"[1]\n[2] "H-1"[2]\n\nHca 2 "H-1"\n[1] "S-1"[1]\n[2] "S-1"[2]\n',
            "f.txt: channel adapter H-1 has 2 cabled ports (one is read)",
        ),
        (
            'Switch 2 "S-1"\n[1] "H-1"[1]\n\nHca 1 "H-1"\n[1] "S-1"[1]\n',
            "no speed for the cable of S-1 port 1: give --link-bw",
        ),
    ],
)
def test_a_malformed_fabric_file_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(TopologyError, match=re.escape(message)):
        read_fabric(text, "f.txt", None, 1e-7)
