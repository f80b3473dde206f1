/* lab.c - the whole CPU lab: identity, clock, FMA peaks, the read sweep,
 * its levels, copy and triad at every level, the DRAM roof. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure_internal.h"

#define MIB ((uint64_t)1 << 20)
#define MAX_SWEEP 28 /* 13.5 octaves at sqrt(2)                       */
#define MAX_CACHE_LEVELS 3
_Static_assert(MAX_SWEEP + 3 + RF_DOT_COUNT + 1 + 4 * (MAX_CACHE_LEVELS + 1) <=
                   RF_HW_PROFILE_MAX_KERNELS,
               "sweep, clock, FMA x 2, the dot products, the DRAM read and 4 kernels a level "
               "fit a profile");

/* The DRAM roof sampled beside other work: one read set, bursts pooled. */
struct rf_dram_sampler {
    rf_kernel_table kt;
    rf_team *team;
    bool own_team; /* opened with its own team, freed on close     */
    rf_bw_set *set;
    rf_timing timing;
    rf_measurement pooled;
    int bursts;
    double burst_best[RF_HW_PROFILE_MAX_BURSTS]; /* the first bursts' bests */
};

typedef struct lab {
    const rf_measure_opts *o;
    rf_cpu cpu;
    rf_kernel_table kt;
    rf_team *team;
    rf_measure_plan plan;
    rf_hw_profile *p;
    int done, total;                  /* progress steps                               */
    rf_measurement clock, fma[2];     /* pooled over bursts                    */
    rf_measurement dot[RF_DOT_COUNT]; /* pooled; rate.n 0: the CPU has none */
    int n_dots;                       /* dot-product kernels the table has              */
    rf_dram_sampler *dram;            /* the memory roof: one set, pooled bursts      */
} lab;

static const rf_dtype_kind fma_dtypes[] = {RF_FP32, RF_FP64};

static void step(lab *l, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void step(lab *l, const char *fmt, ...)
{
    if (!l->o->progress)
        return;
    char what[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    l->o->progress(l->o->progress_user, l->done, l->total, what);
}

static void fill_kernel(rf_hw_profile_kernel *k, const rf_measurement *m, const char *level,
                        const char *unit)
{
    snprintf(k->name, sizeof k->name, "%.47s", m->name);
    snprintf(k->level, sizeof k->level, "%s", level);
    snprintf(k->unit, sizeof k->unit, "%s", unit);
    k->bytes = m->bytes;
    k->best = m->rate.best;
    k->median = m->rate.median;
    k->min = m->rate.min;
    k->max = m->rate.max;
}

/* Append a kernel; returns its index. The plan below stays well under
 * RF_HW_PROFILE_MAX_KERNELS (checked at compile time above). */
static size_t add_kernel(lab *l, const rf_measurement *m, const char *level, const char *unit)
{
    fill_kernel(&l->p->kernels[l->p->n_kernels], m, level, unit);
    return l->p->n_kernels++;
}

/* This CPU, its kernels (o->isa or the best cpuid allows) and a team of
 * o->threads pinned threads (0: one a core). */
static rf_status machine_open(const rf_measure_opts *o, rf_cpu *cpu, rf_kernel_table *kt,
                              rf_team **team, rf_err *err)
{
    rf_status s = rf_cpu_query(cpu, err);
    if (s == RF_OK)
        s = rf_kernels_choose(cpu, o->isa, kt, err);
    if (s == RF_OK)
        s = rf_team_new(cpu, o->threads, team, err);
    return s;
}

static void identity(lab *l)
{
    rf_hw_profile *p = l->p;
    char host[64] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        snprintf(host, sizeof host, "cpu");
    snprintf(p->name, sizeof p->name, "%s", host);
    snprintf(p->cpu, sizeof p->cpu, "%s", l->cpu.brand);
    snprintf(p->isa, sizeof p->isa, "%s", rf_isa_name(l->kt.isa));
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    p->threads = rf_team_size(l->team);
    p->cores = l->cpu.cores;
    p->mem_bytes = l->cpu.mem_bytes;
    p->cache_bytes[0] = l->cpu.l1d_bytes;
    p->cache_bytes[1] = l->cpu.l2_bytes;
    p->cache_bytes[2] = l->cpu.l3_bytes;
    const struct {
        bool on;
        const char *name;
    } flags[] = {{l->cpu.sse2, "sse2"},
                 {l->cpu.avx, "avx"},
                 {l->cpu.fma, "fma"},
                 {l->cpu.avx2, "avx2"},
                 {l->cpu.avx512f, "avx512f"},
                 {l->cpu.f16c, "f16c"},
                 {l->cpu.avx512bw, "avx512bw"},
                 {l->cpu.avx512vl, "avx512vl"},
                 {l->cpu.avx512_bf16, "avx512_bf16"},
                 {l->cpu.avx512_vnni, "avx512_vnni"},
                 {l->cpu.avx512_fp16, "avx512_fp16"},
                 {l->cpu.amx_bf16, "amx_bf16"},
                 {l->cpu.amx_int8, "amx_int8"}};
    size_t used = 0;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].on && used < sizeof p->flags)
            used += (size_t)snprintf(p->flags + used, sizeof p->flags - used, "%s%s",
                                     used ? " " : "", flags[i].name);
}

/* Growing working sets from 8 KiB a thread (inside any L1) to twice the
 * reported last-level cache (64 MiB when unknown), by sqrt(2) (quick: 2). */
static size_t sweep_sizes(const lab *l, uint64_t *sizes)
{
    uint64_t threads = (uint64_t)rf_team_size(l->team);
    uint64_t llc = l->cpu.l3_bytes ? l->cpu.l3_bytes : l->cpu.l2_bytes;
    uint64_t start = 8192 * threads, end = llc ? 2 * llc : 64 * MIB;
    if (end < start << 6)
        end = start << 6;
    if (end > start << 13)
        end = start << 13; /* MAX_SWEEP points at sqrt(2) */
    size_t n = 0;
    const uint64_t grain = 512 * threads; /* whole 512-byte slices */
    for (double x = (double)start; n < MAX_SWEEP && x <= (double)end;
         x *= l->o->quick ? 2.0 : sqrt(2.0)) {
        uint64_t size = (uint64_t)x - (uint64_t)x % grain;
        if (n == 0 || size > sizes[n - 1])
            sizes[n++] = size;
    }
    return n;
}

/* The DRAM set: 16 x the last-level cache, at least 512 MiB; at most a
 * quarter of the free memory, since copy and triad at the DRAM level run
 * while it is held. */
static uint64_t dram_bytes(const rf_cpu *cpu)
{
    uint64_t set = rf_cpu_cold_bytes(cpu);
    if (cpu->mem_avail_bytes && set > cpu->mem_avail_bytes / 4)
        set = cpu->mem_avail_bytes / 4;
    return set;
}

static rf_status level_kernels(lab *l, const rf_hw_profile_level *lv, rf_err *err)
{
    for (int k = RF_BW_COPY; k < RF_BW_COUNT; k++) {
        if (rf_bw_desc_of((rf_bw_kind)k)->nt && !l->kt.nt_stores)
            continue;
        step(l, "%s at %s", rf_bw_desc_of((rf_bw_kind)k)->op, lv->name);
        rf_measurement m;
        rf_status s =
            rf_bw_measure(l->team, &l->kt, (rf_bw_kind)k, lv->bytes, l->plan.bandwidth, &m, err);
        if (s != RF_OK)
            return s;
        add_kernel(l, &m, lv->name, "bytes_per_s");
        l->done++;
    }
    return RF_OK;
}

rf_measure_plan rf_measure_plan_of(bool quick)
{
    rf_measure_plan p = {
        .bandwidth = quick ? (rf_timing){0.001, 5} : (rf_timing){0.003, 11},
        .core = quick ? (rf_timing){0.003, 9} : (rf_timing){0.003, 15},
        .core_bursts = RF_LAB_CORE_ROUNDS,
        .dot_rounds = quick ? 1 : RF_LAB_CORE_ROUNDS,
        .roof = quick ? (rf_timing){0.001, 16} : (rf_timing){0.003, 48},
        .roof_bursts = RF_LAB_ROOF_BURSTS,
        .roof_chunks = 8,
    };
    return p;
}

/* One burst of the clock, pooled into l->clock. */
static rf_status clock_burst(lab *l, int i, int n, rf_err *err)
{
    step(l, "core clock (%d of %d)", i + 1, n);
    rf_measurement m;
    rf_status s = rf_clock_measure(l->team, l->plan.core, &m, err);
    if (s == RF_OK)
        s = rf__measurement_merge(&l->clock, &m, err);
    l->done++;
    return s;
}

/* One round: the clock, then a burst of each FMA and dot-product kernel,
 * pooled. */
/* Whether core round `round` (0, 1, 2) times the dot products: every
 * round, or with one dot round the middle one. */
static bool dots_in(const lab *l, int round)
{
    return l->plan.dot_rounds >= l->plan.core_bursts || round == l->plan.core_bursts / 2;
}

static rf_status core_round(lab *l, int round, rf_err *err)
{
    rf_status s = clock_burst(l, round, l->plan.core_bursts + 1, err);
    for (size_t i = 0; s == RF_OK && i < 2; i++) {
        step(l, "FMA peak %s (%d of %d)", rf_dtype_name(fma_dtypes[i]), round + 1,
             l->plan.core_bursts);
        rf_measurement m;
        s = rf_fma_measure(l->team, &l->kt, fma_dtypes[i], l->plan.core, &m, err);
        if (s == RF_OK)
            s = rf__measurement_merge(&l->fma[i], &m, err);
        l->done++;
    }
    for (int k = 0; s == RF_OK && dots_in(l, round) && k < RF_DOT_COUNT; k++) {
        if (!rf_dot_available(&l->kt, (rf_dot_kind)k))
            continue;
        step(l, "dot peak %s (%d of %d)", rf_dot_name((rf_dot_kind)k), round + 1,
             l->plan.core_bursts);
        rf_measurement m;
        s = rf_dot_measure(l->team, &l->kt, (rf_dot_kind)k, l->plan.core, &m, err);
        if (s == RF_OK)
            s = rf__measurement_merge(&l->dot[k], &m, err);
        l->done++;
    }
    return s;
}

static int roof_bursts_done(const lab *l)
{
    int n;
    rf_dram_sampler_result(l->dram, &n);
    return n;
}

/* One burst of the DRAM read, pooled by the sampler. */
static rf_status roof_burst(lab *l, rf_err *err)
{
    step(l, "DRAM read, %llu MiB (%d of %d)",
         (unsigned long long)(rf_dram_sampler_bytes(l->dram) >> 20), roof_bursts_done(l) + 1,
         l->plan.roof_bursts);
    l->done++;
    return rf_dram_sampler_burst(l->dram, err);
}

static rf_status sweep_points(lab *l, const uint64_t *sizes, size_t from, size_t to,
                              rf_measurement *sweep, rf_err *err)
{
    for (size_t i = from; i < to; i++) {
        step(l, "read sweep, %llu KiB", (unsigned long long)(sizes[i] >> 10));
        rf_status s =
            rf_bw_measure(l->team, &l->kt, RF_BW_READ, sizes[i], l->plan.bandwidth, &sweep[i], err);
        if (s != RF_OK)
            return s;
        l->done++;
    }
    return RF_OK;
}

_Static_assert(RF_LAB_CORE_ROUNDS == 3, "rf_measure_cpu runs core rounds 0, 1 and 2");
_Static_assert(RF_LAB_ROOF_BURSTS >= 4, "rf_measure_cpu places 4 DRAM bursts, then the rest");

/* The profile's figures once everything ran: the clock and the FMA peaks
 * (with their theoretical value at the clock), the levels with DRAM's
 * pooled figure, the DRAM kernel's row, the worst spread. */
static void figures(lab *l, rf_levels *lv, const rf_measurement *dram, size_t dram_kernel)
{
    rf_hw_profile *out = l->p;
    add_kernel(l, &l->clock, "core", "hz");
    out->clock_hz = l->clock.rate.best;
    for (size_t i = 0; i < 2; i++) {
        add_kernel(l, &l->fma[i], "registers", "flops_per_s");
        out->peak_flops_per_s[fma_dtypes[i]] = l->fma[i].rate.best;
        out->theoretical_flops_per_s[fma_dtypes[i]] =
            out->clock_hz * out->threads *
            rf_cpu_flops_per_cycle(&l->cpu, l->kt.isa, fma_dtypes[i]);
    }
    /* bf16, fp16 and int8 peaks from their register kernels; the block
     * formats' kernels are rows of the kernel table only (they compute in
     * int8, whose peak bounds them). Without AVX-512 FP16 an fp16 kernel
     * converts (F16C) and computes in fp32: the fp32 FMA peak bounds it, and
     * a tile large enough to amortize the conversions approaches it, so the
     * fp16 peak is the higher of the tile's rate and fp32's (a floor must
     * not sit above any fp16 kernel). */
    for (int k = 0; k < RF_DOT_COUNT; k++) {
        if (l->dot[k].rate.n == 0)
            continue;
        bool blocks = k == RF_DOT_Q8_0 || k == RF_DOT_Q4_0;
        add_kernel(l, &l->dot[k], blocks ? "L1" : "registers", "flops_per_s");
        double peak = l->dot[k].rate.best;
        if (k == RF_DOT_FP16 && !l->cpu.avx512_fp16 && out->peak_flops_per_s[RF_FP32] > peak)
            peak = out->peak_flops_per_s[RF_FP32];
        if (!blocks)
            out->peak_flops_per_s[rf_dot_dtype((rf_dot_kind)k)] = peak;
    }
    lv->level[lv->n - 1].bandwidth_bytes_per_s = dram->rate.best;
    out->bandwidth_bytes_per_s = dram->rate.best;
    out->bandwidth_sustained_bytes_per_s = dram->rate.median; /* the pooled bursts' */
    rf_hw_profile_bursts *b = &out->dram_bursts;
    b->n = l->dram->bursts < RF_HW_PROFILE_MAX_BURSTS ? l->dram->bursts : RF_HW_PROFILE_MAX_BURSTS;
    b->trials = l->plan.roof.trials;
    b->runs = 1;
    memcpy(b->best, l->dram->burst_best, (size_t)b->n * sizeof b->best[0]);
    out->n_levels = lv->n;
    for (size_t i = 0; i < lv->n; i++)
        out->levels[i] = lv->level[i];
    fill_kernel(&out->kernels[dram_kernel], dram, "DRAM", "bytes_per_s");
    for (size_t i = 0; i < out->n_kernels; i++) {
        const rf_hw_profile_kernel *k = &out->kernels[i];
        double spread = k->best > 0 ? (k->best - k->median) / k->best : 0;
        if (spread > out->spread)
            out->spread = spread;
    }
}

/* The order spreads the pooled figures over the whole run, so one busy
 * moment on a shared machine spoils a burst, not a roof:
 *
 *   clock, FMA (1)   DRAM (1)   sweep, first half   DRAM (2)
 *   clock, FMA (2)   sweep, second half   DRAM (3)
 *   copy and triad at the lower half of the levels   DRAM (4)
 *   clock, FMA (3)   copy and triad at the rest   clock   DRAM (5)
 */
rf_status rf_measure_cpu(const rf_measure_opts *o, rf_hw_profile *out, rf_err *err)
{
    lab l = {.o = o, .p = out};
    memset(out, 0, sizeof *out);
    rf_status s = machine_open(o, &l.cpu, &l.kt, &l.team, err);
    if (s != RF_OK)
        return s;
    l.plan = rf_measure_plan_of(o->quick);
    identity(&l);

    uint64_t sizes[MAX_SWEEP];
    size_t n_sweep = sweep_sizes(&l, sizes);
    int cache_levels = l.cpu.l3_bytes ? MAX_CACHE_LEVELS : l.cpu.l2_bytes ? 2 : MAX_CACHE_LEVELS;
    int per_level = l.kt.nt_stores ? 4 : 2;
    for (int k = 0; k < RF_DOT_COUNT; k++)
        l.n_dots += rf_dot_available(&l.kt, (rf_dot_kind)k);
    l.total = 3 * l.plan.core_bursts + l.n_dots * l.plan.dot_rounds + 1 + l.plan.roof_bursts +
              (int)n_sweep + per_level * (cache_levels + 1);
    rf_measurement *sweep = calloc(MAX_SWEEP, sizeof *sweep);
    rf_levels lv;
    if (!sweep) {
        s = rf_err_set(err, RF_ENOMEM, "out of memory");
        goto done;
    }
    if ((s = rf__dram_sampler_on(l.team, &l.kt, &l.cpu, o->quick, &l.dram, err)))
        goto done;
    const rf_measurement *dram = rf_dram_sampler_result(l.dram, NULL);

    if ((s = core_round(&l, 0, err)) || (s = roof_burst(&l, err)) ||
        (s = sweep_points(&l, sizes, 0, n_sweep / 2, sweep, err)) || (s = roof_burst(&l, err)) ||
        (s = core_round(&l, 1, err)) ||
        (s = sweep_points(&l, sizes, n_sweep / 2, n_sweep, sweep, err)) ||
        (s = roof_burst(&l, err)))
        goto done;

    s = rf_levels_detect(sweep, n_sweep, dram, cache_levels, &lv, err);
    if (s != RF_OK)
        goto done;
    /* left: the level kernels, the DRAM bursts, the last core round (clock,
     * 2 FMA, the dot products) and the last clock */
    l.total = l.done + per_level * (int)lv.n + (l.plan.roof_bursts - roof_bursts_done(&l)) + 3 +
              (dots_in(&l, 2) ? l.n_dots : 0) + 1;
    for (size_t i = 0; i < lv.n; i++)
        for (size_t j = lv.first[i]; j < lv.end[i]; j++)
            add_kernel(&l, &sweep[j], lv.level[i].name, "bytes_per_s");
    size_t dram_kernel = add_kernel(&l, dram, "DRAM", "bytes_per_s");
    for (size_t i = 0; i < lv.n; i++) {
        if (i == lv.n / 2 && ((s = roof_burst(&l, err)) || (s = core_round(&l, 2, err))))
            goto done;
        if ((s = level_kernels(&l, &lv.level[i], err)))
            goto done;
    }
    if ((s = clock_burst(&l, l.plan.core_bursts, l.plan.core_bursts + 1, err)))
        goto done;
    while (roof_bursts_done(&l) < l.plan.roof_bursts)
        if ((s = roof_burst(&l, err)))
            goto done;

    figures(&l, &lv, dram, dram_kernel);
done:
    rf_dram_sampler_close(l.dram);
    free(sweep);
    rf_team_free(l.team);
    return s;
}

/* ---- the DRAM roof sampled beside other work ---------------------------- */

rf_status rf__dram_sampler_on(rf_team *team, const rf_kernel_table *kt, const rf_cpu *cpu,
                              bool quick, rf_dram_sampler **out, rf_err *err)
{
    *out = NULL;
    rf_dram_sampler *d = calloc(1, sizeof *d);
    if (!d)
        return rf_err_set(err, RF_ENOMEM, "out of memory");
    rf_measure_plan plan = rf_measure_plan_of(quick);
    d->kt = *kt;
    d->team = team;
    d->timing = plan.roof;
    uint64_t set = dram_bytes(cpu);
    rf_status s =
        rf_bw_open(team, &d->kt, RF_BW_READ, set, set / (uint64_t)plan.roof_chunks, &d->set, err);
    if (s != RF_OK) {
        free(d);
        return s;
    }
    *out = d;
    return RF_OK;
}

rf_status rf_dram_sampler_open(const rf_measure_opts *o, rf_dram_sampler **out, rf_err *err)
{
    *out = NULL;
    rf_cpu cpu;
    rf_kernel_table kt;
    rf_team *team = NULL;
    rf_status s = machine_open(o, &cpu, &kt, &team, err);
    if (s == RF_OK)
        s = rf__dram_sampler_on(team, &kt, &cpu, o->quick, out, err);
    if (s != RF_OK) {
        rf_team_free(team);
        return s;
    }
    (*out)->own_team = true;
    return RF_OK;
}

rf_status rf_dram_sampler_burst(rf_dram_sampler *d, rf_err *err)
{
    rf_measurement m;
    rf_status s = rf_bw_time(d->set, d->timing, &m, err);
    if (s == RF_OK)
        s = rf__measurement_merge(&d->pooled, &m, err);
    if (s == RF_OK && d->bursts < RF_HW_PROFILE_MAX_BURSTS)
        d->burst_best[d->bursts] = m.rate.best;
    if (s == RF_OK)
        d->bursts++;
    return s;
}

uint64_t rf_dram_sampler_bytes(const rf_dram_sampler *d) { return rf_bw_set_bytes(d->set); }

void rf_dram_sampler_raise(const rf_dram_sampler *d, rf_hw *hw)
{
    if (d->pooled.rate.best > hw->bw_bytes_per_s)
        hw->bw_bytes_per_s = d->pooled.rate.best;
}

const rf_measurement *rf_dram_sampler_result(const rf_dram_sampler *d, int *bursts)
{
    if (bursts)
        *bursts = d->bursts;
    return &d->pooled;
}

void rf_dram_sampler_close(rf_dram_sampler *d)
{
    if (!d)
        return;
    rf_bw_close(d->set);
    if (d->own_team)
        rf_team_free(d->team);
    free(d);
}
