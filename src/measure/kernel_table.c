/* kernel_table.c - the function-pointer table: reference kernels first,
 * then the ISA's own (BLIS style), chosen once from cpuid or an override. */
#include <stdio.h>
#include <string.h>

#include "attn_kernels.h"
#include "kernels.h"
#include "roofline/rf_measure.h"

static rf_kernel_table reference_table(void)
{
    rf_kernel_table t = {
        .isa = RF_ISA_SCALAR,
        .read_f64 = rf_kern_read_ref_f64,
        .copy_f64 = rf_kern_copy_ref_f64,
        .copy_nt_f64 = rf_kern_copy_ref_f64, /* no streaming store in C */
        .triad_f64 = rf_kern_triad_ref_f64,
        .triad_nt_f64 = rf_kern_triad_ref_f64,
        .fma_f32 = rf_kern_muladd_ref_f32,
        .fma_f64 = rf_kern_muladd_ref_f64,
        .fma_chains_f32 = RF_KERN_REF_CHAINS,
        .fma_chains_f64 = RF_KERN_REF_CHAINS,
        .fma_fused = false,
        .nt_stores = false,
        .attn_scores_f32 = rf_kern_attn_scores_ref_f32,
        .attn_values_f32 = rf_kern_attn_values_ref_f32,
        .attn_isa = RF_ISA_SCALAR,
        .attn_dh_multiple = 1,
    };
    return t;
}

#ifdef RF_KERN_X86
static void override_sse(rf_kernel_table *t)
{
    t->isa = RF_ISA_SSE;
    t->read_f64 = rf_kern_read_sse_f64;
    t->copy_f64 = rf_kern_copy_sse_f64;
    t->copy_nt_f64 = rf_kern_copy_nt_sse_f64;
    t->triad_f64 = rf_kern_triad_sse_f64;
    t->triad_nt_f64 = rf_kern_triad_nt_sse_f64;
    t->fma_f32 = rf_kern_muladd_sse_f32;
    t->fma_f64 = rf_kern_muladd_sse_f64;
    t->fma_chains_f32 = RF_KERN_SSE_CHAINS_F32;
    t->fma_chains_f64 = RF_KERN_SSE_CHAINS_F64;
    t->nt_stores = true;
}

/* Decode attention in AVX2 + FMA, d_h a multiple of one vector. */
static void attn_avx2(rf_kernel_table *t)
{
    t->attn_scores_f32 = rf_kern_attn_scores_avx2_f32;
    t->attn_values_f32 = rf_kern_attn_values_avx2_f32;
    t->attn_isa = RF_ISA_AVX2;
    t->attn_dh_multiple = 8;
}

static void override_avx2(rf_kernel_table *t)
{
    t->isa = RF_ISA_AVX2;
    t->read_f64 = rf_kern_read_avx2_f64;
    t->copy_f64 = rf_kern_copy_avx2_f64;
    t->copy_nt_f64 = rf_kern_copy_nt_avx2_f64;
    t->triad_f64 = rf_kern_triad_avx2_f64;
    t->triad_nt_f64 = rf_kern_triad_nt_avx2_f64;
    t->fma_f32 = rf_kern_fma_avx2_f32;
    t->fma_f64 = rf_kern_fma_avx2_f64;
    t->fma_chains_f32 = RF_KERN_AVX2_CHAINS_F32;
    t->fma_chains_f64 = RF_KERN_AVX2_CHAINS_F64;
    t->fma_fused = true;
    t->nt_stores = true;
    attn_avx2(t);
}

/* The dot-product kernels an AVX-512 core has (each extension checked). */
static void dots_avx512(const rf_cpu *cpu, rf_kernel_table *t)
{
    if (!(cpu->avx512bw && cpu->avx512vl && cpu->f16c && cpu->fma))
        return;
    t->fp16_tile = rf_kern_fp16_tile_avx512;
    t->dot_isa[1] = "avx512f16c";
    if (cpu->avx512_bf16) {
        t->dot_bf16 = rf_kern_dot_bf16_avx512;
        t->dot_isa[0] = "avx512bf16";
    }
    if (cpu->avx512_vnni) {
        t->dot_int8 = rf_kern_dot_int8_avx512;
        t->dot_q8_0 = rf_kern_dot_q8_0_avx512;
        t->dot_q4_0 = rf_kern_dot_q4_0_avx512;
        t->dot_isa[2] = "avx512vnni";
    }
}

static void override_avx512(rf_kernel_table *t)
{
    t->isa = RF_ISA_AVX512;
    t->read_f64 = rf_kern_read_avx512_f64;
    t->copy_f64 = rf_kern_copy_avx512_f64;
    t->copy_nt_f64 = rf_kern_copy_nt_avx512_f64;
    t->triad_f64 = rf_kern_triad_avx512_f64;
    t->triad_nt_f64 = rf_kern_triad_nt_avx512_f64;
    t->fma_f32 = rf_kern_fma_avx512_f32;
    t->fma_f64 = rf_kern_fma_avx512_f64;
    t->fma_chains_f32 = RF_KERN_AVX512_CHAINS_F32;
    t->fma_chains_f64 = RF_KERN_AVX512_CHAINS_F64;
    t->fma_fused = true;
    t->nt_stores = true;
}
#endif

_Static_assert(RF_KERN_REF_CHAINS <= RF_FMA_MAX_CHAINS, "chains fit the buffer");
#ifdef RF_KERN_X86
_Static_assert(RF_KERN_AVX512_CHAINS_F32 <= RF_FMA_MAX_CHAINS, "chains fit the buffer");
#endif

rf_status rf_kernels_for(const rf_cpu *cpu, rf_isa isa, rf_kernel_table *out, rf_err *err)
{
    if ((unsigned)isa >= RF_ISA_COUNT)
        return rf_err_set(err, RF_EINVAL, "unknown ISA %d", (int)isa);
    if (!rf_isa_supported(cpu, isa))
        return rf_err_set(err, RF_EUNAVAIL, "isa %s not supported by this CPU (best: %s)",
                          rf_isa_name(isa), rf_isa_name(rf_isa_best(cpu)));
    *out = reference_table();
    switch (isa) {
    case RF_ISA_SCALAR:
        return RF_OK;
#ifdef RF_KERN_X86
    case RF_ISA_SSE:
        override_sse(out);
        return RF_OK;
    case RF_ISA_AVX2:
        override_avx2(out);
        return RF_OK;
    case RF_ISA_AVX512:
        override_avx512(out);
        if (rf_isa_supported(cpu, RF_ISA_AVX2))
            attn_avx2(out);
        dots_avx512(cpu, out);
        return RF_OK;
#endif
    default:
        return rf_err_set(err, RF_EUNAVAIL, "isa %s not built for this architecture",
                          rf_isa_name(isa));
    }
}

rf_status rf_kernels_choose(const rf_cpu *cpu, const char *override, rf_kernel_table *out,
                            rf_err *err)
{
    rf_isa isa = rf_isa_best(cpu);
    if (override && *override) {
        rf_status s = rf_isa_parse(override, &isa, err);
        if (s != RF_OK)
            return s;
    }
    return rf_kernels_for(cpu, isa, out, err);
}

void rf_kernel_name(const char *isa, const char *op, const char *dtype, char *out, size_t cap)
{
    snprintf(out, cap, "%s_%s_%s", op, isa, dtype);
}
