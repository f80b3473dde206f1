/* predict.c - operators and steps predicted on a calibration (rf_calib.h). */
#include <string.h>

#include "roofline/rf_calib.h"

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

rf_status rf_calib_predict_op(const rf_calib *c, const rf_op *op, rf_calib_pred *out,
                              rf_err *err)
{
    rf_calib_kind k;
    int64_t x, a, b;
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
        out->n_outside += !out->op[i].in_range;
    }
    out->tokens_per_s = out->time_s > 0 ? new_tokens / out->time_s : 0;
    return RF_OK;
}
