"""Routes as InfiniBand's subnet manager computes them: a topolab fabric routed by OpenSM under ibsim.

A platform's cables (its links between two of its hosts or switches, by their ends) are written out as an ibsim
net file (:meth:`Fabric.net_text`): one ``Switch`` record per switch, one ``Hca`` per host, every node's ports
numbered from 1 in the order of its cables in the platform (a fat tree's leaf: its servers, then its up cables),
but the failed ones (``generators.faults``): a failed cable leaves its ports empty, a failed switch is gone.
:func:`run_opensm` starts ibsim (Debian's ``ibsim-utils``) on that file, runs OpenSM (``opensm``, 3.3.23) once on
the simulated fabric through ``libumad2sim`` (``LD_PRELOAD``), with the routing engine asked for, reads every
switch's linear forwarding table from OpenSM's dump (``opensm-lfts.dump``), and stops both: each run has its own
directory and its own ibsim socket name (``IBSIM_SOCKNAME``), so several run at once, and nothing is left running
whatever happens. An engine that fails on the fabric (OpenSM then falls back to minhop) is an error, not minhop's
tables under another name.

:func:`switch_path` follows the tables hop by hop from a host to another: each switch forwards on the port its
table gives for the destination's LID; a pair the tables leave without a route (cut from the subnet manager by
failures, or given no entry by the engine) is :class:`Unrouted`, and a path that loops, takes a port without a
cable or reaches another host is an error naming the pair. :func:`opensm_platform` is the platform whose routes are
those paths. The command, ``python -m generators.opensm``, is ``generators.opensm_cli``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from generators.errors import TopologyError
from generators.faults import NO_FAULTS
from generators.faults import Faults
from generators.model import CABLE
from generators.model import CompiledZone
from generators.model import Platform
from generators.model import with_nbl

__all__ = [
    "ENGINES",
    "MAX_HOSTS",
    "MAX_TABLE_HOSTS",
    "Fabric",
    "OpenSMError",
    "Tables",
    "Unrouted",
    "cables_of",
    "fabric_of",
    "opensm_platform",
    "run_opensm",
    "switch_path",
]

ENGINES = ("minhop", "updn", "dnup", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp")
"""OpenSM 3.3.23's unicast routing engines (``opensm -R``), but ``file`` (tables given by hand)."""

MAX_HOSTS = 512
"""Most hosts of a platform of OpenSM's routes written as XML (``python -m generators.opensm ... -o FILE.xml``), one
explicit route per ordered pair (261,632 at 512 hosts)."""

MAX_TABLE_HOSTS = 8192
"""Most hosts of a platform of OpenSM's routes (its zone holds a forwarding entry per switch and host)."""

UMAD2SIM = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
TABLES_ZONE = "topolab_tables_zone"
INSTALL = "install Debian's opensm, ibsim-utils and libumad2sim0 (scripts/setup does)"


class OpenSMError(TopologyError):
    """OpenSM or ibsim is missing, fails, hangs, or its tables do not route the fabric (one line)."""


class Unrouted(OpenSMError):
    """A pair of hosts the tables do not route: cut apart by failures, or left without an entry by the engine."""


@dataclass(frozen=True)
class Fabric:
    """The nodes of a platform and its cables, port by port: ``ports[node][p] = (neighbour, neighbour's port)``;
    ``links[(node, p)]``, the platform's link out of ``node`` through port p (none inside a torus node)."""

    hosts: tuple[str, ...]
    switches: tuple[str, ...]
    ports: Mapping[str, Mapping[int, tuple[str, int]]]
    links: Mapping[tuple[str, int], str]

    def components(self) -> dict[str, int]:
        """Each node's connected component (a number; nodes that share one are connected by live cables)."""
        component: dict[str, int] = {}
        for start in self.ports:
            if start in component:
                continue
            component[start], stack = len(component), [start]
            while stack:
                for other, _ in self.ports[stack.pop()].values():
                    if other not in component:
                        component[other] = component[start]
                        stack.append(other)
        return component

    def managed(self) -> frozenset[str]:
        """The nodes the subnet manager reaches: those connected to the first switch, where it runs."""
        component = self.components()
        return frozenset(n for n in self.ports if self.switches and component[n] == component[self.switches[0]])

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


def cables_of(platform: Platform) -> list[tuple[str, str]]:
    """Every cable of ``platform`` between two of its hosts or routers, once (its two directions are one cable)."""
    ends = [link.ends for link in platform.links.values() if link.ends[0] != link.ends[1]]
    both = set(ends)
    return [(a, b) for a, b in ends if (b, a) not in both or a < b]


def fabric_of(platform: Platform, faults: Faults = NO_FAULTS) -> Fabric:
    """The fabric of ``platform``'s cables but ``faults``. A host of a direct network (a torus node: more than one
    cable) becomes a switch ``<host>-sw`` that holds its cables and an HCA ``<host>`` on its port 1, as a torus of
    InfiniBand switches has. A failed cable leaves its two ports empty; a failed switch is gone with its cables."""
    hosts = tuple(h.name for h in platform.hosts)
    named = {link.ends: name for name, link in platform.links.items() if link.ends[0] != link.ends[1]}
    cables = cables_of(platform)
    degree = Counter(itertools.chain.from_iterable(cables))
    direct = [h for h in hosts if degree[h] != 1]
    switch = {**{h: f"{h}-sw" for h in direct}, **{r: r for r in platform.routers}}
    switches = (*platform.routers, *(switch[h] for h in direct))
    ports: dict[str, dict[int, tuple[str, int]]] = {name: {} for name in (*switches, *hosts)}
    links: dict[tuple[str, int], str] = {}
    for a, b in [(h, h) for h in direct] + cables:  # (h, h): the cable inside a torus node, from its HCA
        ends = (a, switch[a]) if a == b else (switch.get(a, a), switch.get(b, b))
        pa, pb = len(ports[ends[0]]) + 1, len(ports[ends[1]]) + 1
        ports[ends[0]][pa], ports[ends[1]][pb] = (ends[1], pb), (ends[0], pa)
        if a != b:
            links[(ends[0], pa)], links[(ends[1], pb)] = named[(a, b)], named[(b, a)]
    dead = {frozenset(switch.get(end, end) for end in cable) for cable in faults.cables}
    return build_fabric(hosts, switches, ports, links, dead, faults.switches)


def build_fabric(
    hosts: Sequence[str],
    switches: Sequence[str],
    ports: dict[str, dict[int, tuple[str, int]]],
    links: Mapping[tuple[str, int], str],
    dead: set[frozenset[str]],
    dead_switches: frozenset[str],
) -> Fabric:
    """The fabric of ``ports`` but the ``dead`` cables (each the set of its two nodes) and switches, its first switch
    (where the subnet manager runs) one of the part that holds the most hosts."""
    hosts = tuple(hosts)
    for node in dead_switches:
        dead |= {frozenset((node, other)) for other, _ in ports.pop(node).values()}
    for node, node_ports in ports.items():
        for port in [p for p, (other, _) in node_ports.items() if frozenset((node, other)) in dead]:
            del node_ports[port]
    alive = [s for s in switches if s not in dead_switches]
    component = Fabric(hosts, tuple(alive), ports, links).components()
    largest = Counter(component[h] for h in hosts).most_common(1)[0][0] if hosts else None
    alive.sort(key=lambda s: component[s] != largest)  # the subnet manager runs where most hosts are
    return Fabric(hosts, tuple(alive), ports, links)


def rule_path(platform: Platform, fabric: Fabric, src: str, dst: str) -> list[str]:
    """The switches of the family's own route from ``src`` to ``dst``, named as in ``fabric`` (a torus node's own
    switch stands for it; a host's NBL limiter is no hop)."""
    ends = [platform.links[name].ends for name in platform.route(src, dst)]
    nodes = [src, *(b for a, b in ends if a != b)]
    attached = {h: ports[1][0] for h in fabric.hosts if 1 in (ports := fabric.ports[h]) and ports[1][0] != h}
    path = [attached.get(node, node) for node in nodes]
    switches = set(fabric.switches)
    return [node for i, node in enumerate(path) if node in switches and (i == 0 or path[i - 1] != node)]


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


@contextlib.contextmanager
def simulated(fabric: Fabric, deadline: float) -> Iterator[Callable[[list[str], str], tuple[int, str]]]:
    """ibsim running on ``fabric`` in a scratch directory of its own, with a socket name of its own; yields a function
    that runs a client (an InfiniBand tool, ``libumad2sim`` preloaded) in that directory until ``deadline`` and
    returns its exit status and standard output. ibsim, the clients and the directory are gone afterwards, whatever
    happens."""
    ibsim_bin = _tools()[0]
    with tempfile.TemporaryDirectory(prefix="topolab-opensm-") as scratch:
        work = Path(scratch)
        (work / "net").write_text(fabric.net_text())
        env = {**os.environ, "IBSIM_SOCKNAME": f"topolab-{os.getpid()}-{uuid.uuid4().hex[:12]}"}
        env.update(OSM_CACHE_DIR=str(work / "cache"), OSM_TMP_DIR=str(work))
        nodes, ports = len(fabric.ports), sum(len(p) + 1 for p in fabric.ports.values())
        limits = ["-N", str(nodes + 1), "-S", str(len(fabric.switches) + 1), "-P", str(ports + 1)]
        limits += ["-L", str(max(30720, nodes + 64))]
        with open(work / "ibsim.log", "wb") as ibsim_log:
            ibsim = subprocess.Popen(
                [ibsim_bin, "-s", "-n", *limits, str(work / "net")],
                stdin=subprocess.DEVNULL, stdout=ibsim_log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                cwd=work,
            )  # fmt: skip

        def client(command: list[str], what: str) -> tuple[int, str]:
            with open(work / "client.out", "wb") as out:
                process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.DEVNULL,
                    env={**env, "LD_PRELOAD": str(UMAD2SIM)}, start_new_session=True,
                    cwd=work,  # libumad2sim writes its fake sysfs (sys-PID) into the working directory
                )  # fmt: skip
            try:
                status = process.wait(timeout=max(0.01, deadline - time.monotonic()))
                return status, (work / "client.out").read_text(errors="replace")
            except subprocess.TimeoutExpired:
                raise OpenSMError(f"{what} did not finish within the time limit") from None
            finally:
                _stop(process)

        try:
            _wait_ready(ibsim, work / "ibsim.log", deadline)
            yield client
        finally:
            _stop(ibsim)


def run_opensm(fabric: Fabric, engine: str, timeout: float = 300.0) -> Tables:
    """Route ``fabric`` with OpenSM's ``engine`` under ibsim; nothing is left running or on disk afterwards."""
    if engine not in ENGINES:
        raise OpenSMError(f"unknown OpenSM routing engine {engine!r}; known: {', '.join(ENGINES)}")
    if not fabric.switches:
        raise OpenSMError("the fabric has no switch left to run the subnet manager on")
    opensm_bin = _tools()[1]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="topolab-opensm-") as scratch:
        work = Path(scratch)
        with simulated(fabric, started + timeout) as client:
            command = [opensm_bin, "-R", engine, "-o", "-D", "0x43", "--dump_files_dir", str(work)]
            status, _ = client([*command, "-f", str(work / "opensm.log")], f"OpenSM ({engine})")
        log = (work / "opensm.log").read_text(errors="replace") if (work / "opensm.log").is_file() else ""
        dump = work / "opensm-lfts.dump"
        if status != 0 or not dump.is_file():
            raise OpenSMError(f"OpenSM ({engine}) failed (exit status {status}) and wrote no forwarding tables")
        problem = _engine_problem(log, engine)
        if problem:
            raise OpenSMError(problem)
        lids, lft = parse_lfts(dump.read_text())
    managed = fabric.managed()
    missing = [name for name in (*fabric.hosts, *fabric.switches) if name in managed and name not in lids]
    if missing or set(lft) != {name for name in managed if name in fabric.switches}:
        raise OpenSMError(f"OpenSM ({engine}) did not configure the whole fabric ({missing[:1] or 'a switch'} lacks)")
    return Tables(engine, lids, lft, time.monotonic() - started)


def hop_path(fabric: Fabric, tables: Tables, src: str, dst: str) -> list[tuple[str, int]]:
    """Each hop from host ``src`` to host ``dst`` as the forwarding tables send a packet: (node, port out of it),
    from the source's port 1 to the last switch's port to ``dst``."""
    if 1 not in fabric.ports[src] or dst not in tables.lids or src not in tables.lids:
        raise Unrouted(f"{src} -> {dst}: no path (failed cables or switches cut them from the subnet manager)")
    hops, (node, _) = [(src, 1)], fabric.ports[src][1]
    lid = tables.lids[dst]
    while len(hops) <= len(fabric.switches):
        port = tables.lft[node].get(lid)
        if port is None:
            raise Unrouted(f"{src} -> {dst}: switch {node} has no route to {dst}")
        if port not in fabric.ports[node]:
            raise OpenSMError(f"{src} -> {dst}: switch {node} forwards to {dst} on port {port}, which has no cable")
        hops.append((node, port))
        node, _ = fabric.ports[node][port]
        if node == dst:
            return hops
        if node not in tables.lft:
            raise OpenSMError(f"{src} -> {dst}: the tables deliver to {node}")
    raise OpenSMError(f"{src} -> {dst}: the tables loop ({' -> '.join(n for n, _ in hops[1:7])} ...)")


def switch_path(fabric: Fabric, tables: Tables, src: str, dst: str) -> list[str]:
    """The switches from host ``src`` to host ``dst`` as the forwarding tables send a packet."""
    return [node for node, _ in hop_path(fabric, tables, src, dst)[1:]]


def opensm_platform(platform: Platform, fabric: Fabric, tables: Tables, compiled: bool = True) -> Platform:
    """``platform`` routed by OpenSM's ``tables`` of its ``fabric``: the same hosts and links, each pair's route the
    links of its path through the tables (framed by the hosts' NBL limiters when it has them), none for a pair that
    failures cut apart. SimGrid gets the routes from the zone that follows the tables (:func:`tables_zone`, up to
    ``MAX_TABLE_HOSTS`` hosts), or, not ``compiled``, from one explicit route per pair (an XML platform, SimGrid's
    Full routing, up to ``MAX_HOSTS`` hosts)."""
    check_writable(platform, compiled)
    limited = any(link.kind == "limiter" for link in platform.links.values())

    def route(src: str, dst: str) -> list[str]:
        try:
            hops = hop_path(fabric, tables, src, dst)
        except Unrouted:
            return []  # no route: SimGrid refuses a communication between them
        return with_nbl(src, dst, [fabric.links[hop] for hop in hops if hop in fabric.links], limited)

    return replace(
        platform, name=f"{platform.name}-opensm-{tables.engine}", route_rule=route, graph=None,
        compiled=tables_zone(platform, fabric, tables) if compiled else None, spread_rule=None, adaptive=False,
        size=None,
    )  # fmt: skip


def check_writable(platform: Platform, compiled: bool) -> None:
    """Refuse a platform too large for the tables' zone, or, as XML, to list every pair's route."""
    hosts = len(platform.hosts)
    if hosts > MAX_TABLE_HOSTS:
        raise OpenSMError(
            f"{hosts} hosts: a platform of OpenSM's routes has at most {MAX_TABLE_HOSTS} hosts (its zone holds a "
            "forwarding entry per switch and host)"
        )
    if not compiled and hosts > MAX_HOSTS:
        raise OpenSMError(
            f"{hosts} hosts: an XML platform of OpenSM's routes lists every pair's route, at most {MAX_HOSTS} hosts; "
            "write FILE.so, the zone that follows the tables"
        )


def _nodes(platform: Platform, fabric: Fabric) -> tuple[dict[str, int], dict[str, str]]:
    """The zone's node numbers (hosts in order, the fabric's switches, then the failed ones) and each host of a direct
    network's own switch."""
    names = [host.name for host in platform.hosts] + list(fabric.switches)
    names += sorted({end for link in platform.links.values() if link.kind == CABLE for end in link.ends} - set(names))
    own = {host.name: f"{host.name}-sw" for host in platform.hosts if f"{host.name}-sw" in fabric.switches}
    return {name: i for i, name in enumerate(names)}, own


def _forwarding(fabric: Fabric, tables: Tables, switch: str, dst: str, number: Mapping[str, int]) -> int:
    """The link ``switch`` sends on towards host ``dst`` (its number), -1 for none, -2 when ``dst`` is its own."""
    port = tables.lft.get(switch, {}).get(tables.lids.get(dst, -1))
    if port is None or port not in fabric.ports[switch]:
        return -1
    neighbour, _ = fabric.ports[switch][port]
    link = fabric.links.get((switch, port))
    if neighbour == dst:
        return -2 if link is None else number[link]
    delivered_elsewhere = neighbour not in tables.lft  # a host that is not dst
    return -1 if delivered_elsewhere or link is None else number[link]


def _node_values(platform: Platform) -> dict[str, str]:
    """The node keys of ``platform`` already applied (``generators.node``): its cores and intra-node link."""
    values = {"cores": str(platform.hosts[0].cores)} if platform.hosts[0].cores != 1 else {}
    if platform.shm:
        shm = platform.links[f"{platform.hosts[0].name}_shm"]
        values |= {"shm_bw": repr(shm.bandwidth), "shm_lat": repr(shm.latency)}
    return values


def tables_zone(platform: Platform, fabric: Fabric, tables: Tables) -> CompiledZone:
    """The compiled zone ``topolab_tables_zone`` (``simgrid_cpp/tables_zone.cpp``): ``platform``'s hosts and cables,
    each switch's forwarding table per destination host, followed on demand; a host's NBL limiter as its family sets
    it (``nbl`` in ``link_bw``s). Links other than cables and limiters are refused."""
    other = sorted({link.kind for link in platform.links.values()} - {CABLE, "limiter", "shm"})
    if other:
        raise OpenSMError(f"{platform.name}: links of kind {other[0]}: the tables' zone models cables and limiters")
    index, own = _nodes(platform, fabric)
    hosts = [host.name for host in platform.hosts]
    cables = [link for link in platform.links.values() if link.kind == CABLE]
    number = {link.name: i for i, link in enumerate(cables)}
    switches = list(index)[len(hosts) :]
    lines = [f"nodes {len(hosts)} {len(switches)}", *(f"host {h}" for h in hosts), *(f"switch {s}" for s in switches)]
    lines += [f"link {c.name} {index[own.get(c.ends[1], c.ends[1])]} {c.bandwidth!r} {c.latency!r}" for c in cables]
    for i, host in enumerate(hosts):
        switch, _ = fabric.ports[host].get(1, (host, 0))
        link = number.get(fabric.links.get((host, 1), ""), -1)
        attached = own.get(host, switch) if host in tables.lids else host
        lines.append(f"attach {i} {index[attached]} {link if attached != host else -1}")
    for switch in switches:
        row = (_forwarding(fabric, tables, switch, dst, number) for dst in hosts) if switch in tables.lft else ()
        lines.append(f"fwd {index[switch]} {' '.join(map(str, row)) or ' '.join(['-1'] * len(hosts))}")
    limiters = [link.bandwidth for link in platform.links.values() if link.kind == "limiter"]
    link_bw = float(platform.params.get("link_bw") or max(c.bandwidth for c in cables))
    values = {
        "link_bw": repr(link_bw), "link_lat": repr(float(platform.params.get("link_lat", 0.0))),
        "nbl": repr(limiters[0] / link_bw) if limiters else "none", "host_speed": repr(platform.hosts[0].speed),
    }  # fmt: skip
    values |= _node_values(platform)
    head = "".join(f"{key} {value}\n" for key, value in values.items())
    return CompiledZone(TABLES_ZONE, head + "\n".join(lines) + "\n")
