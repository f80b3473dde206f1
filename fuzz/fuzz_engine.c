/* fuzz_engine.c - libFuzzer harness for the engine calibration reader
 * (engine_io.c, rf_engine_io.h) and the predictions made from what it
 * accepts.
 *
 * Besides "no crash, no sanitizer report": a refusal carries one line
 * naming the input; an accepted calibration has every step's time within
 * [1e-12, 1e6] s, finite non-negative floors, fits with k >= 1 and
 * per-layer and per-step costs >= 0, all finite; and a Qwen2.5-3B decode and prefill in
 * each fitted dtype is predicted positive, finite, and never under its
 * floor on the calibration's roofs.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_engine.h"
#include "roofline/rf_engine_io.h"
#include "roofline/rf_model.h"
#include "roofline/rf_step.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* large: kept off the stack */
static rf_engine_calib c;
static rf_step st;
static rf_model model;

static bool finite_nonneg(double v) { return isfinite(v) && v >= 0; }

static void predict(const rf_engine_fit *f)
{
    static bool have;
    rf_err e;
    if (!have) {
        CHECK(rf_model_preset("qwen2.5-3b-instruct", &model, &e) == RF_OK);
        have = true;
    }
    rf_dtype w;
    CHECK(rf_dtype_parse(f->weights, &w, &e) == RF_OK);
    rf_step_opts o = rf_engine_step_opts(&c, &model, w, f->phase, 32, 64);
    rf_roof roof = {.peak_flops_per_s = 1e12, .bw_bytes_per_s = 1e11, .ridge = 10};
    if (rf_step_compute(&model, &o, &roof, &st, &e) != RF_OK)
        return;
    rf_engine_pred p;
    if (rf_engine_predict(&c, &st, &o, (double)model.layers, (double)model.vocab, &p, &e) !=
        RF_OK) {
        CHECK(!strchr(e.msg, '\n'));
        return;
    }
    CHECK(isfinite(p.time_s) && p.time_s > 0 && p.time_s >= p.floor_s);
    CHECK(isfinite(p.lo_s) && isfinite(p.hi_s) && p.lo_s >= p.floor_s && p.hi_s >= p.time_s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    rf_err e;
    rf_status s = rf_engine_calib_parse((const char *)data, size, "e.json", &c, &e);
    if (s) {
        CHECK(e.status == s && !strncmp(e.msg, "e.json", 6) && !strchr(e.msg, '\n'));
        return 0;
    }
    CHECK(c.n_points <= RF_ENGINE_MAX_POINTS && c.n_fits <= RF_ENGINE_MAX_FITS);
    CHECK(isfinite(c.bw_bytes_per_s) && c.bw_bytes_per_s >= 1e3 && c.bw_bytes_per_s <= 1e16);
    for (size_t i = 0; i < c.n_points; i++) {
        const rf_engine_point *p = &c.pt[i];
        CHECK(p->time_s >= 1e-12 && p->time_s <= 1e6);
        CHECK(finite_nonneg(p->gemm_s) && finite_nonneg(p->attn_s) && finite_nonneg(p->other_s));
        CHECK(p->layers >= 1);
    }
    for (size_t i = 0; i < c.n_fits; i++) {
        const rf_engine_fit *f = &c.fit[i];
        CHECK(isfinite(f->k_gemm) && f->k_gemm >= 1 && isfinite(f->k_attn) && f->k_attn >= 1);
        CHECK(finite_nonneg(f->layer_s) && finite_nonneg(f->step_s));
        CHECK(finite_nonneg(f->rms_residual));
        CHECK(finite_nonneg(f->loo_median) && finite_nonneg(f->loo_worst));
        predict(f);
    }
    return 0;
}
