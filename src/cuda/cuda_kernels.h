/* cuda_kernels.h - launchers of the backend's device kernels (private).
 *
 * Compiled by nvcc (cuda_kernels.cu), called from the C host code. Every
 * launcher enqueues on `stream` and returns the launch's cudaError_t
 * (cudaGetLastError after the launch); execution errors surface at the next
 * synchronization. Counts are elements unless a name says bytes.
 */
#ifndef RF_CUDA_KERNELS_H
#define RF_CUDA_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element formats the fill kernel writes (the host decodes the same). */
typedef enum rf__cuda_elem {
    RF__CUDA_ELEM_F32 = 0, /* fp32 (also tf32 inputs)  */
    RF__CUDA_ELEM_BF16,
    RF__CUDA_ELEM_F16,
    RF__CUDA_ELEM_E4M3 /* fp8 e4m3, saturating    */
} rf__cuda_elem;

/* p[i] = i (mod 2^32) for i < n_words: the pattern the bandwidth checks use. */
cudaError_t rf__cuda_fill_index(uint32_t *p, int64_t n_words, cudaStream_t stream);

/* *bad += number of i < n_words with p[i] != i (mod 2^32). */
cudaError_t rf__cuda_count_index_mismatch(const uint32_t *p, int64_t n_words,
                                          unsigned long long *bad, cudaStream_t stream);

/* n values of format e, each +-(0.25 + 0.75 u), u uniform in [0, 1) from a
 * counter hash of (seed, i): random, never zero, exact in every format's
 * range. */
cudaError_t rf__cuda_fill_random(void *p, int64_t n, rf__cuda_elem e, uint64_t seed,
                                 cudaStream_t stream);

/* Launch shape that fills the chip for the streaming kernels: block threads
 * and grid = sm_count x resident blocks per SM (occupancy API). which is 0
 * for copy_v16, 1 for read_v16. */
cudaError_t rf__cuda_stream_shape(int which, int sm_count, int *grid, int *block);

/* dst[i] = src[i] for i < n16 16-byte vectors. */
cudaError_t rf__cuda_copy_v16(const void *src, void *dst, int64_t n16, int grid, int block,
                              cudaStream_t stream);

/* *sum += sum of the 32-bit words of src[0 .. n16 vectors) (mod 2^32). */
cudaError_t rf__cuda_read_v16(const void *src, int64_t n16, unsigned int *sum, int grid, int block,
                              cudaStream_t stream);

/* y[j] = sum_k x[k] w[j k] for j < n: bf16 in and out, fp32 accumulation.
 * w holds n rows of k (16-byte aligned base); one warp per row, 16-byte
 * loads when k % 8 == 0, element loads otherwise. */
cudaError_t rf__cuda_gemv_bf16(const void *w, const void *x, void *y, int64_t n, int64_t k,
                               cudaStream_t stream);

/* ---- Calibration kernels (bf16; cuda_calib.c) -------------------------- */

/* Decode attention, GQA with group query heads per KV head (group 4 only),
 * head_dim 64 or 128: q [B, n_kv group, d], k and v [B, n_kv, S, d], out
 * [B, n_kv group, d]; scores scaled by 1/sqrt(d), softmax in fp32 (online).
 * One block per (sequence, KV head) and slice of the keys (split slices of
 * ceil(S / split) keys, none empty); each writes (acc[d], max, sum) per
 * query head into part (B n_kv group split (d + 2) floats), and a combine
 * kernel writes out. cudaErrorInvalidValue for another group or d. */
cudaError_t rf__cuda_attn_decode_bf16(const void *q, const void *k, const void *v, void *out,
                                      float *part, int64_t batch, int64_t keys, int n_kv, int group,
                                      int head_dim, int split, cudaStream_t stream);

/* Causal prefill attention of one sequence of T tokens after no context:
 * q and out [T, n_kv group, d], k and v [n_kv, T, d]; token t attends to
 * keys 0..t. One warp per (token, KV head). Same group and d as above. */
cudaError_t rf__cuda_attn_prefill_bf16(const void *q, const void *k, const void *v, void *out,
                                       int64_t tokens, int n_kv, int group, int head_dim,
                                       cudaStream_t stream);

/* y = x / sqrt(mean(x^2) + 1e-6) * w over rows of width: one block a row. */
cudaError_t rf__cuda_rmsnorm_bf16(const void *x, const void *w, void *y, int64_t rows,
                                  int64_t width, cudaStream_t stream);

/* Rotate-half RoPE in place on x [rows, heads, d]: row r is position r + 1,
 * pair (i, i + d/2) turned by (r + 1) 10000^(-2i/d). d even. */
cudaError_t rf__cuda_rope_bf16(void *x, int64_t rows, int64_t heads, int64_t head_dim,
                               cudaStream_t stream);

/* y[i] = silu(g[i]) u[i] = g / (1 + e^-g) u. */
cudaError_t rf__cuda_silu_mul_bf16(const void *g, const void *u, void *y, int64_t n,
                                   cudaStream_t stream);

/* y[i] = a[i] + b[i]. */
cudaError_t rf__cuda_add_bf16(const void *a, const void *b, void *y, int64_t n,
                              cudaStream_t stream);

/* cudaSuccess when this build holds a kernel image the current device can
 * run; cudaErrorNoKernelImageForDevice (or similar) otherwise. */
cudaError_t rf__cuda_kernels_probe(void);

#ifdef __cplusplus
}
#endif
#endif
