/* Every rank exchanges BYTES with rank ^ DISTANCE (MPI_Irecv, MPI_Isend, MPI_Waitall), all at once, and prints
 * {"rank":R,"done_s":T}: T is when its exchange completed. On a line of 4 hosts with DISTANCE 2, the flows 0 -> 2
 * and 1 -> 3 cross the same cable, and so do 2 -> 0 and 3 -> 1: each pair shares it for the whole transfer
 * (SimGrid patch 0021). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int bytes = argc > 1 ? atoi(argv[1]) : 4096;
    int distance = argc > 2 ? atoi(argv[2]) : 2;
    char *buffers = calloc(2, (size_t)bytes);
    if (buffers == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double start = MPI_Wtime();
    MPI_Request requests[2];
    MPI_Irecv(buffers + bytes, bytes, MPI_CHAR, rank ^ distance, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(buffers, bytes, MPI_CHAR, rank ^ distance, 0, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    printf("{\"rank\":%d,\"done_s\":%.17g}\n", rank, MPI_Wtime() - start);
    free(buffers);
    MPI_Finalize();
    return 0;
}
