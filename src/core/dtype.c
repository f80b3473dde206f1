/* dtype.c - element types: names, bits, exact byte counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_dtype.h"

static const struct {
    const char *name;
    uint32_t bits;
} kinds[] = {
    [RF_FP64] = {"fp64", 64},        [RF_FP32] = {"fp32", 32},  [RF_TF32] = {"tf32", 32},
    [RF_BF16] = {"bf16", 16},        [RF_FP16] = {"fp16", 16},  [RF_FP8_E4M3] = {"fp8_e4m3", 8},
    [RF_FP8_E5M2] = {"fp8_e5m2", 8}, [RF_INT8] = {"int8", 8},   [RF_INT4] = {"int4", 4},
    [RF_MXFP4] = {"mxfp4", 4},       [RF_NVFP4] = {"nvfp4", 4},
};
_Static_assert(sizeof kinds / sizeof kinds[0] == RF_DTYPE_COUNT, "dtype table");

/* Accepted spellings besides the canonical names. */
static const struct {
    const char *alias;
    rf_dtype_kind kind;
} aliases[] = {
    {"float32", RF_FP32},  {"f32", RF_FP32},
    {"float", RF_FP32},    {"bfloat16", RF_BF16},
    {"float16", RF_FP16},  {"half", RF_FP16},
    {"f16", RF_FP16},      {"fp8", RF_FP8_E4M3},
    {"e4m3", RF_FP8_E4M3}, {"float8_e4m3fn", RF_FP8_E4M3},
    {"e5m2", RF_FP8_E5M2}, {"float8_e5m2", RF_FP8_E5M2},
    {"float64", RF_FP64},  {"f64", RF_FP64},
    {"double", RF_FP64},
};

rf_dtype rf_dtype_of(rf_dtype_kind kind)
{
    rf_dtype d = {.kind = kind};
    if (kind == RF_MXFP4 || kind == RF_NVFP4) {
        d.group_size = kind == RF_MXFP4 ? 32 : 16; /* OCP MX: e8m0 a 32; NVIDIA: e4m3 a 16 */
        d.scale_bytes = 1;
    }
    return d;
}

const char *rf_dtype_name(rf_dtype_kind kind)
{
    return (unsigned)kind < RF_DTYPE_COUNT ? kinds[kind].name : "?";
}

uint32_t rf_dtype_bits(rf_dtype_kind kind)
{
    return (unsigned)kind < RF_DTYPE_COUNT ? kinds[kind].bits : 0;
}

bool rf_dtype_is_fp8(rf_dtype_kind kind) { return kind == RF_FP8_E4M3 || kind == RF_FP8_E5M2; }

bool rf_dtype_is_fp4(rf_dtype_kind kind) { return kind == RF_MXFP4 || kind == RF_NVFP4; }

static bool lookup(const char *s, size_t n, rf_dtype_kind *out)
{
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        if (strlen(kinds[k].name) == n && !strncmp(kinds[k].name, s, n)) {
            *out = (rf_dtype_kind)k;
            return true;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strlen(aliases[i].alias) == n && !strncmp(aliases[i].alias, s, n)) {
            *out = aliases[i].kind;
            return true;
        }
    return false;
}

/* One ":g<N>" or ":s<N>" suffix field; N a positive decimal within hi. */
static bool suffix_num(const char *s, size_t n, uint32_t hi, uint32_t *out)
{
    if (n < 2 || n > 10)
        return false;
    uint64_t v = 0;
    for (size_t i = 1; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v < 1 || v > hi)
        return false;
    *out = (uint32_t)v;
    return true;
}

rf_status rf_dtype_set_group(rf_dtype *dt, uint32_t group, rf_err *err)
{
    if (dt->kind != RF_INT4 && dt->kind != RF_INT8)
        return rf_err_set(err, RF_EINVAL, "only int4 and int8 weights take a group (not %s)",
                          rf_dtype_name(dt->kind));
    if (group < 1 || group > (1u << 24))
        return rf_err_set(err, RF_ERANGE, "group of %u elements (1..16777216)", group);
    dt->group_size = group;
    dt->ggml = dt->ggml && group == 32; /* another group is no longer llama.cpp's block */
    if (!dt->scale_bytes)
        dt->scale_bytes = 2; /* bf16/fp16 scales, as GPTQ and AWQ ship */
    return RF_OK;
}

/* llama.cpp's block formats (ggml-common.h: block_q8_0, block_q4_0): 32
 * weights a block, one fp16 scale d. */
static const struct {
    const char *name;
    rf_dtype_kind kind;
} ggml_blocks[] = {{"q8_0", RF_INT8}, {"q4_0", RF_INT4}};

static const char *ggml_name(rf_dtype dt)
{
    for (size_t i = 0; dt.ggml && i < sizeof ggml_blocks / sizeof ggml_blocks[0]; i++)
        if (ggml_blocks[i].kind == dt.kind)
            return ggml_blocks[i].name;
    return NULL;
}

rf_status rf_dtype_parse(const char *text, rf_dtype *out, rf_err *err)
{
    if (!text || !*text)
        return rf_err_set(err, RF_EINVAL, "empty dtype");
    for (size_t i = 0; i < sizeof ggml_blocks / sizeof ggml_blocks[0]; i++)
        if (!strcmp(text, ggml_blocks[i].name)) {
            *out = (rf_dtype){
                .kind = ggml_blocks[i].kind, .group_size = 32, .scale_bytes = 2, .ggml = true};
            return RF_OK;
        }
    const char *colon = strchr(text, ':');
    size_t n = colon ? (size_t)(colon - text) : strlen(text);
    rf_dtype_kind k;
    if (!lookup(text, n, &k))
        return rf_err_set(err, RF_EINVAL,
                          "unknown dtype '%s' (known: fp32, tf32, bf16, fp16, fp8, fp8_e4m3, "
                          "fp8_e5m2, int8, int4, mxfp4, nvfp4, fp64, q8_0, q4_0; int8/int4 take "
                          ":g<group>[:s<scale bytes>])",
                          text);
    rf_dtype d = rf_dtype_of(k);
    while (colon) {
        const char *f = colon + 1;
        colon = strchr(f, ':');
        size_t fn = colon ? (size_t)(colon - f) : strlen(f);
        bool ok = false;
        uint32_t g;
        if (k == RF_INT4 || k == RF_INT8) {
            if (fn && f[0] == 'g')
                ok = suffix_num(f, fn, 1u << 24, &g) && rf_dtype_set_group(&d, g, NULL) == RF_OK;
            else if (fn && f[0] == 's')
                ok = suffix_num(f, fn, 8, &d.scale_bytes);
        }
        if (!ok)
            return rf_err_set(err, RF_EINVAL,
                              "bad dtype '%s': only int8 and int4 take :g<group> (1..16777216) "
                              "and :s<scale bytes> (1..8)",
                              text);
    }
    if (d.scale_bytes && !d.group_size)
        return rf_err_set(err, RF_EINVAL, "bad dtype '%s': scale bytes given without a group",
                          text);
    *out = d;
    return RF_OK;
}

char *rf_dtype_describe(rf_dtype dt, char *out, unsigned cap)
{
    const char *ggml = ggml_name(dt);
    uint64_t block = 0;
    if (ggml && rf_dtype_bytes(dt, dt.group_size, &block, NULL) == RF_OK)
        snprintf(out, cap, "%s (llama.cpp: blocks of %u %s and an fp16 scale, %llu bytes)", ggml,
                 dt.group_size, rf_dtype_name(dt.kind), (unsigned long long)block);
    else if (dt.group_size && dt.block_rows)
        snprintf(out, cap, "%s (%u x %u blocks, %u-byte scales)", rf_dtype_name(dt.kind),
                 dt.block_rows, dt.group_size / dt.block_rows, dt.scale_bytes);
    else if (dt.group_size)
        snprintf(out, cap, "%s (group %u, %u-byte scales)", rf_dtype_name(dt.kind), dt.group_size,
                 dt.scale_bytes);
    else
        snprintf(out, cap, "%s", rf_dtype_name(dt.kind));
    return out;
}

rf_status rf_dtype_bytes(rf_dtype dt, uint64_t n, uint64_t *bytes, rf_err *err)
{
    uint64_t bits = rf_dtype_bits(dt.kind);
    /* n * bits / 8 rounded up, without forming n * bits when it overflows */
    if (n > UINT64_MAX / 64)
        return rf_err_set(err, RF_ERANGE, "%llu elements overflow a byte count",
                          (unsigned long long)n);
    uint64_t b = (n * bits + 7) / 8;
    if (dt.group_size) {
        uint64_t groups = n / dt.group_size + (n % dt.group_size != 0);
        b += groups * dt.scale_bytes; /* groups <= n/1, scale <= 8: no overflow */
    }
    *bytes = b;
    return RF_OK;
}

double rf_dtype_bytes_per_elem(rf_dtype dt)
{
    double b = rf_dtype_bits(dt.kind) / 8.0;
    if (dt.group_size)
        b += (double)dt.scale_bytes / dt.group_size;
    return b;
}

rf_dtype_kind rf_dtype_math(rf_dtype w, rf_dtype a)
{
    if (w.ggml)
        return RF_INT8; /* q8_0 / q4_0: activations to q8_0, int8 dot products */
    if (rf_dtype_is_fp8(w.kind) && rf_dtype_is_fp8(a.kind))
        return RF_FP8_E4M3; /* the fp8 tensor-core peak covers both kinds */
    if (w.kind == RF_INT8 && a.kind == RF_INT8)
        return RF_INT8;
    if (rf_dtype_is_fp4(w.kind) && w.kind == a.kind)
        return a.kind; /* W4A4: the fp4 tensor-core peak of that format */
    if (a.kind == RF_FP8_E5M2 || a.kind == RF_FP8_E4M3)
        return RF_BF16; /* fp8 activations against wider weights: upcast */
    if (a.kind == RF_INT8 || a.kind == RF_INT4 || rf_dtype_is_fp4(a.kind))
        return RF_BF16;
    return a.kind;
}
