/* cuda_ctx.c - devices, contexts, and CUDA errors turned into rf_err. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_kernels.h"

#ifndef RF_CUDA_ARCHS_STR
#define RF_CUDA_ARCHS_STR "?"
#endif

bool rf_cuda_built(void) { return true; }

rf_status rf__cuda_status_of(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return RF_OK;
    case cudaErrorMemoryAllocation:
        return RF_ENOMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorStubLibrary:
    case cudaErrorSystemNotReady:
        return RF_EUNAVAIL;
    default:
        return RF_EINTERNAL;
    }
}

rf_status rf__cuda_fail(rf_err *err, cudaError_t e, const char *what)
{
    return rf_err_set(err, rf__cuda_status_of(e), "%s: %s (%s)", what, cudaGetErrorString(e),
                      cudaGetErrorName(e));
}

rf_status rf__cuda_lt_fail(const rf_cuda_ctx *ctx, rf_err *err, cublasStatus_t s, const char *what)
{
    rf_status st = RF_EINTERNAL;
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
        st = RF_EUNAVAIL;
    else if (s == CUBLAS_STATUS_ALLOC_FAILED)
        st = RF_ENOMEM;
    const char *text = ctx && ctx->lt.status_string ? ctx->lt.status_string(s) : NULL;
    return rf_err_set(err, st, "%s: %s (cublasStatus %d)", what, text ? text : "cuBLASLt error",
                      (int)s);
}

rf_status rf_cuda_device_count(int *count, rf_err *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return rf_err_set(err, RF_EUNAVAIL, "no CUDA device: %s (%s)", cudaGetErrorString(e),
                          cudaGetErrorName(e));
    if (n < 1)
        return rf_err_set(err, RF_EUNAVAIL, "no CUDA device: the driver reports none");
    *count = n;
    return RF_OK;
}

static int attr(enum cudaDeviceAttr a, int dev, cudaError_t *first)
{
    int v = 0;
    cudaError_t e = cudaDeviceGetAttribute(&v, a, dev);
    if (e != cudaSuccess && *first == cudaSuccess)
        *first = e;
    return v;
}

rf_status rf_cuda_device_query(int index, rf_cuda_device *out, rf_err *err)
{
    int n = 0;
    rf_status st = rf_cuda_device_count(&n, err);
    if (st != RF_OK) {
        return rf_err_prefix(err, st, "cuda:%d", index);
    }
    if (index < 0 || index >= n)
        return rf_err_set(err, RF_EUNAVAIL, "cuda:%d: no such device (%d found)", index, n);

    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, index);
    if (e != cudaSuccess)
        return rf__cuda_fail(err, e, "cudaGetDeviceProperties");

    rf_cuda_device d;
    memset(&d, 0, sizeof d);
    d.index = index;
    snprintf(d.name, sizeof d.name, "%.*s", (int)sizeof d.name - 1, prop.name);
    cudaError_t first = cudaSuccess;
    d.cc_major = attr(cudaDevAttrComputeCapabilityMajor, index, &first);
    d.cc_minor = attr(cudaDevAttrComputeCapabilityMinor, index, &first);
    d.sm_count = attr(cudaDevAttrMultiProcessorCount, index, &first);
    d.clock_hz = 1e3 * attr(cudaDevAttrClockRate, index, &first);           /* kHz */
    d.mem_clock_hz = 1e3 * attr(cudaDevAttrMemoryClockRate, index, &first); /* kHz */
    d.mem_bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth, index, &first);
    d.l2_bytes = (uint64_t)attr(cudaDevAttrL2CacheSize, index, &first);
    if (first != cudaSuccess)
        return rf__cuda_fail(err, first, "cudaDeviceGetAttribute");
    d.mem_bytes = (uint64_t)prop.totalGlobalMem;
    d.bus_bw_bytes_per_s = 2.0 * d.mem_clock_hz * d.mem_bus_bits / 8.0;
    e = cudaRuntimeGetVersion(&d.runtime_version);
    if (e == cudaSuccess)
        e = cudaDriverGetVersion(&d.driver_version);
    if (e != cudaSuccess)
        return rf__cuda_fail(err, e, "cudaRuntimeGetVersion");
    *out = d;
    return RF_OK;
}

rf_status rf__cuda_ctx_enter(const rf_cuda_ctx *ctx, rf_err *err)
{
    if (!ctx)
        return rf_err_set(err, RF_EINVAL, "no CUDA context");
    cudaError_t e = cudaSetDevice(ctx->dev.index);
    return e == cudaSuccess ? RF_OK : rf__cuda_fail(err, e, "cudaSetDevice");
}

rf_status rf_cuda_ctx_new(int index, rf_cuda_ctx **out, rf_err *err)
{
    rf_status st = RF_OK;
    *out = NULL;
    rf_cuda_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return rf_err_set(err, RF_ENOMEM, "out of host memory for a CUDA context");
    ctx->seed = 0x5EEDu;
    RF__TRY(rf_cuda_device_query(index, &ctx->dev, err));
    RF__CUDA_TRY(cudaSetDevice(index));
    cudaError_t probe = rf__cuda_kernels_probe();
    if (probe != cudaSuccess) {
        st = rf_err_set(err, rf__cuda_status_of(probe) == RF_EUNAVAIL ? RF_EUNAVAIL : RF_EINTERNAL,
                        "cuda:%d (%s) is sm_%d%d, and this build's kernels (architectures "
                        "%s) cannot run on it: %s; rebuild with -DRF_CUDA_ARCHS=%d%d",
                        index, ctx->dev.name, ctx->dev.cc_major, ctx->dev.cc_minor,
                        RF_CUDA_ARCHS_STR, cudaGetErrorString(probe), ctx->dev.cc_major,
                        ctx->dev.cc_minor);
        goto done;
    }
    RF__CUDA_TRY(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
    RF__CUDA_TRY(cudaEventCreate(&ctx->start));
    RF__CUDA_TRY(cudaEventCreate(&ctx->stop));
done:
    if (st != RF_OK) {
        rf_cuda_ctx_free(ctx);
        return st;
    }
    *out = ctx;
    return RF_OK;
}

void rf_cuda_ctx_free(rf_cuda_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->stream || ctx->lt_handle) {
        /* Best effort: a failed call here has nothing left to report to. */
        (void)cudaSetDevice(ctx->dev.index);
        if (ctx->stream)
            (void)cudaStreamSynchronize(ctx->stream);
    }
    rf__cuda_lt_release(ctx);
    if (ctx->start)
        (void)cudaEventDestroy(ctx->start);
    if (ctx->stop)
        (void)cudaEventDestroy(ctx->stop);
    if (ctx->stream)
        (void)cudaStreamDestroy(ctx->stream);
    free(ctx);
}

const rf_cuda_device *rf_cuda_ctx_device(const rf_cuda_ctx *ctx) { return ctx ? &ctx->dev : NULL; }
