"""The HPCG app (apps/hpcg: the specification's problem, preconditioned CG and flop count) under smpirun and MPICH.

The problem has closed forms: a box of N_x x N_y x N_z grid points (all ranks together) has prod(N_k) rows and
prod(3 N_k - 2) entries (each dimension contributes 3 neighbours per point but one at each end), level l of the
multigrid the same with N_k / 2^l; the app's flop count is the specification's formula over those sizes. The solver
must converge (the exact solution is all ones) whatever the process grid, and a communication-only run is
deterministic.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.conftest import mpiexec

pytestmark = pytest.mark.simgrid


def process_grid(ranks: int) -> tuple[int, int, int]:
    """The most balanced factorisation a >= b >= c of ``ranks``: the smallest largest factor (as the app's)."""
    grids = [(a, b, ranks // a // b) for a in range(1, ranks + 1) for b in range(1, a + 1)
             if ranks % (a * b) == 0 and ranks // a // b <= b]  # fmt: skip
    return min(grids, key=lambda grid: grid[0])


def spec_flops(global_points: tuple[int, int, int], levels: int, sets: int, iterations: int) -> float:
    """The specification's flop count, from the closed-form sizes of every level."""
    nnz = [math.prod(3 * (n >> level) - 2 for n in global_points) for level in range(levels)]
    rows = math.prod(global_points)
    f, s = sets * iterations, sets
    flops = 2 * (3 * f + s) * 2 * rows + (f + s) * 2 * nnz[0]
    flops += sum(f * 10 * nnz[level] for level in range(levels - 1)) + f * 4 * nnz[-1]
    return flops


def smpirun_hpcg(bin_dir: Path, ranks: int, *args: str) -> dict:
    done = subprocess.run(
        [str(REPO / "scripts" / "smpirun-on"), "crossbar", "--hosts", str(ranks), "--",
         str(bin_dir / "hpcg"), *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-800:]
    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    return record


@pytest.mark.parametrize(
    ("ranks", "local"),
    [(1, (16, 16, 16)), (2, (16, 8, 24)), (6, (8, 8, 8)), (8, (8, 16, 8)), (12, (8, 8, 16))],
)
def test_sizes_flops_and_convergence(bin_dir: Path, ranks: int, local: tuple[int, int, int]) -> None:
    args = [f"--n{axis}={n}" for axis, n in zip("xyz", local, strict=True)]
    record = smpirun_hpcg(bin_dir, ranks, *args, "--iterations", "20", "--verify")
    grid = process_grid(ranks)
    points = tuple(g * n for g, n in zip(grid, local, strict=True))
    assert record["process_grid"] == list(grid)
    assert record["rows"] == math.prod(points)
    assert record["nonzeros"] == math.prod(3 * n - 2 for n in points)
    assert record["flops"] == spec_flops(points, 4, 1, 20)
    # The preconditioned CG solves the system whatever the grid: x = ones to rounding.
    assert record["verified"] is True and record["residual"] < 1e-6
    assert record["solution_error"] < 1e-6


def test_a_communication_only_run_is_deterministic(bin_dir: Path) -> None:
    first, second = (smpirun_hpcg(bin_dir, 8, "--nx=8", "--ny=8", "--nz=8", "--iterations", "5") for _ in range(2))
    assert first["time_s"] == second["time_s"] > 0
    assert first == second


def test_mpich_solves_the_same_system(real_mpi_bin: Path, bin_dir: Path) -> None:
    args = ("--nx=16", "--ny=8", "--nz=8", "--iterations", "10", "--verify")
    done = mpiexec(real_mpi_bin / "hpcg", 2, *args)
    assert done.returncode == 0, done.stderr
    (real,) = [json.loads(line) for line in done.stdout.splitlines()]
    simulated = smpirun_hpcg(bin_dir, 2, *args)
    for key in ("process_grid", "rows", "nonzeros", "flops", "verified"):
        assert real[key] == simulated[key], key
    assert real["residual"] == pytest.approx(simulated["residual"], rel=1e-9)


def test_a_box_the_levels_cannot_halve_is_one_error(bin_dir: Path) -> None:
    done = subprocess.run(
        [str(REPO / "scripts" / "smpirun-on"), "crossbar", "--hosts", "1", "--", str(bin_dir / "hpcg"), "--nx=12"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("hpcg:")]
    assert errors == ["hpcg: error: --nx 12 is not a multiple of 8: each of 4 levels halves the box"]


def test_verification_fails_when_the_solver_has_not_converged(bin_dir: Path) -> None:
    # One iteration cannot reduce the residual a thousandfold: --verify must say so, exit status 1, one error line.
    done = subprocess.run(
        [str(REPO / "scripts" / "smpirun-on"), "crossbar", "--hosts", "2", "--", str(bin_dir / "hpcg"),
         "--nx=16", "--ny=16", "--nz=16", "--iterations", "1", "--verify"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert record["verified"] is False and record["residual"] >= 1e-3
    assert [line for line in done.stderr.splitlines() if line.startswith("hpcg:")] == [
        "hpcg: error: verification failed: 1 wrong residual reductions"
    ]


def test_per_node_predictions_run_on_every_node(tmp_path: Path, bin_dir: Path) -> None:
    # scripts/check-real-codes --hpcg-nodes on a small box: every node type predicts, each with the memory bandwidth
    # its platform records; the ratio to the published result is computed where one was found; and the node with
    # 16 times the memory bandwidth (Fugaku's A64FX against the K computer's SPARC64 VIIIfx) rates far higher.
    from study_runner.tools.hpcg_nodes import NODES
    from study_runner.tools.hpcg_nodes import main

    output = tmp_path / "nodes.json"
    assert main(["--memory-fraction", "0.5", "--box", "16", "--json", str(output)]) == 0
    predictions = {p["node"]: p for p in json.loads(output.read_text())}
    assert list(predictions) == [node.name for node in NODES]
    for node in NODES:
        p = predictions[node.name]
        assert 0 < p["predicted_flops"] < node.peak_flops
        assert (p["ratio"] is None) == (node.published_flops is None)
    assert (
        predictions["Fugaku (A64FX)"]["predicted_flops"]
        > 5 * predictions["K computer (SPARC64 VIIIfx)"]["predicted_flops"]
    )
