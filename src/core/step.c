/* step.c - decompose a model into the operators of one step and total them.
 *
 * The walk follows one decoder layer in order (attention projections,
 * attention, MLP or MoE), groups layers of the same kind (dense or MoE,
 * global or sliding attention) into one operator row with a count, then
 * adds the lm_head and the embedding gather. Formulas: rf_op.h, rf_step.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_step.h"
#include "step_internal.h"

rf_step_opts rf_step_opts_default(void)
{
    rf_step_opts o = {.phase = RF_DECODE,
                      .batch = 1,
                      .context = 0,
                      .tokens = 1,
                      .w = rf_dtype_of(RF_BF16),
                      .a = rf_dtype_of(RF_BF16),
                      .kv = rf_dtype_of(RF_BF16)};
    return o;
}

rf_dtype rf_step_out_dtype(const rf_step_opts *o)
{
    return o->has_out ? o->out : rf_gemm_out_default(o->a);
}

rf_step_opts rf_step_opts_for_model(const rf_model *m)
{
    rf_step_opts o = rf_step_opts_default();
    if (m->has_weight_dtype)
        o.w = m->weight_dtype;
    if (m->has_act_dtype)
        o.a = m->act_dtype;
    return o;
}

/* The operators of a step are formed one layer class at a time (decompose)
 * and kept in the order of the layer's stages; a row equal in every figure
 * to one already in its stage (the same operator of another class: q_proj
 * of a dense and of a MoE layer) adds its count to it. */
enum stage {
    S_NORM,  /* attn_norm                                                  */
    S_PROJ,  /* the mixer's input projections (q/k/v, in_proj, indexer)    */
    S_ROPE,  /* RoPE and the cache writes                                  */
    S_CORE,  /* attention, the linear-attention and state-space cores      */
    S_OUT,   /* o_proj, out_proj                                           */
    S_POST,  /* post_attn_norm, attn_residual, mlp_norm                    */
    S_MLP,   /* the dense MLP                                              */
    S_MOE,   /* router, shared and routed experts                          */
    S_POST2, /* post_mlp_norm, mlp_residual                                */
    S_TAIL   /* final_norm, lm_head, embed                                 */
};

typedef struct walk {
    rf_step *step;
    enum stage stage;                          /* of the rows pushed now             */
    uint8_t tag[RF_STEP_MAX_OPS];              /* each row's stage                   */
    int64_t M, M_kv, q_tokens, keys, win_read; /* the step's sizes          */
} walk;

static bool same_dtype(rf_dtype a, rf_dtype b)
{
    return a.kind == b.kind && a.group_size == b.group_size && a.scale_bytes == b.scale_bytes &&
           a.block_rows == b.block_rows;
}

/* Every figure of two rows but their counts */
static bool same_row(const rf_op *a, const rf_op *b)
{
    return !strcmp(a->name, b->name) && a->kind == b->kind && a->m == b->m && a->k == b->k &&
           a->n == b->n && same_dtype(a->w, b->w) && a->flops == b->flops && a->bytes == b->bytes &&
           a->weight_bytes == b->weight_bytes && a->kv_bytes == b->kv_bytes &&
           a->act_bytes == b->act_bytes && a->extra_bytes == b->extra_bytes &&
           a->experts == b->experts && a->m_per_expert == b->m_per_expert &&
           (a->note == b->note || (a->note && b->note && !strcmp(a->note, b->note)));
}

static rf_status push(walk *st, const rf_op *op, uint64_t count, rf_err *err)
{
    if (!count)
        return RF_OK;
    rf_step *s = st->step;
    size_t at = s->n_ops;
    for (size_t i = 0; i < s->n_ops; i++) {
        if (st->tag[i] == st->stage && same_row(&s->ops[i], op)) {
            s->ops[i].count += count; /* both at most the layers */
            return RF_OK;
        }
        if (st->tag[i] > st->stage) {
            at = i;
            break;
        }
    }
    if (s->n_ops >= RF_STEP_MAX_OPS)
        return rf_err_set(err, RF_EINTERNAL, "more than %d operators in one step", RF_STEP_MAX_OPS);
    memmove(&s->ops[at + 1], &s->ops[at], (s->n_ops - at) * sizeof s->ops[0]);
    memmove(&st->tag[at + 1], &st->tag[at], s->n_ops - at);
    s->ops[at] = *op;
    s->ops[at].count = count;
    st->tag[at] = (uint8_t)st->stage;
    s->n_ops++;
    return RF_OK;
}

/* The weights dtype of one module class in this step. */
static rf_dtype wdt(const rf_model *md, const rf_step_opts *o, rf_module mod)
{
    return rf_model_module_dtype(md, mod, o->w, o->w_all_modules);
}

static rf_status gemm(walk *st, const rf_model *md, rf_module mod, const char *name, int64_t m,
                      int64_t k, int64_t n, const rf_step_opts *o, uint64_t count, rf_err *err)
{
    rf_op op;
    rf_status s;
    if (!count)
        return RF_OK;
    if ((s = rf_op_gemm_out(name, m, k, n, wdt(md, o, mod), o->a, rf_step_out_dtype(o), &op, err)))
        return s;
    return push(st, &op, count, err);
}

/* ---- the full traffic model's element-wise rows (rf_op.h) --------------- */

static bool full(const rf_step_opts *o) { return o->traffic == RF_TRAFFIC_FULL; }

/* push the operator a constructor made (s its status) */
static rf_status put(walk *st, rf_status s, const rf_op *op, uint64_t count, rf_err *err)
{
    return s ? s : push(st, op, count, err);
}

/* A norm of m rows of width n (RMSNorm: rf_op_norm). --fuse-elementwise:
 * x comes from the residual add before it and y goes into the next GEMM's
 * read, so only the weight vector is read: Q = n b_w. */
static rf_status norm(walk *st, const char *name, int64_t m, int64_t n, const rf_step_opts *o,
                      uint64_t count, rf_err *err)
{
    rf_op op;
    rf_status s = rf_op_norm(name, m, n, o->w, o->a, &op, err);
    if (!s && o->fuse_elementwise) {
        op.act_bytes = 0;
        op.bytes = op.weight_bytes;
    }
    return put(st, s, &op, count, err);
}

static rf_status bias(walk *st, const rf_model *md, rf_module mod, const char *name, int64_t m,
                      int64_t n, const rf_step_opts *o, uint64_t count, rf_err *err)
{
    rf_op op;
    return put(st, rf_op_bias(name, m, n, wdt(md, o, mod), &op, err), &op, count, err);
}

bool rf_model_gelu(const rf_model *m)
{
    return !strncmp(m->family, "gemma", 5); /* gelu_pytorch_tanh */
}

bool rf_model_post_norms(const rf_model *m)
{
    return !strncmp(m->family, "gemma2", 6) || !strncmp(m->family, "gemma3", 6);
}

/* The MLP activation, act(gate) x up over m rows of n (rf_model_gelu). */
static rf_status act(walk *st, const rf_model *md, const char *name, int64_t m, int64_t n,
                     const rf_step_opts *o, uint64_t count, rf_err *err)
{
    unsigned c = rf_model_gelu(md) ? RF_ACT_GELU_MUL_FLOPS : RF_ACT_SILU_MUL_FLOPS;
    rf_op op;
    if (md->ffn_ungated) /* squared ReLU of up alone: max, square */
        return put(st, rf_op_act_ungated(name, m, n, 2, o->a, &op, err), &op, count, err);
    return put(st, rf_op_act(name, m, n, c, o->a, &op, err), &op, count, err);
}

/* K/V elements a token of a class model (its shapes in n_q, n_kv, head_dim,
 * attn_v_dim, k_eq_v: see class_model): 0 for 2 n_kv d_h, the plain case */
static int64_t kv_elems(const rf_model *md)
{
    if (md->k_eq_v)
        return md->n_kv * md->head_dim;
    if (md->attn_v_dim)
        return md->n_kv * (md->head_dim + md->attn_v_dim);
    return 0;
}

static rf_dtype index_dtype(const rf_model *md)
{
    if (md->has_index_dtype)
        return md->index_dtype;
    return (rf_dtype){.kind = RF_FP8_E4M3, .group_size = 128, .scale_bytes = 4};
}

/* RoPE on q and k, then the new K and V (MLA: the latent and k_rope) into
 * the cache, for `count` layers. */
static rf_status rope_kv(walk *st, const rf_model *md, const rf_step_opts *o, int64_t M,
                         uint64_t count, rf_err *err)
{
    rf_op op;
    rf_status s;
    if (md->kv_lora_rank) /* the rotary part only: n_q heads of q, one shared k_rope */
        s = put(st, rf_op_rope("rope", M, md->n_q + 1, md->qk_rope_dim, o->a, &op, err), &op, count,
                err);
    else
        s = put(st, rf_op_rope("rope", M, md->n_q + md->n_kv, md->head_dim, o->a, &op, err), &op,
                count, err);
    if (s)
        return s;
    if (md->kv_lora_rank)
        s = rf_op_cache_write("kv_write", M, md->kv_lora_rank + md->qk_rope_dim, o->kv, o->a, &op,
                              err);
    else if (md->k_eq_v || md->attn_v_dim) /* K alone, or K and V of their own widths */
        s = rf_op_cache_write("kv_write", M, kv_elems(md), o->kv, o->a, &op, err);
    else
        s = rf_op_kv_write("kv_write", M, md->n_kv, md->head_dim, o->kv, o->a, &op, err);
    if ((s = put(st, s, &op, count, err)) || !md->index_topk)
        return s;
    /* DSA: the token's index key into the indexer's cache */
    s = rf_op_cache_write("index_write", M, md->index_head_dim, index_dtype(md), o->a, &op, err);
    return put(st, s, &op, count, err);
}

/* Attention projections of one layer (count layers). M_kv: the positions
 * kv_b_proj expands, which differs from M only for MLA prefill. */
static rf_status attn_proj(walk *st, const rf_model *md, const rf_step_opts *o, int64_t M,
                           int64_t M_kv, uint64_t count, rf_err *err)
{
    const rf_module A = RF_MOD_ATTN;
    int64_t H = md->hidden, nq = md->n_q;
    rf_status s;
    if (md->kv_lora_rank) { /* MLA */
        int64_t qk = md->qk_nope_dim + md->qk_rope_dim;
        if (md->q_lora_rank) {
            if ((s = gemm(st, md, A, "q_a_proj", M, H, md->q_lora_rank, o, count, err)) ||
                (full(o) && (s = norm(st, "q_a_norm", M, md->q_lora_rank, o, count, err))) ||
                (s = gemm(st, md, A, "q_b_proj", M, md->q_lora_rank, nq * qk, o, count, err)))
                return s;
        } else if ((s = gemm(st, md, A, "q_proj", M, H, nq * qk, o, count, err))) {
            return s;
        }
        /* Decode absorbs kv_b_proj's two halves into the query (W_UK) and
         * the attention output (W_UV): the same matrix read once and the same
         * 2 M r n_q (nope + v) FLOPs as this GEMM. Prefill expands the latent
         * of every key it attends to, M_kv = B (s + T) positions. */
        if ((s = gemm(st, md, A, "kv_a_proj", M, H, md->kv_lora_rank + md->qk_rope_dim, o, count,
                      err)) ||
            (full(o) && (s = norm(st, "kv_a_norm", M, md->kv_lora_rank, o, count, err))) ||
            (s = gemm(st, md, A, "kv_b_proj", M_kv, md->kv_lora_rank,
                      nq * (md->qk_nope_dim + md->v_head_dim), o, count, err)))
            return s;
        return RF_OK;
    }
    int64_t dh = md->head_dim, nkv = md->n_kv;
    bool b = full(o) && md->qkv_bias;
    if (md->attn_out_gate || md->attn_v_dim || md->k_eq_v || md->q_lora_rank) {
        /* q_proj H -> n_q d_h (x 2 with the output gate), through a
         * q_lora_rank latent when given (Step-3); k_proj; v_proj of width
         * d_v, none when V is K */
        int64_t qw = nq * dh * (md->attn_out_gate ? 2 : 1);
        int64_t vw = md->k_eq_v ? 0 : nkv * (md->attn_v_dim ? md->attn_v_dim : dh);
        int64_t all = qw + nkv * dh + vw;
        if (o->fused && !md->q_lora_rank) /* q (and its gate), k and v in one */
            return (s = gemm(st, md, A, "qkv_proj", M, H, all, o, count, err)) || !b
                       ? s
                       : bias(st, md, A, "qkv_bias", M, all, o, count, err);
        if (md->q_lora_rank) {
            if ((s = gemm(st, md, A, "q_a_proj", M, H, md->q_lora_rank, o, count, err)) ||
                (full(o) && (s = norm(st, "q_a_norm", M, md->q_lora_rank, o, count, err))) ||
                (s = gemm(st, md, A, "q_b_proj", M, md->q_lora_rank, qw, o, count, err)))
                return s;
        } else if ((s = gemm(st, md, A, "q_proj", M, H, qw, o, count, err))) {
            return s;
        }
        if (o->fused)
            return (s = gemm(st, md, A, "kv_proj", M, H, nkv * dh + vw, o, count, err)) || !b
                       ? s
                       : bias(st, md, A, "kv_bias", M, nkv * dh + vw, o, count, err);
        if ((s = gemm(st, md, A, "k_proj", M, H, nkv * dh, o, count, err)) ||
            (vw && (s = gemm(st, md, A, "v_proj", M, H, vw, o, count, err))))
            return s;
        return !b || (s = bias(st, md, A, "k_bias", M, nkv * dh, o, count, err)) || !vw
                   ? s
                   : bias(st, md, A, "v_bias", M, vw, o, count, err);
    }
    if (o->fused)
        return (s = gemm(st, md, A, "qkv_proj", M, H, (nq + 2 * nkv) * dh, o, count, err)) || !b
                   ? s
                   : bias(st, md, A, "qkv_bias", M, (nq + 2 * nkv) * dh, o, count, err);
    if ((s = gemm(st, md, A, "q_proj", M, H, nq * dh, o, count, err)) ||
        (s = gemm(st, md, A, "k_proj", M, H, nkv * dh, o, count, err)) ||
        (s = gemm(st, md, A, "v_proj", M, H, nkv * dh, o, count, err)))
        return s;
    if (b && ((s = bias(st, md, A, "q_bias", M, nq * dh, o, count, err)) ||
              (s = bias(st, md, A, "k_bias", M, nkv * dh, o, count, err)) ||
              (s = bias(st, md, A, "v_bias", M, nkv * dh, o, count, err))))
        return s;
    return RF_OK;
}

static int64_t o_width(const rf_model *md)
{
    if (md->kv_lora_rank)
        return md->n_q * md->v_head_dim;
    return md->n_q * (md->attn_v_dim ? md->attn_v_dim : md->head_dim);
}

#define NOTE_TOPK "index_topk keys (sparse)"

/* Attention itself, for `count` layers: each query attends to `keys` keys
 * (at most `window` of them, 0: no window; only the keys up to itself under
 * o->causal) and the step reads the K/V (or latent) of `read` positions
 * once. They differ only on a sliding layer in prefill, where T queries
 * each see the window and together read the union of their windows (see
 * decompose). */
static rf_status attention(walk *st, const char *name, const rf_model *md, const rf_step_opts *o,
                           int64_t q_tokens, int64_t keys, int64_t window, int64_t chunk,
                           int64_t read, uint64_t count, rf_err *err)
{
    if (!count || keys < 1)
        return RF_OK;
    rf_attn_desc d = {.n_q = md->n_q,
                      .n_kv = md->n_kv,
                      .head_dim = md->head_dim,
                      .v_head_dim = md->attn_v_dim,
                      .kv_elems_per_token = kv_elems(md),
                      .batch = o->batch,
                      .q_tokens = q_tokens,
                      .keys = keys,
                      .naive = o->naive_attn,
                      .window = window,
                      .chunk = chunk,
                      .causal = o->causal};
    if (md->kv_lora_rank && q_tokens == 1) {
        /* MLA decode with the up-projections absorbed: every head scores
         * against the shared latent (c_kv, k_rope) of r + rope elements and
         * accumulates in the r-wide latent:
         *   F = 2 n_q S (r + rope) + 2 n_q S r,  Q = S (r + rope) b_kv
         * per sequence. */
        d.n_kv = 1;
        d.head_dim = md->kv_lora_rank + md->qk_rope_dim;
        d.v_head_dim = md->kv_lora_rank;
        d.kv_elems_per_token = md->kv_lora_rank + md->qk_rope_dim;
    } else if (md->kv_lora_rank) {
        /* MLA prefill, latent expanded by kv_b_proj (counted there): plain
         * multi-head attention of q/k width nope + rope and v width v,
         *   F = 2 n_q q S (nope + rope) + 2 n_q q S v,
         * reading the cached latent once, Q = S (r + rope) b_kv. */
        d.n_kv = md->n_q;
        d.head_dim = md->qk_nope_dim + md->qk_rope_dim;
        d.v_head_dim = md->v_head_dim;
        d.kv_elems_per_token = md->kv_lora_rank + md->qk_rope_dim;
    }
    rf_op op, wide;
    rf_status s;
    if (full(o)) {
        /* flash: one operator, `name`; naive: qk, softmax, pv */
        static const char *const naive_g[3] = {"qk", "softmax", "pv"};
        static const char *const naive_w[3] = {"qk_swa", "softmax_swa", "pv_swa"};
        bool is_swa = !strcmp(name, RF_OP_ATTN_SWA);
        const char *const flash[3] = {name, name, name};
        rf_op three[3];
        size_t n = 0;
        d.read_keys = chunk ? 0 : read; /* chunked: rf_op_attention reads the chunks */
        if ((s = rf_op_attention_full(o->naive_attn ? (is_swa ? naive_w : naive_g) : flash, &d,
                                      o->kv, o->a, three, &n, err)))
            return s;
        for (size_t i = 0; i < n && !s; i++) {
            if (is_swa)
                three[i].note = "sliding window";
            else if (chunk || (window && md->index_topk))
                three[i].note = chunk ? RF__NOTE_CHUNKED : NOTE_TOPK;
            s = push(st, &three[i], count, err);
        }
        return s;
    }
    s = rf_op_attention(name, &d, o->kv, o->a, &op, err);
    if (s)
        return s;
    if (chunk || (window && md->index_topk))
        op.note = chunk ? RF__NOTE_CHUNKED : NOTE_TOPK;
    if (!chunk && read != (int64_t)op.n) {
        /* the same operator over `read` keys: its K/V bytes are those read */
        d.keys = read;
        d.window = 0;
        d.causal = false;
        if ((s = rf_op_attention(name, &d, o->kv, o->a, &wide, err)))
            return s;
        op.kv_bytes = wide.kv_bytes;
        op.bytes = op.kv_bytes + op.extra_bytes; /* both below 2^63: checked there */
    }
    if (!strcmp(name, RF_OP_ATTN_SWA))
        op.note = "sliding window";
    return push(st, &op, count, err);
}

/* Dense MLP of `count` layers. */
static rf_status mlp(walk *st, const rf_model *md, const rf_step_opts *o, int64_t M, uint64_t count,
                     rf_err *err)
{
    rf_status s;
    int64_t H = md->hidden, F = md->ffn;
    const rf_module P = RF_MOD_MLP;
    bool b = full(o) && md->mlp_bias;
    if (md->ffn_ungated) /* up -> act -> down */
        return (s = gemm(st, md, P, "up_proj", M, H, F, o, count, err)) ||
                       (full(o) && count && (s = act(st, md, "act", M, F, o, count, err)))
                   ? s
                   : gemm(st, md, P, "down_proj", M, F, H, o, count, err);
    if (o->fused) {
        if ((s = gemm(st, md, P, "gate_up_proj", M, H, 2 * F, o, count, err)) ||
            (b && count && (s = bias(st, md, P, "gate_up_bias", M, 2 * F, o, count, err))))
            return s;
    } else if ((s = gemm(st, md, P, "gate_proj", M, H, F, o, count, err)) ||
               (s = gemm(st, md, P, "up_proj", M, H, F, o, count, err)) ||
               (b && count &&
                ((s = bias(st, md, P, "gate_bias", M, F, o, count, err)) ||
                 (s = bias(st, md, P, "up_bias", M, F, o, count, err))))) {
        return s;
    }
    if ((full(o) && count && (s = act(st, md, "act", M, F, o, count, err))) ||
        (s = gemm(st, md, P, "down_proj", M, F, H, o, count, err)))
        return s;
    return b && count ? bias(st, md, P, "down_bias", M, H, o, count, err) : RF_OK;
}

/* One routed-expert operator: FLOPs and activations of all M k token-expert
 * pairs (its m), weights of the `touched` experts the step streams (an
 * expected value under uniform routing, rounded to the byte). */
static rf_status expert(walk *st, const rf_model *md, const char *name, int64_t pairs,
                        double touched, int64_t k, int64_t n, const rf_step_opts *o, uint64_t count,
                        rf_err *err)
{
    rf_op op;
    rf_status s = rf_op_gemm_out(name, pairs, k, n, wdt(md, o, RF_MOD_EXPERTS), o->a,
                                 rf_step_out_dtype(o), &op, err);
    if (s)
        return s;
    /* rf_op_gemm counted one expert's W[K, N]; the step streams `touched` */
    double w = touched * (double)op.weight_bytes;
    if (!(w < 9.2e18))
        return rf_err_set(err, RF_ERANGE, "%s: expert weight bytes overflow", name);
    op.weight_bytes = (uint64_t)llround(w);
    if (!rf_add_u64(op.weight_bytes, op.act_bytes, &op.bytes))
        return rf_err_set(err, RF_ERANGE, "%s: expert bytes overflow", name);
    /* op.m stays every token-expert pair, so the row's own columns give
     * F = 2 m K N and Q = experts K N b_w + m (K b_a + N b_y) */
    op.experts = touched;
    op.m_per_expert = (double)pairs / touched;
    op.note = o->moe == RF_MOE_ALL ? "every expert streamed" : "expected under uniform routing";
    return push(st, &op, count, err);
}

/* Routed experts a MoE layer streams at M tokens in flight: all E, or
 * the expected E (1 - (1 - k/E)^M) under uniform routing (M real, so the
 * crossing points can solve for it). */
static double experts_touched(const rf_model *md, rf_moe_routing moe, double M)
{
    double E = (double)md->n_experts, k = (double)md->top_k;
    double touched = moe == RF_MOE_UNIFORM ? E * (1.0 - pow(1.0 - k / E, M)) : E;
    return touched < k ? k : touched; /* rounding at tiny M: at least k experts run */
}

double rf_moe_tokens_for_rows(const rf_model *md, rf_moe_routing moe, double rows)
{
    double E = (double)md->n_experts, k = (double)md->top_k;
    if (moe == RF_MOE_ALL)
        return rows * E / k;
    /* rows(M) = M k / touched(M) rises with M, from M (touched = k) to
     * M k / E (touched = E), so its root lies in [rows, rows E / k] */
    double lo = rows, hi = rows * E / k;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid * k / experts_touched(md, moe, mid) < rows)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static rf_status moe(walk *st, const rf_model *md, const rf_step_opts *o, int64_t M, uint64_t count,
                     rf_err *err)
{
    rf_status s;
    int64_t H = md->hidden, E = md->n_experts, k = md->top_k;
    double touched = experts_touched(md, o->moe, (double)M);
    st->step->experts_touched = touched;
    int64_t pairs = M * k; /* M <= 2^40 bounded by the caller, k <= 2^12 */
    st->step->tokens_per_expert = (double)pairs / touched;
    /* the router scores E experts (+ qwen2_moe's one shared-expert gate) */
    if ((s = gemm(st, md, RF_MOD_ROUTER, "router", M, H, E + (md->shared_expert_gate ? 1 : 0), o,
                  count, err)))
        return s;
    if (md->n_shared) {
        const rf_module S = RF_MOD_SHARED;
        int64_t W = md->n_shared * (md->shared_ffn ? md->shared_ffn : md->moe_ffn);
        bool g = !md->ffn_ungated;
        if ((g && (s = gemm(st, md, S, "shared_gate", M, H, W, o, count, err))) ||
            (s = gemm(st, md, S, "shared_up", M, H, W, o, count, err)) ||
            (full(o) && (s = act(st, md, "shared_act", M, W, o, count, err))) ||
            (s = gemm(st, md, S, "shared_down", M, W, H, o, count, err)))
            return s;
    }
    if ((!md->ffn_ungated &&
         (s = expert(st, md, "expert_gate", pairs, touched, H, md->moe_ffn, o, count, err))) ||
        (s = expert(st, md, "expert_up", pairs, touched, H, md->moe_ffn, o, count, err)) ||
        (full(o) && (s = act(st, md, "expert_act", pairs, md->moe_ffn, o, count, err))) ||
        (s = expert(st, md, "expert_down", pairs, touched, md->moe_ffn, H, o, count, err)))
        return s;
    return RF_OK;
}

static rf_status check_opts(const rf_step_opts *o, rf_err *err)
{
    if (o->batch < 1 || o->batch > RF_DIM_MAX)
        return rf_err_set(err, o->batch < 1 ? RF_EINVAL : RF_ERANGE,
                          "batch (%lld) must be in [1, %lld]", (long long)o->batch,
                          (long long)RF_DIM_MAX);
    if (o->context < 0 || o->context > RF_DIM_MAX)
        return rf_err_set(err, o->context < 0 ? RF_EINVAL : RF_ERANGE,
                          "context (%lld) must be in [0, %lld]", (long long)o->context,
                          (long long)RF_DIM_MAX);
    if (o->fuse_elementwise && !full(o))
        return rf_err_set(err, RF_EINVAL,
                          "fuse-elementwise fuses the norms and residuals of the full traffic "
                          "model: it needs traffic full");
    if (o->phase == RF_PREFILL && (o->tokens < 1 || o->tokens > RF_DIM_MAX))
        return rf_err_set(err, o->tokens < 1 ? RF_EINVAL : RF_ERANGE,
                          "tokens (%lld) must be in [1, %lld]", (long long)o->tokens,
                          (long long)RF_DIM_MAX);
    return RF_OK;
}

/* Tokens in flight through every linear layer: B (decode) or B T. */
static rf_status tokens_in_flight(const rf_step_opts *o, int64_t *M, rf_err *err)
{
    uint64_t m = (uint64_t)o->batch;
    if (o->phase == RF_PREFILL && (!rf_mul_u64(m, (uint64_t)o->tokens, &m) || m > RF_DIM_MAX))
        return rf_err_set(err, RF_ERANGE, "batch x tokens (%lld x %lld) is beyond %lld",
                          (long long)o->batch, (long long)o->tokens, (long long)RF_DIM_MAX);
    *M = (int64_t)m;
    return RF_OK;
}

/* A class of layers that run the same operators: mixer, where attention
 * attends, FFN, the modules left unquantized in them; `layer` one of them. */
typedef struct layer_class {
    rf_mixer mixer;
    rf_attn_local local;
    rf_ffn_kind ffn;
    uint16_t unq;
    int64_t layer;
    uint64_t count;
} layer_class;

#define MAX_CLASSES 32

static int class_cmp(const layer_class *a, const layer_class *b)
{
    if (a->mixer != b->mixer)
        return a->mixer < b->mixer ? -1 : 1;
    if (a->local != b->local)
        return a->local < b->local ? -1 : 1;
    if (a->ffn != b->ffn)
        return a->ffn < b->ffn ? -1 : 1;
    return a->unq == b->unq ? 0 : a->unq < b->unq ? -1 : 1;
}

/* The layer classes of md, in the order of class_cmp (global before local
 * attention, a dense MLP before the MoE: today's operator order). */
static rf_status layer_classes(const rf_model *md, layer_class *cls, size_t *n, rf_err *err)
{
    *n = 0;
    for (int64_t l = 0; l < md->layers; l++) {
        rf_mixer x = rf_model_layer_mixer(md, l);
        layer_class k = {.mixer = x,
                         .local = x == RF_MIX_ATTN ? rf_model_layer_local(md, l) : RF_LOCAL_GLOBAL,
                         .ffn = rf_model_layer_ffn(md, l),
                         .unq = md->unquantized_layer[l],
                         .layer = l,
                         .count = 1};
        size_t i = 0;
        while (i < *n && class_cmp(&cls[i], &k))
            i++;
        if (i < *n) {
            cls[i].count++;
            continue;
        }
        if (*n == MAX_CLASSES)
            return rf_err_set(err, RF_EINVAL, "%s: more than %d kinds of layer", md->name,
                              MAX_CLASSES);
        while (i > 0 && class_cmp(&cls[i - 1], &k) > 0) { /* insertion sort */
            cls[i] = cls[i - 1];
            i--;
        }
        cls[i] = k;
        ++*n;
    }
    return RF_OK;
}

/* The model one class runs: its attention shape in n_q, n_kv, head_dim,
 * attn_v_dim (0 when d_v = d_h) and k_eq_v; its per-layer exclusions
 * folded into unquantized_modules. */
static void class_model(const rf_model *md, const layer_class *k, rf_model *c)
{
    *c = *md;
    rf_attn_shape a = rf_model_attn_shape(md, k->layer);
    c->n_q = a.n_q;
    c->n_kv = a.n_kv;
    c->head_dim = a.head_dim;
    c->attn_v_dim = a.v_dim == a.head_dim ? 0 : a.v_dim;
    c->k_eq_v = a.k_eq_v;
    c->unquantized_modules |= k->unq;
}

/* The state dtype of GDN and Mamba2 layers (rf_model.h) and of their conv. */
static rf_dtype state_dtype(const rf_model *md)
{
    return md->has_state_dtype ? md->state_dtype : rf_dtype_of(RF_BF16);
}

/* The input projections of a GDN or Mamba2 mixer. */
static rf_status mixer_proj(walk *st, const rf_model *c, rf_mixer x, const rf_step_opts *o,
                            uint64_t n, rf_err *err)
{
    int64_t H = c->hidden, M = st->M;
    rf_status s;
    if (x == RF_MIX_GDN) {
        int64_t kd = c->gdn_k_heads * c->gdn_k_dim, vd = c->gdn_v_heads * c->gdn_v_dim;
        if (o->fused) /* vLLM's one in_proj of both */
            return gemm(st, c, RF_MOD_MIXER, "in_proj", M, H, 2 * kd + 2 * vd + 2 * c->gdn_v_heads,
                        o, n, err);
        return (s = gemm(st, c, RF_MOD_MIXER, "in_proj_qkvz", M, H, 2 * kd + 2 * vd, o, n, err))
                   ? s
                   : gemm(st, c, RF_MOD_MIXER, "in_proj_ba", M, H, 2 * c->gdn_v_heads, o, n, err);
    }
    int64_t di = c->ssm_heads * c->ssm_head_dim, gn = c->ssm_groups * c->ssm_state;
    return gemm(st, c, RF_MOD_MIXER, "in_proj", M, H, 2 * di + 2 * gn + c->ssm_heads, o, n, err);
}

/* The core of a GDN or Mamba2 mixer: the short conv, then the recurrence
 * (decode) or the chunked scan (prefill), rf_op.h. */
static rf_status mixer_core(walk *st, const rf_model *c, rf_mixer x, const rf_step_opts *o,
                            uint64_t n, rf_err *err)
{
    bool f = full(o), held = o->context > 0;
    rf_op op;
    rf_status s;
    rf_dtype w = wdt(c, o, RF_MOD_MIXER), conv = rf_dtype_of(RF_BF16);
    if (x == RF_MIX_GDN) {
        int64_t kd = c->gdn_k_heads * c->gdn_k_dim, vd = c->gdn_v_heads * c->gdn_v_dim;
        rf_seq_desc d = {.heads = c->gdn_v_heads,
                         .k_dim = c->gdn_k_dim,
                         .v_dim = c->gdn_v_dim,
                         .groups = c->gdn_k_heads,
                         .chunk = RF_GDN_CHUNK,
                         .batch = o->batch,
                         .q_tokens = st->q_tokens,
                         .has_state = held};
        if ((s = put(st,
                     rf_op_short_conv("gdn_conv", o->batch, st->q_tokens, 2 * kd + vd, c->gdn_conv,
                                      held, w, conv, o->a, f, &op, err),
                     &op, n, err)))
            return s;
        return put(st, rf_op_gdn("gdn_delta_rule", &d, state_dtype(c), o->a, f, &op, err), &op, n,
                   err);
    }
    int64_t di = c->ssm_heads * c->ssm_head_dim, gn = c->ssm_groups * c->ssm_state;
    rf_seq_desc d = {.heads = c->ssm_heads,
                     .k_dim = c->ssm_state,
                     .v_dim = c->ssm_head_dim,
                     .groups = c->ssm_groups,
                     .chunk = c->ssm_chunk ? c->ssm_chunk : RF_SSM_CHUNK_DEFAULT,
                     .batch = o->batch,
                     .q_tokens = st->q_tokens,
                     .has_state = held};
    if ((s = put(st,
                 rf_op_short_conv("mamba_conv", o->batch, st->q_tokens, di + 2 * gn, c->ssm_conv,
                                  held, w, conv, o->a, f, &op, err),
                 &op, n, err)))
        return s;
    return put(st, rf_op_ssd("mamba_ssd", &d, state_dtype(c), o->a, f, &op, err), &op, n, err);
}

/* A GDN or Mamba2 mixer's output: full, the gated norm (norm(o) x silu(z),
 * counted as act over the output width), then out_proj. */
static rf_status mixer_out(walk *st, const rf_model *c, rf_mixer x, const rf_step_opts *o,
                           uint64_t n, rf_err *err)
{
    int64_t w = x == RF_MIX_GDN ? c->gdn_v_heads * c->gdn_v_dim : c->ssm_heads * c->ssm_head_dim;
    rf_op op;
    rf_status s;
    if (full(o) &&
        (s = put(st, rf_op_act("mixer_gate", st->M, w, RF_ACT_SILU_MUL_FLOPS, o->a, &op, err), &op,
                 n, err)))
        return s;
    return gemm(st, c, RF_MOD_MIXER, "out_proj", st->M, w, c->hidden, o, n, err);
}

/* DSA's indexer: its projections (the q latent q_lora_rank -> heads x d,
 * the key H -> d, the head weights H -> heads) */
static rf_status indexer_proj(walk *st, const rf_model *c, const rf_step_opts *o, uint64_t n,
                              rf_err *err)
{
    const rf_module I = RF_MOD_INDEXER;
    int64_t M = st->M, H = c->hidden, ih = c->index_heads, id = c->index_head_dim;
    rf_status s;
    if ((s = gemm(st, c, I, "index_wq_b", M, c->q_lora_rank, ih * id, o, n, err)) ||
        (s = gemm(st, c, I, "index_wk", M, H, id, o, n, err)))
        return s;
    return gemm(st, c, I, "index_weights_proj", M, H, ih, o, n, err);
}

/* Softmax attention of an attention class: global, sliding, chunked, or
 * DSA's indexer and the main attention over min(S, index_topk) keys. */
static rf_status attn_core(walk *st, const rf_model *c, rf_attn_local local, const rf_step_opts *o,
                           uint64_t n, rf_err *err)
{
    int64_t q = st->q_tokens, keys = st->keys;
    if (local == RF_LOCAL_SLIDING)
        return attention(st, RF_OP_ATTN_SWA, c, o, q, keys, c->window, 0, st->win_read, n, err);
    if (local == RF_LOCAL_CHUNKED)
        return attention(st, "attention_chunked", c, o, q, keys, 0, c->attn_chunk, keys, n, err);
    if (!c->index_topk)
        return attention(st, "attention", c, o, q, keys, 0, 0, keys, n, err);
    if (keys < 1)
        return RF_OK;
    rf_attn_desc d = {.batch = o->batch, .q_tokens = q, .keys = keys, .causal = o->causal};
    rf_op op;
    rf_status s = rf_op_indexer("indexer", c->index_heads, c->index_head_dim, &d,
                                rf_model_index_bytes_per_token(c), o->a, full(o), &op, err);
    if ((s = put(st, s, &op, n, err)))
        return s;
    /* the selected keys: a query sees min(p, k) of them; together the
     * step's q queries read at most min(S, q k) positions */
    int64_t k = c->index_topk, read = keys / q >= k ? q * k : keys;
    return attention(st, "attention", c, o, q, keys, k, 0, read < keys ? read : keys, n, err);
}

/* One class's layers, stage by stage (enum stage). */
static rf_status layer_rows(walk *st, const rf_model *c, const layer_class *k,
                            const rf_step_opts *o, rf_err *err)
{
    bool f = full(o), mixes = k->mixer != RF_MIX_NONE, ffn = k->ffn != RF_FFN_NONE;
    bool attn = k->mixer == RF_MIX_ATTN, post = f && rf_model_post_norms(c);
    int64_t M = st->M, H = c->hidden;
    uint64_t n = k->count;
    rf_op r;
    rf_status s;
    st->stage = S_NORM;
    if (f && mixes && (s = norm(st, "attn_norm", M, H, o, n, err)))
        return s;
    st->stage = S_PROJ;
    if ((attn && (s = attn_proj(st, c, o, M, st->M_kv, n, err))) ||
        (attn && c->index_topk && (s = indexer_proj(st, c, o, n, err))) ||
        (mixes && !attn && (s = mixer_proj(st, c, k->mixer, o, n, err))))
        return s;
    st->stage = S_ROPE;
    if (f && attn && (s = rope_kv(st, c, o, M, n, err)))
        return s;
    st->stage = S_CORE;
    if ((attn && (s = attn_core(st, c, k->local, o, n, err))) ||
        (mixes && !attn && (s = mixer_core(st, c, k->mixer, o, n, err))))
        return s;
    st->stage = S_OUT;
    if (attn &&
        ((f && c->attn_out_gate &&
          (s = put(st, rf_op_act("attn_gate", M, o_width(c), RF_ACT_SILU_MUL_FLOPS, o->a, &r, err),
                   &r, n, err))) ||
         (s = gemm(st, c, RF_MOD_ATTN, "o_proj", M, o_width(c), H, o, n, err)) ||
         (f && c->o_bias && (s = bias(st, c, RF_MOD_ATTN, "o_bias", M, H, o, n, err)))))
        return s;
    if (mixes && !attn && (s = mixer_out(st, c, k->mixer, o, n, err)))
        return s;
    st->stage = S_POST;
    if ((post && mixes && (s = norm(st, "post_attn_norm", M, H, o, n, err))) ||
        (f && mixes &&
         (s = put(st, rf_op_residual("attn_residual", M, H, o->a, &r, err), &r, n, err))) ||
        (f && ffn && (s = norm(st, "mlp_norm", M, H, o, n, err))))
        return s;
    st->stage = S_MLP;
    if ((k->ffn == RF_FFN_DENSE || k->ffn == RF_FFN_MOE_DENSE) && (s = mlp(st, c, o, M, n, err)))
        return s;
    st->stage = S_MOE;
    if ((k->ffn == RF_FFN_MOE || k->ffn == RF_FFN_MOE_DENSE) && (s = moe(st, c, o, M, n, err)))
        return s;
    st->stage = S_POST2;
    if ((post && ffn && (s = norm(st, "post_mlp_norm", M, H, o, n, err))) ||
        (f && ffn &&
         (s = put(st, rf_op_residual("mlp_residual", M, H, o->a, &r, err), &r, n, err))))
        return s;
    return RF_OK;
}

static rf_status decompose(const rf_model *md, const rf_step_opts *o, rf_step *out, rf_err *err)
{
    rf_status s;
    walk w = {.step = out};
    walk *st = &w;
    if ((s = tokens_in_flight(o, &w.M, err)))
        return s;
    int64_t M = w.M;
    w.q_tokens = o->phase == RF_PREFILL ? o->tokens : 1;
    w.keys = o->phase == RF_PREFILL ? o->context + o->tokens : o->context;
    int64_t keys = w.keys, q_tokens = w.q_tokens;
    /* A sliding layer: each query attends to at most `window` keys. In
     * prefill the T new queries' windows end at T consecutive positions, so
     * together they read min(S, window + T - 1) positions of K/V; in decode
     * (T = 1) that is the window itself. */
    int64_t win_keys = md->window && keys > md->window ? md->window : keys;
    w.win_read = keys - win_keys > q_tokens - 1 ? win_keys + q_tokens - 1 : keys;
    /* MLA prefill expands the latent of every key: B (s + T) positions,
     * which keys <= RF_DIM_MAX and the check below keep in range */
    w.M_kv = M;
    if (md->kv_lora_rank && o->phase == RF_PREFILL) {
        uint64_t mkv;
        if (!rf_mul_u64((uint64_t)o->batch, (uint64_t)keys, &mkv) || mkv > RF_DIM_MAX)
            return rf_err_set(err, RF_ERANGE, "batch x keys (%lld x %lld) is beyond %lld",
                              (long long)o->batch, (long long)keys, (long long)RF_DIM_MAX);
        w.M_kv = (int64_t)mkv;
    }
    layer_class cls[MAX_CLASSES];
    size_t n_cls;
    rf_model c; /* ~8 KB of scratch on the stack: core allocates nothing */
    if ((s = layer_classes(md, cls, &n_cls, err)))
        return s;
    for (size_t i = 0; i < n_cls; i++) {
        class_model(md, &cls[i], &c);
        if ((s = layer_rows(st, &c, &cls[i], o, err)))
            return s;
    }
    /* lm_head: logits for the last position of each sequence (M = B), as
     * serving engines compute them, after the final norm of those rows; the
     * embedding gathers one row a token. */
    bool f = full(o);
    int64_t H = md->hidden;
    rf_op g;
    w.stage = S_TAIL;
    if ((f && (s = norm(st, "final_norm", o->batch, H, o, 1, err))) ||
        (s = gemm(st, md, RF_MOD_LM_HEAD, "lm_head", o->batch, md->hidden, md->vocab, o, 1, err)) ||
        (s = rf_op_gather("embed", M, md->hidden, wdt(md, o, RF_MOD_EMBED), &g, err)) ||
        (s = push(st, &g, 1, err)))
        return s;
    return RF_OK;
}

/* acc += count * v, checked */
static bool acc(uint64_t *sum, uint64_t count, uint64_t v)
{
    uint64_t x;
    return rf_mul_u64(count, v, &x) && rf_add_u64(*sum, x, sum);
}

rf_status rf_model_kv_bytes(const rf_model *m, rf_dtype kv, int64_t context, uint64_t *bytes,
                            rf_err *err)
{
    uint64_t elems = 0, per = (uint64_t)rf_model_kv_elems_per_layer(m), one;
    bool hybrid = rf_model_is_hybrid(m);
    /* no sliding layer: L equal terms, one product (the sweep's fit calls
     * this for every point) */
    if (!m->window && !hybrid &&
        (!rf_mul_u64((uint64_t)context, per, &one) || !acc(&elems, (uint64_t)m->layers, one)))
        return rf_err_set(err, RF_ERANGE, "KV of context %lld overflows", (long long)context);
    /* per layer: the positions it keeps (a window or a chunk caps them) of
     * its own K/V width (0 for a layer that is not attention) */
    for (int64_t l = 0; l < m->layers && (m->window || hybrid); l++) {
        rf_attn_local local = rf_model_layer_local(m, l);
        int64_t cap = local == RF_LOCAL_SLIDING   ? m->window
                      : local == RF_LOCAL_CHUNKED ? m->attn_chunk
                                                  : 0;
        int64_t s = cap && context > cap ? cap : context;
        if (!acc(&elems, (uint64_t)s, (uint64_t)rf_model_kv_elems_layer(m, l)))
            return rf_err_set(err, RF_ERANGE, "KV of context %lld overflows", (long long)context);
    }
    rf_status st = rf_dtype_bytes(kv, elems, bytes, err);
    if (st || !m->index_topk)
        return st;
    /* DSA: every attention layer's index keys, in their own dtype */
    uint64_t idx = 0;
    if (!acc(&idx, (uint64_t)context, rf_model_index_bytes_per_token(m)) ||
        !rf_mul_u64(idx, (uint64_t)rf_model_attn_layers(m), &idx) ||
        !rf_add_u64(*bytes, idx, bytes))
        return rf_err_set(err, RF_ERANGE, "KV of context %lld overflows", (long long)context);
    return RF_OK;
}

rf_status rf_model_seq_bytes(const rf_model *m, rf_dtype kv, int64_t context, uint64_t *bytes,
                             rf_err *err)
{
    uint64_t state;
    rf_status s;
    if ((s = rf_model_kv_bytes(m, kv, context, bytes, err)) ||
        (s = rf_model_state_bytes(m, &state, err)))
        return s;
    if (!rf_add_u64(*bytes, state, bytes))
        return rf_err_set(err, RF_ERANGE, "KV and state of context %lld overflow",
                          (long long)context);
    return RF_OK;
}

rf_status rf_step_compute(const rf_model *md, const rf_step_opts *o, const rf_roof *roof,
                          rf_step *out, rf_err *err)
{
    rf_status s;
    if ((s = rf_model_validate(md, err)) || (s = check_opts(o, err)))
        return s;
    rf_step *st = out;
    st->n_ops = 0;
    st->experts_touched = st->tokens_per_expert = 0;
    st->roof = *roof;
    if ((s = decompose(md, o, st, err)))
        return s;

    uint64_t flops = 0, op_bytes = 0, wb = 0, kvb = 0, xb = 0, fixed = 0;
    double sum_of_max = 0;
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        /* KV read: attention's (kv_write's cache writes are its own row);
         * fixed: the bytes that do not grow with B (every weight read but
         * the embedding's gathered rows) */
        bool attn = op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL;
        /* weights: the GEMMs' and a short conv's (an attention-kind row) */
        if (!acc(&flops, op->count, op->flops) || !acc(&op_bytes, op->count, op->bytes) ||
            ((op->kind == RF_OP_GEMM || attn) && !acc(&wb, op->count, op->weight_bytes)) ||
            (op->kind != RF_OP_GATHER && !acc(&fixed, op->count, op->weight_bytes)) ||
            (attn && !acc(&kvb, op->count, op->kv_bytes)) || !acc(&xb, op->count, op->extra_bytes))
            return rf_err_set(err, RF_ERANGE, "step totals overflow 64 bits");
        rf_point p = rf_roof_place(roof, (double)op->flops, (double)op->bytes);
        sum_of_max += (double)op->count * p.floor_s;
    }
    uint64_t total = op_bytes; /* full: every operator's bytes */
    if (!full(o) && (!rf_add_u64(wb, kvb, &total) || !rf_add_u64(total, xb, &total)))
        return rf_err_set(err, RF_ERANGE, "step bytes overflow 64 bits");
    if ((s = rf_model_kv_bytes(md, o->kv, 1, &st->kv_bytes_per_token, err)))
        return s;

    st->weight_bytes = wb;
    st->kv_bytes = kvb;
    st->extra_bytes = xb;
    st->total_bytes = total;
    st->op_bytes = op_bytes;
    st->flops = flops;
    st->floor_sum_of_max_s = sum_of_max;
    rf__step_floors(st, roof,
                    (double)o->batch * (o->phase == RF_PREFILL ? (double)o->tokens : 1.0));
    /* FLOPs and KV bytes are both linear in B, so FLOPs / (KV + scores) at
     * any B is the B -> infinity limit of the blended intensity. */
    st->blended_intensity_limit = 0;
    st->throughput_cap_tokens_per_s = 0;
    if (o->phase == RF_DECODE && kvb) {
        /* full: every byte but the fixed weight reads grows with B */
        double per_b = full(o) ? (double)(op_bytes - fixed) : (double)(kvb + xb);
        st->blended_intensity_limit = (double)flops / per_b;
        st->throughput_cap_tokens_per_s = roof->bw_bytes_per_s * (double)o->batch / per_b;
    }
    return RF_OK;
}

/* Does the step of o, with only the sizes in `keep` as given, overflow? */
static bool overflows(const rf_model *m, const rf_step_opts *o, const rf_roof *roof, unsigned keep,
                      rf_step *scratch)
{
    rf_step_opts one = *o;
    if (!(keep & RF_STEP_BATCH))
        one.batch = 1;
    if (!(keep & RF_STEP_CONTEXT))
        one.context = 0;
    if (!(keep & RF_STEP_TOKENS))
        one.tokens = 1;
    return rf_step_compute(m, &one, roof, scratch, NULL) == RF_ERANGE;
}

unsigned rf_step_range_blame(const rf_model *m, const rf_step_opts *o, const rf_roof *roof)
{
    rf_step st; /* ~8 KB of scratch on the stack: core allocates nothing */
    unsigned all = RF_STEP_BATCH | RF_STEP_CONTEXT | (o->phase == RF_PREFILL ? RF_STEP_TOKENS : 0);
    unsigned alone = 0, above = 0;
    if (!overflows(m, o, roof, all, &st))
        return 0;
    for (unsigned bit = RF_STEP_BATCH; bit <= RF_STEP_TOKENS; bit <<= 1)
        if ((all & bit) && overflows(m, o, roof, bit, &st))
            alone |= bit;
    above = (o->batch > 1 ? RF_STEP_BATCH : 0) | (o->context > 0 ? RF_STEP_CONTEXT : 0) |
            (o->phase == RF_PREFILL && o->tokens > 1 ? RF_STEP_TOKENS : 0);
    return alone ? alone : above;
}

rf_status rf_crossover_compute(const rf_model *md, const rf_step_opts *o, const rf_roof *roof,
                               rf_crossover *out, rf_err *err)
{
    rf_step_opts one = *o;
    one.phase = RF_DECODE;
    one.batch = 1;
    one.context = 0;
    rf_step st;
    rf_status s = rf_step_compute(md, &one, roof, &st, err);
    if (s)
        return s;
    memset(out, 0, sizeof *out);
    out->ridge = roof->ridge;
    for (size_t i = 0; i < st.n_ops; i++) {
        const rf_op *op = &st.ops[i];
        if (op->kind != RF_OP_GEMM)
            continue;
        if (out->n_ops == RF_CROSS_MAX)
            return rf_err_set(err, RF_EINTERNAL, "more than %d linear layers in one step",
                              RF_CROSS_MAX);
        rf_cross *c = &out->ops[out->n_ops++];
        c->name = op->name;
        c->k = op->k;
        c->n = op->n;
        /* each GEMM in its own weights' dtype: a quantized checkpoint keeps
         * some modules (attention, router, lm_head) in its torch_dtype */
        c->crosses = rf_gemm_mstar(op->k, op->n, op->w, o->a, roof->ridge, &c->m_star);
        c->expert = op->experts > 0;
        c->tokens_star = c->m_star;
        if (c->crosses && c->expert) /* M* is rows an expert: the batch that routes them */
            c->tokens_star = rf_moe_tokens_for_rows(md, o->moe, c->m_star);
    }
    out->moe = o->moe;
    /* the square projection in attention's weights (a quantized checkpoint
     * may keep them in its torch_dtype): M* = I* b_w d^2 / (2 d^2 - 2 I* b_a d)
     * is positive exactly for d > I* b_a */
    out->square_w = wdt(md, o, RF_MOD_ATTN);
    out->square_a = o->a;
    out->square_never_below_d = roof->ridge * rf_dtype_bytes_per_elem(o->a);
    out->square_crosses = rf_crossover_square(out, md->hidden, &out->square_t_star);
    if (md->kv_lora_rank) {
        /* MLA prefill (see attention()): F = 2 n_q S^2 (nope + rope + v)
         * over Q = S (r + rope) b_kv, so I = I* at
         *   S* = I* (r + rope) b_kv / (2 n_q (nope + rope + v)) */
        double latent = (double)(md->kv_lora_rank + md->qk_rope_dim);
        double width = (double)(md->qk_nope_dim + md->qk_rope_dim + md->v_head_dim);
        out->attn_prefill_s_star =
            roof->ridge * latent * rf_dtype_bytes_per_elem(o->kv) / (2.0 * (double)md->n_q * width);
    } else {
        out->attn_prefill_s_star = rf_attn_prefill_sstar(md->n_q, md->n_kv, o->kv, roof->ridge);
    }
    out->causal = o->causal;
    if (o->causal) /* the triangle's F: I = I* one key short of twice as far */
        out->attn_prefill_s_star = rf_attn_causal_sstar(out->attn_prefill_s_star);
    return RF_OK;
}

size_t rf_step_gemm_shapes(const rf_step *st, rf_gemm_shape *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        if (op->kind != RF_OP_GEMM)
            continue;
        size_t j = 0;
        while (j < n && !(out[j].k == op->k && out[j].n == op->n))
            j++;
        if (j == n) {
            if (n == cap)
                continue;
            out[n++] = (rf_gemm_shape){.k = op->k, .n = op->n};
        }
        size_t used = strlen(out[j].ops);
        snprintf(out[j].ops + used, sizeof out[j].ops - used, "%s%s", used ? "," : "", op->name);
    }
    return n;
}

bool rf_crossover_square(const rf_crossover *cx, int64_t d, double *t_star)
{
    return rf_gemm_mstar(d, d, cx->square_w, cx->square_a, cx->ridge, t_star);
}

rf_status rf_fit_prepare(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes, double util,
                         uint64_t reserve_bytes, rf_fit *out, rf_err *err)
{
    if (!(util > 0 && util <= 1))
        return rf_err_set(err, RF_EINVAL, "util (%g) must be in (0, 1]", util);
    if (!mem_bytes)
        return rf_err_set(err, RF_EINVAL, "memory size is 0 (give --mem)");
    rf_fit f = {.util = util, .mem_bytes = mem_bytes, .reserve_bytes = reserve_bytes};
    rf_status s = rf_model_weight_bytes(m, o, &f.weight_bytes, err);
    if (s)
        return s;
    f.budget_bytes = util * (double)mem_bytes - (double)reserve_bytes;
    f.needed_bytes = f.weight_bytes;
    f.fits = (double)f.needed_bytes <= f.budget_bytes;
    *out = f;
    return RF_OK;
}

rf_status rf_fit_at(rf_fit *f, const rf_model *m, rf_dtype kv, int64_t batch, int64_t positions,
                    rf_err *err)
{
    if (batch < 0 || batch > RF_DIM_MAX || positions < 0 || positions > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "batch (%lld) and positions (%lld) must be in [0, %lld]",
                          (long long)batch, (long long)positions, (long long)RF_DIM_MAX);
    uint64_t seq, all, needed;
    rf_status s = rf_model_seq_bytes(m, kv, positions, &seq, err);
    if (s)
        return s;
    if (!rf_mul_u64((uint64_t)batch, seq, &all) || !rf_add_u64(f->weight_bytes, all, &needed))
        return rf_err_set(err, RF_ERANGE, "KV of %lld sequences at %lld positions overflows",
                          (long long)batch, (long long)positions);
    f->batch = batch;
    f->positions = positions;
    f->kv_bytes = all;
    f->needed_bytes = needed;
    f->fits = (double)needed <= f->budget_bytes;
    return RF_OK;
}

int64_t rf_step_positions(const rf_step_opts *o)
{
    /* both at most RF_DIM_MAX (2^40): the sum cannot overflow */
    return o->phase == RF_PREFILL ? o->context + o->tokens : o->context;
}

bool rf_model_context_beyond(const rf_model *m, int64_t positions)
{
    return m->max_context > 0 && positions > m->max_context;
}

rf_status rf_step_fit(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes, double util,
                      uint64_t reserve_bytes, rf_fit *out, rf_err *err)
{
    /* s + T beyond RF_DIM_MAX is refused by rf_fit_at */
    rf_status s = rf_fit_prepare(m, o, mem_bytes, util, reserve_bytes, out, err);
    return s ? s : rf_fit_at(out, m, o->kv, o->batch, rf_step_positions(o), err);
}

rf_status rf_capacity_compute(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes,
                              double util, uint64_t reserve_bytes, int64_t context,
                              rf_capacity *out, rf_err *err)
{
    rf_status s;
    rf_fit f = {0};
    if (context < 0 || context > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "context (%lld) must be in [0, %lld]", (long long)context,
                          (long long)RF_DIM_MAX);
    rf_capacity c = {
        .util = util, .mem_bytes = mem_bytes, .reserve_bytes = reserve_bytes, .context = context};
    if ((s = rf_fit_prepare(m, o, mem_bytes, util, reserve_bytes, &f, err)) ||
        (s = rf_model_kv_bytes(m, o->kv, 1, &c.kv_bytes_per_token, err)) ||
        (s = rf_model_state_bytes(m, &c.state_bytes_per_seq, err)))
        return s;
    c.resident_bytes = f.weight_bytes;
    c.pool_bytes = f.budget_bytes - (double)f.weight_bytes;
    c.weights_fit = c.pool_bytes > 0;
    if (!c.weights_fit) {
        *out = c; /* no pool: no tokens, no sequences */
        return RF_OK;
    }
    /* a model without attention layers holds no KV: no token count */
    c.tokens = c.kv_bytes_per_token ? (uint64_t)(c.pool_bytes / (double)c.kv_bytes_per_token) : 0;
    if (context > 0) {
        uint64_t per_seq; /* its KV and its constant state */
        if ((s = rf_model_seq_bytes(m, o->kv, context, &per_seq, err)))
            return s;
        c.sequences = c.pool_bytes / (double)per_seq;
    }
    *out = c;
    return RF_OK;
}

rf_status rf_model_weight_bytes(const rf_model *m, const rf_step_opts *o, uint64_t *bytes,
                                rf_err *err)
{
    rf_param_counts p;
    rf_status s = rf_model_params(m, &p, err);
    uint64_t total = 0, b;
    for (int i = 0; i < RF_MOD_COUNT && !s; i++) {
        if ((s = rf__module_bytes(m, o, &p, (rf_module)i, 1, &b, err)))
            break;
        if (!rf_add_u64(total, b, &total))
            s = rf_err_set(err, RF_ERANGE, "%s: weight bytes overflow", m->name);
    }
    if (!s)
        *bytes = total;
    return s;
}

rf_status rf_model_module_bytes(const rf_model *m, const rf_step_opts *o, rf_module mod,
                                uint64_t *bytes, uint64_t *unquantized_params, rf_err *err)
{
    rf_param_counts p;
    rf_status s = rf_model_params(m, &p, err);
    if (s || (s = rf__module_bytes(m, o, &p, mod, 1, bytes, err)))
        return s;
    if (unquantized_params)
        *unquantized_params = o->w_all_modules ? 0 : p.by_module_unquantized[mod];
    return RF_OK;
}

rf_status rf__module_bytes(const rf_model *m, const rf_step_opts *o, const rf_param_counts *p,
                           rf_module mod, uint64_t share, uint64_t *bytes, rf_err *err)
{
    /* the layers that keep mod unquantized (unquantized_layer) apart, in
     * unquantized_dtype; the rest in the module's dtype; each over share */
    uint64_t unq = o->w_all_modules ? 0 : p->by_module_unquantized[mod], a, b;
    rf_status s;
    if ((s = rf_dtype_bytes(wdt(m, o, mod), (p->by_module[mod] - unq) / share, &a, err)) ||
        (s = rf_dtype_bytes(m->unquantized_dtype, unq / share, &b, err)))
        return s;
    if (!rf_add_u64(a, b, bytes))
        return rf_err_set(err, RF_ERANGE, "%s: weight bytes overflow", m->name);
    return RF_OK;
}

void rf__step_floors(rf_step *st, const rf_roof *roof, double new_tokens)
{
    rf_point whole = rf_roof_place(roof, (double)st->flops, (double)st->total_bytes);
    st->floor_s = whole.floor_s;
    st->regime = whole.regime;
    st->floor_aggregate_s = rf_roof_place(roof, (double)st->flops, (double)st->op_bytes).floor_s;
    st->intensity = st->op_bytes ? (double)st->flops / (double)st->op_bytes : 0;
    st->step_intensity = st->total_bytes ? (double)st->flops / (double)st->total_bytes : 0;
    st->tokens_per_s = new_tokens / st->floor_s;
}
