/* measure_mpi.h - measure --mpi (measure_mpi.c), the branch of
 * cmd_measure.c that measures a cluster. */
#ifndef RF_CLI_LAB_CMD_MEASURE_MPI_H
#define RF_CLI_LAB_CMD_MEASURE_MPI_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "roofline/rf_hw_profile.h"

/* A cluster measured with MPI, on every rank (cmd_measure.c's --mpi): the
 * node roofs and the links into p (rf_hw_profile.cluster), written by rank
 * 0. Exit 3 when built without MPI; a failing rank aborts every rank. */
typedef struct cli_mpi_args {
    int64_t threads; /* the node's lab (0: one a core of its ranks) */
    bool quick;
    const char *isa;
    double timeout_s; /* --timeout: a rank past it fails (0: none)   */
} cli_mpi_args;
int cli_mpi_measure(cli_ctx *ctx, const cli_mpi_args *a, rf_hw_profile *p);

#endif
