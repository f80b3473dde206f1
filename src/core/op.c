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

rf_dtype rf_gemm_out_default(rf_dtype a)
{
    /* an 8- or 4-bit input is quantized for the GEMM alone; the engines'
     * scaled GEMMs (vLLM's cutlass_scaled_mm, DeepGEMM) write bf16 */
    return rf_dtype_bits(a.kind) < 16 ? rf_dtype_of(RF_BF16) : a;
}

rf_status rf_op_gemm_out(const char *name, int64_t m, int64_t k, int64_t n, rf_dtype w, rf_dtype a,
                         rf_dtype y, rf_op *out, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("M", m, 1, err)) || (s = check_dim("K", k, 1, err)) ||
        (s = check_dim("N", n, 1, err)))
        return s;
    rf_op op = {.name = name, .kind = RF_OP_GEMM, .m = m, .k = k, .n = n, .w = w, .count = 1};
    uint64_t mk, kn, mn, x, yb;
    /* F = 2 M K N;  Q = M K b_a + K N b_w + M N b_y */
    if (!mul4(2, (uint64_t)m, (uint64_t)k, (uint64_t)n, &op.flops) ||
        !rf_mul_u64((uint64_t)m, (uint64_t)k, &mk) || !rf_mul_u64((uint64_t)k, (uint64_t)n, &kn) ||
        !rf_mul_u64((uint64_t)m, (uint64_t)n, &mn) || !elems(w, kn, &op.weight_bytes) ||
        !elems(a, mk, &x) || !elems(y, mn, &yb) || !rf_add_u64(x, yb, &op.act_bytes) ||
        !rf_add_u64(op.weight_bytes, op.act_bytes, &op.bytes))
        return overflow(name, err);
    *out = op;
    return RF_OK;
}

rf_status rf_op_gemm(const char *name, int64_t m, int64_t k, int64_t n, rf_dtype w, rf_dtype a,
                     rf_op *out, rf_err *err)
{
    return rf_op_gemm_out(name, m, k, n, w, a, rf_gemm_out_default(a), out, err);
}

/* Keys a query may see: S, or the window when it is smaller; chunked, the
 * last query's own chunk up to itself, (S - 1) mod C + 1. */
static uint64_t seen_keys(const rf_attn_desc *d)
{
    if (d->chunk > 0)
        return (uint64_t)((d->keys - 1) % d->chunk + 1);
    return d->window > 0 && d->keys > d->window ? (uint64_t)d->window : (uint64_t)d->keys;
}

/* Chunked attention (chunk C), the q queries at positions a + 1 .. S
 * (a = S - q), each in chunk (p - 1) / C:
 *   causal   the query at p scores (p - 1) mod C + 1 keys, so
 *            pairs = g(S) - g(a), g(n) = (n / C) C (C + 1) / 2 + r (r + 1) / 2,
 *            r = n mod C;
 *   square   every query scores the keys of its chunk up to S: queries
 *            and keys of the first chunk j0 = a / C, C x C for each full
 *            chunk between, (S - j1 C)^2 for the last j1 = (S - 1) / C.
 * Reads the K/V of positions j0 C + 1 .. S once: S - j0 C. */
/* n (n + 1) / 2, the halving on the even factor; false on overflow */
static bool tri(uint64_t n, uint64_t *out)
{
    return rf_mul_u64(n % 2 ? n : n / 2, n % 2 ? (n + 1) / 2 : n + 1, out);
}

static bool chunk_tri(uint64_t n, uint64_t C, uint64_t *out)
{
    uint64_t full, t, r;
    return tri(C, &t) && rf_mul_u64(n / C, t, &full) && tri(n % C, &r) && rf_add_u64(full, r, out);
}

static bool chunk_pairs(const rf_attn_desc *d, uint64_t *pairs)
{
    uint64_t S = (uint64_t)d->keys, q = (uint64_t)d->q_tokens, C = (uint64_t)d->chunk;
    uint64_t a = S - q, j0 = a / C, j1 = (S - 1) / C, x, y;
    if (d->causal)
        return chunk_tri(S, C, &x) && chunk_tri(a, C, &y) && (*pairs = x - y, true);
    if (j0 == j1)
        return rf_mul_u64(q, S - j0 * C, pairs);
    uint64_t first, mid, last;
    return rf_mul_u64(S - j1 * C, S - j1 * C, &last) && rf_mul_u64((j0 + 1) * C - a, C, &first) &&
           rf_mul_u64(C, C, &x) && rf_mul_u64(j1 - j0 - 1, x, &mid) && rf_add_u64(first, mid, &x) &&
           rf_add_u64(x, last, pairs);
}

/* Positions whose K/V the step reads: the keys seen, or chunked the union
 * of the queries' chunks. */
static uint64_t read_positions(const rf_attn_desc *d)
{
    if (d->chunk > 0) {
        uint64_t S = (uint64_t)d->keys, C = (uint64_t)d->chunk;
        return S - (S - (uint64_t)d->q_tokens) / C * C;
    }
    return seen_keys(d);
}

/* rf_attn_pairs without its messages: false on overflow; q <= S when causal */
static bool pairs_of(const rf_attn_desc *d, uint64_t *pairs)
{
    uint64_t q = (uint64_t)d->q_tokens, S = (uint64_t)d->keys;
    if (d->chunk > 0)
        return chunk_pairs(d, pairs);
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
        (s = check_dim("window", d->window, 0, err)) || (s = check_dim("chunk", d->chunk, 0, err)))
        return s;
    if (d->chunk > 0 && d->q_tokens > d->keys)
        return rf_err_set(err, RF_EINVAL,
                          "chunked attention: query tokens (%lld) must not exceed keys (%lld)",
                          (long long)d->q_tokens, (long long)d->keys);
    if (d->n_q % d->n_kv)
        return rf_err_set(err, RF_EINVAL, "kv-heads (%lld) must divide heads (%lld)",
                          (long long)d->n_kv, (long long)d->n_q);
    if (d->causal && d->q_tokens > d->keys)
        return rf_attn_pairs(d, &(uint64_t){0}, err);
    uint64_t B = (uint64_t)d->batch, q = (uint64_t)d->q_tokens, S = seen_keys(d);
    uint64_t dqk = (uint64_t)d->head_dim;
    uint64_t dv = d->v_head_dim ? (uint64_t)d->v_head_dim : dqk;
    uint64_t kv_elems =
        d->kv_elems_per_token ? (uint64_t)d->kv_elems_per_token : 2 * (uint64_t)d->n_kv * dqk;
    uint64_t qk, pv, f, kvn, per_seq;
    /* B q query tokens in the step: checked before it becomes op.m, since
     * each factor alone may be as large as 2^40. */
    if (!rf_mul_u64(B, q, &per_seq) || per_seq > (uint64_t)RF_DIM_MAX)
        return rf_err_set(err, RF_ERANGE, "%s: batch x query tokens (%lld x %lld) is beyond %lld",
                          name, (long long)d->batch, (long long)d->q_tokens, (long long)RF_DIM_MAX);
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
    /* Q = (K and V elements per key) S B b_kv: read the cache once (chunked:
     * every position of the queries' chunks). */
    if (!mul4(kv_elems, read_positions(d), B, 1, &kvn) || !elems(kv, kvn, &op.kv_bytes))
        return overflow(name, err);
    op.bytes = op.kv_bytes;
    if (d->naive) {
        /* + 2 n_q q S b_a B: every head's q x S scores written, then read. */
        uint64_t scores;
        if (!mul4((uint64_t)d->n_q, per_seq, S, 2, &scores) || !elems(a, scores, &op.extra_bytes) ||
            !rf_add_u64(op.bytes, op.extra_bytes, &op.bytes))
            return overflow(name, err);
    }
    *out = op;
    return RF_OK;
}

rf_status rf_op_gather(const char *name, int64_t m, int64_t n, rf_dtype w, rf_op *out, rf_err *err)
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
    double by = rf_dtype_bytes_per_elem(rf_gemm_out_default(a));
    double den = 2 * K * N - ridge * (ba * K + by * N);
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

rf_status rf_op_kv_write(const char *name, int64_t m, int64_t n_kv, int64_t head_dim, rf_dtype kv,
                         rf_dtype a, rf_op *out, rf_err *err)
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

rf_status rf_op_act(const char *name, int64_t m, int64_t ffn, unsigned flops_per_elem, rf_dtype a,
                    rf_op *out, rf_err *err)
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

/* ---- linear attention, state spaces, sparse attention's indexer --------- */

/* x += n v, checked */
static bool addmul(uint64_t *x, uint64_t n, uint64_t v)
{
    uint64_t t;
    return rf_mul_u64(n, v, &t) && rf_add_u64(*x, t, x);
}

#define SEQ_DIM_MAX ((int64_t)1 << 16)

static rf_status check_seq(const rf_seq_desc *d, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("heads", d->heads, 1, err)) ||
        (s = check_dim("k width", d->k_dim, 1, err)) ||
        (s = check_dim("v width", d->v_dim, 1, err)) ||
        (s = check_dim("groups", d->groups, 1, err)) ||
        (s = check_dim("batch", d->batch, 1, err)) ||
        (s = check_dim("query tokens", d->q_tokens, 1, err)) ||
        (s = check_dim("chunk", d->chunk, 1, err)))
        return s;
    /* widths, groups and the chunk as a config gives them (at most 2^16):
     * the chunk formulas' products then stay in 64 bits */
    if (d->k_dim > SEQ_DIM_MAX || d->v_dim > SEQ_DIM_MAX || d->groups > SEQ_DIM_MAX ||
        d->chunk > SEQ_DIM_MAX)
        return rf_err_set(err, RF_ERANGE, "%s: a width, group count or chunk is beyond %lld",
                          "sequence mixer", (long long)SEQ_DIM_MAX);
    uint64_t m;
    if (!rf_mul_u64((uint64_t)d->batch, (uint64_t)d->q_tokens, &m) || m > (uint64_t)RF_DIM_MAX)
        return rf_err_set(err, RF_ERANGE, "batch x query tokens (%lld x %lld) is beyond %lld",
                          (long long)d->batch, (long long)d->q_tokens, (long long)RF_DIM_MAX);
    return RF_OK;
}

/* A sequence-mixer row: kind by q_tokens, m = B q, k = k width, n = v width */
static rf_op seq_row(const char *name, const rf_seq_desc *d)
{
    return (rf_op){.name = name,
                   .kind = d->q_tokens == 1 ? RF_OP_ATTN_DECODE : RF_OP_ATTN_PREFILL,
                   .m = d->batch * d->q_tokens,
                   .k = d->k_dim,
                   .n = d->v_dim,
                   .count = 1};
}

/* The state of h heads of k x v elements, read (when held before the step)
 * and written, B sequences: kv_bytes; and, full, act elements `act` */
static rf_status seq_bytes(const char *name, const rf_seq_desc *d, uint64_t passes, rf_dtype state,
                           uint64_t act, rf_dtype a, rf_op *op, rf_err *err)
{
    uint64_t n;
    if (!mul4((uint64_t)d->heads, (uint64_t)d->k_dim, (uint64_t)d->v_dim, (uint64_t)d->batch, &n) ||
        !rf_mul_u64(n, passes, &n) || !elems(state, n, &op->kv_bytes) ||
        !elems(a, act, &op->act_bytes) || !rf_add_u64(op->kv_bytes, op->act_bytes, &op->bytes))
        return overflow(name, err);
    return RF_OK;
}

/* F of one chunk of c tokens of the chunked delta rule, one head:
 *   6 c dk dv + 6 c^2 dk + 4 c^2 dv + (c - 1) c (c + 1) / 3 */
static bool gdn_chunk_flops(uint64_t c, uint64_t dk, uint64_t dv, uint64_t *f)
{
    uint64_t x = 0, c2 = c * c; /* c <= 2^16 */
    return addmul(&x, 6 * c, dk * dv) && addmul(&x, 6 * c2, dk) && addmul(&x, 4 * c2, dv) &&
           rf_add_u64(x, (c - 1) * c * (c + 1) / 3, f);
}

/* F of one SSD chunk of c tokens over h heads and G groups:
 *   2 G c^2 N + h (2 c^2 P + 4 c N P + 2 N P)   (N = k width, P = v width) */
static bool ssd_chunk_flops(const rf_seq_desc *d, uint64_t c, uint64_t *f)
{
    uint64_t N = (uint64_t)d->k_dim, P = (uint64_t)d->v_dim, c2 = c * c, head = 0, x = 0;
    return addmul(&head, 2 * c2, P) && addmul(&head, 4 * c, N * P) && addmul(&head, 2, N * P) &&
           addmul(&x, 2 * c2 * (uint64_t)d->groups, N) && addmul(&x, (uint64_t)d->heads, head) &&
           (*f = x, true);
}

/* F over T tokens in chunks of C: (T / C) f(C) + f(T mod C), times B */
static bool chunked_flops(const rf_seq_desc *d, bool gdn, uint64_t *out)
{
    uint64_t T = (uint64_t)d->q_tokens, C = (uint64_t)d->chunk, full = 0, tail = 0, f = 0;
    uint64_t dk = (uint64_t)d->k_dim, dv = (uint64_t)d->v_dim, h = (uint64_t)d->heads;
    bool ok =
        gdn ? gdn_chunk_flops(C, dk, dv, &full) &&
                  (T % C == 0 || gdn_chunk_flops(T % C, dk, dv, &tail))
            : ssd_chunk_flops(d, C, &full) && (T % C == 0 || ssd_chunk_flops(d, T % C, &tail));
    if (!ok || !addmul(&f, T / C, full) || !rf_add_u64(f, tail, &f))
        return false;
    if (gdn && !rf_mul_u64(f, h, &f)) /* the GDN chunk is per head */
        return false;
    return rf_mul_u64(f, (uint64_t)d->batch, out);
}

/* A GDN (gdn) or Mamba2 SSD row: F and the state bytes of rf_op.h */
static rf_status seq_op(const char *name, const rf_seq_desc *d, bool gdn, rf_dtype state,
                        rf_dtype a, bool full, rf_op *out, rf_err *err)
{
    rf_status s = check_seq(d, err);
    if (s)
        return s;
    rf_op op = seq_row(name, d);
    uint64_t M = (uint64_t)op.m, h = (uint64_t)d->heads, dk = (uint64_t)d->k_dim;
    uint64_t dv = (uint64_t)d->v_dim, g = (uint64_t)d->groups, act = 0;
    /* decode, a token: GDN 7 Vh dk dv (decay 1, k^T S 2, the rank-1 update
     * 2, S^T q 2); Mamba2 5 h P N (decay 1, dt x B^T 2, h C 2). Prefill:
     * the chunked forms */
    bool ok = d->q_tokens == 1 ? mul4((gdn ? 7 : 5) * h, dk, dv, M, &op.flops)
                               : chunked_flops(d, gdn, &op.flops);
    /* full, a token: GDN reads q, k (Kh dk each), v (Vh dv), the gates g,
     * beta (Vh each) and writes o (Vh dv); Mamba2 reads x (h P), B and C
     * (G N each), dt (h) and writes y (h P) */
    uint64_t per = gdn ? 2 * g * dk + 2 * h * dv + 2 * h : 2 * h * dv + 2 * g * dk + h;
    if (!ok || (full && !addmul(&act, M, per)))
        return overflow(name, err);
    uint64_t passes = d->q_tokens == 1 || d->has_state ? 2 : 1;
    if ((s = seq_bytes(name, d, passes, state, act, a, &op, err)))
        return s;
    *out = op;
    return RF_OK;
}

rf_status rf_op_gdn(const char *name, const rf_seq_desc *d, rf_dtype state, rf_dtype a, bool full,
                    rf_op *out, rf_err *err)
{
    return seq_op(name, d, true, state, a, full, out, err);
}

rf_status rf_op_ssd(const char *name, const rf_seq_desc *d, rf_dtype state, rf_dtype a, bool full,
                    rf_op *out, rf_err *err)
{
    return seq_op(name, d, false, state, a, full, out, err);
}

rf_status rf_op_short_conv(const char *name, int64_t batch, int64_t q_tokens, int64_t channels,
                           int64_t kernel, bool has_state, rf_dtype w, rf_dtype conv, rf_dtype a,
                           bool full, rf_op *out, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("batch", batch, 1, err)) ||
        (s = check_dim("query tokens", q_tokens, 1, err)) ||
        (s = check_dim("conv channels", channels, 1, err)) ||
        (s = check_dim("conv kernel", kernel, 1, err)))
        return s;
    if (kernel > 1024)
        return rf_err_set(err, RF_ERANGE, "%s: conv kernel (%lld) is beyond 1024", name,
                          (long long)kernel);
    uint64_t M, D = (uint64_t)channels, K = (uint64_t)kernel, st, x;
    if (!rf_mul_u64((uint64_t)batch, (uint64_t)q_tokens, &M) || M > (uint64_t)RF_DIM_MAX)
        return overflow(name, err);
    rf_op op = {.name = name,
                .kind = q_tokens == 1 ? RF_OP_ATTN_DECODE : RF_OP_ATTN_PREFILL,
                .m = (int64_t)M,
                .k = kernel,
                .n = channels,
                .w = w,
                .count = 1};
    /* F = 2 K D a token; W = K D b_w; the state of K - 1 inputs a channel,
     * read (decode, or prefill after a cached state) and written, B times */
    uint64_t passes = q_tokens == 1 || has_state ? 2 : 1;
    if (!mul4(2 * K, D, M, 1, &op.flops) || !elems(w, K * D, &op.weight_bytes) ||
        !mul4(passes * (K - 1), D, (uint64_t)batch, 1, &st) || !elems(conv, st, &op.kv_bytes) ||
        (full && (!mul4(2, M, D, 1, &x) || !elems(a, x, &op.act_bytes))) ||
        !rf_add_u64(op.weight_bytes, op.kv_bytes, &op.bytes) ||
        !rf_add_u64(op.bytes, op.act_bytes, &op.bytes))
        return overflow(name, err);
    *out = op;
    return RF_OK;
}

rf_status rf_op_indexer(const char *name, int64_t heads, int64_t dim, const rf_attn_desc *keys,
                        uint64_t bytes_per_key, rf_dtype a, bool full, rf_op *out, rf_err *err)
{
    rf_status s;
    if ((s = check_dim("index heads", heads, 1, err)) ||
        (s = check_dim("index dim", dim, 1, err)) ||
        (s = check_dim("batch", keys->batch, 1, err)) ||
        (s = check_dim("query tokens", keys->q_tokens, 1, err)) ||
        (s = check_dim("context", keys->keys, 1, err)))
        return s;
    rf_attn_desc d = *keys;
    d.window = d.chunk = 0;
    uint64_t pairs, B = (uint64_t)d.batch, M, x;
    if ((s = rf_attn_pairs(&d, &pairs, err)))
        return s;
    if (!rf_mul_u64(B, (uint64_t)d.q_tokens, &M) || M > (uint64_t)RF_DIM_MAX)
        return overflow(name, err);
    rf_op op = {.name = name,
                .kind = d.q_tokens == 1 ? RF_OP_ATTN_DECODE : RF_OP_ATTN_PREFILL,
                .m = (int64_t)M,
                .k = dim,
                .n = d.keys,
                .count = 1};
    /* F = 2 heads dim a query-key pair; Q = S keys' index entries a sequence;
     * full: each query's heads dim q and its heads weights read */
    if (!mul4(2 * (uint64_t)heads, (uint64_t)dim, pairs, B, &op.flops) ||
        !mul4(bytes_per_key, (uint64_t)d.keys, B, 1, &op.kv_bytes) ||
        (full &&
         (!mul4(M, (uint64_t)heads, (uint64_t)dim + 1, 1, &x) || !elems(a, x, &op.act_bytes))) ||
        !rf_add_u64(op.kv_bytes, op.act_bytes, &op.bytes))
        return overflow(name, err);
    *out = op;
    return RF_OK;
}

rf_status rf_op_act_ungated(const char *name, int64_t m, int64_t ffn, unsigned flops_per_elem,
                            rf_dtype a, rf_op *out, rf_err *err)
{
    /* F = c M F_ff;  Q = 2 M F_ff b_a (read up, write) */
    return elementwise(name, m, ffn, flops_per_elem, 2, a, out, err);
}
