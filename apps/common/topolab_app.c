/*
 * topolab_app.c - shared skeleton of the topolab MPI apps: argument parsing,
 * argument-error reporting, timing statistics and JSON-line output.
 * See topolab_app.h for the conventions. Plain MPI + C11, no SimGrid calls.
 */
#include "topolab_app.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <mpi.h>

const char *tl_status_text(tl_status status)
{
    switch (status) {
    case TL_OK:
        return "ok";
    case TL_ERR_SYNTAX:
        return "invalid syntax";
    case TL_ERR_RANGE:
        return "value out of range";
    case TL_ERR_TOO_MANY:
        return "too many values";
    }
    return "unknown status";
}

/* Parses the decimal digits text[0..len-1] (at least one) into *out. */
static tl_status parse_digits(const char *text, size_t len, int64_t *out)
{
    int64_t value = 0;
    if (len == 0)
        return TL_ERR_SYNTAX;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return TL_ERR_SYNTAX;
        int digit = text[i] - '0';
        if (value > (INT64_MAX - digit) / 10)
            return TL_ERR_RANGE;
        value = value * 10 + digit;
    }
    *out = value;
    return TL_OK;
}

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* tl_parse_size on the first len characters of text. */
static tl_status parse_size_n(const char *text, size_t len, int64_t max, int64_t *out)
{
    size_t ndigits = 0;
    while (ndigits < len && text[ndigits] >= '0' && text[ndigits] <= '9')
        ndigits++;

    int shift = 0;
    const char *suffix = text + ndigits;
    size_t suffix_len = len - ndigits;
    if (suffix_len > 0) {
        switch (ascii_lower(suffix[0])) {
        case 'k':
            shift = 10;
            break;
        case 'm':
            shift = 20;
            break;
        case 'g':
            shift = 30;
            break;
        default:
            return TL_ERR_SYNTAX;
        }
        if (suffix_len != 1 &&
            !(suffix_len == 3 && ascii_lower(suffix[1]) == 'i' && ascii_lower(suffix[2]) == 'b'))
            return TL_ERR_SYNTAX;
    }

    int64_t value;
    tl_status status = parse_digits(text, ndigits, &value);
    if (status != TL_OK)
        return status;
    if (value > (INT64_MAX >> shift))
        return TL_ERR_RANGE;
    value <<= shift;
    if (value > max)
        return TL_ERR_RANGE;
    *out = value;
    return TL_OK;
}

tl_status tl_parse_size(const char *text, int64_t max, int64_t *out)
{
    return parse_size_n(text, strlen(text), max, out);
}

tl_status tl_parse_size_list(const char *text, int64_t max, int64_t *out, size_t capacity,
                             size_t *count)
{
    size_t n = 0;
    const char *item = text;
    for (;;) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        if (n == capacity)
            return TL_ERR_TOO_MANY;
        tl_status status = parse_size_n(item, len, max, &out[n]);
        if (status != TL_OK)
            return status;
        n++;
        if (!comma)
            break;
        item = comma + 1;
    }
    *count = n;
    return TL_OK;
}

tl_status tl_parse_int(const char *text, int min, int *out)
{
    int64_t value;
    tl_status status = parse_digits(text, strlen(text), &value);
    if (status != TL_OK)
        return status;
    if (value < min || value > INT_MAX)
        return TL_ERR_RANGE;
    *out = (int)value;
    return TL_OK;
}

const char *tl_option_value(int argc, char **argv, int *index)
{
    const char *arg = argv[*index];
    if (arg[2] != '\0')
        return arg + 2;
    if (*index + 1 >= argc)
        return NULL;
    *index += 1;
    return argv[*index];
}

int tl_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

static int is_rank_zero(void)
{
    int initialized = 0;
    int rank = 0;
    MPI_Initialized(&initialized);
    if (initialized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank == 0;
}

void tl_arg_error(const char *app, const char *format, ...)
{
    if (!is_rank_zero())
        return;
    /* Build the whole line first so that it reaches stderr in one write. */
    char line[1024];
    int used = snprintf(line, sizeof line, "%s: error: ", app);
    if (used < 0 || (size_t)used >= sizeof line)
        used = 0;
    va_list args;
    va_start(args, format);
    vsnprintf(line + used, sizeof line - (size_t)used, format, args);
    va_end(args);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void tl_print_usage(const char *usage)
{
    if (!is_rank_zero())
        return;
    fputs(usage, stdout);
    fflush(stdout);
}

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
        switch (*p) {
        case '"':
            fputs("\\\"", json->out);
            break;
        case '\\':
            fputs("\\\\", json->out);
            break;
        case '\n':
            fputs("\\n", json->out);
            break;
        case '\t':
            fputs("\\t", json->out);
            break;
        default:
            if (*p < 0x20)
                fprintf(json->out, "\\u%04x", (unsigned)*p);
            else
                fputc(*p, json->out);
        }
    }
    fputc('"', json->out);
}

void tl_json_i64(tl_json *json, const char *key, int64_t value)
{
    json_key(json, key);
    fprintf(json->out, "%lld", (long long)value);
}

void tl_json_f64(tl_json *json, const char *key, double value)
{
    json_key(json, key);
    if (isfinite(value))
        fprintf(json->out, "%.17g", value);
    else
        fputs("null", json->out);
}

void tl_json_end(tl_json *json)
{
    fputs("}\n", json->out);
    fflush(json->out);
}
