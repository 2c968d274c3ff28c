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
 *     TL_EXIT_HELP (0); that is the only non-JSON output on stdout.
 */
#ifndef TOPOLAB_APP_H
#define TOPOLAB_APP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Argument parsing result: go on running, or return this code from main(). */
#define TL_ARGS_OK (-1)
#define TL_EXIT_HELP 0
#define TL_EXIT_USAGE 2

/* Turns a numeric macro into a string literal (for defaults in usage texts). */
#define TL_STRINGIFY_(x) #x
#define TL_STRINGIFY(x) TL_STRINGIFY_(x)

/* Maximum number of entries in a comma-separated size list. */
#define TL_MAX_SIZES 64

typedef enum {
    TL_OK = 0,
    TL_ERR_SYNTAX,   /* not a number / unknown suffix / empty list entry */
    TL_ERR_RANGE,    /* value below the minimum or above the maximum */
    TL_ERR_TOO_MANY  /* more than the allowed number of list entries */
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

/* Parses a decimal int >= min (use min = 1 for "positive"). */
tl_status tl_parse_int(const char *text, int min, int *out);

/*
 * Option-value lookup for manual argument parsing: argv[*index] is an option
 * such as "-s"; its value is either attached ("-s1K") or the next argument
 * ("-s 1K", then *index is advanced). Returns NULL if the value is missing.
 */
const char *tl_option_value(int argc, char **argv, int *index);

/* True if arg is "-h" or "--help". */
int tl_is_help(const char *arg);

/* Rank 0 prints "<app>: error: <printf-formatted message>" on stderr. */
void tl_arg_error(const char *app, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Rank 0 prints the usage text on stdout (only done for -h/--help). */
void tl_print_usage(const char *usage);

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
void tl_json_end(tl_json *json);

#endif /* TOPOLAB_APP_H */
