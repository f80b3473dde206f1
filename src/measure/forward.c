/* forward.c - a dense decoder's forward pass on the CPU through CBLAS, each
 * operator timed on its own, then set beside its floor (rf_forward.h).
 *
 * The pass follows one decoder layer in order, as llama2.c's forward()
 * does; the operators of a layer are a table, so the step loop times each
 * one the same way and the table order is the report order. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward_internal.h"
#include "measure_internal.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_op.h"

#include <cblas.h>

static const char *const op_names[] = {
    [RF_FWD_EMBED] = "embed",
    [RF_FWD_ATTN_NORM] = "attn_norm",
    [RF_FWD_Q_PROJ] = "q_proj",
    [RF_FWD_K_PROJ] = "k_proj",
    [RF_FWD_V_PROJ] = "v_proj",
    [RF_FWD_ROPE] = "rope",
    [RF_FWD_KV_WRITE] = "kv_write",
    [RF_FWD_ATTENTION] = "attention",
    [RF_FWD_ATTENTION_SWA] = "attention_swa",
    [RF_FWD_O_PROJ] = "o_proj",
    [RF_FWD_ATTN_RESIDUAL] = "attn_residual",
    [RF_FWD_MLP_NORM] = "mlp_norm",
    [RF_FWD_GATE_PROJ] = "gate_proj",
    [RF_FWD_UP_PROJ] = "up_proj",
    [RF_FWD_ACT] = "act",
    [RF_FWD_DOWN_PROJ] = "down_proj",
    [RF_FWD_MLP_RESIDUAL] = "mlp_residual",
    [RF_FWD_FINAL_NORM] = "final_norm",
    [RF_FWD_LM_HEAD] = "lm_head",
};
_Static_assert(sizeof op_names / sizeof op_names[0] == RF_FWD_OP_COUNT,
               "one name per forward operator");

const char *rf_fwd_op_name(rf_fwd_op op)
{
    return op >= 0 && op < RF_FWD_OP_COUNT ? op_names[op] : "unknown";
}

rf_forward_opts rf_forward_opts_default(void)
{
    rf_forward_opts o = {.phase = RF_DECODE, .batch = 1, .context = 1024, .tokens = 1,
                         .layers = 2, .threads = 0, .mem_limit_bytes = 0, .warmup = 1,
                         .steps = 0, .min_time_s = 2.0, .seed = 20261130};
    return o;
}

/* ---- shapes, sizes, the memory check ------------------------------------ */


/* Threads asked for, or one per core. */
static int resolve_threads(int threads)
{
    if (threads > 0)
        return threads;
    rf_cpu cpu;
    if (rf_cpu_query(&cpu, NULL) == RF_OK && cpu.cores > 0)
        return cpu.cores;
    return 1;
}

static rf_status bad(rf_err *err, const char *what, int64_t v, const char *why)
{
    return rf_err_set(err, RF_EINVAL, "%s (%lld) %s", what, (long long)v, why);
}

static rf_status shape_of(const rf_model *m, const rf_forward_opts *o, fwd_shape *s, rf_err *err)
{
    if (m->n_experts > 0)
        return rf_err_set(err, RF_EUNAVAIL,
                          "%s is a MoE model; profile runs dense decoder layers only", m->name);
    if (m->kv_lora_rank > 0)
        return rf_err_set(err, RF_EUNAVAIL,
                          "%s uses MLA attention; profile runs dense decoder layers only",
                          m->name);
    if (m->hidden < 1 || m->n_q < 1 || m->n_kv < 1 || m->head_dim < 1 || m->ffn < 1 ||
        m->vocab < 1 || m->layers < 1)
        return rf_err_set(err, RF_EINVAL, "%s: a dimension is not positive", m->name);
    if (m->n_q % m->n_kv)
        return rf_err_set(err, RF_EINVAL, "%s: kv-heads (%lld) must divide heads (%lld)", m->name,
                          (long long)m->n_kv, (long long)m->n_q);
    if (m->head_dim % 2)
        return bad(err, "head_dim", m->head_dim, "must be even for rotary embeddings");
    if (o->batch < 1)
        return bad(err, "batch", o->batch, "must be at least 1");
    if (o->layers < 1 || o->layers > m->layers) {
        char why[64];
        snprintf(why, sizeof why, "must be in [1, %lld]", (long long)m->layers);
        return bad(err, "layers", o->layers, why);
    }
    if (o->phase == RF_DECODE && o->context < 1)
        return bad(err, "context", o->context,
                   "must be at least 1 in decode (the new token's key is one of them)");
    if (o->context < 0)
        return bad(err, "context", o->context, "must not be negative");
    if (o->phase == RF_PREFILL && o->tokens < 1)
        return bad(err, "tokens", o->tokens, "must be at least 1");
    if (o->threads < 0)
        return bad(err, "threads", o->threads, "must not be negative");
    if (o->warmup < 1)
        return bad(err, "warmup", o->warmup, "must be at least 1");
    if (o->steps < 0 || o->steps > RF_STATS_MAX) {
        char why[64];
        snprintf(why, sizeof why, "must be in [0, %d]", RF_STATS_MAX);
        return bad(err, "steps", o->steps, why);
    }

    /* Every dimension CBLAS sees is an int: refuse rather than wrap. */
    const int64_t lim = INT_MAX;
    s->H = m->hidden;
    s->n_q = m->n_q;
    s->n_kv = m->n_kv;
    s->dh = m->head_dim;
    s->g = m->n_q / m->n_kv;
    s->ffn = m->ffn;
    s->V = m->vocab;
    s->N = o->layers;
    s->B = o->batch;
    s->bias = m->qkv_bias;
    s->q_tokens = o->phase == RF_PREFILL ? o->tokens : 1;
    s->pos0 = o->phase == RF_PREFILL ? o->context : o->context - 1;
    if (s->H > lim || s->ffn > lim || s->V > lim || s->B > lim || s->q_tokens > lim ||
        s->n_q > lim / s->dh || s->pos0 > lim - s->q_tokens || s->B > lim / s->q_tokens)
        return rf_err_set(err, RF_ERANGE,
                          "a dimension of %s at batch %lld, context %lld, tokens %lld exceeds "
                          "what CBLAS takes (%d)",
                          m->name, (long long)o->batch, (long long)o->context,
                          (long long)s->q_tokens, INT_MAX);
    s->q_dim = s->n_q * s->dh;
    s->kv_dim = s->n_kv * s->dh;
    s->M = s->B * s->q_tokens;
    s->cap = s->pos0 + s->q_tokens;
    return RF_OK;
}

/* acc += a b c elements, checked. */
static bool add3(uint64_t *acc, int64_t a, int64_t b, int64_t c)
{
    uint64_t x;
    return rf_mul_u64((uint64_t)a, (uint64_t)b, &x) && rf_mul_u64(x, (uint64_t)c, &x) &&
           rf_add_u64(*acc, x, acc);
}

static rf_status mem_of(const fwd_shape *s, rf_forward_mem *out, rf_err *err)
{
    uint64_t layer = 0, head = 0, kv = 0, act = 0;
    int64_t srows = s->q_tokens > s->g ? s->q_tokens : s->g;
    bool ok = add3(&layer, 2, s->H, 1) &&                          /* two norms  */
              add3(&layer, s->q_dim + 2 * s->kv_dim, s->H, 1) &&   /* q, k, v    */
              add3(&layer, s->bias ? s->q_dim + 2 * s->kv_dim : 0, 1, 1) &&
              add3(&layer, s->H, s->q_dim, 1) &&                   /* o          */
              add3(&layer, 3, s->ffn, s->H) &&                     /* gate up down */
              add3(&head, s->V, s->H, 1) && add3(&head, s->H, 1, 1) &&
              add3(&kv, s->N, s->B, s->cap) && rf_mul_u64(kv, 2 * (uint64_t)s->kv_dim, &kv) &&
              add3(&act, 2, s->M, s->H) &&                         /* x, xn      */
              add3(&act, 2, s->M, s->q_dim + s->kv_dim) &&         /* q, att, k, v */
              add3(&act, 2, s->M, s->ffn) &&                       /* gate, up   */
              add3(&act, srows, s->cap, 1) &&                      /* scores     */
              add3(&act, s->B, s->H + s->V, 1) &&                  /* last, logits */
              add3(&act, s->cap, s->dh, 1) &&                      /* cos, sin   */
              add3(&act, 2, s->M, 1);                /* token ids: int64 = 2 floats */
    uint64_t n_layers = 0, total;
    ok = ok && rf_mul_u64(layer, 4, &layer) && rf_mul_u64(head, 4, &head) &&
         rf_mul_u64(kv, 4, &kv) && rf_mul_u64(act, 4, &act) &&
         rf_mul_u64(layer, (uint64_t)s->N, &n_layers) && rf_add_u64(n_layers, head, &total) &&
         rf_add_u64(total, kv, &total) && rf_add_u64(total, act, &total);
    if (!ok)
        return rf_err_set(err, RF_ERANGE, "the memory this pass needs overflows 64 bits");
    *out = (rf_forward_mem){.layer_bytes = layer, .head_bytes = head, .kv_bytes = kv,
                            .act_bytes = act, .total_bytes = total};
    return RF_OK;
}

rf_status rf_forward_mem_of(const rf_model *m, const rf_forward_opts *o, rf_forward_mem *out,
                            rf_err *err)
{
    fwd_shape s;
    rf_status st = shape_of(m, o, &s, err);
    return st ? st : mem_of(&s, out, err);
}

static uint64_t mem_avail(void)
{
    rf_cpu cpu;
    if (rf_cpu_query(&cpu, NULL) != RF_OK)
        return 0;
    return cpu.mem_avail_bytes;
}

/* Total bytes at these options, or UINT64_MAX when they are refused. */
static uint64_t total_at(const rf_model *m, const rf_forward_opts *o)
{
    rf_forward_mem mem;
    return rf_forward_mem_of(m, o, &mem, NULL) == RF_OK ? mem.total_bytes : UINT64_MAX;
}

/* "1.74 GiB", "250.3 KiB": binary units, for messages. */
static const char *size_text(uint64_t bytes, char *out, size_t cap)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(out, cap, u ? "%.2f %s" : "%.0f %s", v, unit[u]);
    return out;
}

rf_status rf_forward_fit(const rf_model *m, const rf_forward_opts *o, uint64_t avail_bytes,
                         rf_err *err)
{
    rf_forward_mem mem;
    rf_status s = rf_forward_mem_of(m, o, &mem, err);
    if (s)
        return s;
    if (!avail_bytes)
        avail_bytes = mem_avail();
    if (!avail_bytes)
        return rf_err_set(err, RF_EIO, "cannot read MemAvailable from /proc/meminfo");
    uint64_t usable = (uint64_t)((double)avail_bytes * RF_FORWARD_MEM_FRACTION);
    bool limited = o->mem_limit_bytes && o->mem_limit_bytes < usable;
    if (limited)
        usable = o->mem_limit_bytes;
    if (mem.total_bytes <= usable)
        return RF_OK;

    /* What would fit: fewer layers at this batch, a smaller batch at these
     * layers (the largest of each, found without allocating). */
    char hint[160] = "";
    int64_t fit_layers = 0, fit_batch = 0;
    rf_forward_opts t = *o;
    for (t.layers = o->layers - 1; t.layers >= 1 && !fit_layers; t.layers--)
        if (total_at(m, &t) <= usable)
            fit_layers = t.layers;
    t = *o;
    int64_t lo = 0, hi = o->batch; /* fits at lo (0 = none), not at hi */
    while (hi - lo > 1) {
        t.batch = lo + (hi - lo) / 2;
        if (total_at(m, &t) <= usable)
            lo = t.batch;
        else
            hi = t.batch;
    }
    fit_batch = lo;
    if (fit_layers && fit_batch)
        snprintf(hint, sizeof hint, "--layers %lld or --batch %lld would fit",
                 (long long)fit_layers, (long long)fit_batch);
    else if (fit_layers)
        snprintf(hint, sizeof hint, "--layers %lld would fit", (long long)fit_layers);
    else if (fit_batch)
        snprintf(hint, sizeof hint, "--batch %lld would fit", (long long)fit_batch);
    else
        snprintf(hint, sizeof hint, "not even --layers 1 --batch 1 fits at this context");
    char need[32], layers[32], head[32], kv[32], act[32], may[32], avail[32], why[96];
    if (limited)
        snprintf(why, sizeof why, "the limit given");
    else
        snprintf(why, sizeof why, "%.0f%% of %s available", RF_FORWARD_MEM_FRACTION * 100,
                 size_text(avail_bytes, avail, sizeof avail));
    return rf_err_set(err, RF_ENOMEM,
                      "%s needs %s (%lld layers %s, lm_head %s, KV %s, activations %s) but %s "
                      "may be used (%s); %s",
                      m->name, size_text(mem.total_bytes, need, sizeof need),
                      (long long)o->layers,
                      size_text(mem.layer_bytes * (uint64_t)o->layers, layers, sizeof layers),
                      size_text(mem.head_bytes, head, sizeof head),
                      size_text(mem.kv_bytes, kv, sizeof kv), size_text(mem.act_bytes, act, sizeof act),
                      size_text(usable, may, sizeof may), why, hint);
}

/* ---- the pass ------------------------------------------------------------ */


/* The decode attention kernels, chosen once from the kernel table: the
 * ISA o->isa names (RF_ISA) or the best the CPU has, and the reference when
 * d_h is not a multiple the variant takes. */
static rf_status choose_attention(rf_forward *f, rf_err *err)
{
    rf_cpu cpu;
    rf_status s = rf_cpu_query(&cpu, err);
    if (!s)
        s = rf_kernels_choose(&cpu, f->o.isa, &f->kernels, err);
    if (!s && f->d.dh % f->kernels.attn_dh_multiple)
        s = rf_kernels_for(&cpu, RF_ISA_SCALAR, &f->kernels, err);
    if (s)
        return s;
    rf_kernel_name(rf_isa_name(f->kernels.attn_isa), "attn", "f32", f->attn_kernel,
                   sizeof f->attn_kernel);
    return RF_OK;
}

/* Large arrays are 2 MiB aligned with huge pages asked for (fewer TLB
 * misses while streaming weights); small ones 64-byte aligned. */
static float *alloc_floats(int64_t n)
{
    size_t bytes = (size_t)n * sizeof(float);
    if (bytes >= ((size_t)8 << 20))
        return rf_alloc_untouched(bytes);
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 64) == 0 ? p : NULL;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [center - half, center + half), two values per draw. */
static void fill(float *p, int64_t n, float center, float half, uint64_t *seed)
{
    const float unit = 1.0f / 16777216.0f; /* 2^-24 */
    int64_t i = 0;
    for (; i + 1 < n; i += 2) {
        uint64_t r = splitmix(seed);
        p[i] = center + half * (2.0f * (float)(r & 0xFFFFFF) * unit - 1.0f);
        p[i + 1] = center + half * (2.0f * (float)((r >> 40) & 0xFFFFFF) * unit - 1.0f);
    }
    if (i < n)
        p[i] = center + half * (2.0f * (float)(splitmix(seed) & 0xFFFFFF) * unit - 1.0f);
}

/* A weight matrix of fan-in k: uniform in +-1/sqrt(k), so outputs stay of
 * order one through the layers (no denormals to slow anything down). */
static float *weights(int64_t rows, int64_t k, uint64_t *seed)
{
    float *w = alloc_floats(rows * k);
    if (w)
        fill(w, rows * k, 0.0f, 1.0f / sqrtf((float)k), seed);
    return w;
}

static float *filled(int64_t n, float center, float half, uint64_t *seed)
{
    float *p = alloc_floats(n);
    if (p)
        fill(p, n, center, half, seed);
    return p;
}


void rf_forward_free(rf_forward *f)
{
    if (!f)
        return;
    for (int64_t l = 0; f->layers && l < f->d.N; l++) {
        fwd_layer *L = &f->layers[l];
        float *arrays[] = {L->attn_norm, L->wq, L->wk, L->wv, L->bq, L->bk, L->bv, L->wo,
                           L->mlp_norm, L->wg, L->wu, L->wd, L->k_cache, L->v_cache};
        for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
            free(arrays[i]);
    }
    free(f->layers);
    float *arrays[] = {f->final_norm, f->lm_head, f->rope_cos, f->rope_sin, f->x, f->xn,
                       f->q, f->k, f->v, f->att, f->gate, f->up, f->scores, f->last, f->logits};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(f->token);
    free(f);
}

rf_status rf_forward_new(const rf_model *m, const rf_forward_opts *o, rf_forward **out,
                         rf_err *err)
{
    *out = NULL;
    fwd_shape s;
    rf_status st;
    if ((st = shape_of(m, o, &s, err)) || (st = rf_forward_fit(m, o, 0, err)))
        return st;
    rf_forward *f = calloc(1, sizeof *f);
    if (!f)
        return rf_err_set(err, RF_ENOMEM, "out of memory");
    f->model = *m;
    f->o = *o;
    f->o.threads = resolve_threads(o->threads);
    f->d = s;
    f->window = m->window;
    if ((st = choose_attention(f, err))) {
        rf_forward_free(f);
        return st;
    }

    uint64_t seed = o->seed;
    int64_t H = s.H, B = s.B, M = s.M;
    int64_t cache = B * s.n_kv * s.cap * s.dh; /* < 2^63: mem_of checked it */
    f->layers = calloc((size_t)s.N, sizeof *f->layers);
    if (!f->layers)
        goto nomem;
    for (int64_t l = 0; l < s.N; l++) {
        fwd_layer *L = &f->layers[l];
        L->sliding = m->window > 0 && m->sliding[l];
        if (!(L->attn_norm = filled(H, 1.0f, 0.1f, &seed)) ||
            !(L->wq = weights(s.q_dim, H, &seed)) || !(L->wk = weights(s.kv_dim, H, &seed)) ||
            !(L->wv = weights(s.kv_dim, H, &seed)) || !(L->wo = weights(H, s.q_dim, &seed)) ||
            !(L->mlp_norm = filled(H, 1.0f, 0.1f, &seed)) ||
            !(L->wg = weights(s.ffn, H, &seed)) || !(L->wu = weights(s.ffn, H, &seed)) ||
            !(L->wd = weights(H, s.ffn, &seed)) ||
            !(L->k_cache = filled(cache, 0.0f, 1.0f, &seed)) ||
            !(L->v_cache = filled(cache, 0.0f, 1.0f, &seed)))
            goto nomem;
        if (s.bias && (!(L->bq = filled(s.q_dim, 0.0f, 0.1f, &seed)) ||
                       !(L->bk = filled(s.kv_dim, 0.0f, 0.1f, &seed)) ||
                       !(L->bv = filled(s.kv_dim, 0.0f, 0.1f, &seed))))
            goto nomem;
    }
    int64_t srows = s.q_tokens > s.g ? s.q_tokens : s.g;
    if (!(f->final_norm = filled(H, 1.0f, 0.1f, &seed)) ||
        !(f->lm_head = weights(s.V, H, &seed)) || !(f->rope_cos = alloc_floats(s.cap * s.dh / 2)) ||
        !(f->rope_sin = alloc_floats(s.cap * s.dh / 2)) || !(f->x = alloc_floats(M * H)) ||
        !(f->xn = alloc_floats(M * H)) || !(f->q = alloc_floats(M * s.q_dim)) ||
        !(f->k = alloc_floats(M * s.kv_dim)) || !(f->v = alloc_floats(M * s.kv_dim)) ||
        !(f->att = alloc_floats(M * s.q_dim)) || !(f->gate = alloc_floats(M * s.ffn)) ||
        !(f->up = alloc_floats(M * s.ffn)) || !(f->scores = alloc_floats(srows * s.cap)) ||
        !(f->last = alloc_floats(B * H)) || !(f->logits = alloc_floats(B * s.V)) ||
        !(f->token = malloc((size_t)M * sizeof *f->token)))
        goto nomem;
    /* RoPE tables, as engines precompute them: angle = pos theta^(-2i/d_h). */
    int64_t half = s.dh / 2;
    for (int64_t p = 0; p < s.cap; p++)
        for (int64_t i = 0; i < half; i++) {
            double a = (double)p * pow(FWD_ROPE_THETA, -2.0 * (double)i / (double)s.dh);
            f->rope_cos[p * half + i] = (float)cos(a);
            f->rope_sin[p * half + i] = (float)sin(a);
        }
    for (int64_t r = 0; r < M; r++)
        f->token[r] = (int64_t)(splitmix(&seed) % (uint64_t)s.V);
    *out = f;
    return RF_OK;
nomem:
    rf_forward_free(f);
    return rf_err_set(err, RF_ENOMEM, "allocation failed while building %lld layers of %s",
                      (long long)s.N, m->name);
}


/* Y[M, N] = X[M, K] W^T (+ bias), W (N, K) row-major. */
static void linear(float *y, const float *x, const float *w, const float *bias, int64_t M,
                   int64_t K, int64_t N)
{
    float beta = 0.0f;
    if (bias) {
        for (int64_t r = 0; r < M; r++)
            memcpy(y + r * N, bias, (size_t)N * sizeof *y);
        beta = 1.0f;
    }
    if (M == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)N, (int)K, 1.0f, w, (int)K, x, 1, beta, y,
                    1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0f, x,
                    (int)K, w, (int)K, beta, y, (int)N);
}

static void rmsnorm(float *y, const float *x, const float *gamma, int64_t rows, int64_t H)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * H;
        float *yr = y + r * H;
        float ss = 0.0f;
        for (int64_t i = 0; i < H; i++)
            ss += xr[i] * xr[i];
        float inv = 1.0f / sqrtf(ss / (float)H + (float)FWD_RMS_EPS);
        for (int64_t i = 0; i < H; i++)
            yr[i] = xr[i] * inv * gamma[i];
    }
}

/* Rotate-half RoPE of `heads` heads of one row in place. */
static void rope_row(float *v, int64_t heads, int64_t dh, const float *c, const float *s)
{
    int64_t half = dh / 2;
    for (int64_t h = 0; h < heads; h++) {
        float *x = v + h * dh;
        for (int64_t i = 0; i < half; i++) {
            float a = x[i], b = x[i + half];
            x[i] = a * c[i] - b * s[i];
            x[i + half] = b * c[i] + a * s[i];
        }
    }
}

static int64_t row_pos(const rf_forward *f, int64_t r)
{
    return f->d.pos0 + r % f->d.q_tokens;
}

static float *cache_at(const rf_forward *f, float *cache, int64_t b, int64_t j, int64_t pos)
{
    return cache + ((b * f->d.n_kv + j) * f->d.cap + pos) * f->d.dh;
}

/* Softmax of a row over [lo, hi) of n; the rest set to 0. */
static void softmax(float *x, int64_t n, int64_t lo, int64_t hi)
{
    float mx = -INFINITY, sum = 0.0f;
    for (int64_t i = lo; i < hi; i++)
        mx = x[i] > mx ? x[i] : mx;
    for (int64_t i = lo; i < hi; i++) {
        x[i] = expf(x[i] - mx);
        sum += x[i];
    }
    float inv = 1.0f / sum;
    for (int64_t i = 0; i < lo; i++)
        x[i] = 0.0f;
    for (int64_t i = lo; i < hi; i++)
        x[i] *= inv;
    for (int64_t i = hi; i < n; i++)
        x[i] = 0.0f;
}

/* Decode attention of sequence b and KV head j: the g query heads that
 * share the head score each block of keys while it is in L1 (K read once),
 * softmax, then V read once the same way (attn_kernels.h). */
static void decode_head(rf_forward *f, const fwd_layer *L, int64_t b, int64_t j, float *sc)
{
    int64_t dh = f->d.dh, g = f->d.g, S = f->d.cap;
    int64_t k0 = L->sliding && S > f->window ? S - f->window : 0, nk = S - k0;
    const float *K = cache_at(f, L->k_cache, b, j, k0);
    const float *V = cache_at(f, L->v_cache, b, j, k0);
    const float *q = f->q + b * f->d.q_dim + j * g * dh;
    float *out = f->att + b * f->d.q_dim + j * g * dh;
    f->kernels.attn_scores_f32(q, K, g, nk, dh, 1.0f / sqrtf((float)dh), sc);
    for (int64_t h = 0; h < g; h++)
        softmax(sc + h * nk, nk, 0, nk);
    f->kernels.attn_values_f32(sc, V, g, nk, dh, out);
}

/* Decode: every (sequence, KV head) pair on the calling thread. Not spread
 * over more threads: after each call OpenBLAS leaves its worker threads
 * spinning for a while, and a thread of ours on their core ran slower than
 * one thread alone (measured here: 4.3 ms against 3.0 ms a layer). */
static void attention_decode(rf_forward *f, fwd_layer *L)
{
    for (int64_t b = 0; b < f->o.batch; b++)
        for (int64_t j = 0; j < f->d.n_kv; j++)
            decode_head(f, L, b, j, f->scores);
}

/* Prefill: per sequence and query head, the T x S scores (one head at a
 * time, so they stay in cache), a causal (and window) mask, then V. */
static void attention_prefill(rf_forward *f, fwd_layer *L)
{
    int64_t dh = f->d.dh, T = f->d.q_tokens, S = f->d.cap;
    int64_t k0 = 0;
    if (L->sliding && f->d.pos0 + 1 > f->window)
        k0 = f->d.pos0 + 1 - f->window; /* no query sees a key before this */
    int64_t nk = S - k0;
    float scale = 1.0f / sqrtf((float)dh);
    for (int64_t b = 0; b < f->o.batch; b++)
        for (int64_t h = 0; h < f->d.n_q; h++) {
            int64_t j = h / f->d.g;
            const float *K = cache_at(f, L->k_cache, b, j, k0);
            const float *V = cache_at(f, L->v_cache, b, j, k0);
            const float *q = f->q + b * T * f->d.q_dim + h * dh;
            float *out = f->att + b * T * f->d.q_dim + h * dh;
            float *sc = f->scores;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)nk, (int)dh, scale,
                        q, (int)f->d.q_dim, K, (int)dh, 0.0f, sc, (int)nk);
            for (int64_t t = 0; t < T; t++) {
                int64_t p = f->d.pos0 + t; /* this query's position */
                int64_t lo = L->sliding && p + 1 > f->window ? p + 1 - f->window : 0;
                softmax(sc + t * nk, nk, lo - k0 > 0 ? lo - k0 : 0, p + 1 - k0);
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)dh, (int)nk, 1.0f,
                        sc, (int)nk, V, (int)dh, 0.0f, out, (int)f->d.q_dim);
        }
}

/* ---- the operators of one layer, in order -------------------------------- */

typedef void (*layer_fn)(rf_forward *f, fwd_layer *L);

static void op_attn_norm(rf_forward *f, fwd_layer *L)
{
    rmsnorm(f->xn, f->x, L->attn_norm, f->d.M, f->d.H);
}

static void op_q_proj(rf_forward *f, fwd_layer *L)
{
    linear(f->q, f->xn, L->wq, L->bq, f->d.M, f->d.H, f->d.q_dim);
}

static void op_k_proj(rf_forward *f, fwd_layer *L)
{
    linear(f->k, f->xn, L->wk, L->bk, f->d.M, f->d.H, f->d.kv_dim);
}

static void op_v_proj(rf_forward *f, fwd_layer *L)
{
    linear(f->v, f->xn, L->wv, L->bv, f->d.M, f->d.H, f->d.kv_dim);
}

static void op_rope(rf_forward *f, fwd_layer *L)
{
    (void)L;
    int64_t half = f->d.dh / 2;
    for (int64_t r = 0; r < f->d.M; r++) {
        int64_t p = row_pos(f, r);
        const float *c = f->rope_cos + p * half, *s = f->rope_sin + p * half;
        rope_row(f->q + r * f->d.q_dim, f->d.n_q, f->d.dh, c, s);
        rope_row(f->k + r * f->d.kv_dim, f->d.n_kv, f->d.dh, c, s);
    }
}

static void op_kv_write(rf_forward *f, fwd_layer *L)
{
    size_t row = (size_t)f->d.dh * sizeof(float);
    for (int64_t r = 0; r < f->d.M; r++) {
        int64_t b = r / f->d.q_tokens, p = row_pos(f, r);
        for (int64_t j = 0; j < f->d.n_kv; j++) {
            memcpy(cache_at(f, L->k_cache, b, j, p), f->k + r * f->d.kv_dim + j * f->d.dh, row);
            memcpy(cache_at(f, L->v_cache, b, j, p), f->v + r * f->d.kv_dim + j * f->d.dh, row);
        }
    }
}

static void op_attention(rf_forward *f, fwd_layer *L)
{
    if (f->o.phase == RF_DECODE)
        attention_decode(f, L);
    else
        attention_prefill(f, L);
}

static void op_o_proj(rf_forward *f, fwd_layer *L)
{
    linear(f->xn, f->att, L->wo, NULL, f->d.M, f->d.q_dim, f->d.H);
}

static void residual(rf_forward *f)
{
    int64_t n = f->d.M * f->d.H;
    for (int64_t i = 0; i < n; i++)
        f->x[i] += f->xn[i];
}

static void op_residual(rf_forward *f, fwd_layer *L)
{
    (void)L;
    residual(f);
}

static void op_mlp_norm(rf_forward *f, fwd_layer *L)
{
    rmsnorm(f->xn, f->x, L->mlp_norm, f->d.M, f->d.H);
}

static void op_gate_proj(rf_forward *f, fwd_layer *L)
{
    linear(f->gate, f->xn, L->wg, NULL, f->d.M, f->d.H, f->d.ffn);
}

static void op_up_proj(rf_forward *f, fwd_layer *L)
{
    linear(f->up, f->xn, L->wu, NULL, f->d.M, f->d.H, f->d.ffn);
}

static void op_act(rf_forward *f, fwd_layer *L)
{
    (void)L;
    int64_t n = f->d.M * f->d.ffn;
    for (int64_t i = 0; i < n; i++) {
        float g = f->gate[i];
        f->gate[i] = g / (1.0f + expf(-g)) * f->up[i];
    }
}

static void op_down_proj(rf_forward *f, fwd_layer *L)
{
    linear(f->xn, f->gate, L->wd, NULL, f->d.M, f->d.ffn, f->d.H);
}

static const struct {
    rf_fwd_op id;
    layer_fn fn;
} layer_ops[] = {
    {RF_FWD_ATTN_NORM, op_attn_norm},       {RF_FWD_Q_PROJ, op_q_proj},
    {RF_FWD_K_PROJ, op_k_proj},             {RF_FWD_V_PROJ, op_v_proj},
    {RF_FWD_ROPE, op_rope},                 {RF_FWD_KV_WRITE, op_kv_write},
    {RF_FWD_ATTENTION, op_attention},       {RF_FWD_O_PROJ, op_o_proj},
    {RF_FWD_ATTN_RESIDUAL, op_residual},    {RF_FWD_MLP_NORM, op_mlp_norm},
    {RF_FWD_GATE_PROJ, op_gate_proj},       {RF_FWD_UP_PROJ, op_up_proj},
    {RF_FWD_ACT, op_act},                   {RF_FWD_DOWN_PROJ, op_down_proj},
    {RF_FWD_MLP_RESIDUAL, op_residual},
};

static void embed(rf_forward *f)
{
    for (int64_t r = 0; r < f->d.M; r++)
        memcpy(f->x + r * f->d.H, f->lm_head + f->token[r] * f->d.H, (size_t)f->d.H * sizeof(float));
}

static void final_norm(rf_forward *f)
{
    for (int64_t b = 0; b < f->o.batch; b++)
        rmsnorm(f->last + b * f->d.H, f->x + fwd_last_row(f, b) * f->d.H, f->final_norm, 1, f->d.H);
}

static void lm_head(rf_forward *f)
{
    linear(f->logits, f->last, f->lm_head, NULL, f->o.batch, f->d.H, f->d.V);
}


rf_status rf_forward_step(rf_forward *f, rf_forward_times *t, rf_err *err)
{
    memset(t, 0, sizeof *t);
    openblas_set_num_threads(f->o.threads);
    double start = rf_time_now_s(), t0 = start, t1;
    embed(f);
    t1 = rf_time_now_s();
    t->op_s[RF_FWD_EMBED] = t1 - t0;
    double layers_start = t1;
    for (int64_t l = 0; l < f->d.N; l++) {
        fwd_layer *L = &f->layers[l];
        for (size_t i = 0; i < sizeof layer_ops / sizeof layer_ops[0]; i++) {
            rf_fwd_op id = layer_ops[i].id;
            if (id == RF_FWD_ATTENTION && L->sliding)
                id = RF_FWD_ATTENTION_SWA;
            t0 = rf_time_now_s();
            layer_ops[i].fn(f, L);
            t1 = rf_time_now_s();
            t->op_s[id] += t1 - t0;
        }
    }
    double layers_end = t1;
    t0 = rf_time_now_s();
    final_norm(f);
    t1 = rf_time_now_s();
    t->op_s[RF_FWD_FINAL_NORM] = t1 - t0;
    t0 = t1;
    lm_head(f);
    t1 = rf_time_now_s();
    t->op_s[RF_FWD_LM_HEAD] = t1 - t0;
    t->layers_s = layers_end - layers_start;
    t->step_s = t1 - start;
    t->head_s = t->step_s - t->layers_s;
    /* A NaN would mean the pass computed garbage; every logit is consumed
     * here, so no part of the work can be dropped either. */
    float sum = 0.0f;
    for (int64_t i = 0; i < f->o.batch * f->d.V; i++)
        sum += f->logits[i];
    if (!isfinite(sum))
        return rf_err_set(err, RF_EINTERNAL, "the forward pass produced a non-finite logit");
    return RF_OK;
}

/* ---- the reference check -------------------------------------------------- */

static double max_abs(const float *v, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fabs((double)v[i]) > m ? fabs((double)v[i]) : m;
    return m;
}

/* max|a - b| / max(1, max|b|) */
static double rel_err(const float *a, const float *b, int64_t n)
{
    double d = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        d = e > d || isnan(e) ? e : d;
    }
    double scale = max_abs(b, n);
    return d / (scale > 1 ? scale : 1);
}

/* One case: build, step, compare with the reference. */
static rf_status check_case(const rf_model *tiny, const rf_forward_opts *o, double *worst,
                            rf_err *err)
{
    rf_forward *f = NULL;
    float *x = NULL, *logits = NULL, *kn = NULL, *vn = NULL, *got_k = NULL, *got_v = NULL;
    rf_forward_times t;
    rf_status s = rf_forward_new(tiny, o, &f, err);
    if (s)
        return s;
    if ((s = rf_forward_step(f, &t, err)))
        goto done;
    int64_t M = f->d.M, N = f->d.N, kvd = f->d.kv_dim;
    x = malloc((size_t)(M * f->d.H) * sizeof *x);
    logits = malloc((size_t)(f->o.batch * f->d.V) * sizeof *logits);
    kn = malloc((size_t)(N * M * kvd) * sizeof *kn);
    vn = malloc((size_t)(N * M * kvd) * sizeof *vn);
    got_k = malloc((size_t)(N * M * kvd) * sizeof *got_k);
    got_v = malloc((size_t)(N * M * kvd) * sizeof *got_v);
    if (!x || !logits || !kn || !vn || !got_k || !got_v) {
        s = rf_err_set(err, RF_ENOMEM, "out of memory for the reference check");
        goto done;
    }
    if ((s = rf__forward_ref(f, x, logits, kn, vn, err)))
        goto done;
    for (int64_t l = 0; l < N; l++)
        for (int64_t r = 0; r < M; r++)
            for (int64_t j = 0; j < f->d.n_kv; j++) {
                size_t at = (size_t)((l * M + r) * kvd + j * f->d.dh), row = (size_t)f->d.dh * 4;
                int64_t b = r / f->d.q_tokens, p = row_pos(f, r);
                memcpy(got_k + at, cache_at(f, f->layers[l].k_cache, b, j, p), row);
                memcpy(got_v + at, cache_at(f, f->layers[l].v_cache, b, j, p), row);
            }
    const struct {
        const char *what;
        double e;
    } cmp[] = {
        {"hidden states", rel_err(f->x, x, M * f->d.H)},
        {"logits", rel_err(f->logits, logits, f->o.batch * f->d.V)},
        {"cached K", rel_err(got_k, kn, N * M * kvd)},
        {"cached V", rel_err(got_v, vn, N * M * kvd)},
    };
    for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++) {
        if (!(cmp[i].e <= RF_FORWARD_TOLERANCE)) {
            s = rf_err_set(err, RF_EINTERNAL,
                           "forward pass differs from the scalar reference: %s off by %.3g "
                           "(tolerance %g) at %s B=%lld S=%lld T=%lld",
                           cmp[i].what, cmp[i].e, RF_FORWARD_TOLERANCE,
                           o->phase == RF_DECODE ? "decode" : "prefill", (long long)o->batch,
                           (long long)o->context, (long long)f->d.q_tokens);
            goto done;
        }
        if (cmp[i].e > *worst)
            *worst = cmp[i].e;
    }
done:
    free(x);
    free(logits);
    free(kn);
    free(vn);
    free(got_k);
    free(got_v);
    rf_forward_free(f);
    return s;
}

rf_status rf_forward_check(const rf_model *m, const char *isa, double *max_err, rf_err *err)
{
    *max_err = 0;
    fwd_shape s;
    rf_forward_opts probe = rf_forward_opts_default();
    probe.layers = 1;
    rf_status st = shape_of(m, &probe, &s, err);
    if (st)
        return st;
    rf_model tiny;
    memset(&tiny, 0, sizeof tiny);
    snprintf(tiny.name, sizeof tiny.name, "tiny check of %.60s", m->name);
    tiny.n_kv = m->n_kv < 2 ? m->n_kv : 2;
    tiny.n_q = s.g * tiny.n_kv;
    tiny.head_dim = 8;
    tiny.hidden = 40;
    tiny.ffn = 56;
    tiny.vocab = 50;
    tiny.layers = 2;
    tiny.qkv_bias = m->qkv_bias;
    if (m->window > 0) { /* a window shorter than the contexts below */
        tiny.window = 3;
        for (int l = 0; l < 2 && l < m->layers; l++)
            tiny.sliding[l] = m->sliding[l];
    }
    const struct {
        rf_phase phase;
        int64_t batch, context, tokens;
    } cases[] = {
        {RF_DECODE, 1, 5, 1},  /* cblas_sgemv everywhere                */
        {RF_DECODE, 3, 6, 1},  /* cblas_sgemm, one query per sequence   */
        {RF_PREFILL, 2, 3, 4}, /* causal over a cached prefix           */
        {RF_PREFILL, 1, 0, 1}, /* one token, nothing cached             */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rf_forward_opts o = rf_forward_opts_default();
        o.phase = cases[i].phase;
        o.batch = cases[i].batch;
        o.context = cases[i].context;
        o.tokens = cases[i].tokens;
        o.layers = 2;
        o.isa = isa;
        o.seed += i;
        if ((st = check_case(&tiny, &o, max_err, err)))
            return st;
    }
    return RF_OK;
}

/* ---- the plan: analytic figures and floors ---------------------------- */

/* Figures of the element-wise operators, one instance: rf_op.h's formulas
 * with every element fp32; the head's final norm runs on the B last rows. */
static rf_status elementwise(rf_fwd_op id, const fwd_shape *s, rf_forward_op *op, rf_err *err)
{
    const rf_dtype f32 = rf_dtype_of(RF_FP32);
    const char *name = op_names[id];
    rf_op e;
    rf_status st;
    switch (id) {
    case RF_FWD_ATTN_NORM:
    case RF_FWD_MLP_NORM:
        st = rf_op_norm(name, s->M, s->H, f32, f32, &e, err);
        break;
    case RF_FWD_FINAL_NORM:
        st = rf_op_norm(name, s->B, s->H, f32, f32, &e, err);
        break;
    case RF_FWD_ROPE:
        st = rf_op_rope(name, s->M, s->n_q + s->n_kv, s->dh, f32, &e, err);
        break;
    case RF_FWD_KV_WRITE:
        st = rf_op_kv_write(name, s->M, s->n_kv, s->dh, f32, f32, &e, err);
        break;
    case RF_FWD_ATTN_RESIDUAL:
    case RF_FWD_MLP_RESIDUAL:
        st = rf_op_residual(name, s->M, s->H, f32, &e, err);
        break;
    case RF_FWD_ACT:
        st = rf_op_act(name, s->M, s->ffn, RF_ACT_SILU_MUL_FLOPS_AS_RUN, f32, &e, err);
        break;
    default:
        return rf_err_set(err, RF_EINTERNAL, "%s is not an element-wise operator", name);
    }
    if (st)
        return st;
    op->m = e.m;
    op->k = e.k;
    op->n = e.n;
    op->flops = e.flops;
    op->bytes = e.bytes;
    return RF_OK;
}

/* The operators rf_step_compute has, by the same name. */
static bool in_rf_step(rf_fwd_op id)
{
    switch (id) {
    case RF_FWD_EMBED:
    case RF_FWD_Q_PROJ:
    case RF_FWD_K_PROJ:
    case RF_FWD_V_PROJ:
    case RF_FWD_ATTENTION:
    case RF_FWD_ATTENTION_SWA:
    case RF_FWD_O_PROJ:
    case RF_FWD_GATE_PROJ:
    case RF_FWD_UP_PROJ:
    case RF_FWD_DOWN_PROJ:
    case RF_FWD_LM_HEAD:
        return true;
    default:
        return false;
    }
}

static const rf_op *step_op(const rf_step *st, const char *name)
{
    for (size_t i = 0; i < st->n_ops; i++)
        if (!strcmp(st->ops[i].name, name))
            return &st->ops[i];
    return NULL;
}

rf_status rf_forward_plan(const rf_model *m, const rf_forward_opts *o, const rf_roof *roof,
                          rf_forward_run *run, rf_err *err)
{
    fwd_shape s;
    rf_status st;
    memset(run, 0, sizeof *run);
    if ((st = shape_of(m, o, &s, err)) || (st = mem_of(&s, &run->mem, err)))
        return st;
    run->opts = *o;
    run->roof = *roof;
    run->model_layers = m->layers;

    rf_step_opts so = rf_step_opts_default();
    so.phase = o->phase;
    so.batch = o->batch;
    so.context = o->context;
    so.tokens = o->tokens;
    so.w = so.a = so.kv = rf_dtype_of(RF_FP32);
    rf_model part = *m;
    part.layers = o->layers;
    rf_step step; /* ~5 KB */
    if ((st = rf_step_compute(m, &so, roof, &step, err)))
        return st;
    run->model_floor_s = step.floor_s;
    run->model_floor_sum_of_max_s = step.floor_sum_of_max_s;
    if ((st = rf_step_compute(&part, &so, roof, &step, err)))
        return st;
    run->floor_s = step.floor_s;
    run->floor_sum_of_max_s = step.floor_sum_of_max_s;

    uint64_t n_layers = (uint64_t)o->layers;
    for (int id = 0; id < RF_FWD_OP_COUNT; id++) {
        rf_forward_op *op = &run->ops[run->n_ops];
        memset(op, 0, sizeof *op);
        op->id = (rf_fwd_op)id;
        op->name = op_names[id];
        const rf_op *a = step_op(&step, op->name);
        if (in_rf_step(op->id) && a) {
            op->m = a->m;
            op->k = a->k;
            op->n = a->n;
            op->count = a->count;
            op->flops = a->flops;
            op->bytes = a->bytes;
            op->in_step_floor = true;
        } else if (id == RF_FWD_ATTENTION || id == RF_FWD_ATTENTION_SWA) {
            continue; /* no layer of this kind among the N */
        } else if (in_rf_step(op->id)) {
            return rf_err_set(err, RF_EINTERNAL, "rf_step has no '%s' operator", op->name);
        } else {
            if ((st = elementwise((rf_fwd_op)id, &s, op, err)))
                return st;
            op->count = id == RF_FWD_FINAL_NORM ? 1 : n_layers;
        }
        rf_point p = rf_roof_place(roof, (double)op->flops, (double)op->bytes);
        op->intensity = p.intensity;
        op->floor_s = p.floor_s;
        op->bound = p.regime;
        run->ops_sum_of_max_s += (double)op->count * p.floor_s;
        run->n_ops++;
    }
    return RF_OK;
}

/* ---- statistics over the timed steps -------------------------------------- */

rf_status rf_forward_summarize(rf_forward_run *run, const rf_forward_times *steps, size_t n,
                               rf_err *err)
{
    if (n < 1 || n > RF_STATS_MAX)
        return rf_err_set(err, RF_EINVAL, "%zu timed steps (1 to %d)", n, RF_STATS_MAX);
    double v[RF_STATS_MAX];
    rf_stats st;
    rf_status s;
    for (size_t i = 0; i < run->n_ops; i++) {
        rf_forward_op *op = &run->ops[i];
        for (size_t k = 0; k < n; k++)
            v[k] = steps[k].op_s[op->id] / (double)op->count;
        if ((s = rf_stats_of(v, n, &st, err)))
            return rf_err_prefix(err, s, "%s", op->name);
        op->measured_s = st.median;
        op->min_s = st.min;
        op->max_s = st.max;
        bool timed = st.median > 0;
        op->flops_per_s = timed ? (double)op->flops / st.median : NAN;
        op->bytes_per_s = timed ? (double)op->bytes / st.median : NAN;
        op->efficiency = timed ? op->floor_s / st.median : NAN;
        op->residual_s = (double)op->count * (st.median - op->floor_s);
    }
    for (size_t k = 0; k < n; k++)
        v[k] = steps[k].step_s;
    if ((s = rf_stats_of(v, n, &st, err)))
        return rf_err_prefix(err, s, "step");
    run->measured_s = st.median;
    run->measured_min_s = st.min;
    run->measured_max_s = st.max;
    run->residual_s = st.median - run->floor_s;
    for (size_t k = 0; k < n; k++)
        v[k] = steps[k].layers_s;
    if ((s = rf_stats_of(v, n, &st, err)))
        return rf_err_prefix(err, s, "layers");
    run->layers_s = st.median;
    for (size_t k = 0; k < n; k++)
        v[k] = steps[k].head_s;
    if ((s = rf_stats_of(v, n, &st, err)))
        return rf_err_prefix(err, s, "head");
    run->head_s = st.median;
    run->estimated_model_s = run->opts.layers > 0
                                 ? run->layers_s * (double)run->model_layers /
                                           (double)run->opts.layers +
                                       run->head_s
                                 : NAN;
    double new_tokens = (double)run->opts.batch *
                        (run->opts.phase == RF_PREFILL ? (double)run->opts.tokens : 1.0);
    run->estimated_tokens_per_s = new_tokens / run->estimated_model_s;

    /* The residual's owners: operators with the largest positive residual. */
    run->n_owners = 0;
    for (size_t slot = 0; slot < RF_FORWARD_OWNERS; slot++) {
        size_t best = run->n_ops;
        for (size_t i = 0; i < run->n_ops; i++) {
            bool taken = false;
            for (size_t k = 0; k < run->n_owners; k++)
                taken |= run->owners[k] == i;
            if (!taken && run->ops[i].residual_s > 0 &&
                (best == run->n_ops || run->ops[i].residual_s > run->ops[best].residual_s))
                best = i;
        }
        if (best == run->n_ops)
            break;
        run->owner_share[run->n_owners] =
            run->residual_s > 0 ? run->ops[best].residual_s / run->residual_s : NAN;
        run->owners[run->n_owners++] = best;
    }
    run->opts.steps = (int)n;
    return RF_OK;
}

/* ---- the whole profile ---------------------------------------------------- */

#define MIN_STEPS 3
#define MAX_STEPS 20

static void progress(const rf_forward_opts *o, int done, int total, const char *what)
{
    if (o->progress)
        o->progress(o->progress_user, done, total, what);
}

rf_status rf_forward_profile(const rf_model *m, const rf_forward_opts *o, const rf_roof *roof,
                             rf_forward_run *run, rf_err *err)
{
    rf_forward *f = NULL;
    rf_forward_times *t = NULL;
    rf_status s;
    double check_err = 0;
    if ((s = rf_forward_plan(m, o, roof, run, err)))
        return s;
    progress(o, 0, 3, "checking the pass against the scalar reference");
    if ((s = rf_forward_check(m, o->isa, &check_err, err)))
        return s;
    run->check_max_err = check_err;
    progress(o, 1, 3, "filling random weights and the KV cache");
    if ((s = rf_forward_new(m, o, &f, err)))
        return s;
    run->opts.threads = f->o.threads;
    snprintf(run->attn_kernel, sizeof run->attn_kernel, "%s", f->attn_kernel);
    t = calloc(RF_STATS_MAX, sizeof *t);
    if (!t) {
        s = rf_err_set(err, RF_ENOMEM, "out of memory");
        goto done;
    }
    progress(o, 2, 3, "warm-up");
    for (int w = 0; w < o->warmup; w++)
        if ((s = rf_forward_step(f, &t[0], err)))
            goto done;
    int n = o->steps;
    if (n == 0) { /* enough steps to fill min_time_s, within [3, 20] */
        double per = t[0].step_s > 0 ? t[0].step_s : 1e-3;
        double want = ceil(o->min_time_s / per);
        n = want < MIN_STEPS ? MIN_STEPS : want > MAX_STEPS ? MAX_STEPS : (int)want;
    }
    for (int k = 0; k < n; k++) {
        progress(o, k, n, "timed step");
        if ((s = rf_forward_step(f, &t[k], err)))
            goto done;
    }
    s = rf_forward_summarize(run, t, (size_t)n, err);
done:
    free(t);
    rf_forward_free(f);
    return s;
}
