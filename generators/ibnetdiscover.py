"""A real fabric as its cables were found: ``ibnetdiscover`` output (or an ibsim net file) as a topolab platform.

On a cluster, ``ibnetdiscover > fabric.txt`` lists every switch and channel adapter and, port by port, what is
cabled to it and at which speed. :func:`read_fabric` turns such a file into a :class:`~generators.model.Platform`
(hosts: the channel adapters; routers: the switches; two links per cable) and the
:class:`~generators.opensm.Fabric` that OpenSM is run on, with the file's own port numbers, so that its forwarding
tables apply to the platform's cables; the routes come from OpenSM (``python -m generators.opensm fabric FILE
--engine ENGINE``). :func:`discover` runs ``ibnetdiscover`` (Debian's ``infiniband-diags``) on a fabric simulated by
ibsim, which is how the tests get a real tool's output.

Names: a node is called by its description (``# "node042 mlx5_0"``, spaces made ``-``) when every node's is unique,
else by the file's id (``S-0002c90300a1b2c3``, ``H-...``); hosts and switches are listed in natural order of their
names (node2 before node10: ranks fill the hosts in that order by default). A cable's links are ``<a>_to_<b>``, and
``<a>_to_<b>_<k>`` for the k-th (k >= 2) of parallel cables, by port. Bandwidth per direction: the link's width
times its lanes' data rate (InfiniBand Architecture Specification, Vol. 2: 2, 4, 8, 10, 13.64, 25, 50, 100 Gb/s per
lane from SDR to NDR, after line coding; 4xQDR: 4 GB/s, the fat tree family's figure), unless ``link_bw`` is given;
latency ``link_lat``. A channel adapter with more than one cabled port is refused (multi-rail nodes: not yet).
"""

from __future__ import annotations

import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from generators.errors import TopologyError
from generators.faults import NO_FAULTS
from generators.faults import Faults
from generators.model import Host
from generators.model import Link
from generators.model import Platform
from generators.opensm import Fabric
from generators.opensm import OpenSMError
from generators.opensm import build_fabric
from generators.opensm import simulated

__all__ = ["LANE_GBPS", "discover", "read_fabric"]

LANE_GBPS = {"SDR": 2.0, "DDR": 4.0, "QDR": 8.0, "FDR10": 10.0, "FDR": 13.64, "EDR": 25.0, "HDR": 50.0, "NDR": 100.0}
"""Data rate of one lane in Gb/s, after line coding (InfiniBand Architecture Specification, Vol. 2)."""

_NODE = re.compile(r'^(Switch|Hca|Ca)\s+(\d+)\s+"([^"]+)"(?:\s*#\s*"([^"]*)")?')
_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([^"]+)"\[(\d+)\](?:\([0-9a-fA-F]+\))?(.*)$')
_SPEED = re.compile(r"\b(\d+)x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR)\b")


@dataclass(frozen=True)
class _Node:
    kind: str  # "switch" or "host"
    ident: str
    description: str
    ports: dict[int, tuple[str, int, float | None]]  # port -> (remote id, remote port, bandwidth in B/s or None)


def _parse(text: str, where: str) -> dict[str, _Node]:
    nodes: dict[str, _Node] = {}
    node: _Node | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or re.match(r"^(vendid|devid|sysimgguid|switchguid|caguid|\w+guid)=", line):
            continue
        if match := _NODE.match(line):
            kind = "switch" if match[1] == "Switch" else "host"
            if match[3] in nodes:
                raise TopologyError(f"{where}:{number}: node {match[3]!r} is listed twice")
            node = nodes[match[3]] = _Node(kind, match[3], match[4] or match[3], {})
        elif (match := _PORT.match(line)) and node is not None:
            speed = _SPEED.search(match[4])
            bandwidth = int(speed[1]) * LANE_GBPS[speed[2]] * 1e9 / 8 if speed else None
            node.ports[int(match[1])] = (match[2], int(match[3]), bandwidth)
        else:
            raise TopologyError(
                f"{where}:{number}: not a line of ibnetdiscover's output or an ibsim net file: {line!r}"
            )
    if not nodes:
        raise TopologyError(f"{where}: no switch or channel adapter in the file")
    return nodes


def natural(name: str) -> list[str | int]:
    """Sort key that puts node2 before node10: the hosts' order, in which ranks are placed by default."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _names(nodes: dict[str, _Node]) -> dict[str, str]:
    """Each node's name: its description, spaces made ``-``, when all are unique; else its id."""
    described = {ident: re.sub(r"\s+", "-", node.description.strip()) for ident, node in nodes.items()}
    if len(set(described.values())) == len(described) and all(described.values()):
        return described
    return {ident: ident for ident in nodes}


def read_fabric(
    text: str, where: str, link_bw: float | None, link_lat: float, faults: Faults = NO_FAULTS
) -> tuple[Platform, Fabric]:
    """The platform and the fabric (the file's ports, but ``faults``, given by names) of an ``ibnetdiscover`` output
    or ibsim net file; every cable must be listed from both ends alike."""
    nodes = _parse(text, where)
    name = _names(nodes)
    for ident, node in nodes.items():
        for port, (remote, back, _) in node.ports.items():
            if remote not in nodes or nodes[remote].ports.get(back, (None, None))[:2] != (ident, port):
                raise TopologyError(
                    f"{where}: {name[ident]} port {port} leads to {remote}[{back}], which does not lead back"
                )
        if node.kind == "host" and len(node.ports) != 1:
            raise TopologyError(
                f"{where}: channel adapter {name[ident]} has {len(node.ports)} cabled ports (one is read)"
            )
    links: dict[str, Link] = {}
    by_port: dict[tuple[str, int], str] = {}
    parallel: Counter[tuple[str, str]] = Counter()
    for ident, node in nodes.items():
        for port, (remote, _, bandwidth) in sorted(node.ports.items()):
            a, b = name[ident], name[remote]
            parallel[(a, b)] += 1
            link = f"{a}_to_{b}" + (f"_{parallel[(a, b)]}" if parallel[(a, b)] > 1 else "")
            bw = link_bw if link_bw is not None else bandwidth
            if bw is None:
                raise TopologyError(f"{where}: no speed for the cable of {a} port {port}: give --link-bw")
            links[link] = Link(link, bw, link_lat, kind="cable", ends=(a, b))
            by_port[(a, port)] = link
    hosts = sorted((name[i] for i, n in nodes.items() if n.kind == "host"), key=natural)
    switches = sorted((name[i] for i, n in nodes.items() if n.kind == "switch"), key=natural)

    def no_rule(src: str, dst: str) -> list[str]:
        raise TopologyError(
            f"{where}: the routes of a discovered fabric come from OpenSM (python -m generators.opensm)"
        )

    label = re.sub(r"[^\w.-]+", "-", Path(where).name.removesuffix(".txt"))
    platform = Platform(name=label, hosts=[Host(h) for h in hosts], routers=switches, links=links, route_rule=no_rule)
    ports = {name[i]: {p: (name[r], q) for p, (r, q, _) in n.ports.items()} for i, n in nodes.items()}
    dead = {frozenset(cable) for cable in faults.cables}
    return platform, build_fabric(hosts, switches, ports, by_port, dead, faults.switches)


def discover(fabric: Fabric, timeout: float = 120.0) -> str:
    """What ``ibnetdiscover`` prints of ``fabric`` simulated by ibsim (as it would on the real fabric)."""
    tool = shutil.which("ibnetdiscover") or shutil.which("ibnetdiscover", path="/usr/sbin")
    if tool is None:
        raise OpenSMError("ibnetdiscover is not installed: install Debian's infiniband-diags (scripts/setup does)")
    with simulated(fabric, time.monotonic() + timeout) as client:
        status, output = client([tool], "ibnetdiscover")
    if status != 0:
        raise OpenSMError(f"ibnetdiscover failed (exit status {status})")
    return output
