"""HPCG per node on the paper machines' nodes, predicted with ``--compute memory``, beside the published HPCG results.

topolab's HPCG (apps/hpcg, the specification's reference algorithms) runs on one node of each machine, one rank per
core, each burst benchmarked on this machine and its memory part (the fraction measured here by contention,
``scripts/measure-memory-fraction``) charged at the rank's share of the node's memory bandwidth: the figure each
platform records (``platforms/machines.toml``). The rating per node is compared with the machine's published HPCG
result divided by the nodes it ran on, where one was found; those results come from tuned vendor implementations
run at full scale, so the comparison checks the order of what a memory-bound code gets from each node, not digits.
docs/computation.md ("HPCG") shows the table and what it means.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import chdir
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path

from generators.errors import missing_build
from generators.files import atomic_write_text
from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.cache import default_cache_dir
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.workdirs import work_directory
from study_runner.tools.smpirun_on import prepare
from study_runner.tools.validation import HPCG_BOX
from study_runner.tools.validation import hpcg_code

__all__ = ["NODES", "Node", "Prediction", "predict"]


@dataclass(frozen=True)
class Node:
    """A machine's node: the platform (a ready file under build/platforms, or a family's arguments), its ranks (one
    per core), its peak, and the published HPCG result per node with its source (None: none found)."""

    name: str
    platform: tuple[str, ...]
    ranks: int
    peak_flops: float
    published_flops: float | None
    source: str


NODES = (
    Node("Blue Gene/Q (Sequoia)", ("sequoia/sequoia.so",), 16, 204.8e9, 330.4e12 / 98304,
         "HPCG list, June 2018 (10th): Sequoia (LLNL), 330.4 Tflop/s on its 98,304 nodes, 3.36 Gflop/s per node, "
         "1.6% of peak, with IBM's optimized HPCG for Blue Gene/Q: 32 MPI tasks of 2 threads per node, 112x32x32 "
         "points per task (IBM/HPCG on GitHub, README, Results; Vulcan, LLNL: 3.29 per node on 24K nodes)"),
    Node("PRIMEHPC FX10", ("fx10/fx10.so",), 16, 236.5e9, None,
         "no HPCG list entry of an FX10 system was found in the sources available to this project"),
    Node("K computer (SPARC64 VIIIfx)",
         ("crossbar", "--hosts", "1", "--cores", "8", "--host-speed", "16Gf", "--memory-bw", "64GBps"), 8, 128e9,
         460.754e12 / 82944,
         "HPCG list, November 2014: 460.754 Tflop/s on 82,944 nodes (RIKEN news, 2014-12-05); 603 Tflop/s "
         "(7.27 Gflop/s per node) in November 2017 after further tuning (RIKEN, 2017-11-16). Node: 8 cores of "
         "16 Gflop/s, 64 GB/s (Maruyama et al., SPARC64 VIIIfx, IEEE Micro 30(2), 2010; hardware figures)"),
    Node("Fugaku (A64FX)", ("fugaku/fugaku.so",), 48, 48 * 70.4e9, 16.00e15 / 158976,
         "HPCG list, November 2021: 16.00 Pflop/s on all 158,976 nodes (RIKEN and Fujitsu, SC21); 13.4 Pflop/s on "
         "138,240 nodes (96.9 Gflop/s per node) in June 2020"),
)  # fmt: skip
"""The paper machines' node types, and the K computer's (the FX10's predecessor, a Tofu machine with an HPCG
result; topolab has no platform of its network, only of its node here)."""


@dataclass(frozen=True)
class Prediction:
    node: str
    ranks: int
    memory_fraction: float
    predicted_flops: float
    peak_flops: float
    published_flops: float | None
    source: str

    @property
    def ratio(self) -> float | None:
        """Predicted / published."""
        return None if self.published_flops is None else self.predicted_flops / self.published_flops


def _platform(node: Node) -> list[str]:
    if node.platform[0].endswith(".so"):
        path = REPO / "build" / "platforms" / node.platform[0]
        if not path.is_file():
            raise StudyError(missing_build(str(path)))
        return [str(path)]
    return list(node.platform)


def predict(node: Node, memory_fraction: float, box: int) -> Prediction:
    """``node``'s HPCG rating, one rank per core on one node, with ``--compute memory`` at ``memory_fraction``."""
    code = hpcg_code(box)
    binary = code.build(default_cache_dir(), "smpi")
    argv = [*_platform(node), "--np", str(node.ranks), "--ranks-per-node", str(node.ranks), "--compute", "memory",
            "--memory-fraction", repr(memory_fraction), "--", str(binary), *code.args(node.ranks)]  # fmt: skip
    label = f"hpcg on a {node.name} node"
    with work_directory("hpcg-nodes") as scratch, chdir(scratch):
        outcome = run_smpirun_measured(prepare(argv), scratch, 3600, label)
    record = code.read(outcome.stdout, scratch, label)
    if not record.get("verified"):
        raise StudyError(f"{label}: the solver did not converge")
    return Prediction(node.name, node.ranks, memory_fraction, float(record["gflops"]) * 1e9, node.peak_flops,
                      node.published_flops, node.source)  # fmt: skip


def table(predictions: list[Prediction]) -> list[str]:
    rows = ["| node | ranks | predicted Gflop/s | of peak | published Gflop/s per node | predicted / published |",
            "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for p in predictions:
        published = "not found" if p.published_flops is None else f"{p.published_flops / 1e9:.2f}"
        ratio = "" if p.ratio is None else f"{p.ratio:.2f}"
        rows.append(f"| {p.node} | {p.ranks} | {p.predicted_flops / 1e9:.2f} | "
                    f"{100 * p.predicted_flops / p.peak_flops:.1f}% | {published} | {ratio} |")  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    """``scripts/check-real-codes --hpcg-nodes``: the table, the memory fraction measured first unless given."""
    parser = argparse.ArgumentParser(prog="check-real-codes --hpcg-nodes", description=__doc__.splitlines()[0])
    parser.add_argument("--hpcg-nodes", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--memory-fraction", type=float, help="HPCG's (default: measured here first)")
    parser.add_argument("--box", type=int, default=HPCG_BOX, help="grid points per dimension and rank (%(default)s)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of the fraction's measurement (%(default)s)")
    parser.add_argument("--json", type=Path, help="also write the predictions to this JSON file")
    args = parser.parse_args(argv)
    try:
        fraction = args.memory_fraction
        if fraction is None:
            from study_runner.tools.validation import memory_fraction

            fraction = memory_fraction(hpcg_code(args.box), args.repeats, default_cache_dir())
        if not 0.0 <= fraction <= 1.0:
            raise StudyError(f"--memory-fraction must be from 0 to 1, got {fraction}")
        predictions = []
        for node in NODES:
            predictions.append(predict(node, fraction, args.box))
            print(table(predictions)[-1], file=sys.stderr)
    except StudyError as err:
        print(f"check-real-codes: error: {err}", file=sys.stderr)
        return 2
    print(f"HPCG {args.box}^3 per rank, memory fraction {fraction:.3f}")
    print("\n".join(table(predictions)))
    for p in predictions:
        print(f"- {p.node}: {p.source}")
    if args.json is not None:
        atomic_write_text(args.json, json.dumps([asdict(p) | {"ratio": p.ratio} for p in predictions], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
