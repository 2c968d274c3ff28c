"""``python -m generators FAMILY [params] -o FILE``: write a SimGrid platform (and its hostfile, its picture).

Each family is a subcommand with its own ``--help`` listing its parameters and defaults. Errors go to
stderr as one line ``... error: ...`` with exit status 2, and no output file is written: every value is
checked (an empty one is an error, not the default), an option that would do nothing without another is
refused, and a platform beyond the size limits (``generators.size``) is refused from its estimate, before
anything is built. ``--picture`` without ``-o`` draws the model and writes no platform: it needs no build, where
writing a compiled zone copies its shared object from ``scripts/build``'s (``generators.writer``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
from collections.abc import Sequence
from typing import NoReturn

from generators.errors import TopologyError
from generators.families import FAMILIES
from generators.families import platform_request
from generators.params import REQUIRED
from generators.params import Family
from generators.params import positive_int
from generators.placement import place_ranks
from generators.placement import write_hostfile
from generators.writer import check_platform_path
from generators.writer import write_platform

__all__ = ["OneLineParser", "add_family_params", "given_params", "main", "nonempty"]


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line, ``PROG: error: MESSAGE``, and exit status 2 (no usage dump:
    bad input is one line whatever is wrong, as for the values the families check)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def nonempty(text: str) -> str:
    """An option's text, refused when blank: ``-o ''`` names no file, it does not mean the default."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def add_family_params(parser: argparse.ArgumentParser, family: Family, skip: Collection[str] = ()) -> None:
    """Add one option per declared parameter of ``family`` (``--link-bw`` for ``link_bw``, dest the name), but those
    named in ``skip`` (which the command sets itself).

    Values stay strings: :func:`generators.build_platform` validates them. Shared by the generator CLI and
    ``scripts/smpirun-on``, so a family's parameters are declared once.
    """
    for param in family.params:
        if param.name in skip:
            continue
        required = param.default is REQUIRED
        default = "" if required else f" (default: {param.default})"
        text = (param.help + default).replace("%", "%%")  # argparse formats help with %
        parser.add_argument(param.option, dest=param.name, required=required, help=text)


def given_params(args: argparse.Namespace, family: Family, skip: Collection[str] = ()) -> dict[str, str]:
    """The parameters of ``family`` given on the command line (:func:`add_family_params`), as text, but ``skip``."""
    return {p.name: v for p in family.params if p.name not in skip and (v := getattr(args, p.name, None)) is not None}


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m generators",
        description="Generate a SimGrid platform (XML 4.1) for a topology family.",
    )
    sub = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    for family in FAMILIES.values():
        fp = sub.add_parser(family.name, help=family.summary, description=family.summary)
        add_family_params(fp, family)
        fp.add_argument(
            "-o",
            "--output",
            metavar="FILE",
            type=nonempty,
            help="platform to write (.xml, or .so for a compiled zone); not needed to draw it with --picture",
        )
        fp.add_argument("--hostfile", metavar="FILE", type=nonempty, help="also write a hostfile: rank i on line i")
        fp.add_argument(
            "--ranks", metavar="N", help="ranks in the hostfile (default: every slot of every host; needs --hostfile)"
        )
        fp.add_argument(
            "--ranks-per-node",
            metavar="K",
            help="consecutive ranks on each host, block placement (default: 1; needs --hostfile)",
        )
        fp.add_argument(
            "--picture",
            metavar="FILE.png",
            type=nonempty,
            help="draw the platform's structure to this PNG (from the model alone: no build needed without -o)",
        )
        names = ", ".join(f"{name}:ARG" for name in family.placements)
        policies = "allocation policies contiguous[:START], stride:K[,START], random:SEED, random-chunks:C,SEED"
        fp.add_argument(
            "--placement",
            metavar="SPEC",
            help=f"rank placement of the hostfile ({names + '; ' if names else ''}{policies}; needs --hostfile)",
        )
    return parser


def _hostfile_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[int | None, int]:
    """The checked ``--ranks`` and ``--ranks-per-node``; they and ``--placement`` only shape the hostfile, so each
    needs one."""
    placement = getattr(args, "placement", None)
    shaping = (("--ranks", args.ranks), ("--ranks-per-node", args.ranks_per_node), ("--placement", placement))
    for option, value in shaping:
        if value is not None and args.hostfile is None:
            parser.error(f"{option} needs --hostfile: it only shapes the hostfile, and no hostfile is written")
    ranks = None if args.ranks is None else positive_int(args.ranks, "ranks")
    per_node = 1 if args.ranks_per_node is None else positive_int(args.ranks_per_node, "ranks per node")
    return ranks, per_node


def main(argv: Sequence[str] | None = None) -> int:
    """Run the generator CLI; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.output is None and args.picture is None and args.hostfile is None:
        parser.error("nothing to write: give -o FILE (the platform), --picture FILE.png or --hostfile FILE")
    family = FAMILIES[args.family]
    given = given_params(args, family)
    try:
        ranks, per_node = _hostfile_options(parser, args)
        # too large: refused before anything is built
        request = platform_request(args.family, given, written=args.output is not None)
        if args.output is not None:
            check_platform_path(args.output, compiled=request.size.compiled)
        platform = request.build()
        if args.picture:  # check that it can be drawn before writing anything
            from generators.drawing import check_picture

            check_picture(platform, args.picture)
        hosts = None
        if args.hostfile:
            hosts = place_ranks(platform, ranks, getattr(args, "placement", None), per_node)
        if args.output is not None:
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
    if args.output is not None:
        print(f"wrote {args.output}: {len(platform.hosts)} hosts, {len(platform.links)} links", file=sys.stderr)
    if args.picture:
        print(f"wrote {args.picture}", file=sys.stderr)
    return 0
