/* serve.c - whole requests summed exactly over their contexts (rf_serve.h). */
#include <math.h>
#include <string.h>

#include "roofline/rf_serve.h"

/* One term per operator, and a last one for the step's totals (its floor
 * is max(F/pi, Q/beta) of F = flops, Q = total_bytes). */
#define TERMS (RF_STEP_MAX_OPS + 1)

/* What a step at one context contributes: its terms' integer counts (to
 * check affinity exactly) and its two floors. */
typedef struct point {
    int64_t s;
    size_t n;
    uint64_t count[TERMS], flops[TERMS], bytes[TERMS];
    double floor_s, sum_of_max_s;
} point;

typedef struct summer {
    const rf_model *m;
    rf_step_opts o;
    const rf_roof *roof;
    rf_err *err;
    rf_step st;          /* scratch of rf_step_compute (~10 KB)           */
    double floor_s, sum_of_max_s;
    size_t pieces, calls;
} summer;

static rf_status at(summer *sm, int64_t s, point *p)
{
    sm->o.context = s;
    sm->calls++;
    rf_status rc = rf_step_compute(sm->m, &sm->o, sm->roof, &sm->st, sm->err);
    if (rc)
        return rc;
    const rf_step *st = &sm->st;
    p->s = s;
    p->n = st->n_ops + 1;
    for (size_t i = 0; i < st->n_ops; i++) {
        p->count[i] = st->ops[i].count;
        p->flops[i] = st->ops[i].flops;
        p->bytes[i] = st->ops[i].bytes;
    }
    p->count[st->n_ops] = 1;
    p->flops[st->n_ops] = st->flops;
    p->bytes[st->n_ops] = st->total_bytes;
    p->floor_s = st->floor_s;
    p->sum_of_max_s = st->floor_sum_of_max_s;
    return RF_OK;
}

/* v(x) == v(a) + (x - a) (v(b) - v(a)) for every count, b = a + 1; in
 * unsigned (modular) arithmetic, which is exact for affine counts. */
static bool affine(const point *a, const point *b, const point *x)
{
    if (a->n != b->n || a->n != x->n)
        return false;
    uint64_t t = (uint64_t)(x->s - a->s);
    for (size_t i = 0; i < a->n; i++)
        if (a->count[i] != b->count[i] || a->count[i] != x->count[i] ||
            x->flops[i] != a->flops[i] + t * (b->flops[i] - a->flops[i]) ||
            x->bytes[i] != a->bytes[i] + t * (b->bytes[i] - a->bytes[i]))
            return false;
    return true;
}

/* Add the linear piece lo..hi: (hi - lo + 1) (f(lo) + f(hi)) / 2. */
static void add_piece(summer *sm, const point *lo, const point *hi)
{
    double n = (double)(hi->s - lo->s + 1);
    sm->floor_s += n * (lo->floor_s + hi->floor_s) / 2;
    sm->sum_of_max_s += n * (lo->sum_of_max_s + hi->sum_of_max_s) / 2;
    sm->pieces++;
}

/* The range lo..hi on which every count is affine (a at lo, b at lo + 1):
 * a term's floor max(F/pi, Q/beta) bends where F/pi - Q/beta = 0, at
 * t = -(F_a/pi - Q_a/beta) / (dF/pi - dQ/beta) past lo; the floors are
 * linear between those bends, summed piece by piece. */
static rf_status linear_range(summer *sm, const point *a, const point *b, int64_t hi)
{
    int64_t cut[TERMS + 1];
    size_t n_cut = 0;
    double pi = sm->roof->peak_flops_per_s, beta = sm->roof->bw_bytes_per_s;
    for (size_t i = 0; i < a->n; i++) {
        double g0 = (double)a->flops[i] / pi - (double)a->bytes[i] / beta;
        double g1 = (double)(int64_t)(b->flops[i] - a->flops[i]) / pi -
                    (double)(int64_t)(b->bytes[i] - a->bytes[i]) / beta;
        if (g1 == 0)
            continue;
        double t = -g0 / g1;
        if (!(t > 0 && t < (double)(hi - a->s)))
            continue;
        int64_t c = a->s + (int64_t)floor(t); /* the bend lies in (c, c + 1] */
        size_t j = n_cut++;
        for (; j > 0 && cut[j - 1] > c; j--) /* insertion, kept sorted */
            cut[j] = cut[j - 1];
        cut[j] = c;
    }
    cut[n_cut++] = hi;
    point p, q;
    rf_status s;
    int64_t from = a->s;
    for (size_t j = 0; j < n_cut; j++) {
        if (cut[j] < from)
            continue; /* a repeated cut */
        if ((s = at(sm, from, &p)) || (s = at(sm, cut[j], &q)))
            return s;
        add_piece(sm, &p, &q);
        from = cut[j] + 1;
    }
    return RF_OK;
}

rf_status rf_floor_sum_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                               int64_t lo, int64_t hi, rf_floor_sum *out, rf_err *err)
{
    if (lo < 0 || lo > hi)
        return rf_err_set(err, RF_EINVAL, "contexts %lld..%lld: need 0 <= first <= last",
                          (long long)lo, (long long)hi);
    static const size_t depth = 128; /* two ranges a halving of 2^40 */
    summer sm = {.m = m, .o = *o, .roof = roof, .err = err};
    rf_floor_sum r = {.steps = hi - lo + 1};
    point a, b, x;
    rf_status s;
    if ((s = at(&sm, lo, &a)))
        return s;
    r.first_s = a.floor_s;
    if ((s = at(&sm, hi, &a)))
        return s;
    r.last_s = a.floor_s;
    /* ranges still to sum; a range whose counts are not affine is halved */
    int64_t stack[128][2];
    size_t top = 0;
    stack[top][0] = lo;
    stack[top++][1] = hi;
    while (top) {
        top--;
        int64_t l = stack[top][0], h = stack[top][1];
        if (h - l < 3) {
            for (int64_t c = l; c <= h; c++) {
                if ((s = at(&sm, c, &a)))
                    return s;
                add_piece(&sm, &a, &a);
            }
            continue;
        }
        int64_t mid = l + (h - l) / 2;
        if ((s = at(&sm, l, &a)) || (s = at(&sm, l + 1, &b)) || (s = at(&sm, mid, &x)))
            return s;
        bool lin = affine(&a, &b, &x);
        if (lin) {
            if ((s = at(&sm, h, &x)))
                return s;
            lin = affine(&a, &b, &x);
        }
        if (lin) {
            if ((s = linear_range(&sm, &a, &b, h)))
                return s;
            continue;
        }
        if (top + 2 > depth)
            return rf_err_set(err, RF_EINTERNAL, "contexts %lld..%lld: halving too deep",
                              (long long)lo, (long long)hi);
        stack[top][0] = l;
        stack[top++][1] = mid;
        stack[top][0] = mid + 1;
        stack[top++][1] = h;
    }
    r.floor_s = sm.floor_s;
    r.sum_of_max_s = sm.sum_of_max_s;
    r.pieces = sm.pieces;
    r.steps_computed = sm.calls;
    *out = r;
    return RF_OK;
}

static rf_status check_sizes(const rf_step_opts *o, int64_t prompt, int64_t output, rf_err *err)
{
    if (o->batch < 1 || o->batch > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "batch (%lld) must be in [1, %lld]",
                          (long long)o->batch, (long long)RF_DIM_MAX);
    if (prompt < 1 || prompt > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "prompt (%lld) must be in [1, %lld] tokens",
                          (long long)prompt, (long long)RF_DIM_MAX);
    if (output < 1 || output > RF_DIM_MAX - prompt + 1)
        return rf_err_set(err, RF_EINVAL,
                          "output (%lld) must be in [1, %lld] tokens (prompt + output - 1 "
                          "positions at most %lld)",
                          (long long)output, (long long)(RF_DIM_MAX - prompt + 1),
                          (long long)RF_DIM_MAX);
    return RF_OK;
}

rf_status rf_generate_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                              int64_t prompt, int64_t output, rf_generate *out, rf_err *err)
{
    rf_status s = check_sizes(o, prompt, output, err);
    if (s)
        return s;
    rf_generate g = {.batch = o->batch, .prompt = prompt, .output = output,
                     .final_positions = prompt + output - 1};
    static const rf_floor_sum none = {0};
    {
        rf_step_opts pre = *o;
        pre.phase = RF_PREFILL;
        pre.context = 0;
        pre.tokens = prompt;
        summer sm = {.m = m, .o = pre, .roof = roof, .err = err};
        point p;
        if ((s = at(&sm, 0, &p)))
            return s;
        g.ttft_s = p.floor_s;
        g.ttft_sum_of_max_s = p.sum_of_max_s;
        g.prefill_regime = sm.st.regime;
    }
    g.decode = none;
    if (output >= 2) {
        rf_step_opts dec = *o;
        dec.phase = RF_DECODE;
        dec.tokens = 1;
        if ((s = rf_floor_sum_compute(m, &dec, roof, prompt + 1, prompt + output - 1, &g.decode,
                                      err)))
            return s;
        g.tpot_mean_s = g.decode.floor_s / (double)(output - 1);
        g.tpot_first_s = g.decode.first_s;
        g.tpot_last_s = g.decode.last_s;
        g.decode_tokens_per_s = (double)o->batch / g.tpot_mean_s;
    }
    g.latency_s = g.ttft_s + g.decode.floor_s;
    g.tokens_per_s = (double)o->batch * (double)output / g.latency_s;
    *out = g;
    return RF_OK;
}

rf_step_opts rf_generate_final_step(const rf_step_opts *o, int64_t prompt, int64_t output)
{
    rf_step_opts f = *o;
    if (output >= 2) {
        f.phase = RF_DECODE;
        f.context = prompt + output - 1;
        f.tokens = 1;
    } else {
        f.phase = RF_PREFILL;
        f.context = 0;
        f.tokens = prompt;
    }
    return f;
}

double rf_spec_tokens_per_iter(int64_t k, double alpha)
{
    if (alpha >= 1)
        return (double)(k + 1);
    return (1 - pow(alpha, (double)(k + 1))) / (1 - alpha);
}

rf_status rf_spec_compute(const rf_model *target, const rf_model *draft, const rf_step_opts *o,
                          const rf_step_opts *draft_o, const rf_roof *roof, const rf_generate *g,
                          int64_t k, double accept, rf_spec *out, rf_err *err)
{
    if (k < 1 || k > 64)
        return rf_err_set(err, RF_EINVAL, "spec-k (%lld) must be in [1, 64]", (long long)k);
    if (!(accept >= 0 && accept <= 1))
        return rf_err_set(err, RF_EINVAL, "accept (%g) must be in [0, 1]", accept);
    if (g->output < 2)
        return rf_err_set(err, RF_EINVAL,
                          "output (%lld): speculation needs at least 2 output tokens",
                          (long long)g->output);
    if (draft->vocab != target->vocab)
        return rf_err_set(err, RF_EINVAL,
                          "draft %s has a vocabulary of %lld tokens, the target %s %lld",
                          draft->name, (long long)draft->vocab, target->name,
                          (long long)target->vocab);
    rf_spec r = {.k = k, .accept = accept, .tokens_per_iter = rf_spec_tokens_per_iter(k, accept)};
    int64_t lo = g->prompt + 1, hi = g->prompt + g->output - 1;
    double steps = (double)(hi - lo + 1);
    rf_floor_sum f;
    rf_status s;
    rf_step_opts d = *draft_o;
    d.phase = RF_DECODE;
    d.batch = o->batch;
    d.tokens = 1;
    for (int64_t i = 0; i < k; i++) { /* the i-th draft step reads S + i */
        if ((s = rf_floor_sum_compute(draft, &d, roof, lo + i, hi + i, &f, err)))
            return s;
        r.draft_s += f.floor_s / steps;
        r.steps_computed += f.steps_computed;
    }
    rf_step_opts v = *o;
    v.phase = RF_PREFILL;
    v.tokens = k + 1;
    if ((s = rf_floor_sum_compute(target, &v, roof, lo, hi, &f, err)))
        return s;
    r.verify_s = f.floor_s / steps;
    r.steps_computed += f.steps_computed;
    r.iter_s = r.draft_s + r.verify_s;
    r.tpot_s = r.iter_s / r.tokens_per_iter;
    r.tokens_per_s = (double)o->batch * r.tokens_per_iter / r.iter_s;
    r.plain_tpot_s = g->tpot_mean_s;
    r.plain_tokens_per_s = g->decode_tokens_per_s;
    r.speedup = r.plain_tpot_s / r.tpot_s;
    /* E(alpha) rises from 1 (alpha = 0) to K + 1 (alpha = 1) */
    double need = r.iter_s / r.plain_tpot_s;
    if (need <= 1) {
        r.breaks_even = true;
        r.break_even_accept = 0;
    } else if (need <= (double)(k + 1)) {
        double l = 0, h = 1;
        for (int it = 0; it < 200 && h - l > 1e-15; it++) {
            double mid = (l + h) / 2;
            if (rf_spec_tokens_per_iter(k, mid) < need)
                l = mid;
            else
                h = mid;
        }
        r.breaks_even = true;
        r.break_even_accept = h;
    }
    *out = r;
    return RF_OK;
}
