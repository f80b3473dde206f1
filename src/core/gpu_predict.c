/* gpu_predict.c - kernel tables prepared, interpolated and applied to a
 * step's operators (rf_gpu.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_gpu.h"
#include "sorted.h"

static const char *const kind_names[] = {
    [RF_GPU_GEMM] = "gemm",
    [RF_GPU_ATTN_CONTEXT] = "attn_context",
    [RF_GPU_ATTN_GENERATION] = "attn_generation",
    [RF_GPU_MOE] = "moe",
    [RF_GPU_ALLREDUCE] = "allreduce",
    [RF_GPU_NCCL] = "nccl",
    [RF_GPU_MLA_CONTEXT] = "mla_context",
    [RF_GPU_MLA_GENERATION] = "mla_generation",
};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == RF_GPU_KIND_COUNT,
               "a name for every GPU table kind");

static const char *const kind_files[] = {
    [RF_GPU_GEMM] = "gemm_perf.csv",
    [RF_GPU_ATTN_CONTEXT] = "context_attention_perf.csv",
    [RF_GPU_ATTN_GENERATION] = "generation_attention_perf.csv",
    [RF_GPU_MOE] = "moe_perf.csv",
    [RF_GPU_ALLREDUCE] = "custom_allreduce_perf.csv",
    [RF_GPU_NCCL] = "../nccl/nccl_perf.csv",
    [RF_GPU_MLA_CONTEXT] = "context_mla_perf.csv",
    [RF_GPU_MLA_GENERATION] = "generation_mla_perf.csv",
};
_Static_assert(sizeof kind_files / sizeof kind_files[0] == RF_GPU_KIND_COUNT,
               "a file for every GPU table kind");

static const char *const how_names[] = {
    [RF_GPU_IN_RANGE] = "in range",
    [RF_GPU_INTERPOLATED] = "interpolated",
    [RF_GPU_EXTRAPOLATED] = "extrapolated",
    [RF_GPU_NO_TABLE] = "floor (no table)",
};
_Static_assert(sizeof how_names / sizeof how_names[0] == RF_GPU_NO_TABLE + 1,
               "a name for every provenance");

const char *rf_gpu_kind_name(rf_gpu_kind k)
{
    return (unsigned)k < RF_GPU_KIND_COUNT ? kind_names[k] : NULL;
}

const char *rf_gpu_kind_file(rf_gpu_kind k)
{
    return (unsigned)k < RF_GPU_KIND_COUNT ? kind_files[k] : NULL;
}

const char *rf_gpu_how_name(rf_gpu_how h)
{
    return (unsigned)h <= RF_GPU_NO_TABLE ? how_names[h] : NULL;
}

/* Key columns a kind, categorical first, the size axis last. */
#define C(n)                                                                                       \
    {                                                                                              \
        .name = n, .categorical = true                                                             \
    }
#define N(n)                                                                                       \
    {                                                                                              \
        .name = n                                                                                  \
    }
static const rf_gpu_col cols_gemm[] = {C("gemm_dtype"), N("n"), N("k"), N("m")};
static const rf_gpu_col cols_ctx[] = {
    C("attn_dtype"), C("kv_cache_dtype"),      C("window_size"), N("head_dim"),
    N("num_heads"),  N("num_key_value_heads"), N("batch_size"),  N("isl")};
static const rf_gpu_col cols_gen[] = {
    C("attn_dtype"), C("kv_cache_dtype"),      C("window_size"), N("head_dim"),
    N("num_heads"),  N("num_key_value_heads"), N("batch_size"),  N("step")};
static const rf_gpu_col cols_moe[] = {C("moe_dtype"),   N("hidden_size"), N("inter_size"),
                                      N("topk"),        N("num_experts"), N("moe_tp_size"),
                                      N("moe_ep_size"), N("num_tokens")};
static const rf_gpu_col cols_ar[] = {C("allreduce_dtype"), N("num_gpus"), N("message_size")};
static const rf_gpu_col cols_nccl[] = {C("op_name"), C("nccl_dtype"), N("num_gpus"),
                                       N("message_size")};
/* num_heads a GPU (the rows' tp_size follows from it: ignored) */
static const rf_gpu_col cols_mla_ctx[] = {C("mla_dtype"), C("kv_cache_dtype"), N("num_heads"),
                                          N("batch_size"), N("isl")};
static const rf_gpu_col cols_mla_gen[] = {C("mla_dtype"), C("kv_cache_dtype"), N("num_heads"),
                                          N("batch_size"), N("step")};
#undef C
#undef N

size_t rf_gpu_kind_cols(rf_gpu_kind k, rf_gpu_col *cols)
{
    static const struct {
        const rf_gpu_col *c;
        size_t n;
    } all[] = {
        [RF_GPU_GEMM] = {cols_gemm, sizeof cols_gemm / sizeof *cols_gemm},
        [RF_GPU_ATTN_CONTEXT] = {cols_ctx, sizeof cols_ctx / sizeof *cols_ctx},
        [RF_GPU_ATTN_GENERATION] = {cols_gen, sizeof cols_gen / sizeof *cols_gen},
        [RF_GPU_MOE] = {cols_moe, sizeof cols_moe / sizeof *cols_moe},
        [RF_GPU_ALLREDUCE] = {cols_ar, sizeof cols_ar / sizeof *cols_ar},
        [RF_GPU_NCCL] = {cols_nccl, sizeof cols_nccl / sizeof *cols_nccl},
        [RF_GPU_MLA_CONTEXT] = {cols_mla_ctx, sizeof cols_mla_ctx / sizeof *cols_mla_ctx},
        [RF_GPU_MLA_GENERATION] = {cols_mla_gen, sizeof cols_mla_gen / sizeof *cols_mla_gen},
    };
    _Static_assert(sizeof all / sizeof all[0] == RF_GPU_KIND_COUNT, "columns for every kind");
    if ((unsigned)k >= RF_GPU_KIND_COUNT)
        return 0;
    memcpy(cols, all[k].c, all[k].n * sizeof *cols);
    return all[k].n;
}

/* ---- floors ----------------------------------------------------------------- */

/* Bytes an element of a table's dtype name: bfloat16 / half 2, fp8 1,
 * 4-bit weights 0.5 (scales not counted); 2 for a name not known. */
static double name_bytes(const char *dt)
{
    if (!strncmp(dt, "fp8", 3) || !strcmp(dt, "int8"))
        return 1;
    if (!strcmp(dt, "int4_wo") || strstr(dt, "fp4"))
        return 0.5;
    return 2;
}

/* The math peak of a dtype name: fp8 (and fp8_block) on the fp8 tensor
 * cores, nvfp4 on fp4 ones where the GPU has them; everything else (bf16,
 * weight-only 4-bit: dequantized to bf16) on bf16's. */
static double name_peak(const rf_hw *hw, const char *dt)
{
    double p = 0;
    if (!strncmp(dt, "fp8", 3))
        p = hw->peak_flops_per_s[RF_FP8_E4M3];
    else if (!strcmp(dt, "nvfp4"))
        p = hw->peak_flops_per_s[RF_NVFP4];
    return p > 0 ? p : hw->peak_flops_per_s[RF_BF16];
}

static double roof(double flops, double bytes, double peak, double bw)
{
    double tf = flops / peak, tq = bytes / bw;
    return tf > tq ? tf : tq;
}

/* Query-key pairs of a causal prefill of q tokens after p cached, each
 * query seeing at most w keys (0: no window). */
static double causal_pairs(double q, double p, double w)
{
    if (!(w > 0))
        return q * p + q * (q + 1) / 2;
    double pairs = 0;
    /* query j (1..q) sees min(p + j, w) keys: the ramp then the flat part */
    double ramp = w - p; /* queries before the window fills */
    if (ramp > q)
        ramp = q;
    if (ramp > 0)
        pairs += ramp * p + ramp * (ramp + 1) / 2;
    else
        ramp = 0;
    return pairs + (q - ramp) * w;
}

/* The floor of kind k at numeric keys v (the column order above) with the
 * categorical values s, the context's prefix p (attention only). */
static double kind_floor(rf_gpu_kind k, const rf_hw *hw, const double *v, const char *const *s,
                         double p)
{
    double bw = hw->bw_bytes_per_s;
    switch (k) {
    case RF_GPU_GEMM: {
        double n = v[1], kk = v[2], m = v[3], b = name_bytes(s[0]);
        return roof(2 * m * n * kk, (m * kk + kk * n) * b + m * n * 2, name_peak(hw, s[0]), bw);
    }
    case RF_GPU_ATTN_CONTEXT:
    case RF_GPU_ATTN_GENERATION: {
        double d = v[3], h = v[4], kv = v[5], b = v[6], w = atof(s[2]), bk = name_bytes(s[1]);
        double q, keys, pairs;
        if (k == RF_GPU_ATTN_CONTEXT) {
            q = v[7], keys = p + q;
            pairs = causal_pairs(q, p, w);
            if (w > 0 && keys > w + q)
                keys = w + q; /* the union of its queries' windows */
        } else {
            q = 1, keys = v[7] + 1;
            if (w > 0 && keys > w)
                keys = w;
            pairs = keys;
        }
        double flops = 4 * b * h * d * pairs;
        double bytes = b * q * h * d * 2 * 2 + b * keys * 2 * kv * d * bk;
        return roof(flops, bytes, name_peak(hw, s[0]), bw);
    }
    case RF_GPU_MOE: {
        double hid = v[1], inter = v[2], topk = v[3], e = v[4], tp = v[5], ep = v[6], t = v[7];
        double local = e / ep, pairs = t * topk / ep, il = inter / tp;
        double touched = local * (1 - pow(1 - 1 / e, t * topk));
        if (touched > pairs)
            touched = pairs;
        double flops = 2 * 3 * pairs * hid * il;
        double bytes = touched * 3 * hid * il * name_bytes(s[0]) + t * hid * 2 * 2;
        return roof(flops, bytes, name_peak(hw, s[0]), bw);
    }
    case RF_GPU_ALLREDUCE:
    case RF_GPU_NCCL: {
        bool ar = k == RF_GPU_ALLREDUCE || !strcmp(s[0], "all_reduce");
        double t = v[k == RF_GPU_ALLREDUCE ? 1 : 2], n = v[k == RF_GPU_ALLREDUCE ? 2 : 3];
        double bytes = n * name_bytes(s[k == RF_GPU_ALLREDUCE ? 0 : 1]);
        double wire = (ar ? 2 : 1) * (t - 1) / t * bytes;
        double up = hw->links.up_bw_bytes_per_s > 0 ? hw->links.up_bw_bytes_per_s : bw;
        return wire / up + hw->links.up_latency_s;
    }
    case RF_GPU_MLA_CONTEXT: { /* expanded: q, k (nope + rope) and v, o a head */
        double h = v[2], b = v[3], q = v[4], keys = p + q, bk = name_bytes(s[1]);
        double dqk = RF_GPU_MLA_NOPE + RF_GPU_MLA_ROPE, dv = RF_GPU_MLA_V;
        double flops = 2 * b * h * causal_pairs(q, p, 0) * (dqk + dv);
        double bytes = b * h * (q * (dqk + dv) * 2 + keys * (dqk + dv) * bk);
        return roof(flops, bytes, name_peak(hw, s[0]), bw);
    }
    case RF_GPU_MLA_GENERATION: { /* absorbed: 576-wide keys, 512-wide values */
        double h = v[2], b = v[3], keys = v[4] + 1, bk = name_bytes(s[1]);
        double dk = RF_GPU_MLA_LATENT + RF_GPU_MLA_ROPE, dv = RF_GPU_MLA_LATENT;
        double flops = 2 * b * h * keys * (dk + dv);
        double bytes = b * keys * dk * bk + b * h * (dk + dv) * 2;
        return roof(flops, bytes, name_peak(hw, s[0]), bw);
    }
    case RF_GPU_KIND_COUNT:
        break;
    }
    return 0;
}

bool rf_gpu_mla_shape(const rf_model *m)
{
    return m->kv_lora_rank == RF_GPU_MLA_LATENT && m->qk_rope_dim == RF_GPU_MLA_ROPE &&
           m->qk_nope_dim == RF_GPU_MLA_NOPE && m->v_head_dim == RF_GPU_MLA_V;
}

/* The numeric keys and categorical names of row r. */
static void row_keys(const rf_gpu_table *t, size_t r, double *v, const char **s)
{
    for (size_t d = 0; d < t->n_keys; d++) {
        double x = t->key[r * t->n_keys + d];
        v[d] = x;
        s[d] = t->col[d].categorical ? t->col[d].values[(size_t)x] : NULL;
    }
}

double rf_gpu_row_floor_s(const rf_gpu_table *tab, const rf_hw *hw, const double *key)
{
    double v[RF_GPU_MAX_KEYS];
    const char *s[RF_GPU_MAX_KEYS];
    for (size_t d = 0; d < tab->n_keys; d++) {
        v[d] = key[d];
        s[d] = tab->col[d].categorical ? tab->col[d].values[(size_t)key[d]] : NULL;
    }
    return kind_floor(tab->kind, hw, v, s, 0);
}

/* ---- sorting and searching ------------------------------------------------ */

/* Rows a and b compared in the keys from d on. */
static int row_cmp_from(const rf_gpu_table *t, size_t a, size_t b, size_t d)
{
    const double *x = &t->key[a * t->n_keys], *y = &t->key[b * t->n_keys];
    for (; d < t->n_keys; d++)
        if (x[d] != y[d])
            return x[d] < y[d] ? -1 : 1;
    return 0;
}

static int row_cmp(const rf_gpu_table *t, size_t a, size_t b) { return row_cmp_from(t, a, b, 0); }

/* Row i's parts (keys, latency, line) from row j of the same table. */
static void row_copy(rf_gpu_table *t, size_t i, size_t j)
{
    memcpy(&t->key[i * t->n_keys], &t->key[j * t->n_keys], t->n_keys * sizeof *t->key);
    t->latency_s[i] = t->latency_s[j];
    t->line[i] = t->line[j];
}

/* Sort the rows: a bottom-up merge sort of their order (stable, so of two
 * equal rows the earlier line comes first and a repeated point names its
 * first line), then each row moved once, along the permutation's cycles.
 * The rows are parallel arrays, and core allocates nothing: ord and buf,
 * n_rows entries each, come from the caller's scratch. A heapsort of the
 * rows themselves, which moved every key of a row at each of its 2 n log n
 * swaps, was a sixth of a prediction's run. */
static void sort_rows(rf_gpu_table *t, size_t *ord, size_t *buf)
{
    size_t n = t->n_rows;
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = n - lo > w ? lo + w : n, hi = n - mid > w ? mid + w : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                buf[o++] = row_cmp(t, ord[b], ord[a]) < 0 ? ord[b++] : ord[a++];
            while (a < mid)
                buf[o++] = ord[a++];
            while (b < hi)
                buf[o++] = ord[b++];
        }
        size_t *x = ord;
        ord = buf, buf = x;
    }
    /* row i takes row ord[i]: follow each cycle from its first row, held
     * aside, and mark each place filled (ord[j] = j) */
    double key[RF_GPU_MAX_KEYS];
    for (size_t i = 0; i < n; i++) {
        if (ord[i] == i)
            continue;
        memcpy(key, &t->key[i * t->n_keys], t->n_keys * sizeof *key);
        double latency = t->latency_s[i];
        int64_t line = t->line[i];
        size_t j = i;
        for (size_t from = ord[j]; from != i; j = from, from = ord[j]) {
            row_copy(t, j, from);
            ord[j] = j;
        }
        memcpy(&t->key[j * t->n_keys], key, t->n_keys * sizeof *key);
        t->latency_s[j] = latency;
        t->line[j] = line;
        ord[j] = j;
    }
}

static double key_at(const rf_gpu_table *t, size_t r, size_t d)
{
    return t->key[r * t->n_keys + d];
}

/* First row of [lo, hi) with key d >= v (> v when after); the rows of the
 * range are equal in the keys before d, so sorted by key d. */
static size_t bound(const rf_gpu_table *t, size_t lo, size_t hi, size_t d, double v, bool after)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double k = key_at(t, mid, d);
        if (after ? k <= v : k < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ln r at q over rows [lo, hi) equal in keys before d; *how the worst
 * provenance met. False where a categorical value has no rows. */
static bool interp(const rf_gpu_table *t, size_t lo, size_t hi, size_t d, const double *q,
                   double *ln_r, rf_gpu_how *how)
{
    if (lo >= hi)
        return false;
    if (d == t->n_keys) {
        *ln_r = t->ln_ratio[lo];
        return true;
    }
    double v = q[d];
    size_t a = bound(t, lo, hi, d, v, false);
    if (a < hi && key_at(t, a, d) == v)
        return interp(t, a, bound(t, a, hi, d, v, true), d + 1, q, ln_r, how);
    if (t->col[d].categorical)
        return false;
    if (a == lo || a == hi) { /* outside: the edge's ratio */
        double e = key_at(t, a == lo ? lo : hi - 1, d);
        size_t g0 = bound(t, lo, hi, d, e, false), g1 = bound(t, lo, hi, d, e, true);
        *how = RF_GPU_EXTRAPOLATED;
        return interp(t, g0, g1, d + 1, q, ln_r, how);
    }
    double v0 = key_at(t, a - 1, d), v1 = key_at(t, a, d), r0 = 0, r1 = 0;
    size_t g0 = bound(t, lo, a, d, v0, false), g1 = bound(t, a, hi, d, v1, true);
    bool ok0 = interp(t, g0, a, d + 1, q, &r0, how);
    bool ok1 = interp(t, a, g1, d + 1, q, &r1, how);
    if (!ok0 && !ok1)
        return false;
    if (*how < RF_GPU_INTERPOLATED)
        *how = RF_GPU_INTERPOLATED;
    if (ok0 && ok1) {
        double w = (log(v) - log(v0)) / (log(v1) - log(v0));
        *ln_r = (1 - w) * r0 + w * r1;
    } else {
        *ln_r = ok0 ? r0 : r1;
        *how = RF_GPU_EXTRAPOLATED; /* one side only: the nearer measured one */
    }
    return true;
}

/* The leave-one-out errors of rows [lo, hi), equal in the keys before d,
 * appended to err[*n]: the range walked as runs of equal key d, and along a
 * numeric d each row of a run with runs on both sides predicted from the
 * rows of those runs equal to it in every key after d. Rows of a run and
 * of its neighbours are each sorted by the keys after d, so one forward
 * walk a neighbour finds every row's match: linear in the rows a key. */
static void loo_range(const rf_gpu_table *t, size_t lo, size_t hi, size_t d, double *err, size_t *n)
{
    if (d == t->n_keys)
        return;
    for (size_t a = lo, b; a < hi; a = b) {
        double v = key_at(t, a, d);
        b = bound(t, a, hi, d, v, true);
        if (!t->col[d].categorical && a > lo && b < hi) {
            /* the neighbours along d: the runs whose d is the next value
             * below (v0: rows [p, a)) or above (v1: rows [b, q)) */
            double v0 = key_at(t, a - 1, d), v1 = key_at(t, b, d);
            double w = (log(v) - log(v0)) / (log(v1) - log(v0));
            size_t p = bound(t, lo, a, d, v0, false), q = bound(t, b, hi, d, v1, true);
            for (size_t i = a, j0 = p, j1 = b; i < b; i++) {
                while (j0 < a && row_cmp_from(t, j0, i, d + 1) < 0)
                    j0++;
                while (j1 < q && row_cmp_from(t, j1, i, d + 1) < 0)
                    j1++;
                if (j0 < a && j1 < q && !row_cmp_from(t, j0, i, d + 1) &&
                    !row_cmp_from(t, j1, i, d + 1)) {
                    double pred = (1 - w) * t->ln_ratio[j0] + w * t->ln_ratio[j1];
                    err[(*n)++] = fabs(exp(pred - t->ln_ratio[i]) - 1);
                }
            }
        }
        loo_range(t, a, b, d + 1, err, n);
    }
}

/* Each row with neighbours on both sides along a numeric key predicted
 * from them alone (rf_gpu.h). */
static void leave_one_out(rf_gpu_table *t, double *err)
{
    size_t n = 0;
    loo_range(t, 0, t->n_rows, 0, err, &n);
    t->loo_n = n;
    t->loo_median = t->loo_p90 = 0;
    if (!n)
        return;
    size_t p90 = (size_t)ceil(0.9 * (double)n) - 1;
    t->loo_median = rf__median(err, n);
    rf__select(err, n, p90);
    t->loo_p90 = err[p90];
}

_Static_assert(sizeof(size_t) <= sizeof(double), "two row orders fit in the scratch's 2 n doubles");

rf_status rf_gpu_table_prepare(rf_gpu_table *t, const rf_hw *hw, double *scratch, rf_err *err)
{
    if (t->n_keys < 2) /* every kind has 3 keys or more (rf_gpu_kind_cols) */
        return rf_err_set(err, RF_EINTERNAL, "%s: %zu key columns (2 or more)", t->path, t->n_keys);
    sort_rows(t, (size_t *)scratch, (size_t *)scratch + t->n_rows);
    for (size_t i = 0; i < t->n_rows; i++) {
        if (i > 0 && row_cmp(t, i - 1, i) == 0)
            return rf_err_set(err, RF_EINVAL, "%s: line %lld repeats the point of line %lld",
                              t->path, (long long)t->line[i], (long long)t->line[i - 1]);
        double v[RF_GPU_MAX_KEYS];
        const char *s[RF_GPU_MAX_KEYS];
        row_keys(t, i, v, s);
        double f = kind_floor(t->kind, hw, v, s, 0);
        if (!(f > 0) || !isfinite(f))
            return rf_err_set(err, RF_EINVAL, "%s: line %lld: its shape has no floor", t->path,
                              (long long)t->line[i]);
        t->ln_ratio[i] = log(t->latency_s[i] / f);
    }
    leave_one_out(t, scratch);
    return RF_OK;
}

rf_status rf_gpu_predict(const rf_gpu_tables *g, rf_gpu_kind k, const double *q,
                         const char *const *cat, rf_gpu_pred *out, rf_err *err)
{
    return rf_gpu_predict_at(g, k, q, cat, 0, out, err);
}

rf_status rf_gpu_predict_at(const rf_gpu_tables *g, rf_gpu_kind k, const double *q,
                            const char *const *cat, double prefix, rf_gpu_pred *out, rf_err *err)
{
    const rf_gpu_table *t = &g->t[k];
    rf_gpu_col cols[RF_GPU_MAX_KEYS];
    size_t nk = rf_gpu_kind_cols(k, cols);
    double key[RF_GPU_MAX_KEYS];
    const char *s[RF_GPU_MAX_KEYS];
    bool found = t->present;
    memset(out, 0, sizeof *out);
    for (size_t d = 0; d < nk; d++) {
        s[d] = cols[d].categorical ? cat[d] : NULL;
        if (!cols[d].categorical) {
            if (!(q[d] >= 1) || !isfinite(q[d]))
                return rf_err_set(err, RF_EINVAL, "%s: %s (%g) must be >= 1", rf_gpu_kind_name(k),
                                  cols[d].name, q[d]);
            key[d] = q[d];
            continue;
        }
        key[d] = -1;
        for (size_t j = 0; found && j < t->col[d].n_values; j++)
            if (!strcmp(t->col[d].values[j], cat[d]))
                key[d] = (double)j;
        found = found && key[d] >= 0;
    }
    out->floor_s = kind_floor(k, &g->hw, q, s, prefix);
    double ln_r = 0;
    rf_gpu_how how = RF_GPU_IN_RANGE;
    if (found && interp(t, 0, t->n_rows, 0, key, &ln_r, &how)) {
        out->ratio = exp(ln_r);
        if (how == RF_GPU_EXTRAPOLATED && out->ratio < 1)
            out->ratio = 1; /* never below the floor outside the table */
        out->how = how;
        out->table = t;
        out->band = t->loo_median;
    } else {
        out->ratio = 1;
        out->how = RF_GPU_NO_TABLE;
    }
    out->time_s = out->ratio * out->floor_s;
    return RF_OK;
}
