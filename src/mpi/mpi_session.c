/* mpi_session.c - the MPI session of `measure --mpi`: ranks grouped by
 * node, each node's roof measured once by its first rank over all the
 * node's cores, and every rank's roof gathered into the cluster's nodes. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

bool rf_mpi_built(void) { return true; }

rf_status rf__mpi_check(int rc, const char *what, rf_err *err)
{
    if (rc == MPI_SUCCESS)
        return RF_OK;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return rf_err_set(err, RF_EIO, "%s: %s", what, msg);
}

rf_status rf_mpi_open(int *argc, char ***argv, rf_mpi **out, rf_err *err)
{
    *out = NULL;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(argc, argv) != MPI_SUCCESS)
        return rf_err_set(err, RF_EIO, "MPI_Init failed");
    rf_mpi *m = calloc(1, sizeof *m);
    if (!m)
        return rf_err_set(err, RF_ENOMEM, "out of memory for the MPI session");
    m->node = m->across = MPI_COMM_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    int len = 0;
    MPI_Get_library_version(m->library, &len);
    m->library[strcspn(m->library, "\n")] = 0;
    rf_status s = rf__mpi_check(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &m->node),
        "MPI_Comm_split_type (ranks by node)", err);
    if (!s) {
        MPI_Comm_rank(m->node, &m->node_rank);
        MPI_Comm_size(m->node, &m->node_size);
        s = rf__mpi_check(MPI_Comm_split(MPI_COMM_WORLD, m->node_rank, m->rank, &m->across),
                          "MPI_Comm_split (one rank a node)", err);
    }
    if (!s) {
        MPI_Comm_rank(m->across, &m->node_index);
        MPI_Comm_size(m->across, &m->nodes);
        /* node rank 0's figures are its node's: tell the node's others */
        s = rf__mpi_check(MPI_Bcast(&m->node_index, 1, MPI_INT, 0, m->node), "MPI_Bcast", err);
    }
    if (!s)
        s = rf__mpi_check(MPI_Bcast(&m->nodes, 1, MPI_INT, 0, m->node), "MPI_Bcast", err);
    if (!s)
        s = rf__mpi_check(
            MPI_Allreduce(&m->node_size, &m->min_node_size, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD),
            "MPI_Allreduce", err);
    if (s) {
        rf_mpi_close(m);
        return s;
    }
    *out = m;
    return RF_OK;
}

void rf_mpi_close(rf_mpi *m)
{
    if (!m)
        return;
    if (m->across != MPI_COMM_NULL)
        MPI_Comm_free(&m->across);
    if (m->node != MPI_COMM_NULL)
        MPI_Comm_free(&m->node);
    free(m);
    MPI_Finalize();
}

void rf_mpi_abort(rf_mpi *m, int code)
{
    (void)m;
    MPI_Abort(MPI_COMM_WORLD, code);
    abort(); /* MPI_Abort does not return; should it, no rank may go on */
}

int rf_mpi_rank(const rf_mpi *m) { return m->rank; }
int rf_mpi_size(const rf_mpi *m) { return m->size; }
int rf_mpi_node(const rf_mpi *m) { return m->node_index; }
int rf_mpi_nodes(const rf_mpi *m) { return m->nodes; }
int rf_mpi_node_rank(const rf_mpi *m) { return m->node_rank; }
int rf_mpi_node_size(const rf_mpi *m) { return m->node_size; }
const char *rf_mpi_library(const rf_mpi *m) { return m->library; }

/* A barrier that sleeps: tested every millisecond, so a waiting rank takes
 * no core from the lab (MPI_Barrier polls, busy, on shared memory). */
static rf_status quiet_barrier(MPI_Comm comm, rf_err *err)
{
    MPI_Request req;
    rf_status s = rf__mpi_check(MPI_Ibarrier(comm, &req), "MPI_Ibarrier", err);
    for (int done = 0; !s && !done;) {
        s = rf__mpi_check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test", err);
        if (!s && !done)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    return s;
}

/* Every CPU a rank of the node was bound to, as this thread's affinity;
 * *was keeps the old one for restore_cpus. */
static rf_status join_cpus(rf_mpi *m, cpu_set_t *was, bool *changed, rf_err *err)
{
    cpu_set_t mine, *all = NULL;
    *changed = false;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return rf_err_set(err, RF_EIO, "cannot read this rank's CPU affinity");
    *was = mine;
    if (m->node_rank == 0 && !(all = calloc((size_t)m->node_size, sizeof *all)))
        return rf_err_set(err, RF_ENOMEM, "out of memory for %d affinity masks", m->node_size);
    rf_status s = rf__mpi_check(
        MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, m->node),
        "MPI_Gather (the node's CPUs)", err);
    if (!s && m->node_rank == 0) {
        cpu_set_t joined;
        CPU_ZERO(&joined);
        for (int i = 0; i < m->node_size; i++)
            CPU_OR(&joined, &joined, &all[i]);
        if (!CPU_EQUAL(&joined, &mine)) {
            if (sched_setaffinity(0, sizeof joined, &joined) != 0)
                s = rf_err_set(err, RF_EIO, "cannot run on the node's %d CPUs", CPU_COUNT(&joined));
            else
                *changed = true;
        }
    }
    free(all);
    return s;
}

rf_status rf_mpi_node_roof(rf_mpi *m, const rf_measure_opts *o, rf_hw_profile *out, rf_err *err)
{
    cpu_set_t was;
    bool changed = false;
    rf_status s = join_cpus(m, &was, &changed, err);
    if (!s && m->node_rank == 0)
        s = rf_measure_cpu(o, out, err);
    if (changed)
        sched_setaffinity(0, sizeof was, &was);
    /* the first rank fails alone (its caller aborts every rank); the others
     * wait here for it, asleep */
    if (!s)
        s = quiet_barrier(m->node, err);
    return s;
}

typedef struct rank_entry {
    int node, node_rank;
    char host[64];
    rf_mpi_rank_roof roof;
} rank_entry;

/* b's figures where they are lower (the slowest device bounds the node). */
static void lower(rf_cluster_node *n, const rf_mpi_rank_roof *b, bool first)
{
    if (first || b->bandwidth_bytes_per_s < n->bandwidth_bytes_per_s)
        n->bandwidth_bytes_per_s = b->bandwidth_bytes_per_s;
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        if (first || b->peak_flops_per_s[k] < n->peak_flops_per_s[k])
            n->peak_flops_per_s[k] = b->peak_flops_per_s[k];
}

static void merge(rf_cluster *c, const rank_entry *all, int size)
{
    for (int i = 0; i < size; i++) {
        const rank_entry *e = &all[i];
        if (e->node < 0 || e->node >= RF_CLUSTER_MAX_NODES)
            continue;
        rf_cluster_node *n = &c->nodes[e->node];
        if ((size_t)e->node >= c->n_nodes)
            c->n_nodes = (size_t)e->node + 1;
        n->ranks++;
        if (e->node_rank == 0)
            snprintf(n->name, sizeof n->name, "%s", e->host);
        if (e->roof.gpu)
            lower(n, &e->roof, n->devices++ == 0);
    }
    for (int i = 0; i < size; i++) /* a node without GPUs: its CPU's roof */
        if (all[i].roof.cpu && all[i].node < RF_CLUSTER_MAX_NODES && !c->nodes[all[i].node].devices)
            lower(&c->nodes[all[i].node], &all[i].roof, true);
}

rf_status rf_mpi_gather_nodes(rf_mpi *m, const rf_mpi_rank_roof *mine, rf_cluster *c, rf_err *err)
{
    if (m->nodes > RF_CLUSTER_MAX_NODES)
        return rf_err_set(err, RF_ERANGE, "%d nodes: a cluster profile holds at most %d", m->nodes,
                          RF_CLUSTER_MAX_NODES);
    rank_entry me = {.node = m->node_index, .node_rank = m->node_rank, .roof = *mine};
    int len = 0;
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Get_processor_name(host, &len);
    snprintf(me.host, sizeof me.host, "%.63s", host);
    rank_entry *all = NULL;
    if (m->rank == 0 && !(all = calloc((size_t)m->size, sizeof *all)))
        return rf_err_set(err, RF_ENOMEM, "out of memory for %d ranks' roofs", m->size);
    rf_status s = rf__mpi_check(
        MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD),
        "MPI_Gather (the ranks' roofs)", err);
    if (!s && m->rank == 0) {
        c->ranks = m->size;
        c->n_nodes = 0;
        memset(c->nodes, 0, sizeof c->nodes);
        merge(c, all, m->size);
        snprintf(c->mpi, sizeof c->mpi, "%.127s", m->library);
    }
    free(all);
    return s;
}
