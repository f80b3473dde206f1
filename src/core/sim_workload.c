/* sim_workload.c - the simulator's random numbers and requests (rf_sim.h). */
#include <math.h>
#include <string.h>

#include "roofline/rf_parse.h"
#include "sim_internal.h"

/* Same bits on every platform: no a * b + c fused into one rounding. GCC
 * fuses nothing in ISO C mode (the build's -std=c11; -std=gnu11 would) and
 * warns at this pragma; clang fuses by default and honours it (checked:
 * clang -O3 -march=native gives gcc -O2's bytes). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- xoshiro256** seeded by splitmix64 (Blackman and Vigna 2018) ------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void rf__rng_seed(rf__rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03u);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

uint64_t rf__rng_next(rf__rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double rf__rng_uniform(rf__rng *r) { return ((double)(rf__rng_next(r) >> 11) + 0.5) * 0x1p-53; }

/* ---- ln and exp of our own (fdlibm's split of ln 2) --------------------- */

static const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;

/* x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m - 1) /
 * (m + 1), |s| <= 0.1716: the series 2 (s + s^3/3 + ...) to s^25 is below
 * an ulp. */
double rf__sim_log(double x)
{
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752440) {
        m *= 2;
        e--;
    }
    double s = (m - 1) / (m + 1), s2 = s * s, sum = 0;
    for (int k = 12; k >= 1; k--)
        sum = sum * s2 + 2.0 / (2 * k + 1);
    sum = 2 * s + s * s2 * sum;
    return ((double)e * ln2_lo + sum) + (double)e * ln2_hi;
}

/* e^x = 2^k e^r, r = x - k ln 2 in [-ln2/2, ln2/2]: Taylor to r^20. */
double rf__sim_exp(double x)
{
    if (x < -745)
        return 0;
    if (x > 709)
        return HUGE_VAL;
    double k = floor(x / (ln2_hi + ln2_lo) + 0.5);
    double r = (x - k * ln2_hi) - k * ln2_lo, p = 1;
    for (int i = 20; i >= 1; i--)
        p = 1 + p * r / i;
    return ldexp(p, (int)k);
}

/* ---- distributions ------------------------------------------------------ */

/* A standard normal: Marsaglia's polar method (no sine or cosine). */
static double normal(rf__rng *r)
{
    for (;;) {
        double u = 2 * rf__rng_uniform(r) - 1, v = 2 * rf__rng_uniform(r) - 1;
        double s = u * u + v * v;
        if (s > 0 && s < 1)
            return u * sqrt(-2 * rf__sim_log(s) / s);
    }
}

/* Gamma of shape k and scale 1: Marsaglia and Tsang (2000); k < 1 by
 * Gamma(k + 1) U^(1/k). */
static double gamma_draw(rf__rng *r, double k)
{
    if (k < 1)
        return gamma_draw(r, k + 1) * rf__sim_exp(rf__sim_log(rf__rng_uniform(r)) / k);
    double d = k - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = normal(r), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = rf__rng_uniform(r);
        if (rf__sim_log(u) < 0.5 * x * x + d - d * v + d * rf__sim_log(v))
            return d * v;
    }
}

/* An integer in [lo, hi], unbiased (rejection above the last whole range). */
static int64_t uniform_int(rf__rng *r, int64_t lo, int64_t hi)
{
    uint64_t range = (uint64_t)(hi - lo) + 1, x;
    if (!range)
        return lo + (int64_t)rf__rng_next(r);
    uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    do
        x = rf__rng_next(r);
    while (x >= limit);
    return lo + (int64_t)(x % range);
}

static rf_status lengths_check(const rf_sim_lengths *l, const char *what, rf_err *err)
{
    switch (l->dist) {
    case RF_SIM_FIXED:
        if (l->value < 1 || l->value > RF_DIM_MAX)
            return rf_err_set(err, RF_EINVAL, "%s length (%lld) must be in [1, %lld]", what,
                              (long long)l->value, (long long)RF_DIM_MAX);
        return RF_OK;
    case RF_SIM_UNIFORM:
    case RF_SIM_NORMAL:
    case RF_SIM_LOGNORMAL:
        if (l->lo < 1 || l->hi < l->lo || l->hi > RF_DIM_MAX)
            return rf_err_set(err, RF_EINVAL, "%s lengths [%lld, %lld] need 1 <= lo <= hi <= %lld",
                              what, (long long)l->lo, (long long)l->hi, (long long)RF_DIM_MAX);
        if (l->dist != RF_SIM_UNIFORM &&
            (!(l->mean > 0) || !(l->sd >= 0) || !isfinite(l->mean) || !isfinite(l->sd)))
            return rf_err_set(err, RF_EINVAL, "%s lengths: mean (%g) must be > 0 and sd (%g) >= 0",
                              what, l->mean, l->sd);
        return RF_OK;
    }
    return rf_err_set(err, RF_EINVAL, "%s lengths: unknown distribution %d", what, (int)l->dist);
}

/* One length. A normal or lognormal draw is rounded to the nearest integer
 * and drawn again until it falls in [lo, hi] (the distribution truncated). */
static rf_status draw(rf__rng *r, const rf_sim_lengths *l, const char *what, int64_t *out,
                      rf_err *err)
{
    if (l->dist == RF_SIM_FIXED) {
        *out = l->value;
        return RF_OK;
    }
    if (l->dist == RF_SIM_UNIFORM) {
        *out = uniform_int(r, l->lo, l->hi);
        return RF_OK;
    }
    double mu = l->mean, sigma = l->sd;
    if (l->dist == RF_SIM_LOGNORMAL) {
        double s2 = rf__sim_log(1 + (l->sd / l->mean) * (l->sd / l->mean));
        sigma = sqrt(s2);
        mu = rf__sim_log(l->mean) - s2 / 2;
    }
    for (int tries = 0; tries < 10000; tries++) {
        double x = mu + sigma * normal(r);
        if (l->dist == RF_SIM_LOGNORMAL)
            x = rf__sim_exp(x);
        x = floor(x + 0.5);
        if (x >= (double)l->lo && x <= (double)l->hi) {
            *out = (int64_t)x;
            return RF_OK;
        }
    }
    return rf_err_set(err, RF_EINVAL,
                      "%s lengths: 10000 draws of mean %g and sd %g missed [%lld, %lld]", what,
                      l->mean, l->sd, (long long)l->lo, (long long)l->hi);
}

rf_status rf__sim_workload_check(const rf_sim_workload *w, int64_t *n, rf_err *err)
{
    rf_status s;
    if (w->arrival == RF_SIM_TRACE) {
        if (w->trace_len < 1 || !w->trace)
            return rf_err_set(err, RF_EINVAL, "trace: no requests");
        for (int64_t i = 0; i < w->trace_len; i++) {
            const rf_sim_request *q = &w->trace[i];
            if (!(q->arrival_s >= 0) || !isfinite(q->arrival_s))
                return rf_err_set(err, RF_EINVAL, "trace: request %lld arrives at %g s (< 0)",
                                  (long long)i, q->arrival_s);
            if (i && q->arrival_s < w->trace[i - 1].arrival_s)
                return rf_err_set(err, RF_EINVAL,
                                  "trace: request %lld arrives at %g s, before request %lld "
                                  "(%g s): arrivals must not go back in time",
                                  (long long)i, q->arrival_s, (long long)(i - 1),
                                  w->trace[i - 1].arrival_s);
            if (q->prompt < 1 || q->output < 1 || q->prompt > RF_DIM_MAX || q->output > RF_DIM_MAX)
                return rf_err_set(err, RF_EINVAL,
                                  "trace: request %lld has prompt %lld and output %lld (each "
                                  "must be in [1, %lld])",
                                  (long long)i, (long long)q->prompt, (long long)q->output,
                                  (long long)RF_DIM_MAX);
        }
        *n = w->trace_len;
        for (int64_t i = 0; i < w->trace_len && w->prefilled; i++)
            if (w->trace[i].output < 2)
                return rf_err_set(err, RF_EINVAL,
                                  "trace: request %lld arrives prefilled with output %lld: it "
                                  "needs at least 2 tokens (its first came with it)",
                                  (long long)i, (long long)w->trace[i].output);
        return RF_OK;
    }
    if (w->prefilled)
        return rf_err_set(err, RF_EINVAL, "prefilled requests come as a trace");
    if (w->requests < 1)
        return rf_err_set(err, RF_EINVAL, "requests (%lld) must be >= 1", (long long)w->requests);
    switch (w->arrival) {
    case RF_SIM_CLOSED:
        if (w->concurrency < 1)
            return rf_err_set(err, RF_EINVAL, "concurrency (%lld) must be >= 1",
                              (long long)w->concurrency);
        break;
    case RF_SIM_GAMMA:
        if (!(w->cv > 0) || !isfinite(w->cv))
            return rf_err_set(err, RF_EINVAL, "arrival gamma: cv (%g) must be > 0", w->cv);
        break;
    case RF_SIM_POISSON:
        break;
    default:
        return rf_err_set(err, RF_EINVAL, "arrival: unknown kind %d", (int)w->arrival);
    }
    if (w->arrival != RF_SIM_CLOSED && (!(w->rate_per_s > 0) || !isfinite(w->rate_per_s)))
        return rf_err_set(err, RF_EINVAL, "rate (%g requests/s) must be > 0", w->rate_per_s);
    if ((s = lengths_check(&w->prompt, "prompt", err)) ||
        (s = lengths_check(&w->output, "output", err)))
        return s;
    *n = w->requests;
    return RF_OK;
}

rf_status rf__sim_requests(const rf_sim_workload *w, int64_t n, double *arrival, int64_t *prompt,
                           int64_t *output, rf_err *err)
{
    if (w->arrival == RF_SIM_TRACE) {
        for (int64_t i = 0; i < n; i++) {
            arrival[i] = w->trace[i].arrival_s;
            prompt[i] = w->trace[i].prompt;
            output[i] = w->trace[i].output;
        }
        return RF_OK;
    }
    rf__rng gaps, lens;
    rf__rng_seed(&gaps, w->seed, 1);
    rf__rng_seed(&lens, w->seed, 2);
    double t = 0, shape = 0, scale = 0;
    if (w->arrival == RF_SIM_GAMMA) {
        shape = 1 / (w->cv * w->cv);
        scale = w->cv * w->cv / w->rate_per_s;
    }
    rf_status s;
    for (int64_t i = 0; i < n; i++) {
        if ((s = draw(&lens, &w->prompt, "prompt", &prompt[i], err)) ||
            (s = draw(&lens, &w->output, "output", &output[i], err)))
            return s;
        if (w->arrival == RF_SIM_POISSON)
            t += -rf__sim_log(rf__rng_uniform(&gaps)) / w->rate_per_s;
        else if (w->arrival == RF_SIM_GAMMA)
            t += gamma_draw(&gaps, shape) * scale;
        arrival[i] = t;
    }
    return RF_OK;
}

/* ---- the text a user types ------------------------------------------------ */

/* Split text at ':' into at most `cap` fields (in buf); the count, or 0
 * when the text is too long or has more fields. */
static size_t fields(const char *text, char *buf, size_t buf_len, char **f, size_t cap)
{
    size_t len = strlen(text), n = 0;
    if (len >= buf_len)
        return 0;
    memcpy(buf, text, len + 1);
    f[n++] = buf;
    for (char *p = buf; *p; p++)
        if (*p == ':') {
            if (n == cap)
                return 0;
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

rf_status rf_sim_arrival_parse(const char *text, rf_sim_arrival *kind, double *cv, rf_err *err)
{
    char buf[64], *f[2];
    size_t n = fields(text, buf, sizeof buf, f, 2);
    if (n == 1 && !strcmp(f[0], "poisson")) {
        *kind = RF_SIM_POISSON;
        *cv = 1;
        return RF_OK;
    }
    if (n == 2 && !strcmp(f[0], "gamma")) {
        if (rf_parse_f64(f[1], 0, HUGE_VAL, cv, NULL) || !(*cv > 0))
            return rf_err_set(err, RF_EINVAL,
                              "arrival '%s': the coefficient of variation must "
                              "be a number > 0",
                              text);
        *kind = RF_SIM_GAMMA;
        return RF_OK;
    }
    return rf_err_set(err, RF_EINVAL, "arrival '%s': expected poisson or gamma:CV", text);
}

rf_status rf_sim_lengths_parse(const char *text, const char *what, rf_sim_lengths *out, rf_err *err)
{
    char buf[128], *f[5];
    size_t n = fields(text, buf, sizeof buf, f, 5);
    rf_sim_lengths l = {.lo = 1, .hi = RF_DIM_MAX};
    bool ok = n == 1;
    if (ok) {
        l.dist = RF_SIM_FIXED;
        ok = !rf_parse_i64(f[0], 1, RF_DIM_MAX, &l.value, NULL);
    } else if (n == 3 && !strcmp(f[0], "uniform")) {
        l.dist = RF_SIM_UNIFORM;
        ok = !rf_parse_i64(f[1], 1, RF_DIM_MAX, &l.lo, NULL) &&
             !rf_parse_i64(f[2], 1, RF_DIM_MAX, &l.hi, NULL);
    } else if ((n == 3 || n == 5) && (!strcmp(f[0], "normal") || !strcmp(f[0], "lognormal"))) {
        l.dist = f[0][0] == 'n' ? RF_SIM_NORMAL : RF_SIM_LOGNORMAL;
        ok = !rf_parse_f64(f[1], 0, (double)RF_DIM_MAX, &l.mean, NULL) &&
             !rf_parse_f64(f[2], 0, (double)RF_DIM_MAX, &l.sd, NULL) &&
             (n == 3 || (!rf_parse_i64(f[3], 1, RF_DIM_MAX, &l.lo, NULL) &&
                         !rf_parse_i64(f[4], 1, RF_DIM_MAX, &l.hi, NULL)));
    }
    if (!ok)
        return rf_err_set(err, RF_EINVAL,
                          "%s lengths '%s': expected N, uniform:LO:HI, normal:MEAN:SD[:LO:HI] or "
                          "lognormal:MEAN:SD[:LO:HI] (tokens, each at least 1)",
                          what, text);
    rf_status s = lengths_check(&l, what, err);
    if (!s)
        *out = l;
    return s;
}
