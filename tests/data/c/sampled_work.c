/* Computation inside an SMPI_SAMPLE_LOCAL loop (as NAS EP's): 30 blocks of arithmetic, each a few milliseconds.
 * With smpi/sample-skip:no every block runs and is charged at its CPU time, but SMPI's sum of benchmarked bursts
 * (smpi/display-timing) leaves the sampled blocks out. Prints the sum it computed. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  volatile double sum = 0.0;
  int i;
  SMPI_SAMPLE_LOCAL(i = 0, i < 30, i++, 30, 0.0)
  {
    for (long k = 1; k <= 5000000; k++)
      sum += 1.0 / (double)k;
  }
  printf("{\"sum\": %.6f}\n", sum);
  MPI_Finalize();
  return 0;
}
