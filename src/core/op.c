/* op.c - one operator's FLOPs and bytes, with checked 64-bit arithmetic. */
#include "roofline/rf_op.h"

bool rf_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

bool rf_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* Product of up to four factors, false on overflow. */
static bool mul4(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t *out)
{
    uint64_t x;
    return rf_mul_u64(a, b, &x) && rf_mul_u64(x, c, &x) && rf_mul_u64(x, d, out);
}

static rf_status check_dim(const char *what, int64_t v, int64_t lo, rf_err *err)
{
    if (v < lo)
        return rf_err_set(err, RF_EINVAL, "%s (%lld) must be at least %lld", what, (long long)v,
                          (long long)lo);
    if (v > RF_DIM_MAX)
        return rf_err_set(err, RF_ERANGE, "%s (%lld) is beyond the accepted %lld", what,
                          (long long)v, (long long)RF_DIM_MAX);
    return RF_OK;
}

static rf_status overflow(const char *name, rf_err *err)
{
    return rf_err_set(err, RF_ERANGE, "%s: FLOP or byte count overflows 64 bits", name);
}

/* bytes of n elements of dt, into *out; false on overflow */
static bool elems(rf_dtype dt, uint64_t n, uint64_t *out)
{
    return rf_dtype_bytes(dt, n, out, NULL) == RF_OK;
}

rf_status rf_op_gemm(const char *name, int64_t m, int64_t k, int64_t n, rf_dtype w, rf_dtype a,
                     rf_op *out, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("M", m, 1, err)) || (s = check_dim("K", k, 1, err)) ||
        (s = check_dim("N", n, 1, err)))
        return s;
    rf_op op = {.name = name, .kind = RF_OP_GEMM, .m = m, .k = k, .n = n, .w = w, .count = 1};
    uint64_t mk, kn, mn, x, y;
    /* F = 2 M K N;  Q = M K b_a + K N b_w + M N b_a */
    if (!mul4(2, (uint64_t)m, (uint64_t)k, (uint64_t)n, &op.flops) ||
        !rf_mul_u64((uint64_t)m, (uint64_t)k, &mk) || !rf_mul_u64((uint64_t)k, (uint64_t)n, &kn) ||
        !rf_mul_u64((uint64_t)m, (uint64_t)n, &mn) || !elems(w, kn, &op.weight_bytes) ||
        !elems(a, mk, &x) || !elems(a, mn, &y) || !rf_add_u64(x, y, &op.act_bytes) ||
        !rf_add_u64(op.weight_bytes, op.act_bytes, &op.bytes))
        return overflow(name, err);
    *out = op;
    return RF_OK;
}

/* Keys a query may see: S, or the window when it is smaller. */
static uint64_t seen_keys(const rf_attn_desc *d)
{
    return d->window > 0 && d->keys > d->window ? (uint64_t)d->window : (uint64_t)d->keys;
}

/* rf_attn_pairs without its messages: false on overflow; q <= S when causal */
static bool pairs_of(const rf_attn_desc *d, uint64_t *pairs)
{
    uint64_t q = (uint64_t)d->q_tokens, S = (uint64_t)d->keys;
    if (!d->causal)
        return rf_mul_u64(q, seen_keys(d), pairs); /* q min(S, w) */
    /* query j = 1..q sits at position a + j, a = S - q cached before the
     * first, and scores min(a + j, w) keys: the first n1 = clamp(w - a, 0,
     * q) score a + j each, the rest w each */
    uint64_t a = S - q, w = d->window > 0 ? (uint64_t)d->window : S;
    uint64_t n1 = w <= a ? 0 : w - a < q ? w - a : q;
    /* n1 a + n1 (n1 + 1) / 2 + (q - n1) w, the halving on the even factor */
    uint64_t tri, x, y;
    uint64_t h1 = n1 % 2 ? n1 : n1 / 2, h2 = n1 % 2 ? (n1 + 1) / 2 : n1 + 1;
    return rf_mul_u64(h1, h2, &tri) && rf_mul_u64(n1, a, &x) && rf_add_u64(x, tri, &x) &&
           rf_mul_u64(q - n1, w, &y) && rf_add_u64(x, y, pairs);
}

rf_status rf_attn_pairs(const rf_attn_desc *d, uint64_t *pairs, rf_err *err)
{
    if (d->causal && d->q_tokens > d->keys)
        return rf_err_set(err, RF_EINVAL,
                          "causal attention: query tokens (%lld) must not exceed keys (%lld)",
                          (long long)d->q_tokens, (long long)d->keys);
    if (!pairs_of(d, pairs))
        return rf_err_set(err, RF_ERANGE, "query tokens x keys (%lld x %lld) overflows 64 bits",
                          (long long)d->q_tokens, (long long)d->keys);
    return RF_OK;
}

rf_status rf_op_attention(const char *name, const rf_attn_desc *d, rf_dtype kv, rf_dtype a,
                          rf_op *out, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("heads", d->n_q, 1, err)) || (s = check_dim("kv-heads", d->n_kv, 1, err)) ||
        (s = check_dim("head-dim", d->head_dim, 1, err)) ||
        (s = check_dim("batch", d->batch, 1, err)) ||
        (s = check_dim("query tokens", d->q_tokens, 1, err)) ||
        (s = check_dim("context", d->keys, 1, err)) ||
        (s = check_dim("v head-dim", d->v_head_dim, 0, err)) ||
        (s = check_dim("kv elements per token", d->kv_elems_per_token, 0, err)) ||
        (s = check_dim("window", d->window, 0, err)))
        return s;
    if (d->n_q % d->n_kv)
        return rf_err_set(err, RF_EINVAL, "kv-heads (%lld) must divide heads (%lld)",
                          (long long)d->n_kv, (long long)d->n_q);
    if (d->causal && d->q_tokens > d->keys)
        return rf_attn_pairs(d, &(uint64_t){0}, err);
    uint64_t B = (uint64_t)d->batch, q = (uint64_t)d->q_tokens, S = seen_keys(d);
    uint64_t dqk = (uint64_t)d->head_dim;
    uint64_t dv = d->v_head_dim ? (uint64_t)d->v_head_dim : dqk;
    uint64_t kv_elems = d->kv_elems_per_token ? (uint64_t)d->kv_elems_per_token
                                              : 2 * (uint64_t)d->n_kv * dqk;
    uint64_t qk, pv, f, kvn, per_seq;
    /* B q query tokens in the step: checked before it becomes op.m, since
     * each factor alone may be as large as 2^40. */
    if (!rf_mul_u64(B, q, &per_seq) || per_seq > (uint64_t)RF_DIM_MAX)
        return rf_err_set(err, RF_ERANGE, "%s: batch x query tokens (%lld x %lld) is beyond %lld",
                          name, (long long)d->batch, (long long)d->q_tokens,
                          (long long)RF_DIM_MAX);
    rf_op op = {.name = name,
                .kind = q == 1 ? RF_OP_ATTN_DECODE : RF_OP_ATTN_PREFILL,
                .m = (int64_t)per_seq,
                .k = d->head_dim,
                .n = (int64_t)S,
                .count = 1};
    /* F = 2 n_q pairs d_qk (Q K^T) + 2 n_q pairs d_v (scores . V), times B;
     * pairs = q S without a causal mask, so with d_v = d_qk = d_h this is
     * 4 n_q q S d_h B. */
    uint64_t pairs;
    if (!pairs_of(d, &pairs) || !mul4(2 * (uint64_t)d->n_q, B, pairs, dqk, &qk) ||
        !mul4(2 * (uint64_t)d->n_q, B, pairs, dv, &pv) || !rf_add_u64(qk, pv, &f))
        return overflow(name, err);
    op.flops = f;
    /* Q = (K and V elements per key) S B b_kv: read the cache once. */
    if (!mul4(kv_elems, S, B, 1, &kvn) || !elems(kv, kvn, &op.kv_bytes))
        return overflow(name, err);
    op.bytes = op.kv_bytes;
    if (d->naive) {
        /* + 2 n_q q S b_a B: every head's q x S scores written, then read. */
        uint64_t scores;
        if (!mul4((uint64_t)d->n_q, per_seq, S, 2, &scores) ||
            !elems(a, scores, &op.extra_bytes) ||
            !rf_add_u64(op.bytes, op.extra_bytes, &op.bytes))
            return overflow(name, err);
    }
    *out = op;
    return RF_OK;
}

rf_status rf_op_gather(const char *name, int64_t m, int64_t n, rf_dtype w, rf_op *out,
                       rf_err *err)
{
    rf_status s;
    if ((s = check_dim("tokens", m, 1, err)) || (s = check_dim("row width", n, 1, err)))
        return s;
    rf_op op = {.name = name, .kind = RF_OP_GATHER, .m = m, .k = 0, .n = n, .count = 1};
    uint64_t mn;
    if (!rf_mul_u64((uint64_t)m, (uint64_t)n, &mn) || !elems(w, mn, &op.weight_bytes))
        return overflow(name, err);
    op.bytes = op.weight_bytes;
    *out = op;
    return RF_OK;
}

double rf_op_intensity(const rf_op *op)
{
    return op->bytes ? (double)op->flops / (double)op->bytes : 0.0;
}

bool rf_gemm_mstar(int64_t k, int64_t n, rf_dtype w, rf_dtype a, double ridge, double *mstar)
{
    double K = (double)k, N = (double)n;
    double bw = rf_dtype_bytes_per_elem(w), ba = rf_dtype_bytes_per_elem(a);
    double den = 2 * K * N - ridge * ba * (K + N);
    if (den <= 0)
        return false;
    *mstar = ridge * bw * K * N / den;
    return true;
}

bool rf_square_tstar(int64_t d, double b, double ridge, double *tstar)
{
    double D = (double)d;
    if (D <= b * ridge)
        return false;
    *tstar = ridge * b * D / (2 * (D - ridge * b));
    return true;
}

double rf_attn_prefill_sstar(int64_t n_q, int64_t n_kv, rf_dtype kv, double ridge)
{
    double g = (double)n_q / (double)n_kv;
    return ridge * rf_dtype_bytes_per_elem(kv) / (2 * g);
}

double rf_attn_causal_sstar(double full_sstar)
{
    /* I = (F_full / 2) (S + 1) / S / Q: I = I* at S + 1 = 2 S*_full */
    return 2 * full_sstar - 1;
}

const char *rf_op_kind_name(rf_op_kind kind)
{
    static const char *const names[] = {
        [RF_OP_GEMM] = "gemm",
        [RF_OP_ATTN_DECODE] = "attn-decode",
        [RF_OP_ATTN_PREFILL] = "attn-prefill",
        [RF_OP_GATHER] = "gather",
        [RF_OP_ELEMENTWISE] = "elementwise",
    };
    _Static_assert(sizeof names / sizeof names[0] == RF_OP_ELEMENTWISE + 1, "op kind names");
    return (unsigned)kind <= RF_OP_ELEMENTWISE ? names[kind] : "?";
}

/* ---- element-wise operators (formulas in rf_op.h) ------------------------ */

/* An element-wise operator of m rows of width n, F = flops_per_elem m n and
 * Q = act_per_elem m n b_a; the caller adds its weight and KV terms. */
static rf_status elementwise(const char *name, int64_t m, int64_t n, uint64_t flops_per_elem,
                             uint64_t act_per_elem, rf_dtype a, rf_op *out, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("rows", m, 1, err)) || (s = check_dim("row width", n, 1, err)))
        return s;
    rf_op op = {.name = name, .kind = RF_OP_ELEMENTWISE, .m = m, .k = 0, .n = n, .count = 1};
    uint64_t mn, x;
    if (!rf_mul_u64((uint64_t)m, (uint64_t)n, &mn) || !rf_mul_u64(mn, flops_per_elem, &op.flops) ||
        !rf_mul_u64(mn, act_per_elem, &x) || !elems(a, x, &op.act_bytes))
        return overflow(name, err);
    op.bytes = op.act_bytes;
    *out = op;
    return RF_OK;
}

/* elementwise() and a weight vector of n elements read once (a norm's
 * gamma, a bias): Q += n b_w */
static rf_status weighted(const char *name, int64_t m, int64_t n, uint64_t flops_per_elem,
                          uint64_t act_per_elem, rf_dtype w, rf_dtype a, rf_op *out, rf_err *err)
{
    rf_status s = elementwise(name, m, n, flops_per_elem, act_per_elem, a, out, err);
    if (s)
        return s;
    if (!elems(w, (uint64_t)n, &out->weight_bytes) ||
        !rf_add_u64(out->bytes, out->weight_bytes, &out->bytes))
        return overflow(name, err);
    return RF_OK;
}

rf_status rf_op_norm(const char *name, int64_t m, int64_t hidden, rf_dtype w, rf_dtype a,
                     rf_op *out, rf_err *err)
{
    /* F = 4 M H;  Q = 2 M H b_a + H b_w */
    return weighted(name, m, hidden, 4, 2, w, a, out, err);
}

rf_status rf_op_rope(const char *name, int64_t m, int64_t heads, int64_t head_dim, rf_dtype a,
                     rf_op *out, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("heads", heads, 1, err)) || (s = check_dim("head-dim", head_dim, 1, err)))
        return s;
    uint64_t n;
    if (!rf_mul_u64((uint64_t)heads, (uint64_t)head_dim, &n) || n > (uint64_t)RF_DIM_MAX)
        return overflow(name, err);
    /* E = M (n_q + n_kv) d_h: F = 3 E, Q = 2 E b_a */
    return elementwise(name, m, (int64_t)n, 3, 2, a, out, err);
}

rf_status rf_op_cache_write(const char *name, int64_t m, int64_t elems_per_token, rf_dtype kv,
                            rf_dtype a, rf_op *out, rf_err *err)
{
    /* F = 0;  Q = M e b_a (read the new entries) + M e b_kv (write them) */
    rf_status s = elementwise(name, m, elems_per_token, 0, 1, a, out, err);
    if (s)
        return s;
    if (!elems(kv, (uint64_t)m * (uint64_t)elems_per_token, &out->kv_bytes) ||
        !rf_add_u64(out->bytes, out->kv_bytes, &out->bytes))
        return overflow(name, err); /* m e checked by elementwise */
    return RF_OK;
}

rf_status rf_op_kv_write(const char *name, int64_t m, int64_t n_kv, int64_t head_dim,
                         rf_dtype kv, rf_dtype a, rf_op *out, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("kv-heads", n_kv, 1, err)) || (s = check_dim("head-dim", head_dim, 1, err)))
        return s;
    uint64_t n;
    if (!mul4((uint64_t)n_kv, (uint64_t)head_dim, 2, 1, &n) || n > (uint64_t)RF_DIM_MAX)
        return overflow(name, err);
    /* e = 2 n_kv d_h (K and V): Q = 2 M n_kv d_h (b_a + b_kv). The row's n
     * stays n_kv d_h, the width of K (and of V). */
    if ((s = rf_op_cache_write(name, m, (int64_t)n, kv, a, out, err)))
        return s;
    out->n = (int64_t)(n / 2);
    return RF_OK;
}

rf_status rf_op_residual(const char *name, int64_t m, int64_t hidden, rf_dtype a, rf_op *out,
                         rf_err *err)
{
    /* F = M H;  Q = 3 M H b_a */
    return elementwise(name, m, hidden, 1, 3, a, out, err);
}

rf_status rf_op_act(const char *name, int64_t m, int64_t ffn, unsigned flops_per_elem,
                    rf_dtype a, rf_op *out, rf_err *err)
{
    /* F = c M F_ff;  Q = 3 M F_ff b_a */
    return elementwise(name, m, ffn, flops_per_elem, 3, a, out, err);
}

rf_status rf_op_bias(const char *name, int64_t m, int64_t n, rf_dtype w, rf_op *out, rf_err *err)
{
    /* F = M N (one add an output);  Q = N b_w (the vector, in the epilogue) */
    return weighted(name, m, n, 1, 0, w, w, out, err);
}

rf_status rf_op_softmax(const char *name, int64_t rows, int64_t keys, bool decode, rf_dtype a,
                        rf_op *out, rf_err *err)
{
    /* F = 5 rows keys;  Q = 2 rows keys b_a, the scores read and written */
    rf_status s = elementwise(name, rows, keys, 5, 2, a, out, err);
    if (s)
        return s;
    out->kind = decode ? RF_OP_ATTN_DECODE : RF_OP_ATTN_PREFILL;
    out->extra_bytes = out->act_bytes;
    out->act_bytes = 0;
    return RF_OK;
}

/* out += the bytes of n elements of dt into *field and out->bytes */
static bool add_bytes(rf_op *out, uint64_t *field, rf_dtype dt, uint64_t n)
{
    uint64_t b;
    return elems(dt, n, &b) && rf_add_u64(*field, b, field) &&
           rf_add_u64(out->bytes, b, &out->bytes);
}

rf_status rf_op_attention_full(const char *const names[3], const rf_attn_desc *d, rf_dtype kv,
                               rf_dtype a, rf_op out[3], size_t *n_out, rf_err *err)
{
    rf_attn_desc flash = *d;
    flash.naive = false;
    rf_op base;
    rf_status s = rf_op_attention(names[0], &flash, kv, a, &base, err);
    if (s)
        return s;
    if (d->read_keys > 0 && d->read_keys != base.n) {
        /* the K/V of read_keys positions: the same operator over them */
        rf_attn_desc wide = flash;
        rf_op w;
        wide.keys = d->read_keys;
        wide.window = 0;
        wide.causal = false;
        if ((s = rf_op_attention(names[0], &wide, kv, a, &w, err)))
            return s;
        base.kv_bytes = base.bytes = w.kv_bytes;
    }
    uint64_t M = (uint64_t)base.m, nq = (uint64_t)d->n_q, dqk = (uint64_t)d->head_dim;
    uint64_t dv = d->v_head_dim ? (uint64_t)d->v_head_dim : dqk, qn, on;
    /* Q read M n_q d_qk, O write M n_q d_v elements (M, n_q, d below 2^40,
     * their product checked) */
    if (!mul4(M, nq, dqk, 1, &qn) || !mul4(M, nq, dv, 1, &on))
        return overflow(names[0], err);
    if (!d->naive) {
        out[0] = base;
        *n_out = 1;
        if (!add_bytes(&out[0], &out[0].act_bytes, a, qn) ||
            !add_bytes(&out[0], &out[0].act_bytes, a, on))
            return overflow(names[0], err);
        return RF_OK;
    }
    /* naive: P = B n_q q S' score elements; F of Q K^T and of scores . V
     * are base.flops in the ratio d_qk : d_v (F = 2 n_q pairs (d_qk + d_v) B) */
    uint64_t rows, P;
    if (!rf_mul_u64(M, nq, &rows) || rows > (uint64_t)RF_DIM_MAX ||
        !rf_mul_u64(rows, (uint64_t)base.n, &P))
        return overflow(names[0], err);
    if ((s = rf_op_softmax(names[1], (int64_t)rows, base.n, base.kind == RF_OP_ATTN_DECODE, a,
                           &out[1], err)))
        return s;
    out[1].m = base.m;
    out[1].k = base.k;
    uint64_t per = base.flops / (dqk + dv);
    bool latent = d->kv_elems_per_token > 0;
    uint64_t k_read = latent ? base.kv_bytes : base.kv_bytes / 2;
    out[0] = out[2] = base;
    out[0].flops = per * dqk;
    out[2].flops = per * dv;
    out[2].name = names[2];
    out[0].kv_bytes = out[0].bytes = k_read;
    out[2].kv_bytes = out[2].bytes = base.kv_bytes - k_read;
    if (!add_bytes(&out[0], &out[0].act_bytes, a, qn) ||
        !add_bytes(&out[0], &out[0].extra_bytes, a, P) ||
        !add_bytes(&out[2], &out[2].extra_bytes, a, P) ||
        !add_bytes(&out[2], &out[2].act_bytes, a, on))
        return overflow(names[0], err);
    *n_out = 3;
    return RF_OK;
}
