/* cuda_common.c - the parts of the CUDA API that need no device: device
 * specs, names, timing defaults, tolerances. Built with or without nvcc. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_cuda.h"

rf_status rf_cuda_device_parse(const char *text, int *index, rf_err *err)
{
    if (!text || strncmp(text, "cuda", 4) != 0 || (text[4] != '\0' && text[4] != ':'))
        return rf_err_set(err, RF_EINVAL, "device '%s': expected cuda or cuda:N", text ? text : "");
    if (text[4] == '\0') {
        *index = 0;
        return RF_OK;
    }
    const char *digits = text + 5;
    char *end = NULL;
    errno = 0;
    long v = strtol(digits, &end, 10);
    if (*digits < '0' || *digits > '9' || *end != '\0' || errno || v > 1023)
        return rf_err_set(err, RF_EINVAL,
                          "device '%s': expected cuda or cuda:N with N a device index 0..1023",
                          text);
    *index = (int)v;
    return RF_OK;
}

static const char *const bw_names[] = {
    [RF_CUDA_BW_COPY] = "copy_v16",
    [RF_CUDA_BW_READ] = "read_v16",
    [RF_CUDA_BW_MEMCPY] = "memcpy_d2d",
};
_Static_assert(sizeof bw_names / sizeof bw_names[0] == RF_CUDA_BW_COUNT, "bw_names");

const char *rf_cuda_bw_kind_name(rf_cuda_bw_kind kind)
{
    return (unsigned)kind < RF_CUDA_BW_COUNT ? bw_names[kind] : "?";
}

static const char *const impl_names[] = {
    [RF_CUDA_GEMM_CUBLASLT] = "cublasLt",
    [RF_CUDA_GEMM_GEMV] = "gemv",
};
_Static_assert(sizeof impl_names / sizeof impl_names[0] == RF_CUDA_GEMM_IMPL_COUNT, "impl_names");

const char *rf_cuda_gemm_impl_name(rf_cuda_gemm_impl impl)
{
    return (unsigned)impl < RF_CUDA_GEMM_IMPL_COUNT ? impl_names[impl] : "?";
}

rf_cuda_timing rf_cuda_timing_default(bool quick)
{
    rf_cuda_timing t = {.trials = 7, .warmup = 3, .min_trial_s = 10e-3, .max_algos = 8};
    if (quick)
        t = (rf_cuda_timing){.trials = 3, .warmup = 2, .min_trial_s = 3e-3, .max_algos = 4};
    return t;
}

rf_dtype_kind rf_cuda_gemm_out_dtype(rf_dtype_kind dt)
{
    if (dt == RF_FP8_E4M3)
        return RF_BF16;
    if (dt == RF_TF32)
        return RF_FP32;
    return dt;
}

double rf_cuda_gemm_tolerance(rf_dtype_kind dt)
{
    /* Errors are in units of the output's size (rf_cuda.h). An output
     * rounding costs one unit roundoff u of it at most; cuBLASLt's split-K
     * kernels may reduce partial sums in the output type, which adds a few
     * more. 16 u leaves room for both, and stays far below the ~1.4 that a
     * swapped operand or a wrong layout gives. */
    switch (dt) {
    case RF_FP32:
        return 1e-4; /* u = 2^-24: any sane fp32 GEMM is far inside   */
    case RF_TF32:
        return 16.0 / 1024.0; /* inputs cut to 10-bit mantissas: u = 2^-10 (truncation) */
    case RF_BF16:
        return 16.0 / 256.0; /* u = 2^-8                                      */
    case RF_FP16:
        return 16.0 / 2048.0; /* u = 2^-11                                     */
    case RF_FP8_E4M3:
        return 0.25; /* fast accumulation keeps ~14 bits: about 1% at
                                 K = 4096 (DeepSeek-V3 report), growing with K */
    default:
        return 0.0;
    }
}
