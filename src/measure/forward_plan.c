/* forward_plan.c - the plan: every operator's analytic figures and its
 * floor on the roof, before anything is timed (rf_forward_plan). GEMMs,
 * attention, lm_head and embed come from rf_step_compute, the element-wise
 * operators from rf_op.h. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "forward_internal.h"
#include "measure_internal.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_op.h"

/* Figures of the element-wise operators, one instance: rf_op.h's formulas
 * with every element fp32; the head's final norm runs on the B last rows. */
static rf_status elementwise(rf_fwd_op id, const rf__fwd_shape *s, rf_forward_op *op, rf_err *err)
{
    const rf_dtype f32 = rf_dtype_of(RF_FP32);
    const char *name = rf_fwd_op_name(id);
    rf_op e;
    rf_status st;
    switch (id) {
    case RF_FWD_ATTN_NORM:
    case RF_FWD_MLP_NORM:
        st = rf_op_norm(name, s->M, s->H, f32, f32, &e, err);
        break;
    case RF_FWD_FINAL_NORM:
        st = rf_op_norm(name, s->B, s->H, f32, f32, &e, err);
        break;
    case RF_FWD_ROPE:
        st = rf_op_rope(name, s->M, s->n_q + s->n_kv, s->dh, f32, &e, err);
        break;
    case RF_FWD_KV_WRITE:
        st = rf_op_kv_write(name, s->M, s->n_kv, s->dh, f32, f32, &e, err);
        break;
    case RF_FWD_ATTN_RESIDUAL:
    case RF_FWD_MLP_RESIDUAL:
        st = rf_op_residual(name, s->M, s->H, f32, &e, err);
        break;
    case RF_FWD_ACT:
        st = rf_op_act(name, s->M, s->ffn, RF_ACT_SILU_MUL_FLOPS_AS_RUN, f32, &e, err);
        break;
    default:
        return rf_err_set(err, RF_EINTERNAL, "%s is not an element-wise operator", name);
    }
    if (st)
        return st;
    op->m = e.m;
    op->k = e.k;
    op->n = e.n;
    op->flops = e.flops;
    op->bytes = e.bytes;
    return RF_OK;
}

/* The operators rf_step_compute has, by the same name. */
static bool in_rf_step(rf_fwd_op id)
{
    switch (id) {
    case RF_FWD_EMBED:
    case RF_FWD_Q_PROJ:
    case RF_FWD_K_PROJ:
    case RF_FWD_V_PROJ:
    case RF_FWD_ATTENTION:
    case RF_FWD_ATTENTION_SWA:
    case RF_FWD_O_PROJ:
    case RF_FWD_GATE_PROJ:
    case RF_FWD_UP_PROJ:
    case RF_FWD_DOWN_PROJ:
    case RF_FWD_LM_HEAD:
        return true;
    default:
        return false;
    }
}

static const rf_op *step_op(const rf_step *st, const char *name)
{
    for (size_t i = 0; i < st->n_ops; i++)
        if (!strcmp(st->ops[i].name, name))
            return &st->ops[i];
    return NULL;
}

rf_status rf_forward_plan(const rf_model *m, const rf_forward_opts *o, const rf_roof *roof,
                          rf_forward_run *run, rf_err *err)
{
    rf__fwd_shape s;
    rf_status st;
    memset(run, 0, sizeof *run);
    if ((st = rf__fwd_shape_of(m, o, &s, err)) || (st = rf__fwd_mem_of(&s, &run->mem, err)))
        return st;
    run->opts = *o;
    run->roof = *roof;
    run->model_layers = m->layers;

    rf_step_opts so = rf_step_opts_default();
    so.phase = o->phase;
    so.batch = o->batch;
    so.context = o->context;
    so.tokens = o->tokens;
    so.w = so.a = so.kv = rf_dtype_of(RF_FP32);
    rf_model part = *m;
    part.layers = o->layers;
    rf_step step; /* ~5 KB */
    if ((st = rf_step_compute(m, &so, roof, &step, err)))
        return st;
    run->model_floor_s = step.floor_s;
    run->model_floor_sum_of_max_s = step.floor_sum_of_max_s;
    if ((st = rf_step_compute(&part, &so, roof, &step, err)))
        return st;
    run->floor_s = step.floor_s;
    run->floor_sum_of_max_s = step.floor_sum_of_max_s;

    uint64_t n_layers = (uint64_t)o->layers;
    for (int id = 0; id < RF_FWD_OP_COUNT; id++) {
        rf_forward_op *op = &run->ops[run->n_ops];
        memset(op, 0, sizeof *op);
        op->id = (rf_fwd_op)id;
        op->name = rf_fwd_op_name((rf_fwd_op)id);
        const rf_op *a = step_op(&step, op->name);
        if (in_rf_step(op->id) && a) {
            op->m = a->m;
            op->k = a->k;
            op->n = a->n;
            op->count = a->count;
            op->flops = a->flops;
            op->bytes = a->bytes;
            op->in_step_floor = true;
        } else if (id == RF_FWD_ATTENTION || id == RF_FWD_ATTENTION_SWA) {
            continue; /* no layer of this kind among the N */
        } else if (in_rf_step(op->id)) {
            return rf_err_set(err, RF_EINTERNAL, "rf_step has no '%s' operator", op->name);
        } else {
            if ((st = elementwise((rf_fwd_op)id, &s, op, err)))
                return st;
            op->count = id == RF_FWD_FINAL_NORM ? 1 : n_layers;
        }
        rf_point p = rf_roof_place(roof, (double)op->flops, (double)op->bytes);
        op->intensity = p.intensity;
        op->floor_s = p.floor_s;
        op->bound = p.regime;
        run->ops_sum_of_max_s += (double)op->count * p.floor_s;
        run->n_ops++;
    }
    return RF_OK;
}
