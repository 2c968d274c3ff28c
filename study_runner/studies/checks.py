"""Checks: a simulated number against a published (or model) one, with a tolerance and a kind.

``kind`` is ``calibration`` (a published number used to set a platform parameter), ``prediction``
(a published number the simulation was not fitted to) or ``exact`` (a deterministic analysis that
must match). ``relation`` says what passing means: ``within`` (the relative error is at most the
tolerance), ``at_least`` (simulated >= published x (1 - tolerance), e.g. "at least 90% of the
optimum") or ``above`` (simulated > published, e.g. "slower than"). ``summary.json`` lists every
check in the format docs/studies.md gives.

A check may carry ``miss``: the explanation of a known, documented miss of the reproduction (the study
file's ``miss`` key), and ``miss_range``: the simulated values that explanation covers (``miss_range``). It
is evaluated like any other and reported as ``MISS`` ("pass with a documented miss") when it fails inside its
range; a study passes when each of its checks passes or misses inside its documented range (a documented miss
beats a tuned fake, and a miss that gets worse, or moves at all, fails until its explanation is revisited).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "KINDS",
    "NO_RELATIVE_ERROR",
    "RELATIONS",
    "Check",
    "StudyOutcome",
    "criterion_text",
    "error_text",
    "read_summary",
    "studies_pass_line",
    "summary_json",
    "summary_problem",
    "verdict_text",
]

KINDS = ("calibration", "prediction", "exact")
RELATIONS = ("within", "at_least", "above")


def criterion_text(relation: str, tolerance: float) -> str:
    """When a check passes, in words: ``within 1.00%``, ``>= 90% of published``, ``> published``."""
    if relation == "at_least":
        return f">= {1 - tolerance:.0%} of published"
    if relation == "above":
        return "> published"
    return f"within {tolerance:.2%}"


NO_RELATIVE_ERROR = (
    "The published value is 0, against which no relative error exists: the error shown is the absolute difference, "
    "simulated - published."
)
"""Why a check against a published 0 shows ``abs. diff.`` where the others show a relative error."""


def error_text(published: float, simulated: float) -> str:
    """The relative error as a percentage, or against a published 0 (:data:`NO_RELATIVE_ERROR`) the absolute
    difference simulated - published.

    >>> error_text(2.0, 2.5), error_text(0.0, 0.25), error_text(0.0, 0.0)
    ('25.00%', 'abs. diff. 0.25', 'abs. diff. 0')
    """
    if published == 0:
        return f"abs. diff. {simulated - published:.6g}"
    return f"{abs(simulated - published) / abs(published):.2%}"


_VERDICT_TEXTS = {"pass": "pass", "MISS": "pass with a documented miss", "FAIL": "FAIL"}


def verdict_text(verdict: str) -> str:
    """A check's :attr:`Check.verdict` in words: a documented miss is a pass that says so."""
    return _VERDICT_TEXTS[verdict]


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
    miss_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if bool(self.miss) != (self.miss_range is not None):
            raise ValueError(f"check {self.id}: a documented miss needs both its explanation and its miss_range")
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
    def documented_miss(self) -> bool:
        """Whether the check fails as documented: it has a miss and the simulated value is inside its range.

        >>> from dataclasses import replace
        >>> miss = Check("x", "w", 1.0, 0.5, "ratio", 0.1, "prediction", miss="why", miss_range=(0.4, 0.6))
        >>> miss.verdict, replace(miss, simulated=0.3).verdict, replace(miss, simulated=1.0).verdict
        ('MISS', 'FAIL', 'pass')
        """
        low, high = self.miss_range or (math.inf, -math.inf)
        return not self.passed and low <= self.simulated <= high

    @property
    def accepted(self) -> bool:
        """Whether the check passes, or fails as its documented miss says."""
        return self.passed or self.documented_miss

    @property
    def verdict(self) -> str:
        """``pass``, ``MISS`` (a documented miss, inside its range) or ``FAIL``."""
        return "pass" if self.passed else "MISS" if self.documented_miss else "FAIL"

    def as_dict(self) -> dict[str, Any]:
        """The check as a summary.json entry. ``miss`` is the explanation, or empty when the check fails outside
        the range that explanation covers (an undocumented failure); the range itself stays in the study file."""
        entry = {key: value for key, value in asdict(self).items() if key != "miss_range"}
        entry["miss"] = self.miss if self.passed or self.documented_miss else ""
        return {**entry, "rel_error": self.rel_error, "pass": self.passed}


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


@dataclass(frozen=True)
class StudyOutcome:
    """A study's verdict: whether each check passes or misses as documented, and how many are documented misses."""

    passed: bool
    documented_misses: int = 0

    @classmethod
    def of_checks(cls, checks: list[Check]) -> StudyOutcome:
        return cls(all(c.accepted for c in checks), sum(1 for c in checks if c.documented_miss))

    @classmethod
    def of_summary(cls, summary: dict[str, Any]) -> StudyOutcome:
        """From a summary.json's checks, where a documented miss fails with its explanation kept."""
        missed = sum(1 for c in summary["checks"] if not c["pass"] and c.get("miss"))
        return cls(all(c["pass"] or c.get("miss") for c in summary["checks"]), missed)

    @property
    def text(self) -> str:
        """``pass``, ``pass with a documented miss``, ``pass with 3 documented misses`` or ``FAIL``."""
        if not self.passed:
            return "FAIL"
        if self.documented_misses == 0:
            return "pass"
        if self.documented_misses == 1:
            return "pass with a documented miss"
        return f"pass with {self.documented_misses} documented misses"


def studies_pass_line(outcomes: list[StudyOutcome]) -> str:
    """``9/9 studies pass (3 with documented misses)``: how many studies pass, and how many of those only with a
    documented miss.

    >>> studies_pass_line([StudyOutcome(True), StudyOutcome(True, 2), StudyOutcome(False)])
    '2/3 studies pass (1 with documented misses)'
    """
    passing = [outcome for outcome in outcomes if outcome.passed]
    with_misses = sum(1 for outcome in passing if outcome.documented_misses)
    line = f"{len(passing)}/{len(outcomes)} studies pass"
    return f"{line} ({with_misses} with documented misses)" if with_misses else line


_NUMBER = (int, float)
SUMMARY_FIELDS: dict[str, type | tuple[type, ...]] = {"study": str, "title": str, "checks": list}
CHECK_FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": str, "what": str, "published": _NUMBER, "simulated": _NUMBER, "unit": str, "tolerance": _NUMBER,
    "kind": str, "rel_error": _NUMBER, "pass": bool,
}  # fmt: skip
OPTIONAL_FIELDS: dict[str, type | tuple[type, ...]] = {"quick": bool, "notes": list, "relation": str, "miss": str}
"""What :func:`summary_json` writes, field by field: what a reader of a summary.json relies on (the optional fields
when present)."""


def _field_problem(where: str, entry: object, fields: dict[str, type | tuple[type, ...]]) -> str | None:
    if not isinstance(entry, dict):
        return f"{where} is not an object"
    for name, kind in {**fields, **{k: v for k, v in OPTIONAL_FIELDS.items() if k in entry}}.items():
        value = entry.get(name)
        if not isinstance(value, kind) or (kind is _NUMBER and isinstance(value, bool)):
            return f"{where} has no {name} of type {getattr(kind, '__name__', 'number')}"
    return None


def summary_problem(summary: object) -> str | None:
    """Why ``summary`` (a parsed summary.json) is not one :func:`summary_json` wrote, or None when it is.

    >>> summary_problem(json.loads(summary_json("s", "t", False, [Check("s.x", "x", 1.0, 1.0, "s", 0.1, "exact")])))
    >>> summary_problem({"study": "s", "title": "t", "quick": False, "checks": [{"id": "x"}], "notes": []})
    'check 1 has no what of type str'
    """
    problem = _field_problem("the summary", summary, SUMMARY_FIELDS)
    if problem is not None:
        return problem
    assert isinstance(summary, dict)
    if not all(isinstance(note, str) for note in summary.get("notes", [])):
        return "a note is not a string"
    for number, check in enumerate(summary["checks"], 1):
        problem = _field_problem(f"check {number}", check, CHECK_FIELDS)
        if problem is not None:
            return problem
    return None


def read_summary(path: Path) -> dict[str, Any]:
    """The summary.json at ``path``; ValueError naming the file and why when it is not one topolab wrote (OSError
    when it cannot be read)."""
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:  # a JSON or UTF-8 decoding error
        raise ValueError(f"{path} is not a summary topolab wrote ({err})") from None
    problem = summary_problem(summary)
    if problem is not None:
        raise ValueError(f"{path} is not a summary topolab wrote ({problem})")
    return summary
