/*
 * transpose.c - the parallel matrix transpose of "Evaluation of Three Quads
 * Using Matrix Transpose" (Zhang, Mori, Tomita; sections 3 and 4.1.1).
 *
 * Geometry. P = q^3 ranks; rank k is node (z, y, x) of the Three Quads cube,
 * k = z*q*q + y*q + x. The global matrix is an (s*q) x (s*q) grid of N x N
 * blocks of doubles, one block per rank, so P = (s*q)^2 = q^3 forces
 * q = s^2: q = 1, 4, 9, 16, ..., P = 1, 64, 729, 4096, ... (the paper: q = 4,
 * s = 2, 64 nodes). Block (i, j) lies in quadrant (a, b) = (i / q, j / q), an
 * s x s grid of q x q quadrants. By default it is held by rank
 *     k = (a*s + b)*q*q + (i % q)*q + (j % q),
 * i.e. quadrant (a, b) is the q x q plane z = a*s + b, with y = i % q and
 * x = j % q. For q = 4 (s = 2) this is the paper's
 *     k = (i/4)*32 + (i%4)*4 + (j/4)*16 + (j%4).
 * --assignment FILE replaces it with any permutation (the rank holding block
 * b = i*(s*q) + j is the b-th integer of the file).
 *
 * Algorithm. After a barrier every rank allocates and fills its block (init),
 * transposes it out of place (transpose; plus --transpose-cost seconds per
 * element of modelled computation), then
 *   direct:   swaps the whole block with the holder of (j, i) (step1);
 *   two-step: step 1 transposes each quadrant: position (a*q + y, b*q + x)
 *             swaps with (a*q + x, b*q + y); a barrier (wait); step 2 swaps
 *             quadrant (a, b) with (b, a): position (a*q + y, b*q + x) swaps
 *             with (b*q + y, a*q + x). Step 1 then step 2 map (i, j) to (j, i).
 * Diagonal positions (x == y in step 1, a == b in step 2, i == j for direct)
 * do not communicate. A swap is half duplex (the lower rank sends then
 * receives, the higher one receives then sends) or full duplex
 * (MPI_Sendrecv, separate send and receive buffers). Afterwards each rank
 * holds block (i, j) of the transposed matrix.
 *
 * Output (rank 0, JSON lines): one line per rank in rank order, then a
 * summary line; see main(). Exit status 1 if --verify finds a wrong element.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"
#include "transpose_geometry.h"
#include "topolab_model.h"

#define APP_NAME "transpose"
#define OUTPUT_VERSION 1
#define DEFAULT_BLOCK 64
/* N*N doubles are one message with an int count (a derived datatype would make
 * SMPI copy the payload through a real buffer, defeating folded memory). */
#define MAX_BLOCK 46340
#define TAG_STEP1 1
#define TAG_STEP2 2
#define NO_PARTNER (-1)
#define TILE 32 /* side of the cache tiles of the local transpose */

enum algorithm { ALGORITHM_TWO_STEP, ALGORITHM_DIRECT };
static const char *const algorithm_names[] = {"two-step", "direct", NULL};
enum duplex { DUPLEX_HALF, DUPLEX_FULL };
static const char *const duplex_names[] = {"half", "full", NULL};

static const char description[] =
    "Parallel matrix transpose of the Three Quads paper on P = q^3 ranks, q = s^2 a perfect "
    "square (P = 1, 64, 729, 4096, ...): the matrix is an (s*q) x (s*q) grid of N x N blocks of "
    "doubles, one per rank. Each rank transposes its block locally, then either swaps it with the "
    "holder of the mirrored block (direct) or transposes every q x q quadrant, waits at a barrier "
    "and swaps quadrant (a, b) with (b, a) (two-step). Rank 0 prints one JSON line per rank and a "
    "summary line on stdout.";

struct options {
    int algorithm;
    int duplex;
    int block;
    const char *assignment;
    int verify;
    int print_schedule;
    int warmup;
    int iterations;
    int local; /* TL_LOCAL_REAL or TL_LOCAL_SKIP: --local-transpose */
    double transpose_cost;
    struct geometry g; /* the cube of the P ranks (check_options fills it) */
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .algorithm = ALGORITHM_TWO_STEP,
        .duplex = DUPLEX_FULL,
        .block = DEFAULT_BLOCK,
        .assignment = NULL,
        .warmup = 0,
        .iterations = 1,
        .local = TL_LOCAL_REAL,
        .transpose_cost = 0.0,
    };
    const tl_option options[] = {
        tl_opt_algorithm(&opt->algorithm, algorithm_names,
                         "two-step: transpose every quadrant, barrier, swap quadrants; direct: "
                         "swap with the holder of the mirrored block"),
        tl_opt_choice('d', "duplex", "MODE", &opt->duplex, duplex_names,
                      "half: one direction after the other; full: both at once"),
        tl_opt_int('n', "block", "N", &opt->block, 1, MAX_BLOCK,
                   "side of each rank's block, in doubles"),
        tl_opt_string('\0', "assignment", "FILE", &opt->assignment,
                      "text file of P ranks: the holder of block i*(s*q)+j, a permutation of "
                      "0..P-1 (default: the paper's placement)"),
        tl_opt_verify(&opt->verify,
                      "fill the matrix with known values and check the result; exit status 1 if "
                      "wrong. Needs real memory: under SMPI keep smpi/auto-shared-malloc-thresh "
                      "above N*N*8 bytes"),
        tl_opt_print_schedule(&opt->print_schedule),
        tl_opt_warmup(&opt->warmup, "untimed transposes before the timed ones (default 0: the "
                                    "paper's one-shot measurement)"),
        tl_opt_iterations(&opt->iterations,
                          "timed transposes; each phase's time is their mean (default 1)"),
        tl_opt_local_work("local-transpose", &opt->local,
                          "real: fill and transpose the blocks; skip: never touch them, for "
                          "communication-only simulations of large N, not with --verify"),
        tl_opt_real('\0', "transpose-cost", "SECONDS", &opt->transpose_cost, 0.0,
                    "modelled seconds per element of the local transpose, injected as "
                    "computation under SMPI and ignored with a real MPI"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* The ranks make a cube of the paper's (opt->g); --verify needs the data, with exact values. */
static int check_options(struct options *opt, int nranks)
{
    if (!make_geometry(nranks, &opt->g)) {
        tl_arg_error(APP_NAME,
                     "needs P = q^3 MPI ranks with q a perfect square, i.e. 1, 64, 729, "
                     "4096, ... (one block per rank in an (s*q) x (s*q) grid, q = s^2); got %d",
                     nranks);
        return TL_EXIT_USAGE;
    }
    if (tl_check_local_work(APP_NAME, "local-transpose", opt->local, opt->verify) != TL_ARGS_OK)
        return TL_EXIT_USAGE;
    double order = (double)opt->g.side * opt->block;
    if (opt->verify && order * order > 9007199254740992.0) {
        tl_arg_error(APP_NAME,
                     "--verify needs (s*q*N)^2 <= 2^53 so that every element value is exact, "
                     "got s*q*N = %.0f",
                     order);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* holder[b] for every block b: the default, or the file read by rank 0 and broadcast. */
static int load_assignment(const struct options *opt, const struct geometry *g, int rank,
                           int *holder)
{
    if (opt->assignment == NULL) {
        for (int i = 0; i < g->side; i++)
            for (int j = 0; j < g->side; j++)
                holder[i * g->side + j] = default_holder(g, i, j);
        return TL_ARGS_OK;
    }
    char err[1024] = "";
    int ok = 1;
    if (rank == 0)
        ok = read_assignment(opt->assignment, g, holder, err, sizeof err);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        tl_arg_error(APP_NAME, "%s", err); /* printed by rank 0, which has the message */
        return TL_EXIT_USAGE;
    }
    MPI_Bcast(holder, g->ranks, MPI_INT, 0, MPI_COMM_WORLD);
    return TL_ARGS_OK;
}

/* Partners of the rank holding block (i, j) in step 1 and step 2 (NO_PARTNER: none). */
static void partners(const struct options *opt, const struct geometry *g, const int *holder,
                     int i, int j, int *step1, int *step2)
{
    *step1 = *step2 = NO_PARTNER;
    if (opt->algorithm == ALGORITHM_DIRECT) {
        if (i != j)
            *step1 = holder[j * g->side + i];
        return;
    }
    int q = g->q;
    int a = i / q, y = i % q, b = j / q, x = j % q;
    if (x != y) /* transpose inside quadrant (a, b) */
        *step1 = holder[(a * q + x) * g->side + (b * q + y)];
    if (a != b) /* swap quadrant (a, b) with quadrant (b, a) */
        *step2 = holder[(b * q + y) * g->side + (a * q + x)];
}

/* Value of element (r, c) of the global matrix of order `order`. */
static double element(int64_t r, int64_t c, int64_t order)
{
    return (double)(r * order + c);
}

/* Fills the N x N block (i, j), row-major. */
static void fill_block(double *block, int n, int i, int j, int64_t order)
{
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            block[(size_t)r * n + c] = element((int64_t)i * n + r, (int64_t)j * n + c, order);
}

/* out = transpose of in (N x N, row-major), in cache tiles. */
static void transpose_block(const double *restrict in, double *restrict out, int n)
{
    for (int r0 = 0; r0 < n; r0 += TILE)
        for (int c0 = 0; c0 < n; c0 += TILE) {
            int r1 = r0 + TILE < n ? r0 + TILE : n;
            int c1 = c0 + TILE < n ? c0 + TILE : n;
            for (int r = r0; r < r1; r++)
                for (int c = c0; c < c1; c++)
                    out[(size_t)c * n + r] = in[(size_t)r * n + c];
        }
}

/* Elements of the block at (i, j) that differ from block (i, j) of the transposed matrix. */
static long long count_errors(const double *block, int n, int i, int j, int64_t order)
{
    long long errors = 0;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            if (block[(size_t)r * n + c] !=
                element((int64_t)j * n + c, (int64_t)i * n + r, order))
                errors++;
    return errors;
}

/* Swaps `count` doubles with `partner`: send from `out`, receive into `in`. */
static void swap_blocks(const double *out, double *in, int count, int partner, int rank,
                        int duplex, int tag)
{
    if (duplex == DUPLEX_FULL) {
        MPI_Sendrecv(out, count, MPI_DOUBLE, partner, tag, in, count, MPI_DOUBLE, partner, tag,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank < partner) {
        MPI_Send(out, count, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD);
        MPI_Recv(in, count, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(in, count, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(out, count, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD);
    }
}

/* Per-rank timings, in the order of the JSON keys. */
enum { T_INIT, T_TRANSPOSE, T_STEP1, T_WAIT, T_STEP2, T_TOTAL, T_COUNT };
static const char *const time_keys[T_COUNT] = {"init_s",  "transpose_s", "step1_s",
                                               "wait_s",  "step2_s",     "total_s"};
/* Per-rank integers gathered to rank 0. */
enum { I_BLOCK, I_STEP1, I_STEP2, I_COUNT };

/* Starts an output line: app, version, ["summary":true,] and the run's parameters. */
static void json_start(tl_json *json, const struct options *opt, const struct geometry *g,
                       int summary)
{
    tl_json_header(json, APP_NAME, OUTPUT_VERSION);
    if (summary)
        tl_json_bool(json, "summary", 1);
    tl_json_str(json, "algorithm", algorithm_names[opt->algorithm]);
    tl_json_str(json, "duplex", duplex_names[opt->duplex]);
    tl_json_i64(json, "block", opt->block);
    tl_json_i64(json, "q", g->q);
    tl_json_i64(json, "ranks", g->ranks);
    tl_json_i64(json, "warmup", opt->warmup);
    tl_json_i64(json, "iterations", opt->iterations);
}

/* --print-schedule: the exchanges of step 1 (and step 2), every rank to its partner. */
static void print_schedule(const struct options *opt, const struct geometry *g, const int *holder)
{
    int steps = opt->algorithm == ALGORITHM_TWO_STEP ? 2 : 1;
    for (int step_no = 0; step_no < steps; step_no++) {
        tl_schedule_step step;
        tl_schedule_begin(&step, APP_NAME, step_no);
        for (int b = 0; b < g->ranks; b++) {
            int partner[2];
            partners(opt, g, holder, b / g->side, b % g->side, &partner[0], &partner[1]);
            if (partner[step_no] != NO_PARTNER)
                tl_schedule_send(&step, holder[b], partner[step_no]);
        }
        tl_schedule_end(&step);
    }
}

/* This rank's transpose of block (bi, bj): fill, local transpose, step 1, [barrier, step 2],
 * each phase's time in t[]; returns the wrong elements of the result (--verify). */
static long long run_transpose(const struct options *opt, const struct geometry *g, int rank,
                               int bi, int bj, const int partner[2], double t[T_COUNT])
{
    int n = opt->block;
    int count = n * n; /* <= MAX_BLOCK^2 < INT_MAX */
    size_t bytes = (size_t)count * sizeof(double);
    int64_t order = (int64_t)g->side * n;

    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    /* Two buffers: the original block, then (after the local transpose) the
     * one being sent from and the one being received into, alternately. */
    double *original = tl_alloc_or_abort(APP_NAME, bytes);
    double *transposed = tl_alloc_or_abort(APP_NAME, bytes);
    if (opt->local == TL_LOCAL_REAL)
        fill_block(original, n, bi, bj, order);
    double after_init = MPI_Wtime();

    if (opt->local == TL_LOCAL_REAL)
        transpose_block(original, transposed, n);
    tl_model_compute((double)count * opt->transpose_cost);
    double after_transpose = MPI_Wtime();

    double *current = transposed, *spare = original;
    if (partner[0] != NO_PARTNER) {
        swap_blocks(current, spare, count, partner[0], rank, opt->duplex, TAG_STEP1);
        double *tmp = current;
        current = spare;
        spare = tmp;
    }
    double after_step1 = MPI_Wtime();
    double after_wait = after_step1, after_step2 = after_step1;
    if (opt->algorithm == ALGORITHM_TWO_STEP) {
        MPI_Barrier(MPI_COMM_WORLD);
        after_wait = MPI_Wtime();
        if (partner[1] != NO_PARTNER) {
            swap_blocks(current, spare, count, partner[1], rank, opt->duplex, TAG_STEP2);
            double *tmp = current;
            current = spare;
            spare = tmp;
        }
        after_step2 = MPI_Wtime();
    }
    t[T_INIT] = after_init - start;
    t[T_TRANSPOSE] = after_transpose - after_init;
    t[T_STEP1] = after_step1 - after_transpose;
    t[T_WAIT] = after_wait - after_step1;
    t[T_STEP2] = after_step2 - after_wait;
    t[T_TOTAL] = after_step2 - start;

    long long errors = opt->verify ? count_errors(current, n, bi, bj, order) : 0;
    free(transposed);
    free(original);
    return errors;
}

/* --warmup untimed transposes, then --iterations timed ones: t[] is each phase's mean over the
 * timed ones; returns the wrong elements over all of them (--verify). */
static long long run_transposes(const struct options *opt, const struct geometry *g, int rank,
                                int bi, int bj, const int partner[2], double t[T_COUNT])
{
    long long errors = 0;
    double once[T_COUNT];
    for (int k = 0; k < T_COUNT; k++)
        t[k] = 0.0;
    for (int run = 0; run < opt->warmup + opt->iterations; run++) {
        errors += run_transpose(opt, g, rank, bi, bj, partner, once);
        if (run >= opt->warmup)
            for (int k = 0; k < T_COUNT; k++)
                t[k] += once[k] / opt->iterations;
    }
    return errors;
}

/* Rank 0 prints one line per rank, in rank order, then the summary line. Collective. */
static void report(const struct options *opt, const struct geometry *g, int rank, int nranks,
                   const double t[T_COUNT], const int ints[I_COUNT], long long total_errors)
{
    double *all_t = NULL;
    int *all_i = NULL;
    if (rank == 0) {
        all_t = tl_alloc_or_abort(APP_NAME, (size_t)nranks * T_COUNT * sizeof *all_t);
        all_i = tl_alloc_or_abort(APP_NAME, (size_t)nranks * I_COUNT * sizeof *all_i);
    }
    MPI_Gather(t, T_COUNT, MPI_DOUBLE, all_t, T_COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(ints, I_COUNT, MPI_INT, all_i, I_COUNT, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    double elapsed = 0.0;
    for (int r = 0; r < nranks; r++) {
        const double *rt = all_t + (size_t)r * T_COUNT;
        const int *ri = all_i + (size_t)r * I_COUNT;
        tl_json json;
        json_start(&json, opt, g, 0);
        tl_json_i64(&json, "rank", r);
        tl_json_i64(&json, "block_i", ri[I_BLOCK] / g->side);
        tl_json_i64(&json, "block_j", ri[I_BLOCK] % g->side);
        for (int k = 0; k < T_COUNT; k++)
            tl_json_f64(&json, time_keys[k], rt[k]);
        tl_json_i64(&json, "step1_partner", ri[I_STEP1]);
        tl_json_i64(&json, "step2_partner", ri[I_STEP2]);
        tl_json_end(&json);
        if (rt[T_TOTAL] > elapsed)
            elapsed = rt[T_TOTAL];
    }
    tl_json json;
    json_start(&json, opt, g, 1);
    tl_json_f64(&json, "elapsed_s", elapsed);
    tl_json_end_verified(&json, APP_NAME, opt->verify, total_errors, "elements");
    free(all_i);
    free(all_t);
}

static int run(struct options *opt, int rank, int nranks)
{
    const struct geometry *g = &opt->g;
    int *holder = tl_alloc_or_abort(APP_NAME, (size_t)g->ranks * sizeof *holder);
    int code = load_assignment(opt, g, rank, holder);
    if (code == TL_ARGS_OK && opt->print_schedule) {
        if (rank == 0)
            print_schedule(opt, g, holder);
        code = 0;
    }
    if (code != TL_ARGS_OK) {
        free(holder);
        return code;
    }

    /* This rank's block position and its partners. */
    int mine = 0;
    while (holder[mine] != rank)
        mine++;
    int partner[2];
    partners(opt, g, holder, mine / g->side, mine % g->side, &partner[0], &partner[1]);
    double t[T_COUNT];
    long long errors = run_transposes(opt, g, rank, mine / g->side, mine % g->side, partner, t);
    long long total_errors = tl_sum_errors(opt->verify, errors);
    int ints[I_COUNT] = {mine, partner[0], partner[1]};
    report(opt, g, rank, nranks, t, ints, total_errors);
    free(holder);
    return tl_exit_status(opt->verify, total_errors);
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
