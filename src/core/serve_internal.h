/* serve_internal.h - private to src/core: the mixed step of serve.c, which
 * the speculative steady state (serve_spec.c) builds on. */
#ifndef RF_CORE_SERVE_INTERNAL_H
#define RF_CORE_SERVE_INTERNAL_H

#include "roofline/rf_serve.h"

/* `count` chunks of `tokens` query tokens a sequence, each after `context`
 * cached positions; `logits` positions of each chunk reach lm_head (1 for a
 * prompt chunk, whose last position makes the next token; K + 1 for a
 * speculative verification, which scores every position). */
typedef struct rf__chunk_group {
    int64_t tokens, context, count, logits;
} rf__chunk_group;

/* One forward pass of B_d decode tokens at S_d and the chunk groups: every
 * operator but attention at M = all tokens (weights read once), lm_head at
 * M = B_d + sum count x logits, the decode attention (its prefix of
 * `cascade` positions read once for the B_d sequences when > 0) and each
 * group's attention as its own prefill step forms it. */
rf_status rf__mixed(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                    int64_t decode_batch, int64_t decode_context, int64_t cascade,
                    const rf__chunk_group *g, size_t n_groups, rf_step *out, rf_err *err);

/* A mixed step's shape, as rf__mixed takes it: B_d decode tokens at S_d
 * (a cascade prefix of `cascade` positions, 0: none) and the chunk groups. */
#define RF__MIX_GROUPS 4
typedef struct rf__mix {
    int64_t decode_batch, decode_context, cascade;
    rf__chunk_group groups[RF__MIX_GROUPS];
    size_t n_groups;
} rf__mix;

/* Its tokens M = B_d + sum count x tokens, and the rows lm_head scores,
 * B_d + sum count x logits (the inputs checked by rf__mixed). */
int64_t rf__mix_tokens(const rf__mix *x);
int64_t rf__mix_logits(const rf__mix *x);

/* Micro-batches a pipeline of l runs a step of `batch` sequences in:
 * min(P, B) (parallel.c; rf_par.micro_batches). */
int64_t rf__par_micro_batches(const rf_layout *l, int64_t batch);

/* rf_par_compute of a mixed step: every stage's device runs the mixed step
 * `mb` of its shard (one micro-batch's: rf__mixed, EP's expert share of the
 * group's g x mb), its collectives at M = rf__mix_tokens(mb) rows and the
 * logits' all-gather at rf__mix_logits(mb) rows. o is the replica's decode
 * (o->batch = B in flight at o->context = S_d: the micro-batches, the KV
 * held, tokens/s = D B / cycle). RF_EINVAL unless o is a decode. */
rf_status rf__par_mixed(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                        const rf_par_opts *po, const rf__mix *mb, rf_par *out, rf_err *err);

/* The chunking of the steady state: C in force (C, or the whole own part
 * of the prompt when 0; cut to max-batched-tokens less `decode_tokens`, the
 * tokens a step spends on decoding), the steps a prompt's own P - P_s
 * tokens take, and their mean cached context P_s + C floor((steps - 1) / 2).
 * RF_EINVAL when max-batched-tokens leaves no room for a chunk. */
rf_status rf__serve_chunking(const rf_serve_opts *so, int64_t decode_tokens, int64_t *chunk,
                             int64_t *steps, int64_t *chunk_context, rf_err *err);

/* The checks of a speculative decoding: K in [1, 64], alpha in [0, 1], at
 * least 2 output tokens, the draft's vocabulary the target's (named). */
rf_status rf__spec_check(const rf_model *target, const rf_model *draft, int64_t output, int64_t k,
                         double accept, rf_err *err);

/* B, P and N within range (naming "batch", "prompt", "output"). */
rf_status rf__serve_sizes(const rf_step_opts *o, int64_t prompt, int64_t output, rf_err *err);

/* Mark both fronts of out[0..n-1] (rf_frontier_compute's rule). */
void rf__frontier_mark(rf_frontier_point *out, size_t n);

#endif
