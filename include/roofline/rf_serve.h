/* rf_serve.h - whole requests: a static batch generated to the end, and
 * speculative decoding, on the exact step model of rf_step.h.
 *
 * A request has a prompt of P tokens and an output of N tokens; B identical
 * requests run as one static batch (docs/accounting.md, "Serving"):
 *     TTFT       = floor of the prefill step: B sequences of P new tokens,
 *                  nothing cached (it produces the first output token)
 *     decode j   = the decode step at context S = P + j - 1, j = 2..N
 *                  (keys = context, as rf_step_compute counts them)
 *     TPOT       = (1 / (N - 1)) sum_{S = P+1}^{P+N-1} floor(S)
 *     latency    = TTFT + sum_{S = P+1}^{P+N-1} floor(S)
 *     tokens/s   = B N / latency
 * floor(S) is the step floor max(F(S)/pi, Q(S)/beta) of rf_step; the
 * sum-of-max floor sum_i count_i max(F_i(S)/pi, Q_i(S)/beta) is summed
 * beside it.
 *
 * Exact sums in closed form: every operator's F_i and Q_i are affine in S
 * between the points where a sliding window caps its keys, so its floor is
 * linear in S except where it changes regime (F_i/pi = Q_i/beta), and so is
 * the whole step's. Between such breakpoints a floor is linear and its sum
 * over the integers lo..hi is the arithmetic series
 *     sum = (hi - lo + 1) (floor(lo) + floor(hi)) / 2,
 * with floor(lo) and floor(hi) from rf_step_compute itself. Breakpoints are
 * found from the operators' own counts: a range whose integer counts are not
 * affine (checked exactly at both ends, the second point and the middle) is
 * halved, so a window's cap costs O(log N) steps and N = 1,000,000 costs
 * what N = 10 does. Grouped cache or activation dtypes (whose scale bytes
 * round per group) may halve down to single steps: exact, but slower.
 */
#ifndef RF_SERVE_H
#define RF_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_hw.h"
#include "rf_model.h"
#include "rf_parallel.h"
#include "rf_step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The floors of one kind of step summed over the contexts lo..hi. */
typedef struct rf_floor_sum {
    int64_t steps;          /* hi - lo + 1                                  */
    double floor_s;         /* sum of the step floors                       */
    double sum_of_max_s;    /* sum of the sum-of-max floors                 */
    double first_s, last_s; /* the step floor at lo and at hi               */
    size_t pieces;          /* linear pieces summed (the cost, not N)       */
    size_t steps_computed;  /* rf_step_compute calls made                   */
} rf_floor_sum;

/* Sum the floor of the step o (its phase, B, T, dtypes and switches) with
 * its context set to every S in lo..hi, in closed form as above. Errors:
 * RF_EINVAL for lo > hi or lo < 0; whatever rf_step_compute returns at a
 * context it evaluates (RF_ERANGE on overflow). */
rf_status rf_floor_sum_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                               int64_t lo, int64_t hi, rf_floor_sum *out, rf_err *err);

/* A prompt prefix shared by every request of the batch. */
typedef struct rf_prefix {
    int64_t shared; /* P_s tokens (0: none)                               */
    bool cascade;   /* decode reads the prefix once a step (a cascade or
                         shared-prefix kernel); false: once a sequence, as
                         the common kernels do                              */
} rf_prefix;

/* A static batch of o->batch requests generated to the end. */
typedef struct rf_generate {
    rf_prefix prefix;              /* what rf_generate_prefix_compute had  */
    int64_t batch, prompt, output; /* B, P, N                              */
    double ttft_s;                 /* the prefill step floor               */
    double ttft_sum_of_max_s;      /* its sum-of-max floor                 */
    rf_regime prefill_regime;
    rf_floor_sum decode;        /* contexts P+1 .. P+N-1 (N - 1 steps;
                                       steps 0 when N = 1)                  */
    double tpot_mean_s;         /* decode.floor_s / (N - 1); 0 if N = 1 */
    double tpot_first_s;        /* at context P + 1 (j = 2)             */
    double tpot_last_s;         /* at context P + N - 1 (j = N)         */
    double latency_s;           /* ttft_s + decode.floor_s              */
    double tokens_per_s;        /* B N / latency_s                      */
    double decode_tokens_per_s; /* B / tpot_mean_s; 0 if N = 1          */
    int64_t final_positions;    /* P + N - 1: what each sequence holds
                                       at its last step                     */
} rf_generate;

/* Errors: RF_EINVAL for B, P or N below 1 or P + N - 1 above RF_DIM_MAX
 * (naming "prompt", "output" or "batch"); errors of the steps. */
rf_status rf_generate_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                              int64_t prompt, int64_t output, rf_generate *out, rf_err *err);

/* The same with a prompt prefix of P_s tokens shared by the B requests
 * (prefix caching):
 *     TTFT = prefill(1 x P_s, nothing cached) + prefill(B x (P - P_s) after
 *            P_s cached)                      (the prefix computed once)
 *     decode, common kernels: unchanged (each sequence reads the prefix)
 *     decode, cascade: each attention's K/V read
 *            B S x  ->  P_s x + B (S - P_s) x  (x: bytes a token and layer)
 *     KV held (rf_generate_fit): kv_seq(P_s) + B (kv_seq(S) - kv_seq(P_s))
 * Errors: RF_EINVAL for P_s outside [0, P], cascade without a prefix, a
 * prefix on a model with sliding-window layers (not modelled). */
rf_status rf_generate_prefix_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                     int64_t prompt, int64_t output, const rf_prefix *px,
                                     rf_generate *out, rf_err *err);

/* Whether the generation's end fits (rf_fit's rule), its shared prefix
 * stored once: kv = kv_seq(P_s) + B (kv_seq(P + N - 1) - kv_seq(P_s)). */
rf_status rf_generate_fit(const rf_model *m, const rf_step_opts *o, const rf_generate *g,
                          uint64_t mem_bytes, double util, uint64_t reserve_bytes, rf_fit *out,
                          rf_err *err);

/* The step whose memory the generation needs at its end: a decode step at
 * context P + N - 1 (N >= 2), or the prefill of P tokens (N = 1), for
 * rf_step_fit. */
rf_step_opts rf_generate_final_step(const rf_step_opts *o, int64_t prompt, int64_t output);

/* Expected tokens a speculative iteration yields, K speculated tokens each
 * accepted with probability alpha independently (Leviathan et al. 2023):
 *     E = (1 - alpha^(K+1)) / (1 - alpha)     (alpha = 1: K + 1)
 * K = 4, alpha = 0.8: 3.36. */
double rf_spec_tokens_per_iter(int64_t k, double alpha);

/* Speculative decoding of the generation g (rf_generate_compute of the
 * same target, o and P, N; N >= 2): an iteration at context S is K draft
 * decode steps (the draft model at contexts S .. S + K - 1, B sequences)
 * and one target step verifying K + 1 tokens a sequence (rf_step's prefill
 * phase with T = K + 1 after S cached: linear layers at M = B (K + 1),
 * attention K + 1 queries against the keys, KV read once). Its floor is
 * averaged over the contexts the output passes, S = P+1 .. P+N-1, each
 * weighted equally (every sum exact, as above):
 *     iter  = (1/(N-1)) sum_S [ sum_{i<K} draft(S + i) + verify(S) ]
 *     TPOT  = iter / E,  tokens/s = B E / iter      (TTFT excluded)
 * Break-even alpha: E(alpha) = iter / TPOT_plain (the plain decode's mean
 * TPOT); 0 when one token an iteration already wins, none (breaks_even
 * false) when even alpha = 1 loses. */
typedef struct rf_spec {
    int64_t k;                 /* K                                    */
    double accept;             /* alpha                                */
    double tokens_per_iter;    /* E                                    */
    double draft_s;            /* mean K draft steps an iteration      */
    double verify_s;           /* mean verification step               */
    double iter_s;             /* draft_s + verify_s                   */
    double tpot_s;             /* iter_s / E                           */
    double tokens_per_s;       /* B E / iter_s                         */
    double plain_tpot_s;       /* g's mean TPOT                        */
    double plain_tokens_per_s; /* B / plain_tpot_s                     */
    double speedup;            /* plain_tpot_s / tpot_s                */
    bool breaks_even;          /* some alpha in [0, 1] wins            */
    double break_even_accept;  /* that alpha (when breaks_even)        */
    size_t steps_computed;
} rf_spec;

/* Errors (RF_EINVAL, naming the input): K outside [1, 64], alpha outside
 * [0, 1], N < 2 (nothing to speculate), a draft whose vocabulary differs
 * from the target's ("draft <name> has a vocabulary of V_d tokens, the
 * target <name> V_t"). draft_o holds the draft's dtypes (the rest is taken
 * from o). */
rf_status rf_spec_compute(const rf_model *target, const rf_model *draft, const rf_step_opts *o,
                          const rf_step_opts *draft_o, const rf_roof *roof, const rf_generate *g,
                          int64_t k, double accept, rf_spec *out, rf_err *err);

/* A mixed step (chunked prefill, as Sarathi-Serve and vLLM schedule it):
 * B_d decode tokens, one a sequence at context S_d, and n_c prompt chunks
 * of C tokens, each after S_c cached positions of its prompt, in one
 * forward pass:
 *     linear layers (and every other operator that is not attention) at
 *       M = B_d + n_c C, their weights read once; lm_head, as a step counts
 *       it, on one position a sequence: M = B_d + n_c;
 *     decode attention of the B_d sequences at S_d (as a decode step);
 *     chunk attention: C queries against S_c + C keys a chunk, K/V read once
 *       (as a prefill step of n_c sequences of C tokens after S_c).
 *     bytes = weights + the two attentions' KV (+ scores); under
 *       RF_TRAFFIC_FULL the sum of every operator's bytes
 *     floor = max(flops / pi, bytes / beta), tokens/s = (B_d + n_c C) / floor
 * FLOPs are the parts' sum; bytes are the parts' sum less one copy of the
 * weights. B_d = 0 is a chunk alone, n_c = 0 a decode step alone. MLA
 * models are refused (their kv_b_proj expands the cached latents, a linear
 * layer that depends on the context, which this split does not place). */
typedef struct rf_mixed_opts {
    int64_t decode_batch;   /* B_d (>= 0)                                 */
    int64_t decode_context; /* S_d                                        */
    int64_t chunk;          /* C tokens a chunk (>= 1 when chunks > 0)    */
    int64_t chunk_context;  /* S_c positions cached before the chunk      */
    int64_t chunks;         /* n_c chunks (>= 0); B_d + n_c >= 1          */
} rf_mixed_opts;

/* o gives the dtypes and switches (its phase, batch, context and tokens are
 * ignored). out->blended_intensity_limit and throughput_cap are 0. */
rf_status rf_mixed_step_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                const rf_mixed_opts *mo, rf_step *out, rf_err *err);

/* The memory a mixed step holds, by rf_fit's rule: the resident weights,
 * B_d sequences at S_d positions and n_c prompts at S_c + C:
 *     kv = B_d kv_seq(S_d) + n_c kv_seq(S_c + C);  needed = weights + kv
 * out->batch is B_d + n_c, out->positions the larger of S_d and S_c + C.
 * Errors: those of rf_fit_prepare and rf_fit_at; RF_ERANGE on overflow. */
rf_status rf_mixed_fit(const rf_model *m, const rf_step_opts *o, const rf_mixed_opts *mo,
                       uint64_t mem_bytes, double util, uint64_t reserve_bytes, rf_fit *out,
                       rf_err *err);

/* Continuous batching in steady state (docs/accounting.md): B requests in
 * flight, prompt P, output N, chunks of at most C prompt tokens:
 *     every step: B decode tokens at the mean context S_d = P + floor(N/2)
 *       and T_p = ceil(B P / N) prompt tokens (the rate that keeps B
 *       requests in flight, rounded up to whole tokens), as
 *       floor(T_p / C) chunks of C plus one of T_p mod C, each at the mean
 *       cached context of a prompt's chunks, S_c = C floor((ceil(P/C) - 1) / 2)
 *     TPOT = the step floor; tokens/s = B / floor (output tokens)
 *     TTFT = ceil(P / C) steps at that floor (queueing not modelled)
 *     KV in use = B sequences at S_d; the largest B the pool admits is
 *       capacity's pool / kv_seq(S_d).
 * max_batched_tokens T (0: none) caps a step's tokens: C becomes
 * min(C, T - B), and T <= B is refused.
 * A shared prefix of P_s tokens (prefix caching, 0 <= P_s < P): its KV is
 * computed once and held once, so only a request's own P - P_s tokens are
 * prefilled: P becomes P - P_s in T_p and TTFT, and S_c starts after the
 * prefix, S_c = P_s + C floor((ceil((P - P_s)/C) - 1) / 2). Decode reads
 * the prefix once a sequence (the common kernels) or, cascade, once a step:
 * decode KV bytes B S_d x -> P_s x + B (S_d - P_s) x (rf_serve_fit holds
 * it once). */
typedef struct rf_serve_opts {
    int64_t concurrency;        /* B                                       */
    int64_t prompt, output;     /* P, N                                    */
    int64_t chunk;              /* C (0: whole prompts, C = P)             */
    int64_t max_batched_tokens; /* T (0: no cap)                           */
    rf_prefix prefix;           /* P_s shared by every request (0: none)   */
} rf_serve_opts;

typedef struct rf_serve {
    rf_serve_opts opts;
    int64_t chunk;          /* C in force                              */
    int64_t decode_context; /* S_d                                     */
    int64_t prompt_tokens;  /* T_p a step                              */
    int64_t chunk_context;  /* S_c                                     */
    int64_t full_chunks;    /* floor(T_p / C)                          */
    int64_t tail_chunk;     /* T_p mod C                               */
    rf_step step;           /* the steady-state mixed step (2 calls)   */
    double tpot_s, tokens_per_s, ttft_s;
    int64_t ttft_steps; /* ceil(P / C)                             */
} rf_serve;

/* Errors: RF_EINVAL for B, P or N below 1, C or T negative, T <= B, P_s
 * outside [0, P - 1], a prefix on sliding-window layers (not modelled),
 * cascade without a prefix. */
rf_status rf_serve_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                           const rf_serve_opts *so, rf_serve *out, rf_err *err);

/* The KV the steady state holds and the largest concurrency the pool
 * admits (rf_fit's budget), the shared prefix stored once:
 *     kv  = kv_seq(P_s) + B (kv_seq(S_d) - kv_seq(P_s))
 *     max = floor((budget - weights - kv_seq(P_s)) / (kv_seq(S_d) - kv_seq(P_s)))
 * (P_s = 0: B kv_seq(S_d) and capacity's pool / kv_seq(S_d)). */
rf_status rf_serve_fit(const rf_model *m, const rf_step_opts *o, const rf_serve *sv,
                       uint64_t mem_bytes, double util, uint64_t reserve_bytes, rf_fit *out,
                       double *max_concurrency, rf_err *err);

/* Speculative decoding in the steady state of sv (rf_serve_compute of the
 * same target and options; no shared prefix): an iteration is
 *     K draft steps, the draft's B sequences at S_d + i (i = 0..K-1); the
 *       first also prefills the iteration's prompt tokens (a mixed step of
 *       the draft, chunked as the target's), since the draft keeps its own
 *       cache of every prompt;
 *     one target step: B (K + 1) verification tokens, K + 1 a sequence
 *       after S_d cached (attention K + 1 queries against S_d + K + 1 keys,
 *       KV read once; lm_head on all K + 1 positions), with the prompt
 *       chunks in the same pass (a mixed step at M = B (K+1) + T_p);
 *     T_p = ceil(B E (P - P_s) / N) prompt tokens: each iteration finishes
 *       B E / N requests on average, and as many start.
 *     TPOT = iter / E; tokens/s = B E / iter; TTFT = ceil(P / C) iterations
 *     (queueing not modelled); max-batched-tokens caps C at T - B (K + 1).
 * Break-even alpha: where TPOT with speculation equals the plain steady
 * state's (sv's floor), by bisection (T_p moves with alpha); 0 when
 * alpha = 0 already wins, none when alpha = 1 loses.
 * Errors: those of rf_spec_compute's checks (K, alpha, the vocabularies),
 * RF_EINVAL with a shared prefix, and those of the steps. */
typedef struct rf_serve_spec {
    rf_spec spec;          /* K, alpha, E, draft_s (the K draft
                                        steps), verify_s (the target's),
                                        iter_s, TPOT, tokens/s with and
                                        without, speedup, break-even      */
    int64_t prompt_tokens; /* T_p an iteration                    */
    int64_t chunk;         /* C in force                          */
    double ttft_s;
    int64_t ttft_iters; /* ceil(P / C)                         */
} rf_serve_spec;

rf_status rf_serve_spec_compute(const rf_model *target, const rf_model *draft,
                                const rf_step_opts *o, const rf_step_opts *draft_o,
                                const rf_roof *roof, const rf_serve *sv, int64_t k, double accept,
                                rf_serve_spec *out, rf_err *err);

/* ---- the latency-throughput frontier ------------------------------------
 * A static batch of B requests for every B in 1..n (rf_generate_compute):
 * each point's TTFT, TPOT mean and output tokens/s (B N / latency, one
 * device). A point is on a Pareto front when no other point has a latency
 * at most its own and a throughput at least its own, one of them strictly
 * better; two fronts: (TPOT, tokens/s) and (TTFT, tokens/s). */
typedef struct rf_frontier_point {
    int64_t batch;
    double ttft_s, tpot_s, latency_s, tokens_per_s;
    uint64_t kv_bytes; /* B kv_seq(P + N - 1): what the end holds    */
    bool pareto_tpot, pareto_ttft;
} rf_frontier_point;

/* Fill out[0..n-1] for B = 1..n and mark both fronts. */
rf_status rf_frontier_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                              int64_t prompt, int64_t output, rf_frontier_point *out, size_t n,
                              rf_err *err);

/* Mark on[i] for the points (latency[i], throughput[i]) no other point
 * dominates (latency <= and throughput >=, one strictly); O(n^2), for small
 * sets (rf_frontier_compute marks its points in O(n) when their latency
 * rises with B, as it does). */
void rf_pareto_mark(const double *latency, const double *throughput, size_t n, bool *on);

/* The smallest B at which the KV read at the mean decode context,
 * B kv_seq(P + N/2), reaches the weight bytes W a decode step streams
 * (rf_step.weight_bytes): where the weights stop dominating its bytes. */
rf_status rf_frontier_weights_cross(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                    int64_t prompt, int64_t output, int64_t *batch, rf_err *err);

/* Cost and energy of a throughput (docs/accounting.md):
 *     USD per million output tokens = price_per_hour devices /
 *                                     (tokens/s x 3600) x 1e6
 *     joules per token (an upper bound at board power) = watts devices /
 *                                     tokens/s */
double rf_cost_per_mtok(double price_per_hour, int64_t devices, double tokens_per_s);
double rf_energy_per_token_j(double watts, int64_t devices, double tokens_per_s);

/* ---- whole requests on many devices (rf_parallel.h) ---------------------
 * A static batch of B requests a replica on the layout of po: every figure
 * is the layout's step time, rf_par_compute's cycle (a device's operators'
 * sum-of-max plus its collectives, the pipeline's cycle under PP):
 *     TTFT       = the cycle of the prefill of B x P tokens
 *     decode     = sum over S = P+1..P+N-1 of the decode cycle at S
 *     tokens/s   = D B N / latency (the deployment), / devices a device
 * Without PP a device's cycle is its stage's floor, som(S) + c: som(S) the
 * sum-of-max of its shard's step (rf_floor_sum_compute, exact in closed
 * form) and c what the layout adds at every context alike (collectives, the
 * rows a stage does not hold, the expert rows under EP), taken once from
 * rf_par_compute at S = P + 1. Under PP the cycle is the larger of the
 * token's latency and the slowest stage busy for every micro-batch, summed
 * step by step (rf_par_sweep: exact, O(N P)).
 * scratch (large: hold it static) is the work space. Errors: those of
 * rf_generate_compute's sizes, rf_layout_validate and rf_par_compute. */
typedef struct rf_generate_par {
    rf_layout layout;
    int64_t devices, batch, prompt, output;
    double ttft_s;
    int64_t decode_steps; /* N - 1                               */
    double decode_s, tpot_mean_s, tpot_first_s, tpot_last_s, latency_s;
    double tokens_per_s; /* the deployment's: D B N / latency    */
    double tokens_per_s_device;
    bool closed_form;        /* PP 1: summed in closed form          */
    bool fits;               /* every device at P + N - 1            */
    double min_margin_bytes; /* its smallest budget - needed         */
} rf_generate_par;

rf_status rf_generate_par_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                  const rf_par_opts *po, int64_t prompt, int64_t output,
                                  rf_par_sweep *scratch, rf_generate_par *out, rf_err *err);

/* The frontier on a layout: B = 1..n requests a replica, each point
 * rf_generate_par_compute's (tokens/s a device), the fronts marked as
 * rf_frontier_compute marks them; kv_bytes is a replica's B kv_seq(P+N-1). */
rf_status rf_frontier_par_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                  const rf_par_opts *po, int64_t prompt, int64_t output,
                                  rf_par_sweep *scratch, rf_frontier_point *out, size_t n,
                                  rf_err *err);

/* Continuous batching in steady state on the layout of po (rf_serve_compute's
 * rule, docs/accounting.md "Serving" and "Many devices"): every device runs
 * the steady-state mixed step of its shard (rf_par_compute's split: heads,
 * widths, vocabulary by T, layers by stage, 1 / E of the expert group's
 * routed pairs under EP), and its collectives count every row of the step:
 *     M = B + T_p rows (decode tokens and prompt chunk tokens) in each
 *       all-reduce after attention and the MLP, the embedding's all-reduce,
 *       EP's dispatch and combine (M k rows) and the pipeline's sends;
 *     L = B + the chunks' logit rows (one a chunk, as the single-device
 *       mixed step puts lm_head on them) in lm_head's all-gather.
 * Under PP the step is cut into m = min(P, B) micro-batches of ceil(B / m)
 * decode and ceil(T_p / m) prompt tokens (chunked by C as the step's), and
 *     TPOT = the cycle = max(a micro-batch's latency through every stage and
 *            send, m x the slowest stage's floor)     (rf_par.cycle_s)
 * (PP 1: the one stage's floor, its operators' sum-of-max + collectives).
 *     TTFT = ceil((P - P_s) / C) cycles (queueing not modelled)
 *     tokens/s = D B / cycle (the deployment), / (T P D) a device
 *     max_concurrency: a replica's, the least a stage's KV pool admits at
 *       S_d (rf_par_capacity_compute; a shared prefix held once: floor((
 *       tokens - P_s) / (S_d - P_s)) of the stage's positions)
 * sv gets rf_serve_compute of the single device (the chunking, T_p, S_d,
 * S_c), par the layout's step. Errors: those of rf_serve_compute (MLA
 * refused), rf_layout_validate, rf_par_compute, a 0 memory size. */
typedef struct rf_serve_par {
    rf_layout layout;
    int64_t devices;
    int64_t micro_batches;       /* m = min(P, B)                        */
    int64_t micro_decode;        /* decode tokens a micro-batch          */
    int64_t micro_prompt_tokens; /* prompt tokens a micro-batch          */
    int64_t rows;                /* M of a micro-batch's collectives     */
    int64_t logit_rows;          /* L of its logits' all-gather          */
    double tpot_s;               /* the cycle                            */
    double ttft_s;
    int64_t ttft_steps;
    double tokens_per_s; /* the deployment's output tokens/s     */
    double tokens_per_s_device;
    bool fits;              /* every device, the prefix held once   */
    double max_concurrency; /* a replica's                          */
} rf_serve_par;

rf_status rf_serve_par_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                               const rf_par_opts *po, const rf_serve_opts *so, rf_serve *sv,
                               rf_par *par, rf_serve_par *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
