/* sim_par.c - the simulator's step model on a parallel layout: each step
 * of each replica timed on its exact batch as rf_par_compute times a
 * device's step (rf_sim.h, "the layout's step model"). */
#include <math.h>
#include <string.h>

#include "roofline/rf_sim.h"

static bool is_attention(const rf_op *op)
{
    return op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL;
}

static bool named(const rf_op *op, const char *name) { return op->name && !strcmp(op->name, name); }

static double som(const rf_roof *roof, uint64_t count, uint64_t flops, uint64_t bytes)
{
    return (double)count * rf_roof_place(roof, (double)flops, (double)bytes).floor_s;
}

/* The distinct stages: a stage shares the tables of an earlier one with
 * the same shard and the same place (first, last). */
static rf_status stage_kinds(const rf_model *m, const rf_layout *l, rf_model *shard,
                             int64_t kind_of[RF_PAR_MAX_STAGES], int64_t *n_kinds, rf_model *kinds,
                             rf_err *err)
{
    int64_t first = 0, n = 0, P = l->pp;
    int64_t rep[RF_SIM_PAR_KINDS];
    for (int64_t i = 0; i < P; i++) {
        int64_t c = rf_layout_stage_layers(m->layers, P, i);
        rf_status s = rf_layout_shard(m, l, first, c, shard, err);
        if (s)
            return s;
        first += c;
        int64_t k = 0;
        for (; k < n; k++)
            if ((rep[k] == 0) == (i == 0) && (rep[k] == P - 1) == (i == P - 1) &&
                !memcmp(&kinds[k], shard, sizeof *shard))
                break;
        if (k == n) {
            if (n == RF_SIM_PAR_KINDS)
                return rf_err_set(err, RF_EINVAL,
                                  "--pp %lld: %s's stages differ in more than %d ways (the "
                                  "layout's step model holds %d kinds of stage)",
                                  (long long)P, m->name, RF_SIM_PAR_KINDS, RF_SIM_PAR_KINDS);
            kinds[n] = *shard;
            rep[n++] = i;
        }
        kind_of[i] = k;
    }
    *n_kinds = n;
    return RF_OK;
}

/* Expert-group width g: E / T replicas under EP, else 1. */
static int64_t group_of(const rf_layout *l) { return l->ep > 1 ? l->ep / l->tp : 1; }

/* Table entries of one kind: lin (max_tokens + 1), experts (g max_tokens
 * + 1, EP only), head (max_logits + 1), then the chunk cache. */
static size_t kind_doubles(const rf_layout *l, int64_t max_tokens, int64_t max_logits)
{
    size_t t = (size_t)max_tokens + 1, x = l->ep > 1 ? (size_t)group_of(l) * t : 0;
    return t + x + (size_t)max_logits + 1;
}

/* A kind's table: its doubles, the chunk cache, and on a hybrid shard
 * (direct decode rows) the decode cache. */
static size_t kind_bytes(const rf_layout *l, int64_t max_tokens, int64_t max_logits,
                         const rf_model *shard)
{
    return kind_doubles(l, max_tokens, max_logits) * sizeof(double) +
           RF_SIM_PAR_CACHE * sizeof(rf_sim_par_cached) +
           (rf_model_is_hybrid(shard) ? RF_SIM_PAR_DCACHE * sizeof(rf_sim_par_dcached) : 0);
}

static rf_status sizes_check(int64_t max_tokens, int64_t max_logits, rf_err *err)
{
    if (max_tokens < 1 || max_logits < 1 || max_tokens > RF_DIM_MAX || max_logits > RF_DIM_MAX)
        return rf_err_set(err, RF_EINVAL,
                          "max tokens (%lld) and logits (%lld) must be in [1, "
                          "%lld]",
                          (long long)max_tokens, (long long)max_logits, (long long)RF_DIM_MAX);
    return RF_OK;
}

rf_status rf_sim_par_table_bytes(rf_sim_par *p, const rf_model *m, const rf_layout *l,
                                 int64_t max_tokens, int64_t max_logits, size_t *bytes, rf_err *err)
{
    int64_t n = 0;
    rf_status s = sizes_check(max_tokens, max_logits, err);
    if (s || (s = stage_kinds(m, l, &p->scratch_model, p->kind_of, &n, p->shard, err)))
        return s;
    *bytes = 0;
    for (int64_t k = 0; k < n; k++)
        *bytes += kind_bytes(l, max_tokens, max_logits, &p->shard[k]);
    return RF_OK;
}

/* count instances of collective x (costed at one row) at rows rows */
static double coll_at(const rf_coll *x, int64_t rows)
{
    if (rows <= 0)
        return 0;
    rf_coll c = *x;
    c.bytes = x->bytes * (uint64_t)rows;
    rf_coll_cost(&c);
    return (double)c.count * c.time_s;
}

/* The layout's collectives at one row (a decode of batch 1: M = L = 1),
 * kept a row: rf_par_compute's for this layout, each re-costed at a step's
 * rows by rf_coll_cost (coll_at): the least over the algorithms is not
 * affine in the bytes, so no rate a row is kept. */
static rf_status collectives(rf_sim_par *p, const rf_model *m, rf_err *err)
{
    rf_step_opts d = p->opts;
    d.phase = RF_DECODE;
    d.batch = 1;
    d.context = 1;
    d.tokens = 1;
    rf_status s = rf_par_compute(m, &d, &p->roof, &p->po, &p->par, err);
    if (s)
        return s;
    for (int64_t i = 0; i < p->n_stages; i++) {
        const rf_par_stage *st = &p->par.stages[i];
        rf_sim_par_stage *ps = &p->stage[i];
        ps->n_coll = 0;
        ps->has_send = false;
        for (size_t c = 0; c < st->n_coll; c++) {
            const rf_coll *x = &st->coll[c]; /* at one row: its bytes a row */
            if (!strcmp(x->name, "pp_send")) {
                ps->send = *x;
                ps->has_send = true;
                continue;
            }
            ps->coll[ps->n_coll] = *x;
            ps->coll_logits[ps->n_coll++] = !strcmp(x->name, "lm_head_allgather");
        }
    }
    return RF_OK;
}

/* The attention-kind rows of kind k's decode of `batch` sequences at
 * context S: each row's flops and bytes an instance into v, its count
 * into count (when not NULL), their number into *n. */
static rf_status decode_attn(rf_sim_par *p, int64_t k, int64_t batch, int64_t S,
                             uint64_t v[RF_SIM_PAR_ROWS][2], uint64_t *count, size_t *n,
                             rf_err *err)
{
    rf_step_opts d = p->opts;
    d.phase = RF_DECODE;
    d.batch = batch;
    d.tokens = 1;
    d.context = S;
    p->steps_computed++;
    rf_status s = rf_step_compute(&p->shard[k], &d, &p->roof, &p->step, err);
    if (s)
        return s;
    *n = 0;
    for (size_t i = 0; i < p->step.n_ops; i++) {
        const rf_op *op = &p->step.ops[i];
        if (!is_attention(op))
            continue;
        if (*n == RF_SIM_PAR_ROWS)
            return rf_err_set(err, RF_EINVAL,
                              "%s: a decode step of more than %d attention rows (the layout's "
                              "step model holds %d)",
                              p->shard[k].name, RF_SIM_PAR_ROWS, RF_SIM_PAR_ROWS);
        v[*n][0] = op->flops;
        v[*n][1] = op->bytes;
        if (count)
            count[*n] = op->count;
        (*n)++;
    }
    return RF_OK;
}

/* A decode token's share of each row at context S: the decode of 2
 * sequences less that of 1; *one: the decode of 1 (when not NULL). */
static rf_status decode_share(rf_sim_par *p, int64_t k, int64_t S, uint64_t v[RF_SIM_PAR_ROWS][2],
                              uint64_t one[RF_SIM_PAR_ROWS][2], rf_err *err)
{
    uint64_t a[RF_SIM_PAR_ROWS][2], b[RF_SIM_PAR_ROWS][2];
    size_t na = 0, nb = 0;
    rf_status s = decode_attn(p, k, 1, S, a, NULL, &na, err);
    if (s || (s = decode_attn(p, k, 2, S, b, NULL, &nb, err)))
        return s;
    if (na != p->kind[k].n_rows || nb != na)
        return rf_err_set(err, RF_EINTERNAL, "%s: decode steps of %zu and %zu attention rows",
                          p->shard[k].name, na, nb);
    for (size_t r = 0; r < na; r++)
        for (int j = 0; j < 2; j++) {
            v[r][j] = b[r][j] - a[r][j];
            if (one)
                one[r][j] = a[r][j];
        }
    return RF_OK;
}

/* A hybrid kind's rows: their counts, and what a step reads once
 * whatever its batch, the same at three contexts (else refused). */
static rf_status direct_rows(rf_sim_par *p, int64_t k, rf_err *err)
{
    rf_sim_par_kind *kd = &p->kind[k];
    uint64_t v[RF_SIM_PAR_ROWS][2], one[RF_SIM_PAR_ROWS][2];
    static const int64_t ctx[3] = {1, 4097, 100003};
    rf_status s = decode_attn(p, k, 1, 1, v, kd->row_count, &kd->n_rows, err);
    for (int c = 0; c < 3 && !s; c++) {
        if ((s = decode_share(p, k, ctx[c], v, one, err)))
            return s;
        for (size_t r = 0; r < kd->n_rows; r++)
            for (int j = 0; j < 2; j++) {
                uint64_t base = one[r][j] - v[r][j];
                if (c && base != kd->row_base[r][j])
                    return rf_err_set(err, RF_EINVAL,
                                      "%s: the layout's step model needs a decode step that "
                                      "grows by the same parts with each sequence at every "
                                      "context",
                                      p->shard[k].name);
                kd->row_base[r][j] = base;
            }
    }
    return s;
}

/* A hybrid kind's decode token at context S, through the cache. */
static rf_status dshare_at(rf_sim_par *p, int64_t k, int64_t S, const rf_sim_par_dcached **out,
                           rf_err *err)
{
    uint64_t h = (uint64_t)S * 0x9e3779b97f4a7c15u;
    rf_sim_par_dcached *c = &p->kind[k].dcache[(h ^ (h >> 29)) % RF_SIM_PAR_DCACHE];
    if (c->s != S) {
        rf_status s = decode_share(p, k, S, c->v, NULL, err);
        if (s) {
            c->s = -1;
            return s;
        }
        c->s = S;
    }
    *out = c;
    return RF_OK;
}

/* A kind's decode attention rows (affine in the keys; on a hybrid shard
 * its direct rows), kv_b_proj's and lm_head's shapes. */
static rf_status kind_rows(rf_sim_par *p, int64_t k, rf_err *err)
{
    rf_sim_par_kind *kd = &p->kind[k];
    rf_step_opts d = p->opts;
    d.phase = RF_DECODE;
    d.batch = 1;
    d.tokens = 1;
    d.context = 1;
    rf_status s = rf_sweep_prepare(&p->sweep, &p->shard[k], &d, &p->roof, err);
    if (s)
        return s;
    kd->direct = rf_model_is_hybrid(&p->shard[k]); /* the sweep's rows are not linear */
    if (kd->direct && (s = direct_rows(p, k, err)))
        return s;
    kd->n_attn = p->sweep.n_attn;
    memcpy(kd->attn, p->sweep.attn, sizeof kd->attn);
    kd->has_kvb = kd->has_head = false;
    const rf_step *st = &p->sweep.scratch; /* the decode at context 1 */
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        if (named(op, "kv_b_proj")) {
            kd->kvb = *op;
            kd->has_kvb = true;
        } else if (named(op, "lm_head")) {
            kd->head_op = *op;
            kd->has_head = true;
        }
    }
    if (!kd->has_head)
        return rf_err_set(err, RF_EINTERNAL, "the step has no lm_head");
    /* kv_b_proj's FLOPs and bytes are affine in its rows (2 M K N; the
     * weights and M (K + N) activations, whole bytes an element): from
     * M = 1 and 2, checked at M = 100,003 */
    kd->kvb_affine = false;
    if (kd->has_kvb) {
        rf_op a, b, c;
        const rf_op *k0 = &kd->kvb;
        if ((s = rf_op_gemm(k0->name, 1, k0->k, k0->n, k0->w, p->opts.a, &a, err)) ||
            (s = rf_op_gemm(k0->name, 2, k0->k, k0->n, k0->w, p->opts.a, &b, err)) ||
            (s = rf_op_gemm(k0->name, 100003, k0->k, k0->n, k0->w, p->opts.a, &c, err)))
            return s;
        kd->kvb_v[0] = b.flops - a.flops;
        kd->kvb_v[1] = a.flops - kd->kvb_v[0];
        kd->kvb_v[2] = b.bytes - a.bytes;
        kd->kvb_v[3] = a.bytes - kd->kvb_v[2];
        kd->kvb_affine = c.flops == kd->kvb_v[1] + 100003 * kd->kvb_v[0] &&
                         c.bytes == kd->kvb_v[3] + 100003 * kd->kvb_v[2];
    }
    return RF_OK;
}

rf_status rf_sim_par_prepare(rf_sim_par *p, const rf_model *m, const rf_step_opts *o,
                             const rf_roof *roof, const rf_par_opts *po, int64_t max_tokens,
                             int64_t max_logits, void *table, size_t table_bytes, rf_err *err)
{
    size_t need = 0;
    rf_status s = rf_layout_validate(m, &po->layout, err);
    if (s || (s = rf_sim_par_table_bytes(p, m, &po->layout, max_tokens, max_logits, &need, err)))
        return s;
    if (!table || table_bytes < need || ((uintptr_t)table & 7))
        return rf_err_set(err, RF_EINVAL,
                          "the layout's table has %zu bytes (8-byte aligned); "
                          "it needs %zu",
                          table_bytes, need);
    if (o->kv.group_size) /* as rf_sim_floor_prepare: activations' scales are affine */
        return rf_err_set(err, RF_EINVAL,
                          "the layout's step model needs a KV dtype without group scales (%s): "
                          "its bytes are not affine in the keys",
                          rf_dtype_name(o->kv.kind));
    const rf_layout *l = &po->layout;
    p->layout = *l;
    p->opts = *o;
    p->roof = *roof;
    p->po = *po;
    p->n_stages = l->pp;
    p->group = group_of(l);
    p->max_tokens = max_tokens;
    p->max_logits = max_logits;
    p->steps_computed = 0;
    p->n_kinds = 0;
    if ((s = stage_kinds(m, l, &p->scratch_model, p->kind_of, &p->n_kinds, p->shard, err)) ||
        (s = collectives(p, m, err)))
        return s;
    size_t nd = kind_doubles(l, max_tokens, max_logits);
    char *base = table;
    for (int64_t k = 0; k < p->n_kinds; k++) {
        rf_sim_par_kind *kd = &p->kind[k];
        double *d = (double *)(void *)base;
        base += kind_bytes(l, max_tokens, max_logits, &p->shard[k]);
        kd->lin = d;
        kd->experts = l->ep > 1 ? d + max_tokens + 1 : NULL;
        kd->head = d + (nd - (size_t)max_logits - 1);
        kd->cache = (rf_sim_par_cached *)(void *)(d + nd);
        kd->dcache = NULL;
        if (rf_model_is_hybrid(&p->shard[k])) {
            kd->dcache = (rf_sim_par_dcached *)(void *)(kd->cache + RF_SIM_PAR_CACHE);
            for (size_t i = 0; i < RF_SIM_PAR_DCACHE; i++)
                kd->dcache[i].s = -1;
        }
        for (size_t i = 0; i < nd; i++)
            d[i] = -1; /* not computed */
        for (size_t i = 0; i < RF_SIM_PAR_CACHE; i++)
            kd->cache[i].t = -1;
        if ((s = kind_rows(p, k, err)))
            return s;
    }
    for (int64_t i = 0; i < p->n_stages; i++) {
        int64_t k = p->kind_of[i];
        p->stage[i].kind = k;
        p->stage[i].first = i == 0;
        p->stage[i].last = p->kind_last[k] = i == p->n_stages - 1;
        p->kind_stage[k] = i; /* a stage of the kind: they hold the same rows */
    }
    return RF_OK;
}

/* The prefill of one sequence of t tokens after o on kind k's shard. */
static rf_status shard_prefill(rf_sim_par *p, int64_t k, int64_t t, int64_t o, rf_err *err)
{
    rf_step_opts c = p->opts;
    c.phase = RF_PREFILL;
    c.batch = 1;
    c.tokens = t;
    c.context = o;
    p->steps_computed++;
    return rf_step_compute(&p->shard[k], &c, &p->roof, &p->step, err);
}

/* Kind k's sum-of-max at M rows of every operator a stage of it holds but
 * attention, lm_head, kv_b_proj and (under EP) the routed experts: the
 * mixed step's linear part, from a prefill of M tokens (rf__mixed's). */
static rf_status lin_at(rf_sim_par *p, int64_t k, int64_t M, double *v, rf_err *err)
{
    rf_sim_par_kind *kd = &p->kind[k];
    if (kd->lin[M] < 0) {
        rf_status s = shard_prefill(p, k, M, 0, err);
        if (s)
            return s;
        double x = 0;
        for (size_t i = 0; i < p->step.n_ops; i++) {
            const rf_op *op = &p->step.ops[i];
            if (is_attention(op) || named(op, "lm_head") || named(op, "kv_b_proj") ||
                !rf_par_stage_holds(&p->par, (size_t)p->kind_stage[k], op) ||
                (kd->experts && op->experts > 0))
                continue;
            x += som(&p->roof, op->count, op->flops, op->bytes);
        }
        kd->lin[M] = x;
    }
    *v = kd->lin[M];
    return RF_OK;
}

/* Under EP, a device's routed-expert rows when its expert group routes G
 * tokens: the shard's rows at G with 1 / E of their FLOPs, weights and
 * activations (rounded up), as rf_par_compute shares them. */
static rf_status experts_at(rf_sim_par *p, int64_t k, int64_t G, double *v, rf_err *err)
{
    rf_sim_par_kind *kd = &p->kind[k];
    if (kd->experts[G] < 0) {
        rf_status s = shard_prefill(p, k, G, 0, err);
        if (s)
            return s;
        uint64_t e = (uint64_t)p->layout.ep;
        double x = 0;
        for (size_t i = 0; i < p->step.n_ops; i++) {
            const rf_op *op = &p->step.ops[i];
            if (!(op->experts > 0))
                continue;
            uint64_t f = (op->flops + e - 1) / e, w = (op->weight_bytes + e - 1) / e,
                     a = (op->act_bytes + e - 1) / e;
            x += som(&p->roof, op->count, f, w + op->kv_bytes + a + op->extra_bytes);
        }
        kd->experts[G] = x;
    }
    *v = kd->experts[G];
    return RF_OK;
}

/* lm_head at L rows, re-formed as the mixed step does. */
static rf_status head_at(rf_sim_par *p, int64_t k, int64_t L, double *v, rf_err *err)
{
    rf_sim_par_kind *kd = &p->kind[k];
    if (kd->head[L] < 0) {
        const rf_op *h = &kd->head_op;
        rf_op op;
        rf_status s = rf_op_gemm(h->name, L, h->k, h->n, h->w, p->opts.a, &op, err);
        if (s)
            return s;
        kd->head[L] = som(&p->roof, h->count, op.flops, op.bytes);
    }
    *v = kd->head[L];
    return RF_OK;
}

/* The attention rows of one chunk of t tokens after o, cached. */
static rf_status chunk_at(rf_sim_par *p, int64_t k, int64_t t, int64_t o, double *v, rf_err *err)
{
    uint64_t h = ((uint64_t)t * 0x9e3779b97f4a7c15u) ^ ((uint64_t)o * 0xc2b2ae3d27d4eb4fu);
    rf_sim_par_cached *c = &p->kind[k].cache[(h ^ (h >> 29)) % RF_SIM_PAR_CACHE];
    if (c->t != t || c->o != o) {
        rf_status s = shard_prefill(p, k, t, o, err);
        if (s) {
            c->t = -1;
            return s;
        }
        double x = 0;
        for (size_t i = 0; i < p->step.n_ops; i++)
            if (is_attention(&p->step.ops[i]))
                x +=
                    som(&p->roof, p->step.ops[i].count, p->step.ops[i].flops, p->step.ops[i].bytes);
        c->t = t;
        c->o = o;
        c->s = x;
    }
    *v = c->s;
    return RF_OK;
}

/* One micro-batch's shape. */
typedef struct micro {
    int64_t M, L, n_dec, Mkv;
    uint64_t keys; /* sum of its decode contexts                       */
    int64_t item0; /* its first item: items item0, item0 + m, ...      */
} micro;

/* A hybrid kind's decode rows for micro-batch u of b (m of them): per row
 * F = base + sum_i share(S_i), Q likewise, its sum-of-max. */
static rf_status direct_decode(rf_sim_par *p, int64_t k, const rf_sim_batch *b, const micro *u,
                               int64_t m, double *x, rf_err *err)
{
    const rf_sim_par_kind *kd = &p->kind[k];
    uint64_t sum[RF_SIM_PAR_ROWS][2];
    bool ok = true;
    memcpy(sum, kd->row_base, sizeof sum);
    for (int64_t i = u->item0; i < b->n_decode; i += m) {
        const rf_sim_par_dcached *c = NULL;
        rf_status s = dshare_at(p, k, b->decode_context[i], &c, err);
        if (s)
            return s;
        for (size_t r = 0; r < kd->n_rows; r++)
            ok = ok && !__builtin_add_overflow(sum[r][0], c->v[r][0], &sum[r][0]) &&
                 !__builtin_add_overflow(sum[r][1], c->v[r][1], &sum[r][1]);
    }
    if (!ok)
        return rf_err_set(err, RF_ERANGE,
                          "a micro-batch of %lld decode tokens: its attention "
                          "rows overflow 64 bits",
                          (long long)u->n_dec);
    *x = 0;
    for (size_t r = 0; r < kd->n_rows; r++)
        *x += som(&p->roof, kd->row_count[r], sum[r][0], sum[r][1]);
    return RF_OK;
}

/* Kind k's decode attention rows for micro-batch u of b (m of them):
 * per row F = n at0 + keys at, capped at the row's window a sequence. */
static double decode_rows(const rf_sim_par *p, int64_t k, const rf_sim_batch *b, const micro *u,
                          int64_t m)
{
    const rf_sim_par_kind *kd = &p->kind[k];
    double x = 0;
    uint64_t n = (uint64_t)u->n_dec;
    for (size_t r = 0; r < kd->n_attn && n; r++) {
        const struct rf_sweep_attn *a = &kd->attn[r];
        uint64_t keys = u->keys;
        if (a->window) {
            keys = 0;
            for (int64_t i = u->item0; i < b->n_decode; i += m)
                keys +=
                    (uint64_t)(b->decode_context[i] < a->window ? b->decode_context[i] : a->window);
        }
        x += som(&p->roof, a->count, n * a->flops0 + keys * a->flops,
                 n * a->bytes0 + keys * a->bytes);
    }
    return x;
}

/* An MLA verification's attention rows (kind k, affine decode rows) as the
 * absorbed kernel runs them: each of its t queries after o a decode row at
 * o + i keys (o + t each without --causal), the latent read once (the
 * longest query's bytes), each row's sum-of-max. */
static double verify_rows(const rf_sim_par *p, int64_t k, int64_t t, int64_t o)
{
    const rf_sim_par_kind *kd = &p->kind[k];
    double x = 0;
    for (size_t r = 0; r < kd->n_attn; r++) {
        const struct rf_sweep_attn *a = &kd->attn[r];
        uint64_t f = 0, last = 0;
        for (int64_t i = 1; i <= t; i++) {
            int64_t keys = p->opts.causal ? o + i : o + t;
            last = (uint64_t)(a->window && keys > a->window ? a->window : keys);
            f += a->flops0 + last * a->flops;
        }
        x += som(&p->roof, a->count, f, a->bytes0 + last * a->bytes);
    }
    return x;
}

/* One replica's step: its micro-batches through the stages, the group's
 * routed tokens G_j for micro-batch j under EP. *cycle: max(the slowest
 * micro-batch's latency through every stage and send, the busiest stage's
 * time over every micro-batch). */
static rf_status replica_cycle(rf_sim_par *p, const rf_sim_batch *b, const int64_t *group_tokens,
                               double *cycle, rf_err *err)
{
    int64_t items = b->n_decode + b->n_chunks, P = p->n_stages;
    int64_t m = items < P ? items : P;
    micro u[RF_PAR_MAX_STAGES];
    for (int64_t j = 0; j < m; j++)
        u[j] = (micro){.item0 = j};
    for (int64_t i = 0; i < b->n_decode; i++) {
        micro *x = &u[i % m];
        x->n_dec++;
        x->keys += (uint64_t)b->decode_context[i];
    }
    for (int64_t i = 0; i < b->n_chunks; i++) {
        micro *x = &u[(b->n_decode + i) % m];
        x->M += b->chunks[i].tokens;
        x->L += b->chunks[i].logits > 1 ? b->chunks[i].logits : 1;
        x->Mkv += b->chunks[i].offset + b->chunks[i].tokens;
    }
    double busy[RF_PAR_MAX_STAGES], lat = 0; /* the first P used: zeroed alone */
    for (int64_t s = 0; s < P; s++)
        busy[s] = 0;
    for (int64_t j = 0; j < m; j++) {
        micro *x = &u[j];
        x->M += x->n_dec;
        x->L += x->n_dec;
        x->Mkv += x->n_dec;
        if (x->M > p->max_tokens || x->L > p->max_logits)
            return rf_err_set(err, RF_ERANGE,
                              "a micro-batch of %lld tokens and %lld logits passes the layout "
                              "model's %lld and %lld",
                              (long long)x->M, (long long)x->L, (long long)p->max_tokens,
                              (long long)p->max_logits);
        /* each kind's operators once (its stages differ only in their
         * collectives), then every stage */
        double ops[RF_SIM_PAR_KINDS];
        for (int64_t k = 0; k < p->n_kinds; k++) {
            const rf_sim_par_kind *kd = &p->kind[k];
            bool last = p->kind_last[k];
            double d = 0, v = 0;
            rf_status e = lin_at(p, k, x->M, &d, err);
            if (!e && last && !(e = head_at(p, k, x->L, &v, err)))
                d += v;
            if (!e && kd->experts && !(e = experts_at(p, k, group_tokens[j], &v, err)))
                d += v;
            if (e)
                return e;
            if (kd->direct && x->n_dec) {
                if ((e = direct_decode(p, k, b, x, m, &v, err)))
                    return e;
                d += v;
            } else if (!kd->direct) {
                d += decode_rows(p, k, b, x, m);
            }
            int64_t mkv = x->Mkv; /* kv_b_proj's rows, less what verifications absorb */
            for (int64_t i = ((j - b->n_decode) % m + m) % m; i < b->n_chunks; i += m) {
                const rf_sim_chunk *c = &b->chunks[i];
                if ((e = chunk_at(p, k, c->tokens, c->offset, &v, err)))
                    return e;
                if (kd->kvb_affine && !kd->direct && c->logits > 1) {
                    /* an MLA verification: the absorbed kernel where it
                     * is under the expanding chunk with its offset's rows
                     * of kv_b_proj on their own (at least what they add
                     * to the shared GEMM), so the floor stays under the
                     * absorbed form the engines run */
                    uint64_t r = (uint64_t)c->offset;
                    double grow = som(&p->roof, kd->kvb.count, r * kd->kvb_v[0], r * kd->kvb_v[2]);
                    double a = verify_rows(p, k, c->tokens, c->offset);
                    if (a < v + grow) {
                        v = a;
                        mkv -= c->offset;
                    }
                }
                d += v;
            }
            if (kd->kvb_affine) {
                uint64_t r = (uint64_t)mkv; /* below RF_DIM_MAX: its op's counts fit */
                d += som(&p->roof, kd->kvb.count, kd->kvb_v[1] + r * kd->kvb_v[0],
                         kd->kvb_v[3] + r * kd->kvb_v[2]);
            } else if (kd->has_kvb) {
                rf_op op;
                if ((e = rf_op_gemm(kd->kvb.name, mkv, kd->kvb.k, kd->kvb.n, kd->kvb.w, p->opts.a,
                                    &op, err)))
                    return e;
                d += som(&p->roof, kd->kvb.count, op.flops, op.bytes);
            }
            ops[k] = d;
        }
        double through = 0;
        for (int64_t s = 0; s < P; s++) {
            const rf_sim_par_stage *st = &p->stage[s];
            double d = ops[st->kind];
            for (size_t c = 0; c < st->n_coll; c++)
                d += coll_at(&st->coll[c], st->coll_logits[c] ? x->L : x->M);
            if (st->has_send)
                through += coll_at(&st->send, x->M);
            through += d;
            busy[s] += d;
        }
        lat = through > lat ? through : lat;
    }
    double most = 0;
    for (int64_t s = 0; s < P; s++)
        most = busy[s] > most ? busy[s] : most;
    *cycle = lat > most ? lat : most;
    return RF_OK;
}

/* Micro-batch j's tokens of batch b (m = min(P, items) of them, items
 * round robin: decode tokens first, then chunks). */
static int64_t micro_tokens(const rf_sim_batch *b, int64_t P, int64_t j)
{
    int64_t items = b->n_decode + b->n_chunks, m = items < P ? items : P, t = 0;
    if (j >= m)
        return 0;
    for (int64_t i = j; i < b->n_decode; i += m)
        t++;
    for (int64_t i = 0; i < b->n_chunks; i++)
        if ((b->n_decode + i) % m == j)
            t += b->chunks[i].tokens;
    return t;
}

rf_status rf_sim_par_step(void *user, const rf_sim_batch *b, int64_t n, double *step_s, rf_err *err)
{
    rf_sim_par *p = user;
    if (n != p->group)
        return rf_err_set(err, RF_EINVAL,
                          "the layout steps %lld replicas together (an expert group); the run "
                          "gave %lld (set the schedule's lockstep with rf_sim_par_sched)",
                          (long long)p->group, (long long)n);
    int64_t G[RF_PAR_MAX_STAGES]; /* read only under EP, the first n_stages */
    for (int64_t j = 0; p->kind[0].experts && j < p->n_stages; j++) {
        G[j] = 0;
        for (int64_t r = 0; r < n; r++)
            G[j] += micro_tokens(&b[r], p->n_stages, j);
        if (G[j] > p->group * p->max_tokens)
            return rf_err_set(err, RF_ERANGE, "the expert group's %lld tokens pass the table",
                              (long long)G[j]);
    }
    double most = 0;
    for (int64_t r = 0; r < n; r++) {
        if (!b[r].tokens)
            continue; /* an idle rank: its time is within a busy one's */
        double c = 0;
        rf_status s = replica_cycle(p, &b[r], G, &c, err);
        if (s)
            return s;
        most = c > most ? c : most;
    }
    *step_s = most;
    return RF_OK;
}

void rf_sim_par_sched(const rf_sim_par *p, rf_sim_sched *s)
{
    s->replicas = p->layout.dp;
    s->lockstep = p->group;
}

rf_status rf_sim_par_pool_blocks(const rf_model *m, const rf_step_opts *o, const rf_par_opts *po,
                                 int64_t block_tokens, int64_t *blocks, rf_err *err)
{
    if (block_tokens < 1)
        return rf_err_set(err, RF_EINVAL, "block (%lld tokens) must be >= 1",
                          (long long)block_tokens);
    rf_par_capacity c;
    rf_status s = rf_par_capacity_compute(m, o, po, 0, &c, err);
    if (s)
        return s;
    if (!c.weights_fit)
        return rf_err_set(err, RF_EINVAL,
                          "%s on --tp %lld --pp %lld --ep %lld: a device's weights (%.4g GB, "
                          "stage %lld) do not fit the memory the engine may use on it "
                          "(%.4g GB): no KV pool",
                          m->name, (long long)po->layout.tp, (long long)po->layout.pp,
                          (long long)po->layout.ep, (double)c.resident_bytes / 1e9,
                          (long long)c.stage, c.budget_bytes / 1e9);
    if (c.tokens < (double)block_tokens)
        return rf_err_set(err, RF_EINVAL,
                          "%s on --tp %lld --pp %lld --ep %lld: the weights leave %.4g bytes on "
                          "a device, less than one KV block of %lld tokens",
                          m->name, (long long)po->layout.tp, (long long)po->layout.pp,
                          (long long)po->layout.ep, c.pool_bytes, (long long)block_tokens);
    double bl = floor(c.tokens / (double)block_tokens);
    *blocks = bl > (double)RF_DIM_MAX ? RF_DIM_MAX : (int64_t)bl;
    return RF_OK;
}
