/* forward_pass.c - a dense decoder's forward pass on the CPU through
 * CBLAS, each operator timed on its own (rf_forward.h): the weights and the
 * cache built, then one step run.
 *
 * The pass follows one decoder layer in order, as llama2.c's forward()
 * does; the operators of a layer are a table, so the step loop times each
 * one the same way and the table order is the report order. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward_internal.h"
#include "measure_internal.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_op.h"

#include <cblas.h>

/* Threads asked for, or one per core. */
static int resolve_threads(int threads)
{
    if (threads > 0)
        return threads;
    rf_cpu cpu;
    if (rf_cpu_query(&cpu, NULL) == RF_OK && cpu.cores > 0)
        return cpu.cores;
    return 1;
}

/* The decode attention kernels, chosen once from the kernel table: the
 * ISA o->isa names (RF_ISA) or the best the CPU has, and the reference when
 * d_h is not a multiple the variant takes. */
static rf_status choose_attention(rf_forward *f, rf_err *err)
{
    rf_cpu cpu;
    rf_status s = rf_cpu_query(&cpu, err);
    if (!s)
        s = rf_kernels_choose(&cpu, f->o.isa, &f->kernels, err);
    if (!s && f->d.dh % f->kernels.attn_dh_multiple)
        s = rf_kernels_for(&cpu, RF_ISA_SCALAR, &f->kernels, err);
    if (s)
        return s;
    rf_kernel_name(rf_isa_name(f->kernels.attn_isa), "attn", "f32", f->attn_kernel,
                   sizeof f->attn_kernel);
    return RF_OK;
}

/* Large arrays are 2 MiB aligned with huge pages asked for (fewer TLB
 * misses while streaming weights); small ones 64-byte aligned. */
static float *alloc_floats(int64_t n)
{
    size_t bytes = (size_t)n * sizeof(float);
    if (bytes >= ((size_t)8 << 20))
        return rf__alloc_untouched(bytes);
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 64) == 0 ? p : NULL;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [center - half, center + half), two values per draw. */
static void fill(float *p, int64_t n, float center, float half, uint64_t *seed)
{
    const float unit = 1.0f / 16777216.0f; /* 2^-24 */
    int64_t i = 0;
    for (; i + 1 < n; i += 2) {
        uint64_t r = splitmix(seed);
        p[i] = center + half * (2.0f * (float)(r & 0xFFFFFF) * unit - 1.0f);
        p[i + 1] = center + half * (2.0f * (float)((r >> 40) & 0xFFFFFF) * unit - 1.0f);
    }
    if (i < n)
        p[i] = center + half * (2.0f * (float)(splitmix(seed) & 0xFFFFFF) * unit - 1.0f);
}

/* A weight matrix of fan-in k: uniform in +-1/sqrt(k), so outputs stay of
 * order one through the layers (no denormals to slow anything down). */
static float *weights(int64_t rows, int64_t k, uint64_t *seed)
{
    float *w = alloc_floats(rows * k);
    if (w)
        fill(w, rows * k, 0.0f, 1.0f / sqrtf((float)k), seed);
    return w;
}

static float *filled(int64_t n, float center, float half, uint64_t *seed)
{
    float *p = alloc_floats(n);
    if (p)
        fill(p, n, center, half, seed);
    return p;
}

void rf_forward_free(rf_forward *f)
{
    if (!f)
        return;
    for (int64_t l = 0; f->layers && l < f->d.N; l++) {
        rf__fwd_layer *L = &f->layers[l];
        float *arrays[] = {L->attn_norm, L->wq,       L->wk, L->wv, L->bq, L->bk,      L->bv,
                           L->wo,        L->mlp_norm, L->wg, L->wu, L->wd, L->k_cache, L->v_cache};
        for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
            free(arrays[i]);
    }
    free(f->layers);
    float *arrays[] = {f->final_norm, f->lm_head, f->rope_cos, f->rope_sin, f->x,
                       f->xn,         f->q,       f->k,        f->v,        f->att,
                       f->gate,       f->up,      f->scores,   f->last,     f->logits};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(f->token);
    free(f);
}

rf_status rf_forward_new(const rf_model *m, const rf_forward_opts *o, rf_forward **out, rf_err *err)
{
    *out = NULL;
    rf__fwd_shape s;
    rf_status st;
    if ((st = rf__fwd_shape_of(m, o, &s, err)) || (st = rf_forward_fit(m, o, 0, err)))
        return st;
    rf_forward *f = calloc(1, sizeof *f);
    if (!f)
        return rf_err_set(err, RF_ENOMEM, "out of memory");
    f->model = *m;
    f->o = *o;
    f->o.threads = resolve_threads(o->threads);
    f->d = s;
    f->window = m->window;
    if ((st = choose_attention(f, err))) {
        rf_forward_free(f);
        return st;
    }

    uint64_t seed = o->seed;
    int64_t H = s.H, B = s.B, M = s.M;
    int64_t cache = B * s.n_kv * s.cap * s.dh; /* < 2^63: mem_of checked it */
    f->layers = calloc((size_t)s.N, sizeof *f->layers);
    if (!f->layers)
        goto nomem;
    for (int64_t l = 0; l < s.N; l++) {
        rf__fwd_layer *L = &f->layers[l];
        L->sliding = m->window > 0 && m->sliding[l];
        if (!(L->attn_norm = filled(H, 1.0f, 0.1f, &seed)) ||
            !(L->wq = weights(s.q_dim, H, &seed)) || !(L->wk = weights(s.kv_dim, H, &seed)) ||
            !(L->wv = weights(s.kv_dim, H, &seed)) || !(L->wo = weights(H, s.q_dim, &seed)) ||
            !(L->mlp_norm = filled(H, 1.0f, 0.1f, &seed)) || !(L->wg = weights(s.ffn, H, &seed)) ||
            !(L->wu = weights(s.ffn, H, &seed)) || !(L->wd = weights(H, s.ffn, &seed)) ||
            !(L->k_cache = filled(cache, 0.0f, 1.0f, &seed)) ||
            !(L->v_cache = filled(cache, 0.0f, 1.0f, &seed)))
            goto nomem;
        if (s.bias && (!(L->bq = filled(s.q_dim, 0.0f, 0.1f, &seed)) ||
                       !(L->bk = filled(s.kv_dim, 0.0f, 0.1f, &seed)) ||
                       !(L->bv = filled(s.kv_dim, 0.0f, 0.1f, &seed))))
            goto nomem;
    }
    int64_t srows = s.q_tokens > s.g ? s.q_tokens : s.g;
    if (!(f->final_norm = filled(H, 1.0f, 0.1f, &seed)) || !(f->lm_head = weights(s.V, H, &seed)) ||
        !(f->rope_cos = alloc_floats(s.cap * s.dh / 2)) ||
        !(f->rope_sin = alloc_floats(s.cap * s.dh / 2)) || !(f->x = alloc_floats(M * H)) ||
        !(f->xn = alloc_floats(M * H)) || !(f->q = alloc_floats(M * s.q_dim)) ||
        !(f->k = alloc_floats(M * s.kv_dim)) || !(f->v = alloc_floats(M * s.kv_dim)) ||
        !(f->att = alloc_floats(M * s.q_dim)) || !(f->gate = alloc_floats(M * s.ffn)) ||
        !(f->up = alloc_floats(M * s.ffn)) || !(f->scores = alloc_floats(srows * s.cap)) ||
        !(f->last = alloc_floats(B * H)) || !(f->logits = alloc_floats(B * s.V)) ||
        !(f->token = malloc((size_t)M * sizeof *f->token)))
        goto nomem;
    /* RoPE tables, as engines precompute them: angle = pos theta^(-2i/d_h). */
    int64_t half = s.dh / 2;
    for (int64_t p = 0; p < s.cap; p++)
        for (int64_t i = 0; i < half; i++) {
            double a = (double)p * pow(RF__FWD_ROPE_THETA, -2.0 * (double)i / (double)s.dh);
            f->rope_cos[p * half + i] = (float)cos(a);
            f->rope_sin[p * half + i] = (float)sin(a);
        }
    for (int64_t r = 0; r < M; r++)
        f->token[r] = (int64_t)(splitmix(&seed) % (uint64_t)s.V);
    *out = f;
    return RF_OK;
nomem:
    rf_forward_free(f);
    return rf_err_set(err, RF_ENOMEM, "allocation failed while building %lld layers of %s",
                      (long long)s.N, m->name);
}

/* Y[M, N] = X[M, K] W^T (+ bias), W (N, K) row-major. */
static void linear(float *y, const float *x, const float *w, const float *bias, int64_t M,
                   int64_t K, int64_t N)
{
    float beta = 0.0f;
    if (bias) {
        for (int64_t r = 0; r < M; r++)
            memcpy(y + r * N, bias, (size_t)N * sizeof *y);
        beta = 1.0f;
    }
    if (M == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)N, (int)K, 1.0f, w, (int)K, x, 1, beta, y, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0f, x,
                    (int)K, w, (int)K, beta, y, (int)N);
}

static void rmsnorm(float *y, const float *x, const float *gamma, int64_t rows, int64_t H)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * H;
        float *yr = y + r * H;
        float ss = 0.0f;
        for (int64_t i = 0; i < H; i++)
            ss += xr[i] * xr[i];
        float inv = 1.0f / sqrtf(ss / (float)H + (float)RF__FWD_RMS_EPS);
        for (int64_t i = 0; i < H; i++)
            yr[i] = xr[i] * inv * gamma[i];
    }
}

/* Rotate-half RoPE of `heads` heads of one row in place. */
static void rope_row(float *v, int64_t heads, int64_t dh, const float *c, const float *s)
{
    int64_t half = dh / 2;
    for (int64_t h = 0; h < heads; h++) {
        float *x = v + h * dh;
        for (int64_t i = 0; i < half; i++) {
            float a = x[i], b = x[i + half];
            x[i] = a * c[i] - b * s[i];
            x[i + half] = b * c[i] + a * s[i];
        }
    }
}

/* Softmax of a row over [lo, hi) of n; the rest set to 0. */
static void softmax(float *x, int64_t n, int64_t lo, int64_t hi)
{
    float mx = -INFINITY, sum = 0.0f;
    for (int64_t i = lo; i < hi; i++)
        mx = x[i] > mx ? x[i] : mx;
    for (int64_t i = lo; i < hi; i++) {
        x[i] = expf(x[i] - mx);
        sum += x[i];
    }
    float inv = 1.0f / sum;
    for (int64_t i = 0; i < lo; i++)
        x[i] = 0.0f;
    for (int64_t i = lo; i < hi; i++)
        x[i] *= inv;
    for (int64_t i = hi; i < n; i++)
        x[i] = 0.0f;
}

/* Decode attention of sequence b and KV head j: the g query heads that
 * share the head score each block of keys while it is in L1 (K read once),
 * softmax, then V read once the same way (attn_kernels.h). */
static void decode_head(rf_forward *f, const rf__fwd_layer *L, int64_t b, int64_t j, float *sc)
{
    int64_t dh = f->d.dh, g = f->d.g, S = f->d.cap;
    int64_t k0 = L->sliding && S > f->window ? S - f->window : 0, nk = S - k0;
    const float *K = rf__fwd_cache_at(f, L->k_cache, b, j, k0);
    const float *V = rf__fwd_cache_at(f, L->v_cache, b, j, k0);
    const float *q = f->q + b * f->d.q_dim + j * g * dh;
    float *out = f->att + b * f->d.q_dim + j * g * dh;
    f->kernels.attn_scores_f32(q, K, g, nk, dh, 1.0f / sqrtf((float)dh), sc);
    for (int64_t h = 0; h < g; h++)
        softmax(sc + h * nk, nk, 0, nk);
    f->kernels.attn_values_f32(sc, V, g, nk, dh, out);
}

/* Decode: every (sequence, KV head) pair on the calling thread. Not spread
 * over more threads: after each call OpenBLAS leaves its worker threads
 * spinning for a while, and a thread of ours on their core ran slower than
 * one thread alone (measured here: 4.3 ms against 3.0 ms a layer). */
static void attention_decode(rf_forward *f, rf__fwd_layer *L)
{
    for (int64_t b = 0; b < f->o.batch; b++)
        for (int64_t j = 0; j < f->d.n_kv; j++)
            decode_head(f, L, b, j, f->scores);
}

/* Prefill: per sequence and query head, the T x S scores (one head at a
 * time, so they stay in cache), a causal (and window) mask, then V. */
static void attention_prefill(rf_forward *f, rf__fwd_layer *L)
{
    int64_t dh = f->d.dh, T = f->d.q_tokens, S = f->d.cap;
    int64_t k0 = 0;
    if (L->sliding && f->d.pos0 + 1 > f->window)
        k0 = f->d.pos0 + 1 - f->window; /* no query sees a key before this */
    int64_t nk = S - k0;
    float scale = 1.0f / sqrtf((float)dh);
    for (int64_t b = 0; b < f->o.batch; b++)
        for (int64_t h = 0; h < f->d.n_q; h++) {
            int64_t j = h / f->d.g;
            const float *K = rf__fwd_cache_at(f, L->k_cache, b, j, k0);
            const float *V = rf__fwd_cache_at(f, L->v_cache, b, j, k0);
            const float *q = f->q + b * T * f->d.q_dim + h * dh;
            float *out = f->att + b * T * f->d.q_dim + h * dh;
            float *sc = f->scores;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)nk, (int)dh, scale, q,
                        (int)f->d.q_dim, K, (int)dh, 0.0f, sc, (int)nk);
            for (int64_t t = 0; t < T; t++) {
                int64_t p = f->d.pos0 + t; /* this query's position */
                int64_t lo = L->sliding && p + 1 > f->window ? p + 1 - f->window : 0;
                softmax(sc + t * nk, nk, lo - k0 > 0 ? lo - k0 : 0, p + 1 - k0);
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)dh, (int)nk, 1.0f,
                        sc, (int)nk, V, (int)dh, 0.0f, out, (int)f->d.q_dim);
        }
}

/* ---- the operators of one layer, in order -------------------------------- */

typedef void (*layer_fn)(rf_forward *f, rf__fwd_layer *L);

static void op_attn_norm(rf_forward *f, rf__fwd_layer *L)
{
    rmsnorm(f->xn, f->x, L->attn_norm, f->d.M, f->d.H);
}

static void op_q_proj(rf_forward *f, rf__fwd_layer *L)
{
    linear(f->q, f->xn, L->wq, L->bq, f->d.M, f->d.H, f->d.q_dim);
}

static void op_k_proj(rf_forward *f, rf__fwd_layer *L)
{
    linear(f->k, f->xn, L->wk, L->bk, f->d.M, f->d.H, f->d.kv_dim);
}

static void op_v_proj(rf_forward *f, rf__fwd_layer *L)
{
    linear(f->v, f->xn, L->wv, L->bv, f->d.M, f->d.H, f->d.kv_dim);
}

static void op_rope(rf_forward *f, rf__fwd_layer *L)
{
    (void)L;
    int64_t half = f->d.dh / 2;
    for (int64_t r = 0; r < f->d.M; r++) {
        int64_t p = rf__fwd_row_pos(f, r);
        const float *c = f->rope_cos + p * half, *s = f->rope_sin + p * half;
        rope_row(f->q + r * f->d.q_dim, f->d.n_q, f->d.dh, c, s);
        rope_row(f->k + r * f->d.kv_dim, f->d.n_kv, f->d.dh, c, s);
    }
}

static void op_kv_write(rf_forward *f, rf__fwd_layer *L)
{
    size_t row = (size_t)f->d.dh * sizeof(float);
    for (int64_t r = 0; r < f->d.M; r++) {
        int64_t b = r / f->d.q_tokens, p = rf__fwd_row_pos(f, r);
        for (int64_t j = 0; j < f->d.n_kv; j++) {
            int64_t at = r * f->d.kv_dim + j * f->d.dh;
            memcpy(rf__fwd_cache_at(f, L->k_cache, b, j, p), f->k + at, row);
            memcpy(rf__fwd_cache_at(f, L->v_cache, b, j, p), f->v + at, row);
        }
    }
}

static void op_attention(rf_forward *f, rf__fwd_layer *L)
{
    if (f->o.phase == RF_DECODE)
        attention_decode(f, L);
    else
        attention_prefill(f, L);
}

static void op_o_proj(rf_forward *f, rf__fwd_layer *L)
{
    linear(f->xn, f->att, L->wo, NULL, f->d.M, f->d.q_dim, f->d.H);
}

static void residual(rf_forward *f)
{
    int64_t n = f->d.M * f->d.H;
    for (int64_t i = 0; i < n; i++)
        f->x[i] += f->xn[i];
}

static void op_residual(rf_forward *f, rf__fwd_layer *L)
{
    (void)L;
    residual(f);
}

static void op_mlp_norm(rf_forward *f, rf__fwd_layer *L)
{
    rmsnorm(f->xn, f->x, L->mlp_norm, f->d.M, f->d.H);
}

static void op_gate_proj(rf_forward *f, rf__fwd_layer *L)
{
    linear(f->gate, f->xn, L->wg, NULL, f->d.M, f->d.H, f->d.ffn);
}

static void op_up_proj(rf_forward *f, rf__fwd_layer *L)
{
    linear(f->up, f->xn, L->wu, NULL, f->d.M, f->d.H, f->d.ffn);
}

static void op_act(rf_forward *f, rf__fwd_layer *L)
{
    (void)L;
    int64_t n = f->d.M * f->d.ffn;
    for (int64_t i = 0; i < n; i++) {
        float g = f->gate[i];
        f->gate[i] = g / (1.0f + expf(-g)) * f->up[i];
    }
}

static void op_down_proj(rf_forward *f, rf__fwd_layer *L)
{
    linear(f->xn, f->gate, L->wd, NULL, f->d.M, f->d.ffn, f->d.H);
}

static const struct {
    rf_fwd_op id;
    layer_fn fn;
} layer_ops[] = {
    {RF_FWD_ATTN_NORM, op_attn_norm},
    {RF_FWD_Q_PROJ, op_q_proj},
    {RF_FWD_K_PROJ, op_k_proj},
    {RF_FWD_V_PROJ, op_v_proj},
    {RF_FWD_ROPE, op_rope},
    {RF_FWD_KV_WRITE, op_kv_write},
    {RF_FWD_ATTENTION, op_attention},
    {RF_FWD_O_PROJ, op_o_proj},
    {RF_FWD_ATTN_RESIDUAL, op_residual},
    {RF_FWD_MLP_NORM, op_mlp_norm},
    {RF_FWD_GATE_PROJ, op_gate_proj},
    {RF_FWD_UP_PROJ, op_up_proj},
    {RF_FWD_ACT, op_act},
    {RF_FWD_DOWN_PROJ, op_down_proj},
    {RF_FWD_MLP_RESIDUAL, op_residual},
};

static void embed(rf_forward *f)
{
    for (int64_t r = 0; r < f->d.M; r++)
        memcpy(f->x + r * f->d.H, f->lm_head + f->token[r] * f->d.H,
               (size_t)f->d.H * sizeof(float));
}

static void final_norm(rf_forward *f)
{
    for (int64_t b = 0; b < f->o.batch; b++)
        rmsnorm(f->last + b * f->d.H, f->x + rf__fwd_last_row(f, b) * f->d.H, f->final_norm, 1,
                f->d.H);
}

static void lm_head(rf_forward *f)
{
    linear(f->logits, f->last, f->lm_head, NULL, f->o.batch, f->d.H, f->d.V);
}

rf_status rf_forward_step(rf_forward *f, rf_forward_times *t, rf_err *err)
{
    memset(t, 0, sizeof *t);
    openblas_set_num_threads(f->o.threads);
    double start = rf_time_now_s(), t0 = start, t1;
    embed(f);
    t1 = rf_time_now_s();
    t->op_s[RF_FWD_EMBED] = t1 - t0;
    double layers_start = t1;
    for (int64_t l = 0; l < f->d.N; l++) {
        rf__fwd_layer *L = &f->layers[l];
        for (size_t i = 0; i < sizeof layer_ops / sizeof layer_ops[0]; i++) {
            rf_fwd_op id = layer_ops[i].id;
            if (id == RF_FWD_ATTENTION && L->sliding)
                id = RF_FWD_ATTENTION_SWA;
            t0 = rf_time_now_s();
            layer_ops[i].fn(f, L);
            t1 = rf_time_now_s();
            t->op_s[id] += t1 - t0;
        }
    }
    double layers_end = t1;
    t0 = rf_time_now_s();
    final_norm(f);
    t1 = rf_time_now_s();
    t->op_s[RF_FWD_FINAL_NORM] = t1 - t0;
    t0 = t1;
    lm_head(f);
    t1 = rf_time_now_s();
    t->op_s[RF_FWD_LM_HEAD] = t1 - t0;
    t->layers_s = layers_end - layers_start;
    t->step_s = t1 - start;
    t->head_s = t->step_s - t->layers_s;
    /* A NaN would mean the pass computed garbage; every logit is consumed
     * here, so no part of the work can be dropped either. */
    float sum = 0.0f;
    for (int64_t i = 0; i < f->o.batch * f->d.V; i++)
        sum += f->logits[i];
    if (!isfinite(sum))
        return rf_err_set(err, RF_EINTERNAL, "the forward pass produced a non-finite logit");
    return RF_OK;
}
