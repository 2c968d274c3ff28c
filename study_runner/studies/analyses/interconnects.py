"""Analysis of ``interconnect-checks`` and ``interconnects``: shift permutations on the interconnects one buys today.

Both study files run ``apps/bench/shift`` (every rank r sends a block to rank (r + s) mod N, all at once, one
shift at a time after a barrier) and declare their checks; this module gives the metrics they call (``METRICS``),
the shifts their runs sample (``TEMPLATE_FUNCTIONS``), the notes and the figure.

The static model. With one flow per rank and every flow starting together, SimGrid's max-min sharing gives the
flows on the most loaded directed cable (L flows) a rate of link_bw / L, and no other cable slows them more, so a
shift takes ``L (B + envelope) / link_bw`` and each rank gets ``link_bw / L``: the figure a static analysis of the
routes predicts (``generators.analysis``), checked against the simulation for every shift run. A platform that
spreads a message over several paths gives each cable the share of the message that crosses it, L is then the sum
of the shares on the busiest cable (the fluid bound of the routes), and the same check holds. An adaptive platform's
routes depend on the network's state: its runs are compared with the static rules' on the same pattern, and its
heatmap is what SimGrid traced (docs/adaptive-routing.md).

An all-to-all in shift order is the N - 1 shifts one after the other; ``interconnects`` samples them (stratified:
one shift from each of K equal slices of 1 .. N-1) and estimates a server's all-to-all bandwidth as the block over
the mean time of the sampled shifts, with the range the samples span. Its last shift, N // 2, is the bisection
pattern: every flow crosses the middle of the host order.
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from generators.analysis import link_loads
from generators.model import CABLE
from generators.model import Platform
from generators.schedules import shift_steps
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.studies import heatmaps
from study_runner.studies.context import StudyContext
from study_runner.studies.figure_fields import FigureField
from study_runner.studies.grid_fields import GridRead

FIGURES: dict[str, FigureField] = {}  # the figures are drawn from the runs alone (figure_fields)
GRIDS = {  # what it reads of each file's grids (grid_fields): interconnects' what-if, interconnect-checks' pattern
    "shifts": GridRead(optional=True, scale=("750",), net=(), order=("host", "random")),
    "adversarial": GridRead(optional=True, routing=()),
}

GB = 1e9


def sampled_shifts(ranks: int, slices: int) -> str:
    """The shifts a run samples, as ``--shifts`` takes them: the middle of each of ``slices`` equal slices of
    1 .. N-1, then the bisection shift N // 2.

    >>> sampled_shifts(6000, 4)
    '750,2250,3750,5250,3000'
    """
    middles = [1 + (2 * j + 1) * (ranks - 1) // (2 * slices) for j in range(slices)]
    return ",".join(map(str, [*middles, ranks // 2]))


def _records(ctx: StudyContext, run: str) -> list[dict[str, Any]]:
    """The run's shift records, in the order of its ``--shifts`` (the app prints them so)."""
    return ctx.records(run)


def link_rate(ctx: StudyContext, run: str) -> float:
    """The bandwidth of a host's cable, bytes/s (every cable of these platforms has it)."""
    platform = ctx.platform_of(run)
    return float(platform.params["link_bw"])


def rate_fraction(ctx: StudyContext, run: str, index: int) -> float:
    """The rate each rank got in the run's ``index``-th shift, as a fraction of the link rate."""
    return float(_records(ctx, run)[index]["rate_bps"]) / link_rate(ctx, run)


def worst_rate_fraction(ctx: StudyContext, run: str) -> float:
    """The lowest rate fraction over every shift of the run."""
    return min(float(r["rate_bps"]) for r in _records(ctx, run)) / link_rate(ctx, run)


def shift_loads(ctx: StudyContext, run: str, index: int) -> Counter[str]:
    """Flows on each link in the run's ``index``-th shift, from the model's routes (the sum of their shares where
    messages are spread); derived once per run and shift, as the checks and the heatmaps both read them."""
    record = _records(ctx, run)[index]
    shift, relabel = int(record["shift"]), record["relabel"]

    def loads() -> Counter[str]:
        platform, hosts = ctx.platform_of(run), ctx.results[run].hosts
        (step,) = shift_steps(len(hosts), [shift], relabel)
        return link_loads(platform, [(hosts[a], hosts[b]) for a, b in step if hosts[a] != hosts[b]])

    return ctx.once(("shift_loads", run, shift, relabel), loads)


def bottleneck_flows(ctx: StudyContext, run: str, index: int) -> float:
    """Flows on the most loaded directed cable in the run's ``index``-th shift; the sum of their shares where
    messages are spread."""
    return max(ctx.platform_of(run).cables(shift_loads(ctx, run, index)).values(), default=1)


def bottleneck_time(ctx: StudyContext, run: str, index: int) -> float:
    """The static model's time of the run's ``index``-th shift: L (B + envelope) / link_bw (module docstring)."""
    record = _records(ctx, run)[index]
    return bottleneck_flows(ctx, run, index) * (int(record["bytes"]) + SMPI_ENVELOPE_BYTES) / link_rate(ctx, run)


def model_ratio(ctx: StudyContext, run: str) -> float:
    """The largest relative gap, over the run's shifts, between the simulated time (the slowest rank's) and the
    static model's, as 1 + |gap| (1 when every shift takes exactly its model time)."""
    gaps = [abs(float(r["time_s_max"]) / bottleneck_time(ctx, run, i) - 1) for i, r in enumerate(_records(ctx, run))]
    return 1 + max(gaps)


def alltoall_rate(ctx: StudyContext, run: str) -> float:
    """A server's all-to-all bandwidth, bytes/s, estimated from the sampled shifts: the block over their mean time
    (every shift but the last, the bisection one)."""
    records = _records(ctx, run)[:-1]
    return int(records[0]["bytes"]) / statistics.fmean(float(r["time_s_max"]) for r in records)


def mean_rank_rate(ctx: StudyContext, run: str) -> float:
    """A server's mean rate over the sampled shifts, bytes/s: the block over the mean of every rank's own time (what
    a rank gets when it need not wait for the slowest flow of a phase)."""
    records = _records(ctx, run)[:-1]
    return int(records[0]["bytes"]) / statistics.fmean(float(r["time_s_avg"]) for r in records)


def effective_bisection(ctx: StudyContext, *runs: str) -> float:
    """The effective bisection bandwidth of random bisection patterns, one a run (shift N // 2 of randomly relabelled
    ranks, ``--rank-rates``), as a fraction of the link rate: the mean over the runs of the mean over the ranks of
    each rank's own rate (Hoefler's definition: the mean bandwidth of the pairs, over bisection patterns)."""
    fractions = [float(_records(ctx, run)[0]["rank_rate_bps_avg"]) / link_rate(ctx, run) for run in runs]
    return statistics.fmean(fractions)


def bisection_rate(ctx: StudyContext, run: str) -> float:
    """A server's rate in the bisection shift N // 2 (the run's last shift), bytes/s."""
    return float(_records(ctx, run)[-1]["rate_bps"])


METRICS = {
    "rate_fraction": rate_fraction,
    "worst_rate_fraction": worst_rate_fraction,
    "bottleneck_time": bottleneck_time,
    "model_ratio": model_ratio,
    "alltoall_rate": alltoall_rate,
    "mean_rank_rate": mean_rank_rate,
    "bisection_rate": bisection_rate,
    "effective_bisection": effective_bisection,
}
TEMPLATE_FUNCTIONS = {"sampled_shifts": sampled_shifts}


def costs(platform: Platform) -> dict[str, float]:
    """The cost proxies of these papers, per server: switches, switch-to-switch cables, and the dragonfly's global
    (inter-group) cables."""
    servers = len(platform.hosts)
    routers = set(platform.routers)
    between = [link.ends for link in platform.links.values() if link.kind == CABLE and set(link.ends) <= routers]
    global_ = [(a, b) for a, b in between if platform.family == "dragonfly" and a.split("-")[1] != b.split("-")[1]]
    return {
        "switches": len(routers) / servers,
        "cables": len(between) / 2 / servers,
        "global": len(global_) / 2 / servers if platform.family == "dragonfly" else float("nan"),
    }


def _scales(ctx: StudyContext) -> list[str]:
    """The what-if's machine sizes (none in interconnect-checks)."""
    return ctx.study.values("shifts", "scale") if "shifts" in {run.grid for run in ctx.study.runs} else []


def _nets(ctx: StudyContext, scale: str, order: str = "host") -> list[tuple[str, str]]:
    """(network, run of the shifts in ``order``) of the what-if grid at ``scale``, in the file's order, for the runs
    that ran (none in interconnect-checks)."""
    if scale not in _scales(ctx):
        return []
    nets = ctx.study.values("shifts", "net")
    runs = [(net, ctx.study.run_at("shifts", net=net, order=order, scale=scale)) for net in nets]
    return [(net, run) for net, run in runs if run in ctx.results]


def _span(ctx: StudyContext, run: str) -> str:
    """The estimated all-to-all bandwidth of a run, with the range its sampled shifts span."""
    rates = [float(r["rate_bps"]) / GB for r in _records(ctx, run)[:-1]]
    share = alltoall_rate(ctx, run) / link_rate(ctx, run)
    return f"{alltoall_rate(ctx, run) / GB:.3f} GB/s ({share:.1%} of a link; shifts {min(rates):.3f}-{max(rates):.3f})"


def cable_loads_by_kind(ctx: StudyContext, run: str) -> dict[str, tuple[float, float]]:
    """The busiest and the mean load (flows) of a dragonfly's global and local cables in the run's first shift."""
    platform, hosts, record = ctx.platform_of(run), ctx.results[run].hosts, _records(ctx, run)[0]
    (step,) = shift_steps(len(hosts), [int(record["shift"])], record["relabel"])
    loads = platform.cables(link_loads(platform, [(hosts[a], hosts[b]) for a, b in step]))
    kinds: dict[str, list[float]] = {"global": [], "local": []}
    for name, link in platform.links.items():
        a, b = link.ends
        if link.kind == CABLE and a.startswith("router-") and b.startswith("router-"):
            kinds["global" if a.split("-")[1] != b.split("-")[1] else "local"].append(loads.get(name, 0))
    return {kind: (max(values), statistics.fmean(values)) for kind, values in kinds.items() if values}


def _adversarial_notes(ctx: StudyContext) -> list[str]:
    """interconnect-checks: the dragonfly's cable loads and mean server rate under the adversarial pattern."""
    if "adversarial" not in {run.grid for run in ctx.study.runs}:
        return []
    out = []
    for routing in ctx.study.values("adversarial", "routing"):
        run = ctx.study.run_at("adversarial", routing=routing)
        loads = cable_loads_by_kind(ctx, run)
        rate = float(_records(ctx, run)[0]["bytes"]) / float(_records(ctx, run)[0]["time_s_avg"])
        out.append(
            f"adversarial pattern, {routing} routing: busiest global cable {loads['global'][0]:.3g} flows (mean "
            f"{loads['global'][1]:.2f} over all global cables), busiest local cable {loads['local'][0]:.3g} (mean "
            f"{loads['local'][1]:.2f}); the mean server gets {rate / link_rate(ctx, run):.3f} of a link, the "
            f"slowest {rate_fraction(ctx, run, 0):.3f}"
        )
    return out + _routing_notes(ctx)


def _routing_notes(ctx: StudyContext) -> list[str]:
    """interconnect-checks: every routing rule of its comparison grids, the slowest and the mean server's rate."""
    out = []
    for grid in ("kim", "hyperx", "fattree-random"):
        for run in [run.id for run in ctx.study.runs if run.grid == grid and run.id in ctx.results]:
            records = _records(ctx, run)
            slowest = min(float(r["rate_bps"]) for r in records) / link_rate(ctx, run)
            mean = statistics.fmean(int(r["bytes"]) / float(r["time_s_avg"]) for r in records) / link_rate(ctx, run)
            kind = "adaptive" if ctx.platform_of(run).adaptive else "static"
            out.append(f"{run} ({kind}): the slowest server gets {slowest:.3f} of a link, the mean server {mean:.3f}")
    return out


def notes(ctx: StudyContext) -> list[str]:
    """One line per network: servers, costs, the estimated all-to-all bandwidth in host and in random order (and
    the ranges of their sampled shifts), the bisection shift; interconnect-checks: the adversarial pattern."""
    out = _adversarial_notes(ctx)
    for scale in _scales(ctx):
        out += _scale_notes(ctx, scale)
    return out


def _scale_notes(ctx: StudyContext, scale: str) -> list[str]:
    """The notes of the networks of one size."""
    random = dict(_nets(ctx, scale, "random"))
    out = []
    for net, run in _nets(ctx, scale):
        platform, c = ctx.platform_of(run), costs(ctx.platform_of(run))
        global_ = "" if c["global"] != c["global"] else f", {c['global']:.3f} global cables"
        uniform = ""
        if net in random:
            mean = mean_rank_rate(ctx, random[net]) / GB
            uniform = f"; random order {_span(ctx, random[net])}, {mean:.3f} GB/s for the mean rank"
        out.append(
            f"{net}: {len(platform.hosts)} servers, per server {c['switches']:.3f} switches, {c['cables']:.3f} "
            f"switch-to-switch cables{global_}; all-to-all per server in host order {_span(ctx, run)}{uniform}; "
            f"bisection shift {bisection_rate(ctx, run) / GB:.3f} GB/s"
        )
    return out


def _bars(ctx: StudyContext, axes: Any, nets: list[tuple[str, str]], offset: float, label: str) -> None:
    """One bar per network: the estimated all-to-all bandwidth, its sampled shifts' range as error bars."""
    a2a = [alltoall_rate(ctx, run) / GB for _, run in nets]
    spans = [[float(r["rate_bps"]) / GB for r in _records(ctx, run)[:-1]] for _, run in nets]
    low = [a - min(rates) for a, rates in zip(a2a, spans, strict=True)]
    high = [max(rates) - a for a, rates in zip(a2a, spans, strict=True)]
    axes.bar([i + offset for i in range(len(nets))], a2a, 0.2, yerr=[low, high], capsize=3, label=label)


def _static_heatmap(ctx: StudyContext, out_dir: Path, run: str, index: int, what: str, title: str) -> None:
    """The flows per cable of the run's ``index``-th shift, from the model's routes."""
    platform, hosts, record = ctx.platform_of(run), ctx.results[run].hosts, _records(ctx, run)[index]
    loads, flows = shift_loads(ctx, run, index), bottleneck_flows(ctx, run, index)
    caption = (
        f"every rank r sends to rank (r + {record['shift']}) mod {len(hosts)} at once; the busiest cable carries "
        f"{flows} flows, so each of them gets 1/{flows} of a link (the simulated shift takes that long)."
    )
    heatmaps.draw_static(platform, out_dir, what, loads, title, caption)


def _adaptive_heatmap(ctx: StudyContext, out_dir: Path, run: str, what: str) -> None:
    """The bytes per cable SimGrid traced in the adaptive run's first shift (its routes are the network's choice:
    no static schedule to draw), checked on the servers' own cables, which every route crosses."""
    platform, hosts, record = ctx.platform_of(run), ctx.results[run].hosts, _records(ctx, run)[0]
    (step,) = shift_steps(len(hosts), [int(record["shift"])], record["relabel"])
    block = int(record["bytes"]) + SMPI_ENVELOPE_BYTES
    ends: dict[str, float] = {}
    for a, b in step:
        route = platform.route(hosts[a], hosts[b])
        for cable in (route[0], route[-1]):  # the source's cable up and the destination's down (no limiters here)
            ends[cable] = ends.get(cable, 0.0) + block
    title = f"{platform.name}: where the adaptive routes put the shift by {record['shift']}"
    caption = (
        f"every rank r sends to rank (r + {record['shift']}) mod {len(hosts)} at once, each message routed by the "
        "network's state when it starts; the cables between switches carry what the adaptive choices put there."
    )
    heatmaps.draw_traced(ctx, out_dir, what, run, ends, title, caption)


def _heatmaps(ctx: StudyContext, out_dir: Path) -> None:
    """interconnects: the bisection shift on every network; interconnect-checks: the adversarial pattern on the
    dragonfly, minimal and Valiant, and the shift by 64 on the fat tree."""
    for net, run in _nets(ctx, "750"):
        # an adaptive run's routes are not the model's: interconnect-checks draws a traced heatmap of one instead
        if not ctx.platform_of(run).adaptive:
            _static_heatmap(ctx, out_dir, run, -1, f"bisection_{net}", f"{net}: the bisection shift N/2")
    if "adversarial" in {run.grid for run in ctx.study.runs}:
        for routing in ctx.study.values("adversarial", "routing"):
            run = ctx.study.run_at("adversarial", routing=routing)
            title = f"dragonfly, {routing} routing: every server of group i to group i + 1"
            _static_heatmap(ctx, out_dir, run, 0, f"adversarial_{routing}", title)
    if "kim.adversarial.valiant-packet" in ctx.results:
        title = "dragonfly, consecutive ports, per-packet Valiant: every server of group i to group i + 1"
        _static_heatmap(ctx, out_dir, "kim.adversarial.valiant-packet", 0, "kim_adversarial_valiant-packet", title)
    for run in ctx.study.runs:  # the adaptive runs the study file traces (trace_links)
        if ctx.traced(run.id) and ctx.platform_of(run.id).adaptive:
            _adaptive_heatmap(ctx, out_dir, run.id, run.id.replace(".", "_"))
    if "fattree.shifts" in ctx.results:
        shifts = [int(r["shift"]) for r in _records(ctx, "fattree.shifts")]
        title = "full three-level fat tree, D-mod-K: the shift by 64"
        _static_heatmap(ctx, out_dir, "fattree.shifts", shifts.index(64), "fattree_shift_64", title)


def figures(ctx: StudyContext, out_dir: Path) -> None:
    """``interconnects_<scale>.png``: per-server all-to-all (host and random order) and bisection bandwidth beside
    the cost proxies, per network and size; the static heatmaps (:func:`_heatmaps`)."""
    _heatmaps(ctx, out_dir)
    for scale in _scales(ctx):
        _whatif_figure(ctx, out_dir, scale)


def _beside_static(ctx: StudyContext, nets: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The networks in the file's order, each adaptive one right after the first static network whose name, with a
    dash, begins its own (``dragonfly-ugal-g`` after ``dragonfly``)."""
    static = [(net, run) for net, run in nets if not ctx.platform_of(run).adaptive]
    adaptive = [(net, run) for net, run in nets if ctx.platform_of(run).adaptive]
    out = []
    for net, run in static:
        out.append((net, run))
        out += [pair for pair in adaptive if pair[0].startswith(net + "-") and pair not in out]
    return out + [pair for pair in adaptive if pair not in out]


def _whatif_figure(ctx: StudyContext, out_dir: Path, scale: str) -> None:
    """``interconnects_<scale>.png`` of the networks of one size that ran (adaptive rows on grey)."""
    nets = _beside_static(ctx, _nets(ctx, scale))
    if not nets:
        return
    names, random = [net for net, _ in nets], dict(_nets(ctx, scale, "random"))
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 4.8), gridspec_kw={"width_ratios": [2, 1]})
    _bars(ctx, left, nets, -0.3, "all-to-all, shifts in host order (slowest rank)")
    if set(random) >= set(names):
        _bars(ctx, left, [(net, random[net]) for net in names], -0.1, "all-to-all, random order (slowest rank)")
        left.bar([i + 0.1 for i in range(len(nets))], [mean_rank_rate(ctx, random[net]) / GB for net in names], 0.2,
                 label="all-to-all, random order (mean rank)")  # fmt: skip
    left.bar([i + 0.3 for i in range(len(nets))], [bisection_rate(ctx, run) / GB for _, run in nets], 0.2,
             label="bisection shift N/2")  # fmt: skip
    left.axhline(link_rate(ctx, nets[0][1]) / GB, color="grey", lw=0.8, ls="--", label="link rate")
    left.set_xticks(range(len(nets)), names, rotation=30, ha="right")
    left.set_ylim(0, 1.5 * link_rate(ctx, nets[0][1]) / GB)  # room for the legend above the bars
    left.set_ylabel("GB/s per server")
    for i, (_, run) in enumerate(nets):  # grey behind the adaptive rows' bars
        if ctx.platform_of(run).adaptive:
            left.axvspan(i - 0.45, i + 0.45, color="0.92", zorder=0)
    left.set_title("Per-server bandwidth, static and adaptive routing (grey: adaptive; SimGrid)")
    left.legend(fontsize=7, loc="upper center", ncol=2)
    machines = [(net, run) for net, run in nets if not ctx.platform_of(run).adaptive]  # adaptive: the same machines
    c = [costs(ctx.platform_of(run)) for _, run in machines]
    right.bar([i - 0.2 for i in range(len(c))], [10 * v["switches"] for v in c], 0.4, label="switches / 10 servers")
    right.bar([i + 0.2 for i in range(len(c))], [v["cables"] for v in c], 0.4, label="switch cables per server")
    right.set_xticks(range(len(c)), [net for net, _ in machines], rotation=30, ha="right")
    right.set_title("Cost proxies (each machine once)")
    right.legend(fontsize=8)
    radix = {"750": 18, "6000": 36}.get(scale, "?")
    fig.suptitle(f"About {scale} servers of {radix}-port switches, 4 GB/s links")
    fig.tight_layout()
    fig.savefig(out_dir / f"interconnects_{scale}.png", dpi=110)
    plt.close(fig)
