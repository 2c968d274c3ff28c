/* MPI's non-overtaking rule on many (tag, source, destination) triples (SimGrid patch 0023 keys SMPI's per-triple
 * message counts by the three integers). Every rank but the last sends ROUNDS messages to the last rank for each tag
 * of TAGS (MPI_Isend), eagerly (small) and as rendezvous (large) in turn, each carrying its sequence number for that
 * tag, and then the same to its right neighbour; the last rank first receives every message of the largest tag source by source, then
 * the rest with MPI_ANY_SOURCE and MPI_ANY_TAG. For every (source, tag) the sequence numbers must arrive in order.
 * Each rank prints {"rank":R,"received":N,"out_of_order":K}. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 40, LARGE = 1 << 17, NTAGS = 4 };
static const int TAGS[NTAGS] = {0, 7, 4242, 30000};

static void send_all(int to, char *buffers)
{
    MPI_Request requests[ROUNDS * NTAGS];
    for (int round = 0; round < ROUNDS; round++)
        for (int t = 0; t < NTAGS; t++) {
            int k = round * NTAGS + t, bytes = (round + t) % 2 ? LARGE : (int)sizeof(int);
            memcpy(buffers + (size_t)k * LARGE, &round, sizeof round);
            MPI_Isend(buffers + (size_t)k * LARGE, bytes, MPI_CHAR, to, TAGS[t], MPI_COMM_WORLD, &requests[k]);
        }
    MPI_Waitall(ROUNDS * NTAGS, requests, MPI_STATUSES_IGNORE);
}

static int tag_index(int tag)
{
    for (int t = 0; t < NTAGS; t++)
        if (TAGS[t] == tag)
            return t;
    return -1;
}

static void receive_one(int source, int tag, char *buffer, int *next, int size, int *received, int *out_of_order)
{
    MPI_Status status;
    MPI_Recv(buffer, LARGE, MPI_CHAR, source, tag, MPI_COMM_WORLD, &status);
    int round, t = tag_index(status.MPI_TAG);
    memcpy(&round, buffer, sizeof round);
    if (t < 0 || round != next[status.MPI_SOURCE * NTAGS + t])
        (*out_of_order)++;
    else
        next[status.MPI_SOURCE * NTAGS + t]++;
    (*received)++;
    (void)size;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buffer = calloc(1, LARGE), *buffers = calloc(ROUNDS * NTAGS, LARGE);
    int *next = calloc((size_t)size * NTAGS, sizeof *next);
    if (buffer == NULL || buffers == NULL || next == NULL || size < 3)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int last = size - 1, received = 0, out_of_order = 0;
    if (rank != last) {
        send_all(last, buffers);
        MPI_Barrier(MPI_COMM_WORLD); /* internal negative tags, between the two phases */
        if (rank + 1 < last)
            send_all(rank + 1, buffers);
        if (rank > 0)
            for (int k = 0; k < ROUNDS * NTAGS; k++)
                receive_one(rank - 1, MPI_ANY_TAG, buffer, next, size, &received, &out_of_order);
    } else {
        for (int source = 0; source < last; source++)
            for (int round = 0; round < ROUNDS; round++)
                receive_one(source, TAGS[NTAGS - 1], buffer, next, size, &received, &out_of_order);
        for (int k = 0; k < last * ROUNDS * (NTAGS - 1); k++)
            receive_one(MPI_ANY_SOURCE, MPI_ANY_TAG, buffer, next, size, &received, &out_of_order);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    printf("{\"rank\":%d,\"received\":%d,\"out_of_order\":%d}\n", rank, received, out_of_order);
    free(next);
    free(buffers);
    free(buffer);
    MPI_Finalize();
    return 0;
}
