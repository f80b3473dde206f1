/* mpi_internal.h - the MPI session shared by mpi_session.c and
 * mpi_links.c (not public). */
#ifndef RF_MPI_INTERNAL_H
#define RF_MPI_INTERNAL_H

#include <mpi.h>

#include "mpi_measure.h"

struct rf_mpi {
    int rank, size; /* in MPI_COMM_WORLD                           */
    MPI_Comm node;  /* the ranks of this rank's node               */
    int node_rank, node_size;
    MPI_Comm across;       /* the ranks with this node rank, one a node:
                                 node rank 0's is the links between nodes   */
    int node_index, nodes; /* this node's index (its rank in `across` of
                                 node rank 0), and how many                 */
    int min_node_size;     /* the fewest ranks a node has                 */
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
};

/* RF_EIO "what: MPI's message" when rc is not MPI_SUCCESS. */
rf_status rf__mpi_check(int rc, const char *what, rf_err *err);

#endif
