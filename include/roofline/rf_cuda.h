/* rf_cuda.h - the CUDA backend: a GPU's measured roofline and its GEMMs.
 *
 * Built when CMake finds nvcc and RF_WITH_CUDA is ON (docs/cuda.md). When
 * it is not built, every function here except rf_cuda_built, the name helpers,
 * rf_cuda_device_parse, rf_cuda_timing_default, rf_cuda_gemm_out_dtype and
 * rf_cuda_gemm_tolerance returns RF_EUNAVAIL "CUDA backend not built ...",
 * and rf_cuda_ctx_device NULL, so callers compile and
 * link the same either way. The library never prints; the CLI does.
 *
 * What is measured, and how it is counted:
 *   bandwidth  a kernel streams buffers much larger than L2 with 16-byte
 *              vector loads and stores, grid = SMs x resident blocks per SM:
 *                copy_v16    dst[i] = src[i]    bytes = 2 x buffer (read + write)
 *                read_v16    sum of every word  bytes = buffer
 *                memcpy_d2d  cudaMemcpyAsync    bytes = 2 x buffer
 *              The buffers hold word i = i; after timing, the result is
 *              checked (the copy's destination word by word on the device,
 *              one read's checksum against n (n - 1) / 2 mod 2^32).
 *   GEMM       Y[M,N] = X[M,K] W[N,K]^T, row-major, W stored as a linear
 *              layer stores it (N rows of K), through cuBLASLt:
 *                F = 2 M K N
 *                Q = M K b_in + N K b_in + M N b_out
 *              b_out = b_in except fp8 e4m3, whose output is bf16. At M = 1
 *              a hand-written bf16 GEMV kernel (impl "gemv") is timed beside
 *              cuBLASLt, as inference engines do at one token.
 *   timing     inputs are fresh random non-zero values for every shape;
 *              warm-up calls, then a CUDA graph of calls (rotating through
 *              enough buffer copies that the working set is >= 4 x L2) is
 *              replayed between two CUDA events; repetitions are calibrated
 *              so a trial lasts at least min_trial_s; the median trial is
 *              the figure, with best/min/max beside it.
 *   checking   each GEMM configuration is compared once with a CPU
 *              reference (double accumulation) on a small shape, and every
 *              timed GEMM is spot-checked at sampled outputs. The error of an
 *              output is |y - ref| / sqrt(sum_k (x_k w_k)^2): in units of
 *              the output's own size for random-sign inputs, so one figure
 *              serves every K. Roundings cost a small fraction of a unit; a
 *              swapped operand or a wrong layout costs about 1.4.
 *
 * Rates are per second: bytes_per_s, flops_per_s. Times are seconds.
 */
#ifndef RF_CUDA_H
#define RF_CUDA_H

#include <stdbool.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_hw.h"
#include "rf_hw_profile.h"
#include "rf_calib.h"
#include "rf_gpu.h"
#include "rf_measure_stats.h"
#include "rf_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Build and device selection --------------------------------------- */

/* True when the CUDA backend was compiled in (it may still find no device). */
bool rf_cuda_built(void);

/* Parse a device spec: "cuda" (device 0) or "cuda:N" (0 <= N <= 1023).
 * Errors: RF_EINVAL "device 'x': expected cuda or cuda:N ...". */
rf_status rf_cuda_device_parse(const char *text, int *index, rf_err *err);

#define RF_CUDA_NAME_MAX 128

typedef struct rf_cuda_device {
    int index;                   /* as in cuda:N                              */
    char name[RF_CUDA_NAME_MAX]; /* "NVIDIA H200"                             */
    int cc_major, cc_minor;      /* compute capability (9.0 = sm_90)          */
    int sm_count;                /* streaming multiprocessors                 */
    double clock_hz;             /* peak SM clock reported by the driver      */
    double mem_clock_hz;         /* peak memory clock reported by the driver  */
    int mem_bus_bits;            /* memory bus width                          */
    uint64_t mem_bytes;          /* global memory                             */
    uint64_t l2_bytes;           /* L2 cache                                  */
    double bus_bw_bytes_per_s;   /* 2 x mem_clock_hz x mem_bus_bits / 8: the
                                      interface's rate (double data rate), the
                                      datasheet figure a measurement is set
                                      against                                   */
    int runtime_version;         /* CUDA runtime, 13000 = 13.0                */
    int driver_version;          /* newest CUDA the driver supports           */
} rf_cuda_device;

/* Number of usable devices. A missing or too old driver, or no device, is
 * RF_EUNAVAIL with the runtime's reason ("no CUDA device: CUDA driver version
 * is insufficient for CUDA runtime version"). */
rf_status rf_cuda_device_count(int *count, rf_err *err);

/* Identity of device index. RF_EUNAVAIL when there is no such device
 * ("cuda:3: no such device (2 found)", "cuda:0: no CUDA device: ..."). */
rf_status rf_cuda_device_query(int index, rf_cuda_device *out, rf_err *err);

/* ---- A context: one device, one stream, cuBLASLt --------------------- */

/* Opaque. Holds the device, a stream, two events, the cuBLASLt handle
 * (libcublasLt is loaded when the first GEMM needs it, so a CPU-only run
 * never pays for it) and a 32 MiB cuBLASLt workspace. */
typedef struct rf_cuda_ctx rf_cuda_ctx;

/* Open device index. Errors: RF_EUNAVAIL (no driver, no device, no such
 * index, or a GPU this build has no kernels for: "rebuild with
 * -DRF_CUDA_ARCHS=75"), RF_ENOMEM. *out is NULL on failure; on success it
 * is freed with rf_cuda_ctx_free. */
rf_status rf_cuda_ctx_new(int index, rf_cuda_ctx **out, rf_err *err);

/* Release everything the context holds; NULL is accepted. */
void rf_cuda_ctx_free(rf_cuda_ctx *ctx);

/* The device the context runs on (owned by the context). */
const rf_cuda_device *rf_cuda_ctx_device(const rf_cuda_ctx *ctx);

/* ---- Timing ------------------------------------------------------------ */

#define RF_CUDA_MAX_TRIALS 31

typedef struct rf_cuda_timing {
    int trials;         /* timed trials, 1..RF_CUDA_MAX_TRIALS; median kept */
    int warmup;         /* untimed calls before calibration               */
    double min_trial_s; /* a trial repeats the call for at least this long */
    int max_algos;      /* cuBLASLt heuristic candidates timed, best kept  */
} rf_cuda_timing;

/* Defaults: 7 trials of >= 10 ms, 3 warm-up calls, 8 candidates; quick: 3
 * trials of >= 3 ms, 2 warm-up calls, 4 candidates. */
rf_cuda_timing rf_cuda_timing_default(bool quick);

/* ---- Memory bandwidth -------------------------------------------------- */

typedef enum rf_cuda_bw_kind {
    RF_CUDA_BW_COPY = 0, /* copy_v16   */
    RF_CUDA_BW_READ,     /* read_v16   */
    RF_CUDA_BW_MEMCPY,   /* memcpy_d2d */
    RF_CUDA_BW_COUNT
} rf_cuda_bw_kind;

const char *rf_cuda_bw_kind_name(rf_cuda_bw_kind kind); /* "copy_v16", ... */

typedef struct rf_cuda_bw_result {
    rf_cuda_bw_kind kind;
    uint64_t buffer_bytes;   /* one buffer (source, and destination if any) */
    uint64_t bytes_per_call; /* bytes counted for one call (see above)      */
    int grid, block;         /* launch shape; 0 for memcpy                 */
    int64_t reps;            /* calls per trial                            */
    int trials;
    double time_s_median;    /* one call                                   */
    rf_stats bw_bytes_per_s; /* over trials (rf_measure_stats.h: best, median) */
} rf_cuda_bw_result;

/* Buffer size for a device-memory figure: 32 x L2 clamped to [256 MiB,
 * 2 GiB], halved while it exceeds a quarter of the free memory; a multiple
 * of 1 MiB. */
rf_status rf_cuda_dram_buffer_bytes(rf_cuda_ctx *ctx, uint64_t *bytes, rf_err *err);

/* Time kind over buffers of buffer_bytes (a multiple of 16, >= 1 MiB).
 * Errors: RF_EINVAL for a bad size or kind, RF_ENOMEM, RF_EINTERNAL when a
 * result fails its check, RF_EUNAVAIL. */
rf_status rf_cuda_bandwidth(rf_cuda_ctx *ctx, rf_cuda_bw_kind kind, uint64_t buffer_bytes,
                            const rf_cuda_timing *t, rf_cuda_bw_result *out, rf_err *err);

/* ---- GEMM ------------------------------------------------------------- */

typedef enum rf_cuda_gemm_impl {
    RF_CUDA_GEMM_CUBLASLT = 0, /* cublasLtMatmul, best of the heuristic's picks */
    RF_CUDA_GEMM_GEMV,         /* our bf16 GEMV kernel: M = 1, bf16 only        */
    RF_CUDA_GEMM_IMPL_COUNT
} rf_cuda_gemm_impl;

const char *rf_cuda_gemm_impl_name(rf_cuda_gemm_impl impl); /* "cublasLt", "gemv" */

/* Dtype of Y for GEMM inputs of kind dt: bf16 for fp8_e4m3, dt otherwise
 * (tf32 inputs and outputs are stored as fp32). */
rf_dtype_kind rf_cuda_gemm_out_dtype(rf_dtype_kind dt);

/* Largest accepted error (as above) for inputs of kind dt: 16 unit
 * roundoffs of the output for bf16 (2^-8) and fp16 (2^-11), of the inputs
 * for tf32 (2^-10), 1e-4 for fp32, 0.25 for fp8 e4m3 (its fast accumulation
 * keeps about 14 bits); 0 for a dtype the backend does not run. */
double rf_cuda_gemm_tolerance(rf_dtype_kind dt);

/* Whether the device can run impl on dt: cuBLASLt fp32, tf32, bf16, fp16 on
 * sm_80 and newer, fp8_e4m3 on sm_89 and newer; gemv bf16 with M = 1.
 * RF_EUNAVAIL names what is missing ("fp8_e4m3 needs sm_89 or newer; cuda:0
 * is sm_80"); RF_EINVAL for a dtype the backend never runs. */
rf_status rf_cuda_gemm_supported(const rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt,
                                 int64_t m, rf_err *err);

typedef struct rf_cuda_gemm_result {
    rf_cuda_gemm_impl impl;
    rf_dtype_kind dtype;     /* inputs, and the math dtype of the roof      */
    rf_dtype_kind out_dtype; /* Y                                           */
    int64_t m, k, n;
    uint64_t flops;   /* 2 M K N                                     */
    uint64_t bytes;   /* (M K + N K) b_in + M N b_out                */
    double intensity; /* flops / bytes, FLOP/byte                    */
    int copies;       /* buffer sets rotated through                 */
    int algos_tried;  /* cuBLASLt candidates timed (0 for gemv)      */
    int64_t reps;     /* calls per trial                             */
    int trials;
    double time_s_median;    /* one call                                    */
    rf_stats flops_per_s;    /* over trials                                 */
    rf_stats bw_bytes_per_s; /* bytes / time                                */
    double check_err;        /* worst spot-check error (see above)          */
    /* Set when a roof is given, else 0: */
    double roof_flops_per_s; /* attainable min(pi, I beta) of the roof      */
    double of_roof;          /* flops_per_s.best / roof_flops_per_s         */
    double of_roof_median;   /* flops_per_s.median / roof_flops_per_s       */
    rf_regime regime;        /* compute-bound when I >= the roof's ridge    */
} rf_cuda_gemm_result;

/* Compare impl on dt at M x K x N (small: M K N <= 2^26) with a CPU
 * reference over every output; *max_err receives the worst error.
 * Errors: RF_EINTERNAL "bf16 GEMM 48x272x80: output (3,17) is 1.25, the CPU
 * reference 0.5: error 0.31 > tolerance 0.0625"; RF_EUNAVAIL when the
 * device or cuBLASLt cannot run it; RF_EINVAL for a bad shape. */
rf_status rf_cuda_gemm_check(rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt, int64_t m,
                             int64_t k, int64_t n, double *max_err, rf_err *err);

/* Time impl on dt at M x K x N (each 1..2^31-1, and the buffers must fit in
 * the device's free memory), spot-check the result, and, when roof is not
 * NULL, place it on the roof. Errors: as rf_cuda_gemm_check, plus RF_ENOMEM
 * "GEMM 16384x3584x152064 bf16 needs 6.2 GB, cuda:0 has 4.0 GB free". */
rf_status rf_cuda_gemm_time(rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt, int64_t m,
                            int64_t k, int64_t n, const rf_cuda_timing *t, const rf_roof *roof,
                            rf_cuda_gemm_result *out, rf_err *err);

/* ---- The whole measurement -------------------------------------------- */

typedef struct rf_cuda_measure_opts {
    bool quick;          /* fewer, shorter trials; 4096^3 GEMMs         */
    uint32_t dtype_mask; /* bit (1u << kind) per GEMM dtype to measure;
                                 0 = every dtype the device supports        */
    int64_t gemm_dim;    /* square GEMM size for the peaks; 0 = 8192
                                 (4096 with quick)                           */
    void (*progress)(void *user, const char *stage); /* or NULL              */
    void (*note)(void *user, const char *line);      /* a dtype left out and why:
                                 no cuBLASLt kernel, or a result that failed
                                 its check against the CPU reference; or NULL */
    void *user; /* passed to both                              */
} rf_cuda_measure_opts;

/* Measure the device's roofline into out (zeroed first):
 *   identity: name and device (the device name), sm_count, clock_hz (the
 *     reported peak SM clock), mem_bytes, l2_bytes, isa ("sm_90"), date;
 *   checks: every GEMM dtype against the CPU reference (M = 1 and a
 *     multiple-of-16 shape), the gemv kernel likewise; a dtype cuBLASLt
 *     cannot run, or whose results fail a check here or at the peak's spot
 *     check, is left out (peak 0) and o->note says why;
 *   levels: "L2" (read_v16 over half the L2) and "HBM" or "DRAM" (read_v16
 *     over rf_cuda_dram_buffer_bytes; HBM when the bus is >= 1024 bits);
 *   bandwidth_bytes_per_s: the best device-memory read_v16, the memory roof
 *     (decode streams weights read-only), with copy_v16 and memcpy_d2d in
 *     kernels beside it;
 *   peak_flops_per_s[dt]: best cuBLASLt rate at gemm_dim^3 per dtype;
 *   kernels: every figure with best/median/min/max ("gemm_bf16" ...);
 *   spread: the worst (best - median) / best over kernels.
 * Errors: those of the functions above; RF_EUNAVAIL when no dtype is left. */
rf_status rf_cuda_measure(rf_cuda_ctx *ctx, const rf_cuda_measure_opts *o, rf_hw_profile *out,
                          rf_err *err);

/* ---- Calibration (`measure --device cuda --calibrate`) ---------------- */

/* The same calibration as the CPU's (rf_calib.h, rf_measure_calib.h), on
 * the GPU, in bf16 (inputs, outputs, weights and the KV cache):
 *   gemm          cuBLASLt (rf_cuda_gemm_time: the fastest of the
 *                 heuristic's candidates, spot-checked) over M = 1 .. 2048
 *                 for the (K, N) shapes of the plan; buffer sets rotated
 *                 until they exceed 4 x L2 (rf_cuda_rotation_copies), so W
 *                 comes from device memory as it does in a model;
 *   attn_decode   the backend's decode kernel (one block per sequence and
 *                 KV head, and per slice of the keys when there are too few
 *                 blocks to fill the SMs, then a combine kernel): 16 query
 *                 heads over 4 KV heads, d_h 64 and 128, keys S = 64 ..
 *                 32768, B sequences so that K and V exceed 4 x L2
 *                 (rf_cuda_calib_decode_batch);
 *   attn_prefill  the backend's causal prefill kernel (one warp per token
 *                 and KV head), B = 1, T = 16 .. 4096 tokens after no
 *                 context;
 *   norm, rope, act, residual
 *                 the backend's RMSNorm, rotate-half RoPE (in place),
 *                 silu(gate) x up and add kernels over 2^10 .. 2^26
 *                 elements (rows of min(x, 4096));
 *   copy          copy_v16 moving x = 2^12 .. 2^28 bytes (read + write);
 *                 the element-wise and copy buffers rotated past 4 x L2
 *                 like the GEMMs', so what a call reads comes from memory.
 * Every point is counted as `roofline step` counts the operator it stands
 * for (rf_cuda_calib_op: the core's rf_op_* at the point's shape), timed
 * with CUDA events around a CUDA graph of calls (the median trial), and
 * checked against a CPU reference (attention at every point, the
 * element-wise kernels at their first size). The roof is the bf16
 * cuBLASLt peak and the sustained device-memory read (the median of its
 * trials). */

#define RF_CUDA_CALIB_NQ 16      /* query heads of the attention points      */
#define RF_CUDA_CALIB_NKV 4      /* KV heads                                 */
#define RF_CUDA_CALIB_WIDTH 4096 /* element-wise rows: min(x, this) wide   */
#define RF_CUDA_MAX_COPIES 256   /* buffer sets a timed GEMM rotates through */

typedef struct rf_cuda_calib_plan {
    const int64_t (*gemm)[2]; /* (K, N) shapes                            */
    size_t n_gemm;
    const int64_t *m; /* GEMM M grid                              */
    size_t n_m;
    const int64_t *head_dims; /* attention d_h                            */
    size_t n_head_dims;
    const int64_t *keys; /* decode S                                 */
    size_t n_keys;
    const int64_t *tokens; /* prefill T                                */
    size_t n_tokens;
    const int64_t *elems; /* norm, rope, act, residual: elements      */
    size_t n_elems;
    const int64_t *copy_bytes; /* copy: bytes moved                        */
    size_t n_copy;
} rf_cuda_calib_plan;

/* The grid (quick: about a quarter of the points). Host only. */
rf_cuda_calib_plan rf_cuda_calib_plan_of(bool quick);

/* Points of the plan (GEMM, attention, element-wise, copy). */
size_t rf_cuda_calib_plan_points(const rf_cuda_calib_plan *pl);

/* Buffer sets of set_bytes a timed call rotates through so that together
 * they hold >= 4 x l2_bytes: at least 1, at most RF_CUDA_MAX_COPIES, and
 * no more than fit in free_bytes - reserve_bytes. Host only. */
uint64_t rf_cuda_rotation_copies(uint64_t set_bytes, uint64_t l2_bytes, uint64_t free_bytes,
                                 uint64_t reserve_bytes);

/* Sequences of a decode point at keys S and head_dim: the fewest whose K
 * and V (2 n_kv S d_h bf16 each) hold >= 4 x l2_bytes, at least 1. */
int64_t rf_cuda_calib_decode_batch(int64_t keys, int64_t head_dim, uint64_t l2_bytes);

/* Slices of the keys the decode kernel splits each (sequence, KV head)
 * into: enough blocks for two per SM, each slice >= 256 keys, at most 64,
 * and every slice non-empty. */
int rf_cuda_attn_split(int64_t batch, int64_t n_kv, int64_t keys, int sm_count);

/* The operator a point of kind k at coordinate x (a = d_h for attention,
 * decode with batch sequences) stands for, as `roofline step` builds it in
 * bf16: its name, shape, FLOPs and bytes; rf_calib_shape_of(out) gives back
 * (k, x, a). Element-wise rows are min(x, RF_CUDA_CALIB_WIDTH) wide; a copy
 * moves x bytes (kv_write). RF_EINVAL for a shape the kernels do not run
 * (x not a multiple of the row, d_h not 64 or 128, GEMM here). */
rf_status rf_cuda_calib_op(rf_calib_kind k, int64_t x, int64_t a, int64_t batch, rf_op *out,
                           rf_err *err);

/* One timed point into c: its series (kind, a, b), created when new, the
 * point kept in x order; a point at an x already present is refused.
 * RF_EINVAL naming the point; RF_ERANGE past RF_CALIB_MAX_SERIES or
 * RF_CALIB_MAX_POINTS. Host only. */
rf_status rf_cuda_calib_add(rf_calib *c, rf_calib_kind k, int64_t a, int64_t b, int64_t x,
                            double flops, double bytes, double time_s, rf_err *err);

typedef struct rf_cuda_calib_opts {
    bool quick;
    void (*progress)(void *user, const char *stage); /* or NULL            */
    void *user;
} rf_cuda_calib_opts;

/* Time every point of the plan on ctx and fit it (rf_calib_fit_all) on the
 * roof of p (a profile rf_cuda_measure filled: its bf16 peak, its
 * sustained memory roof, else its best): fills p->calib. Errors:
 * RF_EINVAL for a profile without a bf16 peak or memory roof; those of the
 * timing and of the fit; RF_EINTERNAL when a kernel's result fails its
 * check; RF_EUNAVAIL without the backend. */
rf_status rf_cuda_calibrate(rf_cuda_ctx *ctx, const rf_cuda_calib_opts *o, rf_hw_profile *p,
                            rf_err *err);

/* ---- The calibration as kernel tables (`--calibrate -o DIR`) ------------
 * The points a calibration timed, in the format of the GPU kernel tables
 * (aiconfigurator's columns, rf_gpu.h), so that `--calibration DIR` predicts
 * from a GPU's own measurement and `measure --compare-calibration` sets it
 * beside the published tables. Host only (cuda_tables.c, plain C). */

/* A calibration whose GEMM series ran in one dtype. */
typedef struct rf_cuda_calib_part {
    rf_dtype_kind dtype; /* of its GEMMs: bf16, fp16, fp32, tf32, fp8_e4m3 */
    const rf_calib *calib;
} rf_cuda_calib_part;

/* The tables' name of a GEMM dtype: "bfloat16", "float16", "float32",
 * "tf32", "fp8" (per-tensor fp8 e4m3 with a bf16 output, as
 * aiconfigurator's fp8 rows); NULL for one the backend does not run. */
const char *rf_cuda_table_dtype(rf_dtype_kind dt);

/* Tables of the parts' points into out (zeroed first; each table's arrays
 * malloc'd: rf_gpu_tables_free and rf_gpu_table_free, rf_gpu_io.h):
 *   gemm_perf             every GEMM point (series a = K, b = N, x = M) as
 *                         gemm_dtype (the part's), m, n, k;
 *   generation_attention  every attn_decode point (a = d_h, x = keys S):
 *                         bfloat16 in the cache and out, window 0,
 *                         head_dim d_h, RF_CUDA_CALIB_NQ heads over
 *                         RF_CUDA_CALIB_NKV, batch_size the B the point
 *                         ran (rf_cuda_calib_decode_batch on l2_bytes),
 *                         isl 1, step S - 1 (the keys before the new one);
 *   context_attention     every attn_prefill point (x = tokens T): the same
 *                         heads, batch_size 1, isl T (causal, no prefix);
 * and into copy (kind RF_GPU_KIND_COUNT, no table of the reader's) the copy
 * points as `bytes` (read + written), latency. Element-wise points have no
 * table and are left out. Latencies are the points' time_s. Errors:
 * RF_EINVAL for a dtype without a table name, a decode point with fewer
 * than 2 keys; RF_ENOMEM. */
rf_status rf_cuda_calib_tables(const rf_cuda_calib_part *parts, size_t n_parts, uint64_t l2_bytes,
                               rf_gpu_tables *out, rf_gpu_table *copy, rf_err *err);

/* Time the plan's GEMM grid (rf_cuda_calib_plan_of(o->quick): its (K, N)
 * shapes at each M) in dt with cuBLASLt, as rf_cuda_calibrate times its bf16
 * ones, into c (zeroed first: GEMM series only, no fit). A shape cuBLASLt
 * has no algorithm for (RF_EUNAVAIL, as fp8 at M = 1 on some versions) is
 * skipped and counted in *skipped. Errors: RF_EUNAVAIL when the device
 * cannot run dt at all (rf_cuda_gemm_supported) or without the backend;
 * those of the timing. */
rf_status rf_cuda_calib_gemm_dtype(rf_cuda_ctx *ctx, const rf_cuda_calib_opts *o, rf_dtype_kind dt,
                                   rf_calib *c, int *skipped, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
