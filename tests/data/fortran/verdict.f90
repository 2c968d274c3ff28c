! The verdict of a reproduction, compiled before it (tests/test_run_failures.py, fortran()): the wrong results every
! rank counted, summed on rank 0, which prints "<name>: ok" when there are none, else "<name>: <total> wrong".
module verdict
  implicit none
  include 'mpif.h'
  private
  public :: report
contains
  subroutine report(name, wrong)
    character(len=*), intent(in) :: name
    integer, intent(in) :: wrong
    integer :: rank, total, ierr
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Reduce(wrong, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      if (total == 0) then
        print '(a, a)', name, ': ok'
      else
        print '(a, a, i0, a)', name, ': ', total, ' wrong'
      end if
    end if
  end subroutine report
end module verdict
