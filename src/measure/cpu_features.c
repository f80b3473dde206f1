/* cpu_features.c - which CPU is this: cpuid, XGETBV, affinity, sysfs.
 * The query (rf_cpu_query) is kept apart from the decisions
 * (rf_isa_supported, rf_isa_best, rf_cpu_flops_per_cycle), which only read
 * an rf_cpu and so can be tested with a made-up one. */
#define _GNU_SOURCE
#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HAVE_X86 1
#endif

#include "measure_internal.h"

static const char *const isa_names[] = {
    [RF_ISA_SCALAR] = "scalar",
    [RF_ISA_SSE] = "sse",
    [RF_ISA_AVX2] = "avx2",
    [RF_ISA_AVX512] = "avx512",
};
_Static_assert(sizeof isa_names / sizeof isa_names[0] == RF_ISA_COUNT, "one name per ISA");

const char *rf_isa_name(rf_isa isa) { return (unsigned)isa < RF_ISA_COUNT ? isa_names[isa] : "?"; }

rf_status rf_isa_parse(const char *text, rf_isa *out, rf_err *err)
{
    for (int i = 0; i < RF_ISA_COUNT; i++)
        if (!strcmp(text, isa_names[i])) {
            *out = (rf_isa)i;
            return RF_OK;
        }
    return rf_err_set(err, RF_EINVAL, "unknown ISA '%s' (known: scalar, sse, avx2, avx512)", text);
}

bool rf_isa_supported(const rf_cpu *cpu, rf_isa isa)
{
    switch (isa) {
    case RF_ISA_SCALAR:
        return true;
    case RF_ISA_SSE:
        return cpu->sse2;
    case RF_ISA_AVX2:
        return cpu->avx2 && cpu->fma && cpu->os_ymm;
    case RF_ISA_AVX512:
        return cpu->avx512f && cpu->os_zmm;
    default:
        return false;
    }
}

rf_isa rf_isa_best(const rf_cpu *cpu)
{
    for (int i = RF_ISA_COUNT - 1; i > 0; i--)
        if (rf_isa_supported(cpu, (rf_isa)i))
            return (rf_isa)i;
    return RF_ISA_SCALAR;
}

/* Width in bits of one FMA pipe: 256 unless the core is known to split
 * wider work (Zen 1: 128-bit pipes; Zen 4: 512-bit work on 256-bit pipes). */
static int pipe_bits(const rf_cpu *cpu, int isa_bits)
{
    bool amd = !strcmp(cpu->vendor, "AuthenticAMD");
    if (amd && cpu->family == 0x17 && cpu->model < 0x30)
        return isa_bits < 128 ? isa_bits : 128;
    if (amd && cpu->family == 0x19)
        return isa_bits < 256 ? isa_bits : 256;
    return isa_bits;
}

int rf_cpu_flops_per_cycle(const rf_cpu *cpu, rf_isa isa, rf_dtype_kind dtype)
{
    int elem_bits = dtype == RF_FP32 ? 32 : dtype == RF_FP64 ? 64 : 0;
    if (!elem_bits)
        return 0;
    static const int isa_bits[] = {
        [RF_ISA_SCALAR] = 0, [RF_ISA_SSE] = 128, [RF_ISA_AVX2] = 256, [RF_ISA_AVX512] = 512};
    _Static_assert(sizeof isa_bits / sizeof isa_bits[0] == RF_ISA_COUNT, "one width per ISA");
    int lanes = isa == RF_ISA_SCALAR ? 1 : pipe_bits(cpu, isa_bits[isa]) / elem_bits;
    /* Two pipes. With FMA each retires 2 FLOPs per lane a cycle; without
     * (scalar, SSE) each retires one multiply or one add. */
    bool fma = isa == RF_ISA_AVX2 || isa == RF_ISA_AVX512;
    return 2 * lanes * (fma ? 2 : 1);
}

uint64_t rf_cpu_cold_bytes(const rf_cpu *cpu)
{
    const uint64_t floor = (uint64_t)512 << 20;
    uint64_t llc = cpu->l3_bytes ? cpu->l3_bytes : cpu->l2_bytes;
    return 16 * llc > floor ? 16 * llc : floor;
}

#ifdef HAVE_X86
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void query_cpuid(rf_cpu *c)
{
    unsigned a, b, cx, d;
    if (!__get_cpuid(0, &a, &b, &cx, &d))
        return;
    unsigned max_leaf = a;
    memcpy(c->vendor, &b, 4);
    memcpy(c->vendor + 4, &d, 4);
    memcpy(c->vendor + 8, &cx, 4);
    c->vendor[12] = 0;

    __get_cpuid(1, &a, &b, &cx, &d);
    unsigned fam = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
    if (fam == 0xf)
        fam += (a >> 20) & 0xff;
    if (fam == 0x6 || fam >= 0xf)
        model |= ((a >> 16) & 0xf) << 4;
    c->family = fam;
    c->model = model;
    c->sse2 = d & (1u << 26);
    c->fma = cx & (1u << 12);
    c->avx = cx & (1u << 28);
    c->f16c = cx & (1u << 29);
    bool osxsave = cx & (1u << 27);
    if (osxsave) {
        uint64_t xcr0 = xgetbv0();
        c->os_ymm = (xcr0 & 0x6) == 0x6;   /* XMM and YMM state        */
        c->os_zmm = (xcr0 & 0xe6) == 0xe6; /* plus opmask, ZMM halves  */
    }
    if (max_leaf >= 7) {
        __get_cpuid_count(7, 0, &a, &b, &cx, &d);
        c->avx2 = b & (1u << 5);
        c->avx512f = b & (1u << 16);
        c->avx512bw = b & (1u << 30);
        c->avx512vl = b & (1u << 31);
        c->avx512_vnni = cx & (1u << 11);
        c->avx512_fp16 = d & (1u << 23);
        c->amx_bf16 = d & (1u << 22);
        c->amx_int8 = d & (1u << 25);
        unsigned max_sub = a;
        if (max_sub >= 1) {
            __get_cpuid_count(7, 1, &a, &b, &cx, &d);
            c->avx512_bf16 = a & (1u << 5);
        }
    }
    unsigned ext_max = __get_cpuid_max(0x80000000u, NULL);
    if (ext_max >= 0x80000004u) {
        unsigned regs[12];
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002u + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2],
                        &regs[4 * i + 3]);
        char brand[49];
        memcpy(brand, regs, 48);
        brand[48] = 0;
        const char *s = brand;
        while (*s == ' ')
            s++;
        snprintf(c->brand, sizeof c->brand, "%s", s);
        for (size_t n = strlen(c->brand); n > 0 && isspace((unsigned char)c->brand[n - 1]); n--)
            c->brand[n - 1] = 0;
    }
}
#endif

/* Read one small sysfs or procfs file into buf; false when unreadable. */
static bool read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    return n > 0;
}

static long read_long(const char *path)
{
    char buf[64];
    return read_text(path, buf, sizeof buf) ? strtol(buf, NULL, 10) : -1;
}

int rf__cpu_core_list(int *cpus, int cap)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    long seen[CPU_SETSIZE][2];
    int n_seen = 0, n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < cap; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        char path[128];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
        long core = read_long(path);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
                 cpu);
        long pkg = read_long(path);
        bool dup = false;
        for (int i = 0; i < n_seen && core >= 0; i++)
            dup |= seen[i][0] == pkg && seen[i][1] == core;
        if (dup)
            continue; /* an SMT sibling of a core already listed */
        seen[n_seen][0] = pkg;
        seen[n_seen][1] = core;
        n_seen++;
        cpus[n++] = cpu;
    }
    return n;
}

/* Reported caches of cpu0: size of one instance per level (data/unified). */
static void query_caches(rf_cpu *c)
{
    for (int i = 0; i < 16; i++) {
        char path[128], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        long level = read_long(path);
        if (level < 0)
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (!read_text(path, buf, sizeof buf) || !strncmp(buf, "Instruction", 11))
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!read_text(path, buf, sizeof buf))
            continue;
        char *end;
        uint64_t size = strtoull(buf, &end, 10);
        if (*end == 'K')
            size <<= 10;
        else if (*end == 'M')
            size <<= 20;
        if (level == 1)
            c->l1d_bytes = size;
        else if (level == 2)
            c->l2_bytes = size;
        else if (level == 3)
            c->l3_bytes = size;
    }
}

static void query_meminfo(rf_cpu *c)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned long long kib;
        if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
            c->mem_bytes = (uint64_t)kib << 10;
        else if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            c->mem_avail_bytes = (uint64_t)kib << 10;
    }
    fclose(f);
}

rf_status rf_cpu_query(rf_cpu *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->vendor, sizeof out->vendor, "unknown");
    snprintf(out->brand, sizeof out->brand, "unknown CPU");
#ifdef HAVE_X86
    query_cpuid(out);
#endif
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return rf_err_set(err, RF_EIO, "cannot read this process's CPU affinity");
    out->cpus = CPU_COUNT(&set);
    int cpus[CPU_SETSIZE];
    out->cores = rf__cpu_core_list(cpus, CPU_SETSIZE);
    if (out->cores < 1)
        out->cores = out->cpus;
    query_caches(out);
    query_meminfo(out);
    return RF_OK;
}
