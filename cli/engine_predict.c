/* engine_predict.c - a step predicted on an engine's calibration
 * (engine_predict.h). */
#include "engine_predict.h"
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_engine.h"
#include "roofline/rf_engine_io.h"
#include "roofline/rf_view.h"

static const char *engine_title(const char *engine)
{
    return !strcmp(engine, "llamacpp") ? "llama.cpp" : engine;
}

static void terms(rf_report *r, const rf_engine_pred *p)
{
    const rf_engine_fit *f = p->fit;
    rf_report_table(r, "predicted_terms", "the prediction's terms");
    rf_report_col(r, "term", "term", RF_U_NONE);
    rf_report_col(r, "floor_s", "floor", RF_U_SECONDS);
    rf_report_col(r, "factor", "x", RF_U_SIG3);
    rf_report_col(r, "predicted_s", "predicted", RF_U_SECONDS);
    const struct {
        const char *name;
        double floor, k, pred;
    } row[] = {{"GEMMs", p->gemm_s / f->k_gemm, f->k_gemm, p->gemm_s},
               {"attention", p->attn_s / f->k_attn, f->k_attn, p->attn_s},
               {"other operators", p->other_s, 1.0, p->other_s}};
    for (size_t i = 0; i < sizeof row / sizeof row[0]; i++) {
        rf_report_row(r);
        rf_report_cell_str(r, row[i].name);
        rf_report_cell_num(r, row[i].floor);
        rf_report_cell_num(r, row[i].k);
        rf_report_cell_num(r, row[i].pred);
    }
    const struct {
        const char *name;
        double s;
    } fixed[] = {{"per-layer cost", p->layers_s},
                 {"per-logit cost", p->vocab_s},
                 {"per-step cost", p->step_s}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        rf_report_row(r);
        rf_report_cell_str(r, fixed[i].name);
        rf_report_cell_null(r, "-");
        rf_report_cell_null(r, "-");
        rf_report_cell_num(r, fixed[i].s);
    }
}

/* The calibration at path, of engine backend, heap-held (~40 KB). */
static int load(const cli_ctx *ctx, const char *backend, const char *path, rf_engine_calib **out)
{
    *out = NULL;
    if (!path)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--backend %s --predict needs --calibration FILE "
                        "(an engine calibration: docs/llamacpp.md)",
                        backend);
    rf_engine_calib *c = malloc(sizeof *c);
    if (!c)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    rf_err e;
    int rc = RF_EXIT_OK;
    if (rf_engine_calib_load(path, c, &e))
        rc = cli_fail_err(ctx, &e);
    else if (strcmp(c->engine, backend))
        rc = cli_fail(ctx, RF_EXIT_USAGE, "--calibration %s: a calibration of %s, not of %s", path,
                      c->engine, backend);
    if (rc)
        free(c);
    else
        *out = c;
    return rc;
}

/* The provenance of a fit: the calibration, its data, its model. */
static void assume_fit(rf_report *r, const rf_engine_calib *c, const char *path,
                       const rf_engine_fit *f, const rf_model *m)
{
    rf_report_assume(r,
                     "predicted: %s calibration %s (%s, %s): %s %s fitted on %zu timed "
                     "steps, leave-one-out error median %.1f%%, worst %.1f%% (the band)",
                     engine_title(c->engine), path, c->detail, c->date, f->weights,
                     f->phase == RF_PREFILL ? "prefill" : "decode", f->n_points,
                     100.0 * f->loo_median, 100.0 * f->loo_worst);
    rf_report_assume(r,
                     "predicted: t = %.3g x GEMM floor + %.3g x attention floor + other "
                     "floors + %.3g us x %lld layers + %.3g ns x %lld logits + %.3g us a "
                     "step, the floors on the calibration's roofs (%s), not --hw's",
                     f->k_gemm, f->k_attn, f->layer_s * 1e6, (long long)m->layers, f->vocab_s * 1e9,
                     (long long)m->vocab, f->step_s * 1e6, c->roofs_from);
}

static void assume_dtypes(rf_report *r, const rf_engine_calib *c, const rf_step_opts *o)
{
    if (o->a.kind != c->act.kind || o->kv.kind != c->kv.kind)
        rf_report_assume(r,
                         "predicted: the calibration timed activations %s and KV %s; this "
                         "step has %s and %s",
                         rf_dtype_name(c->act.kind), rf_dtype_name(c->kv.kind),
                         rf_dtype_name(o->a.kind), rf_dtype_name(o->kv.kind));
}

int cli_engine_step(const cli_ctx *ctx, rf_report *r, const char *backend, const char *path,
                    const rf_model *m, const rf_step_opts *o, const rf_step *st)
{
    rf_engine_calib *c;
    rf_engine_pred p;
    rf_err e;
    int rc = load(ctx, backend, path, &c);
    if (rc)
        return rc;
    if (rf_engine_predict(c, st, o, (double)m->layers, (double)m->vocab, &p, &e)) {
        free(c);
        return cli_fail(ctx, RF_EXIT_USAGE, "--calibration %s: %s", path, e.msg);
    }
    assume_fit(r, c, path, p.fit, m);
    assume_dtypes(r, c, o);
    terms(r, &p);
    char label[96];
    snprintf(label, sizeof label,
             "PREDICTED (%s's kernels, from its calibration; the floors "
             "above are bounds)",
             engine_title(c->engine));
    rf_report_section(r, "predicted", label);
    rf_report_str(r, "engine", "engine", c->engine);
    rf_report_num(r, "predicted_s", "predicted step", p.time_s, RF_U_SECONDS);
    rf_report_num(r, "predicted_lo_s", "  band low (left-out error)", p.lo_s, RF_U_SECONDS);
    rf_report_num(r, "predicted_hi_s", "  band high", p.hi_s, RF_U_SECONDS);
    rf_report_num(r, "calibration_floor_s", "floor on the calibration's roofs", p.floor_s,
                  RF_U_SECONDS);
    double tokens = o->phase == RF_PREFILL ? (double)(o->batch * o->tokens) : (double)o->batch;
    rf_report_num(r, "predicted_tokens_per_s", "predicted tokens/s", tokens / p.time_s,
                  RF_U_TOK_RATE);
    free(c);
    return RF_EXIT_OK;
}

int cli_engine_generate(const cli_ctx *ctx, rf_report *r, const char *backend, const char *path,
                        const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                        int64_t prompt, int64_t output)
{
    rf_engine_calib *c;
    rf_err e;
    int rc = load(ctx, backend, path, &c);
    if (rc)
        return rc;
    rf_step *st = malloc(sizeof *st);
    rf_engine_gen g;
    if (!st)
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    else if (rf_engine_predict_generate(c, m, o, roof, prompt, output, st, &g, &e))
        rc = cli_fail(ctx, RF_EXIT_USAGE, "--calibration %s: %s", path, e.msg);
    free(st);
    if (rc) {
        free(c);
        return rc;
    }
    assume_fit(r, c, path, g.prefill_fit, m);
    if (g.decode_fit)
        assume_fit(r, c, path, g.decode_fit, m);
    assume_dtypes(r, c, o);
    rf_report_assume(r,
                     "predicted decode: the decode step predicted at every context "
                     "%lld..%lld and summed",
                     (long long)(prompt + 1), (long long)(prompt + output - 1));
    char label[96];
    snprintf(label, sizeof label,
             "PREDICTED (%s's kernels, from its calibration; the floors "
             "above are bounds)",
             engine_title(c->engine));
    rf_report_section(r, "predicted", label);
    rf_report_str(r, "engine", "engine", c->engine);
    rf_view_pred_gen_times(r, &g.g);
    rf_view_pred_gen_bands(r, &g.g);
    free(c);
    return RF_EXIT_OK;
}
