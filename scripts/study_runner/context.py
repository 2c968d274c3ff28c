"""What an analysis module receives: the study, its platform models and its run results.

An analysis module (``study_runner/analyses/<name>.py``) defines

* ``checks(ctx: StudyContext) -> list[Check]`` — the study's checks, and
* ``figures(ctx: StudyContext, out_dir: Path) -> None`` — its PNG figures, and optionally
* ``notes(ctx: StudyContext) -> list[str]`` — findings to report beside the checks (misses explained,
  numbers reported without a tolerance).

Published numbers live in the study file (``[published."<check id>"]``, with value, unit, tolerance,
kind, what and source, optionally relation and miss); ``ctx.check(id, simulated)`` pairs one with its simulated value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generators.model import Platform
from study_runner.checks import Check
from study_runner.errors import StudyError
from study_runner.execute import RunResult
from study_runner.study import Study

__all__ = ["StudyContext"]


@dataclass(frozen=True)
class StudyContext:
    """The inputs of an analysis."""

    study: Study
    quick: bool
    platforms: dict[str, Platform]
    results: dict[str, RunResult]

    def records(self, run_id: str) -> list[dict[str, Any]]:
        """The JSON records printed by run ``run_id``."""
        try:
            return self.results[run_id].records
        except KeyError:
            raise StudyError(f"{self.study.name}: analysis asks for run {run_id!r}, which did not run") from None

    def platform_of(self, run_id: str) -> Platform:
        """The platform model run ``run_id`` ran on."""
        return self.platforms[self.results[run_id].spec.platform]

    def check(self, check_id: str, simulated: float) -> Check:
        """The check of published number ``check_id`` (from the study file) against ``simulated``."""
        try:
            entry = self.study.published[check_id]
        except KeyError:
            raise StudyError(
                f"{self.study.name}: no published value for check {check_id!r} in the study file"
            ) from None
        return Check(
            id=check_id,
            what=f"{entry['what']} ({entry['source']})",
            published=float(entry["value"]),
            simulated=float(simulated),
            unit=str(entry["unit"]),
            tolerance=float(entry["tolerance"]),
            kind=str(entry["kind"]),
            relation=str(entry.get("relation", "within")),
            miss=str(entry.get("miss", "")),
        )
