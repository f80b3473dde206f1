/* assume.h - the assumption lines of a report (assume.c). */
#ifndef RF_CLI_ASSUME_H
#define RF_CLI_ASSUME_H

#include "core.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "roofline/rf_model.h"
#include "roofline/rf_report.h"
#include "roofline/rf_step.h"

/* The standard assumption line: traffic model, dtypes, roof and its origin. */
void cli_assume_roof(const cli_ctx *ctx, rf_report *r, const rf_step_opts *o, const rf_roof *roof);

/* Assumption lines for a step: the model, the traffic model in force, the
 * phase, and any MoE / MLA / sliding-window convention applied. */
void cli_assume_step(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                     const rf_step *st);
/* The noun that agrees with a count: one for n == 1, else many ("1 prompt",
 * "2 prompts"). */
const char *cli_plural(int64_t n, const char *one, const char *many);
/* The phase line: "decode: B sequences at context s ...", "prefill: B
 * prompts of T new tokens, nothing cached ..." (counts and nouns agreed). */
void cli_assume_phase(rf_report *r, const rf_step_opts *o);
/* The attention line: square (the output has prefill attention, q queries
 * against S keys) says "full S x S, no causal halving" or, under --causal,
 * the triangle's count and what it leaves unchanged; decode says only that
 * --causal changes nothing there. */
void cli_assume_attn(rf_report *r, const rf_step_opts *o, bool square);
/* The MoE line of a model with routed experts (nothing otherwise), from
 * the routing in o and, when st is given, the step's experts touched and
 * rows each, with what an expert row's columns mean. */
void cli_assume_moe(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st);
/* The same without the roof and phase lines (for sweeps, which pass st =
 * NULL: per-step figures such as the experts touched then vary by point). */
void cli_assume_model(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st);

/* The weights' dtypes as the resident and streamed bytes count them: "bf16",
 * or "mxfp4 (group 32, 1-byte scales), except attention, router, lm_head,
 * embed in bf16" for a checkpoint that quantizes some modules. Returns out. */
char *cli_weights_text(const rf_model *m, const rf_step_opts *o, char *out, size_t cap);
/* On an 8-bit math roof (W8A8 fp8 or int8): a line naming the operators
 * placed on it whose own dtypes are wider (modules kept in bf16, attention
 * over a bf16 cache), whose compute floors it therefore understates;
 * nothing otherwise. */
void cli_assume_math(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_roof *roof);

/* Assumption lines of a model alone: quantized modules, MLA, sliding
 * windows, and the notes its reader left. */
void cli_assume_arch(rf_report *r, const rf_model *m, const rf_step_opts *o);
/* A MODEL read with --family (ctx->family_as set): the assumption line
 * "family: read as F (--family); model_type was T" and the section
 * `family_forced` {read_as, model_type}; nothing otherwise. cli_emit calls
 * it; a streamed output (sweep) or a page (report) calls it on its head. */
void cli_assume_family(const cli_ctx *ctx, rf_report *r);
/* A model with Gated DeltaNet or Mamba2 layers (state, its
 * rf_model_state_bytes, nonzero): the line saying what a sequence's
 * recurrent state is and that memory fits count it beside the KV;
 * nothing when state is 0. */
void cli_assume_state(rf_report *r, const rf_model *m, uint64_t state);

#endif
