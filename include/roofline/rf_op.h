/* rf_op.h - one operator: its FLOPs and bytes from shapes alone.
 *
 * GEMM  Y[M,N] = X[M,K] W[K,N], M = tokens in flight (docs/accounting.md):
 *     F = 2 M K N
 *     Q = M K b_a + K N b_w + M N b_y        (read X, read W, write Y)
 *   b_y is the output's dtype: b_a, except after an input narrower than 16
 *   bits (fp8, int8, fp4), whose GEMM writes bf16 (rf_gemm_out_default).
 *
 * Attention, one layer, n_q query heads, n_kv KV heads, head dim d_h,
 * B sequences, each with q query tokens against S keys:
 *     F = 4 n_q q S d_h B                    (Q K^T and scores . V)
 *     Q = 2 n_kv S d_h b_kv B                (read K and V once: flash)
 *   decode is q = 1; prefill is q = S (scores kept on chip). With causal
 *   masking q S becomes the pairs of rf_attn_pairs (S (S + 1) / 2 for
 *   q = S); Q does not change.
 *   Naive (materialized) attention adds the score matrices: for each query
 *   head the q x S scores are written by Q K^T and read back by softmax . V,
 *     + 2 n_q q S b_a B bytes,
 *   which is exactly what rf_op.extra_bytes holds; a causal mask is applied
 *   to the full q x S matrix, so these bytes are not halved.
 *
 * Gather (the input embedding): one row of H elements per token,
 *     F = 0, Q = M H b_w.
 *
 * All counts are exact 64-bit integers; a product that would overflow is
 * refused with RF_ERANGE, never wrapped.
 */
#ifndef RF_OP_H
#define RF_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_hw.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest accepted dimension (tokens, context, hidden, heads, ...). Any
 * larger is refused, so products of a few of them stay in 64 bits or are
 * caught by the checked multiply. */
#define RF_DIM_MAX ((int64_t)1 << 40)

typedef enum rf_op_kind {
    RF_OP_GEMM = 0,
    RF_OP_ATTN_DECODE,
    RF_OP_ATTN_PREFILL,
    RF_OP_GATHER,
    RF_OP_ELEMENTWISE /* norms, RoPE, the KV write, residuals, act      */
} rf_op_kind;

typedef struct rf_op {
    const char *name; /* static string: "q_proj", "attention", ...           */
    rf_op_kind kind;
    int64_t m, k, n;       /* GEMM: M, K, N. Attention: m = query tokens in the
                             step (B q), k = head_dim, n = keys S. Gather: m
                             tokens, k = 0, n = row width H.                     */
    rf_dtype w;            /* GEMM: the weights' dtype (a module of a quantized
                             checkpoint may keep its own); else unset            */
    uint64_t count;        /* instances in the step (usually layers)              */
    uint64_t flops;        /* per instance                                        */
    uint64_t bytes;        /* per instance: weight + kv + act + extra             */
    uint64_t weight_bytes; /* per instance: the W[K,N] read (or gathered rows)    */
    uint64_t kv_bytes;     /* per instance: the K and V read                      */
    uint64_t act_bytes;    /* per instance: activations read and written          */
    uint64_t extra_bytes;  /* per instance: naive attention score traffic         */
    const char *note;      /* static annotation ("sliding window 4096") or NULL   */
    /* Routed-expert GEMMs (0 otherwise): m counts every token-expert pair of
     * the layer, so F = 2 m K N and Q = experts K N b_w + m (K + N) b_a hold
     * for this row as for any GEMM; m_per_expert = m / experts.             */
    double experts;      /* experts whose weights the row streams (expected
                             touched under uniform routing, fractional)       */
    double m_per_expert; /* rows a streamed expert runs                      */
} rf_op;

typedef struct rf_attn_desc {
    int64_t n_q;                /* query heads                                   */
    int64_t n_kv;               /* KV heads (n_kv divides n_q)                   */
    int64_t head_dim;           /* d_h: of the Q.K dot product and of V          */
    int64_t v_head_dim;         /* 0 = head_dim; differs for MLA                 */
    int64_t kv_elems_per_token; /* 0 = 2 n_kv d_h (K and V); MLA sets its
                                   latent width (kv_lora_rank + rope dim) */
    int64_t batch;              /* B sequences                                   */
    int64_t q_tokens;           /* q: 1 for decode, S (or a chunk) for prefill   */
    int64_t keys;               /* S: keys each query attends to                 */
    bool naive;                 /* materialize scores in memory                  */
    int64_t window;             /* 0: none; else a query attends to at most
                          window keys (a sliding layer): S' = min(S, w)  */
    bool causal;                /* the q queries are the last q of the S keys'
                          positions and each scores only the keys up to
                          itself (see rf_attn_pairs)                     */
    int64_t read_keys;          /* rf_op_attention_full only: K/V positions read,
                          0 = the keys a query sees; a sliding layer in
                          prefill reads the union of its queries' windows */
    int64_t chunk;              /* 0: none; else chunked local attention (Llama-4):
                          a query attends only within its own chunk of
                          `chunk` positions (window must be 0). Decode
                          sees (S - 1) mod C + 1 keys; the pairs and the
                          positions read are in op.c (chunk_pairs)        */
} rf_attn_desc;

/* Query-key pairs a sequence scores: q min(S, w) without causal masking
 * (every query against every key it may see: the full square the lesson
 * and the chapter count);
 * causal, the query at position p (1-based, p = S - q + 1 .. S) scores
 * min(p, w) keys, so with no window
 *     pairs = q (S - q) + q (q + 1) / 2      (S (S + 1) / 2 when q = S),
 * the triangle with its diagonal. w = 0 means no window. F of attention is
 * 2 n_q pairs (d_qk + d_v) B, 4 n_q d_h pairs B when d_qk = d_v; K/V bytes
 * do not change (flash reads each key once). Errors: RF_EINVAL when
 * causal and q > S, RF_ERANGE on overflow. */
rf_status rf_attn_pairs(const rf_attn_desc *d, uint64_t *pairs, rf_err *err);

/* GEMM of M x K by K x N, X read in a, Y written in y:
 *     Q = M K b_a + K N b_w + M N b_y.
 * Errors: RF_EINVAL for a dimension < 1, RF_ERANGE above RF_DIM_MAX or when
 * F or Q overflow 64 bits. */
rf_status rf_op_gemm_out(const char *name, int64_t m, int64_t k, int64_t n, rf_dtype w, rf_dtype a,
                         rf_dtype y, rf_op *out, rf_err *err);
/* The dtype a GEMM writes when none is given: the activation dtype of what
 * reads Y. An input narrower than 16 bits (fp8, int8, fp4) is quantized for
 * the GEMM alone, and the engines' scaled GEMMs write bf16 (vLLM's
 * cutlass_scaled_mm, DeepGEMM's fp8 GEMM): bf16; otherwise a itself. */
rf_dtype rf_gemm_out_default(rf_dtype a);
/* rf_op_gemm_out with y = rf_gemm_out_default(a). */
rf_status rf_op_gemm(const char *name, int64_t m, int64_t k, int64_t n, rf_dtype w, rf_dtype a,
                     rf_op *out, rf_err *err);

/* Attention as described above; decode when q_tokens == 1 is not implied:
 * the kind is RF_OP_ATTN_DECODE when q_tokens == 1, RF_OP_ATTN_PREFILL
 * otherwise. Errors name the field ("kv-heads (6) must divide heads (32)"). */
rf_status rf_op_attention(const char *name, const rf_attn_desc *d, rf_dtype kv, rf_dtype a,
                          rf_op *out, rf_err *err);

/* Gather of m rows of width n from a table of dtype w. */
rf_status rf_op_gather(const char *name, int64_t m, int64_t n, rf_dtype w, rf_op *out, rf_err *err);

/* ---- element-wise operators ---------------------------------------------
 * What runs between the GEMMs (the full traffic model; `profile` times each).
 * M rows (tokens in the step), H hidden, F_ff intermediate, n_q / n_kv / d_h
 * heads and head dim; b_a, b_w, b_kv the activations', weights' and cache's
 * bytes an element. Every operator sets m = M, k = 0, n = its row width, and
 * splits Q into weight_bytes, kv_bytes and act_bytes as marked.
 *
 *   norm      RMSNorm of M rows of H:
 *               F = 4 M H
 *               Q = 2 M H b_a (act: read x, write y) + H b_w (weight: gamma)
 *   rope      on q and k, E = M (n_q + n_kv) d_h, n = (n_q + n_kv) d_h:
 *               F = 3 E,  Q = 2 E b_a (act: read and write in place; the
 *               cos/sin table is not counted)
 *   kv_write  the new K and V into the cache, n = n_kv d_h:
 *               F = 0,  Q = 2 M n_kv d_h b_a (act: read K, V)
 *                         + 2 M n_kv d_h b_kv (kv: write them)
 *   residual  x += y over M rows of H:
 *               F = M H,  Q = 3 M H b_a (act: two reads, one write)
 *   act       act(gate) x up over M rows of F_ff, c FLOPs an element:
 *               F = c M F_ff,  Q = 3 M F_ff b_a (act: read gate, up; write)
 *
 * Errors: RF_EINVAL for a dimension < 1, RF_ERANGE above RF_DIM_MAX or when
 * F or Q overflow 64 bits. */

/* c of SiLU(gate) x up: the sigmoid as 4 (negate, exp, add, divide), the
 * product 1. */
#define RF_ACT_SILU_MUL_FLOPS 5
/* c as `profile`'s kernel runs it, g / (1 + exp(-g)) x up: exp, add, divide,
 * multiply (the negation folded into the exp). */
#define RF_ACT_SILU_MUL_FLOPS_AS_RUN 4

rf_status rf_op_norm(const char *name, int64_t m, int64_t hidden, rf_dtype w, rf_dtype a,
                     rf_op *out, rf_err *err);
rf_status rf_op_rope(const char *name, int64_t m, int64_t heads, int64_t head_dim, rf_dtype a,
                     rf_op *out, rf_err *err);
rf_status rf_op_kv_write(const char *name, int64_t m, int64_t n_kv, int64_t head_dim, rf_dtype kv,
                         rf_dtype a, rf_op *out, rf_err *err);
rf_status rf_op_residual(const char *name, int64_t m, int64_t hidden, rf_dtype a, rf_op *out,
                         rf_err *err);
rf_status rf_op_act(const char *name, int64_t m, int64_t ffn, unsigned flops_per_elem, rf_dtype a,
                    rf_op *out, rf_err *err);

/* ---- the full traffic model's other operators ---------------------------
 *   bias        the bias vector of a GEMM of N outputs, added in its
 *               epilogue (no round trip of Y): F = M N, Q = N b_w (weight)
 *   cache_write the new tokens' cache entries, e elements a token (MLA: its
 *               latent, kv_lora_rank + rope): F = 0,
 *               Q = M e b_a (act: read) + M e b_kv (kv: write);
 *               rf_op_kv_write is e = 2 n_kv d_h
 *
 * Attention under the full traffic model (rf_op_attention_full), with
 * M = B q query tokens, S' = min(S, window) keys a query sees and the K/V
 * of `read_keys` positions (S' unless given) read:
 *   flash (default), one operator: rf_op_attention's F and K/V read, and
 *     the Q read and the O write, act = M n_q d_qk b_a + M n_q d_v b_a
 *     (2 M n_q d_h b_a when d_qk = d_v = d_h).
 *   naive (d->naive), three operators over each head's q x S' scores,
 *     P = B n_q q S' score elements (the full matrix: a causal mask is
 *     applied to it, not cut out):
 *     qk       F = 2 n_q pairs d_qk B; Q = M n_q d_qk b_a (act: Q read)
 *              + the K read (kv) + P b_a (extra: scores written)
 *     softmax  F = 5 P (max, subtract, exp, sum, divide);
 *              Q = 2 P b_a (extra: read, write), rf_op_softmax
 *     pv       F = 2 n_q pairs d_v B; Q = P b_a (extra: read) + the V read
 *              (kv) + M n_q d_v b_a (act: O written)
 *     The K/V read splits in halves, K to qk, V to pv; a shared latent
 *     (MLA, kv_elems_per_token set) is read once, by qk.
 *   Summed, the naive three move 2 M n_q d_h b_a + K/V + 4 P b_a: the flash
 *   operator's bytes and the scores' four passes.
 */
rf_status rf_op_bias(const char *name, int64_t m, int64_t n, rf_dtype w, rf_op *out, rf_err *err);
rf_status rf_op_cache_write(const char *name, int64_t m, int64_t elems_per_token, rf_dtype kv,
                            rf_dtype a, rf_op *out, rf_err *err);
/* Softmax over `rows` rows of `keys` scores: F = 5 rows keys,
 * Q = 2 rows keys b_a (extra_bytes), kind by q_tokens as attention. */
rf_status rf_op_softmax(const char *name, int64_t rows, int64_t keys, bool decode, rf_dtype a,
                        rf_op *out, rf_err *err);
/* Attention as above: names[0] for flash, names[0..2] (qk, softmax, pv)
 * for naive; writes *n_out (1 or 3) operators to out. */
rf_status rf_op_attention_full(const char *const names[3], const rf_attn_desc *d, rf_dtype kv,
                               rf_dtype a, rf_op out[3], size_t *n_out, rf_err *err);

/* c of GELU(gate) x up, the tanh form 0.5 g (1 + tanh(c0 (g + 0.044715 g^3)))
 * (gemma's gelu_pytorch_tanh): g^3 2, scale 1, add 1, scale 1, tanh 1,
 * add 1, the half 1, times g 1, then the product with up 1. */
#define RF_ACT_GELU_MUL_FLOPS 10

/* F / Q of one instance (0 when Q is 0). */
double rf_op_intensity(const rf_op *op);

/* Crossing point of a GEMM (I = I*), exact with activation traffic:
 *     M* = I* b_w K N / (2 K N - I* (b_a K + b_y N)),
 * b_y of rf_gemm_out_default(a) (b_a (K + N) when the output is in a)
 * Returns false ("never compute-bound") when the denominator is <= 0. */
bool rf_gemm_mstar(int64_t k, int64_t n, rf_dtype w, rf_dtype a, double ridge, double *mstar);

/* Square d x d projection, one dtype of b bytes:
 *     T* = I* b d / (2 (d - I* b)); never when d <= b I*. */
bool rf_square_tstar(int64_t d, double b, double ridge, double *tstar);

/* Prefill attention crosses the ridge at S* = I* b_kv / (2 g), g = n_q/n_kv
 * (the full square; causal masking gives I = g (S + 1) / b_kv, so
 * S* = I* b_kv / g - 1 = 2 S*_full - 1: rf_attn_causal_sstar). */
double rf_attn_prefill_sstar(int64_t n_q, int64_t n_kv, rf_dtype kv, double ridge);
double rf_attn_causal_sstar(double full_sstar);

const char *rf_op_kind_name(rf_op_kind kind); /* "gemm", "attn-decode", ... */

/* ---- sequence mixers beside softmax attention ----------------------------
 * Their cores are attention-kind rows (RF_OP_ATTN_DECODE when q_tokens is 1,
 * RF_OP_ATTN_PREFILL otherwise): each reads per-sequence cached data, which
 * is their kv_bytes, as attention's K/V is. Under the compulsory model Q is
 * that cached traffic (and the conv's weights); act_bytes (the inputs read,
 * the output written) only when `full`. M = B q tokens in the step; a state
 * is read when the step starts from a cached one (decode always, prefill
 * when has_state: s > 0) and written once.
 *
 * Gated DeltaNet (rf_op_gdn): h = Vh value heads of a dk x dv state, q/k of
 * groups = Kh key heads:
 *   decode   F = 7 Vh dk dv M         (decay 1, k^T S 2, rank-1 update 2,
 *                                      S^T q 2; the O(dk + dv) gate and
 *                                      l2-norm terms are not counted)
 *            Q = 2 Vh dk dv b_s B     (state read and written)
 *   prefill  per sequence, T tokens in chunks of C = RF_GDN_CHUNK (the last
 *            c = T mod C), per head and chunk (fla's chunked delta rule):
 *              A = K K^T 2 c^2 dk; (I + A)^-1 by forward substitution
 *              (c - 1) c (c + 1) / 3; W = T K 2 c^2 dk; U = T V 2 c^2 dv;
 *              U - W S 2 c dk dv; O = Q S + (Q K^T) V' 2 c dk dv + 2 c^2 dk
 *              + 2 c^2 dv; S += K^T V' 2 c dk dv:
 *            f(c) = 6 c dk dv + 6 c^2 dk + 4 c^2 dv + (c - 1) c (c + 1) / 3
 *            F = B Vh ((T / C) f(C) + f(T mod C))
 *            Q = (1 + has_state) Vh dk dv b_s B
 *   full act: M (2 Kh dk + 2 Vh dv + 2 Vh) b_a (q, k, v, g, beta read; o
 *            written)
 * Mamba2 SSD (rf_op_ssd): h heads of head width P (v_dim) and state N
 * (k_dim), G groups (groups) sharing B and C:
 *   decode   F = 5 h P N M            (decay 1, dt x B^T 2, h C 2)
 *            Q = 2 h P N b_s B
 *   prefill  chunks of C (the model's ssm_chunk), per chunk of c tokens:
 *            f(c) = 2 G c^2 N (C B^T) + h (2 c^2 P (the diagonal block)
 *                   + 4 c N P (chunk state, off-diagonal output) + 2 N P
 *                   (state passing))
 *            F = B ((T / C) f(C) + f(T mod C)),  Q = (1 + has_state) h P N b_s B
 *   full act: M (2 h P + 2 G N + h) b_a
 * Short causal conv (rf_op_short_conv), D channels, kernel K, depthwise:
 *   F = 2 K D M;  W = K D b_w (weight_bytes);
 *   Q = W + passes (K - 1) D b_conv B, passes 2 in decode (read, write),
 *       1 + has_state in prefill;  full act: 2 M D b_a
 * DSA lightning indexer (rf_op_indexer): every query scores every cached
 * key (the pairs of rf_attn_pairs, causal or not, no window) with
 * `heads` heads of `dim`:
 *   F = 2 heads dim pairs B;  Q = S bytes_per_key B (the index keys read)
 *   full act: M heads (dim + 1) b_a (q and the head weights read)
 */
typedef struct rf_seq_desc {
    int64_t heads;    /* GDN: Vh; Mamba2: h                              */
    int64_t k_dim;    /* GDN: dk; Mamba2: N (d_state)                     */
    int64_t v_dim;    /* GDN: dv; Mamba2: P (head_dim)                    */
    int64_t groups;   /* GDN: Kh key heads; Mamba2: G groups              */
    int64_t chunk;    /* prefill chunk C                                  */
    int64_t batch;    /* B sequences                                      */
    int64_t q_tokens; /* 1: decode; T: prefill                            */
    bool has_state;   /* prefill after a cached state (s > 0)             */
} rf_seq_desc;

rf_status rf_op_gdn(const char *name, const rf_seq_desc *d, rf_dtype state, rf_dtype a, bool full,
                    rf_op *out, rf_err *err);
rf_status rf_op_ssd(const char *name, const rf_seq_desc *d, rf_dtype state, rf_dtype a, bool full,
                    rf_op *out, rf_err *err);
rf_status rf_op_short_conv(const char *name, int64_t batch, int64_t q_tokens, int64_t channels,
                           int64_t kernel, bool has_state, rf_dtype w, rf_dtype conv, rf_dtype a,
                           bool full, rf_op *out, rf_err *err);
/* keys: batch, q_tokens, keys (S) and causal of the step's queries */
rf_status rf_op_indexer(const char *name, int64_t heads, int64_t dim, const rf_attn_desc *keys,
                        uint64_t bytes_per_key, rf_dtype a, bool full, rf_op *out, rf_err *err);
/* An ungated MLP's activation act(up) (Nemotron-H's squared ReLU, c = 2):
 * F = c M F_ff,  Q = 2 M F_ff b_a (read, write). */
rf_status rf_op_act_ungated(const char *name, int64_t m, int64_t ffn, unsigned flops_per_elem,
                            rf_dtype a, rf_op *out, rf_err *err);

/* Checked 64-bit helpers used across the core: return false on overflow. */
bool rf_mul_u64(uint64_t a, uint64_t b, uint64_t *out);
bool rf_add_u64(uint64_t a, uint64_t b, uint64_t *out);

#ifdef __cplusplus
}
#endif
#endif
