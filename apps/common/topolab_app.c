/*
 * topolab_app.c - shared skeleton of the topolab MPI apps: the table-driven
 * option parser and its generated usage text, argument-error reporting,
 * timing statistics and JSON-line output.
 * See topolab_app.h for the conventions. Plain MPI + C11, no SimGrid calls.
 */
#include "topolab_app.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
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
    case TL_ERR_CHOICE:
        return "unknown name";
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

/* Parses "1,2,4" (ints in [min, max]) and appends the values to out[*count..]; on error *count
 * is unchanged. */
static tl_status parse_int_list_append(const char *text, int min, int max, int *out,
                                       size_t capacity, size_t *count)
{
    size_t n = *count;
    const char *item = text;
    for (;;) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        if (n == capacity)
            return TL_ERR_TOO_MANY;
        int64_t value;
        tl_status status = parse_digits(item, len, &value);
        if (status != TL_OK)
            return status;
        if (value < min || value > max)
            return TL_ERR_RANGE;
        out[n++] = (int)value;
        if (!comma)
            break;
        item = comma + 1;
    }
    *count = n;
    return TL_OK;
}

tl_status tl_parse_int(const char *text, int min, int max, int *out)
{
    int64_t value;
    tl_status status = parse_digits(text, strlen(text), &value);
    if (status != TL_OK)
        return status;
    if (value < min || value > max)
        return TL_ERR_RANGE;
    *out = (int)value;
    return TL_OK;
}

tl_status tl_parse_real(const char *text, double min, double *out)
{
    /* strtod would skip leading blanks and accept "inf"/"nan": refuse both. */
    if (text[0] == '\0' || isspace((unsigned char)text[0]))
        return TL_ERR_SYNTAX;
    char *end = NULL;
    double value = strtod(text, &end);
    if (end == text || *end != '\0')
        return TL_ERR_SYNTAX;
    if (!isfinite(value))
        return TL_ERR_SYNTAX;
    if (value < min)
        return TL_ERR_RANGE;
    *out = value;
    return TL_OK;
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

/* ---------------------------------------------------------------------------
 * Table-driven option parsing and the generated usage text.
 */

#define USAGE_WIDTH 79 /* usage lines are wrapped before this column */
#define HELP_COLUMN 26 /* option help texts start in this column */

/* "1M" for 1048576: the largest binary suffix that divides the value. */
static void format_size(char *buf, size_t len, int64_t value)
{
    static const char suffixes[] = "GMK";
    for (int k = 0; k < 3; k++) {
        int shift = 30 - 10 * k;
        if (value > 0 && value % ((int64_t)1 << shift) == 0) {
            snprintf(buf, len, "%lld%c", (long long)(value >> shift), suffixes[k]);
            return;
        }
    }
    snprintf(buf, len, "%lld", (long long)value);
}

/* Appends printf-formatted text to buf[0..len-1] (always NUL-terminated). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void append(char *buf, size_t len, const char *format, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(buf + used, len - used, format, args);
    va_end(args);
}

/* What a valid value of `opt` looks like ("an integer >= 1", ...). */
static void describe_values(const tl_option *opt, char *buf, size_t len)
{
    buf[0] = '\0';
    switch (opt->kind) {
    case TL_OPT_INT:
        if (opt->max >= INT_MAX)
            append(buf, len, "an integer >= %lld", (long long)opt->min);
        else
            append(buf, len, "an integer in %lld..%lld", (long long)opt->min,
                   (long long)opt->max);
        break;
    case TL_OPT_REAL:
        append(buf, len, "a number >= %g", opt->real_min);
        break;
    case TL_OPT_INT_LIST:
        if (opt->max >= INT_MAX)
            append(buf, len, "up to %d comma-separated integers >= %lld", TL_MAX_SIZES,
                   (long long)opt->min);
        else
            append(buf, len, "up to %d comma-separated integers in %lld..%lld", TL_MAX_SIZES,
                   (long long)opt->min, (long long)opt->max);
        append(buf, len, "; repeatable, the values add up");
        break;
    case TL_OPT_SIZE:
        append(buf, len, "a byte count <= %lld with an optional K/M/G or KiB/MiB/GiB suffix",
               (long long)opt->max);
        break;
    case TL_OPT_SIZE_LIST:
        append(buf, len,
               "up to %d comma-separated byte counts <= %lld, each with an optional K/M/G or "
               "KiB/MiB/GiB suffix",
               TL_MAX_SIZES, (long long)opt->max);
        break;
    case TL_OPT_CHOICE:
        append(buf, len, "one of: ");
        for (size_t k = 0; opt->choices[k] != NULL; k++)
            append(buf, len, "%s%s", k > 0 ? ", " : "", opt->choices[k]);
        break;
    case TL_OPT_FLAG:
    case TL_OPT_STRING:
        break;
    }
}

/* The current value of the target, i.e. the default before parsing; "" if none. */
static void describe_default(const tl_option *opt, char *buf, size_t len)
{
    buf[0] = '\0';
    switch (opt->kind) {
    case TL_OPT_INT: /* a default below the minimum means "no default": a required option */
        if (*opt->target.integer >= opt->min)
            append(buf, len, "%d", *opt->target.integer);
        break;
    case TL_OPT_REAL:
        append(buf, len, "%g", *opt->target.real);
        break;
    case TL_OPT_SIZE:
        format_size(buf, len, *opt->target.size);
        break;
    case TL_OPT_SIZE_LIST:
        for (size_t k = 0; k < opt->target.list->count; k++) {
            char item[32];
            format_size(item, sizeof item, opt->target.list->values[k]);
            append(buf, len, "%s%s", k > 0 ? "," : "", item);
        }
        break;
    case TL_OPT_INT_LIST:
        for (size_t k = 0; k < opt->target.ints->count; k++)
            append(buf, len, "%s%d", k > 0 ? "," : "", opt->target.ints->values[k]);
        break;
    case TL_OPT_CHOICE:
        append(buf, len, "%s", opt->choices[*opt->target.integer]);
        break;
    case TL_OPT_STRING:
        if (*opt->target.text != NULL)
            append(buf, len, "%s", *opt->target.text);
        break;
    case TL_OPT_FLAG:
        break;
    }
}

/* Word-wrapping writer: words go on the current line while they fit. */
typedef struct {
    FILE *out;
    int column; /* characters on the current line */
    int indent; /* where continuation lines start */
    int fresh;  /* nothing written since the line (or its indent) began */
} wrapper;

static void wrap_newline(wrapper *w)
{
    fprintf(w->out, "\n%*s", w->indent, "");
    w->column = w->indent;
    w->fresh = 1;
}

/* Writes `token` (never split) after a space, on a new line if it does not fit. */
static void wrap_token(wrapper *w, const char *token, size_t len)
{
    if (!w->fresh && w->column + 1 + (int)len > USAGE_WIDTH)
        wrap_newline(w);
    if (!w->fresh) {
        fputc(' ', w->out);
        w->column++;
    }
    fwrite(token, 1, len, w->out);
    w->column += (int)len;
    w->fresh = 0;
}

static void wrap_words(wrapper *w, const char *text)
{
    for (const char *p = text; *p != '\0';) {
        if (*p == ' ') {
            p++;
            continue;
        }
        size_t len = strcspn(p, " ");
        wrap_token(w, p, len);
        p += len;
    }
}

/* "-s, --sizes SIZES", "    --verify", "-x WARMUP": the left column of an option. */
static void option_label(const tl_option *opt, char *buf, size_t len)
{
    buf[0] = '\0';
    if (opt->short_name != '\0')
        append(buf, len, "-%c%s", opt->short_name, opt->long_name != NULL ? ", " : "");
    else
        append(buf, len, "    ");
    if (opt->long_name != NULL)
        append(buf, len, "--%s", opt->long_name);
    if (opt->kind != TL_OPT_FLAG)
        append(buf, len, " %s", opt->metavar != NULL ? opt->metavar : "VALUE");
}

static void print_usage(const char *app, const char *description, const tl_option *options,
                        size_t count)
{
    FILE *out = stdout;
    char buf[1024];

    /* Synopsis: usage: app [-s SIZES] [--verify] ... [-h] */
    fprintf(out, "usage: %s", app);
    wrapper w = {out, (int)strlen("usage: ") + (int)strlen(app), (int)strlen("usage: "), 0};
    w.indent = w.column + 1;
    for (size_t k = 0; k < count; k++) {
        const tl_option *opt = &options[k];
        buf[0] = '\0';
        if (opt->short_name != '\0')
            append(buf, sizeof buf, "[-%c", opt->short_name);
        else
            append(buf, sizeof buf, "[--%s", opt->long_name);
        if (opt->kind != TL_OPT_FLAG)
            append(buf, sizeof buf, " %s", opt->metavar != NULL ? opt->metavar : "VALUE");
        append(buf, sizeof buf, "]");
        wrap_token(&w, buf, strlen(buf));
    }
    wrap_token(&w, "[-h]", 4);
    fputs("\n\n", out);

    /* The description, one wrapped paragraph. */
    wrapper d = {out, 0, 0, 1};
    wrap_words(&d, description);
    fputs("\n\noptions:\n", out);

    /* One entry per option: label, help, accepted values and default. */
    for (size_t k = 0; k <= count; k++) {
        char label[128];
        if (k < count) {
            const tl_option *opt = &options[k];
            option_label(opt, label, sizeof label);
            char values[512];
            char default_text[256];
            describe_values(opt, values, sizeof values);
            describe_default(opt, default_text, sizeof default_text);
            snprintf(buf, sizeof buf, "%s", opt->help);
            if (values[0] != '\0' || default_text[0] != '\0') {
                append(buf, sizeof buf, " (%s", values);
                if (default_text[0] != '\0')
                    append(buf, sizeof buf, "%sdefault: %s", values[0] != '\0' ? "; " : "",
                           default_text);
                append(buf, sizeof buf, ")");
            }
        } else {
            snprintf(label, sizeof label, "-h, --help");
            snprintf(buf, sizeof buf, "show this help and exit");
        }
        fprintf(out, "  %s", label);
        wrapper h = {out, 2 + (int)strlen(label), HELP_COLUMN, 1};
        if (h.column + 2 > HELP_COLUMN)
            wrap_newline(&h);
        else {
            fprintf(out, "%*s", HELP_COLUMN - h.column, "");
            h.column = HELP_COLUMN;
        }
        wrap_words(&h, buf);
        fputc('\n', out);
    }
    fflush(out);
}

static const tl_option *find_short(const tl_option *options, size_t count, char name)
{
    for (size_t k = 0; k < count; k++)
        if (options[k].short_name != '\0' && options[k].short_name == name)
            return &options[k];
    return NULL;
}

static const tl_option *find_long(const tl_option *options, size_t count, const char *name,
                                  size_t len)
{
    for (size_t k = 0; k < count; k++)
        if (options[k].long_name != NULL && strlen(options[k].long_name) == len &&
            strncmp(options[k].long_name, name, len) == 0)
            return &options[k];
    return NULL;
}

/* Stores `value` in the target of `opt`; returns the status (target unchanged on error). */
static tl_status apply_value(const tl_option *opt, const char *value)
{
    tl_status status = TL_OK;
    switch (opt->kind) {
    case TL_OPT_INT: {
        int parsed;
        status = tl_parse_int(value, (int)opt->min, (int)opt->max, &parsed);
        if (status == TL_OK)
            *opt->target.integer = parsed;
        break;
    }
    case TL_OPT_REAL: {
        double parsed;
        status = tl_parse_real(value, opt->real_min, &parsed);
        if (status == TL_OK)
            *opt->target.real = parsed;
        break;
    }
    case TL_OPT_SIZE: {
        int64_t parsed;
        status = tl_parse_size(value, opt->max, &parsed);
        if (status == TL_OK)
            *opt->target.size = parsed;
        break;
    }
    case TL_OPT_SIZE_LIST: {
        tl_size_list parsed;
        status = tl_parse_size_list(value, opt->max, parsed.values, TL_MAX_SIZES, &parsed.count);
        if (status == TL_OK)
            *opt->target.list = parsed;
        break;
    }
    case TL_OPT_INT_LIST: {
        tl_int_list *list = opt->target.ints;
        size_t count = list->given ? list->count : 0; /* the first occurrence drops the defaults */
        status = parse_int_list_append(value, (int)opt->min, (int)opt->max, list->values,
                                       TL_MAX_SIZES, &count);
        if (status == TL_OK) {
            list->count = count;
            list->given = 1;
        }
        break;
    }
    case TL_OPT_CHOICE:
        status = TL_ERR_CHOICE;
        for (int k = 0; opt->choices[k] != NULL; k++)
            if (strcmp(opt->choices[k], value) == 0) {
                *opt->target.integer = k;
                status = TL_OK;
                break;
            }
        break;
    case TL_OPT_STRING:
        *opt->target.text = value;
        break;
    case TL_OPT_FLAG:
        *opt->target.integer = 1;
        break;
    }
    return status;
}

int tl_parse_args(const char *app, const char *description, const tl_option *options,
                  size_t count, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            if (is_rank_zero())
                print_usage(app, description, options, count);
            return TL_EXIT_HELP;
        }

        const tl_option *opt = NULL;
        const char *value = NULL; /* attached value: -s1K, --sizes=1K */
        char spelled[96];         /* the option as the user wrote it, for messages */
        if (arg[0] == '-' && arg[1] == '-' && arg[2] != '\0') {
            const char *name = arg + 2;
            const char *equals = strchr(name, '=');
            size_t len = equals != NULL ? (size_t)(equals - name) : strlen(name);
            opt = find_long(options, count, name, len);
            if (opt == NULL) {
                tl_arg_error(app, "unknown option '--%.*s' (see -h)", (int)len, name);
                return TL_EXIT_USAGE;
            }
            snprintf(spelled, sizeof spelled, "--%s", opt->long_name);
            if (equals != NULL)
                value = equals + 1;
        } else if (arg[0] == '-' && arg[1] != '\0' && arg[1] != '-') {
            opt = find_short(options, count, arg[1]);
            if (opt == NULL) {
                tl_arg_error(app, "unknown option '%s' (see -h)", arg);
                return TL_EXIT_USAGE;
            }
            snprintf(spelled, sizeof spelled, "-%c", opt->short_name);
            if (arg[2] != '\0')
                value = arg + 2;
        } else {
            tl_arg_error(app, "unexpected argument '%s' (see -h)", arg);
            return TL_EXIT_USAGE;
        }

        if (opt->kind == TL_OPT_FLAG) {
            if (value != NULL) {
                tl_arg_error(app, "option %s takes no value (got '%s')", spelled, value);
                return TL_EXIT_USAGE;
            }
        } else if (value == NULL) {
            if (i + 1 >= argc) {
                tl_arg_error(app, "option %s needs a value", spelled);
                return TL_EXIT_USAGE;
            }
            value = argv[++i];
        }

        tl_status status = apply_value(opt, value);
        if (status != TL_OK) {
            char expected[512];
            describe_values(opt, expected, sizeof expected);
            tl_arg_error(app, "invalid %s value '%s': %s (expected %s)", spelled, value,
                         tl_status_text(status), expected);
            return TL_EXIT_USAGE;
        }
    }
    return TL_ARGS_OK;
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

void tl_spread_to_root(double value, double *min, double *avg, double *max)
{
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double sum = 0.0;
    tl_reduce_to_root(&value, min, 1, TL_REDUCE_MIN);
    tl_reduce_to_root(&value, &sum, 1, TL_REDUCE_SUM);
    tl_reduce_to_root(&value, max, 1, TL_REDUCE_MAX);
    *avg = sum / nranks;
}

long long tl_sum_errors(int verify, long long errors)
{
    long long total = 0;
    if (verify)
        MPI_Allreduce(&errors, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
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
