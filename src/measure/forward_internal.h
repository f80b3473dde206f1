/* forward_internal.h - the forward pass's state and shapes, shared by the
 * files of the pass (forward*.c: the shapes, the CBLAS pass, the plan, the
 * reference check, the scalar reference); not installed. */
#ifndef RF_FORWARD_INTERNAL_H
#define RF_FORWARD_INTERNAL_H

#include <stdint.h>

#include "roofline/rf_forward.h"
#include "roofline/rf_measure.h"

/* The dimensions of a pass, checked by rf__fwd_shape_of. */
typedef struct rf__fwd_shape {
    int64_t H, n_q, n_kv, dh, g, ffn, V; /* the model's                     */
    int64_t q_dim, kv_dim;               /* n_q d_h, n_kv d_h                            */
    int64_t q_tokens;                    /* query tokens per sequence: 1 or T            */
    int64_t M;                           /* rows through every linear layer: B q_tokens  */
    int64_t pos0;                        /* position of each sequence's first new token  */
    int64_t cap;                         /* cache positions per sequence: pos0 + q_tokens */
    int64_t N, B;                        /* layers run, sequences                        */
    bool bias;                           /* q/k/v biases                                 */
} rf__fwd_shape;

typedef struct rf__fwd_layer {
    float *attn_norm;    /* (H)                                          */
    float *wq, *wk, *wv; /* (n_q d_h, H), (n_kv d_h, H), (n_kv d_h, H)   */
    float *bq, *bk, *bv; /* (n_q d_h), (n_kv d_h), (n_kv d_h); NULL
                               without qkv bias                             */
    float *wo;           /* (H, n_q d_h)                                 */
    float *mlp_norm;     /* (H)                                          */
    float *wg, *wu;      /* (F_ff, H)                                    */
    float *wd;           /* (H, F_ff)                                    */
    float *k_cache;      /* (B, n_kv, cap, d_h)                          */
    float *v_cache;      /* (B, n_kv, cap, d_h)                          */
    bool sliding;        /* attends over at most `window` keys           */
} rf__fwd_layer;

struct rf_forward {
    rf_model model; /* the model, layers = L as given               */
    rf_forward_opts o;
    rf__fwd_shape d; /* dimensions                                   */
    int64_t window;  /* sliding layers keep this many keys           */

    rf__fwd_layer *layers;      /* (N)                                          */
    float *final_norm;          /* (H)                                          */
    float *lm_head;             /* (V, H); the embed gather reads its rows      */
    float *rope_cos, *rope_sin; /* (cap, d_h / 2)                           */
    int64_t *token;             /* (M) token ids                                */

    float *x;                /* (M, H) the residual stream                   */
    float *xn;               /* (M, H) normed input, then a layer's output   */
    float *q;                /* (M, n_q d_h)                                 */
    float *k, *v;            /* (M, n_kv d_h)                                */
    float *att;              /* (M, n_q d_h) attention output                */
    float *gate, *up;        /* (M, F_ff)                                    */
    float *scores;           /* (max(g, q_tokens), cap)                      */
    rf_kernel_table kernels; /* decode attention's (attn_*), chosen once   */
    char attn_kernel[48];    /* "attn_avx2_f32", "attn_scalar_f32"           */
    float *last;             /* (B, H) final-normed last positions           */
    float *logits;           /* (B, V)                                       */
};

/* Row of the step's last position for sequence b. */
static inline int64_t rf__fwd_last_row(const struct rf_forward *f, int64_t b)
{
    return b * f->d.q_tokens + f->d.q_tokens - 1;
}

/* Cache position of row r of the step. */
static inline int64_t rf__fwd_row_pos(const struct rf_forward *f, int64_t r)
{
    return f->d.pos0 + r % f->d.q_tokens;
}

/* Sequence b's KV head j at position pos in a (B, n_kv, cap, d_h) cache. */
static inline float *rf__fwd_cache_at(const struct rf_forward *f, float *cache, int64_t b,
                                      int64_t j, int64_t pos)
{
    return cache + ((b * f->d.n_kv + j) * f->d.cap + pos) * f->d.dh;
}

/* The shape of a pass of m at o, every option checked (the errors of
 * rf_forward_mem_of); forward.c. */
rf_status rf__fwd_shape_of(const rf_model *m, const rf_forward_opts *o, rf__fwd_shape *s,
                           rf_err *err);

/* The memory a pass of shape s needs, exact (RF_ERANGE on overflow). */
rf_status rf__fwd_mem_of(const rf__fwd_shape *s, rf_forward_mem *out, rf_err *err);

#define RF__FWD_RMS_EPS 1e-6
#define RF__FWD_ROPE_THETA 10000.0

/* Scalar reference of the step f just ran, from f's weights, token ids and
 * the cache positions before pos0 (which the step does not touch):
 *   x_out  (M, H)               the residual stream after N layers
 *   logits (B, V)
 *   k_new, v_new (N, M, n_kv d_h) what each layer wrote to the cache
 * Double accumulation, RoPE angles in double. RF_ENOMEM only. */
rf_status rf__forward_ref(const struct rf_forward *f, float *x_out, float *logits, float *k_new,
                          float *v_new, rf_err *err);

#endif
