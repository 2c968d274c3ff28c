"""nbl-combine's runs: the ping-pong, the testjig, the sweep at the model's optimal block sizes, Fig. 4's scan."""

from __future__ import annotations

from typing import Any

from paper_models import vector_combining as vc
from study_runner.smpi import EAGER_LIMIT_BYTES, message_overhead_options
from study_runner.study import PlatformSpec

MACHINE = vc.DELTA
OVERHEADS = list(message_overhead_options(MACHINE.alpha))
PLATFORMS = {"standard": vc.STANDARD, "nominal": vc.NOMINAL}
MESHES = ((4, 4), (8, 8), (16, 16), (16, 32))
MODEL_VS_SIM_MESHES = ((4, 4), (16, 16), (16, 32))  # the paper's test meshes (Sect. 4.2)
LENGTHS = (100, 1_000, 10_000, 100_000, 500_000)
QUICK_MESHES = ((4, 4), (8, 8))
QUICK_MAX_LENGTH = 100_000  # on meshes other than 4x4
FIG4_MESH, FIG4_LENGTH = (4, 4), 10_000
FIG4_BLOCKS = (20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 225, 250, 275, 300, 350, 400, 450, 500, 600)
FIG7_LENGTHS = (100_000, 500_000)
JIG_SIZES = (60, 120, 300, 600)
JIG_LINKS = (1, 2, 4, 6)
PINGPONG_DOUBLES = (1, 60, 600, EAGER_LIMIT_BYTES // 8 - 1, EAGER_LIMIT_BYTES // 8, 100_000)
COLOURS = {"tree": "C2", "snake": "C0", "fence": "C3"}


def _mesh_name(width: int, height: int, platform: str) -> str:
    return f"mesh{width}x{height}.{platform}"


def sweep_id(width: int, height: int, platform: str, algorithm: str, n: int) -> str:
    """Run id of one point of the sweep."""
    return f"sweep.{width}x{height}.{platform}.{algorithm}.N{n}"


def model_block(algorithm: str, n: int, width: int, height: int, platform: str) -> int:
    """The block size a sweep run uses: the integer optimum of the model of its platform (Tree: the whole vector)."""
    if algorithm == "tree":
        return n
    return vc.integer_optimal_block(algorithm, n, width, height, MACHINE, PLATFORMS[platform])


def model_time(
    algorithm: str, n: int, s: int, width: int, height: int, f: vc.NBLFunction, machine: vc.MachineParams = MACHINE
) -> float:
    """The model's time of one algorithm at block size ``s`` (ignored by Tree)."""
    if algorithm == "tree":
        return vc.tree_time(n, width, height, machine, f)
    timing = vc.snake_time if algorithm == "snake" else vc.fence_time
    return timing(n, s, width, height, machine, f)


def _in_quick(width: int, height: int, n: int) -> bool:
    return (width, height) == (4, 4) or ((width, height) in QUICK_MESHES and n <= QUICK_MAX_LENGTH)


def _combine_run(run_id: str, platform: str, width: int, height: int, algorithm: str, n: int, s: int, quick: bool):
    return {
        "id": run_id,
        "platform": platform,
        "app": "combine",
        "ranks": width * height,
        "args": [
            "-a",
            algorithm,
            "-W",
            str(width),
            "-H",
            str(height),
            "-n",
            str(n),
            "-S",
            str(s),
            "-w",
            "0",
            "-i",
            "1",
        ],
        "options": OVERHEADS,
        "quick": quick,
        "timeout": 3600,
    }


def generated_runs(platforms: dict[str, PlatformSpec]) -> list[dict[str, Any]]:
    """Every run of the study (the study file declares only the platforms)."""
    runs: list[dict[str, Any]] = [
        {
            "id": "pingpong",
            "platform": "pair",
            "app": "pingpong",
            "ranks": 2,
            "args": ["-s", ",".join(str(8 * d) for d in PINGPONG_DOUBLES), "-i", "2", "-w", "1"],
            "options": OVERHEADS,
        },
        {
            "id": "jig",
            "platform": "jig",
            "app": "nbl_testjig",
            "ranks": 9,
            "args": ["-L", ",".join(map(str, JIG_LINKS)), "-s", ",".join(map(str, JIG_SIZES)), "-i", "2", "-w", "1"],
            "options": OVERHEADS,
        },
    ]
    for width, height in MESHES:
        for platform in PLATFORMS:
            for n in LENGTHS:
                for algorithm in vc.ALGORITHMS:
                    s = model_block(algorithm, n, width, height, platform)
                    run_id = sweep_id(width, height, platform, algorithm, n)
                    name = _mesh_name(width, height, platform)
                    runs.append(_combine_run(run_id, name, width, height, algorithm, n, s, _in_quick(width, height, n)))
    width, height = FIG4_MESH
    for platform in PLATFORMS:
        for algorithm in vc.PIPELINED:
            for s in FIG4_BLOCKS:
                run_id = f"fig4.{platform}.{algorithm}.S{s}"
                name = _mesh_name(width, height, platform)
                runs.append(_combine_run(run_id, name, width, height, algorithm, FIG4_LENGTH, s, True))
    return runs
