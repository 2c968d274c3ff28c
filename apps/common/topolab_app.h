/*
 * topolab_app.h - shared skeleton of the topolab MPI apps.
 *
 * Plain MPI + C11 so that the apps build with both the system mpicc and
 * SimGrid's smpicc. smpicc force-includes smpi_helpers.h, which turns
 * malloc/free/exit/getopt/... into macros: nothing here uses those names for
 * its own identifiers, and nothing here calls exit() (apps return from main).
 *
 * Conventions shared by every app:
 *   - stdout carries nothing but JSON lines (one object per line, rank 0);
 *   - an argument error prints one line "<app>: error: <message>" on stderr
 *     (rank 0 only), then main() calls MPI_Finalize() and returns
 *     TL_EXIT_USAGE;
 *   - -h/--help prints the usage text on stdout (rank 0) and exits with
 *     TL_EXIT_HELP (0); that is the only non-JSON output on stdout;
 *   - options are declared once, in a table (tl_option, tl_parse_args).
 */
#ifndef TOPOLAB_APP_H
#define TOPOLAB_APP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Argument parsing result: go on running, or return this code from main(). */
#define TL_ARGS_OK (-1)
#define TL_EXIT_HELP 0
#define TL_EXIT_USAGE 2
/* A run whose --verify found wrong data: the exit status of main(). */
#define TL_EXIT_VERIFY_FAILED 1

/* Turns a numeric macro into a string literal (for defaults in usage texts). */
#define TL_STRINGIFY_(x) #x
#define TL_STRINGIFY(x) TL_STRINGIFY_(x)

/* Maximum number of entries in a comma-separated size list. */
#define TL_MAX_SIZES 64

typedef enum {
    TL_OK = 0,
    TL_ERR_SYNTAX,   /* not a number / unknown suffix / empty list entry */
    TL_ERR_RANGE,    /* value below the minimum or above the maximum */
    TL_ERR_TOO_MANY, /* more than the allowed number of list entries */
    TL_ERR_CHOICE    /* not one of the accepted names */
} tl_status;

/* Human-readable text for a status ("invalid syntax", ...). */
const char *tl_status_text(tl_status status);

/*
 * Parses a byte count: decimal digits followed by an optional binary suffix
 * K, M or G (case-insensitive, optionally followed by "iB"):
 * "256M" = "256MiB" = 268435456. The result must be <= max.
 */
tl_status tl_parse_size(const char *text, int64_t max, int64_t *out);

/*
 * Parses a comma-separated list of sizes (see tl_parse_size), e.g.
 * "1,1K,64K,1M", into out[0..*count-1]; at most `capacity` entries.
 */
tl_status tl_parse_size_list(const char *text, int64_t max, int64_t *out, size_t capacity,
                             size_t *count);

/* Parses a decimal int in [min, max] (min = 1 for "positive"). */
tl_status tl_parse_int(const char *text, int min, int max, int *out);

/*
 * Table-driven command line. An app describes its options in an array of
 * tl_option (built with the tl_opt_* constructors below, which check the type
 * of each target at compile time) and stores the defaults in the targets; the
 * harness's main calls tl_parse_args() once (TL_APP). Accepted spellings, for
 * an option with the short name 's' and the long name "sizes":
 *   -s 1K   -s1K   --sizes 1K   --sizes=1K.
 * A flag takes no value (-v, --verify; "--verify=x" is an error). The last
 * occurrence of a repeated option wins, except for an integer list, whose
 * occurrences add up (-L 1 -L 2,4 = -L 1,2,4; the first one replaces the
 * default). -h and --help print the usage text (generated from the table and
 * the description; defaults are read from the targets, and an int target below
 * its minimum, for an option the app requires, is shown without a default) on
 * stdout. Note: under smpirun, SimGrid itself consumes --help (it prints its
 * own configuration help), so use -h there.
 */
typedef enum {
    TL_OPT_INT,       /* int in [min, max] */
    TL_OPT_REAL,      /* finite double >= min (strtod syntax, e.g. 1e-9) */
    TL_OPT_SIZE,      /* byte count (see tl_parse_size), <= max */
    TL_OPT_SIZE_LIST, /* comma-separated byte counts, each <= max */
    TL_OPT_INT_LIST,  /* comma-separated ints in [min, max]; repeated occurrences append */
    TL_OPT_CHOICE,    /* one name of a NULL-terminated list; target = its index (< 0: no default) */
    TL_OPT_FLAG,      /* no value; target set to 1 */
    TL_OPT_STRING     /* any text; target points into argv */
} tl_opt_kind;

/* Target of a TL_OPT_SIZE_LIST option. */
typedef struct {
    int64_t values[TL_MAX_SIZES];
    size_t count;
} tl_size_list;

/* Target of a TL_OPT_INT_LIST option: the defaults with given = 0; the parser sets given = 1 at
 * the option's first occurrence (which replaces the defaults; later ones append). */
typedef struct {
    int values[TL_MAX_SIZES];
    size_t count;
    int given;
} tl_int_list;

typedef struct {
    char short_name;       /* '\0': long form only */
    const char *long_name; /* NULL: short form only */
    tl_opt_kind kind;
    const char *metavar;   /* value placeholder in the usage text ("SIZES") */
    const char *help;      /* one sentence, no default/range (generated) */
    int64_t min;           /* INT, INT_LIST */
    int64_t max;           /* INT, INT_LIST, SIZE, SIZE_LIST */
    double real_min;       /* REAL */
    const char *const *choices; /* CHOICE: NULL-terminated names */
    union {
        int *integer;      /* INT, CHOICE, FLAG */
        double *real;      /* REAL */
        int64_t *size;     /* SIZE */
        tl_size_list *list; /* SIZE_LIST */
        tl_int_list *ints; /* INT_LIST */
        const char **text; /* STRING */
    } target;
} tl_option;

static inline tl_option tl_opt_int(char short_name, const char *long_name, const char *metavar,
                                   int *target, int min, int max, const char *help)
{
    return (tl_option){.short_name = short_name, .long_name = long_name, .kind = TL_OPT_INT,
                       .metavar = metavar, .help = help, .min = min, .max = max,
                       .target.integer = target};
}

static inline tl_option tl_opt_real(char short_name, const char *long_name, const char *metavar,
                                    double *target, double min, const char *help)
{
    return (tl_option){.short_name = short_name, .long_name = long_name, .kind = TL_OPT_REAL,
                       .metavar = metavar, .help = help, .real_min = min, .target.real = target};
}

static inline tl_option tl_opt_size(char short_name, const char *long_name, const char *metavar,
                                    int64_t *target, int64_t max, const char *help)
{
    return (tl_option){.short_name = short_name, .long_name = long_name, .kind = TL_OPT_SIZE,
                       .metavar = metavar, .help = help, .max = max, .target.size = target};
}

static inline tl_option tl_opt_size_list(char short_name, const char *long_name,
                                         const char *metavar, tl_size_list *target, int64_t max,
                                         const char *help)
{
    return (tl_option){.short_name = short_name, .long_name = long_name,
                       .kind = TL_OPT_SIZE_LIST, .metavar = metavar, .help = help, .max = max,
                       .target.list = target};
}

static inline tl_option tl_opt_int_list(char short_name, const char *long_name,
                                        const char *metavar, tl_int_list *target, int min,
                                        int max, const char *help)
{
    return (tl_option){.short_name = short_name, .long_name = long_name,
                       .kind = TL_OPT_INT_LIST, .metavar = metavar, .help = help, .min = min,
                       .max = max, .target.ints = target};
}

static inline tl_option tl_opt_choice(char short_name, const char *long_name, const char *metavar,
                                      int *target, const char *const *choices, const char *help)
{
    return (tl_option){.short_name = short_name, .long_name = long_name, .kind = TL_OPT_CHOICE,
                       .metavar = metavar, .help = help, .choices = choices,
                       .target.integer = target};
}

static inline tl_option tl_opt_flag(char short_name, const char *long_name, int *target,
                                    const char *help)
{
    return (tl_option){.short_name = short_name, .long_name = long_name, .kind = TL_OPT_FLAG,
                       .help = help, .target.integer = target};
}

static inline tl_option tl_opt_string(char short_name, const char *long_name, const char *metavar,
                                      const char **target, const char *help)
{
    return (tl_option){.short_name = short_name, .long_name = long_name, .kind = TL_OPT_STRING,
                       .metavar = metavar, .help = help, .target.text = target};
}

/*
 * The options the apps spell the same way: -a/--algorithm (one name of `names`), -w/--warmup
 * (untimed repetitions before the timed ones), -i/--iterations (timed repetitions), --verify
 * (check the data moved; exit status 1 if wrong) and --print-schedule (print the messages of every
 * step, then exit: see tl_schedule_*).
 */
static inline tl_option tl_opt_algorithm(int *target, const char *const *names, const char *help)
{
    return tl_opt_choice('a', "algorithm", "ALGORITHM", target, names, help);
}

static inline tl_option tl_opt_warmup(int *target, const char *help)
{
    return tl_opt_int('w', "warmup", "WARMUP", target, 0, INT_MAX, help);
}

static inline tl_option tl_opt_iterations(int *target, const char *help)
{
    return tl_opt_int('i', "iterations", "ITERATIONS", target, 1, INT_MAX, help);
}

static inline tl_option tl_opt_verify(int *target, const char *help)
{
    return tl_opt_flag('\0', "verify", target, help);
}

/* --interval SECONDS: rounds at a rate (tl_pace), for background traffic. */
static inline tl_option tl_opt_interval(double *target)
{
    return tl_opt_real('\0', "interval", "SECONDS", target, 0.0,
                       "start a round this long after the one before, idle in between (0: at once)");
}

static inline tl_option tl_opt_print_schedule(int *target)
{
    return tl_opt_flag('\0', "print-schedule", target,
                       "print the messages of every step as JSON lines {\"app\",\"step\","
                       "\"messages\":[[from,to(,part)],..]} (the static analyses' schedule) and exit "
                       "without communicating");
}

/* The one option of the legal-MPI checks, -n/--counts COUNTS: the element counts to try, each
 * <= max (`help` says what is counted). */
static inline tl_option tl_opt_counts(tl_size_list *target, int64_t max, const char *help)
{
    return tl_opt_size_list('n', "counts", "COUNTS", target, max, help);
}

/*
 * The local work of an app whose data a communication-only simulation of large sizes need not
 * touch (alltoall's own-block copy, transpose's fill and local transpose): a choice of
 * tl_local_work_names, TL_LOCAL_REAL (do it) or TL_LOCAL_SKIP (never touch the data, so not with
 * --verify: tl_check_local_work), spelled --<long_name> MODE.
 */
enum { TL_LOCAL_REAL, TL_LOCAL_SKIP };
extern const char *const tl_local_work_names[];

static inline tl_option tl_opt_local_work(const char *long_name, int *target, const char *help)
{
    return tl_opt_choice('\0', long_name, "MODE", target, tl_local_work_names, help);
}

/*
 * An app is its name, its description, its options, their checks and its run; the harness's main
 * (topolab_main.c, as IMB's) starts MPI, has the app declare its options, parses the command line
 * against them (tl_parse_args), has the app check the values it got, runs the app and stops MPI,
 * returning the run's exit status (a bad option, or values the checks refuse: one message and
 * TL_EXIT_USAGE, before anything runs). An app declares itself with
 *   TL_APP(struct options, APP_NAME, description, declare_options, check_options, run);
 *   static size_t declare_options(struct options *opt, tl_option *table);
 *       the defaults into *opt, the option table into table[0..TL_MAX_OPTIONS-1] (tl_copy_options);
 *       returns the number of options
 *   static int check_options(struct options *opt, int nranks);
 *       the checks of the values against each other and the ranks (tl_arg_error); TL_ARGS_OK or
 *       TL_EXIT_USAGE; tl_no_checks for an app that has none
 *   static int run(struct options *opt, int rank, int nranks);  the exit status
 */
#define TL_MAX_OPTIONS 16

typedef struct {
    const char *name;
    const char *description;
    size_t options_size;
    size_t (*declare)(void *options, tl_option *table);
    int (*check)(void *options, int nranks);
    int (*run)(void *options, int rank, int nranks);
} tl_app;

extern const tl_app tl_the_app;

#define TL_APP(options_type, name, description, declare_fn, check_fn, run_fn)                  \
    static size_t tl_app_declare(void *options, tl_option *table)                              \
    {                                                                                          \
        return declare_fn((options_type *)options, table);                                     \
    }                                                                                          \
    static int tl_app_check(void *options, int nranks)                                         \
    {                                                                                          \
        return check_fn((options_type *)options, nranks);                                      \
    }                                                                                          \
    static int tl_app_run(void *options, int rank, int nranks)                                 \
    {                                                                                          \
        return run_fn((options_type *)options, rank, nranks);                                  \
    }                                                                                          \
    const tl_app tl_the_app = {name, description, sizeof(options_type), tl_app_declare,        \
                               tl_app_check, tl_app_run}

/* What an app's declare_options returns: copies options[0..count-1] into table (room for
 * TL_MAX_OPTIONS; more is a bug of the app: a message and MPI_Abort) and returns count. */
size_t tl_copy_options(tl_option *table, const tl_option *options, size_t count);

/* The check_options of an app whose options need no checks: TL_ARGS_OK. */
int tl_no_checks(void *options, int nranks);

/* MPI_Init and this rank's place in MPI_COMM_WORLD; MPI_Finalize, then the exit status `code`
 * (the harness's main calls them). */
void tl_start(int *argc, char ***argv, int *rank, int *nranks);
int tl_stop(int code);

/* Number of elements of an array (not a pointer). */
#define TL_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/*
 * Parses argv[1..argc-1] against options[0..count-1], storing values in the
 * targets. Returns TL_ARGS_OK, TL_EXIT_HELP after printing the usage text
 * (rank 0), or TL_EXIT_USAGE after printing one "<app>: error: ..." line
 * (rank 0): unknown option, unexpected argument, missing value, value given
 * to a flag, invalid value. `description` is one paragraph (wrapped).
 */
int tl_parse_args(const char *app, const char *description, const tl_option *options,
                  size_t count, int argc, char **argv);

/* Parses a finite decimal number >= min (e.g. "0", "2.5e-9"). */
tl_status tl_parse_real(const char *text, double min, double *out);

/*
 * Rank 0 prints "<app>: error: <printf-formatted message>" on stderr, for
 * the checks an app makes after tl_parse_args (its check_options: rank counts,
 * combinations).
 */
void tl_arg_error(const char *app, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/*
 * malloc(n) (at least 1 byte); on failure prints "<app>: error: cannot allocate N bytes" and calls
 * MPI_Abort, so callers never see NULL.
 */
void *tl_alloc_or_abort(const char *app, size_t n);

/*
 * Checks that several apps' check_options make, each TL_ARGS_OK or TL_EXIT_USAGE after one
 * tl_arg_error line:
 *   tl_check_ranks: at least `min` MPI ranks ("needs at least MIN MPI ranks (got N)");
 *   tl_check_sizes: every size of -s/--sizes is >= 1 byte ("`what` needs at least 1 byte");
 *   tl_check_local_work: not --verify with --<long_name> skip (see tl_opt_local_work).
 */
int tl_check_ranks(const char *app, int nranks, int min);
int tl_check_sizes(const char *app, const tl_size_list *sizes, const char *what);
int tl_check_local_work(const char *app, const char *long_name, int local, int verify);

/* Running min/avg/max of a series of timings. */
typedef struct {
    double min;
    double max;
    double sum;
    int64_t count;
} tl_stats;

void tl_stats_init(tl_stats *stats);
void tl_stats_add(tl_stats *stats, double value);
double tl_stats_avg(const tl_stats *stats);

typedef enum { TL_REDUCE_MIN, TL_REDUCE_MAX, TL_REDUCE_SUM } tl_reduce_op;

/*
 * Reduces `count` doubles (minimum, maximum or sum) over MPI_COMM_WORLD into `out` on rank 0;
 * a plain copy on a one-rank communicator, where SimGrid 3.32's ompi reduce aborts ("Actor pid=-1
 * is gone"). Collective: every rank calls it.
 */
void tl_reduce_to_root(const double *in, double *out, int count, tl_reduce_op op);

/* ceil(log2(n)) for n >= 1: the steps of a recursive-doubling (Bruck) or binary-tree schedule. */
int tl_ceil_log2(int n);

/* a*b for a, b >= 0, saturated at INT64_MAX (a product of user-given lengths, say). */
int64_t tl_mul_saturated(int64_t a, int64_t b);

/* spread = minimum, mean and maximum over the ranks of each rank's `value`, on rank 0 (the other
 * ranks get 0 for the minimum and the maximum). Collective. */
void tl_spread_to_root(double value, double spread[3]);

/*
 * The timing loop, owned by the harness (as IMB's): an app gives a kernel, pure of timing.
 * tl_time_kernel runs WARMUP untimed then ITERATIONS timed iterations; each iteration is
 *   prepare(state)            untimed (a --verify fill), may be NULL
 *   MPI_Barrier(MPI_COMM_WORLD)
 *   start = MPI_Wtime(); run(state); elapsed = MPI_Wtime() - start
 *   check(state)              untimed: wrong values (--verify), may be NULL
 * and returns this rank's mean, shortest and longest elapsed time over the timed iterations (NaN,
 * inf, -inf if none) and the wrong values check() counted over all iterations. Collective: every
 * rank calls it.
 */
typedef struct {
    void *state;
    void (*prepare)(void *state);
    void (*run)(void *state);
    long long (*check)(void *state);
} tl_kernel;

typedef struct {
    double mean, min, max;
    long long errors;
} tl_timing;

tl_timing tl_time_kernel(const tl_kernel *kernel, int warmup, int iterations);

/*
 * The sum over the ranks of each rank's `errors` when `verify` is set (collective: every rank calls
 * it); 0 without verification, and then nothing is sent: a timing run communicates nothing after its
 * timed part but the reduction of its times, whose traffic may still meet other ranks' last messages.
 */
long long tl_sum_errors(int verify, long long errors);

/* What rank 0 reports of a timed kernel: the spread of the ranks' mean times (tl_spread_to_root)
 * and the wrong values over all ranks (tl_sum_errors). Collective. */
typedef struct {
    double spread[3];
    long long errors;
} tl_summary;

tl_summary tl_summarize(tl_timing timing, int verify);

/* Background traffic at a rate (--interval): idle until `interval` seconds after `started` (an
 * MPI_Wtime), or return at once when that time has passed or `interval` <= 0. The pause is a
 * nanosleep, which SMPI simulates (and its TI traces record as a sleep); under a real MPI it sleeps. */
void tl_pace(double started, double interval);

/* The exit status of a run: TL_EXIT_VERIFY_FAILED when --verify (`verify`) found wrong values
 * (`errors`, over all ranks: tl_sum_errors), else 0. */
int tl_exit_status(int verify, long long errors);

/*
 * JSON-line writer: tl_json_begin, then any number of fields, then
 * tl_json_end, which closes the object, writes a newline and flushes.
 * Keys are written verbatim (they are literals in the apps); string values
 * are escaped. Doubles use %.17g so they round-trip exactly; non-finite
 * values are written as null.
 */
typedef struct {
    FILE *out;
    int fields;
} tl_json;

void tl_json_begin(tl_json *json, FILE *out);
void tl_json_str(tl_json *json, const char *key, const char *value);
void tl_json_i64(tl_json *json, const char *key, int64_t value);
void tl_json_f64(tl_json *json, const char *key, double value);
void tl_json_bool(tl_json *json, const char *key, int value);
void tl_json_null(tl_json *json, const char *key);

/*
 * Ends a summary line with "verified": true/false (null without --verify) and, when the check
 * failed, prints "<app>: error: verification failed: <errors> wrong <unit>" on stderr.
 */
void tl_json_end_verified(tl_json *json, const char *app, int verify, long long errors,
                          const char *unit);
/* Arrays of numbers, "key":[v0,v1,...] (doubles formatted as by tl_json_f64). */
void tl_json_int_array(tl_json *json, const char *key, const int *values, size_t count);
void tl_json_f64_array(tl_json *json, const char *key, const double *values, size_t count);
void tl_json_end(tl_json *json);
/* "iterations":I,"warmup":W: the timed and the untimed repetitions (-i and -w), in this order. */
void tl_json_repetitions(tl_json *json, int iterations, int warmup);
/* The fields <name>_min, <name>_avg and <name>_max of a spread (min, avg, max). */
void tl_json_spread(tl_json *json, const char *name, const double spread[3]);
/* The same fields of a series of timings (its min, tl_stats_avg and max). */
void tl_json_stats(tl_json *json, const char *name, const tl_stats *stats);
/* The fields time_s_min, time_s_avg and time_s_max of a spread over the ranks (min, avg, max). */
void tl_json_times(tl_json *json, const double spread[3]);

/*
 * --print-schedule output, written by rank 0 alone: one JSON line per step,
 *   {"app":APP,"step":S,"messages":[[from,to],..]}   or  [[from,to,part],..]
 * where `part` says what a message carries when messages differ (a block index, a block count).
 * The app lists every rank's messages of a step with the same functions its kernels use, so the
 * printout is the schedule that runs; generators/schedules.py holds the same schedules in Python.
 */
typedef struct {
    tl_json json;
    int messages;
} tl_schedule_step;

void tl_schedule_begin(tl_schedule_step *step, const char *app, int index);
void tl_schedule_send(tl_schedule_step *step, int from, int to);
void tl_schedule_send_part(tl_schedule_step *step, int from, int to, int part);
void tl_schedule_end(tl_schedule_step *step);

/* {"app":APP,"version":VERSION: the first fields of every result line. */
void tl_json_header(tl_json *json, const char *app, int version);

/* The largest value of a size list, at least 1 (a buffer for every size of the list, never 0 bytes). */
int64_t tl_size_list_max(const tl_size_list *list);
/* The same for an integer list: its largest value, at least 1. */
int tl_int_list_max(const tl_int_list *list);

/*
 * The legal-MPI checks' report: sums `mine` (this rank's errors) over MPI_COMM_WORLD and has
 * rank 0 print {"app":..,"version":..,"ranks":P,"<key>":"<name>",["count":N,]"errors":E}
 * (no "count" when count < 0). The sum is an MPI_INT reduction: every reduce algorithm SMPI
 * can select takes it (rab refuses MPI_LONG_LONG); E is capped at INT_MAX.
 */
void tl_report_errors(const char *app, int version, const char *key, const char *name, int64_t count,
                      long long mine);

#endif /* TOPOLAB_APP_H */
