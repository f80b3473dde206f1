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

namespace
{

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

__device__ __forceinline__ int64_t grid_stride() { return (int64_t)gridDim.x * blockDim.x; }

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

/* ---- Calibration kernels ------------------------------------------------- */

constexpr int kAttnWarps = 4;
constexpr int kAttnGroup = 4;
constexpr int kRowBlock = 256;

/* One warp's running softmax over some keys for the G query heads of a KV
 * head: lane l holds dims [l E, l E + E) of each head. */
template <int D, int G> struct attn_state {
    float m[G], l[G], acc[G][D / 32];
};

__device__ __forceinline__ float bf(const __nv_bfloat16 v) { return __bfloat162float(v); }

/* Keys begin, begin + step, ... < end of k and v (rows of D) against the
 * G heads of q (G rows of D, scaled by scale). */
template <int D, int G>
__device__ void attend(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
                       const __nv_bfloat16 *__restrict__ v, int64_t begin, int64_t end,
                       int64_t step, float scale, attn_state<D, G> &s)
{
    constexpr int E = D / 32;
    const int lane = threadIdx.x & 31;
    float qv[G][E];
#pragma unroll
    for (int g = 0; g < G; g++) {
        s.m[g] = -INFINITY;
        s.l[g] = 0.f;
#pragma unroll
        for (int e = 0; e < E; e++) {
            qv[g][e] = bf(q[g * D + lane * E + e]) * scale;
            s.acc[g][e] = 0.f;
        }
    }
    for (int64_t j = begin; j < end; j += step) {
        float kv[E], vv[E];
#pragma unroll
        for (int e = 0; e < E; e++) {
            kv[e] = bf(k[j * D + lane * E + e]);
            vv[e] = bf(v[j * D + lane * E + e]);
        }
#pragma unroll
        for (int g = 0; g < G; g++) {
            float d = 0.f;
#pragma unroll
            for (int e = 0; e < E; e++)
                d = fmaf(qv[g][e], kv[e], d);
            for (int o = 16; o > 0; o >>= 1)
                d += __shfl_xor_sync(0xffffffffu, d, o);
            float m = fmaxf(s.m[g], d);
            float corr = __expf(s.m[g] - m); /* 0 for the first key (-inf) */
            float p = __expf(d - m);
            s.l[g] = s.l[g] * corr + p;
#pragma unroll
            for (int e = 0; e < E; e++)
                s.acc[g][e] = fmaf(s.acc[g][e], corr, p * vv[e]);
            s.m[g] = m;
        }
    }
}

template <int D, int G>
__global__ void __launch_bounds__(kAttnWarps * 32)
    attn_decode_kernel(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
                       const __nv_bfloat16 *__restrict__ v, float *__restrict__ part, int64_t S,
                       int n_kv, int64_t chunk)
{
    constexpr int E = D / 32;
    __shared__ float sm_m[kAttnWarps][G], sm_l[kAttnWarps][G];
    __shared__ float sm_acc[kAttnWarps][G][D];
    const int64_t bh = blockIdx.x; /* b n_kv + h */
    const int split = gridDim.y, sp = blockIdx.y;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t begin = (int64_t)sp * chunk;
    const int64_t end = begin + chunk < S ? begin + chunk : S;
    attn_state<D, G> s;
    attend<D, G>(q + bh * G * D, k + bh * S * D, v + bh * S * D, begin + warp, end, kAttnWarps,
                 rsqrtf((float)D), s);
#pragma unroll
    for (int g = 0; g < G; g++) {
        if (lane == 0) {
            sm_m[warp][g] = s.m[g];
            sm_l[warp][g] = s.l[g];
        }
#pragma unroll
        for (int e = 0; e < E; e++)
            sm_acc[warp][g][lane * E + e] = s.acc[g][e];
    }
    __syncthreads();
    for (int t = threadIdx.x; t < G * D; t += blockDim.x) {
        const int g = t / D, d = t % D;
        float M = -INFINITY;
        for (int w = 0; w < kAttnWarps; w++)
            M = fmaxf(M, sm_m[w][g]);
        float L = 0.f, A = 0.f;
        for (int w = 0; w < kAttnWarps; w++) {
            float c = sm_m[w][g] == -INFINITY ? 0.f : __expf(sm_m[w][g] - M);
            L = fmaf(sm_l[w][g], c, L);
            A = fmaf(sm_acc[w][g][d], c, A);
        }
        float *o = part + ((bh * G + g) * split + sp) * (D + 2);
        o[d] = A;
        if (d == 0) {
            o[D] = M;
            o[D + 1] = L;
        }
    }
}

/* One block per (sequence, query head) row of out, D threads. */
template <int D>
__global__ void attn_combine_kernel(const float *__restrict__ part, __nv_bfloat16 *__restrict__ out,
                                    int split)
{
    const int64_t row = blockIdx.x;
    const int d = threadIdx.x;
    const float *p = part + row * split * (D + 2);
    float M = -INFINITY;
    for (int s = 0; s < split; s++)
        M = fmaxf(M, p[s * (D + 2) + D]);
    float L = 0.f, A = 0.f;
    for (int s = 0; s < split; s++) {
        float c = __expf(p[s * (D + 2) + D] - M);
        L = fmaf(p[s * (D + 2) + D + 1], c, L);
        A = fmaf(p[s * (D + 2) + d], c, A);
    }
    out[row * D + d] = __float2bfloat16_rn(A / L);
}

template <int D, int G>
__global__ void __launch_bounds__(kAttnWarps * 32)
    attn_prefill_kernel(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
                        const __nv_bfloat16 *__restrict__ v, __nv_bfloat16 *__restrict__ out,
                        int64_t T, int n_kv)
{
    constexpr int E = D / 32;
    const int64_t t = (int64_t)blockIdx.x * kAttnWarps + (threadIdx.x >> 5);
    const int h = blockIdx.y, lane = threadIdx.x & 31;
    if (t >= T)
        return;                             /* the whole warp */
    const int64_t row = (t * n_kv + h) * G; /* first query head of h at token t */
    attn_state<D, G> s;
    attend<D, G>(q + row * D, k + (int64_t)h * T * D, v + (int64_t)h * T * D, 0, t + 1, 1,
                 rsqrtf((float)D), s);
#pragma unroll
    for (int g = 0; g < G; g++)
#pragma unroll
        for (int e = 0; e < E; e++)
            out[(row + g) * D + lane * E + e] = __float2bfloat16_rn(s.acc[g][e] / s.l[g]);
}

__global__ void __launch_bounds__(kRowBlock)
    rmsnorm_kernel(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
                   __nv_bfloat16 *__restrict__ y, int64_t width)
{
    __shared__ float partial[kRowBlock / 32];
    const __nv_bfloat16 *xr = x + (int64_t)blockIdx.x * width;
    __nv_bfloat16 *yr = y + (int64_t)blockIdx.x * width;
    float sq = 0.f;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
        float a = bf(xr[i]);
        sq = fmaf(a, a, sq);
    }
    for (int o = 16; o > 0; o >>= 1)
        sq += __shfl_xor_sync(0xffffffffu, sq, o);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x >> 5] = sq;
    __syncthreads();
    float total = 0.f;
    for (int i = 0; i < kRowBlock / 32; i++)
        total += partial[i];
    const float r = rsqrtf(total / (float)width + 1e-6f);
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x)
        yr[i] = __float2bfloat16_rn(bf(xr[i]) * r * bf(w[i]));
}

__global__ void rope_kernel(__nv_bfloat16 *x, int64_t rows, int64_t heads, int64_t d)
{
    const int64_t half = d / 2, pairs = rows * heads * half;
    for (int64_t p = global_id(); p < pairs; p += grid_stride()) {
        const int64_t i = p % half, rh = p / half, r = rh / heads;
        const float theta = (float)(r + 1) * powf(10000.f, -2.f * (float)i / (float)d);
        float sn, cs;
        sincosf(theta, &sn, &cs);
        __nv_bfloat16 *xp = x + rh * d;
        const float a = bf(xp[i]), b = bf(xp[i + half]);
        xp[i] = __float2bfloat16_rn(a * cs - b * sn);
        xp[i + half] = __float2bfloat16_rn(b * cs + a * sn);
    }
}

__global__ void silu_mul_kernel(const __nv_bfloat16 *__restrict__ g,
                                const __nv_bfloat16 *__restrict__ u, __nv_bfloat16 *__restrict__ y,
                                int64_t n)
{
    for (int64_t i = global_id(); i < n; i += grid_stride()) {
        const float a = bf(g[i]);
        y[i] = __float2bfloat16_rn(a / (1.f + __expf(-a)) * bf(u[i]));
    }
}

__global__ void add_kernel(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
                           __nv_bfloat16 *__restrict__ y, int64_t n)
{
    for (int64_t i = global_id(); i < n; i += grid_stride())
        y[i] = __float2bfloat16_rn(bf(a[i]) + bf(b[i]));
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
        fill_random_kernel<<<grid, kFillBlock, 0, stream>>>(static_cast<__nv_fp8_storage_t *>(p), n,
                                                            seed);
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

extern "C" cudaError_t rf__cuda_attn_decode_bf16(const void *q, const void *k, const void *v,
                                                 void *out, float *part, int64_t batch,
                                                 int64_t keys, int n_kv, int group, int head_dim,
                                                 int split, cudaStream_t stream)
{
    if (group != kAttnGroup || (head_dim != 64 && head_dim != 128) || split < 1 || keys < 1 ||
        batch < 1 || n_kv < 1 || (int64_t)split > keys || batch * n_kv > 0x7fffffff)
        return cudaErrorInvalidValue;
    const int64_t chunk = (keys + split - 1) / split;
    if ((int64_t)(split - 1) * chunk >= keys) /* an empty slice */
        return cudaErrorInvalidValue;
    const dim3 grid((unsigned)(batch * n_kv), (unsigned)split);
    const auto *qb = static_cast<const __nv_bfloat16 *>(q);
    const auto *kb = static_cast<const __nv_bfloat16 *>(k);
    const auto *vb = static_cast<const __nv_bfloat16 *>(v);
    auto *ob = static_cast<__nv_bfloat16 *>(out);
    const unsigned rows = (unsigned)(batch * n_kv * group);
    const int threads = kAttnWarps * 32;
    if (head_dim == 64) {
        attn_decode_kernel<64, kAttnGroup>
            <<<grid, threads, 0, stream>>>(qb, kb, vb, part, keys, n_kv, chunk);
        attn_combine_kernel<64><<<rows, 64, 0, stream>>>(part, ob, split);
    } else {
        attn_decode_kernel<128, kAttnGroup>
            <<<grid, threads, 0, stream>>>(qb, kb, vb, part, keys, n_kv, chunk);
        attn_combine_kernel<128><<<rows, 128, 0, stream>>>(part, ob, split);
    }
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_attn_prefill_bf16(const void *q, const void *k, const void *v,
                                                  void *out, int64_t tokens, int n_kv, int group,
                                                  int head_dim, cudaStream_t stream)
{
    if (group != kAttnGroup || (head_dim != 64 && head_dim != 128) || tokens < 1 || n_kv < 1 ||
        n_kv > 65535)
        return cudaErrorInvalidValue;
    const dim3 grid((unsigned)((tokens + kAttnWarps - 1) / kAttnWarps), (unsigned)n_kv);
    const auto *qb = static_cast<const __nv_bfloat16 *>(q);
    const auto *kb = static_cast<const __nv_bfloat16 *>(k);
    const auto *vb = static_cast<const __nv_bfloat16 *>(v);
    auto *ob = static_cast<__nv_bfloat16 *>(out);
    if (head_dim == 64)
        attn_prefill_kernel<64, kAttnGroup>
            <<<grid, kAttnWarps * 32, 0, stream>>>(qb, kb, vb, ob, tokens, n_kv);
    else
        attn_prefill_kernel<128, kAttnGroup>
            <<<grid, kAttnWarps * 32, 0, stream>>>(qb, kb, vb, ob, tokens, n_kv);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_rmsnorm_bf16(const void *x, const void *w, void *y, int64_t rows,
                                             int64_t width, cudaStream_t stream)
{
    if (rows < 1 || rows > 0x7fffffff || width < 1)
        return cudaErrorInvalidValue;
    rmsnorm_kernel<<<(unsigned)rows, kRowBlock, 0, stream>>>(
        static_cast<const __nv_bfloat16 *>(x), static_cast<const __nv_bfloat16 *>(w),
        static_cast<__nv_bfloat16 *>(y), width);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_rope_bf16(void *x, int64_t rows, int64_t heads, int64_t head_dim,
                                          cudaStream_t stream)
{
    if (rows < 1 || heads < 1 || head_dim < 2 || head_dim % 2)
        return cudaErrorInvalidValue;
    rope_kernel<<<fill_grid(rows * heads * head_dim / 2), kFillBlock, 0, stream>>>(
        static_cast<__nv_bfloat16 *>(x), rows, heads, head_dim);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_silu_mul_bf16(const void *g, const void *u, void *y, int64_t n,
                                              cudaStream_t stream)
{
    silu_mul_kernel<<<fill_grid(n), kFillBlock, 0, stream>>>(static_cast<const __nv_bfloat16 *>(g),
                                                             static_cast<const __nv_bfloat16 *>(u),
                                                             static_cast<__nv_bfloat16 *>(y), n);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_add_bf16(const void *a, const void *b, void *y, int64_t n,
                                         cudaStream_t stream)
{
    add_kernel<<<fill_grid(n), kFillBlock, 0, stream>>>(static_cast<const __nv_bfloat16 *>(a),
                                                        static_cast<const __nv_bfloat16 *>(b),
                                                        static_cast<__nv_bfloat16 *>(y), n);
    return cudaGetLastError();
}

extern "C" cudaError_t rf__cuda_kernels_probe(void)
{
    cudaFuncAttributes a;
    return cudaFuncGetAttributes(&a, fill_index_kernel);
}
