/* rf_gpu.h - GPU predictions from measured kernel tables (aiconfigurator's
 * silicon database format: data/gpu/README.md, docs/gpu-predict.md).
 *
 * A table is one CSV of measured points of one kind of kernel on one GPU
 * under one engine: its key columns (a shape, dtypes) and `latency` in
 * milliseconds. rf_gpu_tables_load (rf_gpu_io.h) reads a directory of
 * them; everything here is pure (gpu_predict.c, gpu_step.c: core).
 *
 * How a figure is predicted. Every row gets a floor from its own shape,
 * floor = max(F / pi_dtype, Q / beta) on the GPU's roof (collectives: the
 * bytes on the wire over the scale-up link plus one hop), and keeps its
 * ratio r = latency / floor. A query with the same categorical keys (a
 * dtype, a collective's name) is predicted as
 *     t = r(q) x floor(q)
 * with ln r interpolated linearly in the natural log of each numeric key,
 * one key after another (the rows sorted by their keys: for the first key
 * the two measured values around the query's, then within each the next
 * key, and so on; a table need not be a full product grid). So a query on
 * a measured point returns its latency exactly (in range), one between
 * measured values interpolates (interpolated), and one outside a key's
 * measured values takes the nearest edge's ratio on its own floor
 * (extrapolated), that ratio never below 1, so an extrapolated figure is
 * never below its floor.
 *
 * Error band: each table's leave-one-out error, each row with two
 * neighbours along one numeric key (the rows equal in every other key)
 * predicted from them alone: |pred - t| / t, its median and 90th
 * percentile over every (row, key) so predicted.
 *
 * Units: seconds (the tables' milliseconds converted on reading), bytes,
 * FLOPs. */
#ifndef RF_GPU_H
#define RF_GPU_H

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

typedef enum rf_gpu_kind {
    RF_GPU_GEMM = 0,        /* gemm_perf.csv                                 */
    RF_GPU_ATTN_CONTEXT,    /* context_attention_perf.csv (prefill)          */
    RF_GPU_ATTN_GENERATION, /* generation_attention_perf.csv (decode)        */
    RF_GPU_MOE,             /* moe_perf.csv (one fused MoE layer)            */
    RF_GPU_ALLREDUCE,       /* custom_allreduce_perf.csv (the engine's own)  */
    RF_GPU_NCCL,            /* ../nccl/nccl_perf.csv (by op_name)            */
    RF_GPU_MLA_CONTEXT,     /* context_mla_perf.csv (MLA prefill attention)  */
    RF_GPU_MLA_GENERATION,  /* generation_mla_perf.csv (MLA decode)          */
    RF_GPU_KIND_COUNT
} rf_gpu_kind;

/* "gemm", "attn_context", "attn_generation", "moe", "allreduce", "nccl",
 * "mla_context", "mla_generation"; NULL outside the enum. */
const char *rf_gpu_kind_name(rf_gpu_kind k);
/* The table's file name relative to the engine's directory
 * ("gemm_perf.csv", ..., "../nccl/nccl_perf.csv"). */
const char *rf_gpu_kind_file(rf_gpu_kind k);

#define RF_GPU_MAX_KEYS 10
#define RF_GPU_MAX_CATS 16 /* distinct values of a categorical column */

/* One key column: numeric (interpolated in its log) or categorical
 * (matched exactly, its values interned). */
typedef struct rf_gpu_col {
    const char *name; /* the CSV header's name (static)            */
    bool categorical;
    size_t n_values; /* categorical: distinct values              */
    char values[RF_GPU_MAX_CATS][24];
} rf_gpu_col;

typedef struct rf_gpu_table {
    rf_gpu_kind kind;
    bool present;   /* read from a file                          */
    char path[512]; /* the file                                  */
    size_t n_keys;
    rf_gpu_col col[RF_GPU_MAX_KEYS];
    size_t n_rows;
    double *key;                /* (n_rows, n_keys), rows sorted by key;
                                  a categorical key holds its value's index */
    double *latency_s;          /* (n_rows)                                  */
    double *ln_ratio;           /* (n_rows) ln(latency / floor)              */
    int64_t *line;              /* (n_rows) the row's line in the file       */
    double loo_median, loo_p90; /* leave-one-out |pred - t| / t              */
    size_t loo_n;               /* (row, key) pairs predicted                */
} rf_gpu_table;

/* An engine's tables and the roof their floors are taken on. */
typedef struct rf_gpu_tables {
    char dir[512];    /* the engine's directory                    */
    char backend[16]; /* "vllm", "trtllm", "sglang" (the dir name) */
    rf_hw hw;         /* the GPU: peaks per dtype, bandwidth, links */
    rf_gpu_table t[RF_GPU_KIND_COUNT];
} rf_gpu_tables;

/* The key columns of kind k, categorical first, the size axis last; a
 * reader needs each of these columns (others are ignored). */
size_t rf_gpu_kind_cols(rf_gpu_kind k, rf_gpu_col *cols);

/* ---- core (gpu_predict.c) ------------------------------------------------ */

/* Sort the rows, check them (a repeated point: RF_EINVAL naming both
 * lines), compute each row's floor and ratio on t's hw, and the table's
 * leave-one-out error (scratch: n_keys x n_rows doubles, n_keys >= 2: the
 * sort's two row orders, then the errors). Called by the
 * reader; a test building a table in memory calls it too. */
rf_status rf_gpu_table_prepare(rf_gpu_table *tab, const rf_hw *hw, double *scratch, rf_err *err);

/* The floor of one row (its keys, categorical ones as indices) on hw. */
double rf_gpu_row_floor_s(const rf_gpu_table *tab, const rf_hw *hw, const double *key);

typedef enum rf_gpu_how {
    RF_GPU_IN_RANGE = 0, /* every key on a measured value               */
    RF_GPU_INTERPOLATED, /* some key between measured values            */
    RF_GPU_EXTRAPOLATED, /* some key outside them: the edge's ratio     */
    RF_GPU_NO_TABLE      /* no table (or no rows of these categorical
                                keys): on the floor, ratio 1                */
} rf_gpu_how;

/* "in range", "interpolated", "extrapolated", "floor (no table)". */
const char *rf_gpu_how_name(rf_gpu_how h);

/* A prediction and where it came from. */
typedef struct rf_gpu_pred {
    double time_s;  /* r x floor_s                               */
    double floor_s; /* the kind's floor at the query             */
    double ratio;   /* r                                         */
    rf_gpu_how how;
    const rf_gpu_table *table; /* NULL for RF_GPU_NO_TABLE                  */
    double band;               /* the table's loo_median (0 without one)    */
} rf_gpu_pred;

/* Predict kind k at keys q (categorical ones as strings in cat[i] for key
 * i, numeric ones in q[i]; cat may be NULL when k has none). A kind
 * without a table, or a categorical value it has no rows of, is predicted
 * on its floor (RF_GPU_NO_TABLE). RF_EINVAL for a numeric key below 1. */
rf_status rf_gpu_predict(const rf_gpu_tables *g, rf_gpu_kind k, const double *q,
                         const char *const *cat, rf_gpu_pred *out, rf_err *err);
/* The same with the query's floor taken after `prefix` cached positions
 * (context attention: a chunk after a prefix scores q prefix + q (q + 1) /
 * 2 pairs; the tables' rows have none, so the ratio is the isl's). */
rf_status rf_gpu_predict_at(const rf_gpu_tables *g, rf_gpu_kind k, const double *q,
                            const char *const *cat, double prefix, rf_gpu_pred *out, rf_err *err);

/* ---- operators, steps and layouts ------------------------------------------ */

/* The engines' quantization names (`--quant`): fp8 and fp8_block W8A8 fp8
 * (the GEMM tables' fp8 and fp8_block rows), nvfp4 (fp4 weights and
 * activations, nvfp4 dtype), mxfp4 and int4_wo weight-only with bf16
 * activations (w4a16_mxfp4 and int4_wo MoE rows). Sets the weight and
 * activation dtypes and the tables' dtype name; RF_EINVAL naming an
 * unknown one. */
typedef struct rf_gpu_quant {
    const char *name; /* as given                                  */
    rf_dtype w, a;
    const char *gemm_dtype; /* gemm_perf's gemm_dtype                    */
    const char *moe_dtype;  /* moe_perf's moe_dtype                      */
} rf_gpu_quant;
rf_status rf_gpu_quant_of(const char *name, rf_gpu_quant *out, rf_err *err);

/* The context of a step's operators: the model a device runs (a TP shard's
 * heads), the whole model and layout (an MoE layer's experts and its
 * moe_tp x moe_ep), the step's options (batch, tokens; dtypes). quant may
 * be NULL: the dtypes' own names (bf16 -> bfloat16, fp8 -> fp8). */
typedef struct rf_gpu_ctx {
    const rf_gpu_tables *g;
    const rf_model *shard; /* heads, KV heads after TP                   */
    const rf_model *model; /* the whole model                            */
    rf_layout layout;
    const rf_step_opts *opts;
    const rf_gpu_quant *quant;
} rf_gpu_ctx;

/* The MLA tables' shape (DeepSeek-V3's, which every MLA row measures): a
 * latent of 512 and a shared rotary key of 64 cached a token; decode
 * absorbs the up-projections (each head scores 576-wide keys and sums
 * 512-wide values), prefill expands them (q and k 128 + 64 a head, v
 * 128). An MLA model of other widths is predicted on its floor
 * (RF_GPU_NEED_MLA). */
#define RF_GPU_MLA_LATENT 512
#define RF_GPU_MLA_ROPE 64
#define RF_GPU_MLA_NOPE 128
#define RF_GPU_MLA_V 128
/* Whether m's MLA has the tables' widths. */
bool rf_gpu_mla_shape(const rf_model *m);

/* What a step needs beyond the kinds (rf_gpu_step_pred.missing's bits
 * above the kinds' 1 << k): operators these tables hold no measurement of,
 * predicted on their own floor (RF_GPU_NO_TABLE) and named in a warning. */
#define RF_GPU_NEED_P2P                                                                            \
    (1u << RF_GPU_KIND_COUNT) /* a pipeline send: nccl_perf
                                                              has no point-to-point rows */
#define RF_GPU_NEED_MLA                                                                            \
    (1u << (RF_GPU_KIND_COUNT + 1)) /* MLA attention of widths
                                                              the MLA tables do not
                                                              measure                    */
#define RF_GPU_NEED_LINEAR                                                                         \
    (1u << (RF_GPU_KIND_COUNT + 2))               /* a linear-attention or state
                                                              space mixer's conv and
                                                              recurrence (gdn_perf not
                                                              read; Mamba2: none)        */
#define RF_GPU_NEED_COUNT (RF_GPU_KIND_COUNT + 3) /* bits in all                */
/* The bit b's (0 .. RF_GPU_NEED_COUNT - 1) name, "gemm" ... "nccl", "p2p",
 * "mla", "linear_attention", and the table or kernel it names. */
const char *rf_gpu_need_name(int b);
const char *rf_gpu_need_what(int b);

/* A step predicted: each operator one instance, and where it came from.
 * Routed-expert rows (rf_op.experts > 0) of a layer are one fused MoE
 * kernel (moe_perf): the layer is predicted once and each of its rows
 * gets the share of its floor. Element-wise rows and the embedding gather
 * have no table: on their floor (RF_GPU_NO_TABLE). */
typedef struct rf_gpu_step_pred {
    rf_gpu_pred op[RF_STEP_MAX_OPS];
    rf_gpu_pred coll[RF_PAR_MAX_COLL];
    size_t n_coll;
    double ops_s;     /* sum count_i x op[i].time_s                */
    double coll_s;    /* sum count_j x coll[j].time_s              */
    double time_s;    /* ops_s + coll_s                            */
    double band;      /* time-weighted mean of the parts' bands    */
    size_t n_how[4];  /* rows by rf_gpu_how                        */
    unsigned missing; /* bit k: kind k needed without a table; the
                                  RF_GPU_NEED_* bits                         */
} rf_gpu_step_pred;

/* Predict the operators of st (one device of the layout: rf_par's stage
 * step, or rf_step_compute's on one device) and the collectives coll[0 ..
 * n_coll - 1] (rf_par_stage's; NULL, 0 on one device): all-reduces from
 * custom_allreduce_perf (nccl_perf's all_reduce without it), all-gathers
 * and all-to-alls from nccl_perf; a pipeline's pp_send on its floor
 * (RF_GPU_NEED_P2P). MLA's attention (c->model->kv_lora_rank > 0) from
 * context_mla_perf and generation_mla_perf (its own floor, RF_GPU_NEED_MLA,
 * where the model's widths are not the tables'); a mixer's conv and
 * recurrence (gdn_*, mamba_*) on its own floor (RF_GPU_NEED_LINEAR).
 * Errors of rf_gpu_predict. */
rf_status rf_gpu_predict_step(const rf_gpu_ctx *c, const rf_step *st, const rf_coll *coll,
                              size_t n_coll, rf_gpu_step_pred *out, rf_err *err);

/* A layout's step predicted as rf_par combines its floors: every stage of
 * par (rf_par_compute's of a replica's step o, o->batch sequences) on its
 * own operators (rf_par_stage_holds) and collectives, its send apart:
 *     latency = sum_s stage_s + sum_s send_s
 *     cycle = max(latency, micro_batches x max_s stage_s)
 *     tokens/s = D B T / cycle (T: o's tokens in prefill, else 1)
 * work: scratch (large: heap). Errors of rf_gpu_predict_step. */
typedef struct rf_gpu_par_work {
    rf_gpu_step_pred pred; /* one stage's                               */
    rf_step step;          /* its operators                             */
} rf_gpu_par_work;
typedef struct rf_gpu_par_pred {
    double stage_s[RF_PAR_MAX_STAGES]; /* ops + collectives, the send apart  */
    double send_s;                     /* the sends of one micro-batch, summed      */
    size_t slowest;
    double token_latency_s, cycle_s, tokens_per_s, tokens_per_s_device;
    double band;      /* time-weighted over the stages and sends   */
    size_t n_how[4];  /* rows by rf_gpu_how, every stage           */
    unsigned missing; /* as rf_gpu_step_pred's                     */
} rf_gpu_par_pred;
rf_status rf_gpu_predict_par(const rf_gpu_tables *g, const rf_gpu_quant *quant, const rf_model *m,
                             const rf_step_opts *o, const rf_par *par, rf_gpu_par_work *work,
                             rf_gpu_par_pred *out, rf_err *err);

/* rf_plan_compute's rows (plan, of a replica step o: each row's replica
 * serves ceil(B / D) of o->batch) predicted, preds[i] row i's, and both
 * re-ranked by obj on the predicted figures as rf_plan ranks its floors
 * (cost: fewest devices, then predicted tokens/s a device; latency: the
 * predicted token latency; throughput: predicted tokens/s). plan->scratch
 * holds each row's rf_par in turn. Errors of rf_par_compute and
 * rf_gpu_predict_par. */
rf_status rf_gpu_predict_plan(const rf_gpu_tables *g, const rf_gpu_quant *quant, const rf_model *m,
                              const rf_step_opts *o, const rf_roof *roof, const rf_par_opts *po,
                              rf_objective obj, rf_plan *plan, rf_gpu_par_pred *preds,
                              rf_gpu_par_work *work, rf_err *err);

/* ---- the serving simulator's step model (gpu_sim.c) ----------------------
 * A step of batch b (rf_sim.h) on one device of the layout, predicted:
 *     t = lin(M) + head(L) + n_a x gen(B_d, S_mean) + sum_j n_a x ctx(t_j, o_j)
 * lin(M) the operators but attention and lm_head of a device's step at M
 * = b->tokens rows and its collectives (rf_par_compute's at M rows), each
 * predicted (rf_gpu_predict_step), tabled by M on first use; head(L)
 * lm_head at the L = rf_sim_batch_logits rows; gen the decode attention of
 * the B_d decode tokens at their mean context (decode attention is linear
 * in the keys: the mean's time is the batch's, to the table's
 * interpolation), ctx each prompt chunk's attention of t_j tokens after
 * o_j cached; n_a the attention layers (sliding ones at their window's
 * keys). A group of replicas in lockstep takes the slowest one's step.
 * Softmax attention layers only (a hybrid's mixers are in lin, on their
 * floor); a layer's local window caps its keys. MLA's attention from the
 * MLA tables (every layer; rf_gpu_mla_shape), else the floor of the
 * model's own attention rows at that batch and context (rf_step_compute
 * on the stage's shard; RF_GPU_NEED_MLA).
 * Pipeline stages (P > 1): a replica's batch in min(P, items) micro-batches
 * round robin (decode tokens, then chunks), as the floors' layout model
 * (rf_sim_par): each micro-batch through every stage (lin_s, attention of
 * the stage's layers, lm_head on the last) and its sends (pp_send on its
 * floor, RF_GPU_NEED_P2P); the step max(the slowest micro-batch's latency,
 * the busiest stage's time). One run at a time. */
typedef struct rf_gpu_sim {
    const rf_gpu_tables *g;
    const rf_gpu_quant *quant; /* NULL: the dtypes' own names            */
    rf_model model, shard;
    rf_step_opts opts;
    rf_roof roof;
    rf_par_opts po;
    int64_t max_tokens, max_logits;
    int64_t pp; /* stages                                 */
    int64_t n_full[RF_PAR_MAX_STAGES], n_sliding[RF_PAR_MAX_STAGES]; /* softmax
                                      attention layers of a stage's device   */
    int64_t window;  /* the local layers' keys (window or chunk) */
    bool mla;        /* MLA attention                          */
    bool mla_tables; /* ... of the MLA tables' widths          */
    double *lin;     /* (pp, max_tokens + 1) by stage, M; < 0:
                                      not yet                                */
    double *send;    /* (pp, max_tokens + 1): stage s's send   */
    double *head;    /* (max_logits + 1) by L; < 0: not yet    */
    rf_op head_op;   /* lm_head's shape on a device            */
    bool has_head;
    rf_step scratch;
    rf_gpu_step_pred pred; /* scratch                                */
    rf_par par;            /* rf_par_compute's (large)               */
    unsigned missing;      /* kinds met without a table (bits)       */
    double time_s, band_s; /* the parts predicted (each shape once):
                                      seconds, and seconds x their band      */
    size_t steps_computed;
} rf_gpu_sim;

/* Doubles of table rf_gpu_sim_prepare needs for pp stages. */
size_t rf_gpu_sim_table_len(int64_t pp, int64_t max_tokens, int64_t max_logits);

/* Prepare s (heap: it holds an rf_par) over table (outliving s). po: the
 * layout and links (rf_par_compute's). Errors: those of
 * rf_layout_validate and rf_par_compute, a table too small. */
rf_status rf_gpu_sim_prepare(rf_gpu_sim *s, const rf_gpu_tables *g, const rf_gpu_quant *quant,
                             const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                             const rf_par_opts *po, int64_t max_tokens, int64_t max_logits,
                             double *table, size_t table_len, rf_err *err);

/* rf_sim_group_fn: user an rf_gpu_sim; n batches each on its replica, the
 * step the slowest. RF_ERANGE for a batch beyond the prepared sizes. */
struct rf_sim_batch;
rf_status rf_gpu_sim_group(void *user, const struct rf_sim_batch *b, int64_t n, double *step_s,
                           rf_err *err);

/* A static batch of B requests of P prompt and N output tokens, as
 * rf_generate sums its floors, each step predicted as rf_gpu_sim_group
 * predicts one:
 *     TTFT = lin(B P) + head(B) + ctx(B sequences of P tokens)
 *     decode = sum_{S = P+1}^{P+N-1} [lin(B) + head(B) + gen(B, S)]
 *     TPOT = decode / (N - 1), latency = TTFT + decode
 * s prepared with max_tokens >= B P and max_logits >= B (else RF_ERANGE). */
typedef struct rf_gpu_generate {
    double ttft_s, decode_s;
    double tpot_mean_s, tpot_first_s, tpot_last_s; /* 0 when N = 1       */
    double latency_s, tokens_per_s;                /* B N / latency      */
} rf_gpu_generate;
rf_status rf_gpu_sim_generate(rf_gpu_sim *s, int64_t batch, int64_t prompt, int64_t output,
                              rf_gpu_generate *out, rf_err *err);

/* rf_frontier_compute's batches B = 1..n predicted: out[i] holds B = i + 1
 * and rf_gpu_sim_generate's TTFT, TPOT mean, latency and tokens/s (kv_bytes
 * 0), both Pareto fronts marked on them by rf_frontier_compute's rule. s
 * prepared with max_tokens >= n P and max_logits >= n. */
struct rf_frontier_point;
rf_status rf_gpu_sim_frontier(rf_gpu_sim *s, int64_t prompt, int64_t output,
                              struct rf_frontier_point *out, size_t n, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
