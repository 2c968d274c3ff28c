"""Record once, replay many (``study_runner.simulation.replay``): a sweep with ``replay = true`` records the app's
time-independent trace once and replays it on every point's platform; the replayed simulated time is the online
run's.

Equivalence, measured on three platforms per app (tori of other shapes, wraps, link rates and latencies): equal to
the last printed decimal (15) for communication and collectives, SMPI's message overheads included; within the
6-significant-digit rounding of the trace's compute amounts where an app models computation (``tl_model_compute``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

import pytest

from study_runner.batch.engine import Engine
from study_runner.errors import StudyError
from study_runner.simulation.cache import file_digest
from study_runner.simulation.compute import SIMULATED_TIME_OPTIONS
from study_runner.simulation.replay import TRACE_DIGESTS
from study_runner.simulation.replay import TraceStore
from study_runner.simulation.replay import record_options
from study_runner.simulation.replay import replayed_records
from study_runner.sweeps.sweep import load_sweep
from study_runner.tools.bench_replay import compare
from tests.conftest import run_module

TORI = {16: ("16", "4x4", "2x2x2x2"), 64: ("64", "8x8", "4x4x4")}
"""Three torus shapes per rank count: the platforms every replay is checked on."""

SWEEP = """
name = "{name}"
[[zip]]
dims = {dims}
wrap = ["yes", "no", "yes"]
bw = ["1GBps", "2GBps", "4GBps"]
lat = ["1us", "100ns", "0s"]
speed = {speeds}
[platform]
family = "torus"
dims = "{{dims}}"
wrap = "{{wrap}}"
link_bw = "{{bw}}"
link_lat = "{{lat}}"
host_speed = "{{speed}}"
[run]
app = "{app}"
ranks = {ranks}
args = {args}
options = {options}
replay = true
[output]
metric = "simulated_s"
"""

OVERHEADS = ["--cfg=smpi/os:2.7e-05", "--cfg=smpi/ois:2.7e-05", "--cfg=smpi/or:2.7e-05"]


def sweep_text(app: str, ranks: int, args: list[str], options: Sequence[str] = (), speeds: Sequence[str] = ()) -> str:
    """A replayed sweep of ``app`` on the three tori of ``ranks`` nodes (host speeds ``speeds``, default 1 Gf)."""
    return SWEEP.format(
        name=f"replay-{app}",
        dims=json.dumps(list(TORI[ranks])),
        speeds=json.dumps(list(speeds or ("1Gf",) * 3)),
        app=app,
        ranks=ranks,
        args=json.dumps(args),
        options=json.dumps(list(options)),
    )


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


class TestSweepFiles:
    TEXT = sweep_text("alltoall", 16, ["-s", "1K"])

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            (lambda t: t.replace("replay = true", 'replay = "yes"'), "run.replay: 'yes' is not of type 'boolean'"),
            (lambda t: t.replace("replay = true", 'replay = "{bw}"'), r"point 0 \(.*\): run.replay: '1GBps' is not of"),
            (lambda t: t.replace("replay = true", 'replay = true\ncompute = "benchmark"'), 'needs compute = "off"'),
            (lambda t: t.replace('metric = "simulated_s"', 'metric = "time_s_max"'),
             "reports SMPI's simulated time only .*output.metric must be 'simulated_s', got 'time_s_max'"),
        ],
    )  # fmt: skip
    def test_bad_replay_is_one_error(self, tmp_path: Path, edit, message: str) -> None:
        with pytest.raises(StudyError, match=message):
            load_sweep(write(tmp_path, edit(self.TEXT)))

    def test_replay_may_be_a_template(self, tmp_path: Path) -> None:
        sweep = load_sweep(write(tmp_path, self.TEXT.replace("replay = true", "replay = \"{bw != '1GBps'}\"")))
        assert [point.replay for point in sweep.points] == [False, True, True]
        # The point that runs the app reports SMPI's simulated time too, the metric of the sweep.
        assert [set(SIMULATED_TIME_OPTIONS) <= set(point.options) for point in sweep.points] == [True, False, False]
        assert not load_sweep(write(tmp_path, self.TEXT.replace("replay = true\n", ""))).points[0].replay

    def test_cli_rejects_a_bad_replay_before_anything_runs(self, tmp_path: Path) -> None:
        done = run_module(
            "study_runner.sweeps.sweep_cli", str(write(tmp_path, self.TEXT.replace("true", "1"))), tmp_path=tmp_path
        )
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"scripts/sweep: error: {tmp_path / 'sweep.toml'}: run.replay: 1 is not of type 'boolean'"
        ]
        assert not (tmp_path / "results").exists() and not (tmp_path / "cache").exists()


class TestTraceStore:
    def recorded(self, tmp_path: Path, ranks: int) -> Path:
        """An index and its rank files as SimGrid writes them (relative names, rank 0 in ``..._rank-1.txt``)."""
        (tmp_path / "ti-trace_files").mkdir()
        names = []
        for rank in range(ranks):
            name = f"ti-trace_files/17.5_rank-{rank + 1}.txt"
            (tmp_path / name).write_text(f"{rank} init\n{rank} finalize\n")
            names.append(name)
        (tmp_path / "ti-trace").write_text("".join(f"{name}\n" for name in names))
        return tmp_path / "ti-trace"

    def test_stored_whole_under_its_key_with_an_index_of_absolute_paths(self, tmp_path: Path) -> None:
        store = TraceStore.of_cache(tmp_path / "cache")
        assert not store.has("ab12")
        store.store("ab12", self.recorded(tmp_path, 3), 3, {"app": "x"})
        assert store.has("ab12") and store.path("ab12") == (tmp_path / "cache" / "traces" / "ab" / "ab12").absolute()
        assert (store.path("ab12") / "rank-2.txt").read_text() == "2 init\n2 finalize\n"
        manifest = json.loads((store.path("ab12") / "inputs.json").read_text())
        assert manifest.pop(TRACE_DIGESTS) == [file_digest(store.path("ab12") / f"rank-{r}.txt") for r in range(3)]
        assert manifest == {"app": "x"}
        store.write_index("ab12", 3, tmp_path / "index")
        listed = (tmp_path / "index").read_text().splitlines()
        assert listed == [str(store.path("ab12") / f"rank-{rank}.txt") for rank in range(3)]
        assert sorted(p.name for p in store.path("ab").parent.iterdir()) == ["ab12"]  # no work directory left

    def test_a_trace_of_other_ranks_is_one_error_and_nothing_stored(self, tmp_path: Path) -> None:
        store = TraceStore(tmp_path / "traces")
        with pytest.raises(StudyError, match="lists 2 files for 3 ranks"):
            store.store("cd34", self.recorded(tmp_path, 2), 3, {})
        with pytest.raises(StudyError, match="wrote no trace index"):
            store.store("cd34", tmp_path / "none", 3, {})
        assert not store.has("cd34") and not list((tmp_path / "traces").rglob("*.txt"))

    def test_a_stored_trace_is_kept(self, tmp_path: Path) -> None:
        store = TraceStore(tmp_path / "traces")
        store.store("ef56", self.recorded(tmp_path, 1), 1, {"first": True})
        store.store("ef56", tmp_path / "ti-trace", 1, {"first": False})
        assert json.loads((store.path("ef56") / "inputs.json").read_text())["first"] is True

    @pytest.mark.parametrize(
        ("harm", "why"),
        [
            (lambda d: (d / "rank-1.txt").write_text("1 init\n"), "rank-1.txt does not match its SHA-256"),
            (lambda d: (d / "rank-2.txt").write_bytes(b"\xff\xfe"), "rank-2.txt does not match its SHA-256"),
            (lambda d: (d / "rank-0.txt").unlink(), "rank-0.txt is missing or unreadable"),
            (lambda d: (d / "inputs.json").write_text("{"), "no readable inputs.json"),
            (lambda d: (d / "inputs.json").write_text("{}"), "inputs.json records no digest of its rank files"),
        ],
    )
    def test_a_damaged_trace_is_removed_and_recorded_again(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], harm: Callable[[Path], None], why: str
    ) -> None:
        """The issue's finding: a damaged trace gave "Actor pid=4 is gone??" or a UnicodeDecodeError on every rerun,
        never re-recorded."""
        store = TraceStore(tmp_path / "traces")
        recorded = self.recorded(tmp_path, 3)
        store.store("ab12", recorded, 3, {"app": "x"})
        harm(store.path("ab12"))
        assert not store.has("ab12")
        (line,) = capsys.readouterr().err.splitlines()
        assert line == f"warning: stored trace {store.path('ab12')} is damaged ({why}): recording it again"
        assert not store.path("ab12").exists()
        store.store("ab12", recorded, 3, {"app": "x"})
        assert store.has("ab12")

    def test_options_and_the_replayed_record(self) -> None:
        assert "--cfg=tracing/smpi/format:TI" in record_options()
        assert replayed_records("[0.002516458000000] Simulated time: 0.00251646 seconds. ", "x") == [
            {"simulated_s": 0.002516458}
        ]
        with pytest.raises(StudyError, match="x: the replay printed no simulated time"):
            replayed_records("nothing", "x")


# app, ranks, args, options, host speeds, largest relative difference allowed (0: equal to the last decimal)
EQUIVALENCE = {
    "alltoall": ("alltoall", 16, ["-s", "64K", "-w", "1", "-i", "2"], [], (), 0.0),
    # --verify: its reduce actions reached the buffer that SimGrid 4.1 freed (patch 0017); its checks trace no
    # computation, so the replay is exact once the replayer's own code is not charged (REPLAY_OPTIONS' cpu-threshold:
    # before, a 0.4 ns drift in 16 us from run to run)
    "alltoall-verify": ("alltoall", 16, ["-s", "4K", "-w", "0", "-i", "1", "--verify"], [], (), 0.0),
    "alltoall-mlfm": ("alltoall", 64, ["-a", "mlfm", "--shape", "2,8,4", "-s", "16K", "-w", "1", "-i", "1"], [], (),
                      0.0),
    "bisection_pairing": (
        "bisection_pairing", 64, ["-d", "4,4,4", "-s", "1M", "-c", "2", "-i", "1", "-w", "1"],
        ["--cfg=smpi/barrier:ompi_recursivedoubling", "--cfg=smpi/reduce:binomial", "--cfg=smpi/allreduce:rdb",
         "--cfg=smpi/shared-malloc:local", "--cfg=smpi/auto-shared-malloc-thresh:1048576"], (), 0.0,
    ),
    "transpose": ("transpose", 64, ["--algorithm", "direct", "--duplex", "full", "--block", "64"], [], (), 0.0),
    # Modelled computation: the copies' cost (--memcpy-rate) and the combining (c2, c3 defaults), traced as flops at
    # the host's speed with 6 significant digits; the combine platforms' cores run at 1 and 2 Gf (two traces).
    "allgather": ("allgather", 16, ["-a", "bruck", "-s", "1024,65536", "-i", "1", "-w", "1", "--memcpy-rate", "42.5e9"],
                  ["--cfg=smpi/barrier:ompi_bruck"], (), 5e-6),
    "combine": ("combine", 16, ["-a", "fence", "-W", "4", "-H", "4", "-n", "246914", "-S", "123457", "-w", "0",
                                "-i", "1"], OVERHEADS, ("1Gf", "2Gf", "1Gf"), 5e-6),
}  # fmt: skip


@pytest.mark.parametrize("case", EQUIVALENCE, ids=str)
def test_replayed_time_is_the_online_time(case: str, tmp_path: Path, bin_dir: Path) -> None:
    app, ranks, args, options, speeds, tolerance = EQUIVALENCE[case]
    sweep = load_sweep(write(tmp_path, sweep_text(app, ranks, args, options, speeds)))
    result = compare(sweep, bin_dir, Engine(workers=1), tmp_path)
    assert result.points == result.platforms == 3
    assert result.traces == len(set(speeds or ("1Gf",)))  # one recording per host speed, not per platform
    assert len(set(result.online_s)) == 3  # the platforms do differ
    _, relative, _ = result.largest_difference()
    if tolerance == 0.0:
        assert result.replay_s == result.online_s
    else:
        assert relative <= tolerance, (result.online_s, result.replay_s)


def test_a_replayed_allreduce_of_16_ranks_completes(tmp_path: Path) -> None:
    """SimGrid patch 0017: 16 ranks that each replay ``init``, ``allreduce 1 0``, ``finalize`` under Open MPI's
    selector (topolab's standard options) reach Comm::init_smp, whose irecvs once freed the replaying senders' shared
    buffer ("free(): invalid size", exit 134); at 8 ranks they always replayed."""
    from generators import build_platform
    from generators import write_hostfile
    from generators import write_platform
    from study_runner.simulation.prepared import smpirun_simulation
    from study_runner.simulation.replay import replay_options
    from study_runner.simulation.replay import replay_program
    from study_runner.simulation.smpi import run_smpirun_measured

    platform = build_platform("crossbar", {"hosts": 16})
    write_platform(platform, tmp_path / "crossbar.xml")
    write_hostfile(platform.host_names, tmp_path / "hosts")
    for rank in range(16):
        (tmp_path / f"rank-{rank}.txt").write_text(f"{rank} init\n{rank} allreduce 1 0\n{rank} finalize\n")
    (tmp_path / "index.txt").write_text("".join(f"{tmp_path}/rank-{rank}.txt\n" for rank in range(16)))
    options = replay_options(SIMULATED_TIME_OPTIONS, tmp_path / "index.txt")
    replay = smpirun_simulation(replay_program(), (), tmp_path / "crossbar.xml", tmp_path / "hosts", 16, options)
    done = run_smpirun_measured(replay.argv, tmp_path, timeout=60, label="the replay")  # raises on a non-zero exit
    assert replayed_records(done.stderr, "the replay")[0]["simulated_s"] > 0


def test_trace_recorded_once_reused_and_cached(tmp_path: Path, bin_dir: Path) -> None:
    text = sweep_text("alltoall", 16, ["-s", "4K", "-i", "1"])
    first = run_module("study_runner.sweeps.sweep_cli", str(write(tmp_path, text)), "--workers", "2",
                       tmp_path=tmp_path)  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("(recording its trace): trace recorded") == 1
    assert "3 points (3 simulated, 0 from cache)" in first.stderr
    traces = list((tmp_path / "cache" / "traces").glob("*/*"))
    assert len(traces) == 1 and len(list(traces[0].glob("rank-*.txt"))) == 16

    again = run_module("study_runner.sweeps.sweep_cli", str(write(tmp_path, text)), tmp_path=tmp_path)
    assert "3 points (0 simulated, 3 from cache)" in again.stderr and "trace recorded" not in again.stderr

    # Other platforms, the same app, arguments, ranks, options and host speed: the stored trace is replayed.
    other = text.replace('"1us", "100ns", "0s"', '"3us", "300ns", "30ns"').replace('"replay-alltoall"', '"other"')
    done = run_module("study_runner.sweeps.sweep_cli", str(write(tmp_path, other, "other.toml")), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "3 points (3 simulated, 0 from cache)" in done.stderr and "trace recorded" not in done.stderr
    assert list((tmp_path / "cache" / "traces").glob("*/*")) == traces


def test_a_failed_recording_is_one_error_and_no_trace(tmp_path: Path, bin_dir: Path) -> None:
    text = sweep_text("alltoall", 16, ["-s", "4K", "--phases", "17"])  # more phases than ranks: the app refuses
    done = run_module("study_runner.sweeps.sweep_cli", str(write(tmp_path, text)), "--workers", "1", tmp_path=tmp_path)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("scripts/sweep: error:")]
    assert len(errors) == 1 and "(recording its trace): the MPI application failed" in errors[0], done.stderr
    assert not list((tmp_path / "cache").rglob("rank-*.txt"))
    assert not (tmp_path / "results" / "replay-alltoall").exists()


def test_a_sweep_may_replay_some_points(tmp_path: Path, bin_dir: Path) -> None:
    import pyarrow.parquet as pq

    text = sweep_text("alltoall", 16, ["-s", "4K", "-i", "1"]).replace("replay = true", "replay = \"{bw != '1GBps'}\"")
    text += '[[output.plots]]\nkind = "lines"\nx = "bw"\n'
    done = run_module("study_runner.sweeps.sweep_cli", str(write(tmp_path, text)), "--workers", "1", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(tmp_path / "results" / "replay-alltoall" / "points.parquet").to_pylist()
    assert [row["point"] for row in rows] == [0, 1, 2]
    assert all(isinstance(row["simulated_s"], float) and row["simulated_s"] > 0 for row in rows)
    assert isinstance(rows[0]["time_s_max"], float) and rows[1]["time_s_max"] is None  # the app ran at point 0 only
