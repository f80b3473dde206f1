/* predict.c - operators and steps predicted on a calibration (rf_calib.h),
 * and whole requests summed from them (rf_predict.h). */
#include <string.h>

#include "roofline/rf_calib.h"
#include "roofline/rf_predict.h"
#include "serve_internal.h"
#include "step_internal.h"

bool rf_calib_shape_of(const rf_op *op, rf_calib_kind *k, int64_t *x, int64_t *a, int64_t *b)
{
    *a = *b = 0;
    switch (op->kind) {
    case RF_OP_GEMM:
        *k = RF_CALIB_GEMM, *x = op->m, *a = op->k, *b = op->n;
        return true;
    case RF_OP_ATTN_DECODE:
    case RF_OP_ATTN_PREFILL:
        *k = op->kind == RF_OP_ATTN_DECODE ? RF_CALIB_ATTN_DECODE : RF_CALIB_ATTN_PREFILL;
        *x = op->n, *a = op->k;
        return true;
    case RF_OP_GATHER:
        *k = RF_CALIB_COPY, *x = (int64_t)op->bytes;
        return true;
    case RF_OP_ELEMENTWISE:
        break;
    }
    *x = op->m * op->n;
    if (!strcmp(op->name, "kv_write"))
        *k = RF_CALIB_COPY, *x = (int64_t)op->bytes;
    else if (strstr(op->name, "norm"))
        *k = RF_CALIB_NORM;
    else if (strstr(op->name, "rope"))
        *k = RF_CALIB_ROPE;
    else if (strstr(op->name, "residual"))
        *k = RF_CALIB_RESIDUAL;
    else if (!strcmp(op->name, "act"))
        *k = RF_CALIB_ACT;
    else
        return false;
    return true;
}

/* The hybrid stacks' attention-kind rows (rf_step.h): Gated DeltaNet's
 * delta rule, Mamba2's SSD scan, their short convolutions, DSA's indexer
 * and chunked attention. A calibration times softmax attention, not these
 * kernels: their rows are predicted on their floor, never at attention's
 * efficiency. */
static bool uncalibrated(const rf_op *op)
{
    static const char *const rows[] = {"gdn_delta_rule", "gdn_conv", "mamba_ssd", "mamba_conv",
                                       "indexer"};
    if (op->note && !strcmp(op->note, RF__NOTE_CHUNKED))
        return true;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(op->name, rows[i]))
            return true;
    return false;
}

rf_status rf_calib_predict_op(const rf_calib *c, const rf_op *op, rf_calib_pred *out, rf_err *err)
{
    rf_calib_kind k;
    int64_t x, a, b;
    if (uncalibrated(op)) {
        /* on the calibration's roof at efficiency 1, no overhead; marked
         * as outside the calibration */
        double floor_s = rf_calib_floor_s(c, (double)op->flops, (double)op->bytes);
        *out = (rf_calib_pred){
            .time_s = floor_s, .floor_s = floor_s, .eff = 1, .lo_s = floor_s, .hi_s = floor_s};
        return RF_OK;
    }
    if (!rf_calib_shape_of(op, &k, &x, &a, &b)) {
        memset(out, 0, sizeof *out);
        return rf_err_set(err, RF_EINVAL, "%s: no calibrated kind predicts this operator",
                          op->name);
    }
    return rf_calib_predict(c, k, x, a, b, (double)op->flops, (double)op->bytes, out, err);
}

rf_status rf_calib_predict_step(const rf_calib *c, const rf_step *st, double new_tokens,
                                rf_step_pred *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < st->n_ops; i++) {
        rf_status s = rf_calib_predict_op(c, &st->ops[i], &out->op[i], err);
        if (s != RF_OK)
            return s;
        out->time_s += (double)st->ops[i].count * out->op[i].time_s;
        out->lo_s += (double)st->ops[i].count * out->op[i].lo_s;
        out->hi_s += (double)st->ops[i].count * out->op[i].hi_s;
        out->n_outside += !out->op[i].in_range;
    }
    out->tokens_per_s = out->time_s > 0 ? new_tokens / out->time_s : 0;
    return RF_OK;
}

/* ---- whole requests (rf_predict.h) --------------------------------------- */

/* The decode steps' contexts lo..hi, scanned piece by piece: a, b and x are
 * rf_step_compute's scratch at a piece's lo, lo + 1 and a point checked. */
typedef struct scan {
    const rf_calib *c;
    const rf_model *m;
    rf_step_opts o; /* the decode step; context set per call    */
    const rf_roof *roof;
    rf_err *err;
    rf_step a, b, x;
    int64_t first, last; /* the whole range                          */
    double sum_s, first_s, last_s;
    double lo_s, hi_s; /* the sum's band                           */
    size_t pieces;
    bool outside[RF_STEP_MAX_OPS], varying[RF_STEP_MAX_OPS];
} scan;

static rf_status step_at(scan *sc, int64_t s, rf_step *st)
{
    sc->o.context = s;
    return rf_step_compute(sc->m, &sc->o, sc->roof, st, sc->err);
}

/* Whether operator i's shape at x, t contexts past a, lies on the line
 * through a and b (a at lo, b at lo + 1); unsigned (modular) arithmetic is
 * exact for affine integers, as serve.c checks its counts. */
static bool op_affine(const rf_op *a, const rf_op *b, const rf_op *x, uint64_t t)
{
    return a->kind == b->kind && a->kind == x->kind && !strcmp(a->name, x->name) &&
           !strcmp(a->name, b->name) && a->count == b->count && a->count == x->count &&
           a->m == b->m && a->m == x->m && a->k == b->k && a->k == x->k &&
           (uint64_t)x->n == (uint64_t)a->n + t * ((uint64_t)b->n - (uint64_t)a->n) &&
           x->flops == a->flops + t * (b->flops - a->flops) &&
           x->bytes == a->bytes + t * (b->bytes - a->bytes);
}

static bool step_affine(const rf_step *a, const rf_step *b, const rf_step *x, uint64_t t)
{
    if (a->n_ops != b->n_ops || a->n_ops != x->n_ops)
        return false;
    for (size_t i = 0; i < a->n_ops; i++)
        if (!op_affine(&a->ops[i], &b->ops[i], &x->ops[i], t))
            return false;
    return true;
}

/* Whether lo..hi is one piece (sc->a at lo and sc->b at lo + 1 computed). */
static rf_status is_piece(scan *sc, int64_t lo, int64_t hi, bool *yes)
{
    *yes = true;
    int64_t check[2] = {hi, lo + (hi - lo) / 2};
    for (int i = 0; i < 2 && *yes; i++) {
        if (check[i] <= lo + 1)
            continue;
        rf_status s = step_at(sc, check[i], &sc->x);
        if (s)
            return s;
        *yes = step_affine(&sc->a, &sc->b, &sc->x, (uint64_t)(check[i] - lo));
    }
    return RF_OK;
}

/* One prediction of op into *t_s (its band into *lo_s, *hi_s), its row
 * flagged when outside. */
static rf_status predict_row(scan *sc, const rf_op *op, size_t i, double *t_s, double *lo_s,
                             double *hi_s)
{
    rf_calib_pred p;
    rf_status s = rf_calib_predict_op(sc->c, op, &p, sc->err);
    if (s)
        return s;
    *t_s = (double)op->count * p.time_s;
    *lo_s = (double)op->count * p.lo_s;
    *hi_s = (double)op->count * p.hi_s;
    sc->outside[i] |= !p.in_range;
    return RF_OK;
}

/* The piece lo..hi summed: its fixed rows once, its moving rows (shape
 * a + t (b - a)) at every context. */
static rf_status sum_piece(scan *sc, int64_t lo, int64_t hi)
{
    const rf_step *a = &sc->a, *b = &sc->b;
    bool moves[RF_STEP_MAX_OPS];
    double fixed_s = 0, fixed_lo = 0, fixed_hi = 0, t_s, lo_s, hi_s;
    rf_status s;
    for (size_t i = 0; i < a->n_ops; i++) {
        moves[i] = hi > lo && (a->ops[i].n != b->ops[i].n || a->ops[i].flops != b->ops[i].flops ||
                               a->ops[i].bytes != b->ops[i].bytes);
        sc->varying[i] |= moves[i];
        if (!moves[i]) {
            if ((s = predict_row(sc, &a->ops[i], i, &t_s, &lo_s, &hi_s)))
                return s;
            fixed_s += t_s, fixed_lo += lo_s, fixed_hi += hi_s;
        }
    }
    sc->lo_s += fixed_lo * (double)(hi - lo + 1);
    sc->hi_s += fixed_hi * (double)(hi - lo + 1);
    for (int64_t ctx = lo; ctx <= hi; ctx++) {
        uint64_t t = (uint64_t)(ctx - lo);
        double step_s = fixed_s;
        for (size_t i = 0; i < a->n_ops; i++) {
            if (!moves[i])
                continue;
            rf_op op = a->ops[i];
            op.n = (int64_t)((uint64_t)op.n + t * ((uint64_t)b->ops[i].n - (uint64_t)op.n));
            op.flops += t * (b->ops[i].flops - a->ops[i].flops);
            op.bytes += t * (b->ops[i].bytes - a->ops[i].bytes);
            if ((s = predict_row(sc, &op, i, &t_s, &lo_s, &hi_s)))
                return s;
            step_s += t_s;
            sc->lo_s += lo_s, sc->hi_s += hi_s;
        }
        sc->sum_s += step_s;
        if (ctx == sc->first)
            sc->first_s = step_s;
        if (ctx == sc->last)
            sc->last_s = step_s;
    }
    sc->pieces++;
    return RF_OK;
}

/* Every context first..last, in order: a range that is not one piece is
 * halved (an explicit stack: the steps are too large to recurse with). */
static rf_status scan_contexts(scan *sc)
{
    int64_t stack[2 * 64][2];
    size_t top = 0;
    stack[top][0] = sc->first, stack[top++][1] = sc->last;
    while (top) {
        top--;
        int64_t lo = stack[top][0], hi = stack[top][1];
        bool piece = true;
        rf_status s = step_at(sc, lo, &sc->a); /* b is read only when hi > lo */
        if (!s && hi > lo)
            s = step_at(sc, lo + 1, &sc->b);
        if (!s)
            s = is_piece(sc, lo, hi, &piece);
        if (s)
            return s;
        if (piece) {
            if ((s = sum_piece(sc, lo, hi)))
                return s;
            continue;
        }
        int64_t mid = lo + (hi - lo) / 2; /* hi - lo >= 2 here: both halves shrink */
        stack[top][0] = mid + 1, stack[top++][1] = hi;
        stack[top][0] = lo, stack[top++][1] = mid;
    }
    return RF_OK;
}

/* The prefill of `batch` sequences of `tokens` after `context` predicted,
 * added to *t_s; its rows outside added to *outside. */
static rf_status predict_prefill(const rf_calib *c, const rf_model *m, const rf_step_opts *o,
                                 const rf_roof *roof, int64_t batch, int64_t tokens,
                                 int64_t context, rf_step *st, rf_step_pred *pr,
                                 rf_generate_pred *out, rf_err *err)
{
    rf_step_opts pre = *o;
    pre.phase = RF_PREFILL;
    pre.batch = batch;
    pre.tokens = tokens;
    pre.context = context;
    rf_status s = rf_step_compute(m, &pre, roof, st, err);
    if (!s)
        s = rf_calib_predict_step(c, st, (double)batch * (double)tokens, pr, err);
    if (s)
        return s;
    out->ttft_s += pr->time_s;
    out->ttft_lo_s += pr->lo_s;
    out->ttft_hi_s += pr->hi_s;
    out->outside_prefill += pr->n_outside;
    return RF_OK;
}

/* A cascade kernel's decode is refused (rf_predict.h); the prefix checks
 * are rf_generate_prefix_compute's. */
static rf_status generate_check(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                int64_t prompt, int64_t output, const rf_prefix *px, rf_err *err)
{
    rf_generate g;
    rf_status s = rf__serve_sizes(o, prompt, output, err);
    if (s)
        return s;
    if (px->cascade)
        return rf_err_set(err, RF_EINVAL,
                          "prefix-kernel cascade is not predicted: its decode "
                          "reads the prefix once a step, a kernel the "
                          "calibration did not time");
    /* the prefix's own checks, on a one-token output (no decode to sum) */
    return px->shared ? rf_generate_prefix_compute(m, o, roof, prompt, 1, px, &g, err) : RF_OK;
}

rf_status rf_calib_predict_generate(const rf_calib *c, const rf_model *m, const rf_step_opts *o,
                                    const rf_roof *roof, int64_t prompt, int64_t output,
                                    const rf_prefix *px, rf_generate_pred *out, rf_err *err)
{
    static const rf_prefix none = {0};
    px = px ? px : &none;
    memset(out, 0, sizeof *out);
    rf_status s = generate_check(m, o, roof, prompt, output, px, err);
    if (s)
        return s;
    scan sc = {.c = c, .m = m, .o = *o, .roof = roof, .err = err};
    rf_step_pred pr; /* ~2 KB; sc holds three steps (~20 KB) */
    int64_t ps = px->shared;
    *out = (rf_generate_pred){.batch = o->batch, .prompt = prompt, .output = output};
    if (ps && (s = predict_prefill(c, m, o, roof, 1, ps, 0, &sc.a, &pr, out, err)))
        return s;
    if (ps < prompt &&
        (s = predict_prefill(c, m, o, roof, o->batch, prompt - ps, ps, &sc.a, &pr, out, err)))
        return s;
    if (output >= 2) {
        sc.o.phase = RF_DECODE;
        sc.o.tokens = 1;
        sc.first = prompt + 1, sc.last = prompt + output - 1;
        if ((s = scan_contexts(&sc)))
            return s;
        out->decode_steps = output - 1;
        out->decode_s = sc.sum_s;
        out->decode_lo_s = sc.lo_s, out->decode_hi_s = sc.hi_s;
        out->tpot_mean_s = sc.sum_s / (double)(output - 1);
        out->tpot_mean_lo_s = sc.lo_s / (double)(output - 1);
        out->tpot_mean_hi_s = sc.hi_s / (double)(output - 1);
        out->tpot_first_s = sc.first_s;
        out->tpot_last_s = sc.last_s;
        out->pieces = sc.pieces;
        for (size_t i = 0; i < RF_STEP_MAX_OPS; i++) {
            out->outside_decode += sc.outside[i];
            out->ops_varying += sc.varying[i];
        }
        out->ops_fixed = sc.a.n_ops - out->ops_varying;
    }
    out->latency_s = out->ttft_s + out->decode_s;
    out->latency_lo_s = out->ttft_lo_s + out->decode_lo_s;
    out->latency_hi_s = out->ttft_hi_s + out->decode_hi_s;
    out->tokens_per_s = (double)o->batch * (double)output / out->latency_s;
    out->n_outside = out->outside_prefill + out->outside_decode;
    return RF_OK;
}

rf_status rf_calib_predict_serve(const rf_calib *c, const rf_serve *sv, rf_serve_pred *out,
                                 rf_err *err)
{
    int64_t b = sv->opts.concurrency;
    memset(out, 0, sizeof *out);
    rf_status s =
        rf_calib_predict_step(c, &sv->step, (double)(b + sv->prompt_tokens), &out->step, err);
    if (s)
        return s;
    out->tpot_s = out->step.time_s;
    out->tpot_lo_s = out->step.lo_s, out->tpot_hi_s = out->step.hi_s;
    out->tokens_per_s = (double)b / out->tpot_s;
    out->ttft_s = (double)sv->ttft_steps * out->tpot_s;
    out->n_outside = out->step.n_outside;
    return RF_OK;
}

rf_status rf_calib_predict_frontier(const rf_calib *c, const rf_model *m, const rf_step_opts *o,
                                    const rf_roof *roof, int64_t prompt, int64_t output,
                                    rf_frontier_point *out, size_t *outside, size_t n, rf_err *err)
{
    for (size_t i = 0; i < n; i++) {
        rf_step_opts bo = *o;
        bo.batch = (int64_t)i + 1;
        rf_generate_pred g;
        rf_status s = rf_calib_predict_generate(c, m, &bo, roof, prompt, output, NULL, &g, err);
        if (s)
            return s;
        out[i] = (rf_frontier_point){.batch = bo.batch,
                                     .ttft_s = g.ttft_s,
                                     .tpot_s = g.tpot_mean_s,
                                     .latency_s = g.latency_s,
                                     .tokens_per_s = g.tokens_per_s};
        if (outside)
            outside[i] = g.n_outside;
    }
    rf__frontier_mark(out, n);
    return RF_OK;
}
