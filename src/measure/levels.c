/* levels.c - cache levels found in a read-bandwidth sweep (see
 * rf_levels_detect in rf_measure.h for the rule). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_measure.h"

#define DRAM_SIDE 1.6  /* slower than this x DRAM: past the last cache  */
#define SAME_LEVEL 0.9 /* a run within 10% of its neighbour: one level  */
#define STEEP_FALL 0.9 /* over 10% below the point before: falling      */
#define MAX_POINTS 128

/* Sum of squared deviations of x[a..b) from their mean. */
static double run_cost(const double *x, size_t a, size_t b)
{
    double sum = 0, sq = 0;
    for (size_t i = a; i < b; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    double n = (double)(b - a);
    return sq - sum * sum / n;
}

/* Cut x[0..n) into k runs of at least min_len points (k * min_len <= n)
 * minimising the summed cost; cuts[0..k] receive the run starts with
 * cuts[k] = n. */
static void best_cuts(const double *x, size_t n, size_t k, size_t min_len, size_t *cuts)
{
    static const double inf = 1e300;
    double cost[RF_HW_PROFILE_MAX_LEVELS + 1][MAX_POINTS + 1];
    size_t from[RF_HW_PROFILE_MAX_LEVELS + 1][MAX_POINTS + 1];
    for (size_t j = 0; j <= n; j++)
        cost[0][j] = j == 0 ? 0 : inf;
    for (size_t r = 1; r <= k; r++)
        for (size_t j = 0; j <= n; j++) {
            cost[r][j] = inf;
            for (size_t i = 0; i + min_len <= j; i++) {
                if (cost[r - 1][i] >= inf)
                    continue;
                double c = cost[r - 1][i] + run_cost(x, i, j);
                if (c < cost[r][j]) {
                    cost[r][j] = c;
                    from[r][j] = i;
                }
            }
        }
    cuts[k] = n;
    for (size_t r = k; r > 0; r--)
        cuts[r - 1] = from[r][cuts[r]];
}

/* Best point of [first, end), leaving out points next to an edge when the
 * run is long enough to spare them. */
static size_t figure_point(const rf_measurement *sweep, size_t first, size_t end, bool edge_before,
                           bool edge_after)
{
    size_t lo = first, hi = end;
    if (edge_before && hi - lo >= 3)
        lo++;
    if (edge_after && hi - lo >= 2)
        hi--;
    size_t best = lo;
    for (size_t i = lo; i < hi; i++)
        if (sweep[i].rate.best > sweep[best].rate.best)
            best = i;
    return best;
}

/* A point in the middle of a steep fall, more than 10% below the point
 * before it and more than 10% above the one after it (the DRAM figure after
 * the last), belongs to no plateau: its set straddles two levels. */
static bool on_edge(const rf_measurement *sweep, size_t n, const rf_measurement *dram, size_t i)
{
    if (i == 0)
        return false;
    double prev = sweep[i - 1].rate.best, here = sweep[i].rate.best;
    double next = i + 1 < n ? sweep[i + 1].rate.best : dram->rate.best;
    return here < STEEP_FALL * prev && next < STEEP_FALL * here;
}

rf_status rf_levels_detect(const rf_measurement *sweep, size_t n, const rf_measurement *dram,
                           int cache_levels, rf_levels *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    if (cache_levels < 1 || cache_levels > RF_HW_PROFILE_MAX_LEVELS - 1)
        return rf_err_set(err, RF_EINVAL, "cache levels (%d) must be 1..%d", cache_levels,
                          RF_HW_PROFILE_MAX_LEVELS - 1);
    if (n > MAX_POINTS)
        return rf_err_set(err, RF_ERANGE, "%zu sweep points (at most %d)", n, MAX_POINTS);
    for (size_t i = 1; i < n; i++)
        if (sweep[i].bytes <= sweep[i - 1].bytes)
            return rf_err_set(err, RF_EINVAL, "sweep point %zu (%llu B) does not grow", i,
                              (unsigned long long)sweep[i].bytes);

    /* 0. the points on an edge, 1. the cache region: up to the last point
     * off an edge well above DRAM */
    bool edge[MAX_POINTS];
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        edge[i] = on_edge(sweep, n, dram, i);
        if (sweep[i].rate.best >= DRAM_SIDE * dram->rate.best && !edge[i])
            c = i + 1;
    }

    /* 2. plateaus of log bandwidth, over the points off an edge */
    size_t idx[MAX_POINTS], m = 0;
    for (size_t i = 0; i < c; i++)
        if (!edge[i])
            idx[m++] = i;
    size_t runs = m < (size_t)cache_levels ? m : (size_t)cache_levels;
    size_t cuts[RF_HW_PROFILE_MAX_LEVELS + 1] = {0};
    if (runs > 0) {
        double x[MAX_POINTS];
        for (size_t j = 0; j < m; j++)
            x[j] = log(sweep[idx[j]].rate.best > 0 ? sweep[idx[j]].rate.best : 1);
        /* a plateau is two points or more: one point alone is an edge */
        best_cuts(x, m, runs, m >= 2 * runs ? 2 : 1, cuts);
        for (size_t r = 0; r < runs; r++)
            cuts[r] = idx[cuts[r]]; /* a fall between two runs ends the first */
        cuts[runs] = c;
    }

    /* 3. merge neighbours within 10%, 4. each level's figure */
    size_t point[RF_HW_PROFILE_MAX_LEVELS];
    for (;;) {
        for (size_t r = 0; r < runs; r++)
            point[r] = figure_point(sweep, cuts[r], cuts[r + 1], r > 0, true);
        size_t merge = runs;
        for (size_t r = 0; r + 1 < runs && merge == runs; r++)
            if (sweep[point[r + 1]].rate.best > SAME_LEVEL * sweep[point[r]].rate.best)
                merge = r + 1;
        if (merge == runs)
            break;
        for (size_t r = merge; r < runs; r++)
            cuts[r] = cuts[r + 1];
        runs--;
    }

    for (size_t r = 0; r < runs; r++) {
        rf_hw_profile_level *l = &out->level[r];
        snprintf(l->name, sizeof l->name, "L%d", (int)r + 1);
        l->bandwidth_bytes_per_s = sweep[point[r]].rate.best;
        l->bytes = sweep[point[r]].bytes;
        out->point[r] = point[r];
        out->first[r] = cuts[r];
        out->end[r] = cuts[r + 1];
    }
    rf_hw_profile_level *d = &out->level[runs];
    snprintf(d->name, sizeof d->name, "DRAM");
    d->bandwidth_bytes_per_s = dram->rate.best;
    d->bytes = dram->bytes;
    out->point[runs] = n;
    out->first[runs] = c;
    out->end[runs] = n;
    out->n = runs + 1;
    return RF_OK;
}
