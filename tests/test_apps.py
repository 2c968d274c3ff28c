"""The apps under smpirun (topolab's standard options) and under a real MPI (MPICH)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from generators import crossbar
from generators import place_ranks
from generators import write_hostfile
from generators import write_platform
from study_runner.batch.execute import parse_records
from study_runner.errors import StudyError
from study_runner.simulation.smpi import SMPI_ENVELOPE_BYTES
from study_runner.simulation.smpi import run_smpirun
from study_runner.simulation.smpi import smpirun_command
from tests.conftest import mpiexec


def smpirun(tmp_path: Path, bin_dir: Path, app: str, args: list[str], ranks: int, **platform: object) -> str:
    model = crossbar(ranks, **platform)  # type: ignore[arg-type]
    write_platform(model, tmp_path / "p.xml")
    write_hostfile(place_ranks(model, ranks), tmp_path / "hosts")
    command = smpirun_command(bin_dir / app, args, tmp_path / "p.xml", tmp_path / "hosts", ranks)
    return run_smpirun(command, tmp_path, timeout=120, label=app)


class TestUnderSmpirun:
    def test_exchange_uses_both_directions_of_a_cable(self, tmp_path: Path, bin_dir: Path) -> None:
        size = 8 << 20
        out = smpirun(tmp_path, bin_dir, "exchange", ["-p", "1", "-s", str(size), "-i", "1", "-w", "0"], 2)
        (record,) = parse_records(out, "exchange")
        assert record["time_s_avg"] == pytest.approx(2e-6 + (size + SMPI_ENVELOPE_BYTES) / 1e9, rel=1e-9)

    def test_nbl_limiter_of_k_links(self, tmp_path: Path, bin_dir: Path) -> None:
        # Three peers exchanging with rank 0: 6 flows through its limiter of 2 link bandwidths. Peers
        # leave the barrier a few microseconds apart, hence rel=1e-3 (without the limiter: 3x faster).
        size = 8 << 20
        out = smpirun(tmp_path, bin_dir, "exchange", ["-p", "3", "-s", str(size), "-i", "1", "-w", "0"], 4, nbl=2.0)
        (record,) = parse_records(out, "exchange")
        assert record["time_s_avg"] == pytest.approx(2e-6 + (size + SMPI_ENVELOPE_BYTES) / (2e9 / 6), rel=1e-3)

    def test_shift_delivers_every_block_at_link_rate_on_a_crossbar(self, tmp_path: Path, bin_dir: Path) -> None:
        """Each host sends one flow and receives one, on the two directions of its cable: every shift runs at the
        cable's rate, 2 latencies + (S + envelope) / bandwidth, and every byte arrives from (r - s) mod N."""
        size = 3 << 20
        out = smpirun(tmp_path, bin_dir, "shift", ["-s", str(size), "-i", "2", "-w", "0", "--verify"], 5)
        records = parse_records(out, "shift")
        assert [r["shift"] for r in records] == [1, 2, 3, 4] and all(r["verified"] is True for r in records)
        for record in records:  # the barrier releases ranks up to one route latency apart (test_alltoall_app.py)
            assert record["time_s_min"] == pytest.approx(2e-6 + (size + SMPI_ENVELOPE_BYTES) / 1e9, rel=1e-9)
            assert 0 <= record["time_s_max"] - record["time_s_min"] <= 1.1 * 2e-6
            assert record["rate_bps"] == pytest.approx(size / record["time_s_max"], rel=1e-12)

    def test_shift_rank_rates_are_each_ranks_bytes_over_its_time(self, tmp_path: Path, bin_dir: Path) -> None:
        """--rank-rates adds the spread of BYTES / each rank's mean time (an effective bisection bandwidth's sample):
        its extremes are the extremes of the times turned into rates, its mean at least BYTES over the mean time (a
        mean of rates, not of times), and the times themselves are those of a run without it (the first shift's bit
        for bit; the later ones start later by the reduction, so their durations round differently)."""
        size = 1 << 20
        args = ["-S", "1,3", "-R", "2", "-s", str(size), "-i", "1", "-w", "0"]
        plain = parse_records(smpirun(tmp_path, bin_dir, "shift", args, 6, nbl=1.0), "shift")
        rated = parse_records(smpirun(tmp_path, bin_dir, "shift", [*args, "--rank-rates"], 6, nbl=1.0), "shift")
        assert all("rank_rate_bps_avg" not in r for r in plain)
        assert {k: rated[0][k] for k in plain[0]} == plain[0]
        for before, record in zip(plain, rated, strict=True):
            assert all(record[k] == pytest.approx(before[k], rel=1e-12) for k in ("time_s_min", "time_s_max"))
            assert record["rank_rate_bps_min"] == pytest.approx(size / record["time_s_max"], rel=1e-12)
            assert record["rank_rate_bps_max"] == pytest.approx(size / record["time_s_min"], rel=1e-12)
            assert size / record["time_s_avg"] <= record["rank_rate_bps_avg"] <= record["rank_rate_bps_max"]

    def test_a_ring_passes_one_message_at_a_time(self, tmp_path: Path, bin_dir: Path) -> None:
        """The token crosses one cable pair at a time, alone: each message takes the route's 2 latencies + (bytes +
        envelope) / bandwidth, whatever the ring's size."""
        for ranks in (2, 5):
            out = smpirun(tmp_path, bin_dir, "ring", ["-s", "1K", "--laps", "3"], ranks)
            (record,) = parse_records(out, "ring")
            assert (record["ranks"], record["laps"], record["messages"]) == (ranks, 3, 3 * ranks)
            assert record["hop_s"] == pytest.approx(2e-6 + (1024 + SMPI_ENVELOPE_BYTES) / 1e9, rel=1e-9)
            assert record["time_s"] == pytest.approx(record["hop_s"] * 3 * ranks, rel=1e-12)

    def test_a_hot_spot_shares_the_hot_cable_among_its_senders(self, tmp_path: Path, bin_dir: Path) -> None:
        """Hot-spot traffic on a crossbar: the 5 senders of hot rank 0 share its cable, 5 x (S + envelope) / bandwidth
        (within the microseconds the barrier releases ranks apart); hot rank 1 has 4 senders; every byte verified."""
        size = 2 << 20
        out = smpirun(tmp_path, bin_dir, "hotspot", ["-H", "2", "-s", str(size), "-i", "2", "-w", "0", "--verify"], 11)
        (record,) = parse_records(out, "hotspot")
        assert record["verified"] is True and record["hot"] == 2
        assert record["time_s_max"] == pytest.approx(2e-6 + 5 * (size + SMPI_ENVELOPE_BYTES) / 1e9, rel=2e-3)

    def test_interval_paces_the_rounds_untimed(self, tmp_path: Path, bin_dir: Path) -> None:
        """--interval: a round every T seconds of simulated time, the pause not in the round's time."""
        from study_runner.simulation.compute import SIMULATED_TIME_OPTIONS
        from study_runner.simulation.compute import compute_timing
        from study_runner.simulation.smpi import run_smpirun_measured

        model = crossbar(4)
        write_platform(model, tmp_path / "p.xml")
        write_hostfile(place_ranks(model, 4), tmp_path / "hosts")
        for app, args in (("hotspot", ["-s", "1K"]), ("shift", ["-S", "1", "-s", "1K"])):
            paced = [*args, "-i", "5", "-w", "0", "--interval", "0.001"]
            command = smpirun_command(bin_dir / app, paced, tmp_path / "p.xml", tmp_path / "hosts", 4,
                                      SIMULATED_TIME_OPTIONS)  # fmt: skip
            done = run_smpirun_measured(command, tmp_path, 60, app)
            (record,) = parse_records(done.stdout, app)
            assert record["time_s_max"] < 1e-4  # a round, not its pause
            assert 0.005 < compute_timing(done.stderr)["simulated_s"] < 0.0051  # 5 rounds of 1 ms, then the reductions

    def test_relabelled_shifts_are_permutations_that_deliver_every_byte(self, tmp_path: Path, bin_dir: Path) -> None:
        out = smpirun(tmp_path, bin_dir, "shift", ["-S", "1,4", "-R", "3", "-s", "70K", "-i", "1", "--verify"], 6)
        records = parse_records(out, "shift")
        assert [(r["shift"], r["relabel"], r["verified"]) for r in records] == [(1, 3, True), (4, 3, True)]

    def test_pingpong_prints_one_json_line_per_size(self, tmp_path: Path, bin_dir: Path) -> None:
        out = smpirun(tmp_path, bin_dir, "pingpong", ["-s", "1,2K,3M", "-i", "2", "-w", "0"], 2)
        records = parse_records(out, "pingpong")
        assert [r["bytes"] for r in records] == [1, 2048, 3 << 20]
        assert all(r["app"] == "pingpong" and r["iterations"] == 2 for r in records)

    @pytest.mark.parametrize(
        ("app", "args", "ranks", "message"),
        [
            ("pingpong", [], 1, "pingpong: error: needs at least 2 MPI ranks"),
            ("exchange", ["-p", "3"], 3, "exchange: error: 3 peers need at least 4 MPI ranks"),
            ("hotspot", ["-H", "3"], 3, "hotspot: error: 3 hot ranks need at least 4 MPI ranks"),
            ("pingpong", ["-s", "12Q"], 2, "pingpong: error:"),
            ("pingpong", ["-i", "0"], 2, "pingpong: error:"),
            ("shift", ["-S", "4"], 4, "shift: error: --shifts 4 needs more than 4 MPI ranks"),
            ("shift", [], 1, "shift: error: a shift needs at least 2 MPI ranks"),
        ],
    )
    def test_bad_arguments_fail_the_run(
        self, tmp_path: Path, bin_dir: Path, app: str, args: list[str], ranks: int, message: str
    ) -> None:
        with pytest.raises(StudyError, match=r"the MPI application failed: rank 0 \(on host-0\) returned 2") as failure:
            smpirun(tmp_path, bin_dir, app, args, ranks)
        assert message in str(failure.value)


class TestUnderRealMpi:
    def test_exchange_with_mpiexec_4(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / "exchange", 4, "-p", "3", "-s", "64K", "-i", "2")
        assert done.returncode == 0, done.stderr
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert record["app"] == "exchange" and record["ranks"] == 4 and record["peers"] == 3
        assert 0 < record["time_s_min"] <= record["time_s_avg"] <= record["time_s_max"]

    def test_hotspot_with_mpiexec_6_verifies_every_byte_at_its_interval(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / "hotspot", 6, "-H", "2", "-s", "64K", "-i", "3", "--interval", "0.05", "--verify")
        assert done.returncode == 0, done.stderr
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert record["app"] == "hotspot" and record["hot"] == 2 and record["verified"] is True

    def test_shift_with_mpiexec_5_verifies_every_byte(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / "shift", 5, "-S", "4,1", "-s", "100K", "-i", "2", "--verify")
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in done.stdout.splitlines()]
        assert [(r["shift"], r["verified"]) for r in records] == [(4, True), (1, True)]

    def test_ring_with_mpiexec_3(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / "ring", 3, "--laps", "4")
        assert done.returncode == 0, done.stderr
        (record,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert (record["messages"], record["bytes"]) == (12, 8) and record["time_s"] > 0

    def test_pingpong_with_mpiexec_4(self, real_mpi_bin: Path) -> None:
        done = mpiexec(real_mpi_bin / "pingpong", 4, "-s", "1,1K", "-i", "5")
        assert done.returncode == 0, done.stderr
        assert [json.loads(line)["bytes"] for line in done.stdout.splitlines()] == [1, 1024]


APPS = [
    "allgather", "alltoall", "bisection_pairing", "combine", "exchange", "memcpy_bench", "nbl_testjig", "pingpong",
    "ring", "shift", "transpose", "zero_count",
]  # fmt: skip


@pytest.mark.parametrize("app", APPS)
def test_an_app_run_directly_says_to_use_smpirun(bin_dir: Path, app: str) -> None:
    # An SMPI app is a shared object for smpirun's loader; run directly it used to die of SIGSEGV (exit 139).
    env = {"PATH": "/usr/bin:/bin"}  # no LD_LIBRARY_PATH: the app's run path finds libsimgrid
    done = subprocess.run([bin_dir / app, "-h"], capture_output=True, text=True, timeout=30, env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"{app}: error: this topolab app is built for SimGrid/SMPI: run it under smpirun")
    assert len(done.stderr.splitlines()) == 1
