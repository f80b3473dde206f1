/* cluster_io.h - a profile's "cluster" object (rf_cluster.h) as JSON, for
 * hw_profile.c (not public). */
#ifndef RF_CLUSTER_IO_H
#define RF_CLUSTER_IO_H

#include <jansson.h>

#include "roofline/rf_cluster.h"
#include "roofline/rf_error.h"

/* The cluster as an object: ranks, mpi, nodes [{name, ranks, devices,
 * bandwidth_bytes_per_s, peak_flops_per_s}], links [{class, collective,
 * ranks, latency_s, bandwidth_bytes_per_s, residual, min_bytes, max_bytes,
 * points [{bytes, time_s, median_s, iterations, algbw_bytes_per_s,
 * busbw_bytes_per_s}]}]. min_bytes, max_bytes, algbw and busbw are derived
 * (ignored on reading). NULL when out of memory. */
json_t *rf__cluster_json(const rf_cluster *c);

/* root's "cluster" into *out (absent: *out left all zero, not a cluster
 * profile), then rf_cluster_validate. RF_EINVAL naming origin and the key:
 *   "c.json: cluster.links[2] (all-to-all, intra-node): points is missing". */
rf_status rf__cluster_read(const char *origin, json_t *root, rf_cluster *out, rf_err *err);

#endif
