"""Sweep files: a grid of simulations declared in TOML, expanded into points before anything runs.

A sweep declares variables and how every point uses them::

    name = "nbl-regime-mesh"                  # results go to results/sweeps/<name>/
    title = "Which combining algorithm wins on an NBL mesh"

    [grid]                                    # cartesian product: every variable is one axis
    side = [4, 8]
    nbl = ["none", "nominal"]

    [[zip]]                                   # one more axis whose variables vary together
    algorithm = ["tree", "snake", "fence"]    #   (lists of equal length)
    blocks = [1, 16, 16]

    [platform]                                # a topology family and its parameters
    family = "mesh"
    width = "{side}"
    height = "{side}"
    nbl = "{nbl}"

    [run]                                     # the app, its arguments, ranks, placement, smpirun options
    app = "combine"                           # a topolab app (build/bin), a path to your own binary, or a
                                              #   third-party code topolab builds ("nas:is", "nas:ep", "nas:dt")
    ranks = "{side * side}"
    args = ["-a", "{algorithm}", "-n", "1000", "-S", "{max(1, 1000 // blocks)}"]
    placement = ""                            # optional: a named placement of the family
    folded_buffers = 65536                    # optional: the option groups of a study's run (studies.study):
    collectives = { barrier = "ompi_bruck" }  #   folded buffers, collective algorithms, message overhead,
    message_overhead = 5.4e-05                #   privatization, stack guard
    options = []                              # optional: extra smpirun --cfg flags, after those
    timeout = 600                             # optional: seconds per point
    size = "{side * side * blocks}"           # optional: a point's relative cost (e.g. messages sent), for the
                                              #   estimate of the time left only (default: its rank count)
    compute = "off"                           # optional: "benchmark" charges the app's CPU bursts, timed here,
                                              #   at the platform's core speed (study_runner.simulation.compute);
                                              #   "memory" too, their memory part at the node's memory_bw
    memory_fraction = 0.3                     # with compute = "memory": the code's memory fraction
    ranks_per_node = 1                        # optional: consecutive ranks on each host of the placement
    output = "json"                           # optional: a third-party report instead ("nas": simulation.outputs)
    replay = false                            # optional: true runs the app once per trace (same app, arguments,
                                              #   ranks, options) and replays its time-independent trace on every
                                              #   point's platform (simulation.replay): each point's one record is
                                              #   SMPI's simulated time, simulated_s; needs compute = "off". In a
                                              #   sweep that replays, the points that do not report simulated_s too
    counters = false                          # optional: true traces each point and writes its network counters
                                              #   (counters/point-N/: bytes per link, their series, a heat map)

    [output]
    metric = "time_s_max"                     # the field of the app's JSON records the plots show
    better = "lower"                          # or "higher" (a bandwidth)
    [[output.plots]]
    kind = "lines"                            # metric against x, one line per series, one panel per facet
    x = "side"
    series = "algorithm"
    facets = ["nbl"]
    [[output.plots]]
    kind = "regime"                           # the best value of `compare` in every (x, y) cell
    x = "side"
    y = "nbl"
    compare = "algorithm"
    [[output.plots]]
    kind = "split"                            # computation vs the rest (communication, waiting) per x value, as
    x = "side"                                #   stacked bars: needs compute = "benchmark"

Axes and templates are the grammar of ``study_runner.studies.templates`` (study files use it too): axes vary in the
order they are declared, the last fastest; a template is ``{expression}`` arithmetic, comparisons and a few
functions on the variables (``"{side * side}"`` is the integer 16). Every key of ``[platform]`` and ``[run]``
may be a template, the family too.

Variables a plot does not show (neither x, y, series, compare nor a facet) are reduced to their best
value, so a regime map over algorithms can let each algorithm use its best block size.

Every mistake in the file — malformed TOML, an unknown key, an empty grid, zipped lists of different
lengths, a template naming an unknown variable, an unknown family or parameter at any point, a plot
naming an unknown variable, a replay with benchmarked computation or a metric other than ``simulated_s`` — is one
``StudyError`` before anything runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from generators.errors import TopologyError
from generators.families import check_file_params
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.simulation.compute import SIMULATED_TIME_OPTIONS
from study_runner.simulation.replay import REPLAY_METRIC
from study_runner.studies.run_fields import run_fields
from study_runner.studies.schema import PLOT_KEYS
from study_runner.studies.schema import check
from study_runner.studies.schema import sweep_schema
from study_runner.studies.study import PlatformSpec
from study_runner.studies.study import read_toml
from study_runner.studies.templates import assignments
from study_runner.studies.templates import axes
from study_runner.studies.templates import evaluate
from study_runner.studies.templates import render

__all__ = ["PLOT_KINDS", "Plot", "Sweep", "evaluate", "load_sweep", "render"]

PLOT_KINDS = tuple(PLOT_KEYS)


@dataclass(frozen=True)
class Plot:
    """A declared figure: ``lines`` (metric vs x per series) or ``regime`` (best ``compare`` per (x, y) cell)."""

    kind: str
    x: str
    y: str | None = None
    series: str | None = None
    compare: str | None = None
    facets: tuple[str, ...] = ()
    logx: bool = False
    logy: bool = False
    title: str | None = None

    @property
    def shown(self) -> tuple[str, ...]:
        """The variables on the plot's axes, legend and panels (the others are reduced to their best value)."""
        named = (self.x, self.y, self.series, self.compare, *self.facets)
        return tuple(dict.fromkeys(v for v in named if v is not None))

    @property
    def file_name(self) -> str:
        by = self.compare if self.kind == "regime" else self.series
        parts = [self.kind, self.x] + ([self.y] if self.y else []) + ([f"by-{by}"] if by else [])
        return "-".join(parts) + ".png"


@dataclass(frozen=True)
class Sweep:
    """A sweep file, validated and expanded."""

    name: str
    title: str
    description: str
    variables: tuple[str, ...]
    platforms: dict[str, PlatformSpec]
    """The distinct platforms of the points (``platform-0``, ...), each a family and its parameters."""
    points: tuple[RunSpec, ...]
    """A run per point (``point-0``, ...), its ``variables`` set, naming one of ``platforms``."""
    metric: str | None
    better: str
    plots: tuple[Plot, ...]
    path: Path
    axes: tuple[tuple[str, ...], ...] = ()
    """The variables of each axis: one per ``[grid]`` variable, all of a ``[[zip]]`` table together."""
    baseline: str | None = None
    """``output.baseline``, ``VARIABLE=VALUE``: the point the printed table's speed-ups are over (checked at load)."""


def _plots(output: dict[str, Any], variables: tuple[str, ...], where: str) -> tuple[Plot, ...]:
    plots = []
    for number, raw in enumerate(output.get("plots", []), 1):
        kind = raw["kind"]
        required, optional = PLOT_KEYS[kind]
        missing = sorted(required - set(raw))
        if missing:
            raise StudyError(f"{where}: plot {number} ({kind}) is missing {missing[0]!r}")
        unknown = sorted(set(raw) - required - optional)
        if unknown:
            known = ", ".join(sorted(required | optional))
            raise StudyError(f"{where}: plot {number} ({kind}) has unknown key {unknown[0]!r}; known: {known}")
        facets = raw.get("facets", [])
        if isinstance(facets, str):
            facets = [facets]
        named = [raw[k] for k in ("x", "y", "series", "compare") if k in raw] + list(facets)
        for name in named:
            if name not in variables:
                known = ", ".join(variables)
                raise StudyError(f"{where}: plot {number} ({kind}) names unknown variable {name!r} (known: {known})")
        if len(set(named)) != len(named):
            raise StudyError(f"{where}: plot {number} ({kind}) uses a variable twice")
        plots.append(
            Plot(
                kind=kind,
                x=raw["x"],
                y=raw.get("y"),
                series=raw.get("series"),
                compare=raw.get("compare"),
                facets=tuple(facets),
                logx=raw.get("logx", False),
                logy=raw.get("logy", False),
                title=raw.get("title"),
            )
        )
    names = [plot.file_name for plot in plots]
    if len(set(names)) != len(names):
        raise StudyError(f"{where}: two plots would be the same file; give them different axes")
    return tuple(plots)


def _point(
    index: int, variables: dict[str, Any], platform: dict[str, Any], run: dict[str, Any], where: str
) -> tuple[PlatformSpec, RunSpec]:
    label = f"{where}: point {index} ({', '.join(f'{k}={v!r}' for k, v in variables.items())})"
    try:
        family = render(platform["family"], variables)
        params = {key: render(value, variables) for key, value in platform.items() if key != "family"}
        try:
            check_file_params(family, params)
        except TopologyError as err:
            raise StudyError(str(err)) from None
        rendered = {key: render(value, variables) for key, value in run.items()}
        if isinstance(rendered["ranks"], str) and rendered["ranks"].strip().isdigit():
            rendered["ranks"] = int(rendered["ranks"])  # a template renders text
    except StudyError as err:
        raise StudyError(f"{label}: {err}") from None
    fields = run_fields(rendered, label, "run")
    spec = RunSpec(id=f"point-{index}", platform="", variables=variables, **fields)
    return PlatformSpec("", family, params), spec


def _named_platforms(points: list[tuple[PlatformSpec, RunSpec]]) -> tuple[dict[str, PlatformSpec], list[RunSpec]]:
    """One platform per distinct (family, parameters), named in order of first use, and each point's run naming its
    platform."""
    names: dict[str, str] = {}
    platforms: dict[str, PlatformSpec] = {}
    runs = []
    for platform, run in points:
        identity = json.dumps([platform.family, platform.params], sort_keys=True)
        if identity not in names:
            names[identity] = f"platform-{len(names)}"
            platforms[names[identity]] = replace(platform, name=names[identity])
        runs.append(replace(run, platform=names[identity]))
    return platforms, runs


def load_sweep(path: str | Path) -> Sweep:
    """Read, validate and expand a sweep file; ``StudyError`` names the first problem."""
    path = Path(path)
    where = str(path)
    data = read_toml(path, "sweep file")
    check(data, sweep_schema(), where)
    name, platform, run = data["name"], data["platform"], data["run"]
    output = data.get("output", {})
    better, metric = output.get("better", "lower"), output.get("metric")

    grid_axes = axes(data, where)
    variables = tuple(name for axis in grid_axes for name in axis[0])
    plots = _plots(output, variables, where)
    if plots and metric is None:
        raise StudyError(f"{where}: plots need output.metric (the record field they show)")
    try:
        grid = assignments(grid_axes)
    except StudyError as err:
        raise StudyError(f"{where}: {err}") from None
    platforms, points = _named_platforms([_point(i, point, platform, run, where) for i, point in enumerate(grid)])
    if any(plot.kind == "split" for plot in plots) and any(p.compute == "off" for p in points):
        raise StudyError(f'{where}: a split plot shows computation: it needs run.compute = "benchmark" or "memory"')
    if any(point.replay for point in points):
        if metric not in (None, REPLAY_METRIC):
            raise StudyError(
                f"{where}: a replayed point reports SMPI's simulated time only (the app does not run: its JSON fields "
                f"do not exist): output.metric must be {REPLAY_METRIC!r}, got {metric!r}"
            )
        # The points that run the app report the same simulated time beside the app's records.
        points = [p if p.replay else replace(p, options=(*p.options, *SIMULATED_TIME_OPTIONS)) for p in points]
    sweep = Sweep(
        name=name,
        title=str(data.get("title", name)),
        description=str(data.get("description", "")),
        variables=variables,
        platforms=platforms,
        points=tuple(points),
        metric=metric,
        better=better,
        plots=plots,
        path=path,
        axes=tuple(tuple(axis[0]) for axis in grid_axes),
        baseline=output.get("baseline"),
    )
    if sweep.baseline is not None:
        from study_runner.sweeps.sweep_summary import parse_baseline  # it reads a Sweep

        try:
            parse_baseline(sweep.baseline, sweep, "output.baseline")
        except StudyError as err:
            raise StudyError(f"{where}: {err}") from None
    return sweep
