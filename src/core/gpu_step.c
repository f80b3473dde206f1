/* gpu_step.c - a step's operators and collectives predicted on an engine's
 * kernel tables (rf_gpu.h). */
#include <string.h>

#include "roofline/rf_gpu.h"

rf_status rf_gpu_quant_of(const char *name, rf_gpu_quant *out, rf_err *err)
{
    static const struct {
        const char *name;
        rf_dtype_kind w, a;
        const char *gemm, *moe;
    } q[] = {
        {"fp8", RF_FP8_E4M3, RF_FP8_E4M3, "fp8", "fp8"},
        {"fp8_block", RF_FP8_E4M3, RF_FP8_E4M3, "fp8_block", "fp8_block"},
        {"nvfp4", RF_NVFP4, RF_NVFP4, "nvfp4", "nvfp4"},
        {"mxfp4", RF_MXFP4, RF_BF16, "w4a16_mxfp4", "w4a16_mxfp4"},
        {"int4_wo", RF_INT4, RF_BF16, "int4_wo", "int4_wo"},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        if (!strcmp(name, q[i].name)) {
            *out = (rf_gpu_quant){.name = q[i].name,
                                  .w = rf_dtype_of(q[i].w),
                                  .a = rf_dtype_of(q[i].a),
                                  .gemm_dtype = q[i].gemm,
                                  .moe_dtype = q[i].moe};
            return RF_OK;
        }
    return rf_err_set(err, RF_EINVAL,
                      "--quant: unknown quantization '%s' (fp8, fp8_block, nvfp4, mxfp4, "
                      "int4_wo)",
                      name);
}

/* The tables' name of a weight dtype: bfloat16, fp8 (the --quant's fp8
 * flavour), and the 4-bit ones' weight-only names. */
static const char *dtype_name(const rf_gpu_ctx *c, rf_dtype d, bool moe)
{
    switch (d.kind) {
    case RF_FP8_E4M3:
    case RF_FP8_E5M2:
        return c->quant ? (moe ? c->quant->moe_dtype : c->quant->gemm_dtype) : "fp8";
    case RF_MXFP4:
        return "w4a16_mxfp4";
    case RF_NVFP4:
        return "nvfp4";
    case RF_INT4:
        return "int4_wo";
    case RF_FP16:
        return "float16";
    default:
        return "bfloat16";
    }
}

const char *rf_gpu_need_name(int b)
{
    static const char *const more[] = {"p2p", "mla", "linear_attention"};
    if (b >= 0 && b < RF_GPU_KIND_COUNT)
        return rf_gpu_kind_name((rf_gpu_kind)b);
    return b >= RF_GPU_KIND_COUNT && b < RF_GPU_NEED_COUNT ? more[b - RF_GPU_KIND_COUNT] : NULL;
}

const char *rf_gpu_need_what(int b)
{
    static const char *const more[] = {
        "a pipeline stage's send; nccl_perf.csv has no point-to-point rows",
        "MLA attention of widths the MLA tables (DeepSeek-V3's) do not measure",
        "a linear-attention or state-space mixer's conv and recurrence; gdn_perf.csv not "
        "read, Mamba2 has no table"};
    if (b >= 0 && b < RF_GPU_KIND_COUNT)
        return rf_gpu_kind_file((rf_gpu_kind)b);
    return b >= RF_GPU_KIND_COUNT && b < RF_GPU_NEED_COUNT ? more[b - RF_GPU_KIND_COUNT] : NULL;
}

static double op_floor(const rf_step *st, const rf_op *op)
{
    double tf = (double)op->flops / st->roof.peak_flops_per_s;
    double tq = (double)op->bytes / st->roof.bw_bytes_per_s;
    return tf > tq ? tf : tq;
}

static double at_least1(double x) { return x < 1 ? 1 : x; }

/* An attention row: decode from generation_attention_perf at step = keys
 * - 1, prefill from context_attention_perf at isl = its queries a
 * sequence, after its prefix; an MLA row (mla: the model's widths the
 * tables') the same from generation_mla_perf and context_mla_perf, by the
 * shard's heads. */
static rf_status attention(const rf_gpu_ctx *c, const rf_op *op, bool mla, rf_gpu_pred *p,
                           rf_err *err)
{
    const rf_model *m = c->shard;
    const char *kv =
        c->opts->kv.kind == RF_FP8_E4M3 || c->opts->kv.kind == RF_FP8_E5M2 ? "fp8" : "bfloat16";
    const char *cat[8] = {"bfloat16", kv, "0"};
    double q[8] = {0, 0, 0, (double)op->k, (double)m->n_q, (double)m->n_kv};
    size_t at = 6; /* the batch's key; the length's after it */
    if (mla)
        q[2] = (double)m->n_q, at = 3;
    if (op->kind == RF_OP_ATTN_DECODE) {
        q[at] = at_least1((double)op->m);
        q[at + 1] = at_least1((double)op->n - 1);
        return rf_gpu_predict(c->g, mla ? RF_GPU_MLA_GENERATION : RF_GPU_ATTN_GENERATION, q, cat, p,
                              err);
    }
    int64_t b = c->opts->phase == RF_PREFILL && c->opts->batch > 0 && op->m % c->opts->batch == 0
                    ? c->opts->batch
                    : 1;
    int64_t isl = op->m / b;
    q[at] = (double)b;
    q[at + 1] = at_least1((double)isl);
    double prefix = op->n > isl ? (double)(op->n - isl) : 0;
    return rf_gpu_predict_at(c->g, mla ? RF_GPU_MLA_CONTEXT : RF_GPU_ATTN_CONTEXT, q, cat, prefix,
                             p, err);
}

/* One fused MoE layer at the routed rows' tokens (rf_op.m counts
 * token-expert pairs a device runs: M = T k / E under EP E, T k with the
 * experts split by TP). */
static rf_status moe(const rf_gpu_ctx *c, const rf_op *op, rf_gpu_pred *p, rf_err *err)
{
    const rf_model *m = c->model;
    int64_t ep = c->layout.ep > 0 ? c->layout.ep : 1;
    int64_t tp = ep > 1 ? 1 : (c->layout.tp > 0 ? c->layout.tp : 1);
    double tokens = (double)op->m * (double)ep / (double)(m->top_k > 0 ? m->top_k : 1);
    const char *cat[8] = {dtype_name(c, op->w, true)};
    double q[8] = {
        0,          (double)m->hidden, (double)m->moe_ffn, (double)m->top_k, (double)m->n_experts,
        (double)tp, (double)ep,        at_least1(tokens)};
    return rf_gpu_predict(c->g, RF_GPU_MOE, q, cat, p, err);
}

static rf_status gemm(const rf_gpu_ctx *c, const rf_op *op, rf_gpu_pred *p, rf_err *err)
{
    const char *cat[4] = {dtype_name(c, op->w, false)};
    double q[4] = {0, (double)op->n, (double)op->k, (double)op->m};
    return rf_gpu_predict(c->g, RF_GPU_GEMM, q, cat, p, err);
}

static rf_status collective(const rf_gpu_ctx *c, const rf_coll *co, rf_gpu_pred *p, rf_err *err)
{
    double elems = (double)co->bytes / 2, t = (double)co->ranks;
    if (co->kind == RF_COLL_ALLREDUCE && c->g->t[RF_GPU_ALLREDUCE].present) {
        const char *cat[3] = {"bfloat16"};
        double q[3] = {0, t, at_least1(elems)};
        return rf_gpu_predict(c->g, RF_GPU_ALLREDUCE, q, cat, p, err);
    }
    const char *op = co->kind == RF_COLL_ALLREDUCE   ? "all_reduce"
                     : co->kind == RF_COLL_ALLGATHER ? "all_gather"
                     : co->kind == RF_COLL_ALLTOALL  ? "alltoall"
                                                     : NULL;
    if (!op) { /* a point-to-point send: no table, its own floor */
        *p = (rf_gpu_pred){
            .time_s = co->time_s, .floor_s = co->time_s, .ratio = 1, .how = RF_GPU_NO_TABLE};
        return RF_OK;
    }
    const char *cat[4] = {op, "half"};
    double q[4] = {0, 0, t, at_least1(elems)};
    return rf_gpu_predict(c->g, RF_GPU_NCCL, q, cat, p, err);
}

/* Rows a..b-1 are the routed rows of one MoE layer (same count, same M). */
static size_t moe_group_end(const rf_step *st, size_t a)
{
    size_t b = a + 1;
    while (b < st->n_ops && st->ops[b].experts > 0 && st->ops[b].count == st->ops[a].count &&
           st->ops[b].m == st->ops[a].m)
        b++;
    return b;
}

/* need: the missing bit a row on its floor sets (0: none). */
static void account(rf_gpu_step_pred *out, const rf_gpu_pred *p, double n, unsigned need,
                    double *band_w)
{
    out->n_how[p->how]++;
    *band_w += n * p->time_s * p->band;
    if (p->how == RF_GPU_NO_TABLE)
        out->missing |= need;
}

/* A row on its own floor (no table of its kind). */
static rf_gpu_pred on_floor(const rf_step *st, const rf_op *op)
{
    return (rf_gpu_pred){.time_s = op_floor(st, op),
                         .floor_s = op_floor(st, op),
                         .ratio = 1,
                         .how = RF_GPU_NO_TABLE};
}

/* A linear-attention or state-space mixer's core (step.c's mixer_core). */
static bool mixer_core(const rf_op *op)
{
    return op->name && (!strncmp(op->name, "gdn_", 4) || !strncmp(op->name, "mamba_", 6));
}

rf_status rf_gpu_predict_step(const rf_gpu_ctx *c, const rf_step *st, const rf_coll *coll,
                              size_t n_coll, rf_gpu_step_pred *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    double band_w = 0;
    rf_status s = RF_OK;
    for (size_t i = 0; i < st->n_ops && !s; i++) {
        const rf_op *op = &st->ops[i];
        rf_gpu_pred *p = &out->op[i];
        unsigned need = 1u << RF_GPU_GEMM;
        if (op->experts > 0 && c->model->n_experts > 0) {
            size_t end = moe_group_end(st, i);
            rf_gpu_pred layer;
            if ((s = moe(c, op, &layer, err)))
                break;
            double sum = 0;
            for (size_t j = i; j < end; j++)
                sum += op_floor(st, &st->ops[j]);
            for (size_t j = i; j < end; j++) {
                double share = sum > 0 ? op_floor(st, &st->ops[j]) / sum : 0;
                out->op[j] = layer;
                out->op[j].time_s = layer.time_s * share;
                out->op[j].floor_s = layer.floor_s * share;
                account(out, &out->op[j], (double)st->ops[j].count, 1u << RF_GPU_MOE, &band_w);
                out->ops_s += (double)st->ops[j].count * out->op[j].time_s;
            }
            i = end - 1;
            continue;
        }
        if (mixer_core(op)) {
            need = RF_GPU_NEED_LINEAR;
            *p = on_floor(st, op);
        } else if (op->kind == RF_OP_GEMM) {
            s = gemm(c, op, p, err);
        } else if ((op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL) &&
                   c->model->kv_lora_rank > 0 && rf_gpu_mla_shape(c->model)) {
            need =
                1u << (op->kind == RF_OP_ATTN_DECODE ? RF_GPU_MLA_GENERATION : RF_GPU_MLA_CONTEXT);
            s = attention(c, op, true, p, err);
        } else if ((op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL) &&
                   c->model->kv_lora_rank > 0) {
            need = RF_GPU_NEED_MLA;
            *p = on_floor(st, op);
        } else if (op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL) {
            need = 1u << (op->kind == RF_OP_ATTN_DECODE ? RF_GPU_ATTN_GENERATION
                                                        : RF_GPU_ATTN_CONTEXT);
            s = attention(c, op, false, p, err);
        } else { /* element-wise rows and the gather: no aiconfigurator table */
            need = 0;
            *p = on_floor(st, op);
        }
        if (s)
            break;
        account(out, p, (double)op->count, need, &band_w);
        out->ops_s += (double)op->count * p->time_s;
    }
    for (size_t j = 0; j < n_coll && j < RF_PAR_MAX_COLL && !s; j++) {
        rf_gpu_pred *p = &out->coll[j];
        if ((s = collective(c, &coll[j], p, err)))
            break;
        unsigned need = coll[j].kind == RF_COLL_P2P ? RF_GPU_NEED_P2P
                        : coll[j].kind == RF_COLL_ALLREDUCE && c->g->t[RF_GPU_ALLREDUCE].present
                            ? 1u << RF_GPU_ALLREDUCE
                            : 1u << RF_GPU_NCCL;
        account(out, p, (double)coll[j].count, need, &band_w);
        out->coll_s += (double)coll[j].count * p->time_s;
        out->n_coll = j + 1;
    }
    out->time_s = out->ops_s + out->coll_s;
    out->band = out->time_s > 0 ? band_w / out->time_s : 0;
    return s;
}

rf_status rf_gpu_predict_par(const rf_gpu_tables *g, const rf_gpu_quant *quant, const rf_model *m,
                             const rf_step_opts *o, const rf_par *par, rf_gpu_par_work *work,
                             rf_gpu_par_pred *out, rf_err *err)
{
    rf_gpu_step_pred *scratch = &work->pred;
    memset(out, 0, sizeof *out);
    rf_step_opts so = *o; /* a stage runs a micro-batch */
    so.batch = par->micro_batch;
    double band_w = 0, busy = 0;
    for (size_t i = 0; i < par->n_stages; i++) {
        const rf_par_stage *ps = &par->stages[i];
        rf_step *k = &work->step;
        *k = ps->step;
        k->n_ops = 0;
        for (size_t j = 0; j < ps->step.n_ops; j++)
            if (rf_par_stage_holds(par, i, &ps->step.ops[j]))
                k->ops[k->n_ops++] = ps->step.ops[j];
        rf_gpu_ctx c = {.g = g,
                        .shard = &ps->shard,
                        .model = m,
                        .layout = par->layout,
                        .opts = &so,
                        .quant = quant};
        rf_status s = rf_gpu_predict_step(&c, k, ps->coll, ps->n_coll, scratch, err);
        if (s)
            return s;
        double send = 0;
        for (size_t j = 0; j < scratch->n_coll; j++)
            if (ps->coll[j].kind == RF_COLL_P2P)
                send += (double)ps->coll[j].count * scratch->coll[j].time_s;
        out->stage_s[i] = scratch->time_s - send;
        out->send_s += send;
        band_w += scratch->time_s * scratch->band;
        for (int h = 0; h < 4; h++)
            out->n_how[h] += scratch->n_how[h];
        out->missing |= scratch->missing;
        out->token_latency_s += scratch->time_s;
        if (out->stage_s[i] > out->stage_s[out->slowest])
            out->slowest = i;
    }
    busy = (double)par->micro_batches * out->stage_s[out->slowest];
    out->cycle_s = out->token_latency_s > busy ? out->token_latency_s : busy;
    out->band = out->token_latency_s > 0 ? band_w / out->token_latency_s : 0;
    out->tokens_per_s = (double)par->layout.dp * (double)o->batch *
                        (double)(o->phase == RF_PREFILL ? o->tokens : 1) / out->cycle_s;
    out->tokens_per_s_device = out->tokens_per_s / (double)par->devices;
    return RF_OK;
}

/* < 0 when row a (prediction x) ranks before b (y) under obj. */
static int rank_pred(const rf_plan_row *a, const rf_gpu_par_pred *x, const rf_plan_row *b,
                     const rf_gpu_par_pred *y, rf_objective obj)
{
    double u = 0, v = 0;
    switch (obj) {
    case RF_OBJ_COST:
        if (a->devices != b->devices)
            return a->devices < b->devices ? -1 : 1;
        u = -x->tokens_per_s_device, v = -y->tokens_per_s_device;
        break;
    case RF_OBJ_LATENCY:
        u = x->token_latency_s, v = y->token_latency_s;
        break;
    case RF_OBJ_THROUGHPUT:
        u = -x->tokens_per_s, v = -y->tokens_per_s;
        break;
    }
    if (u != v)
        return u < v ? -1 : 1;
    return a->devices < b->devices ? -1 : a->devices > b->devices;
}

rf_status rf_gpu_predict_plan(const rf_gpu_tables *g, const rf_gpu_quant *quant, const rf_model *m,
                              const rf_step_opts *o, const rf_roof *roof, const rf_par_opts *po,
                              rf_objective obj, rf_plan *plan, rf_gpu_par_pred *preds,
                              rf_gpu_par_work *work, rf_err *err)
{
    for (size_t i = 0; i < plan->n_rows; i++) {
        rf_par_opts p = *po;
        p.layout = plan->rows[i].layout;
        rf_step_opts so = *o;
        so.batch = (o->batch + p.layout.dp - 1) / p.layout.dp;
        rf_status s = rf_par_compute(m, &so, roof, &p, &plan->scratch, err);
        if (s || (s = rf_gpu_predict_par(g, quant, m, &so, &plan->scratch, work, &preds[i], err)))
            return s;
    }
    for (size_t i = 1; i < plan->n_rows; i++) /* insertion sort: stable, few */
        for (size_t j = i; j > 0 && rank_pred(&plan->rows[j], &preds[j], &plan->rows[j - 1],
                                              &preds[j - 1], obj) < 0;
             j--) {
            rf_plan_row t = plan->rows[j];
            rf_gpu_par_pred q = preds[j];
            plan->rows[j] = plan->rows[j - 1], preds[j] = preds[j - 1];
            plan->rows[j - 1] = t, preds[j - 1] = q;
        }
    return RF_OK;
}
