/*
 * topolab_model.c - modelled computation (see topolab_model.h): the one place
 * where the topolab apps call SimGrid. smpicc force-includes
 * smpi/smpi_helpers.h, whose include guard SMPI_HELPERS_H is therefore
 * defined only in SMPI builds (smpicc defines no SMPI macro of its own).
 */
#include "topolab_model.h"

#ifdef SMPI_HELPERS_H
/* ---- SimGrid/SMPI build ------------------------------------------------ */
#include <simgrid/host.h>
#include <smpi/smpi.h>

void tl_model_compute(double seconds)
{
    if (!(seconds > 0.0))
        return;
    /* smpi_execute(seconds) would be scaled by smpi/host-speed (the speed of
     * the machine running the simulation); flops at the simulated host's own
     * speed give exactly `seconds` of simulated time. */
    smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
}

#else
/* ---- real MPI build ------------------------------------------------------ */
void tl_model_compute(double seconds)
{
    (void)seconds;
}
#endif
