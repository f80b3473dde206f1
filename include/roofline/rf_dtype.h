/* rf_dtype.h - element types and their storage cost.
 *
 * A dtype is a storage format (bits per element) plus, for quantized
 * formats, a group of elements that shares one scale of `scale_bytes`.
 * The bytes of n elements are exact integers:
 *     bytes(n) = ceil(n * bits / 8) + ceil(n / group_size) * scale_bytes
 * so int4 with group 128 and bf16 scales costs 0.5 + 2/128 bytes an element.
 *
 * Weights, activations and the KV cache each carry their own dtype
 * (docs/accounting.md: b_w, b_a, b_kv). The math dtype, which selects the compute
 * roof, follows the activations: weight-only quantization keeps the bf16
 * peak, W8A8 fp8 uses the fp8 peak (see rf_dtype_math).
 */
#ifndef RF_DTYPE_H
#define RF_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rf_dtype_kind {
    RF_FP64 = 0,
    RF_FP32,
    RF_TF32, /* math only: stored as fp32                    */
    RF_BF16,
    RF_FP16,
    RF_FP8_E4M3,
    RF_FP8_E5M2,
    RF_INT8,
    RF_INT4,
    RF_MXFP4, /* 4-bit elements, one 8-bit scale per 32       */
    RF_NVFP4, /* fp4 e2m1 elements, one fp8 e4m3 scale per 16
                    (and one fp32 scale per tensor, not counted:
                    4 bytes a matrix)                            */
    RF_DTYPE_COUNT
} rf_dtype_kind;

typedef struct rf_dtype {
    rf_dtype_kind kind;
    uint32_t group_size;  /* elements sharing one scale; 0 = no scales */
    uint32_t scale_bytes; /* bytes of one scale (2 for bf16/fp16 scales) */
    uint32_t block_rows;  /* 0: a group is group_size consecutive elements;
                             else a block_rows x (group_size / block_rows)
                             tile of the matrix (fp8's weight_block_size
                             [128, 128]: 16,384 elements a scale)         */
    bool ggml;            /* a llama.cpp (ggml) block format: q8_0 (int8,
                             group 32, fp16 scale: 34 bytes a block) or
                             q4_0 (int4, the same: 18 bytes). Its kernels
                             quantize the activations to q8_0 blocks and
                             multiply in int8 dot products, so the math
                             is int8 whatever the activations' dtype    */
} rf_dtype;

/* Plain (unscaled) dtype of a kind. */
rf_dtype rf_dtype_of(rf_dtype_kind kind);

/* Canonical name: "fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2",
 * "int8", "int4", "mxfp4", "nvfp4", "fp64". */
const char *rf_dtype_name(rf_dtype_kind kind);

/* Storage bits of one element (tf32 is stored as 32). */
uint32_t rf_dtype_bits(rf_dtype_kind kind);

/* Parse "bf16", "fp8" (= fp8_e4m3, also "float8_e4m3fn"), "e5m2", "int4",
 * "int4:g128", "int8:g64:s4" (group 64, 4-byte scales), "mxfp4", "nvfp4",
 * and llama.cpp's "q8_0" and "q4_0" (ggml set: int8 / int4 in groups of 32
 * with 2-byte scales, exactly 34 / 32 and 18 / 32 bytes a weight; they take
 * no suffix).
 * Integer dtypes default to no scales unless a group is given; mxfp4 always
 * has group 32 with 1-byte (e8m0) scales, nvfp4 group 16 with 1-byte (e4m3)
 * scales: 4.25 and 4.5 bits an element. Errors: RF_EINVAL naming the text. */
rf_status rf_dtype_parse(const char *text, rf_dtype *out, rf_err *err);

/* Give an integer dtype a quantization group (1..2^24 elements a scale);
 * scales default to 2 bytes (bf16/fp16, as GPTQ and AWQ ship). RF_EINVAL,
 * naming the dtype, for anything but int4 and int8. */
rf_status rf_dtype_set_group(rf_dtype *dt, uint32_t group, rf_err *err);

/* Describe a dtype for an assumption line: "int4 (group 128, 2-byte scales)",
 * "fp8_e4m3 (128 x 128 blocks, 4-byte scales)", "q4_0 (llama.cpp: blocks of
 * 32 int4 and an fp16 scale, 18 bytes)".
 * Writes at most cap bytes including the NUL; returns out. */
char *rf_dtype_describe(rf_dtype dt, char *out, unsigned cap);

/* Exact bytes of n elements; RF_ERANGE if it would overflow 64 bits. */
rf_status rf_dtype_bytes(rf_dtype dt, uint64_t n, uint64_t *bytes, rf_err *err);

/* Average bytes per element including scales (b in the formulas):
 * bits/8 + scale_bytes/group_size. */
double rf_dtype_bytes_per_elem(rf_dtype dt);

/* The math dtype whose peak bounds a GEMM with these weight and activation
 * dtypes: llama.cpp's q8_0 / q4_0 weights x anything -> int8 (its kernels
 * quantize the activations to q8_0 and use int8 dot products: VNNI,
 * AVX2's maddubs), fp8 x fp8 -> fp8, int8 x int8 -> int8, nvfp4 x nvfp4 -> nvfp4,
 * mxfp4 x mxfp4 -> mxfp4 (the fp4 tensor-core peaks), otherwise the
 * activation dtype (weight-only quantization dequantizes into the
 * activation dtype; narrower activations against wider weights upcast to
 * bf16). */
rf_dtype_kind rf_dtype_math(rf_dtype weights, rf_dtype acts);

/* True for the two fp8 kinds. */
bool rf_dtype_is_fp8(rf_dtype_kind kind);

/* True for the two fp4 kinds (mxfp4, nvfp4). */
bool rf_dtype_is_fp4(rf_dtype_kind kind);

#ifdef __cplusplus
}
#endif
#endif
