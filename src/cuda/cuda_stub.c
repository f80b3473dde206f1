/* cuda_stub.c - the CUDA API when the backend is not built (no nvcc found,
 * or RF_WITH_CUDA=OFF): every entry point that needs a device returns
 * RF_EUNAVAIL, so callers compile, link and report the same way. */
#include <stddef.h>

#include "roofline/rf_cuda.h"

#define NOT_BUILT                                                                                  \
    "CUDA backend not built (configure with nvcc on the PATH or at /usr/local/cuda, "              \
    "and RF_WITH_CUDA=ON)"

static rf_status not_built(rf_err *err) { return rf_err_set(err, RF_EUNAVAIL, NOT_BUILT); }

bool rf_cuda_built(void) { return false; }

rf_status rf_cuda_device_count(int *count, rf_err *err) { return not_built(err); }

rf_status rf_cuda_device_query(int index, rf_cuda_device *out, rf_err *err)
{
    return not_built(err);
}

rf_status rf_cuda_ctx_new(int index, rf_cuda_ctx **out, rf_err *err)
{
    *out = NULL;
    return not_built(err);
}

void rf_cuda_ctx_free(rf_cuda_ctx *ctx)
{
    /* nothing to free: rf_cuda_ctx_new never makes one here */
}

const rf_cuda_device *rf_cuda_ctx_device(const rf_cuda_ctx *ctx) { return NULL; }

rf_status rf_cuda_dram_buffer_bytes(rf_cuda_ctx *ctx, uint64_t *bytes, rf_err *err)
{
    return not_built(err);
}

rf_status rf_cuda_bandwidth(rf_cuda_ctx *ctx, rf_cuda_bw_kind kind, uint64_t buffer_bytes,
                            const rf_cuda_timing *t, rf_cuda_bw_result *out, rf_err *err)
{
    return not_built(err);
}

rf_status rf_cuda_gemm_supported(const rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt,
                                 int64_t m, rf_err *err)
{
    return not_built(err);
}

rf_status rf_cuda_gemm_check(rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt, int64_t m,
                             int64_t k, int64_t n, double *max_err, rf_err *err)
{
    return not_built(err);
}

rf_status rf_cuda_gemm_time(rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt, int64_t m,
                            int64_t k, int64_t n, const rf_cuda_timing *t, const rf_roof *roof,
                            rf_cuda_gemm_result *out, rf_err *err)
{
    return not_built(err);
}

rf_status rf_cuda_measure(rf_cuda_ctx *ctx, const rf_cuda_measure_opts *o, rf_hw_profile *out,
                          rf_err *err)
{
    return not_built(err);
}

rf_status rf_cuda_calibrate(rf_cuda_ctx *ctx, const rf_cuda_calib_opts *o, rf_hw_profile *p,
                            rf_err *err)
{
    return not_built(err);
}

rf_status rf_cuda_calib_gemm_dtype(rf_cuda_ctx *ctx, const rf_cuda_calib_opts *o, rf_dtype_kind dt,
                                   rf_calib *c, int *skipped, rf_err *err)
{
    return not_built(err);
}
