"""A sweep's declared plots: ``lines`` (the metric against x, a line per series, a panel per facet value),
``regime`` maps (in every (x, y) cell, which value of ``compare`` gives the best metric; the cell says
by how much it beats the runner-up) and ``split`` bars (with computation benchmarked: each x value's simulated
time as the computation of an average rank and the rest, communication and waiting). Variables a plot does not
show are reduced to their best value.

Figures are sized for a paper (3.5 in wide for one panel, 7 in for more: a column or the page of a two-column
layout), written as PNG at 300 dpi and as SVG. Axes say their unit when the name says it (``time_s_max`` is "time,
max (s)": :func:`axis_label`), and a log axis labels its decades only, or a few values when it spans less than one.
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

__all__ = ["axis_label", "draw_plots"]

PANEL_HEIGHT_IN = 2.6
ONE_PANEL_WIDTH_IN = 3.5
PAGE_WIDTH_IN = 7.0
PNG_DPI = 300

_UNITS = (
    ("_s", "s"),
    ("_bytes", "bytes"),
    ("bytes", "bytes"),
    ("_mib", "MiB"),
    ("_mibs", "MiB/s"),
    ("_bps", "B/s"),
    ("_gbps", "GB/s"),
    ("gflops", "Gflop/s"),
)
"""Name endings that say a unit (the apps' JSON fields and the table's own columns)."""
_STATISTICS = {"min": "min", "max": "max", "avg": "mean", "mean": "mean", "median": "median", "sum": "total"}


def axis_label(name: str) -> str:
    """A column name as an axis label with its unit when the name says it; other names are left as they are.

    >>> axis_label("time_s_max"), axis_label("sim_peak_memory_mib"), axis_label("chunk_bytes"), axis_label("side")
    ('time, max (s)', 'sim peak memory (MiB)', 'chunk (bytes)', 'side')
    """
    stem, _, last = name.rpartition("_")
    statistic = _STATISTICS.get(last) if stem else None
    if statistic is None:
        stem = name
    for ending, unit in sorted(_UNITS, key=lambda pair: -len(pair[0])):
        if stem.endswith(ending) and len(stem) > len(ending):
            quantity = stem[: -len(ending)].rstrip("_").replace("_", " ") or stem
            return f"{quantity}{f', {statistic}' if statistic else ''} ({unit})"
        if stem == ending.lstrip("_"):  # the name is its unit
            return f"{unit}{f', {statistic}' if statistic else ''}"
    return name


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


def _figure(count: int, width: float | None = None):
    """A figure of ``count`` panels, up to 3 a line, ``width`` inches wide (default: one panel or the page)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(count, 3)
    lines = math.ceil(count / columns)
    width = width or (ONE_PANEL_WIDTH_IN if columns == 1 else PAGE_WIDTH_IN)
    figure, axes = plt.subplots(lines, columns, figsize=(width, PANEL_HEIGHT_IN * lines + 0.4), squeeze=False)
    for axis in axes.flat:
        axis.tick_params(labelsize=7)
        axis.yaxis.get_offset_text().set_fontsize(7)
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
            _readable_log_ticks(axis.xaxis, positions)
        if plot.logy:
            axis.set_yscale("log")
            _readable_log_ticks(axis.yaxis, [row[sweep.metric] for row in chosen])
        axis.set_xlabel(axis_label(plot.x), fontsize=8)
        axis.set_ylabel(axis_label(sweep.metric or ""), fontsize=8)
        axis.set_title(_panel_title(plot, facet_values), fontsize=8)
        axis.grid(True, alpha=0.3)
        if plot.series:
            axis.legend(fontsize=6)
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
            axis.text(j, i, f"{winner[1]}{margin}", ha="center", va="center", fontsize=6)
        cmap = ListedColormap([colours[k % len(colours)] for k in range(len(candidates))])
        axis.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(candidates) - 0.5, origin="lower", aspect="auto", alpha=0.55)
        axis.set_xticks(range(len(xs)), [str(v) for v in xs], fontsize=7)
        axis.set_yticks(range(len(ys)), [str(v) for v in ys], fontsize=7)
        axis.set_xlabel(axis_label(plot.x), fontsize=8)
        axis.set_ylabel(axis_label(plot.y), fontsize=8)
        axis.set_title(_panel_title(plot, facet_values), fontsize=8)
    handles = [Patch(color=colours[k % len(colours)], alpha=0.55, label=str(c)) for k, c in enumerate(candidates)]
    figure.legend(handles=handles, title=f"fastest {plot.compare}", loc="center right", fontsize=7, title_fontsize=7)
    _save(figure, plot, sweep, path)


def _split(plot: Plot, sweep: Sweep, table: list[Row], path: Path) -> None:
    """Stacked bars per x value: an average rank's computation (``computation_s``) below, the rest of the simulated
    time (``simulated_s`` less it: communication and waiting) above."""
    reduced = best_rows(table, plot.shown, sweep.metric or "", sweep.better)
    panels = _panels(plot, reduced)
    bars = len(_ordered([row[plot.x] for row in reduced]))
    figure, axes = _figure(len(panels), width=PAGE_WIDTH_IN if len(panels) > 1 or bars > 6 else None)
    for axis, (facet_values, chosen) in zip(axes, panels, strict=True):
        xs = _ordered([row[plot.x] for row in chosen])
        rows = {row[plot.x]: row for row in chosen}
        computing = [rows[x]["computation_s"] for x in xs]
        rest = [max(0.0, rows[x]["simulated_s"] - rows[x]["computation_s"]) for x in xs]
        positions = range(len(xs))
        axis.bar(positions, computing, color="tab:orange", label="computation (an average rank)")
        axis.bar(positions, rest, bottom=computing, color="tab:blue", label="communication and waiting")
        axis.set_xticks(positions, [str(x) for x in xs], fontsize=7, rotation=20)
        axis.set_xlabel(axis_label(plot.x), fontsize=8)
        axis.set_ylabel("simulated time (s)", fontsize=8)
        axis.set_title(_panel_title(plot, facet_values), fontsize=8)
        axis.grid(True, axis="y", alpha=0.3)
        axis.legend(fontsize=6)
    _save(figure, plot, sweep, path)


def _save(figure, plot: Plot, sweep: Sweep, path: Path) -> None:
    """Write the figure as ``path`` (PNG) and beside it as SVG."""
    import matplotlib.pyplot as plt

    reduced = [v for v in sweep.variables if v not in plot.shown]
    note = f" (best over {', '.join(reduced)})" if reduced else ""
    metric = axis_label(sweep.metric or "")
    figure.suptitle(plot.title or f"{sweep.title}: {metric}, {sweep.better} is better{note}", fontsize=8, wrap=True)
    figure.tight_layout(rect=(0, 0, 0.8 if plot.kind == "regime" else 1, 0.95))
    for target, kind in ((path, "png"), (path.with_suffix(".svg"), "svg")):
        with atomic_path(target) as tmp, plt.rc_context({"svg.fonttype": "none"}):  # SVG text stays text
            figure.savefig(tmp, dpi=PNG_DPI, format=kind)
    plt.close(figure)


def _readable_log_ticks(axis, values: Sequence[float]) -> None:
    """The ticks of ``axis`` (an x or y axis on a log scale) labelled without overlap: its decades when the values
    span one or more, else at most 5 round values (as plain numbers); minor ticks are never labelled."""
    from matplotlib.ticker import FuncFormatter
    from matplotlib.ticker import LogFormatterSciNotation
    from matplotlib.ticker import LogLocator
    from matplotlib.ticker import MaxNLocator
    from matplotlib.ticker import NullFormatter

    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) < 10:
        axis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    else:
        axis.set_major_locator(LogLocator(base=10, numticks=6))
        axis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=True))
    axis.set_minor_formatter(NullFormatter())


def draw_plots(sweep: Sweep, table: list[Row], directory: Path) -> list[Path]:
    """Draw every plot the sweep declares into ``directory``, each as PNG and SVG; return the files."""
    written = []
    for plot in sweep.plots:
        path = directory / plot.file_name
        {"lines": _lines, "regime": _regime, "split": _split}[plot.kind](plot, sweep, table, path)
        written += [path, path.with_suffix(".svg")]
    return written
