"""``python -m paper_models.bgq``: the best and worst Blue Gene/Q partition geometries of one size by internal bisection
(Oltchik & Schwartz, isoperimetric analysis; the model is ``generators.bgq``, which the torus family's ``partition``
placement allocates from).

    python -m paper_models.bgq --machine mira|juqueen|sequoia|AxBxCxD (--midplanes M | --nodes N) [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from generators.bgq import MIDPLANE_NODES
from generators.bgq import best_partition
from generators.bgq import midplanes_for_nodes
from generators.bgq import node_dims
from generators.bgq import parse_machine
from generators.bgq import worst_partition
from generators.errors import TopologyError

__all__ = ["main"]


def _int_arg(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise TopologyError(f"{name} must be an integer, got {text!r}") from None


def _fmt(dims: Sequence[int]) -> str:
    return "x".join(map(str, dims))


def main(argv: Sequence[str] | None = None) -> int:
    """Print the best and worst partition geometries of one size on a machine; 0 on success, 2 on bad input."""
    parser = argparse.ArgumentParser(
        prog="bgq", description="Best and worst Blue Gene/Q partition geometries by internal bisection."
    )
    parser.add_argument("--machine", required=True, help="mira, juqueen, sequoia or AxBxCxD midplanes")
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--midplanes", help="partition size in midplanes")
    size.add_argument("--nodes", help="partition size in compute nodes (a multiple of 512)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    try:
        machine = parse_machine(args.machine)
        if args.midplanes is not None:
            midplanes = _int_arg(args.midplanes, "midplanes")
            if midplanes < 1:
                raise TopologyError(f"midplanes must be an integer >= 1, got {midplanes}")
        else:
            midplanes = midplanes_for_nodes(_int_arg(args.nodes, "nodes"))
        best, best_bw = best_partition(machine, midplanes)
        worst, worst_bw = worst_partition(machine, midplanes)
    except TopologyError as err:
        print(f"bgq: error: {err}", file=sys.stderr)
        return 2
    nodes = midplanes * MIDPLANE_NODES
    if args.json:
        out = {
            "machine": list(machine),
            "midplanes": midplanes,
            "nodes": nodes,
            "best": {"geometry": list(best), "node_dims": list(node_dims(best)), "bisection": best_bw},
            "worst": {"geometry": list(worst), "node_dims": list(node_dims(worst)), "bisection": worst_bw},
        }
        print(json.dumps(out))
    else:
        print(f"machine {_fmt(machine)} midplanes, partition of {midplanes} midplanes ({nodes} nodes)")
        print(f"best  {_fmt(best)} midplanes = {_fmt(node_dims(best))} nodes, bisection {best_bw} links")
        print(f"worst {_fmt(worst)} midplanes = {_fmt(node_dims(worst))} nodes, bisection {worst_bw} links")
    return 0


if __name__ == "__main__":
    sys.exit(main())
