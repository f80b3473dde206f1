/* format.c - numbers for reading: units chosen per magnitude, fixed digits,
 * so the same value always prints the same text (golden files stay stable). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_report.h"

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

char *rf_fmt(double v, rf_unit u, char *out, size_t cap)
{
    static const char *const dec[] = {"", "K", "M", "G", "T", "P", "E"};
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *const cnt[] = {"", "K", "M", "B", "T"};
    if (!isfinite(v)) {
        snprintf(out, cap, "-");
        return out;
    }
    switch (u) {
    case RF_U_INT:
        return grouped(v, out, cap);
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
    case RF_U_SECONDS: {
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
    case RF_U_TOK_RATE:
        if (fabs(v) < 10)
            return snprintf(out, cap, "%.2f tok/s", v), out;
        grouped(v, out, cap);
        strncat(out, " tok/s", cap - strlen(out) - 1);
        return out;
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
    case RF_U_COUNT:
        if (fabs(v) < 1000)
            return snprintf(out, cap, "%.0f", v), out;
        return scaled(v, 4, 1000, cnt, 5, "", out, cap);
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
