/*
 * allgather.c - the two Allgather algorithms of Sugiyama, Morie and Nanri,
 * "Topology Aware Performance Prediction of Collective Communication
 * Algorithms on Multi-Dimensional Mesh/Torus" (Fig. 1 Ring, Fig. 2 Bruck),
 * written with point-to-point MPI_Sendrecv only (no MPI_Allgather).
 *
 * P ranks (P >= 2, any P), every rank contributes one block of M bytes; at
 * the end every rank holds the P blocks in rank order in its result buffer
 * (P*M bytes). A message of k blocks is k*M bytes of MPI_BYTE, or, where
 * k*M does not fit an int, k of an MPI datatype of M contiguous bytes (SMPI
 * copies every message of a derived datatype, contiguous ones included,
 * through a temporary buffer: real memory and time that bytes do not cost).
 *
 * Input. As with MPI_IN_PLACE, a rank's own block starts where the algorithm
 * reads it first, so neither algorithm copies a send buffer into place (the
 * paper's models count no such copy): result block `rank` for ring, block 0
 * of the result buffer for bruck. With --verify it is written there before
 * the barrier that starts an iteration, outside the timed region.
 *
 * ring (Fig. 1: for i = 0 to P-2: sendrecv(M)). In step i rank r sends
 *   result block (r - i) mod P (its own at step 0, afterwards the block it
 *   received in step i-1) to r+1 and receives block (r - 1 - i) mod P from
 *   r-1, straight into its place. P-1 steps, no memory copy.
 *
 * bruck (Fig. 2: for i = 0 to ceil(log2 P)-1: sendrecv(M * 2^i), then
 *   memcpy((P-rank)*M); memcpy(rank*M); memcpy((P-rank)*M)). This is Open
 *   MPI's Bruck allgather (ompi_coll_tuned/base_allgather_intra_bruck; the
 *   paper lists Open MPI's allgather algorithms and its Fig. 2 is this
 *   code's structure), working in the result buffer itself, which also
 *   serves as the standard formulation's temporary buffer of P*M bytes: the
 *   own block is block 0; in step i (distance d = 2^i) the rank sends its
 *   first count_i = min(d, P - d) blocks to (r - d) mod P and receives
 *   count_i blocks from (r + d) mod P into blocks d .. d + count_i - 1 (the
 *   last step of a P that is no power of two sends only the P - d blocks
 *   still missing). Afterwards block j holds the block of rank
 *   (r + j) mod P, and the rank-order restore is exactly the paper's three
 *   copies, in its order, each with a role:
 *     1. (P-r)*M bytes: blocks 0 .. P-r-1 (ranks r .. P-1) to a shift buffer
 *        of (P-r)*M bytes;
 *     2. r*M bytes: blocks P-r .. P-1 (ranks 0 .. r-1) to the front, blocks
 *        0 .. r-1 (the regions overlap when r > P/2: a memmove);
 *     3. (P-r)*M bytes: the shift buffer back to blocks r .. P-1.
 *   Rank 0 holds its blocks in rank order already and copies nothing (as in
 *   Open MPI: the three copies run "on all nodes except 0"). Rank r >= 1
 *   copies (P-r + r + P-r)*M = (2P - r)*M bytes in 3 copies; the largest
 *   amount is rank 1's, M + 2*(P-1)*M, exactly the memory part of the
 *   paper's model, eq. (2): t_mem = (L + alpha*M) + 2*(L + alpha*(P-1)*M),
 *   which uses "rank 1, whose amount is the largest".
 *
 * Modelled memory copies. Under SMPI computation is not simulated, so a
 * memory copy costs no simulated time by itself. Every copy of n bytes goes
 * through copy_block(), which does the copy and then charges
 * tl_model_compute(MEMCPY_LATENCY + n / MEMCPY_RATE) when --memcpy-rate > 0
 * (the paper's L_mem + alpha_mem * n with alpha_mem = 1 / rate). So with rate
 * R and latency L rank r >= 1 of bruck spends 3L + (2P - r)*M/R modelled
 * seconds after its last step and rank 0 none; ring never copies. With a
 * real MPI tl_model_compute() does nothing and the copies take their real
 * time. Rate 0 (the default) charges nothing.
 *
 * Timing, by the harness's loop (tl_time_kernel): for every size, WARMUP
 * untimed then ITERATIONS timed iterations, each after one MPI_Barrier (the
 * paper's steps start together); a rank times an iteration from the end of the
 * barrier to the end of its last step (bruck: of its last copy) with MPI_Wtime.
 * Rank 0 prints one JSON line per size:
 *   {"app":"allgather","version":1,"algorithm":"ring"|"bruck","ranks":P,
 *    "bytes":M,"steps":..,"iterations":..,"time_s_min":..,"time_s_avg":..,
 *    "time_s_max":..,"verified":true|false|null}
 * steps = P-1 (ring) or ceil(log2 P) (bruck); time_s_* are the min/avg/max
 * over ranks of each rank's mean iteration time. Under SMPI, where a study
 * wants the steps to start exactly together, it can select the dissemination
 * barrier, --cfg=smpi/barrier:ompi_bruck, which releases all ranks at the
 * same instant; with the ompi selector's own choice, ranks of a count that is
 * no power of two may leave the barrier a few barrier messages apart (on 5
 * ranks it behaves as ompi_basic_linear and releases rank 0 four messages
 * early), which then shows in time_s_max (measured on SimGrid 3.32; 4.1
 * simulates the tofu-allgather study bit for bit the same).
 *
 * Buffers are allocated per size; without --verify the app never writes
 * them itself, only the messages and bruck's copies move their contents
 * (under SMPI a study may fold big buffers into shared memory, whose contents
 * are garbage). --verify fills, before every iteration, every block
 * j of the result buffer with the complement of rank j's pattern and the own
 * block with the rank's pattern, a function of (rank, byte index); after the
 * iteration it checks all P blocks, in rank order, byte by byte. Exit status
 * 1 if a byte is wrong (after all sizes).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"
#include "topolab_model.h"

#define APP_NAME "allgather"
#define OUTPUT_VERSION 1
#define DEFAULT_WARMUP 1
#define DEFAULT_ITERATIONS 3
#define ALLGATHER_TAG 0

enum algorithm { ALGORITHM_NONE = -1, ALGORITHM_RING, ALGORITHM_BRUCK };
static const char *const algorithm_names[] = {"ring", "bruck", NULL};

static const char description[] =
    "Allgather of one block of M bytes per rank over the P >= 2 ranks with point-to-point "
    "MPI_Sendrecv only, as in Sugiyama et al. (Fig. 1 and 2). ring: P-1 steps, in step i every "
    "rank passes the block it received last (its own first) to rank r+1; bruck: ceil(log2 P) "
    "steps, in step i rank r sends its first min(2^i, P-2^i) blocks to r-2^i, then ranks r >= 1 "
    "restore rank order with three memory copies of (P-r)*M, r*M and (P-r)*M bytes. Under SMPI a "
    "copy of n bytes costs MEMCPY_LATENCY + n/MEMCPY_RATE modelled seconds (nothing with rate 0). "
    "For each size, WARMUP untimed and ITERATIONS timed iterations, each after a barrier. Rank 0 "
    "prints one JSON line per size on stdout.";

struct options {
    int algorithm; /* ALGORITHM_NONE: not given */
    tl_size_list sizes;
    int iterations;
    int warmup;
    int verify;
    int print_schedule;
    double memcpy_latency;
    double memcpy_rate;
};

/* Modelled cost of a memory copy of n bytes: latency + n / rate seconds, nothing if rate is 0. */
struct copy_cost {
    double latency;
    double rate;
};

/* ---------------------------------------------------------------------------
 * Arguments.
 */

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .algorithm = ALGORITHM_NONE,
        .sizes = {.values = {1 << 10}, .count = 1},
        .iterations = DEFAULT_ITERATIONS,
        .warmup = DEFAULT_WARMUP,
        .memcpy_latency = 0.0,
        .memcpy_rate = 0.0,
    };
    const tl_option options[] = {
        tl_opt_algorithm(&opt->algorithm, algorithm_names,
                         "ring (Fig. 1, P-1 steps) or bruck (Fig. 2, ceil(log2 P) steps and three "
                         "memory copies); required"),
        tl_opt_size_list('s', "sizes", "SIZES", &opt->sizes, INT_MAX,
                         "message size M, the bytes of one rank's block, for each run"),
        tl_opt_iterations(&opt->iterations, "timed iterations per size"),
        tl_opt_warmup(&opt->warmup, "untimed iterations before them"),
        tl_opt_verify(&opt->verify,
                      "fill the blocks with a pattern of (rank, byte index) and check the whole "
                      "result buffer on every rank after each iteration; exit status 1 if wrong"),
        tl_opt_print_schedule(&opt->print_schedule),
        tl_opt_real('\0', "memcpy-latency", "SECONDS", &opt->memcpy_latency, 0.0,
                    "modelled fixed cost of one memory copy under SMPI; needs MEMCPY_RATE > 0"),
        tl_opt_real('\0', "memcpy-rate", "BYTES_PER_S", &opt->memcpy_rate, 0.0,
                    "modelled memory copy rate under SMPI: a copy of n bytes costs "
                    "MEMCPY_LATENCY + n/MEMCPY_RATE seconds; 0: copies cost nothing (a real MPI "
                    "ignores both)"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* The algorithm is required, 2 ranks at least, a block of 1 byte at least; a copy latency needs a
 * copy rate. */
static int check_options(struct options *opt, int nranks)
{
    if (opt->algorithm == ALGORITHM_NONE) {
        tl_arg_error(APP_NAME, "the algorithm is required: -a/--algorithm ring|bruck");
        return TL_EXIT_USAGE;
    }
    if (tl_check_ranks(APP_NAME, nranks, 2) != TL_ARGS_OK ||
        tl_check_sizes(APP_NAME, &opt->sizes, "a block") != TL_ARGS_OK)
        return TL_EXIT_USAGE;
    if (opt->memcpy_latency > 0.0 && opt->memcpy_rate == 0.0) {
        tl_arg_error(APP_NAME,
                     "--memcpy-latency %g needs --memcpy-rate > 0 (with rate 0 memory copies "
                     "cost nothing)",
                     opt->memcpy_latency);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* ---------------------------------------------------------------------------
 * The algorithms.
 */

static int algorithm_steps(int algorithm, int nranks)
{
    return algorithm == ALGORITHM_RING ? nranks - 1 : tl_ceil_log2(nranks);
}

/* Ring: in every step rank r sends one block to r + 1. */
static int ring_to(int rank, int nranks)
{
    return (rank + 1) % nranks;
}

/* Bruck, step i: distance d = 2^i; rank r sends its first min(d, P - d) blocks to r - d. */
static int bruck_blocks(int d, int nranks)
{
    return d <= nranks - d ? d : nranks - d;
}

static int bruck_to(int rank, int d, int nranks)
{
    return (rank + nranks - d) % nranks;
}

/* Copies n bytes from src to dst (the regions may overlap) and charges the modelled cost. */
static void copy_block(void *dst, const void *src, size_t n, const struct copy_cost *cost)
{
    memmove(dst, src, n);
    if (cost->rate > 0.0)
        tl_model_compute(cost->latency + (double)n / cost->rate);
}

/* Sends `count` blocks of m bytes to `to` and receives as many from `from` (one MPI_Sendrecv). */
static void sendrecv_blocks(const unsigned char *send, unsigned char *recv, int count, size_t m,
                            MPI_Datatype block, int to, int from)
{
    size_t bytes = (size_t)count * m;
    if (bytes <= INT_MAX)
        MPI_Sendrecv(send, (int)bytes, MPI_BYTE, to, ALLGATHER_TAG, recv, (int)bytes, MPI_BYTE,
                     from, ALLGATHER_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Sendrecv(send, count, block, to, ALLGATHER_TAG, recv, count, block, from,
                     ALLGATHER_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Fig. 1: P-1 steps, each passes one block on to rank r+1; blocks arrive in their place. */
static void run_ring(unsigned char *result, size_t m, MPI_Datatype block, int rank, int nranks)
{
    int to = ring_to(rank, nranks);
    int from = (rank + nranks - 1) % nranks;
    for (int i = 0; i < nranks - 1; i++) {
        int send_block = (rank + nranks - i) % nranks;
        int recv_block = (rank + 2 * nranks - 1 - i) % nranks;
        sendrecv_blocks(result + (size_t)send_block * m, result + (size_t)recv_block * m, 1, m,
                        block, to, from);
    }
}

/* Fig. 2 (Open MPI's Bruck): ceil(log2 P) steps in the result buffer, own block first, then the
 * paper's three copies restore rank order on ranks >= 1 (see the file header). shift holds
 * (P - rank) blocks. */
static void run_bruck(unsigned char *result, unsigned char *shift, size_t m, MPI_Datatype block,
                      int rank, int nranks, const struct copy_cost *cost)
{
    for (int i = 0; i < algorithm_steps(ALGORITHM_BRUCK, nranks); i++) {
        int d = 1 << i; /* < P */
        int from = (int)(((int64_t)rank + d) % nranks);
        sendrecv_blocks(result, result + (size_t)d * m, bruck_blocks(d, nranks), m, block,
                        bruck_to(rank, d, nranks), from);
    }
    if (rank == 0)
        return; /* block j is rank j's already */
    size_t head = (size_t)(nranks - rank) * m; /* blocks of ranks rank .. P-1 */
    size_t tail = (size_t)rank * m;            /* blocks of ranks 0 .. rank-1 */
    copy_block(shift, result, head, cost);        /* memcpy((P - rank) * M) */
    copy_block(result, result + head, tail, cost); /* memcpy(rank * M) */
    copy_block(result + tail, shift, head, cost); /* memcpy((P - rank) * M) */
}

/* --print-schedule: every rank's message of every step, as run_ring and run_bruck send them. */
static void print_schedule(int algorithm, int nranks)
{
    for (int i = 0; i < algorithm_steps(algorithm, nranks); i++) {
        tl_schedule_step step;
        tl_schedule_begin(&step, APP_NAME, i);
        for (int r = 0; r < nranks; r++) {
            if (algorithm == ALGORITHM_RING)
                tl_schedule_send_part(&step, r, ring_to(r, nranks), 1);
            else
                tl_schedule_send_part(&step, r, bruck_to(r, 1 << i, nranks),
                                      bruck_blocks(1 << i, nranks));
        }
        tl_schedule_end(&step);
    }
}

/* ---------------------------------------------------------------------------
 * Verification data.
 */

/* Byte k of rank `owner`'s block: a splitmix64 seed of the rank, xor-ed with a multiple of the
 * 8-byte word index, one byte of it per position. */
static unsigned char pattern_byte(int owner, size_t k)
{
    uint64_t z = (uint64_t)(uint32_t)owner * 0x9E3779B97F4A7C15u + 0x632BE59BD9B4E019u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    uint64_t word = z ^ ((uint64_t)(k / 8) * 0x9E3779B97F4A7C15u);
    return (unsigned char)(word >> (8 * (k % 8)));
}

/* Before an iteration: every block j holds the complement of rank j's pattern (so a block that
 * never arrives is wrong in every byte), the own block (at `own_slot`) the rank's pattern. */
static void fill_blocks(unsigned char *result, size_t m, int rank, int nranks, int own_slot)
{
    for (int j = 0; j < nranks; j++)
        for (size_t k = 0; k < m; k++)
            result[(size_t)j * m + k] = (unsigned char)~pattern_byte(j, k);
    for (size_t k = 0; k < m; k++)
        result[(size_t)own_slot * m + k] = pattern_byte(rank, k);
}

/* Number of wrong bytes of the result buffer: block j must hold rank j's pattern. */
static long long count_wrong_bytes(const unsigned char *result, size_t m, int nranks)
{
    long long errors = 0;
    for (int j = 0; j < nranks; j++)
        for (size_t k = 0; k < m; k++)
            errors += result[(size_t)j * m + k] != pattern_byte(j, k);
    return errors;
}

/* ---------------------------------------------------------------------------
 * One size.
 */

/* One allgather of blocks of m bytes: the kernel the harness times (tl_time_kernel). */
struct allgather_kernel {
    const struct options *opt;
    struct copy_cost cost;
    unsigned char *result, *shift;
    size_t m;
    MPI_Datatype block;
    int rank, nranks, own_slot;
};

static void allgather_prepare(void *state)
{
    struct allgather_kernel *k = state;
    if (k->opt->verify)
        fill_blocks(k->result, k->m, k->rank, k->nranks, k->own_slot);
}

static void allgather_run(void *state)
{
    struct allgather_kernel *k = state;
    if (k->opt->algorithm == ALGORITHM_RING)
        run_ring(k->result, k->m, k->block, k->rank, k->nranks);
    else
        run_bruck(k->result, k->shift, k->m, k->block, k->rank, k->nranks, &k->cost);
}

static long long allgather_check(void *state)
{
    struct allgather_kernel *k = state;
    return k->opt->verify ? count_wrong_bytes(k->result, k->m, k->nranks) : 0;
}

/* Times the allgather of blocks of m bytes; prints the JSON line on rank 0; returns the number
 * of wrong bytes over all ranks (0 without --verify). Collective. */
static long long run_size(const struct options *opt, size_t m, int rank, int nranks)
{
    struct allgather_kernel k = {
        .opt = opt,
        .cost = {opt->memcpy_latency, opt->memcpy_rate},
        .m = m,
        .rank = rank,
        .nranks = nranks,
        .own_slot = opt->algorithm == ALGORITHM_RING ? rank : 0,
    };
    size_t shift_bytes = opt->algorithm == ALGORITHM_BRUCK && rank > 0
                             ? (size_t)(nranks - rank) * m
                             : 0;
    k.result = tl_alloc_or_abort(APP_NAME, (size_t)nranks * m);
    k.shift = tl_alloc_or_abort(APP_NAME, shift_bytes);
    MPI_Type_contiguous((int)m, MPI_BYTE, &k.block);
    MPI_Type_commit(&k.block);

    tl_kernel kernel = {&k, allgather_prepare, allgather_run, allgather_check};
    tl_summary summary = tl_summarize(tl_time_kernel(&kernel, opt->warmup, opt->iterations), opt->verify);

    if (rank == 0) {
        tl_json json;
        tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
        tl_json_str(&json, "algorithm", algorithm_names[opt->algorithm]);
        tl_json_i64(&json, "ranks", nranks);
        tl_json_i64(&json, "bytes", (int64_t)m);
        tl_json_i64(&json, "steps", algorithm_steps(opt->algorithm, nranks));
        tl_json_i64(&json, "iterations", opt->iterations);
        tl_json_times(&json, summary.spread);
        tl_json_end_verified(&json, APP_NAME, opt->verify, summary.errors, "bytes");
    }

    MPI_Type_free(&k.block);
    free(k.shift);
    free(k.result);
    return summary.errors;
}

static int run(struct options *opt, int rank, int nranks)
{
    if (opt->print_schedule) {
        if (rank == 0)
            print_schedule(opt->algorithm, nranks);
        return 0;
    }

    long long errors = 0;
    for (size_t k = 0; k < opt->sizes.count; k++)
        errors += run_size(opt, (size_t)opt->sizes.values[k], rank, nranks);

    return tl_exit_status(opt->verify, errors);
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
