"""``python -m generators.opensm FAMILY [params] --engine ENGINE``: a family's fabric routed by OpenSM under ibsim
(``generators.opensm``), with failed cables and switches if asked, every pair's path checked, compared with the
family's own routes and with a static link-load analysis of shift permutations; one JSON object on stdout, and the
platform of the tables with ``-o`` (docs/opensm.md)."""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from generators.cli import OneLineParser
from generators.cli import add_family_params
from generators.cli import given_params
from generators.cli import nonempty
from generators.errors import TopologyError
from generators.families import FAMILIES
from generators.families import build_platform
from generators.faults import NO_FAULTS
from generators.faults import Faults
from generators.faults import draw
from generators.ibnetdiscover import read_fabric
from generators.model import Platform
from generators.opensm import ENGINES
from generators.opensm import MAX_HOSTS
from generators.opensm import Fabric
from generators.opensm import Tables
from generators.opensm import Unrouted
from generators.opensm import cables_of
from generators.opensm import check_writable
from generators.opensm import fabric_of
from generators.opensm import opensm_platform
from generators.opensm import rule_path
from generators.opensm import run_opensm
from generators.opensm import switch_path
from generators.params import bandwidth
from generators.params import latency
from generators.subnet import SUBNET_APPLIED
from generators.writer import write_platform

__all__ = ["busiest", "compare", "main", "permutation_flows", "worst_shift"]


PERMUTATIONS = 10
"""Random permutations whose busiest cable is averaged (seeds 0 .. PERMUTATIONS - 1)."""


def busiest(pairs: Sequence[tuple[str, str]], path: Mapping[tuple[str, str], list[str]]) -> int:
    """Flows on the busiest switch-to-switch cable when every pair of ``pairs`` sends one (those without a path in
    ``path`` send nothing)."""
    load: Counter[tuple[str, str]] = Counter()
    for pair in pairs:
        switches = path.get(pair)
        if switches is not None:
            load.update(itertools.pairwise(switches))
    return max(load.values(), default=0)


def worst_shift(hosts: Sequence[str], path: Mapping[tuple[str, str], list[str]]) -> tuple[int, int]:
    """(shift, flows) of the shift permutation (host i to i + shift) whose busiest cable carries the most flows, the
    first such shift."""
    worst = (0, 0)
    for shift in range(1, len(hosts)):
        flows = busiest([(src, hosts[(i + shift) % len(hosts)]) for i, src in enumerate(hosts)], path)
        worst = max(worst, (shift, flows), key=lambda pair: pair[1])
    return worst


def permutation_flows(hosts: Sequence[str], path: Mapping[tuple[str, str], list[str]]) -> float:
    """The busiest cable's flows under a random permutation of the hosts, averaged over ``PERMUTATIONS`` seeds."""
    total = 0
    for seed in range(PERMUTATIONS):
        targets = list(hosts)
        random.Random(seed).shuffle(targets)
        total += busiest([(a, b) for a, b in zip(hosts, targets, strict=True) if a != b], path)
    return total / PERMUTATIONS


def compare(platform: Platform, fabric: Fabric, tables: Tables, rule: bool = True) -> dict[str, object]:
    """OpenSM's ``tables`` of ``platform``'s ``fabric``, and against the family's own rule when ``rule`` (a discovered
    fabric has none): the CLI's JSON object."""
    managed = fabric.managed()
    pairs = [(a, b) for a in fabric.hosts for b in fabric.hosts if a != b]
    reached = [(a, b) for a, b in pairs if a in managed and b in managed]
    opensm = {}
    for pair in reached:
        try:
            opensm[pair] = switch_path(fabric, tables, *pair)
        except Unrouted:
            pass
    shift, flows = worst_shift(fabric.hosts, opensm)
    result = {
        "platform": platform.name, "engine": tables.engine, "hosts": len(fabric.hosts),
        "switches": len(fabric.switches), "opensm_s": round(tables.seconds, 3), "pairs": len(pairs),
        "pairs_routed": len(opensm), "pairs_cut_off": len(pairs) - len(reached),
        "pairs_unrouted": len(reached) - len(opensm), "worst_shift": shift, "worst_shift_flows": flows,
        "random_permutation_flows": permutation_flows(fabric.hosts, opensm),
    }  # fmt: skip
    if not rule:
        return result
    ruled = {pair: rule_path(platform, fabric, *pair) for pair in pairs}
    same = sum(opensm[pair] == ruled[pair] for pair in opensm)
    rule_shift, rule_flows = worst_shift(fabric.hosts, ruled)
    return result | {
        "pairs_as_rule": same, "pairs_unlike_rule": len(opensm) - same, "rule_worst_shift": rule_shift,
        "rule_worst_shift_flows": rule_flows, "rule_random_permutation_flows": permutation_flows(fabric.hosts, ruled),
    }  # fmt: skip


def _common(fp: argparse.ArgumentParser) -> None:
    fp.add_argument("--engine", required=True, choices=ENGINES, help="OpenSM's routing engine (opensm -R)")
    fp.add_argument(
        "--fail-cables", metavar="SPEC", type=nonempty,
        help="failed cables: a-end/b-end,... by name, or N or P%% of the inner cables drawn with --fail-seed",
    )  # fmt: skip
    fp.add_argument(
        "--fail-switches", metavar="SPEC", type=nonempty,
        help="failed switches: names, or N or P%% of them drawn with --fail-seed (a torus node's switch: HOST-sw)",
    )  # fmt: skip
    fp.add_argument("--fail-seed", type=int, default=0, help="seed of the drawn failures (default 0)")
    fp.add_argument("--timeout", type=float, default=300.0, help="seconds for ibsim and OpenSM (default 300)")
    fp.add_argument(
        "-o", "--output", metavar="FILE", type=nonempty,
        help="also write the platform routed by the tables: FILE.so, a compiled zone that follows them, or FILE.xml, "
        f"a route per pair (up to {MAX_HOSTS} hosts)",
    )  # fmt: skip


def _parser() -> OneLineParser:
    parser = OneLineParser(
        prog="python -m generators.opensm",
        description="Route a topolab family's fabric, or a fabric file (ibnetdiscover's output, an ibsim net file), "
        "with OpenSM under ibsim, check every pair's path and compare it with the family's own routes (one JSON "
        "object on stdout).",
    )
    sub = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    fp = sub.add_parser("fabric", help="a fabric file: ibnetdiscover > FILE on a cluster, or an ibsim net file")
    fp.add_argument("file", metavar="FILE", type=Path, help="the fabric: ibnetdiscover's output or an ibsim net file")
    fp.add_argument("--link-bw", help="bandwidth of every cable, per direction (default: each cable's width x speed)")
    fp.add_argument("--link-lat", default="100ns", help="latency of every cable (default: 100ns)")
    _common(fp)
    for family in FAMILIES.values():
        fp = sub.add_parser(family.name, help=family.summary, description=family.summary)
        add_family_params(fp, family, skip=SUBNET_APPLIED)  # --engine and the failures: this command's
        _common(fp)
    return parser


def _platform(args: argparse.Namespace) -> tuple[Platform, Callable[[Faults], Fabric], bool]:
    """The platform asked for, the fabric of it but given faults, and whether it has a rule of its own."""
    if args.family == "fabric":
        text = read_fabric_file(args.file)
        link_bw = None if args.link_bw is None else bandwidth(args.link_bw, "link_bw")
        link_lat = latency(args.link_lat, "link_lat")

        def fabric(faults: Faults) -> Fabric:
            return read_fabric(text, str(args.file), link_bw, link_lat, faults)[1]

        return read_fabric(text, str(args.file), link_bw, link_lat)[0], fabric, False
    family = FAMILIES[args.family]
    given = given_params(args, family, skip=SUBNET_APPLIED)
    platform = build_platform(args.family, given)
    return platform, lambda faults: fabric_of(platform, faults), True


def read_fabric_file(path: Path) -> str:
    """A fabric file's text; a missing or unreadable one is one error."""
    try:
        return path.read_text(errors="replace")
    except OSError as error:
        raise TopologyError(f"cannot read the fabric file {path}: {error.strerror}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit status (2 and one line on stderr for bad input or a failing engine)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        platform, fabric_with, rule = _platform(args)
        if args.output is not None:
            check_writable(platform, compiled=Path(args.output).suffix == ".so")
        whole = fabric_with(NO_FAULTS)
        hosts = frozenset(whole.hosts)
        faults = draw(args.fail_cables, args.fail_switches, args.fail_seed, cables_of(platform), whole.switches, hosts)
        fabric = fabric_with(faults)
        tables = run_opensm(fabric, args.engine, args.timeout)
        result = compare(platform, fabric, tables, rule)
        result |= {"failed_cables": len(faults.cables), "failed_switches": len(faults.switches)}
        if args.output is not None:
            routed = opensm_platform(platform, fabric, tables, compiled=Path(args.output).suffix == ".so")
            write_platform(routed, args.output)
    except TopologyError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
