! Arguments that MPI ignores given as MPI_DATATYPE_NULL, as Quantum ESPRESSO's UtilXlib/mp.f90 gives them: the send
! type of MPI_IN_PLACE at the root of MPI_GATHERV and in MPI_ALLGATHER(V), the receive type of the other ranks of
! MPI_GATHERV. Every rank checks what it received; rank 0 prints "null_datatype: ok" when all are right (verdict.f90).
program null_datatype
  use verdict
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nproc, i, wrong
  double precision :: buf(64)
  integer :: counts(64), displs(64)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
  do i = 1, nproc
    counts(i) = 1
    displs(i) = i - 1
  end do
  wrong = 0

  call fill()
  if (rank == 0) then
    call MPI_GATHERV(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_DOUBLE_PRECISION, 0, &
                     MPI_COMM_WORLD, ierr)
    call check(ierr)
  else
    call MPI_GATHERV(buf(rank + 1), 1, MPI_DOUBLE_PRECISION, buf, counts, displs, MPI_DATATYPE_NULL, 0, &
                     MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) wrong = wrong + 1
  end if

  call fill()
  call MPI_ALLGATHERV(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_DOUBLE_PRECISION, &
                      MPI_COMM_WORLD, ierr)
  call check(ierr)

  call fill()
  call MPI_ALLGATHER(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call check(ierr)

  call report('null_datatype', wrong)
  call MPI_FINALIZE(ierr)

contains

  subroutine fill()
    buf = -1.d0
    buf(rank + 1) = dble(rank)
  end subroutine fill

  ! Block i of buf must hold rank i - 1's value.
  subroutine check(status)
    integer, intent(in) :: status
    if (status /= MPI_SUCCESS) wrong = wrong + 1
    do i = 1, nproc
      if (buf(i) /= dble(i - 1)) wrong = wrong + 1
    end do
  end subroutine check
end program null_datatype
