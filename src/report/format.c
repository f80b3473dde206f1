/* format.c - numbers for reading: units chosen per magnitude, fixed digits,
 * so the same value always prints the same text (golden files stay stable). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_impl.h"

/* Integer with thousands separators. */
static char *grouped(double v, char *out, size_t cap)
{
    char digits[32];
    double r = round(fabs(v));
    if (r >= 1e19) {
        snprintf(out, cap, "%.3e", v);
        return out;
    }
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)r);
    size_t n = strlen(digits), o = 0;
    if (v < 0 && r > 0 && o + 1 < cap)
        out[o++] = '-';
    for (size_t i = 0; i < n && o + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return out;
}

/* `sig` significant digits with a unit from a ladder of `step`s. */
static char *scaled(double v, int sig, double step, const char *const *units, int n_units,
                    const char *suffix, char *out, size_t cap)
{
    int i = 0;
    double x = v;
    char tmp[64];
    while (i + 1 < n_units && fabs(x) >= step) {
        x /= step;
        i++;
    }
    for (;;) {
        double a = fabs(x);
        int dec = sig - 1 - (a >= 1 ? (int)floor(log10(a)) : 0);
        snprintf(tmp, sizeof tmp, "%.*f", dec < 0 ? 0 : dec, x);
        /* 999.96 prints as 1000.0: move to the next unit instead */
        if (i + 1 < n_units && fabs(strtod(tmp, NULL)) >= step) {
            x /= step;
            i++;
            continue;
        }
        break;
    }
    snprintf(out, cap, "%s %s%s", tmp, units[i], suffix);
    return out;
}

size_t rf__utoa(uint64_t v, char *out)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static double p10(int e) /* 10^e for |e| <= 22, exact table values */
{
    return e >= 0 ? pow10_tab[e] : 1.0 / pow10_tab[-e];
}

/* Shortest text of v at 6 significant digits ("0.00448049", "223.206",
 * "1.2e+20"; an exponent from 1e15 and below 1e-6), "null" when not
 * finite; out holds >= 32 bytes. Digits by integer arithmetic, not stdio:
 * a million-point sweep prints four of these a row. */
static size_t g6(double v, char *out)
{
    size_t o = 0;
    if (!isfinite(v)) {
        memcpy(out, "null", 5);
        return 4;
    }
    if (v == 0) {
        out[0] = '0';
        out[1] = '\0';
        return 1;
    }
    if (v < 0) {
        out[o++] = '-';
        v = -v;
    }
    int e = (int)floor(log10(v));
    if (e < -22 + 5 || e > 22) {
        /* far outside the figures we print: the C library's %.6g, whose
         * exponent has two or more digits here, as the fast path's does */
        return o + (size_t)snprintf(out + o, 24, "%.6g", v);
    }
    uint64_t m = (uint64_t)llround(e >= 5 ? v / p10(e - 5) : v * p10(5 - e));
    if (m >= 1000000) { /* rounding carried into a 7th digit */
        m = (m + 5) / 10;
        e++;
    }
    char dg[8];
    rf__utoa(m, dg); /* exactly 6 digits */
    int last = 5;
    while (last > 0 && dg[last] == '0')
        last--;
    if (e >= 15 || e < -6) {
        out[o++] = dg[0];
        if (last > 0) {
            out[o++] = '.';
            memcpy(out + o, dg + 1, (size_t)last);
            o += (size_t)last;
        }
        out[o++] = 'e';
        out[o++] = e < 0 ? '-' : '+';
        o += rf__utoa((uint64_t)(e < 0 ? -e : e), out + o);
        return o;
    }
    if (e < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int z = 0; z < -e - 1; z++)
            out[o++] = '0';
        memcpy(out + o, dg, (size_t)last + 1);
        o += (size_t)last + 1;
    } else {
        for (int i = 0; i <= e; i++)
            out[o++] = i <= 5 ? dg[i] : '0';
        if (last > e) {
            out[o++] = '.';
            memcpy(out + o, dg + e + 1, (size_t)(last - e));
            o += (size_t)(last - e);
        }
    }
    out[o] = '\0';
    return o;
}

/* Counts on a ladder of units: bytes, FLOPs, rates and counts, 4
 * significant digits (below one step the plain integer). */
static char *laddered(double v, rf_unit u, char *out, size_t cap)
{
    static const char *const dec[] = {"", "K", "M", "G", "T", "P", "E"};
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *const cnt[] = {"", "K", "M", "B", "T"};
    switch (u) {
    case RF_U_BYTES:
        if (fabs(v) < 1000)
            return snprintf(out, cap, "%.0f B", v), out;
        return scaled(v, 4, 1000, dec, 7, "B", out, cap);
    case RF_U_BYTES_BIN:
        if (fabs(v) < 1024)
            return snprintf(out, cap, "%.0f B", v), out;
        return scaled(v, 4, 1024, bin, 7, "B", out, cap);
    case RF_U_FLOPS:
        if (fabs(v) < 1000)
            return snprintf(out, cap, "%.0f FLOP", v), out;
        return scaled(v, 4, 1000, dec, 7, "FLOP", out, cap);
    case RF_U_FLOP_RATE:
        return scaled(v, 4, 1000, dec, 7, "FLOP/s", out, cap);
    case RF_U_BW:
        return scaled(v, 4, 1000, dec, 7, "B/s", out, cap);
    case RF_U_COUNT:
    default:
        if (fabs(v) < 1000)
            return snprintf(out, cap, "%.0f", v), out;
        return scaled(v, 4, 1000, cnt, 5, "", out, cap);
    }
}

/* Seconds in s, ms, us or ns, 3 significant digits up to 999. */
static char *seconds(double v, char *out, size_t cap)
{
    double a = fabs(v);
    const char *unit = "s";
    double x = v;
    if (a == 0)
        return snprintf(out, cap, "0 s"), out;
    if (a < 1e-6) {
        x = v * 1e9;
        unit = "ns";
    } else if (a < 1e-3 * 0.9995) {
        x = v * 1e6;
        unit = "us";
    } else if (a < 0.9995) {
        x = v * 1e3;
        unit = "ms";
    }
    double ax = fabs(x);
    int d = ax >= 99.95 ? 0 : ax >= 9.995 ? 1 : 2;
    snprintf(out, cap, "%.*f %s", d, x, unit);
    return out;
}

/* The unitless figures: intensities, percentages, ratios. */
static char *plain(double v, rf_unit u, char *out, size_t cap)
{
    switch (u) {
    case RF_U_INTENSITY:
        snprintf(out, cap, "%.1f", v);
        return out;
    case RF_U_INTENSITY4:
        if (fabs(v) >= 1000)
            snprintf(out, cap, "%.1f", v);
        else
            snprintf(out, cap, "%.4g", v);
        return out;
    case RF_U_PERCENT:
        snprintf(out, cap, fabs(v) < 0.1 ? "%.2f%%" : "%.1f%%", v * 100);
        return out;
    case RF_U_SIG3:
        if (fabs(v) >= 99.95 || v == floor(v)) /* %#.3g would print "100." */
            return grouped(v, out, cap);
        snprintf(out, cap, "%#.3g", v);
        return out;
    case RF_U_RATIO:
        if (fabs(v) >= 1000)
            return grouped(v, out, cap);
        snprintf(out, cap, "%.3g", v);
        return out;
    case RF_U_NONE:
    default:
        snprintf(out, cap, "%.4g", v);
        return out;
    }
}

char *rf_fmt(double v, rf_unit u, char *out, size_t cap)
{
    if (u == RF_U_RAW6) {
        g6(v, out);
        return out;
    }
    if (!isfinite(v)) {
        snprintf(out, cap, "-");
        return out;
    }
    switch (u) {
    case RF_U_INT:
        return grouped(v, out, cap);
    case RF_U_SECONDS:
        return seconds(v, out, cap);
    case RF_U_TOK_RATE:
        if (fabs(v) < 10)
            return snprintf(out, cap, "%.2f tok/s", v), out;
        grouped(v, out, cap);
        strncat(out, " tok/s", cap - strlen(out) - 1);
        return out;
    case RF_U_BYTES:
    case RF_U_BYTES_BIN:
    case RF_U_FLOPS:
    case RF_U_FLOP_RATE:
    case RF_U_BW:
    case RF_U_COUNT:
        return laddered(v, u, out, cap);
    default:
        return plain(v, u, out, cap);
    }
}

void rf__put_text(rf_buf *b, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) {
            rf_buf_put(b, run, (size_t)(s - run));
            rf_buf_put(b, "?", 1);
            run = s + 1;
        }
    }
    rf_buf_put(b, run, (size_t)(s - run));
}

const char *rf__cell_text(const rf_cell *v, rf_unit u, char *tmp, size_t cap)
{
    switch (v->kind) {
    case RF_CELL_STR:
        return v->str ? v->str : "";
    case RF_CELL_NULL:
        return v->str ? v->str : "-";
    case RF_CELL_BOOL:
        return v->str ? v->str : v->i ? "yes" : "no";
    case RF_CELL_INT:
        return rf_fmt((double)v->i, u == RF_U_NONE ? RF_U_INT : u, tmp, cap);
    case RF_CELL_NUM:
    default:
        return rf_fmt(v->num, u, tmp, cap);
    }
}
