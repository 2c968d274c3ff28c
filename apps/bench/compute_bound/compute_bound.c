/*
 * compute_bound.c - a synthetic compute-bound code: each rank computes, then all meet.
 *
 * Every rank runs WORK million floating-point operations (independent chains of
 * multiply-adds kept in registers: the core's arithmetic, not its memory, sets
 * the pace), then the ranks meet in a barrier. That is one step; WARMUP untimed
 * steps, then ITERATIONS timed ones. Under smpirun the time a step takes is what
 * the simulation charges for the computation (--compute benchmark: the burst's
 * CPU time here, scaled to the platform's core speed; --compute off: nothing).
 * Rank 0 prints one JSON line:
 *   {"app":"compute_bound","version":1,"ranks":N,"mflop_per_rank":W,
 *    "iterations":I,"warmup":U,"step_s_min":..,"step_s_avg":..,"step_s_max":..,
 *    "checksum":..}
 * where the checksum (the chains' sum) keeps the compiler from removing the work.
 */
#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "compute_bound"
#define OUTPUT_VERSION 1
#define DEFAULT_MFLOP 100
#define DEFAULT_ITERATIONS 3
#define DEFAULT_WARMUP 1
#define CHAINS 8 /* independent multiply-add chains: enough to fill a core's pipelines */

static const char description[] =
    "Each rank computes WORK Mflop (register-resident multiply-add chains), then all ranks meet in "
    "a barrier; WARMUP untimed steps, then ITERATIONS timed ones. Rank 0 prints one JSON line with "
    "the time of a step (min, avg, max over the timed steps) on stdout.";

struct options {
    int mflop;
    int iterations;
    int warmup;
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .mflop = DEFAULT_MFLOP, .iterations = DEFAULT_ITERATIONS, .warmup = DEFAULT_WARMUP};
    const tl_option options[] = {
        tl_opt_int('f', "mflop", "WORK", &opt->mflop, 1, 1000000,
                   "million floating-point operations per rank and step"),
        tl_opt_iterations(&opt->iterations, "timed steps"),
        tl_opt_warmup(&opt->warmup, "untimed steps before them"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* 2 flops (a multiply and an add) per chain and round: `mflop` million in all. */
static double compute(int mflop, double seed)
{
    double x[CHAINS];
    for (int c = 0; c < CHAINS; c++)
        x[c] = seed + c;
    const double scale = 0.999999, shift = 1e-6;
    long long rounds = (long long)mflop * 1000000 / (2 * CHAINS);
    for (long long r = 0; r < rounds; r++)
        for (int c = 0; c < CHAINS; c++)
            x[c] = x[c] * scale + shift;
    double sum = 0.0;
    for (int c = 0; c < CHAINS; c++)
        sum += x[c];
    return sum;
}

static int run(struct options *opt, int rank, int nranks)
{
    tl_stats step;
    tl_stats_init(&step);
    double checksum = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < opt->warmup + opt->iterations; it++) {
        double start = MPI_Wtime();
        checksum += compute(opt->mflop, (double)rank);
        MPI_Barrier(MPI_COMM_WORLD);
        double elapsed = MPI_Wtime() - start;
        if (it >= opt->warmup)
            tl_stats_add(&step, elapsed);
    }
    double total = 0.0;
    MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        tl_json json;
        tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
        tl_json_i64(&json, "ranks", nranks);
        tl_json_i64(&json, "mflop_per_rank", opt->mflop);
        tl_json_repetitions(&json, opt->iterations, opt->warmup);
        tl_json_stats(&json, "step_s", &step);
        tl_json_f64(&json, "checksum", total);
        tl_json_end(&json);
    }
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, tl_no_checks, run);
