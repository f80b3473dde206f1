/* rf_parallel.h - one model served on many devices: tensor, pipeline,
 * expert and data parallelism, with every collective as an operator row.
 *
 * docs/accounting.md ("Many devices") states the conventions; in short:
 *   TP T: q, k, v, gate, up column-parallel (N / T), o, down row-parallel
 *     (K / T); n_q / T query heads a device; n_kv / T KV heads when
 *     n_kv >= T, else one KV head a device (replicated); lm_head and the
 *     embedding split by vocabulary (the last shard takes the remainder, so
 *     a device holds V - (T - 1) floor(V / T) rows, the largest shard).
 *     Routed and shared experts split their width by T (without EP).
 *     MLA: q_proj (or q_b_proj) and kv_b_proj column-parallel by heads,
 *     o_proj row-parallel; q_a_proj, kv_a_proj and the latent cache
 *     replicated on every rank (the heads of each rank read all of it).
 *     Collectives: tp_allreduce_attn and tp_allreduce_mlp a layer (M H b_a
 *     bytes each), embed_allreduce (M H b_a) once, lm_head_allgather
 *     (B V b_a logits) once. M is every row of the step: B, B T in
 *     prefill, decode + chunk tokens in serve's mixed step (whose
 *     all-gather carries its B_d + one a chunk logit rows).
 *   PP P: contiguous stages, the first L % P one layer longer; embedding on
 *     the first, final norm and lm_head on the last; pp_send of M H b_a
 *     between consecutive stages.
 *   EP E (MoE): the expert group is the TP groups of g = E / T data-parallel
 *     replicas (E a multiple of T, g dividing D; attention stays TP within
 *     a replica, data-parallel across the group, as vLLM's and SGLang's
 *     expert parallelism run it); each device holds E_routed / E whole
 *     experts and runs 1 / E of the group's g M k token-expert pairs;
 *     ep_dispatch and ep_combine (a replica's M k H b_a, each, over the E
 *     ranks) a MoE layer replace that layer's tp_allreduce_mlp; the router
 *     and the shared experts replicated.
 *   DP D: D replicas, no communication; throughput x D.
 * Costs, the alpha-beta model (n = bytes of the whole message, t = ranks,
 * bw = one direction of a device's link): the least over the algorithms an
 * engine may run (ring, tree, one-shot, two-shot, in-switch; rf_coll_cost)
 * A group of t devices uses the scale-up link when it fits in one node
 * (t <= devices_per_node), else the scale-out link (its bottleneck).
 * A device's floor = the sum-of-max of its own operators + its collectives
 * (no overlap); the overlap bound max(operators, collectives) is reported
 * beside it, labelled optimistic.
 */
#ifndef RF_PARALLEL_H
#define RF_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_hw.h"
#include "rf_model.h"
#include "rf_step.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_PAR_MAX_DEGREE 4096 /* any of T, P, E, D */
#define RF_PAR_MAX_STAGES 64
#define RF_PAR_MAX_COLL 8

typedef struct rf_layout {
    int64_t tp, pp, ep, dp; /* each >= 1 */
} rf_layout;

/* 1 x 1 x 1 x 1: one device, today's step. */
rf_layout rf_layout_single(void);
/* Devices the layout occupies: T P D (an expert group is E / T of the
 * D replicas' TP groups, so E adds none). */
int64_t rf_layout_devices(const rf_layout *l);
bool rf_layout_is_single(const rf_layout *l);

/* Refuse a layout the model cannot be split by, with a line naming the
 * constraint: a degree of 0 or beyond RF_PAR_MAX_DEGREE, n_q % T, T neither
 * a divisor nor a multiple of n_kv (but MLA, which has no KV heads), F_ff
 * % T (and the experts' widths), E_routed % E, E without experts, E % T,
 * D % (E / T), P > L. */
rf_status rf_layout_validate(const rf_model *m, const rf_layout *l, rf_err *err);

/* The model one TP rank of one stage runs: heads, widths and the vocabulary
 * divided as above, layers [first, first + count) of m (per-layer flags
 * carried over). The embedding and lm_head are still in it; rf_par_compute
 * drops them from the stages that do not hold them. */
rf_status rf_layout_shard(const rf_model *m, const rf_layout *l, int64_t first, int64_t count,
                          rf_model *out, rf_err *err);

/* The step a device of layout l runs for layers [first, first + count):
 * rf_step_compute of its shard (rf_layout_shard, into *shard), and under EP
 * each routed row its 1 / E share of the expert group's E / T replicas'
 * tokens (as rf_par_compute counts it). Every row, the embedding and
 * lm_head included (rf_par_stage_holds says which a stage keeps). */
rf_status rf_par_device_step(const rf_model *m, const rf_layout *l, int64_t first, int64_t count,
                             const rf_step_opts *o, const rf_roof *roof, rf_model *shard,
                             rf_step *out, rf_err *err);

/* Layers of stage s (0-based) of L over P: L / P, plus one for s < L % P. */
int64_t rf_layout_stage_layers(int64_t layers, int64_t pp, int64_t s);

typedef enum rf_coll_kind {
    RF_COLL_ALLREDUCE = 0,
    RF_COLL_ALLGATHER,
    RF_COLL_ALLTOALL,
    RF_COLL_P2P
} rf_coll_kind;

/* One collective operator row. */
typedef struct rf_coll {
    const char *name; /* "tp_allreduce_attn", ...                       */
    rf_coll_kind kind;
    uint64_t count;   /* instances a step on this device (layers)       */
    uint64_t bytes;   /* n: the whole message, one instance             */
    int64_t ranks;    /* t                                              */
    const char *link; /* the link's name                                */
    double bw_bytes_per_s, alpha_s;
    bool switch_reduce; /* the link's switch reduces (rf_hw_links)        */
    bool measured;      /* a measured link fit set bw and alpha: its own
                              (ring) form, no minimum over algorithms        */
    const char *algo;   /* the algorithm of the floor: "ring", "tree",
                              "one-shot", "two-shot", "in-switch", "direct",
                              "send", "measured"                             */
    double bw_s;        /* one instance: the bandwidth term               */
    double latency_s;   /* one instance: the alpha term                   */
    double time_s;      /* one instance: bw_s + latency_s                 */
    bool latency_bound; /* latency_s > bw_s                               */
} rf_coll;

/* Fill what a link description lacks, as a measured profile without
 * measured links does (0 figures): the scale-out link InfiniBand NDR 400
 * Gb/s (50e9 B/s a device, 5 us a hop), 1 us a hop within a node, 8
 * devices a node; origin then ends "; defaults: " and names each filled.
 * The scale-up bandwidth is never invented: rf_par_compute refuses a 0
 * one, asking for --link-bw. */
void rf_hw_links_defaults(rf_hw_links *k);

/* The floor of one collective of n bytes over t ranks: the least time over
 * the algorithms an engine may run (docs/accounting.md, "Collectives"),
 * alpha-beta, bw one direction of a device's link, alpha a hop:
 *   all-reduce  ring       2 (t-1)/t n / bw + 2 (t-1) alpha
 *               tree       2 (t-1)/t n / bw + 2 ceil(log2 t) alpha
 *               one-shot   (t-1) n / bw + alpha   (each rank reads the
 *                          others' n bytes and reduces them itself)
 *               two-shot   2 (t-1)/t n / bw + 2 alpha  (reduce-scatter
 *                          then all-gather, each a direct write to all)
 *               in-switch  (t-1)/t n / bw + 2 alpha  (switch_reduce: each
 *                          rank sends its share of the others' slices up
 *                          and reads the reduced ones back)
 *   all-gather, all-to-all  ring (t-1)/t n / bw + (t-1) alpha;
 *               direct     (t-1)/t n / bw + alpha
 *   point-to-point          n / bw + alpha
 * A measured link fit (c->measured) keeps its ring form: 2 (t-1) hops of
 * its alpha (t - 1 for the others). Sets bw_s, latency_s, time_s, algo. */
void rf_coll_cost(rf_coll *c);

typedef struct rf_par_stage {
    int64_t first_layer, layers;
    rf_model shard; /* the model one of its devices runs          */
    rf_step step;   /* its operators (embed / lm_head rows of the
                                 stages that do not hold them excluded from
                                 the totals below)                         */
    rf_coll coll[RF_PAR_MAX_COLL];
    size_t n_coll;
    uint64_t weight_bytes_resident; /* a device's shard of every weight      */
    uint64_t weight_bytes_streamed; /* what a step streams                   */
    uint64_t kv_bytes_resident;     /* its KV heads' cache, every sequence  */
    uint64_t needed_bytes;          /* resident weights + KV                 */
    double budget_bytes;            /* rf_fit's budget of one device         */
    bool fits;
    double ops_s;           /* sum-of-max of its operators                */
    double comm_s;          /* sum of its collectives                      */
    double floor_s;         /* ops_s + comm_s                              */
    double overlap_floor_s; /* max(ops_s, comm_s): optimistic             */
} rf_par_stage;

typedef struct rf_par_opts {
    rf_layout layout;
    rf_hw_links links;
    double util; /* rf_fit's memory fraction                   */
    uint64_t reserve_bytes;
    uint64_t mem_bytes; /* one device's usable memory                 */
} rf_par_opts;

typedef struct rf_par {
    rf_layout layout;
    rf_hw_links links; /* the links used (each rf_coll.link names one) */
    int64_t devices;
    int64_t micro_batches; /* in flight: min(P, B)                        */
    int64_t micro_batch;   /* sequences each: ceil(B / micro_batches)     */
    size_t n_stages;
    rf_par_stage stages[RF_PAR_MAX_STAGES];
    size_t slowest;         /* stage index                                 */
    double send_s;          /* the pp_sends of one token, summed           */
    double token_latency_s; /* sum of stage floors + sends                 */
    double cycle_s;         /* max(token latency, micro_batches x slowest) */
    double bubble;          /* idle share of the slowest stage             */
    double tokens_per_s;    /* the whole deployment (x D)                  */
    double tokens_per_s_device;
    double overlap_tokens_per_s;
    double comm_share;       /* collectives' share of the slowest stage     */
    bool fits;               /* every stage fits                            */
    double min_margin_bytes; /* smallest budget - needed over the stages    */
} rf_par;

/* Every stage of the layout. o is the step of one replica: o->batch
 * sequences in all (split into micro-batches under PP). serve's mixed step
 * takes the same path (rf_serve_par_compute, rf_serve.h). RF_EINVAL from
 * rf_layout_validate, the link (a bandwidth or latency <= 0 or not
 * finite, devices_per_node < 1), or rf_step_compute. */
rf_status rf_par_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                         const rf_par_opts *po, rf_par *out, rf_err *err);

/* Whether stage `stage` of p runs op: the embedding only on the first, the
 * final norm and lm_head only on the last, every layer operator anywhere. */
bool rf_par_stage_holds(const rf_par *p, size_t stage, const rf_op *op);

/* KV capacity of a layout, per device (vLLM style, on rf_fit's budget):
 * for each stage, pool = budget - its device's resident weights; tokens =
 * pool / its device's KV a token (its KV heads, its layers); sequences =
 * pool / KV a sequence at `context`. The figures are the stage with the
 * least (it bounds the pipeline); sequences_total x D replicas. */
typedef struct rf_par_capacity {
    rf_layout layout;
    double budget_bytes;     /* one device's util x memory - reserve     */
    int64_t stage;           /* the stage whose pool is smallest          */
    uint64_t resident_bytes; /* its device's weights                      */
    double pool_bytes;       /* its pool (negative: weights do not fit)  */
    bool weights_fit;
    double tokens; /* the fewest positions a stage holds        */
    int64_t context;
    double sequences;       /* of a replica, at context; 0 without one   */
    double sequences_total; /* x D                                       */
} rf_par_capacity;

rf_status rf_par_capacity_compute(const rf_model *m, const rf_step_opts *o, const rf_par_opts *po,
                                  int64_t context, rf_par_capacity *out, rf_err *err);

/* Many decode contexts of one layout at one batch, O(P) a point: each
 * stage's shard is an rf_sweep (O(1) a point), and what a stage adds to it
 * does not depend on the context (its collectives, less the embed or
 * lm_head rows it does not hold, and under EP its expert rows' share), so
 * it is taken once, as the stage's floor less its shard's sweep at the
 * prepared context. Every point equals rf_par_compute at that context
 * (tested, EP too). */
typedef struct rf_par_sweep {
    rf_par par; /* at the prepared context   */
    rf_sweep stage[RF_PAR_MAX_STAGES];
    double fixed_s[RF_PAR_MAX_STAGES]; /* comm - ops not held       */
    int64_t batch;                     /* B of the replica          */
} rf_par_sweep;

typedef struct rf_par_point {
    int64_t batch, context;
    double floor_s; /* the slowest stage's                      */
    double token_latency_s, cycle_s, bubble;
    double tokens_per_s, tokens_per_s_device, comm_share;
} rf_par_point;

rf_status rf_par_sweep_prepare(rf_par_sweep *ps, const rf_model *m, const rf_step_opts *o,
                               const rf_roof *roof, const rf_par_opts *po, rf_err *err);
rf_status rf_par_sweep_eval(rf_par_sweep *ps, int64_t context, rf_par_point *p, rf_err *err);

/* `plan`: every layout of powers of two (T, P, D; on a MoE model E = 1 and
 * E = T g for g = 1, 2, 4 ... D) up to max_devices that fits o->batch
 * sequences at o's context (a replica of DP D runs ceil(B / D) of them, so
 * D <= B: a replica with no sequence would idle), ranked. */
typedef enum rf_objective {
    RF_OBJ_COST = 0,  /* fewest devices, then the most tokens/s a device */
    RF_OBJ_LATENCY,   /* the shortest token latency                      */
    RF_OBJ_THROUGHPUT /* the most tokens/s in all                        */
} rf_objective;

typedef struct rf_plan_row {
    rf_layout layout;
    int64_t devices;
    bool fits;
    double margin_bytes; /* smallest budget - needed over the stages  */
    double needed_bytes; /* the most any device needs                 */
    double budget_bytes; /* one device's budget                       */
    double floor_s;      /* the slowest stage's                       */
    double token_latency_s;
    double tokens_per_s, tokens_per_s_device, comm_share, bubble;
} rf_plan_row;

#define RF_PLAN_MAX 512
typedef struct rf_plan {
    rf_plan_row rows[RF_PLAN_MAX]; /* fitting layouts, ranked              */
    size_t n_rows;
    /* For each device count below the smallest that fits (powers of two),
     * its layout with the largest margin: why that many are not enough. */
    rf_plan_row short_of[16];
    size_t n_short;
    size_t n_tried; /* layouts evaluated                   */
    rf_par scratch; /* each layout's figures, in turn      */
} rf_plan;

rf_status rf_plan_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                          const rf_par_opts *po, int64_t max_devices, rf_objective obj,
                          rf_plan *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
