/*
 * The main of every topolab app (IMB's pattern): the app declares its name, description, options,
 * their checks and its run with TL_APP (topolab_app.h); this starts MPI, parses the command line
 * against the app's option table, has the app check the values, runs it and stops MPI, once for all
 * apps.
 */
#include <stdlib.h>
#include <string.h>

#include "topolab_app.h"

int main(int argc, char **argv)
{
    int rank, nranks;
    tl_start(&argc, &argv, &rank, &nranks);
    void *options = tl_alloc_or_abort("topolab", tl_the_app.options_size);
    memset(options, 0, tl_the_app.options_size);
    tl_option table[TL_MAX_OPTIONS];
    size_t count = tl_the_app.declare(options, table);
    int code = tl_parse_args(tl_the_app.name, tl_the_app.description, table, count, argc, argv);
    if (code == TL_ARGS_OK)
        code = tl_the_app.check(options, nranks);
    if (code == TL_ARGS_OK)
        code = tl_the_app.run(options, rank, nranks);
    free(options);
    return tl_stop(code);
}
