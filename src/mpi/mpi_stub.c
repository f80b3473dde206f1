/* mpi_stub.c - the build without MPI: the same API, and rf_mpi_open says
 * what to install. */
#include <stdlib.h>

#include "mpi_measure.h"

bool rf_mpi_built(void) { return false; }

rf_status rf_mpi_open(int *argc, char ***argv, rf_mpi **out, rf_err *err)
{
    (void)argc;
    (void)argv;
    *out = NULL;
    return rf_err_set(err, RF_EUNAVAIL,
                      "--mpi: built without MPI (install Open MPI, Debian's libopenmpi-dev, and "
                      "rebuild)");
}

/* Nothing below is reached: no session exists without rf_mpi_open. */
void rf_mpi_close(rf_mpi *m) { (void)m; }

void rf_mpi_abort(rf_mpi *m, int code)
{
    (void)m;
    exit(code);
}

int rf_mpi_rank(const rf_mpi *m)
{
    (void)m;
    return 0;
}
int rf_mpi_size(const rf_mpi *m)
{
    (void)m;
    return 1;
}
int rf_mpi_node(const rf_mpi *m)
{
    (void)m;
    return 0;
}
int rf_mpi_nodes(const rf_mpi *m)
{
    (void)m;
    return 1;
}
int rf_mpi_node_rank(const rf_mpi *m)
{
    (void)m;
    return 0;
}
int rf_mpi_node_size(const rf_mpi *m)
{
    (void)m;
    return 1;
}
const char *rf_mpi_library(const rf_mpi *m)
{
    (void)m;
    return "";
}

rf_status rf_mpi_node_roof(rf_mpi *m, const rf_measure_opts *o, rf_hw_profile *out, rf_err *err)
{
    (void)m;
    (void)o;
    (void)out;
    return rf_err_set(err, RF_EUNAVAIL, "built without MPI");
}

rf_status rf_mpi_gather_nodes(rf_mpi *m, const rf_mpi_rank_roof *mine, rf_cluster *c, rf_err *err)
{
    (void)m;
    (void)mine;
    (void)c;
    return rf_err_set(err, RF_EUNAVAIL, "built without MPI");
}

rf_mpi_links_plan rf_mpi_links_plan_of(bool quick)
{
    (void)quick;
    return (rf_mpi_links_plan){0};
}

rf_status rf_mpi_links(rf_mpi *m, const rf_mpi_links_plan *plan, rf_mpi_progress_fn progress,
                       void *user, rf_cluster *c, rf_err *err)
{
    (void)m;
    (void)plan;
    (void)progress;
    (void)user;
    (void)c;
    return rf_err_set(err, RF_EUNAVAIL, "built without MPI");
}
