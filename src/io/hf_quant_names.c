/* hf_quant_names.c - which modules of a model an exclude or ignore list
 * names (hf_internal.h, rf__hf_excl_*): every module name the model's
 * checkpoint can hold, enumerated from its shapes, and each list entry
 * matched against them exactly.
 *
 * Names are relative to the decoder: "lm_head", "embed_tokens", "norm" and
 * "layers.<l>.<module>", read after one of the prefixes checkpoints put in
 * front ("model.", "backbone.", "model.language_model.", ...). A layer's
 * modules follow its kind (attention, Gated DeltaNet, Mamba2; dense MLP or
 * MoE) with the spellings of the families in transformers: self_attn.q_proj,
 * self_attn.kv_a_proj_with_mqa, self_attn.indexer.wk, linear_attn.in_proj_qkvz,
 * mixer.in_proj (Nemotron-H's "backbone.layers.<l>.mixer" for every kind),
 * mlp.gate, mlp.experts.<e>.down_proj, mlp.shared_experts.up_proj,
 * block_sparse_moe / feed_forward in place of mlp. A name carries the module
 * classes (rf_module) it holds: a container ("self_attn", "mlp") all of its
 * matrices' classes, a norm or a bias none (it is a module all the same).
 * The MTP layers follow the decoder's (layers.<L>... for DeepSeek-V3).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_model.h"

#include "hf_internal.h"

#define MB(x) RF_MOD_BIT(RF_MOD_##x)
/* a name's flag: one matrix of a class that holds several in a layer */
#define PART (1u << 31)

/* Prefixes a checkpoint puts before the decoder's names, longest first. */
static const char *const prefixes[] = {
    "model.language_model.",
    "language_model.model.",
    "model.model.",
    "language_model.",
    "backbone.",
    "model.",
    "",
};
enum { N_PREFIXES = sizeof prefixes / sizeof prefixes[0] };

/* Roots of modules outside the decoder (vision towers, projectors): named
 * by multimodal checkpoints, never counted. */
static const char *const vision_roots[] = {
    "visual",         "vision_tower",          "vision_model",
    "vision_encoder", "multi_modal_projector", "mm_projector",
    "audio_tower",    "vision_embed_tokens",
};

/* ---- the names of a model ------------------------------------------- */

typedef struct layer_kind {
    rf_mixer mixer;
    rf_ffn_kind ffn;
    bool mla, q_lora, dsa, shared, shared_gate, nemotron, mtp;
} layer_kind;

static bool nemotron_naming(const rf_model *m)
{
    for (int64_t l = 0; l < m->layers && l < RF_MODEL_MAX_LAYERS; l++)
        if (m->mixer[l] == RF_MIX_MAMBA2)
            return true;
    return false;
}

/* Layer l's kind; an MTP layer (l >= layers) is a decoder layer like the
 * last one. */
static layer_kind kind_of(const rf_model *m, int64_t l, bool nemotron)
{
    int64_t at = l < m->layers ? l : m->layers - 1;
    layer_kind k = {.mixer = rf_model_layer_mixer(m, at),
                    .ffn = rf_model_layer_ffn(m, at),
                    .mla = m->kv_lora_rank > 0,
                    .q_lora = m->q_lora_rank > 0,
                    .dsa = m->index_topk > 0,
                    .shared = m->n_shared > 0,
                    .shared_gate = m->shared_expert_gate,
                    .nemotron = nemotron,
                    .mtp = l >= m->layers};
    return k;
}

uint32_t rf__hf_layer_modules(const rf_model *m, int64_t l)
{
    layer_kind k = kind_of(m, l, false);
    uint32_t b = 0;
    if (k.mixer == RF_MIX_ATTN)
        b |= MB(ATTN) | (k.dsa ? MB(INDEXER) : 0);
    else if (k.mixer == RF_MIX_GDN || k.mixer == RF_MIX_MAMBA2)
        b |= MB(MIXER);
    if (k.ffn == RF_FFN_DENSE || k.ffn == RF_FFN_MOE_DENSE)
        b |= MB(MLP);
    if (k.ffn == RF_FFN_MOE || k.ffn == RF_FFN_MOE_DENSE)
        b |= MB(ROUTER) | MB(EXPERTS) | (k.shared ? MB(SHARED) : 0);
    return b;
}

/* One exclude entry matched against the enumerated names, and what it
 * matched (rf__hf_excl_match). */
typedef struct matcher {
    rf__hf_excl *ex;
    const char *pat; /* the glob, after a prefix it named */
    char alt[256];   /* "*." + pat for an entry naming a module anywhere */
    bool prefixed;   /* pat had a known prefix, now dropped: compare rel */
    bool regex;
    regex_t re;
    int64_t only_layer; /* the layer a literal "layers.<l>." names, or -1 */
    bool hit;
    int64_t hits;   /* names matched */
    uint32_t mods;  /* classes of what matched */
    uint32_t part;  /* classes matched only through one of their matrices */
    uint32_t whole; /* classes matched through a module holding them all */
} matcher;

/* The visitor every enumerated name goes to: rel is the name without a
 * prefix ("layers.3.mlp.gate"), mods its classes. */
static void visit(matcher *mt, int64_t layer, const char *rel, uint32_t mods);
static bool could_match(const matcher *mt, const char *start);

/* s copied to w, up to end; the end of the copy */
static char *put(char *w, const char *end, const char *s)
{
    while (*s && w < end)
        *w++ = *s++;
    return w;
}

/* One name "layers.<l>.<a><b>" of a layer l >= 0 (as snprintf would write
 * it into rel, cut at its size; written by hand: this runs a million times
 * on a model of 256 experts) */
static void name2(matcher *mt, int64_t l, const char *a, const char *b, uint32_t mods)
{
    char rel[160], digits[24], *d = digits + sizeof digits - 1;
    const char *end = rel + sizeof rel - 1;
    *d = '\0';
    uint64_t v = (uint64_t)l;
    do
        *--d = (char)('0' + v % 10);
    while (v /= 10);
    char *w = put(put(put(put(rel, end, "layers."), end, d), end, "."), end, a);
    *put(w, end, b) = '\0';
    visit(mt, l, rel, mods);
}

static void names_of(matcher *mt, int64_t l, const char *base, const char *const *leaf,
                     uint32_t mods)
{
    for (; *leaf; leaf++)
        name2(mt, l, base, *leaf, mods ? mods | PART : 0);
}

static const char *const attn_plain[] = {".q_proj", ".k_proj",   ".v_proj",
                                         ".o_proj", ".qkv_proj", NULL};
static const char *const attn_norms[] = {".q_norm", ".k_norm", NULL};
static const char *const mla_q_lora[] = {".q_a_proj", ".q_b_proj", NULL};
static const char *const mla_kv[] = {".kv_a_proj_with_mqa", ".kv_b_proj", ".o_proj", NULL};
static const char *const mla_norms[] = {".q_a_layernorm", ".kv_a_layernorm", NULL};
/* GLM-5-FP8's modules_to_not_convert spells the indexer's weights_proj
 * "self_attn.indexers_proj" (no tensor of the checkpoint has that name) */
static const char *const indexer_mats[] = {".indexer.wq_b", ".indexer.wk", ".indexer.weights_proj",
                                           ".indexers_proj", NULL};
static const char *const indexer_norms[] = {".indexer.k_norm", ".indexer.k_norm.bias", NULL};
static const char *const gdn_mats[] = {".in_proj_qkvz", ".in_proj_ba", ".in_proj_qkv",
                                       ".in_proj_z",    ".in_proj_b",  ".in_proj_a",
                                       ".out_proj",     ".conv1d",     NULL};
static const char *const mamba_mats[] = {".in_proj", ".out_proj", ".conv1d", NULL};
static const char *const gated_mats[] = {".gate_proj", ".up_proj", ".down_proj", ".gate_up_proj",
                                         NULL};
static const char *const ungated_mats[] = {".up_proj", ".down_proj", ".fc1", ".fc2", NULL};
static const char *const fused_experts[] = {".experts.gate_up_proj", ".experts.down_proj",
                                            ".experts.gate_proj", ".experts.up_proj", NULL};
static const char *const expert_mats[] = {"",    ".gate_proj", ".up_proj", ".down_proj",
                                          ".w1", ".w2",        ".w3",      NULL};
static const char *const layer_norms[] = {"input_layernorm",
                                          "post_attention_layernorm",
                                          "pre_feedforward_layernorm",
                                          "post_feedforward_layernorm",
                                          "norm",
                                          NULL};
static const char *const mtp_parts[] = {
    "enorm",        "hnorm", "eh_proj", "shared_head", "shared_head.norm", "shared_head.head",
    "embed_tokens", NULL};

static void attention_names(matcher *mt, int64_t l, const layer_kind *k, const char *blk)
{
    name2(mt, l, blk, "", MB(ATTN) | (k->dsa ? MB(INDEXER) : 0));
    if (k->mla) {
        if (k->q_lora)
            names_of(mt, l, blk, mla_q_lora, MB(ATTN));
        else
            name2(mt, l, blk, ".q_proj", MB(ATTN) | PART);
        names_of(mt, l, blk, mla_kv, MB(ATTN));
        names_of(mt, l, blk, mla_norms, 0);
    } else {
        names_of(mt, l, blk, attn_plain, MB(ATTN));
        names_of(mt, l, blk, attn_norms, 0);
    }
    if (k->dsa) {
        name2(mt, l, blk, ".indexer", MB(INDEXER));
        names_of(mt, l, blk, indexer_mats, MB(INDEXER));
        names_of(mt, l, blk, indexer_norms, 0);
    }
}

/* The MoE block under container c ("mlp", "block_sparse_moe", ...). */
static void moe_names(matcher *mt, int64_t l, const layer_kind *k, const char *c, bool experts,
                      int64_t n_experts, bool gated)
{
    char b[64];
    name2(mt, l, c, "", MB(ROUTER) | MB(EXPERTS) | (k->shared ? MB(SHARED) : 0));
    name2(mt, l, c, ".gate", MB(ROUTER));
    name2(mt, l, c, ".router", MB(ROUTER));
    name2(mt, l, c, ".gate.e_score_correction_bias", 0);
    name2(mt, l, c, ".experts", MB(EXPERTS));
    names_of(mt, l, c, fused_experts, MB(EXPERTS));
    /* The routed experts one by one (a million names on a model of 256
     * experts), skipped where no name that starts "layers.<l>.<c>.experts."
     * can match, and stopped at the first that does: every one of them
     * carries the same classes in the same layer, so visiting more would
     * change nothing. */
    snprintf(b, sizeof b, "layers.%lld.%s.experts.", (long long)l, c);
    if (experts && could_match(mt, b))
        for (int64_t e = 0, before = mt->hits; e < n_experts && mt->hits == before; e++) {
            snprintf(b, sizeof b, "%s.experts.%lld", c, (long long)e);
            names_of(mt, l, b, expert_mats, MB(EXPERTS));
        }
    if (k->shared)
        for (int s = 0; s < 2; s++) {
            snprintf(b, sizeof b, "%s.%s", c, s ? "shared_expert" : "shared_experts");
            name2(mt, l, b, "", MB(SHARED));
            names_of(mt, l, b, gated ? gated_mats : ungated_mats, MB(SHARED));
        }
    if (k->shared_gate)
        name2(mt, l, c, ".shared_expert_gate", MB(ROUTER));
}

/* Every name of layer l. experts: the routed experts one by one too (only
 * for an entry that names one). */
static void layer_names(matcher *mt, const rf_model *m, int64_t l, bool nemotron, bool experts)
{
    layer_kind k = kind_of(m, l, nemotron);
    for (const char *const *n = layer_norms; *n; n++)
        name2(mt, l, *n, "", 0);
    if (k.mtp)
        for (const char *const *n = mtp_parts; *n; n++)
            name2(mt, l, *n, "", 0);
    bool gated = !m->ffn_ungated;
    if (k.nemotron) { /* backbone.layers.<l>.mixer is every kind of block */
        if (k.mixer == RF_MIX_MAMBA2) {
            name2(mt, l, "mixer", "", MB(MIXER));
            names_of(mt, l, "mixer", mamba_mats, MB(MIXER));
            name2(mt, l, "mixer.norm", "", 0);
        } else if (k.mixer == RF_MIX_ATTN) {
            attention_names(mt, l, &k, "mixer");
        } else if (k.ffn == RF_FFN_DENSE) {
            name2(mt, l, "mixer", "", MB(MLP));
            names_of(mt, l, "mixer", gated ? gated_mats : ungated_mats, MB(MLP));
        } else if (k.ffn != RF_FFN_NONE) {
            moe_names(mt, l, &k, "mixer", experts, m->n_experts, gated);
        }
        return;
    }
    if (k.mixer == RF_MIX_ATTN)
        attention_names(mt, l, &k, "self_attn");
    else if (k.mixer == RF_MIX_GDN) {
        name2(mt, l, "linear_attn", "", MB(MIXER));
        names_of(mt, l, "linear_attn", gdn_mats, MB(MIXER));
        name2(mt, l, "linear_attn.norm", "", 0);
    }
    static const char *const containers[] = {"mlp", "block_sparse_moe", "feed_forward"};
    for (size_t c = 0; c < sizeof containers / sizeof containers[0]; c++) {
        if (k.ffn == RF_FFN_DENSE) {
            name2(mt, l, containers[c], "", MB(MLP));
            names_of(mt, l, containers[c], gated ? gated_mats : ungated_mats, MB(MLP));
        } else if (k.ffn != RF_FFN_NONE) {
            moe_names(mt, l, &k, containers[c], experts, m->n_experts, gated);
        }
    }
}

/* ---- matching --------------------------------------------------------- */

/* One character on along a name read as the string a then b: *s moves
 * into b where a ends (*in_a: still in a). */
static void step_on(const char **s, bool *in_a, const char *b)
{
    if (!*++*s && *in_a) {
        *s = b;
        *in_a = false;
    }
}

/* fnmatch's '*' (any run, dots included) and '?' (one character) over the
 * name a followed by b (a prefix and the name after it: a million names
 * are tried on a model of 256 experts, and writing each with its prefix
 * first was most of a parse); the caller refuses '[' classes. With
 * start_only, whether some name that starts with a then b can match p:
 * true where that start runs out (whatever the rest of p is, some ending
 * matches it), false where no name of that start matches. */
static bool glob_match(const char *p, const char *a, const char *b, bool start_only)
{
    const char *star = NULL, *resume = NULL, *s = *a ? a : b;
    bool in_a = *a != '\0', resume_in_a = false;
    while (*s) {
        if (*p == '*') {
            star = p++;
            resume = s;
            resume_in_a = in_a;
        } else if (*p == '?' || *p == *s) {
            p++;
            step_on(&s, &in_a, b);
        } else if (star) {
            p = star + 1;
            step_on(&resume, &resume_in_a, b);
            s = resume;
            in_a = resume_in_a;
        } else {
            return false;
        }
    }
    if (start_only)
        return true;
    while (*p == '*')
        p++;
    return !*p;
}

/* Whether rel matches the entry; with start_only, whether some name that
 * starts with rel can (a regular expression always can). */
static bool matches(const matcher *mt, const char *rel, bool start_only)
{
    if (mt->regex) {
        if (start_only)
            return true;
        char full[224];
        for (int i = 0; i < N_PREFIXES; i++) {
            snprintf(full, sizeof full, "%s%s", prefixes[i], rel);
            if (!regexec(&mt->re, full, 0, NULL, 0))
                return true;
        }
        return false;
    }
    if (mt->alt[0] && glob_match(mt->alt, "", rel, start_only))
        return true;
    if (mt->prefixed)
        return glob_match(mt->pat, "", rel, start_only);
    for (int i = 0; i < N_PREFIXES; i++)
        if (glob_match(mt->pat, prefixes[i], rel, start_only))
            return true;
    return false;
}

static bool could_match(const matcher *mt, const char *start) { return matches(mt, start, true); }

static void visit(matcher *mt, int64_t layer, const char *rel, uint32_t mods)
{
    if (!matches(mt, rel, false))
        return;
    mt->hit = true;
    mt->hits++;
    if (mods & PART)
        mt->part |= mods & ~PART;
    else
        mt->whole |= mods;
    mods &= ~PART;
    mt->mods |= mods;
    if (layer < 0)
        mt->ex->global |= mods;
    else if (layer < RF_MODEL_MAX_LAYERS)
        mt->ex->layer[layer] |= (uint16_t)mods;
}

/* Python's re syntax as POSIX ERE, anchored at the start as re.match is:
 * \d \w \s become classes, a (?:...) group a plain one; the other (?...)
 * forms (lookarounds, flags) have no ERE equivalent. */
static bool regex_compile(regex_t *re, const char *py)
{
    char ere[600];
    size_t n = 0;
    ere[n++] = '^';
    ere[n++] = '(';
    for (const char *c = py; *c; c++) {
        const char *add = NULL;
        char one[3] = {c[0], 0, 0};
        if (c[0] == '(' && c[1] == '?') {
            if (c[2] != ':')
                return false;
            c += 2; /* "(?:" -> "(" */
        }
        if (c[0] == '\\' && c[1]) {
            add = c[1] == 'd'   ? "[0-9]"
                  : c[1] == 'w' ? "[A-Za-z0-9_]"
                  : c[1] == 's' ? "[[:space:]]"
                                : NULL;
            if (!add) {
                one[1] = c[1];
                add = one;
            }
            c++;
        } else {
            add = one;
        }
        size_t k = strlen(add);
        if (n + k + 2 >= sizeof ere)
            return false;
        memcpy(ere + n, add, k);
        n += k;
    }
    ere[n++] = ')';
    ere[n] = '\0';
    return regcomp(re, ere, REG_EXTENDED | REG_NOSUB) == 0;
}

/* layers.<digits>.rest: the layer a literal names, else -1 */
static int64_t literal_layer(const char *p)
{
    if (strncmp(p, "layers.", 7))
        return -1;
    p += 7;
    int64_t l = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 7; p++, digits++)
        l = l * 10 + (*p - '0');
    return digits && *p == '.' ? l : -1;
}

rf_status rf__hf_excl_match(reader *r, rf__hf_excl *ex, const char *field, size_t i,
                            const char *entry, uint32_t *mods)
{
    const rf_model *m = r->m;
    matcher mt = {.ex = ex, .pat = entry, .only_layer = -1};
    *mods = 0;
    if (!strncmp(entry, "re:", 3)) {
        mt.regex = true;
        if (!regex_compile(&mt.re, entry + 3))
            return rf__hf_fail(r, RF_EINVAL,
                               "%s[%zu] '%s': a regular expression this reader cannot match "
                               "(POSIX extended syntax, \\d \\w \\s, (?:...); no other "
                               "(?...) form)",
                               field, i, entry);
    } else {
        if (strchr(entry, '[') || strlen(entry) + 3 > sizeof mt.alt)
            return rf__hf_fail(r, RF_EINVAL,
                               "%s[%zu] '%s': a pattern form this reader cannot match (module "
                               "names with * and ? wildcards, or re:EXPR)",
                               field, i, entry);
        for (int p = 0; p < N_PREFIXES - 1; p++) {
            size_t n = strlen(prefixes[p]);
            if (!strncmp(entry, prefixes[p], n)) {
                mt.pat = entry + n;
                mt.prefixed = true;
                break;
            }
        }
        for (size_t v = 0; v < sizeof vision_roots / sizeof vision_roots[0]; v++) {
            size_t n = strlen(vision_roots[v]);
            if (!strncmp(mt.pat, vision_roots[v], n) &&
                (!mt.pat[n] || mt.pat[n] == '.' || mt.pat[n] == '*')) {
                ex->vision = true;
                return RF_OK;
            }
        }
        mt.only_layer = literal_layer(mt.pat);
        /* transformers' lists name a module anywhere ("mlp.gate") */
        if (!mt.prefixed && mt.only_layer < 0 && mt.pat[0] != '*')
            snprintf(mt.alt, sizeof mt.alt, "*.%s", mt.pat);
    }
    bool nemotron = nemotron_naming(m);
    /* routed experts one by one only for an entry that can name one (not
     * "shared_experts"): 384 experts x 61 layers is many names */
    bool experts = false;
    for (const char *e = entry; (e = strstr(e, "experts")); e++)
        experts |= e - entry < 7 || strncmp(e - 7, "shared_", 7);
    int64_t all = m->layers + m->mtp_layers;
    if (mt.only_layer < 0) {
        visit(&mt, -1, "lm_head", MB(LM_HEAD));
        visit(&mt, -1, "embed_tokens", MB(EMBED));
        visit(&mt, -1, "embeddings", MB(EMBED));
        visit(&mt, -1, "norm", 0);
        visit(&mt, -1, "norm_f", 0);
        for (size_t v = 0; v < sizeof vision_roots / sizeof vision_roots[0]; v++) {
            bool before = mt.hit;
            mt.hit = false;
            visit(&mt, -1, vision_roots[v], 0);
            ex->vision |= mt.hit;
            mt.hit |= before;
        }
        for (int64_t l = 0; l < all; l++)
            layer_names(&mt, m, l, nemotron, experts);
    } else if (mt.only_layer < all) {
        layer_names(&mt, m, mt.only_layer, nemotron, experts);
    }
    if (mt.regex)
        regfree(&mt.re);
    if (!mt.hit)
        return rf__hf_fail(r, RF_EINVAL,
                           "%s[%zu] '%s' names no module of this model (%lld layers%s)", field, i,
                           entry, (long long)m->layers, m->mtp_layers ? " and its MTP layers" : "");
    *mods = mt.mods;
    /* a literal name of one matrix ("model.layers.3.self_attn.o_proj") keeps
     * its whole class in that layer: the granularity is the module class */
    if (!mt.regex && !strpbrk(entry, "*?"))
        ex->partial |= mt.part & ~mt.whole;
    return RF_OK;
}
