"""The time left in a batch of simulations, from what each one still to run is expected to cost.

The average of the simulations finished so far says little about the ones left: a study's runs span four orders of
magnitude (nbl-combine: 0.04 s to 236 s), and which ones finish first depends on the order they run in. So every
simulation has its own expected cost (seconds of smpirun's wall time), by preference

1. its history: what the same simulation (platform, hosts, app, arguments, ranks, options) took when it last ran
   under another build of the app or of SimGrid (``Cache.history``), times how this batch's finished simulations
   compare with their own history (the machine may be busier now, the new build faster);
2. its size: ``k * size``, where ``size`` is the run's declared relative cost (a study's or sweep's ``size``, e.g.
   the messages the ranks send; its rank count if it declares none) and ``k`` the seconds per unit of size of the
   simulations finished so far (before any has finished: of those with a history).

The time left spreads what the unfinished simulations are expected to cost, less the time each has been running
(when known), over the slots that run them at once; it is never less than the longest of them alone.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Estimate", "Expected"]


@dataclass(frozen=True)
class Expected:
    """One simulation still to run: its label, its relative size and, if known, its wall time under another build."""

    label: str
    size: float
    history_s: float | None = None


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


class Estimate:
    """The time left in a batch: ``expected`` simulations, ``slots`` of them at once; ``started`` maps the label of a
    simulation that has started to when (``time.monotonic()``), for those this process can see start."""

    def __init__(
        self, expected: Sequence[Expected] = (), slots: int = 1, started: Mapping[str, float] | None = None
    ) -> None:
        self.expected = {item.label: item for item in expected}
        self.slots = slots
        self.started: Mapping[str, float] = {} if started is None else started
        self.finished: dict[str, float | None] = {}

    def finish(self, label: str, wall_s: float | None) -> None:
        """Simulation ``label`` has finished in ``wall_s`` seconds (None: not measured). Other labels are ignored."""
        if label in self.expected:
            self.finished.setdefault(label, wall_s)

    def costs(self) -> dict[str, float] | None:
        """The expected cost of every unfinished simulation (None until there is anything to scale sizes with)."""
        done = [(self.expected[label], wall) for label, wall in self.finished.items() if wall is not None]
        known = [(item.history_s, wall) for item, wall in done if item.history_s]
        scale = _ratio(sum(wall for _, wall in known), sum(history for history, _ in known)) or 1.0
        per_size = _ratio(sum(wall for _, wall in done), sum(item.size for item, _ in done))
        if per_size is None:
            recorded = [item for item in self.expected.values() if item.history_s]
            per_size = _ratio(sum(scale * (item.history_s or 0.0) for item in recorded), sum(i.size for i in recorded))
        costs = {}
        for label, item in self.expected.items():
            if label in self.finished:
                continue
            if item.history_s:
                costs[label] = scale * item.history_s
            elif per_size is None:
                return None
            else:
                costs[label] = per_size * item.size
        return costs

    def seconds_left(self, now: float | None = None) -> float | None:
        """Seconds until every expected simulation has finished; None when none is left or nothing is known yet."""
        costs = self.costs()
        if not costs:
            return None
        now = time.monotonic() if now is None else now
        left = [max(cost - (now - self.started[label]), 0.0) if label in self.started else cost
                for label, cost in costs.items()]  # fmt: skip
        return max(sum(left) / min(max(self.slots, 1), len(left)), max(left))
