/*
 * simgrid/instr.h for a real MPI (see smpi/mpi.h beside it): SimGrid's tracing
 * categories mark phases in a simulation's trace; without a simulator, nothing.
 */
#ifndef TOPOLAB_SMPI_COMPAT_INSTR_H
#define TOPOLAB_SMPI_COMPAT_INSTR_H

#define TRACE_smpi_set_category(category) ((void)(category))

#endif
