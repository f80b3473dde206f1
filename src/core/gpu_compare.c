/* gpu_compare.c - two calibrations in the kernel tables' format, operator
 * by operator (rf_gpu_compare.h). */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_gpu_compare.h"
#include "sorted.h"

size_t rf_gpu_compare_len(const rf_gpu_tables *a)
{
    size_t n = 0;
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++)
        n += a->t[k].present ? a->t[k].n_rows : 0;
    return n;
}

/* The group of row r of t (its kind and categorical values), made when new. */
static rf_status group_of(rf_gpu_cmp *out, const rf_gpu_table *t, size_t r, size_t *g, rf_err *err)
{
    char cats[sizeof out->group[0].cats] = "";
    size_t len = 0;
    for (size_t d = 0; d < t->n_keys; d++) {
        if (!t->col[d].categorical)
            continue;
        const char *v = t->col[d].values[(size_t)t->key[r * t->n_keys + d]];
        int n = snprintf(cats + len, sizeof cats - len, "%s%s", len ? " " : "", v);
        len = n < 0 ? len : len + (size_t)n < sizeof cats ? len + (size_t)n : sizeof cats - 1;
    }
    for (*g = 0; *g < out->n_groups; (*g)++)
        if (out->group[*g].kind == t->kind && !strcmp(out->group[*g].cats, cats))
            return RF_OK;
    if (out->n_groups == RF_GPU_CMP_MAX_GROUPS)
        return rf_err_set(err, RF_ERANGE,
                          "calibration comparison: more than %d groups of "
                          "table and dtypes",
                          RF_GPU_CMP_MAX_GROUPS);
    rf_gpu_cmp_group *grp = &out->group[out->n_groups++];
    memset(grp, 0, sizeof *grp);
    grp->kind = t->kind;
    memcpy(grp->cats, cats, sizeof cats);
    return RF_OK;
}

/* The group's and the whole comparison's medians and extremes. */
static void summarize(rf_gpu_cmp *out, double *scratch)
{
    for (size_t g = 0; g < out->n_groups; g++) {
        rf_gpu_cmp_group *grp = &out->group[g];
        size_t n = 0, m = 0;
        for (size_t i = 0; i < out->n_rows; i++) {
            const rf_gpu_cmp_row *row = &out->rows[i];
            if (row->group != g || row->b.how == RF_GPU_NO_TABLE)
                continue;
            double x = row->ratio;
            grp->ratio_min = n && grp->ratio_min < x ? grp->ratio_min : x;
            grp->ratio_max = n && grp->ratio_max > x ? grp->ratio_max : x;
            scratch[n++] = x;
        }
        grp->ratio_median = rf__median(scratch, n);
        for (size_t i = 0; i < out->n_rows; i++)
            if (out->rows[i].group == g)
                scratch[m++] = out->rows[i].over_floor;
        grp->over_floor_median = rf__median(scratch, m);
    }
    size_t n = 0;
    for (size_t i = 0; i < out->n_rows; i++)
        if (out->rows[i].b.how != RF_GPU_NO_TABLE)
            scratch[n++] = out->rows[i].ratio;
    out->ratio_median = rf__median(scratch, n);
}

rf_status rf_gpu_compare(const rf_gpu_tables *a, const rf_gpu_tables *b, rf_gpu_cmp_row *rows,
                         double *scratch, size_t cap, rf_gpu_cmp *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    out->rows = rows;
    if (cap < rf_gpu_compare_len(a))
        return rf_err_set(err, RF_ERANGE,
                          "calibration comparison: room for %zu rows, %zu "
                          "needed",
                          cap, rf_gpu_compare_len(a));
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++) {
        const rf_gpu_table *t = &a->t[k];
        if (!t->present)
            continue;
        for (size_t r = 0; r < t->n_rows; r++) {
            double q[RF_GPU_MAX_KEYS];
            const char *cat[RF_GPU_MAX_KEYS];
            for (size_t d = 0; d < t->n_keys; d++) {
                q[d] = t->key[r * t->n_keys + d];
                cat[d] = t->col[d].categorical ? t->col[d].values[(size_t)q[d]] : NULL;
            }
            rf_gpu_cmp_row *row = &rows[out->n_rows];
            *row = (rf_gpu_cmp_row){.kind = t->kind, .row = r, .a_s = t->latency_s[r]};
            rf_status s = group_of(out, t, r, &row->group, err);
            if (s == RF_OK)
                s = rf_gpu_predict(b, t->kind, q, cat, &row->b, err);
            if (s != RF_OK)
                return s;
            row->ratio = row->a_s / row->b.time_s;
            row->over_floor = row->a_s / row->b.floor_s;
            out->group[row->group].n++;
            out->group[row->group].n_how[row->b.how]++;
            out->n_how[row->b.how]++;
            out->n_rows++;
        }
    }
    summarize(out, scratch);
    return RF_OK;
}
