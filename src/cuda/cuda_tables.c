/* cuda_tables.c - a GPU calibration's points as kernel tables (rf_cuda.h,
 * "The calibration as kernel tables"). Plain C with no CUDA header, built
 * with the backend and without it, so it is tested on any machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_cuda.h"

static const char *const table_dtypes[] = {
    [RF_BF16] = "bfloat16", [RF_FP16] = "float16", [RF_FP32] = "float32",
    [RF_TF32] = "tf32",     [RF_FP8_E4M3] = "fp8",
};

const char *rf_cuda_table_dtype(rf_dtype_kind dt)
{
    if ((unsigned)dt >= sizeof table_dtypes / sizeof table_dtypes[0])
        return NULL;
    return table_dtypes[dt];
}

/* The kind of table a calibration kind goes to, or RF_GPU_KIND_COUNT for
 * the copy; -1 for none. */
static int table_of(rf_calib_kind k)
{
    switch (k) {
    case RF_CALIB_GEMM:
        return RF_GPU_GEMM;
    case RF_CALIB_ATTN_DECODE:
        return RF_GPU_ATTN_GENERATION;
    case RF_CALIB_ATTN_PREFILL:
        return RF_GPU_ATTN_CONTEXT;
    case RF_CALIB_COPY:
        return RF_GPU_KIND_COUNT;
    default:
        return -1;
    }
}

/* The arrays of t for n rows (its columns set). */
static rf_status alloc_rows(rf_gpu_table *t, size_t n, rf_err *err)
{
    t->key = calloc(n * t->n_keys + 1, sizeof *t->key);
    t->latency_s = calloc(n + 1, sizeof *t->latency_s);
    t->ln_ratio = calloc(n + 1, sizeof *t->ln_ratio);
    t->line = calloc(n + 1, sizeof *t->line);
    if (!t->key || !t->latency_s || !t->ln_ratio || !t->line)
        return rf_err_set(err, RF_ENOMEM, "calibration tables: out of memory");
    return RF_OK;
}

/* The index of value v of categorical column c, interned when new. */
static double intern(rf_gpu_col *c, const char *v)
{
    for (size_t j = 0; j < c->n_values; j++)
        if (!strcmp(c->values[j], v))
            return (double)j;
    snprintf(c->values[c->n_values], sizeof c->values[0], "%s", v);
    return (double)c->n_values++;
}

/* Append a row: the categorical values in column order, then the numeric
 * keys in column order. */
static void add_row(rf_gpu_table *t, const char *const *cat, const double *num, double latency_s)
{
    double *k = &t->key[t->n_rows * t->n_keys];
    size_t ic = 0, in = 0;
    for (size_t d = 0; d < t->n_keys; d++)
        k[d] = t->col[d].categorical ? intern(&t->col[d], cat[ic++]) : num[in++];
    t->latency_s[t->n_rows] = latency_s;
    t->line[t->n_rows] = (int64_t)t->n_rows + 2; /* as the file written will hold it */
    t->n_rows++;
}

/* One point of series s as a row of t. */
static rf_status add_point(rf_gpu_table *t, const rf_calib_series *s, const rf_calib_point *p,
                           const char *dtype, uint64_t l2_bytes, rf_err *err)
{
    static const char *const attn_cats[] = {"bfloat16", "bfloat16", "0"};
    double x = (double)p->x;
    switch (s->kind) {
    case RF_CALIB_GEMM: { /* gemm_dtype / n, k, m */
        const double num[] = {(double)s->b, (double)s->a, x};
        add_row(t, &dtype, num, p->time_s);
        return RF_OK;
    }
    case RF_CALIB_ATTN_DECODE:
    case RF_CALIB_ATTN_PREFILL: { /* ... / head_dim, heads, kv heads, batch, step or isl */
        bool decode = s->kind == RF_CALIB_ATTN_DECODE;
        if (decode && p->x < 2)
            return rf_err_set(err, RF_EINVAL,
                              "calibration tables: attn_decode d_h=%lld at "
                              "%lld keys: a decode step needs 2 or more",
                              (long long)s->a, (long long)p->x);
        double batch = decode ? (double)rf_cuda_calib_decode_batch(p->x, s->a, l2_bytes) : 1;
        const double num[] = {(double)s->a, RF_CUDA_CALIB_NQ, RF_CUDA_CALIB_NKV, batch,
                              decode ? x - 1 : x};
        add_row(t, attn_cats, num, p->time_s);
        return RF_OK;
    }
    default: /* the copy: bytes */
        add_row(t, NULL, &x, p->time_s);
        return RF_OK;
    }
}

rf_status rf_cuda_calib_tables(const rf_cuda_calib_part *parts, size_t n_parts, uint64_t l2_bytes,
                               rf_gpu_tables *out, rf_gpu_table *copy, rf_err *err)
{
    size_t rows[RF_GPU_KIND_COUNT + 1] = {0};
    rf_status st = RF_OK;
    memset(out, 0, sizeof *out);
    memset(copy, 0, sizeof *copy);
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++) {
        out->t[k].kind = (rf_gpu_kind)k;
        out->t[k].n_keys = rf_gpu_kind_cols((rf_gpu_kind)k, out->t[k].col);
    }
    copy->kind = RF_GPU_KIND_COUNT;
    copy->n_keys = 1;
    copy->col[0] = (rf_gpu_col){.name = "bytes"};
    if (n_parts > RF_GPU_MAX_CATS)
        return rf_err_set(err, RF_EINVAL, "calibration tables: %zu parts, at most %d dtypes",
                          n_parts, RF_GPU_MAX_CATS);
    for (size_t i = 0; i < n_parts; i++) {
        if (!rf_cuda_table_dtype(parts[i].dtype))
            return rf_err_set(err, RF_EINVAL, "calibration tables: %s GEMMs have no table name",
                              rf_dtype_name(parts[i].dtype));
        for (size_t j = 0; j < parts[i].calib->n_series; j++) {
            const rf_calib_series *s = &parts[i].calib->series[j];
            int t = table_of(s->kind);
            if (t >= 0)
                rows[t] += s->n;
        }
    }
    for (int k = 0; k <= RF_GPU_KIND_COUNT && st == RF_OK; k++)
        if (rows[k])
            st = alloc_rows(k < RF_GPU_KIND_COUNT ? &out->t[k] : copy, rows[k], err);
    for (size_t i = 0; i < n_parts && st == RF_OK; i++) {
        const rf_calib *c = parts[i].calib;
        for (size_t j = 0; j < c->n_series && st == RF_OK; j++) {
            const rf_calib_series *s = &c->series[j];
            int t = table_of(s->kind);
            for (size_t p = 0; t >= 0 && p < s->n && st == RF_OK; p++)
                st = add_point(t < RF_GPU_KIND_COUNT ? &out->t[t] : copy, s, &s->pt[p],
                               rf_cuda_table_dtype(parts[i].dtype), l2_bytes, err);
        }
    }
    if (st != RF_OK) {
        for (int k = 0; k < RF_GPU_KIND_COUNT; k++) {
            free(out->t[k].key);
            free(out->t[k].latency_s);
            free(out->t[k].ln_ratio);
            free(out->t[k].line);
        }
        free(copy->key);
        free(copy->latency_s);
        free(copy->ln_ratio);
        free(copy->line);
        memset(out, 0, sizeof *out);
        memset(copy, 0, sizeof *copy);
    }
    return st;
}
