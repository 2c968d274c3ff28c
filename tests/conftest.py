"""Shared fixtures: where the repository, the built apps and the loader check are, and platform files written
once per session."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings

from generators.errors import BUILD_HINT

REPO = Path(__file__).resolve().parent.parent


def _sigint_by_default() -> None:
    """``preexec_fn`` of a child a test interrupts with SIGINT: the signal at its default action, also when the tests
    run in the background (a shell starts a background job with SIGINT ignored, and a Python started so installs no
    ``KeyboardInterrupt`` handler: the test would wait for ever)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ctrl_c_while_simulating(
    command: Sequence[str], program: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (from the repository), press Ctrl-C (SIGINT) once SMPI runs ``program`` (``smpimain
    PROGRAM``, found with pgrep: give the program a name of its own), and return how the command ended; the program's
    simulation is checked gone."""
    with subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=_sigint_by_default) as process:  # fmt: skip
        deadline = time.monotonic() + 60
        while subprocess.run(["pgrep", "-f", f"smpimain {program}"], capture_output=True).returncode != 0:
            assert time.monotonic() < deadline and process.poll() is None, "the simulation did not start"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    assert subprocess.run(["pgrep", "-f", f"smpimain {program}"], capture_output=True).returncode != 0
    return subprocess.CompletedProcess(list(command), process.returncode, stdout, stderr)


BIN = REPO / "build" / "bin"

# Hypothesis (tests/test_hostile_input.py). The suite's profile is fixed: derandomized, the same 900 cases on every
# run (13 s on 2 cores, 30 s with the machine busy), no example database in the repository. An example takes 5 to
# 300 ms; the deadline is generous because the machine may be busy, while a real hang is caught by the test's own
# 30 s limit. TOPOLAB_HYPOTHESIS_PROFILE=long (scripts/check-hostile-input) draws new cases on each run: 10 tests x
# 1200 = 12,000 (about 3 min).
_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
settings.register_profile(
    "default", derandomize=True, database=None, max_examples=100, deadline=timedelta(seconds=10),
    suppress_health_check=_HEALTH,
)  # fmt: skip
settings.register_profile(
    "long", derandomize=False, database=None, max_examples=1200, deadline=timedelta(seconds=10),
    suppress_health_check=_HEALTH, print_blob=True,
)  # fmt: skip
settings.load_profile(os.environ.get("TOPOLAB_HYPOTHESIS_PROFILE", "default"))

WrittenPlatform = Callable[..., tuple[Path, Path]]

QUICK = os.environ.get("TOPOLAB_QUICK") == "1"
"""The quick run (``scripts/test --quick``): no SimGrid, no build. A test that starts a program needing either is
skipped at that moment (:func:`_skip_simgrid_programs`): which tests need SimGrid is found, not listed by hand."""
SIMGRID_PROGRAMS = frozenset(
    {"smpirun", "smpicc", "smpicxx", "smpif90", "smpiff", "smpimain", "smpireplaymain", "mpicc", "mpiexec", "cmake"}
)
"""Programs that need SimGrid, MPICH or a build (``build/bin``'s and topolab's commands are found by place)."""


def _needs_simgrid(args: object) -> bool:
    words = [str(args)] if isinstance(args, (str, os.PathLike)) else [str(a) for a in args]  # type: ignore[union-attr]
    for word in words[:6]:  # a wrapper (setpriv, env, sh -c) comes first
        path = Path(word.split()[0]) if word.strip() else Path()
        if path.name in SIMGRID_PROGRAMS or BIN in path.parents:
            return True
        if path.parent == REPO / "scripts" or word == "study_runner" or word.startswith(("study_runner.", "scripts/")):
            return True  # topolab's commands (repro, sweep, smpirun-on, build) and runner modules run SimGrid
    return False


SERIAL = {
    "tests/test_machine_load.py": "busy loops on every core; asserts how busy this machine is (another test's load "
    "counts as busy, and the loops slow every other test)",
    "tests/test_compute.py": "measures this machine (DGEMM calibration, memory bandwidth, once per module: a worker "
    "each would measure twice, each beside the other's load)",
    "tests/test_opensm.py::test_an_engine_that_cannot_route_the_fabric_is_an_error_not_minhop": "asserts no ibsim or "
    "OpenSM runs on this machine afterwards (pgrep): another test's OpenSM would be seen",
    "tests/test_opensm.py::test_two_runs_at_once_do_not_clash_and_agree": "the same pgrep check",
    "tests/test_opensm.py::test_a_time_limit_stops_both_and_leaves_nothing": "the same pgrep check, and a 0.8 s limit",
    "tests/test_setup_lock.py::test_two_setups_started_together_build_once": "the first setup must take the lock "
    "within a 0.3 s head start (wall time)",
    "tests/test_size.py::test_huge_requests_are_refused_at_once": "wall time: refused within 1 s, 5 s with Python's "
    "start",
    "tests/test_size.py::test_python_callers_are_refused_before_anything_is_allocated": "wall time: within 1 s",
}
"""The tests that cannot run beside another one, and why: they measure this machine or its load, assert what runs on
it, or assert wall times. ``scripts/test --quick`` runs the others on 2 workers (pytest-xdist), then these alone
(marker ``serial``, given here to a module's tests or to a test's cases); the whole suite runs everything serially."""


def _serial(nodeid: str) -> bool:
    return any(nodeid == key or nodeid.startswith((f"{key}::", f"{key}[")) for key in SERIAL)


def pytest_configure(config: pytest.Config) -> None:
    if QUICK:
        _skip_simgrid_programs()


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _serial(item.nodeid):
            item.add_marker(pytest.mark.serial)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """In the quick run, a test that failed because a built file is absent (a compiled zone's library, an app's
    binary; topolab's own error says so, also from a child process's output) is reported skipped: it needs the
    build, like a test that starts SimGrid (:func:`_skip_simgrid_programs`), and is found, not listed."""
    report: pytest.TestReport = yield
    if QUICK and report.failed and call.excinfo is not None:
        text = f"{call.excinfo.value}\n{report.capstderr}"
        raised = text.split("Actual message:", 1)[-1]  # a pytest.raises that did not match: what was raised counts
        if BUILD_HINT in raised:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, "needs the build (quick run)")
    return report


def _skip_simgrid_programs() -> None:
    """In the quick run, starting a program that needs SimGrid (or looking for one) skips the test that does."""
    start = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
        if _needs_simgrid(args):
            pytest.skip(f"needs SimGrid or the build: {str(args)[:80]} (quick run)")
        start(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = guarded  # type: ignore[method-assign]
    which = shutil.which

    def find(name: str, *rest: Any, **kwargs: Any) -> str | None:
        if Path(name).name in SIMGRID_PROGRAMS:
            pytest.skip(f"needs SimGrid or MPICH: looks for {name} (quick run)")
        return which(name, *rest, **kwargs)

    shutil.which = find  # type: ignore[assignment]


@pytest.fixture(scope="session")
def written_platform(tmp_path_factory: pytest.TempPathFactory) -> WrittenPlatform:
    """``written_platform(model, ranks=None)``: the platform file of ``model`` and the hostfile of its first
    ``ranks`` hosts (default: all), written on first use; the same family and parameters give the same files."""
    from generators import Platform
    from generators import place_ranks
    from generators import write_hostfile
    from generators import write_platform

    cache: dict[tuple[str, str, int], tuple[Path, Path]] = {}

    def get(model: Platform, ranks: int | None = None) -> tuple[Path, Path]:
        count = len(model.hosts) if ranks is None else ranks
        key = (model.family, json.dumps(model.params, sort_keys=True, default=str), count)
        if key not in cache:
            directory = tmp_path_factory.mktemp(model.name)
            write_platform(model, directory / "p.xml")
            write_hostfile(place_ranks(model, count), directory / "hosts")
            cache[key] = (directory / "p.xml", directory / "hosts")
        return cache[key]

    return get


@pytest.fixture(scope="session")
def bin_dir() -> Path:
    """``build/bin`` with the smpicc-built apps and the loader (built by scripts/test)."""
    if QUICK:
        pytest.skip("needs the built apps (quick run)")
    if not (BIN / "platform_check").is_file():
        pytest.fail("build/bin/platform_check is missing: run scripts/build (scripts/test does)")
    return BIN


@pytest.fixture(scope="session")
def load_platform(bin_dir: Path) -> Callable[..., dict[str, Any]]:
    """Load a platform file in SimGrid with the loader check and return its JSON report."""

    def load(path: Path, *extra: str) -> dict[str, Any]:
        done = subprocess.run(
            [str(bin_dir / "platform_check"), str(path), *extra], capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    return load


@pytest.fixture(scope="session")
def real_mpi_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The apps built with MPICH's mpicc (-DTOPOLAB_REAL_MPI=ON), warnings as errors."""
    if QUICK:
        pytest.skip("needs MPICH and a build (quick run)")
    if shutil.which("mpicc") is None or shutil.which("mpiexec") is None:
        pytest.fail("mpicc/mpiexec not found: run scripts/setup (installs MPICH)")
    build = tmp_path_factory.mktemp("build-mpi")
    configure = subprocess.run(
        ["cmake", "-S", str(REPO), "-B", str(build), "-DTOPOLAB_REAL_MPI=ON"], capture_output=True, text=True
    )
    assert configure.returncode == 0, configure.stderr
    compiled = subprocess.run(["cmake", "--build", str(build), "-j", "2"], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert "warning" not in compiled.stdout.lower() + compiled.stderr.lower()
    return build / "bin"


def simgrid_link_count(model: Any) -> int:
    """The links SimGrid reports for a platform written from ``model``: the model's, the network model's own
    ``__loopback__``, and for a compiled zone without intra-node links the zone's ``loopback``, its twin
    (simgrid_cpp/torus_zone.cpp)."""
    return len(model.links) + 1 + (model.compiled is not None and not model.shm)


def route_args(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """Loader arguments asking for the routes of ``pairs``."""
    return [arg for src, dst in pairs for arg in ("--route", src, dst)]


def scattered_pairs(names: Sequence[str], stride: int) -> list[tuple[str, str]]:
    """Every ``stride``-th host of ``names`` with one far from it (Knuth's multiplicative hash), none with itself:
    a sample of the routes of a machine too large to load all of them."""
    pairs = [(names[i], names[(i * 2654435761) % len(names)]) for i in range(0, len(names), stride)]
    return [(a, b) for a, b in pairs if a != b]


def smpicc_test_program(name: str, into: Path) -> Path:
    """``tests/data/c/<name>.c`` built with smpicc (-O2) into ``into``; returns the binary."""
    binary = into / name
    subprocess.run(["smpicc", "-O2", str(REPO / "tests" / "data" / "c" / f"{name}.c"), "-o", str(binary)],
                   check=True, cwd=into)  # fmt: skip
    return binary


def compiled_zone_error(bin_dir: Path, path: Path, zone: str) -> str:
    """What the loader says of the compiled zone ``path`` whose parameter file is bad: exit status 2, nothing on
    stdout, one error line, the zone's (``topolab <zone> zone: error: ...``); returns that line."""
    done = subprocess.run([str(bin_dir / "platform_check"), str(path)], capture_output=True, text=True, timeout=60)
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert done.returncode == 2 and done.stdout == "" and len(errors) == 1, done.stderr
    assert errors[0].startswith(f"topolab {zone} zone: error: "), errors[0]
    return errors[0]


def assert_loader_routes_equal_model(load: Callable[..., dict[str, Any]], model: Any, path: Path) -> dict[str, Any]:
    """Write ``model`` to ``path`` (XML or a compiled zone, as its suffix says) and check what SimGrid's loader makes
    of it: the model's hosts, name for name, with their cores; as many links (:func:`simgrid_link_count`); every
    ordered pair of distinct hosts routed over the model's links, in order, at the model's latency, each link with the
    model's share of the message (spread routes; 1 elsewhere); each host's route
    to itself its intra-node link, or without one the loopback of the representation (SimGrid's ``__loopback__``,
    the compiled zones' ``loopback``). ``load`` is the ``load_platform`` fixture; returns the loader's report."""
    from generators import write_platform

    write_platform(model, path)
    loops = [(host, host) for host in model.host_names]
    loaded = load(path, *route_args(loops), "--all-routes", "--list-hosts", "--list-cores")
    assert (loaded["hosts"], loaded["links"]) == (len(model.hosts), simgrid_link_count(model))
    assert loaded["host_names"] == sorted(model.host_names)
    assert loaded["host_cores"] == {host.name: host.cores for host in model.hosts}
    assert len(loaded["routes"]) == len(model.hosts) ** 2
    for route in loaded["routes"]:
        src, dst = route["src"], route["dst"]
        if src == dst and not model.shm:
            assert (route["links"], route["latency"]) == (["loopback" if model.compiled else "__loopback__"], 0)
            continue
        assert route["links"] == model.route(src, dst), (src, dst)
        assert route["latency"] == pytest.approx(model.route_latency(src, dst), rel=1e-12), (src, dst)
        shares = [share for _, share in model.route_shares(src, dst)]
        assert route.get("shares", [1.0] * len(route["links"])) == shares, (src, dst)  # to the last bit
    return loaded


def pingpong_sweep(sizes: Sequence[int], iterations: int, app: str = "pingpong") -> str:
    """A sweep file's text: ``app`` (a ping-pong's options) on the 2 hosts of a crossbar, one point per message size
    of ``sizes``, ``iterations`` iterations each."""
    return (
        f'name = "pp"\n[grid]\nsize = {list(sizes)}\n[platform]\nfamily = "crossbar"\nhosts = 2\n'
        f'[run]\napp = "{app}"\nranks = 2\nargs = ["-s", "{{size}}", "-i", "{iterations}"]\n'
    )


def crossbar_study(name: str, title: str, hosts: int, runs: str) -> str:
    """A study file's text: its ``runs`` (tables [[runs]] or [[generate]]) on the platform ``crossbar``, a crossbar
    of ``hosts`` hosts. Its analysis, interconnects, is never reached by runs that fail or are stopped (its [figures]
    fields are optional)."""
    return (
        f'name = "{name}"\ntitle = "{title}"\nanalysis = "interconnects"\n\n'
        f'[platforms.crossbar]\nfamily = "crossbar"\nhosts = {hosts}\n\n{runs}'
    )


def run_table(run_id: str, app: str, ranks: int, platform: str = "crossbar") -> str:
    """A [[runs]] table of a study: ``app`` on ``ranks`` ranks of ``platform`` (that of a :func:`crossbar_study` by
    default); more of its keys may follow."""
    return f'[[runs]]\nid = "{run_id}"\nplatform = "{platform}"\napp = "{app}"\nranks = {ranks}\n'


def exact_check(**fields: object) -> str:
    """A study's [[checks]] table of an exact check (kind "exact", tolerance 0) with ``fields``, each written
    ``key = value`` with the value in JSON (a TOML string, number or array alike); more of its keys may follow."""
    table = {"tolerance": 0, "kind": "exact", **fields}
    return "[[checks]]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items())


Edit = tuple[str, str]
"""An edit of a good file's text: (old, new)."""


def edit_cases(*cases: tuple[Edit, str | None]) -> pytest.MarkDecorator:
    """Parametrize a test by ``edit``, an :data:`Edit` of a good file, and ``message``, what the edited file must
    give (an error's words; None where the edit leaves the file good)."""
    return pytest.mark.parametrize(("edit", "message"), cases)


def apply_edit(text: str, edit: Edit, count: int = -1) -> str:
    """``text`` with ``edit`` made (in its first ``count`` places, or all), after checking its old text is there:
    a case whose old text the good file no longer holds would test nothing."""
    assert edit[0] in text
    return text.replace(*edit, count)


def mpiexec(binary: Path, ranks: int, *args: str) -> subprocess.CompletedProcess[str]:
    """``binary`` (an app built with the system's ``mpicc``) run by MPICH's ``mpiexec`` on ``ranks`` processes."""
    command = ["mpiexec", "-n", str(ranks), str(binary), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def assert_usage_error(command: Sequence[str], cwd: Path, app: str, message: str) -> None:
    """``command`` (an smpirun of ``app``) fails as a bad argument must: exit status 2, no JSON on stdout, one line
    ``<app>: error: <message>...`` on stderr."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert not any(line.startswith("{") for line in done.stdout.splitlines())
    errors = [line for line in done.stderr.splitlines() if line.startswith(f"{app}:")]
    assert len(errors) == 1 and errors[0].startswith(f"{app}: error: {message}"), done.stderr


def run_module(module: str, *args: str, tmp_path: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``python -m <module> ARGS`` from the repository, its results and cache under ``tmp_path``."""
    command = [sys.executable, "-m", module, *args, "--results", str(tmp_path / "results")]
    command += ["--cache", str(tmp_path / "cache")]
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=timeout)


def shift_times(tmp_path: Path, bin_dir: Path, platform: Path, hosts: list[str]) -> list[dict[str, Any]]:
    """Every shift of ``apps/bench/shift`` (1 MiB) on ``platform``, rank i on ``hosts[i]``: its records."""
    (tmp_path / "hosts").write_text("".join(f"{host}\n" for host in hosts))
    from study_runner.batch.execute import parse_records
    from study_runner.simulation.smpi import run_smpirun
    from study_runner.simulation.smpi import smpirun_command

    command = smpirun_command(bin_dir / "shift", ["-s", "1M", "-i", "1", "-w", "0"], platform, tmp_path / "hosts",
                              len(hosts))  # fmt: skip
    return parse_records(run_smpirun(command, tmp_path, timeout=300, label="shift"), "shift")
