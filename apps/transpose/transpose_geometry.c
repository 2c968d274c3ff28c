/*
 * The transpose app's geometry and assignment (transpose_geometry.h).
 */
#include "transpose_geometry.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets *g for nranks = q^3 with q a perfect square; returns 0 otherwise. */
int make_geometry(int nranks, struct geometry *g)
{
    int q = 1;
    while ((int64_t)q * q * q < nranks)
        q++;
    int s = 1;
    while (s * s < q)
        s++;
    if ((int64_t)q * q * q != nranks || s * s != q)
        return 0;
    *g = (struct geometry){.q = q, .s = s, .side = s * q, .ranks = nranks};
    return 1;
}

/* The paper's default placement: the rank holding block (i, j). */
int default_holder(const struct geometry *g, int i, int j)
{
    int a = i / g->q, b = j / g->q;
    return (a * g->s + b) * g->q * g->q + (i % g->q) * g->q + (j % g->q);
}

/*
 * Rank 0: reads `path` into holder[0..P-1] and checks it is a permutation of
 * 0..P-1. Returns 1, or 0 with a one-line message in err.
 */
int read_assignment(const char *path, const struct geometry *g, int *holder, char *err,
                           size_t errlen)
{
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        snprintf(err, errlen, "cannot open assignment file '%s': %s", path, strerror(errno));
        return 0;
    }
    int ok = 1;
    long long entries = 0;
    char token[64];
    while (fscanf(file, "%63s", token) == 1) {
        char *end = NULL;
        errno = 0;
        long long value = strtoll(token, &end, 10);
        if (end == token || *end != '\0' || errno == ERANGE) {
            snprintf(err, errlen, "assignment file '%s': entry %lld ('%s') is not an integer",
                     path, entries + 1, token);
            ok = 0;
            break;
        }
        if (entries < g->ranks) {
            if (value < 0 || value >= g->ranks) {
                snprintf(err, errlen,
                         "assignment file '%s': entry %lld (block (%lld, %lld)) is rank %lld, "
                         "outside 0..%d",
                         path, entries + 1, entries / g->side, entries % g->side, value,
                         g->ranks - 1);
                ok = 0;
                break;
            }
            holder[entries] = (int)value;
        }
        entries++;
    }
    fclose(file);
    if (!ok)
        return 0;
    if (entries != g->ranks) {
        snprintf(err, errlen,
                 "assignment file '%s' has %lld entries, expected %d (the rank holding each "
                 "block, row by row)",
                 path, entries, g->ranks);
        return 0;
    }

    /* A permutation: no rank twice (then, with P entries, none is missing). */
    int *first = malloc((size_t)g->ranks * sizeof *first); /* first block held by each rank */
    int *uses = malloc((size_t)g->ranks * sizeof *uses);   /* number of blocks held */
    if (first == NULL || uses == NULL) {
        snprintf(err, errlen, "out of memory reading the assignment file");
        ok = 0;
    } else {
        for (int r = 0; r < g->ranks; r++) {
            first[r] = -1;
            uses[r] = 0;
        }
        int twice = -1; /* block of the first repeated rank */
        for (int b = 0; b < g->ranks; b++) {
            int r = holder[b];
            if (uses[r]++ == 0)
                first[r] = b;
            else if (twice < 0)
                twice = b;
        }
        if (twice >= 0) {
            int r = holder[twice], missing = 0;
            while (uses[missing] != 0)
                missing++;
            snprintf(err, errlen,
                     "assignment file '%s' is not a permutation of 0..%d: rank %d holds both "
                     "block (%d, %d) and block (%d, %d), and rank %d holds none",
                     path, g->ranks - 1, r, first[r] / g->side, first[r] % g->side,
                     twice / g->side, twice % g->side, missing);
            ok = 0;
        }
    }
    free(uses);
    free(first);
    return ok;
}
