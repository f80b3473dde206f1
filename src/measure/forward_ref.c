/* forward_ref.c - the scalar reference of the forward pass: plain loops in
 * double, one token row and one head at a time, written from the formulas
 * rather than from forward_pass.c, so the two can only agree by being right.
 *
 *   RMSNorm   y = x / sqrt(mean(x^2) + eps) * gamma
 *   linear    y[n] = sum_k x[k] W[n][k] (+ bias[n])
 *   RoPE      (a, b) -> (a cos - b sin, b cos + a sin), pairs (i, i + d_h/2),
 *             angle = pos theta^(-2i/d_h)
 *   attention softmax over visible keys (causal; within the window on a
 *             sliding layer) of q.k / sqrt(d_h), times V
 *   MLP       down(silu(gate(x)) * up(x))
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forward_internal.h"

static void rmsnorm_ref(double *y, const double *x, const float *gamma, int64_t H)
{
    double ss = 0;
    for (int64_t i = 0; i < H; i++)
        ss += x[i] * x[i];
    double inv = 1.0 / sqrt(ss / (double)H + RF__FWD_RMS_EPS);
    for (int64_t i = 0; i < H; i++)
        y[i] = x[i] * inv * (double)gamma[i];
}

/* y (N) = W (N, K) x (K) + bias */
static void linear_ref(double *y, const double *x, const float *w, const float *bias, int64_t K,
                       int64_t N)
{
    for (int64_t n = 0; n < N; n++) {
        double acc = bias ? (double)bias[n] : 0.0;
        for (int64_t k = 0; k < K; k++)
            acc += (double)w[n * K + k] * x[k];
        y[n] = acc;
    }
}

static void rope_ref(double *v, int64_t heads, int64_t dh, int64_t pos)
{
    int64_t half = dh / 2;
    for (int64_t i = 0; i < half; i++) {
        double a = (double)pos * pow(RF__FWD_ROPE_THETA, -2.0 * (double)i / (double)dh);
        double c = cos(a), s = sin(a);
        for (int64_t h = 0; h < heads; h++) {
            double x1 = v[h * dh + i], x2 = v[h * dh + i + half];
            v[h * dh + i] = x1 * c - x2 * s;
            v[h * dh + i + half] = x2 * c + x1 * s;
        }
    }
}

/* Key or value j of sequence b at position p: from the cache before pos0,
 * from this step's own rows after. */
static double kv_at(const struct rf_forward *f, const float *cache, const double *fresh, int64_t b,
                    int64_t j, int64_t p, int64_t i)
{
    if (p < f->d.pos0)
        return (double)cache[((b * f->d.n_kv + j) * f->d.cap + p) * f->d.dh + i];
    int64_t r = b * f->d.q_tokens + (p - f->d.pos0);
    return fresh[r * f->d.kv_dim + j * f->d.dh + i];
}

/* The reference pass's scratch, all double. */
typedef struct ref_bufs {
    double *x;         /* (M, H) the residual stream                       */
    double *xn;        /* (H) one normed row                               */
    double *q;         /* (M, n_q d_h)                                     */
    double *k, *v;     /* (M, n_kv d_h) this step's keys and values        */
    double *att;       /* (M, n_q d_h) attention output                    */
    double *tmp;       /* (max(H, F_ff)) one row of a projection           */
    double *gate, *up; /* (F_ff)                                           */
    double *p;         /* (cap) one head's attention weights               */
    double *out;       /* (V) one row of logits                            */
} ref_bufs;

static void bufs_free(ref_bufs *b)
{
    double *all[] = {b->x, b->xn, b->q, b->k, b->v, b->att, b->tmp, b->gate, b->up, b->p, b->out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

static bool bufs_new(const struct rf_forward *f, ref_bufs *b)
{
    int64_t M = f->d.M, H = f->d.H, F = f->d.ffn;
    *b = (ref_bufs){.x = calloc((size_t)(M * H), sizeof(double)),
                    .xn = calloc((size_t)H, sizeof(double)),
                    .q = calloc((size_t)(M * f->d.q_dim), sizeof(double)),
                    .k = calloc((size_t)(M * f->d.kv_dim), sizeof(double)),
                    .v = calloc((size_t)(M * f->d.kv_dim), sizeof(double)),
                    .att = calloc((size_t)(M * f->d.q_dim), sizeof(double)),
                    .tmp = calloc((size_t)(H > F ? H : F), sizeof(double)),
                    .gate = calloc((size_t)F, sizeof(double)),
                    .up = calloc((size_t)F, sizeof(double)),
                    .p = calloc((size_t)f->d.cap, sizeof(double)),
                    .out = calloc((size_t)f->d.V, sizeof(double))};
    return b->x && b->xn && b->q && b->k && b->v && b->att && b->tmp && b->gate && b->up && b->p &&
           b->out;
}

/* Layer l's attn_norm, q, k, v (with biases) and RoPE for every row; the
 * new K and V recorded in k_new, v_new. */
static void qkv_rows(const struct rf_forward *f, const rf__fwd_layer *L, int64_t l, ref_bufs *b,
                     float *k_new, float *v_new)
{
    int64_t M = f->d.M, H = f->d.H, qd = f->d.q_dim, kvd = f->d.kv_dim, dh = f->d.dh;
    for (int64_t r = 0; r < M; r++) {
        int64_t pos = f->d.pos0 + r % f->d.q_tokens;
        rmsnorm_ref(b->xn, b->x + r * H, L->attn_norm, H);
        linear_ref(b->q + r * qd, b->xn, L->wq, L->bq, H, qd);
        linear_ref(b->k + r * kvd, b->xn, L->wk, L->bk, H, kvd);
        linear_ref(b->v + r * kvd, b->xn, L->wv, L->bv, H, kvd);
        rope_ref(b->q + r * qd, f->d.n_q, dh, pos);
        rope_ref(b->k + r * kvd, f->d.n_kv, dh, pos);
        for (int64_t i = 0; i < kvd; i++) {
            k_new[(l * M + r) * kvd + i] = (float)b->k[r * kvd + i];
            v_new[(l * M + r) * kvd + i] = (float)b->v[r * kvd + i];
        }
    }
}

/* Query head h of row r: softmax(q K^T / sqrt(d_h)) V over the keys it
 * sees (causal, and the window on a sliding layer), into att. */
static void attend_head(const struct rf_forward *f, const rf__fwd_layer *L, ref_bufs *b, int64_t r,
                        int64_t h)
{
    int64_t dh = f->d.dh, qd = f->d.q_dim;
    int64_t seq = r / f->d.q_tokens, pos = f->d.pos0 + r % f->d.q_tokens, j = h / f->d.g;
    int64_t lo = L->sliding && pos + 1 > f->window ? pos + 1 - f->window : 0;
    const double *qh = b->q + r * qd + h * dh;
    double mx = -INFINITY, sum = 0, *p = b->p;
    for (int64_t kp = lo; kp <= pos; kp++) {
        double dot = 0;
        for (int64_t i = 0; i < dh; i++)
            dot += qh[i] * kv_at(f, L->k_cache, b->k, seq, j, kp, i);
        p[kp] = dot / sqrt((double)dh);
        mx = p[kp] > mx ? p[kp] : mx;
    }
    for (int64_t kp = lo; kp <= pos; kp++) {
        p[kp] = exp(p[kp] - mx);
        sum += p[kp];
    }
    for (int64_t i = 0; i < dh; i++) {
        double acc = 0;
        for (int64_t kp = lo; kp <= pos; kp++)
            acc += p[kp] / sum * kv_at(f, L->v_cache, b->v, seq, j, kp, i);
        b->att[r * qd + h * dh + i] = acc;
    }
}

/* o_proj and the residual, then the MLP (SiLU(gate) x up, down) and its
 * residual, row by row. */
static void mlp_rows(const struct rf_forward *f, const rf__fwd_layer *L, ref_bufs *b)
{
    int64_t H = f->d.H, F = f->d.ffn, qd = f->d.q_dim;
    for (int64_t r = 0; r < f->d.M; r++) {
        double *xr = b->x + r * H;
        linear_ref(b->tmp, b->att + r * qd, L->wo, NULL, qd, H);
        for (int64_t i = 0; i < H; i++)
            xr[i] += b->tmp[i];
        rmsnorm_ref(b->xn, xr, L->mlp_norm, H);
        linear_ref(b->gate, b->xn, L->wg, NULL, H, F);
        linear_ref(b->up, b->xn, L->wu, NULL, H, F);
        for (int64_t i = 0; i < F; i++)
            b->gate[i] = b->gate[i] / (1.0 + exp(-b->gate[i])) * b->up[i];
        linear_ref(b->tmp, b->gate, L->wd, NULL, F, H);
        for (int64_t i = 0; i < H; i++)
            xr[i] += b->tmp[i];
    }
}

rf_status rf__forward_ref(const struct rf_forward *f, float *x_out, float *logits, float *k_new,
                          float *v_new, rf_err *err)
{
    int64_t M = f->d.M, H = f->d.H;
    ref_bufs b;
    if (!bufs_new(f, &b)) {
        bufs_free(&b);
        return rf_err_set(err, RF_ENOMEM, "out of memory for the reference pass");
    }
    for (int64_t r = 0; r < M; r++)
        for (int64_t i = 0; i < H; i++)
            b.x[r * H + i] = (double)f->lm_head[f->token[r] * H + i];
    for (int64_t l = 0; l < f->d.N; l++) {
        const rf__fwd_layer *L = &f->layers[l];
        qkv_rows(f, L, l, &b, k_new, v_new);
        for (int64_t r = 0; r < M; r++)
            for (int64_t h = 0; h < f->d.n_q; h++)
                attend_head(f, L, &b, r, h);
        mlp_rows(f, L, &b);
    }
    for (int64_t i = 0; i < M * H; i++)
        x_out[i] = (float)b.x[i];
    for (int64_t s = 0; s < f->o.batch; s++) {
        rmsnorm_ref(b.xn, b.x + rf__fwd_last_row(f, s) * H, f->final_norm, H);
        linear_ref(b.out, b.xn, f->lm_head, NULL, H, f->d.V);
        for (int64_t i = 0; i < f->d.V; i++)
            logits[s * f->d.V + i] = (float)b.out[i];
    }
    bufs_free(&b);
    return RF_OK;
}
