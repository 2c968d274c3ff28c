"""Benchmark: how platform generation and SimGrid loading scale, and whether big routes stay exact.

For each case (a family and its parameters) it measures the generation time and file size of the XML,
the time and peak memory of SimGrid loading and sealing it (``platform_check``), the time SimGrid
takes to compute a deterministic sample of routes, and it checks that every sampled route equals
the model's. Results: ``results/benchmarks/platform-scale.{json,md}``, and the table on stdout.

    scripts/bench-scale                  # every case
    scripts/bench-scale mlfm-18 ...      # some cases (--list names them)

Times are wall-clock times of this machine: a benchmark, not a test.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators import TopologyError
from generators import build_platform
from generators import platform_files
from generators import platform_suffix
from generators import write_platform
from generators.files import atomic_write_text
from study_runner.paths import REPO
from study_runner.simulation.simgrid_options import PLATFORM_CHECK
from study_runner.simulation.workdirs import unwinding_signals
from study_runner.simulation.workdirs import work_directory
from study_runner.tools.cases import case_parser
from study_runner.tools.cases import cases_to_run

OUT_DIR = REPO / "results" / "benchmarks"
SAMPLED_ROUTES = 200


@dataclass(frozen=True)
class Case:
    """One platform to measure."""

    name: str
    family: str
    params: dict[str, Any]


CASES = (
    *(Case(f"mlfm-{d}", "mlfm", {"d": d}) for d in (3, 6, 12, 18)),
    Case("mlfm-testbed", "mlfm", {"d": 3, "servers_per_leaf": "3,3,2"}),
    Case("fattree-36", "fattree", {"radix": 36}),
    Case("mesh-16x32", "mesh", {"width": 16, "height": 32, "nbl": "nominal"}),
    Case("mesh-64x64", "mesh", {"width": 64, "height": 64, "nbl": "nominal"}),
    Case("torus-juqueen-12mp", "torus", {"dims": "12x8x8x4x2", "nbl": "nominal"}),
    Case("torus-mira", "torus", {"dims": "16x16x12x8x2", "nbl": "nominal"}),
    Case("torus-sequoia", "torus", {"dims": "16x16x16x12x2", "nbl": "nominal"}),
    Case("fattree-36-l3", "fattree", {"radix": 36, "levels": 3}),
    Case("hyperx-7x7x7", "hyperx", {"dims": "7x7x7", "hosts": 18}),
    Case("slimfly-q16", "slimfly", {"q": 16}),
    Case(
        "dragonfly-frontier",
        "dragonfly",
        {"groups": 74, "routers": 32, "hosts": 16, "global_ports": 16, "links_per_pair": 4, "routing": "valiant"},
    ),
)


def _load(xml: Path, route_args: list[str], work: Path) -> tuple[float, float, dict[str, Any]]:
    """Run the loader; return its wall time (s), its own peak RSS (MiB) and its JSON report."""
    out_path, err_path = work / "loader.out", work / "loader.err"
    start = time.perf_counter()
    with out_path.open("w") as out, err_path.open("w") as err:
        process = subprocess.Popen([str(PLATFORM_CHECK), str(xml), *route_args], stdout=out, stderr=err)
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:  # interrupted: the loader must not outlive the work directory it writes into
            process.kill()
            process.wait()
            raise
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"SimGrid rejected {xml.name}: {err_path.read_text().strip()[-400:]}")
    return elapsed, usage.ru_maxrss / 1024, json.loads(out_path.read_text())


def measure(case: Case, work: Path) -> dict[str, Any]:
    """Generate, load and sample one case; return its measurements."""
    start = time.perf_counter()
    platform = build_platform(case.family, case.params)
    xml = work / f"{case.name}{platform_suffix(platform)}"
    write_platform(platform, xml)
    generate_s = time.perf_counter() - start
    hosts = platform.host_names
    rng = random.Random(2026)
    pairs = [tuple(rng.sample(hosts, 2)) for _ in range(SAMPLED_ROUTES)]
    load_s, peak_mib, report = _load(xml, [], work)
    routes_s, _, routed = _load(xml, [arg for src, dst in pairs for arg in ("--route", src, dst)], work)
    wrong = [r for r in routed["routes"] if r["links"] != platform.route(r["src"], r["dst"])]
    return {
        "case": case.name,
        "family": case.family,
        "params": case.params,
        "hosts": len(hosts),
        "links": len(platform.links),
        "representation": "compiled" if platform.compiled else "Full" if platform.graph is None else "DijkstraCache",
        "xml_mb": sum(part.stat().st_size for part in platform_files(xml)) / 1e6,
        "generate_s": generate_s,
        "load_s": load_s,
        "loader_peak_rss_mib": peak_mib,
        "sampled_routes": len(pairs),
        "route_lookup_ms": max(routes_s - load_s, 0.0) / len(pairs) * 1e3,
        "sampled_routes_equal_model": not wrong and len(routed["routes"]) == len(pairs),
        "simgrid_hosts": report["hosts"],
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table."""
    lines = [
        "| case | hosts | links | zone | platform files (MB) | generate (s) | SimGrid load (s) | loader peak RSS (MiB) "
        "| route lookup (ms) | sampled routes = model |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['hosts']} | {r['links']} | {r['representation']} | {r['xml_mb']:.2f} "
            f"| {r['generate_s']:.2f} | {r['load_s']:.2f} | {r['loader_peak_rss_mib']:.0f} "
            f"| {r['route_lookup_ms']:.2f} "
            f"| {'yes' if r['sampled_routes_equal_model'] else 'NO'} ({r['sampled_routes']}) |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: measure the named cases (all by default)."""
    args = case_parser("scripts/bench-scale", __doc__.split("\n\n")[0]).parse_args(argv)
    selected = cases_to_run(args, CASES, lambda case: f"{case.family} {case.params}")
    if isinstance(selected, int):
        return selected
    if not PLATFORM_CHECK.is_file():
        print("error: build/bin/platform_check is missing: run scripts/build", file=sys.stderr)
        return 2
    rows = []
    with unwinding_signals(), work_directory("scale") as tmp:
        for number, case in enumerate(selected, 1):
            print(f"[{number}/{len(selected)}] {case.name} ...", file=sys.stderr, flush=True)
            try:
                rows.append(measure(case, tmp))
            except (TopologyError, RuntimeError) as err:
                print(f"error: {case.name}: {err}", file=sys.stderr)
                return 1
    table = markdown(rows)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    atomic_write_text(OUT_DIR / "platform-scale.json", json.dumps(rows, indent=2) + "\n")
    atomic_write_text(OUT_DIR / "platform-scale.md", table)
    print(table, end="")
    return 0 if all(r["sampled_routes_equal_model"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
