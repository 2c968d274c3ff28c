/*
 * alltoall.c - all-to-all personalised exchange, phase by phase, with two
 * schedules: Open MPI's pairwise (shift) exchange and the MLFM schedule of
 * Shimizu, Miwa and Nakashima. generators/schedules.py implements the same
 * schedules for the static analyses (alltoall_destinations).
 *
 * N ranks, N phases p = 0..N-1. Every rank holds one block of BYTES bytes for
 * every rank and receives one block from every rank, stored in phase order:
 * sendbuf + p*BYTES is the block for dest(r, p), recvbuf + p*BYTES the one
 * from src(r, p). Phase 0 copies the rank's own block locally (memcpy); in
 * phase p >= 1 the rank sends to dest(r, p) and receives from src(r, p) in
 * one MPI_Sendrecv. --phases K runs phases 0..K-1 only, with buffers of K
 * blocks: a partial all-to-all, to time phases on machines where N blocks per
 * rank would not fit in memory (6156 ranks on a d = 18 MLFM).
 *   pairwise: dest = (r + p) % N, src = (r - p) mod N.
 *   mlfm:     the allocation has n layers x l columns x m servers per leaf
 *             (--shape n,l,m, N = n*l*m, 1 <= m <= l - 1); rank r is server
 *             (i, j, k), r = (i*l + j)*m + k, and phase p = (s*l + t)*m + u.
 *             Server (i, j, k) sends to ((i + s) % n, (j + off(t, k)) % l,
 *             (k + u) % m) with off(0, k) = 0, off(t, k) = t + k + 1 if that
 *             is < l, else t + k + 2 (the (t+k)-th other column, counted
 *             cyclically from j + 1 and skipping column j).
 *
 * Timing (IMB-like): WARMUP untimed then ITERATIONS timed iterations, each
 * after a barrier; a rank times an iteration from the end of the barrier to
 * the end of its last phase, and records when each phase of the last timed
 * iteration ended. Rank 0 prints one JSON line:
 *   {"app":"alltoall","version":1,"algorithm":..,"ranks":N,"shape":[n,l,m]|null,
 *    "block_bytes":B,"phases":K,"warmup":W,"iterations":R,"time_s_min":..,
 *    "time_s_avg":..,"time_s_max":..,"throughput_mibs":..,
 *    "phase_end_s":[K numbers],"verified":true|false|null}
 * time_s_* are the min/avg/max over ranks of each rank's mean iteration time;
 * phase_end_s[p] the latest end of phase p (from each rank's own start);
 * throughput_mibs = (K-1)*B / time_s_max / 2^20 (0 for K = 1); K = N unless
 * --phases.
 * --print-schedule prints one line {"app":"alltoall","step":p-1,"messages":
 * [[rank,destination],..]} for every phase p = 1 .. N-1 instead (phase 0 is
 * the local copy) and communicates nothing. Exit status 1 if --verify finds
 * a wrong byte.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"
#include "alltoall_schedule.h"

#define APP_NAME "alltoall"
#define OUTPUT_VERSION 1
#define DEFAULT_BYTES (1 << 20)
#define MAX_BYTES (1 << 30)
#define DEFAULT_WARMUP 1
#define DEFAULT_ITERATIONS 3
#define ALLTOALL_TAG 0
#define MIB 1048576.0

static const char *const algorithm_names[] = {"pairwise", "mlfm", NULL};

static const char description[] =
    "All-to-all personalised exchange of one BYTES block between every pair of the N ranks, in N "
    "phases: phase 0 copies the rank's own block, each later phase is one MPI_Sendrecv. pairwise: "
    "in phase p rank r sends to (r+p)%N; mlfm: the MLFM schedule on an allocation of n layers x "
    "l columns x m servers per leaf (--shape n,l,m, N = n*l*m, 1 <= m <= l - 1). WARMUP untimed "
    "and ITERATIONS timed iterations, each after a barrier. Rank 0 prints one JSON line on "
    "stdout.";

struct options {
    int algorithm;
    const char *shape_text;
    int64_t bytes;
    int phases; /* 0: all N */
    int local_copy; /* TL_LOCAL_REAL or TL_LOCAL_SKIP: --local-copy */
    int warmup;
    int iterations;
    int verify;
    int print_schedule;
    struct schedule sched; /* the schedule the options give (check_options fills it) */
};

/* ---------------------------------------------------------------------------
 * Arguments.
 */

/* Parses "n,l,m" (three integers >= 1) into s; returns 0 with a message on error. */
static int parse_shape(const char *text, struct schedule *s)
{
    static const char *const names[3] = {"n", "l", "m"};
    int values[3];
    const char *item = text;
    for (int k = 0; k < 3; k++) {
        const char *comma = strchr(item, ',');
        size_t len = comma != NULL ? (size_t)(comma - item) : strlen(item);
        if ((k < 2) != (comma != NULL)) {
            tl_arg_error(APP_NAME,
                         "invalid --shape value '%s': expected n,l,m, three integers >= 1 "
                         "(layers, columns, servers per leaf)",
                         text);
            return 0;
        }
        char part[32];
        tl_status status = TL_ERR_SYNTAX;
        if (len < sizeof part) {
            memcpy(part, item, len);
            part[len] = '\0';
            status = tl_parse_int(part, 1, INT_MAX, &values[k]);
        }
        if (status != TL_OK) {
            tl_arg_error(APP_NAME,
                         "invalid --shape value '%s': %s must be an integer >= 1 (n,l,m = layers, "
                         "columns, servers per leaf)",
                         text, names[k]);
            return 0;
        }
        item = comma + (comma != NULL);
    }
    s->has_shape = 1;
    s->n = values[0];
    s->l = values[1];
    s->m = values[2];
    return 1;
}

/* Reads --shape into *s and checks it: mlfm needs one with 1 <= m <= l - 1, and n*l*m must be the
 * ranks. Returns 1, or 0 after printing the error. */
static int check_shape(const struct options *opt, struct schedule *s, int nranks)
{
    if (opt->shape_text != NULL && !parse_shape(opt->shape_text, s))
        return 0;
    if (opt->algorithm == ALGORITHM_MLFM) {
        if (!s->has_shape) {
            tl_arg_error(APP_NAME, "-a mlfm needs the allocation shape: --shape n,l,m (layers, "
                                   "columns, servers per leaf)");
            return 0;
        }
        if (s->m > s->l - 1) {
            tl_arg_error(APP_NAME,
                         "invalid --shape %d,%d,%d: mlfm needs 1 <= m <= l - 1 (the m servers of "
                         "a leaf send to m different other columns at once)",
                         s->n, s->l, s->m);
            return 0;
        }
    }
    if (s->has_shape) {
        int64_t servers = tl_mul_saturated(tl_mul_saturated(s->n, s->l), s->m);
        if (servers != nranks) {
            tl_arg_error(APP_NAME,
                         "--shape %d,%d,%d has n*l*m = %lld servers but there are %d MPI ranks",
                         s->n, s->l, s->m, (long long)servers, nranks);
            return 0;
        }
    }
    return 1;
}

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .algorithm = ALGORITHM_PAIRWISE,
        .bytes = DEFAULT_BYTES,
        .local_copy = TL_LOCAL_REAL,
        .warmup = DEFAULT_WARMUP,
        .iterations = DEFAULT_ITERATIONS,
    };
    const tl_option options[] = {
        tl_opt_algorithm(&opt->algorithm, algorithm_names,
                         "pairwise: in phase p rank r sends to (r+p)%N; mlfm: the MLFM schedule "
                         "(needs --shape)"),
        tl_opt_string('\0', "shape", "n,l,m", &opt->shape_text,
                      "the allocation: n layers x l columns x m servers per leaf, n*l*m = N; "
                      "required by mlfm (1 <= m <= l - 1), only reported by pairwise"),
        tl_opt_size('s', "size", "BYTES", &opt->bytes, MAX_BYTES,
                    "block size per destination, >= 1 (buffers are K*BYTES each)"),
        tl_opt_int('\0', "phases", "K", &opt->phases, 1, INT_MAX,
                   "run phases 0..K-1 only (K <= N; default: all N phases)"),
        tl_opt_local_work("local-copy", &opt->local_copy,
                          "real: phase 0 copies the rank's own block; skip: it copies nothing, for "
                          "communication-only simulations of large blocks, not with --verify"),
        tl_opt_warmup(&opt->warmup, "untimed iterations first"),
        tl_opt_iterations(&opt->iterations, "timed iterations"),
        tl_opt_verify(&opt->verify,
                      "fill the blocks with known bytes and check every received block after "
                      "each iteration; exit status 1 if wrong. Needs real memory: under SMPI keep "
                      "smpi/auto-shared-malloc-thresh above N*BYTES"),
        tl_opt_print_schedule(&opt->print_schedule),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* Fills opt->sched and opt->phases (all N by default); checks the block size, the shape, --verify
 * against --local-copy skip, the phases and the buffers' size. */
static int check_options(struct options *opt, int nranks)
{
    opt->sched = (struct schedule){.algorithm = opt->algorithm, .ranks = nranks};
    if (opt->bytes < 1) {
        tl_arg_error(APP_NAME, "invalid --size value %lld: the block size must be >= 1 byte",
                     (long long)opt->bytes);
        return TL_EXIT_USAGE;
    }
    if (!check_shape(opt, &opt->sched, nranks))
        return TL_EXIT_USAGE;
    if (tl_check_local_work(APP_NAME, "local-copy", opt->local_copy, opt->verify) != TL_ARGS_OK)
        return TL_EXIT_USAGE;
    if (opt->phases > nranks) {
        tl_arg_error(APP_NAME, "invalid --phases value %d: there are only %d phases (one per rank)",
                     opt->phases, nranks);
        return TL_EXIT_USAGE;
    }
    if (opt->phases == 0)
        opt->phases = nranks;
    if ((uint64_t)opt->phases > SIZE_MAX / (uint64_t)opt->bytes) {
        tl_arg_error(APP_NAME, "buffers of %d x %lld bytes do not fit in the address space",
                     opt->phases, (long long)opt->bytes);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* ---------------------------------------------------------------------------
 * Verification data.
 */

/* Byte `offset` of the block that rank src sends to rank dst. */
static unsigned char pattern(int src, int dst, size_t offset)
{
    uint32_t h = (uint32_t)src * 0x9E3779B1u ^ (uint32_t)dst * 0x85EBCA77u ^
                 (uint32_t)offset * 0xC2B2AE3Du ^ (uint32_t)(offset >> 32);
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return (unsigned char)h;
}

/* Every block `rank` sends: block p for send_to[p]. */
static void fill_send(unsigned char *sendbuf, int rank, const int *send_to, int phases, size_t bytes)
{
    for (int p = 0; p < phases; p++)
        for (size_t b = 0; b < bytes; b++)
            sendbuf[(size_t)p * bytes + b] = pattern(rank, send_to[p], b);
}

/* Sets every received byte to the complement of its expected value, so that a block
 * that is not received (or not entirely) never passes check_recv. */
static void poison_recv(unsigned char *recvbuf, int rank, const int *recv_from, int phases,
                        size_t bytes)
{
    for (int p = 0; p < phases; p++)
        for (size_t b = 0; b < bytes; b++)
            recvbuf[(size_t)p * bytes + b] = (unsigned char)~pattern(recv_from[p], rank, b);
}

/* Number of received bytes that differ from what their sender sent. */
static long long check_recv(const unsigned char *recvbuf, int rank, const int *recv_from,
                            int phases, size_t bytes)
{
    long long errors = 0;
    for (int p = 0; p < phases; p++)
        for (size_t b = 0; b < bytes; b++)
            errors += recvbuf[(size_t)p * bytes + b] != pattern(recv_from[p], rank, b);
    return errors;
}

/* ---------------------------------------------------------------------------
 * Output.
 */

/* --print-schedule: phases 1 .. N-1, every rank's message to its destination of the phase. */
static void print_schedule(const struct schedule *s)
{
    for (int p = 1; p < s->ranks; p++) {
        tl_schedule_step step;
        tl_schedule_begin(&step, APP_NAME, p - 1);
        for (int r = 0; r < s->ranks; r++)
            tl_schedule_send(&step, r, destination(s, r, p));
        tl_schedule_end(&step);
    }
}

/* ---------------------------------------------------------------------------
 * Runs and output.
 */

/* One rank's partners and buffers for the first `phases` phases. */
struct exchange {
    int phases;
    size_t bytes;
    int *send_to;
    int *recv_from;
    unsigned char *sendbuf; /* untouched unless --verify: under SMPI, big buffers may be folded */
    unsigned char *recvbuf; /* shared memory */
    double *phase_end;      /* end of each phase of the last iteration, from its start */
};

static void exchange_init(struct exchange *x, const struct options *opt, const struct schedule *s,
                          int rank)
{
    x->phases = opt->phases;
    x->bytes = (size_t)opt->bytes;
    size_t total = (size_t)x->phases * x->bytes;
    x->send_to = tl_alloc_or_abort(APP_NAME, (size_t)x->phases * sizeof *x->send_to);
    x->recv_from = tl_alloc_or_abort(APP_NAME, (size_t)x->phases * sizeof *x->recv_from);
    for (int p = 0; p < x->phases; p++) {
        x->send_to[p] = destination(s, rank, p);
        x->recv_from[p] = source(s, rank, p);
    }
    x->sendbuf = tl_alloc_or_abort(APP_NAME, total);
    x->recvbuf = tl_alloc_or_abort(APP_NAME, total);
    x->phase_end = tl_alloc_or_abort(APP_NAME, (size_t)x->phases * sizeof *x->phase_end);
    if (opt->verify)
        fill_send(x->sendbuf, rank, x->send_to, x->phases, x->bytes);
}

static void exchange_free(struct exchange *x)
{
    free(x->phase_end);
    free(x->recvbuf);
    free(x->sendbuf);
    free(x->recv_from);
    free(x->send_to);
}

/* One all-to-all: phase 0 copies the own block, phase p >= 1 is one MPI_Sendrecv with the
 * phase's partners; records when each phase ended, from its start. */
static void alltoall_once(const struct exchange *x, int local_copy)
{
    int count = (int)x->bytes; /* <= MAX_BYTES < INT_MAX */
    double start = MPI_Wtime();
    if (local_copy == TL_LOCAL_REAL)
        memcpy(x->recvbuf, x->sendbuf, x->bytes); /* phase 0: send_to[0] == recv_from[0] == rank */
    x->phase_end[0] = MPI_Wtime() - start;
    for (int p = 1; p < x->phases; p++) {
        MPI_Sendrecv(x->sendbuf + (size_t)p * x->bytes, count, MPI_BYTE, x->send_to[p],
                     ALLTOALL_TAG, x->recvbuf + (size_t)p * x->bytes, count, MPI_BYTE,
                     x->recv_from[p], ALLTOALL_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        x->phase_end[p] = MPI_Wtime() - start;
    }
}

/* One all-to-all, the kernel the harness times (tl_time_kernel); --verify poisons the receive
 * buffer before it and checks it after. */
struct alltoall_kernel {
    const struct options *opt;
    const struct exchange *x;
    int rank;
};

static void alltoall_prepare(void *state)
{
    struct alltoall_kernel *k = state;
    if (k->opt->verify)
        poison_recv(k->x->recvbuf, k->rank, k->x->recv_from, k->x->phases, k->x->bytes);
}

static void alltoall_run(void *state)
{
    struct alltoall_kernel *k = state;
    alltoall_once(k->x, k->opt->local_copy);
}

static long long alltoall_check(void *state)
{
    struct alltoall_kernel *k = state;
    if (!k->opt->verify)
        return 0;
    return check_recv(k->x->recvbuf, k->rank, k->x->recv_from, k->x->phases, k->x->bytes);
}

static void print_result(const struct options *opt, const struct schedule *s,
                         const double spread[3], const double *latest, long long errors)
{
    int phases = opt->phases;
    double t_max = spread[2];
    double throughput =
        phases > 1 && t_max > 0.0 ? (double)(phases - 1) * (double)opt->bytes / t_max / MIB : 0.0;
    int shape[3] = {s->n, s->l, s->m};
    tl_json json;
    tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
    tl_json_str(&json, "algorithm", algorithm_names[opt->algorithm]);
    tl_json_i64(&json, "ranks", s->ranks);
    if (s->has_shape)
        tl_json_int_array(&json, "shape", shape, 3);
    else
        tl_json_null(&json, "shape");
    tl_json_i64(&json, "block_bytes", opt->bytes);
    tl_json_i64(&json, "phases", phases);
    tl_json_i64(&json, "warmup", opt->warmup);
    tl_json_i64(&json, "iterations", opt->iterations);
    tl_json_times(&json, spread);
    tl_json_f64(&json, "throughput_mibs", throughput);
    tl_json_f64_array(&json, "phase_end_s", latest, (size_t)phases);
    tl_json_end_verified(&json, APP_NAME, opt->verify, errors, "bytes");
}

static int run(struct options *opt, int rank, int nranks)
{
    (void)nranks;
    const struct schedule *sched = &opt->sched;
    if (opt->print_schedule) {
        if (rank == 0)
            print_schedule(sched);
        return 0;
    }

    struct exchange x;
    exchange_init(&x, opt, sched, rank);
    struct alltoall_kernel k = {opt, &x, rank};
    tl_kernel kernel = {&k, alltoall_prepare, alltoall_run, alltoall_check};
    tl_timing timing = tl_time_kernel(&kernel, opt->warmup, opt->iterations);
    /* Everything to rank 0 (phase_end holds the last timed iteration). */
    double *latest = rank == 0 ? tl_alloc_or_abort(APP_NAME, (size_t)x.phases * sizeof *latest)
                               : NULL;
    tl_summary summary = tl_summarize(timing, opt->verify);
    tl_reduce_to_root(x.phase_end, latest, x.phases, TL_REDUCE_MAX);
    if (rank == 0)
        print_result(opt, sched, summary.spread, latest, summary.errors);
    free(latest);
    exchange_free(&x);
    return tl_exit_status(opt->verify, summary.errors);
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
