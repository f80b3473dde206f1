/* calibrate.c - `roofline measure --calibrate` on the CPU
 * (rf_measure_calib.h): GEMMs timed directly, attention and the
 * element-wise operators through `roofline profile`'s own pass. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "measure_internal.h"
#include "roofline/rf_forward.h"
#include "roofline/rf_measure_calib.h"

/* (K, N) shapes: a 1B-3B model's k_proj and q_proj, an 8B's k/q, the MLPs
 * of both (gate/up, down), and lm_head-sized ones (V = 152k at K = 2048,
 * so qwen2.5's 151936 and Llama's 128256 lie inside the grid; 128k at 4096). */
static const int64_t gemm_full[][2] = {
    {2048, 256},  {2048, 2048},  {4096, 1024},  {4096, 4096},   {2048, 8192},
    {8192, 2048}, {4096, 14336}, {14336, 4096}, {2048, 151936}, {4096, 131072},
};
static const int64_t gemm_quick[][2] = {{2048, 512}, {4096, 4096}, {4096, 14336}, {2048, 151936}};
static const int64_t m_full[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};
static const int64_t m_quick[] = {1, 2, 8, 32, 128, 512};
/* decode keys (B = RF_DECODE_KEYS / S) and prefill tokens */
static const int64_t keys_full[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
static const int64_t keys_quick[] = {128, 1024, 4096, 16384};
static const int64_t tokens_full[] = {16, 32, 64, 128, 256, 512};
static const int64_t tokens_quick[] = {16, 64, 128, 512};
static const int64_t head_dims[] = {64, 128};
/* the test suite's grid: a few shapes a kind, seconds */
static const int64_t gemm_tiny[][2] = {{256, 512}};
static const int64_t m_tiny[] = {1, 4, 16};
static const int64_t keys_tiny[] = {1024, 16384};
static const int64_t tokens_tiny[] = {16, 32};
#define DECODE_KEYS 16384 /* B S: 64 MiB of K and V a layer at n_kv 4, d_h 128 */
#define COUNT(a) (sizeof a / sizeof a[0])
#define LONG_CALL_S 0.05                   /* a GEMM call this long needs no warm-up */
#define GEMV_POOL_BYTES (64.0 * (1 << 20)) /* a W this large: GEMVs pooled */

typedef struct plan {
    const int64_t (*gemm)[2];
    size_t n_gemm;
    const int64_t *m, *keys, *tokens;
    size_t n_m, n_keys, n_tokens;
    double max_flops; /* a GEMM point's call at most               */
    double budget_s;  /* calls of a GEMM point: about this long    */
    int steps;        /* timed steps of a forward pass             */
    int rounds;       /* the GEMM grid timed this many times over,
                           a point the median of its rounds         */
} plan;

static plan plan_of(bool quick, bool tiny)
{
    if (tiny)
        return (plan){
            gemm_tiny,        COUNT(gemm_tiny),   m_tiny, keys_tiny, tokens_tiny, COUNT(m_tiny),
            COUNT(keys_tiny), COUNT(tokens_tiny), 1e9,    0.002,     1,           2};
    if (quick)
        return (plan){gemm_quick,
                      COUNT(gemm_quick),
                      m_quick,
                      keys_quick,
                      tokens_quick,
                      COUNT(m_quick),
                      COUNT(keys_quick),
                      COUNT(tokens_quick),
                      RF_CALIB_GEMM_MAX_FLOPS / 4,
                      0.05,
                      3,
                      2};
    return (plan){gemm_full,
                  COUNT(gemm_full),
                  m_full,
                  keys_full,
                  tokens_full,
                  COUNT(m_full),
                  COUNT(keys_full),
                  COUNT(tokens_full),
                  RF_CALIB_GEMM_MAX_FLOPS,
                  0.2,
                  4,
                  3};
}

#define MAX_GEMM_SHAPES 16
#define MAX_M 16
#define MAX_ROUNDS 4

/* A GEMM point over the rounds: its median time and roofs in each. */
typedef struct gemm_obs {
    double t[MAX_ROUNDS], bw[MAX_ROUNDS], peak[MAX_ROUNDS];
    int n;
} gemm_obs;

_Static_assert(COUNT(gemm_full) <= MAX_GEMM_SHAPES && COUNT(m_full) <= MAX_M,
               "the GEMM grid fits the rounds' table");

typedef struct calib_run {
    const rf_calibrate_opts *o;
    plan pl;
    rf_calib *c;
    rf_roof_probe *probe;                 /* the roofs beside every point               */
    gemm_obs obs[MAX_GEMM_SHAPES][MAX_M]; /* each GEMM point's rounds   */
    int done, total;
    float *cold;         /* the rotated copies of W                       */
    uint64_t cold_elems; /* floats in cold                                */
    uint64_t cold_bytes; /* the copies of one shape together at least     */
} calib_run;

static void progress(calib_run *r, const char *what)
{
    if (r->o->progress)
        r->o->progress(r->o->progress_user, r->done, r->total, what);
    r->done++;
}

static rf_calib_series *series_for(rf_calib *c, rf_calib_kind k, int64_t a, int64_t b)
{
    for (size_t i = 0; i < c->n_series; i++)
        if (c->series[i].kind == k && c->series[i].a == a && c->series[i].b == b)
            return &c->series[i];
    if (c->n_series == RF_CALIB_MAX_SERIES)
        return NULL;
    rf_calib_series *s = &c->series[c->n_series++];
    memset(s, 0, sizeof *s);
    s->kind = k, s->a = a, s->b = b;
    return s;
}

/* Add a point, keeping x increasing; a second point at the same x is
 * dropped (the element-wise operators that run twice a layer). Its roofs:
 * the medians of the probe's samples [from, to). */
static size_t add_point(const calib_run *r, rf_calib_series *s, int64_t x, double flops,
                        double bytes, double t, size_t from, size_t to)
{
    size_t at = 0;
    while (at < s->n && s->pt[at].x < x)
        at++;
    if ((at < s->n && s->pt[at].x == x) || s->n == RF_CALIB_MAX_POINTS)
        return at;
    memmove(&s->pt[at + 1], &s->pt[at], (s->n - at) * sizeof s->pt[0]);
    s->pt[at] = (rf_calib_point){.x = x, .flops = flops, .bytes = bytes, .time_s = t};
    rf_roof_probe_median(r->probe, from, to, &s->pt[at].bw_bytes_per_s,
                         &s->pt[at].peak_flops_per_s);
    s->n++;
    return at;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- the roofs sampled beside the work ------------------------------------ */

/* A sample is two bursts of OpenBLAS itself, on the threads the work
 * around it has set: a GEMV (K = N = 4096, W a 64 MiB chunk of a set of
 * 16 x the last-level cache, the chunks in turn, so W comes from DRAM) 8
 * times, the set once, and an in-cache SGEMM (M = N = K = 256) 8 times;
 * each burst's figure is its median call. */
#define PROBE_CHUNKS 8
#define PROBE_CALLS 8
#define PROBE_GEMV 4096
#define PROBE_GEMM 256
#define PROBE_MAX 4096 /* samples kept for the medians */

struct rf_roof_probe {
    float *set, *x, *y, *a, *b, *c;
    uint64_t chunk;  /* floats a GEMV reads: one chunk of the set        */
    uint64_t chunks; /* in the set                                       */
    uint64_t next;
    double bw[PROBE_MAX], peak[PROBE_MAX];
    size_t n;
};

rf_status rf_roof_probe_open(uint64_t set_bytes, rf_roof_probe **out, rf_err *err)
{
    rf_roof_probe *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p)
        return rf_err_set(err, RF_ENOMEM, "out of memory");
    rf_cpu cpu;
    rf_status s = set_bytes ? RF_OK : rf_cpu_query(&cpu, err);
    uint64_t set = set_bytes;
    if (!set_bytes) {
        set = rf_cpu_cold_bytes(&cpu);
        if (cpu.mem_avail_bytes && set > cpu.mem_avail_bytes / 4)
            set = cpu.mem_avail_bytes / 4;
    }
    p->chunk = (uint64_t)PROBE_GEMV * PROBE_GEMV;
    p->chunks = set / 4 / p->chunk < 1 ? 1 : set / 4 / p->chunk;
    const uint64_t sq = (uint64_t)PROBE_GEMM * PROBE_GEMM;
    if (s == RF_OK) {
        p->set = rf__alloc_untouched(p->chunks * p->chunk * 4);
        p->x = malloc(PROBE_GEMV * 4), p->y = malloc(PROBE_GEMV * 4);
        p->a = malloc(sq * 4), p->b = malloc(sq * 4), p->c = malloc(sq * 4);
        if (!p->set || !p->x || !p->y || !p->a || !p->b || !p->c)
            s = rf_err_set(err, RF_ENOMEM, "roof probe: cannot allocate %llu MiB",
                           (unsigned long long)(p->chunks * p->chunk >> 18));
    }
    if (s != RF_OK) {
        rf_roof_probe_close(p);
        return s;
    }
    for (uint64_t i = 0; i < p->chunks * p->chunk; i++)
        p->set[i] = (float)(i % 1000) * 1e-3f - 0.5f;
    for (uint64_t i = 0; i < PROBE_GEMV; i++)
        p->x[i] = (float)(i % 7) * 0.1f;
    for (uint64_t i = 0; i < sq; i++)
        p->a[i] = p->b[i] = (float)(i % 11) * 0.1f - 0.5f;
    *out = p;
    return RF_OK;
}

/* The median call's rate: work / seconds. */
static double median_rate(double *t, int n, double work)
{
    qsort(t, (size_t)n, sizeof *t, by_value);
    double mid = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    return work / mid;
}

rf_status rf_roof_probe_sample(rf_roof_probe *p, rf_err *err)
{
    if (p->n == PROBE_MAX)
        return rf_err_set(err, RF_ERANGE, "roof probe: more than %d samples", PROBE_MAX);
    double t[PROBE_CALLS];
    for (int i = 0; i < PROBE_CALLS; i++) {
        const float *w = p->set + (p->next++ % p->chunks) * p->chunk;
        double t0 = rf_time_now_s();
        cblas_sgemv(CblasRowMajor, CblasNoTrans, PROBE_GEMV, PROBE_GEMV, 1.0f, w, PROBE_GEMV, p->x,
                    1, 0.0f, p->y, 1);
        t[i] = rf_time_now_s() - t0;
    }
    double bw = median_rate(t, PROBE_CALLS, (double)p->chunk * 4);
    const int n = PROBE_GEMM;
    for (int i = 0; i <= PROBE_CALLS; i++) { /* the first call warms the cache */
        double t0 = rf_time_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, p->a, n, p->b, n, 0.0f,
                    p->c, n);
        if (i)
            t[i - 1] = rf_time_now_s() - t0;
    }
    double peak = median_rate(t, PROBE_CALLS, 2.0 * n * n * n);
    if (!isfinite(p->y[0]) || !isfinite(p->c[0]) || !(bw > 0) || !(peak > 0))
        return rf_err_set(err, RF_EINTERNAL, "roof probe: a non-finite result or rate");
    p->bw[p->n] = bw;
    p->peak[p->n++] = peak;
    return RF_OK;
}

size_t rf_roof_probe_count(const rf_roof_probe *p) { return p->n; }

static double median_of(const double *v, size_t n)
{
    double t[PROBE_MAX];
    memcpy(t, v, n * sizeof *t);
    qsort(t, n, sizeof *t, by_value);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

void rf_roof_probe_median(const rf_roof_probe *p, size_t from, size_t to, double *bw, double *peak)
{
    to = to > p->n ? p->n : to;
    *bw = *peak = 0;
    if (from >= to)
        return;
    *bw = median_of(p->bw + from, to - from);
    *peak = median_of(p->peak + from, to - from);
}

void rf_roof_probe_close(rf_roof_probe *p)
{
    if (!p)
        return;
    free(p->set), free(p->x), free(p->y), free(p->a), free(p->b), free(p->c);
    free(p);
}

void rf_roof_probe_progress(void *user, int done, int total, const char *what)
{
    rf_roof_probe_hook *h = user;
    if (h->status == RF_OK && !strcmp(what, RF_FORWARD_TIMED_STEP))
        h->status = rf_roof_probe_sample(h->probe, &h->err);
    if (h->next)
        h->next(h->next_user, done, total, what);
}

/* ---- GEMMs ---------------------------------------------------------------- */

/* One call as `roofline profile` makes it (forward_pass.c's linear, no
 * bias), on copy c of W. */
static void linear(const float *w, const float *x, float *y, int64_t M, int64_t K, int64_t N)
{
    if (M == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)N, (int)K, 1.0f, w, (int)K, x, 1, 0.0f, y, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0f, x,
                    (int)K, w, (int)K, 0.0f, y, (int)N);
}

/* The median of n sorted-in-place values. */
static double median_sorted(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One round of one shape: every M of the grid timed (its calls' median)
 * into obs, the roofs sampled before the first M and after each one (an
 * M's roofs: the mean of the samples on either side of it). */
static rf_status gemm_round(calib_run *r, size_t shape, int round, rf_err *err)
{
    const plan *pl = &r->pl;
    int64_t K = pl->gemm[shape][0], N = pl->gemm[shape][1];
    uint64_t w_elems = (uint64_t)K * (uint64_t)N;
    uint64_t copies = (r->cold_bytes / 4 + w_elems - 1) / w_elems;
    if (copies * w_elems > r->cold_elems)
        copies = r->cold_elems / w_elems;
    int64_t m_max = 1; /* the largest M timed */
    for (size_t i = 0; i < pl->n_m; i++)
        if (2.0 * (double)pl->m[i] * (double)K * (double)N <= pl->max_flops)
            m_max = pl->m[i];
    float *x = rf__alloc_untouched((uint64_t)m_max * (uint64_t)K * 4);
    float *y = rf__alloc_untouched((uint64_t)m_max * (uint64_t)N * 4);
    rf_status st = RF_OK;
    if (!x || !y) {
        st = rf_err_set(err, RF_ENOMEM, "calibration: cannot hold GEMM K=%lld N=%lld", (long long)K,
                        (long long)N);
        goto done;
    }
    for (uint64_t i = 0; i < (uint64_t)m_max * (uint64_t)K; i++)
        x[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
    memset(y, 0, (size_t)m_max * (size_t)N * 4);
    uint64_t next = (uint64_t)round; /* each round starts on another copy */
    if ((st = rf_roof_probe_sample(r->probe, err)))
        goto done;
    for (size_t i = 0; i < pl->n_m; i++) {
        int64_t M = pl->m[i];
        char what[64];
        snprintf(what, sizeof what, "gemm M=%lld K=%lld N=%lld (round %d)", (long long)M,
                 (long long)K, (long long)N, round + 1);
        progress(r, what);
        if (M > m_max)
            continue;
        /* The first call sets how many fit the round's budget (1 to 25);
         * it is a warm-up, except for a long call, whose weights come from
         * memory whichever call it is. */
        double t[25];
        int n = 0, want = 1;
        for (int call = 0; n < want; call++) {
            const float *w = r->cold + (next++ % copies) * w_elems;
            double t0 = rf_time_now_s();
            linear(w, x, y, M, K, N);
            double dt = rf_time_now_s() - t0;
            if (call == 0) {
                want = (int)(pl->budget_s / pl->rounds / dt);
                want = want < 2 ? 2 : want > 25 ? 25 : want;
                if (dt >= LONG_CALL_S)
                    want = want > 2 ? want - 1 : 1; /* this call counts */
                else
                    continue;
            }
            t[n++] = dt;
        }
        if (!isfinite(y[0]) || !isfinite(y[(size_t)M * (size_t)N - 1])) {
            st = rf_err_set(err, RF_EINTERNAL, "calibration: %s gave a non-finite output", what);
            goto done;
        }
        if ((st = rf_roof_probe_sample(r->probe, err)))
            goto done;
        double bw[2], pk[2];
        size_t after = rf_roof_probe_count(r->probe);
        rf_roof_probe_median(r->probe, after - 2, after - 1, &bw[0], &pk[0]);
        rf_roof_probe_median(r->probe, after - 1, after, &bw[1], &pk[1]);
        gemm_obs *o = &r->obs[shape][i];
        o->t[round] = median_sorted(t, (size_t)n);
        o->bw[round] = (bw[0] + bw[1]) / 2;
        o->peak[round] = (pk[0] + pk[1]) / 2;
        o->n = round + 1;
    }
done:
    free(x);
    free(y);
    return st;
}

/* A shape's points: each M's time, and roofs, the medians over the rounds
 * (a neighbour busy for a few seconds spoils one round, not the point). */
static rf_status gemm_points(calib_run *r, size_t shape, rf_err *err)
{
    int64_t K = r->pl.gemm[shape][0], N = r->pl.gemm[shape][1];
    rf_calib_series *s = series_for(r->c, RF_CALIB_GEMM, K, N);
    if (!s)
        return rf_err_set(err, RF_EINTERNAL, "calibration: more than %d series",
                          RF_CALIB_MAX_SERIES);
    for (size_t i = 0; i < r->pl.n_m; i++) {
        gemm_obs *o = &r->obs[shape][i];
        if (o->n == 0)
            continue;
        double M = (double)r->pl.m[i];
        double bytes = (M * (double)K + (double)K * (double)N + M * (double)N) * 4;
        size_t at = add_point(r, s, r->pl.m[i], 2 * M * (double)K * (double)N, bytes,
                              median_sorted(o->t, (size_t)o->n), 0, 0);
        s->pt[at].bw_bytes_per_s = median_sorted(o->bw, (size_t)o->n);
        s->pt[at].peak_flops_per_s = median_sorted(o->peak, (size_t)o->n);
    }
    return RF_OK;
}

/* Whether the points' own roofs make the rounds agree: for the GEMM
 * points bound by each roof (on the medians of every sample), the median
 * over them of ln(max / min) across the rounds of their time, and of their
 * efficiency on their own roofs; a roof is used per point only when the
 * second is the smaller (a probe that does not follow what slows the
 * GEMMs adds its own noise to every point). */
typedef struct spreads {
    double sp[2][2][MAX_GEMM_SHAPES * MAX_M];            /* [roof][time, eff] */
    double all[2][MAX_GEMM_SHAPES * MAX_M * MAX_ROUNDS]; /* [bw, peak]        */
} spreads;

static void round_spreads_in(calib_run *r, spreads *sc)
{
    size_t n[2] = {0, 0}, na = 0;
    for (size_t i = 0; i < r->pl.n_gemm; i++)
        for (size_t j = 0; j < r->pl.n_m; j++)
            for (int k = 0; k < r->obs[i][j].n; k++) {
                sc->all[0][na] = r->obs[i][j].bw[k];
                sc->all[1][na++] = r->obs[i][j].peak[k];
            }
    if (!na)
        return;
    double bw0 = median_sorted(sc->all[0], na), pk0 = median_sorted(sc->all[1], na);
    for (size_t i = 0; i < r->pl.n_gemm; i++)
        for (size_t j = 0; j < r->pl.n_m; j++) {
            const gemm_obs *o = &r->obs[i][j];
            if (o->n < 2)
                continue;
            double K = (double)r->pl.gemm[i][0], N = (double)r->pl.gemm[i][1];
            double M = (double)r->pl.m[j], F = 2 * M * K * N, Q = (M * K + K * N + M * N) * 4;
            int b = Q / bw0 >= F / pk0 ? 0 : 1;
            double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
            for (int k = 0; k < o->n; k++) {
                double v[2] = {log(o->t[k]), log(o->t[k] / fmax(F / o->peak[k], Q / o->bw[k]))};
                for (int w = 0; w < 2; w++)
                    lo[w] = fmin(lo[w], v[w]), hi[w] = fmax(hi[w], v[w]);
            }
            sc->sp[b][0][n[b]] = hi[0] - lo[0];
            sc->sp[b][1][n[b]++] = hi[1] - lo[1];
        }
    for (int b = 0; b < 2; b++)
        for (int w = 0; n[b] && w < 2; w++)
            r->c->round_spread[b][w] = median_sorted(sc->sp[b][w], n[b]);
    r->c->point_bw = n[0] && r->c->round_spread[0][1] < r->c->round_spread[0][0];
    r->c->point_peak = n[1] && r->c->round_spread[1][1] < r->c->round_spread[1][0];
}

/* round_spreads_in on scratch of its own (24 KiB, the heap's). */
static rf_status round_spreads(calib_run *r, rf_err *err)
{
    spreads *sc = malloc(sizeof *sc);
    if (!sc)
        return rf_err_set(err, RF_ENOMEM, "calibration: out of memory");
    round_spreads_in(r, sc);
    free(sc);
    return RF_OK;
}

static rf_status gemms(calib_run *r, rf_err *err)
{
    uint64_t biggest = 0;
    for (size_t i = 0; i < r->pl.n_gemm; i++) {
        uint64_t e = (uint64_t)r->pl.gemm[i][0] * (uint64_t)r->pl.gemm[i][1];
        biggest = e > biggest ? e : biggest;
    }
    r->cold_elems = r->cold_bytes / 4 > biggest ? r->cold_bytes / 4 : biggest;
    r->cold = rf__alloc_untouched(r->cold_elems * 4);
    if (!r->cold)
        return rf_err_set(err, RF_ENOMEM, "calibration: cannot allocate %llu MiB of weights",
                          (unsigned long long)(r->cold_elems >> 18));
    /* values in [-0.5, 0.5): one block computed, the rest copied */
    const uint64_t block = 1 << 20;
    for (uint64_t i = 0; i < block && i < r->cold_elems; i++)
        r->cold[i] = (float)((i * 40503u) % 1000) * 1e-3f - 0.5f;
    for (uint64_t at = block; at < r->cold_elems; at += block)
        memcpy(r->cold + at, r->cold,
               (size_t)(r->cold_elems - at < block ? r->cold_elems - at : block) * 4);
    openblas_set_num_threads(r->o->threads);
    rf_status s = RF_OK;
    for (int round = 0; s == RF_OK && round < r->pl.rounds; round++)
        for (size_t i = 0; s == RF_OK && i < r->pl.n_gemm; i++)
            s = gemm_round(r, i, round, err);
    if (s == RF_OK)
        s = round_spreads(r, err);
    for (size_t i = 0; s == RF_OK && i < r->pl.n_gemm; i++)
        s = gemm_points(r, i, err);
    free(r->cold);
    r->cold = NULL;
    return s;
}

/* ---- attention and element-wise operators, through the forward pass ------- */

void rf_calib_forward_op(const rf_forward_run *run, const rf_forward_op *op, rf_op *out)
{
    memset(out, 0, sizeof *out);
    out->name = op->name;
    out->m = op->m, out->k = op->k, out->n = op->n;
    out->count = op->count;
    out->flops = op->flops, out->bytes = op->bytes;
    switch (op->id) {
    case RF_FWD_Q_PROJ:
    case RF_FWD_K_PROJ:
    case RF_FWD_V_PROJ:
    case RF_FWD_O_PROJ:
    case RF_FWD_GATE_PROJ:
    case RF_FWD_UP_PROJ:
    case RF_FWD_DOWN_PROJ:
    case RF_FWD_LM_HEAD:
        out->kind = RF_OP_GEMM;
        break;
    case RF_FWD_ATTENTION:
    case RF_FWD_ATTENTION_SWA:
        out->kind = run->opts.phase == RF_DECODE ? RF_OP_ATTN_DECODE : RF_OP_ATTN_PREFILL;
        break;
    case RF_FWD_EMBED:
        out->kind = RF_OP_GATHER;
        break;
    default:
        out->kind = RF_OP_ELEMENTWISE;
    }
}

/* A decoder shaped for the kinds: 16 query heads over 4 KV heads of d_h,
 * H = 1024, F_ff = 2816, a small vocabulary; one layer. */
static rf_model decoder(int64_t dh)
{
    rf_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "calibration decoder (d_h %lld)", (long long)dh);
    snprintf(m.family, sizeof m.family, "llama");
    m.hidden = 1024, m.layers = 1, m.n_q = 16, m.n_kv = 4, m.head_dim = dh, m.ffn = 2816;
    m.vocab = 1024;
    return m;
}

static rf_status pass(calib_run *r, int64_t dh, rf_phase phase, int64_t keys, rf_err *err)
{
    rf_model m = decoder(dh);
    rf_forward_opts fo = rf_forward_opts_default();
    fo.phase = phase;
    fo.layers = 1;
    fo.threads = r->o->threads;
    fo.isa = r->o->isa;
    fo.steps = r->pl.steps;
    if (phase == RF_DECODE)
        fo.batch = keys >= DECODE_KEYS ? 1 : DECODE_KEYS / keys, fo.context = keys;
    else
        fo.batch = 1, fo.context = 0, fo.tokens = keys;
    char what[64];
    snprintf(what, sizeof what, "%s d_h=%lld %s %lld", phase == RF_DECODE ? "decode" : "prefill",
             (long long)dh, phase == RF_DECODE ? "keys" : "tokens", (long long)keys);
    progress(r, what);
    rf_roof roof = {.math = RF_FP32,
                    .peak_flops_per_s = r->c->peak_flops_per_s,
                    .bw_bytes_per_s = r->c->bw_bytes_per_s,
                    .ridge = r->c->peak_flops_per_s / r->c->bw_bytes_per_s};
    rf_forward_run *run = malloc(sizeof *run);
    rf_roof_probe_hook *hook = malloc(sizeof *hook);
    if (!run || !hook) {
        free(run), free(hook);
        return rf_err_set(err, RF_ENOMEM, "calibration: out of memory");
    }
    /* the roofs sampled before each timed step and after the last: the
     * pass's points share their medians */
    *hook = (rf_roof_probe_hook){.probe = r->probe};
    fo.progress = rf_roof_probe_progress;
    fo.progress_user = hook;
    size_t from = rf_roof_probe_count(r->probe);
    rf_status s = rf_forward_profile(&m, &fo, &roof, run, err);
    if (s == RF_OK && hook->status != RF_OK)
        *err = hook->err, s = hook->status;
    if (s == RF_OK)
        s = rf_roof_probe_sample(r->probe, err);
    size_t to = rf_roof_probe_count(r->probe);
    for (size_t i = 0; s == RF_OK && i < run->n_ops; i++) {
        rf_op op;
        rf_calib_kind k;
        int64_t x, a, b;
        rf_calib_forward_op(run, &run->ops[i], &op);
        if (op.kind == RF_OP_GEMM || !rf_calib_shape_of(&op, &k, &x, &a, &b))
            continue;
        bool attention = k == RF_CALIB_ATTN_DECODE || k == RF_CALIB_ATTN_PREFILL;
        if (!attention && dh != 128) /* the element-wise kinds from one decoder */
            continue;
        rf_calib_series *se = series_for(r->c, k, a, b);
        if (!se)
            s = rf_err_set(err, RF_EINTERNAL, "calibration: more than %d series",
                           RF_CALIB_MAX_SERIES);
        else if (run->ops[i].measured_s > 0)
            add_point(r, se, x, (double)op.flops, (double)op.bytes, run->ops[i].measured_s, from,
                      to);
    }
    free(run);
    free(hook);
    return s;
}

/* The calibration's roofs: the medians of its points' own, the machine as
 * the calibration saw it (what a prediction uses when no roof is sampled
 * beside the run it predicts). */
static void calib_roofs(rf_calib *c)
{
    double *bw = malloc(RF_CALIB_MAX_SERIES * RF_CALIB_MAX_POINTS * 2 * sizeof *bw);
    if (!bw)
        return; /* the lab's roofs stay */
    double *peak = bw + RF_CALIB_MAX_SERIES * RF_CALIB_MAX_POINTS;
    size_t n = 0;
    for (size_t i = 0; i < c->n_series; i++)
        for (size_t j = 0; j < c->series[i].n; j++) {
            bw[n] = c->series[i].pt[j].bw_bytes_per_s;
            peak[n++] = c->series[i].pt[j].peak_flops_per_s;
        }
    qsort(bw, n, sizeof *bw, by_value);
    qsort(peak, n, sizeof *peak, by_value);
    if (n && bw[0] > 0 && peak[0] > 0)
        c->bw_bytes_per_s = bw[n / 2], c->peak_flops_per_s = peak[n / 2];
    free(bw);
}

rf_status rf_calibrate_cpu(const rf_calibrate_opts *o, rf_hw_profile *p, rf_err *err)
{
    rf_calib *c = &p->calib;
    memset(c, 0, sizeof *c);
    if (!(p->peak_flops_per_s[RF_FP32] > 0) || !(p->bandwidth_bytes_per_s > 0))
        return rf_err_set(err, RF_EINVAL,
                          "calibration: the profile has no fp32 peak or memory roof");
    c->version = RF_CALIB_VERSION;
    c->bw_bytes_per_s = p->bandwidth_sustained_bytes_per_s > 0 ? p->bandwidth_sustained_bytes_per_s
                                                               : p->bandwidth_bytes_per_s;
    c->peak_flops_per_s = p->peak_flops_per_s[RF_FP32];
    snprintf(c->backend, sizeof c->backend, "cpu openblas, %d thread%s", o->threads,
             o->threads == 1 ? "" : "s");
    snprintf(c->date, sizeof c->date, "%s", p->date);
    calib_run r = {.o = o, .pl = plan_of(o->quick, o->tiny), .c = c};
    uint64_t l3 = p->cache_bytes[2];
    r.cold_bytes = o->tiny ? 16ull << 20 : 16 * l3 > (512ull << 20) ? 16 * l3 : 512ull << 20;
    r.total = (int)(r.pl.rounds * r.pl.n_gemm * r.pl.n_m +
                    COUNT(head_dims) * (r.pl.n_keys + r.pl.n_tokens));
    rf_status s = rf_roof_probe_open(o->tiny ? 128ull << 20 : 0, &r.probe, err);
    if (s == RF_OK)
        s = gemms(&r, err);
    for (size_t d = 0; s == RF_OK && d < COUNT(head_dims); d++) {
        for (size_t i = 0; s == RF_OK && i < r.pl.n_keys; i++)
            s = pass(&r, head_dims[d], RF_DECODE, r.pl.keys[i], err);
        for (size_t i = 0; s == RF_OK && i < r.pl.n_tokens; i++)
            s = pass(&r, head_dims[d], RF_PREFILL, r.pl.tokens[i], err);
    }
    rf_roof_probe_close(r.probe);
    if (s == RF_OK) {
        calib_roofs(c);
        rf_calib_pool_gemv(c, GEMV_POOL_BYTES);
        s = rf_calib_fit_all(c, err);
    }
    if (s != RF_OK)
        c->version = 0;
    return s;
}

/* ---- a profiled pass predicted ------------------------------------------- */

double rf_calib_error(double predicted_s, double measured_s)
{
    return measured_s > 0 ? fabs(predicted_s - measured_s) / measured_s : 0;
}

rf_status rf_calib_predict_forward(const rf_calib *cal, const rf_forward_run *run,
                                   double bw_now_bytes_per_s, double peak_now_flops_per_s,
                                   rf_forward_pred *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    rf_calib *c = malloc(2 * sizeof *c), *now = c + 1;
    if (!c)
        return rf_err_set(err, RF_ENOMEM, "prediction: out of memory");
    *c = *cal;
    *now = *cal; /* the GEMVs' roof: the run's DRAM GEMVs, when sampled */
    if (bw_now_bytes_per_s > 0)
        now->bw_bytes_per_s = bw_now_bytes_per_s;
    out->bw_bytes_per_s = c->bw_bytes_per_s;
    out->gemv_bw_bytes_per_s = now->bw_bytes_per_s;
    out->peak_flops_per_s = c->peak_flops_per_s;
    out->sampled_bw_bytes_per_s = bw_now_bytes_per_s;
    out->sampled_peak_flops_per_s = peak_now_flops_per_s;
    rf_status s = RF_OK;
    for (size_t i = 0; i < run->n_ops; i++) {
        const rf_forward_op *fo = &run->ops[i];
        rf_op op;
        rf_calib_pred on_now;
        rf_calib_forward_op(run, fo, &op);
        bool gemv = op.kind == RF_OP_GEMM && op.m == 1;
        if ((s = rf_calib_predict_op(c, &op, &out->op[i], err)) != RF_OK ||
            (s = rf_calib_predict_op(gemv ? now : c, &op, &on_now, err)) != RF_OK)
            break;
        double t = (double)fo->count * out->op[i].time_s;
        out->step_now_s += (double)fo->count * on_now.time_s;
        out->lo_s += (double)fo->count * out->op[i].lo_s;
        out->hi_s += (double)fo->count * out->op[i].hi_s;
        bool head =
            fo->id == RF_FWD_EMBED || fo->id == RF_FWD_FINAL_NORM || fo->id == RF_FWD_LM_HEAD;
        *(head ? &out->head_s : &out->layers_s) += t;
        out->op_error[i] = rf_calib_error(out->op[i].time_s, fo->measured_s);
        out->floor_error[i] = rf_calib_error(fo->floor_s, fo->measured_s);
        out->n_outside += !out->op[i].in_range;
    }
    out->step_s = out->layers_s + out->head_s;
    out->step_error = rf_calib_error(out->step_s, run->measured_s);
    out->step_now_error = rf_calib_error(out->step_now_s, run->measured_s);
    out->step_floor_error = rf_calib_error(run->floor_s, run->measured_s);
    out->model_s =
        out->layers_s * (double)run->model_layers / (double)run->opts.layers + out->head_s;
    double tokens =
        (double)run->opts.batch * (double)(run->opts.phase == RF_DECODE ? 1 : run->opts.tokens);
    out->tokens_per_s = out->model_s > 0 ? tokens / out->model_s : 0;
    free(c);
    return s;
}
