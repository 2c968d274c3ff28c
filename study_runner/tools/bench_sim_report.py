"""bench-sim's report: its cases' wall times, memory and simulated times as one Markdown table, beside the figures
measured before issue 15 (``docs/benchmarks/simulation-scale-before.json``) and, per case, before issue 31."""

from __future__ import annotations

import json
from typing import Any

from study_runner.paths import REPO

BEFORE = REPO / "docs" / "benchmarks" / "simulation-scale-before.json"


def _before() -> tuple[str, dict[str, dict[str, Any]]]:
    """Where the "before" measurements come from, and each case's."""
    if not BEFORE.is_file():
        return "not measured", {}
    data = json.loads(BEFORE.read_text())
    return data["source"], {row["case"]: row for row in data["cases"]}


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _speed_up(ratio: float) -> str:
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"


def _mib(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"


def _cells(r: dict[str, Any], old: dict[str, Any]) -> list[str]:
    """One case's row: the earlier topolab's figure, this run's before and after, the reference, simulated times."""
    after, ref, now_before = r["topolab"], r.get("reference", {}), r.get("before", {})
    old_wall = old.get("wall_s")
    return [
        f"`{r['case']}`",
        str(r["ranks"]),
        _seconds(old_wall) or old.get("note", ""),
        _mib(old.get("peak_memory_mib", old.get("peak_private_mib"))),  # before files of earlier runs: private only
        _seconds(now_before.get("wall_s")),
        _seconds(after["wall_s"]),
        _mib(after["peak_memory_mib"]),
        _speed_up(old_wall / after["wall_s"]) if old_wall else "",
        _speed_up(now_before["wall_s"] / after["wall_s"]) if now_before else "",
        _seconds(ref.get("wall_s")),
        f"{after['wall_s'] / ref['wall_s']:.2f}" if ref else "",
        f"{now_before['simulated_s']:.9g}" if now_before else "",
        f"{after['simulated_s']:.9g}",
        f"{ref['simulated_s']:.9g}" if ref else "",
    ]


def markdown(rows: list[dict[str, Any]], version: str) -> str:
    """The results as Markdown: one table, then what each case is."""
    source, before = _before()
    lines = [
        f"# Simulation speed at scale ({version}, this machine)",
        "",
        f"Before (issue 15): {source}. Before (issue 31): the case as it ran before issue 31's changes, measured in "
        "this run (what it was, per case, below). After: this run. Reference: SimGrid's own cluster running the same "
        "app, options and hostfile (what it is, per case, below). Wall times in seconds, memory in MiB (peak of what "
        "smpirun's processes held, shared buffers once; before: RssAnon where measured before that). Simulated: the "
        "case's time, in seconds.",
        "",
        "| case | ranks | before 15 (s) | before 15 (MiB) | before 31 (s) | after (s) | after (MiB) | speed-up 15 "
        "| speed-up 31 | reference (s) | after / reference | simulated before 31 | simulated after "
        "| simulated reference |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += ["| " + " | ".join(_cells(r, before.get(r["case"], {}))) + " |" for r in rows]
    lines += ["", "Cases:", ""]
    for r in rows:
        reference = f"; reference: {r['reference']['kind']}" if "reference" in r else ""
        earlier = f"; before 31: {r['before']['why']}" if "before" in r else ""
        lines.append(f"- `{r['case']}`: {r['what']}{reference}{earlier}")
    lines += _statistics(rows)
    unmeasured = [(r["case"], before[r["case"]]) for r in rows if "why" in before.get(r["case"], {})]
    if unmeasured:
        lines += ["", "Before (issue 15), where there is no figure:", ""]
        lines += [f"- `{name}` ({old['note']}): {old['why']}" for name, old in unmeasured]
    return "\n".join(lines) + "\n"


def _statistics(rows: list[dict[str, Any]]) -> list[str]:
    """Where each run's time went, as SimGrid counted it (docs/simulation-speed.md says how to read it)."""
    counted = [(r["case"], key, r[key]["statistics"]) for r in rows for key in ("topolab", "before", "reference")
               if (r.get(key) or {}).get("statistics")]  # fmt: skip
    if not counted:
        return []
    lines = [
        "",
        "Where the time went (SimGrid's counts, `--log=ker_statistics.thres:info`; the loop is the simulation without "
        "its start-up; constraints and variables: per solve of the network model, on average):",
        "",
        "| case | run | loop (s) | event dates | us per date | solves | constraints | variables | solves (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for case, key, c in counted:
        network = [f"{c['solves']}", f"{c['constraints_per_solve']:.1f}", f"{c['variables_per_solve']:.1f}",
                   f"{c['solve_s']:.1f}"] if "solves" in c else ["", "", "", ""]  # fmt: skip
        cells = [f"`{case}`", "after" if key == "topolab" else key, f"{c['loop_wall_s']:.1f}", str(c["event_dates"]),
                 f"{c['us_per_date']:.1f}", *network]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return lines
