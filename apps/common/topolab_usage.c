/*
 * topolab_usage.c - the usage text the option table generates (-h/--help) and
 * the description of an option's valid values that argument errors quote.
 * Plain C11, no SimGrid calls.
 */
#include "topolab_usage.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

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
void tl_describe_values(const tl_option *opt, char *buf, size_t len)
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
        if (*opt->target.integer >= 0)
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

void tl_print_usage(const char *app, const char *description, const tl_option *options,
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
            tl_describe_values(opt, values, sizeof values);
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
