/*
 * memcpy_bench.c - the memory-copy micro-benchmark of Sugiyama, Morie and
 * Nanri (Sect. IV-A): memcpy of M bytes from a memory region A to a region B,
 * repeated ITERATIONS times; the average time of one copy, with the latency
 * and rate of eq. (1) to be fitted from several sizes, is the memory part of
 * their Bruck model (and of the allgather app's --memcpy-latency/-rate).
 *
 * Cache. "Below the cache size the source and destination addresses change
 * between repetitions", or the repetitions would be served from the cache
 * and copy faster than the copies inside a collective. A and B are pools of
 * max(4*M, 2*CACHE, 64 MiB) bytes each; when M < CACHE the copy offset (the
 * same in A and B) advances by M after every repetition and wraps to 0 when
 * the next copy would not fit, so consecutive copies touch new memory; when
 * M >= CACHE every copy uses offset 0 (one copy overflows the cache anyway).
 * Both pools are written once before the timing (page faults stay out of
 * it). The copies go through a volatile function pointer to memcpy, which
 * the compiler can neither inline nor remove.
 *
 * Rank 0 measures with MPI_Wtime, the other ranks are idle (run it with one
 * rank). One JSON line per size:
 *   {"app":"memcpy_bench","version":1,"bytes":M,"iterations":N,
 *    "time_s":..,"rate_Bps":..}
 * time_s is the average time of one copy, rate_Bps = M / time_s.
 *
 * Meant for real hardware (scripts/build --real-mpi, mpiexec -n 1). Under
 * SMPI with topolab's standard options (smpi/simulate-computation:no, as the
 * study runner runs every app) computation is not simulated: the copies take
 * no simulated time, time_s is 0 and rate_Bps null. (With SMPI's own default,
 * simulated computation, it would report the simulating machine's copy time
 * rescaled to the simulated host's speed: no property of the simulated
 * machine either.)
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "topolab_app.h"

#define APP_NAME "memcpy_bench"
#define OUTPUT_VERSION 1
#define DEFAULT_ITERATIONS 100
#define DEFAULT_CACHE ((int64_t)32 << 20)
#define MIN_POOL ((int64_t)64 << 20)
#define MAX_BYTES ((int64_t)1 << 30)

static const char description[] =
    "Memory-copy benchmark (Sugiyama et al., Sect. IV-A): memcpy of M bytes from region A to "
    "region B, ITERATIONS times per size, on rank 0 (the other ranks are idle); when M is below "
    "CACHE the source and destination addresses move on by M after every copy (in pools of "
    "max(4*M, 2*CACHE, 64 MiB) bytes), so that the copies are not served from the cache. One "
    "JSON line per size on stdout with the average time of one copy. Meant for a real MPI "
    "(mpiexec -n 1): under SMPI with topolab's standard options computation is not simulated, "
    "every copy takes 0 simulated seconds (time_s 0, rate_Bps null).";

struct options {
    tl_size_list sizes;
    int iterations;
    int64_t cache;
};

/* The options, their defaults into *opt. */
static size_t declare_options(struct options *opt, tl_option *table)
{
    *opt = (struct options){
        .sizes = {.values = {1 << 10, 64 << 10, 1 << 20, 16 << 20}, .count = 4},
        .iterations = DEFAULT_ITERATIONS,
        .cache = DEFAULT_CACHE,
    };
    const tl_option options[] = {
        tl_opt_size_list('s', "sizes", "SIZES", &opt->sizes, MAX_BYTES, "bytes per copy"),
        tl_opt_iterations(&opt->iterations, "timed copies per size"),
        tl_opt_size('\0', "cache", "BYTES", &opt->cache, MAX_BYTES,
                    "cache size: below it consecutive copies use new addresses"),
    };
    return tl_copy_options(table, options, TL_COUNT(options));
}

/* A copy moves 1 byte at least. */
static int check_options(struct options *opt, int nranks)
{
    (void)nranks;
    return tl_check_sizes(APP_NAME, &opt->sizes, "a copy");
}

/* Bytes of each of the two pools for copies of m bytes. */
static int64_t pool_bytes(int64_t m, int64_t cache)
{
    int64_t pool = MIN_POOL;
    if (4 * m > pool)
        pool = 4 * m;
    if (2 * cache > pool)
        pool = 2 * cache;
    return pool;
}

/* Average seconds of one copy of m bytes from a to b (pools of `pool` bytes each). */
static double time_copies(unsigned char *b, const unsigned char *a, int64_t pool, int64_t m,
                          int iterations, int64_t cache)
{
    void *(*volatile copy)(void *, const void *, size_t) = memcpy;
    int moving = m < cache;
    int64_t offset = 0;
    double start = MPI_Wtime();
    for (int it = 0; it < iterations; it++) {
        copy(b + offset, a + offset, (size_t)m);
        if (moving) {
            offset += m;
            if (offset + m > pool)
                offset = 0;
        }
    }
    return (MPI_Wtime() - start) / iterations;
}

static int run(struct options *opt, int rank, int nranks)
{
    (void)nranks;
    if (rank == 0) {
        int64_t pool = 0;
        for (size_t k = 0; k < opt->sizes.count; k++) {
            int64_t need = pool_bytes(opt->sizes.values[k], opt->cache);
            if (need > pool)
                pool = need;
        }
        unsigned char *a = tl_alloc_or_abort(APP_NAME, (size_t)pool);
        unsigned char *b = tl_alloc_or_abort(APP_NAME, (size_t)pool);
        memset(a, 0x5A, (size_t)pool);
        memset(b, 0xA5, (size_t)pool);

        for (size_t k = 0; k < opt->sizes.count; k++) {
            int64_t m = opt->sizes.values[k];
            double seconds =
                time_copies(b, a, pool_bytes(m, opt->cache), m, opt->iterations, opt->cache);
            tl_json json;
            tl_json_header(&json, APP_NAME, OUTPUT_VERSION);
            tl_json_i64(&json, "bytes", m);
            tl_json_i64(&json, "iterations", opt->iterations);
            tl_json_f64(&json, "time_s", seconds);
            if (seconds > 0.0)
                tl_json_f64(&json, "rate_Bps", (double)m / seconds);
            else
                tl_json_null(&json, "rate_Bps");
            tl_json_end(&json);
        }
        free(b);
        free(a);
    }

    MPI_Barrier(MPI_COMM_WORLD); /* the other ranks wait for rank 0 */
    return 0;
}

TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
