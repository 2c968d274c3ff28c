/*
 * The mesh of the combine app: node (x, y) is rank y * W + x; the schedules of its three global
 * sums (Littlefield's Appendix), step by step: the snake and fence pipelines and the binomial tree.
 */
#ifndef COMBINE_MESH_H
#define COMBINE_MESH_H

#define MAX_CHILDREN 2
#define TAG_PARTIAL 1 /* partially combined data, towards the root */
#define TAG_FINAL 2   /* final results, away from the root */

/* A node of the snake or fence pipeline: where its blocks go and when. */
struct pipe_node {
    int parent;                 /* rank that receives our partial blocks; -1 at the root */
    int children[MAX_CHILDREN]; /* ranks whose partial blocks we combine with ours */
    int nchildren;
    /* Partial block b goes to the parent in step b + send_offset, so the children's blocks b
     * arrive in step b + send_offset - 1. Final block b arrives from the parent (the root:
     * is complete) in step b + final_offset and goes on to the children in the next step. */
    int send_offset;
    int final_offset;
};

/* A node's part in step s of the tree: idle, or send to / receive from its peer. */
enum tree_role { TREE_IDLE, TREE_SEND, TREE_RECEIVE };
struct tree_move {
    enum tree_role role;
    int peer;
    int tag;
};

int mesh_rank(int width, int x, int y);
struct pipe_node snake_node(int width, int height, int x, int y);
struct pipe_node fence_node(int width, int height, int x, int y);
struct tree_move tree_step(int width, int height, int x, int y, int s);

#endif
