/*
 * smpi/mpi.h for a real MPI - the one header of apps/smpi_compat, which lets codes
 * that SimGrid ported to SMPI (its NAS IS, EP and DT, examples/smpi/NAS of the
 * source distribution) build unmodified with a real MPI's mpicc, to be run for
 * real beside their simulation (scripts/check-real-codes --validate). It is never
 * on the include path of an smpicc build, where SimGrid's own smpi/mpi.h is.
 *
 * What the ports use of SMPI, and what it means without a simulator:
 *   SMPI_SHARED_MALLOC/FREE   memory that SMPI may fold between ranks: plain memory
 *   SMPI_SAMPLE_GLOBAL/LOCAL  a loop SMPI may sample: the plain loop, every iteration
 */
#ifndef TOPOLAB_SMPI_COMPAT_MPI_H
#define TOPOLAB_SMPI_COMPAT_MPI_H

#include <mpi.h>
#include <stdlib.h>

#define SMPI_SHARED_MALLOC(size) malloc(size)
#define SMPI_SHARED_FREE(ptr) free(ptr)
#define SMPI_SAMPLE_GLOBAL(init, cond, step, iters, threshold) for (init; cond; step)
#define SMPI_SAMPLE_LOCAL(init, cond, step, iters, threshold) for (init; cond; step)

#endif
