"""The contract between a study file's ``[[generate]]`` grids and its analysis: each analysis module declares the
grids it reads (``GRIDS``: a grid's name -> :class:`GridRead`, the variables it reads there and the values it names
itself), and a study is checked against it when it loads, before anything runs. An analysis finds its runs by grid
and variable (``Study.run_at``, ``Study.values``): a grid renamed in the file, a variable gone or an axis without a
value the analysis names would otherwise fail after every simulation has run.

The check reads every run the file generates (the quick and the ``full_only`` ones too): an analysis that names a
value must cope with a mode that leaves it out, and that is its own business.

>>> declared = {"transpose": GridRead(network=("tq",), duplex=("hd", "fd"))}
>>> runs = [("transpose", {"network": "tq", "duplex": "hd"}), ("transpose", {"network": "tq", "duplex": "fd"})]
>>> grids_problem(declared, runs)
>>> grids_problem({"transposes": GridRead()}, runs)
"the analysis reads grid 'transposes', which the study file does not generate (its grids: transpose)"
>>> grids_problem({"transpose": GridRead(network=("es",))}, runs)
"grid 'transpose': variable 'network' has no value 'es', which the analysis names"
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

__all__ = ["GridRead", "grids_problem"]


class GridRead:
    """What an analysis reads of one grid: each variable, with the values it names itself (none: it reads whatever
    values the grid has). ``optional``: the analysis serves several study files and reads the grid only where the
    file generates it."""

    def __init__(self, *, optional: bool = False, **variables: Iterable[object]) -> None:
        self.optional = optional
        self.variables: dict[str, tuple[object, ...]] = {name: tuple(values) for name, values in variables.items()}

    def __repr__(self) -> str:
        return f"GridRead(optional={self.optional}, {self.variables})"


def grids_problem(declared: Mapping[str, GridRead], runs: Iterable[tuple[str | None, Mapping[str, Any]]]) -> str | None:
    """The first way the study's runs (grid, variables) miss what the analysis ``declared``, or None."""
    points: dict[str, list[Mapping[str, Any]]] = {}
    for grid, variables in runs:
        if grid is not None:
            points.setdefault(grid, []).append(variables)
    for grid, read in declared.items():
        if grid not in points:
            if read.optional:
                continue
            generated = ", ".join(points) or "none"
            return f"the analysis reads grid {grid!r}, which the study file does not generate (its grids: {generated})"
        for variable, named in read.variables.items():
            if any(variable not in point for point in points[grid]):
                return f"grid {grid!r} has no variable {variable!r}, which the analysis reads"
            values = [point[variable] for point in points[grid]]
            missing = [value for value in named if value not in values]
            if missing:
                return f"grid {grid!r}: variable {variable!r} has no value {missing[0]!r}, which the analysis names"
    return None
