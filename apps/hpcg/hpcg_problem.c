/*
 * hpcg_problem.c - the HPCG problem's process grid, levels, matrices and halos (see hpcg_problem.h).
 *
 * Halo. A neighbour at offset d in {-1,0,1}^3 of the process grid owns the box next to this rank's; the
 * points of one box that the other's rows use are the box cut by the other one grown by one point, which
 * is again a box: in dimension k, the whole width when d_k = 0, else the one layer facing the other box.
 * Both sides list that box's points in global order (z, then y, then x fastest), so a message needs no
 * index: the receiver puts the values, in order, into its ghost run for that neighbour.
 */
#include <stdlib.h>
#include <string.h>

#include "hpcg_problem.h"
#include "topolab_app.h"

#define APP_NAME "hpcg"

void hpcg_process_grid(int ranks, int grid[3])
{
    int best = ranks + 1;
    for (int a = 1; a <= ranks; a++) {
        if (ranks % a)
            continue;
        for (int b = 1; b <= a; b++) {
            if ((ranks / a) % b)
                continue;
            int c = ranks / a / b;
            if (c > b)
                continue;
            if (a < best) { /* a >= b >= c: a is the largest factor */
                best = a;
                grid[0] = a, grid[1] = b, grid[2] = c;
            }
        }
    }
}

static int box_size(const hpcg_box *box)
{
    return (box->hi[0] - box->lo[0]) * (box->hi[1] - box->lo[1]) * (box->hi[2] - box->lo[2]);
}

/* Position of global point g in box (global order inside the box). */
static int box_position(const hpcg_box *box, const int g[3])
{
    int wx = box->hi[0] - box->lo[0], wy = box->hi[1] - box->lo[1];
    return ((g[2] - box->lo[2]) * wy + (g[1] - box->lo[1])) * wx + (g[0] - box->lo[0]);
}

/* The neighbour at offset d: the points of ours it uses (send) and of its that we use (recv). */
static void halo_boxes(const hpcg_level *level, const int d[3], hpcg_neighbour *nb)
{
    for (int k = 0; k < 3; k++) {
        int lo = level->origin[k], hi = lo + level->n[k];
        if (d[k] == 0) {
            nb->send.lo[k] = nb->recv.lo[k] = lo;
            nb->send.hi[k] = nb->recv.hi[k] = hi;
        } else if (d[k] > 0) {
            nb->send.lo[k] = hi - 1, nb->send.hi[k] = hi;
            nb->recv.lo[k] = hi, nb->recv.hi[k] = hi + 1;
        } else {
            nb->send.lo[k] = lo, nb->send.hi[k] = lo + 1;
            nb->recv.lo[k] = lo - 1, nb->recv.hi[k] = lo;
        }
    }
    nb->send_count = box_size(&nb->send);
    nb->recv_count = box_size(&nb->recv);
}

static int local_row(const hpcg_level *level, const int g[3])
{
    return ((g[2] - level->origin[2]) * level->n[1] + (g[1] - level->origin[1])) * level->n[0] +
           (g[0] - level->origin[0]);
}

/* Finds the neighbours; slot[(dz+1)*9 + (dy+1)*3 + dx+1] is the neighbour at offset d (-1: none). */
static void build_halo(hpcg_level *level, const hpcg_problem *problem, int slot[27])
{
    level->neighbours = 0;
    level->ncol = level->nrow;
    for (int s = 0; s < 27; s++) {
        int d[3] = {s % 3 - 1, s / 3 % 3 - 1, s / 9 - 1}, c[3];
        slot[s] = -1;
        int inside = d[0] || d[1] || d[2];
        for (int k = 0; k < 3; k++) {
            c[k] = problem->coords[k] + d[k];
            inside = inside && c[k] >= 0 && c[k] < problem->grid[k];
        }
        if (!inside)
            continue;
        hpcg_neighbour *nb = &level->neighbour[level->neighbours];
        nb->rank = (c[2] * problem->grid[1] + c[1]) * problem->grid[0] + c[0];
        halo_boxes(level, d, nb);
        nb->ghost_first = level->ncol;
        level->ncol += nb->recv_count;
        nb->send_rows = tl_alloc_or_abort(APP_NAME, sizeof(int) * (size_t)nb->send_count);
        nb->send_buffer = tl_alloc_or_abort(APP_NAME, sizeof(double) * (size_t)nb->send_count);
        int m = 0, g[3];
        for (g[2] = nb->send.lo[2]; g[2] < nb->send.hi[2]; g[2]++)
            for (g[1] = nb->send.lo[1]; g[1] < nb->send.hi[1]; g[1]++)
                for (g[0] = nb->send.lo[0]; g[0] < nb->send.hi[0]; g[0]++)
                    nb->send_rows[m++] = local_row(level, g);
        slot[s] = level->neighbours++;
    }
}

/* The local column of global point g: a local row, or a ghost slot of the neighbour that owns it. */
static int column_of(const hpcg_level *level, const int slot[27], const int g[3])
{
    int s = 0, scale = 1;
    for (int k = 0; k < 3; k++, scale *= 3) {
        int d = g[k] < level->origin[k] ? -1 : g[k] >= level->origin[k] + level->n[k] ? 1 : 0;
        s += (d + 1) * scale;
    }
    if (s == 13)
        return local_row(level, g);
    const hpcg_neighbour *nb = &level->neighbour[slot[s]];
    return nb->ghost_first + box_position(&nb->recv, g);
}

/* Row (ix, iy, iz): 26 on the diagonal, -1 for every grid point around it inside the global grid. */
static void build_row(hpcg_level *level, const int slot[27], const int local[3])
{
    int row = (local[2] * level->n[1] + local[1]) * level->n[0] + local[0], entries = 0;
    int *columns = level->columns + (size_t)row * HPCG_STENCIL;
    double *values = level->values + (size_t)row * HPCG_STENCIL;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int g[3] = {level->origin[0] + local[0] + dx, level->origin[1] + local[1] + dy,
                            level->origin[2] + local[2] + dz};
                int inside = 1;
                for (int k = 0; k < 3; k++)
                    inside = inside && g[k] >= 0 && g[k] < level->global[k];
                if (!inside)
                    continue;
                int diagonal = dx == 0 && dy == 0 && dz == 0;
                columns[entries] = column_of(level, slot, g);
                values[entries++] = diagonal ? 26.0 : -1.0;
            }
    level->row_entries[row] = entries;
    level->diagonal[row] = 26.0;
    level->nonzeros += entries;
}

static void build_level(hpcg_level *level, const hpcg_problem *problem, const int n[3])
{
    memset(level, 0, sizeof *level);
    for (int k = 0; k < 3; k++) {
        level->n[k] = n[k];
        level->origin[k] = problem->coords[k] * n[k];
        level->global[k] = problem->grid[k] * n[k];
    }
    level->nrow = n[0] * n[1] * n[2];
    int slot[27];
    build_halo(level, problem, slot);
    size_t rows = (size_t)level->nrow;
    level->row_entries = tl_alloc_or_abort(APP_NAME, sizeof(int) * rows);
    level->columns = tl_alloc_or_abort(APP_NAME, sizeof(int) * rows * HPCG_STENCIL);
    level->values = tl_alloc_or_abort(APP_NAME, sizeof(double) * rows * HPCG_STENCIL);
    level->diagonal = tl_alloc_or_abort(APP_NAME, sizeof(double) * rows);
    int local[3];
    for (local[2] = 0; local[2] < n[2]; local[2]++)
        for (local[1] = 0; local[1] < n[1]; local[1]++)
            for (local[0] = 0; local[0] < n[0]; local[0]++)
                build_row(level, slot, local);
}

/* Links level `fine` to its coarser level: f2c and the V-cycle's work vectors. */
static void link_levels(hpcg_level *fine, hpcg_level *coarse)
{
    fine->coarse = coarse;
    fine->f2c = tl_alloc_or_abort(APP_NAME, sizeof(int) * (size_t)coarse->nrow);
    for (int k = 0; k < coarse->n[2]; k++)
        for (int j = 0; j < coarse->n[1]; j++)
            for (int i = 0; i < coarse->n[0]; i++)
                fine->f2c[(k * coarse->n[1] + j) * coarse->n[0] + i] =
                    ((2 * k) * fine->n[1] + 2 * j) * fine->n[0] + 2 * i;
    fine->Axf = hpcg_vector(fine);
    fine->rc = hpcg_vector(coarse);
    fine->xc = hpcg_vector(coarse);
}

void hpcg_problem_build(hpcg_problem *problem, const int n[3], int levels, int rank, int ranks)
{
    memset(problem, 0, sizeof *problem);
    problem->rank = rank;
    problem->ranks = ranks;
    problem->levels = levels;
    hpcg_process_grid(ranks, problem->grid);
    problem->coords[0] = rank % problem->grid[0];
    problem->coords[1] = rank / problem->grid[0] % problem->grid[1];
    problem->coords[2] = rank / problem->grid[0] / problem->grid[1];
    problem->level = tl_alloc_or_abort(APP_NAME, sizeof(hpcg_level) * (size_t)levels);
    int size[3] = {n[0], n[1], n[2]};
    for (int l = 0; l < levels; l++) {
        build_level(&problem->level[l], problem, size);
        if (l > 0)
            link_levels(&problem->level[l - 1], &problem->level[l]);
        for (int k = 0; k < 3; k++)
            size[k] /= 2;
    }
}

void hpcg_problem_free(hpcg_problem *problem)
{
    for (int l = 0; l < problem->levels; l++) {
        hpcg_level *level = &problem->level[l];
        for (int m = 0; m < level->neighbours; m++) {
            free(level->neighbour[m].send_rows);
            free(level->neighbour[m].send_buffer);
        }
        free(level->row_entries);
        free(level->columns);
        free(level->values);
        free(level->diagonal);
        free(level->f2c);
        free(level->Axf);
        free(level->rc);
        free(level->xc);
    }
    free(problem->level);
}

void hpcg_right_hand_side(const hpcg_level *level, double *b)
{
    for (int i = 0; i < level->nrow; i++)
        b[i] = 26.0 - (level->row_entries[i] - 1);
}

double *hpcg_vector(const hpcg_level *level)
{
    double *v = tl_alloc_or_abort(APP_NAME, sizeof(double) * (size_t)level->ncol);
    memset(v, 0, sizeof(double) * (size_t)level->ncol);
    return v;
}
