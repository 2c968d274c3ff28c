/*
 * hpcg.c - the HPCG benchmark, written from its specification: Dongarra, Heroux, Luszczek, "HPCG
 * Technical Specification", Sandia report SAND2013-8752 (2013). HPCG itself is in neither Debian nor
 * PyPI, so topolab carries this implementation of the specification's reference algorithms; its rating is
 * comparable with the HPCG list's where those were run with the reference kernels, and a lower bound of
 * what tuned (reordered, multithreaded) vendor versions reach.
 *
 * Problem (Sect. 2; hpcg_problem.h): a 27-point stencil on an NX x NY x NZ box per rank, boxes on a 3-D
 * process grid, exact solution all ones, b = A * ones, x0 = 0.
 * Preconditioned conjugate gradient (Sect. 3.1), one set of ITERATIONS iterations, tolerance 0:
 *   p = x; Ap = A p; r = b - Ap; normr0 = |r|
 *   for k = 1 .. ITERATIONS:
 *     z = M^-1 r                           (one V-cycle, hpcg_mg)
 *     k = 1: p = z, rtz = r.z;  else: beta = (r.z) / rtz_old, p = z + beta p
 *     Ap = A p; alpha = rtz / (p.Ap); x = x + alpha p; r = r - alpha Ap; normr = |r|
 * M is a V-cycle over LEVELS levels (Sect. 3.3): one symmetric Gauss-Seidel sweep before and after the
 * coarse correction, one alone on the coarsest level.
 *
 * Rating (Sect. 5, the reference code's flop count): for F CG iterations in S sets, with n rows and nnz
 * entries on the finest level and nnz_l on level l (l = 0 finest, L levels),
 *   dot: (3F + S) 2n   waxpby: (3F + S) 2n   spmv: (F + S) 2 nnz
 *   preconditioner: F (4 + 2 + 4) nnz_l for each level but the coarsest, F 4 nnz_(L-1) for it,
 * over the time of the S timed sets (the slowest rank's, from a barrier). Rank 0 prints one JSON line:
 *   {"app":"hpcg","version":1,"ranks":P,"process_grid":[..],"local":[NX,NY,NZ],"levels":L,"sets":S,
 *    "iterations":I,"rows":n,"nonzeros":nnz,"flops":..,"time_s":..,"gflops":..,"dot_s":..,"waxpby_s":..,
 *    "spmv_s":..,"mg_s":..,"residual":|r|/|r0| of the last set,"solution_error":max |x_i - 1|,
 *    "verified":..}
 * where the *_s parts are rank 0's. --verify: exit status 1 unless the last set reduced the residual below
 * 1e-3 of the first: the preconditioned solver converges (its 50 iterations reach 1e-19 on 8 ranks of 16^3,
 * 4e-8 on 8 ranks of 48^3, 9e-5 on 48 ranks of 48^3: the Gauss-Seidel smoother works within each rank's box, so
 * more ranks precondition less).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "hpcg_kernels.h"
#include "hpcg_problem.h"
#include "topolab_app.h"

#define APP_NAME "hpcg"
#define OUTPUT_VERSION 1
#define DEFAULT_SIZE 32
#define DEFAULT_LEVELS 4
#define DEFAULT_ITERATIONS 50 /* the specification's iterations per set */
#define VERIFY_RESIDUAL 1e-3

static const char description[] =
    "HPCG (the specification's reference algorithms): a multigrid-preconditioned conjugate gradient on a "
    "27-point stencil, NX x NY x NZ points per rank, LEVELS multigrid levels; SETS timed sets of ITERATIONS "
    "iterations each from x0 = 0. Rank 0 prints one JSON line with the flop count of the specification and "
    "the rating in Gflop/s on stdout.";

struct options {
    int n[3];
    int levels;
    int sets;
    int iterations;
    int verify;
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){.n = {DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE},
                            .levels = DEFAULT_LEVELS,
                            .sets = 1,
                            .iterations = DEFAULT_ITERATIONS};
    const tl_option options[] = {
        tl_opt_int('x', "nx", "NX", &opt->n[0], 1, 1024, "local points in x per rank"),
        tl_opt_int('y', "ny", "NY", &opt->n[1], 1, 1024, "local points in y per rank"),
        tl_opt_int('z', "nz", "NZ", &opt->n[2], 1, 1024, "local points in z per rank"),
        tl_opt_int('l', "levels", "LEVELS", &opt->levels, 1, 8, "multigrid levels (the specification: 4)"),
        tl_opt_int('s', "sets", "SETS", &opt->sets, 1, 1000, "timed conjugate-gradient sets"),
        tl_opt_iterations(&opt->iterations, "conjugate-gradient iterations per set"),
        tl_opt_verify(&opt->verify, "exit status 1 unless the residual fell below 1e-3 of the first"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* Every level halves the box; a rank holds 2^27 rows at most. */
static int check_options(struct options *opt, int nranks)
{
    (void)nranks;
    int multiple = 1 << (opt->levels - 1);
    for (int k = 0; k < 3; k++)
        if (opt->n[k] % multiple) {
            tl_arg_error(APP_NAME, "--n%c %d is not a multiple of %d: each of %d levels halves the box",
                         "xyz"[k], opt->n[k], multiple, opt->levels);
            return TL_EXIT_USAGE;
        }
    if ((int64_t)opt->n[0] * opt->n[1] * opt->n[2] > (1 << 27)) {
        tl_arg_error(APP_NAME, "a box of %d x %d x %d points is more than 2^27 rows per rank", opt->n[0],
                     opt->n[1], opt->n[2]);
        return TL_EXIT_USAGE;
    }
    return TL_ARGS_OK;
}

typedef struct {
    double *b, *x, *r, *z, *p, *Ap;
} cg_vectors;

/* One set of `iterations` CG iterations from x = 0; returns |r| / |r0|. */
static double cg_set(const hpcg_level *level, cg_vectors *v, int iterations, hpcg_times *times)
{
    memset(v->x, 0, sizeof(double) * (size_t)level->ncol);
    hpcg_waxpby(level, 1.0, v->x, 0.0, v->x, v->p, times);
    hpcg_spmv(level, v->p, v->Ap, times);
    hpcg_waxpby(level, 1.0, v->b, -1.0, v->Ap, v->r, times);
    double normr0 = sqrt(hpcg_dot(level, v->r, v->r, times)), normr = normr0, rtz = 0.0;
    for (int k = 1; k <= iterations; k++) {
        hpcg_mg(level, v->r, v->z, times);
        double old_rtz = rtz;
        rtz = hpcg_dot(level, v->r, v->z, times);
        if (k == 1)
            hpcg_waxpby(level, 1.0, v->z, 0.0, v->z, v->p, times);
        else
            hpcg_waxpby(level, 1.0, v->z, rtz / old_rtz, v->p, v->p, times);
        hpcg_spmv(level, v->p, v->Ap, times);
        double alpha = rtz / hpcg_dot(level, v->p, v->Ap, times);
        hpcg_waxpby(level, 1.0, v->x, alpha, v->p, v->x, times);
        hpcg_waxpby(level, 1.0, v->r, -alpha, v->Ap, v->r, times);
        normr = sqrt(hpcg_dot(level, v->r, v->r, times));
    }
    return normr / normr0;
}

/* The specification's flop count of `sets` sets of `iterations` iterations (global sizes summed). */
static double flop_count(const hpcg_problem *problem, int sets, int iterations, double *rows,
                         double *nonzeros)
{
    double local[2 * 8], global[2 * 8];
    for (int l = 0; l < problem->levels; l++) {
        local[2 * l] = problem->level[l].nrow;
        local[2 * l + 1] = (double)problem->level[l].nonzeros;
    }
    MPI_Allreduce(local, global, 2 * problem->levels, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double F = (double)sets * iterations, S = sets, n = global[0], nnz = global[1];
    double flops = 2 * (3 * F + S) * 2 * n + (F + S) * 2 * nnz;
    for (int l = 0; l < problem->levels - 1; l++)
        flops += F * (4 + 2 + 4) * global[2 * l + 1];
    flops += F * 4 * global[2 * (problem->levels - 1) + 1];
    *rows = n;
    *nonzeros = nnz;
    return flops;
}

static double max_error(const hpcg_level *level, const double *x)
{
    double local = 0.0, global = 0.0;
    for (int i = 0; i < level->nrow; i++)
        local = fmax(local, fabs(x[i] - 1.0));
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return global;
}

static void report(const struct options *opt, const hpcg_problem *problem, double seconds,
                   const hpcg_times *times, double residual, double error)
{
    double rows, nonzeros, flops = flop_count(problem, opt->sets, opt->iterations, &rows, &nonzeros);
    if (problem->rank != 0)
        return;
    tl_json json;
    tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
    tl_json_i64(&json, "ranks", problem->ranks);
    tl_json_int_array(&json, "process_grid", problem->grid, 3);
    tl_json_int_array(&json, "local", opt->n, 3);
    tl_json_i64(&json, "levels", opt->levels);
    tl_json_i64(&json, "sets", opt->sets);
    tl_json_i64(&json, "iterations", opt->iterations);
    tl_json_f64(&json, "rows", rows);
    tl_json_f64(&json, "nonzeros", nonzeros);
    tl_json_f64(&json, "flops", flops);
    tl_json_f64(&json, "time_s", seconds);
    tl_json_f64(&json, "gflops", flops / seconds / 1e9);
    tl_json_f64(&json, "dot_s", times->dot);
    tl_json_f64(&json, "waxpby_s", times->waxpby);
    tl_json_f64(&json, "spmv_s", times->spmv);
    tl_json_f64(&json, "mg_s", times->mg);
    tl_json_f64(&json, "residual", residual);
    tl_json_f64(&json, "solution_error", error);
    tl_json_end_verified(&json, APP_NAME, opt->verify, opt->verify && !(residual < VERIFY_RESIDUAL),
                         "residual reductions");
}

static int run(struct options *opt, int rank, int nranks)
{
    hpcg_problem problem;
    hpcg_problem_build(&problem, opt->n, opt->levels, rank, nranks);
    const hpcg_level *fine = &problem.level[0];
    cg_vectors v = {hpcg_vector(fine), hpcg_vector(fine), hpcg_vector(fine),
                    hpcg_vector(fine), hpcg_vector(fine), hpcg_vector(fine)};
    hpcg_right_hand_side(fine, v.b);
    hpcg_times times = {0};
    double residual = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int s = 0; s < opt->sets; s++)
        residual = cg_set(fine, &v, opt->iterations, &times);
    double mine = MPI_Wtime() - start, seconds = 0.0;
    MPI_Allreduce(&mine, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double error = max_error(fine, v.x);
    report(opt, &problem, seconds, &times, residual, error);
    double *vectors[] = {v.b, v.x, v.r, v.z, v.p, v.Ap};
    for (size_t i = 0; i < TL_COUNT(vectors); i++)
        free(vectors[i]);
    hpcg_problem_free(&problem);
    return tl_exit_status(opt->verify, !(residual < VERIFY_RESIDUAL));
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
