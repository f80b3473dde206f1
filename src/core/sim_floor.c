/* sim_floor.c - the simulator's default step model: the floor of the exact
 * mixed step, fast (rf_sim.h, "the default step model"). */
#include <math.h>
#include <string.h>

#include "roofline/rf_sim.h"

static bool is_attention(const rf_op *op)
{
    return op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL;
}

size_t rf_sim_floor_table_bytes(int64_t max_tokens, int64_t max_logits)
{
    if (max_tokens < 1 || max_logits < 1 || max_tokens > RF_DIM_MAX || max_logits > RF_DIM_MAX)
        return 0;
    return ((size_t)max_tokens + (size_t)max_logits + 2) * sizeof(rf_sim_floor_entry) +
           RF_SIM_FLOOR_CACHE * sizeof(rf_sim_floor_cached);
}

/* The attention of one chunk of t tokens after o cached, as the mixed step
 * takes it from a prefill of that chunk (t = 0: the decode of `batch`
 * sequences at context o, from a decode step): its operators' flops and
 * bytes, and the K/V and score bytes of the step (compulsory traffic's
 * share). */
static rf_status part_direct(rf_sim_floor *f, int64_t t, int64_t o, int64_t batch, uint64_t v[3],
                             rf_err *err)
{
    rf_step_opts c = f->opts;
    c.phase = t ? RF_PREFILL : RF_DECODE;
    c.batch = batch;
    c.tokens = t ? t : 1;
    c.context = o;
    f->steps_computed++;
    rf_status s = rf_step_compute(&f->model, &c, &f->roof, &f->scratch, err);
    if (s)
        return s;
    const rf_step *st = &f->scratch;
    v[0] = v[2] = 0;
    v[1] = st->kv_bytes + st->extra_bytes; /* both checked by the step */
    for (size_t i = 0; i < st->n_ops; i++)
        if (is_attention(&st->ops[i])) {
            v[0] += st->ops[i].count * st->ops[i].flops;
            v[2] += st->ops[i].count * st->ops[i].bytes;
        }
    return RF_OK;
}

/* One sequence: a chunk of t (t >= 1), or a decode at context o (t = 0). */
static rf_status chunk_direct(rf_sim_floor *f, int64_t t, int64_t o, uint64_t v[3], rf_err *err)
{
    return part_direct(f, t, o, 1, v, err);
}

/* A decode token's own share at context o: the decode of 2 sequences less
 * that of 1 (what the batch adds a sequence; the rest, a short conv's
 * weights, is decode_base, once a step). */
static rf_status decode_share(rf_sim_floor *f, int64_t o, uint64_t v[3], rf_err *err)
{
    uint64_t two[3];
    rf_status s = part_direct(f, 0, o, 2, two, err);
    if (s || (s = part_direct(f, 0, o, 1, v, err)))
        return s;
    for (int k = 0; k < 3; k++)
        v[k] = two[k] - v[k];
    return RF_OK;
}

/* chunk_direct through the cache; for t = 0 a decode token's share at
 * context o, the decode of one sequence less decode_base (one step). */
static rf_status part_cached(rf_sim_floor *f, int64_t t, int64_t o, uint64_t v[3], rf_err *err)
{
    uint64_t h = ((uint64_t)t * 0x9e3779b97f4a7c15u) ^ ((uint64_t)o * 0xc2b2ae3d27d4eb4fu);
    rf_sim_floor_cached *c = &f->cache[(h ^ (h >> 29)) % RF_SIM_FLOOR_CACHE];
    if (c->t != t || c->o != o) {
        rf_status s = chunk_direct(f, t, o, c->v, err);
        if (s) {
            c->t = -1;
            return s;
        }
        for (int k = 0; k < 3 && !t; k++)
            c->v[k] -= f->decode_base[k];
        c->t = t;
        c->o = o;
    }
    v[0] = c->v[0];
    v[1] = c->v[1];
    v[2] = c->v[2];
    return RF_OK;
}

/* 2 value(t, o) from the coefficients, modulo 2^64. */
static uint64_t poly2(const uint64_t c[5], uint64_t t, uint64_t o)
{
    return c[0] * t * o + c[1] * t * t + c[2] * t + c[3] * o + c[4];
}

/* Fit a t o + b t^2 + c t + d o + e to the chunk attention at t = 2, 3, 4
 * and o = 0, 1 (twice each coefficient, so halves stay whole), then check
 * it exactly at points that reach far past them; false when any differs. */
static rf_status chunk_fit(rf_sim_floor *f, bool *ok, rf_err *err)
{
    uint64_t g[3][2][3]; /* [t - 2][o][value] */
    rf_status s;
    for (int t = 2; t <= 4; t++)
        for (int o = 0; o <= 1; o++)
            if ((s = chunk_direct(f, t, o, g[t - 2][o], err)))
                return s;
    for (int v = 0; v < 3; v++) {
        uint64_t g20 = g[0][0][v], g30 = g[1][0][v], g40 = g[2][0][v];
        uint64_t b2 = g40 - 2 * g30 + g20;                     /* 2b */
        uint64_t c2 = 2 * (g30 - g20) - 5 * b2;                /* 2c: G30 - G20 = 5b + c */
        uint64_t e2 = 2 * g20 - 4 * b2 - 2 * c2;               /* 2e: G20 = 4b + 2c + e */
        uint64_t h2 = g[0][1][v] - g20, h3 = g[1][1][v] - g30; /* a t + d */
        uint64_t a2 = 2 * (h3 - h2), d2 = 2 * h2 - 2 * a2;
        f->poly[v][0] = a2;
        f->poly[v][1] = b2;
        f->poly[v][2] = c2;
        f->poly[v][3] = d2;
        f->poly[v][4] = e2;
    }
    static const int64_t check[][2] = {{1, 0},         {1, 5},    {7, 13},     {100, 3000},
                                       {2048, 100000}, {4096, 7}, {513, 65536}};
    *ok = true;
    for (size_t i = 0; i < sizeof check / sizeof check[0] && *ok; i++) {
        uint64_t v[3];
        if ((s = chunk_direct(f, check[i][0], check[i][1], v, err)))
            return s;
        for (int k = 0; k < 3; k++)
            *ok =
                *ok && poly2(f->poly[k], (uint64_t)check[i][0], (uint64_t)check[i][1]) == 2 * v[k];
    }
    return RF_OK;
}

/* What a decode step costs once whatever its batch (a short conv's
 * weights): the decode of one sequence less its share, the same at every
 * context (checked at three); RF_EINVAL when it is not. */
static rf_status decode_base(rf_sim_floor *f, rf_err *err)
{
    uint64_t one[3], share[3], at[3][3];
    static const int64_t ctx[3] = {1, 4097, 100003};
    rf_status s;
    for (int i = 0; i < 3; i++) {
        if ((s = part_direct(f, 0, ctx[i], 1, one, err)) ||
            (s = decode_share(f, ctx[i], share, err)))
            return s;
        for (int k = 0; k < 3; k++)
            at[i][k] = one[k] - share[k];
    }
    if (memcmp(at[0], at[1], sizeof at[0]) || memcmp(at[0], at[2], sizeof at[0]))
        return rf_err_set(err, RF_EINVAL,
                          "%s: the simulator's floor needs a decode step that grows by the same "
                          "parts with each sequence at every context",
                          f->model.name);
    memcpy(f->decode_base, at[0], sizeof f->decode_base);
    return RF_OK;
}

rf_status rf_sim_floor_prepare(rf_sim_floor *f, const rf_model *m, const rf_step_opts *o,
                               const rf_roof *roof, int64_t max_tokens, int64_t max_logits,
                               void *table, size_t table_bytes, rf_err *err)
{
    /* a KV cache's group scales would make its bytes step with the keys; an
     * activation's scales (nvfp4's, --quant nvfp4) do not: a sequence's
     * queries and outputs are the same bytes at every context, and the
     * linear rows are tabled at every token count */
    if (o->kv.group_size)
        return rf_err_set(err, RF_EINVAL,
                          "the simulator's floor needs a KV dtype without group scales (%s): "
                          "its bytes are not affine in the keys",
                          rf_dtype_name(o->kv.kind));
    size_t need = rf_sim_floor_table_bytes(max_tokens, max_logits);
    if (!need)
        return rf_err_set(err, RF_EINVAL,
                          "max tokens (%lld) and logits (%lld) must be in [1, %lld]",
                          (long long)max_tokens, (long long)max_logits, (long long)RF_DIM_MAX);
    if (table_bytes < need || !table)
        return rf_err_set(err, RF_EINVAL, "the floor's table has %zu bytes; it needs %zu",
                          table_bytes, need);
    f->model = *m;
    f->opts = *o;
    f->roof = *roof;
    f->full = o->traffic == RF_TRAFFIC_FULL;
    f->max_tokens = max_tokens;
    f->max_logits = max_logits;
    f->lin = table;
    f->head = f->lin + max_tokens + 1;
    memset(table, 0, need);
    f->cache = (rf_sim_floor_cached *)(void *)(f->head + max_logits + 1);
    for (size_t i = 0; i < RF_SIM_FLOOR_CACHE; i++)
        f->cache[i].t = -1;
    f->steps_computed = 0;
    rf_step_opts d = *o;
    d.phase = RF_DECODE;
    d.batch = 1;
    d.tokens = 1;
    rf_status s = rf_sweep_prepare(&f->decode, m, &d, roof, err);
    if (s)
        return s;
    f->has_kvb = false;
    for (size_t i = 0; i < f->decode.scratch.n_ops && m->kv_lora_rank; i++)
        if (f->decode.scratch.ops[i].name && !strcmp(f->decode.scratch.ops[i].name, "kv_b_proj")) {
            f->kvb = f->decode.scratch.ops[i];
            f->has_kvb = true;
        }
    f->decode_affine = f->decode.linear && !rf_model_is_hybrid(m);
    if (!f->decode_affine && (s = decode_base(f, err)))
        return s;
    f->chunk_poly = false;
    if (!rf_model_sliding_layers(m) && (s = chunk_fit(f, &f->chunk_poly, err)))
        return s;
    return RF_OK;
}

/* Every operator but attention at M rows (lm_head excluded, and MLA's
 * kv_b_proj, whose rows are the latents expanded), as the mixed step's
 * linear part: one rf_step_compute, kept. */
static rf_status linear_at(rf_sim_floor *f, int64_t M, const rf_sim_floor_entry **out, rf_err *err)
{
    rf_sim_floor_entry *e = &f->lin[M];
    if (!e->set) {
        rf_step_opts lin = f->opts;
        lin.phase = RF_PREFILL;
        lin.batch = 1;
        lin.tokens = M;
        lin.context = 0;
        f->steps_computed++;
        rf_status s = rf_step_compute(&f->model, &lin, &f->roof, &f->scratch, err);
        if (s)
            return s;
        const rf_step *st = &f->scratch;
        e->flops = e->bytes = 0;
        for (size_t i = 0; i < st->n_ops; i++) {
            const rf_op *op = &st->ops[i];
            if (is_attention(op) || !strcmp(op->name, "lm_head") ||
                (f->has_kvb && !strcmp(op->name, "kv_b_proj")))
                continue;
            e->flops += op->count * op->flops; /* below the step's checked totals */
            e->bytes += op->count * op->bytes;
        }
        e->weight_bytes = st->weight_bytes; /* lm_head's weights included */
        e->set = true;
    }
    *out = e;
    return RF_OK;
}

/* lm_head at L rows, as the mixed step re-forms it. */
static rf_status head_at(rf_sim_floor *f, int64_t L, const rf_sim_floor_entry **out, rf_err *err)
{
    rf_sim_floor_entry *e = &f->head[L];
    if (!e->set) {
        const rf_step *st = &f->decode.scratch; /* a decode step: lm_head is in it */
        const rf_op *h = NULL;
        for (size_t i = 0; i < st->n_ops && !h; i++)
            if (st->ops[i].name && !strcmp(st->ops[i].name, "lm_head"))
                h = &st->ops[i];
        rf_op op;
        rf_status s;
        if (!h)
            return rf_err_set(err, RF_EINTERNAL, "the step has no lm_head");
        if ((s = rf_op_gemm(h->name, L, h->k, h->n, h->w, f->opts.a, &op, err)))
            return s;
        e->flops = op.flops;
        e->bytes = op.bytes;
        e->set = true;
    }
    *out = e;
    return RF_OK;
}

/* A verification of t positions after o cached on an MLA model as the
 * absorbed kernel runs it (kv_b_proj folded into the query and the output,
 * as engines run decode and their speculative verifications): each query
 * scores the latent as a decode token at o + i keys (i = 1..t, itself
 * included; o + t each without --causal), and the t queries of one
 * sequence read the latent once, so its bytes are the longest query's
 * alone. Into v: flops, bytes counted in Q, operator bytes. */
static rf_status verify_absorbed(rf_sim_floor *f, int64_t t, int64_t o, uint64_t v[3], rf_err *err)
{
    v[0] = v[1] = v[2] = 0;
    for (int64_t i = 1; i <= t; i++) {
        int64_t keys = f->opts.causal ? o + i : o + t;
        uint64_t d[3] = {0, 0, 0};
        for (size_t r = 0; r < f->decode.n_attn && f->decode_affine; r++) {
            const struct rf_sweep_attn *a = &f->decode.attn[r];
            uint64_t k = (uint64_t)(a->window && keys > a->window ? a->window : keys);
            d[0] += a->count * (a->flops0 + k * a->flops);
            d[1] +=
                a->count * (a->kv_bytes0 + a->extra_bytes0 + k * (a->kv_bytes + a->extra_bytes));
            d[2] += a->count * (a->bytes0 + k * a->bytes);
        }
        rf_status s = f->decode_affine ? RF_OK : part_cached(f, 0, keys, d, err);
        if (s)
            return s;
        v[0] += d[0];
        if (i == t) {
            v[1] = d[1];
            v[2] = d[2];
        }
    }
    return RF_OK;
}

/* MLA: what kv_b_proj adds a row it expands (all its layers): flops and
 * operator bytes (the row's input read and output write; its weights are
 * read once whatever the rows). */
static rf_status kvb_row(const rf_sim_floor *f, uint64_t row[2], rf_err *err)
{
    rf_op one, two;
    rf_status s;
    if ((s = rf_op_gemm(f->kvb.name, 1, f->kvb.k, f->kvb.n, f->kvb.w, f->opts.a, &one, err)) ||
        (s = rf_op_gemm(f->kvb.name, 2, f->kvb.k, f->kvb.n, f->kvb.w, f->opts.a, &two, err)))
        return s;
    row[0] = f->kvb.count * (two.flops - one.flops);
    row[1] = f->kvb.count * (two.bytes - one.bytes);
    return RF_OK;
}

static inline bool mul(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* *sum += count (n x0 + k x), checked */
static inline bool acc(uint64_t *sum, uint64_t count, uint64_t n, uint64_t x0, uint64_t k,
                       uint64_t x)
{
    uint64_t a, b;
    return mul(n, x0, &a) && mul(k, x, &b) && !__builtin_add_overflow(a, b, &a) &&
           mul(count, a, &a) && !__builtin_add_overflow(*sum, a, sum);
}

rf_status rf_sim_floor_step(void *user, const rf_sim_batch *b, double *step_s, rf_err *err)
{
    rf_sim_floor *f = user;
    int64_t M = b->tokens, L = rf_sim_batch_logits(b);
    if (M < 1 || M > f->max_tokens || L > f->max_logits)
        return rf_err_set(err, RF_ERANGE,
                          "a step of %lld tokens and %lld logits passes the floor's %lld and %lld",
                          (long long)M, (long long)L, (long long)f->max_tokens,
                          (long long)f->max_logits);
    const rf_sim_floor_entry *lin = NULL, *head = NULL;
    rf_status s;
    if ((s = linear_at(f, M, &lin, err)) || (s = head_at(f, L, &head, err)))
        return s;
    uint64_t F = lin->flops + head->flops; /* each below 2^63: checked steps */
    uint64_t Qc = lin->weight_bytes, Qf = lin->bytes + head->bytes;
    bool ok = true;
    uint64_t n = (uint64_t)b->n_decode;
    if (n && !f->decode_affine)
        ok = !__builtin_add_overflow(F, f->decode_base[0], &F) &&
             !__builtin_add_overflow(Qc, f->decode_base[1], &Qc) &&
             !__builtin_add_overflow(Qf, f->decode_base[2], &Qf);
    for (int64_t i = 0; i < b->n_decode && !f->decode_affine && ok; i++) {
        uint64_t v[3];
        if ((s = part_cached(f, 0, b->decode_context[i], v, err)))
            return s;
        ok = !__builtin_add_overflow(F, v[0], &F) && !__builtin_add_overflow(Qc, v[1], &Qc) &&
             !__builtin_add_overflow(Qf, v[2], &Qf);
    }
    for (size_t r = 0; r < f->decode.n_attn && n && f->decode_affine; r++) {
        const struct rf_sweep_attn *a = &f->decode.attn[r];
        uint64_t keys = (uint64_t)b->decode_context_sum;
        if (a->window) {
            keys = 0;
            for (int64_t i = 0; i < b->n_decode; i++)
                keys +=
                    (uint64_t)(b->decode_context[i] < a->window ? b->decode_context[i] : a->window);
        }
        ok = ok && acc(&F, a->count, n, a->flops0, keys, a->flops) &&
             acc(&Qc, a->count, n, a->kv_bytes0 + a->extra_bytes0, keys,
                 a->kv_bytes + a->extra_bytes) &&
             acc(&Qf, a->count, n, a->bytes0, keys, a->bytes);
    }
    uint64_t kv_row[2] = {0, 0}; /* MLA: kv_b_proj's expansion, a row */
    if (f->has_kvb && (s = kvb_row(f, kv_row, err)))
        return s;
    for (int64_t j = 0; j < b->n_chunks && ok; j++) {
        uint64_t v[3], t = (uint64_t)b->chunks[j].tokens, o = (uint64_t)b->chunks[j].offset;
        if (f->chunk_poly) {
            /* the exact value is below 2^63 when its estimate is below 2^62 */
            double est = 0;
            for (int k = 0; k < 3; k++) {
                const uint64_t *c = f->poly[k];
                double dt = (double)t, dq = (double)o;
                est = fmax(est, fabs((double)(int64_t)c[0] * dt * dq) +
                                    fabs((double)(int64_t)c[1] * dt * dt) +
                                    fabs((double)(int64_t)c[2] * dt) +
                                    fabs((double)(int64_t)c[3] * dq) + fabs((double)(int64_t)c[4]));
                v[k] = poly2(c, t, o) / 2;
            }
            ok = est < 0x1p62;
        } else if ((s = part_cached(f, (int64_t)t, (int64_t)o, v, err))) {
            return s;
        }
        if (ok && f->has_kvb && b->chunks[j].logits > 1) {
            /* an MLA verification (every position scored): the least of
             * the expanding chunk (kv_b_proj expanding its o cached latents
             * beside its t rows) and the absorbed kernel, component by
             * component, so the floor is under whichever the engine runs */
            uint64_t a[3], e0 = 0, e2 = 0; /* read only when ok */
            if ((s = verify_absorbed(f, (int64_t)t, (int64_t)o, a, err)))
                return s;
            ok = mul(o, kv_row[0], &e0) && !__builtin_add_overflow(e0, v[0], &e0) &&
                 mul(o, kv_row[1], &e2) && !__builtin_add_overflow(e2, v[2], &e2);
            v[0] = e0 < a[0] ? e0 : a[0];
            v[1] = v[1] < a[1] ? v[1] : a[1];
            v[2] = e2 < a[2] ? e2 : a[2];
        }
        ok = ok && !__builtin_add_overflow(F, v[0], &F) && !__builtin_add_overflow(Qc, v[1], &Qc) &&
             !__builtin_add_overflow(Qf, v[2], &Qf);
    }
    if (ok && f->has_kvb) {
        /* MLA: kv_b_proj absorbed for each decode token (one row), and
         * expanding the o_j + t_j latents each prompt chunk attends to; a
         * verification's t_j rows (its o_j expanded, where that form is
         * the lesser, are in its part above) */
        uint64_t rows = n;
        for (int64_t j = 0; j < b->n_chunks && ok; j++) {
            const rf_sim_chunk *c = &b->chunks[j];
            ok = !__builtin_add_overflow(
                rows, (uint64_t)(c->logits > 1 ? c->tokens : c->offset + c->tokens), &rows);
        }
        rf_op kv;
        if (ok && rows > (uint64_t)RF_DIM_MAX)
            ok = false;
        if (ok && (s = rf_op_gemm(f->kvb.name, (int64_t)rows, f->kvb.k, f->kvb.n, f->kvb.w,
                                  f->opts.a, &kv, err)))
            return s;
        ok = ok && acc(&F, f->kvb.count, 1, kv.flops, 0, 0) &&
             acc(&Qf, f->kvb.count, 1, kv.bytes, 0, 0);
    }
    if (!ok)
        return rf_err_set(err, RF_ERANGE, "a step of %lld tokens: its totals overflow 64 bits",
                          (long long)M);
    *step_s = rf_roof_place(&f->roof, (double)F, (double)(f->full ? Qf : Qc)).floor_s;
    return RF_OK;
}

rf_status rf_sim_floor_group(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                             rf_err *err)
{
    double most = 0;
    for (int64_t i = 0; i < n; i++) {
        double t = 0;
        rf_status s = b[i].tokens ? rf_sim_floor_step(user, &b[i], &t, err) : RF_OK;
        if (s)
            return s;
        most = t > most ? t : most;
    }
    *step_s = most;
    return RF_OK;
}

rf_status rf_sim_pool_blocks(const rf_model *m, const rf_step_opts *o, uint64_t mem_bytes,
                             double util, uint64_t reserve_bytes, int64_t block_tokens,
                             int64_t *blocks, rf_err *err)
{
    if (block_tokens < 1)
        return rf_err_set(err, RF_EINVAL, "block (%lld tokens) must be >= 1",
                          (long long)block_tokens);
    rf_capacity c;
    rf_status s = rf_capacity_compute(m, o, mem_bytes, util, reserve_bytes, 0, &c, err);
    if (s)
        return s;
    double budget = util * (double)mem_bytes - (double)reserve_bytes;
    if (!c.weights_fit)
        return rf_err_set(err, RF_EINVAL,
                          "%s: the weights (%.4g GB) do not fit the memory the engine may use "
                          "(util %.4g x %.4g GB - reserve %.4g GB = %.4g GB): no KV pool",
                          m->name, (double)c.resident_bytes / 1e9, util, (double)mem_bytes / 1e9,
                          (double)reserve_bytes / 1e9, budget / 1e9);
    if (c.tokens < (uint64_t)block_tokens)
        return rf_err_set(err, RF_EINVAL,
                          "%s: the weights leave %.4g bytes, less than one KV block of %lld "
                          "tokens",
                          m->name, c.pool_bytes, (long long)block_tokens);
    *blocks = (int64_t)(c.tokens / (uint64_t)block_tokens);
    return RF_OK;
}
