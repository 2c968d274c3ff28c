"""Routes as InfiniBand's subnet manager computes them: a topolab fabric routed by OpenSM under ibsim.

A platform's cables (its links named ``a_to_b`` between two of its hosts or switches) are written out as an ibsim
net file (:meth:`Fabric.net_text`): one ``Switch`` record per switch, one ``Hca`` per host, every node's ports
numbered from 1 in the order of its cables in the platform (a fat tree's leaf: its servers, then its up cables).
:func:`run_opensm` starts ibsim (Debian's ``ibsim-utils``) on that file, runs OpenSM (``opensm``, 3.3.23) once on
the simulated fabric through ``libumad2sim`` (``LD_PRELOAD``), with the routing engine asked for, reads every
switch's linear forwarding table from OpenSM's dump (``opensm-lfts.dump``), and stops both: each run has its own
directory and its own ibsim socket name (``IBSIM_SOCKNAME``), so several run at once, and nothing is left running
whatever happens. An engine that fails on the fabric (OpenSM then falls back to minhop) is an error, not minhop's
tables under another name.

:func:`switch_path` follows the tables hop by hop from a host to another: each switch forwards on the port its
table gives for the destination's LID, and a path that loops, leaves the fabric or reaches another host is an
error naming the pair. ``python -m generators.opensm FAMILY [params] --engine ENGINE`` routes a family and prints
one JSON object: the engine's time, every pair's path checked, how many pairs the family's own rule routes the
same way, and the busiest cable of the worst shift permutation under each.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from generators.errors import TopologyError
from generators.model import Platform
from generators.model import with_nbl

__all__ = ["ENGINES", "Fabric", "OpenSMError", "Tables", "fabric_of", "opensm_platform", "run_opensm", "switch_path"]

ENGINES = ("minhop", "updn", "dnup", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp")
"""OpenSM 3.3.23's unicast routing engines (``opensm -R``), but ``file`` (tables given by hand)."""

UMAD2SIM = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
MAX_HOSTS = 512
"""Most hosts of a platform of OpenSM's routes: one explicit route per ordered pair (261,632 at 512 hosts)."""
INSTALL = "install Debian's opensm, ibsim-utils and libumad2sim0 (scripts/setup does)"


class OpenSMError(TopologyError):
    """OpenSM or ibsim is missing, fails, hangs, or its tables do not route the fabric (one line)."""


@dataclass(frozen=True)
class Fabric:
    """The nodes of a platform and its cables, port by port: ``ports[node][p] = (neighbour, neighbour's port)``;
    ``links[(a, b)]``, the platform's link from node a to node b; ``node_of``, the platform's node of a switch."""

    hosts: tuple[str, ...]
    switches: tuple[str, ...]
    ports: Mapping[str, Mapping[int, tuple[str, int]]]
    links: Mapping[tuple[str, str], str]
    node_of: Mapping[str, str]

    def net_text(self) -> str:
        """The fabric in ibsim's net format: switches first (the first one's port 0 hosts the subnet manager)."""
        records = []
        for kind, names in (("Switch", self.switches), ("Hca", self.hosts)):
            for name in names:
                ports = self.ports[name]
                lines = [f'{kind}\t{max(ports, default=1)} "{name}"']
                lines += [f'[{p}]\t"{other}"[{q}]' for p, (other, q) in sorted(ports.items())]
                records.append("\n".join(lines))
        return "\n\n".join(records) + "\n"


def fabric_of(platform: Platform) -> Fabric:
    """Every cable of ``platform`` between two of its hosts or routers, once (its two directions are one cable). A
    host of a direct network (a torus node: more than one cable) becomes a switch ``<host>-sw`` that holds its cables
    and an HCA ``<host>`` on its port 1, as a torus of InfiniBand switches has."""
    hosts = tuple(h.name for h in platform.hosts)
    links = {link.ends: name for name, link in platform.links.items() if link.ends[0] != link.ends[1]}
    cables = [(a, b) for a, b in links if (b, a) not in links or (a, b) < (b, a)]
    degree = Counter(itertools.chain.from_iterable(cables))
    direct = [h for h in hosts if degree[h] != 1]
    switch = {**{h: f"{h}-sw" for h in direct}, **{r: r for r in platform.routers}}
    switches = (*platform.routers, *(switch[h] for h in direct))
    ports: dict[str, dict[int, tuple[str, int]]] = {name: {} for name in (*switches, *hosts)}
    for a, b in [(h, switch[h]) for h in direct] + [(switch.get(a, a), switch.get(b, b)) for a, b in cables]:
        pa, pb = len(ports[a]) + 1, len(ports[b]) + 1
        ports[a][pa], ports[b][pb] = (b, pb), (a, pa)
    return Fabric(hosts, switches, ports, links, {sw: node for node, sw in switch.items()})


def rule_path(platform: Platform, fabric: Fabric, src: str, dst: str) -> list[str]:
    """The switches of the family's own route from ``src`` to ``dst``, named as in ``fabric``."""
    nodes = [src, *(name.partition("_to_")[2] for name in platform.route(src, dst))]
    attached = {host: fabric.ports[host][1][0] for host in fabric.hosts}  # a host stands for its switch
    path = [attached.get(node, node) for node in nodes]
    return [node for i, node in enumerate(path) if i == 0 or path[i - 1] != node]


@dataclass(frozen=True)
class Tables:
    """What OpenSM set: every node's LID and every switch's forwarding table (``lft[switch][lid] = port``)."""

    engine: str
    lids: Mapping[str, int]
    lft: Mapping[str, Mapping[int, int]]
    seconds: float


_HEADER = re.compile(r"^Unicast lids \[.*\] of switch Lid (\d+) guid 0x[0-9a-f]+ \('(.*)'\):$")
_ENTRY = re.compile(r"^0x([0-9a-f]+) (\d+) # .*: '(.*)'$")


def parse_lfts(text: str) -> tuple[dict[str, int], dict[str, dict[int, int]]]:
    """The LIDs and forwarding tables of an ``opensm-lfts.dump``."""
    lids: dict[str, int] = {}
    lft: dict[str, dict[int, int]] = {}
    table: dict[int, int] | None = None
    for line in text.splitlines():
        if header := _HEADER.match(line):
            lids[header[2]] = int(header[1])
            table = lft.setdefault(header[2], {})
        elif (entry := _ENTRY.match(line)) and table is not None:
            lid, port = int(entry[1], 16), int(entry[2])
            table[lid] = port
            lids.setdefault(entry[3], lid)
    return lids, lft


def _tools() -> tuple[str, str]:
    ibsim, opensm = shutil.which("ibsim"), shutil.which("opensm") or shutil.which("opensm", path="/usr/sbin")
    if ibsim is None or opensm is None or not UMAD2SIM.is_file():
        raise OpenSMError(f"OpenSM under ibsim is not installed: {INSTALL}")
    return ibsim, opensm


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` and its group (started in a session of its own) and reap it."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()


def _wait_ready(ibsim: subprocess.Popen[bytes], log: Path, deadline: float) -> None:
    while "Network simulator ready" not in log.read_text(errors="replace"):
        if ibsim.poll() is not None:
            last = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-1:]
            raise OpenSMError(f"ibsim refused the fabric: {last[0] if last else f'exit status {ibsim.returncode}'}")
        if time.monotonic() > deadline:
            raise OpenSMError("ibsim did not start within the time limit")
        time.sleep(0.02)


def _engine_problem(log: str, engine: str) -> str | None:
    """Why OpenSM's log says ``engine`` did not route the fabric, or None."""
    failed = re.search(r"ucast_mgr_route: (\S+): cannot build.*|.*ERR [0-9A-F]+: .*", log)
    used = re.search(r"osm_ucast_mgr_process: (\S+) tables configured on all switches", log)
    if used is None or used[1] != engine.lower():
        reason = failed[0].split("-> ", 1)[-1] if failed else "no tables configured"
        return f"OpenSM's {engine} engine did not route this fabric ({reason.strip()})"
    return None


def run_opensm(fabric: Fabric, engine: str, timeout: float = 300.0) -> Tables:
    """Route ``fabric`` with OpenSM's ``engine`` under ibsim; nothing is left running or on disk afterwards."""
    if engine not in ENGINES:
        raise OpenSMError(f"unknown OpenSM routing engine {engine!r}; known: {', '.join(ENGINES)}")
    ibsim_bin, opensm_bin = _tools()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="topolab-opensm-") as scratch:
        work = Path(scratch)
        (work / "net").write_text(fabric.net_text())
        (work / "dump").mkdir()
        env = {**os.environ, "IBSIM_SOCKNAME": f"topolab-{os.getpid()}-{uuid.uuid4().hex[:12]}"}
        env.update(OSM_CACHE_DIR=str(work / "cache"), OSM_TMP_DIR=str(work))
        nodes, ports = len(fabric.ports), sum(len(p) + 1 for p in fabric.ports.values())
        limits = ["-N", str(nodes + 1), "-S", str(len(fabric.switches) + 1), "-P", str(ports + 1)]
        limits += ["-L", str(max(30720, nodes + 64))]
        with open(work / "ibsim.log", "wb") as ibsim_log:
            ibsim = subprocess.Popen(
                [ibsim_bin, "-s", "-n", *limits, str(work / "net")],
                stdin=subprocess.DEVNULL, stdout=ibsim_log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )  # fmt: skip
        try:
            deadline = started + timeout
            _wait_ready(ibsim, work / "ibsim.log", deadline)
            command = [opensm_bin, "-R", engine, "-o", "-D", "0x43", "--dump_files_dir", str(work / "dump")]
            command += ["-f", str(work / "opensm.log")]
            opensm = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={**env, "LD_PRELOAD": str(UMAD2SIM)}, start_new_session=True,
            )  # fmt: skip
            try:
                status = opensm.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise OpenSMError(f"OpenSM ({engine}) did not finish within {timeout:g} s") from None
            finally:
                _stop(opensm)
        finally:
            _stop(ibsim)
        log = (work / "opensm.log").read_text(errors="replace") if (work / "opensm.log").is_file() else ""
        dump = work / "dump" / "opensm-lfts.dump"
        if status != 0 or not dump.is_file():
            raise OpenSMError(f"OpenSM ({engine}) failed (exit status {status}) and wrote no forwarding tables")
        problem = _engine_problem(log, engine)
        if problem:
            raise OpenSMError(problem)
        lids, lft = parse_lfts(dump.read_text())
    missing = [name for name in (*fabric.hosts, *fabric.switches) if name not in lids]
    if missing or set(lft) != set(fabric.switches):
        raise OpenSMError(f"OpenSM ({engine}) did not configure the whole fabric ({missing[:1] or 'a switch'} lacks)")
    return Tables(engine, lids, lft, time.monotonic() - started)


def switch_path(fabric: Fabric, tables: Tables, src: str, dst: str) -> list[str]:
    """The switches from host ``src`` to host ``dst`` as the forwarding tables send a packet."""
    node, _ = fabric.ports[src][1]
    lid, path = tables.lids[dst], [node]
    while len(path) <= len(fabric.switches):
        port = tables.lft[node].get(lid)
        if port is None or port not in fabric.ports[node]:
            raise OpenSMError(f"{src} -> {dst}: switch {node} has no route to {dst} (port {port})")
        node, _ = fabric.ports[node][port]
        if node == dst:
            return path
        if node not in tables.lft:
            raise OpenSMError(f"{src} -> {dst}: the tables deliver to {node}")
        path.append(node)
    raise OpenSMError(f"{src} -> {dst}: the tables loop ({' -> '.join(path[:6])} ...)")


def opensm_platform(platform: Platform, fabric: Fabric, tables: Tables) -> Platform:
    """``platform`` routed by OpenSM's ``tables`` of its ``fabric``: the same hosts and links, each pair's route the
    links of its path through the tables (framed by the hosts' NBL limiters when it has them), one explicit route
    per pair (an XML platform: SimGrid's Full routing), at most ``MAX_HOSTS`` hosts."""
    check_writable(platform)
    limited = any(link.kind == "limiter" for link in platform.links.values())

    def route(src: str, dst: str) -> list[str]:
        nodes = [src, *(fabric.node_of[s] for s in switch_path(fabric, tables, src, dst)), dst]
        nodes = [node for i, node in enumerate(nodes) if i == 0 or nodes[i - 1] != node]
        return with_nbl(src, dst, [fabric.links[hop] for hop in itertools.pairwise(nodes)], limited)

    return replace(
        platform, name=f"{platform.name}-opensm-{tables.engine}", route_rule=route, graph=None, compiled=None,
        spread_rule=None, adaptive=False, size=None,
    )  # fmt: skip


def check_writable(platform: Platform) -> None:
    """Refuse a platform too large to list every pair's route."""
    if len(platform.hosts) > MAX_HOSTS:
        raise OpenSMError(
            f"{len(platform.hosts)} hosts: a platform of OpenSM's routes lists every pair's route, at most {MAX_HOSTS} "
            f"hosts ({MAX_HOSTS * (MAX_HOSTS - 1)} routes)"
        )


def worst_shift(hosts: Sequence[str], path: Mapping[tuple[str, str], list[str]]) -> tuple[int, int]:
    """(shift, flows) of the shift permutation (host i to i + shift) whose busiest switch-to-switch cable carries the
    most flows; the first such shift."""
    worst = (0, 0)
    for shift in range(1, len(hosts)):
        load: Counter[tuple[str, str]] = Counter()
        for i, src in enumerate(hosts):
            switches = path[(src, hosts[(i + shift) % len(hosts)])]
            load.update(itertools.pairwise(switches))
        busiest = max(load.values(), default=0)
        if busiest > worst[1]:
            worst = (shift, busiest)
    return worst


def _pairs(hosts: Sequence[str]) -> Iterator[tuple[str, str]]:
    return ((a, b) for a in hosts for b in hosts if a != b)


def compare(platform: Platform, fabric: Fabric, tables: Tables) -> dict[str, object]:
    """OpenSM's ``tables`` of ``platform``'s ``fabric`` against the family's own rule (the CLI's JSON object)."""
    opensm = {pair: switch_path(fabric, tables, *pair) for pair in _pairs(fabric.hosts)}
    rule = {pair: rule_path(platform, fabric, *pair) for pair in opensm}
    same = sum(opensm[pair] == rule[pair] for pair in opensm)
    (shift, flows), (rule_shift, rule_flows) = worst_shift(fabric.hosts, opensm), worst_shift(fabric.hosts, rule)
    return {
        "platform": platform.name, "engine": tables.engine, "hosts": len(fabric.hosts),
        "switches": len(fabric.switches),
        "opensm_s": round(tables.seconds, 3), "pairs": len(opensm), "pairs_routed": len(opensm),
        "pairs_as_rule": same, "pairs_unlike_rule": len(opensm) - same,
        "worst_shift": shift, "worst_shift_flows": flows, "rule_worst_shift": rule_shift,
        "rule_worst_shift_flows": rule_flows,
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m generators.opensm FAMILY [params] --engine ENGINE``: route a family's fabric with OpenSM."""
    from generators.cli import OneLineParser
    from generators.cli import add_family_params
    from generators.cli import nonempty
    from generators.families import FAMILIES
    from generators.families import build_platform
    from generators.writer import check_platform_path
    from generators.writer import write_platform

    parser = OneLineParser(
        prog="python -m generators.opensm",
        description="Route a topolab family's fabric with OpenSM under ibsim, check every pair's path and compare "
        "it with the family's own routes (one JSON object on stdout).",
    )
    sub = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    for family in FAMILIES.values():
        fp = sub.add_parser(family.name, help=family.summary, description=family.summary)
        add_family_params(fp, family)
        fp.add_argument("--engine", required=True, choices=ENGINES, help="OpenSM's routing engine (opensm -R)")
        fp.add_argument("--timeout", type=float, default=300.0, help="seconds for ibsim and OpenSM (default 300)")
        fp.add_argument(
            "-o", "--output", metavar="FILE.xml", type=nonempty,
            help=f"also write the platform routed by the tables (XML, a route per pair: {MAX_HOSTS} hosts at most)",
        )  # fmt: skip
    args = parser.parse_args(argv)
    family = FAMILIES[args.family]
    given = {p.name: getattr(args, p.name) for p in family.params if getattr(args, p.name) is not None}
    try:
        platform = build_platform(args.family, given)
        if args.output is not None:
            check_platform_path(args.output, compiled=False)
            check_writable(platform)
        fabric = fabric_of(platform)
        tables = run_opensm(fabric, args.engine, args.timeout)
        result = compare(platform, fabric, tables)
        if args.output is not None:
            write_platform(opensm_platform(platform, fabric, tables), args.output)
    except TopologyError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
