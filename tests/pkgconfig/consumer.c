/* A program that knows the library only through its installed headers and
 * `pkg-config --cflags --libs roofline`: one call into each archive, so a
 * library (or a library they need) missing from roofline.pc fails the link.
 * Prints one line and exits 0 when every answer is the expected one. */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_cuda.h"    /* rf_cuda                                 */
#include "roofline/rf_hw.h"      /* rf_core                                 */
#include "roofline/rf_measure.h" /* rf_measure: CBLAS through OpenBLAS       */
#include "roofline/rf_reader.h"  /* rf_io: config.json through jansson      */
#include "roofline/rf_report.h"  /* rf_report                               */

int main(void)
{
    rf_err e;
    rf_hw hw;
    rf_roof roof;
    char ridge[32];
    /* The H100 SXM's bf16 ridge: 989.4e12 FLOP/s / 3.35e12 B/s = 295.34
     * FLOP/byte, printed to one decimal as the book chapter prints it: 295.3. */
    if (rf_hw_preset("h100-sxm", &hw, &e) || rf_hw_roof(&hw, RF_BF16, &roof, &e) ||
        strcmp(rf_fmt(roof.ridge, RF_U_INTENSITY, ridge, sizeof ridge), "295.3"))
        return 1;
    static const char cfg[] = "{\"model_type\": \"llama\", \"hidden_size\": 256,"
                              " \"num_hidden_layers\": 2, \"num_attention_heads\": 4}";
    rf_model m;
    if (rf_model_parse(cfg, sizeof cfg - 1, "tiny.json", &m, &e) || m.hidden != 256)
        return 2;
    /* A 4 x 64 x 64 sgemm, its sampled outputs checked before it is timed. */
    rf_gemm_bench_opts g = {.m = 4,
                            .k = 64,
                            .n = 64,
                            .dtype = RF_FP32,
                            .threads = 1,
                            .timing = {.min_time_s = 1e-4, .trials = 1}};
    rf_gemm_bench_result r;
    if (rf_gemm_bench(&g, &r, &e) || strcmp(r.routine, "cblas_sgemm"))
        return 3;
    /* The CUDA runtime (when built): a device count, or unavailable. */
    int devices = 0;
    rf_status cu = rf_cuda_device_count(&devices, &e);
    if (cu != RF_OK && cu != RF_EUNAVAIL)
        return 4;
    printf("ridge %s, %s, %s, CUDA backend %s: %d device(s)\n", ridge, m.name, r.routine,
           rf_cuda_built() ? "built" : "not built", devices);
    return 0;
}
