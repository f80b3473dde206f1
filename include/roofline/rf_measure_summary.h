/* rf_measure_summary.h - the figures derived from a hardware profile for
 * showing it (ridges, shares of the theoretical peak, spreads), so the CLI
 * does no arithmetic. */
#ifndef RF_MEASURE_SUMMARY_H
#define RF_MEASURE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "rf_dtype.h"
#include "rf_hw_profile.h"
#include "rf_measure_bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Figures derived from a profile for showing it (the CLI does no
 * arithmetic). */
typedef struct rf_hw_profile_summary {
    double ridge[RF_DTYPE_COUNT];          /* peak / memory roof, FLOP/byte (0: no peak) */
    double of_theoretical[RF_DTYPE_COUNT]; /* measured / theoretical peak (0: unknown)   */
    double level_ridge[RF_HW_PROFILE_MAX_LEVELS][RF_DTYPE_COUNT]; /* peak / level's read  */
    double level_rate[RF_HW_PROFILE_MAX_LEVELS][RF_BW_COUNT];    /* best rate of each
                                              bandwidth kernel at each level, B/s; read
                                              is the level's figure; 0 = not measured */
    double kernel_spread[RF_HW_PROFILE_MAX_KERNELS]; /* (best - median) / best            */
    size_t unsteady;                       /* kernels with spread > RF_SPREAD_WARN       */
    size_t worst;                          /* index of the kernel with the most spread   */
    int peak_kernel[RF_DTYPE_COUNT];       /* the register kernel that measured the dtype's
                                              peak ("fma_avx512_fp32",
                                              "dot_avx512vnni_int8"), -1: none       */
    bool peak_is_fp32[RF_DTYPE_COUNT];     /* the peak is fp32's, higher than the dtype's
                                              own kernel (fp16 through F16C computes in
                                              fp32: rf_measure_cpu)                   */
} rf_hw_profile_summary;

void rf_hw_profile_summarize(const rf_hw_profile *p, rf_hw_profile_summary *out);

#ifdef __cplusplus
}
#endif
#endif
