/* rf_step.h - whole prefill and decode steps, crossing points, KV capacity.
 *
 * A decode step (docs/accounting.md): B sequences, each at context s, one new
 * token each. Every linear layer runs with M = B and its weights are read
 * once per step. KV bytes per token kv_tok = 2 L n_kv d_h b_kv.
 *     total_bytes = weight_bytes + kv_bytes (+ naive score bytes if asked);
 *                   under RF_TRAFFIC_FULL the sum of every operator's bytes
 *     kv_bytes    = B s kv_tok
 *     floor_s     = max(flops / pi, total_bytes / beta)
 *     tokens/s    = B / floor_s
 * A prefill step: B sequences of T new tokens after s cached ones; every
 * linear layer runs with M = B T; attention reads s + T keys per sequence.
 *
 * Byte-weighted intensity = sum F / sum Q over all operators (Q of a GEMM
 * includes its activation traffic). Composition: sum_i max(F_i/pi, Q_i/beta)
 * is a tighter floor than max(sum F / pi, sum Q / beta); both are reported.
 * Blended intensity limit as B -> infinity at context s:
 *     (2 P_stream + 4 n_q s d_h L) / (s kv_tok)
 * (generally: FLOPs per sequence over KV bytes per sequence).
 * Throughput cap at context s: beta / (s kv_tok) tokens/s, whatever B.
 *
 * Architectures (docs/models.md):
 *   MoE: per MoE layer a router H -> E (+1 for a shared-expert gate), the
 *     shared experts, and routed experts: FLOPs of all M k token-expert
 *     pairs; weights of touched = E (1 - (1 - k/E)^M) experts under uniform
 *     routing (every one with RF_MOE_ALL); each runs M k / touched rows.
 *   MLA decode, up-projections absorbed, per sequence and layer:
 *     F = 2 n_q S (r + rope) + 2 n_q S r,  Q = S (r + rope) b_kv;
 *   MLA prefill: kv_b_proj expands B (s + T) latents, then multi-head
 *     attention of q/k width nope + rope and v width v over the latent read.
 *   Sliding layers attend to min(S, window) keys; in prefill the T
 *     queries' windows together read min(S, window + T - 1) positions.
 *   Weights: each matrix in rf_model_module_dtype(m, its module, w,
 *     w_all_modules), so a quantized checkpoint keeps its unquantized modules
 *     (and, per layer, those unquantized_layer[l] names).
 *   Hybrid stacks (docs/accounting.md, "Hybrid stacks"): the layers are
 *     grouped into classes by mixer, attention locality and shape, FFN and
 *     per-layer quantization, each class's rows counted by its layers, in
 *     the order of a layer's stages; Gated DeltaNet, Mamba2, DSA's indexer
 *     and chunked attention are attention-kind rows whose cached traffic
 *     (state, conv window, index keys) is their kv_bytes (rf_op.h).
 */
#ifndef RF_STEP_H
#define RF_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_hw.h"
#include "rf_model.h"
#include "rf_op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_STEP_MAX_OPS 48

/* The attention operator of sliding-window layers (capped at the window). */
#define RF_OP_ATTN_SWA "attention_swa"

typedef enum rf_phase { RF_DECODE = 0, RF_PREFILL = 1 } rf_phase;

typedef enum rf_moe_routing {
    RF_MOE_UNIFORM = 0, /* expected experts touched under uniform routing  */
    RF_MOE_ALL          /* worst case: every expert streamed               */
} rf_moe_routing;

/* What the bytes count (docs/accounting.md, "Full traffic"):
 *   RF_TRAFFIC_COMPULSORY (default) the lesson's and the chapter's model:
 *     weights, the K/V read, each GEMM's X read and Y write; step bytes =
 *     weights + KV (+ scores).
 *   RF_TRAFFIC_FULL every kernel of the forward pass: the norms, RoPE, the
 *     KV write, the residual adds, the MLP activation, the biases a config
 *     has, the final norm, attention's Q read and O write (naive: qk,
 *     softmax, pv); step bytes = the sum of every operator's bytes. */
typedef enum rf_traffic { RF_TRAFFIC_COMPULSORY = 0, RF_TRAFFIC_FULL = 1 } rf_traffic;

typedef struct rf_step_opts {
    rf_phase phase;
    int64_t batch;         /* B sequences (>= 1)                            */
    int64_t context;       /* s: cached positions per sequence (>= 0)      */
    int64_t tokens;        /* T: new tokens per sequence in prefill        */
    rf_dtype w, a, kv;     /* b_w, b_a, b_kv                               */
    rf_dtype out;          /* b_y, what every GEMM writes, when has_out    */
    bool has_out;          /* false: rf_gemm_out_default(a), bf16 after an
                             fp8, int8 or fp4 input (rf_step_out_dtype)   */
    bool w_all_modules;    /* w for every module; false: modules the model's
                             quantization leaves out keep its unquantized
                             dtype (rf_model_module_dtype)                 */
    bool naive_attn;       /* materialize attention scores                 */
    bool causal;           /* prefill attention scores the causal triangle,
                             S (S + 1) / 2 pairs, not S^2 (rf_attn_pairs) */
    bool fused;            /* report qkv and gate_up as fused operators    */
    rf_moe_routing moe;    /* routed-expert assumption                     */
    rf_traffic traffic;    /* compulsory (default) or full                 */
    bool fuse_elementwise; /* full only: each norm takes x from the residual
                             add before it and hands y to the next GEMM's
                             read (no x read, no y write: Q = H b_w); an
                             error (RF_EINVAL) under compulsory            */
} rf_step_opts;

/* Family rules of the full traffic model: the MLP activation is GELU (tanh
 * form, RF_ACT_GELU_MUL_FLOPS) for the gemma families, SiLU otherwise
 * (RF_ACT_SILU_MUL_FLOPS); gemma2 and gemma3 also norm each branch's output
 * before its residual add (post_attn_norm, post_mlp_norm). */
bool rf_model_gelu(const rf_model *m);
bool rf_model_post_norms(const rf_model *m);

/* The dtype a step's GEMMs write: o->out when has_out, else
 * rf_gemm_out_default(o->a). */
rf_dtype rf_step_out_dtype(const rf_step_opts *o);

/* Defaults: decode, B = 1, s = 0, T = 1, bf16 everywhere, flash, unfused. */
rf_step_opts rf_step_opts_default(void);

/* The defaults with the dtypes a model's checkpoint declares: weights in
 * m->weight_dtype (split per module as the model says), activations in
 * m->act_dtype when it has one. */
rf_step_opts rf_step_opts_for_model(const rf_model *m);

/* Resident weight bytes under the dtypes of o: every parameter (a tied
 * embedding once), each module class in rf_model_module_dtype(m, mod, o->w,
 * o->w_all_modules), except the layers whose unquantized_layer[] names it
 * (the MTP layers' included), in unquantized_dtype unless o->w_all_modules.
 * Group scales are counted per module class total. */
rf_status rf_model_weight_bytes(const rf_model *m, const rf_step_opts *o, uint64_t *bytes,
                                rf_err *err);
/* The part of rf_model_weight_bytes of one module class (its rows sum to
 * it); *unquantized_params: the class's weights kept in unquantized_dtype
 * by layer (0 under o->w_all_modules; may be NULL). */
rf_status rf_model_module_bytes(const rf_model *m, const rf_step_opts *o, rf_module mod,
                                uint64_t *bytes, uint64_t *unquantized_params, rf_err *err);

typedef struct rf_step {
    rf_op ops[RF_STEP_MAX_OPS];
    size_t n_ops;
    rf_roof roof; /* the roof the floors use                */

    uint64_t weight_bytes;              /* matrix weights streamed once per step  */
    uint64_t kv_bytes;                  /* K and V (or latent) read               */
    uint64_t kv_bytes_per_token;        /* kv_tok over all layers (full context)  */
    uint64_t extra_bytes;               /* naive attention score traffic          */
    uint64_t total_bytes;               /* weight + kv + extra; full: op_bytes    */
    uint64_t op_bytes;                  /* sum of every operator's Q              */
    uint64_t flops;                     /* sum of every operator's F              */
    double intensity;                   /* flops / op_bytes (byte-weighted)       */
    double step_intensity;              /* flops / total_bytes                    */
    double floor_s;                     /* max(flops/pi, total_bytes/beta)        */
    double floor_sum_of_max_s;          /* sum_i count_i max(F_i/pi, Q_i/beta)    */
    double floor_aggregate_s;           /* max(sum F / pi, sum Q / beta) over ops */
    double tokens_per_s;                /* new tokens / floor_s                   */
    double blended_intensity_limit;     /* B -> inf at this context; 0 if s = 0 */
    double throughput_cap_tokens_per_s; /* beta / (s kv_tok); 0 if s = 0    */
    rf_regime regime;                   /* of the whole step (step_intensity)     */

    /* MoE: per MoE layer, routed experts touched and the tokens each sees */
    double experts_touched; /* 0 for dense models                     */
    double tokens_per_expert;
} rf_step;

/* Build the operator list and the totals. Errors: bad options (a batch of
 * 0, a negative context, tokens 0 in prefill), overflow (RF_ERANGE). */
rf_status rf_step_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                          rf_step *out, rf_err *err);

/* Which of the step's sizes an RF_ERANGE of rf_step_compute comes from, so
 * a caller can name the option its user typed: a bit for each of B, s and
 * T (prefill) that overflows on its own (the others at B = 1, s = 0,
 * T = 1); when none does alone, the bits of every size above those values
 * (their product overflows). 0 when the step computes. */
enum { RF_STEP_BATCH = 1, RF_STEP_CONTEXT = 2, RF_STEP_TOKENS = 4 };
unsigned rf_step_range_blame(const rf_model *m, const rf_step_opts *o, const rf_roof *roof);

/* Crossing points for every distinct linear operator of a model. */
typedef struct rf_cross {
    const char *name; /* static operator name                          */
    int64_t k, n;
    bool crosses;       /* false: never compute-bound at this ridge      */
    double m_star;      /* rows of the GEMM where I = I* (if crosses):
                           tokens in flight, or for a routed expert the
                           tokens that expert runs                       */
    bool expert;        /* a routed-expert GEMM                          */
    double tokens_star; /* tokens in flight that give m_star rows: m_star,
                           or for an expert rf_moe_tokens_for_rows       */
} rf_cross;

#define RF_CROSS_MAX 40

typedef struct rf_crossover {
    rf_cross ops[RF_CROSS_MAX];
    size_t n_ops;
    bool square_crosses; /* T* for the square d = hidden projection     */
    double square_t_star;
    rf_dtype square_w, square_a; /* a square projection's dtypes: the
                                    attention weights', the activations'  */
    double square_never_below_d; /* no square GEMM crosses for d <= I* b_a */
    double attn_prefill_s_star;  /* S* for prefill attention: I* b_kv /
                                   (2 g); MLA: I* (r + rope) b_kv /
                                   (2 n_q (nope + rope + v)); causal: twice
                                   that less one (rf_attn_causal_sstar)   */
    double ridge;
    rf_moe_routing moe; /* the routing tokens_star assumes        */
    bool causal;        /* attn_prefill_s_star of the triangle    */
} rf_crossover;

/* Tokens in flight M at which each streamed expert of a MoE layer runs
 * `rows` tokens: RF_MOE_ALL, rows = M k / E, so M = rows E / k; uniform,
 * rows = M k / touched(M) with touched = E (1 - (1 - k/E)^M) (at least k),
 * solved for M (about rows E / k once M k / E is a few tokens). */
double rf_moe_tokens_for_rows(const rf_model *m, rf_moe_routing moe, double rows);

rf_status rf_crossover_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                               rf_crossover *out, rf_err *err);

/* T* of a square d x d projection in cx's dtypes: rf_gemm_mstar(d, d, ...),
 * which is the book chapter's I* b d / (2 (d - I* b)) when b_w = b_a = b. False
 * ("never") for d <= cx->square_never_below_d. */
bool rf_crossover_square(const rf_crossover *cx, int64_t d, double *t_star);

/* A distinct GEMM shape of a step and the operators that have it. */
typedef struct rf_gemm_shape {
    int64_t k, n;
    char ops[96]; /* "q_proj,o_proj" (cut short if very long)    */
} rf_gemm_shape;

/* The step's GEMM shapes, de-duplicated by K x N in operator order; at
 * most cap (RF_STEP_MAX_OPS holds every one). Returns the count. */
size_t rf_step_gemm_shapes(const rf_step *st, rf_gemm_shape *out, size_t cap);

/* The memory a serving engine leaves for weights and KV (vLLM style):
 *     budget = util x usable_memory - reserve
 * and whether a batch fits it:
 *     needed = resident_weights + B (kv_seq(S) + state_seq)
 *     fits   = needed <= budget
 * kv_seq(S) = rf_model_kv_bytes(m, b_kv, S), the cache one sequence holds at
 * S positions (sliding layers capped at the window); S is what the step
 * leaves cached: s in decode, s + T in prefill. fits is capacity's
 * "sequences >= B" (pool = budget - weights), the same rule.              */
typedef struct rf_fit {
    double util;
    uint64_t mem_bytes;     /* usable memory                          */
    uint64_t reserve_bytes; /* activations and runtime                */
    double budget_bytes;    /* util x mem - reserve (may be negative) */
    uint64_t weight_bytes;  /* resident weights (every parameter)     */
    int64_t batch;          /* B (0: the weights alone)               */
    int64_t positions;      /* S a sequence holds                     */
    uint64_t kv_bytes;      /* B kv_seq(S)                            */
    uint64_t needed_bytes;  /* weights + kv                           */
    bool fits;              /* needed <= budget                       */
} rf_fit;

/* The budget and the resident weights; batch 0 (the weights alone, fits when
 * weights <= budget). RF_EINVAL for util outside (0, 1] or a memory of 0. */
rf_status rf_fit_prepare(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes, double util,
                         uint64_t reserve_bytes, rf_fit *out, rf_err *err);
/* The fit of B sequences at S positions each, on a prepared f (the sweep
 * calls it per point). RF_EINVAL for B or S out of [0, RF_DIM_MAX];
 * RF_ERANGE when the bytes overflow 64 bits. */
rf_status rf_fit_at(rf_fit *f, const rf_model *m, rf_dtype kv, int64_t batch, int64_t positions,
                    rf_err *err);
/* The positions each sequence of a step holds: s in decode, s + T in
 * prefill (the S of rf_step_fit and of rf_model_context_beyond). */
int64_t rf_step_positions(const rf_step_opts *o);

/* True when `positions` pass the model's max_context (its
 * max_position_embeddings); false when they do not or the limit is unknown
 * (max_context 0). Figures past it are still computed: the model was not
 * trained there, which a caller says. */
bool rf_model_context_beyond(const rf_model *m, int64_t positions);

/* Both for a step's options: B = o->batch, S as above. */
rf_status rf_step_fit(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes, double util,
                      uint64_t reserve_bytes, rf_fit *out, rf_err *err);

/* KV capacity, vLLM style, on rf_fit's budget:
 *     pool = util x usable_memory - resident_weights - reserve
 *     tokens = pool / kv_tok; sequences = pool / (kv_seq(context) + state_seq)
 * (state_seq: the constant GDN / Mamba2 state of a sequence, 0 for others)
 * Weights that leave no pool are an answer, not an error: weights_fit
 * false, tokens and sequences 0.                                          */
typedef struct rf_capacity {
    double util;
    uint64_t mem_bytes;
    uint64_t resident_bytes;
    uint64_t reserve_bytes;
    double pool_bytes; /* negative when the weights do not fit   */
    bool weights_fit;  /* pool_bytes > 0                         */
    uint64_t kv_bytes_per_token;
    uint64_t state_bytes_per_seq; /* GDN / Mamba2 state of one sequence
                                   (rf_model_state_bytes), 0 for others  */
    uint64_t tokens;              /* floor(pool / kv_tok); 0 without a pool
                                   or without attention layers           */
    int64_t context;              /* 0: no sequence count                   */
    double sequences;             /* pool / kv_seq(context) (fractional)    */
} rf_capacity;

rf_status rf_capacity_compute(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes,
                              double util, uint64_t reserve_bytes, int64_t context,
                              rf_capacity *out, rf_err *err);

/* KV bytes one sequence at context s holds, in dtype kv: over the
 * attention layers only, each of its own K/V width (rf_model_kv_elems_layer),
 * sliding layers capped at the window and chunked layers at the chunk;
 * with DSA, each attention layer's index keys in their own dtype
 * (rf_model_index_bytes_per_token) besides. */
rf_status rf_model_kv_bytes(const rf_model *m, rf_dtype kv, int64_t context, uint64_t *bytes,
                            rf_err *err);

/* What one sequence at context s holds: rf_model_kv_bytes plus its
 * constant recurrent state (rf_model_state_bytes). rf_fit_at, capacity's
 * sequences and serving's admission count this. */
rf_status rf_model_seq_bytes(const rf_model *m, rf_dtype kv, int64_t context, uint64_t *bytes,
                             rf_err *err);

/* Many decode steps of one batch size over many contexts, fast: the
 * context-free operators are totalled once; attention is linear in its keys
 * (capped at the window on sliding layers), so each point costs O(1).
 * Every point equals rf_step_compute's totals for the same inputs (tested);
 * where a grouped KV dtype makes bytes non-linear, it calls rf_step_compute. */
typedef struct rf_sweep_point {
    int64_t batch, context;
    uint64_t flops, total_bytes, kv_bytes;
    double intensity; /* flops / op_bytes, as rf_step.intensity */
    double floor_s, floor_sum_of_max_s, tokens_per_s;
    rf_regime regime;
} rf_sweep_point;

typedef struct rf_sweep {
    rf_model model;
    rf_step_opts opts;
    rf_roof roof;
    bool linear; /* false: evaluate with rf_step_compute */
    uint64_t flops0, op_bytes0, weight_bytes;
    double sum_of_max0;
    bool full; /* RF_TRAFFIC_FULL: bytes = op bytes  */
    size_t n_attn;
    /* Each attention row is affine in its keys k = min(S, window): a value
     * is at0 + k at (per layer); under the compulsory model at0 = 0, under
     * the full one at0 holds the Q read and the O write. */
    struct rf_sweep_attn {
        uint64_t count;                                   /* layers                              */
        int64_t window;                                   /* 0: every key                        */
        uint64_t flops, bytes, kv_bytes, extra_bytes;     /* per key, per layer  */
        uint64_t flops0, bytes0, kv_bytes0, extra_bytes0; /* at no key       */
    } attn[8];
    rf_step scratch; /* for the non-linear path             */
} rf_sweep;

rf_status rf_sweep_prepare(rf_sweep *sw, const rf_model *m, const rf_step_opts *o,
                           const rf_roof *roof, rf_err *err);
rf_status rf_sweep_eval(rf_sweep *sw, int64_t context, rf_sweep_point *p, rf_err *err);

/* The book chapter's composition example (3 ms + 4 ms), generalised: n
 * sequential kernels of F_i FLOPs over Q_i bytes. sum_of_max = sum_i
 * max(F_i/pi, Q_i/beta); aggregate = max(sum F / pi, sum Q / beta). */
void rf_roof_compose(const rf_roof *roof, const double *flops, const double *bytes, size_t n,
                     double *sum_of_max_s, double *aggregate_s);

#ifdef __cplusplus
}
#endif
#endif
