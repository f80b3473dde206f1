/* mpi_measure.h - a cluster measured with MPI (`roofline measure --mpi`):
 * the session, each node's roof measured once by its ranks as one team,
 * and the collectives between ranks (rf_cluster.h).
 *
 * The engine of one command, linked by the CLI only and not installed
 * (a program built against roofline.pc would need MPI's own compiler
 * wrapper). Built from mpi_session.c and mpi_links.c when CMake finds MPI
 * (Open MPI: Debian's libopenmpi-dev), else from mpi_stub.c, whose
 * rf_mpi_open returns RF_EUNAVAIL naming the package; the API is the same
 * either way. MPI types stay inside: the session is opaque.
 */
#ifndef RF_MPI_MEASURE_H
#define RF_MPI_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "roofline/rf_cluster.h"
#include "roofline/rf_error.h"
#include "roofline/rf_hw_profile.h"
#include "roofline/rf_measure_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this build has MPI (mpi_session.c) or the fallback. */
bool rf_mpi_built(void);

/* MPI_Init (a process started without mpirun is a singleton: one rank),
 * errors returned rather than fatal, the ranks grouped by node
 * (MPI_Comm_split_type shared), and one rank a node joined for the links
 * between nodes. RF_EUNAVAIL without MPI; RF_EIO when MPI_Init fails. */
typedef struct rf_mpi rf_mpi;
rf_status rf_mpi_open(int *argc, char ***argv, rf_mpi **out, rf_err *err);

/* MPI_Finalize; NULL is accepted. */
void rf_mpi_close(rf_mpi *m);

/* MPI_Abort of every rank with code: for a rank that failed, after it has
 * written its one line. Does not return. */
void rf_mpi_abort(rf_mpi *m, int code);

int rf_mpi_rank(const rf_mpi *m);            /* in MPI_COMM_WORLD               */
int rf_mpi_size(const rf_mpi *m);            /* ranks in all                    */
int rf_mpi_node(const rf_mpi *m);            /* this rank's node, 0 .. nodes-1  */
int rf_mpi_nodes(const rf_mpi *m);           /* nodes                           */
int rf_mpi_node_rank(const rf_mpi *m);       /* its index among its node's ranks */
int rf_mpi_node_size(const rf_mpi *m);       /* ranks on its node               */
const char *rf_mpi_library(const rf_mpi *m); /* "Open MPI v4.1.4, ..."     */

/* This node's roof, measured once by its ranks as one team: its first rank
 * (node rank 0) runs the CPU lab (rf_measure_cpu, o's options) with a team
 * pinned over every CPU the node's ranks were bound to (their affinity
 * masks gathered and joined, then the first rank's own restored), while
 * the others wait without spinning (MPI_Ibarrier tested every
 * millisecond), so the lab is the same team `roofline measure` runs alone
 * and no rank competes with it for cores or memory. Fills *out on the
 * first rank of each node; the others' *out is untouched. Every rank
 * calls it. The lab's errors are returned on the rank that ran it. */
rf_status rf_mpi_node_roof(rf_mpi *m, const rf_measure_opts *o, rf_hw_profile *out, rf_err *err);

/* What one rank knows of its node, for rf_mpi_gather_nodes: the first rank
 * of a node gives the CPU roof; any rank that measured a GPU gives its roof
 * with gpu set. */
typedef struct rf_mpi_rank_roof {
    bool gpu; /* a GPU of this rank was measured      */
    bool cpu; /* the node's CPU roof (node rank 0)    */
    double bandwidth_bytes_per_s;
    double peak_flops_per_s[RF_DTYPE_COUNT];
} rf_mpi_rank_roof;

/* Every rank's roof gathered to rank 0, which fills c's ranks, nodes (name,
 * ranks, devices = ranks that measured a GPU, the roof: the slowest GPU's
 * figures where the node has any, else its CPU's) and mpi. Every rank
 * calls it; c is filled on rank 0 only. */
rf_status rf_mpi_gather_nodes(rf_mpi *m, const rf_mpi_rank_roof *mine, rf_cluster *c, rf_err *err);

/* How the collectives are timed (rf_mpi_links_plan). */
typedef struct rf_mpi_links_plan {
    uint64_t min_bytes, max_bytes; /* from min to max                       */
    uint64_t step;                 /* each size this times the last: 2, 4   */
    double min_time_s;             /* a trial's iterations last at least this
                                      on the slowest rank                    */
    int trials;                    /* after the calibration; best and median */
    int64_t max_iterations;        /* calibration stops here                 */
} rf_mpi_links_plan;

/* full: 8 B .. 256 MiB doubling, trials of >= 20 ms, 5 of them; quick:
 * 16 B .. 64 MiB by 4 (12 sizes), >= 2 ms, 3 (a 2-rank quick run: 15-20 s
 * on this 2-core VM when quiet, twice that and more when it is shared). */
rf_mpi_links_plan rf_mpi_links_plan_of(bool quick);

typedef void (*rf_mpi_progress_fn)(void *user, int done, int total, const char *what);

/* The links: all-reduce, all-gather, all-to-all and the send of a ring
 * (each rank to the next, from the one before), at every size of the plan,
 * within a node (every node's ranks at once, the slowest rank of all
 * counted) when nodes have 2 ranks or more, and between nodes (one rank a
 * node) when there are 2 nodes or more. Each size is timed as the OSU
 * benchmarks and nccl-tests do: one warm-up iteration, then calibration
 * (iterations doubled from 1 until the collectives of a trial last
 * min_time_s at the best mean seen, or, from 16 iterations on, the trial,
 * barriers included, 4 x that), whose last trial is the first of
 * `trials`; an iteration is a
 * barrier, then the collective timed alone (MPI_Wtime); a trial's time is
 * the slowest rank's mean iteration; the point is the best trial, the
 * median beside it.
 * Each collective and class is then fitted (rf_cluster_fit). Every rank
 * calls it; c's links are filled on rank 0 (progress, when given, is
 * called there). RF_EIO naming the collective, size and MPI's message when
 * a call fails; RF_ENOMEM when the 2 x max_bytes buffers cannot be had. */
rf_status rf_mpi_links(rf_mpi *m, const rf_mpi_links_plan *plan, rf_mpi_progress_fn progress,
                       void *user, rf_cluster *c, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
