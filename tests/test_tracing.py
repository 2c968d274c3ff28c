"""Per-link bytes from SimGrid's Paje trace (study_runner.simulation.tracing): the parser on hand-written traces, and
traced smpirun runs whose bytes per link are known from the app's messages and the model's routes."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators import build_platform
from generators import write_hostfile
from generators import write_platform
from generators.model import Platform
from study_runner.batch.execute import parse_records
from study_runner.errors import StudyError
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from study_runner.simulation.tracing import TRACING_OPTIONS
from study_runner.simulation.tracing import link_bytes
from study_runner.simulation.tracing import traced_run
from study_runner.simulation.tracing import tracing_options

# Times are traced with 15 decimals (1e-15 s, a few 1e-6 bytes per interval at 2 GB/s): the integral of an
# uncontended run matches the bytes sent to a few ulps (measured: 1.5e-16 relative).
REL = 1e-12

# A trace in SimGrid 3.32's layout, except that the variable events list their fields in another order
# than SimGrid's (Value, Container, Type, Time): positions must come from the %EventDef header.
TRACE = """\
#This file was generated using SimGrid-3.32.0
%EventDef PajeDefineContainerType 0
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineVariableType 1
%       Alias string
%       Type string
%       Name string
%       Color color
%EndEventDef
%EventDef PajeCreateContainer 6
%       Time date
%       Alias string
%       Type string
%       Container string
%       Name string
%EndEventDef
%EventDef PajeSetVariable 8
%       Time date
%       Type string
%       Container string
%       Value double
%EndEventDef
%EventDef PajeAddVariable 9
%       Value double
%       Container string
%       Type string
%       Time date
%EndEventDef
%EventDef PajeSubVariable 10
%       Time date
%       Type string
%       Container string
%       Value double
%EndEventDef
0 1 0 HOST
6 0.000000 2 1 0 "host-0"
1 3 1 speed_used "0.5 0.5 0.5"
0 6 0 LINK
6 0.000000 28 6 0 "a_to_b"
1 7 6 bandwidth "1 1 1"
1 9 6 bandwidth_used "0.5 0.5 0.5"
6 0.000000 29 6 0 "link with spaces"
6 0.000000 30 6 0 "idle"
8 0.000000 7 28 2000000000.000000
8 0.5 9 28 0
9 1000 28 9 1.0
9 50 28 9 1.5
8 1.0 3 2 7.0
10 2.0 9 28 50
9 500 29 9 2.0
10 3.0 9 28 1000
10 3.5 9 29 500
"""
# a_to_b: 1000 B/s over [1, 1.5] s, 1050 B/s over [1.5, 2] s, 1000 B/s over [2, 3] s; "link with spaces": 500 B/s
# over [2, 3.5] s; speed_used and bandwidth events are not link traffic.
TRACE_BYTES = {"a_to_b": 500 + 525 + 1000, "link with spaces": 750, "idle": 0.0}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.trace"
    path.write_text(text)
    return path


class TestLinkBytes:
    def test_integrates_bandwidth_used_per_link(self, tmp_path: Path) -> None:
        assert link_bytes(write(tmp_path, TRACE)) == pytest.approx(TRACE_BYTES, rel=1e-15)

    def test_options_name_the_trace_file(self, tmp_path: Path) -> None:
        options = tracing_options(Path("rel/run.trace"))
        assert options[: len(TRACING_OPTIONS)] == TRACING_OPTIONS
        assert options[-1] == "--cfg=tracing/filename:rel/run.trace"  # relative to smpirun's working directory
        assert "--cfg=tracing/uncategorized:yes" in options and "--cfg=tracing/platform/topology:no" in options
        assert not any(option.startswith("--cfg=tracing/smpi") for option in options)

    @pytest.mark.parametrize(
        ("old", "new", "line", "message"),
        [
            ("9 50 28 9 1.5\n", "9 50 28 9\n", 50, "PajeAddVariable has 4 fields, this line 3"),
            ("10 3.0 9 28 1000\n", "10 3.O 9 28 1000\n", 54, "time '3.O' is not a number"),
            ("10 3.0 9 28 1000\n", "10 3.0 9 28 nan\n", 54, "value 'nan' is not finite"),
            ("10 3.0 9 28 1000\n", "10 0.7 9 28 1000\n", 54, "time 0.7 is before the previous event"),
            ("9 500 29 9 2.0\n", "9 500 31 9 2.0\n", 53, "on '31', which is no link container"),
            ("8 1.0 3 2 7.0\n", "42 1.0 3 2 7.0\n", 51, "unknown event id '42'"),
            ("6 0.000000 30 6 0 \"idle\"\n", "6 0.000000 29 6 0 \"idle\"\n", 46, "container '29' created twice"),
            ("%       Value double\n%       Container", "%       Value\n%       Container", 27, "expected a field"),
            ("%EventDef PajeSetVariable 8\n", "%EventDef PajeSetVariable\n", 20, "expected '%EventDef NAME ID'"),
            ("%       Time date\n%       Type string\n%       Container string\n%       Value double\n%EndEventDef\n"
             "%EventDef PajeAddVariable", "%       Type string\n%       Container string\n%       Value double\n"
             "%EndEventDef\n%EventDef PajeAddVariable", 24, "the definition of PajeSetVariable has no field Time"),
            ("%EndEventDef\n0 1 0 HOST", "0 1 0 HOST", 37, "the definition of PajeSubVariable has no %EndEventDef"),
        ],
    )  # fmt: skip
    def test_malformed_trace_names_file_and_line(
        self, tmp_path: Path, old: str, new: str, line: int, message: str
    ) -> None:
        assert old in TRACE
        path = write(tmp_path, TRACE.replace(old, new, 1))
        with pytest.raises(StudyError) as failure:
            link_bytes(path)
        assert str(failure.value).startswith(f"{path}: line {line}: ")
        assert message in str(failure.value)

    def test_truncated_trace(self, tmp_path: Path) -> None:
        path = write(tmp_path, TRACE.removesuffix("10 3.5 9 29 500\n"))
        with pytest.raises(StudyError, match=r"line 54: the trace ends while link link with spaces is in use"):
            link_bytes(path)
        path = write(tmp_path, TRACE[: TRACE.index("%       Value double\n%EndEventDef\n%EventDef PajeAddVariable")])
        with pytest.raises(StudyError, match=r"line 23: the trace ends inside the definition of PajeSetVariable"):
            link_bytes(path)

    def test_trace_without_link_traffic(self, tmp_path: Path) -> None:
        with pytest.raises(StudyError, match=r"no link bandwidth_used variable in the trace"):
            link_bytes(write(tmp_path, TRACE.replace("1 9 6 bandwidth_used", "1 9 6 bandwidth_free")))
        with pytest.raises(StudyError, match=r"the trace is empty"):
            link_bytes(write(tmp_path, ""))
        with pytest.raises(StudyError, match=r"cannot read the trace .*missing.trace"):
            link_bytes(tmp_path / "missing.trace")


def platform_files(tmp_path: Path, family: str, params: dict[str, str], hosts: list[str]) -> tuple[Platform, Path]:
    """Build and write a platform (``p.xml``/``p.so``) and a hostfile (``hosts``) placing rank i on ``hosts[i]``."""
    model = build_platform(family, params)
    path = tmp_path / ("p.so" if model.compiled is not None else "p.xml")
    write_platform(model, path)
    write_hostfile(hosts, tmp_path / "hosts")
    return model, path


def pingpong_bytes(sizes: list[int], iterations: int, warmup: int) -> int:
    """Bytes a pingpong run sends each way between ranks 0 and 1 under SMPI (measured and explained): every
    message carries SMPI's envelope, and each size starts with an MPI_Barrier that, on two ranks, is one
    zero-byte message each way (ompi's two-process barrier). MPI_Init and MPI_Finalize send nothing."""
    per_size = [(warmup + iterations) * (size + SMPI_ENVELOPE_BYTES) + SMPI_ENVELOPE_BYTES for size in sizes]
    return sum(per_size)


PINGPONG = ["-s", "1000,100000", "-i", "3", "-w", "1"]  # an eager and a rendezvous size
PINGPONG_BYTES = pingpong_bytes([1000, 100000], 3, 1)


@pytest.mark.simgrid
class TestTracedRuns:
    def test_pingpong_on_a_mesh(self, tmp_path: Path, bin_dir: Path) -> None:
        """Every link of both routes carries the messages' bytes; FATPIPE ports carry both directions."""
        model, platform = platform_files(tmp_path, "mesh", {"width": "3", "height": "3"}, ["host-0", "host-8"])
        run = traced_run(bin_dir / "pingpong", PINGPONG, platform, tmp_path / "hosts", 2, tmp_path / "run.trace")
        there, back = model.route("host-0", "host-8"), model.route("host-8", "host-0")
        assert there[0] == back[-1] == "host-0_port" and model.links["host-0_port"].sharing == "FATPIPE"
        expected = {name: 0.0 for name in model.links}
        for name in there + back:
            expected[name] += PINGPONG_BYTES
        assert run.link_bytes == pytest.approx(expected, rel=REL)
        assert run.trace_size == run.trace_file.stat().st_size > 0
        # Tracing changes no simulated time.
        plain = smpirun_command(bin_dir / "pingpong", PINGPONG, platform, tmp_path / "hosts", 2)
        assert parse_records(run.stdout, "traced") == parse_records(run_smpirun(plain, tmp_path, 60, "plain"), "plain")

    @pytest.mark.parametrize(
        ("family", "params", "hosts"),
        [
            ("mesh", {"width": "3", "height": "3", "nbl": "nominal"}, ["host-0", "host-5"]),  # a Dijkstra zone
            ("crossbar", {"hosts": "4", "nbl": "2"}, ["host-3", "host-1"]),  # a Full zone, explicit routes
        ],
    )
    def test_nbl_limiters_carry_both_directions(
        self, tmp_path: Path, bin_dir: Path, family: str, params: dict[str, str], hosts: list[str]
    ) -> None:
        model, platform = platform_files(tmp_path, family, params, hosts)
        run = traced_run(bin_dir / "pingpong", PINGPONG, platform, tmp_path / "hosts", 2, tmp_path / "run.trace")
        there, back = model.route(*hosts), model.route(*hosts[::-1])
        assert {there[0], there[-1]} == {back[0], back[-1]} == {f"{host}_nbl" for host in hosts}
        assert not set(there[1:-1]) & set(back[1:-1])
        expected = {name: 0.0 for name in model.links}
        for name in there + back:
            expected[name] += PINGPONG_BYTES
        assert expected[f"{hosts[0]}_nbl"] == 2 * PINGPONG_BYTES
        assert run.link_bytes == pytest.approx(expected, rel=REL)

    def test_traced_runs_are_deterministic(self, tmp_path: Path, bin_dir: Path) -> None:
        params = {"width": "3", "height": "3", "nbl": "nominal"}
        _, platform = platform_files(tmp_path, "mesh", params, ["host-0", "host-1", "host-2", "host-4"])
        args = ["-p", "3", "-s", "64K", "-i", "2", "-w", "0"]
        runs = [
            traced_run(bin_dir / "exchange", args, platform, tmp_path / "hosts", 4, tmp_path / f"{k}.trace")
            for k in range(2)
        ]
        assert runs[0].link_bytes == runs[1].link_bytes
        # The same trace after its two header lines, the SimGrid version and the command line (which may name
        # the trace file: SimGrid 3.32 listed the --cfg options there, 4.1 does not).
        traces = [run.trace_file.read_text().splitlines() for run in runs]
        assert traces[0][2:] == traces[1][2:] and len(traces[0]) > 100

    def test_contended_flows_are_undercounted(self, tmp_path: Path, bin_dir: Path) -> None:
        """SimGrid's limitation (see study_runner.simulation.tracing; 3.32 and 4.1): rank 0 exchanges with 3 peers at
        once through its limiter; flows whose sharing changes lose all but their last constant-rate stretch."""
        model, platform = platform_files(
            tmp_path, "mesh", {"width": "3", "height": "3", "nbl": "nominal"}, ["host-0", "host-1", "host-2", "host-3"]
        )
        size = 1000000
        args = ["-p", "3", "-s", str(size), "-i", "1", "-w", "0"]
        run = traced_run(bin_dir / "exchange", args, platform, tmp_path / "hosts", 4, tmp_path / "run.trace")
        sent = 6 * (size + SMPI_ENVELOPE_BYTES)  # three messages out of host-0 and three in, barriers aside
        assert model.route("host-0", "host-2")[0] == "host-0_nbl"
        assert 0.5 * sent < run.link_bytes["host-0_nbl"] < 0.9 * sent  # measured: 0.833

    @pytest.mark.parametrize(
        ("params", "hosts"),
        [
            ({"dims": "3x3", "wrap": "no", "zone": "compiled", "nbl": "nominal"}, ["host-0", "host-8"]),  # a mesh
            ({"dims": "4x4", "zone": "compiled"}, ["host-1", "host-11"]),  # a torus: half-way ties, wrap-arounds
        ],
    )
    def test_pingpong_on_a_compiled_zone(
        self, tmp_path: Path, bin_dir: Path, params: dict[str, str], hosts: list[str]
    ) -> None:
        """The compiled torus zone (simgrid_cpp/torus_zone.cpp) traces like XML: every link of both routes
        carries the messages' bytes exactly. (SimGrid creates a link's trace container at each seal of the
        link; the zone leaves its links to NetZoneImpl::seal(), which seals each once.)"""
        model, platform = platform_files(tmp_path, "torus", params, hosts)
        assert platform.suffix == ".so"
        run = traced_run(bin_dir / "pingpong", PINGPONG, platform, tmp_path / "hosts", 2, tmp_path / "run.trace")
        there, back = model.route(*hosts), model.route(*hosts[::-1])
        assert len(there) >= 4 and not set(there) & set(back) - {f"{host}_nbl" for host in hosts}
        expected = {name: 0.0 for name in model.links}
        for name in there + back:
            expected[name] += PINGPONG_BYTES
        # The zone's own loopback (a host's route to itself without intra-node links) is traced too, and idle.
        assert {name: v for name, v in run.link_bytes.items() if name not in expected} == {"loopback": 0.0}
        assert {name: v for name, v in run.link_bytes.items() if name in expected} == pytest.approx(expected, rel=REL)
        plain = smpirun_command(bin_dir / "pingpong", PINGPONG, platform, tmp_path / "hosts", 2)
        assert parse_records(run.stdout, "traced") == parse_records(run_smpirun(plain, tmp_path, 60, "plain"), "plain")
