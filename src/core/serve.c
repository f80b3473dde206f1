/* serve.c - whole requests summed exactly over their contexts (rf_serve.h). */
#include <math.h>
#include <string.h>

#include "roofline/rf_serve.h"
#include "serve_internal.h"
#include "step_internal.h"

/* One term per operator, and a last one for the step's totals (its floor
 * is max(F/pi, Q/beta) of F = flops, Q = total_bytes). */
#define TERMS (RF_STEP_MAX_OPS + 1)

/* What a step at one context contributes: its terms' integer counts (to
 * check affinity exactly) and its two floors. */
typedef struct point {
    int64_t s;
    size_t n;
    uint64_t count[TERMS], flops[TERMS], bytes[TERMS];
    double floor_s, sum_of_max_s;
} point;

typedef struct summer {
    const rf_model *m;
    rf_step_opts o;
    const rf_roof *roof;
    rf_err *err;
    rf_step st;       /* scratch of rf_step_compute (~10 KB)           */
    int64_t cascade;  /* decode only: a prefix of this many positions,
                            shared by the B sequences, read once a step   */
    bool every_logit; /* prefill only: lm_head scores every one of the
                            T positions (a speculative verification)      */
    int64_t queries;  /* decode only, above 1: the B rows are B / q
                            sequences of q queries each, every sequence's
                            K/V read once (an absorbed MLA verification)  */
    double floor_s, sum_of_max_s;
    size_t pieces, calls;
} summer;

/* The step's floors again after its operators' bytes changed. */
static void refloor(rf_step *st, const rf_step_opts *o)
{
    double som = 0;
    for (size_t i = 0; i < st->n_ops; i++)
        som += (double)st->ops[i].count *
               rf_roof_place(&st->roof, (double)st->ops[i].flops, (double)st->ops[i].bytes).floor_s;
    st->floor_sum_of_max_s = som;
    rf__step_floors(st, &st->roof, (double)o->batch);
}

/* A cascade (shared-prefix) kernel reads the prefix's K/V once for the
 * batch, not once a sequence: each attention row's K/V read, B S x per
 * token and layer, loses (B - 1) P_s x; the totals and floors follow. */
/* A shared prefix is one copy of its positions' K/V: refused on layers
 * whose cache is not that (a window or a chunk drops positions, a
 * recurrent state is each sequence's own, DSA's top-k attention is not
 * modelled under one). */
static rf_status prefix_layers(const rf_model *m, rf_err *err)
{
    if (rf_model_sliding_layers(m))
        return rf_err_set(err, RF_EINVAL,
                          "%s: a shared prefix on sliding-window layers is not "
                          "modelled",
                          m->name);
    bool chunked = false;
    for (int64_t l = 0; l < m->layers; l++)
        chunked = chunked || rf_model_layer_local(m, l) == RF_LOCAL_CHUNKED;
    if (chunked || rf_model_has_state(m) || m->index_topk)
        return rf_err_set(err, RF_EINVAL, "%s: a shared prefix on %s layers is not modelled",
                          m->name,
                          chunked         ? "chunked-attention"
                          : m->index_topk ? "sparse-attention (DSA)"
                                          : "Gated DeltaNet or Mamba2");
    return RF_OK;
}

/* Each decode attention row's K/V read less kv_bytes / div x mul (why:
 * the refusal when a row's bytes are not a multiple of div); the totals
 * and floors follow. */
static rf_status kv_shed(rf_step *st, const rf_step_opts *o, uint64_t div, uint64_t mul,
                         const char *why, rf_err *err)
{
    uint64_t saved = 0;
    for (size_t i = 0; i < st->n_ops; i++) {
        rf_op *op = &st->ops[i];
        if (op->kind != RF_OP_ATTN_DECODE || !op->kv_bytes)
            continue;
        if (op->kv_bytes % div)
            return rf_err_set(err, RF_EINVAL, "%s", why);
        uint64_t save = op->kv_bytes / div * mul;
        op->kv_bytes -= save;
        op->bytes -= save;
        saved += op->count * save;
    }
    st->kv_bytes -= saved;
    st->total_bytes -= saved;
    st->op_bytes -= saved;
    refloor(st, o);
    return RF_OK;
}

static rf_status cascade(rf_step *st, const rf_step_opts *o, int64_t prefix, rf_err *err)
{
    return kv_shed(st, o, (uint64_t)o->batch * (uint64_t)o->context,
                   (uint64_t)(o->batch - 1) * (uint64_t)prefix,
                   "--prefix-kernel cascade: the KV dtype's bytes are not a whole number a token",
                   err);
}

/* A decode step of B rows that are B / q sequences of q queries each (an
 * MLA verification as the absorbed kernel runs it, each query a decode row
 * against the latent): every attention row's K/V read, once a row, loses
 * (q - 1) / q, each sequence's latent read once. */
static rf_status read_once(rf_step *st, const rf_step_opts *o, int64_t q, rf_err *err)
{
    return kv_shed(st, o, (uint64_t)q, (uint64_t)(q - 1),
                   "a verification's K/V bytes are not a whole number of reads of a sequence", err);
}

static rf_status mixed_totals(const rf_step_opts *o, const rf_roof *roof, int64_t tokens,
                              rf_step *out, rf_err *err);

/* A verification step scores all T query positions of a sequence (each
 * checks a speculated token), not only the last as a prefill does: lm_head
 * at M = B T rows, its weights read once as before; the totals follow. */
static rf_status every_logit(rf_step *st, const rf_step_opts *o, const rf_roof *roof, rf_err *err)
{
    int64_t rows = o->batch * o->tokens; /* <= RF_DIM_MAX: the step checked its tokens */
    for (size_t i = 0; i < st->n_ops; i++) {
        rf_op *op = &st->ops[i];
        if (!op->name || strcmp(op->name, "lm_head"))
            continue;
        uint64_t count = op->count;
        rf_status s = rf_op_gemm(op->name, rows, op->k, op->n, op->w, o->a, op, err);
        if (s)
            return s;
        op->count = count;
    }
    return mixed_totals(o, roof, rows, st, err);
}

static rf_status at(summer *sm, int64_t s, point *p)
{
    sm->o.context = s;
    sm->calls++;
    rf_status rc = rf_step_compute(sm->m, &sm->o, sm->roof, &sm->st, sm->err);
    if (!rc && sm->cascade)
        rc = cascade(&sm->st, &sm->o, sm->cascade, sm->err);
    if (!rc && sm->every_logit)
        rc = every_logit(&sm->st, &sm->o, sm->roof, sm->err);
    if (!rc && sm->queries > 1)
        rc = read_once(&sm->st, &sm->o, sm->queries, sm->err);
    if (rc)
        return rc;
    const rf_step *st = &sm->st;
    p->s = s;
    p->n = st->n_ops + 1;
    for (size_t i = 0; i < st->n_ops; i++) {
        p->count[i] = st->ops[i].count;
        p->flops[i] = st->ops[i].flops;
        p->bytes[i] = st->ops[i].bytes;
    }
    p->count[st->n_ops] = 1;
    p->flops[st->n_ops] = st->flops;
    p->bytes[st->n_ops] = st->total_bytes;
    p->floor_s = st->floor_s;
    p->sum_of_max_s = st->floor_sum_of_max_s;
    return RF_OK;
}

/* v(x) == v(a) + (x - a) (v(b) - v(a)) for every count, b = a + 1; in
 * unsigned (modular) arithmetic, which is exact for affine counts. */
static bool affine(const point *a, const point *b, const point *x)
{
    if (a->n != b->n || a->n != x->n)
        return false;
    uint64_t t = (uint64_t)(x->s - a->s);
    for (size_t i = 0; i < a->n; i++)
        if (a->count[i] != b->count[i] || a->count[i] != x->count[i] ||
            x->flops[i] != a->flops[i] + t * (b->flops[i] - a->flops[i]) ||
            x->bytes[i] != a->bytes[i] + t * (b->bytes[i] - a->bytes[i]))
            return false;
    return true;
}

/* Add the linear piece lo..hi: (hi - lo + 1) (f(lo) + f(hi)) / 2. */
static void add_piece(summer *sm, const point *lo, const point *hi)
{
    double n = (double)(hi->s - lo->s + 1);
    sm->floor_s += n * (lo->floor_s + hi->floor_s) / 2;
    sm->sum_of_max_s += n * (lo->sum_of_max_s + hi->sum_of_max_s) / 2;
    sm->pieces++;
}

/* The range lo..hi on which every count is affine (a at lo, b at lo + 1):
 * a term's floor max(F/pi, Q/beta) bends where F/pi - Q/beta = 0, at
 * t = -(F_a/pi - Q_a/beta) / (dF/pi - dQ/beta) past lo; the floors are
 * linear between those bends, summed piece by piece. */
static rf_status linear_range(summer *sm, const point *a, const point *b, int64_t hi)
{
    int64_t cut[TERMS + 1];
    size_t n_cut = 0;
    double pi = sm->roof->peak_flops_per_s, beta = sm->roof->bw_bytes_per_s;
    for (size_t i = 0; i < a->n; i++) {
        double g0 = (double)a->flops[i] / pi - (double)a->bytes[i] / beta;
        double g1 = (double)(int64_t)(b->flops[i] - a->flops[i]) / pi -
                    (double)(int64_t)(b->bytes[i] - a->bytes[i]) / beta;
        if (g1 == 0)
            continue;
        double t = -g0 / g1;
        if (!(t > 0 && t < (double)(hi - a->s)))
            continue;
        int64_t c = a->s + (int64_t)floor(t); /* the bend lies in (c, c + 1] */
        size_t j = n_cut++;
        for (; j > 0 && cut[j - 1] > c; j--) /* insertion, kept sorted */
            cut[j] = cut[j - 1];
        cut[j] = c;
    }
    cut[n_cut++] = hi;
    point p, q;
    rf_status s;
    int64_t from = a->s;
    for (size_t j = 0; j < n_cut; j++) {
        if (cut[j] < from)
            continue; /* a repeated cut */
        if ((s = at(sm, from, &p)) || (s = at(sm, cut[j], &q)))
            return s;
        add_piece(sm, &p, &q);
        from = cut[j] + 1;
    }
    return RF_OK;
}

static rf_status floor_sum(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                           int64_t lo, int64_t hi, int64_t prefix, bool every_logit,
                           int64_t queries, rf_floor_sum *out, rf_err *err);

rf_status rf_floor_sum_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                               int64_t lo, int64_t hi, rf_floor_sum *out, rf_err *err)
{
    return floor_sum(m, o, roof, lo, hi, 0, false, 1, out, err);
}

/* prefix: a cascade prefix of a decode (0: none); every_logit: lm_head on
 * every position of a prefill (a verification step); queries: a decode's
 * rows as sequences of that many queries reading their K/V once (1: none). */
static rf_status floor_sum(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                           int64_t lo, int64_t hi, int64_t prefix, bool every_logit,
                           int64_t queries, rf_floor_sum *out, rf_err *err)
{
    if (lo < 0 || lo > hi)
        return rf_err_set(err, RF_EINVAL, "contexts %lld..%lld: need 0 <= first <= last",
                          (long long)lo, (long long)hi);
    static const size_t depth = 128; /* two ranges a halving of 2^40 */
    summer sm = {.m = m,
                 .o = *o,
                 .roof = roof,
                 .err = err,
                 .cascade = prefix,
                 .every_logit = every_logit,
                 .queries = queries};
    rf_floor_sum r = {.steps = hi - lo + 1};
    point a, b, x;
    rf_status s;
    if ((s = at(&sm, lo, &a)))
        return s;
    r.first_s = a.floor_s;
    if ((s = at(&sm, hi, &a)))
        return s;
    r.last_s = a.floor_s;
    /* ranges still to sum; a range whose counts are not affine is halved */
    int64_t stack[128][2];
    size_t top = 0;
    stack[top][0] = lo;
    stack[top++][1] = hi;
    while (top) {
        top--;
        int64_t l = stack[top][0], h = stack[top][1];
        if (h - l < 3) {
            for (int64_t c = l; c <= h; c++) {
                if ((s = at(&sm, c, &a)))
                    return s;
                add_piece(&sm, &a, &a);
            }
            continue;
        }
        int64_t mid = l + (h - l) / 2;
        if ((s = at(&sm, l, &a)) || (s = at(&sm, l + 1, &b)) || (s = at(&sm, mid, &x)))
            return s;
        bool lin = affine(&a, &b, &x);
        if (lin) {
            if ((s = at(&sm, h, &x)))
                return s;
            lin = affine(&a, &b, &x);
        }
        if (lin) {
            if ((s = linear_range(&sm, &a, &b, h)))
                return s;
            continue;
        }
        if (top + 2 > depth)
            return rf_err_set(err, RF_EINTERNAL, "contexts %lld..%lld: halving too deep",
                              (long long)lo, (long long)hi);
        stack[top][0] = l;
        stack[top++][1] = mid;
        stack[top][0] = mid + 1;
        stack[top++][1] = h;
    }
    r.floor_s = sm.floor_s;
    r.sum_of_max_s = sm.sum_of_max_s;
    r.pieces = sm.pieces;
    r.steps_computed = sm.calls;
    *out = r;
    return RF_OK;
}

static rf_status check_sizes(const rf_step_opts *o, int64_t prompt, int64_t output, rf_err *err);

rf_status rf__serve_sizes(const rf_step_opts *o, int64_t prompt, int64_t output, rf_err *err)
{
    return check_sizes(o, prompt, output, err);
}

static rf_status check_sizes(const rf_step_opts *o, int64_t prompt, int64_t output, rf_err *err)
{
    if (o->batch < 1 || o->batch > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "batch (%lld) must be in [1, %lld]", (long long)o->batch,
                          (long long)RF_DIM_MAX);
    if (prompt < 1 || prompt > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL, "prompt (%lld) must be in [1, %lld] tokens",
                          (long long)prompt, (long long)RF_DIM_MAX);
    if (output < 1 || output > RF_DIM_MAX - prompt + 1)
        return rf_err_set(err, RF_EINVAL,
                          "output (%lld) must be in [1, %lld] tokens (prompt + output - 1 "
                          "positions at most %lld)",
                          (long long)output, (long long)(RF_DIM_MAX - prompt + 1),
                          (long long)RF_DIM_MAX);
    return RF_OK;
}

rf_status rf_generate_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                              int64_t prompt, int64_t output, rf_generate *out, rf_err *err)
{
    rf_prefix none = {0};
    return rf_generate_prefix_compute(m, o, roof, prompt, output, &none, out, err);
}

/* A prefill of B sequences of `tokens` after `context`, into *floor_s. */
static rf_status prefill(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                         int64_t batch, int64_t tokens, int64_t context, double *floor_s,
                         double *som_s, rf_regime *regime, rf_err *err)
{
    rf_step_opts pre = *o;
    pre.phase = RF_PREFILL;
    pre.batch = batch;
    pre.context = context;
    pre.tokens = tokens;
    summer sm = {.m = m, .o = pre, .roof = roof, .err = err};
    point p;
    rf_status s = at(&sm, context, &p);
    if (s)
        return s;
    *floor_s += p.floor_s;
    *som_s += p.sum_of_max_s;
    *regime = sm.st.regime;
    return RF_OK;
}

rf_status rf_generate_prefix_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                     int64_t prompt, int64_t output, const rf_prefix *px,
                                     rf_generate *out, rf_err *err)
{
    rf_status s = check_sizes(o, prompt, output, err);
    if (s)
        return s;
    int64_t ps = px->shared;
    if (ps < 0 || ps > prompt)
        return rf_err_set(err, RF_EINVAL,
                          "shared-prefix (%lld) must be in [0, the prompt's %lld tokens]",
                          (long long)ps, (long long)prompt);
    if (ps && (s = prefix_layers(m, err)))
        return s;
    if (px->cascade && !ps)
        return rf_err_set(err, RF_EINVAL, "prefix-kernel cascade needs a shared prefix");
    rf_generate g = {.batch = o->batch,
                     .prompt = prompt,
                     .output = output,
                     .final_positions = prompt + output - 1,
                     .prefix = *px};
    static const rf_floor_sum none = {0};
    /* the prefix's prefill once, then the B suffixes after it */
    if (ps && (s = prefill(m, o, roof, 1, ps, 0, &g.ttft_s, &g.ttft_sum_of_max_s, &g.prefill_regime,
                           err)))
        return s;
    if (ps < prompt && (s = prefill(m, o, roof, o->batch, prompt - ps, ps, &g.ttft_s,
                                    &g.ttft_sum_of_max_s, &g.prefill_regime, err)))
        return s;
    g.decode = none;
    if (output >= 2) {
        rf_step_opts dec = *o;
        dec.phase = RF_DECODE;
        dec.tokens = 1;
        if ((s = floor_sum(m, &dec, roof, prompt + 1, prompt + output - 1, px->cascade ? ps : 0,
                           false, 1, &g.decode, err)))
            return s;
        g.tpot_mean_s = g.decode.floor_s / (double)(output - 1);
        g.tpot_first_s = g.decode.first_s;
        g.tpot_last_s = g.decode.last_s;
        g.decode_tokens_per_s = (double)o->batch / g.tpot_mean_s;
    }
    g.latency_s = g.ttft_s + g.decode.floor_s;
    g.tokens_per_s = (double)o->batch * (double)output / g.latency_s;
    *out = g;
    return RF_OK;
}

rf_step_opts rf_generate_final_step(const rf_step_opts *o, int64_t prompt, int64_t output)
{
    rf_step_opts f = *o;
    if (output >= 2) {
        f.phase = RF_DECODE;
        f.context = prompt + output - 1;
        f.tokens = 1;
    } else {
        f.phase = RF_PREFILL;
        f.context = 0;
        f.tokens = prompt;
    }
    return f;
}

double rf_spec_tokens_per_iter(int64_t k, double alpha)
{
    if (alpha >= 1)
        return (double)(k + 1);
    return (1 - pow(alpha, (double)(k + 1))) / (1 - alpha);
}

rf_status rf__spec_check(const rf_model *target, const rf_model *draft, int64_t output, int64_t k,
                         double accept, rf_err *err)
{
    if (k < 1 || k > 64)
        return rf_err_set(err, RF_EINVAL, "spec-k (%lld) must be in [1, 64]", (long long)k);
    if (!(accept >= 0 && accept <= 1))
        return rf_err_set(err, RF_EINVAL, "accept (%g) must be in [0, 1]", accept);
    if (output < 2)
        return rf_err_set(err, RF_EINVAL,
                          "output (%lld): speculation needs at least 2 output tokens",
                          (long long)output);
    if (draft->vocab != target->vocab)
        return rf_err_set(
            err, RF_EINVAL, "draft %s has a vocabulary of %lld tokens, the target %s %lld",
            draft->name, (long long)draft->vocab, target->name, (long long)target->vocab);
    return RF_OK;
}

rf_status rf_spec_compute(const rf_model *target, const rf_model *draft, const rf_step_opts *o,
                          const rf_step_opts *draft_o, const rf_roof *roof, const rf_generate *g,
                          int64_t k, double accept, rf_spec *out, rf_err *err)
{
    rf_status s = rf__spec_check(target, draft, g->output, k, accept, err);
    if (s)
        return s;
    rf_spec r = {.k = k, .accept = accept, .tokens_per_iter = rf_spec_tokens_per_iter(k, accept)};
    int64_t lo = g->prompt + 1, hi = g->prompt + g->output - 1;
    double steps = (double)(hi - lo + 1);
    rf_floor_sum f;
    rf_step_opts d = *draft_o;
    d.phase = RF_DECODE;
    d.batch = o->batch;
    d.tokens = 1;
    for (int64_t i = 0; i < k; i++) { /* the i-th draft step reads S + i */
        if ((s = rf_floor_sum_compute(draft, &d, roof, lo + i, hi + i, &f, err)))
            return s;
        r.draft_s += f.floor_s / steps;
        r.steps_computed += f.steps_computed;
    }
    rf_step_opts v = *o; /* K + 1 queries a sequence after S, every one scored */
    v.phase = RF_PREFILL;
    v.tokens = k + 1;
    if ((s = floor_sum(target, &v, roof, lo, hi, 0, true, 1, &f, err)))
        return s;
    double verify = f.floor_s;
    r.steps_computed += f.steps_computed;
    if (target->kv_lora_rank) {
        /* MLA: the engines verify with the absorbed kernel, each of the
         * K + 1 queries a decode row against the latent, read once a
         * sequence. Under it: the decode of B (K + 1) rows at S + 1 (the
         * first query's keys: the least FLOPs) with each sequence's latent
         * read once; the floor is the lesser of the two sums (an engine
         * runs one form throughout). */
        rf_step_opts a = *o;
        a.phase = RF_DECODE;
        a.batch = o->batch * (k + 1);
        a.tokens = 1;
        if ((s = floor_sum(target, &a, roof, lo + 1, hi + 1, 0, false, k + 1, &f, err)))
            return s;
        verify = f.floor_s < verify ? f.floor_s : verify;
        r.steps_computed += f.steps_computed;
    }
    r.verify_s = verify / steps;
    r.iter_s = r.draft_s + r.verify_s;
    r.tpot_s = r.iter_s / r.tokens_per_iter;
    r.tokens_per_s = (double)o->batch * r.tokens_per_iter / r.iter_s;
    r.plain_tpot_s = g->tpot_mean_s;
    r.plain_tokens_per_s = g->decode_tokens_per_s;
    r.speedup = r.plain_tpot_s / r.tpot_s;
    /* E(alpha) rises from 1 (alpha = 0) to K + 1 (alpha = 1) */
    double need = r.iter_s / r.plain_tpot_s;
    if (need <= 1) {
        r.breaks_even = true;
        r.break_even_accept = 0;
    } else if (need <= (double)(k + 1)) {
        double l = 0, h = 1;
        for (int it = 0; it < 200 && h - l > 1e-15; it++) {
            double mid = (l + h) / 2;
            if (rf_spec_tokens_per_iter(k, mid) < need)
                l = mid;
            else
                h = mid;
        }
        r.breaks_even = true;
        r.break_even_accept = h;
    }
    *out = r;
    return RF_OK;
}

/* ---- mixed steps and continuous batching -------------------------------- */

static bool is_attention(const rf_op *op)
{
    return op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL;
}

/* Append st's attention operators to out; add their K/V and score bytes. */
static rf_status take_attention(rf_step *out, const rf_step *st, rf_err *err)
{
    for (size_t i = 0; i < st->n_ops; i++) {
        if (!is_attention(&st->ops[i]))
            continue;
        if (out->n_ops == RF_STEP_MAX_OPS)
            return rf_err_set(err, RF_EINTERNAL, "a mixed step of more than %d operators",
                              RF_STEP_MAX_OPS);
        out->ops[out->n_ops++] = st->ops[i];
    }
    if (!rf_add_u64(out->kv_bytes, st->kv_bytes, &out->kv_bytes) ||
        !rf_add_u64(out->extra_bytes, st->extra_bytes, &out->extra_bytes))
        return rf_err_set(err, RF_ERANGE, "mixed step: KV bytes overflow 64 bits");
    return RF_OK;
}

/* The tokens a mixed step runs: B_d decode tokens plus every chunk's; checks
 * the inputs on the way. */
static rf_status mixed_tokens(const rf_model *m, int64_t decode_batch, const rf__chunk_group *g,
                              size_t n_groups, int64_t *tokens_out, rf_err *err)
{
    if (m->kv_lora_rank > 0)
        return rf_err_set(err, RF_EINVAL,
                          "%s: mixed steps of MLA models are not modelled "
                          "(kv_b_proj expands the cached latents)",
                          m->name);
    if (decode_batch < 0)
        return rf_err_set(err, RF_EINVAL, "decode (%lld) must be >= 0", (long long)decode_batch);
    int64_t tokens = decode_batch;
    for (size_t i = 0; i < n_groups; i++) {
        if (g[i].count < 0 || (g[i].count > 0 && g[i].tokens < 1))
            return rf_err_set(err, RF_EINVAL, "chunk (%lld) must be >= 1", (long long)g[i].tokens);
        if (g[i].count > 0 && g[i].tokens > (RF_DIM_MAX - tokens) / g[i].count)
            return rf_err_set(err, RF_ERANGE, "mixed step: more than %lld tokens",
                              (long long)RF_DIM_MAX);
        tokens += g[i].count * g[i].tokens;
    }
    if (tokens < 1)
        return rf_err_set(err, RF_EINVAL, "a mixed step needs a decode token or a chunk");
    *tokens_out = tokens;
    return RF_OK;
}

/* Every operator but attention, at M = tokens; lm_head on `seqs` positions
 * (the B_d decode tokens and each chunk's logits).
 * Leaves out's K/V and extra bytes at zero for the attention parts. */
static rf_status mixed_linear(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                              int64_t tokens, int64_t seqs, rf_step *out, rf_err *err)
{
    rf_step_opts lin = *o;
    lin.phase = RF_PREFILL;
    lin.batch = 1;
    lin.tokens = tokens;
    lin.context = 0;
    rf_status s = rf_step_compute(m, &lin, roof, out, err);
    if (s)
        return s;
    size_t n = 0;
    for (size_t i = 0; i < out->n_ops; i++) {
        rf_op *op = &out->ops[i];
        if (is_attention(op))
            continue;
        if (!strcmp(op->name, "lm_head") &&
            (s = rf_op_gemm(op->name, seqs, op->k, op->n, op->w, o->a, op, err)))
            return s;
        out->ops[n++] = *op;
    }
    out->n_ops = n;
    out->kv_bytes = out->extra_bytes = 0;
    return RF_OK;
}

/* Append the attention of the decode tokens (a shared prefix of `prefix`
 * positions read once when > 0), then of each chunk group, each as its own
 * step forms it. */
static rf_status mixed_attention(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                 int64_t decode_batch, int64_t decode_context, int64_t prefix,
                                 const rf__chunk_group *g, size_t n_groups, rf_step *out,
                                 rf_err *err)
{
    rf_step part; /* ~10 KB of scratch on the stack: core allocates nothing */
    rf_status s;
    if (decode_batch > 0) {
        rf_step_opts d = *o;
        d.phase = RF_DECODE;
        d.batch = decode_batch;
        d.context = decode_context;
        d.tokens = 1;
        if ((s = rf_step_compute(m, &d, roof, &part, err)) ||
            (prefix > 0 && (s = cascade(&part, &d, prefix, err))) ||
            (s = take_attention(out, &part, err)))
            return s;
    }
    for (size_t i = 0; i < n_groups; i++) {
        if (!g[i].count)
            continue;
        rf_step_opts c = *o;
        c.phase = RF_PREFILL;
        c.batch = g[i].count;
        c.tokens = g[i].tokens;
        c.context = g[i].context;
        if ((s = rf_step_compute(m, &c, roof, &part, err)) || (s = take_attention(out, &part, err)))
            return s;
    }
    return RF_OK;
}

/* out's totals from its operators, as rf_step_compute forms them. */
static rf_status mixed_totals(const rf_step_opts *o, const rf_roof *roof, int64_t tokens,
                              rf_step *out, rf_err *err)
{
    uint64_t flops = 0, op_bytes = 0, v;
    double som = 0;
    for (size_t i = 0; i < out->n_ops; i++) {
        const rf_op *op = &out->ops[i];
        if (!rf_mul_u64(op->count, op->flops, &v) || !rf_add_u64(flops, v, &flops) ||
            !rf_mul_u64(op->count, op->bytes, &v) || !rf_add_u64(op_bytes, v, &op_bytes))
            return rf_err_set(err, RF_ERANGE, "mixed step: totals overflow 64 bits");
        som +=
            (double)op->count * rf_roof_place(roof, (double)op->flops, (double)op->bytes).floor_s;
    }
    uint64_t total = op_bytes;
    if (o->traffic != RF_TRAFFIC_FULL && (!rf_add_u64(out->weight_bytes, out->kv_bytes, &total) ||
                                          !rf_add_u64(total, out->extra_bytes, &total)))
        return rf_err_set(err, RF_ERANGE, "mixed step: bytes overflow 64 bits");
    out->flops = flops;
    out->op_bytes = op_bytes;
    out->total_bytes = total;
    out->floor_sum_of_max_s = som;
    rf__step_floors(out, roof, (double)tokens);
    out->blended_intensity_limit = 0;
    out->throughput_cap_tokens_per_s = 0;
    return RF_OK;
}

int64_t rf__mix_tokens(const rf__mix *x)
{
    int64_t t = x->decode_batch;
    for (size_t i = 0; i < x->n_groups; i++)
        t += x->groups[i].count * x->groups[i].tokens;
    return t;
}

int64_t rf__mix_logits(const rf__mix *x)
{
    int64_t t = x->decode_batch;
    for (size_t i = 0; i < x->n_groups; i++)
        t += x->groups[i].count * x->groups[i].logits;
    return t;
}

rf_status rf__mixed(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                    int64_t decode_batch, int64_t decode_context, int64_t cascade,
                    const rf__chunk_group *g, size_t n_groups, rf_step *out, rf_err *err)
{
    int64_t tokens = 0;
    rf_status s = mixed_tokens(m, decode_batch, g, n_groups, &tokens, err);
    if (s)
        return s;
    int64_t seqs = decode_batch;
    for (size_t i = 0; i < n_groups; i++)
        seqs += g[i].count * g[i].logits; /* at most the tokens: checked above */
    if ((s = mixed_linear(m, o, roof, tokens, seqs, out, err)) ||
        (s = mixed_attention(m, o, roof, decode_batch, decode_context, cascade, g, n_groups, out,
                             err)))
        return s;
    return mixed_totals(o, roof, tokens, out, err);
}

rf_status rf_mixed_step_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                const rf_mixed_opts *mo, rf_step *out, rf_err *err)
{
    rf__chunk_group g = {mo->chunk, mo->chunk_context, mo->chunks, 1};
    return rf__mixed(m, o, roof, mo->decode_batch, mo->decode_context, 0, &g, 1, out, err);
}

rf_status rf_mixed_fit(const rf_model *m, const rf_step_opts *o, const rf_mixed_opts *mo,
                       uint64_t mem_bytes, double util, uint64_t reserve_bytes, rf_fit *out,
                       rf_err *err)
{
    rf_fit f, c;
    int64_t chunk_pos = mo->chunk_context + mo->chunk;
    rf_status s = rf_fit_prepare(m, o, mem_bytes, util, reserve_bytes, &f, err);
    if (s)
        return s;
    c = f;
    if ((s = rf_fit_at(&f, m, o->kv, mo->decode_batch, mo->decode_context, err)) ||
        (s = rf_fit_at(&c, m, o->kv, mo->chunks, chunk_pos, err)))
        return s;
    if (!rf_add_u64(f.kv_bytes, c.kv_bytes, &f.kv_bytes) ||
        !rf_add_u64(f.weight_bytes, f.kv_bytes, &f.needed_bytes))
        return rf_err_set(err, RF_ERANGE, "mixed step: KV held overflows 64 bits");
    f.batch = mo->decode_batch + mo->chunks;
    f.positions = chunk_pos > mo->decode_context ? chunk_pos : mo->decode_context;
    f.fits = (double)f.needed_bytes <= f.budget_bytes;
    *out = f;
    return RF_OK;
}

rf_status rf__serve_chunking(const rf_serve_opts *so, int64_t decode_tokens, int64_t *chunk,
                             int64_t *steps, int64_t *chunk_context, rf_err *err)
{
    int64_t own = so->prompt - so->prefix.shared;
    int64_t c = so->chunk ? so->chunk : own;
    if (so->max_batched_tokens) {
        if (so->max_batched_tokens <= decode_tokens)
            return rf_err_set(
                err, RF_EINVAL,
                "max-batched-tokens (%lld) must exceed the %s (%lld): the %s "
                "tokens alone fill the step",
                (long long)so->max_batched_tokens,
                decode_tokens > so->concurrency ? "concurrency x (K + 1)" : "concurrency",
                (long long)decode_tokens, decode_tokens > so->concurrency ? "verified" : "decode");
        if (so->max_batched_tokens - decode_tokens < c)
            c = so->max_batched_tokens - decode_tokens;
    }
    if (c > own)
        c = own; /* a chunk never spans two prompts */
    *chunk = c;
    *steps = (own + c - 1) / c;
    *chunk_context = so->prefix.shared + c * ((*steps - 1) / 2);
    return RF_OK;
}

/* The serving options' own checks: sizes, chunk and cap signs, the prefix. */
static rf_status serve_check(const rf_model *m, const rf_step_opts *o, const rf_serve_opts *so,
                             rf_err *err)
{
    rf_step_opts b = *o;
    b.batch = so->concurrency;
    rf_status s = check_sizes(&b, so->prompt, so->output, err);
    if (s)
        return s;
    if (so->chunk < 0 || so->max_batched_tokens < 0)
        return rf_err_set(err, RF_EINVAL,
                          "chunk (%lld) and max-batched-tokens (%lld) must be "
                          ">= 1",
                          (long long)so->chunk, (long long)so->max_batched_tokens);
    if (so->concurrency > RF_DIM_MAX / so->prompt)
        return rf_err_set(err, RF_ERANGE, "concurrency x prompt passes %lld tokens",
                          (long long)RF_DIM_MAX);
    int64_t ps = so->prefix.shared;
    if (ps < 0 || ps >= so->prompt)
        return rf_err_set(err, RF_EINVAL,
                          "shared-prefix (%lld) must be in [0, %lld]: each request's own "
                          "prompt tokens make its first output token",
                          (long long)ps, (long long)(so->prompt - 1));
    if (ps && (s = prefix_layers(m, err)))
        return s;
    if (so->prefix.cascade && !ps)
        return rf_err_set(err, RF_EINVAL, "prefix-kernel cascade needs a shared prefix");
    return RF_OK;
}

rf_status rf_serve_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                           const rf_serve_opts *so, rf_serve *out, rf_err *err)
{
    rf_status s = serve_check(m, o, so, err);
    if (s)
        return s;
    int64_t bq = so->concurrency, own = so->prompt - so->prefix.shared, n = so->output;
    out->opts = *so;
    if ((s = rf__serve_chunking(so, bq, &out->chunk, &out->ttft_steps, &out->chunk_context, err)))
        return s;
    int64_t c = out->chunk;
    out->decode_context = so->prompt + n / 2;
    out->prompt_tokens = (bq * own + n - 1) / n;
    out->full_chunks = out->prompt_tokens / c;
    out->tail_chunk = out->prompt_tokens % c;
    rf__chunk_group g[2] = {{c, out->chunk_context, out->full_chunks, 1},
                            {out->tail_chunk, out->chunk_context, out->tail_chunk ? 1 : 0, 1}};
    if ((s = rf__mixed(m, o, roof, bq, out->decode_context,
                       so->prefix.cascade ? so->prefix.shared : 0, g, 2, &out->step, err)))
        return s;
    out->tpot_s = out->step.floor_s;
    out->tokens_per_s = (double)bq / out->step.floor_s;
    out->ttft_s = (double)out->ttft_steps * out->step.floor_s;
    return RF_OK;
}

rf_status rf_serve_fit(const rf_model *m, const rf_step_opts *o, const rf_serve *sv,
                       uint64_t mem_bytes, double util, uint64_t reserve_bytes, rf_fit *out,
                       double *max_concurrency, rf_err *err)
{
    rf_fit f;
    uint64_t shared = 0, seq = 0, copies;
    int64_t bq = sv->opts.concurrency, ps = sv->opts.prefix.shared;
    rf_status s = rf_fit_prepare(m, o, mem_bytes, util, reserve_bytes, &f, err);
    if (s || (s = rf_fit_at(&f, m, o->kv, bq, sv->decode_context, err)) ||
        (s = rf_model_kv_bytes(m, o->kv, ps, &shared, err)) ||
        (s = rf_model_seq_bytes(m, o->kv, sv->decode_context, &seq, err)))
        return s;
    /* B - 1 copies of the prefix are not kept; shared <= seq (P_s < S_d) */
    if (!rf_mul_u64((uint64_t)(bq - 1), shared, &copies))
        return rf_err_set(err, RF_ERANGE, "shared prefix bytes overflow 64 bits");
    f.kv_bytes -= copies;
    f.needed_bytes -= copies;
    f.fits = (double)f.needed_bytes <= f.budget_bytes;
    double pool = f.budget_bytes - (double)f.weight_bytes - (double)shared;
    double per = (double)(seq - shared);
    *max_concurrency = pool > 0 && per > 0 ? floor(pool / per) : 0;
    *out = f;
    return RF_OK;
}

rf_status rf_generate_fit(const rf_model *m, const rf_step_opts *o, const rf_generate *g,
                          uint64_t mem_bytes, double util, uint64_t reserve_bytes, rf_fit *out,
                          rf_err *err)
{
    rf_step_opts last = rf_generate_final_step(o, g->prompt, g->output);
    rf_status s = rf_step_fit(m, &last, mem_bytes, util, reserve_bytes, out, err);
    if (s || !g->prefix.shared)
        return s;
    uint64_t shared, seq;
    int64_t pos = rf_step_positions(&last);
    if ((s = rf_model_kv_bytes(m, o->kv, g->prefix.shared, &shared, err)) ||
        (s = rf_model_kv_bytes(m, o->kv, pos, &seq, err)))
        return s;
    /* seq >= shared (pos >= P_s); B - 1 copies of the prefix are not kept */
    uint64_t copies;
    if (!rf_mul_u64((uint64_t)(g->batch - 1), shared, &copies))
        return rf_err_set(err, RF_ERANGE, "shared prefix bytes overflow 64 bits");
    out->kv_bytes -= copies;
    out->needed_bytes -= copies;
    out->fits = (double)out->needed_bytes <= out->budget_bytes;
    return RF_OK;
}

/* ---- the latency-throughput frontier ------------------------------------ */

void rf_pareto_mark(const double *latency, const double *throughput, size_t n, bool *on)
{
    for (size_t i = 0; i < n; i++) {
        on[i] = true;
        for (size_t j = 0; j < n && on[i]; j++)
            if (j != i && latency[j] <= latency[i] && throughput[j] >= throughput[i] &&
                (latency[j] < latency[i] || throughput[j] > throughput[i]))
                on[i] = false;
    }
}

static double lat_of(const rf_frontier_point *p, int which)
{
    return which ? p->ttft_s : p->tpot_s;
}

/* One front over out[]: in latency order (as B rises) a point is on it when
 * its throughput beats every point of lower latency, and ties of latency
 * keep only their best throughput; out of order, every pair is compared. */
static void mark_front(rf_frontier_point *out, size_t n, int which)
{
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; i++)
        sorted = lat_of(&out[i], which) >= lat_of(&out[i - 1], which);
    double best = -1;
    for (size_t i = 0; i < n; i++) {
        bool on = true;
        if (!sorted) {
            for (size_t j = 0; j < n && on; j++)
                if (j != i && lat_of(&out[j], which) <= lat_of(&out[i], which) &&
                    out[j].tokens_per_s >= out[i].tokens_per_s &&
                    (lat_of(&out[j], which) < lat_of(&out[i], which) ||
                     out[j].tokens_per_s > out[i].tokens_per_s))
                    on = false;
        } else {
            size_t j = i; /* the run of equal latency i..j */
            while (j + 1 < n && lat_of(&out[j + 1], which) == lat_of(&out[i], which))
                j++;
            double top = out[i].tokens_per_s;
            for (size_t k = i; k <= j; k++)
                top = out[k].tokens_per_s > top ? out[k].tokens_per_s : top;
            for (size_t k = i; k <= j; k++) {
                bool o = out[k].tokens_per_s == top && top > best;
                if (which)
                    out[k].pareto_ttft = o;
                else
                    out[k].pareto_tpot = o;
            }
            best = top > best ? top : best;
            i = j;
            continue;
        }
        if (which)
            out[i].pareto_ttft = on;
        else
            out[i].pareto_tpot = on;
    }
}

rf_status rf_frontier_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                              int64_t prompt, int64_t output, rf_frontier_point *out, size_t n,
                              rf_err *err)
{
    rf_status s;
    uint64_t seq; /* a sequence's KV and state at its last token */
    if ((s = rf_model_seq_bytes(m, o->kv, prompt + output - 1, &seq, err)))
        return s;
    for (size_t i = 0; i < n; i++) {
        rf_step_opts b = *o;
        b.batch = (int64_t)i + 1;
        rf_generate g;
        if ((s = rf_generate_compute(m, &b, roof, prompt, output, &g, err)))
            return s;
        rf_frontier_point *p = &out[i];
        *p = (rf_frontier_point){.batch = b.batch,
                                 .ttft_s = g.ttft_s,
                                 .tpot_s = g.tpot_mean_s,
                                 .latency_s = g.latency_s,
                                 .tokens_per_s = g.tokens_per_s};
        if (!rf_mul_u64(seq, (uint64_t)b.batch, &p->kv_bytes))
            return rf_err_set(err, RF_ERANGE, "KV of %lld sequences overflows 64 bits",
                              (long long)b.batch);
    }
    rf__frontier_mark(out, n);
    return RF_OK;
}

void rf__frontier_mark(rf_frontier_point *out, size_t n)
{
    mark_front(out, n, 0);
    mark_front(out, n, 1);
}

rf_status rf_frontier_weights_cross(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                    int64_t prompt, int64_t output, int64_t *batch, rf_err *err)
{
    rf_step_opts d = *o;
    d.phase = RF_DECODE;
    d.batch = 1;
    d.context = 0;
    rf_step st; /* ~10 KB of scratch on the stack */
    uint64_t seq;
    rf_status s = rf_step_compute(m, &d, roof, &st, err);
    if (s || (s = rf_model_seq_bytes(m, o->kv, prompt + output / 2, &seq, err)))
        return s;
    *batch = seq ? (int64_t)((st.weight_bytes + seq - 1) / seq) : 0;
    return RF_OK;
}

double rf_cost_per_mtok(double price_per_hour, int64_t devices, double tokens_per_s)
{
    return price_per_hour * (double)devices / (tokens_per_s * 3600) * 1e6;
}

double rf_energy_per_token_j(double watts, int64_t devices, double tokens_per_s)
{
    return watts * (double)devices / tokens_per_s;
}
