"""Analysis of ``nbl-combine``: Littlefield's NBL model and vector combining on the DELTA mesh.

Runs (the study file's ``[[runs]]`` and ``[[generate]]`` grids; every one with alpha as SMPI message overheads):

* ``pingpong``: one-way times on two neighbouring nodes, eager and rendezvous sizes;
* ``jig``: the 3x3 testjig on the nominal mesh (Table 1);
* ``sweep.<W>x<H>.<platform>.<algorithm>.N<N>``: every mesh x vector length x algorithm x platform
  (``standard`` or ``nominal``), Snake and Fence at the integer block size that is optimal for the model of
  that platform (f = 1 or f = L);
* ``fig4.<platform>.<algorithm>.S<S>``: the block-size scan of Fig. 4 (4x4, N = 1e4).

Heatmaps (4x4, nominal NBL, N = 1e4): the combine app's Snake and Fence schedule
(:func:`generators.schedules.combine_steps`), message by message; statically, the most flows each link carries
in one step (cables 1: both are free of link conflicts; limiters up to the Appendix's L, 4 for Snake and 6 for
Fence), and the Fence run traced.

The model is ``paper_models.vector_combining`` (DELTA parameters). Checks: the ping-pong is
alpha + beta*S, the simulated f(L) of Table 1, Fig. 4's optimum shift and reversal, the three claims of
Fig. 5 on the simulated regime map (the analogue of the paper's empirical Fig. 8), and Fig. 7's 33%.
"""

from study_runner.analyses.nbl_combine.checks import checks, notes
from study_runner.analyses.nbl_combine.figures import figures
from study_runner.analyses.nbl_combine.runs import TEMPLATE_FUNCTIONS, model_block

__all__ = ["TEMPLATE_FUNCTIONS", "checks", "figures", "model_block", "notes"]
