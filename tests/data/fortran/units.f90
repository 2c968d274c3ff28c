! units.f90 - ranks that open one file each on a unit they find free, the usual Fortran idiom.
!
! Rank 0 writes a deck (the value 42) on the first unit from 7 up that INQUIRE says is not
! connected, and closes it; after a barrier every rank finds a free unit the same way, opens the
! deck for reading and reads it. Each rank also reads its first command-line argument. Under an
! MPI whose ranks are processes every rank gets unit 7; ranks sharing one Fortran runtime see each
! other's units (iostat 5004: the file is connected to another unit). Prints, per rank, one line:
!   {"app":"units","rank":R,"unit":U,"iostat":S,"value":V,"argument":"A"}
program units
  use mpi
  implicit none
  integer :: ierr, rank, u, ios, value
  character(len=32) :: argument
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) then
    u = free_unit()
    open(unit=u, file='deck.txt', status='replace', action='write')
    write(u, *) 42
    close(u)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  u = free_unit()
  value = -1
  open(unit=u, file='deck.txt', status='old', action='read', iostat=ios)
  if (ios == 0) read(u, *, iostat=ios) value
  call get_command_argument(1, argument)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (ios == 0) close(u)
  write(*, '(a,i0,a,i0,a,i0,a,i0,3a)') '{"app":"units","rank":', rank, ',"unit":', u, ',"iostat":', ios, &
    ',"value":', value, ',"argument":"', trim(argument), '"}'
  call MPI_Finalize(ierr)
contains
  integer function free_unit()
    logical :: used
    free_unit = 7
    do
      inquire(unit=free_unit, opened=used)
      if (.not. used) exit
      free_unit = free_unit + 1
    end do
  end function
end program
