/* fuzz_calib.c - libFuzzer harness for the calibration reader (calib_io.c,
 * a profile's "calibration" object, read by rf_hw_profile_parse) and the
 * predictions made from what it accepts.
 *
 * Besides "no crash, no sanitizer report": a refusal carries one line
 * naming the input; an accepted calibration holds only figures within the
 * readers' ranges (io_json.h: a time in [1e-12, 1e6] s, FLOPs and bytes
 * 0 or in [1, 1e24] and [1, 1e21], a point's roofs 0 or within the
 * bandwidth and peak ranges), fits that are finite, and predictions (each
 * series' own points, a point past either end of it, and every operator of
 * a small model's decode and prefill steps) that are positive and finite
 * with an efficiency in (0, inf): never the "0.00 ns", 3.9e297 tok/s or
 * null of issue 28's finding 1.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_calib.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_model.h"
#include "roofline/rf_step.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* large: kept off the stack */
static rf_hw_profile p;
static rf_step st;
static rf_step_pred sp;
static rf_model model;
static rf_roof roof;

static bool within(double v, double lo, double hi, bool zero_ok)
{
    return (zero_ok && v == 0) || (v >= lo && v <= hi);
}

/* A prediction of an accepted calibration: a time that is a time. */
static void check_pred(const rf_calib_pred *pr)
{
    CHECK(isfinite(pr->time_s) && pr->time_s > 0 && pr->time_s < 1e30);
    CHECK(isfinite(pr->floor_s) && pr->floor_s >= 0);
    CHECK(isfinite(pr->eff) && pr->eff > 0);
}

/* Qwen2.5-3B's decode (B 2, context 64) and prefill (32 tokens) steps on
 * the profile's own roof, each operator predicted. */
static void predict_steps(const rf_calib *c)
{
    static bool have;
    rf_err e;
    if (!have) {
        CHECK(rf_model_preset("qwen2.5-3b-instruct", &model, &e) == RF_OK);
        have = true;
    }
    roof = (rf_roof){.math = RF_FP32,
                     .math_asked = RF_FP32,
                     .peak_flops_per_s = c->peak_flops_per_s,
                     .bw_bytes_per_s = c->bw_bytes_per_s,
                     .ridge = c->peak_flops_per_s / c->bw_bytes_per_s};
    rf_step_opts o = rf_step_opts_for_model(&model);
    o.w = o.a = o.kv = rf_dtype_of(RF_FP32);
    o.phase = RF_DECODE, o.batch = 2, o.context = 64;
    for (int phase = 0; phase < 2; phase++) {
        if (phase)
            o.phase = RF_PREFILL, o.batch = 1, o.tokens = 32, o.context = 0;
        if (rf_step_compute(&model, &o, &roof, &st, &e) != RF_OK)
            continue; /* the roof the file gave cannot hold this step */
        if (rf_calib_predict_step(c, &st, phase ? 32.0 : 2.0, &sp, &e) != RF_OK) {
            CHECK(!strchr(e.msg, '\n'));
            continue;
        }
        CHECK(isfinite(sp.time_s) && sp.time_s > 0 && isfinite(sp.tokens_per_s));
        for (size_t i = 0; i < st.n_ops; i++)
            if (sp.op[i].time_s > 0)
                check_pred(&sp.op[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    rf_err e;
    rf_status s = rf_hw_profile_parse((const char *)data, size, "c.json", &p, &e);
    if (s) {
        CHECK(e.status == s && !strncmp(e.msg, "c.json", 6) && !strchr(e.msg, '\n'));
        return 0;
    }
    const rf_calib *c = &p.calib;
    if (!c->version)
        return 0;
    CHECK(c->n_series <= RF_CALIB_MAX_SERIES);
    CHECK(within(c->bw_bytes_per_s, 1e3, 1e16, false));
    CHECK(within(c->peak_flops_per_s, 1e6, 1e19, false));
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 2; i++)
            CHECK(within(c->round_spread[r][i], 0, 1e3, true));
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++) {
        const rf_calib_fit *f = &c->fit[k];
        CHECK(isfinite(f->overhead_s) && f->overhead_s >= 0);
        CHECK(isfinite(f->efficiency) && isfinite(f->rms_residual) && isfinite(f->loo_median));
    }
    for (size_t i = 0; i < c->n_series; i++) {
        const rf_calib_series *se = &c->series[i];
        CHECK(se->n <= RF_CALIB_MAX_POINTS);
        for (size_t j = 0; j < se->n; j++) {
            const rf_calib_point *pt = &se->pt[j];
            CHECK(within(pt->time_s, 1e-12, 1e6, false));
            CHECK(within(pt->flops, 1, 1e24, true) && within(pt->bytes, 1, 1e21, true));
            CHECK(within(pt->bw_bytes_per_s, 1e3, 1e16, true));
            CHECK(within(pt->peak_flops_per_s, 1e6, 1e19, true));
            CHECK(isfinite(pt->eff) && pt->eff > 0);
        }
        /* each point, and one past either end of the series */
        for (size_t j = 0; j < se->n; j++) {
            const rf_calib_point *pt = &se->pt[j];
            rf_calib_pred pr;
            int64_t xs[] = {pt->x, j ? pt->x : (pt->x > 1 ? pt->x / 2 : 1),
                            j + 1 == se->n && pt->x < ((int64_t)1 << 39) ? pt->x * 2 : pt->x};
            for (size_t t = 0; t < 3; t++)
                if (rf_calib_predict(c, se->kind, xs[t], se->a, se->b, pt->flops, pt->bytes, &pr,
                                     &e) == RF_OK)
                    check_pred(&pr);
                else
                    CHECK(!strchr(e.msg, '\n'));
        }
    }
    predict_steps(c);
    return 0;
}
