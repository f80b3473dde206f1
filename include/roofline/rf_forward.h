/* rf_forward.h - a real forward pass of a dense decoder on the CPU, every
 * operator timed and set beside its floor on a measured roofline.
 *
 * The book chapter: "profile first, then identify the limiting resource";
 * time the step, divide it by its derived floor, and read the residual as
 * the budget for launch overhead, scheduling and bad kernels. This module runs the
 * step for real, in fp32, with random weights of the model's exact shapes:
 *
 *   embed        one row per token gathered from the (V, H) head matrix
 *   per layer    attn_norm (RMSNorm), q_proj k_proj v_proj (+ bias when the
 *                model has one, added inside the projection), rope (rotate
 *                half, q and k), kv_write (new K and V into the cache),
 *                attention (softmax(q K^T / sqrt(d_h)) V over the cache),
 *                o_proj, attn_residual, mlp_norm, gate_proj, up_proj,
 *                act (silu(gate) x up), down_proj, mlp_residual
 *   head         final_norm and lm_head on the last position of each
 *                sequence (M = B)
 *
 * Linear layers are CBLAS calls on weights stored (N, K) row-major as
 * nn.Linear keeps them: cblas_sgemv when M = 1 (as inference engines do at
 * one token), cblas_sgemm otherwise. Decode attention is a kernel of ours on
 * the calling thread, from the kernel table (rf_kernels_choose: the ISA
 * opts.isa names, else the best the CPU has; AVX2 + FMA or portable C):
 * the g = n_q / n_kv query heads that share a KV head score each block of
 * keys while it is in L1, so K and V are read once (OpenBLAS's GEMM at
 * M = g does not: docs/measure.md). Prefill attention is CBLAS: each head's
 * T x S score matrix (one head at a time, so it stays in cache), a causal
 * mask, then V, doing exactly the 4 n_q q S d_h FLOPs of rf_op.h. The other
 * element-wise operators run on the calling thread too.
 *
 * Positions. Decode: the cache holds S positions per sequence; the step's
 * token sits at position S - 1, writes its K and V there and attends over
 * all S keys (rf_step's "keys = context"). Prefill: T new tokens at
 * positions S .. S + T - 1 after S cached ones, causal, S + T keys. The
 * cache persists between steps; every timed step re-runs the same positions
 * (it rewrites the same slots), so each step has the same shape.
 *
 * Figures. GEMMs, attention, lm_head and embed take their FLOPs and bytes
 * from rf_step_compute (fp32 weights, activations and KV) so the floors
 * agree with `roofline step`; the element-wise operators, which rf_step
 * does not count, take theirs from rf_op.h's element-wise functions
 * (rf_op_norm, rf_op_rope, rf_op_kv_write, rf_op_residual, rf_op_act) with
 * every element fp32 (b = 4), the act at RF_ACT_SILU_MUL_FLOPS_AS_RUN (exp
 * counted as 1 FLOP) and the final norm on the B last rows.
 * Model-specific extras (RoPE scaling, attention soft-capping, extra norms)
 * are not run; RoPE uses theta 10000 (the value does not change the cost).
 *
 * Scope: dense decoders (Llama, Qwen2, Mistral; sliding-window layers keep
 * at most `window` keys). MoE and MLA models are refused (RF_EUNAVAIL).
 */
#ifndef RF_FORWARD_H
#define RF_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_hw.h"
#include "rf_measure_lab.h"
#include "rf_measure_stats.h"
#include "rf_model.h"
#include "rf_step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operators of a step, in the order they run. */
typedef enum rf_fwd_op {
    RF_FWD_EMBED = 0,
    RF_FWD_ATTN_NORM,
    RF_FWD_Q_PROJ,
    RF_FWD_K_PROJ,
    RF_FWD_V_PROJ,
    RF_FWD_ROPE,
    RF_FWD_KV_WRITE,
    RF_FWD_ATTENTION,     /* layers that attend over every key            */
    RF_FWD_ATTENTION_SWA, /* sliding-window layers                        */
    RF_FWD_O_PROJ,
    RF_FWD_ATTN_RESIDUAL,
    RF_FWD_MLP_NORM,
    RF_FWD_GATE_PROJ,
    RF_FWD_UP_PROJ,
    RF_FWD_ACT,
    RF_FWD_DOWN_PROJ,
    RF_FWD_MLP_RESIDUAL,
    RF_FWD_FINAL_NORM,
    RF_FWD_LM_HEAD,
    RF_FWD_OP_COUNT
} rf_fwd_op;

/* "embed", "attn_norm", "q_proj", ... (the rf_step names where rf_step has
 * the operator). */
const char *rf_fwd_op_name(rf_fwd_op op);

typedef struct rf_forward_opts {
    rf_phase phase;
    int64_t batch;            /* B sequences (>= 1)                         */
    int64_t context;          /* S: decode >= 1 (keys, the new token's
                                 included); prefill >= 0 (cached before)    */
    int64_t tokens;           /* T: prefill tokens per sequence (>= 1)      */
    int64_t layers;           /* N decoder layers run (1 .. L)              */
    int threads;              /* BLAS threads; 0 = one per core             */
    const char *isa;          /* kernel table override ("scalar", "avx2",
                                 ...; the caller passes RF_ISA); NULL or ""
                                 = the best the CPU has                     */
    uint64_t mem_limit_bytes; /* at most this much memory (0 = no limit but
                                 RF_FORWARD_MEM_FRACTION x MemAvailable)   */
    int warmup;               /* untimed steps first (>= 1)                 */
    int steps;                /* timed steps (1 .. RF_STATS_MAX); 0 = as
                                 many as fit in min_time_s, at least 3      */
    double min_time_s;        /* with steps = 0 (default 2 s)               */
    uint64_t seed;            /* weights, cache and token ids               */
    rf_progress_fn progress;  /* called before each phase and step; NULL =
                                 silent                                     */
    void *progress_user;
} rf_forward_opts;

/* Decode, B = 1, S = 1024, T = 1, N = 2 layers, one thread per core,
 * MemAvailable, one warm-up step, calibrated steps over 2 s. */
rf_forward_opts rf_forward_opts_default(void);

/* ---- memory: checked before anything is allocated --------------------- */

typedef struct rf_forward_mem {
    uint64_t layer_bytes; /* one layer: matrices, biases, norms           */
    uint64_t head_bytes;  /* lm_head (V, H), which the embed gather also
                               reads, and the final norm                     */
    uint64_t kv_bytes;    /* N layers x B x positions x 2 n_kv d_h x 4     */
    uint64_t act_bytes;   /* activations, scores, logits, RoPE tables      */
    uint64_t total_bytes; /* N layer_bytes + head + kv + act               */
} rf_forward_mem;

/* What a forward pass of these options needs (exact, checked). Errors:
 * RF_EINVAL for bad options (naming the option), RF_EUNAVAIL for a MoE or
 * MLA model, RF_ERANGE when a size overflows or a dimension exceeds what
 * CBLAS takes (a 32-bit int). */
rf_status rf_forward_mem_of(const rf_model *m, const rf_forward_opts *o, rf_forward_mem *out,
                            rf_err *err);

/* Fraction of the available memory a run may use; the rest is left to the
 * system and the BLAS library's buffers. */
#define RF_FORWARD_MEM_FRACTION 0.9

/* Refuse a request that does not fit in RF_FORWARD_MEM_FRACTION x
 * avail_bytes (0 = MemAvailable now), or in o->mem_limit_bytes when that is
 * smaller, with RF_ENOMEM and a message giving the size it needs and what
 * would fit (the largest --layers at this batch, the largest --batch at
 * these layers):
 *   "qwen2.5-7b-instruct needs 32.80 TiB (2 layers 1.74 GiB, lm_head
 *    2.03 GiB, KV 32.00 TiB, activations 816.01 GiB) but 20.53 GiB may be
 *    used (90% of 22.82 GiB available); --batch 523 would fit"
 * Allocates nothing. */
rf_status rf_forward_fit(const rf_model *m, const rf_forward_opts *o, uint64_t avail_bytes,
                         rf_err *err);

/* ---- the pass ---------------------------------------------------------- */

typedef struct rf_forward rf_forward; /* opaque; rf_forward_free accepts NULL */

/* Check the fit (rf_forward_fit), then allocate and fill the weights, the
 * cache (random, as if a prompt had been prefilled) and the token ids.
 * Errors: those of rf_forward_fit, RF_ENOMEM when an allocation fails. */
rf_status rf_forward_new(const rf_model *m, const rf_forward_opts *o, rf_forward **out,
                         rf_err *err);
void rf_forward_free(rf_forward *f);

/* Seconds of one step. */
typedef struct rf_forward_times {
    double op_s[RF_FWD_OP_COUNT]; /* each operator, summed over the layers   */
    double layers_s;              /* the N layers, wall clock                */
    double head_s;                /* embed + final_norm + lm_head            */
    double step_s;                /* the whole step, wall clock              */
} rf_forward_times;

/* Run one step, timing every operator on its own (a monotonic clock read
 * around each call; CBLAS returns when its work is done). */
rf_status rf_forward_step(rf_forward *f, rf_forward_times *t, rf_err *err);

/* Run the pass of a tiny model shaped like m (the same GQA group, bias and
 * sliding-window pattern; d_h = 8, H = 40, two layers) through decode at
 * B = 1 (the GEMV path) and B = 3, and prefill at B = 2, T = 4 after 3
 * cached positions and at B = 1, T = 1, then compare the hidden states,
 * the logits and the K and V written to the cache with a scalar reference
 * (double accumulation), with the kernels isa names (as opts.isa).
 * *max_err receives the worst max|fast - ref| / max(1, max|ref|) over all
 * of them. RF_EINTERNAL when it exceeds RF_FORWARD_TOLERANCE; the kernel
 * table's errors for a bad isa. */
#define RF_FORWARD_TOLERANCE 1e-4
rf_status rf_forward_check(const rf_model *m, const char *isa, double *max_err, rf_err *err);

/* ---- the profile: every operator beside its floor ---------------------- */

typedef struct rf_forward_op {
    rf_fwd_op id;
    const char *name;      /* rf_fwd_op_name                             */
    int64_t m, k, n;       /* GEMM M K N; attention m = query tokens,
                                 k = d_h, n = keys; element-wise m rows,
                                 n = row width                              */
    uint64_t count;        /* instances in the profiled step: the layers
                                 it runs in, or 1 for embed and the head    */
    uint64_t flops, bytes; /* one instance                               */
    bool in_step_floor;    /* counted by rf_step_compute's floors        */
    double intensity;      /* flops / bytes                              */
    double floor_s;        /* one instance: max(F / pi, Q / beta)        */
    rf_regime bound;       /* the roof floor_s comes from                */
    double measured_s;     /* one instance: median over steps of the
                                 time summed over its layers, / count       */
    double min_s, max_s;   /* the same for the fastest and slowest step  */
    double flops_per_s;    /* flops / measured_s (achieved)              */
    double bytes_per_s;    /* bytes / measured_s (achieved)              */
    double efficiency;     /* floor_s / measured_s                       */
    double residual_s;     /* count x (measured_s - floor_s)             */
} rf_forward_op;

#define RF_FORWARD_OWNERS 3

typedef struct rf_forward_run {
    rf_forward_opts opts; /* as run (steps resolved)                    */
    rf_roof roof;
    rf_forward_op ops[RF_FWD_OP_COUNT];
    size_t n_ops;         /* operators that run (attention kinds absent
                                 from the N layers are left out)            */
    double check_max_err; /* rf_forward_check                           */
    char attn_kernel[48]; /* decode attention kernel that ran:
                                 "attn_avx2_f32", "attn_scalar_f32"         */
    rf_forward_mem mem;

    /* the profiled step: N layers and the head, all medians over steps */
    double measured_s; /* whole step                                 */
    double measured_min_s, measured_max_s;
    double floor_s; /* rf_step_compute on the N-layer model       */
    double floor_sum_of_max_s;
    double ops_sum_of_max_s;          /* sum count x floor_s over every operator run,
                                 element-wise ones included                 */
    double residual_s;                /* measured_s - floor_s                       */
    size_t owners[RF_FORWARD_OWNERS]; /* ops[] indexes, largest residual
                                 first                                      */
    size_t n_owners;
    double owner_share[RF_FORWARD_OWNERS]; /* owner's residual / residual_s */
    double layers_s, head_s;               /* the two parts of the step                  */

    /* the whole model, estimated: layers_s x L / N + head_s */
    int64_t model_layers; /* L                                          */
    double estimated_model_s;
    double estimated_tokens_per_s; /* new tokens of the step / estimate     */
    double model_floor_s;          /* rf_step_compute on all L layers            */
    double model_floor_sum_of_max_s;
} rf_forward_run;

/* Fill run->ops (analytic figures and floors on roof, no timing) and the
 * analytic step totals for these options: what rf_forward_profile reports
 * before anything is timed. */
rf_status rf_forward_plan(const rf_model *m, const rf_forward_opts *o, const rf_roof *roof,
                          rf_forward_run *run, rf_err *err);

/* Fill the measured figures of a planned run from n timed steps
 * (1 <= n <= RF_STATS_MAX): per-operator medians, min and max, achieved
 * rates, efficiency and residual; the step's medians, residual and its
 * owners; the whole-model estimate. Pure: no clock, no allocation. */
rf_status rf_forward_summarize(rf_forward_run *run, const rf_forward_times *steps, size_t n,
                               rf_err *err);

/* The whole profile: rf_forward_check, rf_forward_plan, rf_forward_new
 * (the memory check first), warm-up, timed steps, rf_forward_summarize.
 * roof is the measured roof for fp32. */
rf_status rf_forward_profile(const rf_model *m, const rf_forward_opts *o, const rf_roof *roof,
                             rf_forward_run *run, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
