/*
 * hpcg_problem.h - the HPCG problem: a 27-point stencil on a 3-D grid split in boxes over a 3-D process
 * grid, its sparse matrix and halo on each level of the multigrid hierarchy (Dongarra, Heroux, Luszczek,
 * "HPCG Technical Specification", Sandia report SAND2013-8752, Sect. 2-3).
 *
 * Every rank owns an nx x ny x nz box of the global (npx nx) x (npy ny) x (npz nz) grid. Row i of the
 * matrix is grid point i; its entries are 26 on the diagonal and -1 for each of the (up to 26) grid
 * points around it (no wrap-around: a point on the global boundary has fewer). The exact solution is all
 * ones, so b_i = 26 - (entries of row i - 1). Local rows are numbered x fastest, then y, then z; the
 * columns of a row are local indices into a vector of ncol values: the nrow local ones, then the ghost
 * values received from the (up to 26) neighbouring ranks, each neighbour's in one contiguous run, in
 * global order. Each coarser level halves nx, ny and nz and keeps the process grid; its point (i,j,k) is
 * the finer level's point (2i,2j,2k) (f2c: injection).
 */
#ifndef HPCG_PROBLEM_H
#define HPCG_PROBLEM_H

#include <stdint.h>

#define HPCG_STENCIL 27  /* entries of a full row */
#define HPCG_MAX_NEIGHBOURS 26

/* An axis-aligned box of global grid points, [lo, hi) in each dimension, x first. */
typedef struct {
    int lo[3], hi[3];
} hpcg_box;

/* A neighbouring rank: what this rank sends it and receives from it in a halo exchange. */
typedef struct {
    int rank;
    hpcg_box send;     /* this rank's points the neighbour's rows use */
    hpcg_box recv;     /* the neighbour's points this rank's rows use: ghost values */
    int ghost_first;   /* index in a vector of the first ghost value received from it */
    int send_count, recv_count;
    int *send_rows;    /* the local row of each sent point, in global order */
    double *send_buffer;
} hpcg_neighbour;

typedef struct hpcg_level {
    int n[3];          /* local points per dimension */
    int origin[3];     /* global coordinates of local point (0,0,0) */
    int global[3];     /* global points per dimension */
    int nrow, ncol;    /* local rows; local + ghost values of a vector */
    int64_t nonzeros;  /* this rank's matrix entries */
    int neighbours;
    hpcg_neighbour neighbour[HPCG_MAX_NEIGHBOURS];
    int *row_entries;  /* entries of each row (ELLPACK rows of HPCG_STENCIL slots) */
    int *columns;      /* nrow x HPCG_STENCIL local column indices */
    double *values;    /* nrow x HPCG_STENCIL values */
    double *diagonal;  /* the diagonal entry of each row */
    /* Multigrid: the coarser level (NULL on the coarsest), the fine row of each coarse row, and the
     * work vectors of one V-cycle on this level. */
    struct hpcg_level *coarse;
    int *f2c;
    double *Axf, *rc, *xc;
} hpcg_level;

typedef struct {
    int ranks, rank;
    int grid[3];       /* process grid npx, npy, npz */
    int coords[3];     /* this rank's place in it */
    int levels;
    hpcg_level *level; /* level[0] finest */
} hpcg_problem;

/* The most balanced factorisation npx * npy * npz = ranks (smallest largest factor, then npx >= npy >= npz). */
void hpcg_process_grid(int ranks, int grid[3]);

/* Builds every level for a local box of n[0] x n[1] x n[2] points (each divisible by 2^(levels-1)). */
void hpcg_problem_build(hpcg_problem *problem, const int n[3], int levels, int rank, int ranks);
void hpcg_problem_free(hpcg_problem *problem);

/* b = A * ones on the finest level (the right-hand side whose exact solution is all ones). */
void hpcg_right_hand_side(const hpcg_level *level, double *b);

/* A vector of a level, ncol values (local and ghost), zeroed. */
double *hpcg_vector(const hpcg_level *level);

#endif /* HPCG_PROBLEM_H */
