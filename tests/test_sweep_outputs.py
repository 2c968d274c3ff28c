"""What a sweep gives a researcher: points.csv beside the Parquet, the table on the terminal with speed-ups against a
baseline, the app's own field names, and plots for a paper (PNG and SVG, units, readable log axes)."""

from __future__ import annotations

import csv
import itertools
import json
import struct
from pathlib import Path

import pytest

from study_runner.batch.execute import RunResult
from study_runner.batch.runs import RunSpec
from study_runner.errors import StudyError
from study_runner.sweeps.sweep import load_sweep
from study_runner.sweeps.sweep_plots import axis_label
from study_runner.sweeps.sweep_plots import draw_plots
from study_runner.sweeps.sweep_summary import format_points
from study_runner.sweeps.sweep_summary import parse_baseline
from study_runner.sweeps.sweep_summary import with_speedups
from study_runner.sweeps.sweep_table import renamed_fields
from study_runner.sweeps.sweep_table import rows
from study_runner.sweeps.sweep_table import write_csv
from study_runner.sweeps.sweep_table import write_parquet
from tests.test_sweep import PINGPONG
from tests.test_sweep import read_table
from tests.test_sweep import run_cli
from tests.test_sweep import write


def synthetic_table(tmp_path: Path, records_of=lambda index: [{"oneway_s_max": 1e-6 * (index + 1)}]):
    """PINGPONG's 8 points, each with the records ``records_of(index)``, as table rows (no simulation)."""
    sweep = load_sweep(write(tmp_path, PINGPONG))
    spec = RunSpec("x", "p", "pingpong", 2, timeout=1.0)
    results = [RunResult(spec, [], records_of(i), False, 0.5) for i in range(len(sweep.points))]
    return sweep, results, rows(sweep, results, [f"k{i}" for i in range(len(sweep.points))])


def test_csv_has_the_rows_and_columns_of_the_parquet(tmp_path: Path) -> None:
    _, _, table = synthetic_table(tmp_path, lambda i: [{"oneway_s_max": 1e-6 * (i + 1), "note": "a, \"b\"", "ok": True,
                                                        "sizes": [1, 2], "missing": None if i else 3}])  # fmt: skip
    write_parquet(table, tmp_path / "points.parquet")
    write_csv(table, tmp_path / "points.csv")
    parquet = read_table(tmp_path / "points.parquet")
    with (tmp_path / "points.csv").open(newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == list(parquet[0])
        lines = list(reader)
    assert len(lines) == len(parquet) == 8
    for line, row in zip(lines, parquet, strict=True):
        for name, value in row.items():
            text = line[name]
            if value is None:
                assert text == ""
            elif isinstance(value, bool):
                assert text == str(value).lower()
            elif isinstance(value, int | float):
                assert float(text) == value, name
            else:
                assert text == value, name
    assert json.loads(lines[0]["sizes"]) == [1, 2] and lines[0]["note"] == 'a, "b"'


def test_a_record_field_keeps_its_name_unless_a_variable_has_it(tmp_path: Path) -> None:
    """The issue's finding: an app's ``ranks`` came out as ``out_ranks``. Only a field named like a sweep variable
    is renamed; an input named like a field gives way instead."""
    sweep, results, table = synthetic_table(tmp_path, lambda i: [{"ranks": 64, "app": "mine", "size": -1, "t": 1.0}])
    first = table[0]
    assert first["ranks"] == 64 and first["point_ranks"] == 2  # the app's field; the point's rank count
    assert first["app"] == "mine" and first["point_app"] == "pingpong"
    assert first["size"] == 1000 and first["out_size"] == -1  # "size" is a sweep variable
    assert first["t"] == 1.0 and first["family"] == "crossbar" and "out_ranks" not in first
    assert renamed_fields(sweep, results) == {"size": "out_size"}


def test_speedups_against_a_baseline(tmp_path: Path) -> None:
    """Each row's metric against the row with bw=1GBps and the other variables equal: lower is better, so the
    speed-up is the baseline's time over the row's."""
    times = {("1GBps", 1000): 4.0, ("2GBps", 1000): 2.0, ("1GBps", 100000): 9.0, ("2GBps", 100000): 3.0}
    sweep = load_sweep(write(tmp_path, PINGPONG))
    table = [{"point": i, **p.variables, "t": times[(p.variables["bw"], p.variables["size"])] * p.variables["hosts"]}
             for i, p in enumerate(sweep.points)]  # fmt: skip
    sped, columns = with_speedups(sweep, table, ["t"], parse_baseline("bw=1GBps", sweep))
    assert columns == ["t_speedup"]
    by = {(r["bw"], r["size"], r["hosts"]): r["t_speedup"] for r in sped}
    assert by[("1GBps", 1000, 2)] == 1.0 and by[("2GBps", 1000, 2)] == 2.0 and by[("2GBps", 100000, 3)] == 3.0
    # hosts and lat are zipped: the baseline hosts=2 has lat=1us, and a row of hosts=3 (lat=5us) is still compared
    sped, _ = with_speedups(sweep, table, ["t"], parse_baseline("hosts=2", sweep))
    assert [r["t_speedup"] for r in sped if r["hosts"] == 3] == [pytest.approx(2 / 3)] * 4
    with pytest.raises(StudyError, match="expected VARIABLE=VALUE"):
        parse_baseline("routing=minimal", sweep)
    with pytest.raises(StudyError, match=r"bw is never '3GBps' \(its values: 1GBps, 2GBps\)"):
        parse_baseline("bw=3GBps", sweep)


def test_a_sweep_file_names_its_baseline_checked_at_load(tmp_path: Path) -> None:
    """``output.baseline`` is the default of ``--baseline``: kept by the loader, a variable or value the sweep does not
    have is one error naming the field before anything runs."""
    with_baseline = PINGPONG.replace('metric = "oneway_s_max"', 'metric = "oneway_s_max"\nbaseline = "bw=1GBps"')
    assert load_sweep(write(tmp_path, with_baseline)).baseline == "bw=1GBps"
    assert load_sweep(write(tmp_path, PINGPONG)).baseline is None
    wrong = with_baseline.replace("bw=1GBps", "bw=3GBps")
    with pytest.raises(StudyError, match=r"sweep\.toml: output\.baseline 'bw=3GBps': bw is never '3GBps'"):
        load_sweep(write(tmp_path, wrong))


def test_the_terminal_table_is_aligned_and_cut_for_big_grids(tmp_path: Path) -> None:
    table = [{"point": i, "alg": "tree" if i % 2 else "snake", "n": 7 * i, "t": 1 / (i + 1)} for i in range(100)]
    text = format_points(table, ["point", "alg", "n", "t"], tmp_path / "points.csv")
    lines = text.splitlines()
    assert lines[0].split() == ["point", "alg", "n", "t"]
    assert len(lines) == 1 + 30 + 1 + 1 and lines[26] == "... 70 more rows ..."
    assert lines[-1] == f"100 rows; every column of every row: {tmp_path / 'points.csv'}"
    data = [line for line in lines[1:-1] if not line.startswith("...")]
    assert len({len(line) for line in [lines[0], *data]}) == 1  # the numbers' column ends at one place
    assert data[0].split() == ["0", "snake", "0", "1"] and data[-1].split() == ["99", "tree", "693", "0.01"]
    assert lines[0].index("alg") == data[0].index("snake")  # text to the left


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_plots_are_png_and_svg_sized_for_a_paper(tmp_path: Path) -> None:
    sweep, _, table = synthetic_table(tmp_path)
    written = draw_plots(sweep, table, tmp_path)
    names = sorted(path.name for path in written)
    assert names == sorted(f"{stem}.{kind}" for stem in ("lines-size-by-bw", "regime-size-hosts-by-bw")
                           for kind in ("png", "svg"))  # fmt: skip
    for path in written:
        if path.suffix == ".svg":
            assert "<svg" in path.read_text()[:2000]
    assert png_size(tmp_path / "lines-size-by-bw.png") == (2100, 900)  # two panels: a page, 300 dpi
    assert png_size(tmp_path / "regime-size-hosts-by-bw.png")[0] == 1050  # one panel: a column
    svg = (tmp_path / "lines-size-by-bw.svg").read_text()
    assert "oneway, max (s)" in svg and "oneway_s_max" not in svg  # text stays text, to edit; the unit said


@pytest.mark.parametrize(("low", "high"), [(4000, 6000), (1000, 100000), (3, 3e6)])
def test_log_axes_label_no_overlapping_ticks(low: float, high: float) -> None:
    """The issue's finding: "4x10^3 6x10^3" printed on top of each other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from study_runner.sweeps.sweep_plots import _figure
    from study_runner.sweeps.sweep_plots import _readable_log_ticks

    figure, (axis,) = _figure(1)
    axis.plot([low, high], [1, 2])
    axis.set_xscale("log")
    _readable_log_ticks(axis.xaxis, [low, high])
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    shown = [label for label in axis.get_xticklabels(which="both") if label.get_text() and label.get_visible()]
    inside = [label for label in shown if low <= label.get_position()[0] <= high]
    assert 1 <= len(inside) <= 7
    boxes = sorted((label.get_window_extent(renderer) for label in shown), key=lambda box: box.x0)
    assert all(left.x1 < right.x0 for left, right in itertools.pairwise(boxes))
    plt.close(figure)


def test_axis_labels_say_units() -> None:
    assert axis_label("time_s_avg") == "time, mean (s)"
    assert axis_label("simulated_s") == "simulated (s)"
    assert axis_label("throughput_mibs") == "throughput (MiB/s)"
    assert axis_label("bytes") == "bytes" and axis_label("gflops") == "Gflop/s"
    assert axis_label("length") == "length"


@pytest.mark.simgrid
def test_a_sweep_writes_csv_prints_its_table_and_keeps_the_apps_names(tmp_path: Path, bin_dir: Path) -> None:
    """Four one-size points of the user's own program (a copy of pingpong, which prints ``ranks`` and ``app``)."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "bench").write_bytes((bin_dir / "pingpong").read_bytes())
    (tmp_path / "mine" / "bench").chmod(0o755)
    text = PINGPONG.replace('app = "pingpong"', 'app = "mine/bench"').replace("size = [1000, 100000]", "size = [8]")
    done = run_cli(str(write(tmp_path, text)), "--workers", "1", "--baseline", "bw=1GBps", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "results" / "pp"
    parquet = read_table(out / "points.parquet")
    with (out / "points.csv").open(newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert len(lines) == len(parquet) == 4 and list(lines[0]) == list(parquet[0])
    assert [float(line["oneway_s_max"]) for line in lines] == [row["oneway_s_max"] for row in parquet]
    assert {row["ranks"] for row in parquet} == {2} and {row["app"] for row in parquet} == {"pingpong"}
    assert {row["point_app"] for row in parquet} == {"mine/bench"} and "out_ranks" not in parquet[0]
    table = done.stdout.splitlines()
    assert table[0].split() == ["point", "bw", "size", "hosts", "lat", "oneway_s_max", "oneway_s_max_speedup"]
    assert len(table) == 1 + 4 + 1 and table[-1] == f"4 rows; every column of every row: {out / 'points.csv'}"
    speedups = {line.split()[1]: float(line.split()[-1]) for line in table[1:-1]}
    assert speedups["1GBps"] == 1.0 and speedups["2GBps"] > 1.0
    assert {path.name for path in out.iterdir()} >= {"lines-size-by-bw.svg", "regime-size-hosts-by-bw.svg"}
