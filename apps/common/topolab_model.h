/*
 * topolab_model.h - modelled computation: THE ONE PLACE WHERE THE TOPOLAB APPS
 * TOUCH SIMGRID. Everything else in apps/ is plain MPI + C11.
 *
 * Some work is pointless to perform for real inside a simulation (e.g. the
 * local transpose of a 512 MiB block on each of 64 simulated hosts) yet its
 * cost belongs in the simulated time. An app calls tl_model_compute() with
 * the number of seconds that work takes on the simulated host:
 *   - built with smpicc (SimGrid/SMPI): the calling rank's simulated clock
 *     advances by exactly `seconds`, as a computation of
 *     seconds x (speed of the rank's host) flops; deterministic, also with
 *     --cfg=smpi/simulate-computation:no;
 *   - built with a real MPI: nothing happens (real time passes anyway).
 */
#ifndef TOPOLAB_MODEL_H
#define TOPOLAB_MODEL_H

/* Injects `seconds` (>= 0; 0 does nothing) of computation under SMPI; no-op otherwise. */
void tl_model_compute(double seconds);

#endif /* TOPOLAB_MODEL_H */
