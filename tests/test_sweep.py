"""Sweeps: the file format and its errors, the table, the plots, the engines and the resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generators import build_platform
from study_runner.batch.engine import BatchJobs
from study_runner.batch.engine import Engine
from study_runner.batch.engine import job_script
from study_runner.errors import StudyError
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.sweeps.sweep import load_sweep
from study_runner.sweeps.sweep_cli import main
from study_runner.sweeps.sweep_table import best_rows
from study_runner.sweeps.sweep_table import rows
from tests.conftest import run_module

REPO = Path(__file__).resolve().parent.parent
SHIPPED = sorted((REPO / "sweeps").glob("*.toml"))

PINGPONG = """
name = "pp"
title = "ping-pong on crossbars"
[grid]
bw = ["1GBps", "2GBps"]
size = [1000, 100000]
[[zip]]
hosts = [2, 3]
lat = ["1us", "5us"]
[platform]
family = "crossbar"
hosts = "{hosts}"
link_bw = "{bw}"
link_lat = "{lat}"
[run]
app = "pingpong"
ranks = 2
args = ["-s", "{size}", "-i", "2"]
[output]
metric = "oneway_s_max"
[[output.plots]]
kind = "lines"
x = "size"
series = "bw"
facets = ["hosts"]
logx = true
[[output.plots]]
kind = "regime"
x = "size"
y = "hosts"
compare = "bw"
"""


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return run_module("study_runner.sweeps.sweep_cli", *args, tmp_path=tmp_path, timeout=600)


def read_table(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


class TestSweepFiles:
    def test_cartesian_times_zipped(self, tmp_path: Path) -> None:
        sweep = load_sweep(write(tmp_path, PINGPONG))
        assert sweep.variables == ("bw", "size", "hosts", "lat")
        assert len(sweep.points) == 2 * 2 * 2  # two grid axes of 2, one zipped axis of 2
        combos = {(p.variables["bw"], p.variables["size"], p.variables["hosts"]) for p in sweep.points}
        assert len(combos) == 8
        for point in sweep.points:  # zipped variables move together
            assert (point.variables["hosts"], point.variables["lat"]) in {(2, "1us"), (3, "5us")}
            assert sweep.platforms[point.platform].params == {
                "hosts": point.variables["hosts"],
                "link_bw": point.variables["bw"],
                "link_lat": point.variables["lat"],
            }
            assert point.args == ("-s", str(point.variables["size"]), "-i", "2")
        assert [p.id for p in sweep.points] == [f"point-{i}" for i in range(8)]
        assert len(sweep.platforms) == 2 * 2  # a platform per distinct (bw, hosts and lat)
        assert sweep.points[0].variables == {"bw": "1GBps", "size": 1000, "hosts": 2, "lat": "1us"}
        assert sweep.points[1].variables["hosts"] == 3  # the last axis varies fastest

    def test_list_prints_every_point_and_runs_nothing(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``--list``: a line per point (index, variables, platform, app and arguments), in process: no SimGrid."""
        path = write(tmp_path, PINGPONG)
        assert main([str(path), "--list", "--results", str(tmp_path / "results")]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == len(load_sweep(path).points) == 8
        index, variables, platform, run = lines[0].split("\t")
        assert (index, variables) == ("0", "bw=1GBps size=1000 hosts=2 lat=1us")
        assert platform.startswith("crossbar {") and json.loads(platform.split(" ", 1)[1])["hosts"] == 2
        assert run.startswith("pingpong ") and not (tmp_path / "results").exists()

    @pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
    def test_shipped_sweeps_load(self, path: Path) -> None:
        sweep = load_sweep(path)
        assert sweep.points and sweep.plots and sweep.metric
        what = [(p.platform, p.args, p.options, p.placement, p.allocation, p.neighbours) for p in sweep.points]
        simulations = {repr(point) for point in what}
        assert len(simulations) == len(sweep.points), "two points of a shipped sweep are the same simulation"

    def test_nbl_regime_sweep_has_at_least_200_points(self) -> None:
        sweep = load_sweep(REPO / "sweeps" / "nbl-regime-mesh.toml")
        assert len(sweep.points) >= 200
        assert {platform.family for platform in sweep.platforms.values()} == {"mesh"}
        assert {p.variables["nbl"] for p in sweep.points} == {"none", "2", "nominal"}

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            (lambda t: t.replace('family = "crossbar"', 'family = "hypercube"'), "unknown topology family 'hypercube'"),
            (lambda t: t.replace('family = "crossbar"', 'family = "{bw}"'), "unknown topology family '1GBps'"),
            (lambda t: t.replace('size = [1000, 100000]', "size = []"), r"grid.size is empty"),
            (lambda t: t.replace('hosts = [2, 3]\nlat = ["1us", "5us"]', ""), r"zip\[0\] is empty"),
            (lambda t: t.split("[grid]")[0] + "[platform]" + t.split("[platform]")[1].replace('"{hosts}"', "2")
             .replace('"{bw}"', '"1GBps"').replace('"{lat}"', '"1us"').replace('"{size}"', '"1"').split("[output]")[0],
             "the grid is empty"),
            (lambda t: t.replace("size = [1000, 100000]", "size = [1000, 100000"), "malformed TOML"),
            (lambda t: t.replace('lat = ["1us", "5us"]', 'lat = ["1us"]'), "must have one length"),
            (lambda t: t.replace('"{size}"', '"{sise}"'), "unknown variable 'sise'"),
            (lambda t: t.replace('link_lat = "{lat}"', 'link_lat = "{lat}"\nradix = 4'), "unknown key 'radix'"),
            (lambda t: t.replace('link_bw = "{bw}"', 'link_bw = "fast"'), "link_bw"),
            (lambda t: t.replace("ranks = 2", 'ranks = "{bw}"'), r"point 0 \(.*\): run.ranks: '1GBps' is not of"),
            (lambda t: t.replace("ranks = 2\n", ""), "run: missing 'ranks'"),
            (lambda t: t.replace('name = "pp"', 'name = "pp"\ncolour = 1'), "unknown key 'colour'"),
            (lambda t: t.replace('name = "pp"', 'name = "../pp"'), "name: '../pp' does not match"),
            (lambda t: t.replace('series = "bw"', 'series = "bandwidth"'), "unknown variable 'bandwidth'"),
            (lambda t: t.replace('kind = "regime"', 'kind = "pie"'), r"output.plots\[1\].kind: 'pie' is not one of"),
            (lambda t: t.replace('compare = "bw"', ""), "is missing 'compare'"),
            (lambda t: t.replace('metric = "oneway_s_max"', ""), "plots need output.metric"),
            (lambda t: t.replace('[grid]\nbw', '[grid]\nhosts = [1]\nbw'), "declared twice"),
            (lambda t: t.replace("[[zip]]", "[[zip]]\nbad = [[1, 2]]"), "is not of type 'string', 'number', 'b"),
            (lambda t: t.replace("ranks = 2\n", 'ranks = 2\nsize = "{hosts - 2}"\n'),
             "run.size: 0 is less than or equal to the minimum of 0"),
            # the findings: no cost bound, a template that hangs, a timeout of nan
            (lambda t: t.replace("size = [1000, 100000]", "size = [1000, 100000]\n" + "\n".join(
                f"axis{i} = [{', '.join(map(str, range(10)))}]" for i in range(9))),
             r"the grid has 8,000,000,000 points \(2 x 2 x 10 x 10 x 10 x 10 x 10 x 10 x 10 x 10 x 10 x 2\)"),
            (lambda t: t.replace('"{size}"', '"{10 ** 10 ** 8}"'), "more than 10000 digits or characters"),
            (lambda t: t.replace("ranks = 2\n", "ranks = 2\ntimeout = nan\n"), "timeout must be a finite number"),
            (lambda t: t.replace("ranks = 2\n", "ranks = 2\ntimeout = inf\n"), "timeout must be a finite number"),
        ],
    )  # fmt: skip
    def test_bad_sweep_files_are_one_error(self, tmp_path: Path, edit, message: str) -> None:
        with pytest.raises(StudyError, match=message):
            load_sweep(write(tmp_path, edit(PINGPONG)))

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (PINGPONG.replace('family = "crossbar"', 'family = "hypercube"'), "unknown topology family"),
            (PINGPONG.replace("size = [1000, 100000]", "size = []"), "is empty"),
            (PINGPONG.replace("[grid]", "[grid"), "malformed TOML"),
        ],
    )
    def test_cli_rejects_bad_files_before_anything_runs(self, tmp_path: Path, text: str, message: str) -> None:
        done = run_cli(str(write(tmp_path, text)), tmp_path=tmp_path)
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("scripts/sweep: error: ") and message in lines[0]
        assert not (tmp_path / "results").exists() and not (tmp_path / "cache").exists()

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(StudyError, match="cannot read sweep file"):
            load_sweep(tmp_path / "none.toml")


class TestTable:
    def test_rows_carry_inputs_and_records(self, tmp_path: Path) -> None:
        from study_runner.batch.execute import RunResult
        from study_runner.batch.runs import RunSpec

        sweep = load_sweep(write(tmp_path, PINGPONG))
        spec = RunSpec("x", "p", "pingpong", 2, timeout=1.0)
        results = [
            RunResult(spec, [], [{"bytes": 1, "app": "pingpong", "t": i}, {"bytes": 2, "t": 0.5}], False, 1.0)
            for i in range(len(sweep.points))
        ]
        table = rows(sweep, results, [f"k{i}" for i in range(len(sweep.points))])
        assert len(table) == 2 * len(sweep.points)
        first = table[0]
        assert first["point"] == 0 and first["bw"] == "1GBps" and first["hosts"] == 2
        assert first["app"] == "pingpong" and first["point_app"] == "pingpong"  # an input gives a record field way
        assert json.loads(first["params"]) == {"hosts": 2, "link_bw": "1GBps", "link_lat": "1us"}
        assert first["key"] == "k0" and first["cached"] is False

    def test_best_rows_reduce_hidden_variables(self) -> None:
        table = [
            {"alg": "a", "n": 1, "block": 1, "t": 5.0},
            {"alg": "a", "n": 1, "block": 2, "t": 3.0},
            {"alg": "b", "n": 1, "block": 1, "t": 4.0},
        ]
        assert {(r["alg"], r["t"]) for r in best_rows(table, ["alg", "n"], "t", "lower")} == {("a", 3.0), ("b", 4.0)}
        assert {(r["alg"], r["t"]) for r in best_rows(table, ["alg", "n"], "t", "higher")} == {("a", 5.0), ("b", 4.0)}
        with pytest.raises(StudyError, match="no numeric field 'x'"):
            best_rows(table, ["alg"], "x", "lower")


class TestBatchJobs:
    def test_slurm_job_script(self) -> None:
        jobs = BatchJobs(
            "slurm", jobs=3, cores=8, memory="16GiB", walltime="02:30:00", queue="batch", account="net42",
            directives=("--constraint=haswell",), prologue=("module load simgrid",), scheduler_host="127.0.0.1",
        )  # fmt: skip
        script = job_script(jobs)
        lines = script.splitlines()
        assert lines[0] == "#!/usr/bin/env bash"
        for directive in ("-p batch", "-A net42", "--cpus-per-task=8", "-t 02:30:00", "--constraint=haswell"):
            assert f"#SBATCH {directive}" in lines
        assert any(line.startswith("#SBATCH --mem=") for line in lines)
        assert "module load simgrid" in lines
        assert "export TOPOLAB_MEMORY_LIMIT=16384" in lines  # a simulation holds at most the job's memory
        worker = next(line for line in lines if "dask_worker" in line)
        assert "--resources MEMORY=16384" in worker  # what the simulations running at once share
        assert worker.startswith(f"{sys.executable} -m distributed.cli.dask_worker tcp://127.0.0.1:")
        assert "--nthreads 8" in worker  # one thread per core: each thread waits on one smpirun
        assert "--nworkers 1" in worker or "--nprocs" not in worker
        assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0

    def test_pbs_job_script(self) -> None:
        jobs = BatchJobs("pbs", cores=4, walltime="00:45:00", queue="q", account="acc", scheduler_host="127.0.0.1")
        script = job_script(jobs)
        lines = script.splitlines()
        assert "#PBS -q q" in lines and "#PBS -A acc" in lines and "#PBS -l walltime=00:45:00" in lines
        assert any(line.startswith("#PBS -l select=1:ncpus=4") for line in lines)
        assert "--nthreads 4" in next(line for line in lines if "dask_worker" in line)
        assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"walltime": "90 minutes"}, "walltime must be"),
            ({"cores": 0}, "cores must be an integer >= 1"),
            ({"jobs": -1}, "jobs must be an integer >= 1"),
            ({"memory": "lots"}, "memory must be a size"),
            ({"system": "lsf"}, "batch system must be one of"),
            ({"directives": ("a\nb",)}, "one line"),
        ],
    )
    def test_bad_batch_configuration(self, change: dict, message: str) -> None:
        with pytest.raises(StudyError, match=message):
            BatchJobs(**{"system": "slurm", **change})

    def test_cli_prints_the_job_script(self, tmp_path: Path) -> None:
        done = run_cli(
            str(write(tmp_path, PINGPONG)), "--slurm", "--cores", "2", "--walltime", "00:10:00",
            "--scheduler-host", "127.0.0.1", "--job-script", tmp_path=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "#SBATCH -t 00:10:00" in done.stdout and "dask_worker" in done.stdout
        assert not (tmp_path / "results").exists()

    def test_job_script_needs_a_batch_system(self, tmp_path: Path) -> None:
        done = run_cli(str(write(tmp_path, PINGPONG)), "--job-script", tmp_path=tmp_path)
        assert done.returncode == 2 and "--job-script needs --slurm or --pbs" in done.stderr

    def test_engine_is_one_of_three(self) -> None:
        with pytest.raises(StudyError, match="not both"):
            Engine(scheduler="tcp://127.0.0.1:1", batch=BatchJobs("slurm"))

    def test_two_local_engines_at_once_listen_on_free_loopback_ports_only(self) -> None:
        """The issue's finding: each local run started a dashboard on port 8787, and a second one at once warned
        "Port 8787 is already in use"."""
        with Engine(workers=1).client(1) as first, Engine(workers=1).client(1) as second:
            for client in (first, second):
                http = client.cluster.scheduler.http_server
                (port,) = {s.getsockname() for s in http._sockets.values()}
                assert port[0] == "127.0.0.1" and port[1] != 8787


def expected_oneway(point_variables: dict, size: int) -> float:
    platform = build_platform(
        "crossbar",
        {"hosts": point_variables["hosts"], "link_bw": point_variables["bw"], "link_lat": point_variables["lat"]},
    )
    return platform.route_latency("host-0", "host-1") + (size + SMPI_ENVELOPE_BYTES) / platform.route_bandwidth(
        "host-0", "host-1"
    )


def own_copy(tmp_path: Path, bin_dir: Path, name: str) -> Path:
    """A copy of the pingpong app at a path of this test only (so pgrep finds its simulations alone)."""
    (tmp_path / "bin").mkdir(exist_ok=True)
    own = tmp_path / "bin" / name
    own.write_bytes((bin_dir / "pingpong").read_bytes())
    own.chmod(0o755)
    return own


def start_sweep(path: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    """The sweep CLI on one worker, in the background."""
    command = [sys.executable, "-m", "study_runner.sweeps.sweep_cli", str(path), "--workers", "1",
               "--results", str(tmp_path / "results"), "--cache", str(tmp_path / "cache")]  # fmt: skip
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.simgrid
class TestRunningSweeps:
    def test_run_table_plots_and_rerun_from_cache(self, tmp_path: Path, bin_dir: Path) -> None:
        path = write(tmp_path, PINGPONG)
        done = run_cli(str(path), "--workers", "2", tmp_path=tmp_path)
        assert done.returncode == 0, done.stderr
        out = tmp_path / "results" / "pp"
        table = read_table(out / "points.parquet")
        assert len(table) == 8
        for row in table:
            assert row["oneway_s_max"] == pytest.approx(expected_oneway(row, row["size"]), rel=1e-9)
            assert row["cached"] is False and row["sim_wall_s"] > 0
        summary = json.loads((out / "sweep.json").read_text())
        assert summary["points"] == 8 and summary["simulated"] == 8 and summary["cached"] == 0
        for plot in ("lines-size-by-bw", "regime-size-hosts-by-bw"):
            assert (out / f"{plot}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and (out / f"{plot}.svg").is_file()
        assert "8/8 points" in done.stderr

        again = run_cli(str(path), tmp_path=tmp_path)
        assert again.returncode == 0, again.stderr
        assert json.loads((out / "sweep.json").read_text())["simulated"] == 0
        rerun = read_table(out / "points.parquet")
        assert all(row["cached"] for row in rerun)
        strip = ("cached",)
        assert [{k: v for k, v in r.items() if k not in strip} for r in rerun] == [
            {k: v for k, v in r.items() if k not in strip} for r in table
        ]  # bit-identical results, measured costs included

        # Entries that parse but were edited are not results: emptied, or a value changed (the 47 rows
        # for 48 points, and a time of 123.0 s used as is).
        entries = sorted((tmp_path / "cache").glob("??/*.json"))
        assert len(entries) == 8
        emptied, edited = entries[2], entries[5]
        emptied.write_text(json.dumps({**json.loads(emptied.read_text()), "records": []}))
        entry = json.loads(edited.read_text())
        entry["records"][0]["oneway_s_max"] = 123.0
        edited.write_text(json.dumps(entry))
        third = run_cli(str(path), tmp_path=tmp_path)
        assert third.returncode == 0, third.stderr
        warned = sorted(line.split()[3] for line in third.stderr.splitlines() if line.startswith("warning: cache"))
        assert warned == sorted([str(emptied), str(edited)])
        assert json.loads((out / "sweep.json").read_text())["simulated"] == 2
        strip = ("cached", "sim_wall_s", "sim_peak_memory_mib")
        assert [{k: v for k, v in r.items() if k not in strip} for r in read_table(out / "points.parquet")] == [
            {k: v for k, v in r.items() if k not in strip} for r in table
        ]

    def test_own_binary_relative_to_the_sweep_file(self, tmp_path: Path, bin_dir: Path) -> None:
        (tmp_path / "mine").mkdir()
        (tmp_path / "mine" / "bench").write_bytes((bin_dir / "pingpong").read_bytes())
        (tmp_path / "mine" / "bench").chmod(0o755)
        text = PINGPONG.replace('app = "pingpong"', 'app = "mine/bench"').replace("size = [1000, 100000]", "size = [8]")
        done = run_cli(str(write(tmp_path, text)), tmp_path=tmp_path)
        assert done.returncode == 0, done.stderr
        table = read_table(tmp_path / "results" / "pp" / "points.parquet")
        assert {row["point_app"] for row in table} == {"mine/bench"}  # the app prints "app" too: its own

    def test_failing_point_is_one_error_and_no_results(self, tmp_path: Path, bin_dir: Path) -> None:
        text = PINGPONG.replace('args = ["-s", "{size}", "-i", "2"]', 'args = ["-s", "{size}", "-i", "{hosts - 2}"]')
        done = run_cli(str(write(tmp_path, text)), "--workers", "1", tmp_path=tmp_path)
        assert done.returncode == 2
        assert "smpirun failed" in done.stderr or "error" in done.stderr
        assert not (tmp_path / "results" / "pp").exists()

    def test_existing_scheduler(self, tmp_path: Path, bin_dir: Path) -> None:
        from dask.distributed import LocalCluster

        path = write(tmp_path, PINGPONG.replace("size = [1000, 100000]", "size = [64]"))
        with LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            dashboard_address=":0",
        ) as cluster:
            status = main(
                [str(path), "--scheduler", cluster.scheduler_address, "--results", str(tmp_path / "results"),
                 "--cache", str(tmp_path / "cache")]
            )  # fmt: skip
        assert status == 0
        summary = json.loads((tmp_path / "results" / "pp" / "sweep.json").read_text())
        assert summary["simulated"] == 4 and summary["engine"].startswith("the Dask scheduler at tcp://127.0.0.1:")

    def test_sigkill_then_resume_loses_nothing(self, tmp_path: Path, bin_dir: Path) -> None:
        """Kill the sweep with SIGKILL while simulations run: every cache entry is whole, the results
        directory is untouched, and the rerun simulates only the points that had not finished."""
        own = own_copy(tmp_path, bin_dir, "pingpong-under-test")
        text = (
            PINGPONG.replace("size = [1000, 100000]", "size = [1000, 10000, 100000, 1000000]")
            .replace('"-i", "2"', '"-i", "300"')
            .replace('app = "pingpong"', f'app = "{own}"')
        )
        path = write(tmp_path, text)
        process = start_sweep(path, tmp_path)
        entries: list[Path] = []
        deadline = time.monotonic() + 300
        while len(entries) < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
            entries = list((tmp_path / "cache").glob("*/*.json"))
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        finished = list((tmp_path / "cache").glob("*/*.json"))
        assert 3 <= len(finished) < 16, "the sweep was not killed in the middle"
        for entry in finished:
            assert json.loads(entry.read_text())["records"]  # no torn entry
        assert not (tmp_path / "results" / "pp").exists()
        assert len(list((tmp_path / "results").glob(".pp.work-*"))) == 1  # the killed run's work files
        deadline = time.monotonic() + 30  # the simulation in flight ends (test_no_orphan_after_sigkill)
        while subprocess.run(["pgrep", "-f", str(own)], capture_output=True).returncode == 0:
            assert time.monotonic() < deadline, "a simulation outlived the killed sweep"
            time.sleep(0.1)

        done = run_cli(str(path), "--workers", "1", tmp_path=tmp_path)
        assert done.returncode == 0, done.stderr
        summary = json.loads((tmp_path / "results" / "pp" / "sweep.json").read_text())
        assert summary["points"] == 16
        assert summary["cached"] == len(finished) and summary["simulated"] == 16 - len(finished)
        table = read_table(tmp_path / "results" / "pp" / "points.parquet")
        assert sorted(row["point"] for row in table) == list(range(16))
        assert not list((tmp_path / "results").glob(".pp.*"))  # the abandoned work directory is gone
        for row in table:
            assert row["oneway_s_max"] == pytest.approx(expected_oneway(row, row["size"]), rel=1e-9)

    def test_no_orphan_after_sigkill(self, tmp_path: Path, bin_dir: Path) -> None:
        """A simulation in flight dies with a SIGKILLed sweep (parent-death signal), not seconds later."""
        own = own_copy(tmp_path, bin_dir, "long-pingpong-under-test")
        text = (
            PINGPONG.replace("size = [1000, 100000]", "size = [1000]")
            .replace('"-i", "2"', '"-i", "400000"')  # about 10 s of simulation
            .replace('app = "pingpong"', f'app = "{own}"')
        )
        process = start_sweep(write(tmp_path, text), tmp_path)
        try:
            deadline = time.monotonic() + 60
            while subprocess.run(["pgrep", "-f", str(own)], capture_output=True).returncode != 0:
                assert time.monotonic() < deadline and process.poll() is None, "the simulation did not start"
                time.sleep(0.05)
            time.sleep(0.5)
        finally:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        deadline = time.monotonic() + 3
        while subprocess.run(["pgrep", "-f", str(own)], capture_output=True).returncode == 0:
            if time.monotonic() > deadline:
                subprocess.run(["pkill", "-f", str(own)])
                pytest.fail("the simulation outlived the SIGKILLed sweep")
            time.sleep(0.05)
        assert not list((tmp_path / "cache").glob("*/*.json"))


def test_stop_simulations_kills_what_runs(tmp_path: Path) -> None:
    """A failed or interrupted batch stops the simulations still running in this process."""
    import threading

    from study_runner.simulation.smpi import allow_simulations
    from study_runner.simulation.smpi import run_smpirun_measured
    from study_runner.simulation.smpi import stop_simulations

    marker = tmp_path / "still-running"
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            run_smpirun_measured(["sh", "-c", f"sleep 60; touch {marker}"], tmp_path, 120, "long")
        except StudyError as err:
            outcome.append(err)

    allow_simulations()
    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    stop_simulations()
    thread.join(timeout=10)
    allow_simulations()
    assert not thread.is_alive()
    assert outcome and "long: stopped" in str(outcome[0])
    assert subprocess.run(["pgrep", "-f", f"touch {marker}"], capture_output=True).returncode == 1
