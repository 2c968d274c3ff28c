"""The papers' analytic models, which the studies compare simulations against.

* ``bgq``: Blue Gene/Q partition geometry and internal bisection (Oltchik & Schwartz, Lemma 3.2, Theorem 3.1);
* ``vector_combining``: Littlefield's cost models of tree, snake and fence with and without node bandwidth limits;
* ``collision_allgather``: Sugiyama, Morie and Nanri's allgather predictor with link collisions.

They take schedules from ``generators.schedules`` and routes from ``generators.analysis``; they never run SimGrid.
"""
