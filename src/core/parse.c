/* parse.c - strict parsing of integers, reals, sizes and ranges. */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_parse.h"

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Decimal digits [s, e) into v, saturating at UINT64_MAX (out of every
 * range); false when empty or not all digits. */
static bool digits(const char *s, const char *e, uint64_t *v)
{
    if (s == e)
        return false;
    uint64_t x = 0;
    for (; s < e; s++) {
        if (!is_digit(*s))
            return false;
        x = x > (UINT64_MAX - 9) / 10 ? UINT64_MAX : x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return true;
}

static rf_status int_in(const char *text, const char *s, const char *e, int64_t lo, int64_t hi,
                        int64_t *out, rf_err *err)
{
    bool neg = s < e && *s == '-';
    uint64_t v;
    if (!digits(s + neg, e, &v))
        return rf_err_set(err, RF_EINVAL, "'%s' is not an integer", text);
    if (v > (uint64_t)INT64_MAX)
        return rf_err_set(err, RF_ERANGE, "'%s' is out of range [%lld, %lld]", text, (long long)lo,
                          (long long)hi);
    int64_t x = neg ? -(int64_t)v : (int64_t)v;
    if (x < lo || x > hi)
        return rf_err_set(err, RF_ERANGE, "'%s' is out of range [%lld, %lld]", text, (long long)lo,
                          (long long)hi);
    *out = x;
    return RF_OK;
}

rf_status rf_parse_i64(const char *text, int64_t lo, int64_t hi, int64_t *out, rf_err *err)
{
    if (!text || !*text)
        return rf_err_set(err, RF_EINVAL, "empty number");
    return int_in(text, text, text + strlen(text), lo, hi, out, err);
}

/* strtod over the whole of [text], refusing inf/nan/hex and empty input. */
static bool real(const char *text, double *v, const char **end)
{
    const char *p = text;
    if (*p == '-' || *p == '+')
        p++;
    if (!is_digit(*p) && !(*p == '.' && is_digit(p[1])))
        return false;
    for (const char *q = p; *q && q < p + 2; q++)
        if (*q == 'x' || *q == 'X')
            return false;
    char *e;
    errno = 0;
    double x = strtod(text, &e);
    if (e == text || errno == ERANGE || !isfinite(x))
        return false;
    *v = x;
    *end = e;
    return true;
}

rf_status rf_parse_f64(const char *text, double lo, double hi, double *out, rf_err *err)
{
    double v;
    const char *e;
    if (!text || !*text)
        return rf_err_set(err, RF_EINVAL, "empty number");
    if (!real(text, &v, &e) || *e)
        return rf_err_set(err, RF_EINVAL, "'%s' is not a number", text);
    if (!(v >= lo && v <= hi))
        return rf_err_set(err, RF_ERANGE, "'%s' is out of range [%g, %g]", text, lo, hi);
    *out = v;
    return RF_OK;
}

rf_status rf_parse_size(const char *text, uint64_t *out, rf_err *err)
{
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {
        {"", 1},
        {"B", 1},
        {"KB", 1e3},
        {"MB", 1e6},
        {"GB", 1e9},
        {"TB", 1e12},
        {"KiB", 1024.0},
        {"MiB", 1048576.0},
        {"GiB", 1073741824.0},
        {"TiB", 1099511627776.0},
    };
    double v;
    const char *e;
    if (!text || !*text)
        return rf_err_set(err, RF_EINVAL, "empty size");
    if (*text == '-' || *text == '+' || !real(text, &v, &e))
        return rf_err_set(err, RF_EINVAL, "'%s' is not a size (e.g. 6GiB, 79.65GiB, 16GB, 4096)",
                          text);
    while (*e == ' ')
        e++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(e, units[i].suffix)) {
            double b = v * units[i].scale;
            if (!(b <= (double)RF_SIZE_MAX_BYTES))
                return rf_err_set(err, RF_ERANGE, "size '%s' is beyond 2^60 bytes", text);
            *out = (uint64_t)llround(b);
            return RF_OK;
        }
    return rf_err_set(err, RF_EINVAL,
                      "'%s': unknown size unit '%s' (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", text,
                      e);
}

/* Walk a range, calling emit for each value; shared by count and fill. */
typedef struct sink {
    int64_t *vals;
    size_t cap, n;
} sink;

static rf_status emit(sink *k, int64_t v, const char *text, rf_err *err)
{
    if (k->vals) {
        if (k->n >= k->cap)
            return rf_err_set(err, RF_ERANGE, "range '%s' has more than %zu values", text, k->cap);
        k->vals[k->n] = v;
    } else if (k->n >= ((size_t)1 << 26)) {
        return rf_err_set(err, RF_ERANGE, "range '%s' has more than %zu values", text,
                          (size_t)1 << 26);
    }
    k->n++;
    return RF_OK;
}

static rf_status walk(const char *text, int64_t hi, sink *k, rf_err *err)
{
    if (!text || !*text)
        return rf_err_set(err, RF_EINVAL, "empty range");
    const char *dots = strstr(text, "..");
    const char *end = text + strlen(text);
    rf_status s;
    if (!dots) { /* a list: a,b,c */
        const char *p = text;
        for (;;) {
            const char *c = strchr(p, ',');
            const char *e = c ? c : end;
            int64_t v;
            if ((s = int_in(text, p, e, 1, hi, &v, err)) || (s = emit(k, v, text, err)))
                return s;
            if (!c)
                break;
            p = c + 1;
        }
        return RF_OK;
    }
    const char *colon = strchr(dots + 2, ':');
    int64_t lo, top, step = 0;
    if ((s = int_in(text, text, dots, 1, hi, &lo, err)) ||
        (s = int_in(text, dots + 2, colon ? colon : end, 1, hi, &top, err)) ||
        (colon && (s = int_in(text, colon + 1, end, 1, hi, &step, err))))
        return s;
    if (top < lo)
        return rf_err_set(err, RF_EINVAL, "range '%s' is empty (end below start)", text);
    if (step) {
        for (int64_t v = lo; v <= top; v += step) {
            if ((s = emit(k, v, text, err)))
                return s;
            if (v > top - step)
                break;
        }
    } else {
        for (int64_t v = lo; v <= top; v *= 2) {
            if ((s = emit(k, v, text, err)))
                return s;
            if (v > top / 2)
                break;
        }
    }
    return RF_OK;
}

rf_status rf_parse_range(const char *text, int64_t hi, int64_t *vals, size_t cap, size_t *n,
                         rf_err *err)
{
    sink k = {vals, cap, 0};
    rf_status s = walk(text, hi, &k, err);
    *n = k.n;
    return s;
}

rf_status rf_parse_range_count(const char *text, int64_t hi, size_t *n, rf_err *err)
{
    sink k = {NULL, 0, 0};
    rf_status s = walk(text, hi, &k, err);
    *n = k.n;
    return s;
}
