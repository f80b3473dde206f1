/* serve.c - the steady state of `serve --steady-state` (rf_serve.h): its
 * assumptions, the step's figures, on a layout, with --draft and with
 * --predict; and the speculative section that generate shows too. */
#include <stdio.h>

#include "roofline/rf_view.h"

void rf_view_spec(rf_report *r, const char *label, const rf_model *d, const rf_spec *sp)
{
    rf_report_section(r, "speculative", label);
    rf_report_str(r, "draft", "draft", d->name);
    rf_report_int(r, "spec_k", "K speculated tokens", (uint64_t)sp->k, RF_U_INT);
    rf_report_num(r, "accept", "acceptance a token", sp->accept, RF_U_RATIO);
    rf_report_num(r, "tokens_per_iter", "tokens an iteration", sp->tokens_per_iter, RF_U_SIG3);
    rf_report_num(r, "draft_s", "draft steps an iteration", sp->draft_s, RF_U_SECONDS);
    rf_report_num(r, "verify_s", "verification step", sp->verify_s, RF_U_SECONDS);
    rf_report_num(r, "iter_s", "iteration", sp->iter_s, RF_U_SECONDS);
    rf_report_num(r, "tpot_s", "TPOT with speculation", sp->tpot_s, RF_U_SECONDS);
    rf_report_num(r, "plain_tpot_s", "TPOT without", sp->plain_tpot_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "decode tokens/s with speculation", sp->tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_num(r, "plain_tokens_per_s", "decode tokens/s without", sp->plain_tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_num(r, "speedup", "speedup", sp->speedup, RF_U_SIG3);
    if (sp->breaks_even)
        rf_report_num(r, "break_even_accept", "break-even acceptance", sp->break_even_accept,
                      RF_U_SIG3);
    else
        rf_report_null(r, "break_even_accept", "break-even acceptance",
                       "none (loses even at acceptance 1)");
}

/* pv: the layout's steady state (NULL: one device). */
void rf_view_serve_assume(rf_report *r, const rf_serve *sv, const rf_serve_par *pv)
{
    const rf_serve_opts *so = &sv->opts;
    rf_report_assume(r,
                     "continuous batching, steady state: %lld requests in flight, each "
                     "step B decode tokens at the mean context P + N/2 = %lld and "
                     "ceil(B P / N) = %lld prompt tokens (what keeps B in flight)",
                     (long long)so->concurrency, (long long)sv->decode_context,
                     (long long)sv->prompt_tokens);
    rf_report_assume(r,
                     "chunked prefill: chunks of at most %lld tokens%s (%lld of %lld and "
                     "%s); a chunk attends to the mean cached context of a prompt's "
                     "chunks, %lld, plus itself",
                     (long long)sv->chunk,
                     so->max_batched_tokens ? ", cut to --max-batched-tokens less the decode "
                                              "tokens"
                                            : "",
                     (long long)sv->full_chunks, (long long)sv->chunk,
                     sv->tail_chunk ? "one shorter" : "none shorter", (long long)sv->chunk_context);
    rf_report_assume(r, "mixed step: linear layers at M = decode + prompt tokens (weights read "
                        "once), lm_head one position a sequence, decode attention and chunk "
                        "attention each reading its own KV once");
    if (!pv)
        rf_report_assume(r,
                         "TPOT = the step floor; output tokens/s = B / floor; TTFT = "
                         "ceil(%s / C) = %lld steps at that floor, queueing not modelled",
                         so->prefix.shared ? "(P - P_s)" : "P", (long long)sv->ttft_steps);
    else
        rf_report_assume(r,
                         "on the layout: every device runs its shard's mixed step; the "
                         "all-reduces, the embedding's, EP's dispatch and combine and the "
                         "pipeline's sends carry all M = decode + prompt tokens of a "
                         "micro-batch (%lld), lm_head's all-gather its L = %lld logit rows "
                         "(decode tokens + one a chunk); PP cuts the step into %lld "
                         "micro-%s of ceil(B / m) = %lld decode and ceil(T_p / m) = %lld "
                         "prompt tokens; TPOT = the cycle = max(a micro-batch's latency "
                         "through the stages and sends, m x the slowest stage's floor); "
                         "TTFT = ceil(%s / C) = %lld %s, queueing not modelled; "
                         "tokens/s = D B / cycle",
                         (long long)pv->rows, (long long)pv->logit_rows,
                         (long long)pv->micro_batches, pv->micro_batches == 1 ? "batch" : "batches",
                         (long long)pv->micro_decode, (long long)pv->micro_prompt_tokens,
                         so->prefix.shared ? "(P - P_s)" : "P", (long long)pv->ttft_steps,
                         pv->ttft_steps == 1 ? "cycle" : "cycles");
    if (so->prefix.shared)
        rf_report_assume(r,
                         "shared prefix: %lld of the %lld prompt tokens common to every "
                         "request, computed once and held once: a request prefills its own "
                         "%lld (P - P_s in the prompt tokens a step and in TTFT), its chunks "
                         "after the prefix; decode reads it %s",
                         (long long)so->prefix.shared, (long long)so->prompt,
                         (long long)(so->prompt - so->prefix.shared),
                         so->prefix.cascade ? "once a step (--prefix-kernel cascade: P_s kv_tok "
                                              "+ B (S_d - P_s) kv_tok)"
                                            : "once a sequence, as the common kernels do "
                                              "(--prefix-kernel cascade reads it once a step)");
}

/* The mean mixed step's shape: requests in flight (labelled so), the decode
 * context, prompt tokens a step, the chunk and its context. */
static void mixed_step(rf_report *r, const rf_serve *sv, const char *in_flight)
{
    rf_report_int(r, "concurrency", in_flight, (uint64_t)sv->opts.concurrency, RF_U_INT);
    rf_report_int(r, "decode_context", "decode context (mean)", (uint64_t)sv->decode_context,
                  RF_U_INT);
    rf_report_int(r, "prompt_tokens", "prompt tokens a step", (uint64_t)sv->prompt_tokens,
                  RF_U_INT);
    rf_report_int(r, "chunk", "chunk", (uint64_t)sv->chunk, RF_U_INT);
    rf_report_int(r, "chunk_context", "chunk context (mean)", (uint64_t)sv->chunk_context,
                  RF_U_INT);
}

void rf_view_serve_steady(rf_report *r, const rf_serve *sv, double most)
{
    mixed_step(r, sv, "requests in flight");
    rf_report_int(r, "total_bytes", "step bytes", sv->step.total_bytes, RF_U_BYTES);
    rf_report_int(r, "flops", "step FLOPs", sv->step.flops, RF_U_FLOPS);
    rf_report_str(r, "regime", "regime", rf_regime_name(sv->step.regime));
    rf_report_num(r, "floor_s", "step floor", sv->step.floor_s, RF_U_SECONDS);
    rf_report_num(r, "tpot_s", "TPOT", sv->tpot_s, RF_U_SECONDS);
    rf_report_num(r, "ttft_s", "TTFT (queueing excluded)", sv->ttft_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s", sv->tokens_per_s, RF_U_TOK_RATE);
    if (most >= 0)
        rf_report_int(r, "max_concurrency", "largest concurrency the KV pool admits",
                      (uint64_t)most, RF_U_INT);
    else
        rf_report_null(r, "max_concurrency", "largest concurrency the KV pool admits",
                       "- (no memory size: give --mem)");
}

void rf_view_serve_par(rf_report *r, const rf_serve_par *pv)
{
    rf_report_section(r, NULL, "steady state");
    rf_report_bool(r, "fits", "every device fits", pv->fits, pv->fits ? "yes" : "no");
}

void rf_view_serve_par_times(rf_report *r, const rf_serve *sv, const rf_serve_par *pv)
{
    mixed_step(r, sv, "requests in flight a replica");
    rf_report_int(r, "rows", "rows a collective (M)", (uint64_t)pv->rows, RF_U_INT);
    rf_report_int(r, "logit_rows", "logit rows (L)", (uint64_t)pv->logit_rows, RF_U_INT);
    rf_report_num(r, "tpot_s", "TPOT", pv->tpot_s, RF_U_SECONDS);
    rf_report_num(r, "ttft_s", "TTFT (queueing excluded)", pv->ttft_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s, whole deployment", pv->tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_num(r, "tokens_per_s_device", "output tokens/s a device", pv->tokens_per_s_device,
                  RF_U_TOK_RATE);
    rf_report_int(r, "max_concurrency", "largest concurrency a replica's KV admits",
                  (uint64_t)pv->max_concurrency, RF_U_INT);
    rf_report_int(r, "max_concurrency_total", "largest concurrency, all replicas",
                  (uint64_t)pv->max_concurrency * (uint64_t)pv->layout.dp, RF_U_INT);
}

/* --draft: the speculative steady state beside the plain one. */
void rf_view_serve_spec(rf_report *r, const rf_model *d, const rf_serve_spec *sp)
{
    rf_report_assume(r, "speculative: an iteration = K draft steps of the B sequences at S_d.."
                        "S_d+K-1 (the first also prefills the iteration's prompt tokens into "
                        "the draft's cache) + one target step verifying K + 1 tokens a sequence "
                        "with the prompt chunks (linear layers at M = B (K+1) + T_p, attention "
                        "K + 1 queries, KV read once, lm_head on all K + 1); T_p = ceil(B E P / "
                        "N) keeps B in flight; tokens an iteration E = (1 - alpha^(K+1)) / (1 - "
                        "alpha), acceptances independent; TTFT = ceil(P / C) iterations");
    rf_view_spec(r, "speculative decoding (steady state)", d, &sp->spec);
    rf_report_int(r, "prompt_tokens", "prompt tokens an iteration", (uint64_t)sp->prompt_tokens,
                  RF_U_INT);
    rf_report_num(r, "ttft_s", "TTFT with speculation", sp->ttft_s, RF_U_SECONDS);
}

/* The predicted steady state, labelled so, beside the floors' section. */
void rf_view_serve_pred(rf_report *r, const rf_serve *sv, const rf_serve_pred *p)
{
    rf_view_pred_assume(r);
    rf_report_assume(r,
                     "predicted steady state: the mixed step's operators each predicted "
                     "(linear layers at M = B + T_p = %lld, lm_head, decode attention at "
                     "S_d, chunk attention), the step their sum; TPOT = that step, TTFT = "
                     "%lld of it, tokens/s = B / TPOT",
                     (long long)(sv->opts.concurrency + sv->prompt_tokens),
                     (long long)sv->ttft_steps);
    rf_report_section(r, "predicted",
                      "PREDICTED (from the calibration; the floors above are "
                      "bounds)");
    rf_report_num(r, "tpot_s", "predicted TPOT (the step)", p->tpot_s, RF_U_SECONDS);
    rf_report_num(r, "ttft_s", "predicted TTFT (queueing excluded)", p->ttft_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "predicted output tokens/s", p->tokens_per_s, RF_U_TOK_RATE);
    rf_report_int(r, "outside", "operators outside the calibration", p->n_outside, RF_U_INT);
}
