"""A sweep's declared plots: ``lines`` (the metric against x, a line per series, a panel per facet value),
``regime`` maps (in every (x, y) cell, which value of ``compare`` gives the best metric; the cell says
by how much it beats the runner-up) and ``split`` bars (with computation benchmarked: each x value's simulated
time as the computation of an average rank and the rest, communication and waiting). Variables a plot does not
show are reduced to their best value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generators.files import atomic_path
from study_runner.sweeps.sweep import Plot
from study_runner.sweeps.sweep import Sweep
from study_runner.sweeps.sweep_table import Row
from study_runner.sweeps.sweep_table import best_rows

__all__ = ["draw_plots"]


def _ordered(values: Sequence[Any]) -> list[Any]:
    """Distinct values, numerically sorted when all are numbers, else in first-seen order."""
    distinct = list(dict.fromkeys(values))
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in distinct):
        return sorted(distinct)
    return distinct


def _panels(plot: Plot, table: list[Row]) -> list[tuple[tuple[Any, ...], list[Row]]]:
    """(facet values, rows) per panel, in the order of the facets' values."""
    if not plot.facets:
        return [((), table)]
    levels = [_ordered([row[f] for row in table]) for f in plot.facets]
    panels = []
    for combination in itertools.product(*levels):
        chosen = [row for row in table if tuple(row[f] for f in plot.facets) == combination]
        if chosen:
            panels.append((combination, chosen))
    return panels


def _figure(count: int, width: float = 4.6, height: float = 3.6):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(count, 3)
    lines = math.ceil(count / columns)
    figure, axes = plt.subplots(lines, columns, figsize=(width * columns, height * lines + 0.6), squeeze=False)
    for extra in axes.flat[count:]:
        extra.set_visible(False)
    return figure, list(axes.flat[:count])


def _panel_title(plot: Plot, values: tuple[Any, ...]) -> str:
    return ", ".join(f"{name}={value}" for name, value in zip(plot.facets, values, strict=True))


def _positions(values: list[Any]) -> tuple[list[float], bool]:
    """x positions: the values themselves when numeric, else 0, 1, 2, ... (categorical)."""
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values], True
    return [float(i) for i in range(len(values))], False


def _lines(plot: Plot, sweep: Sweep, table: list[Row], path: Path) -> None:
    reduced = best_rows(table, plot.shown, sweep.metric or "", sweep.better)
    panels = _panels(plot, reduced)
    figure, axes = _figure(len(panels))
    series_values = _ordered([row[plot.series] for row in reduced]) if plot.series else [None]
    for axis, (facet_values, chosen) in zip(axes, panels, strict=True):
        xs_all = _ordered([row[plot.x] for row in chosen])
        positions, numeric = _positions(xs_all)
        where = dict(zip(xs_all, positions, strict=True))
        for series in series_values:
            points = sorted(
                (where[row[plot.x]], row[sweep.metric])
                for row in chosen
                if plot.series is None or row[plot.series] == series
            )
            if points:
                label = None if plot.series is None else f"{plot.series}={series}"
                axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        if not numeric:
            axis.set_xticks(positions, [str(v) for v in xs_all])
        if plot.logx and numeric:
            axis.set_xscale("log")
        if plot.logy:
            axis.set_yscale("log")
        axis.set_xlabel(plot.x)
        axis.set_ylabel(sweep.metric)
        axis.set_title(_panel_title(plot, facet_values), fontsize=9)
        axis.grid(True, alpha=0.3)
        if plot.series:
            axis.legend(fontsize=7)
    _save(figure, plot, sweep, path)


def _regime(plot: Plot, sweep: Sweep, table: list[Row], path: Path) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    assert plot.y is not None and plot.compare is not None
    reduced = best_rows(table, plot.shown, sweep.metric or "", sweep.better)
    candidates = _ordered([row[plot.compare] for row in reduced])
    colours = plt.get_cmap("tab10").colors
    panels = _panels(plot, reduced)
    figure, axes = _figure(len(panels))
    lower = sweep.better == "lower"
    for axis, (facet_values, chosen) in zip(axes, panels, strict=True):
        xs, ys = _ordered([row[plot.x] for row in chosen]), _ordered([row[plot.y] for row in chosen])
        cells: dict[tuple[Any, Any], list[tuple[float, Any]]] = {}
        for row in chosen:
            cells.setdefault((row[plot.x], row[plot.y]), []).append((row[sweep.metric], row[plot.compare]))
        grid = [[math.nan] * len(xs) for _ in ys]
        for (x, y), entries in cells.items():
            entries.sort(key=lambda entry: entry[0] if lower else -entry[0])
            winner = entries[0]
            i, j = ys.index(y), xs.index(x)
            grid[i][j] = candidates.index(winner[1])
            margin = ""
            if len(entries) > 1 and winner[0] and entries[1][0]:
                ratio = entries[1][0] / winner[0] if lower else winner[0] / entries[1][0]
                margin = f"\n{ratio:.2f}x"
            axis.text(j, i, f"{winner[1]}{margin}", ha="center", va="center", fontsize=7)
        cmap = ListedColormap([colours[k % len(colours)] for k in range(len(candidates))])
        axis.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(candidates) - 0.5, origin="lower", aspect="auto", alpha=0.55)
        axis.set_xticks(range(len(xs)), [str(v) for v in xs], fontsize=8)
        axis.set_yticks(range(len(ys)), [str(v) for v in ys], fontsize=8)
        axis.set_xlabel(plot.x)
        axis.set_ylabel(plot.y)
        axis.set_title(_panel_title(plot, facet_values), fontsize=9)
    handles = [Patch(color=colours[k % len(colours)], alpha=0.55, label=str(c)) for k, c in enumerate(candidates)]
    figure.legend(handles=handles, title=f"fastest {plot.compare}", loc="center right", fontsize=8)
    _save(figure, plot, sweep, path)


def _split(plot: Plot, sweep: Sweep, table: list[Row], path: Path) -> None:
    """Stacked bars per x value: an average rank's computation (``computation_s``) below, the rest of the simulated
    time (``simulated_s`` less it: communication and waiting) above."""
    reduced = best_rows(table, plot.shown, sweep.metric or "", sweep.better)
    panels = _panels(plot, reduced)
    figure, axes = _figure(len(panels), width=max(4.6, 0.9 * len(_ordered([row[plot.x] for row in reduced]))))
    for axis, (facet_values, chosen) in zip(axes, panels, strict=True):
        xs = _ordered([row[plot.x] for row in chosen])
        rows = {row[plot.x]: row for row in chosen}
        computing = [rows[x]["computation_s"] for x in xs]
        rest = [max(0.0, rows[x]["simulated_s"] - rows[x]["computation_s"]) for x in xs]
        positions = range(len(xs))
        axis.bar(positions, computing, color="tab:orange", label="computation (an average rank)")
        axis.bar(positions, rest, bottom=computing, color="tab:blue", label="communication and waiting")
        axis.set_xticks(positions, [str(x) for x in xs], fontsize=8, rotation=20)
        axis.set_xlabel(plot.x)
        axis.set_ylabel("simulated time (s)")
        axis.set_title(_panel_title(plot, facet_values), fontsize=9)
        axis.grid(True, axis="y", alpha=0.3)
        axis.legend(fontsize=7)
    _save(figure, plot, sweep, path)


def _save(figure, plot: Plot, sweep: Sweep, path: Path) -> None:
    import matplotlib.pyplot as plt

    reduced = [v for v in sweep.variables if v not in plot.shown]
    note = f" (best over {', '.join(reduced)})" if reduced else ""
    figure.suptitle(plot.title or f"{sweep.title}: {sweep.metric}, {sweep.better} is better{note}", fontsize=10)
    figure.tight_layout(rect=(0, 0, 0.9 if plot.kind == "regime" else 1, 0.95))
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=110, format="png")
    plt.close(figure)


def draw_plots(sweep: Sweep, table: list[Row], directory: Path) -> list[Path]:
    """Draw every plot the sweep declares into ``directory``; return the files."""
    written = []
    for plot in sweep.plots:
        path = directory / plot.file_name
        {"lines": _lines, "regime": _regime, "split": _split}[plot.kind](plot, sweep, table, path)
        written.append(path)
    return written
