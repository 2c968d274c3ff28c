"""Studies are data: one TOML file per study in ``studies/``.

A study file is the whole experiment: named platforms (a family and its parameters), the runs (app, arguments,
rank count, placement, extra smpirun options), the checks (``[[checks]]``, ``study_runner.studies.study_checks``:
published values and the metrics they are compared with, templated over the runs' grid), what the figures show
(``[figures]``) and the analysis module that gives the metrics, notes and figures. Unknown keys, unknown
platforms and bad values are errors before anything runs.

Example::

    name = "sanity-alpha-beta"
    title = "SimGrid reproduces the alpha-beta model of its platform"
    analysis = "sanity_alpha_beta"

    [platforms.pair]
    family = "crossbar"
    hosts = 2

    [platforms.mesh]              # or a ready platform of platforms/machines.toml, by <machine>/<file>:
    machine = "delta/pair-2x1"    # the study then runs on that committed file's family and parameters

    [[runs]]
    id = "pingpong"
    platform = "pair"
    app = "pingpong"
    ranks = 2
    args = ["-s", "1,1K,1M"]
    quick_args = ["-s", "1,1K"]   # optional: arguments under --quick
    quick = true                  # optional: part of the --quick study (default true)
    full_only = false             # optional: run under --full only (default false): a run beyond the default's
                                  #   time budget; its checks, notes and figures are left out without it
    full_args = ["-s", "1,1K,1M,1G"]  # optional: arguments under --full (the paper's whole benchmark,
    full_timeout = 86400          #   when the default runs a reduced one) and its timeout
    folded_buffers = 65536        # optional: bytes; allocations at least this large folded into shared memory that
                                  # is never touched (a timing run that never reads its data)
    collectives = { barrier = "ompi_bruck" }  # optional: SMPI's algorithm for each collective
    message_overhead = 5.4e-05    # optional: s of software overhead per eager message, half on each side
    privatization = true          # optional: false for an app without mutable globals (a memory map per rank)
    stack_guard = true            # optional: false, no guard page below each rank's stack (a memory map per rank)
    options = []                  # optional: extra --cfg flags for smpirun, after those of the fields above
    placement = []                # optional: host of each rank (default: platform order), or a named
                                  # placement of the family, e.g. "allocation:2,4,3" on an MLFM
    timeout = 600                 # optional: seconds
    size = 1000                   # optional: the run's relative cost (e.g. the messages its ranks send), for the
                                  # estimate of the time left only (default: its rank count); all runs or none
    compute = "off"               # optional: "benchmark" charges the app's CPU bursts, "memory" too, their memory
                                  # part at the node's memory bandwidth (memory_bw; study_runner.simulation.compute)
    memory_fraction = 0.3         # with compute = "memory": the code's memory fraction (measure-memory-fraction)
    ranks_per_node = 1            # optional: consecutive ranks on each host of the placement
    output = "json"               # optional: the app prints JSON lines, or a third-party format
                                  # (study_runner.simulation.outputs: "nas", "hpcc")
    replay = false                # optional: record the app's trace once and replay it (docs/sweeps.md)

The fields from ``app`` on are those of every run, a sweep's ``[run]`` too: one grammar, checked by
``study_runner.studies.run_fields``.

A study with many similar runs writes them as grids, in the sweep grammar (``study_runner.studies.generate``)::

    [[generate]]
    name = "scan"                 # the analysis reads the grid's axes: study.values("scan", "block")
    [generate.grid]
    block = [20, 40, 60]
    [generate.run]                # a run table whose values are templates of the grid's variables
    id = "scan.S{block}"
    platform = "pair"
    app = "combine"
    ranks = 2
    args = ["-S", "{block}"]

Published numbers that a figure or a note shows but no check compares (a paper's measured table beside the
simulated one, a fit the paper reports) are data too, never code: ``[reference.<name>]`` with ``source`` (where
in the paper), ``value`` (a number, a list, or a table of them) and optionally ``unit``.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from generators.errors import TopologyError
from generators.families import check_file_params
from generators.machines import ReadyPlatform
from generators.machines import load_catalogue
from study_runner.batch.runs import PlatformSpec
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.paths import REPO
from study_runner.simulation.simgrid_options import options_problem
from study_runner.studies.figure_fields import figures_problem
from study_runner.studies.generate import generated_runs
from study_runner.studies.grid_fields import grids_problem
from study_runner.studies.run_fields import run_fields
from study_runner.studies.run_fields import strings
from study_runner.studies.schema import STUDY_RUN_SCHEMA
from study_runner.studies.schema import check as check_schema
from study_runner.studies.schema import study_schema
from study_runner.studies.study_checks import DeclaredCheck
from study_runner.studies.study_checks import RecordChecks
from study_runner.studies.study_checks import declared_checks
from study_runner.studies.templates import positive_number
from study_runner.studies.toml_input import read_toml

__all__ = [
    "STUDIES_DIR",
    "PlatformSpec",
    "RunSpec",
    "Study",
    "load_study",
    "read_toml",
    "study_names",
]

STUDIES_DIR = REPO / "studies"


def _platform(name: str, raw: dict[str, Any], where: str) -> PlatformSpec:
    """A ``[platforms.NAME]`` table (its form is the schema's): ``family`` and its parameters, or only ``machine`` (a
    ready platform)."""
    if "machine" in raw:
        try:
            ready = ready_platforms()[str(raw["machine"])]
        except KeyError:
            known = ", ".join(ready_platforms())
            raise StudyError(f"{where}: platform {name!r}: no ready platform {raw['machine']!r} ({known})") from None
        return PlatformSpec(name, ready.family, dict(ready.params), ready.key)
    params = {k: v for k, v in raw.items() if k != "family"}
    try:
        check_file_params(str(raw["family"]), params)
    except TopologyError as err:
        raise StudyError(f"{where}: platform {name!r}: {err}") from None
    return PlatformSpec(name, str(raw["family"]), params)


@functools.cache
def ready_platforms() -> dict[str, ReadyPlatform]:
    """The catalogue of ready platforms (platforms/machines.toml), read once."""
    try:
        return load_catalogue()
    except TopologyError as err:
        raise StudyError(str(err)) from None


@dataclass(frozen=True)
class Study:
    """A study as declared in its TOML file."""

    name: str
    title: str
    description: str
    analysis: str
    platforms: dict[str, PlatformSpec]
    runs: tuple[RunSpec, ...]
    path: Path | None = None
    reference: dict[str, Any] = field(default_factory=dict)
    checks: tuple[DeclaredCheck | RecordChecks, ...] = ()  # the [[checks]] tables at each of their points
    figures: dict[str, Any] = field(default_factory=dict)  # [figures]: what the analysis draws, and where

    def runs_of(self, grid: str) -> list[str]:
        """The ids of the runs of ``[[generate]]`` grid ``grid``, in the file's order."""
        return [run.id for run in self.runs if run.grid == grid]

    def run_at(self, grid: str, **variables: Any) -> str:
        """The id of the run of ``[[generate]]`` grid ``grid`` at the point with these ``variables``."""
        found = [
            run.id
            for run in self.runs
            if run.grid == grid and all(run.variables.get(name) == value for name, value in variables.items())
        ]
        if len(found) != 1:
            point = ", ".join(f"{name}={value!r}" for name, value in variables.items())
            raise StudyError(f"{self.name}: grid {grid!r} has {len(found)} runs at {point}, not one")
        return found[0]

    def published_value(self, check_id: str) -> float:
        """The published number of check ``check_id``, as the study file gives it (a number)."""
        for check in self.checks:
            if isinstance(check, DeclaredCheck) and check.id == check_id and check.constant_value is not None:
                return check.constant_value
        raise StudyError(f"{self.name}: the study file gives no published number for check {check_id!r}")

    def values(self, grid: str, *names: str) -> list[Any]:
        """The distinct values of variable ``names[0]`` (of tuples of ``names``, if several) over the runs of
        ``[[generate]]`` grid ``grid``, in run order."""
        points = [run.variables for run in self.runs if run.grid == grid]
        if not points or any(name not in points[0] for name in names):
            raise StudyError(f"{self.name}: the study file has no grid {grid!r} with variables {', '.join(names)}")
        values = (point[names[0]] if len(names) == 1 else tuple(point[n] for n in names) for point in points)
        return list(dict.fromkeys(values))

    def selected_runs(self, quick: bool) -> tuple[RunSpec, ...]:
        """The runs of the full study, or of its quick version."""
        return tuple(run for run in self.runs if (run.quick or not quick) and not run.full_only)

    def simgrid_options_problem(self) -> str | None:
        """What SimGrid says of the first of the runs' distinct option sets (their typed fields' and any raw
        ``--cfg``) that it refuses, naming the study file and the run; None when it takes them all (or when topolab's
        apps are not built: the runs' own check then says it). ``scripts/repro`` asks it of every study it loads,
        before the first one runs."""
        asked: set[tuple[str, ...]] = set()
        for run in self.runs:
            if run.options not in asked:
                asked.add(run.options)
                problem = options_problem(run.options)
                if problem is not None:
                    return f"{self.path or self.name}: run {run.id}: {problem}"
        return None

    def full_benchmark(self) -> Study:
        """The study with every run that declares ``full_args`` running them, and its ``full_only`` runs (--full)."""
        runs = tuple(
            replace(run, args=run.full_args or run.args, timeout=run.full_timeout or run.timeout, full_only=False)
            for run in self.runs
        )
        return replace(self, runs=runs)


def _reference(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """The value of each ``[reference.<name>]`` table (their form is the schema's), whose source says where it is."""
    for name, entry in raw.items():
        if not entry["source"].strip():
            raise StudyError(f"{where}: reference.{name}.source must say where in the paper the value is")
    return {name: entry["value"] for name, entry in raw.items()}


def study_names(directory: Path = STUDIES_DIR) -> list[str]:
    """Names of the studies shipped in ``directory``, sorted."""
    return sorted(p.stem for p in directory.glob("*.toml"))


def _run(raw: dict[str, Any], platforms: dict[str, PlatformSpec], where: str, path: str) -> RunSpec:
    """A run table at ``path`` whose values are all given (a ``[[runs]]`` table, or a rendered ``[generate.run]``)."""
    fields = run_fields(raw, where, path, STUDY_RUN_SCHEMA)
    here = f"{where}: run {raw['id']}"
    if raw["platform"] not in platforms:
        raise StudyError(f"{here} names unknown platform {raw['platform']!r}")
    full_timeout = raw.get("full_timeout")
    if full_timeout is not None and not positive_number(full_timeout):
        raise StudyError(f"{here}: full_timeout must be a finite number of seconds > 0, got {full_timeout!r}")
    if raw.get("trace_links", False) and (fields["replay"] or fields["compute"] != "off"):
        raise StudyError(
            f'{here}: trace_links = true needs the app\'s own run (no replay) and compute = "off" (its traced twin '
            "must print what the run printed; benchmarked computation is measured anew in every run)"
        )
    return RunSpec(
        id=raw["id"],
        platform=raw["platform"],
        quick_args=strings(raw.get("quick_args", [])),
        quick=raw.get("quick", True),
        full_only=raw.get("full_only", False),
        full_args=strings(raw.get("full_args", [])),
        full_timeout=None if full_timeout is None else float(full_timeout),
        trace_links=raw.get("trace_links", False),
        **fields,
    )


def _analysis_module(analysis: str) -> ModuleType | None:
    """The analysis module, or None when there is none (reported when the study runs: pipeline._analysis)."""
    try:
        return importlib.import_module(f"study_runner.studies.analyses.{analysis}")
    except ModuleNotFoundError:
        return None


def load_study(name_or_path: str | Path, directory: Path = STUDIES_DIR) -> Study:
    """Load and validate a study by name (``sanity-alpha-beta``) or by the path of its TOML file."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = directory / f"{name_or_path}.toml"
        if not path.is_file():
            known = ", ".join(study_names(directory)) or "none"
            raise StudyError(f"unknown study {str(name_or_path)!r}; known studies: {known}")
    where = str(path)
    data = read_toml(path, "study file")
    schema = study_schema()  # its allOf, the analyses' [figures] contracts, is checked once the runs are known
    check_schema(data, {key: value for key, value in schema.items() if key != "allOf"}, where)
    if not data.get("runs") and not data.get("generate"):
        raise StudyError(f"{where}: the study has no run: declare [[runs]] or [[generate]] tables")
    check_schema(data, schema, where)
    platforms = {pname: _platform(pname, raw, where) for pname, raw in data["platforms"].items()}
    runs = [_run(raw, platforms, where, f"runs[{i}]") for i, raw in enumerate(data.get("runs", []))]
    module = _analysis_module(str(data["analysis"]))
    functions = dict(getattr(module, "TEMPLATE_FUNCTIONS", {}))  # what [[generate]] templates may call
    for point in generated_runs(data.get("generate", []), functions, where):
        run = _run(
            point.table, platforms, f"{where}: grid {point.block!r}, {point.label}", f"generate[{point.number}].run"
        )
        runs.append(replace(run, grid=point.block, variables=point.variables))
    if not runs:
        raise StudyError(f"{where}: the study has no run: declare [[runs]] or [[generate]] tables")
    twins = [run for run in runs if (run.trace_links or run.counters) and run.traced_id in {o.id for o in runs}]
    if twins:
        raise StudyError(f"{where}: run id {twins[0].traced_id} is the id of run {twins[0].id}'s traced twin")
    run_grids: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for run in runs:
        if run.grid is not None:
            run_grids.setdefault(run.grid, []).append((run.id, run.variables))
    checks = declared_checks(data.get("checks", []), run_grids, functions, where)
    for check in checks:  # a misspelt run would silently drop its check (made when its runs ran)
        named = (check.run,) if isinstance(check, RecordChecks) else check.runs
        unknown_runs = [run for run in named if run not in {spec.id for spec in runs}]
        if unknown_runs:
            what = check.where if isinstance(check, RecordChecks) else f"check {check.id}"
            raise StudyError(f"{where}: {what} names run {unknown_runs[0]!r}, which the study does not declare")
    check_ids = [check.id for check in checks if isinstance(check, DeclaredCheck)]
    repeated = sorted({i for i in check_ids if check_ids.count(i) > 1})
    if repeated:
        raise StudyError(f"{where}: check {repeated[0]!r} is declared twice")
    figures = data.get("figures", {})
    ids = [run.id for run in runs]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise StudyError(f"{where}: run id {duplicated[0]!r} is used twice")
    # Sizes are relative: a run without one would be measured in ranks beside runs measured in, say, messages.
    unsized = [run.id for run in runs if run.size is None]
    if unsized and len(unsized) < len(runs):
        raise StudyError(f"{where}: run {unsized[0]} has no size: declare size on every run or on none")
    if module is not None:  # the contract with the analysis: what it reads of [figures] and of the grids
        problem = figures_problem(figures, getattr(module, "FIGURES", {}), set(ids)) or grids_problem(
            getattr(module, "GRIDS", {}), [(run.grid, run.variables) for run in runs]
        )
        if problem is not None:
            raise StudyError(f"{where}: {problem}")
    return Study(
        name=str(data["name"]),
        title=str(data["title"]),
        description=str(data.get("description", "")),
        analysis=str(data["analysis"]),
        platforms=platforms,
        runs=tuple(runs),
        path=path,
        reference=_reference(data.get("reference", {}), where),
        checks=checks,
        figures=figures,
    )
