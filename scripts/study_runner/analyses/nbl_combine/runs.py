"""nbl-combine's runs, as the study file declares them, and the model values its grids use.

The runs are data (scripts/studies/nbl-combine.toml): the ping-pong, the testjig, the ``sweep`` grid (meshes x
N x algorithm x platform) and the ``fig4`` grid (the block-size scan). The analysis reads their axes from the
study (``Study.values``); the sweep's block sizes call :func:`model_block` (``TEMPLATE_FUNCTIONS``).
"""

from __future__ import annotations

from paper_models import vector_combining as vc
from study_runner.context import StudyContext

MACHINE = vc.DELTA
PLATFORMS = {"standard": vc.STANDARD, "nominal": vc.NOMINAL}
MODEL_VS_SIM_MESHES = ((4, 4), (16, 16), (16, 32))  # the paper's test meshes (Sect. 4.2)
FIG7_LENGTHS = (100_000, 500_000)  # Fig. 7's vector lengths
COLOURS = {"tree": "C2", "snake": "C0", "fence": "C3"}


def meshes(ctx: StudyContext) -> list[tuple[int, int]]:
    """The (W, H) meshes of the sweep, as the study file declares them."""
    return ctx.study.values("sweep", "width", "height")


def lengths(ctx: StudyContext) -> list[int]:
    """The vector lengths N of the sweep."""
    return ctx.study.values("sweep", "length")


def fig4_case(ctx: StudyContext) -> tuple[int, int, int, list[int]]:
    """Fig. 4's mesh W, H, its vector length N and the block sizes S it scans."""
    ((width, height, n),) = ctx.study.values("fig4", "width", "height", "length")
    return width, height, n, ctx.study.values("fig4", "block")


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


TEMPLATE_FUNCTIONS = {"model_block": model_block}
