/*
 * The combine app's mesh and schedules (combine_mesh.h).
 */
#include "combine_mesh.h"

#include "topolab_app.h"

int mesh_rank(int width, int x, int y)
{
    return y * width + x;
}

/* Snake index of the node (x, y): row y even runs left to right, odd right to left. */
static int snake_index(int width, int x, int y)
{
    return y * width + (y % 2 == 0 ? x : width - 1 - x);
}

/* Rank of snake index i. */
static int snake_rank(int width, int i)
{
    int y = i / width, j = i % width;
    return mesh_rank(width, y % 2 == 0 ? j : width - 1 - j, y);
}

/*
 * Snake: node i = 0..P-1 along the path; node i+1 is node i's child, i-1 its parent.
 * Node i >= 1 sends partial block b to i-1 in step b + (P-1-i) (so node i <= P-2 receives it
 * from i+1 in step b + (P-2-i) and combines, c2); node 0 holds final block b after step
 * b + P - 2 and sends it to node 1 in step b + P - 1; node j receives it in step b + P - 2 + j
 * and forwards it to j+1 in the next step. The last node receives the last block (b = B-1) in
 * step B + 2P - 4: 2P + B - 3 steps.
 */
struct pipe_node snake_node(int width, int height, int x, int y)
{
    int nodes = width * height;
    int i = snake_index(width, x, y);
    struct pipe_node n = {.parent = i > 0 ? snake_rank(width, i - 1) : -1, .nchildren = 0};
    if (i + 1 < nodes)
        n.children[n.nchildren++] = snake_rank(width, i + 1);
    n.send_offset = nodes - 1 - i;
    n.final_offset = nodes - 2 + i;
    return n;
}

/*
 * Fence. Combining: partial blocks travel down every column to the bottom row y = 0, and left
 * along the bottom row to (0,0). Node (x, y) sends its partial block b in step
 *     b + send_offset,  send_offset = (W-1-x) + (H-1-y),
 * to (x, y-1) if y > 0, to (x-1, 0) if y = 0 (and x > 0): the top node (x, H-1) of column x
 * sends block b down in step b + (W-1-x); a column node 0 < y < H-1 receives it from (x, y+1)
 * in step b + (W-1-x) + (H-2-y), combines (c2) and sends it on one step later; the bottom
 * node (x, 0) receives block b from above (H >= 2) and from (x+1, 0) (x < W-1) in the same
 * step b + (W-1-x) + (H-2), combines its own and the arriving blocks (c3 for three vectors, c2
 * for two) and sends to (x-1, 0) in the next step. (0,0) holds final block b after step
 *     b + W + H - 3.
 * Broadcast, the same tree in reverse: node (x, y) receives final block b in step
 *     b + final_offset,  final_offset = W + H - 3 + x + y
 * ((0,0): completes it) and forwards it one step later to its children: (x, y+1) if y < H-1,
 * and (x+1, 0) too on the bottom row (x < W-1). So (0,0) sends to (1,0) and (0,1), bottom-row
 * nodes forward right and up, column nodes up. W = 1 or H = 1 degenerate to a line (one child).
 * Both offsets change by one from a node to its child, which makes every send meet its receive
 * in the same step. Last activity: (W-1, H-1) receives final block B-1 in step
 * B - 1 + 2W + 2H - 6, so the fence takes
 *     2W + 2H + B - 5 steps (P >= 2),
 * the sum of the paper's timeline (Appendix: 1 + (H-1) + (W-2) + 1 + (B-3) + 1 + (W-2) + (H-1)
 * + 1). Middle bottom-row nodes use six links per step when the pipeline is full.
 */
struct pipe_node fence_node(int width, int height, int x, int y)
{
    struct pipe_node n = {.parent = -1, .nchildren = 0};
    if (y > 0)
        n.parent = mesh_rank(width, x, y - 1);
    else if (x > 0)
        n.parent = mesh_rank(width, x - 1, 0);
    if (y + 1 < height)
        n.children[n.nchildren++] = mesh_rank(width, x, y + 1);
    if (y == 0 && x + 1 < width)
        n.children[n.nchildren++] = mesh_rank(width, x + 1, 0);
    n.send_offset = (width - 1 - x) + (height - 1 - y);
    n.final_offset = width + height - 3 + x + y;
    return n;
}

/*
 * Tree, step s of 2(kx + ky), kx = ceil(log2 W), ky = ceil(log2 H): reduction along x in every
 * row at distance 2^s (s < kx), then along y in column x = 0 at distance 2^(s-kx); the
 * broadcast retraces these steps backwards. At distance d along a line, the node at c = d mod 2d
 * sends its vector to c - d in the reduction (c - d combines it), and receives from c - d in the
 * broadcast.
 */
struct tree_move tree_step(int width, int height, int x, int y, int s)
{
    int kx = tl_ceil_log2(width), ky = tl_ceil_log2(height);
    int towards_root = s < kx + ky;
    int level = towards_root ? s : 2 * (kx + ky) - 1 - s; /* the reduction step it mirrors */
    int along_x = level < kx;
    int d = 1 << (along_x ? level : level - kx);
    int c = along_x ? x : y, length = along_x ? width : height;
    struct tree_move move = {TREE_IDLE, -1, towards_root ? TAG_PARTIAL : TAG_FINAL};
    if (!along_x && x != 0)
        return move;
    int upper = c % (2 * d) == d, lower = c % (2 * d) == 0 && c + d < length;
    if (!upper && !lower)
        return move;
    int peer_c = upper ? c - d : c + d;
    move.peer = along_x ? mesh_rank(width, peer_c, y) : mesh_rank(width, 0, peer_c);
    move.role = upper == towards_root ? TREE_SEND : TREE_RECEIVE;
    return move;
}
