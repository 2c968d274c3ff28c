/*
 * fail.c - an MPI program that fails the way it is told, for the tests that a failed run fails.
 *
 *   fail HOW [RANK [CODE]]
 *
 * Every rank initializes MPI and meets the others at a barrier; then rank RANK (default 1) fails
 * as HOW says while the others wait at a second barrier:
 *   abort        MPI_Abort(MPI_COMM_WORLD, CODE)         (mpiexec exits CODE)
 *   exit         exit(CODE) without MPI_Finalize           (mpiexec exits CODE)
 *   return       MPI_Finalize, then return CODE from main  (mpiexec exits CODE)
 *   crash        raise(SIGSEGV)                            (mpiexec exits 11)
 *   deadlock     every rank receives from its successor before anything is sent (mpiexec hangs)
 *   no-finalize  every rank returns 0 from main without MPI_Finalize (erroneous MPI)
 *   none         no failure: rank 0 prints {"app":"fail","how":"none","ranks":N} and all exit 0
 * CODE defaults to 3. A plain C11 MPI program (no harness: it must be able to leave main without
 * MPI_Finalize); it builds with mpicc and smpicc.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int usage(void)
{
    fprintf(stderr, "usage: fail abort|exit|return|crash|deadlock|no-finalize|none [RANK [CODE]]\n");
    return 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *how = argc > 1 ? argv[1] : "";
    int failing = argc > 2 ? atoi(argv[2]) : 1;
    int code = argc > 3 ? atoi(argv[3]) : 3;
    static const char *const known[] = {"abort", "exit", "return", "crash", "deadlock", "no-finalize", "none"};
    int is_known = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        is_known |= !strcmp(how, known[i]);
    if (!is_known || failing < 0 || failing >= nranks) {
        int status = rank == 0 ? usage() : 2;
        MPI_Finalize();
        return status;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(how, "deadlock")) {
        int value;
        MPI_Recv(&value, 1, MPI_INT, (rank + 1) % nranks, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (!strcmp(how, "no-finalize"))
        return 0;
    if (rank == failing) {
        if (!strcmp(how, "abort"))
            MPI_Abort(MPI_COMM_WORLD, code);
        if (!strcmp(how, "exit"))
            exit(code);
        if (!strcmp(how, "crash"))
            raise(SIGSEGV);
        if (!strcmp(how, "return")) {
            MPI_Finalize();
            return code;
        }
    }
    if (strcmp(how, "return"))
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && !strcmp(how, "none"))
        printf("{\"app\":\"fail\",\"how\":\"none\",\"ranks\":%d}\n", nranks);
    MPI_Finalize();
    return 0;
}
