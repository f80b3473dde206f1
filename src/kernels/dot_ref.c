/* dot_ref.c - the oracle of the dot-product kernels (dot_avx512.c): fp16
 * to fp32 conversion, the quantized blocks' dot products in portable C, and
 * the value a register chain reaches. Built with -ffp-contract=off. */
#include <math.h>

#include "kernels.h"

float rf_kern_half_to_float(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (exp == 0)
        v = ldexpf((float)man, -24); /* zero or subnormal */
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(man | 0x400), exp - 25);
    return sign ? -v : v;
}

/* Integer sums of 32 products are exact in int32, and one block's scaled
 * sum is rounded once: the order the vector kernels add blocks in can
 * differ only where the partial sums stop being exact (the lab's data
 * keeps them exact). */
float rf_kern_dot_q8_0_ref(const rf_kern_q8_0 *x, const rf_kern_q8_0 *y, size_t blocks)
{
    float sum = 0;
    for (size_t b = 0; b < blocks; b++) {
        int32_t s = 0;
        for (int i = 0; i < RF_KERN_QK; i++)
            s += (int32_t)x[b].qs[i] * y[b].qs[i];
        sum += rf_kern_half_to_float(x[b].d) * rf_kern_half_to_float(y[b].d) * (float)s;
    }
    return sum;
}

float rf_kern_dot_q4_0_ref(const rf_kern_q4_0 *x, const rf_kern_q8_0 *y, size_t blocks)
{
    float sum = 0;
    for (size_t b = 0; b < blocks; b++) {
        int32_t s = 0;
        for (int i = 0; i < RF_KERN_QK / 2; i++) {
            s += ((x[b].qs[i] & 0xf) - 8) * y[b].qs[i];
            s += ((x[b].qs[i] >> 4) - 8) * y[b].qs[i + RF_KERN_QK / 2];
        }
        sum += rf_kern_half_to_float(x[b].d) * rf_kern_half_to_float(y[b].d) * (float)s;
    }
    return sum;
}

/* A chain adding one a step to an integer start: exact until 2^24, where
 * x + 1 rounds back to x (ties to even) and the chain stops. */
float rf_kern_count_ref_f32(float start, size_t steps)
{
    const double top = 16777216.0;
    double v = (double)start + (double)steps;
    return (float)(v < top ? v : top);
}
