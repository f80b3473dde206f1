/* generate.c - a static batch run to the end as `generate` shows it
 * (rf_generate: TTFT, TPOT, latency, tokens/s), predicted, and on a
 * layout (rf_generate_par). */
#include "roofline/rf_view.h"

void rf_view_generate_assume(rf_report *r, const rf_generate *g, double watts, bool speculative)
{
    rf_report_assume(r,
                     "requests: %lld identical %s of %lld prompt and %lld output tokens, one "
                     "static batch (all start and finish together); queueing and "
                     "scheduling not modelled",
                     (long long)g->batch, g->batch == 1 ? "request" : "requests",
                     (long long)g->prompt, (long long)g->output);
    if (!g->prefix.shared)
        rf_report_assume(r,
                         "TTFT: the prefill step of %lld x %lld tokens, nothing cached (it "
                         "makes the first output token)",
                         (long long)g->batch, (long long)g->prompt);
    if (g->output >= 2)
        rf_report_assume(r,
                         "decode: output token j = 2..%lld from a decode step at context "
                         "P + j - 1 = %lld..%lld; TPOT = the mean of those %lld step floors, "
                         "summed exactly (%zu linear %s, not an average context)",
                         (long long)g->output, (long long)(g->prompt + 1),
                         (long long)g->final_positions, (long long)(g->output - 1),
                         g->decode.pieces, g->decode.pieces == 1 ? "piece" : "pieces");
    else
        rf_report_assume(r, "decode: none (one output token, made by the prefill)");
    if (watts > 0)
        rf_report_assume(r,
                         "energy a token = board power %g W (the TDP, an upper bound: the "
                         "device rarely draws it all) / output tokens/s, joules",
                         watts);
    rf_report_assume(r,
                     "floors: each step's floor max(F/pi, Q/beta) of its totals, as `step` "
                     "prints it (sum-of-max beside); latency = TTFT + the decode floors; "
                     "tokens/s = B N / latency; memory fit at the end, %lld positions a "
                     "sequence",
                     (long long)g->final_positions);
    if (g->prefix.shared)
        rf_report_assume(r,
                         "shared prefix: %lld of the %lld prompt tokens common to every "
                         "request: its KV stored once, its prefill run once (TTFT = "
                         "prefill of 1 x %lld + prefill of %lld x %lld after it); decode "
                         "reads it %s",
                         (long long)g->prefix.shared, (long long)g->prompt,
                         (long long)g->prefix.shared, (long long)g->batch,
                         (long long)(g->prompt - g->prefix.shared),
                         g->prefix.cascade ? "once a step (--prefix-kernel cascade: P_s kv_tok "
                                             "+ B (S - P_s) kv_tok)"
                                           : "once a sequence, as the common kernels do "
                                             "(--prefix-kernel cascade reads it once a step)");
    if (speculative)
        rf_report_assume(r, "speculative: an iteration at context S = K draft decode steps (at "
                            "S..S+K-1) + one target step verifying K + 1 tokens a sequence "
                            "(linear layers at M = B (K+1), attention K + 1 queries, KV read "
                            "once), averaged over S = P+1..P+N-1; tokens an iteration (1 - "
                            "alpha^(K+1)) / (1 - alpha), acceptances independent; draft on the "
                            "same roof; TTFT excluded from its tokens/s");
}

/* The requests' times: TTFT, TPOT (mean, first, last), latency, tokens/s,
 * the energy a token, and the sum-of-max figures beside. */
void rf_view_generate_times(rf_report *r, const rf_generate *g, double watts)
{
    rf_report_int(r, "batch", "requests", (uint64_t)g->batch, RF_U_INT);
    rf_report_int(r, "prompt", "prompt tokens", (uint64_t)g->prompt, RF_U_INT);
    rf_report_int(r, "output", "output tokens", (uint64_t)g->output, RF_U_INT);
    rf_report_num(r, "ttft_s", "TTFT", g->ttft_s, RF_U_SECONDS);
    rf_report_str(r, "prefill_regime", "prefill regime", rf_regime_name(g->prefill_regime));
    rf_report_int(r, "decode_steps", "decode steps", (uint64_t)g->decode.steps, RF_U_INT);
    if (g->output >= 2) {
        rf_report_num(r, "tpot_mean_s", "TPOT mean", g->tpot_mean_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_first_s", "TPOT first (j = 2)", g->tpot_first_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_last_s", "TPOT last (j = N)", g->tpot_last_s, RF_U_SECONDS);
    } else {
        const char *why = "- (one output token)";
        rf_report_null(r, "tpot_mean_s", "TPOT mean", why);
        rf_report_null(r, "tpot_first_s", "TPOT first (j = 2)", why);
        rf_report_null(r, "tpot_last_s", "TPOT last (j = N)", why);
    }
    rf_report_num(r, "decode_s", "decode time", g->decode.floor_s, RF_U_SECONDS);
    rf_report_num(r, "latency_s", "latency", g->latency_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s", g->tokens_per_s, RF_U_TOK_RATE);
    if (watts > 0)
        rf_report_num(r, "energy_per_token_j", "energy a token (J, at TDP)",
                      rf_energy_per_token_j(watts, 1, g->tokens_per_s), RF_U_SIG3);
    else
        rf_report_null(r, "energy_per_token_j", "energy a token (J, at TDP)",
                       "- (no board power for this hardware)");
    rf_report_num(r, "ttft_sum_of_max_s", "TTFT, sum-of-max", g->ttft_sum_of_max_s, RF_U_SECONDS);
    rf_report_num(r, "decode_sum_of_max_s", "decode time, sum-of-max", g->decode.sum_of_max_s,
                  RF_U_SECONDS);
}

/* --predict on a calibration: the calibration's line and the decode's
 * pieces', the section "predicted": times, operators outside, bands. */
void rf_view_generate_pred(rf_report *r, const rf_generate_pred *p)
{
    rf_view_pred_assume(r);
    if (p->output >= 2)
        rf_report_assume(r,
                         "predicted decode: the decode step predicted at every context "
                         "%lld..%lld and summed (not one average step), over %zu %s of "
                         "contexts (a range where every operator's shape is affine in S): "
                         "the %zu %s that do not move with S predicted once a piece, the %zu "
                         "that %s (attention: its keys and K/V read) at every context",
                         (long long)(p->prompt + 1), (long long)(p->prompt + p->output - 1),
                         p->pieces, p->pieces == 1 ? "piece" : "pieces", p->ops_fixed,
                         p->ops_fixed == 1 ? "operator" : "operators", p->ops_varying,
                         p->ops_varying == 1 ? "does" : "do");
    rf_report_section(r, "predicted",
                      "PREDICTED (from the calibration; the floors above are "
                      "bounds)");
    rf_view_pred_gen_times(r, p);
    rf_report_int(r, "outside_prefill", "prefill operators outside the calibration",
                  p->outside_prefill, RF_U_INT);
    rf_report_int(r, "outside_decode", "decode operators outside the calibration",
                  p->outside_decode, RF_U_INT);
    /* the bands: each operator's kind's leave-one-out worst error, summed */
    rf_view_pred_gen_bands(r, p);
}

void rf_view_generate_par(rf_report *r, const rf_generate_par *g)
{
    rf_report_assume(r,
                     "requests: %lld identical %s of %lld prompt and %lld output tokens a "
                     "replica, one static batch; each step takes the layout's cycle (a "
                     "device's operators' sum-of-max + its collectives; under PP the longer "
                     "of a token's latency and the slowest stage busy for every "
                     "micro-batch); TTFT the prefill's, decode summed over contexts "
                     "%lld..%lld %s; tokens/s = D B N / latency",
                     (long long)g->batch, g->batch == 1 ? "request" : "requests",
                     (long long)g->prompt, (long long)g->output, (long long)(g->prompt + 1),
                     (long long)(g->prompt + g->output - 1),
                     g->closed_form ? "exactly in closed form" : "step by step (exact, O(N))");
    rf_report_section(r, NULL, "generation");
    rf_report_int(r, "devices", "devices", (uint64_t)g->devices, RF_U_INT);
    rf_report_bool(r, "fits", "every device fits at the end", g->fits, g->fits ? "yes" : "no");
    rf_report_num(r, "fit_margin_bytes", "smallest fit margin", g->min_margin_bytes, RF_U_BYTES);
}

void rf_view_generate_par_times(rf_report *r, const rf_generate_par *g, double watts)
{
    rf_report_int(r, "batch", "requests a replica", (uint64_t)g->batch, RF_U_INT);
    rf_report_num(r, "ttft_s", "TTFT", g->ttft_s, RF_U_SECONDS);
    rf_report_int(r, "decode_steps", "decode steps", (uint64_t)g->decode_steps, RF_U_INT);
    if (g->output >= 2) {
        rf_report_num(r, "tpot_mean_s", "TPOT mean", g->tpot_mean_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_first_s", "TPOT first (j = 2)", g->tpot_first_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_last_s", "TPOT last (j = N)", g->tpot_last_s, RF_U_SECONDS);
    }
    rf_report_num(r, "decode_s", "decode time", g->decode_s, RF_U_SECONDS);
    rf_report_num(r, "latency_s", "latency", g->latency_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s, whole deployment", g->tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_num(r, "tokens_per_s_device", "output tokens/s a device", g->tokens_per_s_device,
                  RF_U_TOK_RATE);
    if (watts > 0)
        rf_report_num(r, "energy_per_token_j", "energy a token (J, at TDP)",
                      rf_energy_per_token_j(watts, g->devices, g->tokens_per_s), RF_U_SIG3);
}
