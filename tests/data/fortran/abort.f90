! abort.f90 - rank 1 calls MPI_Abort(MPI_COMM_WORLD, 3) from Fortran; the others wait at a barrier.
program abort
  use mpi
  implicit none
  integer :: ierr, rank
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 1) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program
