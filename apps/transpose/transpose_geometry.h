/*
 * The transpose app's geometry: P = q^3 ranks (q a perfect square) hold the blocks of a
 * (sqrt(q) q) x (sqrt(q) q) block matrix, one each; the paper's default placement, or an
 * assignment file read and checked.
 */
#ifndef TRANSPOSE_GEOMETRY_H
#define TRANSPOSE_GEOMETRY_H

#include <stddef.h>

/* The cube and the block grid for P ranks. */
struct geometry {
    int q;     /* nodes per axis of the cube, P = q^3 */
    int s;     /* sqrt(q): quadrants per side of the matrix */
    int side;  /* blocks per side of the matrix, s*q */
    int ranks; /* P */
};

/* Sets *g for nranks = q^3 with q a perfect square; returns 0 otherwise. */
int make_geometry(int nranks, struct geometry *g);
/* The paper's default placement: the rank holding block (i, j). */
int default_holder(const struct geometry *g, int i, int j);
/* Reads the assignment file `path` into holder[0..P-1], a permutation of 0..P-1: 1, or 0 with a
 * one-line message in err. */
int read_assignment(const char *path, const struct geometry *g, int *holder, char *err, size_t errlen);

#endif
