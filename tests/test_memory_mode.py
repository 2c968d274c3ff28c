"""``--compute memory`` (``study_runner.tools.memory_mode``, ``study_runner.simulation.node_memory``): the part of a
burst that moves memory is charged at the rank's share of its node's memory bandwidth.

The charge is one figure, SMPI's ``smpi/host-speed``, computed from the calibrations and the target: the tests give
this machine known calibrations (written into a private cache) and check the figure against the model's closed form;
a simulation checks the property that matters, that two ranks on a node streaming memory take twice as long as one
when the node's bandwidth is what one core draws, and that the measurement of the fraction reads contention right.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import asdict
from pathlib import Path

import pytest

import study_runner.simulation.node_memory as memory_calibration
from generators import crossbar
from generators import write_platform
from generators.errors import TopologyError
from study_runner.simulation.compute import Calibration
from study_runner.simulation.compute import calibration_path
from study_runner.simulation.compute import machine_key
from study_runner.simulation.node_memory import MemoryBandwidth
from study_runner.simulation.node_memory import memory_path
from study_runner.simulation.platform_files import core_speed
from study_runner.simulation.platform_files import node_memory
from study_runner.tools.memory_fraction import fraction_from_ratio
from study_runner.tools.smpirun_on import UsageError
from study_runner.tools.smpirun_on import prepare
from tests.conftest import REPO
from tests.conftest import smpicc_test_program

HERE_FLOPS, HERE_CORE_BPS, HERE_NODE_BPS = 4e10, 1e10, 1.6e10
"""This machine as the tests' calibrations say: 40 Gflop/s cores, 10 GB/s for one core, 16 GB/s for the node."""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache holding known calibrations of this machine (cores, memory, intra-node path), used by smpirun-on."""
    directory = tmp_path / "cache"
    compute = Calibration(HERE_FLOPS, (HERE_FLOPS,), "test", "cpu", "host", "today")
    memory = MemoryBandwidth(HERE_CORE_BPS, HERE_NODE_BPS, 2, (HERE_CORE_BPS,), (HERE_NODE_BPS,), "test", "today")
    intra = {"latency_s": 1e-6, "bandwidth_Bps": 5e9, "oneway_s": {}, "method": "test", "measured": "today"}
    calibration_path(directory).parent.mkdir(parents=True)
    calibration_path(directory).write_text(json.dumps(asdict(compute)))
    memory_path(directory).write_text(json.dumps(asdict(memory)))
    (directory / "calibration" / f"intra-node-{machine_key()}.json").write_text(json.dumps(intra))
    monkeypatch.setenv("TOPOLAB_CACHE", str(directory))
    return directory


def host_speed(command: list[str], option: str = "smpi/host-speed") -> float:
    """The last smpi/host-speed of a command (the compute mode's), or of another speed ``option``."""
    values = [arg.split(":", 1)[1] for arg in command if arg.startswith(f"--cfg={option}:")]
    return float(values[-1].removesuffix("f"))


@pytest.fixture
def app(tmp_path: Path) -> str:
    """A stand-in for the program, never run: smpirun-on refuses an executable not built for SMPI (``/bin/true``)."""
    path = tmp_path / "app"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def crossbar_run(app: str, *options: str) -> list[str]:
    return ["crossbar", "--hosts", "2", "--host-speed", "10Gf", *options, "--", app]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # (1 - m) P_here + m P B_here / B, B = min(core, node / ranks on the fullest host), P = 10 Gf:
        (("--np", "4", "--ranks-per-node", "2", "--memory-fraction", "0.5", "--memory-bw", "16GBps"),
         0.5 * HERE_FLOPS + 0.5 * 1e10 * HERE_CORE_BPS / 8e9),
        (("--np", "2", "--memory-fraction", "0.5", "--memory-bw", "100GBps", "--core-memory-bw", "5GBps"),
         0.5 * HERE_FLOPS + 0.5 * 1e10 * HERE_CORE_BPS / 5e9),
        (("--np", "2", "--memory-fraction", "0", "--memory-bw", "1GBps"), HERE_FLOPS),  # no memory: benchmark's
        (("--np", "3", "--ranks-per-node", "2", "--memory-fraction", "1", "--memory-bw", "10GBps"),
         1e10 * HERE_CORE_BPS / 5e9),  # 3 ranks: 2 on the fullest host
    ],
)  # fmt: skip
def test_the_speed_charges_memory_at_the_ranks_share(
    cache: Path, app: str, options: tuple[str, ...], expected: float
) -> None:
    command = prepare(crossbar_run(app, "--compute", "memory", *options))
    assert host_speed(command) == pytest.approx(expected, rel=1e-12)
    assert "--cfg=smpi/simulate-computation:yes" in command
    # An MPI call's copies and reductions in a rank's own memory are all memory: the bursts' speed at m = 1.
    all_memory = prepare(crossbar_run(app, "--compute", "memory", *options, "--memory-fraction", "1"))  # the last wins
    assert host_speed(command, "smpi/local-work-speed") == pytest.approx(host_speed(all_memory), rel=1e-12)


def test_this_machine_brings_its_calibrated_memory(cache: Path, app: str) -> None:
    # Two ranks on this machine's node: each gets min(10 GB/s, 16 GB/s / 2) = 8 GB/s against 10 GB/s alone.
    command = prepare(["this-machine", "--np", "2", "--compute", "memory", "--memory-fraction", "1", "--", app])
    assert host_speed(command) == pytest.approx(HERE_FLOPS * HERE_CORE_BPS / 8e9, rel=1e-12)
    one = prepare(["this-machine", "--np", "1", "--compute", "memory", "--memory-fraction", "1", "--", app])
    assert host_speed(one) == pytest.approx(HERE_FLOPS, rel=1e-12)  # a rank alone: what it measured here


def test_a_node_that_one_core_saturates_is_a_platform(cache: Path, app: str) -> None:
    # One core draws the node's bandwidth, and both together measured 2% less (2026-11-29 here): the platform of this
    # machine was refused ("core_memory_bw needs memory_bw at least as large"); the node gets what a core draws.
    memory = MemoryBandwidth(HERE_CORE_BPS, 0.98 * HERE_CORE_BPS, 2, (HERE_CORE_BPS,), (0.98e10,), "test", "today")
    memory_path(cache).write_text(json.dumps(asdict(memory)))
    command = prepare(["this-machine", "--np", "2", "--compute", "memory", "--memory-fraction", "1", "--", app])
    assert host_speed(command) == pytest.approx(HERE_FLOPS * 2, rel=1e-12)  # each of 2 ranks: half of 10 GB/s


BAD = [
    (("--compute", "memory", "--memory-bw", "1GBps"), "needs the code's --memory-fraction"),
    (("--compute", "memory", "--memory-fraction", "1.5", "--memory-bw", "1GBps"), "from 0 to 1, got '1.5'"),
    (("--compute", "memory", "--memory-fraction", "abc", "--memory-bw", "1GBps"), "from 0 to 1, got 'abc'"),
    (("--compute", "memory", "--memory-fraction", "0.5"), "memory bandwidth: the platform records none"),
    (("--compute", "memory", "--memory-fraction", "0.5", "--memory-bw", "fast"), "memory_bw must be a number"),
    (("--compute", "benchmark", "--memory-fraction", "0.5"), "--memory-fraction is an option of --compute memory"),
    (("--compute", "memory", "--memory-fraction", "0.5", "--core-memory-bw", "2GBps"), "needs memory_bw"),
    (
        ("--compute", "memory", "--memory-fraction", "0.5", "--memory-bw", "1GBps", "--core-memory-bw", "2GBps"),
        "at least as large",
    ),
]


@pytest.mark.parametrize(("options", "message"), BAD)
def test_bad_memory_options_are_one_error(cache: Path, app: str, options: tuple[str, ...], message: str) -> None:
    # A family's --memory-bw is its node parameter: a bad one is the family's error (both are one line, exit 2).
    with pytest.raises((UsageError, TopologyError), match=message.replace("(", r"\(").replace(")", r"\)")):
        prepare(crossbar_run(app, *options))


def test_the_core_speed_of_platform_files(tmp_path: Path) -> None:
    xml = tmp_path / "c.xml"
    write_platform(crossbar(3, host_speed=2.5e9), xml)
    assert core_speed(xml) == 2.5e9
    params = tmp_path / "t.params"
    params.write_text("# provenance\nname t\nhost_speed 14784000000.0\ncores 16\n")
    assert core_speed(tmp_path / "t.so") == 14.784e9
    params.write_text("# provenance\nname t\n")
    assert core_speed(tmp_path / "t.so") == 1e9  # the model's default, which the compiled zone writes no line for


def test_a_platform_file_brings_its_node_memory(cache: Path, app: str, tmp_path: Path) -> None:
    # The figures a family records (generators.node's memory_bw, core_memory_bw) are what --compute memory uses on
    # the file; --memory-bw on the command line wins. 2 ranks on the host of 16 GB/s: 8 GB/s each.
    xml = tmp_path / "node.xml"
    write_platform(crossbar(1, host_speed="10Gf", cores=2, memory_bw="16GBps", core_memory_bw="12GBps"), xml)
    assert node_memory(xml) == (16e9, 12e9)
    run = [str(xml), "--np", "2", "--ranks-per-node", "2", "--compute", "memory", "--memory-fraction", "1"]
    assert host_speed(prepare([*run, "--", app])) == pytest.approx(1e10 * HERE_CORE_BPS / 8e9, rel=1e-12)
    given = prepare([*run, "--memory-bw", "32GBps", "--", app])  # 16 GB/s each, capped by the core's 12
    assert host_speed(given) == pytest.approx(1e10 * HERE_CORE_BPS / 12e9, rel=1e-12)
    assert node_memory(REPO / "platforms" / "mira" / "mira.so") == (42.6e9, None)  # the paper machines record theirs
    assert node_memory(REPO / "platforms" / "fugaku" / "fugaku.so") == (1024e9, None)
    plain = tmp_path / "plain.xml"
    write_platform(crossbar(1), plain)
    assert node_memory(plain) == (None, None)  # recorded only when given: files written before are unchanged
    assert "memory_bw" not in plain.read_text()
    with pytest.raises(UsageError, match="the platform records none"):
        prepare([str(plain), "--compute", "memory", "--memory-fraction", "1", "--", app])


def test_the_fraction_inverts_the_contention_model() -> None:
    # r = (1 - m) + m / s for every m: the measurement reads back the fraction it is given.
    for share in (0.3, 0.5, 0.65, 0.9):
        for m in (0.0, 0.1, 0.5, 0.9, 1.0):
            assert fraction_from_ratio((1 - m) + m / share, share) == pytest.approx(m, abs=1e-12)
    assert fraction_from_ratio(0.97, 0.5) == 0.0  # noise below 1 is no traffic, not a negative one


def test_a_core_that_streams_as_fast_together_keeps_its_whole_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Alone and together, each process does the same work: passes of the same length mean a share of exactly 1.
    # (Arrays 4 times larger alone than together made this 0.25; with one Add a pass, too short beside the barrier's
    # release, a virtual machine's cores seemed to keep 103-121% of their rate streaming together.)
    passes = [0.1] * memory_calibration.REPEATS
    monkeypatch.setattr(memory_calibration, "_run", lambda mode, processes: [passes] * processes)
    memory = memory_calibration.measure_memory(tmp_path)
    assert memory.share == pytest.approx(1.0, rel=1e-12)
    assert memory.core_Bps == pytest.approx(24 * memory_calibration.ELEMENTS * memory_calibration.ADDS_PER_PASS / 0.1)
    assert memory_calibration.memory_bandwidth(tmp_path, measure=False) == memory  # cached as measured


def test_the_measurement_times_every_pass_of_every_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # The measurement itself, on small arrays: one list of pass times per process, every pass measured.
    monkeypatch.setattr(memory_calibration, "ELEMENTS", 1 << 12)
    for mode, processes in (("core", 1), ("node", 2)):
        times = memory_calibration._run(mode, processes)
        assert len(times) == processes and all(len(passes) == memory_calibration.REPEATS for passes in times)
        assert all(t > 0 for passes in times for t in passes)


@pytest.mark.simgrid
def test_two_ranks_streaming_on_a_node_take_twice_as_long(cache: Path, bin_dir: Path) -> None:
    # Every burst all memory (m = 1), the node's bandwidth what one core draws (10 GB/s here as calibrated): two
    # ranks on one host each get half, one rank per host the whole. The bursts are timed for real, so the ratio is
    # 2 up to this machine's noise; benchmarked, both runs take the same. Each layout is run three times and its
    # fastest run kept: a busy moment slows a run (CI once measured 2.6 from one slow run), it never speeds one up.
    steps: dict[str, list[float]] = {"1": [], "2": []}
    for per_node in ("1", "2") * 3:
        argv = ["crossbar", "--hosts", "2", "--host-speed", "40Gf", "--np", "2", "--ranks-per-node", per_node,
                "--cores", "2", "--compute", "memory", "--memory-fraction", "1", "--memory-bw", "10GBps", "--",
                str(bin_dir / "compute_bound"), "-f", "300", "-i", "3"]  # fmt: skip
        done = subprocess.run(prepare(argv), capture_output=True, text=True, timeout=300, env=dict(os.environ))
        assert done.returncode == 0, done.stderr[-600:]
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        steps[per_node].append(record["step_s_avg"])
    assert 1.6 < min(steps["2"]) / min(steps["1"]) < 2.5, steps


def test_the_measurement_command_refuses_bad_usage() -> None:
    done = subprocess.run([str(REPO / "scripts" / "measure-memory-fraction")], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.strip().endswith("no program after '--': measure-memory-fraction "
                                                                 "[--np N] -- ./app [args]")  # fmt: skip


def test_the_validation_table_shows_both_predictions() -> None:
    from study_runner.tools.validation import Comparison
    from study_runner.tools.validation import table

    plain = Comparison("ep.A", 1, (2.0, 2.2, 2.1), (2.1, 2.0, 2.2))
    memory = Comparison("is.B", 2, (2.0, 2.0, 2.0), (1.0, 1.5, 1.5), "", (1.8, 1.9, 1.6), 0.25)
    assert memory.ratio == 0.75 and memory.memory_ratio == 0.9 and plain.memory_ratio is None
    assert table([plain])[0].endswith("| simulated / real |")  # no memory column without a memory prediction
    head, _, first, second = table([plain, memory])
    assert head.endswith("| memory fraction | with memory (s) | with memory / real |")
    assert first.endswith("| 1.000 |  |  |  |") and second.endswith("| 0.750 | 0.250 | 1.80 (1.60-1.90) | 0.900 |")


@pytest.mark.simgrid
def test_the_fraction_times_sampled_computation(cache: Path, tmp_path: Path) -> None:
    # NAS EP computes inside SMPI_SAMPLE loops, which SMPI's sum of benchmarked bursts leaves out: its fraction was
    # measured from a millisecond of noise (0.26 and 0.35 for a code that moves no memory). At one rank the
    # measurement times the simulated run: every block (30 of a few ms here) at its CPU time.
    from study_runner.tools.memory_fraction import measure_fraction

    binary = smpicc_test_program("sampled_work", tmp_path)
    result = measure_fraction([str(binary)], 1, 1, ("--cfg=smpi/sample-skip:no",), busy_ok=True)  # not its subject
    assert min(result.alone_s + result.loaded_s) > 0.1  # the blocks' time, not the milliseconds around them
    assert 0.0 <= result.fraction <= 1.0
