/* cuda_gemm.c - GEMMs through cuBLASLt (and the bf16 GEMV kernel), checked
 * against a CPU reference, then timed.
 *
 * Layout. The model computes Y[M,N] = X[M,K] W^T with W stored as a linear
 * layer stores it: N rows of K, row-major. cuBLASLt is column-major, where
 * those same bytes are X^T (K x M, ld K), W^T (K x N, ld K) and Y^T
 * (N x M, ld N). So Y^T = op(A) B with A = W^T transposed (TRANSA = T),
 * B = X^T (TRANSB = N): cuBLASLt's m = N, n = M, k = K. This "TN" form is
 * also the one cuBLASLt requires for fp8.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_op.h"

#include "cuda_internal.h"
#include "cuda_kernels.h"

#define DIM_MAX ((int64_t)0x7fffffff)
#define CHECK_MAX_MACS ((uint64_t)1 << 26)
#define SPOT_CHECKS 16
#define ALIGN 256
#define FREE_RESERVE_BYTES ((uint64_t)256 << 20)
#define MAX_CANDIDATES 16

typedef struct gemm_types {
    rf__cuda_elem in, out;      /* storage of X and W, of Y   */
    size_t in_bytes, out_bytes; /* bytes of one element       */
    cudaDataType_t in_type, out_type;
    cublasComputeType_t compute;
} gemm_types;

typedef struct lt_plan {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c; /* W^T, X^T, Y^T (C and D share it) */
    cublasLtMatmulHeuristicResult_t algos[MAX_CANDIDATES];
    int n_algos;
    int algo; /* the candidate in use */
} lt_plan;

typedef struct gemm_run {
    rf_cuda_gemm_impl impl;
    rf_dtype_kind dt;
    gemm_types ty;
    int64_t m, k, n;
    uint8_t *x, *w, *y; /* device: `copies` sets, each at a stride */
    size_t x_stride, w_stride, y_stride;
    int copies;
    lt_plan plan;
} gemm_run;

static rf_status types_of(rf_dtype_kind dt, gemm_types *ty, rf_err *err)
{
    switch (dt) {
    case RF_FP32:
        *ty = (gemm_types){RF__CUDA_ELEM_F32, RF__CUDA_ELEM_F32, 4, 4, CUDA_R_32F,
                           CUDA_R_32F,        CUBLAS_COMPUTE_32F};
        return RF_OK;
    case RF_TF32:
        *ty = (gemm_types){RF__CUDA_ELEM_F32, RF__CUDA_ELEM_F32,           4, 4, CUDA_R_32F,
                           CUDA_R_32F,        CUBLAS_COMPUTE_32F_FAST_TF32};
        return RF_OK;
    case RF_BF16:
        *ty = (gemm_types){RF__CUDA_ELEM_BF16, RF__CUDA_ELEM_BF16, 2, 2, CUDA_R_16BF,
                           CUDA_R_16BF,        CUBLAS_COMPUTE_32F};
        return RF_OK;
    case RF_FP16:
        *ty = (gemm_types){RF__CUDA_ELEM_F16, RF__CUDA_ELEM_F16, 2, 2, CUDA_R_16F,
                           CUDA_R_16F,        CUBLAS_COMPUTE_32F};
        return RF_OK;
    case RF_FP8_E4M3:
        *ty = (gemm_types){RF__CUDA_ELEM_E4M3, RF__CUDA_ELEM_BF16, 1, 2, CUDA_R_8F_E4M3,
                           CUDA_R_16BF,        CUBLAS_COMPUTE_32F};
        return RF_OK;
    default:
        return rf_err_set(err, RF_EINVAL,
                          "the CUDA backend runs fp32, tf32, bf16, fp16 and fp8_e4m3 GEMMs, "
                          "not %s",
                          rf_dtype_name(dt));
    }
}

rf_status rf_cuda_gemm_supported(const rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt,
                                 int64_t m, rf_err *err)
{
    gemm_types ty;
    rf_status st = types_of(dt, &ty, err);
    if (st != RF_OK)
        return st;
    if (!ctx)
        return rf_err_set(err, RF_EINVAL, "no CUDA context");
    int sm = 10 * ctx->dev.cc_major + ctx->dev.cc_minor;
    if (impl == RF_CUDA_GEMM_GEMV) {
        if (dt != RF_BF16 || m != 1)
            return rf_err_set(err, RF_EINVAL,
                              "the gemv kernel runs bf16 with M = 1, not %s "
                              "with M = %lld",
                              rf_dtype_name(dt), (long long)m);
        return RF_OK;
    }
    if (impl != RF_CUDA_GEMM_CUBLASLT)
        return rf_err_set(err, RF_EINVAL, "unknown GEMM implementation %d", (int)impl);
    int need = dt == RF_FP8_E4M3 ? 89 : (dt == RF_BF16 || dt == RF_TF32) ? 80 : 0;
    if (sm < need)
        return rf_err_set(err, RF_EUNAVAIL, "%s needs sm_%d or newer; cuda:%d is sm_%d",
                          rf_dtype_name(dt), need, ctx->dev.index, sm);
    return RF_OK;
}

/* ---- Host side: decoding and the reference ------------------------------ */

static double half_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h >> 15) ? -v : v;
}

static double e4m3_value(uint8_t b)
{
    int e = (b >> 3) & 15, m = b & 7;
    double v = e == 15 && m == 7 ? NAN : e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
    return (b >> 7) ? -v : v;
}

static double host_value(const uint8_t *p, size_t i, rf__cuda_elem e)
{
    switch (e) {
    case RF__CUDA_ELEM_F32: {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    case RF__CUDA_ELEM_BF16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case RF__CUDA_ELEM_F16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return half_value(h);
    }
    default:
        return e4m3_value(p[i]);
    }
}

/* Error of one output y against the double-precision dot product of a row
 * of X and a row of W, in units of sqrt(sum_k (x_k w_k)^2): the size of the
 * output for random-sign inputs. Rounding errors are a small fraction of
 * it; a wrong operand or layout is about 1.4 of it, at any K. NaN stays
 * NaN so it fails every comparison. */
static double point_error(const uint8_t *xrow, const uint8_t *wrow, rf__cuda_elem e, int64_t k,
                          double y, double *ref_out)
{
    double ref = 0, sq = 0;
    for (int64_t i = 0; i < k; i++) {
        double p = host_value(xrow, (size_t)i, e) * host_value(wrow, (size_t)i, e);
        ref += p;
        sq += p * p;
    }
    *ref_out = ref;
    return fabs(y - ref) / sqrt(sq);
}

static rf_status point_fail(const gemm_run *r, int64_t i, int64_t j, double y, double ref, double e,
                            rf_err *err)
{
    return rf_err_set(err, RF_EINTERNAL,
                      "%s GEMM %lldx%lldx%lld (%s): output (%lld,%lld) is %.6g, the CPU "
                      "reference %.6g: error %.3g > tolerance %.3g",
                      rf_dtype_name(r->dt), (long long)r->m, (long long)r->k, (long long)r->n,
                      rf_cuda_gemm_impl_name(r->impl), (long long)i, (long long)j, y, ref, e,
                      rf_cuda_gemm_tolerance(r->dt));
}

/* ---- Buffers ------------------------------------------------------------ */

static size_t round_up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static void bufs_free(gemm_run *r)
{
    (void)cudaFree(r->x); /* cudaFree(NULL) does nothing */
    (void)cudaFree(r->w);
    (void)cudaFree(r->y);
    r->x = r->w = r->y = NULL;
}

/* Allocate X, W and Y; with rotate, as many copies as make the working set
 * >= 4 x L2 and fit the free memory (rf_cuda_rotation_copies). Inputs get fresh random
 * values; Y is all-ones bits (NaN in every output format), so an output
 * the GEMM did not write fails the check. */
static rf_status bufs_alloc(rf_cuda_ctx *ctx, gemm_run *r, bool rotate, rf_err *err)
{
    rf_status st = RF_OK;
    uint64_t xe, we, ye, xb, wb, yb;
    if (!rf_mul_u64((uint64_t)r->m, (uint64_t)r->k, &xe) ||
        !rf_mul_u64((uint64_t)r->n, (uint64_t)r->k, &we) ||
        !rf_mul_u64((uint64_t)r->m, (uint64_t)r->n, &ye) || !rf_mul_u64(xe, r->ty.in_bytes, &xb) ||
        !rf_mul_u64(we, r->ty.in_bytes, &wb) || !rf_mul_u64(ye, r->ty.out_bytes, &yb) ||
        xb > SIZE_MAX / 128 || wb > SIZE_MAX / 128 || yb > SIZE_MAX / 128)
        return rf_err_set(err, RF_ERANGE, "GEMM %lldx%lldx%lld: buffers beyond 64 bits",
                          (long long)r->m, (long long)r->k, (long long)r->n);
    r->x_stride = round_up((size_t)xb);
    r->w_stride = round_up((size_t)wb);
    r->y_stride = round_up((size_t)yb);
    uint64_t set = (uint64_t)r->x_stride + r->w_stride + r->y_stride;

    size_t free_b = 0, total_b = 0;
    RF__CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (set + FREE_RESERVE_BYTES > free_b) {
        st = rf_err_set(err, RF_ENOMEM,
                        "GEMM %lldx%lldx%lld %s needs %.2f GB, cuda:%d has %.2f GB "
                        "free",
                        (long long)r->m, (long long)r->k, (long long)r->n, rf_dtype_name(r->dt),
                        (double)(set + FREE_RESERVE_BYTES) / 1e9, ctx->dev.index,
                        (double)free_b / 1e9);
        goto done;
    }
    uint64_t copies =
        rotate ? rf_cuda_rotation_copies(set, ctx->dev.l2_bytes, free_b, FREE_RESERVE_BYTES) : 1;
    r->copies = (int)copies;
    RF__CUDA_TRY(cudaMalloc((void **)&r->x, copies * r->x_stride));
    RF__CUDA_TRY(cudaMalloc((void **)&r->w, copies * r->w_stride));
    RF__CUDA_TRY(cudaMalloc((void **)&r->y, copies * r->y_stride));
    ctx->seed += 2;
    RF__CUDA_TRY(rf__cuda_fill_random(r->x, (int64_t)(copies * r->x_stride / r->ty.in_bytes),
                                      r->ty.in, ctx->seed, ctx->stream));
    RF__CUDA_TRY(rf__cuda_fill_random(r->w, (int64_t)(copies * r->w_stride / r->ty.in_bytes),
                                      r->ty.in, ctx->seed + 1, ctx->stream));
    RF__CUDA_TRY(cudaMemsetAsync(r->y, 0xff, copies * r->y_stride, ctx->stream));
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
done:
    if (st != RF_OK)
        bufs_free(r);
    return st;
}

/* ---- cuBLASLt plan ------------------------------------------------------ */

static void plan_free(rf_cuda_ctx *ctx, lt_plan *p)
{
    if (p->a)
        (void)ctx->lt.layout_destroy(p->a);
    if (p->b)
        (void)ctx->lt.layout_destroy(p->b);
    if (p->c)
        (void)ctx->lt.layout_destroy(p->c);
    if (p->op)
        (void)ctx->lt.desc_destroy(p->op);
    memset(p, 0, sizeof *p);
}

/* Describe the GEMM to cuBLASLt and keep its first max_algos candidates
 * that fit the workspace. */
static rf_status plan_make(rf_cuda_ctx *ctx, gemm_run *r, int max_algos, rf_err *err)
{
    rf_status st = RF_OK;
    lt_plan *p = &r->plan;
    cublasLtMatmulPreference_t pref = NULL;
    const int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const uint64_t ws = RF__CUDA_LT_WORKSPACE_BYTES;
    cublasLtMatmulHeuristicResult_t found[MAX_CANDIDATES];
    int got = 0;
    memset(p, 0, sizeof *p);
    max_algos = max_algos > MAX_CANDIDATES ? MAX_CANDIDATES : max_algos;

    RF__LT_TRY(ctx, ctx->lt.desc_create(&p->op, r->ty.compute, CUDA_R_32F));
    RF__LT_TRY(ctx, ctx->lt.desc_set(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    RF__LT_TRY(ctx, ctx->lt.desc_set(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (r->dt == RF_FP8_E4M3) {
        /* Fast accumulation, as inference engines run fp8 forward GEMMs;
         * scales are left at their default of 1. */
        const int8_t fast = 1;
        RF__LT_TRY(ctx,
                   ctx->lt.desc_set(p->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    }
    RF__LT_TRY(ctx,
               ctx->lt.layout_create(&p->a, r->ty.in_type, (uint64_t)r->k, (uint64_t)r->n, r->k));
    RF__LT_TRY(ctx,
               ctx->lt.layout_create(&p->b, r->ty.in_type, (uint64_t)r->k, (uint64_t)r->m, r->k));
    RF__LT_TRY(ctx,
               ctx->lt.layout_create(&p->c, r->ty.out_type, (uint64_t)r->n, (uint64_t)r->m, r->n));
    RF__LT_TRY(ctx, ctx->lt.pref_create(&pref));
    RF__LT_TRY(ctx,
               ctx->lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasStatus_t s = ctx->lt.heuristic(ctx->lt_handle, p->op, p->a, p->b, p->c, p->c, pref,
                                         max_algos, found, &got);
    /* A refusal here (not supported, or a configuration cuBLASLt calls
     * invalid, such as fp8 with M = 1 on some versions) means this shape
     * cannot run on this device: unavailable, which callers skip with a note. */
    for (int i = 0; s == CUBLAS_STATUS_SUCCESS && i < got; i++)
        if (found[i].state == CUBLAS_STATUS_SUCCESS && found[i].workspaceSize <= ws)
            p->algos[p->n_algos++] = found[i];
    if (p->n_algos == 0)
        st = rf_err_set(
            err, RF_EUNAVAIL,
            "cuBLASLt has no algorithm for %s GEMM %lldx%lldx%lld on cuda:%d (sm_%d%d)%s%s",
            rf_dtype_name(r->dt), (long long)r->m, (long long)r->k, (long long)r->n, ctx->dev.index,
            ctx->dev.cc_major, ctx->dev.cc_minor, s == CUBLAS_STATUS_SUCCESS ? "" : ": ",
            s == CUBLAS_STATUS_SUCCESS ? "" : ctx->lt.status_string(s));
done:
    if (pref)
        (void)ctx->lt.pref_destroy(pref);
    if (st != RF_OK)
        plan_free(ctx, p);
    return st;
}

/* ---- One call ----------------------------------------------------------- */

static rf_status gemm_call(rf_cuda_ctx *ctx, void *user, int64_t i, rf_err *err)
{
    static const float one = 1.0f, zero = 0.0f;
    const gemm_run *r = user;
    size_t c = (size_t)(i % r->copies);
    const uint8_t *x = r->x + c * r->x_stride;
    const uint8_t *w = r->w + c * r->w_stride;
    uint8_t *y = r->y + c * r->y_stride;
    if (r->impl == RF_CUDA_GEMM_GEMV) {
        cudaError_t e = rf__cuda_gemv_bf16(w, x, y, r->n, r->k, ctx->stream);
        return e == cudaSuccess ? RF_OK : rf__cuda_fail(err, e, "gemv_bf16");
    }
    cublasStatus_t s =
        ctx->lt.matmul(ctx->lt_handle, r->plan.op, &one, w, r->plan.a, x, r->plan.b, &zero, y,
                       r->plan.c, y, r->plan.c, &r->plan.algos[r->plan.algo].algo, ctx->workspace,
                       RF__CUDA_LT_WORKSPACE_BYTES, ctx->stream);
    return s == CUBLAS_STATUS_SUCCESS ? RF_OK : rf__cuda_lt_fail(ctx, err, s, "cublasLtMatmul");
}

/* ---- Set-up shared by check and time ------------------------------------ */

static rf_status shape_check(int64_t m, int64_t k, int64_t n, rf_err *err)
{
    if (m < 1 || k < 1 || n < 1 || m > DIM_MAX || k > DIM_MAX || n > DIM_MAX)
        return rf_err_set(err, RF_EINVAL,
                          "GEMM %lldx%lldx%lld: each of M, K, N must be in "
                          "1..2147483647",
                          (long long)m, (long long)k, (long long)n);
    return RF_OK;
}

static rf_status run_open(rf_cuda_ctx *ctx, gemm_run *r, rf_cuda_gemm_impl impl, rf_dtype_kind dt,
                          int64_t m, int64_t k, int64_t n, rf_err *err)
{
    rf_status st = RF_OK;
    memset(r, 0, sizeof *r);
    r->impl = impl;
    r->dt = dt;
    r->m = m;
    r->k = k;
    r->n = n;
    RF__TRY(rf__cuda_ctx_enter(ctx, err));
    RF__TRY(shape_check(m, k, n, err));
    RF__TRY(rf_cuda_gemm_supported(ctx, impl, dt, m, err));
    RF__TRY(types_of(dt, &r->ty, err));
    if (impl == RF_CUDA_GEMM_CUBLASLT)
        RF__TRY(rf__cuda_lt_ready(ctx, err));
done:
    return st;
}

static void run_close(rf_cuda_ctx *ctx, gemm_run *r)
{
    if (r->plan.op)
        plan_free(ctx, &r->plan);
    bufs_free(r);
}

/* ---- The full check ----------------------------------------------------- */

rf_status rf_cuda_gemm_check(rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt, int64_t m,
                             int64_t k, int64_t n, double *max_err, rf_err *err)
{
    rf_status st = RF_OK;
    gemm_run r;
    uint8_t *hx = NULL, *hw = NULL, *hy = NULL;
    RF__TRY(run_open(ctx, &r, impl, dt, m, k, n, err));
    uint64_t macs = 0;
    if (!rf_mul_u64((uint64_t)m * (uint64_t)k, (uint64_t)n, &macs) || macs > CHECK_MAX_MACS) {
        st = rf_err_set(err, RF_EINVAL, "GEMM check %lldx%lldx%lld: M K N must be <= 2^26",
                        (long long)m, (long long)k, (long long)n);
        goto done;
    }
    RF__TRY(bufs_alloc(ctx, &r, false, err));
    if (impl == RF_CUDA_GEMM_CUBLASLT)
        RF__TRY(plan_make(ctx, &r, 1, err));
    RF__TRY(gemm_call(ctx, &r, 0, err));
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));

    size_t xb = (size_t)(m * k) * r.ty.in_bytes, wb = (size_t)(n * k) * r.ty.in_bytes;
    size_t yb = (size_t)(m * n) * r.ty.out_bytes;
    hx = malloc(xb);
    hw = malloc(wb);
    hy = malloc(yb);
    if (!hx || !hw || !hy) {
        st = rf_err_set(err, RF_ENOMEM, "out of host memory for the GEMM check");
        goto done;
    }
    RF__CUDA_TRY(cudaMemcpy(hx, r.x, xb, cudaMemcpyDeviceToHost));
    RF__CUDA_TRY(cudaMemcpy(hw, r.w, wb, cudaMemcpyDeviceToHost));
    RF__CUDA_TRY(cudaMemcpy(hy, r.y, yb, cudaMemcpyDeviceToHost));
    double worst = 0, tol = rf_cuda_gemm_tolerance(dt);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double ref = 0, y = host_value(hy, (size_t)(i * n + j), r.ty.out);
            double e = point_error(hx + (size_t)(i * k) * r.ty.in_bytes,
                                   hw + (size_t)(j * k) * r.ty.in_bytes, r.ty.in, k, y, &ref);
            if (!(e <= tol)) {
                st = point_fail(&r, i, j, y, ref, e, err);
                goto done;
            }
            worst = e > worst ? e : worst;
        }
    *max_err = worst;
done:
    free(hx);
    free(hw);
    free(hy);
    if (ctx)
        run_close(ctx, &r);
    return st;
}

/* ---- Spot check of a timed GEMM ---------------------------------------- */

/* Compare SPOT_CHECKS outputs of the first buffer set (corners included)
 * with the CPU reference; rows of X and W are copied as needed. */
static rf_status spot_check(rf_cuda_ctx *ctx, const gemm_run *r, double *worst, rf_err *err)
{
    rf_status st = RF_OK;
    size_t row_bytes = (size_t)r->k * r->ty.in_bytes;
    uint8_t *xrow = malloc(row_bytes), *wrow = malloc(row_bytes);
    uint8_t yv[4];
    uint64_t z = 0x9E3779B97F4A7C15ull;
    double tol = rf_cuda_gemm_tolerance(r->dt);
    *worst = 0;
    if (!xrow || !wrow) {
        st = rf_err_set(err, RF_ENOMEM, "out of host memory for the GEMM spot check");
        goto done;
    }
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
    for (int s = 0; s < SPOT_CHECKS; s++) {
        int64_t i, j;
        if (s == 0) {
            i = 0;
            j = 0;
        } else if (s == 1) {
            i = r->m - 1;
            j = r->n - 1;
        } else {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            i = (int64_t)((z >> 33) % (uint64_t)r->m);
            j = (int64_t)((z >> 11) % (uint64_t)r->n);
        }
        RF__CUDA_TRY(
            cudaMemcpy(xrow, r->x + (size_t)i * row_bytes, row_bytes, cudaMemcpyDeviceToHost));
        RF__CUDA_TRY(
            cudaMemcpy(wrow, r->w + (size_t)j * row_bytes, row_bytes, cudaMemcpyDeviceToHost));
        RF__CUDA_TRY(cudaMemcpy(yv, r->y + (size_t)(i * r->n + j) * r->ty.out_bytes,
                                r->ty.out_bytes, cudaMemcpyDeviceToHost));
        double ref = 0, y = host_value(yv, 0, r->ty.out);
        double e = point_error(xrow, wrow, r->ty.in, r->k, y, &ref);
        if (!(e <= tol)) {
            st = point_fail(r, i, j, y, ref, e, err);
            goto done;
        }
        *worst = e > *worst ? e : *worst;
    }
done:
    free(xrow);
    free(wrow);
    return st;
}

/* ---- Timing ------------------------------------------------------------- */

/* Time every cuBLASLt candidate briefly and keep the fastest. A candidate
 * that fails is skipped; if all fail, the last failure is returned. */
static rf_status pick_algo(rf_cuda_ctx *ctx, gemm_run *r, const rf_cuda_timing *t, int *tried,
                           rf_err *err)
{
    rf_cuda_timing brief = *t;
    brief.trials = 1;
    brief.warmup = 0;
    brief.min_trial_s = t->min_trial_s < 2e-3 ? t->min_trial_s : 2e-3;
    double best_s = INFINITY;
    int best = -1;
    rf_status st = RF_OK;
    *tried = 0;
    if (r->plan.n_algos == 1) {
        r->plan.algo = 0;
        *tried = 1;
        return RF_OK;
    }
    for (int a = 0; a < r->plan.n_algos; a++) {
        rf__cuda_timed tm;
        r->plan.algo = a;
        st = rf__cuda_time(ctx, gemm_call, r, r->copies, &brief, &tm, err);
        if (st != RF_OK)
            continue;
        ++*tried;
        if (tm.median_s < best_s) {
            best_s = tm.median_s;
            best = a;
        }
    }
    if (best < 0)
        return st;
    r->plan.algo = best;
    return RF_OK;
}

rf_status rf_cuda_gemm_time(rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt, int64_t m,
                            int64_t k, int64_t n, const rf_cuda_timing *t, const rf_roof *roof,
                            rf_cuda_gemm_result *out, rf_err *err)
{
    rf_status st = RF_OK;
    gemm_run r;
    int tried = 0;
    rf__cuda_timed tm;
    RF__TRY(run_open(ctx, &r, impl, dt, m, k, n, err));
    RF__TRY(rf__cuda_timing_check(t, err));

    uint64_t mk, nk, mn, flops, in_elems, in_bytes, out_bytes, bytes;
    if (!rf_mul_u64((uint64_t)m, (uint64_t)k, &mk) || !rf_mul_u64((uint64_t)n, (uint64_t)k, &nk) ||
        !rf_mul_u64((uint64_t)m, (uint64_t)n, &mn) || !rf_mul_u64(2 * mk, (uint64_t)n, &flops) ||
        !rf_add_u64(mk, nk, &in_elems) || !rf_mul_u64(in_elems, r.ty.in_bytes, &in_bytes) ||
        !rf_mul_u64(mn, r.ty.out_bytes, &out_bytes) || !rf_add_u64(in_bytes, out_bytes, &bytes)) {
        st = rf_err_set(err, RF_ERANGE, "GEMM %lldx%lldx%lld: FLOPs or bytes beyond 64 bits",
                        (long long)m, (long long)k, (long long)n);
        goto done;
    }

    RF__TRY(bufs_alloc(ctx, &r, true, err));
    if (impl == RF_CUDA_GEMM_CUBLASLT) {
        RF__TRY(plan_make(ctx, &r, t->max_algos, err));
        RF__TRY(pick_algo(ctx, &r, t, &tried, err));
    }
    RF__TRY(rf__cuda_time(ctx, gemm_call, &r, r.copies, t, &tm, err));

    memset(out, 0, sizeof *out);
    RF__TRY(spot_check(ctx, &r, &out->check_err, err));
    out->impl = impl;
    out->dtype = dt;
    out->out_dtype = rf_cuda_gemm_out_dtype(dt);
    out->m = m;
    out->k = k;
    out->n = n;
    out->flops = flops;
    out->bytes = bytes;
    out->intensity = (double)flops / (double)bytes;
    out->copies = r.copies;
    out->algos_tried = tried;
    out->reps = tm.reps;
    out->trials = tm.trials;
    out->time_s_median = tm.median_s;
    RF__TRY(rf__cuda_rate_of(&tm, (double)flops, &out->flops_per_s, err));
    RF__TRY(rf__cuda_rate_of(&tm, (double)bytes, &out->bw_bytes_per_s, err));
    if (roof) {
        rf_point p = rf_roof_place(roof, (double)flops, (double)bytes);
        out->roof_flops_per_s = p.attainable_flops_per_s;
        out->regime = p.regime;
        if (p.attainable_flops_per_s > 0) {
            out->of_roof = out->flops_per_s.best / p.attainable_flops_per_s;
            out->of_roof_median = out->flops_per_s.median / p.attainable_flops_per_s;
        }
    }
done:
    if (ctx)
        run_close(ctx, &r);
    return st;
}
