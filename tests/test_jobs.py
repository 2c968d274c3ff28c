"""Several jobs on one machine (``study_runner.simulation.jobs``, ``scripts/run-jobs``): hosts from the machine's
allocation policy, a job alone taking exactly its smpirun time, jobs in their own partitions feeling nothing of each
other, jobs placed at random slowing each other down, and bad input as one error with nothing run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generators import TopologyError
from generators import build_platform
from generators import place_ranks
from generators import platform_suffix
from generators import write_hostfile
from generators import write_platform
from generators.model import Platform
from study_runner.simulation.compute import SIMULATED_TIME_OPTIONS
from study_runner.simulation.compute import compute_timing
from study_runner.simulation.jobs import Job
from study_runner.simulation.jobs import allocate
from study_runner.simulation.jobs import cables_per_job
from study_runner.simulation.jobs import run_jobs
from study_runner.simulation.smpi import run_smpirun_measured
from study_runner.simulation.smpi import smpirun_command
from study_runner.tools.run_jobs import main as run_jobs_main
from tests.conftest import BIN
from tests.conftest import Edit
from tests.conftest import apply_edit
from tests.conftest import edit_cases

TORUS = build_platform("torus", {"dims": "4x4x2"})
A2A = ("-s", "256K", "-i", "1", "-w", "0")


def job(name: str, ranks: int | None = 16, app: str = "alltoall", args: tuple[str, ...] = A2A, **more: object) -> Job:
    return Job(name, Path("build/bin").absolute() / app, args, ranks, **more)  # type: ignore[arg-type]


class TestAllocation:
    def test_jobs_take_the_next_free_hosts_of_the_policy(self) -> None:
        placed = allocate(TORUS, [job("a", 5), job("b", 6, ranks_per_node=2)], "random:3")
        order = place_ranks(TORUS, None, "random:3")
        assert placed["a"] == order[:5] and placed["b"] == [h for h in order[5:8] for _ in range(2)]

    def test_own_placements_first_the_policy_fills_around_them(self) -> None:
        placed = allocate(TORUS, [job("a", 16), job("b", 16, placement="block:4x4x1@0,0,0")])
        assert placed["b"] == TORUS.host_names[:16] and placed["a"] == TORUS.host_names[16:]

    def test_the_background_takes_every_host_left_free(self) -> None:
        placed = allocate(TORUS, [job("bg", None, ranks_per_node=2), job("a", 5)], "random:3")
        order = place_ranks(TORUS, None, "random:3")
        assert placed["a"] == order[:5] and placed["bg"] == [h for h in order[5:] for _ in range(2)]
        with pytest.raises(TopologyError, match=r"one background job at most"):
            allocate(TORUS, [job("b1", None), job("b2", None)])
        with pytest.raises(TopologyError, match=r"job bg: the other jobs leave no host of torus-4x4x2 free"):
            allocate(TORUS, [job("a", 32), job("bg", None)])

    @pytest.mark.parametrize(
        ("jobs", "message"),
        [
            ([job("a", 20), job("b", 13)], "job b: 13 ranks need 13 hosts; 12 of torus-4x4x2's 32 are free"),
            ([job("a", 4, placement="block:2x2x1"), job("b", 4, placement="block:2x2x1@1,1,0")],
             "jobs a and b both use host-5: a job's hosts are its own"),
            ([job("a", 4, placement="packed:1")], "torus has no placement 'packed'"),
        ],
    )  # fmt: skip
    def test_jobs_that_do_not_fit_are_one_error(self, jobs: list[Job], message: str) -> None:
        with pytest.raises(TopologyError, match=message):
            allocate(TORUS, jobs)


def test_the_cables_two_jobs_share_are_where_they_meet() -> None:
    """Two 16-rank all-to-alls on a dragonfly of 5 groups: whole groups each (contiguous) share no cable; hosts
    drawn at random share 30, on which both jobs' flows add up (docs/jobs.md: their measured slowdowns)."""
    dragonfly = build_platform("dragonfly", {"groups": 5, "routers": 2, "hosts": 4, "global_ports": 2})
    for allocation, shared in (("contiguous", 0), ("random:1", 30)):
        placed = allocate(dragonfly, [job("a"), job("b")], allocation)
        flows = {name: [(s, d) for s in hosts for d in hosts if s != d] for name, hosts in placed.items()}
        cables = cables_per_job(dragonfly, flows)
        assert len(set(cables["a"]) & set(cables["b"])) == shared


def written(platform: Platform, directory: Path) -> Path:
    path = directory / f"{platform.name}{platform_suffix(platform)}"
    write_platform(platform, path)
    return path


@pytest.mark.simgrid
class TestJobsTogether:
    @pytest.mark.parametrize("online", [False, True], ids=["replayed", "online"])
    @pytest.mark.parametrize(("app", "args"), [("alltoall", A2A), ("exchange", ("-p", "3", "-s", "1M", "-i", "2"))])
    def test_a_job_alone_takes_exactly_its_smpirun_time(
        self, app: str, args: tuple[str, ...], online: bool, tmp_path: Path
    ) -> None:
        path = written(TORUS, tmp_path)
        (alone,) = run_jobs(TORUS, path, [job("j", 16, app, args)], tmp_path, "random:5", online=online)
        hosts = place_ranks(TORUS, 16, "random:5")
        write_hostfile(hosts, tmp_path / "hosts")
        binary = Path("build/bin").absolute() / app
        command = smpirun_command(binary, args, tmp_path / f"{TORUS.name}.xml", tmp_path / "hosts", 16,
                                  SIMULATED_TIME_OPTIONS)  # fmt: skip
        online = compute_timing(run_smpirun_measured(command, tmp_path, 120, "online").stderr)["simulated_s"]
        assert alone.shared_s == alone.alone_s and f"{alone.alone_s:.15f}" == f"{online:.15f}"
        assert alone.hosts == tuple(hosts)

    def test_jobs_in_their_own_partitions_feel_nothing_of_each_other(self, tmp_path: Path) -> None:
        """Two planes of a 4x4x2 torus, each closed under dimension-order routing (its own rings), as Blue Gene/Q
        partitions are: slowdown exactly 1. The same jobs on hosts drawn at random share links: slower."""
        path = written(TORUS, tmp_path)
        planes = [job("a", placement="block:4x4x1@0,0,0"), job("b", placement="block:4x4x1@0,0,1")]
        assert [t.slowdown for t in run_jobs(TORUS, path, planes, tmp_path / "planes", "contiguous")] == [1.0, 1.0]
        mixed = run_jobs(TORUS, path, [job("a"), job("b")], tmp_path / "random", "random:1")
        assert all(t.slowdown > 1.1 for t in mixed), [t.slowdown for t in mixed]

    def test_background_traffic_reaches_a_job_only_through_shared_cables(self, tmp_path: Path) -> None:
        """An all-to-all of 16 ranks with random shift permutations on every other host of a 5-group dragonfly:
        in whole groups of its own (contiguous) it feels nothing (1 to 1e-6: SimGrid's sharing solver rounds the
        rates of flows that share no link with it differently when there are more flows); among the background's
        hosts (random) it slows down by a third."""
        dragonfly = build_platform("dragonfly", {"groups": 5, "routers": 2, "hosts": 4, "global_ports": 2})
        path = written(dragonfly, tmp_path)
        noise = job("noise", None, "shift", ("-R", "1", "-s", "256K", "-i", "1", "-w", "0", "-S", "1,2,3,4,5,6,7"))
        for allocation, low, high in (("contiguous", 1 - 1e-5, 1 + 1e-5), ("random:1", 1.25, 1.45)):
            times = {t.job: t for t in run_jobs(dragonfly, path, [job("a"), noise], tmp_path / allocation, allocation)}
            assert times["noise"].ranks == 24 and low <= times["a"].slowdown <= high, times["a"].slowdown

    def test_two_different_apps_in_one_simulation(self, tmp_path: Path) -> None:
        """An all-to-all beside an exchange on a fat tree, hosts drawn at random, each timed: the exchange's
        bottleneck is its rank 0's own cable (7 flows at once), which no other job uses, so it feels next to nothing
        (its barriers' small messages cross shared uplinks); the all-to-all's flows meet the exchange's in the
        leaves' uplinks, and it slows down. A job that starts after
        the others have ended feels nothing."""
        tree = build_platform("fattree", {"radix": 8})
        path = written(tree, tmp_path)
        exchange = job("x", 8, "exchange", ("-p", "7", "-s", "1M", "-i", "2"))
        a2a = job("a2a", 24, "alltoall", ("-s", "1M", "-i", "2", "-w", "0"))
        times = {t.job: t for t in run_jobs(tree, path, [a2a, exchange], tmp_path / "together", "random:2")}
        assert set(times) == {"a2a", "x"} and 1.0 < times["x"].slowdown < 1.0001 and times["a2a"].slowdown > 1.01
        late = Job(exchange.name, exchange.app, exchange.args, exchange.ranks, start_s=10.0)
        later = {t.job: t for t in run_jobs(tree, path, [a2a, late], tmp_path / "later", "random:2")}
        # (its time is its end minus its start: 10 s later, the same to float rounding of the clock)
        assert later["x"].slowdown == 1.0 and later["x"].alone_s == pytest.approx(times["x"].alone_s, rel=1e-9)


def test_two_apps_each_verified_in_their_recording(tmp_path: Path) -> None:
    """An all-to-all and a shift permutation, both with --verify (each rank checks every byte it received: a wrong
    byte fails the recording, exit 1), 16 ranks each on a 4x4x2 torus: both recorded, replayed together and alone.
    At 16 ranks their traces' reduce actions once made SimGrid 4.1's replayer free a buffer it did not own (patch
    0017)."""
    path = written(TORUS, tmp_path)
    a2a = job("a2a", 16, "alltoall", ("-s", "64K", "-i", "1", "-w", "0", "--verify"))
    shift = job("shift", 16, "shift", ("-R", "1", "-s", "1M", "-i", "2", "-w", "0", "--verify"))
    times = {t.job: t for t in run_jobs(TORUS, path, [a2a, shift], tmp_path / "run", "random:1")}
    assert set(times) == {"a2a", "shift"}
    assert all(t.alone_s > 0 and t.shared_s >= t.alone_s for t in times.values()), times
    traced = (tmp_path / "run" / "record-a2a").rglob("*.txt")
    assert any("allreduce" in f.read_text() or "reduce" in f.read_text() for f in traced)  # the actions that aborted


@pytest.mark.simgrid
class TestOnlineJobs:
    """Several app binaries in one SMPI simulation (``run_jobs(online=True)``, SimGrid patch 0018)."""

    def test_two_apps_each_verified_and_timed(self, tmp_path: Path) -> None:
        """An all-to-all and a shift permutation, each --verify (a wrong byte: exit 1, the run fails), on hosts drawn
        at random: both run, both slower together than alone."""
        a2a = job("a2a", 16, "alltoall", ("-s", "64K", "-i", "1", "-w", "0", "--verify"))
        shift = job("shift", 16, "shift", ("-R", "1", "-s", "1M", "-i", "2", "-w", "0", "--verify"))
        times = run_jobs(TORUS, written(TORUS, tmp_path), [a2a, shift], tmp_path, "random:1", online=True)
        assert [t.job for t in times] == ["a2a", "shift"]
        assert all(t.shared_s > t.alone_s > 0 for t in times), times

    def test_online_and_replayed_jobs_agree(self, tmp_path: Path) -> None:
        """Where both apply (communication only, no modelled computation), the two ways give each job the same time
        alone and shared, the second starting later (start_s): a trace's replay is the run's (simulation.replay)."""
        jobs = [
            job("a", 16, "alltoall", A2A),
            job("b", 16, "shift", ("-R", "2", "-s", "512K", "-i", "2"), start_s=1e-4),
        ]
        path = written(TORUS, tmp_path)
        ways = {online: run_jobs(TORUS, path, jobs, tmp_path / str(online), "random:3", online=online)
                for online in (False, True)}  # fmt: skip
        for replayed, online in zip(ways[False], ways[True], strict=True):
            assert replayed.hosts == online.hosts
            assert (online.alone_s, online.shared_s) == (replayed.alone_s, replayed.shared_s)  # measured: to the bit
        assert all(t.slowdown > 1.01 for t in ways[True])

    def test_a_failing_job_fails_the_run_with_its_status(self, tmp_path: Path) -> None:
        """A job whose app refuses its arguments (exit 2) beside a good one: the run fails, naming the job's rank."""
        from study_runner.errors import StudyError

        bad = job("bad", 4, "shift", ("-S", "9"))  # a shift needs more ranks than 9
        with pytest.raises(StudyError, match=r"rank 0 of bad \(on host-\d+\) returned 2 from main; exit status 2"):
            run_jobs(TORUS, written(TORUS, tmp_path), [job("good", 4), bad], tmp_path, "contiguous", online=True)


def jobs_file(tmp_path: Path, text: str) -> Path:
    """A jobs file on the 4x4x2 torus: ``text``'s top-level keys, the platform, then its jobs; an app ``/bin/true``
    is a stand-in script, never run (run-jobs refuses an executable not built for SMPI, ``/bin/true`` itself)."""
    stand_in = tmp_path / "true"
    stand_in.write_text("#!/bin/sh\n")
    stand_in.chmod(0o755)
    text = text.replace('"/bin/true"', f'"{stand_in}"')
    head, _, jobs = text.partition("[[jobs]]")
    path = tmp_path / "jobs.toml"
    path.write_text(head + '[platform]\nfamily = "torus"\ndims = "4x4x2"\n[[jobs]]' + jobs)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 40\n', "job a: 40 ranks need 40 hosts; 32 of"),
        ('[[jobs]]\nname = "a"\napp = "no_such_app"\nranks = 4\n', "jobs[0]: app binary"),
        ('[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 4\nhost = 1\n', "jobs[0]: unknown key 'host'"),
        ('[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 4\nbackground = true\n', "one of ranks or background"),
        ('[[jobs]]\nname = "a"\napp = "/bin/true"\n', "needs exactly one of ranks or background"),
        ('[occupied]\nsizes = [2]\n[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 4\n',
         "occupied: missing 'occupancy'"),
        ('[occupied]\nsizes = [2]\noccupancy = 2\n[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 4\n',
         "fill: occupancy must be a fraction"),
        ('[occupied]\nsizes = [8]\noccupancy = 1\n[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 4\n',
         "job a: 4 ranks need 4 hosts; 0 of torus-4x4x2's 32 are free"),
        ('allocation = "packed:1"\n[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 4\n', "no placement 'packed'"),
        ('[[jobs]]\nname = "a"\napp = "/usr/bin/env"\nranks = 4\n',
         "jobs[0]: program /usr/bin/env was not built with SimGrid's compiler wrappers"),
        ('[[jobs]]\nname = "a"\napp = "/bin/true"\nranks = 4\nplacement = "block:2x2x1"\n'
         '[[jobs]]\nname = "b"\napp = "/bin/true"\nranks = 4\nplacement = "block:2x2x1@1,0,0"\n',
         "jobs a and b both use host-1"),
    ],
)  # fmt: skip
def test_bad_jobs_files_are_one_error_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    out = tmp_path / "out.json"
    assert run_jobs_main([str(jobs_file(tmp_path, text)), "--json", str(out)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("scripts/run-jobs: error: ") and message in errors[0]
    assert not out.exists()


@pytest.mark.simgrid
@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("", "names no job"),
        ("a 0 host-0\n", "expected 'JOB START_S HOST TRACE'"),
        ("a -1 host-0 t\n", "expected 'JOB START_S HOST TRACE'"),
        ("a 0 host-0 t\na 1 host-1 t\n", "job a starts at two times"),
        ('a"b 0 host-0 t\n', "a job's name is letters, digits"),
        ("a 0 host-99 t\n", "job a: the platform has no host 'host-99'"),
        ("a 0 host-0 t%2\n", "'%' is followed by two hexadecimal digits"),
    ],
)
def test_the_replayer_refuses_a_bad_jobs_file_in_one_line(tmp_path: Path, lines: str, message: str) -> None:
    """jobs_run's own checks (what run_jobs writes is always well formed; a hand-written file may not be)."""
    import subprocess

    from study_runner.simulation.jobs import JOBS_RUN

    (tmp_path / "jobs").write_text(lines)
    done = subprocess.run([str(JOBS_RUN), str(written(TORUS, tmp_path)), str(tmp_path / "jobs")],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    errors = [line for line in done.stderr.splitlines() if line.startswith("jobs_run: error:")]
    assert done.returncode == 2 and len(errors) == 1 and message in errors[0] and done.stdout == ""


SHARED_SWEEP = """
name = "shared"
[grid]
allocation = ["contiguous", "random:1"]
[platform]
family = "torus"
dims = "4x4x2"
[run]
app = "shift"
ranks = 16
args = ["-s", "64K", "-i", "1", "-w", "0"]
allocation = "{allocation}"
[[run.neighbours]]
name = "background"
app = "shift"
args = ["-R", "1", "-S", "1,2,3,4", "-s", "{16 * 16}K", "-i", "4", "-w", "0"]
background = true
[output]
metric = "slowdown"
"""
"""A sweep of a shared machine: an all-to-all beside a background, two allocations (tests/test_slurm.py runs one)."""


class TestJobsInRuns:
    """A study run's or sweep point's neighbours (``run.neighbours``, ``run.allocation``): one run grammar."""

    def test_neighbours_are_rendered_and_held_by_the_run(self, tmp_path: Path) -> None:
        from study_runner.sweeps.sweep import load_sweep

        path = tmp_path / "shared.toml"
        path.write_text(SHARED_SWEEP)
        points = load_sweep(path).points
        assert [p.allocation for p in points] == ["contiguous", "random:1"]
        (background,) = points[0].neighbours
        assert (background.name, background.ranks) == ("background", None) and "256K" in background.args

    @edit_cases(
        (('name = "background"', 'name = "measured"'), "run.neighbours: 'measured' names the run's own job"),
        (("background = true", "background = true\nranks = 4"), "run.neighbours[0]: needs exactly one of ranks"),
        (("background = true", "background = true\nhosts = 4"), "run.neighbours[0]: unknown key 'hosts'"),
        (("ranks = 16\n", "ranks = 16\nreplay = true\n"), 'run: neighbours need compute = "off" and no replay'),
        (("[[run.neighbours]]", "[[run.neighbours]]\nname = 'x'\napp = 'shift'\nranks = 2\n[[run.neighbours]]"),
         None),
    )  # fmt: skip
    def test_a_bad_neighbour_is_one_error_naming_its_path(
        self, tmp_path: Path, edit: Edit, message: str | None
    ) -> None:
        from study_runner.errors import StudyError
        from study_runner.sweeps.sweep import load_sweep

        path = tmp_path / "shared.toml"
        path.write_text(apply_edit(SHARED_SWEEP, edit, 1))
        if message is None:  # two neighbours: fine
            assert len(load_sweep(path).points[0].neighbours) == 2
            return
        with pytest.raises(StudyError, match=re.escape(message)):
            load_sweep(path)

    @pytest.mark.parametrize("key", ["allocation", "online"])
    def test_jobs_keys_without_neighbours_are_an_error(self, tmp_path: Path, key: str) -> None:
        from study_runner.errors import StudyError
        from study_runner.sweeps.sweep import load_sweep

        path = tmp_path / "alone.toml"
        text = SHARED_SWEEP[: SHARED_SWEEP.index("[[run.neighbours]]")] + 'online = true\n[output]\nmetric = "x"\n'
        unplaced = text.replace('allocation = "{allocation}"\n', "")
        path.write_text(unplaced if key == "online" else text.replace("online = true\n", ""))
        with pytest.raises(StudyError, match=rf"run.{key} is about the jobs of a run with neighbours; this run has"):
            load_sweep(path)

    @pytest.mark.simgrid
    def test_a_sweep_point_online_gives_its_replayed_times(self, tmp_path: Path) -> None:
        """``online = true``: the same point, its jobs' binaries run together instead of their traces replayed (a
        key of its own): the same times, to the bit."""
        from study_runner.batch.engine import Engine
        from study_runner.batch.execute import execute_runs
        from study_runner.batch.prepare import prepare_runs
        from study_runner.simulation.cache import Cache
        from study_runner.sweeps.sweep import load_sweep

        records = {}
        for online in (False, True):
            path = tmp_path / f"{online}.toml"
            path.write_text(
                SHARED_SWEEP.replace("[[run.neighbours]]", f"online = {str(online).lower()}\n[[run.neighbours]]")
            )
            sweep = load_sweep(path)
            _, runs = prepare_runs("shared", sweep.platforms, sweep.points[1:], False, BIN, tmp_path)
            assert ("--online" in runs[0].simulation.steps["together"].argv) is online
            results = execute_runs(runs, Cache(tmp_path / "cache"), engine=Engine(workers=1))
            records[online] = results["point-1"].records
        assert records[True] == records[False] and records[True][0]["slowdown"] > 1.05

    @edit_cases(
        (("app = \"shift\"\nargs = [\"-R\"", "app = \"no_such_app\"\nargs = [\"-R\""),
         "job background: app binary"),
        (("ranks = 16\n", "ranks = 40\n"), "job measured: 40 ranks need 40 hosts; 32 of torus-4x4x2's 32 are free"),
        (("ranks = 16\n", "ranks = 16\nplacement = 'block:4x4x1'\n"), None),
    )  # fmt: skip
    def test_jobs_that_cannot_run_are_found_before_anything_runs(
        self, tmp_path: Path, edit: Edit, message: str | None
    ) -> None:
        """A missing binary or jobs that do not fit are one error from the prepare step (nothing simulated); the run's
        own placement is its hosts, the background the rest."""
        from study_runner.batch.prepare import prepare_runs
        from study_runner.errors import StudyError
        from study_runner.sweeps.sweep import load_sweep

        path = tmp_path / "shared.toml"
        path.write_text(apply_edit(SHARED_SWEEP, edit, 1))
        sweep = load_sweep(path)
        if message is None:
            _, runs = prepare_runs("shared", sweep.platforms, sweep.points[:1], False, BIN, tmp_path)
            hosts = runs[0].jobs.hosts
            assert hosts["measured"] == tuple(TORUS.host_names[:16]) and len(hosts["background"]) == 16
            assert runs[0].key != prepare_runs("s", sweep.platforms, sweep.points[1:], False, BIN, tmp_path)[1][0].key
            return
        with pytest.raises(StudyError, match=re.escape(message)):
            prepare_runs("shared", sweep.platforms, sweep.points, False, BIN, tmp_path)
