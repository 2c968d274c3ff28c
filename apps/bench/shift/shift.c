/*
 * shift.c - shift permutations, one at a time: the traffic patterns by which
 * interconnects are compared (Kim et al., "Technology-Driven, Highly-Scalable
 * Dragonfly Topology", ISCA 2008, Sect. 4.2; the shift order of an all-to-all).
 *
 * In the permutation of shift S every rank r sends BYTES to rank (r + S) mod N
 * and receives BYTES from rank (r - S) mod N, all ranks at once (one
 * MPI_Sendrecv each). For each shift of --shifts (default: every shift
 * 1 .. N-1, an all-to-all in shift order with a barrier between its phases),
 * WARMUP untimed then ITERATIONS timed rounds, each after a barrier. A rank
 * times each round from the end of the barrier to the end of its Sendrecv;
 * the permutation's time is the slowest rank's mean (every flow has ended).
 * With --relabel SEED (>= 1; 0: none) the shifts apply to labels instead of ranks: rank r has
 * label p^-1(r) for a pseudo-random permutation p of the ranks, and sends to
 * p((p^-1(r) + S) mod N): a random permutation of the traffic (uniform
 * traffic, where a shift in rank order is adversarial to many networks). p is
 * Fisher-Yates, position i from N-1 down to 1 swapped with position
 * mix(SEED * N + i) mod (i + 1), mix = SplitMix64's output function
 * (generators.schedules.relabelling computes the same).
 * Rank 0 prints one JSON line per shift:
 *   {"app":"shift","version":1,"ranks":N,"shift":S,"relabel":SEED|null,
 *    "bytes":B,"iterations":I,"warmup":W,"time_s_min":..,"time_s_avg":..,
 *    "time_s_max":..,"rate_bps":..,"verified":true|false|null}
 * time_s_* are the min/avg/max over ranks of each rank's mean round time and
 * rate_bps = BYTES / time_s_max, the rate each rank gets when the slowest
 * flow sets the pace. With --rank-rates the line also has rank_rate_bps_min,
 * rank_rate_bps_avg and rank_rate_bps_max: the spread over the ranks of BYTES /
 * each rank's mean round time (a second reduction, after the times'); over a
 * random bisection pattern (-S N/2 with --relabel) its mean, the mean of the
 * pairs' bandwidths, is one sample of Hoefler's effective bisection bandwidth.
 * --print-schedule prints one line {"app":"shift",
 * "step":k,"messages":[[rank,destination],..]} for the k-th shift instead and
 * communicates nothing. --verify fills each block with its sender's rank (mod
 * 256) and checks every received byte (exit status 1 if one is wrong).
 * --interval T (seconds > 0) paces the rounds: a rank starts a round T seconds after it started the one
 * before (after its barrier), idle in between (tl_pace: a nanosleep, which SMPI simulates), or at once when the
 * round took longer: a message rate of 1/T per rank, an offered load of BYTES / (T x the injection
 * bandwidth), the background traffic of a shared machine. The pause is not part of a round's time.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "shift"
#define OUTPUT_VERSION 1
#define DEFAULT_BYTES (1 << 20)
#define DEFAULT_ITERATIONS 3
#define DEFAULT_WARMUP 1
#define SHIFT_TAG 0

static const char description[] =
    "Shift permutations one at a time: in shift S every rank r sends BYTES to rank (r + S) mod N and "
    "receives BYTES from rank (r - S) mod N at once; WARMUP untimed and ITERATIONS timed rounds per "
    "shift, each after a barrier. Rank 0 prints one JSON line per shift on stdout.";

struct options {
    tl_int_list shifts;
    int relabel; /* 0: none */
    int64_t bytes;
    int iterations;
    int warmup;
    int verify;
    int print_schedule;
    int rank_rates;
    double interval; /* seconds between the starts of two rounds; 0: no pause */
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .relabel = 0,
        .bytes = DEFAULT_BYTES,
        .iterations = DEFAULT_ITERATIONS,
        .warmup = DEFAULT_WARMUP,
    };
    const tl_option options[] = {
        tl_opt_int_list('S', "shifts", "SHIFTS", &opt->shifts, 1, INT_MAX,
                        "shifts to run, in order (every shift 1 .. N-1 when not given)"),
        tl_opt_int('R', "relabel", "SEED", &opt->relabel, 0, INT_MAX,
                   "shift pseudo-randomly relabelled ranks: random permutations (0: the ranks themselves)"),
        tl_opt_size('s', "bytes", "BYTES", &opt->bytes, INT_MAX, "bytes each rank sends per shift"),
        tl_opt_iterations(&opt->iterations, "timed rounds per shift"),
        tl_opt_warmup(&opt->warmup, "untimed rounds before them"),
        tl_opt_verify(&opt->verify, "check every received byte"),
        tl_opt_interval(&opt->interval),
        tl_opt_print_schedule(&opt->print_schedule),
        tl_opt_flag('\0', "rank-rates", &opt->rank_rates,
                    "also report the spread over the ranks of BYTES / each rank's mean round time"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* Every shift is 1 .. N-1; without --shifts there is one at least (N >= 2). */
static int check_options(struct options *opt, int nranks)
{
    for (size_t i = 0; i < opt->shifts.count; i++)
        if (opt->shifts.values[i] >= nranks) {
            tl_arg_error(APP_NAME, "--shifts %d needs more than %d MPI ranks (a shift is 1 .. N-1)",
                         opt->shifts.values[i], opt->shifts.values[i]);
            return TL_EXIT_USAGE;
        }
    if (opt->shifts.count == 0 && nranks < 2) {
        tl_arg_error(APP_NAME, "a shift needs at least 2 MPI ranks (got %d)", nranks);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* SplitMix64's output function (generators.mixing.mix). */
static uint64_t mix(uint64_t pair)
{
    uint64_t z = pair + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* label[r] = p^-1(r) and rank_of[l] = p(l) for the permutation p of --relabel SEED; the identity when seed is 0. */
static void relabelling(int nranks, int seed, int *rank_of, int *label)
{
    for (int i = 0; i < nranks; i++)
        rank_of[i] = i;
    for (int i = nranks - 1; seed > 0 && i > 0; i--) {
        int j = (int)(mix((uint64_t)seed * (uint64_t)nranks + (uint64_t)i) % (uint64_t)(i + 1));
        int kept = rank_of[i];
        rank_of[i] = rank_of[j];
        rank_of[j] = kept;
    }
    for (int l = 0; l < nranks; l++)
        label[rank_of[l]] = l;
}

/* One round of one shift, the kernel the harness times (tl_time_kernel). */
struct shift_kernel {
    int rank, nranks, shift, count, verify;
    const int *rank_of, *label;
    char *send, *recv;
    double interval, started; /* --interval, and when this rank started its round (MPI_Wtime) */
};

static int destination(const struct shift_kernel *k, int rank)
{
    return k->rank_of[(k->label[rank] + k->shift) % k->nranks];
}

static int source(const struct shift_kernel *k, int rank)
{
    return k->rank_of[(k->label[rank] - k->shift + k->nranks) % k->nranks];
}

static void shift_prepare(void *state)
{
    struct shift_kernel *k = state;
    if (k->verify) {
        memset(k->send, (unsigned char)k->rank, (size_t)k->count);
        memset(k->recv, 0xff, (size_t)k->count);
    }
}

static void shift_run(void *state)
{
    struct shift_kernel *k = state;
    k->started = MPI_Wtime();
    int to = destination(k, k->rank);
    int from = source(k, k->rank);
    MPI_Sendrecv(k->send, k->count, MPI_CHAR, to, SHIFT_TAG, k->recv, k->count, MPI_CHAR, from,
                 SHIFT_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static long long shift_check(void *state)
{
    const struct shift_kernel *k = state;
    long long errors = 0;
    tl_pace(k->started, k->interval); /* untimed: after the harness took the round's time */
    if (!k->verify)
        return 0;
    unsigned char expected = (unsigned char)source(k, k->rank);
    for (int i = 0; i < k->count; i++)
        errors += (unsigned char)k->recv[i] != expected;
    return errors;
}

static void print_schedule(const struct options *opt, struct shift_kernel *k)
{
    int shifts = opt->shifts.count > 0 ? (int)opt->shifts.count : k->nranks - 1;
    for (int step = 0; step < shifts; step++) {
        k->shift = opt->shifts.count > 0 ? opt->shifts.values[step] : step + 1;
        tl_schedule_step line;
        tl_schedule_begin(&line, APP_NAME, step);
        for (int r = 0; r < k->nranks; r++)
            tl_schedule_send(&line, r, destination(k, r));
        tl_schedule_end(&line);
    }
}

/* One shift's JSON line (collective: the times and wrong bytes are reduced to rank 0). */
static long long report(const struct options *opt, int nranks, int shift, tl_timing timing)
{
    tl_summary summary = tl_summarize(timing, opt->verify);
    double rates[3] = {0.0, 0.0, 0.0};
    if (opt->rank_rates)
        tl_spread_to_root(timing.mean > 0 ? (double)opt->bytes / timing.mean : 0.0, rates);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0)
        return summary.errors;
    tl_json json;
    tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
    tl_json_i64(&json, "ranks", nranks);
    tl_json_i64(&json, "shift", shift);
    if (opt->relabel > 0)
        tl_json_i64(&json, "relabel", opt->relabel);
    else
        tl_json_null(&json, "relabel");
    tl_json_i64(&json, "bytes", opt->bytes);
    tl_json_repetitions(&json, opt->iterations, opt->warmup);
    tl_json_times(&json, summary.spread);
    tl_json_f64(&json, "rate_bps", summary.spread[2] > 0 ? (double)opt->bytes / summary.spread[2] : 0.0);
    if (opt->rank_rates)
        tl_json_spread(&json, "rank_rate_bps", rates);
    tl_json_end_verified(&json, APP_NAME, opt->verify, summary.errors, "bytes");
    return summary.errors;
}

static int run(struct options *opt, int rank, int nranks)
{
    int *rank_of = (int *)tl_alloc_or_abort(APP_NAME, 2 * (size_t)nranks * sizeof *rank_of);
    int *label = rank_of + nranks;
    relabelling(nranks, opt->relabel, rank_of, label);
    struct shift_kernel k = {rank, nranks, 0, (int)opt->bytes, opt->verify, rank_of, label, NULL, NULL,
                             opt->interval, 0.0};
    if (opt->print_schedule) {
        if (rank == 0)
            print_schedule(opt, &k);
        free(rank_of);
        return 0;
    }
    char *block = tl_alloc_or_abort(APP_NAME, 2 * (size_t)opt->bytes + 2);
    k.send = block;
    k.recv = block + opt->bytes + 1;
    int shifts = opt->shifts.count > 0 ? (int)opt->shifts.count : nranks - 1;
    long long errors = 0;
    for (int step = 0; step < shifts; step++) {
        k.shift = opt->shifts.count > 0 ? opt->shifts.values[step] : step + 1;
        tl_kernel kernel = {&k, shift_prepare, shift_run, shift_check};
        errors += report(opt, nranks, k.shift, tl_time_kernel(&kernel, opt->warmup, opt->iterations));
    }
    free(block);
    free(rank_of);
    return tl_exit_status(opt->verify, errors);
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
