"""What one simulation is, as the batch layer runs it: an app, its arguments, ranks and placement on a named
platform, its options, timeout and cost. Study files and sweep files both describe their runs this way: one
grammar (``studies.schema``), one validator (``studies.run_fields``), this one dataclass."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from study_runner.simulation.jobs import Job

__all__ = ["TRACED_SUFFIX", "PlatformSpec", "RunSpec"]

TRACED_SUFFIX = ".links"
"""The id of a run's traced twin (``trace_links``) is the run's id and this."""


@dataclass(frozen=True)
class RunSpec:
    """One smpirun of an app on a platform."""

    id: str
    platform: str
    app: str
    ranks: int
    args: tuple[str, ...] = ()
    quick_args: tuple[str, ...] = ()
    quick: bool = True
    options: tuple[str, ...] = ()
    placement: tuple[str, ...] | str | None = None
    timeout: float = 600.0
    full_args: tuple[str, ...] = ()
    full_timeout: float | None = None
    grid: str | None = None  # the [[generate]] grid the run comes from (a study's), and its point's variables
    variables: dict[str, Any] = field(default_factory=dict)
    size: float | None = None  # relative cost, for the estimate of the time left (batch.eta)
    compute: str = "off"  # simulation.compute: "off" (communication only), "benchmark" or "memory"
    memory_fraction: float | None = None  # with compute = "memory": the part of the bursts that moves memory
    ranks_per_node: int = 1  # consecutive ranks on each host of the placement
    output: str = "json"  # what the app prints: JSON lines, or a third-party format (simulation.outputs)
    full_only: bool = False  # runs under --full only
    replay: bool = False  # replays the app's recorded TI trace instead of running it (simulation.replay)
    trace_links: bool = False  # also run its traced twin: the bytes each link carried (simulation.tracing)
    neighbours: tuple[Job, ...] = ()  # other jobs on the machine meanwhile (simulation.jobs)
    allocation: str = "contiguous"  # with neighbours: the policy that gives every job its hosts
    online: bool = False  # with neighbours: the jobs' binaries run together instead of their traces replayed
    counters: bool = False  # its traced twin also keeps the links' time series: counters/<id>/ (simulation.counters)

    @property
    def traced_id(self) -> str:
        """The id of this run's traced twin (``batch.prepare``)."""
        return f"{self.id}{TRACED_SUFFIX}"

    def arguments(self, quick: bool) -> tuple[str, ...]:
        """The app's arguments in full or quick mode."""
        return self.quick_args if quick and self.quick_args else self.args


@dataclass(frozen=True)
class PlatformSpec:
    """A named platform of a study: a topology family and its parameters, and the ready platform
    (``platforms/<machine>/<file>``) they come from, if the study names one."""

    name: str
    family: str
    params: dict[str, Any]
    machine: str | None = None
