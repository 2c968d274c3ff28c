/*
 * pingpong.c - point-to-point latency/bandwidth benchmark.
 *
 * For each message size, ranks 0 and 1 do WARMUP + ITERS blocking round trips
 * (MPI_Send/MPI_Recv); each round trip is timed on rank 0 and the one-way time
 * is half of it. Other ranks only take part in the barriers. Rank 0 prints one
 * JSON line per size:
 *   {"app":"pingpong","version":1,"ranks":N,"bytes":S,"iterations":I,
 *    "warmup":W,"oneway_s_min":..,"oneway_s_avg":..,"oneway_s_max":..}
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "pingpong"
#define OUTPUT_VERSION 1
#define DEFAULT_SIZES "1,1K,64K,1M"
#define DEFAULT_ITERS 10
#define DEFAULT_WARMUP 2
#define PINGPONG_TAG 0

static const char usage_text[] =
    "usage: " APP_NAME " [-s SIZES] [-i ITERS] [-x WARMUP] [-h]\n"
    "Ping-pong between MPI ranks 0 and 1 (needs >= 2 ranks; the others only\n"
    "join the barriers). Rank 0 prints one JSON line per size on stdout.\n"
    "  -s SIZES   comma-separated message sizes in bytes, optional suffix\n"
    "             K/M/G or KiB/MiB/GiB (default: " DEFAULT_SIZES ")\n"
    "  -i ITERS   timed round trips per size, >= 1 (default: " TL_STRINGIFY(DEFAULT_ITERS) ")\n"
    "  -x WARMUP  untimed round trips before them, >= 0 (default: " TL_STRINGIFY(DEFAULT_WARMUP) ")\n"
    "  -h         show this help\n";

struct options {
    int64_t sizes[TL_MAX_SIZES];
    size_t nsizes;
    int iters;
    int warmup;
};

/* Fills *opt from argv; returns TL_ARGS_OK or the exit code of main(). */
static int parse_args(int argc, char **argv, int nranks, struct options *opt)
{
    const char *sizes = DEFAULT_SIZES;
    opt->iters = DEFAULT_ITERS;
    opt->warmup = DEFAULT_WARMUP;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (tl_is_help(arg)) {
            tl_print_usage(usage_text);
            return TL_EXIT_HELP;
        }
        if (arg[0] != '-' || (arg[1] != 's' && arg[1] != 'i' && arg[1] != 'x')) {
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
            sizes = value; /* parsed after the loop, like the default */
            continue;
        }
        int min = flag == 'i' ? 1 : 0;
        tl_status status = tl_parse_int(value, min, flag == 'i' ? &opt->iters : &opt->warmup);
        if (status != TL_OK) {
            tl_arg_error(APP_NAME, "invalid -%c value '%s': %s (expected an integer >= %d)", flag,
                         value, tl_status_text(status), min);
            return TL_EXIT_USAGE;
        }
    }

    tl_status status = tl_parse_size_list(sizes, INT_MAX, opt->sizes, TL_MAX_SIZES, &opt->nsizes);
    if (status != TL_OK) {
        tl_arg_error(APP_NAME,
                     "invalid -s value '%s': %s (expected up to %d comma-separated sizes <= %d "
                     "bytes, e.g. " DEFAULT_SIZES ")",
                     sizes, tl_status_text(status), TL_MAX_SIZES, INT_MAX);
        return TL_EXIT_USAGE;
    }
    if (nranks < 2) {
        tl_arg_error(APP_NAME, "needs at least 2 MPI ranks (got %d)", nranks);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
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

    /* One buffer, large enough for every size (and never 0 bytes), touched once. */
    char *buffer = NULL;
    if (rank < 2) {
        int64_t largest = 1;
        for (size_t k = 0; k < opt.nsizes; k++)
            if (opt.sizes[k] > largest)
                largest = opt.sizes[k];
        buffer = malloc((size_t)largest);
        if (buffer == NULL) {
            fprintf(stderr, APP_NAME ": error: cannot allocate %lld bytes\n", (long long)largest);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(buffer, rank, (size_t)largest);
    }

    for (size_t k = 0; k < opt.nsizes; k++) {
        int count = (int)opt.sizes[k];
        tl_stats oneway;
        tl_stats_init(&oneway);

        MPI_Barrier(MPI_COMM_WORLD);
        for (int it = 0; it < opt.warmup + opt.iters; it++) {
            if (rank == 0) {
                double start = MPI_Wtime();
                MPI_Send(buffer, count, MPI_CHAR, 1, PINGPONG_TAG, MPI_COMM_WORLD);
                MPI_Recv(buffer, count, MPI_CHAR, 1, PINGPONG_TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                double rtt = MPI_Wtime() - start;
                if (it >= opt.warmup)
                    tl_stats_add(&oneway, rtt / 2.0);
            } else if (rank == 1) {
                MPI_Recv(buffer, count, MPI_CHAR, 0, PINGPONG_TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(buffer, count, MPI_CHAR, 0, PINGPONG_TAG, MPI_COMM_WORLD);
            }
        }

        if (rank == 0) {
            tl_json json;
            tl_json_begin(&json, stdout);
            tl_json_str(&json, "app", APP_NAME);
            tl_json_i64(&json, "version", OUTPUT_VERSION);
            tl_json_i64(&json, "ranks", nranks);
            tl_json_i64(&json, "bytes", opt.sizes[k]);
            tl_json_i64(&json, "iterations", opt.iters);
            tl_json_i64(&json, "warmup", opt.warmup);
            tl_json_f64(&json, "oneway_s_min", oneway.min);
            tl_json_f64(&json, "oneway_s_avg", tl_stats_avg(&oneway));
            tl_json_f64(&json, "oneway_s_max", oneway.max);
            tl_json_end(&json);
        }
    }

    if (buffer != NULL)
        free(buffer);
    MPI_Finalize();
    return 0;
}
