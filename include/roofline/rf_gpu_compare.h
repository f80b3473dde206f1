/* rf_gpu_compare.h - two calibrations in the kernel tables' format (rf_gpu.h)
 * set side by side, operator by operator (gpu_compare.c, core).
 *
 * Typically A is measured on a GPU (`measure --device cuda --calibrate -o
 * DIR`) and B derived from published tables (data/gpu/<gpu>/<engine>). Every
 * row of A, at its own keys, is predicted from B as --predict would predict
 * it (rf_gpu_predict: B's ratio to the floor, interpolated in the log of
 * each key, on the common roof), and the two set in a ratio
 *     rho = t_A / t_B(keys of the A row)
 * (rho > 1: A is slower than B there). Rows are grouped by their table and
 * categorical keys (a GEMM dtype, attention's dtypes and window). A row
 * whose kind or categorical values B has no rows of is on B's floor
 * (RF_GPU_NO_TABLE): it is counted, and kept out of the group's ratios,
 * which then say only how far A sits above the floor. */
#ifndef RF_GPU_COMPARE_H
#define RF_GPU_COMPARE_H

#include <stddef.h>

#include "rf_error.h"
#include "rf_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rf_gpu_cmp_row {
    rf_gpu_kind kind;
    size_t row;        /* the row in A's table of that kind            */
    size_t group;      /* in rf_gpu_cmp.group                          */
    double a_s;        /* A's measured latency, seconds                */
    rf_gpu_pred b;     /* B's prediction at A's keys                    */
    double ratio;      /* a_s / b.time_s                                */
    double over_floor; /* a_s / b.floor_s: A against the common floor   */
} rf_gpu_cmp_row;

#define RF_GPU_CMP_MAX_GROUPS 32

typedef struct rf_gpu_cmp_group {
    rf_gpu_kind kind;
    char cats[96];                     /* A's categorical values, space-separated       */
    size_t n;                          /* rows of A                                     */
    size_t n_how[RF_GPU_NO_TABLE + 1]; /* by B's provenance                 */
    /* Over the rows B has a table for (n - n_how[RF_GPU_NO_TABLE]); 0 when
     * none: */
    double ratio_median, ratio_min, ratio_max;
    double over_floor_median; /* over every row of the group                */
} rf_gpu_cmp_group;

typedef struct rf_gpu_cmp {
    rf_gpu_cmp_row *rows; /* the caller's array, n_rows filled             */
    size_t n_rows;
    rf_gpu_cmp_group group[RF_GPU_CMP_MAX_GROUPS];
    size_t n_groups;
    size_t n_how[RF_GPU_NO_TABLE + 1]; /* over every row                    */
    double ratio_median;               /* over the rows B has a table for; 0 when none  */
} rf_gpu_cmp;

/* Rows A holds over its tables: the length of rows and scratch below. */
size_t rf_gpu_compare_len(const rf_gpu_tables *a);

/* Compare A with B (both read on the same roof: rf_gpu_tables_load with one
 * hw), every row of every table of A in kind order, then its own (sorted)
 * order. rows and scratch hold cap >= rf_gpu_compare_len(a) entries each
 * (scratch: doubles for the medians). Errors: RF_ERANGE for cap too small or
 * more than RF_GPU_CMP_MAX_GROUPS groups; those of rf_gpu_predict. */
rf_status rf_gpu_compare(const rf_gpu_tables *a, const rf_gpu_tables *b, rf_gpu_cmp_row *rows,
                         double *scratch, size_t cap, rf_gpu_cmp *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
