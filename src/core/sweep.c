/* sweep.c - decode steps over contexts at O(1) a point (see rf_step.h). */
#include <string.h>

#include "roofline/rf_step.h"

rf_status rf_sweep_prepare(rf_sweep *sw, const rf_model *m, const rf_step_opts *o,
                           const rf_roof *roof, rf_err *err)
{
    sw->model = *m;
    sw->opts = *o;
    sw->opts.phase = RF_DECODE;
    sw->roof = *roof;
    /* the step at one key and at two: an attention row's slope is their
     * difference, its value at no key the one-key row less the slope (a
     * sliding row capped at a window of 1 has slope 0, which is right) */
    rf_step two; /* ~10 KB of scratch on the stack: core allocates nothing */
    rf_step_opts o2 = sw->opts;
    o2.context = 2;
    rf_status s = rf_step_compute(m, &o2, roof, &two, err);
    if (s)
        return s;
    sw->opts.context = 1;
    rf_step *st = &sw->scratch;
    if ((s = rf_step_compute(m, &sw->opts, roof, st, err)))
        return s;
    if (two.n_ops != st->n_ops)
        return rf_err_set(err, RF_EINTERNAL, "the step's operators differ at contexts 1 and 2");
    /* a hybrid stack's rows are not all affine in min(S, window) (chunked
     * attention's keys wrap at each chunk, DSA caps at index_topk): every
     * point is then rf_step_compute's */
    sw->linear = !o->kv.group_size && !o->a.group_size && !rf_model_is_hybrid(m);
    sw->full = o->traffic == RF_TRAFFIC_FULL;
    if (!sw->linear)
        return RF_OK;
    sw->flops0 = sw->op_bytes0 = sw->weight_bytes = 0;
    sw->sum_of_max0 = 0;
    sw->n_attn = 0;
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i], *op2 = &two.ops[i];
        if (op->kind == RF_OP_ATTN_DECODE) {
            if (sw->n_attn == sizeof sw->attn / sizeof sw->attn[0])
                return rf_err_set(err, RF_EINTERNAL, "more than 8 attention rows");
            struct rf_sweep_attn *a = &sw->attn[sw->n_attn++];
            a->count = op->count;
            a->window = op->note && !strcmp(op->note, "sliding window") ? m->window : 0;
            /* both counts passed rf_step_compute's checks; op2 >= op */
            a->flops = op2->flops - op->flops;
            a->bytes = op2->bytes - op->bytes;
            a->kv_bytes = op2->kv_bytes - op->kv_bytes;
            a->extra_bytes = op2->extra_bytes - op->extra_bytes;
            a->flops0 = op->flops - a->flops;
            a->bytes0 = op->bytes - a->bytes;
            a->kv_bytes0 = op->kv_bytes - a->kv_bytes;
            a->extra_bytes0 = op->extra_bytes - a->extra_bytes;
            continue;
        }
        /* the totals of rf_step_compute already passed the overflow checks */
        sw->flops0 += op->count * op->flops;
        sw->op_bytes0 += op->count * op->bytes;
        if (op->kind == RF_OP_GEMM)
            sw->weight_bytes += op->count * op->weight_bytes;
        rf_point p = rf_roof_place(roof, (double)op->flops, (double)op->bytes);
        sw->sum_of_max0 += (double)op->count * p.floor_s;
    }
    return RF_OK;
}

static rf_status slow(rf_sweep *sw, int64_t context, rf_sweep_point *p, rf_err *err)
{
    rf_step_opts o = sw->opts;
    o.context = context;
    rf_status s = rf_step_compute(&sw->model, &o, &sw->roof, &sw->scratch, err);
    if (s)
        return s;
    const rf_step *st = &sw->scratch;
    *p = (rf_sweep_point){.batch = o.batch,
                          .context = context,
                          .flops = st->flops,
                          .total_bytes = st->total_bytes,
                          .kv_bytes = st->kv_bytes,
                          .intensity = st->intensity,
                          .floor_s = st->floor_s,
                          .floor_sum_of_max_s = st->floor_sum_of_max_s,
                          .tokens_per_s = st->tokens_per_s,
                          .regime = st->regime};
    return RF_OK;
}

/* rf_mul_u64 and rf_add_u64 inlined: a point is a few dozen of them */
static inline bool mul(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

static inline bool add(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* *sum += n x + x0, checked */
static inline bool affine(uint64_t *sum, uint64_t n, uint64_t x, uint64_t x0)
{
    uint64_t v;
    return mul(n, x, &v) && add(*sum, v, sum) && add(*sum, x0, sum);
}

rf_status rf_sweep_eval(rf_sweep *sw, int64_t context, rf_sweep_point *p, rf_err *err)
{
    if (context < 0 || context > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "context (%lld) must be in [0, %lld]", (long long)context,
                          (long long)RF_DIM_MAX);
    if (!sw->linear)
        return slow(sw, context, p, err);
    uint64_t flops = sw->flops0, op_bytes = sw->op_bytes0, kv = 0, extra = 0;
    double som = sw->sum_of_max0;
    for (size_t i = 0; i < sw->n_attn && context > 0; i++) {
        const struct rf_sweep_attn *a = &sw->attn[i];
        uint64_t keys = (uint64_t)context, n, c = a->count, f = 0, b = 0, k = 0, x = 0;
        if (a->window && keys > (uint64_t)a->window)
            keys = (uint64_t)a->window;
        /* per layer f = keys at + at0, then count of them */
        if (!affine(&f, keys, a->flops, a->flops0) || !affine(&b, keys, a->bytes, a->bytes0) ||
            !affine(&k, keys, a->kv_bytes, a->kv_bytes0) ||
            !affine(&x, keys, a->extra_bytes, a->extra_bytes0) || !mul(c, f, &n) ||
            !add(flops, n, &flops) || !mul(c, b, &n) || !add(op_bytes, n, &op_bytes) ||
            !mul(c, k, &n) || !add(kv, n, &kv) || !mul(c, x, &n) || !add(extra, n, &extra))
            return rf_err_set(err, RF_ERANGE, "context %lld: step totals overflow 64 bits",
                              (long long)context);
        rf_point pt = rf_roof_place(&sw->roof, (double)f, (double)b);
        som += (double)c * pt.floor_s;
    }
    uint64_t total = op_bytes; /* full: every operator's bytes */
    if (!sw->full && (!add(sw->weight_bytes, kv, &total) || !add(total, extra, &total)))
        return rf_err_set(err, RF_ERANGE, "context %lld: step bytes overflow 64 bits",
                          (long long)context);
    rf_point whole = rf_roof_place(&sw->roof, (double)flops, (double)total);
    p->batch = sw->opts.batch;
    p->context = context;
    p->flops = flops;
    p->total_bytes = total;
    p->kv_bytes = kv;
    p->intensity = op_bytes ? (double)flops / (double)op_bytes : 0;
    p->floor_s = whole.floor_s;
    p->floor_sum_of_max_s = som;
    p->tokens_per_s = (double)sw->opts.batch / whole.floor_s;
    p->regime = whole.regime;
    return RF_OK;
}
void rf_roof_compose(const rf_roof *roof, const double *flops, const double *bytes, size_t n,
                     double *sum_of_max_s, double *aggregate_s)
{
    double som = 0, f = 0, q = 0;
    for (size_t i = 0; i < n; i++) {
        rf_point p = rf_roof_place(roof, flops[i], bytes[i]);
        som += p.floor_s;
        f += flops[i];
        q += bytes[i];
    }
    *sum_of_max_s = som;
    *aggregate_s = rf_roof_place(roof, f, q).floor_s;
}
