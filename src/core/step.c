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
    rf_step_opts o = {.phase = RF_DECODE, .batch = 1, .context = 0, .tokens = 1,
                      .w = rf_dtype_of(RF_BF16), .a = rf_dtype_of(RF_BF16),
                      .kv = rf_dtype_of(RF_BF16)};
    return o;
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

static rf_status push(rf_step *st, const rf_op *op, uint64_t count, rf_err *err)
{
    if (!count)
        return RF_OK;
    if (st->n_ops >= RF_STEP_MAX_OPS)
        return rf_err_set(err, RF_EINTERNAL, "more than %d operators in one step", RF_STEP_MAX_OPS);
    st->ops[st->n_ops] = *op;
    st->ops[st->n_ops].count = count;
    st->n_ops++;
    return RF_OK;
}

/* The weights dtype of one module class in this step. */
static rf_dtype wdt(const rf_model *md, const rf_step_opts *o, rf_module mod)
{
    return rf_model_module_dtype(md, mod, o->w, o->w_all_modules);
}

static rf_status gemm(rf_step *st, const rf_model *md, rf_module mod, const char *name,
                      int64_t m, int64_t k, int64_t n, const rf_step_opts *o, uint64_t count,
                      rf_err *err)
{
    rf_op op;
    rf_status s;
    if (!count)
        return RF_OK;
    if ((s = rf_op_gemm(name, m, k, n, wdt(md, o, mod), o->a, &op, err)))
        return s;
    return push(st, &op, count, err);
}

/* ---- the full traffic model's element-wise rows (rf_op.h) --------------- */

static bool full(const rf_step_opts *o)
{
    return o->traffic == RF_TRAFFIC_FULL;
}

/* push the operator a constructor made (s its status) */
static rf_status put(rf_step *st, rf_status s, const rf_op *op, uint64_t count, rf_err *err)
{
    return s ? s : push(st, op, count, err);
}

/* A norm of m rows of width n (RMSNorm: rf_op_norm). --fuse-elementwise:
 * x comes from the residual add before it and y goes into the next GEMM's
 * read, so only the weight vector is read: Q = n b_w. */
static rf_status norm(rf_step *st, const char *name, int64_t m, int64_t n, const rf_step_opts *o,
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

static rf_status bias(rf_step *st, const rf_model *md, rf_module mod, const char *name,
                      int64_t m, int64_t n, const rf_step_opts *o, uint64_t count, rf_err *err)
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
static rf_status act(rf_step *st, const rf_model *md, const char *name, int64_t m, int64_t n,
                     const rf_step_opts *o, uint64_t count, rf_err *err)
{
    unsigned c = rf_model_gelu(md) ? RF_ACT_GELU_MUL_FLOPS : RF_ACT_SILU_MUL_FLOPS;
    rf_op op;
    return put(st, rf_op_act(name, m, n, c, o->a, &op, err), &op, count, err);
}

/* RoPE on q and k, then the new K and V (MLA: the latent and k_rope) into
 * the cache, for `count` layers. */
static rf_status rope_kv(rf_step *st, const rf_model *md, const rf_step_opts *o, int64_t M,
                         uint64_t count, rf_err *err)
{
    rf_op op;
    rf_status s;
    if (md->kv_lora_rank) /* the rotary part only: n_q heads of q, one shared k_rope */
        s = put(st, rf_op_rope("rope", M, md->n_q + 1, md->qk_rope_dim, o->a, &op, err), &op,
                count, err);
    else
        s = put(st, rf_op_rope("rope", M, md->n_q + md->n_kv, md->head_dim, o->a, &op, err),
                &op, count, err);
    if (s)
        return s;
    if (md->kv_lora_rank)
        s = rf_op_cache_write("kv_write", M, md->kv_lora_rank + md->qk_rope_dim, o->kv, o->a, &op,
                              err);
    else
        s = rf_op_kv_write("kv_write", M, md->n_kv, md->head_dim, o->kv, o->a, &op, err);
    return put(st, s, &op, count, err);
}

/* Attention projections of one layer (count layers). M_kv: the positions
 * kv_b_proj expands, which differs from M only for MLA prefill. */
static rf_status attn_proj(rf_step *st, const rf_model *md, const rf_step_opts *o, int64_t M,
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
    return md->kv_lora_rank ? md->n_q * md->v_head_dim : md->n_q * md->head_dim;
}

/* Attention itself, for `count` layers: each query attends to `keys` keys
 * (at most `window` of them, 0: no window; only the keys up to itself under
 * o->causal) and the step reads the K/V (or latent) of `read` positions
 * once. They differ only on a sliding layer in prefill, where T queries
 * each see the window and together read the union of their windows (see
 * decompose). */
static rf_status attention(rf_step *st, const char *name, const rf_model *md,
                           const rf_step_opts *o, int64_t q_tokens, int64_t keys, int64_t window,
                           int64_t read, uint64_t count, rf_err *err)
{
    if (!count || keys < 1)
        return RF_OK;
    rf_attn_desc d = {.n_q = md->n_q, .n_kv = md->n_kv, .head_dim = md->head_dim,
                      .batch = o->batch, .q_tokens = q_tokens, .keys = keys,
                      .naive = o->naive_attn, .window = window, .causal = o->causal};
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
        d.read_keys = read;
        if ((s = rf_op_attention_full(o->naive_attn ? (is_swa ? naive_w : naive_g) : flash, &d,
                                      o->kv, o->a, three, &n, err)))
            return s;
        for (size_t i = 0; i < n && !s; i++) {
            if (is_swa)
                three[i].note = "sliding window";
            s = push(st, &three[i], count, err);
        }
        return s;
    }
    s = rf_op_attention(name, &d, o->kv, o->a, &op, err);
    if (s)
        return s;
    if (read != (int64_t)op.n) {
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
static rf_status mlp(rf_step *st, const rf_model *md, const rf_step_opts *o, int64_t M,
                     uint64_t count, rf_err *err)
{
    rf_status s;
    int64_t H = md->hidden, F = md->ffn;
    const rf_module P = RF_MOD_MLP;
    bool b = full(o) && md->mlp_bias;
    if (o->fused) {
        if ((s = gemm(st, md, P, "gate_up_proj", M, H, 2 * F, o, count, err)) ||
            (b && count && (s = bias(st, md, P, "gate_up_bias", M, 2 * F, o, count, err))))
            return s;
    } else if ((s = gemm(st, md, P, "gate_proj", M, H, F, o, count, err)) ||
               (s = gemm(st, md, P, "up_proj", M, H, F, o, count, err)) ||
               (b && count && ((s = bias(st, md, P, "gate_bias", M, F, o, count, err)) ||
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
static rf_status expert(rf_step *st, const rf_model *md, const char *name, int64_t pairs,
                        double touched, int64_t k, int64_t n, const rf_step_opts *o,
                        uint64_t count, rf_err *err)
{
    rf_op op;
    rf_status s = rf_op_gemm(name, pairs, k, n, wdt(md, o, RF_MOD_EXPERTS), o->a, &op, err);
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
     * F = 2 m K N and Q = experts K N b_w + m (K + N) b_a */
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

static rf_status moe(rf_step *st, const rf_model *md, const rf_step_opts *o, int64_t M,
                     uint64_t count, rf_err *err)
{
    rf_status s;
    int64_t H = md->hidden, E = md->n_experts, k = md->top_k;
    double touched = experts_touched(md, o->moe, (double)M);
    st->experts_touched = touched;
    int64_t pairs = M * k; /* M <= 2^40 bounded by the caller, k <= 2^12 */
    st->tokens_per_expert = (double)pairs / touched;
    /* the router scores E experts (+ qwen2_moe's one shared-expert gate) */
    if ((s = gemm(st, md, RF_MOD_ROUTER, "router", M, H, E + (md->shared_expert_gate ? 1 : 0), o,
                  count, err)))
        return s;
    if (md->n_shared) {
        const rf_module S = RF_MOD_SHARED;
        int64_t W = md->n_shared * (md->shared_ffn ? md->shared_ffn : md->moe_ffn);
        if ((s = gemm(st, md, S, "shared_gate", M, H, W, o, count, err)) ||
            (s = gemm(st, md, S, "shared_up", M, H, W, o, count, err)) ||
            (full(o) && (s = act(st, md, "shared_act", M, W, o, count, err))) ||
            (s = gemm(st, md, S, "shared_down", M, W, H, o, count, err)))
            return s;
    }
    if ((s = expert(st, md, "expert_gate", pairs, touched, H, md->moe_ffn, o, count, err)) ||
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

static rf_status decompose(const rf_model *md, const rf_step_opts *o, rf_step *st, rf_err *err)
{
    rf_status s;
    int64_t M = 0;
    if ((s = tokens_in_flight(o, &M, err)))
        return s;
    /* layer classes: [moe][sliding] */
    uint64_t cls[2][2] = {{0, 0}, {0, 0}};
    for (int64_t l = 0; l < md->layers; l++)
        cls[rf_model_layer_is_moe(md, l)][md->window && md->sliding[l]]++;
    uint64_t all = (uint64_t)md->layers;
    uint64_t global = cls[0][0] + cls[1][0], sliding = cls[0][1] + cls[1][1];

    int64_t q_tokens = o->phase == RF_PREFILL ? o->tokens : 1;
    int64_t keys = o->phase == RF_PREFILL ? o->context + o->tokens : o->context;
    /* A sliding layer: each query attends to at most `window` keys. In
     * prefill the T new queries' windows end at T consecutive positions, so
     * together they read min(S, window + T - 1) positions of K/V; in decode
     * (T = 1) that is the window itself. */
    int64_t win_keys = md->window && keys > md->window ? md->window : keys;
    int64_t win_read = keys - win_keys > q_tokens - 1 ? win_keys + q_tokens - 1 : keys;
    /* MLA prefill expands the latent of every key: B (s + T) positions,
     * which keys <= RF_DIM_MAX and the check below keep in range */
    int64_t M_kv = M;
    if (md->kv_lora_rank && o->phase == RF_PREFILL) {
        uint64_t mkv;
        if (!rf_mul_u64((uint64_t)o->batch, (uint64_t)keys, &mkv) || mkv > RF_DIM_MAX)
            return rf_err_set(err, RF_ERANGE, "batch x keys (%lld x %lld) is beyond %lld",
                              (long long)o->batch, (long long)keys, (long long)RF_DIM_MAX);
        M_kv = (int64_t)mkv;
    }

    /* the full traffic model's rows sit where the layer runs them */
    bool f = full(o);
    int64_t H = md->hidden;
    rf_op r;
    if ((f && (s = norm(st, "attn_norm", M, H, o, all, err))) ||
        (s = attn_proj(st, md, o, M, M_kv, all, err)) ||
        (f && (s = rope_kv(st, md, o, M, all, err))) ||
        (s = attention(st, "attention", md, o, q_tokens, keys, 0, keys, global, err)) ||
        (s = attention(st, RF_OP_ATTN_SWA, md, o, q_tokens, keys, md->window, win_read, sliding,
                       err)) ||
        (s = gemm(st, md, RF_MOD_ATTN, "o_proj", M, o_width(md), H, o, all, err)) ||
        (f && md->o_bias && (s = bias(st, md, RF_MOD_ATTN, "o_bias", M, H, o, all, err))) ||
        (f && rf_model_post_norms(md) && (s = norm(st, "post_attn_norm", M, H, o, all, err))) ||
        (f && (s = put(st, rf_op_residual("attn_residual", M, H, o->a, &r, err), &r, all, err))) ||
        (f && (s = norm(st, "mlp_norm", M, H, o, all, err))) ||
        (s = mlp(st, md, o, M, cls[0][0] + cls[0][1], err)))
        return s;
    if (cls[1][0] + cls[1][1] && (s = moe(st, md, o, M, cls[1][0] + cls[1][1], err)))
        return s;
    if ((f && rf_model_post_norms(md) && (s = norm(st, "post_mlp_norm", M, H, o, all, err))) ||
        (f && (s = put(st, rf_op_residual("mlp_residual", M, H, o->a, &r, err), &r, all, err))))
        return s;
    /* lm_head: logits for the last position of each sequence (M = B), as
     * serving engines compute them, after the final norm of those rows; the
     * embedding gathers one row a token. */
    rf_op g;
    if ((f && (s = norm(st, "final_norm", o->batch, H, o, 1, err))) ||
        (s = gemm(st, md, RF_MOD_LM_HEAD, "lm_head", o->batch, md->hidden, md->vocab, o, 1,
                  err)) ||
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
    /* no sliding layer: L equal terms, one product (the sweep's fit calls
     * this for every point) */
    if (!m->window && (!rf_mul_u64((uint64_t)context, per, &one) ||
                       !acc(&elems, (uint64_t)m->layers, one)))
        return rf_err_set(err, RF_ERANGE, "KV of context %lld overflows", (long long)context);
    for (int64_t l = 0; l < m->layers && m->window; l++) {
        int64_t s = m->window && m->sliding[l] && context > m->window ? m->window : context;
        if (!acc(&elems, (uint64_t)s, per))
            return rf_err_set(err, RF_ERANGE, "KV of context %lld overflows", (long long)context);
    }
    return rf_dtype_bytes(kv, elems, bytes, err);
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
        if (!acc(&flops, op->count, op->flops) || !acc(&op_bytes, op->count, op->bytes) ||
            (op->kind == RF_OP_GEMM && !acc(&wb, op->count, op->weight_bytes)) ||
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
    rf__step_floors(st, roof, (double)o->batch * (o->phase == RF_PREFILL ? (double)o->tokens : 1.0));
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
static bool overflows(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                      unsigned keep, rf_step *scratch)
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
        out->attn_prefill_s_star = roof->ridge * latent * rf_dtype_bytes_per_elem(o->kv) /
                                   (2.0 * (double)md->n_q * width);
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
        snprintf(out[j].ops + used, sizeof out[j].ops - used, "%s%s", used ? "," : "",
                 op->name);
    }
    return n;
}

bool rf_crossover_square(const rf_crossover *cx, int64_t d, double *t_star)
{
    return rf_gemm_mstar(d, d, cx->square_w, cx->square_a, cx->ridge, t_star);
}

rf_status rf_fit_prepare(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes,
                         double util, uint64_t reserve_bytes, rf_fit *out, rf_err *err)
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
    rf_status s = rf_model_kv_bytes(m, kv, positions, &seq, err);
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
        return rf_err_set(err, RF_EINVAL, "context (%lld) must be in [0, %lld]",
                          (long long)context, (long long)RF_DIM_MAX);
    rf_capacity c = {.util = util, .mem_bytes = mem_bytes, .reserve_bytes = reserve_bytes,
                     .context = context};
    if ((s = rf_fit_prepare(m, o, mem_bytes, util, reserve_bytes, &f, err)) ||
        (s = rf_model_kv_bytes(m, o->kv, 1, &c.kv_bytes_per_token, err)))
        return s;
    c.resident_bytes = f.weight_bytes;
    c.pool_bytes = f.budget_bytes - (double)f.weight_bytes;
    c.weights_fit = c.pool_bytes > 0;
    if (!c.weights_fit) {
        *out = c; /* no pool: no tokens, no sequences */
        return RF_OK;
    }
    c.tokens = (uint64_t)(c.pool_bytes / (double)c.kv_bytes_per_token);
    if (context > 0) {
        uint64_t per_seq;
        if ((s = rf_model_kv_bytes(m, o->kv, context, &per_seq, err)))
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
        if ((s = rf_dtype_bytes(wdt(m, o, (rf_module)i), p.by_module[i], &b, err)))
            break;
        if (!rf_add_u64(total, b, &total))
            s = rf_err_set(err, RF_ERANGE, "%s: weight bytes overflow", m->name);
    }
    if (!s)
        *bytes = total;
    return s;
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
