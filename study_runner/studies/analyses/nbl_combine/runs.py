"""nbl-combine's runs as the study file declares them, and the model values its grids use.

The runs are data (studies/nbl-combine.toml): the ping-pong, the testjig, the ``sweep`` grid (meshes x
N x algorithm x platform) and the ``fig4`` grid (the block-size scan). The analysis reads their axes and finds
their runs in the study (``Study.values``, ``Study.run_at``); the sweep's block sizes call :func:`model_block`
and the ping-pong checks the model's :func:`alpha` (``TEMPLATE_FUNCTIONS``).
"""

from __future__ import annotations

from paper_models import vector_combining as vc
from study_runner.studies.context import StudyContext

MACHINE = vc.DELTA
PLATFORMS = {"standard": vc.STANDARD, "nominal": vc.NOMINAL}  # the model's f(L) of each value of the grids' nbl
SWEEP, FIG4 = "sweep", "fig4"  # the study file's run grids
COLOURS = {"tree": "C2", "snake": "C0", "fence": "C3"}


def meshes(ctx: StudyContext) -> list[tuple[int, int]]:
    """The (W, H) meshes of the sweep, as the study file declares them."""
    return ctx.study.values(SWEEP, "width", "height")


def lengths(ctx: StudyContext) -> list[int]:
    """The vector lengths N of the sweep."""
    return ctx.study.values(SWEEP, "length")


def platforms(ctx: StudyContext) -> list[str]:
    """The sweep's platforms (its nbl values: ``standard``, ``nominal``)."""
    return ctx.study.values(SWEEP, "nbl")


def algorithms(ctx: StudyContext) -> list[str]:
    """The algorithms the sweep runs."""
    return ctx.study.values(SWEEP, "algorithm")


def sweep_run(ctx: StudyContext, width: int, height: int, nbl: str, algorithm: str, n: int) -> str:
    """The id of the sweep's run of ``algorithm`` on the W x H mesh of platform ``nbl`` at N = ``n``."""
    return ctx.study.run_at(SWEEP, width=width, height=height, nbl=nbl, algorithm=algorithm, length=n)


def fig4_case(ctx: StudyContext) -> tuple[int, int, int, list[int]]:
    """Fig. 4's mesh W, H, its vector length N and the block sizes S it scans."""
    ((width, height, n),) = ctx.study.values(FIG4, "width", "height", "length")
    return width, height, n, ctx.study.values(FIG4, "block")


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


def alpha() -> float:
    """The model's start-up cost alpha of a message, s (the Appendix)."""
    return MACHINE.alpha


TEMPLATE_FUNCTIONS = {"model_block": model_block, "alpha": alpha}
