"""``smpirun-on --compute memory``: benchmarked computation whose memory part is charged at the rank's share of the
node's memory bandwidth (``study_runner.simulation.node_memory`` has the model, ``docs/computation.md`` what a
prediction means).

What the mode needs, and where it comes from:

- the code's memory fraction ``--memory-fraction M`` (``scripts/measure-memory-fraction`` measures it here);
- the target node's memory bandwidth (a data-sheet figure: 42.6 GB/s for a Blue Gene/Q node) and, when known, what
  one core draws alone (else a rank alone gets the node's): the figures the platform records (its node parameters
  ``memory_bw`` and ``core_memory_bw``, ``generators.node``; the paper machines of ``platforms/`` have theirs), or
  ``--memory-bw`` and ``--core-memory-bw`` on a platform file;
- the ranks on a node: the most that the hostfile puts on one host (every rank of a node streams at once, as the
  ranks of an SPMD code do);
- the target's core speed: the platform file's;
- this machine's speed and memory bandwidth: the calibrations (``scripts/calibrate-compute``).

The platform of this machine records both bandwidths from this machine's memory calibration.
"""

from __future__ import annotations

import argparse

from generators.errors import TopologyError
from generators.units import parse_bandwidth
from study_runner.errors import UsageError
from study_runner.simulation.node_memory import MemoryTarget

__all__ = ["MEMORY_MODE", "fraction", "memory_target", "unused"]

MEMORY_MODE = "memory"
OPTIONS = ("memory_fraction", "memory_bw", "core_memory_bw")


def unused(args: argparse.Namespace, *, platform_figures: bool) -> None:
    """Refuse the mode's options without the mode: they would change nothing, silently. A family's ``--memory-bw``
    and ``--core-memory-bw`` (``platform_figures``) are node parameters its platform records, never unused."""
    names = ("memory_fraction",) if platform_figures else OPTIONS
    given = [f"--{name.replace('_', '-')}" for name in names if getattr(args, name) is not None]
    if given and args.compute != MEMORY_MODE:
        raise UsageError(f"{given[0]} is an option of --compute memory, not of --compute {args.compute}")


def fraction(args: argparse.Namespace) -> float:
    """The code's memory fraction, between 0 and 1."""
    if args.memory_fraction is None:
        raise UsageError(
            "--compute memory needs the code's --memory-fraction M (scripts/measure-memory-fraction measures it)"
        )
    try:
        value = float(args.memory_fraction)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"--memory-fraction must be a number from 0 to 1, got {args.memory_fraction!r}")
    return value


def memory_target(
    args: argparse.Namespace, recorded: tuple[float | None, float | None], ranks_on_node: int
) -> MemoryTarget:
    """The node's memory, shared by ``ranks_on_node`` ranks: the bandwidths given on the command line, else those
    the platform file records (``recorded``: node, core)."""

    def bandwidth(option: str, text: str | None, default: float | None) -> float | None:
        try:
            return default if text is None else parse_bandwidth(text, option)
        except TopologyError as err:
            raise UsageError(str(err)) from None

    node = bandwidth("--memory-bw", getattr(args, "memory_bw", None), recorded[0])
    core = bandwidth("--core-memory-bw", getattr(args, "core_memory_bw", None), recorded[1])
    if node is None:
        raise UsageError(
            "--compute memory needs the node's memory bandwidth: the platform records none (a family's --memory-bw, "
            "or --memory-bw BW with a platform file, e.g. 42.6GBps)"
        )
    return MemoryTarget(node, ranks_on_node, core)
