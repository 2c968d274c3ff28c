"""Benchmark: wall time and memory of topolab's largest simulations, beside SimGrid's own clusters.

    scripts/bench-sim                      # every case (about 15 min on 2 cores; the 16 x 32 combine is most of it)
    scripts/bench-sim pairing-12288 ...    # some cases (--list names them); the others keep their last figures
    scripts/bench-sim --no-reference       # topolab's platforms only

Cases: the furthest-node pairing exactly as the bgq-pairing study runs it (128 MiB chunks, one warm-up and
one timed round, the study's SMPI options) on Mira's partitions of 512 to 49152 nodes; one nbl-combine run
on the 16 x 32 DELTA mesh (the study's slowest of that mesh); one phase of the MLFM all-to-all on d = 18
(6156 servers, 256 MiB blocks, ``alltoall --phases 2``). Each runs on topolab's platform (the compiled torus
zone, the mesh's and the MLFM's XML) and, as a reference, on the SimGrid cluster that carries the same run:
``<cluster topology="TORUS">`` for the pairing (the same routes: dimension order, SimGrid's own tie rule, no
limiter) and for the combine (only neighbours talk, so no route has a transit node and SimGrid's
every-node limiter is the endpoint one), a flat ``<cluster>`` (one star, the cheapest platform SimGrid has)
for the MLFM phase, whose routes nothing in SimGrid reproduces. The report gives both wall times, their
ratio, both simulated times (equal when the reference carries the same model) and the peak memory of the
simulation (what smpirun's processes held, SMPI's folded shared buffers each page once: ``simulation.memory``;
the before column of runs made before that figure existed is their RssAnon).

The "before" column is read from ``docs/benchmarks/simulation-scale-before.json``: the same runs measured
on this machine with topolab as it was before SimGrid 4.1 (commit ac4f983, SimGrid 3.32), and the command
of each. Results: ``results/benchmarks/simulation-scale.{json,md}``. Times are this machine's: a benchmark,
not a test.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

from generators import build_platform, place_ranks, platform_suffix, write_hostfile, write_platform
from generators.files import atomic_write_text
from paper_models import bgq
from study_runner.batch.execute import parse_records, simgrid_version
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.smpi import folded_buffer_options, run_smpirun_measured, smpirun_command
from study_runner.simulation.workdirs import unwinding_signals, work_directory
from study_runner.studies.study import load_study
from study_runner.tools.cases import case_parser, cases_to_run

BIN = REPO / "build" / "bin"
OUT_DIR = REPO / "results" / "benchmarks"
BEFORE = REPO / "docs" / "benchmarks" / "simulation-scale-before.json"
TIMEOUT_S = 3600


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


def _study_run(study: str, grid: str, run_id: str | None = None) -> RunSpec:
    """A run of a study's grid (its first, or ``run_id``): the benchmarks run what the studies run."""
    runs = [run for run in load_study(study).runs if run.grid == grid and run_id in (None, run.id)]
    if not runs:
        raise StudyError(f"{study}: no run {run_id or ''} in grid {grid!r} to benchmark")
    return runs[0]


def _pairing(midplanes: tuple[int, ...]) -> Case:
    """The bgq-pairing study's run (its arguments and options) on any partition, the whole machine too."""
    study_run = _study_run("bgq-pairing", "pairing")
    dims = bgq.node_dims(midplanes)
    ranks = 1
    for d in dims:
        ranks *= d
    shape = "x".join(map(str, dims))
    return Case(
        name=f"pairing-{ranks}",
        what=f"bisection pairing, {shape} torus ({ranks} ranks), 128 MiB chunks",
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


def _mlfm_phase() -> Case:
    d = 18
    return Case(
        name="mlfm-18-phase",
        what=f"one phase of the mlfm all-to-all, MLFM d = {d} ({d * (d + 1) * d} servers), 256 MiB blocks",
        family="mlfm",
        params={"d": d},
        app="alltoall",
        args=(
            "-a",
            "mlfm",
            "--shape",
            f"{d},{d + 1},{d}",
            "-s",
            "256M",
            "--phases",
            "2",
            "--local-copy",
            "skip",
            "-w",
            "0",
            "-i",
            "1",
        ),
        options=folded_buffer_options(1 << 20),
        ranks=d * (d + 1) * d,
        placement=f"allocation:{d},{d + 1},{d}",
        reference=flat_cluster("4GBps"),
        reference_kind="SimGrid flat cluster (a star: not the same network)",
        time_field="time_s_max",
    )


CASES = (
    *(_pairing(midplanes) for midplanes in ((1, 1, 1, 1), *(bgq.MIRA_CURRENT[m] for m in (4, 8, 16, 24)))),
    _pairing(bgq.MIRA),
    _combine(),
    _mlfm_phase(),
)


def _run(case: Case, platform: Path, hostfile: Path, work: Path) -> dict[str, Any]:
    """Simulate ``case`` on ``platform``; its wall time, peak memory and simulated time."""
    command = smpirun_command(BIN / case.app, case.args, platform, hostfile, case.ranks, case.options)
    outcome = run_smpirun_measured(command, work, TIMEOUT_S, f"{case.name} on {platform.name}")
    (record,) = parse_records(outcome.stdout, case.name)
    return {"wall_s": outcome.wall_s, "peak_memory_mib": outcome.peak_memory_mib,
            "simulated_s": record[case.time_field], "command": command}  # fmt: skip


def measure(case: Case, work: Path, reference: bool) -> dict[str, Any]:
    """Run one case on topolab's platform and (``reference``) on SimGrid's cluster."""
    model = build_platform(case.family, case.params)
    platform = work / f"{case.name}{platform_suffix(model)}"
    write_platform(model, platform)
    hostfile = work / f"{case.name}.hosts"
    write_hostfile(place_ranks(model, case.ranks, case.placement), hostfile)
    row: dict[str, Any] = {"case": case.name, "what": case.what, "ranks": case.ranks,
                           "topolab": _run(case, platform, hostfile, work)}  # fmt: skip
    if reference and case.reference is not None:
        cluster = work / f"{case.name}.cluster.xml"
        cluster.write_text(case.reference(case.ranks))
        cluster_hosts = work / f"{case.name}.cluster.hosts"
        # The reference numbers its hosts host-0 ... in the order topolab's hostfile places the ranks.
        order = {name: k for k, name in enumerate(model.host_names)}
        write_hostfile([f"host-{order[h]}" for h in hostfile.read_text().split()], cluster_hosts)
        row["reference"] = _run(case, cluster, cluster_hosts, work) | {"kind": case.reference_kind}
    return row


def _before() -> tuple[str, dict[str, dict[str, Any]]]:
    """Where the "before" measurements come from, and each case's."""
    if not BEFORE.is_file():
        return "not measured", {}
    data = json.loads(BEFORE.read_text())
    return data["source"], {row["case"]: row for row in data["cases"]}


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _speed_up(ratio: float) -> str:
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"


def _mib(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"


def markdown(rows: list[dict[str, Any]], version: str) -> str:
    """The results as Markdown: one table, then what each case is."""
    source, before = _before()
    lines = [
        f"# Simulation speed at scale ({version}, this machine)",
        "",
        f"Before: {source}. After: this run. Reference: SimGrid's own cluster running the same app, options and "
        "hostfile (what it is, per case, below). Wall times in seconds, memory in MiB (peak of what smpirun's "
        "processes held, shared buffers once; before: RssAnon where measured before that). Simulated: the case's time, "
        "in seconds, after and on the reference.",
        "",
        "| case | ranks | before (s) | before (MiB) | after (s) | after (MiB) | speed-up | reference (s) "
        "| after / reference | simulated after | simulated reference |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        after, ref, old = r["topolab"], r.get("reference", {}), before.get(r["case"], {})
        old_wall = old.get("wall_s")
        cells = [
            f"`{r['case']}`",
            str(r["ranks"]),
            _seconds(old_wall) or old.get("note", ""),
            _mib(old.get("peak_memory_mib", old.get("peak_private_mib"))),  # before files of earlier runs: private only
            _seconds(after["wall_s"]),
            _mib(after["peak_memory_mib"]),
            _speed_up(old_wall / after["wall_s"]) if old_wall else "",
            _seconds(ref.get("wall_s")),
            f"{after['wall_s'] / ref['wall_s']:.2f}" if ref else "",
            f"{after['simulated_s']:.9g}",
            f"{ref['simulated_s']:.9g}" if ref else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Cases:", ""]
    for r in rows:
        reference = f"; reference: {r['reference']['kind']}" if "reference" in r else ""
        lines.append(f"- `{r['case']}`: {r['what']}{reference}")
    unmeasured = [(r["case"], before[r["case"]]) for r in rows if "why" in before.get(r["case"], {})]
    if unmeasured:
        lines += ["", "Before, where there is no figure:", ""]
        lines += [f"- `{name}` ({old['note']}): {old['why']}" for name, old in unmeasured]
    return "\n".join(lines) + "\n"


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
            try:
                row = measure(case, tmp, not args.no_reference)
            except StudyError as err:
                print(f"error: {err}", file=sys.stderr)
                return 1
            print(f"    topolab {row['topolab']['wall_s']:.1f} s" + (
                f", reference {row['reference']['wall_s']:.1f} s" if "reference" in row else ""),
                file=sys.stderr, flush=True)  # fmt: skip
            rows[case.name] = row
            table = _write(rows, version)
    print(table, end="")
    return 0


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
