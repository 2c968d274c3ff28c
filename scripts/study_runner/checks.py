"""Checks: a simulated number against a published (or model) one, with a tolerance and a kind.

``kind`` is ``calibration`` (a published number used to set a platform parameter), ``prediction``
(a published number the simulation was not fitted to) or ``exact`` (a deterministic analysis that
must match). ``summary.json`` lists every check in the format of DESIGN.md.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["KINDS", "Check", "summary_json"]

KINDS = ("calibration", "prediction", "exact")


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

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"check {self.id}: kind must be one of {KINDS}, got {self.kind!r}")
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
        """Whether the relative error is within the tolerance (a NaN never passes)."""
        return math.isfinite(self.simulated) and self.rel_error <= self.tolerance

    def as_dict(self) -> dict[str, Any]:
        """The check as a summary.json entry."""
        return {**asdict(self), "rel_error": self.rel_error, "pass": self.passed}


def summary_json(study: str, title: str, quick: bool, checks: list[Check], notes: list[str] | None = None) -> str:
    """The text of ``summary.json`` (deterministic: same checks, same bytes)."""
    payload = {
        "study": study,
        "title": title,
        "quick": quick,
        "passed": all(c.passed for c in checks),
        "checks": [c.as_dict() for c in checks],
        "notes": list(notes or []),
    }
    return json.dumps(payload, indent=2, sort_keys=False) + "\n"
