/* cuda_calib_plan.c - the host side of the GPU calibration (rf_cuda.h):
 * the grid, the sizes that keep weights and the KV cache out of L2, the
 * operator each point stands for, and how a timed point joins its series.
 * Plain C with no CUDA header, so it is built (and tested) with the
 * backend and without it. */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_cuda.h"

/* (K, N): a 1B-3B model's k_proj and q_proj, an 8B's k/q, the MLPs of
 * both (gate/up, down), and lm_head-sized ones (V = 128k), as on the CPU. */
static const int64_t gemm_full[][2] = {
    {2048, 256},  {2048, 2048},  {4096, 1024},  {4096, 4096},   {2048, 8192},
    {8192, 2048}, {4096, 14336}, {14336, 4096}, {2048, 131072}, {4096, 131072},
};
static const int64_t gemm_quick[][2] = {{2048, 512}, {4096, 4096}, {4096, 14336}, {2048, 131072}};
static const int64_t m_full[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};
static const int64_t m_quick[] = {1, 4, 16, 64, 256, 2048};
static const int64_t head_dims[] = {64, 128};
static const int64_t head_dims_quick[] = {128};
static const int64_t keys_full[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
static const int64_t keys_quick[] = {128, 1024, 8192, 32768};
static const int64_t tokens_full[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
static const int64_t tokens_quick[] = {16, 128, 1024, 4096};
/* 2^10 .. 2^26 elements by 4 */
static const int64_t elems_full[] = {1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18,
                                     1 << 20, 1 << 22, 1 << 24, 1 << 26};
static const int64_t elems_quick[] = {1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26};
/* 2^12 .. 2^28 bytes by 4 */
static const int64_t copy_full[] = {1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20,
                                    1 << 22, 1 << 24, 1 << 26, 1 << 28};
static const int64_t copy_quick[] = {1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 28};
#define COUNT(a) (sizeof a / sizeof a[0])
#define ELEMENTWISE_KINDS 4 /* norm, rope, act, residual */
#define SPLIT_MAX 64
#define SPLIT_MIN_KEYS 256

rf_cuda_calib_plan rf_cuda_calib_plan_of(bool quick)
{
    if (quick)
        return (rf_cuda_calib_plan){gemm_quick,          COUNT(gemm_quick), m_quick,
                                    COUNT(m_quick),      head_dims_quick,   COUNT(head_dims_quick),
                                    keys_quick,          COUNT(keys_quick), tokens_quick,
                                    COUNT(tokens_quick), elems_quick,       COUNT(elems_quick),
                                    copy_quick,          COUNT(copy_quick)};
    return (rf_cuda_calib_plan){gemm_full,   COUNT(gemm_full),   m_full,     COUNT(m_full),
                                head_dims,   COUNT(head_dims),   keys_full,  COUNT(keys_full),
                                tokens_full, COUNT(tokens_full), elems_full, COUNT(elems_full),
                                copy_full,   COUNT(copy_full)};
}

size_t rf_cuda_calib_plan_points(const rf_cuda_calib_plan *pl)
{
    return pl->n_gemm * pl->n_m + pl->n_head_dims * (pl->n_keys + pl->n_tokens) +
           ELEMENTWISE_KINDS * pl->n_elems + pl->n_copy;
}

uint64_t rf_cuda_rotation_copies(uint64_t set_bytes, uint64_t l2_bytes, uint64_t free_bytes,
                                 uint64_t reserve_bytes)
{
    if (set_bytes == 0)
        return 1;
    uint64_t copies = (4 * l2_bytes + set_bytes - 1) / set_bytes;
    copies = copies < 1 ? 1 : copies > RF_CUDA_MAX_COPIES ? RF_CUDA_MAX_COPIES : copies;
    uint64_t room = free_bytes > reserve_bytes ? free_bytes - reserve_bytes : 0;
    if (copies > room / set_bytes)
        copies = room / set_bytes;
    return copies < 1 ? 1 : copies;
}

int64_t rf_cuda_calib_decode_batch(int64_t keys, int64_t head_dim, uint64_t l2_bytes)
{
    /* K and V of one sequence: 2 n_kv S d_h elements of 2 bytes */
    uint64_t per_seq = 2ull * RF_CUDA_CALIB_NKV * (uint64_t)keys * (uint64_t)head_dim * 2;
    if (per_seq == 0)
        return 1;
    uint64_t b = (4 * l2_bytes + per_seq - 1) / per_seq;
    return b < 1 ? 1 : (int64_t)b;
}

int rf_cuda_attn_split(int64_t batch, int64_t n_kv, int64_t keys, int sm_count)
{
    int64_t blocks = batch * n_kv;
    int64_t want = blocks > 0 ? (2 * (int64_t)sm_count + blocks - 1) / blocks : 1;
    int64_t most = keys / SPLIT_MIN_KEYS;
    want = want > most ? most : want;
    want = want > SPLIT_MAX ? SPLIT_MAX : want;
    if (want < 1)
        return 1;
    /* slices of ceil(S / want) keys; as many as that makes, none empty */
    int64_t chunk = (keys + want - 1) / want;
    return (int)((keys + chunk - 1) / chunk);
}

rf_status rf_cuda_calib_op(rf_calib_kind k, int64_t x, int64_t a, int64_t batch, rf_op *out,
                           rf_err *err)
{
    static const char *const attn_names[3] = {"attention", "attn_scores", "attn_softmax"};
    const rf_dtype bf16 = rf_dtype_of(RF_BF16);
    int64_t width = x < RF_CUDA_CALIB_WIDTH ? x : RF_CUDA_CALIB_WIDTH;
    memset(out, 0, sizeof *out);
    if (x < 1)
        return rf_err_set(err, RF_EINVAL, "calibration point: x = %lld must be >= 1", (long long)x);
    switch (k) {
    case RF_CALIB_ATTN_DECODE:
    case RF_CALIB_ATTN_PREFILL: {
        if (a != 64 && a != 128)
            return rf_err_set(err, RF_EINVAL,
                              "calibration point: the attention kernels run "
                              "d_h 64 and 128, not %lld",
                              (long long)a);
        bool decode = k == RF_CALIB_ATTN_DECODE;
        rf_attn_desc d = {.n_q = RF_CUDA_CALIB_NQ,
                          .n_kv = RF_CUDA_CALIB_NKV,
                          .head_dim = a,
                          .batch = decode ? batch : 1,
                          .q_tokens = decode ? 1 : x,
                          .keys = x,
                          .causal = !decode};
        rf_op ops[3];
        size_t n = 0;
        rf_status s = rf_op_attention_full(attn_names, &d, bf16, bf16, ops, &n, err);
        if (s == RF_OK)
            *out = ops[0];
        return s;
    }
    case RF_CALIB_NORM:
    case RF_CALIB_ROPE:
    case RF_CALIB_ACT:
    case RF_CALIB_RESIDUAL:
        if (x % width || (k == RF_CALIB_ROPE && width % 128))
            return rf_err_set(err, RF_EINVAL,
                              "calibration point: %s over %lld elements is "
                              "not whole rows of %lld",
                              rf_calib_kind_name(k), (long long)x,
                              (long long)(k == RF_CALIB_ROPE ? 128 : width));
        if (k == RF_CALIB_NORM)
            return rf_op_norm("norm", x / width, width, bf16, bf16, out, err);
        if (k == RF_CALIB_ROPE)
            return rf_op_rope("rope", x / width, width / 128, 128, bf16, out, err);
        if (k == RF_CALIB_ACT)
            return rf_op_act("act", x / width, width, RF_ACT_SILU_MUL_FLOPS, bf16, out, err);
        return rf_op_residual("residual", x / width, width, bf16, out, err);
    case RF_CALIB_COPY: {
        /* kv_write: Q = M e (b_a + b_kv) = 4 M e bytes, read and written */
        int64_t e = x / 4 < 1024 ? x / 4 : 1024;
        if (x % 32 || x % (4 * e))
            return rf_err_set(err, RF_EINVAL,
                              "calibration point: a copy of %lld bytes is not "
                              "whole 16-byte vectors each way",
                              (long long)x);
        return rf_op_cache_write("kv_write", x / (4 * e), e, bf16, bf16, out, err);
    }
    default:
        return rf_err_set(err, RF_EINVAL,
                          "calibration point: kind %d has no operator here "
                          "(GEMM points come from cuBLASLt)",
                          (int)k);
    }
}

rf_status rf_cuda_calib_add(rf_calib *c, rf_calib_kind k, int64_t a, int64_t b, int64_t x,
                            double flops, double bytes, double time_s, rf_err *err)
{
    const char *name = rf_calib_kind_name(k);
    if (!name || x < 1 || !(time_s > 0) || !(flops >= 0) || !(bytes >= 0) || !(flops + bytes > 0))
        return rf_err_set(err, RF_EINVAL,
                          "calibration: %s a=%lld b=%lld x=%lld: bad point "
                          "(F %g, Q %g, t %g s)",
                          name ? name : "?", (long long)a, (long long)b, (long long)x, flops, bytes,
                          time_s);
    rf_calib_series *s = NULL;
    for (size_t i = 0; i < c->n_series && !s; i++)
        if (c->series[i].kind == k && c->series[i].a == a && c->series[i].b == b)
            s = &c->series[i];
    if (!s) {
        if (c->n_series == RF_CALIB_MAX_SERIES)
            return rf_err_set(err, RF_ERANGE, "calibration: more than %d series",
                              RF_CALIB_MAX_SERIES);
        s = &c->series[c->n_series++];
        memset(s, 0, sizeof *s);
        s->kind = k, s->a = a, s->b = b;
    }
    size_t at = 0;
    while (at < s->n && s->pt[at].x < x)
        at++;
    if (at < s->n && s->pt[at].x == x)
        return rf_err_set(err, RF_EINVAL,
                          "calibration: %s a=%lld b=%lld: a second point at "
                          "x=%lld",
                          name, (long long)a, (long long)b, (long long)x);
    if (s->n == RF_CALIB_MAX_POINTS)
        return rf_err_set(err, RF_ERANGE, "calibration: %s a=%lld b=%lld: more than %d points",
                          name, (long long)a, (long long)b, RF_CALIB_MAX_POINTS);
    memmove(&s->pt[at + 1], &s->pt[at], (s->n - at) * sizeof s->pt[0]);
    s->pt[at] = (rf_calib_point){.x = x, .flops = flops, .bytes = bytes, .time_s = time_s};
    s->n++;
    return RF_OK;
}
