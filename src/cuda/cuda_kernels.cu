/* cuda_kernels.cu - the backend's device kernels and their launchers.
 *
 * Streaming kernels move 16-byte vectors (uint4) in a grid-stride loop, four
 * independent vectors per thread per iteration so each thread keeps 64 bytes
 * in flight; the grid is one full wave (resident blocks per SM x SMs), so
 * every SM streams until the end. The GEMV kernel gives each warp one row of
 * W and reads it with 16-byte loads, four per lane per iteration.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "cuda_kernels.h"

namespace {

constexpr int kStreamBlock = 256;
constexpr int kFillBlock = 256;
constexpr int kFillMaxGrid = 8192;
constexpr int kGemvWarps = 8;

int fill_grid(int64_t n)
{
    int64_t blocks = (n + kFillBlock - 1) / kFillBlock;
    if (blocks < 1)
        blocks = 1;
    return blocks > kFillMaxGrid ? kFillMaxGrid : (int)blocks;
}

__device__ __forceinline__ int64_t global_id()
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ int64_t grid_stride()
{
    return (int64_t)gridDim.x * blockDim.x;
}

__global__ void fill_index_kernel(uint32_t *p, int64_t n)
{
    for (int64_t i = global_id(); i < n; i += grid_stride())
        p[i] = (uint32_t)i;
}

__global__ void count_mismatch_kernel(const uint32_t *__restrict__ p, int64_t n,
                                      unsigned long long *bad)
{
    unsigned long long mine = 0;
    for (int64_t i = global_id(); i < n; i += grid_stride())
        mine += p[i] != (uint32_t)i;
    if (mine)
        atomicAdd(bad, mine);
}

/* SplitMix64 finalizer: a counter hash, so any element can be generated
 * independently of the others. */
__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ float random_value(uint64_t seed, int64_t i)
{
    uint64_t z = mix64(seed ^ mix64((uint64_t)i));
    float u = (float)(z >> 40) * (1.0f / 16777216.0f); /* 24 bits: [0, 1) */
    float mag = 0.25f + 0.75f * u;
    return (z & 1u) ? -mag : mag;
}

__device__ __forceinline__ void store(float *p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16 *p, int64_t i, float v)
{
    p[i] = __float2bfloat16_rn(v);
}
__device__ __forceinline__ void store(__half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void store(__nv_fp8_storage_t *p, int64_t i, float v)
{
    p[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
}

template <typename T> __global__ void fill_random_kernel(T *p, int64_t n, uint64_t seed)
{
    for (int64_t i = global_id(); i < n; i += grid_stride())
        store(p, i, random_value(seed, i));
}

__global__ void __launch_bounds__(kStreamBlock)
    copy_v16_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, int64_t n)
{
    const int64_t s = grid_stride();
    int64_t i = global_id();
    for (; i + 3 * s < n; i += 4 * s) {
        uint4 a = src[i];
        uint4 b = src[i + s];
        uint4 c = src[i + 2 * s];
        uint4 d = src[i + 3 * s];
        dst[i] = a;
        dst[i + s] = b;
        dst[i + 2 * s] = c;
        dst[i + 3 * s] = d;
    }
    for (; i < n; i += s)
        dst[i] = src[i];
}

__device__ __forceinline__ unsigned int words(uint4 v) { return v.x + v.y + v.z + v.w; }

__global__ void __launch_bounds__(kStreamBlock)
    read_v16_kernel(const uint4 *__restrict__ src, int64_t n, unsigned int *sum)
{
    const int64_t s = grid_stride();
    int64_t i = global_id();
    unsigned int acc = 0;
    for (; i + 3 * s < n; i += 4 * s) {
        uint4 a = src[i];
        uint4 b = src[i + s];
        uint4 c = src[i + 2 * s];
        uint4 d = src[i + 3 * s];
        acc += words(a) + words(b) + words(c) + words(d);
    }
    for (; i < n; i += s)
        acc += words(src[i]);
    /* Every lane reaches this point: the loops above have no early exit. */
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(sum, acc);
}

/* Two bf16 products from two packed pairs: a bf16 is the top half of the
 * fp32 with the same value, so shifting converts exactly. */
__device__ __forceinline__ float dot2(unsigned int a, unsigned int b, float acc)
{
    acc = fmaf(__uint_as_float(a << 16), __uint_as_float(b << 16), acc);
    return fmaf(__uint_as_float(a & 0xffff0000u), __uint_as_float(b & 0xffff0000u), acc);
}

__device__ __forceinline__ float dot8(uint4 a, uint4 b, float acc)
{
    acc = dot2(a.x, b.x, acc);
    acc = dot2(a.y, b.y, acc);
    acc = dot2(a.z, b.z, acc);
    return dot2(a.w, b.w, acc);
}

__global__ void __launch_bounds__(kGemvWarps * 32)
    gemv_bf16_kernel(const __nv_bfloat16 *__restrict__ w, const __nv_bfloat16 *__restrict__ x,
                     __nv_bfloat16 *__restrict__ y, int64_t n, int64_t k)
{
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * kGemvWarps + (threadIdx.x >> 5);
    if (row >= n)
        return; /* row is the same for the whole warp: it leaves together */
    const __nv_bfloat16 *wr = w + row * k;
    float acc0 = 0.f, acc1 = 0.f;
    if ((k & 7) == 0) {
        const uint4 *w4 = reinterpret_cast<const uint4 *>(wr);
        const uint4 *x4 = reinterpret_cast<const uint4 *>(x);
        const int64_t nv = k >> 3;
        int64_t v = lane;
        for (; v + 96 < nv; v += 128) {
            /* W is streamed once: evict-first loads. x is reused: cached. */
            uint4 a0 = __ldcs(w4 + v);
            uint4 a1 = __ldcs(w4 + v + 32);
            uint4 a2 = __ldcs(w4 + v + 64);
            uint4 a3 = __ldcs(w4 + v + 96);
            acc0 = dot8(a0, __ldg(x4 + v), acc0);
            acc1 = dot8(a1, __ldg(x4 + v + 32), acc1);
            acc0 = dot8(a2, __ldg(x4 + v + 64), acc0);
            acc1 = dot8(a3, __ldg(x4 + v + 96), acc1);
        }
        for (; v < nv; v += 32)
            acc0 = dot8(__ldcs(w4 + v), __ldg(x4 + v), acc0);
    } else {
        for (int64_t i = lane; i < k; i += 32)
            acc0 = fmaf(__bfloat162float(wr[i]), __bfloat162float(x[i]), acc0);
    }
    float acc = acc0 + acc1;
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0)
        y[row] = __float2bfloat16_rn(acc);
}

} /* namespace */

extern "C" cudaError_t rf__cuda_fill_index(uint32_t *p, int64_t n_words, cudaStream_t stream)
{
    fill_index_kernel<<<fill_grid(n_words), kFillBlock, 0, stream>>>(p, n_words);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_count_index_mismatch(const uint32_t *p, int64_t n_words,
                                                     unsigned long long *bad, cudaStream_t stream)
{
    count_mismatch_kernel<<<fill_grid(n_words), kFillBlock, 0, stream>>>(p, n_words, bad);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_fill_random(void *p, int64_t n, rf__cuda_elem e, uint64_t seed,
                                            cudaStream_t stream)
{
    const int grid = fill_grid(n);
    switch (e) {
    case RF__CUDA_ELEM_F32:
        fill_random_kernel<<<grid, kFillBlock, 0, stream>>>(static_cast<float *>(p), n, seed);
        break;
    case RF__CUDA_ELEM_BF16:
        fill_random_kernel<<<grid, kFillBlock, 0, stream>>>(static_cast<__nv_bfloat16 *>(p), n,
                                                            seed);
        break;
    case RF__CUDA_ELEM_F16:
        fill_random_kernel<<<grid, kFillBlock, 0, stream>>>(static_cast<__half *>(p), n, seed);
        break;
    case RF__CUDA_ELEM_E4M3:
        fill_random_kernel<<<grid, kFillBlock, 0, stream>>>(
            static_cast<__nv_fp8_storage_t *>(p), n, seed);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_stream_shape(int which, int sm_count, int *grid, int *block)
{
    int per_sm = 0;
    cudaError_t e = which == 0
                        ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, copy_v16_kernel,
                                                                        kStreamBlock, 0)
                        : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_v16_kernel,
                                                                        kStreamBlock, 0);
    if (e != cudaSuccess)
        return e;
    if (per_sm < 1)
        per_sm = 1;
    *grid = per_sm * sm_count;
    *block = kStreamBlock;
    return cudaSuccess;
}

extern "C" cudaError_t rf__cuda_copy_v16(const void *src, void *dst, int64_t n16, int grid,
                                         int block, cudaStream_t stream)
{
    copy_v16_kernel<<<grid, block, 0, stream>>>(static_cast<const uint4 *>(src),
                                                static_cast<uint4 *>(dst), n16);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_read_v16(const void *src, int64_t n16, unsigned int *sum, int grid,
                                         int block, cudaStream_t stream)
{
    read_v16_kernel<<<grid, block, 0, stream>>>(static_cast<const uint4 *>(src), n16, sum);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_gemv_bf16(const void *w, const void *x, void *y, int64_t n,
                                          int64_t k, cudaStream_t stream)
{
    int64_t blocks = (n + kGemvWarps - 1) / kGemvWarps;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidValue;
    gemv_bf16_kernel<<<(unsigned)blocks, kGemvWarps * 32, 0, stream>>>(
        static_cast<const __nv_bfloat16 *>(w), static_cast<const __nv_bfloat16 *>(x),
        static_cast<__nv_bfloat16 *>(y), n, k);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_kernels_probe(void)
{
    cudaFuncAttributes a;
    return cudaFuncGetAttributes(&a, fill_index_kernel);
}
