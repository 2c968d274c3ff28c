"""Compare two ``results/`` trees: which simulated values moved, and by how much.

    python -m study_runner.studies.compare OLD_RESULTS NEW_RESULTS [--study S ...] [--markdown FILE]

For every study present in both trees it compares the checks of ``summary.json`` (``simulated``, ``pass``)
and every field of every record of ``runs.csv`` that both trees have, except what a simulation cost
(``sim_wall_s``, ``sim_peak_memory_mib``), run by run and record by record (numbers as numbers); a column
only one tree has is one difference. It prints one line per value that differs
(old, new, relative change) and a count per study; exit status 0 when nothing moved, 1 otherwise, 2 for bad
input. Used to show that a change of SimGrid or of topolab's code moved no simulated number, or to list the
numbers it moved.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from generators.files import atomic_write_text
from study_runner.simulation.workdirs import visible
from study_runner.studies.checks import read_summary

__all__ = ["Difference", "compare_studies", "main"]

COST_FIELDS = frozenset({"sim_wall_s", "sim_peak_memory_mib"})
"""What a run cost on this machine: not a simulated value."""


@dataclass(frozen=True)
class Difference:
    """One simulated value that is not the same in both trees."""

    study: str
    where: str
    old: str
    new: str

    @property
    def relative(self) -> float | None:
        """``new / old - 1`` for two finite numbers with ``old != 0``, else None."""
        try:
            old, new = float(self.old), float(self.new)
        except ValueError:
            return None
        return new / old - 1 if old != 0 and math.isfinite(old) and math.isfinite(new) else None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _runs(path: Path) -> tuple[list[str], dict[tuple[str, int], dict[str, str]]]:
    """``runs.csv``: its columns, and its rows as {(run id, record number within the run): row}."""
    rows: dict[tuple[str, int], dict[str, str]] = {}
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            count = sum(1 for run, _ in rows if run == row["run"])
            rows[(row["run"], count)] = row
        return list(reader.fieldnames or []), rows


def _checks(path: Path) -> dict[str, dict[str, object]]:
    return {check["id"]: check for check in read_summary(path)["checks"]}


def compare_studies(old: Path, new: Path, study: str) -> list[Difference]:
    """Every simulated value of ``study`` that differs between the trees ``old`` and ``new``."""
    found: list[Difference] = []
    old_checks, new_checks = _checks(old / study / "summary.json"), _checks(new / study / "summary.json")
    for check_id in sorted(old_checks.keys() | new_checks.keys()):
        before, after = old_checks.get(check_id), new_checks.get(check_id)
        if before is None or after is None:
            found.append(Difference(study, f"check {check_id}", "absent" if before is None else "present",
                                    "absent" if after is None else "present"))  # fmt: skip
            continue
        for key in ("simulated", "pass"):
            if before.get(key) != after.get(key):
                found.append(Difference(study, f"check {check_id} {key}", str(before.get(key)), str(after.get(key))))
    (old_columns, old_runs), (new_columns, new_runs) = _runs(old / study / "runs.csv"), _runs(new / study / "runs.csv")
    for column in [c for c in old_columns if c not in new_columns] + [c for c in new_columns if c not in old_columns]:
        found.append(Difference(study, f"runs.csv column {column}", "present" if column in old_columns else "absent",
                                "present" if column in new_columns else "absent"))  # fmt: skip
    shared = (set(old_columns) & set(new_columns)) - COST_FIELDS
    for key in sorted(old_runs.keys() | new_runs.keys()):
        run, record = key
        before_row, after_row = old_runs.get(key), new_runs.get(key)
        label = f"run {run}" + (f" record {record}" if record else "")
        if before_row is None or after_row is None:
            found.append(Difference(study, label, "absent" if before_row is None else "present",
                                    "absent" if after_row is None else "present"))  # fmt: skip
            continue
        for field in sorted(shared):
            a, b = before_row.get(field, ""), after_row.get(field, "")
            if a != b and not (_number(a) is not None and _number(a) == _number(b)):
                found.append(Difference(study, f"{label} {field}", a, b))
    return found


def _line(difference: Difference) -> str:
    change = difference.relative
    moved = f" ({change:+.3e})" if change is not None else ""
    return f"{difference.study}: {difference.where}: {difference.old} -> {difference.new}{moved}"


def main(argv: list[str] | None = None) -> int:
    """Command line: compare the studies of two results trees."""
    parser = argparse.ArgumentParser(
        prog="python -m study_runner.studies.compare", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("old", type=Path, help="the results tree before")
    parser.add_argument("new", type=Path, help="the results tree after")
    parser.add_argument("--study", action="append", help="compare only this study (repeatable)")
    parser.add_argument("--markdown", type=Path, help="also write the differences as a Markdown table here")
    args = parser.parse_args(argv)
    for tree in (args.old, args.new):
        if not tree.is_dir():
            print(f"error: {tree} is not a results directory", file=sys.stderr)
            return 2
    found = [p.parent.name for p in visible(args.old.glob("*/summary.json"))]
    studies = args.study or sorted(name for name in found if (args.new / name / "summary.json").is_file())
    lines, table = [], ["| study | value | before | after | change |", "|---|---|---:|---:|---:|"]
    for study in studies:
        for tree in (args.old, args.new):
            if not (tree / study / "summary.json").is_file() or not (tree / study / "runs.csv").is_file():
                print(f"error: {tree / study} has no summary.json and runs.csv", file=sys.stderr)
                return 2
        try:
            differences = compare_studies(args.old, args.new, study)
        except (OSError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        lines += [_line(d) for d in differences]
        table += [
            f"| {d.study} | {d.where} | {d.old} | {d.new} | "
            + (f"{d.relative:+.2e} |" if d.relative is not None else "|")
            for d in differences
        ]
        print(f"{study}: {len(differences)} simulated values differ", file=sys.stderr)
    print("\n".join(lines))
    if args.markdown is not None:
        atomic_write_text(args.markdown, "\n".join(table) + "\n")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
