/* bench.c - timing one kernel: warm-up, calibrated repetitions, trials;
 * the bandwidth, FMA and clock kernels on a team of pinned threads, each
 * result checked after timing. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "measure_internal.h"

#define MAX_REPS ((uint64_t)1 << 40)

rf_status rf__time_kernel(rf__trial_fn trial, void *arg, double work_per_rep, rf_timing timing,
                          rf_measurement *out, rf_err *err)
{
    if (timing.trials < 1 || timing.trials > RF_STATS_MAX || !(timing.min_time_s > 0))
        return rf_err_set(err, RF_EINVAL, "timing: %d trials of %g s (1..%d trials, > 0 s)",
                          timing.trials, timing.min_time_s, RF_STATS_MAX);
    uint64_t reps = 1;
    double t = trial(arg, reps); /* warm-up: caches, pages, clocks */
    const double target = timing.min_time_s / 4;
    while (t < target && reps < MAX_REPS) {
        double grow = t > 0 ? 1.5 * target / t : 16;
        reps = (uint64_t)ceil((double)reps * (grow < 2 ? 2 : grow > 64 ? 64 : grow));
        t = trial(arg, reps);
    }
    double scaled = ceil((double)reps * timing.min_time_s / t);
    if (scaled > (double)reps)
        reps = scaled > (double)MAX_REPS ? MAX_REPS : (uint64_t)scaled;

    double samples[RF_STATS_MAX];
    for (int i = 0; i < timing.trials; i++) {
        double s = trial(arg, reps);
        samples[i] = s > 0 ? work_per_rep * (double)reps / s : 0;
    }
    out->reps = reps;
    out->work = work_per_rep * (double)reps;
    memcpy(out->sample, samples, (size_t)timing.trials * sizeof samples[0]);
    return rf_stats_of(samples, (size_t)timing.trials, &out->rate, err);
}

rf_status rf__measurement_merge(rf_measurement *into, const rf_measurement *more, rf_err *err)
{
    if (into->rate.n == 0) { /* the first burst */
        *into = *more;
        return RF_OK;
    }
    size_t n = into->rate.n, m = more->rate.n;
    if (n + m > RF_STATS_MAX)
        return rf_err_set(err, RF_ERANGE, "%s: %zu trials (at most %d)", into->name, n + m,
                          RF_STATS_MAX);
    memcpy(into->sample + n, more->sample, m * sizeof more->sample[0]);
    return rf_stats_of(into->sample, n + m, &into->rate, err);
}

/* ---- bandwidth ---------------------------------------------------------- */

static const rf_bw_desc bw_descs[] = {
    [RF_BW_READ] = {"read", 1, 8, false},         [RF_BW_COPY] = {"copy", 2, 16, false},
    [RF_BW_COPY_NT] = {"copy_nt", 2, 16, true},   [RF_BW_TRIAD] = {"triad", 3, 24, false},
    [RF_BW_TRIAD_NT] = {"triad_nt", 3, 24, true},
};
_Static_assert(sizeof bw_descs / sizeof bw_descs[0] == RF_BW_COUNT, "one descriptor per kernel");

const rf_bw_desc *rf_bw_desc_of(rf_bw_kind kind)
{
    return (unsigned)kind < RF_BW_COUNT ? &bw_descs[kind] : NULL;
}

#define SLICE_ELEMS 64 /* a slice is whole 512-byte blocks        */
#define TRIAD_SCALE 3.0
#define MAX_THREADS 1024

/* Data: integer-valued, so every sum is exact in any order. */
static double src_value(size_t i) { return (double)(i & 15); }
static double second_value(size_t i) { return (double)(i & 7); }

typedef struct bw_job {
    rf_team *team;
    const rf_kernel_table *t;
    rf_bw_kind kind;
    double *arr[3];    /* read: a; copy: dst, src; triad: a, b, c      */
    size_t per_thread; /* elements of one array one thread owns        */
    size_t chunk;      /* elements one call reads (read: maybe a part) */
    size_t chunks;     /* per_thread / chunk                           */
    size_t next;       /* chunk the next trial starts with             */
    uint64_t reps;
    bool init;       /* this run first-touches instead of timing     */
    double expect;   /* read: one call's sum of a chunk, the same for
                              every chunk of every thread (see bw_thread)  */
    atomic_bool bad; /* a read returned a wrong sum                   */
} bw_job;

struct rf_bw_set {
    bw_job job;
    char *block; /* every array, one allocation                  */
};

static void bw_thread(int th, void *p)
{
    bw_job *j = p;
    size_t n = j->per_thread, off = (size_t)th * n;
    double *x = j->arr[0] + off, *y = j->arr[1] ? j->arr[1] + off : NULL;
    double *z = j->arr[2] ? j->arr[2] + off : NULL;
    if (j->init) {
        /* first touch: each thread writes its own slice of every array */
        for (size_t i = 0; i < n; i++) {
            switch (j->kind) {
            case RF_BW_READ:
                x[i] = src_value(off + i);
                break;
            case RF_BW_COPY:
            case RF_BW_COPY_NT:
                x[i] = 0;
                y[i] = src_value(off + i);
                break;
            default:
                x[i] = 0;
                y[i] = src_value(off + i);
                z[i] = second_value(off + i);
                break;
            }
        }
        /* src_value has period 16 and every chunk of every thread starts at
         * a multiple of 64 elements, so every chunk sums to the same value;
         * thread 0 writes it (the team's barrier publishes it). */
        if (j->kind == RF_BW_READ && th == 0)
            j->expect = rf_kern_read_ref_f64(x, j->chunk);
        return;
    }
    double sum = 0;
    size_t c = j->next;
    for (uint64_t r = 0; r < j->reps; r++) {
        switch (j->kind) {
        case RF_BW_READ:
            sum += j->t->read_f64(x + c * j->chunk, j->chunk);
            c = c + 1 == j->chunks ? 0 : c + 1;
            break;
        case RF_BW_COPY:
            j->t->copy_f64(x, y, n);
            break;
        case RF_BW_COPY_NT:
            j->t->copy_nt_f64(x, y, n);
            break;
        case RF_BW_TRIAD:
            j->t->triad_f64(x, y, z, TRIAD_SCALE, n);
            break;
        default:
            j->t->triad_nt_f64(x, y, z, TRIAD_SCALE, n);
            break;
        }
    }
    if (j->kind == RF_BW_READ && sum != j->expect * (double)j->reps)
        atomic_store(&j->bad, true);
}

static double bw_trial(void *p, uint64_t reps)
{
    bw_job *j = p;
    j->reps = reps;
    double t = rf__team_run_timed(j->team, bw_thread, j);
    j->next = (size_t)((j->next + reps) % j->chunks);
    return t;
}

/* After timing: the destination holds what the reference computes. */
static bool bw_result_ok(const bw_job *j, size_t total)
{
    if (j->kind == RF_BW_READ)
        return !atomic_load(&j->bad);
    double got = rf_kern_read_ref_f64(j->arr[0], total);
    double want = rf_kern_read_ref_f64(j->arr[1], total);
    if (j->kind == RF_BW_TRIAD || j->kind == RF_BW_TRIAD_NT)
        want += TRIAD_SCALE * rf_kern_read_ref_f64(j->arr[2], total);
    return got == want;
}

rf_status rf_bw_open(rf_team *team, const rf_kernel_table *t, rf_bw_kind kind,
                     uint64_t working_set_bytes, uint64_t chunk_bytes, rf_bw_set **out, rf_err *err)
{
    *out = NULL;
    const rf_bw_desc *d = rf_bw_desc_of(kind);
    if (!d)
        return rf_err_set(err, RF_EINVAL, "unknown bandwidth kernel %d", (int)kind);
    int threads = rf_team_size(team);
    /* bytes one element index costs: 8 in every array on every thread */
    const uint64_t index_bytes = 8u * (uint64_t)d->arrays * (uint64_t)threads;
    uint64_t per_thread = working_set_bytes / index_bytes;
    per_thread -= per_thread % SLICE_ELEMS;
    if (per_thread == 0)
        return rf_err_set(err, RF_EINVAL,
                          "working set %llu B is too small for %s on %d threads (at least "
                          "%d B)",
                          (unsigned long long)working_set_bytes, d->op, threads,
                          8 * SLICE_ELEMS * d->arrays * threads);
    uint64_t chunk = per_thread;
    if (chunk_bytes && chunk_bytes < working_set_bytes) {
        if (kind != RF_BW_READ)
            return rf_err_set(err, RF_EINVAL,
                              "%s reads its whole set each call; only read "
                              "takes a chunk",
                              d->op);
        chunk = chunk_bytes / index_bytes;
        chunk -= chunk % SLICE_ELEMS;
        if (chunk == 0)
            return rf_err_set(err, RF_EINVAL, "chunk %llu B is too small for %d threads",
                              (unsigned long long)chunk_bytes, threads);
        per_thread -= per_thread % chunk; /* whole chunks only */
    }

    rf_bw_set *set = calloc(1, sizeof *set);
    if (!set)
        return rf_err_set(err, RF_ENOMEM, "out of memory");
    bw_job *j = &set->job;
    size_t total = (size_t)per_thread * (size_t)threads;
    /* Arrays in one block, each start moved by 18 cache lines past a 4 KiB
     * boundary so loads and stores of the same index do not alias. */
    size_t stride = (total * 8 + 4095) / 4096 * 4096 + 18 * 64;
    set->block = rf__alloc_untouched((uint64_t)stride * (uint64_t)d->arrays);
    if (!set->block) {
        free(set);
        return rf_err_set(err, RF_ENOMEM, "cannot allocate %llu B for %s",
                          (unsigned long long)stride * (unsigned long long)d->arrays, d->op);
    }
    j->team = team;
    j->t = t;
    j->kind = kind;
    for (int a = 0; a < d->arrays; a++)
        j->arr[a] = (double *)(set->block + (size_t)a * stride);
    j->per_thread = (size_t)per_thread;
    j->chunk = (size_t)chunk;
    j->chunks = (size_t)(per_thread / chunk);
    j->init = true;
    rf__team_run(team, bw_thread, j);
    j->init = false;
    *out = set;
    return RF_OK;
}

rf_status rf_bw_time(rf_bw_set *set, rf_timing timing, rf_measurement *out, rf_err *err)
{
    bw_job *j = &set->job;
    const rf_bw_desc *d = rf_bw_desc_of(j->kind);
    size_t threads = (size_t)rf_team_size(j->team);
    memset(out, 0, sizeof *out);
    rf_kernel_name(rf_isa_name(j->t->isa), d->op, "f64", out->name, sizeof out->name);
    out->bytes = rf_bw_set_bytes(set);
    rf_status s = rf__time_kernel(bw_trial, j, (double)(j->chunk * threads) * d->bytes_per_elem,
                                  timing, out, err);
    if (s == RF_OK && !bw_result_ok(j, j->per_thread * threads))
        s = rf_err_set(err, RF_EINTERNAL, "%s: wrong checksum after timing", out->name);
    return s;
}

uint64_t rf_bw_set_bytes(const rf_bw_set *set)
{
    const bw_job *j = &set->job;
    return (uint64_t)j->per_thread * (uint64_t)rf_team_size(j->team) * 8u *
           (uint64_t)rf_bw_desc_of(j->kind)->arrays;
}

void rf_bw_close(rf_bw_set *set)
{
    if (!set)
        return;
    free(set->block);
    free(set);
}

rf_status rf_bw_measure(rf_team *team, const rf_kernel_table *t, rf_bw_kind kind,
                        uint64_t working_set_bytes, rf_timing timing, rf_measurement *out,
                        rf_err *err)
{
    rf_bw_set *set;
    rf_status s = rf_bw_open(team, t, kind, working_set_bytes, 0, &set, err);
    if (s != RF_OK) {
        memset(out, 0, sizeof *out);
        return s;
    }
    s = rf_bw_time(set, timing, out, err);
    rf_bw_close(set);
    return s;
}

/* ---- FMA peak ----------------------------------------------------------- */

/* x = x * (1 - 2^-12) + 2^-10 converges to 4 without overflow or denormals;
 * chain j starts at 1 + j / 1024 so no two chains are alike. */
#define FMA_MUL (1.0 - 1.0 / 4096)
#define FMA_ADD (1.0 / 1024)
#define FMA_ITERS 1024

typedef struct fma_chains {
    _Alignas(64) float f32[RF_FMA_MAX_CHAINS]; /* one thread's, own lines */
    double f64[RF_FMA_MAX_CHAINS];
} fma_chains;

typedef struct fma_job {
    rf_team *team;
    const rf_kernel_table *t;
    rf_dtype_kind dtype;
    uint64_t reps;
    fma_chains *chains; /* (threads) */
} fma_job;

static void fma_thread(int th, void *p)
{
    fma_job *j = p;
    float *cf = j->chains[th].f32;
    double *cd = j->chains[th].f64;
    for (int c = 0; c < RF_FMA_MAX_CHAINS; c++) {
        cf[c] = 1.0f + (float)c / 1024;
        cd[c] = 1.0 + (double)c / 1024;
    }
    for (uint64_t r = 0; r < j->reps; r++) {
        if (j->dtype == RF_FP32)
            j->t->fma_f32(cf, FMA_ITERS, (float)FMA_MUL, (float)FMA_ADD);
        else
            j->t->fma_f64(cd, FMA_ITERS, FMA_MUL, FMA_ADD);
    }
}

static double fma_trial(void *p, uint64_t reps)
{
    fma_job *j = p;
    j->reps = reps;
    return rf__team_run_timed_each(j->team, fma_thread, j);
}

/* Every chain of every thread equals the reference chain (which stops
 * early once it reaches its fixed point, so this stays cheap). */
static bool fma_result_ok(const fma_job *j, int threads)
{
    size_t steps = (size_t)j->reps * FMA_ITERS;
    size_t chains = j->dtype == RF_FP32 ? j->t->fma_chains_f32 : j->t->fma_chains_f64;
    for (size_t c = 0; c < chains; c++) {
        if (j->dtype == RF_FP32) {
            float want = rf_kern_chain_ref_f32(1.0f + (float)c / 1024, steps, (float)FMA_MUL,
                                               (float)FMA_ADD, j->t->fma_fused);
            for (int th = 0; th < threads; th++)
                if (j->chains[th].f32[c] != want)
                    return false;
        } else {
            double want = rf_kern_chain_ref_f64(1.0 + (double)c / 1024, steps, FMA_MUL, FMA_ADD,
                                                j->t->fma_fused);
            for (int th = 0; th < threads; th++)
                if (j->chains[th].f64[c] != want)
                    return false;
        }
    }
    return true;
}

rf_status rf_fma_measure(rf_team *team, const rf_kernel_table *t, rf_dtype_kind dtype,
                         rf_timing timing, rf_measurement *out, rf_err *err)
{
    if (dtype != RF_FP32 && dtype != RF_FP64)
        return rf_err_set(err, RF_EINVAL, "FMA peak is measured for fp32 and fp64, not %s",
                          rf_dtype_name(dtype));
    int threads = rf_team_size(team);
    fma_job job = {.team = team}, *j = &job;
    if (posix_memalign((void **)&j->chains, 64, sizeof *j->chains * (size_t)threads) != 0)
        return rf_err_set(err, RF_ENOMEM, "out of memory");
    j->t = t;
    j->dtype = dtype;
    size_t chains = dtype == RF_FP32 ? t->fma_chains_f32 : t->fma_chains_f64;
    memset(out, 0, sizeof *out);
    rf_kernel_name(rf_isa_name(t->isa), "fma", rf_dtype_name(dtype), out->name, sizeof out->name);
    double flops = 2.0 * (double)chains * FMA_ITERS * threads;
    rf_status s = rf__time_kernel(fma_trial, j, flops, timing, out, err);
    if (s == RF_OK && !fma_result_ok(j, threads))
        s = rf_err_set(err, RF_EINTERNAL, "%s: a chain differs from the reference", out->name);
    free(j->chains);
    return s;
}

/* ---- core clock --------------------------------------------------------- */

#define CLOCK_ADDS_PER_ITER 32
#define CLOCK_ITERS 4096

#if defined(__x86_64__) || defined(__i386__)
#define ADD1 "add %1, %0\n\t"
#define ADD8 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1

/* Dependent register adds: one cycle each on every x86 core, and a
 * register operand (not an immediate) so no core can fold them. */
static uint64_t add_chain(uint64_t iters)
{
    uint64_t x = 0, one = 1;
    for (uint64_t i = 0; i < iters; i++)
        __asm__(ADD8 ADD8 ADD8 ADD8 : "+r"(x) : "r"(one));
    return x;
}
#endif

typedef struct clock_job {
    rf_team *team;
    uint64_t reps;
    struct {
        uint64_t result;
        char pad[56];
    } slot[MAX_THREADS];
} clock_job;

static void clock_thread(int th, void *p)
{
    clock_job *j = p;
    uint64_t x = 0;
#if defined(__x86_64__) || defined(__i386__)
    for (uint64_t r = 0; r < j->reps; r++)
        x += add_chain(CLOCK_ITERS);
#endif
    j->slot[th].result = x;
}

/* All threads run the chain at once, each timed on its own: the clock is
 * the mean of the threads' clocks, as the FMA peak is the sum of the
 * threads' rates. */
static double clock_trial(void *p, uint64_t reps)
{
    clock_job *j = p;
    j->reps = reps;
    return rf__team_run_timed_each(j->team, clock_thread, j);
}

rf_status rf_clock_measure(rf_team *team, rf_timing timing, rf_measurement *out, rf_err *err)
{
#if !defined(__x86_64__) && !defined(__i386__)
    (void)team, (void)timing, (void)out;
    return rf_err_set(err, RF_EUNAVAIL, "clock measurement is written for x86 only");
#else
    int threads = rf_team_size(team);
    if (threads > MAX_THREADS)
        return rf_err_set(err, RF_ERANGE, "threads (%d): at most %d", threads, MAX_THREADS);
    clock_job *j = calloc(1, sizeof *j);
    if (!j)
        return rf_err_set(err, RF_ENOMEM, "out of memory");
    j->team = team;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "clock_add_chain");
    /* Work is the cycles of one thread's chain. */
    rf_status s = rf__time_kernel(clock_trial, j, (double)CLOCK_ADDS_PER_ITER * CLOCK_ITERS, timing,
                                  out, err);
    for (int th = 0; s == RF_OK && th < threads; th++)
        if (j->slot[th].result != j->reps * CLOCK_ADDS_PER_ITER * CLOCK_ITERS)
            s = rf_err_set(err, RF_EINTERNAL, "clock_add_chain: wrong count on thread %d", th);
    free(j);
    return s;
#endif
}
