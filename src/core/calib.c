/* calib.c - a calibration checked and fitted, and the prediction it gives
 * (rf_calib.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_calib.h"
#include "sorted.h"

static const char *const kind_names[] = {
    [RF_CALIB_GEMM] = "gemm",
    [RF_CALIB_ATTN_DECODE] = "attn_decode",
    [RF_CALIB_ATTN_PREFILL] = "attn_prefill",
    [RF_CALIB_NORM] = "norm",
    [RF_CALIB_ROPE] = "rope",
    [RF_CALIB_ACT] = "act",
    [RF_CALIB_RESIDUAL] = "residual",
    [RF_CALIB_COPY] = "copy",
};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == RF_CALIB_KIND_COUNT,
               "a name for every calibration kind");

/* What x counts, per kind, for messages. */
static const char *const x_names[] = {
    [RF_CALIB_GEMM] = "M",
    [RF_CALIB_ATTN_DECODE] = "keys",
    [RF_CALIB_ATTN_PREFILL] = "keys",
    [RF_CALIB_NORM] = "elements",
    [RF_CALIB_ROPE] = "elements",
    [RF_CALIB_ACT] = "elements",
    [RF_CALIB_RESIDUAL] = "elements",
    [RF_CALIB_COPY] = "bytes",
};
_Static_assert(sizeof x_names / sizeof x_names[0] == RF_CALIB_KIND_COUNT,
               "a coordinate name for every calibration kind");

const char *rf_calib_kind_name(rf_calib_kind k)
{
    return (unsigned)k < RF_CALIB_KIND_COUNT ? kind_names[k] : NULL;
}

int rf_calib_kind_of_name(const char *name)
{
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++)
        if (!strcmp(name, kind_names[k]))
            return k;
    return -1;
}

double rf_calib_floor_s(const rf_calib *c, double flops, double bytes)
{
    double tf = flops / c->peak_flops_per_s, tq = bytes / c->bw_bytes_per_s;
    return tf > tq ? tf : tq;
}

double rf_calib_point_floor_s(const rf_calib *c, const rf_calib_point *pt)
{
    double pi =
        c->point_peak && pt->peak_flops_per_s > 0 ? pt->peak_flops_per_s : c->peak_flops_per_s;
    double beta = c->point_bw && pt->bw_bytes_per_s > 0 ? pt->bw_bytes_per_s : c->bw_bytes_per_s;
    double tf = pt->flops / pi, tq = pt->bytes / beta;
    return tf > tq ? tf : tq;
}

/* "gemm K=4096 N=4096", "attn_decode d_h=128 g=4", "norm". */
static void series_label(const rf_calib_series *s, char *out, size_t cap)
{
    const char *k = rf_calib_kind_name(s->kind);
    if (s->kind == RF_CALIB_GEMM)
        snprintf(out, cap, "%s K=%lld N=%lld", k, (long long)s->a, (long long)s->b);
    else if (s->kind == RF_CALIB_ATTN_DECODE || s->kind == RF_CALIB_ATTN_PREFILL)
        snprintf(out, cap, "%s d_h=%lld g=%lld", k, (long long)s->a, (long long)s->b);
    else
        snprintf(out, cap, "%s", k);
}

static rf_status check_series(const rf_calib_series *s, size_t i, rf_err *err)
{
    char what[64];
    if ((unsigned)s->kind >= RF_CALIB_KIND_COUNT)
        return rf_err_set(err, RF_EINVAL, "calibration: series %zu: unknown kind %d", i,
                          (int)s->kind);
    series_label(s, what, sizeof what);
    if (s->n == 0 || s->n > RF_CALIB_MAX_POINTS)
        return rf_err_set(err, RF_EINVAL, "calibration: %s: %zu points (1 to %d)", what, s->n,
                          RF_CALIB_MAX_POINTS);
    if (s->a < 0 || s->b < 0)
        return rf_err_set(err, RF_EINVAL, "calibration: %s: a negative shape", what);
    for (size_t p = 0; p < s->n; p++) {
        const rf_calib_point *pt = &s->pt[p];
        if (pt->x < 1)
            return rf_err_set(err, RF_EINVAL, "calibration: %s: point %zu: %s (%lld) must be >= 1",
                              what, p, x_names[s->kind], (long long)pt->x);
        if (p > 0 && pt->x <= s->pt[p - 1].x)
            return rf_err_set(err, RF_EINVAL,
                              "calibration: %s: %s grid not increasing at point %zu (%lld after "
                              "%lld)",
                              what, x_names[s->kind], p, (long long)pt->x,
                              (long long)s->pt[p - 1].x);
        if (!(pt->time_s > 0) || !isfinite(pt->time_s))
            return rf_err_set(err, RF_EINVAL,
                              "calibration: %s: point %zu: time %g s must be positive", what, p,
                              pt->time_s);
        if (!(pt->flops >= 0) || !(pt->bytes >= 0) || !(pt->flops + pt->bytes > 0) ||
            !isfinite(pt->flops + pt->bytes))
            return rf_err_set(err, RF_EINVAL,
                              "calibration: %s: point %zu: FLOPs and bytes must be non-negative, "
                              "not both 0",
                              what, p);
        if (!(pt->bw_bytes_per_s >= 0) || !(pt->peak_flops_per_s >= 0) ||
            !isfinite(pt->bw_bytes_per_s + pt->peak_flops_per_s))
            return rf_err_set(err, RF_EINVAL,
                              "calibration: %s: point %zu: its roofs (%g B/s, %g FLOP/s) must be "
                              "positive (or 0: the calibration's)",
                              what, p, pt->bw_bytes_per_s, pt->peak_flops_per_s);
    }
    return RF_OK;
}

/* The largest share of a kind's fastest call the overhead may take: an
 * overhead is not the whole call, so every point keeps a positive
 * efficiency. */
#define OVERHEAD_MAX 0.95

/* t = c0 + f u by least squares of (t_fit - t) / t (weights 1 / t^2), over
 * the points of kind k; c0 kept within [0, OVERHEAD_MAX min t], u refitted
 * when c0 * was moved. */
static void fit_kind(rf_calib *c, rf_calib_kind k)
{
    double sw = 0, sf = 0, sff = 0, st = 0, sft = 0, tmin = INFINITY;
    size_t n = 0;
    for (size_t i = 0; i < c->n_series; i++) {
        const rf_calib_series *s = &c->series[i];
        for (size_t p = 0; s->kind == k && p < s->n; p++) {
            double t = s->pt[p].time_s, f = rf_calib_point_floor_s(c, &s->pt[p]);
            double w = 1 / (t * t);
            sw += w, sf += w * f, sff += w * f * f, st += w * t, sft += w * f * t;
            tmin = t < tmin ? t : tmin;
            n++;
        }
    }
    rf_calib_fit *fit = &c->fit[k];
    memset(fit, 0, sizeof *fit);
    fit->n_points = n;
    double det = sw * sff - sf * sf, c0 = 0, u;
    if (n >= 2 && det > 1e-12 * sw * sff) {
        c0 = (st * sff - sf * sft) / det;
        u = (sw * sft - sf * st) / det;
    } else {
        u = sft / sff;
    }
    if (!(c0 >= 0) || c0 > OVERHEAD_MAX * tmin) {
        c0 = c0 > OVERHEAD_MAX * tmin ? OVERHEAD_MAX * tmin : 0;
        u = (sft - c0 * sf) / sff; /* sum w f (t - c0) / sum w f^2 */
    }
    fit->overhead_s = c0;
    fit->efficiency = u > 0 ? 1 / u : 0;
    double ss = 0;
    for (size_t i = 0; i < c->n_series; i++) {
        rf_calib_series *s = &c->series[i];
        for (size_t p = 0; s->kind == k && p < s->n; p++) {
            rf_calib_point *pt = &s->pt[p];
            double f = rf_calib_point_floor_s(c, pt);
            double r = fabs(c0 + f * u - pt->time_s) / pt->time_s;
            ss += r * r;
            fit->worst_residual = r > fit->worst_residual ? r : fit->worst_residual;
            pt->eff = f / (pt->time_s - c0);
        }
    }
    fit->rms_residual = n ? sqrt(ss / (double)n) : 0;
}

/* ln eff at ln x between points lo and hi of s. */
static double between(const rf_calib_series *s, size_t lo, size_t hi, double lx)
{
    double l0 = log((double)s->pt[lo].x), l1 = log((double)s->pt[hi].x);
    double w = (lx - l0) / (l1 - l0);
    return (1 - w) * log(s->pt[lo].eff) + w * log(s->pt[hi].eff);
}

/* ln eff of series s at x; *inside when x lies within its points. */
static double series_eff(const rf_calib_series *s, int64_t x, bool *inside)
{
    *inside = x >= s->pt[0].x && x <= s->pt[s->n - 1].x;
    if (x <= s->pt[0].x)
        return log(s->pt[0].eff);
    if (x >= s->pt[s->n - 1].x)
        return log(s->pt[s->n - 1].eff);
    size_t hi = 1;
    while (s->pt[hi].x < x)
        hi++;
    return between(s, hi - 1, hi, log((double)x));
}

/* Each inner point of a series predicted from its two neighbours. */
static void leave_one_out(rf_calib *c, rf_calib_kind k)
{
    double err[RF_CALIB_MAX_SERIES * RF_CALIB_MAX_POINTS];
    size_t n = 0;
    rf_calib_fit *fit = &c->fit[k];
    for (size_t i = 0; i < c->n_series; i++) {
        const rf_calib_series *s = &c->series[i];
        for (size_t p = 1; s->kind == k && p + 1 < s->n; p++) {
            const rf_calib_point *pt = &s->pt[p];
            double eff = exp(between(s, p - 1, p + 1, log((double)pt->x)));
            double pred = fit->overhead_s + rf_calib_point_floor_s(c, pt) / eff;
            err[n++] = fabs(pred - pt->time_s) / pt->time_s;
        }
    }
    rf__sort(err, n);
    fit->loo_median = rf__median_sorted(err, n);
    fit->loo_worst = n ? err[n - 1] : 0;
}

rf_status rf_calib_fit_all(rf_calib *c, rf_err *err)
{
    if (c->version < 1 || c->version > RF_CALIB_VERSION)
        return rf_err_set(err, RF_EINVAL, "calibration: version %d (this build reads 1 to %d)",
                          c->version, RF_CALIB_VERSION);
    if (!(c->bw_bytes_per_s > 0) || !(c->peak_flops_per_s > 0) || !isfinite(c->bw_bytes_per_s) ||
        !isfinite(c->peak_flops_per_s))
        return rf_err_set(err, RF_EINVAL,
                          "calibration: the roof (%g B/s, %g FLOP/s) must be positive",
                          c->bw_bytes_per_s, c->peak_flops_per_s);
    if (c->n_series > RF_CALIB_MAX_SERIES)
        return rf_err_set(err, RF_EINVAL, "calibration: %zu series (at most %d)", c->n_series,
                          RF_CALIB_MAX_SERIES);
    bool seen[RF_CALIB_KIND_COUNT] = {false};
    for (size_t i = 0; i < c->n_series; i++) {
        rf_status s = check_series(&c->series[i], i, err);
        if (s != RF_OK)
            return s;
        seen[c->series[i].kind] = true;
    }
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++)
        if (!seen[k])
            return rf_err_set(err, RF_EINVAL,
                              "calibration: no %s points (rerun `roofline measure --calibrate`)",
                              kind_names[k]);
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++) {
        fit_kind(c, (rf_calib_kind)k);
        leave_one_out(c, (rf_calib_kind)k);
    }
    return RF_OK;
}

size_t rf_calib_pool_gemv(rf_calib *c, double min_w_bytes)
{
    double rate[RF_CALIB_MAX_SERIES];
    rf_calib_point *pt[RF_CALIB_MAX_SERIES];
    size_t n = 0;
    for (size_t i = 0; i < c->n_series && i < RF_CALIB_MAX_SERIES; i++) {
        rf_calib_series *s = &c->series[i];
        if (s->kind != RF_CALIB_GEMM || s->n == 0 || s->pt[0].x != 1 ||
            (double)s->a * (double)s->b * 4 < min_w_bytes || !(s->pt[0].time_s > 0))
            continue;
        pt[n] = &s->pt[0];
        rate[n++] = s->pt[0].bytes / s->pt[0].time_s;
    }
    if (n < 3)
        return 0;
    double sorted[RF_CALIB_MAX_SERIES];
    memcpy(sorted, rate, n * sizeof *rate);
    rf__sort(sorted, n);
    double mid = rf__median_sorted(sorted, n);
    for (size_t i = 0; i < n; i++)
        pt[i]->time_s = pt[i]->bytes / mid;
    return n;
}

static double ln_dim(int64_t v) { return log((double)(v > 1 ? v : 1)); }

rf_status rf_calib_predict(const rf_calib *c, rf_calib_kind k, int64_t x, int64_t a, int64_t b,
                           double flops, double bytes, rf_calib_pred *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    if ((unsigned)k >= RF_CALIB_KIND_COUNT || x < 1 || !(flops >= 0) || !(bytes >= 0) ||
        !(flops + bytes > 0))
        return rf_err_set(err, RF_EINVAL,
                          "prediction of %s at %s %lld: needs x >= 1 and FLOPs or bytes",
                          rf_calib_kind_name(k) ? rf_calib_kind_name(k) : "?",
                          (unsigned)k < RF_CALIB_KIND_COUNT ? x_names[k] : "x", (long long)x);
    /* Series of the kind: the one at (a, b) if calibrated, else every one
     * whose points cover x, weighted 1 / d^2 in (ln a, ln b). */
    double wsum = 0, lsum = 0, amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
    bool any = false, covered = false, exact = false;
    for (int pass = 0; pass < 2 && !exact; pass++) {
        for (size_t i = 0; i < c->n_series; i++) {
            const rf_calib_series *s = &c->series[i];
            if (s->kind != k)
                continue;
            any = true;
            bool inside;
            double le = series_eff(s, x, &inside);
            double da = ln_dim(a) - ln_dim(s->a), db = ln_dim(b) - ln_dim(s->b),
                   d2 = da * da + db * db;
            if (pass == 0) {
                amin = fmin(amin, ln_dim(s->a)), amax = fmax(amax, ln_dim(s->a));
                bmin = fmin(bmin, ln_dim(s->b)), bmax = fmax(bmax, ln_dim(s->b));
                if (d2 < 1e-18) {
                    exact = true, covered = inside, wsum = 1, lsum = le;
                    break;
                }
                if (inside)
                    covered = true;
                continue;
            }
            if (covered && !inside)
                continue;
            wsum += 1 / d2;
            lsum += le / d2;
        }
    }
    if (!any)
        return rf_err_set(err, RF_EINVAL, "calibration: no %s points", kind_names[k]);
    const double tol = 1e-9;
    bool boxed = ln_dim(a) >= amin - tol && ln_dim(a) <= amax + tol && ln_dim(b) >= bmin - tol &&
                 ln_dim(b) <= bmax + tol;
    out->eff = exp(lsum / wsum);
    out->floor_s = rf_calib_floor_s(c, flops, bytes);
    out->time_s = c->fit[k].overhead_s + out->floor_s / out->eff;
    out->in_range = covered && boxed;
    out->band = rf_calib_band(c, k);
    out->lo_s = out->band < 1 ? out->time_s * (1 - out->band) : 0;
    out->hi_s = out->time_s * (1 + out->band);
    return RF_OK;
}

double rf_calib_band(const rf_calib *c, rf_calib_kind k)
{
    if ((unsigned)k >= RF_CALIB_KIND_COUNT)
        return 0;
    const rf_calib_fit *f = &c->fit[k];
    return f->loo_worst > 0 ? f->loo_worst : f->worst_residual;
}
