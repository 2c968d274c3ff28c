"""``python -m generators.opensm_failures FAMILY [params]``: how OpenSM's engines route a fabric as its cables fail.

For each engine and each fraction of failed switch-to-switch cables (drawn by seeds 1 .. ``--seeds``), OpenSM routes
the degraded fabric under ibsim (``generators.opensm``) and the tables are analysed statically: the pairs cut off
from the subnet manager, the pairs the engine left without a route, and the busiest cable's flows under the worst
shift permutation and under random permutations (``generators.opensm_cli``). An engine that refuses the degraded
fabric (OpenSM would fall back to minhop) is recorded with its reason. Writes ``failures.csv`` (one row per engine,
fraction and seed) and ``failures.png`` into ``--out``, each atomically; progress on stderr (docs/opensm.md).
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from generators.cli import OneLineParser
from generators.cli import add_family_params
from generators.cli import given_params
from generators.errors import TopologyError
from generators.families import FAMILIES
from generators.families import build_platform
from generators.faults import draw
from generators.files import atomic_path
from generators.files import atomic_write_text
from generators.opensm import ENGINES
from generators.opensm import OpenSMError
from generators.opensm import cables_of
from generators.opensm import fabric_of
from generators.opensm import run_opensm
from generators.opensm_cli import compare
from generators.subnet import SUBNET_APPLIED

__all__ = ["COLUMNS", "main", "sweep"]

COLUMNS = (
    "engine", "failed_percent", "seed", "failed_cables", "pairs", "pairs_cut_off", "pairs_unrouted",
    "worst_shift_flows", "random_permutation_flows", "opensm_s", "refused",
)  # fmt: skip


def sweep(family: str, params: dict[str, object], engines: Sequence[str], percents: Sequence[float], seeds: int):
    """One row (a dict of ``COLUMNS``) per engine, failed percentage and seed (one seed for 0%)."""
    platform = build_platform(family, params)
    whole = fabric_of(platform)
    cables, hosts = cables_of(platform), frozenset(whole.hosts)
    points = [(engine, percent, seed) for engine in engines for percent in percents
              for seed in (range(1, 2) if percent == 0 else range(1, seeds + 1))]  # fmt: skip
    for number, (engine, percent, seed) in enumerate(points, 1):
        print(f"opensm_failures: {number}/{len(points)}: {engine}, {percent:g}% failed, seed {seed}", file=sys.stderr)
        faults = draw(f"{percent:g}%", None, seed, cables, whole.switches, hosts)
        row: dict[str, object] = {"engine": engine, "failed_percent": percent, "seed": seed}
        row["failed_cables"] = len(faults.cables)
        fabric = fabric_of(platform, faults)
        try:
            result = compare(platform, fabric, run_opensm(fabric, engine), rule=False)
        except OpenSMError as error:
            if "did not route this fabric" not in str(error):
                raise
            yield row | {"refused": str(error).split("(", 1)[-1].rstrip(")")}
            continue
        yield row | {key: result[key] for key in COLUMNS if key in result} | {"refused": ""}


def _figure(rows: list[dict[str, object]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (lost, load) = plt.subplots(1, 2, figsize=(10, 4))
    for engine in dict.fromkeys(str(row["engine"]) for row in rows):
        done = [row for row in rows if row["engine"] == engine and not row["refused"]]
        percents = sorted({float(row["failed_percent"]) for row in done})  # type: ignore[arg-type]
        if not percents:
            continue

        def mean(key: str, percent: float, rows: list[dict[str, object]] = done) -> float:
            values = [float(row[key]) for row in rows if row["failed_percent"] == percent]  # type: ignore[arg-type]
            return sum(values) / len(values)

        unreachable = [(mean("pairs_cut_off", p) + mean("pairs_unrouted", p)) / mean("pairs", p) for p in percents]
        lost.plot(percents, [100 * u for u in unreachable], marker="o", label=engine)
        load.plot(percents, [mean("random_permutation_flows", p) for p in percents], marker="o", label=engine)
    lost.set(xlabel="failed switch-to-switch cables (%)", ylabel="host pairs without a route (%)")
    load.set(xlabel="failed switch-to-switch cables (%)", ylabel="busiest cable, random permutation (flows)")
    for axes in (lost, load):
        axes.grid(alpha=0.3)
        axes.legend()
    figure.suptitle(title)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep; 2 and one line on stderr for bad input."""
    parser = OneLineParser(prog="python -m generators.opensm_failures", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    for family in FAMILIES.values():
        fp = sub.add_parser(family.name, help=family.summary, description=family.summary)
        add_family_params(fp, family, skip=SUBNET_APPLIED)  # the sweep draws the failures itself
        fp.add_argument("--engines", default="minhop,updn,dfsssp,ftree", help="OpenSM engines, comma-separated")
        fp.add_argument("--percents", default="0,1,2,5,10", help="failed cables in %% (default 0,1,2,5,10)")
        fp.add_argument("--seeds", type=int, default=3, help="draws of each percentage but 0 (default 3)")
        fp.add_argument("--out", type=Path, required=True, help="directory for failures.csv and failures.png")
    args = parser.parse_args(argv)
    family = FAMILIES[args.family]
    given = given_params(args, family, skip=SUBNET_APPLIED)
    engines = [engine.strip() for engine in args.engines.split(",")]
    try:
        percents = [float(p) for p in args.percents.split(",")]
    except ValueError:
        parser.error(f"--percents must be numbers, got {args.percents!r}")
    try:
        unknown = [engine for engine in engines if engine not in ENGINES]
        if unknown:
            raise TopologyError(f"unknown OpenSM routing engine {unknown[0]!r}; known: {', '.join(ENGINES)}")
        if args.seeds < 1 or any(not 0 <= p <= 100 for p in percents):
            raise TopologyError("--seeds must be at least 1 and --percents between 0 and 100")
        rows = list(sweep(args.family, given, engines, percents, args.seeds))
    except TopologyError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(args.out / "failures.csv", text.getvalue())
    params = " ".join(f"{key}={value}" for key, value in given.items())
    _figure(rows, args.out / "failures.png", f"OpenSM under failures: {args.family} {params}".strip())
    print(f"wrote {args.out / 'failures.csv'} ({len(rows)} rows) and {args.out / 'failures.png'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
