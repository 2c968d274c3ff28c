"""Checks: a simulated number against a published (or model) one, with a tolerance and a kind.

``kind`` is ``calibration`` (a published number used to set a platform parameter), ``prediction``
(a published number the simulation was not fitted to) or ``exact`` (a deterministic analysis that
must match). ``relation`` says what passing means: ``within`` (the relative error is at most the
tolerance), ``at_least`` (simulated >= published x (1 - tolerance), e.g. "at least 90% of the
optimum") or ``above`` (simulated > published, e.g. "slower than"). ``summary.json`` lists every
check in the format of DESIGN.md.

A check may carry ``miss``: the explanation of a known, documented miss of the reproduction (the study
file's ``miss`` key). It is evaluated like any other and reported as ``MISS`` when it fails; a study
passes when each of its checks passes or fails with its miss documented (a documented miss beats a
tuned fake).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["KINDS", "RELATIONS", "Check", "criterion_text", "summary_json"]

KINDS = ("calibration", "prediction", "exact")
RELATIONS = ("within", "at_least", "above")


def criterion_text(relation: str, tolerance: float) -> str:
    """When a check passes, in words: ``within 1.00%``, ``>= 90% of published``, ``> published``."""
    if relation == "at_least":
        return f">= {1 - tolerance:.0%} of published"
    if relation == "above":
        return "> published"
    return f"within {tolerance:.2%}"


@dataclass(frozen=True)
class Check:
    """One published-vs-simulated comparison; ``tolerance`` is a relative error bound."""

    id: str
    what: str
    published: float
    simulated: float
    unit: str
    tolerance: float
    kind: str
    relation: str = "within"
    miss: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"check {self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.relation not in RELATIONS:
            raise ValueError(f"check {self.id}: relation must be one of {RELATIONS}, got {self.relation!r}")
        if not self.tolerance >= 0:
            raise ValueError(f"check {self.id}: tolerance must be >= 0, got {self.tolerance!r}")

    @property
    def rel_error(self) -> float:
        """|simulated - published| / |published| (0 when both are 0, inf when only published is 0)."""
        if self.published == 0:
            return 0.0 if self.simulated == 0 else math.inf
        return abs(self.simulated - self.published) / abs(self.published)

    @property
    def passed(self) -> bool:
        """Whether the simulated value satisfies the relation (a NaN never passes)."""
        if not math.isfinite(self.simulated):
            return False
        if self.relation == "at_least":
            return self.simulated >= self.published * (1 - self.tolerance)
        if self.relation == "above":
            return self.simulated > self.published
        return self.rel_error <= self.tolerance

    @property
    def accepted(self) -> bool:
        """Whether the check passes, or fails with its miss documented."""
        return self.passed or bool(self.miss)

    @property
    def verdict(self) -> str:
        """``pass``, ``MISS`` (a documented miss) or ``FAIL``."""
        return "pass" if self.passed else "MISS" if self.miss else "FAIL"

    def as_dict(self) -> dict[str, Any]:
        """The check as a summary.json entry."""
        return {**asdict(self), "rel_error": self.rel_error, "pass": self.passed}


def summary_json(study: str, title: str, quick: bool, checks: list[Check], notes: list[str] | None = None) -> str:
    """The text of ``summary.json`` (deterministic: same checks, same bytes)."""
    payload = {
        "study": study,
        "title": title,
        "quick": quick,
        "passed": all(c.accepted for c in checks),
        "checks": [c.as_dict() for c in checks],
        "notes": list(notes or []),
    }
    return json.dumps(payload, indent=2, sort_keys=False) + "\n"
