/*
 * bcast_signature.c - MPI_Bcast where the root and the receivers describe the
 * same data with different datatypes of one type signature (legal MPI).
 *
 * For each count N and each pairing below, rank 0 broadcasts N ints and every
 * receiver checks what arrived:
 *   same       root N x MPI_INT,             receivers N x MPI_INT
 *   contiguous root 1 x contiguous(N MPI_INT), receivers N x MPI_INT
 *   vector     root N x MPI_INT,             receivers 1 x vector(N blocks of
 *              one int, stride 2): every other int of their buffer, holes kept
 * Algorithms that cut the message into segments of each process's own elements
 * disagree on the segments in the last two pairings (truncation, or a deadlock).
 * Errors are returned, not fatal. Rank 0 prints one JSON line per case:
 *   {"app":"bcast_signature","version":1,"ranks":P,"pairing":"vector","count":N,
 *    "errors":E}
 * where E counts wrong or missing ints plus MPI errors, over all ranks.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "bcast_signature"
#define OUTPUT_VERSION 1
#define HOLE (-1)

static const char description[] =
    "Rank 0 broadcasts COUNT ints; the root and the receivers describe them with different "
    "datatypes of one type signature (same, contiguous, vector). Every receiver checks what arrived; "
    "rank 0 prints one JSON line per pairing and count with the errors over all ranks.";

static const char *const pairings[] = {"same", "contiguous", "vector"};

/* One broadcast of `count` ints in `pairing`; returns this rank's errors. */
static long long bcast_case(const char *pairing, int count, int rank, int *buffer)
{
    MPI_Datatype type = MPI_INT;
    int elements = count, stride = 1;
    if (rank == 0 && !strcmp(pairing, "contiguous")) {
        MPI_Type_contiguous(count, MPI_INT, &type);
        elements = 1;
    } else if (rank != 0 && !strcmp(pairing, "vector")) {
        MPI_Type_vector(count, 1, 2, MPI_INT, &type);
        elements = 1;
        stride = 2;
    }
    if (type != MPI_INT)
        MPI_Type_commit(&type);
    for (int k = 0; k < 2 * count; k++)
        buffer[k] = rank == 0 && k < count ? k : HOLE;
    long long errors = MPI_Bcast(buffer, elements, type, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
    for (int k = 0; rank != 0 && k < stride * count; k++)
        errors += buffer[k] != (k % stride ? HOLE : k / stride);
    if (type != MPI_INT)
        MPI_Type_free(&type);
    return errors;
}

struct options {
    tl_size_list counts;
};

static size_t declare_options(struct options *opt, tl_option *table)
{
    opt->counts = (tl_size_list){.values = {1, 1000, 100000, 1000000}, .count = 4};
    table[0] = tl_opt_counts(&opt->counts, INT_MAX / 2, "ints per broadcast");
    return 1;
}

static int run(struct options *opt, int rank, int nranks)
{
    (void)nranks;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int *buffer = tl_alloc_or_abort(APP_NAME, 2 * (size_t)tl_size_list_max(&opt->counts) * sizeof(int));
    for (size_t p = 0; p < TL_COUNT(pairings); p++)
        for (size_t k = 0; k < opt->counts.count; k++)
            tl_report_errors(APP_NAME, OUTPUT_VERSION, "pairing", pairings[p], opt->counts.values[k],
                             bcast_case(pairings[p], (int)opt->counts.values[k], rank, buffer));
    free(buffer);
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, tl_no_checks, run);
