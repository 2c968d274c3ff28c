/* Local work inside MPI calls: a rank sends a buffer to itself (MPI_Sendrecv: the MPI library copies it) and reduces
 * two local vectors (MPI_Reduce_local: the library applies MPI_SUM), each `repeats` times, and prints how long each
 * took by MPI_Wtime as one JSON object. Used by tests/test_compute.py: under SMPI with computation benchmarked, that
 * work costs simulated time as it costs real time under MPICH (SimGrid patch 0011).
 *   local_work [megabytes] [repeats]     (default 64 MB, 4 times) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  size_t count = (size_t)(argc > 1 ? atof(argv[1]) : 64.0) * 1000000 / sizeof(double);
  int repeats  = argc > 2 ? atoi(argv[2]) : 4;
  double* a    = malloc(count * sizeof(double));
  double* b    = malloc(count * sizeof(double));
  if (a == NULL || b == NULL) {
    fprintf(stderr, "local_work: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t i = 0; i < count; i++) {
    a[i] = (double)i;
    b[i] = 0.0;
  }
  double start = MPI_Wtime();
  for (int r = 0; r < repeats; r++)
    MPI_Sendrecv(a, (int)count, MPI_DOUBLE, rank, 0, b, (int)count, MPI_DOUBLE, rank, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  double copy_s = MPI_Wtime() - start;
  start         = MPI_Wtime();
  for (int r = 0; r < repeats; r++)
    MPI_Reduce_local(a, b, (int)count, MPI_DOUBLE, MPI_SUM);
  double reduce_s = MPI_Wtime() - start;
  int correct     = 1; /* b = a + repeats * a */
  for (size_t i = 0; i < count; i += 4099)
    correct &= b[i] == (double)i * (repeats + 1);
  if (rank == 0)
    printf("{\"bytes\": %zu, \"repeats\": %d, \"copy_s\": %.9g, \"reduce_s\": %.9g, \"correct\": %s}\n",
           count * sizeof(double), repeats, copy_s, reduce_s, correct ? "true" : "false");
  free(a);
  free(b);
  MPI_Finalize();
  return correct ? 0 : 1;
}
