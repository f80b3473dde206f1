/* cuda_measure.c - a GPU's roofline as an rf_hw_profile: identity, checks,
 * bandwidth at L2 and device memory, and the peak matrix rate per dtype. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cuda_internal.h"

#define MIB ((uint64_t)1 << 20)
#define PEAK_DIM 8192
#define PEAK_DIM_QUICK 4096

/* The GEMM dtypes a profile can hold peaks for, in the order measured. */
static const rf_dtype_kind gemm_dtypes[] = {RF_FP32, RF_TF32, RF_BF16, RF_FP16, RF_FP8_E4M3};

/* Small shapes of the full check: every dimension a multiple of 16 (fp8's
 * requirement) and all different, so a swapped operand cannot pass; then
 * M = 1, the decode shape, and for the gemv kernel a K that is not a
 * multiple of 8 (its element-wise path). */
#define CHECK_M 48
#define CHECK_K 272
#define CHECK_N 80

/* Hand one formatted line to a callback (progress or note), if any. */
static void tell(void (*fn)(void *, const char *), void *user, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void tell(void (*fn)(void *, const char *), void *user, const char *fmt, ...)
{
    char line[RF_ERR_MSG_MAX + 64];
    va_list ap;
    if (!fn)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fn(user, line);
}

/* A dtype's check or peak did not go through: leave it out with a note if
 * cuBLASLt cannot run it (RF_EUNAVAIL) or its results were wrong
 * (RF_EINTERNAL); any other failure (memory, a CUDA fault) stops. */
static bool drop(const rf_cuda_measure_opts *o, rf_dtype_kind dt, rf_status st, const rf_err *err,
                 bool want[RF_DTYPE_COUNT])
{
    if (st != RF_EUNAVAIL && st != RF_EINTERNAL)
        return false;
    tell(o->note, o->user, "%s not measured: %s%s", rf_dtype_name(dt),
         st == RF_EINTERNAL ? "FAILED its check against the CPU reference: " : "",
         err ? err->msg : "");
    want[dt] = false;
    return true;
}

static void add_kernel(rf_hw_profile *p, const char *name, const char *level, uint64_t bytes,
                       const char *unit, rf_stats r)
{
    if (p->n_kernels >= RF_HW_PROFILE_MAX_KERNELS)
        return;
    rf_hw_profile_kernel *k = &p->kernels[p->n_kernels++];
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(k->level, sizeof k->level, "%s", level);
    snprintf(k->unit, sizeof k->unit, "%s", unit);
    k->bytes = bytes;
    k->best = r.best;
    k->median = r.median;
    k->min = r.min;
    k->max = r.max;
    p->spread = r.spread > p->spread ? r.spread : p->spread;
}

static void add_level(rf_hw_profile *p, const char *name, double bw, uint64_t bytes)
{
    if (p->n_levels >= RF_HW_PROFILE_MAX_LEVELS)
        return;
    rf_hw_profile_level *l = &p->levels[p->n_levels++];
    snprintf(l->name, sizeof l->name, "%s", name);
    l->bandwidth_bytes_per_s = bw;
    l->bytes = bytes;
}

static void identity(const rf_cuda_device *d, rf_hw_profile *p)
{
    snprintf(p->name, sizeof p->name, "%.*s", (int)sizeof p->name - 1, d->name);
    snprintf(p->device, sizeof p->device, "%s", d->name);
    snprintf(p->isa, sizeof p->isa, "sm_%d%d", d->cc_major, d->cc_minor);
    time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc))
        strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    p->sm_count = d->sm_count;
    p->clock_hz = d->clock_hz;
    p->mem_bytes = d->mem_bytes;
    p->l2_bytes = d->l2_bytes;
}

/* The dtypes to measure: those asked for (each must be supported), or
 * every supported one. */
static rf_status wanted(const rf_cuda_ctx *ctx, uint32_t mask, bool want[RF_DTYPE_COUNT],
                        rf_err *err)
{
    memset(want, 0, RF_DTYPE_COUNT * sizeof want[0]);
    uint32_t known = 0;
    for (size_t i = 0; i < sizeof gemm_dtypes / sizeof gemm_dtypes[0]; i++) {
        rf_dtype_kind dt = gemm_dtypes[i];
        known |= 1u << dt;
        if (mask && !(mask & (1u << dt)))
            continue;
        rf_err why;
        rf_status st = rf_cuda_gemm_supported(ctx, RF_CUDA_GEMM_CUBLASLT, dt, 1, &why);
        if (st == RF_OK)
            want[dt] = true;
        else if (mask) {
            if (err)
                *err = why;
            return st;
        }
    }
    if (mask & ~known)
        return rf_err_set(err, RF_EINVAL,
                          "dtype mask 0x%x asks for a dtype the CUDA backend "
                          "does not measure (fp32, tf32, bf16, fp16, fp8_e4m3)",
                          (unsigned)mask);
    return RF_OK;
}

/* Check every wanted dtype on the small shapes (see drop). */
static rf_status checks(rf_cuda_ctx *ctx, const rf_cuda_measure_opts *o, bool want[RF_DTYPE_COUNT],
                        rf_err *err)
{
    rf_status st = RF_OK;
    double e = 0;
    for (size_t i = 0; i < sizeof gemm_dtypes / sizeof gemm_dtypes[0]; i++) {
        rf_dtype_kind dt = gemm_dtypes[i];
        if (!want[dt])
            continue;
        tell(o->progress, o->user, "checking %s GEMMs against the CPU reference",
             rf_dtype_name(dt));
        st = rf_cuda_gemm_check(ctx, RF_CUDA_GEMM_CUBLASLT, dt, CHECK_M, CHECK_K, CHECK_N, &e, err);
        if (st == RF_OK) {
            st = rf_cuda_gemm_check(ctx, RF_CUDA_GEMM_CUBLASLT, dt, 1, CHECK_K, CHECK_N, &e, err);
            if (st == RF_EUNAVAIL) /* no kernel for M = 1 (fp8): the sweep says so */
                st = RF_OK;
        }
        if (st != RF_OK && !drop(o, dt, st, err, want))
            return st;
    }
    tell(o->progress, o->user, "checking the bf16 gemv kernel against the CPU reference");
    st = rf_cuda_gemm_check(ctx, RF_CUDA_GEMM_GEMV, RF_BF16, 1, CHECK_K, CHECK_N, &e, err);
    if (st == RF_OK)
        st = rf_cuda_gemm_check(ctx, RF_CUDA_GEMM_GEMV, RF_BF16, 1, CHECK_K + 3, CHECK_N + 1, &e,
                                err);
    if (st == RF_EINTERNAL) { /* not part of the profile: bench gemm flags its points */
        tell(o->note, o->user, "the gemv kernel FAILED its check: %s", err ? err->msg : "");
        st = RF_OK;
    }
    return st;
}

/* Device memory first: milliseconds per call, which also brings the clocks
 * up before the short L2 calls. Every bandwidth kernel over device memory,
 * then a read over half the L2 (resident, yet too big for the SMs' L1s);
 * the levels and the memory roof (the device-memory read) into p. */
static rf_status memory_figures(rf_cuda_ctx *ctx, const rf_cuda_measure_opts *o,
                                const rf_cuda_timing *t, rf_hw_profile *p, rf_err *err)
{
    rf_status st = RF_OK;
    const rf_cuda_device *d = &ctx->dev;
    const char *mem = d->mem_bus_bits >= 1024 ? "HBM" : "DRAM";
    uint64_t buf = 0;
    rf_cuda_bw_result bw;
    double roof = 0;
    RF__TRY(rf_cuda_dram_buffer_bytes(ctx, &buf, err));
    for (int kind = 0; kind < RF_CUDA_BW_COUNT; kind++) {
        const char *name = rf_cuda_bw_kind_name((rf_cuda_bw_kind)kind);
        tell(o->progress, o->user, "%s over %llu MiB buffers", name,
             (unsigned long long)(buf / MIB));
        RF__TRY(rf_cuda_bandwidth(ctx, (rf_cuda_bw_kind)kind, buf, t, &bw, err));
        uint64_t set = kind == RF_CUDA_BW_READ ? buf : 2 * buf;
        add_kernel(p, name, mem, set, "bytes_per_s", bw.bw_bytes_per_s);
        if (kind == RF_CUDA_BW_READ) {
            roof = bw.bw_bytes_per_s.best;
            /* the median trial: the sustained roof predictions use */
            p->bandwidth_sustained_bytes_per_s = bw.bw_bytes_per_s.median;
        }
    }
    uint64_t l2_set = d->l2_bytes / 2 / MIB * MIB;
    if (l2_set >= MIB) {
        tell(o->progress, o->user, "read_v16 over %llu MiB (L2)",
             (unsigned long long)(l2_set / MIB));
        RF__TRY(rf_cuda_bandwidth(ctx, RF_CUDA_BW_READ, l2_set, t, &bw, err));
        add_kernel(p, "read_v16", "L2", l2_set, "bytes_per_s", bw.bw_bytes_per_s);
        add_level(p, "L2", bw.bw_bytes_per_s.best, l2_set);
    }
    add_level(p, mem, roof, buf);
    p->bandwidth_bytes_per_s = roof;
done:
    return st;
}

/* Each wanted dtype's peak: cuBLASLt at dim^3. A dtype that cannot run or
 * fails its spot check is dropped (o->note says why); RF_EUNAVAIL when none
 * is left. */
static rf_status gemm_peaks(rf_cuda_ctx *ctx, const rf_cuda_measure_opts *o,
                            const rf_cuda_timing *t, int64_t dim, bool *want, rf_hw_profile *p,
                            rf_err *err)
{
    const char *mem = ctx->dev.mem_bus_bits >= 1024 ? "HBM" : "DRAM";
    int measured = 0;
    for (size_t i = 0; i < sizeof gemm_dtypes / sizeof gemm_dtypes[0]; i++) {
        rf_dtype_kind dt = gemm_dtypes[i];
        rf_cuda_gemm_result g;
        char name[48];
        if (!want[dt])
            continue;
        tell(o->progress, o->user, "%s GEMM %lld x %lld x %lld through cuBLASLt", rf_dtype_name(dt),
             (long long)dim, (long long)dim, (long long)dim);
        rf_status st =
            rf_cuda_gemm_time(ctx, RF_CUDA_GEMM_CUBLASLT, dt, dim, dim, dim, t, NULL, &g, err);
        if (st != RF_OK && drop(o, dt, st, err, want))
            continue;
        if (st != RF_OK)
            return st;
        snprintf(name, sizeof name, "gemm_%s", rf_dtype_name(dt));
        add_kernel(p, name, mem, g.bytes, "flops_per_s", g.flops_per_s);
        p->peak_flops_per_s[dt] = g.flops_per_s.best;
        measured++;
    }
    if (measured == 0)
        return rf_err_set(err, RF_EUNAVAIL, "cuda:%d: no GEMM dtype could be measured",
                          ctx->dev.index);
    return RF_OK;
}

rf_status rf_cuda_measure(rf_cuda_ctx *ctx, const rf_cuda_measure_opts *o, rf_hw_profile *out,
                          rf_err *err)
{
    rf_status st = RF_OK;
    static const rf_cuda_measure_opts none;
    rf_hw_profile p;
    bool want[RF_DTYPE_COUNT];
    o = o ? o : &none;
    memset(&p, 0, sizeof p);
    RF__TRY(rf__cuda_ctx_enter(ctx, err));
    rf_cuda_timing t = rf_cuda_timing_default(o->quick);
    int64_t dim = o->gemm_dim ? o->gemm_dim : o->quick ? PEAK_DIM_QUICK : PEAK_DIM;
    if (dim < 256 || dim > 65536) {
        st = rf_err_set(err, RF_EINVAL, "GEMM size for the peaks (%lld) must be in 256..65536",
                        (long long)dim);
        goto done;
    }
    identity(&ctx->dev, &p);
    RF__TRY(wanted(ctx, o->dtype_mask, want, err));
    RF__TRY(checks(ctx, o, want, err));
    RF__TRY(memory_figures(ctx, o, &t, &p, err));
    RF__TRY(gemm_peaks(ctx, o, &t, dim, want, &p, err));
    *out = p;
done:
    return st;
}
