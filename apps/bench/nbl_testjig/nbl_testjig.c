/*
 * nbl_testjig.c - the node-bandwidth-limit testjig of Littlefield,
 * "Modeling node bandwidth limits and their effect on vector combining
 * algorithms" (1992; Sect. 4.2, Table 1).
 *
 * Exactly 9 ranks on a 3 x 3 mesh, rank r = node (r % 3, r / 3); the centre
 * is rank 4 (1,1), its neighbours are 1 (below), 3 (left), 5 (right) and
 * 7 (above). For every L of --links and every S of --sizes (L outer, S
 * inner), WARMUP untimed then ITERATIONS timed iterations, each after a
 * barrier, of one case:
 *   L = 1: rank 5 sends S doubles to the centre, which only receives;
 *   L = 2, 4, 6: the centre exchanges S doubles (sends and receives,
 *          nonblocking, one MPI_Waitall) with 1, 2 or 3 neighbours: 5; 5 and
 *          3; 5, 3 and 7 (the neighbours do the same with the centre).
 * L counts the centre's links in use. T is the centre's mean time per
 * iteration, from the end of the barrier to the end of its Waitall; the paper
 * derives f(L) = dT(L) / dT(1) from T at several S. Rank 0 gets T from the
 * centre and prints one JSON line per (L, S):
 *   {"app":"nbl_testjig","version":1,"links":L,"doubles":S,"iterations":R,
 *    "time_s":T}
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "nbl_testjig"
#define OUTPUT_VERSION 1
#define RANKS 9
#define CENTRE 4
#define MAX_PARTNERS 3
#define MAX_DOUBLES (1 << 26) /* 512 MiB per buffer */
#define DEFAULT_ITERATIONS 10
#define DEFAULT_WARMUP 2
#define TAG_DATA 1
#define TAG_RESULT 2

static const char description[] =
    "The testjig of Littlefield's Table 1 on a 3 x 3 mesh (exactly 9 ranks, rank r = node "
    "(r % 3, r / 3), centre rank 4): for L = 1 the right neighbour (5) sends S doubles to the "
    "centre; for L = 2, 4, 6 the centre exchanges S doubles with 1, 2 or 3 neighbours (5; 5 and "
    "3; 5, 3 and 7) at once. WARMUP untimed and ITERATIONS timed iterations per (L, S), each "
    "after a barrier. Rank 0 prints one JSON line per (L, S) with the centre's mean time per "
    "iteration.";

/* Partners of the centre, in this order: the first L/2 of them (L >= 2), or the first (L = 1). */
static const int partners[MAX_PARTNERS] = {5, 3, 7};

struct options {
    tl_int_list links;
    tl_int_list sizes;
    int iterations;
    int warmup;
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .links = {.values = {1, 2, 4, 6}, .count = 4},
        .sizes = {.values = {60, 120, 300, 600}, .count = 4},
        .iterations = DEFAULT_ITERATIONS,
        .warmup = DEFAULT_WARMUP,
    };
    const tl_option options[] = {
        tl_opt_int_list('L', "links", "L", &opt->links, 1, 6,
                        "cases by the centre's links in use: 1 (receive from one neighbour), "
                        "2, 4 or 6 (exchange with one, two or three neighbours)"),
        tl_opt_int_list('s', "sizes", "SIZES", &opt->sizes, 1, MAX_DOUBLES,
                        "message sizes S, in doubles"),
        tl_opt_iterations(&opt->iterations, "timed iterations per case"),
        tl_opt_warmup(&opt->warmup, "untimed iterations first"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* Every L is a case of the table (1, 2, 4 or 6); the ranks are the 3 x 3 mesh. */
static int check_options(struct options *opt, int nranks)
{
    for (size_t k = 0; k < opt->links.count; k++) {
        int links = opt->links.values[k];
        if (links != 1 && links != 2 && links != 4 && links != 6) {
            tl_arg_error(APP_NAME,
                         "invalid --links value %d: L must be 1, 2, 4 or 6 (receive from one "
                         "neighbour, or exchange with one, two or three)",
                         links);
            return TL_EXIT_USAGE;
        }
    }
    if (nranks != RANKS) {
        tl_arg_error(APP_NAME,
                     "needs exactly %d MPI ranks (a 3 x 3 mesh with the centre at rank %d), "
                     "got %d",
                     RANKS, CENTRE, nranks);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* One iteration of case (links, count): the kernel the harness times (tl_time_kernel). */
struct jig_kernel {
    int rank, links, count;
    double *sendbuf, *recvbuf;
};

static void jig_run(void *state)
{
    const struct jig_kernel *k = state;
    int links = k->links, count = k->count, rank = k->rank;
    double *sendbuf = k->sendbuf, *recvbuf = k->recvbuf;
    int exchanges = links == 1 ? 0 : links / 2;
    MPI_Request requests[2 * MAX_PARTNERS];
    /* A real status array rather than MPI_STATUSES_IGNORE: with MPICH that constant is
     * (MPI_Status *)1, which GCC 12 flags (-Wstringop-overflow). */
    MPI_Status statuses[2 * MAX_PARTNERS];
    int nreq = 0;
    if (links == 1) {
        if (rank == CENTRE)
            MPI_Recv(recvbuf, count, MPI_DOUBLE, partners[0], TAG_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        else if (rank == partners[0])
            MPI_Send(sendbuf, count, MPI_DOUBLE, CENTRE, TAG_DATA, MPI_COMM_WORLD);
    } else if (rank == CENTRE) {
        for (int p = 0; p < exchanges; p++)
            MPI_Irecv(recvbuf + (size_t)p * (size_t)count, count, MPI_DOUBLE, partners[p],
                      TAG_DATA, MPI_COMM_WORLD, &requests[nreq++]);
        for (int p = 0; p < exchanges; p++)
            MPI_Isend(sendbuf, count, MPI_DOUBLE, partners[p], TAG_DATA, MPI_COMM_WORLD,
                      &requests[nreq++]);
    } else {
        for (int p = 0; p < exchanges; p++)
            if (rank == partners[p]) {
                MPI_Irecv(recvbuf, count, MPI_DOUBLE, CENTRE, TAG_DATA, MPI_COMM_WORLD,
                          &requests[nreq++]);
                MPI_Isend(sendbuf, count, MPI_DOUBLE, CENTRE, TAG_DATA, MPI_COMM_WORLD,
                          &requests[nreq++]);
            }
    }
    if (nreq > 0)
        MPI_Waitall(nreq, requests, statuses);
}

/* The centre's time per iteration of case (links, count), mean over the timed iterations;
 * meaningful on the centre only. */
static double run_case(int rank, int links, int count, const struct options *opt,
                       double *sendbuf, double *recvbuf)
{
    struct jig_kernel k = {rank, links, count, sendbuf, recvbuf};
    tl_kernel kernel = {&k, NULL, jig_run, NULL};
    return tl_time_kernel(&kernel, opt->warmup, opt->iterations).mean;
}

static int run(struct options *opt, int rank, int nranks)
{
    (void)nranks; /* check_options checked it: RANKS */
    int largest = tl_int_list_max(&opt->sizes);
    double *sendbuf = tl_alloc_or_abort(APP_NAME, (size_t)largest * sizeof *sendbuf);
    double *recvbuf =
        tl_alloc_or_abort(APP_NAME, (size_t)MAX_PARTNERS * (size_t)largest * sizeof *recvbuf);
    for (int e = 0; e < largest; e++)
        sendbuf[e] = (double)(rank + e);

    for (size_t l = 0; l < opt->links.count; l++)
        for (size_t s = 0; s < opt->sizes.count; s++) {
            int links = opt->links.values[l], count = opt->sizes.values[s];
            double time = run_case(rank, links, count, opt, sendbuf, recvbuf);
            if (rank == CENTRE)
                MPI_Send(&time, 1, MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD);
            if (rank == 0) {
                MPI_Recv(&time, 1, MPI_DOUBLE, CENTRE, TAG_RESULT, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                tl_json json;
                tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
                tl_json_i64(&json, "links", links);
                tl_json_i64(&json, "doubles", count);
                tl_json_i64(&json, "iterations", opt->iterations);
                tl_json_f64(&json, "time_s", time);
                tl_json_end(&json);
            }
        }

    free(recvbuf);
    free(sendbuf);
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
