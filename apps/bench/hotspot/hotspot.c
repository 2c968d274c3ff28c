/*
 * hotspot.c - hot-spot traffic: every rank but the hot ones sends to a hot
 * rank, the background pattern that congests the cables into a few nodes
 * (GPCNeT's incast congestors, Chunduri et al., SC19).
 *
 * Ranks 0 .. HOT-1 are hot; every other rank r sends BYTES to hot rank
 * r mod HOT each round, and each hot rank receives from all the ranks that
 * send to it (non-blocking receives, then one MPI_Waitall). WARMUP untimed
 * then ITERATIONS timed rounds, each after a barrier; a rank times each round
 * from the end of the barrier to the end of its messages, and the round's
 * time is the slowest rank's mean. --interval T paces the rounds (a round T
 * seconds after the start of the one before, idle in between: tl_pace), for
 * background traffic at a message rate. --verify fills each message with its
 * sender's rank (mod 256) and checks every received byte (exit status 1 if
 * one is wrong). Rank 0 prints one JSON line:
 *   {"app":"hotspot","version":1,"ranks":N,"hot":H,"bytes":B,"iterations":I,
 *    "warmup":W,"time_s_min":..,"time_s_avg":..,"time_s_max":..,"verified":..}
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "hotspot"
#define OUTPUT_VERSION 1
#define DEFAULT_BYTES (1 << 20)
#define HOTSPOT_TAG 0

static const char description[] =
    "Hot-spot traffic: ranks 0..HOT-1 are hot, every other rank r sends BYTES to hot rank r mod HOT; "
    "WARMUP untimed and ITERATIONS timed rounds, each after a barrier. Rank 0 prints one JSON line on stdout.";

struct options {
    int hot;
    int64_t bytes;
    int iterations;
    int warmup;
    int verify;
    double interval; /* seconds between the starts of two rounds; 0: no pause */
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){.hot = 1, .bytes = DEFAULT_BYTES, .iterations = 3, .warmup = 1};
    const tl_option options[] = {
        tl_opt_int('H', "hot", "HOT", &opt->hot, 1, INT_MAX, "hot ranks, which every other rank sends to"),
        tl_opt_size('s', "bytes", "BYTES", &opt->bytes, INT_MAX, "bytes each sender sends per round"),
        tl_opt_iterations(&opt->iterations, "timed rounds"),
        tl_opt_warmup(&opt->warmup, "untimed rounds before them"),
        tl_opt_verify(&opt->verify, "check every received byte"),
        tl_opt_interval(&opt->interval),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* A sender at least besides the hot ranks. */
static int check_options(struct options *opt, int nranks)
{
    if (opt->hot >= nranks) {
        tl_arg_error(APP_NAME, "%d hot ranks need at least %d MPI ranks (got %d)", opt->hot, opt->hot + 1,
                     nranks);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* One round, the kernel the harness times (tl_time_kernel). */
struct hotspot_kernel {
    int rank, nranks, hot, count, verify, senders;
    char *block; /* a sender's message, or a hot rank's one buffer per sender */
    MPI_Request *requests;
    MPI_Status *statuses; /* not MPI_STATUSES_IGNORE: MPICH's (MPI_Status *)1 trips GCC 12's -Wstringop-overflow */
    double interval, started;
};

static void hotspot_prepare(void *state)
{
    const struct hotspot_kernel *k = state;
    if (k->verify && k->rank >= k->hot)
        memset(k->block, (unsigned char)k->rank, (size_t)k->count);
    else if (k->verify)
        memset(k->block, 0xff, (size_t)k->senders * (size_t)k->count);
}

static void hotspot_run(void *state)
{
    struct hotspot_kernel *k = state;
    k->started = MPI_Wtime();
    if (k->rank >= k->hot) {
        MPI_Send(k->block, k->count, MPI_CHAR, k->rank % k->hot, HOTSPOT_TAG, MPI_COMM_WORLD);
        return;
    }
    int n = 0;
    for (int sender = k->hot + k->rank; sender < k->nranks; sender += k->hot, n++)
        MPI_Irecv(k->block + (size_t)n * (size_t)k->count, k->count, MPI_CHAR, sender, HOTSPOT_TAG,
                  MPI_COMM_WORLD, &k->requests[n]);
    MPI_Waitall(n, k->requests, k->statuses);
}

static long long hotspot_check(void *state)
{
    const struct hotspot_kernel *k = state;
    tl_pace(k->started, k->interval); /* untimed: after the harness took the round's time */
    long long errors = 0;
    if (!k->verify || k->rank >= k->hot)
        return 0;
    for (int n = 0; n < k->senders; n++) {
        unsigned char expected = (unsigned char)(k->hot + k->rank + n * k->hot);
        for (int i = 0; i < k->count; i++)
            errors += (unsigned char)k->block[(size_t)n * (size_t)k->count + (size_t)i] != expected;
    }
    return errors;
}

static int run(struct options *opt, int rank, int nranks)
{
    int hot = rank < opt->hot;
    int senders = hot ? (nranks - 1 - rank) / opt->hot : 0; /* ranks hot + rank, hot + rank + HOT, ... */
    size_t buffers = hot ? (size_t)(senders > 0 ? senders : 1) : 1;
    char *block = tl_alloc_or_abort(APP_NAME, buffers * (size_t)opt->bytes + 1);
    MPI_Request *requests = (MPI_Request *)tl_alloc_or_abort(APP_NAME, buffers * sizeof *requests);
    MPI_Status *statuses = (MPI_Status *)tl_alloc_or_abort(APP_NAME, buffers * sizeof *statuses);
    struct hotspot_kernel k = {rank, nranks, opt->hot, (int)opt->bytes, opt->verify, senders, block,
                               requests, statuses, opt->interval, 0.0};
    tl_kernel kernel = {&k, hotspot_prepare, hotspot_run, hotspot_check};
    tl_summary summary = tl_summarize(tl_time_kernel(&kernel, opt->warmup, opt->iterations), opt->verify);
    if (rank == 0) {
        tl_json json;
        tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
        tl_json_i64(&json, "ranks", nranks);
        tl_json_i64(&json, "hot", opt->hot);
        tl_json_i64(&json, "bytes", opt->bytes);
        tl_json_repetitions(&json, opt->iterations, opt->warmup);
        tl_json_times(&json, summary.spread);
        tl_json_end_verified(&json, APP_NAME, opt->verify, summary.errors, "bytes");
    }
    free(statuses);
    free(requests);
    free(block);
    return tl_exit_status(opt->verify, summary.errors);
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
