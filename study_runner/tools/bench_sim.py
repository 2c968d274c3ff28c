"""Benchmark: wall time and memory of topolab's largest simulations, beside SimGrid's own clusters.

    scripts/bench-sim                      # every case (about an hour on 2 cores: the whole MLFM all-to-all is 26 min)
    scripts/bench-sim pairing-12288 ...    # some cases (--list names them); the others keep their last figures
    scripts/bench-sim --no-reference       # topolab's platforms only

Cases: the furthest-node pairing exactly as the bgq-pairing study runs it (128 MiB chunks, one warm-up and
one timed round, the study's SMPI options) on Mira's partitions of 512 to 49152 nodes and on JUQUEEN's
24 x 8 x 8 x 4 x 2; one nbl-combine run on the 16 x 32 DELTA mesh (the study's slowest of that mesh); the MLFM
all-to-all on d = 18 (6156 servers, compiled zone): one phase (256 MiB blocks, ``alltoall --phases 2``) and all
6156 (1 MiB blocks); the pairwise all-to-all of 1024 ranks (1 MiB blocks) on a dragonfly of 1056 servers, with
minimal routing and with UGAL-G (a route chosen from the network's loads for each of its million messages); one
shift of 4 MiB on that dragonfly, adversarial and random, minimal and UGAL-G per packet, as interconnect-checks runs
it; the pairing on all of Fugaku (158976 ranks; skipped where Linux allows too few memory maps).
Each runs on topolab's platform (the compiled torus, tofu and MLFM zones, the mesh's XML) and, as a reference, on
the SimGrid cluster that carries the same run:
``<cluster topology="TORUS">`` for the pairing (the same routes: dimension order, SimGrid's own tie rule, no
limiter) and for the combine (only neighbours talk, so no route has a transit node and SimGrid's
every-node limiter is the endpoint one), a flat ``<cluster>`` (one star, the cheapest platform SimGrid has)
for the MLFM phase, whose routes nothing in SimGrid reproduces. The report gives both wall times, their
ratio, both simulated times (equal when the reference carries the same model) and the peak memory of the
simulation (what smpirun's processes held, SMPI's folded shared buffers each page once: ``simulation.memory``;
the before column of runs made before that figure existed is their RssAnon).

Two "before" columns. "before 15" is read from ``docs/benchmarks/simulation-scale-before.json``: the same runs
measured on this machine with topolab as it was before SimGrid 4.1 (commit ac4f983, SimGrid 3.32), and the command
of each. "before 31" is measured in the same run, beside the case: the case with the parameters and options it had
before issue 31 (``Case.before``; docs/simulation-speed.md says what each change was). Results:
``results/benchmarks/simulation-scale.{json,md}``. Times are this machine's: a benchmark, not a test.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from lxml import etree

from generators import bgq
from generators import build_platform
from generators import place_ranks
from generators import platform_suffix
from generators import write_hostfile
from generators import write_platform
from generators.files import atomic_write_text
from generators.model import Platform
from study_runner.batch.execute import parse_records
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.paths import BIN_DIR
from study_runner.paths import REPO
from study_runner.simulation.prepared import smpirun_simulation
from study_runner.simulation.smpi import NO_PRIVATIZATION
from study_runner.simulation.smpi import NO_STACK_GUARD
from study_runner.simulation.smpi import collective_option
from study_runner.simulation.smpi import folded_buffer_options
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.smpi import simgrid_version
from study_runner.simulation.solver_statistics import STATISTICS_LOG
from study_runner.simulation.solver_statistics import solver_statistics
from study_runner.simulation.workdirs import unwinding_signals
from study_runner.simulation.workdirs import work_directory
from study_runner.studies.study import Study
from study_runner.studies.study import load_study
from study_runner.tools.bench_sim_report import markdown
from study_runner.tools.cases import case_parser
from study_runner.tools.cases import cases_to_run

BIN = BIN_DIR
OUT_DIR = REPO / "results" / "benchmarks"
TIMEOUT_S = 3600


@dataclass(frozen=True)
class Before:
    """A case as it ran before issue 31: why it differed, and the parameters or options it had (None: the case's)."""

    why: str
    params: dict[str, Any] | None = None
    options: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Case:
    """One simulation: a topolab platform, the app run on it, and the SimGrid cluster that carries the same run."""

    name: str
    what: str
    family: str
    params: dict[str, Any]
    app: str
    args: tuple[str, ...]
    options: tuple[str, ...]
    ranks: int
    placement: str | None
    reference: Callable[[int], str] | None
    """XML of the reference cluster for ``ranks`` hosts ``host-0`` ... (the hostfile is the same)."""
    reference_kind: str
    time_field: str
    min_map_count: int = 0
    """The memory maps the run needs (Linux's ``vm.max_map_count``, 65530 by default): the case is skipped, saying so,
    where the machine allows fewer."""
    before: Before | None = None
    """What the case ran as before issue 31's changes: measured in the same run, beside the case, as its "before";
    None where nothing changed."""


_BEFORE_BARRIER = collective_option("barrier", "ompi_recursivedoubling")


def _cluster_xml(hosts: int, **attributes: str) -> str:
    """A SimGrid platform of one ``<cluster>`` of ``hosts`` hosts ``host-0`` ... (1 Gf, zero latency, a loopback),
    inside a Full zone (a top-level cluster crashes SimGrid 4.1), with ``attributes`` added."""
    platform = etree.Element("platform", version="4.1")
    zone = etree.SubElement(platform, "zone", id="world", routing="Full")
    cluster = {"prefix": "host-", "radical": f"0-{hosts - 1}", "suffix": "", "speed": "1Gf", "lat": "0s"}
    etree.SubElement(zone, "cluster", **cluster, **attributes, loopback_bw="100GBps", loopback_lat="0s")
    doctype = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
    return etree.tostring(platform, xml_declaration=True, encoding="utf-8", doctype=doctype, pretty_print=True).decode()


def torus_cluster(dims: tuple[int, ...], link_bw: str, limiter_bw: str | None = None) -> Callable[[int], str]:
    """SimGrid's own TORUS cluster of ``dims`` (first dimension fastest, as topolab numbers hosts)."""
    limiter = {} if limiter_bw is None else {"limiter_link": limiter_bw}
    shape = ",".join(map(str, dims))
    return lambda hosts: _cluster_xml(hosts, id="torus", bw=link_bw, topology="TORUS", topo_parameters=shape, **limiter)


def flat_cluster(link_bw: str) -> Callable[[int], str]:
    """SimGrid's flat cluster: every host on one private link of a star."""
    return lambda hosts: _cluster_xml(hosts, id="flat", bw=link_bw)


@cache
def _study(name: str) -> Study:
    return load_study(name)


def _study_run(study: str, grid: str, run_id: str | None = None) -> RunSpec:
    """A run of a study's grid (its first, or ``run_id``): the benchmarks run what the studies run."""
    runs = [run for run in _study(study).runs if run.grid == grid and run_id in (None, run.id)]
    if not runs:
        raise StudyError(f"{study}: no run {run_id or ''} in grid {grid!r} to benchmark")
    return runs[0]


def _pairing(midplanes: tuple[int, ...], machine: str = "") -> Case:
    """The bgq-pairing study's run (its arguments and options) on any partition of a machine (its name prefixes the
    case's, Mira's has none), the whole machine too."""
    study_run = _study_run("bgq-pairing", "pairing")
    dims = bgq.node_dims(midplanes)
    ranks = 1
    for d in dims:
        ranks *= d
    shape = "x".join(map(str, dims))
    return Case(
        name=f"pairing-{machine.lower()}{'-' if machine else ''}{ranks}",
        what=f"bisection pairing, {machine}{' ' if machine else ''}{shape} torus ({ranks} ranks), 128 MiB chunks",
        family="torus",
        params={"dims": shape, "link_bw": "2GBps", "link_lat": "0s", "zone": "compiled"},
        app="bisection_pairing",
        args=("-d", ",".join(map(str, dims)), *study_run.args[2:]),
        options=study_run.options,
        ranks=ranks,
        placement=None,
        reference=torus_cluster(dims, "2GBps"),
        reference_kind="SimGrid TORUS cluster",
        time_field="time_per_pair_s_max",
        before=Before(
            why="recursive-doubling barrier: ranks leave it nanoseconds apart, every pair ends at its own date",
            options=tuple(_BEFORE_BARRIER if "smpi/barrier:" in o else o for o in study_run.options),
        ),
    )


def _combine() -> Case:
    width, height, algorithm, n = 16, 32, "snake", 500_000
    study_run = _study_run("nbl-combine", "sweep", f"sweep.{width}x{height}.nominal.{algorithm}.N{n}")
    s = study_run.args[study_run.args.index("-S") + 1]
    link_bw = "5.194805194805195MBps"
    return Case(
        name="combine-16x32",
        what=f"nbl-combine: {algorithm}, N = {n}, S = {s}, 16 x 32 DELTA mesh, nominal NBL (512 ranks)",
        family="mesh",
        params={"width": width, "height": height, "link_bw": link_bw, "link_lat": "0s", "nbl": "nominal"},
        app="combine",
        args=study_run.args,
        options=study_run.options,
        ranks=width * height,
        placement=None,
        reference=torus_cluster((width, height), link_bw, limiter_bw=link_bw),
        reference_kind="SimGrid TORUS cluster (neighbour traffic only: same routes and limiters)",
        time_field="time_s_max",
    )


def _mlfm_alltoall(block: str, phases: int | None) -> Case:
    """The mlfm all-to-all on d = 18 (6156 servers, the compiled zone): ``phases`` phases of ``block`` bytes, or all
    6156 (the folded buffers hold one block per phase: 6156 blocks of 1 MiB are 6 GiB of address space per buffer and
    rank, never touched; 256 MiB blocks would need more address space than a process has)."""
    d = 18
    servers = d * (d + 1) * d
    name, what = ("mlfm-18-phase", "one phase") if phases == 2 else ("mlfm-18-alltoall", f"all {servers} phases")
    return Case(
        name=name,
        what=f"{what} of the mlfm all-to-all, MLFM d = {d} ({servers} servers), {block}iB blocks",
        family="mlfm",
        params={"d": d, "zone": "compiled"},
        app="alltoall",
        args=(
            *("-a", "mlfm", "--shape", f"{d},{d + 1},{d}", "-s", block),
            *(("--phases", str(phases)) if phases else ()),
            *("--local-copy", "skip", "-w", "0", "-i", "1"),
        ),
        # The study's folding, and no per-rank copy of the app (it has no mutable globals) nor stack guard pages: one
        # copy of the binary per rank costs more than the phase (a file per rank created and deleted in smpi/tmpdir).
        options=(*folded_buffer_options(1 << 20), NO_PRIVATIZATION, NO_STACK_GUARD),
        ranks=servers,
        placement=f"allocation:{d},{d + 1},{d}",
        reference=flat_cluster("4GBps") if phases == 2 else None,
        reference_kind="SimGrid flat cluster (a star: not the same network)",
        time_field="time_s_max",
        before=None
        if phases != 2
        else Before(
            why="the XML Dijkstra zone (a graph search per new source) and a copy of the app per rank",
            params={"d": d},
            options=folded_buffer_options(1 << 20),
        ),
    )


def dragonfly_alltoall(routing: str, ranks: int = 1024, spread: str = "message") -> Case:
    """Open MPI's pairwise all-to-all (1 MiB blocks, all ranks - 1 phases) of ``ranks`` ranks (a multiple of 32) on a
    dragonfly of 8 routers of 4 servers a group, ranks / 32 + 1 groups and just enough global ports a router to join
    every pair of groups (Kim et al.'s consecutive ports); at 1024 ranks the 1056-server dragonfly of
    ``interconnect-checks`` (33 x 8 x 4), the first 1024 servers in host order. Routed ``routing``, one path a
    message or (``spread`` "packet") spread over the rule's paths: every message's route is chosen when it starts
    (docs/adaptive-routing.md), about a million choices at 1024 ranks."""
    groups = ranks // 32 + 1
    routed = routing if spread == "message" else f"{routing}-packet"
    return Case(
        name=f"dragonfly-{ranks}-alltoall-{routed}",
        what=f"pairwise all-to-all of {ranks} ranks, 1 MiB blocks, dragonfly {groups} x 8 x 4 ({groups * 32} servers), "
        f"{routing} routing" + ("" if spread == "message" else ", per packet"),
        family="dragonfly",
        params={
            "groups": groups,
            "routers": 8,
            "hosts": 4,
            "global_ports": -(-(groups - 1) // 8),
            "link_bw": "4GBps",
            "port_order": "consecutive",
            "routing": routing,
            **({} if spread == "message" else {"spread": spread}),
        },
        app="alltoall",
        args=("-a", "pairwise", "-s", "1M", "--local-copy", "skip", "-w", "0", "-i", "1"),
        options=(*folded_buffer_options(1 << 20), NO_PRIVATIZATION, NO_STACK_GUARD),
        ranks=ranks,
        placement=None,
        reference=None,
        reference_kind="",
        time_field="time_s_max",
    )


def _dragonfly_shift(pattern: str, routing: str) -> Case:
    """One shift of 4 MiB on the 1056-server dragonfly (33 x 8 x 4, Kim et al.'s consecutive ports) exactly as
    interconnect-checks runs it (its platform, arguments and options): ``pattern`` "adversarial" (every server sends
    to the group next to its own) or "random" (a random permutation), routed ``routing`` (the study's name: minimal,
    ugal-g, ugal-g-packet, ...)."""
    study_run = _study_run("interconnect-checks", "kim", f"kim.{pattern}.{routing}")
    platform = _study("interconnect-checks").platforms[study_run.platform]
    routed = routing.replace("-packet", " per packet")
    return Case(
        name=f"dragonfly-1056-shift-{pattern}-{routing}",
        what=f"one shift of 4 MiB, {pattern}, 1056 ranks, dragonfly 33 x 8 x 4, {routed}",
        family=platform.family,
        params=platform.params,
        app=study_run.app,
        args=study_run.args,
        options=study_run.options,
        ranks=study_run.ranks,
        placement=None,
        reference=None,
        reference_kind="",
        time_field="time_s_max",
    )


def _fugaku() -> Case:
    """All of Fugaku (platforms/fugaku: Tofu-D, 24 x 23 x 24 units of 2 x 3 x 2 nodes, 158976 ranks), every node
    exchanging 128 MiB with a node far away: the bisection pairing app as the bgq-pairing study runs it, over a
    24 x 552 x 12 view of the ranks. Fugaku's Y ring (23) and B ring (3) are odd, so no node has an antipode on the
    physical 6-D torus and the app (which pairs every coordinate with its antipode) refuses those dimensions; in host
    order (X fastest) the view pairs (x, y, z, a, b, c) with (x + 12, y, z + 12, a, b, 1 - c): 12 X hops, 12 Z hops
    and one C hop, the farthest node in the dimensions that have one. The cables have no latency (25 hops of 100 ns
    are 1e-5 of the exchange; with it, ranks leave the barrier at dates of their own and every flow ends alone) and
    no NBL cap (one send and one receive per node use 2 of the 6 links' worth it allows: it never binds)."""
    study_run = _study_run("bgq-pairing", "pairing")
    ranks = 24 * 23 * 24 * 12
    return Case(
        name="fugaku-pairing",
        what=f"all of Fugaku, {ranks} ranks: pairing over 24 x 552 x 12 (X+12, Z+12, C+1), 128 MiB",
        family="tofu",
        params={"xyz": "24x23x24", "link_bw": "6.8GBps", "link_lat": "0s", "nbl": "none"},
        app="bisection_pairing",
        args=("-d", "24,552,12", *study_run.args[2:]),
        # Stacks with guard pages: SimGrid then maps each stack (3 maps per rank with the folded buffer); without,
        # it callocs them from the heap once glibc's 65536 mappings are used, and the zeroing makes them resident
        # (98304 ranks: 8.2 GB against 3.6 GB; all of Fugaku went past 20 GB).
        options=tuple(o for o in study_run.options if o != NO_STACK_GUARD),
        ranks=ranks,
        placement=None,
        reference=None,
        reference_kind="",
        time_field="time_per_pair_s_max",
        min_map_count=3 * ranks + 65536,
    )


CASES = (
    *(_pairing(midplanes) for midplanes in ((1, 1, 1, 1), *(bgq.MIRA_CURRENT[m] for m in (4, 8, 16, 24)))),
    _pairing(bgq.MIRA),
    _pairing((6, 2, 2, 1), "JUQUEEN"),
    _combine(),
    _mlfm_alltoall("256M", phases=2),
    _mlfm_alltoall("1M", phases=None),
    *(dragonfly_alltoall(routing) for routing in ("minimal", "ugal-g")),
    *(
        _dragonfly_shift(pattern, routing)
        for pattern in ("adversarial", "random")
        for routing in ("minimal", "ugal-g-packet")
    ),
    _fugaku(),
)


def _run(case: Case, platform: Path, hostfile: Path, work: Path) -> dict[str, Any]:
    """Simulate ``case`` on ``platform``; its wall time, peak memory, simulated time and what SimGrid counted (event
    dates, solves: ``simulation.solver_statistics``)."""
    options = (*case.options, STATISTICS_LOG)
    command = smpirun_simulation(BIN / case.app, case.args, platform, hostfile, case.ranks, options).argv
    outcome = run_smpirun_measured(command, work, TIMEOUT_S, f"{case.name} on {platform.name}")
    (record,) = parse_records(outcome.stdout, case.name)
    return {"wall_s": outcome.wall_s, "peak_memory_mib": outcome.peak_memory_mib,
            "simulated_s": record[case.time_field], "statistics": solver_statistics(outcome.stderr),
            "command": command}  # fmt: skip


def _platform_files(case: Case, work: Path) -> tuple[Platform, Path, Path]:
    """The case's platform model, and its platform file and hostfile written in ``work``."""
    model = build_platform(case.family, case.params)
    platform = work / f"{case.name}{platform_suffix(model)}"
    write_platform(model, platform)
    hostfile = work / f"{case.name}.hosts"
    write_hostfile(place_ranks(model, case.ranks, case.placement), hostfile)
    return model, platform, hostfile


def measure(case: Case, work: Path, reference: bool) -> dict[str, Any]:
    """Run one case on topolab's platform, as it was before (its ``before``), and (``reference``) on SimGrid's
    cluster."""
    model, platform, hostfile = _platform_files(case, work)
    row: dict[str, Any] = {"case": case.name, "what": case.what, "ranks": case.ranks,
                           "topolab": _run(case, platform, hostfile, work)}  # fmt: skip
    if case.before is not None:
        before = case.before
        variant = replace(case, name=f"{case.name}-before", params=before.params or case.params,
                          options=before.options or case.options)  # fmt: skip
        row["before"] = _run(variant, *_platform_files(variant, work)[1:], work) | {"why": before.why}
    if reference and case.reference is not None:
        cluster = work / f"{case.name}.cluster.xml"
        cluster.write_text(case.reference(case.ranks))
        cluster_hosts = work / f"{case.name}.cluster.hosts"
        # The reference numbers its hosts host-0 ... in the order topolab's hostfile places the ranks.
        order = {name: k for k, name in enumerate(model.host_names)}
        write_hostfile([f"host-{order[h]}" for h in hostfile.read_text().split()], cluster_hosts)
        row["reference"] = _run(case, cluster, cluster_hosts, work) | {"kind": case.reference_kind}
    return row


def main(argv: list[str] | None = None) -> int:
    """Command line: run the named cases (all by default) and write the report."""
    parser = case_parser("scripts/bench-sim", __doc__.split("\n\n")[0])
    parser.add_argument("--no-reference", action="store_true", help="skip the runs on SimGrid's own clusters")
    args = parser.parse_args(argv)
    selected = cases_to_run(args, CASES, lambda case: case.what)
    if isinstance(selected, int):
        return selected
    version = simgrid_version().splitlines()[0]
    rows = _earlier_rows(version)
    table = ""
    with unwinding_signals(), work_directory("bench-sim") as tmp:
        for number, case in enumerate(selected, 1):
            print(f"[{number}/{len(selected)}] {case.name}: {case.what} ...", file=sys.stderr, flush=True)
            if case.min_map_count > _max_map_count():
                print(f"    skipped: needs vm.max_map_count >= {case.min_map_count}, this machine allows "
                      f"{_max_map_count()} (as root: sysctl -w vm.max_map_count={case.min_map_count})",
                      file=sys.stderr, flush=True)  # fmt: skip
                continue
            try:
                row = measure(case, tmp, not args.no_reference)
            except StudyError as err:
                print(f"error: {err}", file=sys.stderr)
                return 1
            timings = [f"topolab {row['topolab']['wall_s']:.1f} s"]
            timings += [f"{key} {row[key]['wall_s']:.1f} s" for key in ("before", "reference") if key in row]
            print("    " + ", ".join(timings), file=sys.stderr, flush=True)
            rows[case.name] = row
            table = _write(rows, version)
    print(table, end="")
    return 0


def _max_map_count() -> int:
    """Linux's limit on a process's memory maps (65530 where it cannot be read)."""
    try:
        return int(Path("/proc/sys/vm/max_map_count").read_text())
    except (OSError, ValueError):
        return 65530


def _earlier_rows(version: str) -> dict[str, dict[str, Any]]:
    """The cases of the last report, when it was measured on the same SimGrid: a run of some cases updates them."""
    try:
        data = json.loads((OUT_DIR / "simulation-scale.json").read_text())
        return {row["case"]: row for row in data["cases"]} if data["simgrid"] == version else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _write(rows: dict[str, dict[str, Any]], version: str) -> str:
    """Writes the report (after every case, so that an interrupted benchmark keeps what it measured)."""
    ordered = [rows[case.name] for case in CASES if case.name in rows]
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    atomic_write_text(OUT_DIR / "simulation-scale.json", json.dumps({"simgrid": version, "cases": ordered}, indent=2))
    table = markdown(ordered, version)
    atomic_write_text(OUT_DIR / "simulation-scale.md", table)
    return table


if __name__ == "__main__":
    sys.exit(main())
