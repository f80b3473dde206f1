/* cuda_calib.c - `measure --device cuda --calibrate`: every kind of call a
 * forward pass is made of, timed on the GPU over the plan's shapes
 * (cuda_calib_plan.c), checked against a CPU reference, and fitted by the
 * core's rf_calib_fit_all into p->calib (rf_cuda.h says what is timed). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_kernels.h"

#define GROUP (RF_CUDA_CALIB_NQ / RF_CUDA_CALIB_NKV)
#define FREE_RESERVE_BYTES ((uint64_t)256 << 20)
/* A bf16 output is rounded to 2^-9 of itself; 2^-7 leaves room for the
 * fp32 arithmetic before it. */
#define REL_TOL 0.0078125
#define ABS_TOL 1e-3
/* Attention: beside REL_TOL, 5% of the output's own noise scale
 * sqrt(sum_j p_j^2 v_j^2); attending to the wrong keys errs by ~1.4 of it. */
#define ATTN_SCALE_TOL 0.05

typedef struct calib_run {
    rf_cuda_ctx *ctx;
    const rf_cuda_calib_opts *o;
    rf_cuda_calib_plan pl;
    rf_cuda_timing t;
    rf_calib *c;
    int done, total;
} calib_run;

static void progress(calib_run *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void progress(calib_run *r, const char *fmt, ...)
{
    char what[96], line[128];
    va_list ap;
    r->done++;
    if (!r->o->progress)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "calibrating [%3d/%3d] %s", r->done, r->total, what);
    r->o->progress(r->o->user, line);
}

static float bf16_value(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static rf_status room_for(const calib_run *r, uint64_t bytes, const char *what, rf_err *err)
{
    rf_status st = RF_OK;
    size_t free_b = 0, total_b = 0;
    RF__CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (bytes + FREE_RESERVE_BYTES > free_b)
        st = rf_err_set(err, RF_ENOMEM, "calibration: %s needs %.2f GB, cuda:%d has %.2f GB free",
                        what, (double)(bytes + FREE_RESERVE_BYTES) / 1e9, r->ctx->dev.index,
                        (double)free_b / 1e9);
done:
    return st;
}

/* Copy n bf16 values at device p (element offset at) to host h. */
static rf_status fetch(uint16_t *h, const void *p, uint64_t at, uint64_t n, rf_err *err)
{
    rf_status st = RF_OK;
    RF__CUDA_TRY(cudaMemcpy(h, (const uint16_t *)p + at, n * 2, cudaMemcpyDeviceToHost));
done:
    return st;
}

/* ---- GEMMs: cuBLASLt, W rotated past L2 ----------------------------------- */

static rf_status gemms(calib_run *r, rf_err *err)
{
    rf_status st = RF_OK;
    for (size_t s = 0; s < r->pl.n_gemm; s++) {
        int64_t K = r->pl.gemm[s][0], N = r->pl.gemm[s][1];
        for (size_t i = 0; i < r->pl.n_m; i++) {
            int64_t M = r->pl.m[i];
            rf_cuda_gemm_result g;
            progress(r, "gemm M=%lld K=%lld N=%lld", (long long)M, (long long)K, (long long)N);
            RF__TRY(rf_cuda_gemm_time(r->ctx, RF_CUDA_GEMM_CUBLASLT, RF_BF16, M, K, N, &r->t, NULL,
                                      &g, err));
            RF__TRY(rf_cuda_calib_add(r->c, RF_CALIB_GEMM, K, N, M, (double)g.flops,
                                      (double)g.bytes, g.time_s_median, err));
        }
    }
done:
    return st;
}

rf_status rf_cuda_calib_gemm_dtype(rf_cuda_ctx *ctx, const rf_cuda_calib_opts *o, rf_dtype_kind dt,
                                   rf_calib *c, int *skipped, rf_err *err)
{
    static const rf_cuda_calib_opts none;
    rf_status st = RF_OK;
    o = o ? o : &none;
    memset(c, 0, sizeof *c);
    *skipped = 0;
    RF__TRY(rf__cuda_ctx_enter(ctx, err));
    RF__TRY(rf_cuda_gemm_supported(ctx, RF_CUDA_GEMM_CUBLASLT, dt, 16, err));
    c->version = RF_CALIB_VERSION;
    snprintf(c->backend, sizeof c->backend, "cuda:%d cuBLASLt %s, %.24s", ctx->dev.index,
             rf_dtype_name(dt), ctx->dev.name);
    calib_run r = {.ctx = ctx,
                   .o = o,
                   .pl = rf_cuda_calib_plan_of(o->quick),
                   .t = rf_cuda_timing_default(o->quick),
                   .c = c};
    r.total = (int)(r.pl.n_gemm * r.pl.n_m);
    for (size_t s = 0; s < r.pl.n_gemm; s++) {
        int64_t K = r.pl.gemm[s][0], N = r.pl.gemm[s][1];
        for (size_t i = 0; i < r.pl.n_m; i++) {
            int64_t M = r.pl.m[i];
            rf_cuda_gemm_result g;
            progress(&r, "gemm %s M=%lld K=%lld N=%lld", rf_dtype_name(dt), (long long)M,
                     (long long)K, (long long)N);
            st = rf_cuda_gemm_time(ctx, RF_CUDA_GEMM_CUBLASLT, dt, M, K, N, &r.t, NULL, &g, err);
            if (st == RF_EUNAVAIL) { /* no algorithm for this shape: left out */
                (*skipped)++;
                st = RF_OK;
                continue;
            }
            if (st != RF_OK)
                goto done;
            RF__TRY(rf_cuda_calib_add(c, RF_CALIB_GEMM, K, N, M, (double)g.flops, (double)g.bytes,
                                      g.time_s_median, err));
        }
    }
done:
    return st;
}

/* ---- attention ------------------------------------------------------------ */

typedef struct attn_run {
    bool decode;
    int64_t batch, keys, dh; /* keys = tokens in prefill */
    int split;
    uint16_t *q, *k, *v, *out;
    float *part;
} attn_run;

static rf_status attn_call(rf_cuda_ctx *ctx, void *user, int64_t i, rf_err *err)
{
    (void)i; /* K and V exceed 4 x L2 (decode) or are a prefill's own */
    const attn_run *a = user;
    cudaError_t e =
        a->decode
            ? rf__cuda_attn_decode_bf16(a->q, a->k, a->v, a->out, a->part, a->batch, a->keys,
                                        RF_CUDA_CALIB_NKV, GROUP, (int)a->dh, a->split, ctx->stream)
            : rf__cuda_attn_prefill_bf16(a->q, a->k, a->v, a->out, a->keys, RF_CUDA_CALIB_NKV,
                                         GROUP, (int)a->dh, ctx->stream);
    return e == cudaSuccess
               ? RF_OK
               : rf__cuda_fail(err, e, a->decode ? "attn_decode_bf16" : "attn_prefill_bf16");
}

/* The G query heads of KV head h at one query (q_at: its first row of d
 * values), against keys 0..n-1 of k and v (rows of d from kv_at): each
 * output against a double-precision softmax. */
static rf_status attn_check_one(const attn_run *a, uint64_t q_at, uint64_t kv_at, int64_t n,
                                const char *what, rf_err *err)
{
    rf_status st = RF_OK;
    const int64_t d = a->dh;
    uint16_t *hq = malloc((size_t)(GROUP * d) * 2), *ho = malloc((size_t)(GROUP * d) * 2);
    uint16_t *hk = malloc((size_t)(n * d) * 2), *hv = malloc((size_t)(n * d) * 2);
    double *p = malloc((size_t)n * sizeof *p);
    if (!hq || !ho || !hk || !hv || !p) {
        st = rf_err_set(err, RF_ENOMEM, "calibration: out of host memory for the %s check", what);
        goto done;
    }
    RF__TRY(fetch(hq, a->q, q_at, (uint64_t)(GROUP * d), err));
    RF__TRY(fetch(ho, a->out, q_at, (uint64_t)(GROUP * d), err));
    RF__TRY(fetch(hk, a->k, kv_at, (uint64_t)(n * d), err));
    RF__TRY(fetch(hv, a->v, kv_at, (uint64_t)(n * d), err));
    for (int g = 0; g < GROUP; g++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t e = 0; e < d; e++)
                s += (double)bf16_value(hq[g * d + e]) * bf16_value(hk[j * d + e]);
            p[j] = s / sqrt((double)d);
            mx = p[j] > mx ? p[j] : mx;
        }
        for (int64_t j = 0; j < n; j++)
            sum += (p[j] = exp(p[j] - mx));
        for (int64_t e = 0; e < d; e++) {
            double ref = 0, sq = 0;
            for (int64_t j = 0; j < n; j++) {
                double pv = p[j] / sum * bf16_value(hv[j * d + e]);
                ref += pv;
                sq += pv * pv;
            }
            double y = bf16_value(ho[g * d + e]),
                   tol = REL_TOL * fabs(ref) + ATTN_SCALE_TOL * sqrt(sq);
            if (!(fabs(y - ref) <= tol)) {
                st = rf_err_set(err, RF_EINTERNAL,
                                "calibration: %s: head %d output %lld is "
                                "%.6g, the CPU reference %.6g (tolerance %.3g)",
                                what, g, (long long)e, y, ref, tol);
                goto done;
            }
        }
    }
done:
    free(hq);
    free(ho);
    free(hk);
    free(hv);
    free(p);
    return st;
}

static rf_status attn_check(const attn_run *a, const char *what, rf_err *err)
{
    const int64_t d = a->dh, h = RF_CUDA_CALIB_NKV - 1;
    if (a->decode) { /* the last sequence's last KV head */
        uint64_t b = (uint64_t)(a->batch - 1);
        return attn_check_one(a, (b * RF_CUDA_CALIB_NQ + (uint64_t)(h * GROUP)) * (uint64_t)d,
                              (b * RF_CUDA_CALIB_NKV + (uint64_t)h) * (uint64_t)(a->keys * d),
                              a->keys, what, err);
    }
    /* the first token (its own key alone) and the last (every key) */
    const int64_t ts[2] = {0, a->keys - 1};
    for (int i = 0; i < 2; i++) {
        uint64_t row = ((uint64_t)ts[i] * RF_CUDA_CALIB_NKV + (uint64_t)h) * GROUP;
        rf_status st =
            attn_check_one(a, row * (uint64_t)d, (uint64_t)(h * a->keys * d), ts[i] + 1, what, err);
        if (st != RF_OK)
            return st;
    }
    return RF_OK;
}

static rf_status attn_point(calib_run *r, bool decode, int64_t dh, int64_t x, rf_err *err)
{
    rf_status st = RF_OK;
    rf_cuda_ctx *ctx = r->ctx;
    attn_run a = {.decode = decode, .keys = x, .dh = dh};
    rf_calib_kind kind = decode ? RF_CALIB_ATTN_DECODE : RF_CALIB_ATTN_PREFILL;
    char what[64];
    snprintf(what, sizeof what, "%s d_h=%lld %s %lld", decode ? "decode" : "prefill", (long long)dh,
             decode ? "keys" : "tokens", (long long)x);
    progress(r, "%s", what);
    a.batch = decode ? rf_cuda_calib_decode_batch(x, dh, ctx->dev.l2_bytes) : 1;
    a.split = decode ? rf_cuda_attn_split(a.batch, RF_CUDA_CALIB_NKV, x, ctx->dev.sm_count) : 1;
    rf_op op;
    RF__TRY(rf_cuda_calib_op(kind, x, dh, a.batch, &op, err));
    uint64_t rows = (uint64_t)a.batch * (decode ? 1 : (uint64_t)x) * RF_CUDA_CALIB_NQ;
    uint64_t q_elems = rows * (uint64_t)dh;
    uint64_t kv_elems = (uint64_t)a.batch * RF_CUDA_CALIB_NKV * (uint64_t)x * (uint64_t)dh;
    uint64_t part_floats = decode ? rows * (uint64_t)a.split * (uint64_t)(dh + 2) : 1;
    RF__TRY(room_for(r, 2 * (2 * q_elems + 2 * kv_elems) + 4 * part_floats, what, err));
    RF__CUDA_TRY(cudaMalloc((void **)&a.q, q_elems * 2));
    RF__CUDA_TRY(cudaMalloc((void **)&a.out, q_elems * 2));
    RF__CUDA_TRY(cudaMalloc((void **)&a.k, kv_elems * 2));
    RF__CUDA_TRY(cudaMalloc((void **)&a.v, kv_elems * 2));
    RF__CUDA_TRY(cudaMalloc((void **)&a.part, part_floats * 4));
    ctx->seed += 3;
    RF__CUDA_TRY(
        rf__cuda_fill_random(a.q, (int64_t)q_elems, RF__CUDA_ELEM_BF16, ctx->seed, ctx->stream));
    RF__CUDA_TRY(rf__cuda_fill_random(a.k, (int64_t)kv_elems, RF__CUDA_ELEM_BF16, ctx->seed + 1,
                                      ctx->stream));
    RF__CUDA_TRY(rf__cuda_fill_random(a.v, (int64_t)kv_elems, RF__CUDA_ELEM_BF16, ctx->seed + 2,
                                      ctx->stream));
    /* all-ones bits: NaN, so an output the kernel did not write fails */
    RF__CUDA_TRY(cudaMemsetAsync(a.out, 0xff, q_elems * 2, ctx->stream));
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
    rf__cuda_timed tm;
    RF__TRY(rf__cuda_time(ctx, attn_call, &a, 1, &r->t, &tm, err));
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
    RF__TRY(attn_check(&a, what, err));
    RF__TRY(rf_cuda_calib_add(r->c, kind, dh, 0, x, (double)op.flops, (double)op.bytes, tm.median_s,
                              err));
done:
    (void)cudaFree(a.q); /* cudaFree(NULL) does nothing */
    (void)cudaFree(a.out);
    (void)cudaFree(a.k);
    (void)cudaFree(a.v);
    (void)cudaFree(a.part);
    return st;
}

/* ---- element-wise kernels and the copy ------------------------------------ */

/* Buffers a, b, y: `copies` sets at `stride` bytes, rotated call by call
 * so that together they exceed 4 x L2 (rf_cuda_rotation_copies): what one
 * call reads comes from device memory, as the floor counts it. */
typedef struct ew_run {
    rf_calib_kind kind;
    int64_t rows, width; /* of the op (a copy: 1)                    */
    uint64_t n;          /* elements of a, b, y (a copy: its 16-byte vectors) */
    uint8_t *a, *b, *w, *y;
    size_t stride; /* bytes between the sets                    */
    int64_t copies;
    int grid, block; /* copy_v16's launch */
} ew_run;

static rf_status ew_call(rf_cuda_ctx *ctx, void *user, int64_t i, rf_err *err)
{
    const ew_run *e = user;
    size_t at = (size_t)(i % e->copies) * e->stride;
    uint8_t *a = e->a + at, *b = e->b ? e->b + at : NULL, *y = e->y + at;
    cudaError_t c = cudaSuccess;
    switch (e->kind) {
    case RF_CALIB_NORM:
        c = rf__cuda_rmsnorm_bf16(a, e->w, y, e->rows, e->width, ctx->stream);
        break;
    case RF_CALIB_ROPE:
        c = rf__cuda_rope_bf16(a, e->rows, e->width / 128, 128, ctx->stream);
        break;
    case RF_CALIB_ACT:
        c = rf__cuda_silu_mul_bf16(a, b, y, (int64_t)e->n, ctx->stream);
        break;
    case RF_CALIB_RESIDUAL:
        c = rf__cuda_add_bf16(a, b, y, (int64_t)e->n, ctx->stream);
        break;
    default:
        c = rf__cuda_copy_v16(a, y, (int64_t)e->n, e->grid, e->block, ctx->stream);
        break;
    }
    return c == cudaSuccess ? RF_OK : rf__cuda_fail(err, c, rf_calib_kind_name(e->kind));
}

/* One call on fresh inputs, every output against the CPU (small sizes). */
static rf_status ew_check(rf_cuda_ctx *ctx, ew_run *e, const char *what, rf_err *err)
{
    rf_status st = RF_OK;
    uint64_t n = e->kind == RF_CALIB_COPY ? e->n * 8 : e->n; /* bf16 values */
    uint16_t *ha = malloc(n * 2), *hb = malloc(n * 2), *hy = malloc(n * 2);
    uint16_t *hw = malloc((size_t)e->width * 2);
    if (!ha || !hb || !hy || !hw) {
        st = rf_err_set(err, RF_ENOMEM, "calibration: out of host memory for the %s check", what);
        goto done;
    }
    RF__TRY(fetch(ha, e->a, 0, n, err));
    if (e->b)
        RF__TRY(fetch(hb, e->b, 0, n, err));
    if (e->w)
        RF__TRY(fetch(hw, e->w, 0, (uint64_t)e->width, err));
    RF__TRY(ew_call(ctx, e, 0, err));
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
    RF__TRY(fetch(hy, e->kind == RF_CALIB_ROPE ? e->a : e->y, 0, n, err));
    for (uint64_t i = 0; i < n; i++) {
        double a = bf16_value(ha[i]), ref = 0;
        uint64_t col = i % (uint64_t)e->width;
        switch (e->kind) {
        case RF_CALIB_NORM: {
            double sq = 0;
            for (uint64_t j = i - col; j < i - col + (uint64_t)e->width; j++)
                sq += (double)bf16_value(ha[j]) * bf16_value(ha[j]);
            ref = a / sqrt(sq / (double)e->width + 1e-6) * bf16_value(hw[col]);
            break;
        }
        case RF_CALIB_ROPE: { /* row r at position r + 1, pairs (c, c + 64) of a head */
            uint64_t r = i / (uint64_t)e->width, c = col % 128, lo = i - c;
            uint64_t pair = c % 64;
            double th = (double)(r + 1) * pow(10000.0, -2.0 * (double)pair / 128.0);
            double x1 = bf16_value(ha[lo + pair]), x2 = bf16_value(ha[lo + pair + 64]);
            ref = c < 64 ? x1 * cos(th) - x2 * sin(th) : x2 * cos(th) + x1 * sin(th);
            break;
        }
        case RF_CALIB_ACT:
            ref = a / (1 + exp(-a)) * bf16_value(hb[i]);
            break;
        case RF_CALIB_RESIDUAL:
            ref = a + bf16_value(hb[i]);
            break;
        default:
            ref = a;
        }
        double y = bf16_value(hy[i]);
        double tol = e->kind == RF_CALIB_COPY ? 0 : REL_TOL * fabs(ref) + ABS_TOL;
        if (!(fabs(y - ref) <= tol) || (e->kind == RF_CALIB_COPY && hy[i] != ha[i])) {
            st = rf_err_set(err, RF_EINTERNAL,
                            "calibration: %s: output %llu is %.6g, the CPU "
                            "reference %.6g (tolerance %.3g)",
                            what, (unsigned long long)i, y, ref, tol);
            goto done;
        }
    }
done:
    free(ha);
    free(hb);
    free(hy);
    free(hw);
    return st;
}

static rf_status ew_point(calib_run *r, rf_calib_kind kind, int64_t x, bool check, rf_err *err)
{
    rf_status st = RF_OK;
    rf_cuda_ctx *ctx = r->ctx;
    ew_run e = {.kind = kind};
    char what[64];
    snprintf(what, sizeof what, "%s %s %lld", rf_calib_kind_name(kind),
             kind == RF_CALIB_COPY ? "bytes" : "elements", (long long)x);
    progress(r, "%s", what);
    rf_op op;
    RF__TRY(rf_cuda_calib_op(kind, x, 0, 1, &op, err));
    e.rows = op.m, e.width = op.n;
    uint64_t bytes; /* of a, b and y each */
    if (kind == RF_CALIB_COPY) {
        bytes = (uint64_t)x / 2; /* x counts the read and the write */
        e.n = bytes / 16;
        e.width = 1;
        RF__CUDA_TRY(rf__cuda_stream_shape(0, ctx->dev.sm_count, &e.grid, &e.block));
    } else {
        e.n = (uint64_t)op.m * (uint64_t)op.n;
        bytes = e.n * 2;
    }
    bool two = kind == RF_CALIB_ACT || kind == RF_CALIB_RESIDUAL;
    e.stride = (bytes + 255) / 256 * 256;
    size_t free_b = 0, total_b = 0;
    RF__CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    e.copies = (int64_t)rf_cuda_rotation_copies((two ? 3 : 2) * (uint64_t)e.stride,
                                                ctx->dev.l2_bytes, free_b, FREE_RESERVE_BYTES);
    uint64_t all = (uint64_t)e.copies * e.stride;
    RF__TRY(room_for(r, (two ? 3 : 2) * all + (uint64_t)e.width * 2, what, err));
    RF__CUDA_TRY(cudaMalloc((void **)&e.a, all));
    RF__CUDA_TRY(cudaMalloc((void **)&e.y, all));
    ctx->seed += 3;
    RF__CUDA_TRY(
        rf__cuda_fill_random(e.a, (int64_t)(all / 2), RF__CUDA_ELEM_BF16, ctx->seed, ctx->stream));
    RF__CUDA_TRY(cudaMemsetAsync(e.y, 0xff, all, ctx->stream));
    if (two) {
        RF__CUDA_TRY(cudaMalloc((void **)&e.b, all));
        RF__CUDA_TRY(rf__cuda_fill_random(e.b, (int64_t)(all / 2), RF__CUDA_ELEM_BF16,
                                          ctx->seed + 1, ctx->stream));
    }
    if (kind == RF_CALIB_NORM) {
        RF__CUDA_TRY(cudaMalloc((void **)&e.w, (size_t)e.width * 2));
        RF__CUDA_TRY(
            rf__cuda_fill_random(e.w, e.width, RF__CUDA_ELEM_BF16, ctx->seed + 2, ctx->stream));
    }
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
    if (check)
        RF__TRY(ew_check(ctx, &e, what, err));
    rf__cuda_timed tm;
    RF__TRY(rf__cuda_time(ctx, ew_call, &e, e.copies, &r->t, &tm, err));
    RF__TRY(rf_cuda_calib_add(r->c, kind, 0, 0, x, (double)op.flops, (double)op.bytes, tm.median_s,
                              err));
done:
    (void)cudaFree(e.a);
    (void)cudaFree(e.b);
    (void)cudaFree(e.w);
    (void)cudaFree(e.y);
    return st;
}

rf_status rf_cuda_calibrate(rf_cuda_ctx *ctx, const rf_cuda_calib_opts *o, rf_hw_profile *p,
                            rf_err *err)
{
    static const rf_cuda_calib_opts none;
    static const rf_calib_kind ew[] = {RF_CALIB_NORM, RF_CALIB_ROPE, RF_CALIB_ACT,
                                       RF_CALIB_RESIDUAL};
    rf_status st = RF_OK;
    rf_calib *c = &p->calib;
    o = o ? o : &none;
    memset(c, 0, sizeof *c);
    if (!(p->peak_flops_per_s[RF_BF16] > 0) || !(p->bandwidth_bytes_per_s > 0))
        return rf_err_set(err, RF_EINVAL,
                          "calibration: the profile has no bf16 peak or memory roof");
    RF__TRY(rf__cuda_ctx_enter(ctx, err));
    c->version = RF_CALIB_VERSION;
    c->bw_bytes_per_s = p->bandwidth_sustained_bytes_per_s > 0 ? p->bandwidth_sustained_bytes_per_s
                                                               : p->bandwidth_bytes_per_s;
    c->peak_flops_per_s = p->peak_flops_per_s[RF_BF16];
    snprintf(c->backend, sizeof c->backend, "cuda:%d cuBLASLt bf16, %.24s", ctx->dev.index,
             ctx->dev.name);
    snprintf(c->date, sizeof c->date, "%s", p->date);
    calib_run r = {.ctx = ctx,
                   .o = o,
                   .pl = rf_cuda_calib_plan_of(o->quick),
                   .t = rf_cuda_timing_default(o->quick),
                   .c = c};
    r.total = (int)rf_cuda_calib_plan_points(&r.pl);
    RF__TRY(gemms(&r, err));
    for (size_t d = 0; d < r.pl.n_head_dims; d++) {
        for (size_t i = 0; i < r.pl.n_keys; i++)
            RF__TRY(attn_point(&r, true, r.pl.head_dims[d], r.pl.keys[i], err));
        for (size_t i = 0; i < r.pl.n_tokens; i++)
            RF__TRY(attn_point(&r, false, r.pl.head_dims[d], r.pl.tokens[i], err));
    }
    for (size_t k = 0; k < sizeof ew / sizeof ew[0]; k++)
        for (size_t i = 0; i < r.pl.n_elems; i++)
            RF__TRY(ew_point(&r, ew[k], r.pl.elems[i], i == 0, err));
    for (size_t i = 0; i < r.pl.n_copy; i++)
        RF__TRY(ew_point(&r, RF_CALIB_COPY, r.pl.copy_bytes[i], i == 0, err));
    RF__TRY(rf_calib_fit_all(c, err));
done:
    if (st != RF_OK)
        c->version = 0;
    return st;
}
