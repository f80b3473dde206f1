/* forward_check.c - the pass of a tiny model shaped like the one asked for,
 * compared with the scalar reference (forward_ref.c) in decode and
 * prefill (rf_forward_check). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward_internal.h"
#include "measure_internal.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_op.h"

static double max_abs(const float *v, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fabs((double)v[i]) > m ? fabs((double)v[i]) : m;
    return m;
}

/* max|a - b| / max(1, max|b|) */
static double rel_err(const float *a, const float *b, int64_t n)
{
    double d = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        d = e > d || isnan(e) ? e : d;
    }
    double scale = max_abs(b, n);
    return d / (scale > 1 ? scale : 1);
}

/* One case: build, step, compare with the reference. */
static rf_status check_case(const rf_model *tiny, const rf_forward_opts *o, double *worst,
                            rf_err *err)
{
    rf_forward *f = NULL;
    float *x = NULL, *logits = NULL, *kn = NULL, *vn = NULL, *got_k = NULL, *got_v = NULL;
    rf_forward_times t;
    rf_status s = rf_forward_new(tiny, o, &f, err);
    if (s)
        return s;
    if ((s = rf_forward_step(f, &t, err)))
        goto done;
    int64_t M = f->d.M, N = f->d.N, kvd = f->d.kv_dim;
    x = malloc((size_t)(M * f->d.H) * sizeof *x);
    logits = malloc((size_t)(f->o.batch * f->d.V) * sizeof *logits);
    kn = malloc((size_t)(N * M * kvd) * sizeof *kn);
    vn = malloc((size_t)(N * M * kvd) * sizeof *vn);
    got_k = malloc((size_t)(N * M * kvd) * sizeof *got_k);
    got_v = malloc((size_t)(N * M * kvd) * sizeof *got_v);
    if (!x || !logits || !kn || !vn || !got_k || !got_v) {
        s = rf_err_set(err, RF_ENOMEM, "out of memory for the reference check");
        goto done;
    }
    if ((s = rf__forward_ref(f, x, logits, kn, vn, err)))
        goto done;
    for (int64_t l = 0; l < N; l++)
        for (int64_t r = 0; r < M; r++)
            for (int64_t j = 0; j < f->d.n_kv; j++) {
                size_t at = (size_t)((l * M + r) * kvd + j * f->d.dh), row = (size_t)f->d.dh * 4;
                int64_t b = r / f->d.q_tokens, p = rf__fwd_row_pos(f, r);
                memcpy(got_k + at, rf__fwd_cache_at(f, f->layers[l].k_cache, b, j, p), row);
                memcpy(got_v + at, rf__fwd_cache_at(f, f->layers[l].v_cache, b, j, p), row);
            }
    const struct {
        const char *what;
        double e;
    } cmp[] = {
        {"hidden states", rel_err(f->x, x, M * f->d.H)},
        {"logits", rel_err(f->logits, logits, f->o.batch * f->d.V)},
        {"cached K", rel_err(got_k, kn, N * M * kvd)},
        {"cached V", rel_err(got_v, vn, N * M * kvd)},
    };
    for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++) {
        if (!(cmp[i].e <= RF_FORWARD_TOLERANCE)) {
            s = rf_err_set(err, RF_EINTERNAL,
                           "forward pass differs from the scalar reference: %s off by %.3g "
                           "(tolerance %g) at %s B=%lld S=%lld T=%lld",
                           cmp[i].what, cmp[i].e, RF_FORWARD_TOLERANCE,
                           o->phase == RF_DECODE ? "decode" : "prefill", (long long)o->batch,
                           (long long)o->context, (long long)f->d.q_tokens);
            goto done;
        }
        if (cmp[i].e > *worst)
            *worst = cmp[i].e;
    }
done:
    free(x);
    free(logits);
    free(kn);
    free(vn);
    free(got_k);
    free(got_v);
    rf_forward_free(f);
    return s;
}

rf_status rf_forward_check(const rf_model *m, const char *isa, double *max_err, rf_err *err)
{
    *max_err = 0;
    rf__fwd_shape s;
    rf_forward_opts probe = rf_forward_opts_default();
    probe.layers = 1;
    rf_status st = rf__fwd_shape_of(m, &probe, &s, err);
    if (st)
        return st;
    rf_model tiny;
    memset(&tiny, 0, sizeof tiny);
    snprintf(tiny.name, sizeof tiny.name, "tiny check of %.60s", m->name);
    tiny.n_kv = m->n_kv < 2 ? m->n_kv : 2;
    tiny.n_q = s.g * tiny.n_kv;
    tiny.head_dim = 8;
    tiny.hidden = 40;
    tiny.ffn = 56;
    tiny.vocab = 50;
    tiny.layers = 2;
    tiny.qkv_bias = m->qkv_bias;
    if (m->window > 0) { /* a window shorter than the contexts below */
        tiny.window = 3;
        for (int l = 0; l < 2 && l < m->layers; l++)
            tiny.sliding[l] = m->sliding[l];
    }
    const struct {
        rf_phase phase;
        int64_t batch, context, tokens;
    } cases[] = {
        {RF_DECODE, 1, 5, 1},  /* cblas_sgemv everywhere                */
        {RF_DECODE, 3, 6, 1},  /* cblas_sgemm, one query per sequence   */
        {RF_PREFILL, 2, 3, 4}, /* causal over a cached prefix           */
        {RF_PREFILL, 1, 0, 1}, /* one token, nothing cached             */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rf_forward_opts o = rf_forward_opts_default();
        o.phase = cases[i].phase;
        o.batch = cases[i].batch;
        o.context = cases[i].context;
        o.tokens = cases[i].tokens;
        o.layers = 2;
        o.isa = isa;
        o.seed += i;
        if ((st = check_case(&tiny, &o, max_err, err)))
            return st;
    }
    return RF_OK;
}
