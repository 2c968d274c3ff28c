! BLAS functions that return REAL and COMPLEX values, called from Fortran as every Fortran code calls them
! (zdotc, cdotc, sdot, snrm2 of the system's BLAS, built by gfortran with its own calling convention): every rank
! checks its values, and rank 0 prints "blas_functions: ok" when all are exact. A compiler wrapper that changes that convention
! (gfortran's -ff2c: COMPLEX returned through a hidden argument, REAL as double) crashes in zdotc or returns wrong
! values.
program blas_functions
  use mpi
  implicit none
  complex(8) :: z(3), zdotc
  complex(4) :: c(3), cdotc
  real(4) :: s(3), sdot, snrm2
  external :: zdotc, cdotc, sdot, snrm2
  complex(8) :: zr
  complex(4) :: cr
  real(4) :: sr, nr
  integer :: ierr, rank, bad, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  z = [(1d0, 2d0), (3d0, -1d0), (0d0, 1d0)]
  c = [(1.0, 2.0), (3.0, -1.0), (0.0, 1.0)]
  s = [1.0, 2.0, 2.0]
  zr = zdotc(3, z, 1, z, 1)      ! |z|^2 = 5 + 10 + 1
  cr = cdotc(3, c, 1, c, 1)
  sr = sdot(3, s, 1, s, 1)       ! 1 + 4 + 4
  nr = snrm2(3, s, 1)            ! 3
  bad = 0
  if (zr /= (16d0, 0d0)) bad = bad + 1
  if (cr /= (16.0, 0.0)) bad = bad + 1
  if (sr /= 9.0) bad = bad + 1
  if (abs(nr - 3.0) > 1e-6) bad = bad + 1
  call MPI_Reduce(bad, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', 'blas_functions: ok'
    else
      print '(a,i0,a,4g14.6)', 'blas_functions: ', total, ' wrong, rank 0 got ', real(zr), real(cr), sr, nr
    end if
  end if
  call MPI_Finalize(ierr)
end program blas_functions
