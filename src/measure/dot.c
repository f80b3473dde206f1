/* dot.c - the dot-product peaks: bf16, fp16 through F16C, int8, and
 * llama.cpp's q8_0 / q4_0 blocks through int8 dot products, timed on every
 * thread as the FMA peak is (bench.c), each result checked after timing. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "measure_internal.h"

#define DOT_ITERS 1024
#define ROW_BLOCKS 128 /* 4,096 weights: 2.3 KiB of q4_0, 4.3 KiB of q8_0 */

static const struct {
    const char *name;
    rf_dtype_kind dtype;
    double flops_per_step; /* a register step (all chains) or a block     */
} dots[] = {
    [RF_DOT_BF16] = {"bf16", RF_BF16, 16 * 16 * 2 * 2}, /* 16 zmm x 16 lanes x 2 pairs */
    [RF_DOT_FP16] = {"fp16", RF_FP16, 16 * 16 * 2},     /* 16 FMAs x 16 lanes          */
    [RF_DOT_INT8] = {"int8", RF_INT8, 16 * 16 * 4 * 2}, /* 16 zmm x 16 lanes x 4 quads */
    [RF_DOT_Q8_0] = {"q8_0", RF_INT8, 2 * RF_KERN_QK},
    [RF_DOT_Q4_0] = {"q4_0", RF_INT8, 2 * RF_KERN_QK},
};
_Static_assert(sizeof dots / sizeof dots[0] == RF_DOT_COUNT, "one row per dot kernel");

const char *rf_dot_name(rf_dot_kind kind)
{
    return (unsigned)kind < RF_DOT_COUNT ? dots[kind].name : "?";
}

rf_dtype_kind rf_dot_dtype(rf_dot_kind kind)
{
    return (unsigned)kind < RF_DOT_COUNT ? dots[kind].dtype : RF_FP32;
}

bool rf_dot_available(const rf_kernel_table *t, rf_dot_kind kind)
{
    switch (kind) {
    case RF_DOT_BF16:
        return t->dot_bf16 != NULL;
    case RF_DOT_FP16:
        return t->fp16_tile != NULL;
    case RF_DOT_INT8:
        return t->dot_int8 != NULL;
    case RF_DOT_Q8_0:
        return t->dot_q8_0 != NULL;
    case RF_DOT_Q4_0:
        return t->dot_q4_0 != NULL;
    default:
        return false;
    }
}

/* One thread's data: the chains, or a row of blocks and its activations. */
typedef struct dot_data {
    _Alignas(64) float f32[RF_KERN_DOT_CHAINS];
    int32_t i32[RF_KERN_DOT_CHAINS];
    rf_kern_q8_0 x8[ROW_BLOCKS], y8[ROW_BLOCKS];
    rf_kern_q4_0 x4[ROW_BLOCKS];
    float result;
} dot_data;

typedef struct dot_job {
    rf_team *team;
    const rf_kernel_table *t;
    rf_dot_kind kind;
    uint64_t reps;
    dot_data *d; /* (threads) */
} dot_job;

/* Small integers, so every block's and the row's sums are exact in fp32
 * (|sum| <= 128 blocks x 32 x 8 x 16 < 2^24) and any order of adding
 * blocks gives the reference's value; scales 1 and 0.5. */
static void fill_blocks(dot_data *d)
{
    for (int b = 0; b < ROW_BLOCKS; b++) {
        d->x8[b].d = d->x4[b].d = 0x3c00; /* 1.0 */
        d->y8[b].d = 0x3800;              /* 0.5 */
        for (int i = 0; i < RF_KERN_QK; i++) {
            int k = b * RF_KERN_QK + i;
            d->x8[b].qs[i] = (int8_t)(k * 7 % 16 - 8);
            d->y8[b].qs[i] = (int8_t)(k * 13 % 32 - 16);
        }
        for (int i = 0; i < RF_KERN_QK / 2; i++)
            d->x4[b].qs[i] = (uint8_t)((b * 16 + i) * 37 % 256);
    }
}

static void dot_thread(int th, void *p)
{
    dot_job *j = p;
    dot_data *d = &j->d[th];
    const rf_kernel_table *t = j->t;
    for (int c = 0; c < RF_KERN_DOT_CHAINS; c++) {
        d->f32[c] = (float)c;
        d->i32[c] = c;
    }
    float r = 0;
    for (uint64_t i = 0; i < j->reps; i++) {
        switch (j->kind) {
        case RF_DOT_BF16:
            t->dot_bf16(d->f32, DOT_ITERS);
            break;
        case RF_DOT_FP16:
            t->fp16_tile(d->f32, DOT_ITERS);
            break;
        case RF_DOT_INT8:
            t->dot_int8(d->i32, DOT_ITERS);
            break;
        case RF_DOT_Q8_0:
            r = t->dot_q8_0(d->x8, d->y8, ROW_BLOCKS);
            break;
        default:
            r = t->dot_q4_0(d->x4, d->y8, ROW_BLOCKS);
            break;
        }
    }
    d->result = r;
}

static double dot_trial(void *p, uint64_t reps)
{
    dot_job *j = p;
    j->reps = reps;
    return rf__team_run_timed_each(j->team, dot_thread, j);
}

static bool dot_result_ok(const dot_job *j, int threads)
{
    size_t steps = (size_t)j->reps * DOT_ITERS;
    for (int th = 0; th < threads; th++) {
        const dot_data *d = &j->d[th];
        switch (j->kind) {
        case RF_DOT_Q8_0:
            if (d->result != rf_kern_dot_q8_0_ref(d->x8, d->y8, ROW_BLOCKS))
                return false;
            break;
        case RF_DOT_Q4_0:
            if (d->result != rf_kern_dot_q4_0_ref(d->x4, d->y8, ROW_BLOCKS))
                return false;
            break;
        case RF_DOT_INT8:
            for (int c = 0; c < RF_KERN_DOT_CHAINS; c++)
                if ((uint32_t)d->i32[c] != (uint32_t)c + 4u * (uint32_t)steps)
                    return false;
            break;
        default:
            for (int c = 0; c < RF_KERN_DOT_CHAINS; c++)
                if (d->f32[c] != rf_kern_count_ref_f32((float)c, steps))
                    return false;
        }
    }
    return true;
}

rf_status rf_dot_measure(rf_team *team, const rf_kernel_table *t, rf_dot_kind kind,
                         rf_timing timing, rf_measurement *out, rf_err *err)
{
    if ((unsigned)kind >= RF_DOT_COUNT)
        return rf_err_set(err, RF_EINVAL, "unknown dot-product kernel %d", (int)kind);
    if (!rf_dot_available(t, kind))
        return rf_err_set(err, RF_EUNAVAIL, "no %s dot-product kernel on this CPU (%s table)",
                          dots[kind].name, rf_isa_name(t->isa));
    int threads = rf_team_size(team);
    dot_job job = {.team = team, .t = t, .kind = kind};
    if (posix_memalign((void **)&job.d, 64, sizeof *job.d * (size_t)threads) != 0)
        return rf_err_set(err, RF_ENOMEM, "out of memory");
    for (int th = 0; th < threads; th++)
        fill_blocks(&job.d[th]);
    const char *isa = t->dot_isa[kind == RF_DOT_BF16 ? 0 : kind == RF_DOT_FP16 ? 1 : 2];
    memset(out, 0, sizeof *out);
    rf_kernel_name(isa, kind == RF_DOT_FP16 ? "tile" : "dot", dots[kind].name, out->name,
                   sizeof out->name);
    bool blocks = kind == RF_DOT_Q8_0 || kind == RF_DOT_Q4_0;
    double work = dots[kind].flops_per_step * (blocks ? ROW_BLOCKS : DOT_ITERS) * threads;
    if (blocks) /* the row and its activations, all threads */
        out->bytes = (uint64_t)threads * ROW_BLOCKS *
                     (sizeof(rf_kern_q8_0) +
                      (kind == RF_DOT_Q8_0 ? sizeof(rf_kern_q8_0) : sizeof(rf_kern_q4_0)));
    rf_status s = rf__time_kernel(dot_trial, &job, work, timing, out, err);
    if (s == RF_OK && !dot_result_ok(&job, threads))
        s = rf_err_set(err, RF_EINTERNAL, "%s: a result differs from the reference", out->name);
    free(job.d);
    return s;
}
