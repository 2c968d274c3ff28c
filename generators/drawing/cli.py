"""``python -m generators.drawing DIRECTORY [--family NAME ...]``: every family drawn at a representative size."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from generators.drawing.pictures import draw_all_families
from generators.errors import TopologyError

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m generators.drawing DIRECTORY [--family NAME ...]``: print each picture written; exit status 2
    with one ``error:`` line for an unknown family or a directory that cannot be written."""
    parser = _Parser(prog="generators.drawing", description="Draw every topology family at a representative size.")
    parser.add_argument("directory", help="where to write <family>.png")
    parser.add_argument("--family", action="append", metavar="NAME", help="draw only this family (repeatable)")
    args = parser.parse_args(argv)
    try:
        for path in draw_all_families(args.directory, args.family):
            print(path)
    except TopologyError as err:
        parser.error(str(err))
    except OSError as err:
        parser.error(f"cannot write: {err}")
    return 0
