/* gpu_compare.c - `measure --compare-calibration A B`'s report: two folders
 * of kernel tables row by row (rf_gpu_compare), the ratios summed up by
 * table and dtype. */
#include <stdio.h>

#include "roofline/rf_view.h"

/* Row r of t's numeric keys as "name=value ...". */
static void keys_text(const rf_gpu_table *t, size_t r, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t d = 0; d < t->n_keys && len < cap; d++)
        if (!t->col[d].categorical) {
            int n = snprintf(out + len, cap - len, "%s%s=%.0f", len ? " " : "", t->col[d].name,
                             t->key[r * t->n_keys + d]);
            len += n > 0 ? (size_t)n : 0;
        }
}

rf_report *rf_view_gpu_compare(const char *floor_source, const char *a_dir, const char *b_dir,
                               const rf_gpu_tables *a, const rf_gpu_cmp *c)
{
    char title[1200];
    snprintf(title, sizeof title, "kernel tables compared: %s against %s", a_dir, b_dir);
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
    rf_report_assume(r,
                     "floors on %s; every row of %s predicted from %s as --predict "
                     "predicts (t = r x floor, ln r interpolated in the log of each key, "
                     "the edge's r outside the measured range)",
                     floor_source, a_dir, b_dir);
    rf_report_assume(r, "ratio = A / B: above 1, A is slower than B at that point; a row whose "
                        "table or dtypes B lacks is on B's floor (provenance 'floor (no "
                        "table)'), kept out of the ratios; over_floor = A / the floor");
    rf_report_section(r, "summary", "summary");
    rf_report_int(r, "rows", "rows of A", c->n_rows, RF_U_INT);
    rf_report_int(r, "rows_in_range", "  on a point B measured", c->n_how[RF_GPU_IN_RANGE],
                  RF_U_INT);
    rf_report_int(r, "rows_interpolated", "  between B's points", c->n_how[RF_GPU_INTERPOLATED],
                  RF_U_INT);
    rf_report_int(r, "rows_extrapolated", "  outside B's range", c->n_how[RF_GPU_EXTRAPOLATED],
                  RF_U_INT);
    rf_report_int(r, "rows_no_table", "  without a table in B", c->n_how[RF_GPU_NO_TABLE],
                  RF_U_INT);
    if (c->n_rows > c->n_how[RF_GPU_NO_TABLE])
        rf_report_num(r, "ratio_median", "median ratio A / B", c->ratio_median, RF_U_RATIO);
    else
        rf_report_null(r, "ratio_median", "median ratio A / B", "- (no row B has a table for)");
    rf_report_table(r, "groups", "by table and dtype");
    rf_report_col(r, "table", "table", RF_U_NONE);
    rf_report_col(r, "dtypes", "dtypes", RF_U_NONE);
    rf_report_col(r, "rows", "rows", RF_U_INT);
    rf_report_col(r, "in_range", "in range", RF_U_INT);
    rf_report_col(r, "interpolated", "interp.", RF_U_INT);
    rf_report_col(r, "extrapolated", "extrap.", RF_U_INT);
    rf_report_col(r, "no_table", "no table", RF_U_INT);
    rf_report_col(r, "ratio_median", "A/B median", RF_U_RATIO);
    rf_report_col(r, "ratio_min", "A/B min", RF_U_RATIO);
    rf_report_col(r, "ratio_max", "A/B max", RF_U_RATIO);
    rf_report_col(r, "over_floor_median", "A/floor median", RF_U_RATIO);
    for (size_t g = 0; g < c->n_groups; g++) {
        const rf_gpu_cmp_group *grp = &c->group[g];
        rf_report_row(r);
        rf_report_cell_str(r, rf_gpu_kind_name(grp->kind));
        rf_report_cell_str(r, grp->cats);
        rf_report_cell_int(r, grp->n);
        for (int h = 0; h <= RF_GPU_NO_TABLE; h++)
            rf_report_cell_int(r, grp->n_how[h]);
        if (grp->n > grp->n_how[RF_GPU_NO_TABLE]) {
            rf_report_cell_num(r, grp->ratio_median);
            rf_report_cell_num(r, grp->ratio_min);
            rf_report_cell_num(r, grp->ratio_max);
        } else {
            for (int i = 0; i < 3; i++)
                rf_report_cell_null(r, "-");
        }
        rf_report_cell_num(r, grp->over_floor_median);
    }
    rf_report_table(r, "rows", "row by row");
    rf_report_col(r, "table", "table", RF_U_NONE);
    rf_report_col(r, "dtypes", "dtypes", RF_U_NONE);
    rf_report_col(r, "keys", "keys", RF_U_NONE);
    rf_report_col(r, "a_s", "A", RF_U_SECONDS);
    rf_report_col(r, "b_s", "B", RF_U_SECONDS);
    rf_report_col(r, "ratio", "A/B", RF_U_RATIO);
    rf_report_col(r, "over_floor", "A/floor", RF_U_RATIO);
    rf_report_col(r, "b_provenance", "B from", RF_U_NONE);
    for (size_t i = 0; i < c->n_rows; i++) {
        const rf_gpu_cmp_row *row = &c->rows[i];
        char keys[256];
        keys_text(&a->t[row->kind], row->row, keys, sizeof keys);
        rf_report_row(r);
        rf_report_cell_str(r, rf_gpu_kind_name(row->kind));
        rf_report_cell_str(r, c->group[row->group].cats);
        rf_report_cell_str(r, keys);
        rf_report_cell_num(r, row->a_s);
        rf_report_cell_num(r, row->b.time_s);
        if (row->b.how == RF_GPU_NO_TABLE) /* B's floor: no ratio to B's measurement */
            rf_report_cell_null(r, "-");
        else
            rf_report_cell_num(r, row->ratio);
        rf_report_cell_num(r, row->over_floor);
        rf_report_cell_str(r, rf_gpu_how_name(row->b.how));
    }
    return r;
}
