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
#define DEFAULT_BYTES "1M"
#define DEFAULT_ITERS 5
#define DEFAULT_WARMUP 1
#define EXCHANGE_TAG 0

static const char usage_text[] =
    "usage: " APP_NAME " [-p PEERS] [-s BYTES] [-i ITERS] [-x WARMUP] [-h]\n"
    "Rank 0 exchanges BYTES with each of ranks 1..PEERS simultaneously (needs\n"
    ">= PEERS+1 ranks; the others only join the barriers). Rank 0 prints one\n"
    "JSON line on stdout.\n"
    "  -p PEERS   number of peers, >= 1 (default: " TL_STRINGIFY(DEFAULT_PEERS) ")\n"
    "  -s BYTES   message size in each direction, optional suffix K/M/G or\n"
    "             KiB/MiB/GiB (default: " DEFAULT_BYTES ")\n"
    "  -i ITERS   timed exchanges, >= 1 (default: " TL_STRINGIFY(DEFAULT_ITERS) ")\n"
    "  -x WARMUP  untimed exchanges before them, >= 0 (default: " TL_STRINGIFY(DEFAULT_WARMUP) ")\n"
    "  -h         show this help\n";

struct options {
    int peers;
    int64_t bytes;
    int iters;
    int warmup;
};

/* Fills *opt from argv; returns TL_ARGS_OK or the exit code of main(). */
static int parse_args(int argc, char **argv, int nranks, struct options *opt)
{
    const char *bytes = DEFAULT_BYTES;
    opt->peers = DEFAULT_PEERS;
    opt->iters = DEFAULT_ITERS;
    opt->warmup = DEFAULT_WARMUP;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (tl_is_help(arg)) {
            tl_print_usage(usage_text);
            return TL_EXIT_HELP;
        }
        if (arg[0] != '-' || arg[1] == '\0' || strchr("psix", arg[1]) == NULL) {
            tl_arg_error(APP_NAME, "%s '%s' (see -h)",
                         arg[0] == '-' ? "unknown option" : "unexpected argument", arg);
            return TL_EXIT_USAGE;
        }
        char flag = arg[1];
        const char *value = tl_option_value(argc, argv, &i);
        if (value == NULL) {
            tl_arg_error(APP_NAME, "option -%c needs a value", flag);
            return TL_EXIT_USAGE;
        }
        if (flag == 's') {
            bytes = value; /* parsed after the loop, like the default */
            continue;
        }
        int min = flag == 'x' ? 0 : 1;
        int *target = flag == 'p' ? &opt->peers : flag == 'i' ? &opt->iters : &opt->warmup;
        tl_status status = tl_parse_int(value, min, target);
        if (status != TL_OK) {
            tl_arg_error(APP_NAME, "invalid -%c value '%s': %s (expected an integer >= %d)", flag,
                         value, tl_status_text(status), min);
            return TL_EXIT_USAGE;
        }
    }

    tl_status status = tl_parse_size(bytes, INT_MAX, &opt->bytes);
    if (status != TL_OK) {
        tl_arg_error(APP_NAME, "invalid -s value '%s': %s (expected a size <= %d bytes, e.g. 64K)",
                     bytes, tl_status_text(status), INT_MAX);
        return TL_EXIT_USAGE;
    }
    if (nranks < opt->peers + 1) {
        tl_arg_error(APP_NAME, "%d peers need at least %d MPI ranks (got %d)", opt->peers,
                     opt->peers + 1, nranks);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* Allocates n bytes (at least 1) or aborts the whole job. */
static char *alloc_or_abort(size_t n)
{
    char *p = malloc(n > 0 ? n : 1);
    if (p == NULL) {
        fprintf(stderr, APP_NAME ": error: cannot allocate %zu bytes\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    struct options opt;
    int code = parse_args(argc, argv, nranks, &opt);
    if (code != TL_ARGS_OK) {
        MPI_Finalize();
        return code;
    }

    /* Rank 0 talks to `peers` ranks, a peer only to rank 0. One block holds
     * the separate send buffers (first half) and receive buffers (second
     * half), `bytes` each. */
    int partners = rank == 0 ? opt.peers : (rank <= opt.peers ? 1 : 0);
    size_t bytes = (size_t)opt.bytes;
    int count = (int)opt.bytes;
    /* Real status arrays rather than MPI_STATUSES_IGNORE: with MPICH that
     * constant is (MPI_Status *)1, which GCC 12 flags (-Wstringop-overflow). */
    char *block = NULL;
    MPI_Request *requests = NULL;
    MPI_Status *statuses = NULL;
    if (partners > 0) {
        block = alloc_or_abort(2 * (size_t)partners * bytes);
        memset(block, rank, 2 * (size_t)partners * bytes);
        requests = (MPI_Request *)alloc_or_abort(2 * (size_t)partners * sizeof *requests);
        statuses = (MPI_Status *)alloc_or_abort(2 * (size_t)partners * sizeof *statuses);
    }

    tl_stats times;
    tl_stats_init(&times);
    for (int it = 0; it < opt.warmup + opt.iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            double start = MPI_Wtime();
            for (int p = 0; p < partners; p++)
                MPI_Irecv(block + (size_t)(partners + p) * bytes, count, MPI_CHAR, p + 1,
                          EXCHANGE_TAG, MPI_COMM_WORLD, &requests[p]);
            for (int p = 0; p < partners; p++)
                MPI_Isend(block + (size_t)p * bytes, count, MPI_CHAR, p + 1, EXCHANGE_TAG,
                          MPI_COMM_WORLD, &requests[partners + p]);
            MPI_Waitall(2 * partners, requests, statuses);
            double elapsed = MPI_Wtime() - start;
            if (it >= opt.warmup)
                tl_stats_add(&times, elapsed);
        } else if (partners > 0) {
            MPI_Irecv(block + bytes, count, MPI_CHAR, 0, EXCHANGE_TAG, MPI_COMM_WORLD,
                      &requests[0]);
            MPI_Isend(block, count, MPI_CHAR, 0, EXCHANGE_TAG, MPI_COMM_WORLD, &requests[1]);
            MPI_Waitall(2, requests, statuses);
        }
    }

    if (rank == 0) {
        tl_json json;
        tl_json_begin(&json, stdout);
        tl_json_str(&json, "app", APP_NAME);
        tl_json_i64(&json, "version", OUTPUT_VERSION);
        tl_json_i64(&json, "ranks", nranks);
        tl_json_i64(&json, "peers", opt.peers);
        tl_json_i64(&json, "bytes", opt.bytes);
        tl_json_i64(&json, "iterations", opt.iters);
        tl_json_i64(&json, "warmup", opt.warmup);
        tl_json_f64(&json, "time_s_min", times.min);
        tl_json_f64(&json, "time_s_avg", tl_stats_avg(&times));
        tl_json_f64(&json, "time_s_max", times.max);
        tl_json_end(&json);
    }

    if (partners > 0) {
        free(statuses);
        free(requests);
        free(block);
    }
    MPI_Finalize();
    return 0;
}
