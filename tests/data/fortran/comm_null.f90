! Communicators that are MPI_COMM_NULL where MPI says so, from Fortran: MPI_Comm_split with color MPI_UNDEFINED on the
! odd ranks, MPI_Comm_create with a group of the even ranks, MPI_Comm_split_type with MPI_UNDEFINED on the odd ranks.
! Each rank checks what it got (MPI_COMM_NULL, or a communicator of the even ranks whose size it checks) and rank 0
! prints "comm_null: ok" (verdict.f90) when every rank agrees (SimGrid patch 0012; MUMPS's scaling splits so).
program comm_null
  use verdict
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, split, created, typed, world_group, even_group, members, bad, i
  integer, allocatable :: evens(:)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  bad = 0
  if (mod(rank, 2) == 0) then
    call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, split, ierr)
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, typed, ierr)
  else
    call MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, rank, split, ierr)
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, typed, ierr)
  end if
  allocate(evens((nprocs + 1) / 2))
  evens = [(2 * i, i = 0, (nprocs + 1) / 2 - 1)]
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  call MPI_Group_incl(world_group, size(evens), evens, even_group, ierr)
  call MPI_Comm_create(MPI_COMM_WORLD, even_group, created, ierr)
  if (mod(rank, 2) == 0) then
    call MPI_Comm_size(split, members, ierr)
    if (members /= (nprocs + 1) / 2) bad = bad + 1
    call MPI_Comm_size(created, members, ierr)
    if (members /= (nprocs + 1) / 2) bad = bad + 1
    if (typed == MPI_COMM_NULL) bad = bad + 1
    call MPI_Comm_free(split, ierr)
    call MPI_Comm_free(created, ierr)
    call MPI_Comm_free(typed, ierr)
  else
    if (split /= MPI_COMM_NULL) bad = bad + 1
    if (created /= MPI_COMM_NULL) bad = bad + 1
    if (typed /= MPI_COMM_NULL) bad = bad + 1
  end if
  call report('comm_null', bad)
  call MPI_Group_free(even_group, ierr)
  call MPI_Group_free(world_group, ierr)
  call MPI_Finalize(ierr)
end program comm_null
