/*
 * topolab_args.c - the apps' command lines: sizes, integers and reals with
 * their errors, argument-error reporting, the table-driven option parser and
 * the checks the apps make after it.
 * See topolab_app.h for the conventions. Plain MPI + C11, no SimGrid calls.
 */
#include "topolab_usage.h"

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

/* What a list walker hands each item: the item text[0..len-1], to be stored in slot `index`. */
typedef tl_status (*item_parser)(const char *text, size_t len, size_t index, const void *how,
                                 void *out);

/* Walks the comma-separated list `text`, handing its items to `parse` as slots *count, *count + 1,
 * ... (at most `capacity` slots in all); on success *count is the slots filled, on error it is
 * unchanged. */
static tl_status parse_list(const char *text, item_parser parse, const void *how, void *out,
                            size_t capacity, size_t *count)
{
    size_t n = *count;
    const char *item = text;
    for (;;) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        if (n == capacity)
            return TL_ERR_TOO_MANY;
        tl_status status = parse(item, len, n++, how, out);
        if (status != TL_OK)
            return status;
        if (!comma)
            break;
        item = comma + 1;
    }
    *count = n;
    return TL_OK;
}

/* A byte count <= *(const int64_t *)how into ((int64_t *)out)[index]. */
static tl_status size_item(const char *text, size_t len, size_t index, const void *how, void *out)
{
    return parse_size_n(text, len, *(const int64_t *)how, &((int64_t *)out)[index]);
}

tl_status tl_parse_size_list(const char *text, int64_t max, int64_t *out, size_t capacity,
                             size_t *count)
{
    size_t n = 0;
    tl_status status = parse_list(text, size_item, &max, out, capacity, &n);
    if (status == TL_OK)
        *count = n;
    return status;
}

/* An int in [bounds[0], bounds[1]] (how: const int bounds[2]) into ((int *)out)[index]. */
static tl_status int_item(const char *text, size_t len, size_t index, const void *how, void *out)
{
    const int *bounds = how;
    int64_t value;
    tl_status status = parse_digits(text, len, &value);
    if (status != TL_OK)
        return status;
    if (value < bounds[0] || value > bounds[1])
        return TL_ERR_RANGE;
    ((int *)out)[index] = (int)value;
    return TL_OK;
}

/* Parses "1,2,4" (ints in [min, max]) and appends the values to out[*count..]; on error *count
 * is unchanged. */
static tl_status parse_int_list_append(const char *text, int min, int max, int *out,
                                       size_t capacity, size_t *count)
{
    const int bounds[2] = {min, max};
    return parse_list(text, int_item, bounds, out, capacity, count);
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
 * Table-driven option parsing (the usage text: topolab_usage.c).
 */

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
                tl_print_usage(app, description, options, count);
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
            tl_describe_values(opt, expected, sizeof expected);
            tl_arg_error(app, "invalid %s value '%s': %s (expected %s)", spelled, value,
                         tl_status_text(status), expected);
            return TL_EXIT_USAGE;
        }
    }
    return TL_ARGS_OK;
}

size_t tl_copy_options(tl_option *table, const tl_option *options, size_t count)
{
    if (count > TL_MAX_OPTIONS) {
        fprintf(stderr, "topolab: error: %zu options, more than TL_MAX_OPTIONS (%d)\n", count,
                TL_MAX_OPTIONS);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memcpy(table, options, count * sizeof *table);
    return count;
}

int tl_no_checks(void *options, int nranks)
{
    (void)options;
    (void)nranks;
    return TL_ARGS_OK;
}

/* ---------------------------------------------------------------------------
 * Checks after parsing.
 */

const char *const tl_local_work_names[] = {"real", "skip", NULL};

int tl_check_ranks(const char *app, int nranks, int min)
{
    if (nranks >= min)
        return TL_ARGS_OK;
    tl_arg_error(app, "needs at least %d MPI ranks (got %d)", min, nranks);
    return TL_EXIT_USAGE;
}

int tl_check_sizes(const char *app, const tl_size_list *sizes, const char *what)
{
    for (size_t k = 0; k < sizes->count; k++)
        if (sizes->values[k] <= 0) {
            tl_arg_error(app, "invalid -s/--sizes value %lld: %s needs at least 1 byte",
                         (long long)sizes->values[k], what);
            return TL_EXIT_USAGE;
        }
    return TL_ARGS_OK;
}

int tl_check_local_work(const char *app, const char *long_name, int local, int verify)
{
    if (!verify || local != TL_LOCAL_SKIP)
        return TL_ARGS_OK;
    tl_arg_error(app, "--verify needs the data: it cannot be combined with --%s skip", long_name);
    return TL_EXIT_USAGE;
}
