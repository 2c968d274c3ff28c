/*
 * hpcg_kernels.h - the kernels of HPCG's preconditioned conjugate gradient (HPCG Technical
 * Specification, Sect. 3): halo exchange, sparse matrix-vector product, symmetric Gauss-Seidel, dot
 * product, vector update and the multigrid V-cycle, each timed into one part of hpcg_times.
 */
#ifndef HPCG_KERNELS_H
#define HPCG_KERNELS_H

#include "hpcg_problem.h"

/* Seconds spent in each kernel (MPI_Wtime); the V-cycle's includes its products and smoothers. */
typedef struct {
    double dot, waxpby, spmv, mg;
} hpcg_times;

/* Fills x's ghost values from the neighbours (MPI_Irecv, MPI_Send, MPI_Waitall). */
void hpcg_exchange_halo(const hpcg_level *level, double *x);

/* y = A x (x's halo is exchanged first). */
void hpcg_spmv(const hpcg_level *level, double *x, double *y, hpcg_times *times);

/* One symmetric Gauss-Seidel sweep on A x = r: forward over the local rows, then backward. */
void hpcg_symgs(const hpcg_level *level, const double *r, double *x);

/* x . y over all ranks (MPI_Allreduce). */
double hpcg_dot(const hpcg_level *level, const double *x, const double *y, hpcg_times *times);

/* w = alpha x + beta y over the local rows. */
void hpcg_waxpby(const hpcg_level *level, double alpha, const double *x, double beta, const double *y,
                 double *w, hpcg_times *times);

/* x = M^-1 r: one multigrid V-cycle from `level` down to the coarsest (x starts at zero). */
void hpcg_mg(const hpcg_level *level, const double *r, double *x, hpcg_times *times);

#endif /* HPCG_KERNELS_H */
