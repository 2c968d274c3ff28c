"""Benchmark cases chosen by name on a command line (``scripts/bench-scale``, ``scripts/bench-sim``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from collections.abc import Sequence
from typing import Protocol
from typing import TypeVar

__all__ = ["case_parser", "cases_to_run", "select_cases"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


Case = TypeVar("Case", bound=_Named)


def case_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A parser with the case names (all when none) and ``--list``; the caller adds its own options."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("cases", nargs="*", help="cases to run (default: all; --list names them)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    return parser


def select_cases(requested: Sequence[str], cases: Sequence[Case]) -> list[Case]:
    """The named cases in the order given, or every case when none is named.

    >>> from collections import namedtuple
    >>> C = namedtuple("C", "name")
    >>> [c.name for c in select_cases(["b"], [C("a"), C("b")])], len(select_cases([], [C("a"), C("b")]))
    (['b'], 2)
    >>> select_cases(["z"], [C("a")])
    Traceback (most recent call last):
    ValueError: unknown case 'z'; known: a
    """
    by_name = {case.name: case for case in cases}
    unknown = [name for name in requested if name not in by_name]
    if unknown:
        raise ValueError(f"unknown case {unknown[0]!r}; known: {', '.join(by_name)}")
    return [by_name[name] for name in requested] if requested else list(cases)


def cases_to_run(args: argparse.Namespace, cases: Sequence[Case], describe: Callable[[Case], str]) -> list[Case] | int:
    """The cases a parsed command line asks for, or its exit status when nothing is to run: 0 after ``--list``
    printed them (``name: describe(case)``), 2 after one ``error:`` line for an unknown name."""
    if args.list:
        print("\n".join(f"{case.name}: {describe(case)}" for case in cases))
        return 0
    try:
        return select_cases(args.cases, cases)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
