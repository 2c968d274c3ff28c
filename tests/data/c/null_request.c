/* MPI_Test on MPI_REQUEST_NULL: MPI 3.1, Sect. 3.7.3 says flag = true, with MPI_STATUS_IGNORE too.
 * HPCC's Global RandomAccess polls a null request this way before its first send (SimGrid patch 0006).
 * Prints {"flag_ignore":F,"flag_status":G} (1 and 1 under a correct MPI). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Status status;
    int ignore = 0, with_status = 0, rank;
    MPI_Test(&request, &ignore, MPI_STATUS_IGNORE);
    MPI_Test(&request, &with_status, &status);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("{\"flag_ignore\":%d,\"flag_status\":%d}\n", ignore, with_status);
    MPI_Finalize();
    return 0;
}
