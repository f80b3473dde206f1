/* cuda_stream.c - device-memory bandwidth: copy, read-only, memcpy.
 *
 * The source holds word i = i, so every result can be checked: the copy's
 * destination word by word on the device, the read's checksum against the
 * closed form sum_{i<n} i = n (n - 1) / 2 (mod 2^32).
 */
#include <string.h>

#include "cuda_internal.h"
#include "cuda_kernels.h"

#define MIB ((uint64_t)1 << 20)

typedef struct bw_run {
    rf_cuda_bw_kind kind;
    void *src, *dst;
    unsigned int *sum; /* read_v16's checksum, device */
    uint64_t bytes;    /* one buffer */
    int grid, block;
} bw_run;

static rf_status bw_call(rf_cuda_ctx *ctx, void *user, int64_t i, rf_err *err)
{
    (void)i; /* buffers far larger than L2 need no rotation */
    bw_run *r = user;
    int64_t n16 = (int64_t)(r->bytes / 16);
    cudaError_t e = cudaSuccess;
    switch (r->kind) {
    case RF_CUDA_BW_COPY:
        e = rf__cuda_copy_v16(r->src, r->dst, n16, r->grid, r->block, ctx->stream);
        break;
    case RF_CUDA_BW_READ:
        e = rf__cuda_read_v16(r->src, n16, r->sum, r->grid, r->block, ctx->stream);
        break;
    default:
        e = cudaMemcpyAsync(r->dst, r->src, r->bytes, cudaMemcpyDeviceToDevice, ctx->stream);
        break;
    }
    return e == cudaSuccess ? RF_OK : rf__cuda_fail(err, e, rf_cuda_bw_kind_name(r->kind));
}

rf_status rf_cuda_dram_buffer_bytes(rf_cuda_ctx *ctx, uint64_t *bytes, rf_err *err)
{
    rf_status st = RF_OK;
    size_t free_b = 0, total_b = 0;
    RF__TRY(rf__cuda_ctx_enter(ctx, err));
    RF__CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    uint64_t b = 32 * ctx->dev.l2_bytes;
    b = b < 256 * MIB ? 256 * MIB : b;
    b = b > 2048 * MIB ? 2048 * MIB : b;
    while (b > MIB && b > free_b / 4)
        b /= 2;
    *bytes = b / MIB * MIB;
    if (*bytes < MIB)
        st = rf_err_set(err, RF_ENOMEM, "cuda:%d has %zu bytes free, too little to measure",
                        ctx->dev.index, free_b);
done:
    return st;
}

/* Check the result left by the timed calls. */
static rf_status bw_verify(rf_cuda_ctx *ctx, bw_run *r, rf_err *err)
{
    rf_status st = RF_OK;
    unsigned long long *bad_d = NULL, bad = 0;
    unsigned int sum = 0;
    uint64_t words = r->bytes / 4;
    if (r->kind == RF_CUDA_BW_READ) {
        RF__CUDA_TRY(cudaMemsetAsync(r->sum, 0, sizeof *r->sum, ctx->stream));
        RF__TRY(bw_call(ctx, r, 0, err));
        RF__CUDA_TRY(
            cudaMemcpyAsync(&sum, r->sum, sizeof sum, cudaMemcpyDeviceToHost, ctx->stream));
        RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
        /* words < 2^31, so words (words - 1) / 2 is exact in 64 bits. */
        unsigned int want = (unsigned int)(words * (words - 1) / 2);
        if (sum != want)
            st = rf_err_set(err, RF_EINTERNAL, "read_v16 over %llu bytes: checksum %u, expected %u",
                            (unsigned long long)r->bytes, sum, want);
        goto done;
    }
    RF__CUDA_TRY(cudaMalloc((void **)&bad_d, sizeof *bad_d));
    RF__CUDA_TRY(cudaMemsetAsync(bad_d, 0, sizeof *bad_d, ctx->stream));
    RF__CUDA_TRY(rf__cuda_count_index_mismatch(r->dst, (int64_t)words, bad_d, ctx->stream));
    RF__CUDA_TRY(cudaMemcpyAsync(&bad, bad_d, sizeof bad, cudaMemcpyDeviceToHost, ctx->stream));
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
    if (bad)
        st = rf_err_set(err, RF_EINTERNAL, "%s over %llu bytes: %llu of %llu words wrong",
                        rf_cuda_bw_kind_name(r->kind), (unsigned long long)r->bytes, bad,
                        (unsigned long long)words);
done:
    (void)cudaFree(bad_d);
    return st;
}

rf_status rf_cuda_bandwidth(rf_cuda_ctx *ctx, rf_cuda_bw_kind kind, uint64_t buffer_bytes,
                            const rf_cuda_timing *t, rf_cuda_bw_result *out, rf_err *err)
{
    rf_status st = RF_OK;
    bw_run r = {.kind = kind, .bytes = buffer_bytes};
    RF__TRY(rf__cuda_ctx_enter(ctx, err));
    if ((unsigned)kind >= RF_CUDA_BW_COUNT) {
        st = rf_err_set(err, RF_EINVAL, "unknown bandwidth kernel %d", (int)kind);
        goto done;
    }
    /* 2^33 bytes keeps the word count below 2^31 for the checksum. */
    if (buffer_bytes < MIB || buffer_bytes % 16 || buffer_bytes > ((uint64_t)1 << 33)) {
        st = rf_err_set(err, RF_EINVAL,
                        "bandwidth buffer (%llu bytes) must be a multiple of 16 in 1 MiB..8 GiB",
                        (unsigned long long)buffer_bytes);
        goto done;
    }
    RF__TRY(rf__cuda_timing_check(t, err));
    memset(out, 0, sizeof *out);

    RF__CUDA_TRY(cudaMalloc(&r.src, buffer_bytes));
    RF__CUDA_TRY(rf__cuda_fill_index(r.src, (int64_t)(buffer_bytes / 4), ctx->stream));
    if (kind == RF_CUDA_BW_READ) {
        RF__CUDA_TRY(cudaMalloc((void **)&r.sum, sizeof *r.sum));
        RF__CUDA_TRY(cudaMemsetAsync(r.sum, 0, sizeof *r.sum, ctx->stream));
        RF__CUDA_TRY(rf__cuda_stream_shape(1, ctx->dev.sm_count, &r.grid, &r.block));
    } else {
        RF__CUDA_TRY(cudaMalloc(&r.dst, buffer_bytes));
        /* Zeros: a copy that did not happen cannot pass the check. */
        RF__CUDA_TRY(cudaMemsetAsync(r.dst, 0, buffer_bytes, ctx->stream));
        if (kind == RF_CUDA_BW_COPY)
            RF__CUDA_TRY(rf__cuda_stream_shape(0, ctx->dev.sm_count, &r.grid, &r.block));
    }
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));

    rf__cuda_timed tm;
    RF__TRY(rf__cuda_time(ctx, bw_call, &r, 1, t, &tm, err));
    RF__TRY(bw_verify(ctx, &r, err));

    out->kind = kind;
    out->buffer_bytes = buffer_bytes;
    out->bytes_per_call = kind == RF_CUDA_BW_READ ? buffer_bytes : 2 * buffer_bytes;
    out->grid = r.grid;
    out->block = r.block;
    out->reps = tm.reps;
    out->trials = tm.trials;
    out->time_s_median = tm.median_s;
    RF__TRY(rf__cuda_rate_of(&tm, (double)out->bytes_per_call, &out->bw_bytes_per_s, err));
done:
    (void)cudaFree(r.src); /* cudaFree(NULL) does nothing */
    (void)cudaFree(r.dst);
    (void)cudaFree(r.sum);
    return st;
}
