/*
 * The all-to-all's schedules, pure functions of (rank, phase): Open MPI's pairwise (shift) and the
 * MLFM paper's congestion-free schedule on an allocation of n layers x l columns x m servers.
 */
#ifndef ALLTOALL_SCHEDULE_H
#define ALLTOALL_SCHEDULE_H

enum algorithm { ALGORITHM_PAIRWISE, ALGORITHM_MLFM };

/* Who talks to whom: the algorithm, N and (mlfm) the allocation shape. */
struct schedule {
    int algorithm;
    int ranks;
    int has_shape;
    int n, l, m; /* layers, columns, servers per leaf */
};

/* The rank that `rank` sends to in `phase`. */
int destination(const struct schedule *s, int rank, int phase);
/* The rank that `rank` receives from in `phase`: destination(source(r, p), p) == r. */
int source(const struct schedule *s, int rank, int phase);

#endif
