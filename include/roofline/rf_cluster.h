/* rf_cluster.h - a cluster measured with MPI: its nodes, and its links as
 * collectives timed over message sizes and fitted to latency + size /
 * bandwidth.
 *
 * `roofline measure --mpi` fills one of these into the profile it writes
 * (rf_hw_profile.cluster; its JSON is the profile's "cluster" object,
 * docs/measure.md). Figures follow nccl-tests' definitions, for a message
 * of n bytes (nccl-tests' "size") taking time t on r ranks:
 *   algbw = n / t
 *   busbw = algbw x f, f the bus factor of the collective:
 *     all-reduce 2 (r-1)/r; all-gather and all-to-all (r-1)/r; send 1
 * (an all-gather's n is the gathered buffer, r blocks of n / r; an
 * all-to-all's the buffer each rank sends, n / r to each peer; a send is
 * one rank's message to the next rank of a ring, received from the one
 * before). busbw is what one rank's link carried, so it is comparable
 * across collectives and rank counts, and with the link figures of
 * rf_hw_links. The fit is the alpha-beta model the parallel model costs
 * collectives with (rf_parallel.h): t = latency + f n / bandwidth.
 * This header is the type and its pure arithmetic (core); the JSON reader
 * and writer are the profile's (rf_hw_profile_io.h).
 */
#ifndef RF_CLUSTER_H
#define RF_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_hw.h"
#include "rf_parallel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_CLUSTER_MAX_NODES 64
#define RF_CLUSTER_MAX_LINKS 8   /* 4 collectives x 2 link classes          */
#define RF_CLUSTER_MAX_POINTS 32 /* 8 B .. 256 MiB doubling is 26            */

typedef enum rf_link_class {
    RF_LINK_INTRA = 0, /* ranks of one node (shared memory, NVLink)         */
    RF_LINK_INTER,     /* one rank a node, across the network               */
    RF_LINK_CLASS_COUNT
} rf_link_class;

typedef struct rf_cluster_node {
    char name[64];                           /* host name                              */
    int ranks;                               /* MPI ranks on it                        */
    int devices;                             /* GPUs its ranks measured (0: CPU only)  */
    double bandwidth_bytes_per_s;            /* its memory roof, measured              */
    double peak_flops_per_s[RF_DTYPE_COUNT]; /* its measured peaks, 0 = none */
} rf_cluster_node;

typedef struct rf_cluster_point {
    uint64_t bytes;     /* n, nccl-tests' "size"                  */
    double time_s;      /* best trial: the slowest rank's mean
                                      time an iteration                      */
    double median_s;    /* the median trial's                     */
    int64_t iterations; /* iterations a trial (calibrated)        */
} rf_cluster_point;

typedef struct rf_cluster_link {
    rf_link_class cls;
    rf_coll_kind kind;
    int ranks;                                      /* r: ranks each collective spans         */
    double latency_s;                               /* fitted: t at n = 0                     */
    double bw_bytes_per_s;                          /* fitted: the bus bandwidth              */
    double residual;                                /* rms of (t - fit) / t over the points   */
    rf_cluster_point points[RF_CLUSTER_MAX_POINTS]; /* by growing size     */
    size_t n_points;
} rf_cluster_link;

typedef struct rf_cluster {
    int ranks; /* in all; 0: not a cluster profile       */
    rf_cluster_node nodes[RF_CLUSTER_MAX_NODES];
    size_t n_nodes;
    rf_cluster_link links[RF_CLUSTER_MAX_LINKS];
    size_t n_links;
    char mpi[128]; /* "Open MPI v4.1.4, ..." (first line)    */
} rf_cluster;

/* "intra-node" / "inter-node"; NULL past the enum. */
const char *rf_link_class_name(rf_link_class c);
/* "all-reduce", "all-gather", "all-to-all", "send"; NULL past the enum. */
const char *rf_cluster_kind_name(rf_coll_kind k);

/* f above; 0 for fewer than 2 ranks. */
double rf_cluster_bus_factor(rf_coll_kind k, int ranks);
/* n / t and n / t x f of a point of l. */
double rf_cluster_algbw(const rf_cluster_point *p);
double rf_cluster_busbw(const rf_cluster_link *l, const rf_cluster_point *p);

/* Fit l's points (their best times) to t = latency + f n / bandwidth, each
 * term where it shows: the bandwidth on the largest quarter of the sizes,
 * the latency (>= 0) on the smallest quarter (at least 2 points each), by
 * least squares on relative error, alternated until both settle (a
 * latency that would be negative, when caches make the small sizes faster
 * than the large ones' bandwidth says, is the small sizes' mean time); exact
 * points give back exactly the latency and bandwidth they were made from.
 * So the bandwidth is nccl-tests' large-message figure and the latency
 * OSU's small-message one. Fills latency_s, bw_bytes_per_s and residual
 * (over every point). RF_EINVAL naming the collective and class for fewer
 * than 2 points, fewer than 2 ranks, a time not positive, or times that do
 * not grow with the size (no positive bandwidth). */
rf_status rf_cluster_fit(rf_cluster_link *l, rf_err *err);

/* A cluster as read from a file: ranks >= 1, 1 .. RF_CLUSTER_MAX_NODES
 * nodes whose ranks sum to ranks, and every link with ranks >= 2, a
 * bandwidth > 0 and finite, a latency >= 0, at least 2 points of growing
 * size and positive time. RF_EINVAL naming the link:
 *   "cluster.links[1] (all-gather, intra-node): bandwidth_bytes_per_s must
 *    be positive (0)". */
rf_status rf_cluster_validate(const rf_cluster *c, rf_err *err);

/* The links of rf_hw from the fits: up_fit / out_fit per collective, the
 * up (scale-up) figures from the intra-node all-reduce (bandwidth, and its
 * latency over its 2 (r-1) hops), out from the inter-node one, and
 * devices_per_node the fewest ranks a node. A class not measured takes the
 * other's figures under a name that says so ("not measured: ..."), so that
 * rf_par_compute has a link on each side; origin says what was measured,
 * over which sizes. No links measured: *out unchanged. */
void rf_cluster_links(const rf_cluster *c, rf_hw_links *out);

/* The measured time of a collective of `bytes` on f's link and ranks, read
 * from f's table as nccl-tests' tables are read: a measured size's own
 * time, linearly interpolated between the two sizes around it (exact for
 * times that are a latency plus a bandwidth term). 0 outside [min_bytes,
 * max_bytes] or without a table. */
double rf_link_fit_table_s(const rf_link_fit *f, uint64_t bytes);

/* A collective on a measured link: when f has a bandwidth, c's bandwidth
 * and per-hop alpha become f's (latency / hops of f's ranks, so a ring of
 * f->ranks costs the measured latency) and c->link f's name, or its
 * "extrapolated" name (with the fit's rms residual) when c->bytes is
 * outside [min_bytes, max_bytes]. Within the range the table decides: both
 * terms are scaled by rf_link_fit_table_s / the fit's time at c->bytes,
 * so c costs the table's time on f->ranks ranks (and, on other rank counts,
 * the same bus bandwidth); past it the fit alone extrapolates.
 * Otherwise c is unchanged. Called by the parallel model before it costs c. */
void rf_link_fit_apply(const rf_link_fit *f, rf_coll *c);

#ifdef __cplusplus
}
#endif
#endif
