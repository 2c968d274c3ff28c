"""Per-link traffic of a real SMPI run, from SimGrid's Paje trace.

``tracing_options(trace)`` are the smpirun flags that make SimGrid write a Paje text trace in which
every link is a container with a ``bandwidth_used`` variable (bytes/s); :func:`link_bytes` integrates that
variable over simulated time, streaming the file line by line, and returns the bytes each link carried.
:func:`traced_run` runs one app with topolab's standard options plus these flags (through
``study_runner.simulation.smpi``) and returns the app's output with the bytes per link.

What SimGrid records (measured in tests/test_tracing.py on 3.32 and again on 4.1, read in its source:
``instr_platform.cpp``, ``on_action_state_change``; unchanged since 3.20): a link's ``bandwidth_used`` is
written only when a flow crossing it ends, as the flow's final rate over the interval since the network
model last updated the flow. The latency phase of a message carries nothing. Hence:

* **Exact** when no flow's rate changes during its transfer: no other flow starts or ends on a link it
  shares while it is sending (one message at a time, as in a ping-pong, or flows that start and end
  together). A message of S bytes then adds ``S + SMPI_ENVELOPE_BYTES`` to every link of its route:
  to the FATPIPE ``<host>_port`` links of graph-routed meshes as well (their ``bandwidth_used``
  is the sum of the flows through them, and may exceed their bandwidth, since a FATPIPE link only caps each
  flow), and to both endpoints' ``<host>_nbl`` limiters (which carry the host's outgoing and incoming
  traffic).
* **A lower bound** otherwise: the model updates a flow whenever the sharing of one of its links
  changes, without tracing, so only the last constant-rate stretch of each flow is recorded. On a
  contended run the loss is large: a pairwise all-to-all of 16 ranks on a 4 x 4 mesh records a third of
  its bytes. ``network/optim:Full`` is no cure: the flows' update time then stays 0 and the intervals
  are wrong.

Only what is needed is traced: ``tracing/smpi`` (the MPI states of every rank) is not, as the link
variables do not need it and it grows the trace with every MPI call. Times and values are written with
``TRACE_PRECISION`` decimals instead of SimGrid's default 6 (microseconds), which would round short
transfers away. Compiled-zone platforms (``.so``, ``simgrid_cpp/torus_zone.cpp``) trace like XML
ones: the zone leaves its links unsealed and its ``seal()`` seals each of them once (SimGrid creates a
link's trace container at every seal of the link, and aborts on a second one: "container ... already
present in all_containers_"). SimGrid 4.1 as released crashes when it traces any platform with a router; the
SimGrid that ``scripts/setup`` builds carries the fix (``scripts/simgrid-patches/``).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from study_runner.errors import StudyError
from study_runner.simulation.link_series import LinkSeries
from study_runner.simulation.prepared import smpirun_simulation
from study_runner.simulation.simgrid_options import cfg
from study_runner.simulation.simgrid_options import cfgs
from study_runner.simulation.smpi import run_smpirun_measured

__all__ = [
    "LINKS_TRACE_NAME",
    "LINK_BYTES_FORMAT",
    "TRACE_PRECISION",
    "TRACING_OPTIONS",
    "TracedRun",
    "link_bytes",
    "traced_run",
    "tracing_options",
]

TRACE_PRECISION = 15
"""Decimals of the times and values in the trace: 1e-15 s, i.e. 2e-6 bytes per interval at 2 GB/s."""

TRACING_OPTIONS: tuple[str, ...] = cfgs(
    "tracing:yes",
    # Link containers and their bandwidth_used variable (tracing/uncategorized alone implied it in 3.32).
    "tracing/platform:yes",
    "tracing/uncategorized:yes",
    # The topology graph (Paje links between hosts, routers and links) is not needed (and building it aborted
    # SimGrid 3.32 on a Dijkstra zone, "dynar is not that long"; 4.1 builds it).
    "tracing/platform/topology:no",
    f"tracing/precision:{TRACE_PRECISION}",
)
"""The smpirun flags that trace link usage, without the file name (see :func:`tracing_options`)."""


LINKS_TRACE_NAME = "links.trace"
"""The Paje trace a study's traced run (``trace_links``) writes in its work directory (``batch.execute``)."""

LINK_BYTES_FORMAT = 1
"""Version of what a traced run's result holds (bump when :func:`link_bytes` changes what it counts): part of its
cache key."""


def tracing_options(trace_file: Path | str = LINKS_TRACE_NAME) -> tuple[str, ...]:
    """``TRACING_OPTIONS`` writing the Paje trace to ``trace_file``, relative to smpirun's working directory unless
    absolute (a relative name keeps work directories out of the command, and so out of its cache key).

    >>> tracing_options("/tmp/run.trace")[-1]
    '--cfg=tracing/filename:/tmp/run.trace'
    >>> tracing_options()[-1]
    '--cfg=tracing/filename:links.trace'
    """
    return (*TRACING_OPTIONS, cfg(f"tracing/filename:{trace_file}"))


_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
_LINK_TYPE = "LINK"
_VARIABLE = "bandwidth_used"
# The Paje events link_bytes reads, and the fields it needs from each (their order comes from the header).
_NEEDED = {
    "PajeDefineContainerType": ("Alias", "Name"),
    "PajeDefineVariableType": ("Alias", "Type", "Name"),
    "PajeCreateContainer": ("Time", "Alias", "Type", "Name"),
    "PajeSetVariable": ("Time", "Type", "Container", "Value"),
    "PajeAddVariable": ("Time", "Type", "Container", "Value"),
    "PajeSubVariable": ("Time", "Type", "Container", "Value"),
}
# Relative size of a variable left over at the end of the trace that still counts as zero (the rates
# added and subtracted are the same printed numbers, but summed in another order).
_RESIDUE = 1e-9


def _fields(line: str) -> list[str]:
    """The fields of a Paje line; a double-quoted field may contain spaces."""
    if '"' not in line:
        return line.split()
    return [plain or quoted for quoted, plain in _TOKEN.findall(line)]


class _Malformed(Exception):
    """A line of the trace is not what Paje or SimGrid writes (the message says why; the caller adds where)."""


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _Malformed(f"{what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise _Malformed(f"{what} {text!r} is not finite")
    return value


# What a variable event does to the current value.
_SET, _ADD, _SUB = 0, 1, -1
_VARIABLE_EVENTS = {"PajeSetVariable": _SET, "PajeAddVariable": _ADD, "PajeSubVariable": _SUB}


def link_bytes(trace_file: Path, series: LinkSeries | None = None) -> dict[str, float]:
    """Bytes each link carried in a Paje trace written with :func:`tracing_options`, as SimGrid traced them
    (exact when no flow's rate changes while it transfers, else a lower bound: see the module's description).
    With ``series``, every stretch of a link's traffic is also added to it, by link name: the bytes over time.

    Every link the trace declares is present, with 0.0 if it carried nothing (SimGrid declares every
    link of the platform when it loads it). Integrates ``bandwidth_used`` (PajeSetVariable, AddVariable,
    SubVariable) over time, one line at a time, field positions taken from the trace's ``%EventDef``
    header. Raises ``StudyError`` naming the file and line for a malformed trace, for one without link
    variables, and for one that ends while a link is still in use (a truncated trace).
    """
    trace_file = Path(trace_file)
    events: dict[str, tuple[str, int, tuple[int, ...]]] = {}  # id -> (name, field count, positions of _NEEDED)
    declared = _Links()
    link_variables, usage = declared.variables, declared.usage
    defining: tuple[str, str, list[str]] | None = None  # name, id and field names of the %EventDef being read
    number = 0
    try:
        stream = trace_file.open(encoding="utf-8", errors="replace")
    except OSError as err:
        raise StudyError(f"cannot read the trace {trace_file}: {err.strerror}") from None
    with stream:
        for number, line in enumerate(stream, 1):
            try:
                if line.startswith("%"):
                    defining = _header_line(line, defining, events)
                    continue
                if defining is not None:
                    raise _Malformed(f"the definition of {defining[0]} has no %EndEventDef")
                fields = line.split() if '"' not in line else _fields(line)
                if not fields or fields[0].startswith("#"):
                    continue
                try:
                    name, count, at = events[fields[0]]
                except KeyError:
                    raise _Malformed(f"unknown event id {fields[0]!r} (no %EventDef defines it)") from None
                if len(fields) != count + 1:
                    raise _Malformed(f"{name} has {count} fields, this line {len(fields) - 1}: {line.strip()[:80]!r}")
                kind = _VARIABLE_EVENTS.get(name)
                if kind is None:
                    _declare(name, fields, at, declared)
                    continue
                # A variable event, the bulk of a trace: keep this branch lean (inline, no call).
                if fields[at[1]] not in link_variables:
                    continue
                state = usage.get(fields[at[2]])
                if state is None:
                    raise _Malformed(f"{name} of {_VARIABLE} on {fields[at[2]]!r}, which is no link container")
                try:
                    when, value = float(fields[at[0]]), float(fields[at[3]])
                except ValueError:
                    when, value = _number(fields[at[0]], "time"), _number(fields[at[3]], "value")
                if not (math.isfinite(when) and math.isfinite(value)):
                    when, value = _number(fields[at[0]], "time"), _number(fields[at[3]], "value")
                if when < state[1]:
                    raise _Malformed(f"time {fields[at[0]]} is before the previous event of the same link")
                state[2] += state[0] * (when - state[1])
                if series is not None and state[0] != 0:
                    series.add(declared.names[fields[at[2]]], state[1], when, state[0])
                state[1] = when
                state[0] = value if kind == _SET else state[0] + kind * value
                if abs(state[0]) > state[3]:
                    state[3] = abs(state[0])
            except _Malformed as err:
                raise StudyError(f"{trace_file}: line {number}: {err}") from None
    return _totals(trace_file, number, defining, declared)


class _Links:
    """What a trace has declared about its links so far, and each link's ``bandwidth_used`` up to now."""

    def __init__(self) -> None:
        self.types: set[str] = set()  # aliases of the link container types
        self.variables: set[str] = set()  # aliases of the variable types that are a link's bandwidth_used
        self.names: dict[str, str] = {}  # container alias -> link name
        # container alias -> [value of its bandwidth_used, since when, integral up to then, largest |value|]
        self.usage: dict[str, list[float]] = {}


def _declare(name: str, fields: list[str], at: tuple[int, ...], declared: _Links) -> None:
    """Note what a definition or container event ``name`` declares about links (other events declare nothing)."""
    if name == "PajeCreateContainer":
        if fields[at[2]] in declared.types:
            alias = fields[at[1]]
            if alias in declared.usage:
                raise _Malformed(f"container {alias!r} created twice")
            declared.names[alias] = fields[at[3]]
            declared.usage[alias] = [0.0, _number(fields[at[0]], "time"), 0.0, 0.0]
    elif name == "PajeDefineContainerType":
        if fields[at[1]] == _LINK_TYPE:
            declared.types.add(fields[at[0]])
    elif name == "PajeDefineVariableType":
        if fields[at[2]] == _VARIABLE and fields[at[1]] in declared.types:
            declared.variables.add(fields[at[0]])


def _totals(
    trace_file: Path, lines: int, defining: tuple[str, str, list[str]] | None, declared: _Links
) -> dict[str, float]:
    """The bytes of every link once the whole trace (``lines`` lines) is read, or why the trace is unusable."""
    if lines == 0:
        raise StudyError(f"{trace_file}: the trace is empty (did SimGrid fail before writing it?)")
    if defining is not None:
        raise StudyError(f"{trace_file}: line {lines}: the trace ends inside the definition of {defining[0]}")
    if not declared.variables:
        raise StudyError(
            f"{trace_file}: no link {_VARIABLE} variable in the trace (written without tracing_options()?)"
        )
    result = {}
    for alias, name in declared.names.items():
        value, _, integral, peak = declared.usage[alias]
        if abs(value) > _RESIDUE * peak:
            raise StudyError(
                f"{trace_file}: line {lines}: the trace ends while link {name} is in use ({value:g} B/s): truncated?"
            )
        result[name] = integral
    return result


def _header_line(
    line: str, defining: tuple[str, str, list[str]] | None, events: dict[str, tuple[str, int, tuple[int, ...]]]
) -> tuple[str, str, list[str]] | None:
    """Read one ``%`` line of the header; return the definition still being read, if any.

    A finished ``%EventDef`` goes to ``events``: its id -> (event name, number of fields, positions in a line
    of the fields ``_NEEDED`` of it, the event id being at position 0).
    """
    words = line[1:].split()
    if defining is None:
        if words[:1] != ["EventDef"] or len(words) != 3:
            raise _Malformed(f"expected '%EventDef NAME ID', got {line.strip()[:80]!r}")
        return (words[1], words[2], [])
    name, alias, names = defining
    if words == ["EndEventDef"]:
        needed = _NEEDED.get(name, ())
        missing = [field for field in needed if field not in names]
        if missing:
            raise _Malformed(f"the definition of {name} has no field {missing[0]}")
        events[alias] = (name, len(names), tuple(names.index(field) + 1 for field in needed))
        return None
    if len(words) != 2:
        raise _Malformed(f"expected a field 'NAME TYPE' of {name}, got {line.strip()[:80]!r}")
    names.append(words[0])
    return defining


@dataclass(frozen=True)
class TracedRun:
    """One traced simulation: what the app printed, the bytes per link, and what tracing cost."""

    stdout: str
    """What the app printed."""
    link_bytes: dict[str, float]
    trace_file: Path
    trace_size: int
    """Bytes of the Paje trace."""
    wall_s: float
    """Wall time of smpirun (simulation and writing the trace)."""
    parse_s: float
    """Wall time of :func:`link_bytes`."""


def traced_run(
    binary: Path,
    args: Sequence[str],
    platform: Path,
    hostfile: Path,
    ranks: int,
    trace_file: Path,
    options: Sequence[str] = (),
    timeout: float = 600,
    label: str | None = None,
) -> TracedRun:
    """Run ``binary`` under smpirun (``study_runner.simulation.smpi``'s command and options, then ``options``, then the
    tracing flags) in the directory of ``trace_file``, and integrate its trace.

    Raises ``StudyError`` if the simulation fails or if its trace is unusable.
    """
    trace_file = Path(trace_file).absolute()
    label = label or f"traced {Path(binary).name}"
    trace_file.unlink(missing_ok=True)
    traced = smpirun_simulation(binary, args, platform, hostfile, ranks, (*options, *tracing_options(trace_file)))
    outcome = run_smpirun_measured(traced.argv, trace_file.parent, timeout, label)
    if not trace_file.is_file():
        raise StudyError(f"{label}: smpirun wrote no trace {trace_file}")
    started = time.monotonic()
    used = link_bytes(trace_file)
    return TracedRun(
        outcome.stdout, used, trace_file, trace_file.stat().st_size, outcome.wall_s, time.monotonic() - started
    )
