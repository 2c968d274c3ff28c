/*
 * exchange.c - simultaneous neighbour exchange, to expose node-bandwidth
 * limits.
 *
 * Each iteration, after a barrier, rank 0 exchanges BYTES with each of ranks
 * 1..PEERS at the same time (non-blocking receive from and send to every
 * peer, then one MPI_Waitall); rank 0 times the whole exchange. Ranks above
 * PEERS only join the barriers. Rank 0 prints one JSON line per run:
 *   {"app":"exchange","version":1,"ranks":N,"peers":k,"bytes":S,
 *    "iterations":I,"warmup":W,"time_s_min":..,"time_s_avg":..,"time_s_max":..}
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "exchange"
#define OUTPUT_VERSION 1
#define DEFAULT_PEERS 1
#define DEFAULT_BYTES (1 << 20)
#define DEFAULT_ITERATIONS 5
#define DEFAULT_WARMUP 1
#define EXCHANGE_TAG 0

static const char description[] =
    "Rank 0 exchanges BYTES with each of ranks 1..PEERS simultaneously (needs >= PEERS+1 ranks; "
    "the others only join the barriers), WARMUP untimed and then ITERATIONS timed times, each after a "
    "barrier. Rank 0 prints one JSON line on stdout.";

struct options {
    int peers;
    int64_t bytes;
    int iterations;
    int warmup;
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .peers = DEFAULT_PEERS,
        .bytes = DEFAULT_BYTES,
        .iterations = DEFAULT_ITERATIONS,
        .warmup = DEFAULT_WARMUP,
    };
    const tl_option options[] = {
        tl_opt_int('p', "peers", "PEERS", &opt->peers, 1, INT_MAX, "number of peers of rank 0"),
        tl_opt_size('s', "bytes", "BYTES", &opt->bytes, INT_MAX,
                    "message size in bytes in each direction"),
        tl_opt_iterations(&opt->iterations, "timed exchanges"),
        tl_opt_warmup(&opt->warmup, "untimed exchanges before them"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* Rank 0 and its PEERS peers need PEERS + 1 ranks. */
static int check_options(struct options *opt, int nranks)
{
    if (nranks < opt->peers + 1) {
        tl_arg_error(APP_NAME, "%d peers need at least %d MPI ranks (got %d)", opt->peers,
                     opt->peers + 1, nranks);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* One exchange, the kernel the harness times (tl_time_kernel): rank 0 sends to and receives from
 * each of its peers at once; a peer exchanges with rank 0. Rank 0's time is the one reported. */
struct exchange_kernel {
    int rank, partners, count;
    size_t bytes;
    char *block;
    MPI_Request *requests;
    MPI_Status *statuses;
};

static void exchange_run(void *state)
{
    const struct exchange_kernel *k = state;
    if (k->rank == 0) {
        for (int p = 0; p < k->partners; p++)
            MPI_Irecv(k->block + (size_t)(k->partners + p) * k->bytes, k->count, MPI_CHAR, p + 1,
                      EXCHANGE_TAG, MPI_COMM_WORLD, &k->requests[p]);
        for (int p = 0; p < k->partners; p++)
            MPI_Isend(k->block + (size_t)p * k->bytes, k->count, MPI_CHAR, p + 1, EXCHANGE_TAG,
                      MPI_COMM_WORLD, &k->requests[k->partners + p]);
        MPI_Waitall(2 * k->partners, k->requests, k->statuses);
    } else if (k->partners > 0) {
        MPI_Irecv(k->block + k->bytes, k->count, MPI_CHAR, 0, EXCHANGE_TAG, MPI_COMM_WORLD,
                  &k->requests[0]);
        MPI_Isend(k->block, k->count, MPI_CHAR, 0, EXCHANGE_TAG, MPI_COMM_WORLD, &k->requests[1]);
        MPI_Waitall(2, k->requests, k->statuses);
    }
}

static int run(struct options *opt, int rank, int nranks)
{
    /* Rank 0 talks to `peers` ranks, a peer only to rank 0. One block holds
     * the separate send buffers (first half) and receive buffers (second
     * half), `bytes` each. */
    int partners = rank == 0 ? opt->peers : (rank <= opt->peers ? 1 : 0);
    size_t bytes = (size_t)opt->bytes;
    int count = (int)opt->bytes;
    /* Real status arrays rather than MPI_STATUSES_IGNORE: with MPICH that
     * constant is (MPI_Status *)1, which GCC 12 flags (-Wstringop-overflow). */
    char *block = NULL;
    MPI_Request *requests = NULL;
    MPI_Status *statuses = NULL;
    if (partners > 0) {
        block = tl_alloc_or_abort(APP_NAME, 2 * (size_t)partners * bytes);
        memset(block, rank, 2 * (size_t)partners * bytes);
        requests = (MPI_Request *)tl_alloc_or_abort(APP_NAME, 2 * (size_t)partners * sizeof *requests);
        statuses = (MPI_Status *)tl_alloc_or_abort(APP_NAME, 2 * (size_t)partners * sizeof *statuses);
    }

    struct exchange_kernel k = {rank, partners, count, bytes, block, requests, statuses};
    tl_kernel kernel = {&k, NULL, exchange_run, NULL};
    tl_timing timing = tl_time_kernel(&kernel, opt->warmup, opt->iterations);

    if (rank == 0) {
        tl_json json;
        tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
        tl_json_i64(&json, "ranks", nranks);
        tl_json_i64(&json, "peers", opt->peers);
        tl_json_i64(&json, "bytes", opt->bytes);
        tl_json_repetitions(&json, opt->iterations, opt->warmup);
        tl_json_times(&json, (double[3]){timing.min, timing.mean, timing.max});
        tl_json_end(&json);
    }

    if (partners > 0) {
        free(statuses);
        free(requests);
        free(block);
    }
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
