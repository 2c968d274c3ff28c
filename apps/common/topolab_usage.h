/*
 * topolab_usage.h - internal to apps/common: the usage text of an option
 * table, shared by the parser (topolab_args.c) and written by topolab_usage.c.
 */
#ifndef TOPOLAB_USAGE_H
#define TOPOLAB_USAGE_H

#include "topolab_app.h"

/* What a valid value of `opt` looks like ("an integer >= 1", ...), into buf[0..len-1]. */
void tl_describe_values(const tl_option *opt, char *buf, size_t len);

/* The whole -h/--help text on stdout: synopsis, description, one entry per option. */
void tl_print_usage(const char *app, const char *description, const tl_option *options,
                    size_t count);

#endif
