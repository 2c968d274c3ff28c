"""``scripts/smpirun-on``: the real command, its platform cache, placements, options, errors and exit status."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from generators import build_platform
from generators import crossbar
from generators import place_ranks
from generators import write_platform
from generators.topologies.mlfm import allocation_hosts
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import STANDARD_OPTIONS
from study_runner.simulation.solver_statistics import solver_statistics
from study_runner.tools.smpirun_on import DIES_WITH_SMPIRUN
from tests.conftest import BIN
from tests.conftest import REPO

COMMAND = REPO / "scripts" / "smpirun-on"
PINGPONG = "build/bin/pingpong"  # relative to the repository, where most runs start


def run(
    tmp_path: Path, *args: str, cwd: Path = REPO, path_first: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run scripts/smpirun-on with its cache in ``tmp_path/cache`` (and ``path_first`` first on PATH)."""
    env = {**os.environ, "TOPOLAB_CACHE": str(tmp_path / "cache")}
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        [str(COMMAND), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120, check=False
    )


def records(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def printed_command(stderr: str) -> list[str]:
    """The smpirun command line printed on stderr."""
    (line,) = [line for line in stderr.splitlines() if line.startswith("smpirun ")]
    return shlex.split(line)


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def snapshot(directory: Path) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(directory.iterdir())}


def oneway(latency: float, bandwidth: float, size: int) -> float:
    return latency + (size + SMPI_ENVELOPE_BYTES) / bandwidth


@pytest.fixture
def fake_smpirun(tmp_path: Path) -> Path:
    """A directory with an ``smpirun`` that records its arguments (one JSON list) in ``smpirun.calls``."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    script = bin_dir / "smpirun"
    calls = tmp_path / "smpirun.calls"
    script.write_text(
        f"#!/usr/bin/env python3\nimport json, sys\nopen({str(calls)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    script.chmod(0o755)
    return bin_dir


def fake_calls(tmp_path: Path) -> list[list[str]]:
    """The simulations the fake smpirun was asked to run (not ``smpirun -version``: a prepared simulation names the
    SimGrid that runs it)."""
    calls = tmp_path / "smpirun.calls"
    called = [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []
    return [call for call in called if call != ["-version"]]


@pytest.mark.simgrid
class TestRuns:
    def test_pingpong_on_a_mesh(self, tmp_path: Path, bin_dir: Path) -> None:
        done = run(tmp_path, "mesh", "--width", "2", "--height", "2", "--", PINGPONG, "-s", "1,1M", "-i", "2")
        assert done.returncode == 0, done.stderr
        out = records(done.stdout)
        assert [r["bytes"] for r in out] == [1, 1 << 20]
        assert all(r["app"] == "pingpong" and r["ranks"] == 4 for r in out)  # default: one rank per host
        for r in out:  # host-0 -> host-1: one 100 ns, 2 GB/s link
            assert r["oneway_s_min"] == pytest.approx(oneway(100e-9, 2e9, r["bytes"]), rel=1e-9)
        assert "smpirun-on: wrote platform " in done.stderr
        command = printed_command(done.stderr)
        assert command[:3] == ["smpirun", "-np", "4"]
        assert Path(option(command, "-hostfile")).read_text() == "host-0\nhost-1\nhost-2\nhost-3\n"
        assert command[-5:] == [str(bin_dir / "pingpong"), "-s", "1,1M", "-i", "2"]

    def test_second_call_reuses_the_platform(self, tmp_path: Path) -> None:
        first = run(tmp_path, "mesh", "--width", "2", "--height", "2", "--", PINGPONG, "-s", "1", "-i", "1")
        assert first.returncode == 0, first.stderr
        platform = Path(option(printed_command(first.stderr), "-platform"))
        assert platform.parent.parent == tmp_path / "cache" / "platforms"
        before = snapshot(platform.parent)
        # the same platform, its defaults spelled out (one in other units): the same directory, untouched
        again = run(tmp_path, "mesh", "--height", "2", "--width", "2", "--link-bw", "2000MBps", "--link-lat", "100ns",
                    "--", PINGPONG, "-s", "1", "-i", "1")  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert f"smpirun-on: reusing platform {platform}\n" in again.stderr
        assert "wrote platform" not in again.stderr
        assert option(printed_command(again.stderr), "-platform") == str(platform)
        assert snapshot(platform.parent) == before
        assert records(again.stdout) == records(first.stdout)
        other = run(tmp_path, "mesh", "--width", "2", "--height", "2", "--link-lat", "1us", "--", PINGPONG, "-s", "1")
        assert other.returncode == 0, other.stderr
        assert "wrote platform" in other.stderr
        assert Path(option(printed_command(other.stderr), "-platform")).parent != platform.parent

    def test_a_damaged_hostfile_or_platform_is_written_again(self, tmp_path: Path) -> None:
        """The cached hostfile and platform are checked before reuse: a hostfile cut to one line put both ranks on
        host-0 (1.05e-4 s instead of 5.25e-4 s), a truncated platform was a parse error on every rerun."""
        argv = ("torus", "--dims", "8x8", "--placement", "host-0,host-36", "--", PINGPONG, "-s", "1M", "-i", "1")
        first = run(tmp_path, *argv)
        assert first.returncode == 0, first.stderr
        command = printed_command(first.stderr)
        hostfile, platform = Path(option(command, "-hostfile")), Path(option(command, "-platform"))
        hostfile.write_text("host-0\n")
        platform.write_text(platform.read_text()[:300])
        again = run(tmp_path, *argv)
        assert again.returncode == 0, again.stderr
        assert records(again.stdout) == records(first.stdout)
        warnings = [line for line in again.stderr.splitlines() if line.startswith("warning:")]
        assert warnings == [
            f"warning: cached platform {platform.parent} is damaged ({platform.name} does not match its SHA-256): "
            "writing it again",
            f"warning: cached hostfile {hostfile} does not hold its placement: writing it again",
        ]
        assert hostfile.read_text() == "host-0\nhost-36\n"
        third = run(tmp_path, *argv)
        assert "warning:" not in third.stderr and "smpirun-on: reusing platform" in third.stderr

    def test_named_placement(self, tmp_path: Path) -> None:
        done = run(tmp_path, "mlfm", "--d", "2", "--placement", "allocation:1,2,2", "--", PINGPONG, "-s", "1,64K")
        assert done.returncode == 0, done.stderr
        model = build_platform("mlfm", {"d": 2})
        hosts = allocation_hosts(model, 1, 2, 2)
        command = printed_command(done.stderr)
        assert option(command, "-np") == "4"
        assert Path(option(command, "-hostfile")).read_text().split() == hosts
        latency, bandwidth = model.route_latency(hosts[0], hosts[1]), model.route_bandwidth(hosts[0], hosts[1])
        for r in records(done.stdout):
            assert r["oneway_s_min"] == pytest.approx(oneway(latency, bandwidth, r["bytes"]), rel=1e-9)

    def test_an_allocation_policy_places_any_family(self, tmp_path: Path) -> None:
        """The generators' vocabulary: every family's allocation policies (``random:3`` on a fat tree, whose hosts
        are ``server-*``), as ``python -m generators ... --placement`` takes them."""
        done = run(tmp_path, "fattree", "--radix", "4", "--placement", "random:3", "--np", "4", "--", PINGPONG, "-s",
                   "1", "-i", "1")  # fmt: skip
        assert done.returncode == 0, done.stderr
        tree = build_platform("fattree", {"radix": 4})
        hosts = place_ranks(tree, 4, "random:3")
        assert Path(option(printed_command(done.stderr), "-hostfile")).read_text().split() == hosts
        assert hosts != tree.host_names[:4]  # not the default order

    def test_a_ready_machine_file_is_placed_by_its_recorded_family(self, tmp_path: Path) -> None:
        """A platform file topolab wrote records its family: ``random:3`` places its hosts as on the family; a host
        list places any file; a named placement on a file without a family, an unknown host, or --placement beside
        --hostfile is one error, exit 2."""
        ready = REPO / "platforms" / "delta" / "delta-nominal.xml"
        done = run(tmp_path, str(ready), "--placement", "random:3", "--np", "4", "--", PINGPONG, "-s", "1", "-i", "1")
        assert done.returncode == 0, done.stderr
        model = build_platform("mesh", {"width": 16, "height": 32, "nbl": "nominal"})
        assert Path(option(printed_command(done.stderr), "-hostfile")).read_text().split() == place_ranks(
            model, 4, "random:3"
        )
        listed = run(tmp_path, str(ready), "--placement", "host-7,host-3", "--", PINGPONG, "-s", "1", "-i", "1")
        assert listed.returncode == 0, listed.stderr
        assert Path(option(printed_command(listed.stderr), "-hostfile")).read_text().split() == ["host-7", "host-3"]
        foreign = tmp_path / "foreign.xml"
        foreign.write_text(ready.read_text().replace("<!--", "<!-- not topolab's", 1).replace(": family ", ": "))
        for options, message in [
            ([str(foreign), "--placement", "random:3"], "records no topolab family to place by"),
            ([str(ready), "--placement", "host-0,nohost"], "names no host 'nohost' (hosts of delta-nominal.xml"),
            ([str(ready), "--placement", "random:3", "--hostfile", str(tmp_path / "h")], "both place the ranks"),
        ]:
            bad = run(tmp_path, *options, "--", PINGPONG)
            assert bad.returncode == 2 and message in bad.stderr and bad.stderr.count("\n") == 1

    @pytest.mark.parametrize(
        ("placement", "hops"),
        [
            (["--np", "2"], 1),
            (["--placement", "host-0,host-15"], 6),
            (["--placement", "host-5,host-6,host-7", "--np", "2"], 1),
        ],
    )
    def test_host_list_placement_and_np(self, tmp_path: Path, placement: list[str], hops: int) -> None:
        done = run(tmp_path, "mesh", "--width", "4", "--height", "4", *placement, "--", PINGPONG, "-s", "1", "-i", "1")
        assert done.returncode == 0, done.stderr
        assert option(printed_command(done.stderr), "-np") == "2"
        (record,) = records(done.stdout)
        assert record["ranks"] == 2
        assert record["oneway_s_min"] == pytest.approx(oneway(hops * 100e-9, 2e9, 1), rel=1e-9)

    def test_cfg_options_come_last_and_win(self, tmp_path: Path) -> None:
        # LV08 instead of the standard CM02: latency x 13.01, bandwidth x 0.97
        done = run(tmp_path, "crossbar", "--hosts", "2", "--cfg=network/model:LV08", "--cfg", "smpi/or:0:1e-6:0",
                   "--", PINGPONG, "-s", "1,1M", "-i", "1")  # fmt: skip
        assert done.returncode == 0, done.stderr
        command = printed_command(done.stderr)
        start = command.index(STANDARD_OPTIONS[0])
        assert command[start : start + len(STANDARD_OPTIONS) + 2] == [
            *STANDARD_OPTIONS, "--cfg=network/model:LV08", "--cfg=smpi/or:0:1e-6:0",
        ]  # fmt: skip
        small, large = records(done.stdout)
        assert small["oneway_s_min"] == pytest.approx(1e-6 + oneway(13.01 * 2e-6, 0.97e9, 1), rel=1e-9)
        assert large["oneway_s_min"] == pytest.approx(oneway(13.01 * 2e-6, 0.97e9, 1 << 20), rel=1e-9)  # rendezvous

    def test_statistics_say_what_the_run_cost_and_change_nothing_else(self, tmp_path: Path) -> None:
        args = ["crossbar", "--hosts", "2", "--", PINGPONG, "-s", "1K,1M", "-i", "3"]
        plain = run(tmp_path, *args)
        counted = run(tmp_path, *args[:3], "--statistics", *args[3:])
        assert plain.returncode == counted.returncode == 0, counted.stderr
        assert counted.stdout == plain.stdout
        assert "--log=ker_statistics.thres:info" in printed_command(counted.stderr)
        counts = solver_statistics(counted.stderr)
        assert counts is not None, counted.stderr
        # 2 sizes x 3 round trips: 12 messages at least, each with two dates (its latency paid, its last byte)
        assert counts["event_dates"] >= 12 * 2 and 0 < counts["solves"] <= counts["event_dates"] + 1
        assert 0 < counts["constraints_per_solve"] and 0 <= counts["solve_s"] <= counts["loop_wall_s"]
        assert solver_statistics(plain.stderr) is None
        assert "ker_statistics" not in plain.stderr

    def test_an_existing_xml_platform(self, tmp_path: Path, bin_dir: Path) -> None:
        write_platform(crossbar(4, link_lat=5e-6), tmp_path / "x.xml")
        (tmp_path / "hosts").write_text("host-3\nhost-0\nhost-1\n")
        app = os.path.relpath(bin_dir / "pingpong", tmp_path)  # relative to the current directory
        done = run(tmp_path, "x.xml", "--np", "2", "--", app, "-s", "1", "-i", "1", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        command = printed_command(done.stderr)
        assert option(command, "-platform") == str(tmp_path / "x.xml")
        assert Path(option(command, "-hostfile")).read_text() == "host-0\nhost-1\n"
        (record,) = records(done.stdout)
        assert record["oneway_s_min"] == pytest.approx(oneway(10e-6, 1e9, 1), rel=1e-9)
        given = run(tmp_path, "./x.xml", "--hostfile", "hosts", "--", app, "-s", "1", "-i", "1", cwd=tmp_path)
        assert given.returncode == 0, given.stderr
        assert option(printed_command(given.stderr), "-hostfile") == str(tmp_path / "hosts")
        assert option(printed_command(given.stderr), "-np") == "3"
        assert records(given.stdout)[0]["ranks"] == 3

    def test_a_compiled_platform_file(self, tmp_path: Path) -> None:
        built = run(tmp_path, "tofu", "--xyz", "1x1x1", "--placement", "shape:2x1x1", "--", PINGPONG, "-s", "1")
        assert built.returncode == 0, built.stderr
        library = Path(option(printed_command(built.stderr), "-platform"))
        assert library.suffix == ".so" and library.with_suffix(".params").is_file()
        for suffix in (".so", ".params"):
            (tmp_path / f"t{suffix}").write_bytes(library.with_suffix(suffix).read_bytes())
        (tmp_path / "t.so").chmod(0o755)
        done = run(tmp_path, "t.so", "--np", "2", "--", str(BIN / "pingpong"), "-s", "1", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        command = printed_command(done.stderr)
        assert option(command, "-platform") == str(tmp_path / "t.so")  # absolute: SimGrid dlopens it
        model = build_platform("tofu", {"xyz": "1x1x1"})
        assert Path(option(command, "-hostfile")).read_text().split() == model.host_names[:2]
        assert records(done.stdout)[0]["ranks"] == 2

    def test_the_app_exit_status_propagates(self, tmp_path: Path) -> None:
        source = tmp_path / "fail.c"
        source.write_text(
            "#include <mpi.h>\nint main(int argc, char **argv) {\n  int rank;\n  MPI_Init(&argc, &argv);\n"
            "  MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n  MPI_Finalize();\n  return rank == 0 ? 3 : 0;\n}\n"
        )
        compiled = subprocess.run(["smpicc", str(source), "-o", str(tmp_path / "fail")], capture_output=True, text=True)
        assert compiled.returncode == 0, compiled.stderr
        done = run(tmp_path, "crossbar", "--hosts", "2", "--", "./fail", cwd=tmp_path)
        assert done.returncode == 3
        assert "smpirun-on: error" not in done.stderr

    def test_the_simulation_dies_with_a_killed_smpirun_on(self, tmp_path: Path, bin_dir: Path) -> None:
        """The issue's finding: kill -9 of smpirun-on left smpimain running on."""
        own = tmp_path / "pingpong-killed-under-test"
        own.write_bytes((bin_dir / "pingpong").read_bytes())
        own.chmod(0o755)
        env = {**os.environ, "TOPOLAB_CACHE": str(tmp_path / "cache")}
        process = subprocess.Popen(
            [str(COMMAND), "crossbar", "--hosts", "2", "--", str(own), "-s", "1", "-i", "100000000"],
            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while subprocess.run(["pgrep", "-f", f"smpimain {own}"], capture_output=True).returncode != 0:
                assert time.monotonic() < deadline and process.poll() is None, "the simulation did not start"
                time.sleep(0.05)
        finally:
            process.kill()
            process.wait()
        deadline = time.monotonic() + 5
        while subprocess.run(["pgrep", "-f", f"smpimain {own}"], capture_output=True).returncode == 0:
            if time.monotonic() > deadline:
                subprocess.run(["pkill", "-KILL", "-f", f"smpimain {own}"])
                pytest.fail("smpimain outlived the SIGKILLed smpirun-on")
            time.sleep(0.05)


class TestCommandLine:
    def test_printed_command_is_the_one_run(self, tmp_path: Path, fake_smpirun: Path) -> None:
        done = run(tmp_path, "crossbar", "--hosts", "3", "--cfg=smpi/or:0:1e-6:0", "--", PINGPONG, "-s", "1",
                   path_first=fake_smpirun)  # fmt: skip
        assert done.returncode == 0, done.stderr
        command = printed_command(done.stderr)
        ((tmpdir_option, tmpdir, *called),) = fake_calls(tmp_path)  # the run's own temporary directory first:
        assert tmpdir_option == "-tmpdir" and Path(tmpdir).name.startswith("topolab-smpirun-")  # removed later
        assert called == command[1:]
        assert command == [
            "smpirun", "-np", "3", "-platform", option(command, "-platform"), "-hostfile", option(command, "-hostfile"),
            *DIES_WITH_SMPIRUN, *STANDARD_OPTIONS, "--cfg=smpi/or:0:1e-6:0", str(REPO / PINGPONG), "-s", "1",
        ]  # fmt: skip

    def test_keep_writes_the_run_files(self, tmp_path: Path, fake_smpirun: Path) -> None:
        keep = tmp_path / "kept"
        done = run(tmp_path, "mesh", "--width", "2", "--height", "3", "--np", "2", "--keep", str(keep), "--", PINGPONG,
                   path_first=fake_smpirun)  # fmt: skip
        assert done.returncode == 0, done.stderr
        command = printed_command(done.stderr)
        assert sorted(p.name for p in keep.iterdir()) == ["hostfile", "mesh-2x3.xml", "smpirun.sh"]
        assert option(command, "-platform") == str(keep / "mesh-2x3.xml")
        assert option(command, "-hostfile") == str(keep / "hostfile")
        assert (keep / "hostfile").read_text() == "host-0\nhost-1\n"
        script = (keep / "smpirun.sh").read_text()
        assert f"exec {shlex.join(command)} " in script

    def test_help(self, tmp_path: Path) -> None:
        top = run(tmp_path, "--help")
        assert top.returncode == 0
        assert "usage: smpirun-on FAMILY" in top.stdout and "threequads" in top.stdout
        family = run(tmp_path, "mesh", "--help")
        assert family.returncode == 0
        for name in ("--width", "--link-lat", "--placement", "--np", "--cfg", "--keep"):
            assert name in family.stdout


MESH = ["mesh", "--width", "2", "--height", "2"]
BAD_INPUTS = {  # "{tmp}" is the test's directory, with app (a program), plain (a text file), x.xml (4 hosts)
    "unknown family": (["hypercube", "--", "{tmp}/app"], "unknown family 'hypercube'"),
    "bad parameter": ([*MESH[:3], "--height", "0", "--", "{tmp}/app"], "height must be an integer >= 1, got 0"),
    "bad unit": ([*MESH, "--link-bw", "fast", "--", "{tmp}/app"], "link_bw must be"),
    "latency without a unit": ([*MESH, "--link-lat", "5", "--", "{tmp}/app"], "link_lat 5: give a unit (e.g. 5us or"),
    "missing parameter": ([*MESH[:3], "--", "{tmp}/app"], "the following arguments are required: --height"),
    "unknown option": ([*MESH, "--frob", "1", "--", "{tmp}/app"], "unrecognized arguments: --frob 1"),
    "more ranks than hosts": ([*MESH, "--np", "5", "--", "{tmp}/app"], "5 ranks do not fit on 4 hosts"),
    "unknown host": ([*MESH, "--placement", "host-0,host-7", "--", "{tmp}/app"], "has no host 'host-7'"),
    "unknown placement": (
        [*MESH, "--placement", "allocation:1,1,1", "--", "{tmp}/app"],
        "mesh has no placement 'allocation' (named placements: block, contiguous, random, random-chunks, stride; or a "
        "list of hosts: host-0,host-1)",
    ),
    "missing --": ([*MESH, "{tmp}/app"], "missing '--' before the program"),
    "no program": ([*MESH, "--"], "no program after '--'"),
    "program not found": ([*MESH, "--", "{tmp}/missing"], "program {tmp}/missing not found"),
    "program not executable": ([*MESH, "--", "{tmp}/plain"], "program {tmp}/plain is not executable"),
    "program is a directory": ([*MESH, "--", "{tmp}"], "program {tmp} is a directory"),
    "program not on PATH": ([*MESH, "--", "no-such-program-xyz"], "program 'no-such-program-xyz' not found on PATH"),
    "platform file missing": (["{tmp}/missing.xml", "--", "{tmp}/app"], "platform file {tmp}/missing.xml not found"),
    "compiled platform without .params": (["{tmp}/lonely.so", "--", "{tmp}/app"], "its parameter file"),
    "more ranks than file hosts": (
        ["{tmp}/x.xml", "--np", "5", "--", "{tmp}/app"],
        "5 ranks do not fit on the 4 hosts",
    ),
    "hostfile missing": (
        ["{tmp}/x.xml", "--hostfile", "{tmp}/nohosts", "--", "{tmp}/app"],
        "hostfile {tmp}/nohosts not found",
    ),
    # SimGrid itself would abort on these with a C++ backtrace, exit status 134:
    "hostfile host not in the platform": (
        ["{tmp}/x.xml", "--hostfile", "{tmp}/badhosts", "--", "{tmp}/app"],
        "hostfile {tmp}/badhosts, line 2: 'host-9' is not a host of {tmp}/x.xml",
    ),
    "cfg not NAME:VALUE": (
        [*MESH, "--cfg=garbage", "--", "{tmp}/app"],
        "--cfg=garbage: a SimGrid option is NAME:VALUE",
    ),
    "cfg unknown to SimGrid": ([*MESH, "--cfg=network/nope:1", "--", "{tmp}/app"], "no option 'network/nope'"),
    "cfg value SimGrid refuses": (
        [*MESH, "--cfg=network/model:NOPE", "--", "{tmp}/app"],
        "--cfg: Unable to find network model 'NOPE'. Valid values are: raw, LV08, CM02",
    ),
    # issue 19: every value checked, an empty one is an error (--keep '' wrote into the current directory)
    "empty family parameter": ([*MESH, "--nbl", "", "--", "{tmp}/app"], "nbl must be 'none', 'nominal' or"),
    "empty --keep": ([*MESH, "--keep", "", "--", "{tmp}/app"], "argument --keep: must not be empty"),
    "empty --placement": ([*MESH, "--placement", "", "--", "{tmp}/app"], "argument --placement: must not be empty"),
    "empty host in --placement": ([*MESH, "--placement", "host-0,,host-1", "--", "{tmp}/app"], "an empty host name"),
    "empty --hostfile": (["{tmp}/x.xml", "--hostfile", "", "--", "{tmp}/app"], "argument --hostfile: must not be"),
    "empty --np": ([*MESH, "--np", "", "--", "{tmp}/app"], "--np must be an integer >= 1, got ''"),
    "--np 0": ([*MESH, "--np", "0", "--", "{tmp}/app"], "--np must be an integer >= 1, got 0"),
    "--np not ASCII": ([*MESH, "--np", "\u0662", "--", "{tmp}/app"], "--np must be an integer >= 1, got '\u0662'"),
    "hostfile slots 0": (
        ["{tmp}/x.xml", "--hostfile", "{tmp}/zerohosts", "--", "{tmp}/app"],
        "hostfile {tmp}/zerohosts: bad line 'host-0:0' (HOST or HOST:N, N >= 1)",
    ),
    "platform too large": (
        ["crossbar", "--hosts", "1000000000", "--", "{tmp}/app"],
        "crossbar: too large to build: 1000000000 hosts",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_line_exit_2_and_nothing_runs(tmp_path: Path, fake_smpirun: Path, case: str) -> None:
    (tmp_path / "app").write_text("#!/bin/sh\n")
    (tmp_path / "app").chmod(0o755)
    (tmp_path / "plain").write_text("not a program\n")
    (tmp_path / "lonely.so").write_bytes(b"")
    (tmp_path / "badhosts").write_text("host-0\nhost-9\n")
    (tmp_path / "zerohosts").write_text("host-0:0\n")
    write_platform(crossbar(4), tmp_path / "x.xml")
    args, message = BAD_INPUTS[case]
    done = run(tmp_path, *(arg.format(tmp=tmp_path) for arg in args), path_first=fake_smpirun)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("smpirun-on: error: ")
    assert message.format(tmp=tmp_path) in done.stderr
    assert fake_calls(tmp_path) == []  # smpirun never started
    assert not (tmp_path / "cache" / "platforms").exists()  # and no platform written


def test_cfg_collective_algorithms_are_checked_against_smpi() -> None:
    # smpimain --help-coll of the SimGrid on PATH: an unknown algorithm is named with the known ones.
    from study_runner.simulation.simgrid_options import cfg_problem
    from study_runner.simulation.simgrid_options import collective_algorithms

    assert {"allreduce", "bcast", "alltoall"} <= set(collective_algorithms())
    assert "rdb" in collective_algorithms()["allreduce"]
    assert cfg_problem(["smpi/allreduce:rdb", "smpi/os:2.7e-05", "network/model:CM02"]) is None
    problem = cfg_problem(["smpi/allreduce:nope"])
    assert problem is not None and problem.startswith(
        "--cfg=smpi/allreduce:nope: SMPI has no allreduce algorithm 'nope'"
    )
    assert "rdb" in problem


def test_this_machine_is_its_calibrated_platform(tmp_path: Path) -> None:
    # docs/smpirun-on.md's validation example: the user's pi.c on the platform of this machine, whose one host has
    # this machine's cores at the calibrated speed and its measured intra-node path, all ranks on it.
    from lxml import etree

    from study_runner.simulation.compute import calibration
    from study_runner.simulation.node_memory import memory_bandwidth
    from study_runner.simulation.platform_files import node_memory
    from study_runner.tools.this_machine import intra_node

    binary = tmp_path / "pi"
    subprocess.run(["smpicc", "-O2", str(REPO / "docs/examples/pi.c"), "-o", str(binary), "-lm"], check=True)
    keep = tmp_path / "kept"
    # The machine's calibrations are in the default cache (measured there on first use, as a user's would be).
    command = [str(COMMAND), "this-machine", "--np", "2", "--compute", "benchmark", "--keep", str(keep), "--",
               str(binary), "2000000"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-600:]
    (record,) = records(done.stdout)
    assert record["ranks"] == 2 and record["error"] < 1e-9 and record["seconds"] > 0
    assert "this-machine: 1 host, " in done.stderr
    assert (keep / "hostfile").read_text() == "host-0\nhost-0\n"
    (xml,) = keep.glob("*.xml")
    (host,) = etree.parse(str(xml)).iter("host")
    assert host.get("core") == str(os.cpu_count())
    assert float(host.get("speed").removesuffix("f")) == calibration().flops
    (shm,) = (link for link in etree.parse(str(xml)).iter("link") if link.get("id", "").endswith("_shm"))
    assert float(shm.get("bandwidth").removesuffix("Bps")) == intra_node().bandwidth_Bps
    memory = memory_bandwidth()  # its memory too, recorded for --compute memory (the node never below one core)
    assert memory is not None
    assert node_memory(xml) == (max(memory.node_Bps, memory.core_Bps), memory.core_Bps)
