/* rf_measured.h - measured roofs and measured operators, to draw beside
 * the predicted ones (`roofline plot --measured FILE.json`).
 *
 * One JSON object; every key is optional but at least one kind of data must
 * be present, so both files the measuring commands write can be drawn:
 *
 *   a profile from `roofline measure` (rf_hw_profile.h):
 *     "name": "rtx4090-lab",
 *     "bandwidth_bytes_per_s": 9.2e11,                  the measured memory roof
 *     "peak_flops_per_s": {"bf16": 1.5e14, "fp32": 7e13} measured compute roofs
 *
 *   operator timings from `roofline profile --json`:
 *     "phase": "decode",                                 default of every op
 *     "ops": [{"name": "q_proj", "phase": "decode",     "decode" or "prefill";
 *              "flops": 7.19e8, "bytes": 7.20e8,         neither given: no
 *              "measured_s": 7.9e-4}, ...]               phase (drawn grey)
 *
 * flops, bytes and measured_s of one operator cover the same work (one
 * instance or all of its layers, as long as the three agree), so its point
 * sits at intensity flops / bytes and achieved throughput flops / measured_s.
 * An operator with 0 FLOPs (a gather) is read but has no place on a log
 * axis. Other keys (cpu, date, levels, kernels, the ops' other columns) are
 * ignored.
 * This header is the data type (core); its reader is in rf_measured_io.h (io).
 */
#ifndef RF_MEASURED_H
#define RF_MEASURED_H

#include <stdbool.h>
#include <stddef.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_step.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_MEASURED_MAX_OPS 96
#define RF_MEASURED_NAME_MAX 48

typedef struct rf_measured_op {
    char name[RF_MEASURED_NAME_MAX]; /* operator name, as the step names it   */
    bool has_phase;                  /* false: the file gave no phase         */
    rf_phase phase;
    double flops;      /* FLOPs of the timed work (>= 0)        */
    double bytes;      /* bytes of the timed work (> 0)         */
    double measured_s; /* its measured time (> 0)               */
} rf_measured_op;

typedef struct rf_measured {
    char name[64];                           /* "name" of the file; absent: "" from
                                        rf_measured_parse, the file's base
                                        name from rf_measured_load            */
    double bw_bytes_per_s;                   /* measured memory roof; 0 = none        */
    double peak_flops_per_s[RF_DTYPE_COUNT]; /* measured compute roofs; 0 = none */
    rf_measured_op ops[RF_MEASURED_MAX_OPS];
    size_t n_ops;
} rf_measured;

/* True when the file carried any roof (bandwidth or a peak). */
bool rf_measured_has_roofs(const rf_measured *m);

#ifdef __cplusplus
}
#endif
#endif
