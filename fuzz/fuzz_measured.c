/* fuzz_measured.c - libFuzzer harness for the measured-results reader,
 * rf_measured_parse (rf_measured_io.h), the text behind `--measured FILE`,
 * and for the figure drawn from what it accepts.
 *
 * Besides "no crash, no sanitizer report": a refusal carries one line
 * naming the input; an accepted file holds only figures within the readers'
 * ranges (io_json.h) and NUL-terminated names; and Figure 1 of a small
 * model's decode step with the file's roofs and operators overlaid fits (rf_plot_fit, in
 * bounded time: libFuzzer's -timeout catches a hang) and is written as an
 * SVG holding no "nan" or "inf": every coordinate finite.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "roofline/rf_measured_io.h"
#include "roofline/rf_plot.h"
#include "roofline/rf_report.h"
#include "roofline/rf_step.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* large: kept off the stack */
static rf_measured m;
static rf_plot fig;
static rf_step dec_st, pre_st;
static rf_model model;
static rf_hw hw;
static rf_roof roof;
static rf_step_opts dec, pre;

/* "nan" or "inf" as a word (not inside a longer one), any case. */
static bool nonfinite_word(const char *s, size_t len)
{
    for (size_t i = 0; i + 3 <= len; i++) {
        bool start = i == 0 || !isalpha((unsigned char)s[i - 1]);
        bool end = i + 3 == len || !isalpha((unsigned char)s[i + 3]);
        if (start && end && (!strncasecmp(s + i, "nan", 3) || !strncasecmp(s + i, "inf", 3)))
            return true;
    }
    return false;
}

/* A name the file gave that would itself read as "nan"/"inf" in the SVG
 * is replaced, so the check below finds only numbers. */
static void scrub(char *name, size_t cap)
{
    if (nonfinite_word(name, strnlen(name, cap)))
        snprintf(name, cap, "op");
}

/* The figure's prediction, computed once: Qwen2.5-3B (a preset) on an
 * RTX 4090's bf16 roof, decode B 1 at context 2048, prefill 256 tokens. */
static void predict_once(void)
{
    static bool done;
    if (done)
        return;
    rf_err e;
    CHECK(rf_model_preset("qwen2.5-3b-instruct", &model, &e) == RF_OK);
    CHECK(rf_hw_preset("rtx4090", &hw, &e) == RF_OK);
    CHECK(rf_hw_roof(&hw, RF_BF16, &roof, &e) == RF_OK);
    dec = pre = rf_step_opts_for_model(&model);
    dec.phase = RF_DECODE, dec.batch = 1, dec.context = 2048;
    pre.phase = RF_PREFILL, pre.batch = 1, pre.tokens = 256, pre.context = 0;
    CHECK(rf_step_compute(&model, &dec, &roof, &dec_st, &e) == RF_OK);
    CHECK(rf_step_compute(&model, &pre, &roof, &pre_st, &e) == RF_OK);
    done = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    rf_err e;
    rf_status s = rf_measured_parse((const char *)data, size, "m.json", &m, &e);
    if (s) {
        CHECK(e.status == s && !strncmp(e.msg, "m.json", 6) && !strchr(e.msg, '\n'));
        return 0;
    }
    /* what was accepted is within the documented ranges */
    CHECK(memchr(m.name, '\0', sizeof m.name) != NULL);
    CHECK(m.n_ops <= RF_MEASURED_MAX_OPS);
    CHECK(m.bw_bytes_per_s == 0 || (m.bw_bytes_per_s >= 1e3 && m.bw_bytes_per_s <= 1e16));
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        CHECK(m.peak_flops_per_s[k] == 0 ||
              (m.peak_flops_per_s[k] >= 1e6 && m.peak_flops_per_s[k] <= 1e19));
    for (size_t i = 0; i < m.n_ops; i++) {
        const rf_measured_op *op = &m.ops[i];
        CHECK(memchr(op->name, '\0', sizeof op->name) != NULL && op->name[0]);
        CHECK(op->flops == 0 || (op->flops >= 1 && op->flops <= 1e24));
        CHECK(op->bytes >= 1 && op->bytes <= 1e21);
        CHECK(op->measured_s >= 1e-12 && op->measured_s <= 1e6);
    }
    scrub(m.name, sizeof m.name);
    for (size_t i = 0; i < m.n_ops; i++)
        scrub(m.ops[i].name, sizeof m.ops[i].name);

    /* Figure 1 with the overlay: fitted, written, finite */
    predict_once();
    rf_plot_init(&fig, &hw, &roof);
    rf_plot_describe(&fig, model.name, hw.name, &dec, &pre);
    /* decode's operators only: the label placement is quadratic in the
     * labels, and with prefill's as well an input took 40 ms under the
     * sanitizers (26 a second: make check's smoke never got past the
     * seeds); the file's own operators are what is fuzzed */
    CHECK(rf_plot_add_step(&fig, &dec_st, RF_DECODE, &e) == RF_OK);
    if (rf_plot_add_measured(&fig, &m, &e) != RF_OK) {
        CHECK(e.status == RF_ERANGE); /* the figure is full: said so */
        return 0;
    }
    rf_plot_fit(&fig);
    rf_buf b;
    rf_buf_init(&b);
    s = rf_plot_write_svg(&fig, &b, &e);
    if (s == RF_OK) {
        CHECK(b.len > 0 && !nonfinite_word(b.data, b.len));
        CHECK(b.len < (size_t)4 << 20); /* a figure, not megabytes of ticks */
    } else {
        CHECK(e.status == s && !strchr(e.msg, '\n'));
    }
    rf_buf_free(&b);
    return 0;
}
