/* fuzz_profile.c - libFuzzer harness for the hardware-profile reader,
 * rf_hw_profile_parse (rf_hw_profile_io.h), the bytes behind every `--hw FILE`.
 *
 * Besides "no crash, no sanitizer report": a refusal carries a one-line
 * message; an accepted profile holds NUL-terminated strings and in-bounds
 * counts, converts to an rf_hw that rf_hw_validate accepts, every roof it
 * offers has a finite positive ridge, its own JSON reads back to the same
 * figures, and the writer leaks nothing when a figure cannot be written.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_hw_profile_io.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static rf_hw_profile p, back; /* large: kept off the stack */

static void terminated(const char *s, size_t cap) { CHECK(memchr(s, '\0', cap) != NULL); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    rf_err e;
    rf_status s = rf_hw_profile_parse((const char *)data, size, "p.json", &p, &e);
    if (s) {
        CHECK(e.status == s && !strncmp(e.msg, "p.json", 6));
        return 0;
    }
    terminated(p.name, sizeof p.name);
    terminated(p.cpu, sizeof p.cpu);
    terminated(p.device, sizeof p.device);
    terminated(p.isa, sizeof p.isa);
    terminated(p.date, sizeof p.date);
    CHECK(p.n_levels <= RF_HW_PROFILE_MAX_LEVELS && p.n_kernels <= RF_HW_PROFILE_MAX_KERNELS);
    for (size_t i = 0; i < p.n_levels; i++)
        terminated(p.levels[i].name, sizeof p.levels[i].name);
    for (size_t i = 0; i < p.n_kernels; i++) {
        terminated(p.kernels[i].name, sizeof p.kernels[i].name);
        terminated(p.kernels[i].level, sizeof p.kernels[i].level);
        terminated(p.kernels[i].unit, sizeof p.kernels[i].unit);
    }
    CHECK(p.bandwidth_bytes_per_s > 0 && isfinite(p.bandwidth_bytes_per_s));

    rf_hw hw;
    if (rf_hw_profile_to_hw(&p, &hw, &e) != RF_OK)
        return 0; /* refused with a message: a figure beyond the accepted range */
    CHECK(rf_hw_validate(&hw, &e) == RF_OK);
    for (int k = 0; k < RF_DTYPE_COUNT; k++) {
        rf_roof roof;
        if (rf_hw_roof(&hw, (rf_dtype_kind)k, &roof, &e) != RF_OK)
            continue;
        CHECK(isfinite(roof.ridge) && roof.ridge > 0);
        CHECK(isfinite(roof.peak_flops_per_s) && roof.peak_flops_per_s > 0);
        rf_point pt = rf_roof_place(&roof, 1.8e19, 1.8e19); /* 64-bit counts at most */
        CHECK(isfinite(pt.floor_s) && isfinite(pt.attainable_flops_per_s));
    }

    char *json = NULL;
    if (rf_hw_profile_to_json(&p, &json, &e) != RF_OK)
        return 0;
    s = rf_hw_profile_from_json(json, "round trip", &back, &e);
    free(json);
    CHECK(s == RF_OK);
    CHECK(back.bandwidth_bytes_per_s == p.bandwidth_bytes_per_s);
    CHECK(back.n_levels == p.n_levels && back.n_kernels == p.n_kernels);
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        CHECK(back.peak_flops_per_s[k] == p.peak_flops_per_s[k]);
    CHECK(!strcmp(back.name, p.name));

    /* The writer's error path frees what it built: a level bandwidth the
     * reader refuses gives an infinite level ridge, which JSON cannot hold
     * (regress-level-subnormal-leak.json once leaked the arrays here). */
    if (p.n_levels) {
        p.levels[0].bandwidth_bytes_per_s = 5e-324;
        json = NULL;
        if (rf_hw_profile_to_json(&p, &json, &e) == RF_OK)
            free(json);
    }
    return 0;
}
