"""Link-load heatmaps (study_runner.studies.heatmaps): static loads of a schedule, traced twins run by the batch and
cached, the exact / lower-bound label, captions in the report, and the family pictures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from generators import build_platform
from generators.drawing import REPRESENTATIVE
from generators.schedules import combine_steps
from paper_models import vector_combining as vc
from study_runner.batch.execute import PreparedRun
from study_runner.batch.execute import execute_runs
from study_runner.errors import StudyError
from study_runner.simulation.cache import Cache
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.tracing import LINKS_TRACE_NAME
from study_runner.simulation.tracing import tracing_options
from study_runner.studies import heatmaps
from study_runner.studies.context import StudyContext
from study_runner.studies.pipeline import prepare_study
from study_runner.studies.report import FAMILIES_DIR
from study_runner.studies.report import draw_families
from study_runner.studies.report import write_report
from study_runner.studies.study import load_study
from tests.test_study import GOOD_STUDY

NBL_STAR = build_platform("crossbar", {"hosts": 3, "nbl": "nominal"})
HOSTS = NBL_STAR.host_names


class TestStaticLoads:
    def test_step_loads_keep_the_busiest_step_of_each_link(self) -> None:
        steps = [[(0, 1), (0, 2)], [(1, 0)], [(0, 1)]]
        loads = heatmaps.step_loads(NBL_STAR, HOSTS, steps)
        assert loads["host-0_to_xbar"] == 2 and loads["host-0_nbl"] == 2  # step 1: two flows out of host-0
        assert loads["xbar_to_host-1"] == 1 and loads["host-1_to_xbar"] == 1
        assert "host-2_to_xbar" not in loads

    def test_schedule_bytes_add_every_message(self) -> None:
        sent = heatmaps.schedule_bytes(NBL_STAR, HOSTS, [([(0, 1), (0, 2)], 100.0), ([(1, 0)], 7.0)])
        assert sent["host-0_to_xbar"] == 200 and sent["xbar_to_host-1"] == 100 and sent["host-1_to_xbar"] == 7
        assert sent["host-0_nbl"] == 207  # a limiter carries its host's messages in and out

    def test_agreement_labels_exact_and_lower_bound(self) -> None:
        scheduled = {"a": 100.0, "b": 50.0, "idle": 0.0}
        exact = heatmaps.compare({"a": 100.00001, "b": 50.0, "other": 3.0}, scheduled)
        assert exact.exact and exact.links == 2 and exact.verdict == "exact (uncontended flows)"
        assert exact.describe().startswith("Exact: each of the 2 links")
        low = heatmaps.compare({"a": 100.0, "b": 5.0}, scheduled)
        assert not low.exact and low.lowest == pytest.approx(0.1) and low.recorded == pytest.approx(0.7)
        assert low.verdict == "LOWER BOUND (70% of the bytes: contended flows)"
        assert "holds 70.0% of the bytes" in low.describe() and "10.0% to 100.0% per link" in low.describe()
        assert not heatmaps.compare({"a": 1.0}, {}).exact

    def test_draw_static_writes_the_png_and_its_caption(self, tmp_path: Path) -> None:
        loads = heatmaps.step_loads(NBL_STAR, HOSTS, [[(0, 1), (1, 0), (0, 2), (2, 0)]])
        path = heatmaps.draw_static(NBL_STAR, tmp_path, "star", loads, "A star", "four flows.")
        assert path == tmp_path / "heatmap_static_star.png" and path.read_bytes()[:4] == b"\x89PNG"
        heatmaps.draw_static(NBL_STAR, tmp_path, "other", loads, "Another", "again.")
        assert heatmaps.captions(tmp_path) == {
            "heatmap_static_star.png": "Static heatmap (model routes, no simulation): four flows.",
            "heatmap_static_other.png": "Static heatmap (model routes, no simulation): again.",
        }


@pytest.mark.parametrize("algorithm", vc.PIPELINED)
@pytest.mark.parametrize(("width", "height", "blocks"), [(4, 4, 29), (4, 4, 3), (8, 8, 10), (3, 5, 4), (2, 2, 3)])
def test_combine_schedule_is_the_appendix_timeline(algorithm: str, width: int, height: int, blocks: int) -> None:
    """generators.schedules.combine_steps (apps/combine's schedule) has the Appendix's step table: the busiest node of
    each step uses the table's L links, row for row; every cable carries at most one flow per step."""
    steps = combine_steps(algorithm, width, height, blocks)
    busiest: Counter[int] = Counter()
    for step in steps:
        links = Counter(node for src, dst, _ in step for node in (src, dst))
        busiest[max(links.values())] += 1
    table = (vc.snake_step_table if algorithm == "snake" else vc.fence_step_table)(10 * blocks, 10, width, height)
    expected: Counter[int] = Counter()
    for row in table:
        expected[row.links] += row.steps
    assert busiest == +expected and sum(expected.values()) == len(steps)
    # every block goes up the tree once and comes back once: 2 (P - 1) messages per block
    assert sum(len(step) for step in steps) == 2 * (width * height - 1) * blocks
    mesh = build_platform("mesh", {"width": width, "height": height, "nbl": "nominal"})
    loads = heatmaps.step_loads(mesh, mesh.host_names, [[(a, b) for a, b, _ in step] for step in steps])
    assert max(mesh.cables(loads).values()) == 1
    assert max(load for name, load in loads.items() if mesh.link_kind(name) == "limiter") == max(+expected)


# The test study's ping-pong alone, two sizes, one warm-up and two timed round trips each.
STUDY = (
    GOOD_STUDY[: GOOD_STUDY.index("[platforms.star]")].replace(
        '"1K", "-i", "1", "-w", "0"', '"1000,100000", "-i", "2", "-w", "1"'
    )
    + '[figures]  # what the analysis reads (its FIGURES)\npingpong = "pingpong"\ntwo_exchanges = "pingpong"\n'
)
PINGPONG_BYTES = sum(3 * (size + SMPI_ENVELOPE_BYTES) + SMPI_ENVELOPE_BYTES for size in (1000, 100000))


@pytest.fixture
def tiny(tmp_path: Path, bin_dir: Path) -> tuple[StudyContext, list[PreparedRun], Cache]:
    """The one-run study (its ping-pong declared trace_links = true) prepared and run in the batch on a fresh
    cache: its context, its prepared runs and the cache."""
    (tmp_path / "tiny.toml").write_text(STUDY)
    study = load_study(tmp_path / "tiny.toml")
    work = tmp_path / "work"
    work.mkdir()
    platforms, runs = prepare_study(study, False, bin_dir, work)
    cache = Cache(tmp_path / "cache")
    results = execute_runs(runs, cache, workers=1)
    return StudyContext(study, False, platforms, results), runs, cache


@pytest.mark.simgrid
class TestTracedLinkBytes:
    def test_the_traced_twin_runs_in_the_batch_and_is_cached(
        self, tiny: tuple[StudyContext, list[PreparedRun], Cache]
    ) -> None:
        ctx, runs, cache = tiny
        run, twin = runs
        assert (run.spec.id, twin.spec.id) == ("pingpong", "pingpong.links") and twin.label == "mini/pingpong (traced)"
        # the twin is the run's exact command with the tracing flags, its trace relative to its work directory
        added = [word for word in twin.command if word not in run.command]
        assert added == list(tracing_options()) and [w for w in twin.command if w not in added] == list(run.command)
        assert twin.key != run.key
        assert tracing_options()[-1] == f"--cfg=tracing/filename:{LINKS_TRACE_NAME}"
        platform = ctx.platform_of("pingpong")
        route = platform.route("host-0", "host-1") + platform.route("host-1", "host-0")
        assert ctx.traced("pingpong") and ctx.unread_traces() == ["pingpong"]
        traced = ctx.traced_link_bytes("pingpong")
        assert ctx.unread_traces() == []
        assert traced == pytest.approx({name: PINGPONG_BYTES for name in route}, rel=1e-12)
        assert cache.get(twin.key) == [{"link_bytes": traced, "records": ctx.records("pingpong")}]
        # a second batch (a second `scripts/repro`) serves both from the cache
        again = execute_runs(runs, Cache(cache.directory), workers=1)
        assert all(result.cached for result in again.values())

    def test_the_twin_must_print_what_the_run_printed(
        self, tiny: tuple[StudyContext, list[PreparedRun], Cache]
    ) -> None:
        ctx, _, _ = tiny
        ctx.results["pingpong"].records[0]["oneway_s_avg"] = 1.0
        with pytest.raises(StudyError, match=r"mini: traced run pingpong printed other results than the run"):
            ctx.traced_link_bytes("pingpong")

    def test_untraced_requests(self, tiny: tuple[StudyContext, list[PreparedRun], Cache]) -> None:
        ctx, _, _ = tiny
        with pytest.raises(StudyError, match=r"link bytes of run 'nope', which did not run"):
            ctx.traced_link_bytes("nope")
        untraced = {run_id: result for run_id, result in ctx.results.items() if run_id != "pingpong.links"}
        bare = StudyContext(ctx.study, ctx.quick, ctx.platforms, untraced)
        assert not bare.traced("pingpong") and bare.unread_traces() == []
        with pytest.raises(StudyError, match=r"which the study file does not declare trace_links = true"):
            bare.traced_link_bytes("pingpong")

    def test_draw_traced_says_exact_or_lower_bound(
        self, tiny: tuple[StudyContext, list[PreparedRun], Cache], tmp_path: Path
    ) -> None:
        ctx, _, _ = tiny
        platform = ctx.platform_of("pingpong")
        flows = [(0, 1), (1, 0)]
        messages = [(flows, 3 * (size + SMPI_ENVELOPE_BYTES)) for size in (1000, 100000)]
        scheduled = heatmaps.schedule_bytes(platform, ["host-0", "host-1"], messages)
        out = tmp_path / "figures"
        heatmaps.draw_traced(ctx, out, "exact", "pingpong", scheduled, "Ping-pong", "bytes.")
        doubled = {name: 2 * amount for name, amount in scheduled.items()}
        heatmaps.draw_traced(ctx, out, "half", "pingpong", doubled, "Ping-pong", "bytes.")
        captions = heatmaps.captions(out)
        assert captions["heatmap_traced_exact.png"].startswith(
            "Traced heatmap (SimGrid link tracing of run `pingpong`): bytes. Exact: each of the 4 links"
        )
        assert (
            "A lower bound" in captions["heatmap_traced_half.png"]
            and "holds 50.0%" in captions["heatmap_traced_half.png"]
        )
        assert (out / "heatmap_traced_exact.png").is_file() and (out / "heatmap_traced_half.png").is_file()
        halved = {name: amount / 2 for name, amount in scheduled.items()}
        with pytest.raises(StudyError, match=r"run pingpong carried 2 times the bytes its schedule sends"):
            heatmaps.draw_traced(ctx, out, "wrong", "pingpong", halved, "Ping-pong", "bytes.")
        assert not (out / "heatmap_traced_wrong.png").exists()

    def test_draw_traced_crops_to_the_runs_hosts(
        self, tiny: tuple[StudyContext, list[PreparedRun], Cache], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A traced heatmap shows the run's hosts and the nodes their traffic crossed, not the whole machine (a
        24-rank run on a 768-node Tofu: generators.drawing.crop, tested in tests/test_counters.py)."""
        ctx, _, _ = tiny
        drawn: dict[str, object] = {}
        monkeypatch.setattr(heatmaps, "draw_platform", lambda platform, path, **options: drawn.update(options))
        scheduled = ctx.traced_link_bytes("pingpong")
        heatmaps.draw_traced(ctx, tmp_path, "cropped", "pingpong", scheduled, "Ping-pong", "bytes.")
        assert drawn["crop_to"] == ctx.results["pingpong"].hosts == ["host-0", "host-1"]


def test_report_embeds_captions_and_family_pictures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import generators.drawing

    drawn: list[Path] = []

    def fake_draw(directory: Path, families: Any = None) -> list[Path]:
        paths = [Path(directory) / f"{name}.png" for name in REPRESENTATIVE]
        for path in paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"png")
        drawn.extend(paths)
        return paths

    monkeypatch.setattr(generators.drawing, "draw_all_families", fake_draw)
    assert draw_families(tmp_path) == [tmp_path / FAMILIES_DIR / f"{name}.png" for name in REPRESENTATIVE]
    assert len(drawn) == len(REPRESENTATIVE)
    draw_families(tmp_path)  # up to date: not drawn again
    assert len(drawn) == len(REPRESENTATIVE)
    (tmp_path / FAMILIES_DIR / "mesh.png").unlink()
    draw_families(tmp_path)  # a picture is missing: drawn again
    assert len(drawn) == 2 * len(REPRESENTATIVE)

    study = tmp_path / "demo"
    study.mkdir()
    (study / "summary.json").write_text(json.dumps({"study": "demo", "title": "Demo", "checks": []}))
    for name in ("fig.png", "heatmap_traced_x.png", "heatmap_static_x.png", "heatmap_static_a.png"):
        (study / name).write_bytes(b"")
    (study / "captions.json").write_text(json.dumps({"heatmap_static_x.png": "Static heatmap: x."}))
    text = write_report(tmp_path).read_text()
    figures = [line for line in text.splitlines() if line.startswith("![")]
    assert figures[:4] == [
        "![fig](demo/fig.png)",
        "![heatmap_static_a](demo/heatmap_static_a.png)",
        "![heatmap_static_x](demo/heatmap_static_x.png)",
        "![heatmap_traced_x](demo/heatmap_traced_x.png)",
    ]
    assert "![heatmap_static_x](demo/heatmap_static_x.png)\n\n*Static heatmap: x.*\n" in text
    platforms = text[text.index("## Platforms") :]
    for name in REPRESENTATIVE:
        assert f"![{name}]({FAMILIES_DIR}/{name}.png)" in platforms
    assert "**torus**: N-dimensional torus" in platforms and "drawn with dims = 4x4x4x2x2" in platforms
