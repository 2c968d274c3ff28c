"""The bisection_pairing app (the torus partition paper's Sect. 4.1, furthest-node scheme) under smpirun and MPICH.

Every smpirun here uses topolab's standard options on a torus from generators.topologies.torus (rank r on host-r, node
coordinates first dimension fastest), 1 GBps links with 1 us latency unless a test needs latency 0.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from generators import Platform
from generators import torus
from generators.model import FATPIPE
from generators.schedules import pairing_partner
from study_runner.batch.execute import parse_records
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import WrittenPlatform
from tests.conftest import assert_usage_error
from tests.conftest import mpiexec

APP = "bisection_pairing"
LINK_BW = 1e9
LINK_LAT = 1e-6
KEYS = [
    "app", "version", "dims", "ranks", "hops", "chunk_bytes", "chunks", "iterations", "warmup", "bytes_per_pair",
    "time_per_pair_s_min", "time_per_pair_s_avg", "time_per_pair_s_max", "time_per_round_s", "verified",
]  # fmt: skip

Dims = tuple[int, ...]
Platforms = Callable[..., tuple[Path, Path]]
Flow = tuple[str, str]


# ---------------------------------------------------------------------------------------------------------------------
# The pairing, in Python.


def max_hops(dims: Dims) -> int:
    return sum(length // 2 for length in dims)


# ---------------------------------------------------------------------------------------------------------------------
# Running the app.


@pytest.fixture(scope="module")
def platforms(written_platform: WrittenPlatform) -> Platforms:
    """Torus platform and hostfile for a shape (and link parameters)."""
    return lambda dims, link_bw=LINK_BW, link_lat=LINK_LAT: written_platform(
        torus(dims, link_bw=link_bw, link_lat=link_lat)
    )


def dims_arg(dims: Dims) -> str:
    return ",".join(map(str, dims))


def app_command(
    platforms: Platforms, bin_dir: Path, dims: Dims, args: Sequence[str], ranks: int | None = None, **links: float
) -> list[str]:
    xml, hosts = platforms(dims, **links)
    return smpirun_command(bin_dir / APP, list(args), xml, hosts, ranks or math.prod(dims))


def run_app(platforms: Platforms, bin_dir: Path, tmp_path: Path, dims: Dims, *args: str, **links: float) -> str:
    """Run the app on the torus ``dims`` under smpirun; return its stdout."""
    return run_smpirun(app_command(platforms, bin_dir, dims, args, **links), tmp_path, timeout=120, label=APP)


def run_record(
    platforms: Platforms, bin_dir: Path, tmp_path: Path, dims: Dims, *args: str, **links: float
) -> dict[str, Any]:
    (record,) = parse_records(run_app(platforms, bin_dir, tmp_path, dims, *args, **links), APP)
    return record


def small_args(dims: Dims, chunk: int, *extra: str) -> list[str]:
    return ["-d", dims_arg(dims), "-s", str(chunk), "-c", "2", "-i", "2", "-w", "1", *extra]


VERIFY_SHAPES = [(2,), (4,), (4, 2), (2, 2, 2), (4, 4), (4, 2, 2), (6, 1, 2)]
CHUNKS = [1, 1000, 1024, 8191, 65536, 65536 + 5]  # tails of 1..7 bytes; eager and rendezvous messages


class TestVerify:
    @pytest.mark.parametrize("chunk", CHUNKS)
    @pytest.mark.parametrize("dims", VERIFY_SHAPES, ids=str)
    def test_every_rank_receives_its_partners_messages(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, dims: Dims, chunk: int
    ) -> None:
        record = run_record(platforms, bin_dir, tmp_path, dims, *small_args(dims, chunk, "--verify"))
        assert list(record) == KEYS and record["verified"] is True
        expected = {"app": APP, "version": 2, "dims": list(dims), "ranks": math.prod(dims), "hops": max_hops(dims)}
        expected |= {"chunk_bytes": chunk, "chunks": 2, "iterations": 2, "warmup": 1, "bytes_per_pair": 2 * 2 * chunk}
        assert {k: record[k] for k in expected} == expected
        t_min, t_avg, t_max = (record[f"time_per_pair_s_{k}"] for k in ("min", "avg", "max"))
        assert 0 < t_min <= t_avg <= t_max
        assert record["time_per_round_s"] == pytest.approx(t_avg / 2, rel=1e-12)

    @pytest.mark.parametrize("dims", [(4, 2), (2, 2, 2), (6, 1, 2)], ids=str)
    def test_hops_match_the_platforms_routes(self, dims: Dims) -> None:
        # The app's "hops" is the cable count of every pair's route on the generated torus.
        model = torus(dims, link_bw=LINK_BW, link_lat=LINK_LAT)
        for r in range(math.prod(dims)):
            route = model.route(f"host-{r}", f"host-{pairing_partner(r, dims)}")
            assert sum(model.link_kind(link) == "cable" for link in route) == max_hops(dims)

    def test_the_check_catches_wrong_data(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        # With SMPI's shared malloc the buffers are one folded mapping and no data move: the check must fail.
        dims = (4,)
        xml, hosts = platforms(dims)
        options = ("--cfg=smpi/auto-shared-malloc-thresh:1024",)
        command = smpirun_command(bin_dir / APP, small_args(dims, 65536, "--verify"), xml, hosts, 4, options)
        done = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 1, done.stderr
        # smpirun writes its own failure messages on stderr (SimGrid patch 0009): stdout is the app's.
        (record,) = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert record["verified"] is False
        assert f"{APP}: error: verification failed: " in done.stderr and " wrong words" in done.stderr

    def test_without_verify_the_field_is_null(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        record = run_record(platforms, bin_dir, tmp_path, (4, 2), *small_args((4, 2), 1024))
        assert list(record) == KEYS and record["verified"] is None


# ---------------------------------------------------------------------------------------------------------------------
# Timing.


def max_min_rates(model: Platform, flows: Sequence[Flow]) -> dict[Flow, float]:
    """Max-min fair rates (progressive filling) of concurrent flows on their routes, SimGrid's CM02 sharing without
    latency: FATPIPE links never constrain, a SHARED link splits its bandwidth among the flows it carries."""
    routes = {f: [link for link in model.route(*f) if model.links[link].sharing != FATPIPE] for f in flows}
    capacity = {link: model.links[link].bandwidth for route in routes.values() for link in route}
    rates: dict[Flow, float] = {}
    active = set(flows)
    while active:
        users = {link: sum(link in routes[f] for f in active) for link in capacity}
        share = {link: capacity[link] / n for link, n in users.items() if n > 0}
        bottleneck = min(share.values())
        fixed = {f for f in active if any(share.get(link) == bottleneck for link in routes[f])}
        for f in fixed:
            rates[f] = bottleneck
            for link in routes[f]:
                capacity[link] -= bottleneck
        active -= fixed
    return rates


def pair_flows(dims: Dims) -> list[Flow]:
    return [(f"host-{r}", f"host-{pairing_partner(r, dims)}") for r in range(math.prod(dims))]


class TestTiming:
    CHUNK = 1 << 20  # far above SMPI's eager limit

    def test_ring_of_four_routes_and_loads(self) -> None:
        # SimGrid's TORUS tie rule: 0 -> 2 and 1 -> 3 go "+", 2 -> 0 goes "-", 3 -> 1 goes "+" through the wrap.
        model = torus((4,), link_bw=LINK_BW, link_lat=0.0)
        assert model.route("host-0", "host-2") == ["host-0_to_host-1", "host-1_to_host-2"]
        assert model.route("host-1", "host-3") == ["host-1_to_host-2", "host-2_to_host-3"]
        assert model.route("host-2", "host-0") == ["host-2_to_host-1", "host-1_to_host-0"]
        assert model.route("host-3", "host-1") == ["host-3_to_host-0", "host-0_to_host-1"]
        # 0_to_1 and 1_to_2 carry two flows each: 0 -> 2, 1 -> 3 and 3 -> 1 get half a link, 2 -> 0 a whole one.
        rates = max_min_rates(model, pair_flows((4,)))
        assert rates == {
            ("host-0", "host-2"): LINK_BW / 2,
            ("host-1", "host-3"): LINK_BW / 2,
            ("host-2", "host-0"): LINK_BW,
            ("host-3", "host-1"): LINK_BW / 2,
        }

    @pytest.mark.parametrize("dims", [(4,), (6,), (8,), (4, 4), (4, 2, 2), (6, 2)], ids=str)
    def test_time_per_round_follows_the_link_loads(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, dims: Dims
    ) -> None:
        # Every chunk, all pairs start together; a pair's Sendrecv ends with its slower direction, at the max-min rate
        # r shared by every pair on these shapes. The faster directions finish earlier without speeding up any slower
        # flow (checked: alone, the slower flows still get r), so every pair ends every chunk at the same time, and with
        # latency 0 a round of C chunks takes exactly C (S + envelope) / r.
        model = torus(dims, link_bw=LINK_BW, link_lat=0.0)
        flows = pair_flows(dims)
        rates = max_min_rates(model, flows)
        pair_rates = {min(rates[a, b], rates[b, a]) for a, b in flows}
        assert len(pair_rates) == 1
        (rate,) = pair_rates
        slow = [f for f in flows if rates[f] == rate]
        assert set(max_min_rates(model, slow).values()) == {rate}

        chunks, iterations = 2, 2
        args = ["-d", dims_arg(dims), "-s", str(self.CHUNK), "-c", str(chunks), "-i", str(iterations), "-w", "1"]
        record = run_record(platforms, bin_dir, tmp_path, dims, *args, link_bw=LINK_BW, link_lat=0.0)
        per_round = chunks * (self.CHUNK + SMPI_ENVELOPE_BYTES) / rate
        assert record["time_per_round_s"] == pytest.approx(per_round, rel=1e-6)
        for key in ("min", "avg", "max"):
            assert record[f"time_per_pair_s_{key}"] == pytest.approx(iterations * per_round, rel=1e-6)
        assert record["bytes_per_pair"] == iterations * chunks * self.CHUNK

    def test_ring_of_four_is_twice_a_lone_link(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        # The busiest links carry two flows: 2 (S + 16) / bw per chunk, 4 chunks per round.
        args = ["-d", "4", "-s", str(self.CHUNK), "-c", "4", "-i", "3", "-w", "2"]
        record = run_record(platforms, bin_dir, tmp_path, (4,), *args, link_bw=LINK_BW, link_lat=0.0)
        per_chunk = 2 * (self.CHUNK + SMPI_ENVELOPE_BYTES) / LINK_BW
        assert record["time_per_round_s"] == pytest.approx(4 * per_chunk, rel=1e-6)

    def test_runs_are_deterministic(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        dims = (4, 4, 2)
        first, second = (run_app(platforms, bin_dir, tmp_path, dims, *small_args(dims, 65536)) for _ in range(2))
        assert first == second and first.count("\n") == 1


# ---------------------------------------------------------------------------------------------------------------------
# Usage and bad input.


class TestBadInput:
    @pytest.mark.parametrize(
        ("dims", "args", "message"),
        [
            ((3,), ["-d", "3"], "dimension 0 has length 3: every dimension must be 1 or even"),
            ((4, 3), ["-d", "4,3"], "dimension 1 has length 3: every dimension must be 1 or even"),
            ((4, 2), ["-d", "4,4"], "the 4x4 torus has 16 nodes but there are 8 MPI ranks"),
            ((4, 2), [], "the torus shape is required: -d/--dims"),
            ((4,), ["-d", "4", "-i", "0"], "invalid -i value '0': value out of range"),
            ((4,), ["-d", "4", "-i", "2147483647", "-w", "1"], "1 warm-up and 2147483647 timed rounds are more than"),
            ((4,), ["-d", "4", "-s", "0"], "invalid -s/--chunk value 0: a chunk needs at least 1 byte"),
            ((4,), ["-d", "4", "-c", "0"], "invalid -c value '0': value out of range"),
            ((4,), ["-d", "4,0"], "invalid -d value '4,0': value out of range"),
            ((1,), ["-d", "1,1"], "the 1x1 torus has a single node: the pairing needs at least 2 nodes"),
        ],
    )
    def test_bad_arguments(
        self, platforms: Platforms, bin_dir: Path, tmp_path: Path, dims: Dims, args: list[str], message: str
    ) -> None:
        command = app_command(platforms, bin_dir, dims, args)
        assert_usage_error(command, tmp_path, APP, message)

    def test_help(self, platforms: Platforms, bin_dir: Path, tmp_path: Path) -> None:
        out = run_app(platforms, bin_dir, tmp_path, (2,), "-h")
        assert out.startswith(f"usage: {APP} [-d DIMS]") and "furthest-node" in out
        assert "default: 128M" in out and "default: 16" in out and "default: 26" in out and "default: 4" in out


# ---------------------------------------------------------------------------------------------------------------------
# A real MPI.


class TestUnderRealMpi:
    def test_verifies_with_mpiexec(self, real_mpi_bin: Path) -> None:
        args = ["-d", "2,2,2", "-s", "64K", "-c", "3", "-i", "3", "-w", "1", "--verify"]
        done = mpiexec(real_mpi_bin / APP, 8, *args)
        assert done.returncode == 0, done.stderr
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert list(record) == KEYS and record["verified"] is True
        assert record["ranks"] == 8 and record["hops"] == 3 and record["bytes_per_pair"] == 3 * 3 * 65536
        assert 0 < record["time_per_pair_s_min"] <= record["time_per_pair_s_avg"] <= record["time_per_pair_s_max"]

    def test_bad_shape_with_mpiexec(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / APP, 8, "-d", "2,2")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.splitlines()[0] == f"{APP}: error: the 2x2 torus has 4 nodes but there are 8 MPI ranks"
