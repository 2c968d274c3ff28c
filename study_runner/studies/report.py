"""``results/REPORT.md``: every study's checks and figures on one page, and a picture of every topology family.

A study's figures are its ``*.png``; a figure named in the study's ``captions.json`` (``study_runner.studies.heatmaps``)
gets its caption below it. :func:`draw_families` draws ``results/families/<family>.png``, and the report's
"Platforms" section embeds them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import generators
from generators.files import atomic_write_text
from study_runner.simulation.workdirs import replace_dir
from study_runner.simulation.workdirs import results_lock
from study_runner.simulation.workdirs import visible
from study_runner.studies.checks import NO_RELATIVE_ERROR
from study_runner.studies.checks import StudyOutcome
from study_runner.studies.checks import criterion_text
from study_runner.studies.checks import error_text
from study_runner.studies.checks import read_summary
from study_runner.studies.checks import studies_pass_line
from study_runner.studies.checks import verdict_text

__all__ = ["FAMILIES_DIR", "draw_families", "swap_in", "write_report"]

FAMILIES_DIR = "families"
"""Where the family pictures go, under the results directory."""
_FAMILIES_STAMP = ".inputs.sha256"
_ABSOLUTE_MARK = "†"
"""Marks an error column's absolute difference (a published 0); the footnote below the table says why."""


def _number(value: float) -> str:
    return f"{value:.6g}"


def _check_row(check: dict[str, Any]) -> str:
    """One row of a study's check table; against a published 0 the error column gives the absolute difference."""
    verdict = "pass" if check["pass"] else "MISS" if check.get("miss") else "FAIL"
    result = "**FAIL**" if verdict == "FAIL" else verdict_text(verdict)
    error = error_text(check["published"], check["simulated"])
    if check["published"] == 0:
        error += f" {_ABSOLUTE_MARK}"
    criterion = criterion_text(check.get("relation", "within"), check["tolerance"])
    return (
        f"| `{check['id']}` | {check['kind']} | {_number(check['published'])} | {_number(check['simulated'])} "
        f"| {check['unit']} | {error} | {criterion} | {result} |"
    )


def _study_section(summary: dict[str, Any], study_dir: Path) -> list[str]:
    checks = summary["checks"]
    passed = sum(1 for c in checks if c["pass"])
    missed = [c for c in checks if not c["pass"] and c.get("miss")]
    mode = " (quick)" if summary.get("quick") else ""
    lines = [
        f"## {summary['study']}{mode}: {summary.get('title', '')}",
        "",
        f"{passed} of {len(checks)} checks pass"
        + (f"; {len(missed)} more pass with a documented miss (explained below the table)." if missed else "."),
        "",
        "| check | kind | published | simulated | unit | rel. error | passes when | result |",
        "|---|---|---:|---:|---|---:|---|---|",
        *(_check_row(c) for c in checks),
        "",
    ]
    if any(c["published"] == 0 for c in checks):
        lines += [f"{_ABSOLUTE_MARK} {NO_RELATIVE_ERROR}", ""]
    for c in missed:
        lines += [f"- **Miss `{c['id']}`**: {c['miss']}"]
    if missed:
        lines.append("")
    for note in summary.get("notes", []):
        lines += [f"- {note}"]
    if summary.get("notes"):
        lines.append("")
    captions = _captions(study_dir)
    for figure in sorted(study_dir.glob("*.png"), key=_figure_order):
        lines += [f"![{figure.stem}]({study_dir.name}/{figure.name})", ""]
        if figure.name in captions:
            lines += [f"*{captions[figure.name]}*", ""]
    return lines


def _captions(study_dir: Path) -> dict[str, str]:
    try:
        captions = json.loads((study_dir / "captions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in captions.items()} if isinstance(captions, dict) else {}


def _figure_order(figure: Path) -> tuple[int, str, str]:
    """The study's own figures first, then its heatmaps, the static and traced one of each schedule together."""
    for flavour in ("static", "traced"):
        prefix = f"heatmap_{flavour}_"
        if figure.stem.startswith(prefix):
            return (1, figure.stem.removeprefix(prefix), flavour)
    return (0, figure.stem, "")


def _families_digest() -> str:
    """SHA-256 of what the family pictures are drawn from: the generators package's sources, matplotlib's version."""
    import matplotlib

    digest = hashlib.sha256(matplotlib.__version__.encode())
    package = Path(generators.__file__).parent
    for source in sorted(package.rglob("*.py")):  # the drawing subpackage included
        digest.update(str(source.relative_to(package)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()


def draw_families(results_dir: Path, stage: Path | None = None) -> list[Path]:
    """Draw ``<family>.png`` for every topology family (``generators.drawing``) into ``stage/families`` (a run's
    staging directory, :func:`write_report`) or ``results_dir/families``, unless the pictures of ``results_dir`` were
    drawn from the same sources; return the pictures."""
    from generators.drawing import REPRESENTATIVE
    from generators.drawing import draw_all_families

    directory = results_dir / FAMILIES_DIR
    pictures = [directory / f"{name}.png" for name in REPRESENTATIVE]
    digest = _families_digest()
    stamp = directory / _FAMILIES_STAMP
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == digest and all(p.is_file() for p in pictures):
        return pictures
    directory = (stage or results_dir) / FAMILIES_DIR
    written = draw_all_families(directory)
    atomic_write_text(directory / _FAMILIES_STAMP, digest + "\n")
    return written


def _platforms_section(families: Path) -> list[str]:
    """The "Platforms" section: one picture per family of ``families``, each with what it shows."""
    from generators.drawing import REPRESENTATIVE
    from generators.families import FAMILIES

    pictures = [families / f"{name}.png" for name in sorted(REPRESENTATIVE)]
    pictures = [picture for picture in pictures if picture.is_file()]
    if not pictures:
        return []
    lines = [
        "## Platforms",
        "",
        "One picture of every topology family, drawn from the same in-memory model the SimGrid platform files "
        "are written from (`python -m generators.drawing DIR`, `docs/pictures.md`): hosts as circles, switches "
        "and routers as squares, the family's structure (groups, layers, wrap-around cables) as labelled boxes.",
        "",
    ]
    for picture in pictures:
        params = ", ".join(f"{k} = {v}" for k, v in REPRESENTATIVE[picture.stem].items())
        what = f"{FAMILIES[picture.stem].summary}; drawn with {params}"
        lines += [f"**{picture.stem}**: {what}.", "", f"![{picture.stem}]({FAMILIES_DIR}/{picture.name})", ""]
    return lines


def write_report(results_dir: Path, stage: Path | None = None) -> Path:
    """Write ``REPORT.md`` from every ``<study>/summary.json`` under ``results_dir``; return its path.

    With ``stage``, a run's staging directory whose entries are to replace their namesakes in ``results_dir``
    (:func:`swap_in`), the report is that of the tree as it will be, written into ``stage``. It reads under the lock
    of ``results_dir`` (no study is put in place meanwhile), never in a hidden directory (a run's staging or work
    files), and a summary that cannot be read is left out with one warning."""
    with results_lock(results_dir):
        found = {path.parent.name: path for path in visible(results_dir.glob("*/summary.json"))}
        if stage is not None:
            found |= {path.parent.name: path for path in visible(stage.glob("*/summary.json"))}
        summaries = []
        for _, path in sorted(found.items()):
            try:
                summary = read_summary(path)
            except ValueError as err:
                print(f"warning: {err}: left out", file=sys.stderr)
                continue
            except OSError as err:
                print(f"warning: {path} cannot be read ({err.strerror or err}): left out", file=sys.stderr)
                continue
            summaries.append((summary, path.parent))
        families = stage / FAMILIES_DIR if stage is not None and (stage / FAMILIES_DIR).is_dir() else None
        return _write_report(stage or results_dir, summaries, families or results_dir / FAMILIES_DIR)


def swap_in(stage: Path, results_dir: Path) -> None:
    """Put every entry of a run's ``stage`` in the place of its namesake in ``results_dir``: the directories (each
    in one rename, ``workdirs.replace_dir``), then the report. Staging took the space and the time; what is left is
    renames, so a failure before this leaves ``results_dir`` as it was."""
    entries = sorted((p for p in stage.iterdir() if not p.name.startswith(".")), key=lambda p: (p.is_file(), p.name))
    for entry in entries:
        if entry.is_dir():
            replace_dir(entry, results_dir / entry.name)
        else:
            with results_lock(results_dir):
                entry.replace(results_dir / entry.name)


def _write_report(results_dir: Path, summaries: list[tuple[dict[str, Any], Path]], families: Path) -> Path:
    lines = ["# topolab report", ""]
    if summaries:
        outcomes = [StudyOutcome.of_summary(summary) for summary, _ in summaries]
        lines += [f"{studies_pass_line(outcomes)}.", "", "| study | checks | result |", "|---|---:|---|"]
        for (summary, _), outcome in zip(summaries, outcomes, strict=True):
            ok = sum(1 for c in summary["checks"] if c["pass"])
            result = outcome.text if outcome.passed else "**FAIL**"
            lines.append(f"| {summary['study']} | {ok}/{len(summary['checks'])} | {result} |")
        lines.append("")
    else:
        lines += ["No study has been run yet: `scripts/repro`.", ""]
    for summary, study_dir in summaries:
        lines += _study_section(summary, study_dir)
    lines += _platforms_section(families)
    report = results_dir / "REPORT.md"
    atomic_write_text(report, "\n".join(lines))
    return report
