/*
 * pi.c - "your own code" of docs/smpirun-on.md's validation example: pi by the midpoint rule on
 * N intervals (default 4e8) split over the ranks, a sum reduced to rank 0, repeated 5 times.
 * Rank 0 prints the value and the time of the last repetition (MPI_Wtime):
 *   {"pi":3.14159265358979...,"error":1e-15,"ranks":2,"seconds":0.51}
 * Any MPI program would do; this one is short and all arithmetic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    long n = argc > 1 ? atol(argv[1]) : 400000000L;
    double pi = 0.0, seconds = 0.0;
    for (int repeat = 0; repeat < 5; repeat++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        double h = 1.0 / (double)n, sum = 0.0;
        for (long i = rank; i < n; i += ranks) {
            double x = h * ((double)i + 0.5);
            sum += 4.0 / (1.0 + x * x);
        }
        double part = h * sum;
        MPI_Reduce(&part, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        seconds = MPI_Wtime() - start;
    }
    if (rank == 0)
        printf("{\"pi\":%.15f,\"error\":%.3g,\"ranks\":%d,\"seconds\":%.6f}\n", pi, fabs(pi - acos(-1.0)), ranks,
               seconds);
    MPI_Finalize();
    return 0;
}
