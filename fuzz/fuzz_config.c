/* fuzz_config.c - libFuzzer harness for the HuggingFace config.json reader,
 * rf_model_parse (rf_reader.h), and for the analytics that run on whatever
 * model it accepts.
 *
 * Besides "no crash, no sanitizer report" (UBSan covers signed overflow and
 * out-of-range float-to-integer casts): a refusal carries a message naming
 * the file; an accepted model passes rf_model_validate; parameter counts,
 * a decode step, a prefill step, crossing points and the KV capacity either
 * compute or refuse with a message, never wrap; every figure they produce
 * is finite; and the O(1) sweep agrees with the full step it stands for.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_reader.h"
#include "roofline/rf_step.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* Large structs, kept off the stack. */
static rf_model m;
static rf_step st;
static rf_sweep sw;
static rf_crossover cx;

static void refused(rf_status s, const rf_err *e)
{
    CHECK(s != RF_OK && e->status == s && e->msg[0] && !strchr(e->msg, '\n'));
}

static void finite_step(const rf_step *x)
{
    CHECK(isfinite(x->floor_s) && x->floor_s > 0);
    CHECK(isfinite(x->tokens_per_s) && x->tokens_per_s > 0);
    CHECK(isfinite(x->intensity) && isfinite(x->step_intensity));
    CHECK(isfinite(x->floor_sum_of_max_s) && isfinite(x->floor_aggregate_s));
    CHECK(isfinite(x->blended_intensity_limit) && isfinite(x->throughput_cap_tokens_per_s));
    CHECK(isfinite(x->experts_touched) && isfinite(x->tokens_per_expert));
    CHECK(x->total_bytes >= x->weight_bytes && x->total_bytes >= x->kv_bytes);
}

/* A decode step and its O(1) sweep twin must agree exactly. */
static void decode(const rf_roof *roof, int64_t batch, int64_t context)
{
    rf_err e;
    rf_step_opts o = rf_step_opts_for_model(&m);
    o.batch = batch;
    o.context = context;
    rf_status s = rf_step_compute(&m, &o, roof, &st, &e);
    if (s) {
        refused(s, &e);
        return;
    }
    finite_step(&st);
    s = rf_sweep_prepare(&sw, &m, &o, roof, &e);
    CHECK(s == RF_OK); /* the same model and options just computed */
    rf_sweep_point p;
    s = rf_sweep_eval(&sw, context, &p, &e);
    CHECK(s == RF_OK);
    CHECK(p.flops == st.flops && p.total_bytes == st.total_bytes && p.kv_bytes == st.kv_bytes);
    CHECK(isfinite(p.floor_s) && isfinite(p.tokens_per_s) && isfinite(p.intensity));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    rf_err e;
    rf_status s = rf_model_parse((const char *)data, size, "config.json", &m, &e);
    if (s) {
        refused(s, &e);
        CHECK(strstr(e.msg, "config.json") != NULL);
        return 0;
    }
    CHECK(rf_model_validate(&m, &e) == RF_OK);
    CHECK(memchr(m.name, '\0', sizeof m.name) && memchr(m.notes, '\0', sizeof m.notes));

    rf_param_counts pc;
    s = rf_model_params(&m, &pc, &e);
    if (s) {
        refused(s, &e);
        return 0;
    }
    CHECK(pc.total >= pc.embedding && pc.streamed_per_token >= pc.lm_head);

    rf_hw hw;
    rf_roof roof;
    CHECK(rf_hw_preset("h100-sxm", &hw, &e) == RF_OK);
    CHECK(rf_hw_roof(&hw, RF_BF16, &roof, &e) == RF_OK);

    decode(&roof, 1, 0);
    decode(&roof, 64, 8192);
    decode(&roof, (int64_t)1 << 20, (int64_t)1 << 30);

    rf_step_opts o = rf_step_opts_for_model(&m);
    o.phase = RF_PREFILL;
    o.tokens = 4096;
    o.naive_attn = true;
    s = rf_step_compute(&m, &o, &roof, &st, &e);
    if (s)
        refused(s, &e);
    else
        finite_step(&st);

    o = rf_step_opts_for_model(&m);
    s = rf_crossover_compute(&m, &o, &roof, &cx, &e);
    if (s) {
        refused(s, &e);
    } else {
        for (size_t i = 0; i < cx.n_ops; i++)
            CHECK(!cx.ops[i].crosses || (isfinite(cx.ops[i].m_star) && cx.ops[i].m_star > 0));
        CHECK(!cx.square_crosses || isfinite(cx.square_t_star));
        CHECK(isfinite(cx.attn_prefill_s_star));
    }

    rf_capacity cap;
    s = rf_capacity_compute(&m, &o, hw.mem_bytes, 0.92, 6ull << 30, 8192, &cap, &e);
    if (s)
        refused(s, &e);
    else
        /* a sequence takes memory: KV a token, or (a model whose layers
         * are all recurrent: qwen3_next with full_attention_interval past
         * its layers) a constant state */
        CHECK(isfinite(cap.pool_bytes) && isfinite(cap.sequences) &&
              (cap.kv_bytes_per_token > 0 || cap.state_bytes_per_seq > 0));
    return 0;
}
