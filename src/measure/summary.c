/* summary.c - ridges, ratios and per-level rates derived from a profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_measure.h"

/* The index of the register kernel named ..._<dtype> (the one that measured
 * that dtype's peak), -1 if none. */
static int peak_kernel(const rf_hw_profile *p, rf_dtype_kind dt)
{
    const char *name = rf_dtype_name(dt);
    size_t n = strlen(name);
    for (size_t i = 0; i < p->n_kernels; i++) {
        const rf_hw_profile_kernel *k = &p->kernels[i];
        size_t len = strlen(k->name);
        if (!strcmp(k->unit, "flops_per_s") && !strcmp(k->level, "registers") && len > n &&
            k->name[len - n - 1] == '_' && !strcmp(k->name + len - n, name))
            return (int)i;
    }
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of n sorted values, linear between order statistics. */
static double quantile(const double *v, int n, double q)
{
    double at = q * (n - 1);
    int i = (int)at;
    return i + 1 < n ? v[i] + (at - i) * (v[i + 1] - v[i]) : v[n - 1];
}

static void roof_bursts(const rf_hw_profile *p, rf_hw_profile_summary *out)
{
    const rf_hw_profile_bursts *b = &p->dram_bursts;
    if (b->n < 1 || b->n > RF_HW_PROFILE_MAX_BURSTS)
        return;
    double v[RF_HW_PROFILE_MAX_BURSTS];
    memcpy(v, b->best, (size_t)b->n * sizeof v[0]);
    qsort(v, (size_t)b->n, sizeof v[0], cmp_double);
    out->roof_bursts = b->n;
    out->roof_trials = b->trials;
    out->roof_runs = b->runs;
    out->roof_low = v[0];
    out->roof_q1 = quantile(v, b->n, 0.25);
    out->roof_typical = quantile(v, b->n, 0.5);
    out->roof_q3 = quantile(v, b->n, 0.75);
    double roof = p->bandwidth_bytes_per_s;
    out->roof_low_below = roof > 0 ? (roof - v[0]) / roof : 0;
    out->roof_moves = out->roof_low_below > RF_ROOF_MOVES;
}

void rf_hw_profile_summarize(const rf_hw_profile *p, rf_hw_profile_summary *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < RF_DTYPE_COUNT; k++) {
        double peak = p->peak_flops_per_s[k];
        if (peak > 0 && p->bandwidth_bytes_per_s > 0)
            out->ridge[k] = peak / p->bandwidth_bytes_per_s;
        if (peak > 0 && p->theoretical_flops_per_s[k] > 0)
            out->of_theoretical[k] = peak / p->theoretical_flops_per_s[k];
        for (size_t l = 0; l < p->n_levels; l++)
            if (peak > 0 && p->levels[l].bandwidth_bytes_per_s > 0)
                out->level_ridge[l][k] = peak / p->levels[l].bandwidth_bytes_per_s;
    }
    for (size_t l = 0; l < p->n_levels; l++) {
        out->level_rate[l][RF_BW_READ] = p->levels[l].bandwidth_bytes_per_s;
        for (int b = RF_BW_COPY; b < RF_BW_COUNT; b++) {
            char name[64];
            rf_kernel_name(p->isa, rf_bw_desc_of((rf_bw_kind)b)->op, "f64", name, sizeof name);
            for (size_t i = 0; i < p->n_kernels; i++)
                if (!strcmp(p->kernels[i].name, name) &&
                    !strcmp(p->kernels[i].level, p->levels[l].name))
                    out->level_rate[l][b] = p->kernels[i].best;
        }
    }
    for (int k = 0; k < RF_DTYPE_COUNT; k++) {
        out->peak_kernel[k] = peak_kernel(p, (rf_dtype_kind)k);
        int i = out->peak_kernel[k];
        out->peak_is_fp32[k] = k != RF_FP32 && i >= 0 &&
                               p->peak_flops_per_s[k] > p->kernels[i].best &&
                               p->peak_flops_per_s[k] == p->peak_flops_per_s[RF_FP32];
    }
    roof_bursts(p, out);
    for (size_t i = 0; i < p->n_kernels; i++) {
        const rf_hw_profile_kernel *k = &p->kernels[i];
        double s = k->best > 0 ? (k->best - k->median) / k->best : 0;
        out->kernel_spread[i] = s;
        if (s > RF_SPREAD_WARN)
            out->unsteady++;
        if (s > out->kernel_spread[out->worst])
            out->worst = i;
    }
}

rf_status rf_hw_profile_merge(const rf_hw_profile *old, rf_hw_profile *p, rf_err *err)
{
    const char *what = strcmp(old->cpu, p->cpu)         ? "CPU"
                       : old->threads != p->threads     ? "threads"
                       : strcmp(old->isa, p->isa)       ? "kernels' ISA"
                       : strcmp(old->device, p->device) ? "device"
                                                        : NULL;
    if (what)
        return rf_err_set(err, RF_EINVAL,
                          "another machine or setup (%s: '%s' %d threads %s, this run '%s' %d "
                          "threads %s): merge only runs of the same one",
                          what, old->cpu, old->threads, old->isa, p->cpu, p->threads, p->isa);
    if (old->bandwidth_bytes_per_s > p->bandwidth_bytes_per_s) {
        p->bandwidth_bytes_per_s = old->bandwidth_bytes_per_s;
        if (p->n_levels)
            p->levels[p->n_levels - 1].bandwidth_bytes_per_s = old->bandwidth_bytes_per_s;
    }
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        if (old->peak_flops_per_s[k] > p->peak_flops_per_s[k])
            p->peak_flops_per_s[k] = old->peak_flops_per_s[k];
    /* the bursts, oldest first: the old run's, then this one's */
    const rf_hw_profile_bursts *ob = &old->dram_bursts;
    rf_hw_profile_bursts nb = p->dram_bursts, *b = &p->dram_bursts;
    int total = ob->n + nb.n,
        drop = total > RF_HW_PROFILE_MAX_BURSTS ? total - RF_HW_PROFILE_MAX_BURSTS : 0;
    b->n = 0;
    for (int i = drop; i < ob->n; i++)
        b->best[b->n++] = ob->best[i];
    for (int i = drop > ob->n ? drop - ob->n : 0; i < nb.n; i++)
        b->best[b->n++] = nb.best[i];
    b->runs = (ob->runs > 0 ? ob->runs : 1) + (nb.runs > 0 ? nb.runs : 1);
    if (!p->calib.version && old->calib.version)
        p->calib = old->calib;
    return RF_OK;
}
