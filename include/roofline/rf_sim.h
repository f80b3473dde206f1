/* rf_sim.h - an engine's scheduler simulated request by request: continuous
 * batching under a token budget and a sequence cap, chunked prefill, KV
 * admission in blocks with preemption by recompute, prefix-cache hits; the
 * time of every step from a step model given that step's exact batch.
 *
 * Deterministic and seeded: the same configuration and seed give the same
 * result, bit for bit, on every platform with IEEE-754 doubles (the random
 * numbers are xoshiro256** seeded by splitmix64, and the logarithm and
 * exponential they go through are our own, written with + - * / only).
 *
 * ---- The scheduler (one step at a time, as vLLM's V1 scheduler runs) ----
 * A request r has a prompt of P_r tokens and an output of N_r tokens. It
 * holds c cached positions and has produced g tokens; its known tokens are
 * K = P_r + g. A step processes tokens towards c = K; the step in which c
 * reaches K samples a token (g + 1). So a fresh request prefills its prompt
 * (c: H -> P_r, H the prefix-cache hit) and makes its first token; each
 * decode step then processes one token at context S = c + 1 (the keys, as
 * rf_step_compute counts them: S = P_r + j - 1 for the j-th token, j >= 2,
 * as rf_generate's decode).
 * When the engine is free at time t, the step is built:
 *   1. the requests sent by t - frontend_s join the back of the waiting
 *      queue;
 *   2. the running requests, in the order they were admitted, each take
 *      min(K - c, C, budget left) tokens (C the chunk; a decode takes 1),
 *      the budget starting at T = max_batched_tokens; a request whose new
 *      positions need a KV block when none is free preempts the running
 *      request admitted last (its blocks freed, c back to H, to the front
 *      of the waiting queue; it recomputes its K known tokens later, and
 *      that recompute's last step samples its next token), repeated until
 *      the block is found, or the request preempts itself;
 *   3. then, unless step 2 preempted (vLLM V1 admits nothing after a
 *      preemption), while the budget lasts and fewer than max_seqs run, the front
 *      of the waiting queue is admitted with min(K - c, C, budget left)
 *      tokens if the blocks those take are free (FCFS: the first that does
 *      not fit stops admission). Without chunking (C = 0) a fresh prompt is
 *      scheduled whole or waits; a recompute is cut by the budget.
 * The step's time dt comes from the step model; the step ends at t + dt,
 * when its tokens are sampled and finished requests free their blocks.
 * With nothing to run the engine idles to the next arrival.
 * idle_first: in step 1 an empty engine (nothing running or waiting)
 * queues only the first request to reach it, the others that reach it at
 * the same instant at the end of that request's step. Real clients never
 * arrive at one instant: vLLM's engine loop (vllm/v1/engine/core.py,
 * EngineCoreProc._process_input_queue) blocks on its input queue while
 * it has no work and steps as soon as one request is in, with what has
 * arrived by then, so a closed loop's C simultaneous requests, apart by
 * less than a step, reach an idle engine as one and then C - 1. Off (the
 * zero value): simultaneous arrivals are queued together.
 * KV blocks: a request at c positions holds ceil(c / b) - H / b blocks of
 * b tokens beyond the shared prefix; the prefix's H / b blocks are held once
 * for the whole run (H = b floor(P_s / b): whole blocks hit, as vLLM's
 * prefix cache; capped at b floor((P_r - 1) / b) so every request computes
 * at least one prompt token). The pool holds pool_blocks in all.
 * Preemption off: admission reserves the blocks of a request's whole life,
 * ceil((P_r + N_r - 1) / b) - H / b (TensorRT-LLM's guaranteed-no-evict
 * policy), so nothing is ever preempted.
 * A request that cannot run even alone (its whole life needs more blocks
 * than the pool has beyond the prefix), or, without chunking, whose prompt
 * passes the budget, is refused before the run (RF_EINVAL naming it).
 *
 * ---- Metrics (every request counted; times in seconds) --------------------
 * arrival is when a request is sent; it joins the queue frontend_s later.
 *   queue  = first scheduled (the start of its first step) - arrival
 *   TTFT   = end of the step that samples its first token - arrival
 *   E2E    = end of the step that samples its last token - arrival
 *   TPOT   = (E2E - TTFT) / (N_r - 1), requests with N_r >= 2 (the first
 *            token excluded, as vLLM's and SGLang's benchmarks define it)
 *   ITL    = every gap between two consecutive tokens of a request (one
 *            value a token after the first: the step's time, or longer
 *            across a preemption or a step that skipped the request)
 * Percentiles are exact order statistics, nearest rank: the p-th percentile
 * of n values is the ceil(p n / 100)-th smallest (1-based; the smallest for
 * p n / 100 <= 1). mean is the arithmetic mean.
 *   duration          = the last request's end (time 0 starts the run)
 *   requests_per_s    = requests / duration; output_tokens_per_s likewise
 *   goodput           = requests meeting both SLOs (TTFT <= slo_ttft and
 *                       TPOT <= slo_tpot; a target of 0 is no target; a
 *                       one-token request meets any TPOT) / duration
 *   kv_util_mean      = time-weighted mean over the run of blocks held
 *                       (prefix included; reserved ones without
 *                       preemption) / pool_blocks; kv_peak_blocks the most
 *                       held at once (never above pool_blocks)
 *   in_system_mean    = time average of the requests arrived and not done
 *                       (Little's law: in_system_mean = requests_per_s x
 *                       mean E2E over a run that starts and ends empty)
 *   overloaded        = open loop and trace only: over the second half of
 *                       the arrivals (index n/2 to n-1), the least-squares
 *                       slope of the number waiting (arrived, never yet
 *                       scheduled; taken at each arrival) against time
 *                       exceeds 5% of the arrival rate over that half: the
 *                       queue grows by more than 1 request for every 20
 *                       that arrive, so it grows without bound at that rate
 *                       (queue_growth_per_s is the slope). The number
 *                       running is capped (max_seqs, the pool), so only
 *                       the queue can grow; the number in system also
 *                       counts the batch filling up from an empty engine.
 *                       Always false in the closed loop, whose queue is
 *                       bounded by C.
 */
#ifndef RF_SIM_H
#define RF_SIM_H

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

/* ---- the batch a step runs and the step model ------------------------- */

/* A prompt chunk: `tokens` new positions after `offset` cached ones of
 * request `request` (a recompute after preemption counts its generated
 * tokens as prompt). `logits`: the rows of it lm_head scores, 0 or 1 for a
 * prompt chunk (its last position), `tokens` for a speculative
 * verification (every position scored; "Speculative decoding" below). */
typedef struct rf_sim_chunk {
    int64_t tokens, offset, request;
    int64_t logits;
} rf_sim_chunk;

typedef struct rf_sim_batch {
    int64_t n_decode;              /* B_d decode tokens, one a sequence     */
    const int64_t *decode_context; /* (n_decode) S_i: keys each attends to  */
    int64_t decode_context_sum;    /* sum of S_i                            */
    int64_t n_chunks;              /* prompt chunks                         */
    const rf_sim_chunk *chunks;    /* (n_chunks)                            */
    int64_t tokens;                /* B_d + sum of the chunks' tokens       */
} rf_sim_batch;

/* The rows lm_head scores in b: L = B_d + sum_j max(1, logits_j). */
int64_t rf_sim_batch_logits(const rf_sim_batch *b);

/* The time of one step of batch b, in seconds (> 0), into *step_s. user is
 * what the caller passed with it. Errors propagate and end the run. */
typedef rf_status (*rf_sim_step_fn)(void *user, const rf_sim_batch *b, double *step_s, rf_err *err);

/* The time of one step of g replicas that step together (lockstep), their
 * batches b[0..n-1] (n = g; a replica with nothing to run has a batch of 0
 * tokens and still takes part, as an attention-data-parallel rank runs an
 * idle batch so its expert all-to-all proceeds). */
typedef rf_status (*rf_sim_group_fn)(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                                     rf_err *err);

/* ---- the default step model: the floor of the exact mixed step -------- */

/* The floor of the mixed step of rf_mixed_step_compute (rf_serve.h)
 * generalised to a batch whose decode tokens sit at different contexts and
 * whose chunks differ:
 *     F = F_lin(M, L) + sum_i F_dec(S_i) + sum_j F_chunk(t_j, o_j)
 *     Q = Q_lin(M, L) + sum_i Q_dec(S_i) + sum_j Q_chunk(t_j, o_j)
 *     floor = max(F / pi, Q / beta)
 * with M = the step's tokens and L = rf_sim_batch_logits(b) the rows
 * lm_head scores (one a prompt chunk, as the mixed step counts them, every
 * position of a verification); F_lin, Q_lin every
 * operator but attention at M rows, so MoE expert traffic is that of this
 * step's own M tokens; F_dec, Q_dec a decode attention at S_i keys;
 * F_chunk, Q_chunk the attention of a prefill of t_j tokens after o_j (Q:
 * the weights, K/V and score bytes under compulsory traffic, every
 * operator's bytes under full). With every S_i equal and one chunk shape
 * it is rf_mixed_step_compute's floor (tested).
 * MLA (which rf_mixed_step_compute refuses), as rf_step_compute counts its
 * decode and prefill steps: kv_b_proj leaves the linear part and runs at
 *     M_kv = B_d + sum_j (o_j + t_j) rows, weights read once
 * (a decode token's absorbed up-projections cost its one row, a chunk
 * expands the latents of every key it attends to); decode attention is the
 * absorbed one over the latent (r + rope per key), a chunk's the
 * multi-head attention over its expanded keys reading the latent once. So
 * a step's FLOPs are the sum of its decode step's and its chunks' prefill
 * steps' (tested), and its bytes theirs less the weights read again.
 * Speed: F_lin, Q_lin are tabled by M and L on first use (one
 * rf_step_compute each); decode attention is affine in the keys (capped at
 * a sliding window, rf_sweep's rows), O(1) a step without sliding layers;
 * chunk attention is a polynomial in (t, o) whose coefficients are fitted
 * from rf_step_compute and checked exactly at further points. Where a
 * closed form does not hold, the part comes from rf_step_compute itself,
 * kept in a cache of RF_SIM_FLOOR_CACHE shapes (direct-mapped): a chunk's
 * attention on a model with sliding layers or whose fit fails (recurrent
 * mixers, whose prefill cost steps at their chunk size), and a decode
 * token's on a hybrid stack (rf_model_is_hybrid: chunked attention's keys
 * wrap, DSA caps them, recurrent mixers read a state). Every part is the
 * mixed step's, so the floor is rf_mixed_step_compute's on every family it
 * takes (tested on the configs of tests/data/models). An rf_sim_floor fills
 * its tables as it runs: one run (one thread) at a time. */
typedef struct rf_sim_floor_entry {
    uint64_t flops, bytes, weight_bytes; /* per M: not lm_head, not attention */
    bool set;
} rf_sim_floor_entry;

/* A cached attention part: chunk (t, o), or a decode token at context o
 * (t = 0); t = -1: empty. v: flops, bytes counted in Q, op bytes. */
typedef struct rf_sim_floor_cached {
    int64_t t, o;
    uint64_t v[3];
} rf_sim_floor_cached;

#define RF_SIM_FLOOR_CACHE 65536

typedef struct rf_sim_floor {
    rf_model model;
    rf_step_opts opts;
    rf_roof roof;
    rf_sweep decode;         /* batch-1 decode rows (per key)           */
    bool full;               /* RF_TRAFFIC_FULL                         */
    bool chunk_poly;         /* chunk attention in closed form          */
    bool decode_affine;      /* decode attention from the sweep's rows  */
    uint64_t decode_base[3]; /* else: a decode step's parts once a step */
    rf_op kvb;               /* MLA: kv_b_proj's shape (count layers)   */
    bool has_kvb;
    /* 2 x value(t, o) = a t o + b t^2 + c t + d o + e (mod 2^64), for the
     * chunk attention's flops, bytes counted in Q, and op bytes */
    uint64_t poly[3][5];
    int64_t max_tokens, max_logits;
    rf_sim_floor_entry *lin;    /* (max_tokens + 1) by M                   */
    rf_sim_floor_entry *head;   /* (max_logits + 1) lm_head by L           */
    rf_sim_floor_cached *cache; /* (RF_SIM_FLOOR_CACHE) parts computed     */
    rf_step scratch;            /* rf_step_compute's                       */
    size_t steps_computed;      /* rf_step_compute calls so far            */
} rf_sim_floor;

/* Bytes of the tables rf_sim_floor_prepare needs for steps of at most
 * max_tokens tokens and max_logits lm_head rows (an engine's T and S; under
 * speculation, whose verifications score K + 1 rows a request,
 * min(T, S (K + 1)); the same for rf_sim_par). */
size_t rf_sim_floor_table_bytes(int64_t max_tokens, int64_t max_logits);

/* Prepare f (large: hold it static or on the heap) over the caller's table
 * memory, which must outlive f. o gives the dtypes and switches (phase,
 * batch, context, tokens ignored). Errors: RF_EINVAL for a grouped KV
 * dtype (bytes not affine in the keys; grouped activations, nvfp4's, are
 * accepted), max_tokens or max_logits below 1, a table too small; those of
 * rf_step_compute. */
rf_status rf_sim_floor_prepare(rf_sim_floor *f, const rf_model *m, const rf_step_opts *o,
                               const rf_roof *roof, int64_t max_tokens, int64_t max_logits,
                               void *table, size_t table_bytes, rf_err *err);

/* The step model: user is an rf_sim_floor. Errors: RF_ERANGE for a batch
 * beyond the prepared sizes or whose counts overflow 64 bits. */
rf_status rf_sim_floor_step(void *user, const rf_sim_batch *b, double *step_s, rf_err *err);

/* The same as a group step model (a draft's on one device: rf_sim_sched.
 * draft): the n batches each on its own device, the step the slowest
 * one's floor (a batch of 0 tokens takes no time). */
rf_status rf_sim_floor_group(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                             rf_err *err);

/* ---- the layout's step model (rf_parallel.h) ---------------------------
 * Each replica's step on its exact batch as rf_par_compute times a device's
 * step: a device of stage s runs its shard (rf_layout_shard: heads, widths
 * and vocabulary by T, the stage's layers) and its time is the sum-of-max
 * of its operators plus its collectives (no overlap), the mixed step's
 * operators as rf_mixed_step_compute forms them:
 *     every operator but attention at M rows (the batch's tokens; the
 *       embedding on the first stage, the final norm on the last), lm_head
 *       at L = rf_sim_batch_logits rows on the last stage, the decode attention
 *       of the B_d tokens as one row a layer class (F = sum_i f(S_i), each
 *       capped at its window), each chunk's attention as its own prefill
 *       forms it; MLA: kv_b_proj at B_d + sum_j (o_j + t_j) rows (decode
 *       absorbed, each chunk expanding the latents it attends to);
 *     EP E: the routed experts' rows are the expert group's, the shard's
 *       rows at G = the tokens of the group's g = E / T replicas this step
 *       (each lockstep replica's own M, summed) with 1 / E of their FLOPs,
 *       weights and activations; the other rows at this replica's M;
 *     collectives rf_par_compute's at M rows (all-reduces after each mixer
 *       and FFN under TP, EP's dispatch and combine, the embedding's) and L
 *       logit rows (lm_head's all-gather): rf_coll_cost's alpha-beta time
 *       is affine in the bytes, so each is its bandwidth term at one row
 *       times the rows plus its latency term.
 * PP P: the batch is cut into m = min(P, items) micro-batches, its items
 * (decode tokens, then chunks) dealt round robin; each stage runs each
 * micro-batch in turn, and the step is the pipeline's cycle as rf_par's:
 *     step = max( max_j [ sum_s d_s(j) + sends(j) ],  max_s sum_j d_s(j) )
 * (the slowest micro-batch's way through every stage and pp_send, or the
 * busiest stage's time over every micro-batch); with identical
 * micro-batches that is rf_par.cycle_s (tested).
 * DP D: D replicas, each its own scheduler (rf_sim_sched.replicas, round
 * robin); under EP the g = E / T replicas of an expert group (attention
 * data parallel, experts over the same devices: --tp 8 --ep 8 as SGLang
 * and vLLM run DeepSeek is {tp 1, ep 8, dp 8}) step in lockstep, the
 * step the slowest replica's (an idle replica's time is within any busy
 * one's: its routed rows are the same and it has no others).
 * So a single device's layout (1 x 1 x 1 x 1) is rf_par_compute's sum-of-max
 * of the mixed step, at or above rf_sim_floor_step (the step floor
 * max(F / pi, Q / beta)). Tables: per kind of stage (stages with the same
 * shard and place share them) the linear part by M, the expert rows by G,
 * lm_head by L, and a cache of RF_SIM_PAR_CACHE chunk shapes.
 * Hybrid stacks (rf_model_is_hybrid: Gated DeltaNet and Mamba2 mixers,
 * local and chunked attention, DSA; TP splits their heads as rf_par does,
 * rf_layout_shard): the decode attention-kind rows (attention cores and
 * the recurrent mixers' state updates) are not affine in the keys, so
 * each row's FLOPs and bytes are summed over the micro-batch's decode
 * tokens from the shard's own decode steps,
 *     F_r = base_r + sum_i share_r(S_i), Q_r likewise, time_r = som(F_r, Q_r)
 * with share_r(S) = row r of a decode of 2 sequences at S less that of 1
 * (what a sequence adds) and base_r = the decode of 1 less its share (what
 * a step reads once whatever its batch: a short conv's weights; the same
 * at every context, checked at three, else refused). With every S_i equal
 * the row is rf_step_compute's at that batch, so the step is
 * rf_par_compute's (tested). Shares are kept in a cache of
 * RF_SIM_PAR_DCACHE contexts a kind (direct-mapped; two rf_step_compute a
 * miss). Refused: grouped KV or activation dtypes (bytes not affine in the
 * keys), more than RF_SIM_PAR_KINDS kinds of stage, a decode step of more
 * than RF_SIM_PAR_ROWS attention-kind rows. */
#define RF_SIM_PAR_CACHE 16384
#define RF_SIM_PAR_KINDS 16
#define RF_SIM_PAR_DCACHE 4096
#define RF_SIM_PAR_ROWS 16

typedef struct rf_sim_par_cached {
    int64_t t, o;
    double s; /* the chunk's attention rows, seconds   */
} rf_sim_par_cached;

/* A hybrid kind's decode token at context s (-1: empty): its share of
 * each attention-kind row, flops and bytes an instance. */
typedef struct rf_sim_par_dcached {
    int64_t s;
    uint64_t v[RF_SIM_PAR_ROWS][2];
} rf_sim_par_dcached;

typedef struct rf_sim_par_kind {
    double *lin;                  /* (max_tokens + 1) by M; < 0: not yet   */
    double *experts;              /* (g max_tokens + 1) by G; EP only      */
    double *head;                 /* (max_logits + 1) by L                 */
    rf_sim_par_cached *cache;     /* (RF_SIM_PAR_CACHE)                    */
    struct rf_sweep_attn attn[8]; /* decode attention rows (a sequence)    */
    size_t n_attn;
    rf_op kvb, head_op; /* kv_b_proj (MLA) and lm_head shapes    */
    bool has_kvb, has_head;
    bool kvb_affine; /* kv_b_proj's F = v1 + M v0, Q = v3 + M v2 */
    uint64_t kvb_v[4];
    /* hybrid: decode rows from the shard's steps (direct) */
    bool direct;
    size_t n_rows; /* attention-kind rows of a decode step  */
    uint64_t row_count[RF_SIM_PAR_ROWS];
    uint64_t row_base[RF_SIM_PAR_ROWS][2]; /* once a step: flops, bytes    */
    rf_sim_par_dcached *dcache;            /* (RF_SIM_PAR_DCACHE) direct only       */
} rf_sim_par_kind;

typedef struct rf_sim_par_stage {
    int64_t kind;
    bool first, last;
    rf_coll coll[RF_PAR_MAX_COLL];     /* at one row, re-costed at a step's rows */
    bool coll_logits[RF_PAR_MAX_COLL]; /* its rows are the logits' (L), not M  */
    size_t n_coll;
    rf_coll send; /* pp_send to the next stage, one row    */
    bool has_send;
} rf_sim_par_stage;

typedef struct rf_sim_par {
    rf_layout layout;
    rf_step_opts opts;
    rf_roof roof;
    rf_par_opts po;
    int64_t n_stages, n_kinds, group, max_tokens, max_logits;
    int64_t kind_of[RF_PAR_MAX_STAGES];
    int64_t kind_stage[RF_SIM_PAR_KINDS]; /* a stage of each kind      */
    bool kind_last[RF_SIM_PAR_KINDS];
    rf_sim_par_stage stage[RF_PAR_MAX_STAGES];
    rf_sim_par_kind kind[RF_SIM_PAR_KINDS];
    rf_model shard[RF_SIM_PAR_KINDS];
    rf_model scratch_model;
    rf_sweep sweep;
    rf_step step;
    rf_par par; /* the collectives' source (large)       */
    size_t steps_computed;
} rf_sim_par;

/* Bytes of the tables for steps of at most max_tokens tokens and
 * max_logits logit rows a replica (p is scratch: the stages are sharded to
 * count their kinds). Errors: those of rf_layout_shard, sizes below 1. */
rf_status rf_sim_par_table_bytes(rf_sim_par *p, const rf_model *m, const rf_layout *l,
                                 int64_t max_tokens, int64_t max_logits, size_t *bytes,
                                 rf_err *err);

/* Prepare p (about 1.6 MB: heap or static) over the caller's table (8-byte
 * aligned, outliving p). Errors: rf_layout_validate's, rf_par_compute's
 * (the links), the refusals above, a table too small. */
rf_status rf_sim_par_prepare(rf_sim_par *p, const rf_model *m, const rf_step_opts *o,
                             const rf_roof *roof, const rf_par_opts *po, int64_t max_tokens,
                             int64_t max_logits, void *table, size_t table_bytes, rf_err *err);

/* The group step model (rf_sim_group_fn; user an rf_sim_par): n must be
 * the layout's g (rf_sim_par_sched sets it). RF_ERANGE for a micro-batch
 * beyond the tables. */
rf_status rf_sim_par_step(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                          rf_err *err);

/* s->replicas = D, s->lockstep = g (E / T under EP, else 1). */
struct rf_sim_sched;
void rf_sim_par_sched(const rf_sim_par *p, struct rf_sim_sched *s);

/* A replica's KV pool in blocks: the fewest positions a stage's device
 * holds (rf_par_capacity_compute) / b. RF_EINVAL when the weights leave
 * less than a block. */
rf_status rf_sim_par_pool_blocks(const rf_model *m, const rf_step_opts *o, const rf_par_opts *po,
                                 int64_t block_tokens, int64_t *blocks, rf_err *err);

/* ---- the workload ------------------------------------------------------ */

typedef enum rf_sim_dist {
    RF_SIM_FIXED = 0, /* value                                            */
    RF_SIM_UNIFORM,   /* an integer uniform in [lo, hi]                    */
    RF_SIM_NORMAL,    /* round(mean + sd z), drawn again until in [lo, hi] */
    RF_SIM_LOGNORMAL  /* round(exp(mu + sigma z)) with the length's own
                          mean and sd: sigma^2 = ln(1 + sd^2 / mean^2),
                          mu = ln(mean) - sigma^2 / 2; drawn again until
                          in [lo, hi]                                     */
} rf_sim_dist;

typedef struct rf_sim_lengths {
    rf_sim_dist dist;
    int64_t value;   /* FIXED (>= 1)                                  */
    int64_t lo, hi;  /* UNIFORM, NORMAL, LOGNORMAL: 1 <= lo <= hi     */
    double mean, sd; /* NORMAL, LOGNORMAL: mean > 0, sd >= 0          */
} rf_sim_lengths;

typedef enum rf_sim_arrival {
    RF_SIM_CLOSED = 0, /* C clients, each sending its next request when its
                          last one ends (no think time); all start at 0    */
    RF_SIM_POISSON,    /* exponential gaps of mean 1 / rate               */
    RF_SIM_GAMMA,      /* gamma gaps of mean 1 / rate and coefficient of
                          variation cv (shape 1 / cv^2): cv > 1 bursts    */
    RF_SIM_TRACE       /* the caller's (arrival, prompt, output) array    */
} rf_sim_arrival;

typedef struct rf_sim_request {
    double arrival_s;       /* >= 0, not before the previous request's        */
    int64_t prompt, output; /* >= 1                                       */
} rf_sim_request;

typedef struct rf_sim_workload {
    rf_sim_arrival arrival;
    int64_t requests;              /* n (closed, Poisson, gamma)            */
    int64_t concurrency;           /* C (closed)                            */
    double rate_per_s;             /* Poisson, gamma (> 0)                  */
    double cv;                     /* gamma (> 0)                           */
    rf_sim_lengths prompt, output; /* closed, Poisson, gamma                */
    const rf_sim_request *trace;   /* TRACE: n = trace_len requests         */
    int64_t trace_len;
    uint64_t seed;
    bool prefilled; /* TRACE only: each request arrives with
                                     its prompt's KV and its first token (a
                                     disaggregated decode worker's): c = P,
                                     g = 1, TTFT 0, output >= 2; its blocks
                                     are taken when admitted             */
} rf_sim_workload;

/* The text a user types (the CLI prefixes its option):
 *   arrival  "poisson" (cv set to 1) or "gamma:CV" (CV > 0)
 *   lengths  "N" (fixed), "uniform:LO:HI", "normal:MEAN:SD[:LO:HI]",
 *            "lognormal:MEAN:SD[:LO:HI]" (LO 1 and HI RF_DIM_MAX unless
 *            given); then checked as rf_sim_run checks them
 * Errors: RF_EINVAL naming the text ("arrival 'gamma:-1': the coefficient
 * of variation must be a number > 0"); `what` ("prompt", "output") names
 * the lengths. */
rf_status rf_sim_arrival_parse(const char *text, rf_sim_arrival *kind, double *cv, rf_err *err);
rf_status rf_sim_lengths_parse(const char *text, const char *what, rf_sim_lengths *out,
                               rf_err *err);

/* ---- the engine --------------------------------------------------------- */

/* How a step is built (the scheduler, above, is RF_SIM_MIXED's):
 *   RF_SIM_MIXED: decode tokens and prompt chunks in one step, the running
 *     requests first, then admissions (vLLM V1's scheduler; TensorRT-LLM's
 *     in-flight batching, whose chunking is off by default: chunk 0);
 *   RF_SIM_PREFILL_FIRST: a step is a prefill batch or a decode batch,
 *     never both (SGLang's scheduler, enable_mixed_chunk off by default):
 *     when any prompt work exists (a running request whose prompt or
 *     recompute is unfinished, in admission order, then the waiting queue
 *     admitted as in step 3), the step holds only that work, cut by the
 *     budget and the chunk, and every decoding request waits; with none,
 *     the step decodes one token of every decoding request (step 2 with
 *     the prompt work absent). Preemption and admission are step 2's and
 *     step 3's. */
typedef enum rf_sim_policy { RF_SIM_MIXED = 0, RF_SIM_PREFILL_FIRST } rf_sim_policy;

typedef struct rf_sim_sched {
    int64_t max_batched_tokens;    /* T: tokens a step (>= max_seqs)          */
    int64_t max_seqs;              /* requests running at once (>= 1)         */
    int64_t chunk;                 /* C: prompt tokens a request a step
                                   (0: whole prompts, no chunking)         */
    int64_t block_tokens;          /* b (>= 1)                                */
    int64_t pool_blocks;           /* KV blocks in all (>= 1)                 */
    int64_t shared_prefix;         /* P_s tokens of every prompt cached (0)   */
    bool no_preempt;               /* reserve each request's whole life       */
    rf_sim_policy policy;          /* how prompts and decodes share a step
                                   (RF_SIM_MIXED, the zero value)          */
    double frontend_s;             /* a request reaches the scheduler's queue
                                   this long after it is sent (the serving
                                   front end's round trip: tokenizing,
                                   hand-off, streaming back); counted in
                                   its queue, TTFT and E2E (0: none)       */
    bool idle_first;               /* an empty engine steps on the first
                                   request to arrive alone (above; false:
                                   simultaneous arrivals together)         */
    double slo_ttft_s, slo_tpot_s; /* goodput targets (0: none)            */
    int64_t replicas;              /* D engines (0: 1), each its own scheduler,
                                   queue and pool of pool_blocks           */
    int64_t lockstep;              /* g (0: 1): groups of g replicas step
                                   together (rf_sim_run_group); g | D      */
    double percentile;             /* q of rf_sim_stat.pq, in (0, 100) (0: 99) */
    /* speculative decoding (below); spec_k 0: none                        */
    int64_t spec_k;        /* K proposals a decoding sequence, [0, 64] */
    double spec_accept;    /* alpha, each proposal's acceptance [0, 1] */
    rf_sim_group_fn draft; /* the draft's step model (spec_k > 0): the
                                   g replicas' draft batches of a pass     */
    void *draft_user;
} rf_sim_sched;

/* ---- speculative decoding (spec_k = K > 0) -------------------------------
 * As rf_serve_spec_compute composes its iteration, one step of the engine
 * is K draft passes and one target pass:
 *   the target pass: each decoding request (c cached, g of its N tokens
 *     made) verifies q = min(K + 1, N - g, chunk, budget left) tokens, the
 *     last made one and q - 1 proposals, as a chunk of q tokens after c
 *     cached with every position scored (logits = q; q = 1 is a plain
 *     decode token); it takes q tokens of the budget and the blocks of
 *     c + q positions (at most P + N - 1: no proposal passes the output);
 *     prompt chunks and recomputes as without speculation, in the same pass;
 *   draft pass i (i = 0 .. K - 1): a decode token at context c + 1 + i for
 *     each verification with q - 1 > i proposals; pass 0 also prefills the
 *     step's prompt chunks (the draft keeps its own cache of each prompt).
 *     A pass with no token in any replica of the group is skipped;
 *   dt = target(step batches) + sum_i draft(pass i batches).
 * After the step each verification accepts its proposals in order, each
 * with probability alpha (u < alpha, u uniform from request r's own
 * xoshiro256** stream, seeded by (seed, 3 + r): a request's draws do not
 * depend on the schedule), until the first rejection, and makes a + 1
 * tokens (the a accepted and the target's own next token): c += a + 1,
 * g += a + 1, all sampled at the step's end. So with alpha = 1 a request
 * makes K + 1 tokens a step, with alpha = 0 one at the cost of draft and
 * verification; E[a + 1] = (1 - alpha^(K+1)) / (1 - alpha) when q = K + 1
 * (rf_spec_tokens_per_iter).
 * ITL under speculation: one value a step that makes tokens for the
 * request (the gap since its previous tokens), as a streaming benchmark
 * sees a burst of tokens arrive together; TPOT as above.
 * Differences from rf_serve_spec_compute and rf_spec_compute (generate
 * --draft): those verify K + 1 tokens after S cached, S the context of
 * the sequence's plain decode token (c + 1: one key a query more than the
 * positions the verification reads); the simulator verifies after the c
 * positions actually cached. Their iteration is the mean over every
 * context S; the simulator's steps visit the contexts its accepted tokens
 * reach. Not modelled: a shared prefix with speculation's draft cache
 * (the draft prefills the chunks the target computes), the draft's KV in
 * the pool (the target's blocks only), disaggregated runs and the planner
 * (both refuse spec_k > 0). */

#define RF_SIM_MAX_REPLICAS 4096

/* Data parallelism (replicas D > 1): request r goes to replica r mod D
 * (round robin, as SGLang's default load balancer; it does not look at the
 * replicas' load). In the closed loop client c is pinned to replica
 * c mod D (C >= D, so every replica has a client) and sends its next
 * request there. Each replica schedules as above on its own pool; the
 * replicas of a lockstep group share one clock, each step's time the group
 * step model's over all their batches (attention data parallel with the
 * experts of one expert-parallel group over the same devices: a MoE layer
 * waits for every rank). Groups share nothing and run one after another on
 * their own clocks. kv_util_mean is over D pools; kv_peak_blocks and
 * peak_running are one replica's most. steps counts group steps. */

/* The KV pool in blocks from memory, rf_capacity_compute's pool:
 *     blocks = floor(floor(pool / kv_tok) / b)
 * (kv_tok over every layer at full context, so a sliding model's pool is
 * undercounted). Errors: RF_EINVAL for b < 1, weights that leave no pool;
 * those of rf_capacity_compute. */
rf_status rf_sim_pool_blocks(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes,
                             double util, uint64_t reserve_bytes, int64_t block_tokens,
                             int64_t *blocks, rf_err *err);

/* ---- results ------------------------------------------------------------ */

typedef struct rf_sim_stat {
    int64_t n; /* values                                */
    double mean, p50, p90, p99, max;
    double pq; /* at rf_sim_sched.percentile            */
} rf_sim_stat;

typedef struct rf_sim_result {
    int64_t requests;                     /* completed (every one)                 */
    int64_t steps;                        /* steps run                             */
    int64_t log_entries;                  /* ITL log entries the run needs         */
    int64_t output_tokens, prompt_tokens; /* requested (recompute excluded) */
    int64_t recompute_tokens;             /* prefilled again after preemption      */
    double duration_s;
    rf_sim_stat ttft_s, tpot_s, itl_s, e2e_s, queue_s;
    double requests_per_s, output_tokens_per_s;
    int64_t good_requests; /* meeting both SLOs                     */
    double goodput_requests_per_s;
    double kv_util_mean;
    int64_t kv_peak_blocks, pool_blocks, prefix_blocks;
    int64_t preemptions;
    int64_t peak_running;          /* most requests running at once         */
    double mean_step_tokens;       /* tokens a step, mean over steps        */
    int64_t spec_verifies;         /* verifications (q >= 2) run            */
    int64_t spec_accepted;         /* proposals they accepted               */
    double spec_tokens_per_verify; /* (accepted + verifies) / verifies: the
                                     tokens a verification made, mean      */
    double in_system_mean;         /* time-average requests in system       */
    double queue_growth_per_s;     /* the overload test's slope (open loop) */
    bool overloaded;
} rf_sim_result;

/* ---- running it --------------------------------------------------------- */

/* Bytes of the workspace a run of this workload and engine needs, its
 * ITL log holding at most max_log entries (one a step that samples decode
 * tokens at the step's time, plus one a gap that is not a step's time:
 * across a preemption or a step that skipped the request). Errors: those
 * of rf_sim_run's checks; RF_ERANGE for max_log < 1 or a workspace beyond
 * the address space. */
rf_status rf_sim_workspace_bytes(const rf_sim_workload *w, const rf_sim_sched *s, int64_t max_log,
                                 size_t *bytes, rf_err *err);

/* A first max_log: 2 n (mean output + 2) / max_seqs + 2 n + 1024, at most
 * 2^26. A run that needs more says so (rf_sim_run's RF_ERANGE). */
int64_t rf_sim_log_hint(const rf_sim_workload *w, const rf_sim_sched *s);

/* Run the simulation. work (8-byte aligned, work_bytes from
 * rf_sim_workspace_bytes with max_log) is the only memory used; step
 * (with user) gives each step's time (rf_sim_floor_step with an
 * rf_sim_floor for the floor).
 * Errors (RF_EINVAL, naming the input): a workload or engine value out of
 * range (a rate of 0 or less, a cv of 0 or less, a trace going back in
 * time or with a length below 1, lo > hi, ...); a request that cannot fit
 * the pool even alone ("request 3: prompt 9000 + output 8000 - 1 positions
 * need 1063 blocks of 16 tokens; the pool has 1000 (0 for the shared
 * prefix)"); without chunking, a prompt above the budget. RF_ERANGE when
 * the ITL log needs more than max_log entries: out->log_entries then holds
 * what it needs, and the same call with that max_log succeeds. Errors of the
 * step model end the run with their message prefixed by the step. */
rf_status rf_sim_run(const rf_sim_workload *w, const rf_sim_sched *s, rf_sim_step_fn step,
                     void *user, void *work, size_t work_bytes, int64_t max_log, rf_sim_result *out,
                     rf_err *err);

/* The same with a group step model (lockstep g > 1 needs it; rf_sim_run
 * refuses lockstep > 1). */
rf_status rf_sim_run_group(const rf_sim_workload *w, const rf_sim_sched *s, rf_sim_group_fn step,
                           void *user, void *work, size_t work_bytes, int64_t max_log,
                           rf_sim_result *out, rf_err *err);

/* The nearest-rank percentile of v[0..n-1] sorted ascending (n >= 1, p in
 * (0, 100]): v[ceil(p n / 100) - 1], the index at least 0. */
double rf_sim_percentile(const double *sorted, int64_t n, double p);

/* ---- disaggregated prefill and decode -----------------------------------
 * P prefill workers and D decode workers, each side its own engine (its
 * schedule, and its step model: rf_sim_par_step on its layout, or any):
 *   1. the prefill workers run every request as a prompt and one token
 *      (output 1; round robin over P x the engine's replicas): its TTFT
 *      there, queueing included;
 *   2. the prompt's KV crosses the link: bytes = kv_seq(P_r) of the whole
 *      model (rf_model_kv_bytes in the cache dtype), time = bytes / bw +
 *      latency;
 *   3. the decode workers receive each request of N_r >= 2 tokens when its
 *      KV lands (a trace in that order, prefilled: c = P_r, g = 1; its
 *      blocks taken at admission, round robin over D x replicas) and
 *      decode its N_r - 1 tokens.
 *   TTFT = prefill queueing + prefill + transfer; TPOT = the decode side's
 *   (end - the KV landing) / (N - 1), the wait for a decode slot included;
 *   E2E = TTFT + that; duration = the last end; goodput as rf_sim_result's.
 * overloaded: either side's flag. */
typedef struct rf_sim_disagg {
    int64_t prefill_workers, decode_workers; /* P, D >= 1                  */
    rf_sim_sched prefill, decode;            /* one worker's engine each (replicas and
                                     lockstep its layout's)               */
    const rf_model *model;                   /* the KV a prompt holds                 */
    rf_dtype kv;
    double link_bw_bytes_per_s, link_latency_s;
    double slo_ttft_s, slo_tpot_s; /* goodput targets (0: none)            */
    double percentile;             /* of the stats' pq (0: 99)             */
} rf_sim_disagg;

typedef struct rf_sim_disagg_result {
    rf_sim_result prefill, decode; /* each side's own run                  */
    int64_t requests;
    rf_sim_stat ttft_s, tpot_s, e2e_s, transfer_s;
    double transfer_bytes_mean;
    double duration_s, requests_per_s, output_tokens_per_s;
    int64_t good_requests;
    double goodput_requests_per_s;
    bool overloaded;
} rf_sim_disagg_result;

/* Bytes of the workspace (either side's run plus the requests' arrays).
 * Errors: "disagg P:D: each side needs at least one worker" for 0 on a
 * side, a link bandwidth <= 0 or latency < 0, a closed loop, those of the
 * workload and schedules. */
rf_status rf_sim_disagg_workspace_bytes(const rf_sim_workload *w, const rf_sim_disagg *d,
                                        int64_t max_log, size_t *bytes, rf_err *err);

/* Run both sides. Errors: those above, each side's run's, prefixed
 * "prefill workers" or "decode workers". */
rf_status rf_sim_disagg_run(const rf_sim_workload *w, const rf_sim_disagg *d,
                            rf_sim_group_fn prefill_step, void *prefill_user,
                            rf_sim_group_fn decode_step, void *decode_user, void *work,
                            size_t work_bytes, int64_t max_log, rf_sim_disagg_result *out,
                            rf_err *err);

/* ---- planning: SLOs on the simulator ------------------------------------
 * Given a model, a device, a workload (Poisson or gamma at a rate, or a
 * closed loop at a concurrency for (a); the length distributions, n
 * requests, the seed) and SLOs on TTFT and TPOT at a percentile q
 * (rf_sim_stat.pq: nearest rank):
 *   (a) devices 0, a rate R (or a concurrency C: layouts of more than C
 *       replicas are pruned, a row's rate is the run's requests/s): the
 *       fewest devices whose layout meets both SLOs, with its concurrency
 *       cap (max_seqs a replica);
 *   (b) devices N: for each layout of N devices the highest rate that
 *       meets them.
 * Layouts: rf_plan_compute's (powers of two T, P, D up to max_devices; on
 * a MoE model E = 1 and E = T g for g = 1, 2, 4 ... D), each that
 * rf_layout_validate accepts. For each, in order of devices:
 *   1. the pool (rf_sim_par_pool_blocks): weights that leave no block
 *      prune it;
 *   2. bounds no rate improves on (the layout's step model, the other
 *      replicas of its lockstep group idle): TTFT >= the prefill of the
 *      shortest prompt alone, chunk by chunk; TPOT >= one decode token at
 *      the shortest prompt + 1 keys. A bound above its SLO prunes it (no
 *      simulation: it misses at every rate);
 *   3. (a) simulated at R with max_seqs from sched.max_seqs down by halves
 *      while only TPOT misses (a smaller batch decodes faster, a longer
 *      queue only raises TTFT): the first cap that meets; meets = P_q TTFT
 *      <= slo_ttft, P_q TPOT <= slo_tpot and not overloaded.
 *      (b) the cap: sched.max_seqs down by halves until a closed loop at
 *      cap x D clients (the most the replicas hold) meets the TPOT SLO;
 *      its throughput X bounds the rate; then bisect_steps (0: 8) halvings
 *      of (0, X] (X itself first), keeping the highest rate that meets.
 * (a) stops after the first device count with a layout that meets, unless
 * `every` (then every layout is evaluated: the whole table).
 * Disaggregated (disagg, (a) only): for every layout, both sides on it
 * (W = max_devices / its devices workers, at most RF_SIM_PLAN_WORKERS),
 * pruned by memory and by the bounds (TTFT's plus the shortest prompt's
 * transfer); then the fewest prefill workers P whose P_q TTFT meets with
 * their side not overloaded (D = W - P: TTFT does not depend on D), then
 * the fewest decode workers D (1 .. W - P) that meet both: one row a
 * layout, devices (P + D) x the layout's, in the same table as the
 * aggregated rows. The KV link: kv_link_* or the scale-out link.
 * Rows, best first: those that meet, (a) by devices then cost, (b) by rate
 * then cost; then the others by devices, each saying why it misses.
 * cost a million output tokens = rf_cost_per_mtok(price, devices, output
 * tokens/s of the run). */
#define RF_SIM_PLAN_MAX 256
#define RF_SIM_PLAN_GROUP 64   /* the widest expert group (E / T)       */
#define RF_SIM_PLAN_WORKERS 32 /* disaggregated: workers in all, at most */

typedef struct rf_sim_plan_opts {
    rf_par_opts par;          /* links, util, reserve, memory (layout
                                     ignored)                              */
    int64_t max_devices;      /* (a): layouts up to this many devices  */
    int64_t devices;          /* (b): exactly this many; 0: (a)        */
    rf_sim_workload workload; /* open loop; rate_per_s for (a)         */
    rf_sim_sched sched;       /* T, chunk, block, max_seqs (the largest
                                     cap); the pool, replicas and lockstep
                                     are the layout's                      */
    double slo_ttft_s, slo_tpot_s;
    double percentile; /* q in (0, 100)                         */
    double price_per_device_hour;
    int64_t bisect_steps;                             /* (b): 0: 8                             */
    bool every;                                       /* (a): every device count, not only up
                                     to the fewest that meet               */
    bool disagg;                                      /* (a): also disaggregated candidates    */
    double kv_link_bw_bytes_per_s, kv_link_latency_s; /* their KV link (0:
                                     the scale-out link of par.links)      */
} rf_sim_plan_opts;

typedef struct rf_sim_plan_row {
    rf_layout layout;
    int64_t devices, max_seqs; /* the concurrency cap a replica         */
    double rate_per_s;         /* simulated (the highest that meets: b) */
    double ttft_s, tpot_s;     /* at the percentile                     */
    double goodput_per_s;      /* requests meeting both, a second       */
    double output_tokens_per_s, cost_per_mtok;
    double bound_ttft_s, bound_tpot_s; /* the analytic floors (step 2)     */
    bool meets, pruned, overloaded;
    const char *why;                         /* static text when it does not meet     */
    int64_t prefill_workers, decode_workers; /* disaggregated; 0: not      */
} rf_sim_plan_row;

typedef struct rf_sim_plan {
    rf_sim_plan_row rows[RF_SIM_PLAN_MAX];
    size_t n_rows;
    size_t n_layouts, n_pruned, n_sims;
    int64_t best_devices; /* (a): the fewest that meet; 0: none    */
    rf_layout layouts[RF_SIM_PLAN_MAX];
    rf_sim_par par; /* scratch (large: heap or static)       */
} rf_sim_plan;

/* Bytes of the workspace rf_sim_plan_compute needs (scratch: an
 * rf_sim_plan used to count). Errors: the option checks below. */
rf_status rf_sim_plan_work_bytes(const rf_model *m, const rf_sim_plan_opts *po,
                                 rf_sim_plan *scratch, size_t *bytes, rf_err *err);

/* Errors (RF_EINVAL, naming the input): slo-ttft or slo-tpot <= 0,
 * percentile outside (0, 100), a trace workload, a closed loop with
 * devices or disagg, rate <= 0 (open loop), a gamma cv <= 0, disagg with
 * devices given, max-devices or devices out of range, a negative
 * price; a workspace too small; those of the simulation, prefixed by the
 * layout. */
rf_status rf_sim_plan_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                              const rf_sim_plan_opts *po, void *work, size_t work_bytes,
                              rf_sim_plan *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
