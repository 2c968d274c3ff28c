/*
 * zero_count.c - every fixed-count MPI collective called with count 0.
 *
 * Count 0 is legal MPI, and benchmark suites (IMB, OSU) call it at their
 * smallest message size; an MPI must complete the call and write nothing.
 * Every rank fills its receive buffer with a sentinel, calls each collective
 * below with count 0 on MPI_COMM_WORLD, and checks that the sentinel is still
 * there. Rank 0 prints one JSON line per collective:
 *   {"app":"zero_count","version":1,"ranks":N,"collective":"allreduce","errors":0}
 * where errors counts the receive-buffer elements written on any rank.
 */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "zero_count"
#define OUTPUT_VERSION 1
#define SENTINEL (-1.0)

static const char description[] =
    "Calls MPI_Allreduce, MPI_Reduce, MPI_Bcast, MPI_Allgather, MPI_Allgatherv, MPI_Alltoall, "
    "MPI_Gather, MPI_Scatter and the nonblocking MPI_Iallreduce, MPI_Ireduce and MPI_Ibcast with "
    "count 0, and checks that no receive buffer was written. Rank 0 prints one JSON line per "
    "collective on stdout.";

/* Buffers of one element per rank (never 0 bytes): what a count-0 call may not touch. */
struct buffers {
    double *send, *recv;
    int *counts, *displs; /* all 0: the v-variants' counts */
};

static void zero_count_call(const char *collective, struct buffers *b, MPI_Comm comm)
{
    MPI_Request request = MPI_REQUEST_NULL;
    if (!strcmp(collective, "allreduce"))
        MPI_Allreduce(b->send, b->recv, 0, MPI_DOUBLE, MPI_SUM, comm);
    else if (!strcmp(collective, "reduce"))
        MPI_Reduce(b->send, b->recv, 0, MPI_DOUBLE, MPI_SUM, 0, comm);
    else if (!strcmp(collective, "bcast"))
        MPI_Bcast(b->recv, 0, MPI_DOUBLE, 0, comm);
    else if (!strcmp(collective, "allgather"))
        MPI_Allgather(b->send, 0, MPI_DOUBLE, b->recv, 0, MPI_DOUBLE, comm);
    else if (!strcmp(collective, "allgatherv"))
        MPI_Allgatherv(b->send, 0, MPI_DOUBLE, b->recv, b->counts, b->displs, MPI_DOUBLE, comm);
    else if (!strcmp(collective, "alltoall"))
        MPI_Alltoall(b->send, 0, MPI_DOUBLE, b->recv, 0, MPI_DOUBLE, comm);
    else if (!strcmp(collective, "gather"))
        MPI_Gather(b->send, 0, MPI_DOUBLE, b->recv, 0, MPI_DOUBLE, 0, comm);
    else if (!strcmp(collective, "scatter"))
        MPI_Scatter(b->send, 0, MPI_DOUBLE, b->recv, 0, MPI_DOUBLE, 0, comm);
    else if (!strcmp(collective, "iallreduce"))
        MPI_Iallreduce(b->send, b->recv, 0, MPI_DOUBLE, MPI_SUM, comm, &request);
    else if (!strcmp(collective, "ireduce"))
        MPI_Ireduce(b->send, b->recv, 0, MPI_DOUBLE, MPI_SUM, 0, comm, &request);
    else if (!strcmp(collective, "ibcast"))
        MPI_Ibcast(b->recv, 0, MPI_DOUBLE, 0, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
}

/* No option: the app checks every zero-count collective. */
struct options {
    int none;
};

static size_t declare_options(struct options *opt, tl_option *table)
{
    (void)opt;
    (void)table;
    return 0;
}

static int run(struct options *opt, int rank, int nranks)
{
    (void)opt;
    static const char *const collectives[] = {"allreduce",  "reduce",  "bcast",  "allgather",
                                              "allgatherv", "alltoall", "gather", "scatter",
                                              "iallreduce", "ireduce", "ibcast"};

    size_t n = (size_t)nranks;
    struct buffers b = {tl_alloc_or_abort(APP_NAME, n * sizeof(double)),
                        tl_alloc_or_abort(APP_NAME, n * sizeof(double)),
                        tl_alloc_or_abort(APP_NAME, n * sizeof(int)),
                        tl_alloc_or_abort(APP_NAME, n * sizeof(int))};
    for (size_t i = 0; i < n; i++) {
        b.send[i] = rank;
        b.counts[i] = b.displs[i] = 0;
    }
    for (size_t c = 0; c < TL_COUNT(collectives); c++) {
        for (size_t i = 0; i < n; i++)
            b.recv[i] = SENTINEL;
        zero_count_call(collectives[c], &b, MPI_COMM_WORLD);
        long long written = 0;
        for (size_t i = 0; i < n; i++)
            written += b.recv[i] != SENTINEL;
        tl_report_errors(APP_NAME, OUTPUT_VERSION, "collective", collectives[c], -1, written);
    }
    free(b.send);
    free(b.recv);
    free(b.counts);
    free(b.displs);
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, tl_no_checks, run);
