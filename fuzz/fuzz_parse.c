/* fuzz_parse.c - libFuzzer harness for the parsers of what a user types:
 * rf_parse_i64, rf_parse_f64, rf_parse_size, rf_parse_range(_count) and
 * rf_dtype_parse.
 *
 * Input: one selector byte, then the text (NUL-terminated copy). Besides
 * "no crash, no sanitizer report", every accepted value is checked against
 * the contract in rf_parse.h / rf_dtype.h, and every refusal must carry a
 * non-empty message; a broken contract aborts, which libFuzzer records as a
 * crash with the input that caused it.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_dtype.h"
#include "roofline/rf_parse.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* A refusal names what it refused: status set, message not empty. */
static void refused(rf_status s, const rf_err *e)
{
    CHECK(s != RF_OK && e->status == s && e->msg[0]);
}

/* Bounds for the integer and real parsers, drawn from a seed byte so the
 * fuzzer explores both narrow and full ranges. */
static const int64_t int_bounds[][2] = {
    {1, (int64_t)1 << 40}, {0, (int64_t)1 << 40}, {INT64_MIN, INT64_MAX}, {-5, 5}, {1, 1 << 24},
};
static const double real_bounds[][2] = {
    {1e-9, 1e9}, {1e-6, 1.0}, {-1e308, 1e308}, {0, 0}, {1e-6, 1e9},
};

static void fuzz_i64(const char *text, unsigned seed)
{
    const int64_t *b = int_bounds[seed % 5];
    int64_t v = 0;
    rf_err e;
    rf_status s = rf_parse_i64(text, b[0], b[1], &v, &e);
    if (s) {
        refused(s, &e);
        return;
    }
    CHECK(v >= b[0] && v <= b[1]);
    CHECK(*text != '+'); /* a leading '+' is refused */
}

static void fuzz_f64(const char *text, unsigned seed)
{
    const double *b = real_bounds[seed % 5];
    double v = 0;
    rf_err e;
    rf_status s = rf_parse_f64(text, b[0], b[1], &v, &e);
    if (s) {
        refused(s, &e);
        return;
    }
    CHECK(isfinite(v) && v >= b[0] && v <= b[1]);
}

static void fuzz_size(const char *text)
{
    uint64_t v = 0;
    rf_err e;
    rf_status s = rf_parse_size(text, &v, &e);
    if (s) {
        refused(s, &e);
        return;
    }
    CHECK(v <= ((uint64_t)1 << 60));
    CHECK(*text != '-');
}

/* The range parser: count and fill agree; every value lies in [1, hi];
 * ".." ranges ascend. hi is kept below 2^22 here only so that a linear
 * range of millions of values does not slow the fuzzer to a crawl; the
 * 2^26 ceiling on counts is exercised by the bad-input table. */
static void fuzz_range(const char *text, unsigned seed)
{
    static int64_t vals[4096];
    int64_t hi = (int64_t)1 << (seed % 23);
    size_t count = 0, n = 0;
    rf_err e;
    rf_status s = rf_parse_range_count(text, hi, &count, &e);
    if (s) {
        refused(s, &e);
        rf_status t = rf_parse_range(text, hi, vals, sizeof vals / sizeof vals[0], &n, &e);
        CHECK(t != RF_OK);
        return;
    }
    CHECK(count >= 1);
    s = rf_parse_range(text, hi, vals, sizeof vals / sizeof vals[0], &n, &e);
    if (count > sizeof vals / sizeof vals[0]) {
        CHECK(s == RF_ERANGE && n == sizeof vals / sizeof vals[0]);
        return;
    }
    CHECK(s == RF_OK && n == count);
    bool dotted = strstr(text, "..") != NULL;
    for (size_t i = 0; i < n; i++) {
        CHECK(vals[i] >= 1 && vals[i] <= hi);
        if (dotted && i)
            CHECK(vals[i] > vals[i - 1]);
    }
}

static void fuzz_dtype(const char *text)
{
    rf_dtype d;
    rf_err e;
    rf_status s = rf_dtype_parse(text, &d, &e);
    if (s) {
        refused(s, &e);
        return;
    }
    CHECK((unsigned)d.kind < RF_DTYPE_COUNT);
    CHECK(d.group_size <= (1u << 24) && d.scale_bytes <= 8);
    CHECK(!d.group_size == !d.scale_bytes); /* a group always has scales */
    /* the canonical name parses back to the same kind */
    rf_dtype back;
    CHECK(rf_dtype_parse(rf_dtype_name(d.kind), &back, &e) == RF_OK && back.kind == d.kind);
    /* exact bytes: never below the element bits, refused only past 2^58 */
    uint64_t bytes = 0;
    CHECK(rf_dtype_bytes(d, (uint64_t)1 << 40, &bytes, &e) == RF_OK);
    CHECK(bytes >= ((uint64_t)1 << 40) / 8 * rf_dtype_bits(d.kind));
    CHECK(rf_dtype_bytes(d, UINT64_MAX, &bytes, &e) == RF_ERANGE);
    double b = rf_dtype_bytes_per_elem(d);
    CHECK(isfinite(b) && b > 0);
    char desc[64];
    rf_dtype_describe(d, desc, sizeof desc);
    CHECK(desc[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 256)
        return 0;
    unsigned sel = data[0];
    char text[257];
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    switch (sel % 5) {
    case 0:
        fuzz_i64(text, sel / 5);
        break;
    case 1:
        fuzz_f64(text, sel / 5);
        break;
    case 2:
        fuzz_size(text);
        break;
    case 3:
        fuzz_range(text, sel / 5);
        break;
    default:
        fuzz_dtype(text);
        break;
    }
    return 0;
}
