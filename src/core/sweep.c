/* sweep.c - decode steps over contexts at O(1) a point (see rf_step.h). */
#include <string.h>

#include "roofline/rf_step.h"

rf_status rf_sweep_prepare(rf_sweep *sw, const rf_model *m, const rf_step_opts *o,
                           const rf_roof *roof, rf_err *err)
{
    sw->model = *m;
    sw->opts = *o;
    sw->opts.phase = RF_DECODE;
    sw->opts.context = 1; /* one key: attention rows hold per-key figures */
    sw->roof = *roof;
    rf_step *st = &sw->scratch;
    rf_status s = rf_step_compute(m, &sw->opts, roof, st, err);
    if (s)
        return s;
    sw->linear = !o->kv.group_size && !o->a.group_size;
    sw->flops0 = sw->op_bytes0 = sw->weight_bytes = 0;
    sw->sum_of_max0 = 0;
    sw->n_attn = 0;
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        if (op->kind == RF_OP_ATTN_DECODE) {
            if (sw->n_attn == 4)
                return rf_err_set(err, RF_EINTERNAL, "more than 4 attention kinds");
            sw->attn[sw->n_attn].count = op->count;
            sw->attn[sw->n_attn].window = strcmp(op->name, RF_OP_ATTN_SWA) ? 0 : m->window;
            sw->attn[sw->n_attn].flops = op->flops;
            sw->attn[sw->n_attn].bytes = op->bytes;
            sw->attn[sw->n_attn].kv_bytes = op->kv_bytes;
            sw->attn[sw->n_attn].extra_bytes = op->extra_bytes;
            sw->n_attn++;
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
    *p = (rf_sweep_point){.batch = o.batch, .context = context, .flops = st->flops,
                          .total_bytes = st->total_bytes, .kv_bytes = st->kv_bytes,
                          .intensity = st->intensity, .floor_s = st->floor_s,
                          .floor_sum_of_max_s = st->floor_sum_of_max_s,
                          .tokens_per_s = st->tokens_per_s, .regime = st->regime};
    return RF_OK;
}

rf_status rf_sweep_eval(rf_sweep *sw, int64_t context, rf_sweep_point *p, rf_err *err)
{
    if (context < 0 || context > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "context (%lld) must be in [0, %lld]",
                          (long long)context, (long long)RF_DIM_MAX);
    if (!sw->linear)
        return slow(sw, context, p, err);
    uint64_t flops = sw->flops0, op_bytes = sw->op_bytes0, kv = 0, extra = 0;
    double som = sw->sum_of_max0;
    for (size_t i = 0; i < sw->n_attn && context > 0; i++) {
        uint64_t keys = (uint64_t)context, n, f, b, k, x;
        if (sw->attn[i].window && keys > (uint64_t)sw->attn[i].window)
            keys = (uint64_t)sw->attn[i].window;
        if (!rf_mul_u64(sw->attn[i].count, keys, &n) || !rf_mul_u64(n, sw->attn[i].flops, &f) ||
            !rf_mul_u64(n, sw->attn[i].bytes, &b) || !rf_mul_u64(n, sw->attn[i].kv_bytes, &k) ||
            !rf_mul_u64(n, sw->attn[i].extra_bytes, &x) || !rf_add_u64(flops, f, &flops) ||
            !rf_add_u64(op_bytes, b, &op_bytes) || !rf_add_u64(kv, k, &kv) ||
            !rf_add_u64(extra, x, &extra))
            return rf_err_set(err, RF_ERANGE, "context %lld: step totals overflow 64 bits",
                              (long long)context);
        double fi = (double)keys * (double)sw->attn[i].flops;
        double bi = (double)keys * (double)sw->attn[i].bytes;
        rf_point pt = rf_roof_place(&sw->roof, fi, bi);
        som += (double)sw->attn[i].count * pt.floor_s;
    }
    uint64_t total;
    if (!rf_add_u64(sw->weight_bytes, kv, &total) || !rf_add_u64(total, extra, &total))
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
