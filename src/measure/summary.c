/* summary.c - ridges, ratios and per-level rates derived from a profile. */
#include <stdio.h>
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
        out->peak_is_fp32[k] = k != RF_FP32 && i >= 0 && p->peak_flops_per_s[k] > p->kernels[i].best &&
                               p->peak_flops_per_s[k] == p->peak_flops_per_s[RF_FP32];
    }
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
