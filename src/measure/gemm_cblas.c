/* gemm_cblas.c - one GEMM (or GEMV) shape timed through CBLAS (OpenBLAS),
 * with W rotated over enough copies that no call finds it in the
 * last-level cache, and sampled outputs checked against a reference dot. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "measure_internal.h"
#include "roofline/rf_op.h"

void rf_gemm_place(const rf_gemm_bench_result *g, const rf_roof *roof, rf_gemm_placed *out)
{
    memset(out, 0, sizeof *out);
    out->point = rf_roof_place(roof, (double)g->flops, (double)g->bytes);
    double best = g->flops_per_s.best, b = rf_dtype_bits(g->dtype) / 8.0;
    if (g->flops_per_s.median > 0)
        out->time_s_median = (double)g->flops / g->flops_per_s.median;
    if (out->point.attainable_flops_per_s > 0)
        out->of_roof = best / out->point.attainable_flops_per_s;
    if (roof->peak_flops_per_s > 0)
        out->of_peak = best / roof->peak_flops_per_s;
    if (roof->bw_bytes_per_s > 0)
        out->of_bw_2b = best / (roof->bw_bytes_per_s * 2 / b);
}

#define CHECK_SAMPLES 16

/* OpenBLAS's bf16 routines exist only in a build with BUILD_BFLOAT16 (the
 * header declares them either way; Debian's 0.3.21 lacks them): looked up in
 * the loaded library, never linked. bfloat16 is OpenBLAS's uint16_t. */
typedef void (*sbgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                          blasint, blasint, float, const uint16_t *, blasint, const uint16_t *,
                          blasint, float, float *, blasint);
typedef void (*sbgemv_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, blasint, blasint, float,
                          const uint16_t *, blasint, const uint16_t *, blasint, float, float *,
                          blasint);

/* POSIX guarantees a function's address survives the round trip through
 * void * (as cuda_lt.c resolves cuBLASLt). */
static sbgemm_fn sbgemm(void)
{
    sbgemm_fn f = NULL;
    void *p = dlsym(RTLD_DEFAULT, "cblas_sbgemm");
    memcpy(&f, &p, sizeof p);
    return f;
}

static sbgemv_fn sbgemv(void)
{
    sbgemv_fn f = NULL;
    void *p = dlsym(RTLD_DEFAULT, "cblas_sbgemv");
    memcpy(&f, &p, sizeof p);
    return f;
}

const char *rf_gemm_routine(rf_dtype_kind dtype, bool gemv)
{
    switch (dtype) {
    case RF_BF16:
        return gemv ? "cblas_sbgemv" : "cblas_sbgemm";
    case RF_FP32:
        return gemv ? "cblas_sgemv" : "cblas_sgemm";
    case RF_FP64:
        return gemv ? "cblas_dgemv" : "cblas_dgemm";
    default:
        return "-";
    }
}

rf_status rf_gemm_dtype_check(rf_dtype_kind dtype, rf_err *err)
{
    if (dtype == RF_FP32 || dtype == RF_FP64)
        return RF_OK;
    if (dtype == RF_BF16) {
        if (sbgemm() && sbgemv())
            return RF_OK;
        return rf_err_set(err, RF_EUNAVAIL,
                          "no bf16 GEMM in this OpenBLAS: cblas_sbgemm is not in the library "
                          "loaded (%s), which was built without BUILD_BFLOAT16",
                          openblas_get_config());
    }
    return rf_err_set(err, RF_EUNAVAIL,
                      "no %s GEMM in OpenBLAS: its CBLAS has fp32 (sgemm), fp64 (dgemm) and, "
                      "when built with BUILD_BFLOAT16, bf16 (sbgemm)",
                      rf_dtype_name(dtype));
}

/* Bytes an element of the inputs (W, X) and of the output Y. */
static uint64_t in_bytes(rf_dtype_kind dt) { return dt == RF_FP64 ? 8 : dt == RF_BF16 ? 2 : 4; }
static uint64_t out_bytes(rf_dtype_kind dt) { return dt == RF_FP64 ? 8 : 4; }

typedef struct gemm_job {
    const rf_gemm_bench_opts *o;
    int64_t m, k, n;
    uint32_t copies;
    uint32_t next;    /* copy of W the next call uses                 */
    uint32_t last;    /* copy of W the last call used                 */
    void *w, *x, *y;  /* (copies, N, K), (M, K), (M, N)              */
    size_t w_elems;   /* N K                                           */
    sbgemm_fn gemm16; /* bf16: the routines found in the library       */
    sbgemv_fn gemv16;
} gemm_job;

static void gemm_call(gemm_job *j)
{
    int m = (int)j->m, k = (int)j->k, n = (int)j->n;
    j->last = j->next;
    j->next = (j->next + 1) % j->copies;
    size_t off = (size_t)j->last * j->w_elems;
    if (j->o->dtype == RF_BF16) {
        const uint16_t *w = (const uint16_t *)j->w + off;
        if (j->o->gemv)
            j->gemv16(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w, k, j->x, 1, 0.0f, j->y, 1);
        else
            j->gemm16(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, j->x, k, w, k, 0.0f,
                      j->y, n);
    } else if (j->o->dtype == RF_FP32) {
        const float *w = (const float *)j->w + off;
        if (j->o->gemv)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w, k, j->x, 1, 0.0f, j->y, 1);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, j->x, k, w, k, 0.0f,
                        j->y, n);
    } else {
        const double *w = (const double *)j->w + off;
        if (j->o->gemv)
            cblas_dgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0, w, k, j->x, 1, 0.0, j->y, 1);
        else
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, j->x, k, w, k, 0.0,
                        j->y, n);
    }
}

static double gemm_trial(void *p, uint64_t reps)
{
    gemm_job *j = p;
    double t0 = rf_time_now_s();
    for (uint64_t r = 0; r < reps; r++)
        gemm_call(j);
    return rf_time_now_s() - t0;
}

/* fp32 to bf16, rounded to nearest even (finite values only). */
static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Values in [-1, 1) from a 64-bit LCG: cheap, deterministic, not zero. */
static void fill(void *data, size_t n, rf_dtype_kind dt, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(s >> 11) * 0x1.0p-52 - 1.0;
        if (dt == RF_BF16)
            ((uint16_t *)data)[i] = to_bf16((float)v);
        else if (dt == RF_FP32)
            ((float *)data)[i] = (float)v;
        else
            ((double *)data)[i] = v;
    }
}

/* Element i of an input (dt) or, with dt the output's, of Y. */
static double elem(const void *data, size_t i, rf_dtype_kind dt)
{
    return dt == RF_BF16   ? from_bf16(((const uint16_t *)data)[i])
           : dt == RF_FP32 ? ((const float *)data)[i]
                           : ((const double *)data)[i];
}

/* Worst |y - ref| / sum |x w| over sampled outputs of the last call. */
static double check_error(const gemm_job *j)
{
    rf_dtype_kind dt = j->o->dtype, yt = dt == RF_BF16 ? RF_FP32 : dt;
    const char *w = (const char *)j->w + (size_t)j->last * j->w_elems * in_bytes(dt);
    double worst = 0;
    for (int s = 0; s < CHECK_SAMPLES; s++) {
        size_t row = (size_t)((uint64_t)s * 2654435761u % (uint64_t)j->m);
        size_t col = (size_t)((uint64_t)s * 40503u % (uint64_t)j->n);
        if (s == CHECK_SAMPLES - 1)
            row = (size_t)j->m - 1, col = (size_t)j->n - 1;
        long double ref = 0, mag = 0;
        for (size_t kk = 0; kk < (size_t)j->k; kk++) {
            long double p = (long double)elem(j->x, row * (size_t)j->k + kk, dt) *
                            elem(w, col * (size_t)j->k + kk, dt);
            ref += p;
            mag += fabsl(p);
        }
        double got = elem(j->y, row * (size_t)j->n + col, yt);
        double e = mag > 0 ? (double)(fabsl((long double)got - ref) / mag) : fabs(got);
        if (!(e <= worst))
            worst = e; /* a NaN output makes worst NaN, which fails the check */
    }
    return worst;
}

/* The FLOP rates, and the byte rates they imply (Q / F per FLOP). */
static void set_rates(rf_gemm_bench_result *g, const rf_stats *flops)
{
    double per_flop = (double)g->bytes / (double)g->flops;
    g->flops_per_s = *flops;
    g->bytes_per_s = *flops;
    g->bytes_per_s.best *= per_flop;
    g->bytes_per_s.median *= per_flop;
    g->bytes_per_s.min *= per_flop;
    g->bytes_per_s.max *= per_flop;
}

rf_status rf_gemm_bench_merge(rf_gemm_bench_result *into, const rf_gemm_bench_result *more,
                              rf_err *err)
{
    if (into->flops_per_s.n == 0) { /* the first pass */
        *into = *more;
        return RF_OK;
    }
    if (into->m != more->m || into->k != more->k || into->n != more->n ||
        into->dtype != more->dtype || into->routine != more->routine)
        return rf_err_set(err, RF_EINVAL, "merging %s %lldx%lldx%lld with another shape",
                          into->routine ? into->routine : "?", (long long)into->m,
                          (long long)into->k, (long long)into->n);
    size_t n = into->flops_per_s.n, m = more->flops_per_s.n;
    if (n + m > RF_STATS_MAX)
        return rf_err_set(err, RF_ERANGE, "%s: %zu trials (at most %d)", into->routine, n + m,
                          RF_STATS_MAX);
    memcpy(into->sample + n, more->sample, m * sizeof more->sample[0]);
    rf_stats st;
    rf_status s = rf_stats_of(into->sample, n + m, &st, err);
    if (s != RF_OK)
        return s;
    set_rates(into, &st);
    if (!(more->max_rel_err <= into->max_rel_err))
        into->max_rel_err = more->max_rel_err;
    return RF_OK;
}

static rf_status check_opts(const rf_gemm_bench_opts *o, rf_err *err)
{
    rf_status s = rf_gemm_dtype_check(o->dtype, err);
    if (s != RF_OK)
        return s;
    if (o->m < 1 || o->k < 1 || o->n < 1 || o->m > INT_MAX || o->k > INT_MAX || o->n > INT_MAX)
        return rf_err_set(err, RF_EINVAL, "GEMM %lldx%lldx%lld: each dimension must be 1..%d",
                          (long long)o->m, (long long)o->k, (long long)o->n, INT_MAX);
    if (o->gemv && o->m != 1)
        return rf_err_set(err, RF_EINVAL, "GEMV needs M = 1, not %lld", (long long)o->m);
    if (o->threads < 1)
        return rf_err_set(err, RF_EINVAL, "BLAS threads (%d) must be positive", o->threads);
    return RF_OK;
}

/* The copies of W to rotate, and N halved until X, Y and the copies fit
 * (checked sums: a product that overflows cannot fit either); *scaled when
 * N was reduced. b bytes an element. */
static rf_status fit_job(const rf_gemm_bench_opts *o, gemm_job *j, bool *scaled, rf_err *err)
{
    const uint64_t b = in_bytes(o->dtype), yb = out_bytes(o->dtype);
    for (;;) {
        uint64_t kn, mk, mn, w_bytes = 0, total = 0, all_w = 0;
        bool sized = rf_mul_u64((uint64_t)j->k, (uint64_t)j->n, &kn) &&
                     rf_mul_u64(kn, b, &w_bytes) &&
                     rf_mul_u64((uint64_t)j->m, (uint64_t)j->k, &mk) &&
                     rf_mul_u64((uint64_t)j->m, (uint64_t)j->n, &mn) && rf_mul_u64(mk, b, &mk) &&
                     rf_mul_u64(mn, yb, &mn) && rf_add_u64(mk, mn, &total);
        uint64_t copies = sized && o->cold_bytes ? (o->cold_bytes + w_bytes - 1) / w_bytes : 1;
        copies = copies < 1 ? 1 : copies > 4096 ? 4096 : copies;
        bool fits = sized && rf_mul_u64(copies, w_bytes, &all_w) &&
                    rf_add_u64(total, all_w, &total) &&
                    (!o->mem_limit_bytes || total <= o->mem_limit_bytes);
        if (fits) {
            j->copies = (uint32_t)copies;
            return RF_OK;
        }
        if (j->n == 1)
            return rf_err_set(err, RF_ENOMEM,
                              "GEMM %lldx%lldx%lld does not fit in %llu B even with N = 1",
                              (long long)o->m, (long long)o->k, (long long)o->n,
                              (unsigned long long)o->mem_limit_bytes);
        j->n = (j->n + 1) / 2;
        *scaled = true;
    }
}

/* W's copies, X and Y allocated and filled: one copy of W from the
 * generator, the others copied (the values do not matter to the timing,
 * and a copy is ten times faster to make). The caller frees them. */
static rf_status alloc_job(gemm_job *j, rf_err *err)
{
    rf_dtype_kind dt = j->o->dtype;
    const uint64_t b = in_bytes(dt), yb = out_bytes(dt);
    j->w_elems = (size_t)j->k * (size_t)j->n;
    j->w = rf__alloc_untouched((uint64_t)j->copies * j->w_elems * b);
    j->x = rf__alloc_untouched((uint64_t)j->m * (uint64_t)j->k * b);
    j->y = rf__alloc_untouched((uint64_t)j->m * (uint64_t)j->n * yb);
    if (!j->w || !j->x || !j->y)
        return rf_err_set(err, RF_ENOMEM, "cannot allocate GEMM %lldx%lldx%lld with %u copies of W",
                          (long long)j->m, (long long)j->k, (long long)j->n, j->copies);
    fill(j->w, j->w_elems, dt, 1);
    for (uint32_t c = 1; c < j->copies; c++)
        memcpy((char *)j->w + (size_t)c * j->w_elems * b, j->w, j->w_elems * b);
    fill(j->x, (size_t)j->m * (size_t)j->k, dt, 2);
    memset(j->y, 0, (size_t)j->m * (size_t)j->n * yb);
    return RF_OK;
}

rf_status rf_gemm_bench(const rf_gemm_bench_opts *o, rf_gemm_bench_result *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    rf_status s = check_opts(o, err);
    if (s != RF_OK)
        return s;
    const rf_dtype_kind dt = o->dtype;
    gemm_job j = {.o = o, .m = o->m, .k = o->k, .n = o->n, .copies = 1};
    if (dt == RF_BF16)
        j.gemm16 = sbgemm(), j.gemv16 = sbgemv();
    rf_op op;
    if ((s = fit_job(o, &j, &out->scaled, err)) ||
        (s = rf_op_gemm("gemm", j.m, j.k, j.n, rf_dtype_of(dt), rf_dtype_of(dt), &op, err)))
        return s;
    if ((s = alloc_job(&j, err)))
        goto done;
    openblas_set_num_threads(o->threads);

    out->dtype = o->dtype;
    out->m = j.m;
    out->k = j.k;
    out->n = j.n;
    out->copies = j.copies;
    out->routine = rf_gemm_routine(dt, o->gemv);
    out->flops = op.flops;
    out->bytes = op.bytes;
    rf_measurement m;
    s = rf__time_kernel(gemm_trial, &j, (double)op.flops, o->timing, &m, err);
    if (s != RF_OK)
        goto done;
    memcpy(out->sample, m.sample, m.rate.n * sizeof m.sample[0]);
    set_rates(out, &m.rate);
    out->max_rel_err = check_error(&j);
    /* bf16 products are exact in fp32 and summed in fp32: fp32's bound */
    double tol = dt == RF_FP64 ? 1e-9 : 1e-3;
    if (!(out->max_rel_err <= tol))
        s = rf_err_set(err, RF_EINTERNAL, "%s %lldx%lldx%lld: sampled output off by %.3g (> %g)",
                       out->routine, (long long)j.m, (long long)j.k, (long long)j.n,
                       out->max_rel_err, tol);
done:
    free(j.w);
    free(j.x);
    free(j.y);
    return s;
}
