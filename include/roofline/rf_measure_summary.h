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
    double level_rate[RF_HW_PROFILE_MAX_LEVELS][RF_BW_COUNT];     /* best rate of each
                                              bandwidth kernel at each level, B/s; read
                                              is the level's figure; 0 = not measured */
    double kernel_spread[RF_HW_PROFILE_MAX_KERNELS]; /* (best - median) / best            */
    size_t unsteady;                   /* kernels with spread > RF_SPREAD_WARN       */
    size_t worst;                      /* index of the kernel with the most spread   */
    int peak_kernel[RF_DTYPE_COUNT];   /* the register kernel that measured the dtype's
                                              peak ("fma_avx512_fp32",
                                              "dot_avx512vnni_int8"), -1: none       */
    bool peak_is_fp32[RF_DTYPE_COUNT]; /* the peak is fp32's, higher than the dtype's
                                              own kernel (fp16 through F16C computes in
                                              fp32: rf_measure_cpu)                   */
    /* The memory roof's bursts (p->dram_bursts; all 0 when not recorded):
     * the roof is the most any burst showed; typical = the median of the
     * bursts' best, q1 / q3 its interquartile range (linear between order
     * statistics), low the slowest burst's best. roof_moves: the bursts'
     * bests span more than RF_ROOF_MOVES of the roof, so another run, whose
     * bursts met only the slow stretch, would read well below this roof. */
    double roof_typical, roof_q1, roof_q3, roof_low;
    double roof_low_below; /* (roof - low) / roof                       */
    int roof_bursts, roof_trials, roof_runs;
    bool roof_moves;
} rf_hw_profile_summary;

#define RF_ROOF_MOVES 0.10

void rf_hw_profile_summarize(const rf_hw_profile *p, rf_hw_profile_summary *out);

/* `measure --merge`: pool an earlier profile of the same machine (same CPU,
 * threads and kernels' ISA, else RF_EINVAL naming what differs) into p, a
 * new run: the memory roof and every peak become the higher of the two,
 * the DRAM level with the roof; the bursts are pooled (the oldest dropped
 * past RF_HW_PROFILE_MAX_BURSTS), runs counted; the sustained roof, levels,
 * kernels and clock stay the new run's; a calibration the new run lacks is
 * kept from the old. */
rf_status rf_hw_profile_merge(const rf_hw_profile *old, rf_hw_profile *p, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
