"""``python -m generators FAMILY [params] -o FILE``: write a SimGrid platform (and its hostfile, its picture).

Each family is a subcommand with its own ``--help`` listing its parameters and defaults. Errors go to
stderr as one line ``generators: error: ...`` with exit status 2, and no output file is written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from generators.errors import TopologyError
from generators.families import FAMILIES, build_platform
from generators.params import REQUIRED, Family
from generators.placement import place_ranks, write_hostfile
from generators.writer import write_platform

__all__ = ["add_family_params", "main"]


def add_family_params(parser: argparse.ArgumentParser, family: Family) -> None:
    """Add one option per declared parameter of ``family`` (``--link-bw`` for ``link_bw``, dest the name).

    Values stay strings: :func:`generators.build_platform` validates them. Shared by the generator CLI and
    ``scripts/smpirun-on``, so a family's parameters are declared once.
    """
    for param in family.params:
        required = param.default is REQUIRED
        default = "" if required else f" (default: {param.default})"
        parser.add_argument(param.option, dest=param.name, required=required, help=param.help + default)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m generators",
        description="Generate a SimGrid platform (XML 4.1) for a topology family.",
    )
    sub = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    for family in FAMILIES.values():
        fp = sub.add_parser(family.name, help=family.summary, description=family.summary)
        add_family_params(fp, family)
        fp.add_argument("-o", "--output", required=True, metavar="FILE", help="platform XML to write")
        fp.add_argument("--hostfile", metavar="FILE", help="also write a hostfile, one rank per host")
        fp.add_argument("--ranks", metavar="N", type=int, help="ranks in the hostfile (default: all hosts)")
        fp.add_argument("--picture", metavar="FILE.png", help="also draw the platform's structure to this PNG")
        if family.placements:
            names = ", ".join(f"{name}:ARG" for name in family.placements)
            fp.add_argument("--placement", metavar="SPEC", help=f"rank placement of the hostfile ({names})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the generator CLI; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    family = FAMILIES[args.family]
    given = {p.name: getattr(args, p.name) for p in family.params if getattr(args, p.name) is not None}
    try:
        platform = build_platform(args.family, given)
        if args.picture:  # check that it can be drawn before writing anything
            from generators.drawing import check_picture

            check_picture(platform, args.picture)
        hosts = None
        if args.hostfile:
            hosts = place_ranks(platform, args.ranks, getattr(args, "placement", None))
        write_platform(platform, args.output)
        if hosts is not None:
            write_hostfile(hosts, args.hostfile)
        if args.picture:
            from generators.drawing import draw_platform

            draw_platform(platform, args.picture)
    except TopologyError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    except OSError as err:
        parser.exit(1, f"{parser.prog}: error: cannot write output: {err}\n")
    print(f"wrote {args.output}: {len(platform.hosts)} hosts, {len(platform.links)} links", file=sys.stderr)
    if args.picture:
        print(f"wrote {args.picture}", file=sys.stderr)
    return 0
