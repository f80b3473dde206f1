/* forward_ref.c - the scalar reference of the forward pass: plain loops in
 * double, one token row and one head at a time, written from the formulas
 * rather than from forward.c, so the two can only agree by being right.
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
    double inv = 1.0 / sqrt(ss / (double)H + FWD_RMS_EPS);
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
        double a = (double)pos * pow(FWD_ROPE_THETA, -2.0 * (double)i / (double)dh);
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
static double kv_at(const struct rf_forward *f, const float *cache, const double *fresh,
                    int64_t b, int64_t j, int64_t p, int64_t i)
{
    if (p < f->d.pos0)
        return (double)cache[((b * f->d.n_kv + j) * f->d.cap + p) * f->d.dh + i];
    int64_t r = b * f->d.q_tokens + (p - f->d.pos0);
    return fresh[r * f->d.kv_dim + j * f->d.dh + i];
}

rf_status rf__forward_ref(const struct rf_forward *f, float *x_out, float *logits, float *k_new,
                          float *v_new, rf_err *err)
{
    rf_status s = RF_OK;
    int64_t M = f->d.M, H = f->d.H, F = f->d.ffn, qd = f->d.q_dim, kvd = f->d.kv_dim, dh = f->d.dh;
    double *x = calloc((size_t)(M * H), sizeof *x);
    double *xn = calloc((size_t)H, sizeof *xn);
    double *q = calloc((size_t)(M * qd), sizeof *q);
    double *k = calloc((size_t)(M * kvd), sizeof *k);
    double *v = calloc((size_t)(M * kvd), sizeof *v);
    double *att = calloc((size_t)(M * qd), sizeof *att);
    double *tmp = calloc((size_t)(H > F ? H : F), sizeof *tmp);
    double *gate = calloc((size_t)F, sizeof *gate);
    double *up = calloc((size_t)F, sizeof *up);
    double *p = calloc((size_t)f->d.cap, sizeof *p);
    double *out = calloc((size_t)f->d.V, sizeof *out);
    if (!x || !xn || !q || !k || !v || !att || !tmp || !gate || !up || !p || !out) {
        s = rf_err_set(err, RF_ENOMEM, "out of memory for the reference pass");
        goto done;
    }
    for (int64_t r = 0; r < M; r++)
        for (int64_t i = 0; i < H; i++)
            x[r * H + i] = (double)f->lm_head[f->token[r] * H + i];

    for (int64_t l = 0; l < f->d.N; l++) {
        const fwd_layer *L = &f->layers[l];
        for (int64_t r = 0; r < M; r++) {
            int64_t pos = f->d.pos0 + r % f->d.q_tokens;
            rmsnorm_ref(xn, x + r * H, L->attn_norm, H);
            linear_ref(q + r * qd, xn, L->wq, L->bq, H, qd);
            linear_ref(k + r * kvd, xn, L->wk, L->bk, H, kvd);
            linear_ref(v + r * kvd, xn, L->wv, L->bv, H, kvd);
            rope_ref(q + r * qd, f->d.n_q, dh, pos);
            rope_ref(k + r * kvd, f->d.n_kv, dh, pos);
            for (int64_t i = 0; i < kvd; i++) {
                k_new[(l * M + r) * kvd + i] = (float)k[r * kvd + i];
                v_new[(l * M + r) * kvd + i] = (float)v[r * kvd + i];
            }
        }
        for (int64_t r = 0; r < M; r++) {
            int64_t b = r / f->d.q_tokens, pos = f->d.pos0 + r % f->d.q_tokens;
            int64_t lo = L->sliding && pos + 1 > f->window ? pos + 1 - f->window : 0;
            for (int64_t h = 0; h < f->d.n_q; h++) {
                int64_t j = h / f->d.g;
                const double *qh = q + r * qd + h * dh;
                double mx = -INFINITY, sum = 0;
                for (int64_t kp = lo; kp <= pos; kp++) {
                    double dot = 0;
                    for (int64_t i = 0; i < dh; i++)
                        dot += qh[i] * kv_at(f, L->k_cache, k, b, j, kp, i);
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
                        acc += p[kp] / sum * kv_at(f, L->v_cache, v, b, j, kp, i);
                    att[r * qd + h * dh + i] = acc;
                }
            }
        }
        for (int64_t r = 0; r < M; r++) {
            double *xr = x + r * H;
            linear_ref(tmp, att + r * qd, L->wo, NULL, qd, H);
            for (int64_t i = 0; i < H; i++)
                xr[i] += tmp[i];
            rmsnorm_ref(xn, xr, L->mlp_norm, H);
            linear_ref(gate, xn, L->wg, NULL, H, F);
            linear_ref(up, xn, L->wu, NULL, H, F);
            for (int64_t i = 0; i < F; i++)
                gate[i] = gate[i] / (1.0 + exp(-gate[i])) * up[i];
            linear_ref(tmp, gate, L->wd, NULL, F, H);
            for (int64_t i = 0; i < H; i++)
                xr[i] += tmp[i];
        }
    }
    for (int64_t i = 0; i < M * H; i++)
        x_out[i] = (float)x[i];
    for (int64_t b = 0; b < f->o.batch; b++) {
        rmsnorm_ref(xn, x + fwd_last_row(f, b) * H, f->final_norm, H);
        linear_ref(out, xn, f->lm_head, NULL, H, f->d.V);
        for (int64_t i = 0; i < f->d.V; i++)
            logits[b * f->d.V + i] = (float)out[i];
    }
done:
    free(x);
    free(xn);
    free(q);
    free(k);
    free(v);
    free(att);
    free(tmp);
    free(gate);
    free(up);
    free(p);
    free(out);
    return s;
}
