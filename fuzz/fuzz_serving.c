/* fuzz_serving.c - libFuzzer harness for the GPU presets' serving files
 * beside the kernel tables: the measured error (serving_error.c,
 * rf_gpu_serving_error_parse) and the closed loop's TTFT factor
 * (closed_loop_io.c, rf_closed_loop_parse), both read from the same input.
 *
 * The first byte picks the engine (vllm, trtllm or sglang), whether the
 * lengths are varied, and the concurrency whose bucket is asked for; the
 * rest is the file. Besides "no crash, no sanitizer report": a refusal
 * carries one line naming the input; an accepted error file has its runs
 * in [1, 10^6], every error within [0, 100] and no p90 under its median;
 * an accepted factor has 1 to RF_CLOSED_LOOP_MAX_POINTS points, the
 * concurrencies increasing within [1, 10^6], the factors within [10^-3, 10^6],
 * c_min <= c_max; its factor at every point is that point's, and at a
 * concurrency below, between and past the points it is finite and within
 * the points' least and greatest; a TTFT it predicts (rf_closed_loop_apply)
 * is finite and positive.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_closed_loop.h"
#include "roofline/rf_gpu_io.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static bool refusal(rf_status s, const rf_err *e)
{
    return e->status == s && !strncmp(e->msg, "s.json", 6) && !strchr(e->msg, '\n');
}

static bool fraction(double v) { return v >= 0 && v <= 100; }

static void factor_at(const rf_closed_loop *l, double c, double lo, double hi)
{
    bool x;
    double f = rf_closed_loop_factor(l, c, &x);
    CHECK(isfinite(f) && f >= lo * (1 - 1e-12) && f <= hi * (1 + 1e-12));
    rf_closed_loop_ttft t = rf_closed_loop_apply(l, c, 0.05, 0.2, 0.4);
    CHECK(isfinite(t.mean_s) && t.mean_s > 0 && isfinite(t.p90_s) && t.p90_s > 0);
    CHECK(t.applied == !x);
}

static void closed_loop(const rf_closed_loop *l)
{
    CHECK(l->n >= 1 && l->n <= RF_CLOSED_LOOP_MAX_POINTS);
    CHECK(l->runs >= 1 && l->runs <= 1000000 && l->c_min >= 1 && l->c_min <= l->c_max);
    CHECK(fraction(l->in_sample_median) && fraction(l->held_out_median) &&
          fraction(l->held_out_p90) && l->held_out_p90 >= l->held_out_median);
    CHECK(memchr(l->source, '\0', sizeof l->source));
    double lo = l->f[0], hi = l->f[0];
    for (int i = 0; i < l->n; i++) {
        CHECK(l->c[i] >= 1 && l->c[i] <= 1e6 && l->f[i] >= 1e-3 && l->f[i] <= 1e6);
        CHECK(i == 0 || l->c[i] > l->c[i - 1]);
        lo = l->f[i] < lo ? l->f[i] : lo;
        hi = l->f[i] > hi ? l->f[i] : hi;
    }
    for (int i = 0; i < l->n; i++) {
        CHECK(rf_closed_loop_factor(l, l->c[i], NULL) == l->f[i]);
        factor_at(l, l->c[i], lo, hi);
        if (i + 1 < l->n)
            factor_at(l, (l->c[i] + l->c[i + 1]) / 2, lo, hi);
    }
    factor_at(l, l->c[0] / 2, lo, hi);
    factor_at(l, l->c[l->n - 1] * 2, lo, hi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const engines[] = {"vllm", "trtllm", "sglang"};
    if (size < 1 || size > 1 << 16)
        return 0;
    const char *engine = engines[data[0] % 3];
    bool varied = data[0] & 4;
    int64_t c = data[0] >> 3; /* 0 (every run) .. 31 */
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    rf_err e;
    bool found;
    rf_gpu_serving_error m;
    rf_status s = rf_gpu_serving_error_parse(text, len, "s.json", engine, c, &m, &found, &e);
    if (s)
        CHECK(refusal(s, &e) && !found);
    else if (found) {
        CHECK(m.runs >= 1 && m.runs <= 1000000);
        CHECK(fraction(m.ttft_median) && fraction(m.ttft_p90) && m.ttft_p90 >= m.ttft_median);
        CHECK(fraction(m.tpot_median) && fraction(m.tpot_p90) && m.tpot_p90 >= m.tpot_median);
        CHECK((m.c_min == 0 && m.c_max == 0) || (m.c_min <= c && c <= m.c_max));
        CHECK(memchr(m.source, '\0', sizeof m.source));
    }
    rf_closed_loop l;
    s = rf_closed_loop_parse(text, len, "s.json", engine, varied, &l, &found, &e);
    if (s)
        CHECK(refusal(s, &e) && !found);
    else if (found)
        closed_loop(&l);
    return 0;
}
