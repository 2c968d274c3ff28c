/*
 * pingpong.c - point-to-point latency/bandwidth benchmark.
 *
 * For each message size, ranks 0 and 1 do WARMUP + ITERATIONS blocking round trips
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
#define DEFAULT_ITERATIONS 10
#define DEFAULT_WARMUP 2
#define PINGPONG_TAG 0

static const char description[] =
    "Ping-pong between MPI ranks 0 and 1 (needs >= 2 ranks; the others only join the barriers). "
    "For each size, WARMUP untimed and then ITERATIONS timed blocking round trips; the one-way time is "
    "half a round trip. Rank 0 prints one JSON line per size on stdout.";

struct options {
    tl_size_list sizes;
    int iterations;
    int warmup;
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .sizes = {.values = {1, 1 << 10, 64 << 10, 1 << 20}, .count = 4},
        .iterations = DEFAULT_ITERATIONS,
        .warmup = DEFAULT_WARMUP,
    };
    const tl_option options[] = {
        tl_opt_size_list('s', "sizes", "SIZES", &opt->sizes, INT_MAX,
                         "message sizes in bytes"),
        tl_opt_iterations(&opt->iterations, "timed round trips per size"),
        tl_opt_warmup(&opt->warmup, "untimed round trips before them"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* Ranks 0 and 1 play: 2 ranks at least. */
static int check_options(struct options *opt, int nranks)
{
    (void)opt;
    return tl_check_ranks(APP_NAME, nranks, 2);
}

static int run(struct options *opt, int rank, int nranks)
{
    /* One buffer, large enough for every size (and never 0 bytes), touched once. */
    char *buffer = NULL;
    if (rank < 2) {
        size_t largest = (size_t)tl_size_list_max(&opt->sizes);
        buffer = tl_alloc_or_abort(APP_NAME, largest);
        memset(buffer, rank, largest);
    }

    for (size_t k = 0; k < opt->sizes.count; k++) {
        int count = (int)opt->sizes.values[k];
        tl_stats oneway;
        tl_stats_init(&oneway);

        MPI_Barrier(MPI_COMM_WORLD);
        for (int it = 0; it < opt->warmup + opt->iterations; it++) {
            if (rank == 0) {
                double start = MPI_Wtime();
                MPI_Send(buffer, count, MPI_CHAR, 1, PINGPONG_TAG, MPI_COMM_WORLD);
                MPI_Recv(buffer, count, MPI_CHAR, 1, PINGPONG_TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                double rtt = MPI_Wtime() - start;
                if (it >= opt->warmup)
                    tl_stats_add(&oneway, rtt / 2.0);
            } else if (rank == 1) {
                MPI_Recv(buffer, count, MPI_CHAR, 0, PINGPONG_TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(buffer, count, MPI_CHAR, 0, PINGPONG_TAG, MPI_COMM_WORLD);
            }
        }

        if (rank == 0) {
            tl_json json;
            tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
            tl_json_i64(&json, "ranks", nranks);
            tl_json_i64(&json, "bytes", opt->sizes.values[k]);
            tl_json_repetitions(&json, opt->iterations, opt->warmup);
            tl_json_stats(&json, "oneway_s", &oneway);
            tl_json_end(&json);
        }
    }

    if (buffer != NULL)
        free(buffer);
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
