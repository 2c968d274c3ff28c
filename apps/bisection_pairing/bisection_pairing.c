/*
 * bisection_pairing.c - the bisection pairing experiment of Oltchik and
 * Schwartz, "Network Partitioning and Avoidable Contention" (Sect. 4.1):
 * every node exchanges large messages with the node furthest from it on the
 * torus, so that all the traffic crosses the bisection.
 *
 * Geometry. The nodes form a torus of dimensions L0 x L1 x ... (--dims),
 * one rank per node; rank r is the node with coordinates c, first dimension
 * fastest: r = c0 + L0*(c1 + L1*(c2 + ...)) (as generators.topologies.torus numbers its
 * hosts). The furthest-node scheme pairs c with its antipode, coordinate
 * (c_i + L_i/2) mod L_i in every dimension, at the maximal hop distance
 * HOPS = sum(L_i/2). That is a perfect matching (an involution without fixed
 * points) only if every L_i is 1 or even (an odd ring has no antipode) and
 * there are at least 2 nodes; the app refuses other shapes.
 *
 * Exchange. After one barrier (the only synchronisation: none between rounds,
 * none across distinct pairs), WARMUP untimed then ITERATIONS timed rounds;
 * in each, every rank exchanges CHUNKS messages of SIZE bytes with its
 * partner, one MPI_Sendrecv per chunk (it sends its chunk and receives the
 * partner's at the same time). A rank's time per pair runs from the start of
 * its first timed round to the end of its last round (MPI_Wtime). Paper: 30
 * rounds of which 4 warm-up (ITERATIONS = 26, WARMUP = 4), CHUNKS = 16,
 * SIZE = 0.1342 GB (128 MiB), 2 GB per pair and direction over the timed
 * rounds. --print-schedule prints the one step that every chunk repeats.
 *
 * Buffers: one send and one receive buffer of SIZE bytes, the two halves of
 * one allocation made once, and never touched without --verify (under SMPI a
 * study may fold big allocations into shared memory with
 * smpi/auto-shared-malloc-thresh: their contents are garbage there, and each
 * folded allocation is one memory map per rank: one, not two, lets all of
 * Mira's 49152 ranks fit under Linux's default vm.max_map_count of 65530).
 * --verify fills the send buffer before every chunk with a pattern of
 * (sender rank, round, chunk) (the paper generates new random messages for
 * every round) and checks after the MPI_Sendrecv that the receive buffer
 * holds the partner's pattern for the same round and chunk; with a real MPI
 * the filling and checking is inside the timed rounds.
 *
 * Rank 0 prints one JSON line:
 *   {"app":"bisection_pairing","version":2,"dims":[L0,..],"ranks":P,
 *    "hops":HOPS,"chunk_bytes":SIZE,"chunks":CHUNKS,"iterations":ITERATIONS,
 *    "warmup":WARMUP,"bytes_per_pair":..,"time_per_pair_s_min":..,
 *    "time_per_pair_s_avg":..,"time_per_pair_s_max":..,
 *    "time_per_round_s":..,"verified":true|false|null}
 * time_per_pair_s_* are the min/avg/max over ranks of each rank's time per
 * pair; time_per_round_s is time_per_pair_s_avg / ITERATIONS;
 * bytes_per_pair = ITERATIONS * CHUNKS * SIZE, the bytes a rank sends
 * (and receives) in the timed rounds. Exit status 1 if --verify finds a wrong
 * word.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "bisection_pairing"
#define OUTPUT_VERSION 2 /* 2: "iterations" (timed rounds) instead of "rounds" (all) */
#define DEFAULT_CHUNK ((int64_t)1 << 27) /* 128 MiB = 0.1342 GB, the paper's chunk */
#define DEFAULT_CHUNKS 16
#define DEFAULT_ITERATIONS 26
#define DEFAULT_WARMUP 4
#define PAIRING_TAG 0
#define WORD_BYTES 8 /* the verification pattern is a sequence of 64-bit words */

static const char description[] =
    "Bisection pairing (furthest-node scheme): on a torus of dimensions DIMS, one rank per node "
    "(first dimension fastest), every node exchanges data with its antipode, the node at the "
    "maximal hop distance sum(L_i/2), coordinate (c_i + L_i/2) mod L_i in every dimension (every "
    "L_i must be 1 or even). After one barrier, WARMUP untimed then ITERATIONS timed rounds "
    "without any further synchronisation, each of CHUNKS MPI_Sendrecv exchanges of SIZE bytes "
    "with the partner. Rank 0 prints one JSON line on stdout with the time a "
    "pair takes for the timed rounds.";

struct options {
    tl_int_list dims;
    int64_t chunk;
    int chunks;
    int iterations;
    int warmup;
    int verify;
    int print_schedule;
};

/* ---------------------------------------------------------------------------
 * Arguments.
 */

/* "16x12x8x4x2": the dimensions for messages (truncated to len - 1 characters). */
static void format_dims(const tl_int_list *dims, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < dims->count && used + 1 < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%d", i > 0 ? "x" : "", dims->values[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .dims = {.count = 0, .given = 0},
        .chunk = DEFAULT_CHUNK,
        .chunks = DEFAULT_CHUNKS,
        .iterations = DEFAULT_ITERATIONS,
        .warmup = DEFAULT_WARMUP,
    };
    const tl_option options[] = {
        tl_opt_int_list('d', "dims", "DIMS", &opt->dims, 1, INT_MAX,
                        "node torus dimensions L0,L1,..., first dimension fastest in the rank "
                        "numbering (required; each 1 or even; their product is the number of "
                        "MPI ranks)"),
        tl_opt_size('s', "chunk", "SIZE", &opt->chunk, INT_MAX,
                    "bytes of one chunk, sent and received with one MPI_Sendrecv"),
        tl_opt_int('c', "chunks", "CHUNKS", &opt->chunks, 1, INT_MAX, "chunks per round"),
        tl_opt_iterations(&opt->iterations, "timed rounds"),
        tl_opt_warmup(&opt->warmup, "untimed warm-up rounds before them"),
        tl_opt_verify(&opt->verify,
                      "send a pattern of (sender, round, chunk) and check every received word; "
                      "exit status 1 if one is wrong"),
        tl_opt_print_schedule(&opt->print_schedule),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* The torus: lengths 1 or even, one node per rank, 2 nodes at least; a chunk of 1 byte at least;
 * the rounds fit an int. */
static int check_options(struct options *opt, int nranks)
{
    const tl_int_list *dims = &opt->dims;
    if (dims->count == 0) {
        tl_arg_error(APP_NAME,
                     "the torus shape is required: -d/--dims L0,L1,... with L0*L1*... = %d (the "
                     "number of MPI ranks)",
                     nranks);
        return TL_EXIT_USAGE;
    }
    for (size_t i = 0; i < dims->count; i++)
        if (dims->values[i] != 1 && dims->values[i] % 2 != 0) {
            tl_arg_error(APP_NAME,
                         "dimension %zu has length %d: every dimension must be 1 or even (a ring "
                         "of odd length has no antipode, so the nodes cannot all be paired at "
                         "maximal distance)",
                         i, dims->values[i]);
            return TL_EXIT_USAGE;
        }
    int64_t nodes = 1;
    for (size_t i = 0; i < dims->count; i++)
        nodes = tl_mul_saturated(nodes, dims->values[i]);
    char shape[256];
    format_dims(dims, shape, sizeof shape);
    if (nodes != nranks) {
        if (nodes == INT64_MAX)
            tl_arg_error(APP_NAME, "the %s torus has too many nodes for %d MPI ranks", shape,
                         nranks);
        else
            tl_arg_error(APP_NAME, "the %s torus has %lld nodes but there are %d MPI ranks",
                         shape, (long long)nodes, nranks);
        return TL_EXIT_USAGE;
    }
    if (nodes < 2) {
        tl_arg_error(APP_NAME,
                     "the %s torus has a single node: the pairing needs at least 2 nodes (a node "
                     "would be its own partner)",
                     shape);
        return TL_EXIT_USAGE;
    }
    if (opt->chunk <= 0) {
        tl_arg_error(APP_NAME, "invalid -s/--chunk value %lld: a chunk needs at least 1 byte",
                     (long long)opt->chunk);
        return TL_EXIT_USAGE;
    }
    if (opt->warmup > INT_MAX - opt->iterations) {
        tl_arg_error(APP_NAME, "%d warm-up and %d timed rounds are more than %d rounds",
                     opt->warmup, opt->iterations, INT_MAX);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* ---------------------------------------------------------------------------
 * Geometry.
 */

/* The rank of the antipode of `rank`: (c_i + L_i/2) mod L_i in every dimension. */
static int antipode(const tl_int_list *dims, int rank)
{
    int partner = 0, stride = 1, rest = rank;
    for (size_t i = 0; i < dims->count; i++) {
        int length = dims->values[i];
        int c = rest % length;
        rest /= length;
        partner += ((c + length / 2) % length) * stride;
        stride *= length;
    }
    return partner;
}

/* Hops between a node and its antipode on the torus: sum(L_i/2), the same for every pair. */
static int pair_hops(const tl_int_list *dims)
{
    int hops = 0;
    for (size_t i = 0; i < dims->count; i++)
        hops += dims->values[i] / 2;
    return hops;
}

/* ---------------------------------------------------------------------------
 * Verification data.
 */

/* Seed of the pattern that `sender` sends in chunk `chunk` of round `round_no`: a splitmix64
 * hash of the three, so every message differs from every other one. */
static uint64_t pattern_seed(int sender, int round_no, int chunk)
{
    uint64_t z = (uint64_t)(uint32_t)sender * 0x9E3779B97F4A7C15u +
                 (uint64_t)(uint32_t)round_no * 0xBF58476D1CE4E5B9u +
                 (uint64_t)(uint32_t)chunk * 0x94D049BB133111EBu;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Word w of the message with the given seed (cheap: one multiply per word). */
static uint64_t pattern_word(uint64_t seed, size_t w)
{
    return seed ^ ((uint64_t)w * 0x9E3779B97F4A7C15u);
}

/* Fills buf[0..bytes-1] with the pattern words (the last one cut short if need be). */
static void fill_pattern(unsigned char *buf, size_t bytes, uint64_t seed)
{
    for (size_t w = 0; w * WORD_BYTES < bytes; w++) {
        uint64_t word = pattern_word(seed, w);
        size_t offset = w * WORD_BYTES;
        size_t len = bytes - offset < WORD_BYTES ? bytes - offset : WORD_BYTES;
        memcpy(buf + offset, &word, len);
    }
}

/* Number of words of buf[0..bytes-1] (a short last one included) that differ from the pattern. */
static long long count_wrong_words(const unsigned char *buf, size_t bytes, uint64_t seed)
{
    long long errors = 0;
    for (size_t w = 0; w * WORD_BYTES < bytes; w++) {
        uint64_t word = pattern_word(seed, w);
        size_t offset = w * WORD_BYTES;
        size_t len = bytes - offset < WORD_BYTES ? bytes - offset : WORD_BYTES;
        errors += memcmp(buf + offset, &word, len) != 0;
    }
    return errors;
}

/* ---------------------------------------------------------------------------
 * The exchange and its output.
 */

/* --print-schedule: the one step every chunk of every round repeats, each rank to its antipode. */
static void print_schedule(const tl_int_list *dims, int nranks)
{
    tl_schedule_step step;
    tl_schedule_begin(&step, APP_NAME, 0);
    for (int r = 0; r < nranks; r++)
        tl_schedule_send(&step, r, antipode(dims, r));
    tl_schedule_end(&step);
}

/* One barrier, then WARMUP + ITERATIONS rounds of CHUNKS exchanges with the partner; returns the
 * time of the timed rounds and adds the wrong words (--verify) to *errors. */
static double exchange_rounds(const struct options *opt, int rank, int partner, long long *errors)
{
    size_t bytes = (size_t)opt->chunk;
    int count = (int)opt->chunk;
    /* Untouched unless --verify: under SMPI, big buffers may be folded shared memory. */
    unsigned char *sendbuf = tl_alloc_or_abort(APP_NAME, 2 * bytes);
    unsigned char *recvbuf = sendbuf + bytes;
    double start = 0.0;
    MPI_Barrier(MPI_COMM_WORLD); /* the only synchronisation */
    for (int round_no = 0; round_no < opt->warmup + opt->iterations; round_no++) {
        if (round_no == opt->warmup)
            start = MPI_Wtime();
        for (int chunk = 0; chunk < opt->chunks; chunk++) {
            if (opt->verify)
                fill_pattern(sendbuf, bytes, pattern_seed(rank, round_no, chunk));
            MPI_Sendrecv(sendbuf, count, MPI_BYTE, partner, PAIRING_TAG, recvbuf, count,
                         MPI_BYTE, partner, PAIRING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (opt->verify)
                *errors += count_wrong_words(recvbuf, bytes, pattern_seed(partner, round_no, chunk));
        }
    }
    double elapsed = MPI_Wtime() - start;
    free(sendbuf);
    return elapsed;
}

static void print_result(const struct options *opt, int nranks, const double spread[3],
                         long long errors)
{
    tl_json json;
    tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
    tl_json_int_array(&json, "dims", opt->dims.values, opt->dims.count);
    tl_json_i64(&json, "ranks", nranks);
    tl_json_i64(&json, "hops", pair_hops(&opt->dims));
    tl_json_i64(&json, "chunk_bytes", opt->chunk);
    tl_json_i64(&json, "chunks", opt->chunks);
    tl_json_repetitions(&json, opt->iterations, opt->warmup);
    tl_json_i64(&json, "bytes_per_pair",
                tl_mul_saturated((int64_t)opt->iterations * opt->chunks, opt->chunk));
    tl_json_spread(&json, "time_per_pair_s", spread);
    tl_json_f64(&json, "time_per_round_s", spread[1] / opt->iterations);
    tl_json_end_verified(&json, APP_NAME, opt->verify, errors, "words");
}

static int run(struct options *opt, int rank, int nranks)
{
    if (opt->print_schedule) {
        if (rank == 0)
            print_schedule(&opt->dims, nranks);
        return 0;
    }

    tl_timing mine = {.errors = 0};
    mine.mean = exchange_rounds(opt, rank, antipode(&opt->dims, rank), &mine.errors);
    tl_summary summary = tl_summarize(mine, opt->verify);
    if (rank == 0)
        print_result(opt, nranks, summary.spread, summary.errors);
    return tl_exit_status(opt->verify, summary.errors);
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
