/* engine.c - an engine's calibration: fit and prediction (rf_engine.h). */
#include "roofline/rf_engine.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sorted.h"

static const char *const engines[] = {"llamacpp"};

const char *rf_engine_name(size_t i)
{
    return i < sizeof engines / sizeof engines[0] ? engines[i] : NULL;
}

bool rf_engine_known(const char *name)
{
    for (size_t i = 0; name && rf_engine_name(i); i++)
        if (!strcmp(name, rf_engine_name(i)))
            return true;
    return false;
}

const char *rf_engine_dtype_key(rf_dtype w)
{
    if (w.ggml)
        return w.kind == RF_INT4 ? "q4_0" : "q8_0";
    return rf_dtype_name(w.kind);
}

static const char *phase_name(rf_phase p) { return p == RF_PREFILL ? "prefill" : "decode"; }

/* max(F / pi, Q / beta) of one instance on the calibration's roofs. */
static rf_status op_floor(const rf_engine_calib *c, const rf_op *op, rf_dtype_kind math, double *s,
                          rf_err *err)
{
    /* a math dtype the calibration's machine has no peak for runs on the
     * fastest it has: the floor stays under the truth */
    double pi = c->peak_flops_per_s[math];
    if (!(pi > 0))
        for (int k = 0; k < RF_DTYPE_COUNT; k++)
            pi = c->peak_flops_per_s[k] > pi ? c->peak_flops_per_s[k] : pi;
    if (op->flops && !(pi > 0))
        return rf_err_set(err, RF_EUNAVAIL, "engine calibration (%s): no peak for operator %s",
                          c->engine, op->name);
    double t = op->flops ? (double)op->flops / pi : 0.0;
    double q = (double)op->bytes / c->bw_bytes_per_s;
    *s = (double)op->count * (t > q ? t : q);
    return RF_OK;
}

rf_status rf_engine_split(const rf_engine_calib *c, const rf_step *st, const rf_step_opts *o,
                          double *gemm_s, double *attn_s, double *other_s, rf_err *err)
{
    *gemm_s = *attn_s = *other_s = 0.0;
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        rf_dtype_kind math;
        double *sum;
        if (op->kind == RF_OP_GEMM) {
            math = rf_dtype_math(op->w, o->a);
            sum = gemm_s;
        } else if (op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL) {
            math = rf_dtype_math(o->kv, o->a);
            sum = attn_s;
        } else {
            math = o->a.kind;
            sum = other_s;
        }
        double s = 0.0;
        rf_status rc = op_floor(c, op, math, &s, err);
        if (rc)
            return rc;
        *sum += s;
    }
    return RF_OK;
}

rf_step_opts rf_engine_step_opts(const rf_engine_calib *c, const rf_model *m, rf_dtype w,
                                 rf_phase phase, int64_t tokens, int64_t context)
{
    rf_step_opts o = rf_step_opts_for_model(m);
    o.w = w;
    o.a = c->act;
    o.kv = c->kv;
    o.w_all_modules = true;
    o.phase = phase;
    o.batch = 1;
    o.tokens = phase == RF_PREFILL ? tokens : 1;
    o.context = context;
    o.causal = true;
    return o;
}

rf_status rf_engine_point_make(const rf_engine_calib *c, const rf_model *m, const char *model,
                               rf_dtype w, rf_phase phase, int64_t tokens, int64_t context,
                               double measured_s, rf_engine_point *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", model);
    snprintf(out->weights, sizeof out->weights, "%s", rf_engine_dtype_key(w));
    out->phase = phase;
    out->tokens = phase == RF_PREFILL ? tokens : 1;
    out->context = context;
    out->layers = (double)m->layers;
    out->vocab = (double)m->vocab;
    out->time_s = measured_s;
    rf_step_opts o = rf_engine_step_opts(c, m, w, phase, tokens, context);
    /* the operators' F and Q do not depend on the roof; any positive one */
    rf_roof roof = {0};
    roof.peak_flops_per_s = 1e12;
    roof.bw_bytes_per_s = 1e11;
    roof.ridge = 10.0;
    rf_step st;
    rf_status rc = rf_step_compute(m, &o, &roof, &st, err);
    if (!rc)
        rc = rf_engine_split(c, &st, &o, &out->gemm_s, &out->attn_s, &out->other_s, err);
    return rc ? rf_err_prefix(err, rc, "%s", model) : RF_OK;
}

/* ---- the fit -------------------------------------------------------------
 *
 * With r = t - G - A - E, the unknowns x = (k_gemm - 1, k_attn - 1, c, c0,
 * c_v) >= 0 and the columns (G, A, L, 1, V), each row divided by t
 * (relative error): min |D x - r / t|^2 over x >= 0. Five unknowns (four
 * where the group's shapes share one vocabulary: V is then c0's column
 * times V, and which of the two took the cost would be rounding's choice):
 * every subset of them is solved unconstrained by its normal equations,
 * and the best subset whose solution is non-negative kept (the exact NNLS
 * optimum is one of them). A group needs NMIN points, the unknowns of the
 * model without V. */

enum { NX = 5, NMIN = 4 };

static void columns(const rf_engine_point *p, double col[NX], double *rhs)
{
    col[0] = p->gemm_s / p->time_s;
    col[1] = p->attn_s / p->time_s;
    col[2] = p->layers / p->time_s;
    col[3] = 1.0 / p->time_s;
    col[4] = p->vocab / p->time_s;
    *rhs = (p->time_s - p->gemm_s - p->attn_s - p->other_s) / p->time_s;
}

/* Solve the k x k system a x = b by Gaussian elimination with partial
 * pivoting; false when singular. */
static bool solve(double a[NX][NX], double b[NX], int k, double x[NX])
{
    for (int i = 0; i < k; i++) {
        int piv = i;
        for (int r = i + 1; r < k; r++)
            if (fabs(a[r][i]) > fabs(a[piv][i]))
                piv = r;
        if (!(fabs(a[piv][i]) > 1e-300))
            return false;
        for (int j = 0; j < k; j++) {
            double t = a[i][j];
            a[i][j] = a[piv][j];
            a[piv][j] = t;
        }
        double t = b[i];
        b[i] = b[piv];
        b[piv] = t;
        for (int r = i + 1; r < k; r++) {
            double f = a[r][i] / a[i][i];
            for (int j = i; j < k; j++)
                a[r][j] -= f * a[i][j];
            b[r] -= f * b[i];
        }
    }
    for (int i = k - 1; i >= 0; i--) {
        double s = b[i];
        for (int j = i + 1; j < k; j++)
            s -= a[i][j] * x[j];
        x[i] = s / a[i][i];
    }
    return true;
}

/* Points idx[0..n) except `skip` (-1: none). */
static void nnls(const rf_engine_point *pts, const size_t *idx, size_t n, long skip, int nx,
                 double best[NX])
{
    double best_ss = INFINITY;
    for (int j = 0; j < NX; j++)
        best[j] = 0.0;
    for (unsigned set = 0; set < 1u << nx; set++) {
        int var[NX], k = 0;
        for (int j = 0; j < nx; j++)
            if (set & 1u << j)
                var[k++] = j;
        double a[NX][NX] = {{0}}, b[NX] = {0}, xs[NX] = {0}, x[NX] = {0};
        for (size_t i = 0; i < n; i++) {
            if ((long)i == skip)
                continue;
            double col[NX], rhs;
            columns(&pts[idx[i]], col, &rhs);
            for (int u = 0; u < k; u++) {
                b[u] += col[var[u]] * rhs;
                for (int v = 0; v < k; v++)
                    a[u][v] += col[var[u]] * col[var[v]];
            }
        }
        if (k && !solve(a, b, k, xs))
            continue;
        bool ok = true;
        for (int u = 0; u < k; u++) {
            ok &= xs[u] >= 0.0;
            x[var[u]] = xs[u];
        }
        if (!ok)
            continue;
        double ss = 0.0;
        for (size_t i = 0; i < n; i++) {
            if ((long)i == skip)
                continue;
            double col[NX], rhs;
            columns(&pts[idx[i]], col, &rhs);
            double e = -rhs;
            for (int j = 0; j < NX; j++)
                e += col[j] * x[j];
            ss += e * e;
        }
        if (ss < best_ss) {
            best_ss = ss;
            memcpy(best, x, sizeof x);
        }
    }
}

static double model_s(const rf_engine_point *p, const double x[NX])
{
    return (1.0 + x[0]) * p->gemm_s + (1.0 + x[1]) * p->attn_s + p->other_s + x[2] * p->layers +
           x[3] + x[4] * p->vocab;
}

/* The unknowns of a group: NX where its points' vocabularies differ. */
static int unknowns(const rf_engine_point *pts, const size_t *idx, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (pts[idx[i]].vocab != pts[idx[0]].vocab)
            return NX;
    return NX - 1;
}

static void fit_group(const rf_engine_point *pts, const size_t *idx, size_t n, rf_engine_fit *f)
{
    double x[NX];
    int nx = unknowns(pts, idx, n);
    nnls(pts, idx, n, -1, nx, x);
    f->k_gemm = 1.0 + x[0];
    f->k_attn = 1.0 + x[1];
    f->layer_s = x[2];
    f->step_s = x[3];
    f->vocab_s = x[4];
    f->n_points = n;
    double ss = 0.0, worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        const rf_engine_point *p = &pts[idx[i]];
        double e = fabs(model_s(p, x) - p->time_s) / p->time_s;
        ss += e * e;
        worst = e > worst ? e : worst;
    }
    f->rms_residual = sqrt(ss / (double)n);
    f->worst_residual = worst;
    f->loo_median = f->loo_worst = 0.0;
    if (n <= (size_t)nx) /* a point left out of nx leaves no check of the others' fit */
        return;
    double err[RF_ENGINE_MAX_POINTS];
    for (size_t i = 0; i < n; i++) {
        double xl[NX];
        nnls(pts, idx, n, (long)i, nx, xl);
        const rf_engine_point *p = &pts[idx[i]];
        err[i] = fabs(model_s(p, xl) - p->time_s) / p->time_s;
    }
    rf__sort(err, n);
    f->loo_median = rf__median_sorted(err, n);
    f->loo_worst = err[n - 1];
}

static bool finite_nonneg(double v) { return isfinite(v) && v >= 0.0; }

double rf_engine_fitted_s(const rf_engine_fit *f, const rf_engine_point *p)
{
    double x[NX] = {f->k_gemm - 1.0, f->k_attn - 1.0, f->layer_s, f->step_s, f->vocab_s};
    return model_s(p, x);
}

rf_status rf_engine_fit_all(rf_engine_calib *c, rf_err *err)
{
    const rf_engine_point *pts = c->pt;
    size_t n = c->n_points;
    if (n > RF_ENGINE_MAX_POINTS)
        return rf_err_set(err, RF_ERANGE, "engine calibration: %zu steps, at most %d", n,
                          RF_ENGINE_MAX_POINTS);
    for (size_t i = 0; i < n; i++) {
        const rf_engine_point *p = &pts[i];
        if (!(isfinite(p->time_s) && p->time_s > 0.0))
            return rf_err_set(err, RF_EINVAL,
                              "engine calibration: step %zu: time %g s is not "
                              "positive and finite",
                              i, p->time_s);
        if (!finite_nonneg(p->gemm_s) || !finite_nonneg(p->attn_s) || !finite_nonneg(p->other_s) ||
            !(p->gemm_s + p->attn_s > 0.0))
            return rf_err_set(err, RF_EINVAL,
                              "engine calibration: step %zu: floors must be "
                              "finite, non-negative, GEMM plus attention positive",
                              i);
        if (!(isfinite(p->layers) && p->layers >= 1.0))
            return rf_err_set(err, RF_EINVAL, "engine calibration: step %zu: %g layers", i,
                              p->layers);
        if (!(isfinite(p->vocab) && p->vocab >= 1.0))
            return rf_err_set(err, RF_EINVAL, "engine calibration: step %zu: a vocabulary of %g", i,
                              p->vocab);
    }
    c->n_fits = 0;
    bool done[RF_ENGINE_MAX_POINTS] = {false};
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        size_t idx[RF_ENGINE_MAX_POINTS], k = 0;
        for (size_t j = i; j < n; j++)
            if (!done[j] && pts[j].phase == pts[i].phase &&
                !strcmp(pts[j].weights, pts[i].weights)) {
                idx[k++] = j;
                done[j] = true;
            }
        if (k < NMIN)
            return rf_err_set(err, RF_EINVAL,
                              "engine calibration: %s %s: %zu timed steps, at "
                              "least %d needed",
                              pts[i].weights, phase_name(pts[i].phase), k, NMIN);
        if (c->n_fits == RF_ENGINE_MAX_FITS)
            return rf_err_set(err, RF_ERANGE,
                              "engine calibration: more than %d (weights, "
                              "phase) groups",
                              RF_ENGINE_MAX_FITS);
        rf_engine_fit *f = &c->fit[c->n_fits++];
        memset(f, 0, sizeof *f);
        snprintf(f->weights, sizeof f->weights, "%s", pts[i].weights);
        f->phase = pts[i].phase;
        fit_group(pts, idx, k, f);
    }
    return RF_OK;
}

rf_status rf_engine_check(const rf_engine_calib *c, rf_err *err)
{
    if (c->version != RF_ENGINE_VERSION)
        return rf_err_set(err, RF_EINVAL, "engine calibration: version %d, %d expected", c->version,
                          RF_ENGINE_VERSION);
    if (!rf_engine_known(c->engine))
        return rf_err_set(err, RF_EINVAL, "engine calibration: unknown engine '%s' (llamacpp)",
                          c->engine);
    if (!(isfinite(c->bw_bytes_per_s) && c->bw_bytes_per_s > 0.0))
        return rf_err_set(err, RF_EINVAL, "engine calibration: bandwidth must be positive");
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        if (!finite_nonneg(c->peak_flops_per_s[k]))
            return rf_err_set(err, RF_EINVAL,
                              "engine calibration: the %s peak must be 0 "
                              "(none) or positive",
                              rf_dtype_name((rf_dtype_kind)k));
    for (size_t i = 0; i < c->n_fits; i++) {
        const rf_engine_fit *f = &c->fit[i];
        if (!(isfinite(f->k_gemm) && f->k_gemm >= 1.0 && isfinite(f->k_attn) && f->k_attn >= 1.0 &&
              finite_nonneg(f->layer_s) && finite_nonneg(f->vocab_s) && finite_nonneg(f->step_s) &&
              finite_nonneg(f->rms_residual) && finite_nonneg(f->worst_residual) &&
              finite_nonneg(f->loo_median) && finite_nonneg(f->loo_worst)))
            return rf_err_set(
                err, RF_EINVAL,
                "engine calibration: fit %s %s: k_gemm and "
                "k_attn must be finite and >= 1, layer_s, vocab_s, step_s and the errors finite "
                "and >= 0",
                f->weights, phase_name(f->phase));
        for (size_t j = 0; j < i; j++)
            if (c->fit[j].phase == f->phase && !strcmp(c->fit[j].weights, f->weights))
                return rf_err_set(err, RF_EINVAL, "engine calibration: fit %s %s twice", f->weights,
                                  phase_name(f->phase));
    }
    return RF_OK;
}

const rf_engine_fit *rf_engine_find(const rf_engine_calib *c, rf_dtype w, rf_phase phase)
{
    const char *key = rf_engine_dtype_key(w);
    for (size_t i = 0; i < c->n_fits; i++)
        if (c->fit[i].phase == phase && !strcmp(c->fit[i].weights, key))
            return &c->fit[i];
    return NULL;
}

rf_status rf_engine_predict(const rf_engine_calib *c, const rf_step *st, const rf_step_opts *o,
                            double layers, double vocab, rf_engine_pred *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    if (o->batch != 1)
        return rf_err_set(err, RF_EINVAL,
                          "engine calibration (%s): a batch of %lld: its fits "
                          "are of one sequence's steps (batch 1)",
                          c->engine, (long long)o->batch);
    const rf_engine_fit *f = rf_engine_find(c, o->w, o->phase);
    if (!f) {
        char have[512] = "";
        size_t len = 0;
        for (size_t i = 0; i < c->n_fits && len < sizeof have; i++)
            len += (size_t)snprintf(have + len, sizeof have - len, "%s%s %s", i ? ", " : "",
                                    c->fit[i].weights, phase_name(c->fit[i].phase));
        return rf_err_set(err, RF_EINVAL,
                          "engine calibration (%s) has no fit for %s weights "
                          "in %s (it has: %s)",
                          c->engine, rf_engine_dtype_key(o->w), phase_name(o->phase),
                          c->n_fits ? have : "none");
    }
    double g, a, e;
    rf_status rc = rf_engine_split(c, st, o, &g, &a, &e, err);
    if (rc)
        return rc;
    out->fit = f;
    out->gemm_s = f->k_gemm * g;
    out->attn_s = f->k_attn * a;
    out->other_s = e;
    out->layers_s = f->layer_s * layers;
    out->vocab_s = f->vocab_s * vocab;
    out->step_s = f->step_s;
    out->time_s =
        out->gemm_s + out->attn_s + out->other_s + out->layers_s + out->vocab_s + out->step_s;
    out->floor_s = g + a + e;
    out->band = f->loo_worst > 0.0 ? f->loo_worst : f->worst_residual;
    double lo = out->time_s * (1.0 - out->band);
    out->lo_s = lo > out->floor_s ? lo : out->floor_s;
    out->hi_s = out->time_s * (1.0 + out->band);
    return RF_OK;
}

rf_status rf_engine_predict_generate(const rf_engine_calib *c, const rf_model *m,
                                     const rf_step_opts *o, const rf_roof *roof, int64_t prompt,
                                     int64_t output, rf_step *st, rf_engine_gen *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    if (prompt < 1 || output < 1)
        return rf_err_set(err, RF_EINVAL,
                          "engine calibration: a prompt and an output of at "
                          "least one token (%lld, %lld)",
                          (long long)prompt, (long long)output);
    rf_generate_pred *g = &out->g;
    g->batch = 1, g->prompt = prompt, g->output = output, g->decode_steps = output - 1;
    rf_step_opts so = *o;
    so.phase = RF_PREFILL, so.tokens = prompt, so.context = 0;
    rf_engine_pred p;
    double L = (double)m->layers, V = (double)m->vocab;
    rf_status rc = rf_step_compute(m, &so, roof, st, err);
    if (rc || (rc = rf_engine_predict(c, st, &so, L, V, &p, err)))
        return rc;
    out->prefill_fit = p.fit;
    g->ttft_s = p.time_s, g->ttft_lo_s = p.lo_s, g->ttft_hi_s = p.hi_s;
    so.phase = RF_DECODE, so.tokens = 1;
    for (int64_t s = prompt + 1; s <= prompt + output - 1; s++) {
        so.context = s;
        if ((rc = rf_step_compute(m, &so, roof, st, err)) ||
            (rc = rf_engine_predict(c, st, &so, L, V, &p, err)))
            return rc;
        if (s == prompt + 1)
            g->tpot_first_s = p.time_s, out->decode_fit = p.fit;
        g->tpot_last_s = p.time_s;
        g->decode_s += p.time_s, g->decode_lo_s += p.lo_s, g->decode_hi_s += p.hi_s;
    }
    if (output >= 2) {
        double n = (double)(output - 1);
        g->tpot_mean_s = g->decode_s / n;
        g->tpot_mean_lo_s = g->decode_lo_s / n, g->tpot_mean_hi_s = g->decode_hi_s / n;
    }
    g->latency_s = g->ttft_s + g->decode_s;
    g->latency_lo_s = g->ttft_lo_s + g->decode_lo_s;
    g->latency_hi_s = g->ttft_hi_s + g->decode_hi_s;
    g->tokens_per_s = (double)output / g->latency_s;
    return RF_OK;
}
