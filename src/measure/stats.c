/* stats.c - best, median, min, max and spread of repeated trials. */
#include <math.h>
#include <string.h>

#include "roofline/rf_measure.h"

static void sort_ascending(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

rf_status rf_stats_of(const double *samples, size_t n, rf_stats *out, rf_err *err)
{
    if (n == 0)
        return rf_err_set(err, RF_EINVAL, "statistics of no samples");
    if (n > RF_STATS_MAX)
        return rf_err_set(err, RF_ERANGE, "%zu samples (at most %d)", n, RF_STATS_MAX);
    double v[RF_STATS_MAX];
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(samples[i]) || samples[i] < 0)
            return rf_err_set(err, RF_EINVAL, "sample %zu (%g) is negative or not finite", i,
                              samples[i]);
        v[i] = samples[i];
    }
    sort_ascending(v, n);
    memset(out, 0, sizeof *out);
    out->n = n;
    out->min = v[0];
    out->max = v[n - 1];
    out->best = v[n - 1];
    out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    out->spread = out->best > 0 ? (out->best - out->median) / out->best : 0;
    return RF_OK;
}

bool rf_stats_unsteady(const rf_stats *s) { return s->spread > RF_SPREAD_WARN; }
