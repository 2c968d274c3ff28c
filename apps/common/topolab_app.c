/*
 * topolab_app.c - shared skeleton of the topolab MPI apps at run time: start
 * and stop, timing statistics, JSON-line output, reductions to rank 0 and
 * the printed schedules (command lines: topolab_args.c, topolab_usage.c).
 * See topolab_app.h for the conventions. Plain MPI + C11, no SimGrid calls.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "topolab_app.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

void tl_stats_init(tl_stats *stats)
{
    stats->min = INFINITY;
    stats->max = -INFINITY;
    stats->sum = 0.0;
    stats->count = 0;
}

void tl_stats_add(tl_stats *stats, double value)
{
    if (value < stats->min)
        stats->min = value;
    if (value > stats->max)
        stats->max = value;
    stats->sum += value;
    stats->count++;
}

double tl_stats_avg(const tl_stats *stats)
{
    return stats->count > 0 ? stats->sum / (double)stats->count : NAN;
}

/* Writes the separator and the quoted key of the next field. */
static void json_key(tl_json *json, const char *key)
{
    fprintf(json->out, "%s\"%s\":", json->fields > 0 ? "," : "", key);
    json->fields++;
}

void tl_json_begin(tl_json *json, FILE *out)
{
    json->out = out;
    json->fields = 0;
    fputc('{', out);
}

void tl_json_str(tl_json *json, const char *key, const char *value)
{
    json_key(json, key);
    fputc('"', json->out);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(json->out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", json->out);
        else if (*p == '\t')
            fputs("\\t", json->out);
        else if (*p < 0x20)
            fprintf(json->out, "\\u%04x", (unsigned)*p);
        else
            fputc(*p, json->out);
    }
    fputc('"', json->out);
}

void tl_json_i64(tl_json *json, const char *key, int64_t value)
{
    json_key(json, key);
    fprintf(json->out, "%lld", (long long)value);
}

static void json_f64_value(tl_json *json, double value)
{
    if (isfinite(value))
        fprintf(json->out, "%.17g", value);
    else
        fputs("null", json->out);
}

void tl_json_f64(tl_json *json, const char *key, double value)
{
    json_key(json, key);
    json_f64_value(json, value);
}

void tl_json_bool(tl_json *json, const char *key, int value)
{
    json_key(json, key);
    fputs(value ? "true" : "false", json->out);
}

void tl_json_null(tl_json *json, const char *key)
{
    json_key(json, key);
    fputs("null", json->out);
}

void tl_json_int_array(tl_json *json, const char *key, const int *values, size_t count)
{
    json_key(json, key);
    fputc('[', json->out);
    for (size_t k = 0; k < count; k++)
        fprintf(json->out, "%s%d", k > 0 ? "," : "", values[k]);
    fputc(']', json->out);
}

void tl_json_f64_array(tl_json *json, const char *key, const double *values, size_t count)
{
    json_key(json, key);
    fputc('[', json->out);
    for (size_t k = 0; k < count; k++) {
        if (k > 0)
            fputc(',', json->out);
        json_f64_value(json, values[k]);
    }
    fputc(']', json->out);
}

void tl_json_repetitions(tl_json *json, int iterations, int warmup)
{
    tl_json_i64(json, "iterations", iterations);
    tl_json_i64(json, "warmup", warmup);
}

void tl_json_spread(tl_json *json, const char *name, const double spread[3])
{
    static const char *const suffixes[3] = {"min", "avg", "max"};
    for (int k = 0; k < 3; k++) {
        char key[128];
        snprintf(key, sizeof key, "%s_%s", name, suffixes[k]);
        tl_json_f64(json, key, spread[k]);
    }
}

void tl_json_stats(tl_json *json, const char *name, const tl_stats *stats)
{
    tl_json_spread(json, name, (double[3]){stats->min, tl_stats_avg(stats), stats->max});
}

void tl_json_times(tl_json *json, const double spread[3])
{
    tl_json_spread(json, "time_s", spread);
}

void tl_json_end(tl_json *json)
{
    fputs("}\n", json->out);
    fflush(json->out);
}

void tl_start(int *argc, char ***argv, int *rank, int *nranks)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
}

int tl_stop(int code)
{
    MPI_Finalize();
    return code;
}

void tl_json_header(tl_json *json, const char *app, int version)
{
    tl_json_begin(json, stdout);
    tl_json_str(json, "app", app);
    tl_json_i64(json, "version", version);
}

int64_t tl_size_list_max(const tl_size_list *list)
{
    int64_t largest = 1;
    for (size_t k = 0; k < list->count; k++)
        largest = list->values[k] > largest ? list->values[k] : largest;
    return largest;
}

int tl_int_list_max(const tl_int_list *list)
{
    int largest = 1;
    for (size_t k = 0; k < list->count; k++)
        largest = list->values[k] > largest ? list->values[k] : largest;
    return largest;
}

void tl_report_errors(const char *app, int version, const char *key, const char *name, int64_t count,
                      long long mine)
{
    int rank, nranks, errors = 0;
    int capped = mine > INT_MAX ? INT_MAX : (int)mine;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Reduce(&capped, &errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    tl_json json;
    tl_json_header(&json, app, version);
    tl_json_i64(&json, "ranks", nranks);
    tl_json_str(&json, key, name);
    if (count >= 0)
        tl_json_i64(&json, "count", count);
    tl_json_i64(&json, "errors", errors);
    tl_json_end(&json);
}

void tl_schedule_begin(tl_schedule_step *step, const char *app, int index)
{
    tl_json_begin(&step->json, stdout);
    tl_json_str(&step->json, "app", app);
    tl_json_i64(&step->json, "step", index);
    json_key(&step->json, "messages");
    fputc('[', step->json.out);
    step->messages = 0;
}

void tl_schedule_send(tl_schedule_step *step, int from, int to)
{
    fprintf(step->json.out, "%s[%d,%d]", step->messages++ > 0 ? "," : "", from, to);
}

void tl_schedule_send_part(tl_schedule_step *step, int from, int to, int part)
{
    fprintf(step->json.out, "%s[%d,%d,%d]", step->messages++ > 0 ? "," : "", from, to, part);
}

void tl_schedule_end(tl_schedule_step *step)
{
    fputc(']', step->json.out);
    tl_json_end(&step->json);
}

void *tl_alloc_or_abort(const char *app, size_t n)
{
    void *p = malloc(n > 0 ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "%s: error: cannot allocate %zu bytes\n", app, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

void tl_reduce_to_root(const double *in, double *out, int count, tl_reduce_op op)
{
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks == 1) {
        memcpy(out, in, (size_t)count * sizeof *out);
        return;
    }
    MPI_Op mpi_op = op == TL_REDUCE_MIN ? MPI_MIN : op == TL_REDUCE_MAX ? MPI_MAX : MPI_SUM;
    MPI_Reduce(in, out, count, MPI_DOUBLE, mpi_op, 0, MPI_COMM_WORLD);
}

int64_t tl_mul_saturated(int64_t a, int64_t b)
{
    return (b != 0 && a > INT64_MAX / b) ? INT64_MAX : a * b;
}

int tl_ceil_log2(int n)
{
    int k = 0;
    while (((int64_t)1 << k) < n)
        k++;
    return k;
}

void tl_spread_to_root(double value, double spread[3])
{
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double sum = 0.0;
    spread[0] = spread[2] = 0.0; /* what the ranks other than 0 keep */
    tl_reduce_to_root(&value, &spread[0], 1, TL_REDUCE_MIN);
    tl_reduce_to_root(&value, &sum, 1, TL_REDUCE_SUM);
    tl_reduce_to_root(&value, &spread[2], 1, TL_REDUCE_MAX);
    spread[1] = sum / nranks;
}

tl_timing tl_time_kernel(const tl_kernel *kernel, int warmup, int iterations)
{
    tl_stats times;
    tl_stats_init(&times);
    long long errors = 0;
    for (int it = 0; it < warmup + iterations; it++) {
        if (kernel->prepare)
            kernel->prepare(kernel->state);
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        kernel->run(kernel->state);
        double elapsed = MPI_Wtime() - start;
        if (it >= warmup)
            tl_stats_add(&times, elapsed);
        if (kernel->check)
            errors += kernel->check(kernel->state);
    }
    return (tl_timing){tl_stats_avg(&times), times.min, times.max, errors};
}

long long tl_sum_errors(int verify, long long errors)
{
    long long total = 0;
    if (verify)
        MPI_Allreduce(&errors, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

tl_summary tl_summarize(tl_timing timing, int verify)
{
    tl_summary summary;
    tl_spread_to_root(timing.mean, summary.spread);
    summary.errors = tl_sum_errors(verify, timing.errors);
    return summary;
}

void tl_pace(double started, double interval)
{
    double left = started + interval - MPI_Wtime();
    if (interval <= 0 || left <= 0)
        return;
    time_t whole = (time_t)left;
    struct timespec pause = {whole, (long)((left - (double)whole) * 1e9)};
    nanosleep(&pause, NULL);
}

int tl_exit_status(int verify, long long errors)
{
    return verify && errors != 0 ? TL_EXIT_VERIFY_FAILED : 0;
}

void tl_json_end_verified(tl_json *json, const char *app, int verify, long long errors,
                          const char *unit)
{
    if (verify)
        tl_json_bool(json, "verified", errors == 0);
    else
        tl_json_null(json, "verified");
    tl_json_end(json);
    if (verify && errors != 0)
        fprintf(stderr, "%s: error: verification failed: %lld wrong %s\n", app, errors, unit);
}
