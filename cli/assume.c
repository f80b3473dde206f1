/* assume.c - the assumption lines under a report (dtypes, roof, phase,
 * attention, MoE, traffic, the model's architecture) and the expert columns
 * of an operator table. */
#include <stdio.h>
#include <string.h>

#include "assume.h"
#include "roofline/rf_view.h"

void cli_assume_roof(const cli_ctx *ctx, rf_report *r, const rf_step_opts *o, const rf_roof *roof)
{
    char w[64], a[64], kv[64], pk[32], bw[32], y[96] = "";
    rf_dtype out = rf_step_out_dtype(o);
    if (o->has_out || out.kind != o->a.kind) /* rf_gemm_out_default: bf16 after 8 bits */
        snprintf(y, sizeof y, ", GEMM outputs %s (%s)", rf_dtype_name(out.kind),
                 o->has_out ? "--out-dtype" : "what reads them");
    rf_report_assume(r, "dtypes: weights %s, activations %s, KV %s%s; math %s",
                     rf_dtype_describe(o->w, w, sizeof w), rf_dtype_describe(o->a, a, sizeof a),
                     rf_dtype_describe(o->kv, kv, sizeof kv), y, rf_dtype_name(roof->math));
    if (roof->math_fallback) {
        const char *asked = rf_dtype_name(roof->math_asked), *used = rf_dtype_name(roof->math);
        bool measured = strncmp(ctx->hw_origin, "preset", 6) != 0;
        rf_report_assume(r,
                         "math %s: %s %s no %s peak, so %s, the fastest float it has that "
                         "holds every %s value, sets the compute roof (--act-dtype %s "
                         "--peak TFLOPS gives a %s roof)",
                         used, measured ? "the profile" : ctx->hw.name,
                         measured ? "measured" : "has", asked, used, asked, asked, asked);
    }
    rf_fmt(roof->peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk);
    rf_fmt(roof->bw_bytes_per_s, RF_U_BW, bw, sizeof bw);
    if (roof->ridge_given)
        rf_report_assume(r,
                         "roof: ridge %.4g FLOP/byte given by --ridge; bandwidth %s (%s), "
                         "compute roof = ridge x bandwidth = %s",
                         roof->ridge, bw, ctx->hw_origin, pk);
    else
        rf_report_assume(r, "roof: %s: %s %s, %s%s%s, ridge %.1f FLOP/byte", ctx->hw_origin, pk,
                         rf_dtype_name(roof->math), bw,
                         ctx->peak_tflops > 0 ? "; peak from --peak" : "",
                         ctx->bw_tbps > 0 ? "; bandwidth from --bw" : "", roof->ridge);
}

void cli_assume_step(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                     const rf_step *st)
{
    cli_assume_roof(ctx, r, o, &st->roof);
    cli_assume_math(r, m, o, &st->roof);
    cli_assume_phase(r, o);
    cli_assume_model(r, m, o, st);
}

const char *cli_plural(int64_t n, const char *one, const char *many) { return n == 1 ? one : many; }

void cli_assume_phase(rf_report *r, const rf_step_opts *o)
{
    long long B = (long long)o->batch, s = (long long)o->context, T = (long long)o->tokens;
    if (o->phase == RF_DECODE) {
        rf_report_assume(r,
                         "decode: %lld %s at context %lld, one new token each; linear "
                         "layers run with M = B; lm_head on every sequence",
                         B, cli_plural(B, "sequence", "sequences"), s);
        return;
    }
    char cached[48] = ", nothing cached";
    if (s)
        snprintf(cached, sizeof cached, " after %lld cached", s);
    rf_report_assume(
        r,
        "prefill: %lld %s of %lld new %s%s; linear layers run with M = B T; "
        "lm_head on the last position",
        B, s ? cli_plural(B, "sequence", "sequences") : cli_plural(B, "prompt", "prompts"), T,
        cli_plural(T, "token", "tokens"), cached);
}

void cli_assume_attn(rf_report *r, const rf_step_opts *o, bool square)
{
    if (!square) /* a decode query scores every key before it: nothing to halve */
        return;
    if (!o->causal) {
        rf_report_assume(r, "attention: full S x S, no causal halving (each of q queries scores "
                            "all S keys: F = 4 n_q d_h q S a sequence; --causal counts the "
                            "triangle, as every model-level command does unless --no-causal)");
        return;
    }
    rf_report_assume(r,
                     "attention: causal, each query scores the keys up to itself, diagonal "
                     "included: q (S - q) + q (q + 1) / 2 pairs a sequence for q queries "
                     "against S keys, S (S + 1) / 2 for a fresh prompt (a sliding layer's "
                     "query at most the window); F = 4 n_q d_h pairs; K/V bytes unchanged "
                     "(flash reads each key once)%s",
                     o->naive_attn ? "; naive scores: the full q x S matrix is still written "
                                     "and read, masked, so score bytes are not halved"
                                   : "");
}

void cli_assume_moe(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st)
{
    if (!m->n_experts)
        return;
    long long E = (long long)m->n_experts, k = (long long)m->top_k;
    char touched[160] = "the experts touched and the rows each runs vary by point", n[32], rows[32];
    if (st) { /* as the operator table shows them */
        rf_fmt(st->experts_touched, RF_U_SIG3, n, sizeof n);
        rf_fmt(st->tokens_per_expert, RF_U_SIG3, rows, sizeof rows);
    }
    const char *row = st && st->tokens_per_expert == 1 ? "row" : "rows";
    if (st && o->moe == RF_MOE_ALL)
        snprintf(touched, sizeof touched, "all %lld a MoE layer, each running M k / E = %s %s", E,
                 rows, row);
    else if (st)
        snprintf(touched, sizeof touched,
                 "%s of %lld touched a MoE layer, each running M k / touched = %s %s", n, E, rows,
                 row);
    if (o->moe == RF_MOE_ALL)
        rf_report_assume(r,
                         "MoE: every routed expert streamed (--moe-experts all), top-%lld of "
                         "%lld a token: %s; the weights of untouched experts are read too",
                         k, E, touched);
    else
        rf_report_assume(r,
                         "MoE: uniform routing assumed, top-%lld of %lld a token: "
                         "E (1 - (1 - k/E)^M) experts touched at M tokens; %s; only touched "
                         "experts are streamed, so a small batch reads far less than the "
                         "resident weights",
                         k, E, touched);
    if (st)
        rf_report_assume(r, "expert rows: M = every token-expert pair of a layer (M k), "
                            "'experts' = experts streamed, 'M/expert' = M / experts; "
                            "F = 2 M K N, weights = experts K N b_w, per layer in 'count'");
}

/* What the full traffic model counts (rf_step.h, rf_op.h), line by line. */
static void assume_full(rf_report *r, const rf_model *m, const rf_step_opts *o)
{
    bool gelu = rf_model_gelu(m);
    rf_report_assume(r, "traffic: full (--traffic full); every kernel of the forward pass: each "
                        "GEMM reads X and W and writes Y; attention reads Q, K, V and writes O; "
                        "step bytes = the sum of every operator's bytes");
    rf_report_assume(r,
                     "traffic full: norms (RMSNorm: F = 4 M H, read x, write y, read the H "
                     "weights), rope on q and k (F = 3, read and write each element; the "
                     "cos/sin table not counted), kv_write (read the new K and V, write them "
                     "to the cache), act (%s x up: F = %d M F_ff, read gate and up, write), "
                     "residual adds (F = M H, two reads, one write)%s%s%s, final_norm on the "
                     "rows lm_head reads; not counted: the embedding's output write, the "
                     "router's softmax and top-k, kernel launches",
                     gelu ? "GELU-tanh(gate)" : "SiLU(gate)",
                     gelu ? RF_ACT_GELU_MUL_FLOPS : RF_ACT_SILU_MUL_FLOPS,
                     m->qkv_bias || m->o_bias || m->mlp_bias
                         ? ", biases (F = M N, the N-vector read in the GEMM's epilogue)"
                         : "",
                     rf_model_post_norms(m) ? ", post_attn_norm and post_mlp_norm on each "
                                              "branch's output"
                                            : "",
                     m->kv_lora_rank ? ", MLA's latent norms (q_a_norm, kv_a_norm), rope on the "
                                       "rotary part, the latent written as the cache"
                                     : "");
    if (o->naive_attn)
        rf_report_assume(r, "naive attention: qk writes each head's q x S scores, softmax reads "
                            "and writes them (F = 5 a score), pv reads them: 4 B n_q q S b_a "
                            "bytes a layer, with the K read in qk and the V read in pv");
    if (o->fuse_elementwise)
        rf_report_assume(r, "--fuse-elementwise: each norm takes x from the residual add before "
                            "it and hands y to the next GEMM's read: a norm reads only its "
                            "weights (2 M H b_a less than unfused)");
}

void cli_assume_model(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st)
{
    if (o->traffic == RF_TRAFFIC_FULL) {
        assume_full(r, m, o);
        cli_assume_attn(r, o, o->phase == RF_PREFILL);
        cli_assume_moe(r, m, o, st);
        cli_assume_arch(r, m, o);
        return;
    }
    rf_report_assume(r,
                     "traffic: compulsory; weights read once per step, K/V read once, each "
                     "GEMM reads X and writes Y; step bytes = weights + KV%s; norms, RoPE, "
                     "biases and KV writes not counted",
                     o->naive_attn ? " + attention scores" : "");
    if (o->naive_attn)
        rf_report_assume(r, "naive attention: + 2 n_q q S b_a bytes a sequence and layer (scores "
                            "written by QK^T, read by softmax.V)");
    cli_assume_attn(r, o, o->phase == RF_PREFILL);
    cli_assume_moe(r, m, o, st);
    cli_assume_arch(r, m, o);
}

char *cli_weights_text(const rf_model *m, const rf_step_opts *o, char *out, size_t cap)
{
    char kept[160], w[64], u[64];
    rf_dtype_describe(o->w, w, sizeof w);
    if (!m || !m->unquantized_modules || o->w_all_modules) {
        snprintf(out, cap, "%s", w);
        return out;
    }
    snprintf(out, cap, "%s, except %s in %s", w,
             rf_view_modules_text(m->unquantized_modules, kept, sizeof kept),
             rf_dtype_describe(m->unquantized_dtype, u, sizeof u));
    return out;
}

void cli_assume_math(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_roof *roof)
{
    /* one roof for the whole step: only an 8-bit math roof lifts an
     * operator above the peak its own dtypes would run at */
    rf_dtype_kind math = roof->math;
    rf_param_counts p;
    if (!(rf_dtype_is_fp8(math) || math == RF_INT8) || rf_model_params(m, &p, NULL))
        return;
    char off[256] = "", dt[64];
    size_t used = 0;
    for (int i = 0; i < RF_MOD_COUNT && used < sizeof off; i++) {
        rf_dtype w = rf_model_module_dtype(m, (rf_module)i, o->w, o->w_all_modules);
        if (i == RF_MOD_EMBED || !p.by_module[i] || rf_dtype_math(w, o->a) == math)
            continue; /* the embedding is a gather: no FLOPs to place */
        used +=
            (size_t)snprintf(off + used, sizeof off - used, "%s%s (%s weights)", used ? ", " : "",
                             rf_module_name((rf_module)i), rf_dtype_describe(w, dt, sizeof dt));
    }
    if (o->kv.kind != math && used < sizeof off)
        used += (size_t)snprintf(off + used, sizeof off - used, "%sattention scores (%s KV)",
                                 used ? ", " : "", rf_dtype_name(o->kv.kind));
    if (used)
        rf_report_assume(
            r,
            "math: every operator is placed on the %s roof, %s too, though "
            "they do not run %s x %s: where compute-bound, their floors are understated",
            rf_dtype_name(math), off, rf_dtype_name(math), rf_dtype_name(math));
}

/* Layers of l = 0..L-1 whose byte flag[l] is set (NULL: mixer == kind). */
static long long layers_with(const rf_model *m, const uint8_t *flag, rf_mixer kind)
{
    long long n = 0;
    for (int64_t l = 0; l < m->layers; l++)
        n += flag ? flag[l] != 0 : m->mixer[l] == kind;
    return n;
}

/* The 2025-26 parts (docs/accounting.md), each line only where the model
 * has the part: hybrid mixers, chunked and local shapes, sparse attention,
 * MTP, per-layer quantization exclusions. */
static void assume_new_arch(rf_report *r, const rf_model *m, const rf_step_opts *o)
{
    long long gdn = layers_with(m, NULL, RF_MIX_GDN), mamba = layers_with(m, NULL, RF_MIX_MAMBA2),
              none = layers_with(m, NULL, RF_MIX_NONE), L = (long long)m->layers;
    if (gdn || mamba || none)
        rf_report_assume(r,
                         "hybrid: %lld attention, %lld Gated DeltaNet, %lld Mamba2 and %lld "
                         "MLP-only layers of %lld; a linear-attention or Mamba2 layer holds "
                         "no KV: its projections are GEMMs, its short convolution and "
                         "recurrent state are read and written once a decode step (a "
                         "chunked scan in prefill)",
                         (long long)rf_model_attn_layers(m), gdn, mamba, none, L);
    if (m->attn_chunk && layers_with(m, m->chunked, 0))
        rf_report_assume(r,
                         "chunked attention: %lld of %lld layers attend only within their "
                         "own chunk of %lld positions, and keep at most that much KV",
                         layers_with(m, m->chunked, 0), L, (long long)m->attn_chunk);
    if (m->local_n_q || m->local_n_kv || m->local_head_dim || m->local_v_dim)
        rf_report_assume(r,
                         "local layers (sliding or chunked) have their own heads: n_q %lld, "
                         "n_kv %lld, head dim %lld, v head dim %lld",
                         (long long)(m->local_n_q ? m->local_n_q : m->n_q),
                         (long long)(m->local_n_kv ? m->local_n_kv : m->n_kv),
                         (long long)(m->local_head_dim ? m->local_head_dim : m->head_dim),
                         (long long)(m->local_v_dim      ? m->local_v_dim
                                     : m->local_head_dim ? m->local_head_dim
                                                         : m->head_dim));
    if (m->index_topk)
        rf_report_assume(r,
                         "sparse attention (DSA): the lightning indexer (%lld heads of %lld) "
                         "scores every cached key from its own key cache; the main attention "
                         "reads only the index_topk = %lld keys it selects (all of them while "
                         "the context is shorter)",
                         (long long)m->index_heads, (long long)m->index_head_dim,
                         (long long)m->index_topk);
    if (m->mtp_layers)
        rf_report_assume(r,
                         "MTP: %lld multi-token-prediction layer%s counted in the resident "
                         "weights, not in a token's stream (--draft mtp speculates with them)",
                         (long long)m->mtp_layers, m->mtp_layers == 1 ? "" : "s");
}

/* "; by layer, also in DTYPE: CLASS in n of L layers[ and k of K MTP
 * layers], ..." for the classes unquantized_layer[] keeps in some layers
 * (the decoder's, then the MTP layers'), or "" when none. */
static char *by_layer_text(const rf_model *m, char *out, size_t cap)
{
    int64_t all = rf_view_layers_with_mtp(m);
    size_t used = 0;
    char u[64];
    out[0] = '\0';
    for (int c = 0; c < RF_MOD_COUNT && used < cap; c++) {
        long long dec = 0, mtp = 0;
        for (int64_t l = 0; l < all; l++)
            if (m->unquantized_layer[l] & RF_MOD_BIT(c))
                *(l < m->layers ? &dec : &mtp) += 1;
        if (!dec && !mtp)
            continue;
        bool first = !used;
        if (first)
            used = (size_t)snprintf(out, cap, "; by layer, also in %s:",
                                    rf_dtype_describe(m->unquantized_dtype, u, sizeof u));
        used += (size_t)snprintf(out + used, cap - used, "%s %s in ", first ? "" : ",",
                                 rf_module_name((rf_module)c));
        if (dec && used < cap)
            used += (size_t)snprintf(out + used, cap - used, "%lld of %lld layers%s", dec,
                                     (long long)m->layers, mtp ? " and " : "");
        if (mtp && used < cap)
            used += (size_t)snprintf(out + used, cap - used, "%lld of %lld MTP layer%s", mtp,
                                     (long long)m->mtp_layers, m->mtp_layers == 1 ? "" : "s");
    }
    if (used && used < cap)
        snprintf(out + used, cap - used, " (info lists the layers)");
    return out;
}

void cli_assume_arch(rf_report *r, const rf_model *m, const rf_step_opts *o)
{
    char by[640];
    by_layer_text(m, by, sizeof by);
    if ((m->unquantized_modules || by[0]) && !o->w_all_modules) {
        char w[288];
        rf_report_assume(r,
                         "quantized checkpoint: weights %s (quantization_config; "
                         "--weight-dtype overrides every module)%s",
                         cli_weights_text(m, o, w, sizeof w), by);
    }
    if (m->kv_lora_rank)
        rf_report_assume(r,
                         "MLA: cache holds kv_lora_rank + rope = %lld elements a token and layer; "
                         "decode absorbs the up-projections: F = 2 n_q S (2 r + rope), "
                         "Q = S (r + rope) b_kv a sequence, kv_b_proj read once as a GEMM; "
                         "prefill expands the latent of all B (s + T) keys with kv_b_proj and "
                         "runs multi-head attention, F = 2 n_q T S (nope + rope + v)",
                         (long long)(m->kv_lora_rank + m->qk_rope_dim));
    if (m->window && rf_model_sliding_layers(m))
        rf_report_assume(r,
                         "sliding window: %lld of %lld layers keep at most %lld positions "
                         "of KV; each query attends to at most the window, so T prefill "
                         "queries together read min(S, window + T - 1) positions",
                         (long long)rf_model_sliding_layers(m), (long long)m->layers,
                         (long long)m->window);
    assume_new_arch(r, m, o);
    if (m->notes[0])
        rf_report_assume(r, "%s", m->notes);
}

void cli_assume_family(const cli_ctx *ctx, rf_report *r)
{
    if (!ctx->family_as[0])
        return;
    rf_report_assume(r, "family: read as %s (--family); model_type was %s", ctx->family_as,
                     ctx->family_from);
    rf_report_section(r, "family_forced", "family (--family)");
    rf_report_str(r, "read_as", "read as", ctx->family_as);
    rf_report_str(r, "model_type", "model_type in the config", ctx->family_from);
}

void cli_assume_state(rf_report *r, const rf_model *m, uint64_t state)
{
    if (!state)
        return;
    char dt[64], n[32];
    rf_report_assume(r,
                     "recurrent state: %s bytes a sequence (%s), the Gated DeltaNet and "
                     "Mamba2 layers' state and convolution windows, constant in the context; "
                     "counted beside the KV of the %lld attention layers wherever a sequence "
                     "takes memory",
                     rf_fmt((double)state, RF_U_INT, n, sizeof n),
                     rf_dtype_describe(m->has_state_dtype ? m->state_dtype : rf_dtype_of(RF_BF16),
                                       dt, sizeof dt),
                     (long long)rf_model_attn_layers(m));
}
