"""Computation in the model (``study_runner.simulation.compute``): ``--compute off`` says that times are communication
only;
``--compute benchmark`` charges each CPU burst, timed here, at the platform's core speed; this machine's speed is a
calibration cached per machine.

Benchmarked computation is measured, so not deterministic: the tests check properties (a core twice as fast takes
about half the time; the time the app sees is the computation SMPI charged), never digits.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from study_runner.errors import StudyError
from study_runner.simulation import compute
from study_runner.simulation.compute import OFF_NOTICE
from study_runner.simulation.compute import Calibration
from study_runner.simulation.compute import calibrate
from study_runner.simulation.compute import calibration
from study_runner.simulation.compute import calibration_path
from study_runner.simulation.compute import compute_options
from study_runner.simulation.node_memory import MemoryBandwidth
from study_runner.simulation.node_memory import measure_memory
from study_runner.simulation.node_memory import memory_bandwidth
from study_runner.simulation.node_memory import memory_path
from study_runner.simulation.smpi import smpirun_command
from study_runner.studies.study import load_study
from study_runner.sweeps.sweep import load_sweep
from study_runner.tools.this_machine import _intra_path
from study_runner.tools.this_machine import intra_node
from tests.conftest import smpicc_test_program
from tests.test_study import GOOD_STUDY

REPO = Path(__file__).resolve().parent.parent


def smpirun_on(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "study_runner.tools.smpirun_on", *args],
        capture_output=True, text=True, timeout=300, env={**_environment(), "TOPOLAB_CACHE": str(cache)},
    )  # fmt: skip


def _environment() -> dict[str, str]:
    import os

    return dict(os.environ)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache directory holding this machine's calibration, measured once for the module."""
    cache = tmp_path_factory.mktemp("cache")
    calibrate(cache)
    measure_memory(cache)
    return cache


class TestCalibration:
    def test_measured_once_then_read_from_the_cache(self, calibrated: Path) -> None:
        first = calibration(calibrated, measure=False)
        assert first is not None and first.flops > 1e8  # any current core does more than 0.1 Gflop/s in a DGEMM
        assert min(first.samples) <= first.flops <= max(first.samples) and len(first.samples) == compute.REPEATS
        assert "DGEMM" in first.method and first.cpu
        assert calibration(calibrated) == first  # read, not measured again
        assert json.loads(calibration_path(calibrated).read_text())["flops"] == first.flops

    def test_the_key_names_this_machine(self, tmp_path: Path) -> None:
        assert calibration_path(tmp_path).name == f"compute-{compute.machine_key()}.json"
        assert compute.machine_key() == compute.machine_key()

    def test_describe_says_figure_spread_and_method(self) -> None:
        c = Calibration(4e10, (3.9e10, 4e10, 4.2e10), "DGEMM x", "cpu", "host", "2026-11-25T00:00:00Z")
        assert (
            c.describe()
            == "40.00 Gflop/s per core (39.00-42.00 over 3 runs) on cpu, DGEMM x, measured 2026-11-25T00:00:00Z"
        )

    def test_the_command_prints_the_cached_figure(self, calibrated: Path) -> None:
        env = {**_environment(), "TOPOLAB_CACHE": str(calibrated)}
        done = subprocess.run([str(REPO / "scripts" / "calibrate-compute")], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(calibration(calibrated).describe()) and "--force measures again" in done.stdout
        assert memory_bandwidth(calibrated, measure=False).describe() in done.stdout.splitlines()


class TestMemoryBandwidth:
    def test_measured_once_then_read_from_the_cache(self, calibrated: Path) -> None:
        memory = memory_bandwidth(calibrated, measure=False)
        assert memory is not None and memory_bandwidth(calibrated) == memory  # read, not measured again
        assert memory.core_Bps > 1e8  # any current core streams more than 0.1 GB/s
        assert min(memory.core_samples) <= memory.core_Bps <= max(memory.core_samples)
        assert len(memory.core_samples) == len(memory.node_samples) == 7 and memory.cores >= 1
        # All cores together move at least what one does alone at half its rate (they do not stall each other
        # below that), and no core streams half as fast again as alone because others stream too.
        assert 0.5 * memory.core_Bps <= memory.node_Bps <= 1.5 * memory.cores * memory.core_Bps
        assert json.loads(memory_path(calibrated).read_text())["node_Bps"] == memory.node_Bps

    def test_describe_says_both_figures_and_the_share(self) -> None:
        m = MemoryBandwidth(1e10, 1.5e10, 2, (0.9e10, 1e10, 1.1e10), (1.4e10, 1.5e10, 1.6e10), "Add", "today")
        assert m.share == 0.75
        assert m.describe() == (
            "memory 10.00 GB/s for one core (9.00-11.00 over 3 passes), 15.00 GB/s for all 2 cores together "
            "(14.00-16.00 over 3 passes; 0.75 of a core's own rate each), Add, measured today"
        )


Reader = Callable[..., object]
CACHED: dict[str, tuple[Callable[[Path], Path], Reader, str, str]] = {
    # a figure measured once per machine: its file, its reader, a damaged file, what the reader says of it
    "calibration": (calibration_path, calibration, '{"flops": 1}', "is not a calibration topolab wrote"),
    "memory bandwidth": (memory_path, memory_bandwidth, '{"core_Bps": 1}', "is not a memory bandwidth topolab wrote"),
}


@pytest.mark.parametrize("figure", CACHED)
def test_none_without_a_measurement_unless_measured(tmp_path: Path, figure: str) -> None:
    path_of, read, _, _ = CACHED[figure]
    assert read(tmp_path, measure=False) is None
    assert not path_of(tmp_path).exists()


@pytest.mark.parametrize("figure", CACHED)
def test_a_damaged_measurement_is_one_error(tmp_path: Path, figure: str) -> None:
    path_of, read, damaged, message = CACHED[figure]
    path = path_of(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(damaged)
    with pytest.raises(StudyError, match=message):
        read(tmp_path)


def test_a_damaged_intra_node_path_is_one_error_that_says_how_to_measure_it_again(tmp_path: Path) -> None:
    """The intra-node path is cached as the compute speed and the memory are; ``calibrate-compute --force`` does not
    measure it, so its error says what does."""
    path = _intra_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"latency_s": 1}')
    remedy = rf"remove {re.escape(str(path))} \(the next smpirun-on this-machine measures it again\)$"
    with pytest.raises(StudyError, match=f"is not an intra-node calibration topolab wrote: {remedy}"):
        intra_node(tmp_path)


class TestOptions:
    def test_off_adds_nothing_to_the_standard_options(self) -> None:
        assert compute_options("off") == ()

    def test_benchmark_switches_computation_on_at_this_machines_speed(self) -> None:
        options = compute_options("benchmark", 2.5e10)
        assert "--cfg=smpi/simulate-computation:yes" in options and "--cfg=smpi/host-speed:25000000000.0f" in options

    BAD_MODES = (
        ("fast", 1e9, "compute must be one of off, benchmark"),
        ("benchmark", None, "needs this machine's speed"),
        ("benchmark", 0.0, "needs this machine's speed"),
    )

    @pytest.mark.parametrize(("mode", "speed", "message"), BAD_MODES)
    def test_bad_modes_are_errors(self, mode: str, speed: float | None, message: str) -> None:
        with pytest.raises(StudyError, match=message):
            compute_options(mode, speed)


@pytest.mark.simgrid
class TestSmpirunOn:
    def test_off_says_once_that_times_exclude_computation(self, bin_dir: Path, tmp_path: Path) -> None:
        done = smpirun_on("crossbar", "--hosts", "2", "--", str(bin_dir / "compute_bound"), "-f", "50", cache=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stderr.count(OFF_NOTICE) == 1
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert record["step_s_max"] < 1e-5  # a barrier's messages: the computation cost nothing

    def test_benchmarked_time_halves_on_cores_twice_as_fast(self, bin_dir: Path, calibrated: Path) -> None:
        # Compute-bound: the step is the burst, timed here and scaled by reference / core speed. The runs time their
        # bursts separately, so the ratio is 2 up to this machine's run-to-run noise, which only adds time: the
        # fastest step of each speed over up to three rounds, the speeds alternating, so that a busy stretch of the
        # machine (CPU time its neighbours take: once every step of the 1Gf run took 2x) is not read as the ratio.
        # A model that ignored the core speed stays at 1, one that squared it at 4, in every round.
        fastest = {"1Gf": float("inf"), "2Gf": float("inf")}
        for _ in range(3):
            for speed in fastest:
                fastest[speed] = min(fastest[speed], self.fastest_step(bin_dir, calibrated, speed))
            if 1.6 < fastest["1Gf"] / fastest["2Gf"] < 2.5:
                break
        assert 1.6 < fastest["1Gf"] / fastest["2Gf"] < 2.5, fastest
        # A step of 300 Mflop at "1 Gflop/s" cores: at least 0.3 s unless this code beat the DGEMM's rate here.
        assert fastest["1Gf"] > 0.3 * 0.9

    @staticmethod
    def fastest_step(bin_dir: Path, calibrated: Path, speed: str) -> float:
        done = smpirun_on("crossbar", "--hosts", "2", "--host-speed", speed, "--compute", "benchmark", "--",
                          str(bin_dir / "compute_bound"), "-f", "300", "-i", "5", cache=calibrated)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert OFF_NOTICE not in done.stderr and "computation benchmarked at this machine's" in done.stderr
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        return record["step_s_min"]

    @pytest.mark.parametrize("mode", ["off", "benchmark"])
    def test_local_work_inside_mpi_calls_is_charged(self, mode: str, calibrated: Path, tmp_path: Path) -> None:
        # SimGrid patch 0011 (charge-local-work): the copy of a message a rank sends itself, its own block of a
        # collective and a reduction operator run inside MPI calls, where SMPI's benchmark is stopped: without the
        # patch they cost nothing, while MPICH's memcpy takes real time (NAS IS's own block of MPI_Alltoallv, 128 MiB
        # an iteration at 1 rank, docs/computation.md).
        binary = smpicc_test_program("local_work", tmp_path)
        done = smpirun_on("crossbar", "--hosts", "1", "--host-speed", "1Gf", "--compute", mode, "--",
                          str(binary), "64", "4", cache=calibrated)  # fmt: skip
        assert done.returncode == 0, done.stderr
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert record["correct"] and record["bytes"] == 64_000_000
        if mode == "off":
            assert record["copy_s"] == 0.0 and record["reduce_s"] == 0.0  # deterministic: computation costs nothing
            return
        # Timed here and charged at 1 Gflop/s for this machine's reference speed: moving 4 x 64 MB at even 50 GB/s
        # (more than one core of any current machine copies) costs at least this much; uncharged, the self-message
        # costs milliseconds.
        at_least = 4 * 64e6 / 50e9 * calibration(calibrated).flops / 1e9
        assert record["copy_s"] > at_least and record["reduce_s"] > at_least

    def test_local_work_has_its_own_speed(self, calibrated: Path, tmp_path: Path) -> None:
        # SimGrid patch 0019 (local-work-speed): --compute memory charges an MPI call's copies and reductions as all
        # memory, through smpi/local-work-speed. At a thousand times smpi/host-speed the same work costs a thousand
        # times as much simulated time (its CPU time, measured each run, varies by far less than 10 times).
        binary = smpicc_test_program("local_work", tmp_path)
        slow = f"--cfg=smpi/local-work-speed:{calibration(calibrated).flops * 1000!r}f"
        records = {}
        for label, options in (("default", ()), ("slow", (slow,))):
            done = smpirun_on("crossbar", "--hosts", "1", "--host-speed", "1Gf", "--compute", "benchmark", *options,
                              "--", str(binary), "16", "4", cache=calibrated)  # fmt: skip
            assert done.returncode == 0, done.stderr
            (records[label],) = [json.loads(line) for line in done.stdout.splitlines()]
            assert records[label]["correct"]
        for work in ("copy_s", "reduce_s"):
            assert 100 < records["slow"][work] / records["default"][work] < 10_000


@pytest.mark.simgrid
def test_a_sweep_point_splits_computation_from_the_rest(bin_dir: Path, tmp_path: Path, calibrated: Path) -> None:
    sweep = tmp_path / "compute.toml"
    sweep.write_text(
        f"""
name = "compute"
[grid]
speed = ["1Gf", "4Gf"]
[platform]
family = "crossbar"
hosts = 2
cores = 2
host_speed = "{{speed}}"
[run]
app = "{bin_dir / "compute_bound"}"
ranks = 4
ranks_per_node = 2
args = ["-f", "100", "-i", "2", "-w", "0"]
compute = "benchmark"
[output]
metric = "simulated_s"
[[output.plots]]
kind = "split"
x = "speed"
"""
    )
    assert [(p.compute, p.ranks_per_node, p.output) for p in load_sweep(sweep).points] == [("benchmark", 2, "json")] * 2
    import pyarrow.parquet as pq

    def run(tag: str) -> list[dict]:
        """The sweep measured afresh: this machine's calibration in a cache of its own, so no point is read back."""
        cache = tmp_path / f"cache-{tag}"
        shutil.copytree(calibrated, cache)
        done = subprocess.run(
            [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(sweep), "--workers", "1", "--results",
             str(tmp_path / tag), "--cache", str(cache)],
            capture_output=True, text=True, cwd=REPO, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return pq.read_table(tmp_path / tag / "compute" / "points.parquet").to_pylist()

    def ratio(rows: list[dict]) -> float:
        slow, fast = sorted(rows, key=lambda row: row["speed"])  # "1Gf" < "4Gf"
        return slow["computation_s"] / fast["computation_s"]

    # The bursts are timed on this machine: a host that slows down while one point runs moves the ratio (5.15 once,
    # where pairs measured after gave 4); such a sweep is measured again once, and the second must hold.
    rows = run("first")
    if not 3.0 < ratio(rows) < 5.0:
        rows = run("again")
    for row in rows:
        # Each rank computes its 2 steps, then meets the others in a barrier: a step lasts as long as its slowest
        # rank's burst, so an average rank's computation is at most the steps' time (and the few microseconds of
        # code outside them). Bursts are timed on this machine, one by one: a burst that a busy machine slows
        # stretches its step but only its own rank's share of the average, so the two agree only to within noise.
        assert row["computation_s"] <= 2 * row["step_s_avg"] * 1.01
        assert row["computation_s"] >= 0.6 * 2 * row["step_s_avg"]
        assert row["simulated_s"] >= 2 * row["step_s_avg"]
    picture = tmp_path / "first" / "compute" / "split-speed.png"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 3.0 < ratio(rows) < 5.0


@pytest.mark.parametrize(("compute", "timed"), [("no", False), ("yes", True)])
def test_bursts_are_timed_only_when_computation_is_simulated(
    tmp_path: Path, bin_dir: Path, compute: str, timed: bool
) -> None:
    # SimGrid patch 0007 (untimed-bursts-without-computation): reading a thread's CPU clock is a system call, and
    # SMPI made two per MPI call to time bursts it then threw away under smpi/simulate-computation:no (15% of
    # nbl-combine's 16 x 32 Snake at N = 1e5, docs/simulation-speed.md). The "yes" case proves that the count sees
    # the timer when it is used. strace is one of the packages scripts/setup installs.
    pair = REPO / "platforms" / "delta"
    command = smpirun_command(bin_dir / "pingpong", ["-s", "8", "-i", "50", "-w", "0"], pair / "pair-2x1.xml",
                              pair / "pair-2x1.hosts", 2, [f"--cfg=smpi/simulate-computation:{compute}"])  # fmt: skip
    trace = tmp_path / "strace.txt"
    done = subprocess.run(["strace", "-f", "-qq", "-e", "trace=clock_gettime", "-e", "signal=none", "-o", str(trace),
                           *command], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    thread_clock_reads = trace.read_text().count("CLOCK_THREAD_CPUTIME_ID")
    assert (thread_clock_reads >= 2 * 100) if timed else (thread_clock_reads == 0)


def test_a_split_plot_needs_computation_benchmarked(tmp_path: Path) -> None:
    sweep = tmp_path / "off.toml"
    sweep.write_text(
        'name = "off"\n[grid]\nn = [2]\n[platform]\nfamily = "crossbar"\nhosts = "{n}"\n[run]\napp = "pingpong"\n'
        'ranks = 2\n[output]\nmetric = "oneway_s_max"\n[[output.plots]]\nkind = "split"\nx = "n"\n'
    )
    with pytest.raises(StudyError, match=r'a split plot shows computation: it needs run\.compute = "benchmark"'):
        load_sweep(sweep)


class TestStudyFiles:
    def test_runs_default_to_computation_off(self) -> None:
        for name in ("sanity-alpha-beta", "nbl-combine", "tofu-allgather"):
            assert {run.compute for run in load_study(name).runs} == {"off"}

    @pytest.mark.parametrize(("key", "value", "message"), [
        ("compute", "fast", r"runs\[0\].compute: 'fast' is not one of"),
        ("ranks_per_node", 0, r"runs\[0\].ranks_per_node: 0 is less than"),
        ("output", "xml", r"runs\[0\].output: 'xml' is not one of"),
    ])  # fmt: skip
    def test_bad_execution_keys_are_errors(self, tmp_path: Path, key: str, value: object, message: str) -> None:
        path = tmp_path / "study.toml"
        shown = json.dumps(value)
        path.write_text(
            f'name = "s"\ntitle = "t"\nanalysis = "sanity_alpha_beta"\n[platforms.p]\nfamily = "crossbar"\nhosts = 2\n'
            f'[[runs]]\nid = "r"\nplatform = "p"\napp = "pingpong"\nranks = 2\n{key} = {shown}\n'
        )
        with pytest.raises(StudyError, match=message):
            load_study(path)


MEMORY_STUDY = (
    GOOD_STUDY.replace('name = "mini"', 'name = "memory"')
    + """
[platforms.p]
family = "crossbar"
hosts = 2
memory_bw = "0.005GBps"
"""
)


def memory_run(run_id: str, fraction: float | None, compute: str = "memory") -> str:
    share = "" if fraction is None else f"memory_fraction = {fraction}\n"
    return (f'[[runs]]\nid = "{run_id}"\nplatform = "p"\napp = "compute_bound"\nranks = 2\n'
            f'args = ["-f", "100", "-i", "3", "-w", "0"]\ncompute = "{compute}"\n{share}')  # fmt: skip


class TestMemoryRuns:
    """``compute = "memory"`` in a study or a sweep (one run grammar): the bursts' memory part charged at the rank's
    share of the platform's ``memory_bw`` (``simulation.node_memory``), as ``smpirun-on --compute memory`` does."""

    @pytest.mark.simgrid
    def test_a_study_run_charges_memory_at_the_nodes_bandwidth(
        self, bin_dir: Path, calibrated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from study_runner.batch.engine import Engine
        from study_runner.batch.execute import execute_runs
        from study_runner.simulation.cache import Cache
        from study_runner.simulation.node_memory import MemoryTarget
        from study_runner.simulation.node_memory import memory_speed
        from study_runner.studies.pipeline import prepare_study

        monkeypatch.setenv("TOPOLAB_CACHE", str(calibrated))  # this machine's calibrations
        (tmp_path / "memory.toml").write_text(MEMORY_STUDY + memory_run("cpu", 0.0) + memory_run("streams", 1.0))
        _, runs = prepare_study(load_study(tmp_path / "memory.toml"), False, bin_dir, tmp_path)
        runs = [run for run in runs if run.spec.compute == "memory"]
        results = execute_runs(runs, Cache(tmp_path / "cache"), engine=Engine(workers=1))
        steps = {run_id: results[run_id].records[0]["step_s_min"] for run_id in ("cpu", "streams")}
        assert all(record["computation_s"] > 0 for result in results.values() for record in result.records)
        # A burst that is all memory traffic runs at the rank's 5 MB/s there against this machine's core's rate
        # here; one without any at the cores' peak ratio: the steps are in the ratio of the two speeds.
        here = calibration(calibrated).flops
        bandwidth = memory_bandwidth(calibrated, measure=False)
        assert bandwidth is not None
        expected = memory_speed(here, bandwidth, 1.0, 1e9, MemoryTarget(5e6, 1)) / here
        assert expected > 10  # the test tells the two apart
        assert 0.4 < steps["streams"] / steps["cpu"] / expected < 2.5, (steps, expected)

    @pytest.mark.parametrize(("runs", "message"), [
        (memory_run("r", None), r'compute = "memory" needs memory_fraction'),
        (memory_run("r", 0.5, "benchmark"), r"memory_fraction is about compute = \"memory\"; this run's compute is"),
        (memory_run("r", 1.5), r"memory_fraction: 1.5 is greater than the maximum of 1"),
    ])  # fmt: skip
    def test_a_run_says_what_the_mode_needs(self, tmp_path: Path, runs: str, message: str) -> None:
        (tmp_path / "memory.toml").write_text(MEMORY_STUDY + runs)
        with pytest.raises(StudyError, match=message):
            load_study(tmp_path / "memory.toml")

    def test_a_platform_without_memory_bandwidth_is_refused_before_anything_runs(
        self, bin_dir: Path, calibrated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from study_runner.studies.pipeline import prepare_study

        monkeypatch.setenv("TOPOLAB_CACHE", str(calibrated))
        study = MEMORY_STUDY.replace('memory_bw = "0.005GBps"\n', "") + memory_run("r", 0.5)
        (tmp_path / "memory.toml").write_text(study)
        with pytest.raises(StudyError, match=r'memory/r: compute = "memory" needs the node\'s memory bandwidth'):
            prepare_study(load_study(tmp_path / "memory.toml"), False, bin_dir, tmp_path)
