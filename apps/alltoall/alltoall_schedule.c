/*
 * The all-to-all's schedules (alltoall_schedule.h).
 */
#include "alltoall_schedule.h"

#include <stdint.h>

static int mod(int64_t a, int b)
{
    int64_t r = a % b;
    return (int)(r < 0 ? r + b : r);
}

/* Column offset of server k's destination in phase class t (the paper's two cases). */
static int column_offset(int t, int k, int l)
{
    if (t == 0)
        return 0;
    return t + k + 1 < l ? t + k + 1 : t + k + 2;
}

/* (i, j, k) of rank (or (s, t, u) of phase) = (i*l + j)*m + k. */
static void mlfm_split(const struct schedule *s, int value, int *i, int *j, int *k)
{
    *i = value / (s->l * s->m);
    *j = value / s->m % s->l;
    *k = value % s->m;
}

static int mlfm_join(const struct schedule *s, int i, int j, int k)
{
    return (i * s->l + j) * s->m + k;
}

/* The rank that `rank` sends to in `phase`. */
int destination(const struct schedule *s, int rank, int phase)
{
    if (s->algorithm == ALGORITHM_PAIRWISE)
        return mod((int64_t)rank + phase, s->ranks);
    int i, j, k, ps, pt, pu;
    mlfm_split(s, rank, &i, &j, &k);
    mlfm_split(s, phase, &ps, &pt, &pu);
    return mlfm_join(s, mod((int64_t)i + ps, s->n),
                     mod((int64_t)j + column_offset(pt, k, s->l), s->l),
                     mod((int64_t)k + pu, s->m));
}

/* The rank that `rank` receives from in `phase`: destination(source(r, p), p) == r. */
int source(const struct schedule *s, int rank, int phase)
{
    if (s->algorithm == ALGORITHM_PAIRWISE)
        return mod((int64_t)rank - phase, s->ranks);
    int i, j, k, ps, pt, pu;
    mlfm_split(s, rank, &i, &j, &k);
    mlfm_split(s, phase, &ps, &pt, &pu);
    int k0 = mod((int64_t)k - pu, s->m); /* the sender's k decides its column offset */
    return mlfm_join(s, mod((int64_t)i - ps, s->n),
                     mod((int64_t)j - column_offset(pt, k0, s->l), s->l), k0);
}
