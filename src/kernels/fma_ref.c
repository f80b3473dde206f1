/* fma_ref.c - portable multiply-add chains: the scalar ISA level (mul then
 * add, two roundings) and the one-chain oracle for every variant. Built
 * with -ffp-contract=off so mul-then-add stays two operations. */
#include <math.h>

#include "kernels.h"

void rf_kern_muladd_ref_f32(float *chains, size_t iters, float mul, float add)
{
    float x[RF_KERN_REF_CHAINS];
    for (int j = 0; j < RF_KERN_REF_CHAINS; j++)
        x[j] = chains[j];
    for (size_t i = 0; i < iters; i++)
        for (int j = 0; j < RF_KERN_REF_CHAINS; j++)
            x[j] = x[j] * mul + add;
    for (int j = 0; j < RF_KERN_REF_CHAINS; j++)
        chains[j] = x[j];
}

void rf_kern_muladd_ref_f64(double *chains, size_t iters, double mul, double add)
{
    double x[RF_KERN_REF_CHAINS];
    for (int j = 0; j < RF_KERN_REF_CHAINS; j++)
        x[j] = chains[j];
    for (size_t i = 0; i < iters; i++)
        for (int j = 0; j < RF_KERN_REF_CHAINS; j++)
            x[j] = x[j] * mul + add;
    for (int j = 0; j < RF_KERN_REF_CHAINS; j++)
        chains[j] = x[j];
}

/* The step is a fixed function of x, so once a step leaves x unchanged
 * every later one does too: stop there. */
float rf_kern_chain_ref_f32(float x, size_t iters, float mul, float add, int fused)
{
    for (size_t i = 0; i < iters; i++) {
        float next = fused ? fmaf(x, mul, add) : x * mul + add;
        if (next == x)
            break;
        x = next;
    }
    return x;
}

double rf_kern_chain_ref_f64(double x, size_t iters, double mul, double add, int fused)
{
    for (size_t i = 0; i < iters; i++) {
        double next = fused ? fma(x, mul, add) : x * mul + add;
        if (next == x)
            break;
        x = next;
    }
    return x;
}
