/* rf_hw.h - hardware: compute peaks, bandwidth, memory; the roof.
 *
 * docs/accounting.md: pi = peak FLOP/s of the math dtype in use (dense, never the
 * 2:4-sparse figure), beta = memory bandwidth in B/s, ridge I* = pi / beta.
 * A roofline point: attainable = min(pi, I * beta); the time floor of a
 * kernel is max(F / pi, Q / beta).
 *
 * Presets come from the vendors' datasheets (dense peaks) and each carries
 * its source line (`roofline hw`). A measured profile (rf_hw_profile.h)
 * converts to an rf_hw too.
 */
#ifndef RF_HW_H
#define RF_HW_H

#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_HW_NAME_MAX 64
#define RF_HW_SOURCE_MAX 256

/* How devices of this kind are joined (docs/accounting.md, "Many devices").
 * Bandwidths are one direction of one device's link, bytes/s; latencies the
 * alpha of one hop, seconds. A preset carries its vendor's figures; a
 * profile none (0) until measured; --link-bw, --link-latency and
 * --devices-per-node override, and `origin` says which. */
#define RF_LINK_NAME_MAX 96

/* One collective measured on a link (a cluster profile, rf_cluster.h):
 * the table of its measured sizes (bytes[i], time_s[i] on `ranks` ranks,
 * by growing size), read between rows as nccl-tests' tables are, and the
 * alpha-beta fit time = latency_s + f n / bw_bytes_per_s (f its kind's bus
 * factor, rf_coll_cost's) with its rms relative residual over the table,
 * used only past [min_bytes, max_bytes]. bw 0: not measured. The names
 * label a collective within the range and beyond it (extrapolated). */
#define RF_LINK_FIT_KINDS 4 /* rf_coll_kind: all-reduce, all-gather, all-to-all, send */
#define RF_LINK_FIT_MAX_POINTS 32
typedef struct rf_link_fit {
    double bw_bytes_per_s, latency_s;
    double residual; /* the fit's rms of (t - fit) / t          */
    uint64_t min_bytes, max_bytes;
    int64_t ranks;
    size_t n_points; /* the measured table                      */
    uint64_t bytes[RF_LINK_FIT_MAX_POINTS];
    double time_s[RF_LINK_FIT_MAX_POINTS];
    char name[RF_LINK_NAME_MAX];   /* "MPI all-reduce, measured 8 B-64 MiB"   */
    char beyond[RF_LINK_NAME_MAX]; /* "..., extrapolated past 8 B-64 MiB"     */
} rf_link_fit;

typedef struct rf_hw_links {
    char up_name[RF_LINK_NAME_MAX];         /* "NVLink 4 (18 links)"                 */
    double up_bw_bytes_per_s;               /* within a node                          */
    double up_latency_s;                    /* alpha within a node                    */
    char out_name[RF_LINK_NAME_MAX];        /* "InfiniBand NDR 400 Gb/s"              */
    double out_bw_bytes_per_s;              /* between nodes, a device               */
    double out_latency_s;                   /* alpha between nodes                    */
    int64_t devices_per_node;               /* devices the scale-up link joins        */
    bool up_switch_reduce;                  /* the scale-up switch reduces in the
                                        network (NVLink SHARP, NCCL's NVLS:
                                        NVSwitch 3 and later), so an
                                        all-reduce in a node may move
                                        (t-1)/t n a direction (rf_coll_cost) */
    char origin[RF_HW_SOURCE_MAX];          /* where the figures came from            */
    rf_link_fit up_fit[RF_LINK_FIT_KINDS];  /* measured in a node, per kind    */
    rf_link_fit out_fit[RF_LINK_FIT_KINDS]; /* measured between nodes          */
} rf_hw_links;

typedef struct rf_hw {
    char name[RF_HW_NAME_MAX];               /* "h100-sxm"                                 */
    char source[RF_HW_SOURCE_MAX];           /* where the figures come from                */
    double peak_flops_per_s[RF_DTYPE_COUNT]; /* dense peak per math dtype; 0 = none */
    double bw_bytes_per_s;                   /* memory roof (HBM, or measured DRAM read)   */
    uint64_t mem_bytes;                      /* memory for weights + KV                    */
    bool mem_usable;                         /* mem_bytes is what a runtime can use, not
                                      the datasheet capacity                    */
    double mem_stated_gb;                    /* presets: the vendor's capacity in GB, from
                                      which RF_HW_USABLE_RULE derives mem_bytes;
                                      0 for a profile                          */
    double board_power_w;                    /* presets: the vendor's TDP (maximum board
                                      power), for energy a token as an upper
                                      bound; 0 when not known                  */
    double ridge_override;                   /* > 0: user gave the ridge (FLOP/byte)       */
    uint64_t l2_bytes;                       /* presets: the last-level cache on chip, where
                                      the vendor states it (0: not stated); a
                                      kernel whose working set fits may beat the
                                      memory roof on repeated runs             */
    rf_hw_links links;                       /* devices joined: scale-up and scale-out     */
} rf_hw;

/* The roof for one math dtype, after user overrides. */
typedef struct rf_roof {
    rf_dtype_kind math;       /* dtype whose peak is used                    */
    double peak_flops_per_s;  /* pi                                          */
    double bw_bytes_per_s;    /* beta                                        */
    double ridge;             /* I* = pi / beta, FLOP/byte                   */
    int ridge_given;          /* 1 when the ridge came from the user; then
                                   pi = ridge x beta                           */
    rf_dtype_kind math_asked; /* the dtype the caller asked for; differs
                                   from math only when math_fallback          */
    bool math_fallback;       /* the hardware had no peak for math_asked, so
                                   rf_hw_math_dtype's fallback is used        */
} rf_roof;

typedef enum rf_regime { RF_MEMORY_BOUND = 0, RF_COMPUTE_BOUND = 1 } rf_regime;

/* Where F FLOPs over Q bytes land on a roof. */
typedef struct rf_point {
    double intensity;              /* F / Q, FLOP/byte                              */
    double attainable_flops_per_s; /* min(pi, I beta)                           */
    double compute_s;              /* F / pi                                        */
    double memory_s;               /* Q / beta                                      */
    double floor_s;                /* max(compute_s, memory_s)                      */
    rf_regime regime;              /* compute-bound when I >= I*                    */
} rf_point;

/* Built-in presets, in a stable order. */
/* How every preset's usable memory (mem_bytes) follows from its stated
 * capacity, for headers and assumption lines. */
#define RF_HW_USABLE_RULE                                                                          \
    "usable memory = the stated capacity read in GiB (80 GB of HBM is 80 GiB of DRAM) less "       \
    "what the driver and ECC keep, at the fraction the book chapter gives the H100 SXM (79.65 "    \
    "of 80 GiB) for every preset: stated x 79.65 / 80 GiB"

size_t rf_hw_preset_count(void);
const rf_hw *rf_hw_preset_at(size_t i);

/* Copy the preset called name into out; RF_EINVAL "unknown hardware 'x'
 * (known: ...)" otherwise. */
rf_status rf_hw_preset(const char *name, rf_hw *out, rf_err *err);

/* The system name under which the public kernel tables measured a preset's
 * GPU (aiconfigurator's: "h100_sxm" for h100-sxm, "h200_sxm" for h200,
 * "b200_sxm" for b200, "b300_sxm" for b300): the folder of its tables
 * under data/gpu (docs/gpu-predict.md). NULL for any other name. */
const char *rf_hw_tables_system(const char *name);

/* Accepted figures: wide enough for any machine and any --peak/--bw/--ridge,
 * narrow enough that every ridge (peak / bandwidth) and every time floor of
 * a 64-bit FLOP or byte count (< 1.9e19) is a finite number. */
#define RF_HW_BW_MIN 1.0 /* bytes/s   */
#define RF_HW_BW_MAX 1e21
#define RF_HW_PEAK_MIN 1.0 /* FLOP/s, for a peak given at all */
#define RF_HW_PEAK_MAX 1e30
#define RF_HW_RIDGE_MIN 1e-12 /* FLOP/byte */
#define RF_HW_RIDGE_MAX 1e12

/* Check a hardware description: bandwidth within [1, 1e21] bytes/s, every
 * peak 0 (none) or within [1, 1e30] FLOP/s, a ridge override 0 or within
 * [1e-12, 1e12] FLOP/byte, at least one positive peak (or a ridge). These
 * bounds keep every ridge and time floor finite. RF_EINVAL for a negative
 * or missing figure, RF_ERANGE for one beyond the bounds. */
rf_status rf_hw_validate(const rf_hw *hw, rf_err *err);

/* The peak slot a math dtype reads: both fp8 kinds share the fp8 tensor
 * core's (RF_FP8_E4M3); every other dtype its own. */
rf_dtype_kind rf_hw_peak_kind(rf_dtype_kind math);

/* Roof for a math dtype. tf32 falls back to nothing: a dtype with no peak
 * is an error naming the hardware and dtype (RF_EUNAVAIL). With a ridge
 * override, pi = ridge x beta. */
rf_status rf_hw_roof(const rf_hw *hw, rf_dtype_kind math, rf_roof *out, rf_err *err);

/* The math dtype a roof on hw uses when `asked` is wanted.
 *   - asked itself when hw has its peak, or when a ridge override sets the
 *     compute roof (pi = ridge x beta holds for any dtype);
 *   - strict (the user named the dtype: --act-dtype, --weight-dtype): no
 *     fallback; RF_EUNAVAIL naming the hardware and the missing peak;
 *   - otherwise (a default, or the dtype a checkpoint declares) the best
 *     sound substitute: among the float dtypes that hold every value of
 *     asked (at least its mantissa and exponent bits: bf16 -> tf32, fp32,
 *     fp64, never fp16, whose range is narrower; fp8 -> bf16, fp16, ...;
 *     int8 -> bf16 and wider), the one with the highest peak on hw; a tie
 *     goes to the narrower, so the asked dtype's own family comes first.
 *     A measured CPU profile (fp32 and fp64 peaks) gives fp32 for bf16.
 *     RF_EUNAVAIL when hw has no such peak either.
 * The arithmetic of a step is unchanged by the choice: FLOPs and bytes
 * follow the storage dtypes; only pi (and so the ridge) changes. */
rf_status rf_hw_math_dtype(const rf_hw *hw, rf_dtype_kind asked, bool strict, rf_dtype_kind *used,
                           rf_err *err);

/* rf_hw_roof of rf_hw_math_dtype's choice: out->math is the dtype used,
 * out->math_asked the one asked, out->math_fallback true when they differ. */
rf_status rf_hw_roof_for(const rf_hw *hw, rf_dtype_kind asked, bool strict, rf_roof *out,
                         rf_err *err);

/* Place F FLOPs and Q bytes on the roof. Q = 0 gives intensity 0 and a
 * compute-only floor. */
rf_point rf_roof_place(const rf_roof *roof, double flops, double bytes);

const char *rf_regime_name(rf_regime r); /* "memory-bound" / "compute-bound" */

#ifdef __cplusplus
}
#endif
#endif
