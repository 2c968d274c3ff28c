/*
 * hpcg_kernels.c - HPCG's kernels (see hpcg_kernels.h), as the specification's reference algorithms:
 * no reordering, no colouring, one rank per core; the halo exchange posts every receive, then sends
 * (blocking) and waits.
 */
#include <string.h>

#include <mpi.h>

#include "hpcg_kernels.h"

#define HALO_TAG 99

void hpcg_exchange_halo(const hpcg_level *level, double *x)
{
    MPI_Request requests[HPCG_MAX_NEIGHBOURS];
    MPI_Status statuses[HPCG_MAX_NEIGHBOURS];
    for (int m = 0; m < level->neighbours; m++) {
        const hpcg_neighbour *nb = &level->neighbour[m];
        MPI_Irecv(x + nb->ghost_first, nb->recv_count, MPI_DOUBLE, nb->rank, HALO_TAG, MPI_COMM_WORLD,
                  &requests[m]);
    }
    for (int m = 0; m < level->neighbours; m++) {
        const hpcg_neighbour *nb = &level->neighbour[m];
        for (int i = 0; i < nb->send_count; i++)
            nb->send_buffer[i] = x[nb->send_rows[i]];
        MPI_Send(nb->send_buffer, nb->send_count, MPI_DOUBLE, nb->rank, HALO_TAG, MPI_COMM_WORLD);
    }
    MPI_Waitall(level->neighbours, requests, statuses);
}

/* y = A x without the halo exchange. */
static void product(const hpcg_level *level, const double *x, double *y)
{
    for (int i = 0; i < level->nrow; i++) {
        const double *values = level->values + (size_t)i * HPCG_STENCIL;
        const int *columns = level->columns + (size_t)i * HPCG_STENCIL;
        double sum = 0.0;
        for (int k = 0; k < level->row_entries[i]; k++)
            sum += values[k] * x[columns[k]];
        y[i] = sum;
    }
}

void hpcg_spmv(const hpcg_level *level, double *x, double *y, hpcg_times *times)
{
    double start = MPI_Wtime();
    hpcg_exchange_halo(level, x);
    product(level, x, y);
    if (times)
        times->spmv += MPI_Wtime() - start;
}

/* x_i = (r_i - sum_{j != i} a_ij x_j) / a_ii, with the newest x_j. */
static inline void relax_row(const hpcg_level *level, const double *r, double *x, int i)
{
    const double *values = level->values + (size_t)i * HPCG_STENCIL;
    const int *columns = level->columns + (size_t)i * HPCG_STENCIL;
    double sum = r[i];
    for (int k = 0; k < level->row_entries[i]; k++)
        sum -= values[k] * x[columns[k]];
    sum += level->diagonal[i] * x[i];
    x[i] = sum / level->diagonal[i];
}

void hpcg_symgs(const hpcg_level *level, const double *r, double *x)
{
    hpcg_exchange_halo(level, x);
    for (int i = 0; i < level->nrow; i++)
        relax_row(level, r, x, i);
    for (int i = level->nrow - 1; i >= 0; i--)
        relax_row(level, r, x, i);
}

double hpcg_dot(const hpcg_level *level, const double *x, const double *y, hpcg_times *times)
{
    double start = MPI_Wtime(), local = 0.0, global = 0.0;
    for (int i = 0; i < level->nrow; i++)
        local += x[i] * y[i];
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    times->dot += MPI_Wtime() - start;
    return global;
}

void hpcg_waxpby(const hpcg_level *level, double alpha, const double *x, double beta, const double *y,
                 double *w, hpcg_times *times)
{
    double start = MPI_Wtime();
    for (int i = 0; i < level->nrow; i++)
        w[i] = alpha * x[i] + beta * y[i];
    times->waxpby += MPI_Wtime() - start;
}

/* The V-cycle (Sect. 3.3): pre-smooth, restrict the residual by injection, recurse, prolong, post-smooth;
 * one smoothing sweep alone on the coarsest level. */
static void v_cycle(const hpcg_level *level, const double *r, double *x)
{
    memset(x, 0, sizeof(double) * (size_t)level->ncol);
    hpcg_symgs(level, r, x);
    const hpcg_level *coarse = level->coarse;
    if (!coarse)
        return;
    hpcg_exchange_halo(level, x);
    product(level, x, level->Axf);
    for (int i = 0; i < coarse->nrow; i++)
        level->rc[i] = r[level->f2c[i]] - level->Axf[level->f2c[i]];
    v_cycle(coarse, level->rc, level->xc);
    for (int i = 0; i < coarse->nrow; i++)
        x[level->f2c[i]] += level->xc[i];
    hpcg_symgs(level, r, x);
}

void hpcg_mg(const hpcg_level *level, const double *r, double *x, hpcg_times *times)
{
    double start = MPI_Wtime();
    v_cycle(level, r, x);
    times->mg += MPI_Wtime() - start;
}
