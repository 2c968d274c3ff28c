/*
 * combine.c - global vector combining (global sum of N doubles, result on
 * every rank) on a W x H 2-D mesh with the three algorithms of Littlefield,
 * "Modeling node bandwidth limits and their effect on vector combining
 * algorithms" (1992; Sect. 3.2 and the Appendix): tree, snake and fence.
 *
 * Geometry. P = W*H ranks; rank r is mesh node (x, y) = (r % W, r / W)
 * (first dimension fastest, as generators.mesh numbers its hosts). (0,0),
 * rank 0, is the root. Every rank starts with its own vector v of N doubles
 * and ends with the element-wise sum over all ranks: the vector is combined
 * towards the root, then broadcast back along the same paths.
 *
 * Combining cost. Every time a node combines k+1 vectors (or blocks) of e
 * elements it really adds them and models the time with
 * tl_model_compute(c2*e) for two vectors, tl_model_compute(c3*e) for three
 * (one three-way combine, not two two-way ones). Forwarding costs nothing.
 *
 *   tree:  binomial reduction along x in every row, then along y in column
 *          x = 0, whole vectors (one message of N doubles per send); then the
 *          same tree in reverse order to broadcast. 2*(ceil(log2 W) +
 *          ceil(log2 H)) message steps.
 *   snake: a pipeline along the boustrophedon path through the mesh, the
 *          vector in B = ceil(N/S) blocks of S doubles (last one shorter);
 *          2P + B - 3 global steps (P >= 2).
 *   fence: blocks travel down the columns and left along the bottom row,
 *          columns staggered so that the two inputs of a bottom-row node
 *          arrive in the same step (one three-way combine); 2W + 2H + B - 5
 *          global steps (P >= 2). See fence_node() for the schedule.
 * All three are free of link conflicts under XY routing; snake and fence only
 * talk between mesh neighbours. Snake and fence are "step synchronous": in
 * its global step t a node posts all the receives and sends of that step,
 * waits for all of them (MPI_Waitall), then combines what arrived. There is
 * no global synchronisation between steps; a node simply skips steps in which
 * it has nothing to do.
 *
 * Timing (as alltoall): WARMUP untimed then ITERATIONS timed iterations, each
 * after a barrier (the vector is refilled before it); a rank times an
 * iteration from the end of the barrier to the end of its last operation.
 * Rank 0 prints one JSON line:
 *   {"app":"combine","version":1,"algorithm":..,"width":W,"height":H,
 *    "ranks":P,"elements":N,"block":S,"blocks":B,"steps":..,"c2":..,"c3":..,
 *    "warmup":..,"iterations":..,"time_s_min":..,"time_s_avg":..,
 *    "time_s_max":..,"verified":true|false|null}
 * blocks and steps are those of the algorithm run (tree: 1 block and its
 * message steps; P = 1: 0 steps). time_s_* are the min/avg/max over ranks of
 * each rank's mean iteration time. --verify fills v[e] = 1 + (7r + 3e) % 101
 * (small integers: every sum is exact in double) and checks every element on
 * every rank after every iteration; exit status 1 if one is wrong.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"
#include "topolab_model.h"
#include "combine_mesh.h"

#define APP_NAME "combine"
#define OUTPUT_VERSION 1
#define DEFAULT_ELEMENTS 1000
#define DEFAULT_BLOCK 100
#define MAX_ELEMENTS (1 << 27) /* 1 GiB of doubles per vector */
#define DEFAULT_C2 0.25e-6     /* the DELTA's c2 and c3 (paper, Sect. 7.2) */
#define DEFAULT_C3 0.37e-6
#define DEFAULT_WARMUP 1
#define DEFAULT_ITERATIONS 3
#define PATTERN 101 /* v[e] depends on e % PATTERN only */

enum algorithm { ALGORITHM_TREE, ALGORITHM_SNAKE, ALGORITHM_FENCE };
static const char *const algorithm_names[] = {"tree", "snake", "fence", NULL};

static const char description[] =
    "Global sum of N doubles over the W x H = P ranks of a 2-D mesh (rank r is node (r % W, "
    "r / W)); afterwards every rank holds the sum. tree: binomial reduction along the rows, then "
    "column 0, whole vectors, then the reverse broadcast; snake: a pipeline of blocks of S "
    "doubles along the boustrophedon path; fence: blocks down the columns and left along the "
    "bottom row (three-way combining there), results back the same way. Combining k+1 vectors "
    "of e elements costs c2*e (two) or c3*e (three) modelled seconds. WARMUP untimed and "
    "ITERATIONS timed iterations, each after a barrier. Rank 0 prints one JSON line on stdout.";

struct options {
    int algorithm;
    int width;
    int height;
    int elements;
    int block;
    double c2;
    double c3;
    int warmup;
    int iterations;
    int verify;
    int print_schedule;
};

/* ---------------------------------------------------------------------------
 * Arguments.
 */

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .algorithm = ALGORITHM_FENCE,
        .width = 0,
        .height = 0,
        .elements = DEFAULT_ELEMENTS,
        .block = DEFAULT_BLOCK,
        .c2 = DEFAULT_C2,
        .c3 = DEFAULT_C3,
        .warmup = DEFAULT_WARMUP,
        .iterations = DEFAULT_ITERATIONS,
    };
    const tl_option options[] = {
        tl_opt_algorithm(&opt->algorithm, algorithm_names,
                         "tree: binomial tree of whole vectors; snake: pipeline along the "
                         "boustrophedon path; fence: pipeline down the columns and along the "
                         "bottom row"),
        tl_opt_int('W', "width", "W", &opt->width, 1, INT_MAX,
                   "mesh width, nodes per row (required; W*H = number of ranks)"),
        tl_opt_int('H', "height", "H", &opt->height, 1, INT_MAX,
                   "mesh height, nodes per column (required)"),
        tl_opt_int('n', "elements", "N", &opt->elements, 1, MAX_ELEMENTS,
                   "vector length in doubles"),
        tl_opt_int('S', "block", "S", &opt->block, 1, MAX_ELEMENTS,
                   "pipeline block size in doubles (snake and fence; the last block of the "
                   "vector may be shorter; ignored by tree)"),
        tl_opt_real('\0', "c2", "SECONDS", &opt->c2, 0.0,
                    "modelled cost per element of combining two vectors"),
        tl_opt_real('\0', "c3", "SECONDS", &opt->c3, 0.0,
                    "modelled cost per element of combining three vectors at once"),
        tl_opt_warmup(&opt->warmup, "untimed iterations first"),
        tl_opt_iterations(&opt->iterations, "timed iterations"),
        tl_opt_verify(&opt->verify,
                      "fill the vectors with known small integers and check every element of the "
                      "sum on every rank after each iteration; exit status 1 if wrong"),
        tl_opt_print_schedule(&opt->print_schedule),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* The mesh has a shape, of as many nodes as there are ranks. */
static int check_options(struct options *opt, int nranks)
{
    if (opt->width == 0 || opt->height == 0) {
        tl_arg_error(APP_NAME,
                     "the mesh shape is required: -W/--width W and -H/--height H with W*H = %d "
                     "(the number of MPI ranks)",
                     nranks);
        return TL_EXIT_USAGE;
    }
    if ((int64_t)opt->width * opt->height != nranks) {
        tl_arg_error(APP_NAME, "a %d x %d mesh has W*H = %lld nodes but there are %d MPI ranks",
                     opt->width, opt->height, (long long)opt->width * opt->height, nranks);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

/* Global steps of the algorithm: see the schedules in combine_mesh.c. */
static int algorithm_steps(const struct options *opt, int blocks)
{
    int nodes = opt->width * opt->height;
    if (nodes == 1)
        return 0;
    switch (opt->algorithm) {
    case ALGORITHM_TREE:
        return 2 * (tl_ceil_log2(opt->width) + tl_ceil_log2(opt->height));
    case ALGORITHM_SNAKE:
        return 2 * nodes + blocks - 3;
    default:
        return 2 * opt->width + 2 * opt->height + blocks - 5;
    }
}

/* ---------------------------------------------------------------------------
 * Combining.
 */

/* v[0..e-1] += inputs[0][..] (+ inputs[1][..]) with the modelled cost of k+1 vectors. */
static void combine(double *v, double *const *inputs, int k, int e, const struct options *opt)
{
    if (k == 1) {
        const double *a = inputs[0];
        for (int j = 0; j < e; j++)
            v[j] += a[j];
        tl_model_compute(opt->c2 * e);
    } else if (k == 2) {
        const double *a = inputs[0], *b = inputs[1];
        for (int j = 0; j < e; j++)
            v[j] = v[j] + a[j] + b[j];
        tl_model_compute(opt->c3 * e);
    }
}

/* Tree: binomial reduction (rows, then column 0) and the reverse broadcast. */
static void run_tree(double *v, double *scratch, int x, int y, const struct options *opt)
{
    int n = opt->elements;
    for (int s = 0; s < algorithm_steps(opt, 1); s++) {
        struct tree_move move = tree_step(opt->width, opt->height, x, y, s);
        if (move.role == TREE_SEND) {
            MPI_Send(v, n, MPI_DOUBLE, move.peer, move.tag, MPI_COMM_WORLD);
        } else if (move.role == TREE_RECEIVE && move.tag == TAG_PARTIAL) {
            MPI_Recv(scratch, n, MPI_DOUBLE, move.peer, TAG_PARTIAL, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            combine(v, &scratch, 1, n, opt);
        } else if (move.role == TREE_RECEIVE) {
            MPI_Recv(v, n, MPI_DOUBLE, move.peer, TAG_FINAL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
}

/* Number of elements of block b. */
static int block_length(const struct options *opt, int b)
{
    int64_t rest = (int64_t)opt->elements - (int64_t)b * opt->block;
    return rest < opt->block ? (int)rest : opt->block;
}

/* The block that moves in step t when block b moves in step b + offset; -1 if none does. */
static int block_at(int t, int offset, int blocks)
{
    int b = t - offset;
    return b >= 0 && b < blocks ? b : -1;
}

/* Snake and fence: this node's part of every global step (see struct pipe_node). */
static void run_pipeline(double *v, double *const *scratch, const struct pipe_node *node,
                         int blocks, int steps, const struct options *opt)
{
    MPI_Request requests[2 * MAX_CHILDREN + 2];
    /* A real status array rather than MPI_STATUSES_IGNORE: with MPICH that constant is
     * (MPI_Status *)1, which GCC 12 flags (-Wstringop-overflow). */
    MPI_Status statuses[2 * MAX_CHILDREN + 2];
    for (int t = 0; t < steps; t++) {
        int nreq = 0;
        int in = block_at(t, node->send_offset - 1, blocks); /* partial block from the children */
        int has_input = node->nchildren > 0 && in >= 0;
        if (has_input)
            for (int c = 0; c < node->nchildren; c++)
                MPI_Irecv(scratch[c], block_length(opt, in), MPI_DOUBLE, node->children[c],
                          TAG_PARTIAL, MPI_COMM_WORLD, &requests[nreq++]);
        if (node->parent >= 0) {
            int out = block_at(t, node->send_offset, blocks); /* partial block to the parent */
            if (out >= 0)
                MPI_Isend(v + (size_t)out * (size_t)opt->block, block_length(opt, out),
                          MPI_DOUBLE, node->parent, TAG_PARTIAL, MPI_COMM_WORLD,
                          &requests[nreq++]);
            int final_in = block_at(t, node->final_offset, blocks); /* final block from the parent */
            if (final_in >= 0)
                MPI_Irecv(v + (size_t)final_in * (size_t)opt->block, block_length(opt, final_in),
                          MPI_DOUBLE, node->parent, TAG_FINAL, MPI_COMM_WORLD,
                          &requests[nreq++]);
        }
        int final_out = block_at(t, node->final_offset + 1, blocks); /* final block to the children */
        if (final_out >= 0)
            for (int c = 0; c < node->nchildren; c++)
                MPI_Isend(v + (size_t)final_out * (size_t)opt->block,
                          block_length(opt, final_out), MPI_DOUBLE, node->children[c],
                          TAG_FINAL, MPI_COMM_WORLD, &requests[nreq++]);
        if (nreq > 0)
            MPI_Waitall(nreq, requests, statuses);
        if (has_input)
            combine(v + (size_t)in * (size_t)opt->block, scratch, node->nchildren,
                    block_length(opt, in), opt);
    }
}

/* ---------------------------------------------------------------------------
 * Verification data.
 */

/* Element e of rank r's vector: a small integer >= 1, so sums are exact and a rank that never
 * received the result (P >= 2) holds less than the sum. */
static double element(int rank, int e)
{
    return 1.0 + (double)((7 * (rank % PATTERN) + 3 * (e % PATTERN)) % PATTERN);
}

static void fill(double *v, int rank, int n)
{
    for (int e = 0; e < n; e++)
        v[e] = element(rank, e);
}

/* ---------------------------------------------------------------------------
 * Runs and output.
 */

static struct pipe_node pipe_node_of(const struct options *opt, int x, int y)
{
    return opt->algorithm == ALGORITHM_SNAKE ? snake_node(opt->width, opt->height, x, y)
                                             : fence_node(opt->width, opt->height, x, y);
}

/* --print-schedule: the messages (from, to, block) of every global step, listed with the
 * functions run_tree and run_pipeline use. */
static void print_schedule(const struct options *opt, int blocks, int steps)
{
    for (int t = 0; t < steps; t++) {
        tl_schedule_step step;
        tl_schedule_begin(&step, APP_NAME, t);
        for (int r = 0; r < opt->width * opt->height; r++) {
            int x = r % opt->width, y = r / opt->width;
            if (opt->algorithm == ALGORITHM_TREE) {
                struct tree_move move = tree_step(opt->width, opt->height, x, y, t);
                if (move.role == TREE_SEND)
                    tl_schedule_send_part(&step, r, move.peer, 0);
                continue;
            }
            struct pipe_node node = pipe_node_of(opt, x, y);
            int out = block_at(t, node.send_offset, blocks);
            if (node.parent >= 0 && out >= 0)
                tl_schedule_send_part(&step, r, node.parent, out);
            int final_out = block_at(t, node.final_offset + 1, blocks);
            for (int c = 0; final_out >= 0 && c < node.nchildren; c++)
                tl_schedule_send_part(&step, r, node.children[c], final_out);
        }
        tl_schedule_end(&step);
    }
}

/* One global sum, the kernel the harness times (tl_time_kernel): every iteration refills the
 * rank's vector (untimed), sums it over the mesh, and --verify checks the result after. */
struct combine_kernel {
    const struct options *opt;
    int rank, nranks, x, y, n, blocks, steps;
    struct pipe_node node;
    double *v;
    double *scratch[MAX_CHILDREN]; /* incoming data: a whole vector (tree), a block per child */
    double expected[PATTERN];      /* the sum of element e over all ranks depends on e % PATTERN */
};

static void combine_prepare(void *state)
{
    struct combine_kernel *k = state;
    fill(k->v, k->rank, k->n);
}

static void combine_run(void *state)
{
    struct combine_kernel *k = state;
    if (k->nranks == 1)
        return;
    if (k->opt->algorithm == ALGORITHM_TREE)
        run_tree(k->v, k->scratch[0], k->x, k->y, k->opt);
    else
        run_pipeline(k->v, k->scratch, &k->node, k->blocks, k->steps, k->opt);
}

static long long combine_check(void *state)
{
    struct combine_kernel *k = state;
    long long errors = 0;
    for (int e = 0; k->opt->verify && e < k->n; e++)
        errors += k->v[e] != k->expected[e % PATTERN];
    return errors;
}

/* Times the global sum (WARMUP + ITERATIONS, each after a barrier). */
static tl_timing run_iterations(const struct options *opt, int rank, int nranks, int blocks,
                                int steps)
{
    struct combine_kernel k = {.opt = opt, .rank = rank, .nranks = nranks, .blocks = blocks,
                               .steps = steps, .n = opt->elements};
    k.x = rank % opt->width;
    k.y = rank / opt->width;
    k.node = pipe_node_of(opt, k.x, k.y);
    k.v = tl_alloc_or_abort(APP_NAME, (size_t)k.n * sizeof *k.v);
    int chunk = opt->block < k.n ? opt->block : k.n;
    for (int c = 0; c < MAX_CHILDREN; c++) {
        size_t count = opt->algorithm == ALGORITHM_TREE ? (c == 0 ? (size_t)k.n : 0) : (size_t)chunk;
        k.scratch[c] = tl_alloc_or_abort(APP_NAME, count * sizeof *k.scratch[c]);
    }
    for (int e = 0; e < PATTERN; e++) {
        k.expected[e] = 0.0;
        for (int r = 0; r < nranks; r++)
            k.expected[e] += element(r, e);
    }
    tl_kernel kernel = {&k, combine_prepare, combine_run, combine_check};
    tl_timing timing = tl_time_kernel(&kernel, opt->warmup, opt->iterations);
    for (int c = 0; c < MAX_CHILDREN; c++)
        free(k.scratch[c]);
    free(k.v);
    return timing;
}

static void print_result(const struct options *opt, int nranks, int blocks, int steps,
                         const double spread[3], long long errors)
{
    tl_json json;
    tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
    tl_json_str(&json, "algorithm", algorithm_names[opt->algorithm]);
    tl_json_i64(&json, "width", opt->width);
    tl_json_i64(&json, "height", opt->height);
    tl_json_i64(&json, "ranks", nranks);
    tl_json_i64(&json, "elements", opt->elements);
    tl_json_i64(&json, "block", opt->block);
    tl_json_i64(&json, "blocks", blocks);
    tl_json_i64(&json, "steps", steps);
    tl_json_f64(&json, "c2", opt->c2);
    tl_json_f64(&json, "c3", opt->c3);
    tl_json_i64(&json, "warmup", opt->warmup);
    tl_json_i64(&json, "iterations", opt->iterations);
    tl_json_times(&json, spread);
    tl_json_end_verified(&json, APP_NAME, opt->verify, errors, "elements");
}

static int run(struct options *opt, int rank, int nranks)
{
    int blocks = opt->algorithm == ALGORITHM_TREE ? 1 : (opt->elements - 1) / opt->block + 1;
    int steps = algorithm_steps(opt, blocks);
    if (opt->print_schedule) {
        if (rank == 0)
            print_schedule(opt, blocks, steps);
        return 0;
    }

    tl_summary summary = tl_summarize(run_iterations(opt, rank, nranks, blocks, steps), opt->verify);
    if (rank == 0)
        print_result(opt, nranks, blocks, steps, summary.spread, summary.errors);
    return tl_exit_status(opt->verify, summary.errors);
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
