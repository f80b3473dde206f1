/* closed_loop.c - a closed loop's TTFT factor at a concurrency
 * (rf_closed_loop.h). */
#include <math.h>

#include "roofline/rf_closed_loop.h"

double rf_closed_loop_factor(const rf_closed_loop *l, double c, bool *extrapolated)
{
    if (extrapolated)
        *extrapolated = c < l->c_min || c > l->c_max;
    if (c <= l->c[0])
        return l->f[0];
    if (c >= l->c[l->n - 1])
        return l->f[l->n - 1];
    int i = 1;
    while (l->c[i] < c)
        i++;
    if (l->c[i] == c) /* a point: its own factor, not a rounded product */
        return l->f[i];
    double w = log(c / l->c[i - 1]) / log(l->c[i] / l->c[i - 1]);
    return l->f[i - 1] * pow(l->f[i] / l->f[i - 1], w);
}

rf_closed_loop_ttft rf_closed_loop_apply(const rf_closed_loop *l, double c, double t1_s,
                                         double sim_mean_s, double sim_p90_s)
{
    rf_closed_loop_ttft t = {.mean_s = sim_mean_s, .p90_s = sim_p90_s};
    bool outside = true;
    if (!l)
        return t;
    t.f = rf_closed_loop_factor(l, c, &outside);
    if (outside)
        return t;
    t.applied = true;
    t.mean_s = t.f * t1_s;
    if (sim_mean_s > 0)
        t.p90_s = sim_p90_s * t.mean_s / sim_mean_s;
    return t;
}
