/*
 * one_process.c - every collective on a communicator of one process.
 *
 * MPI_COMM_SELF exists in every MPI program, and a job of one rank makes
 * MPI_COMM_WORLD one too: a collective there is a local copy (or nothing). For
 * each count, every rank calls each collective below on MPI_COMM_SELF with
 * COUNT doubles and checks its receive buffer. Rank 0 prints one JSON line per
 * collective and count:
 *   {"app":"one_process","version":1,"ranks":P,"collective":"reduce","count":N,
 *    "errors":E}
 * where E counts wrong elements and MPI errors over all ranks.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "one_process"
#define OUTPUT_VERSION 1

static const char description[] =
    "Calls every collective on MPI_COMM_SELF (a communicator of one process) with COUNT doubles and "
    "checks the receive buffer; rank 0 prints one JSON line per collective and count with the errors "
    "over all ranks.";

static const char *const collectives[] = {
    "reduce",  "allreduce", "allreduce_in_place", "scan",   "reduce_scatter", "reduce_scatter_block",
    "allgather", "allgatherv", "alltoall", "alltoallv", "gather", "gatherv", "scatter", "scatterv", "bcast",
};

/* One collective on MPI_COMM_SELF; returns the MPI error code. Afterwards recv must equal send. */
static int call(const char *name, const double *send, double *recv, int n)
{
    MPI_Comm self = MPI_COMM_SELF;
    int counts[1] = {n}, displs[1] = {0};
    if (!strcmp(name, "reduce"))
        return MPI_Reduce(send, recv, n, MPI_DOUBLE, MPI_SUM, 0, self);
    if (!strcmp(name, "allreduce"))
        return MPI_Allreduce(send, recv, n, MPI_DOUBLE, MPI_SUM, self);
    if (!strcmp(name, "allreduce_in_place")) {
        memcpy(recv, send, (size_t)n * sizeof *recv);
        return MPI_Allreduce(MPI_IN_PLACE, recv, n, MPI_DOUBLE, MPI_SUM, self);
    }
    if (!strcmp(name, "scan"))
        return MPI_Scan(send, recv, n, MPI_DOUBLE, MPI_SUM, self);
    if (!strcmp(name, "reduce_scatter"))
        return MPI_Reduce_scatter(send, recv, counts, MPI_DOUBLE, MPI_SUM, self);
    if (!strcmp(name, "reduce_scatter_block"))
        return MPI_Reduce_scatter_block(send, recv, n, MPI_DOUBLE, MPI_SUM, self);
    if (!strcmp(name, "allgather"))
        return MPI_Allgather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, self);
    if (!strcmp(name, "allgatherv"))
        return MPI_Allgatherv(send, n, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, self);
    if (!strcmp(name, "alltoall"))
        return MPI_Alltoall(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, self);
    if (!strcmp(name, "alltoallv"))
        return MPI_Alltoallv(send, counts, displs, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, self);
    if (!strcmp(name, "gather"))
        return MPI_Gather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, self);
    if (!strcmp(name, "gatherv"))
        return MPI_Gatherv(send, n, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, 0, self);
    if (!strcmp(name, "scatter"))
        return MPI_Scatter(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, self);
    if (!strcmp(name, "scatterv"))
        return MPI_Scatterv(send, counts, displs, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, self);
    memcpy(recv, send, (size_t)n * sizeof *recv); /* bcast: the root's buffer stays as it is */
    return MPI_Bcast(recv, n, MPI_DOUBLE, 0, self);
}

struct options {
    tl_size_list counts;
};

static size_t declare_options(struct options *opt, tl_option *table)
{
    opt->counts = (tl_size_list){.values = {1, 1000, 1000000}, .count = 3};
    table[0] = tl_opt_counts(&opt->counts, INT_MAX / 8, "doubles per call");
    return 1;
}

static int run(struct options *opt, int rank, int nranks)
{
    (void)nranks;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    size_t largest = (size_t)tl_size_list_max(&opt->counts);
    double *send = tl_alloc_or_abort(APP_NAME, largest * sizeof *send);
    double *recv = tl_alloc_or_abort(APP_NAME, largest * sizeof *recv);
    for (size_t c = 0; c < TL_COUNT(collectives); c++) {
        for (size_t k = 0; k < opt->counts.count; k++) {
            int n = (int)opt->counts.values[k];
            for (int i = 0; i < n; i++) {
                send[i] = rank + i + 1.0;
                recv[i] = -1.0;
            }
            long long errors = call(collectives[c], send, recv, n) != MPI_SUCCESS;
            for (int i = 0; i < n; i++)
                errors += recv[i] != send[i];
            tl_report_errors(APP_NAME, OUTPUT_VERSION, "collective", collectives[c], n, errors);
        }
    }
    free(send);
    free(recv);
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, tl_no_checks, run);
