"""The tools layer: commands built on the layers below, each with its own ``main``.

``smpirun_on`` (any MPI code on a family), real codes and their validation (``realcodes``, ``hpcc``,
``validation``), MPICH's conformance suite (``conformance*``) and benchmarks of the simulator and of platform
scale (``bench_sim`` and its report ``bench_sim_report``, ``platform_scale``, their cases in ``cases``).
"""
