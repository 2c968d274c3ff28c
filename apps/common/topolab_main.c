/*
 * The main of every topolab app (IMB's pattern): the app declares its options, their parser and its
 * run with TL_APP (topolab_app.h); this starts MPI, parses, runs and stops MPI, once for all apps.
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
    int code = tl_the_app.parse(argc, argv, nranks, options);
    if (code == TL_ARGS_OK)
        code = tl_the_app.run(options, rank, nranks);
    free(options);
    return tl_stop(code);
}
