"""Analysis of ``sanity-alpha-beta``: SimGrid under topolab's options is the platform's alpha-beta model.

The study file declares the checks; this module gives their metrics (``METRICS``) and the figures:

* ``alpha_beta.<bytes>B`` (exact): the simulated one-way ping-pong time of S bytes equals the
  model's ``route latency + (S + envelope) / route bandwidth``, walked on the platform model.
* ``nbl.two_exchanges`` (exact): on a crossbar with a 1x NBL limiter, a rank exchanging with two
  neighbours at once takes twice as long as with one (its limiter carries 4 flows instead of 2).

Heatmaps: the ping-pong's route and the two exchanges' flows, from the model (static) and traced.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.studies import heatmaps
from study_runner.studies.context import StudyContext
from study_runner.studies.figure_fields import run_id
from study_runner.studies.study_checks import RecordChecks

FIGURES = {"pingpong": run_id(), "two_exchanges": run_id()}  # the runs the figures draw (figure_fields)


def alpha_beta_oneway(ctx: StudyContext, run: str, size: int) -> float:
    """One-way time of ``size`` bytes by the platform's alpha-beta model: the route's latency, plus the size
    and SMPI's envelope over its bandwidth, walked on the platform model between the run's two hosts."""
    platform = ctx.platform_of(run)
    src, dst = ctx.results[run].hosts[:2]
    return platform.route_latency(src, dst) + (size + SMPI_ENVELOPE_BYTES) / platform.route_bandwidth(src, dst)


def time_s(ctx: StudyContext, run: str) -> float:
    """The average time of the run's (one) timed record."""
    return float(ctx.records(run)[0]["time_s_avg"])


METRICS = {"alpha_beta_oneway": alpha_beta_oneway, "time_s": time_s}


def _tolerance(ctx: StudyContext, run: str) -> float:
    """The tolerance of the checks the study file makes of ``run``'s records."""
    (table,) = [c.table for c in ctx.study.checks if isinstance(c, RecordChecks) and c.run == run]
    return float(table["tolerance"])


def figures(ctx: StudyContext, out_dir: Path) -> None:
    """``alpha_beta.png``: simulated one-way time and the model against message size, with the error."""
    run = ctx.study.figures["pingpong"]
    records = sorted(ctx.records(run), key=lambda r: r["bytes"])
    sizes = [int(r["bytes"]) for r in records]
    simulated = [float(r["oneway_s_avg"]) for r in records]
    model = [alpha_beta_oneway(ctx, run, s) for s in sizes]
    errors = [abs(s - m) / m * 100 for s, m in zip(simulated, model, strict=True)]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 5.6), sharex=True, height_ratios=(3, 1))
    top.loglog(sizes, model, "-", color="0.5", label="alpha-beta model of the platform")
    top.loglog(sizes, simulated, "o", color="C0", label="SMPI ping-pong (one way)")
    top.set_ylabel("one-way time (s)")
    params = ctx.platform_of(run).params
    top.set_title(
        f"Crossbar, {params['link_bw'] / 1e9:g} GBps / {params['link_lat'] * 1e6:g} us cables: SMPI vs alpha-beta"
    )
    top.legend()
    top.grid(True, which="both", alpha=0.3)
    bottom.semilogx(sizes, errors, "o-", color="C1")
    bottom.axhline(_tolerance(ctx, run) * 100, color="C3", linestyle="--", label="tolerance")
    bottom.set_xlabel("message size (bytes)")
    bottom.set_ylabel("rel. error (%)")
    bottom.legend()
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "alpha_beta.png", dpi=110)
    plt.close(fig)
    _heatmaps(ctx, out_dir)


def _repeats(record: dict[str, object]) -> int:
    return int(record["iterations"]) + int(record["warmup"])  # type: ignore[call-overload]


def _heatmaps(ctx: StudyContext, out_dir: Path) -> None:
    """The ping-pong's route (static and traced: one message at a time, so the trace is exact) and the two
    exchanges (static: rank 0's limiter carries 4 flows; their flows do not start together, so a trace of them
    would be a lower bound)."""
    run = ctx.study.figures["pingpong"]
    platform, hosts = ctx.platform_of(run), ctx.results[run].hosts
    title = "Ping-pong on a 2-host crossbar"
    pingpong = [(0, 1), (1, 0)]
    loads = heatmaps.step_loads(platform, hosts, [pingpong])
    heatmaps.draw_static(platform, out_dir, "pingpong", loads, title, "one flow each way on the ping-pong's route.")
    # Every size sends its message (warmup + iterations) times each way, after a barrier: on two ranks, one empty
    # message each way (tests/test_tracing.py).
    messages = [
        (pingpong, _repeats(r) * (int(r["bytes"]) + SMPI_ENVELOPE_BYTES) + SMPI_ENVELOPE_BYTES)
        for r in ctx.records(run)
    ]
    scheduled = heatmaps.schedule_bytes(platform, hosts, messages)
    if ctx.traced(run):
        heatmaps.draw_traced(ctx, out_dir, "pingpong", run, scheduled, title, "bytes per link over the run.")

    run = ctx.study.figures["two_exchanges"]
    platform, hosts = ctx.platform_of(run), ctx.results[run].hosts
    loads = heatmaps.step_loads(platform, hosts, [[(0, 1), (1, 0), (0, 2), (2, 0)]])
    heatmaps.draw_static(
        platform,
        out_dir,
        "two_exchanges",
        loads,
        "Rank 0 exchanging with two peers at once, 1x NBL crossbar",
        "rank 0's limiter (node colour) carries 4 flows at once, its peers' limiters 2, every cable 1: two "
        "exchanges take twice as long as one (nbl.two_exchanges).",
    )
