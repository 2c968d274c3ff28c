"""``results/REPORT.md``: every study's checks and figures on one page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generators.files import atomic_write_text
from study_runner.checks import criterion_text

__all__ = ["write_report"]


def _number(value: float) -> str:
    return f"{value:.6g}"


def _study_section(summary: dict[str, Any], study_dir: Path) -> list[str]:
    checks = summary["checks"]
    passed = sum(1 for c in checks if c["pass"])
    missed = [c for c in checks if not c["pass"] and c.get("miss")]
    mode = " (quick)" if summary.get("quick") else ""
    lines = [
        f"## {summary['study']}{mode}: {summary.get('title', '')}",
        "",
        f"{passed} of {len(checks)} checks pass"
        + (
            f"; {len(missed)} documented miss{'es' if len(missed) > 1 else ''} (explained below the table)."
            if missed
            else "."
        ),
        "",
        "| check | kind | published | simulated | unit | rel. error | passes when | result |",
        "|---|---|---:|---:|---|---:|---|---|",
    ]
    for c in checks:
        verdict = "pass" if c["pass"] else "MISS (documented)" if c.get("miss") else "**FAIL**"
        lines.append(
            f"| `{c['id']}` | {c['kind']} | {_number(c['published'])} | {_number(c['simulated'])} | {c['unit']} "
            f"| {c['rel_error']:.2%} | {criterion_text(c.get('relation', 'within'), c['tolerance'])} | {verdict} |"
        )
    lines.append("")
    for c in missed:
        lines += [f"- **Miss `{c['id']}`**: {c['miss']}"]
    if missed:
        lines.append("")
    for note in summary.get("notes", []):
        lines += [f"- {note}"]
    if summary.get("notes"):
        lines.append("")
    for figure in sorted(study_dir.glob("*.png")):
        lines += [f"![{figure.stem}]({study_dir.name}/{figure.name})", ""]
    return lines


def write_report(results_dir: Path) -> Path:
    """Write ``REPORT.md`` from every ``<study>/summary.json`` under ``results_dir``; return its path."""
    summaries = []
    for path in sorted(results_dir.glob("*/summary.json")):
        summaries.append((json.loads(path.read_text(encoding="utf-8")), path.parent))
    lines = ["# topolab report", ""]
    if summaries:
        lines += ["| study | checks | result |", "|---|---:|---|"]
        for summary, _ in summaries:
            n = len(summary["checks"])
            ok = sum(1 for c in summary["checks"] if c["pass"])
            missed = sum(1 for c in summary["checks"] if not c["pass"] and c.get("miss"))
            verdict = "pass" if ok == n else f"pass, {missed} documented miss(es)" if ok + missed == n else "**FAIL**"
            lines.append(f"| {summary['study']} | {ok}/{n} | {verdict} |")
        lines.append("")
    else:
        lines += ["No study has been run yet: `scripts/repro`.", ""]
    for summary, study_dir in summaries:
        lines += _study_section(summary, study_dir)
    report = results_dir / "REPORT.md"
    atomic_write_text(report, "\n".join(lines))
    return report
