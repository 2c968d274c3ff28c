/*
 * ring.c - a token passed around the ranks: the engine's cost per message.
 *
 * Rank 0 sends BYTES to rank 1, every rank r > 0 receives them from r - 1 and
 * sends them on to (r + 1) mod N, and rank 0 receives them back from N - 1:
 * one lap is N messages, one after the other (MPI_Send and MPI_Recv), so one
 * message is in flight at a time and the network model has nothing to share.
 * What a simulation of it costs per message is what the simulator spends on a
 * message: context switches, simcalls, SMPI's request path, one solve of one
 * flow. WARMUP untimed laps, then LAPS timed ones, timed by rank 0 from the
 * moment it sends the token (the others wait for it: no barrier is needed, and
 * none skews the first message). Rank 0 prints one JSON line:
 *   {"app":"ring","version":1,"ranks":N,"bytes":B,"laps":L,"warmup":W,
 *    "messages":N*L,"time_s":..,"hop_s":..}
 * time_s is rank 0's time for the timed laps and hop_s = time_s / messages.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "ring"
#define OUTPUT_VERSION 1
#define DEFAULT_BYTES 8
#define DEFAULT_LAPS 10
#define DEFAULT_WARMUP 1
#define RING_TAG 0

static const char description[] =
    "A token of BYTES passed around the ranks, rank r to (r + 1) mod N, one message at a time: WARMUP "
    "untimed laps, then LAPS timed ones (N messages each). Rank 0 prints one JSON line on stdout: the time "
    "of the timed laps and the time per message.";

struct options {
    int64_t bytes;
    int laps;
    int warmup;
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){.bytes = DEFAULT_BYTES, .laps = DEFAULT_LAPS, .warmup = DEFAULT_WARMUP};
    const tl_option options[] = {
        tl_opt_size('s', "bytes", "BYTES", &opt->bytes, INT_MAX, "the token's size in bytes"),
        tl_opt_int('l', "laps", "LAPS", &opt->laps, 1, INT_MAX, "timed laps around the ranks"),
        tl_opt_warmup(&opt->warmup, "untimed laps before them"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* A ring of one rank would send to itself: 2 ranks at least. */
static int check_options(struct options *opt, int nranks)
{
    (void)opt;
    return tl_check_ranks(APP_NAME, nranks, 2);
}

/* One lap: the token leaves rank 0 and comes back to it. */
static void lap(char *token, int count, int rank, int nranks)
{
    int next = (rank + 1) % nranks;
    int previous = (rank + nranks - 1) % nranks;
    if (rank == 0) {
        MPI_Send(token, count, MPI_CHAR, next, RING_TAG, MPI_COMM_WORLD);
        MPI_Recv(token, count, MPI_CHAR, previous, RING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(token, count, MPI_CHAR, previous, RING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(token, count, MPI_CHAR, next, RING_TAG, MPI_COMM_WORLD);
    }
}

static int run(struct options *opt, int rank, int nranks)
{
    int count = (int)opt->bytes;
    char *token = tl_alloc_or_abort(APP_NAME, count > 0 ? (size_t)count : 1);
    memset(token, rank, count > 0 ? (size_t)count : 1);
    for (int it = 0; it < opt->warmup; it++)
        lap(token, count, rank, nranks);
    double start = MPI_Wtime();
    for (int it = 0; it < opt->laps; it++)
        lap(token, count, rank, nranks);
    double elapsed = MPI_Wtime() - start;
    if (rank == 0) {
        int64_t messages = (int64_t)nranks * opt->laps;
        tl_json json;
        tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
        tl_json_i64(&json, "ranks", nranks);
        tl_json_i64(&json, "bytes", opt->bytes);
        tl_json_i64(&json, "laps", opt->laps);
        tl_json_i64(&json, "warmup", opt->warmup);
        tl_json_i64(&json, "messages", messages);
        tl_json_f64(&json, "time_s", elapsed);
        tl_json_f64(&json, "hop_s", elapsed / (double)messages);
        tl_json_end(&json);
    }
    free(token);
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
