/* cuda_internal.h - what the backend's host files share (private).
 *
 * The context, the cuBLASLt entry points (loaded with dlopen when a GEMM
 * first needs them, so linking the backend costs a CPU-only run nothing),
 * error helpers that turn a failed CUDA or cuBLASLt call into an rf_err
 * naming the call, and the timing engine every figure goes through.
 *
 * Names: what the files of a layer share but do not publish carries rf__
 * (RF__ for macros); file-private names no prefix; public names rf_.
 */
#ifndef RF_CUDA_INTERNAL_H
#define RF_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "roofline/rf_cuda.h"

/* cuBLASLt entry points, typed from the header so a mismatch cannot compile. */
typedef struct rf__cuda_lt_api {
    void *lib;      /* dlopen handle, NULL until loaded */
    char path[256]; /* what was loaded                  */
    size_t version; /* cublasLtGetVersion()             */
    __typeof__(cublasLtCreate) *create;
    __typeof__(cublasLtDestroy) *destroy;
    __typeof__(cublasLtGetVersion) *get_version;
    __typeof__(cublasLtGetStatusString) *status_string;
    __typeof__(cublasLtMatmulDescCreate) *desc_create;
    __typeof__(cublasLtMatmulDescDestroy) *desc_destroy;
    __typeof__(cublasLtMatmulDescSetAttribute) *desc_set;
    __typeof__(cublasLtMatrixLayoutCreate) *layout_create;
    __typeof__(cublasLtMatrixLayoutDestroy) *layout_destroy;
    __typeof__(cublasLtMatmulPreferenceCreate) *pref_create;
    __typeof__(cublasLtMatmulPreferenceDestroy) *pref_destroy;
    __typeof__(cublasLtMatmulPreferenceSetAttribute) *pref_set;
    __typeof__(cublasLtMatmulAlgoGetHeuristic) *heuristic;
    __typeof__(cublasLtMatmul) *matmul;
} rf__cuda_lt_api;

/* cuBLASLt wants 32 MiB of workspace on Hopper to reach its fastest kernels. */
#define RF__CUDA_LT_WORKSPACE_BYTES ((size_t)32 << 20)

struct rf_cuda_ctx {
    rf_cuda_device dev;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    rf__cuda_lt_api lt;
    cublasLtHandle_t lt_handle; /* NULL until rf__cuda_lt_ready          */
    void *workspace;            /* RF__CUDA_LT_WORKSPACE_BYTES, with lt  */
    uint64_t seed;              /* advanced for every fresh input        */
};

/* Load libcublasLt (the soname, then the toolkit's copy found at configure
 * time), create the handle and the workspace; a no-op once done.
 * RF_EUNAVAIL names the paths tried. */
rf_status rf__cuda_lt_ready(rf_cuda_ctx *ctx, rf_err *err);

/* Unload what rf__cuda_lt_ready loaded. */
void rf__cuda_lt_release(rf_cuda_ctx *ctx);

/* Status for a CUDA error: out of memory -> RF_ENOMEM; no driver, no
 * device, no kernel image -> RF_EUNAVAIL; anything else -> RF_EINTERNAL. */
rf_status rf__cuda_status_of(cudaError_t e);

/* Fill err with "what: <runtime message> (<error name>)" and return the
 * mapped status. */
rf_status rf__cuda_fail(rf_err *err, cudaError_t e, const char *what);

/* Same for cuBLASLt: "what: <status string>"; NOT_SUPPORTED and
 * ARCH_MISMATCH are RF_EUNAVAIL, ALLOC_FAILED RF_ENOMEM. */
rf_status rf__cuda_lt_fail(const rf_cuda_ctx *ctx, rf_err *err, cublasStatus_t s, const char *what);

/* Make the context's device current for this thread. */
rf_status rf__cuda_ctx_enter(const rf_cuda_ctx *ctx, rf_err *err);

/* Run a CUDA call inside a function with an `rf_status st`, an `rf_err *err`
 * and a `done:` cleanup label. */
#define RF__CUDA_TRY(call)                                                                         \
    do {                                                                                           \
        cudaError_t cuda_e_ = (call);                                                              \
        if (cuda_e_ != cudaSuccess) {                                                              \
            st = rf__cuda_fail(err, cuda_e_, #call);                                               \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

#define RF__LT_TRY(ctx, call)                                                                      \
    do {                                                                                           \
        cublasStatus_t lt_s_ = (call);                                                             \
        if (lt_s_ != CUBLAS_STATUS_SUCCESS) {                                                      \
            st = rf__cuda_lt_fail((ctx), err, lt_s_, #call);                                       \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

#define RF__TRY(call)                                                                              \
    do {                                                                                           \
        st = (call);                                                                               \
        if (st != RF_OK)                                                                           \
            goto done;                                                                             \
    } while (0)

/* ---- Timing engine ------------------------------------------------------ */

/* Enqueue call number i (0-based) of the timed operation on ctx->stream.
 * i lets the operation rotate through buffer copies. */
typedef rf_status (*rf__cuda_call_fn)(rf_cuda_ctx *ctx, void *user, int64_t i, rf_err *err);

typedef struct rf__cuda_timed {
    double call_s[RF_CUDA_MAX_TRIALS]; /* seconds per call, one per trial   */
    int trials;
    int64_t reps;    /* calls per trial                   */
    double median_s; /* median of call_s                  */
    bool graph;      /* calls replayed from a CUDA graph  */
} rf__cuda_timed;

/* Time fn: t->warmup untimed calls; a probe that estimates one call; a CUDA
 * graph of G calls (G >= min_calls when possible, at most 256) replayed L
 * times per trial so that G x L calls last >= t->min_trial_s; t->trials
 * trials between two events. Falls back to direct calls when the stream
 * cannot be captured. Errors: those of fn and of the CUDA calls. */
rf_status rf__cuda_time(rf_cuda_ctx *ctx, rf__cuda_call_fn fn, void *user, int64_t min_calls,
                        const rf_cuda_timing *t, rf__cuda_timed *out, rf_err *err);

/* Statistics of the rates work / call_s over the trials of tm. */
rf_status rf__cuda_rate_of(const rf__cuda_timed *tm, double work, rf_stats *out, rf_err *err);

/* Check t: trials in 1..RF_CUDA_MAX_TRIALS, warmup >= 0, min_trial_s in
 * (0, 10], max_algos in 1..16. */
rf_status rf__cuda_timing_check(const rf_cuda_timing *t, rf_err *err);

#endif
