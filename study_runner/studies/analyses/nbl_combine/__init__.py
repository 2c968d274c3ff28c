"""Analysis of ``nbl-combine``: Littlefield's NBL model and vector combining on the DELTA mesh.

The study file declares the whole experiment: the runs (``pingpong``, the testjig ``jig``, the ``sweep`` grid of
meshes x platform x vector length x algorithm, pipelined ones at their model's integer optimal block size, and
the ``fig4`` block-size scan; every run with alpha as SMPI message overheads), the checks (the ping-pong is
alpha + beta*S, Table 1's f(L), Fig. 4's optimum shift and reversal, the three claims of Fig. 5 on the
simulated regime map, the analogue of the paper's empirical Fig. 8, and Fig. 7's 33%) and what the figures show
(``[figures]``). This package gives the metrics the checks call (``METRICS``, :mod:`.metrics`), the notes and the
figures; the model is ``paper_models.vector_combining`` (DELTA parameters).

Heatmaps (the sweep point of ``[figures] heatmaps``): the combine app's Snake and Fence schedule
(:func:`generators.schedules.combine_steps`), message by message; statically, the most flows each link carries
in one step (cables 1: both are free of link conflicts; limiters up to the Appendix's L, 4 for Snake and 6 for
Fence), and the Fence run traced.
"""

from paper_models.vector_combining import PIPELINED
from study_runner.studies.analyses.nbl_combine.figures import figures
from study_runner.studies.analyses.nbl_combine.metrics import METRICS
from study_runner.studies.analyses.nbl_combine.metrics import notes
from study_runner.studies.analyses.nbl_combine.runs import FIG4
from study_runner.studies.analyses.nbl_combine.runs import SWEEP
from study_runner.studies.analyses.nbl_combine.runs import TEMPLATE_FUNCTIONS
from study_runner.studies.analyses.nbl_combine.runs import model_block
from study_runner.studies.figure_fields import run_id
from study_runner.studies.figure_fields import strings
from study_runner.studies.figure_fields import table
from study_runner.studies.grid_fields import GridRead

FIGURES = {  # the runs and sizes the figures and notes show (figure_fields)
    "testjig": run_id(),
    "heatmaps": table("width", "height", "nbl", "length"),
    "fig7": table("width", "height", "nbl"),
    "model_vs_sim": strings(),
}
GRIDS = {  # what the figures and notes read of the grids (grid_fields); the fit (fit_nbl) names its runs
    SWEEP: GridRead(width=(), height=(), length=(), nbl=("nominal",), algorithm=PIPELINED),
    FIG4: GridRead(width=(), height=(), length=(), nbl=(), algorithm=(), block=()),
}

__all__ = ["METRICS", "TEMPLATE_FUNCTIONS", "figures", "model_block", "notes"]
