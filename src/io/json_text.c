/* json_text.c - the one JSON reading of the io readers (io_json.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_file.h"
#include "roofline/rf_parse.h"

#include "io_json.h"

/* The first bytes of s (up to a newline, at most 16), printable: others
 * as \xNN, so a binary file is named by what it holds. */
static void quote_start(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len && i < 16 && s[i] != '\n' && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

rf_status rf__json_parse(const char *text, size_t len, const char *origin, json_t **root,
                         rf_err *err)
{
    *root = NULL;
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", text[i]) && text[i])
        i++;
    if (i == len)
        return rf_err_set(err, RF_EINVAL, "%s: empty, not JSON", origin);
    if (text[i] != '{' && text[i] != '[') {
        char start[96];
        quote_start(text + i, len - i, start, sizeof start);
        return rf_err_set(err, RF_EINVAL, "%s: not JSON: it starts with '%s' ('{' expected)",
                          origin, start);
    }
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return rf_err_set(err, RF_EINVAL, "%s: not JSON: a NUL byte at offset %zu", origin,
                          (size_t)(nul - text));
    json_error_t je;
    *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!*root)
        return rf_err_set(err, RF_EINVAL, "%s: line %d column %d: %s", origin, je.line, je.column,
                          je.text);
    return RF_OK;
}

/* The length of the bare non-finite token at text[i] (Infinity,
 * -Infinity, NaN) standing where a value stands: after ':', ',' or '[' and
 * before a delimiter; 0 when there is none. */
static size_t nonfinite_at(const char *text, size_t len, size_t i, char prev)
{
    static const char *const tokens[] = {"Infinity", "-Infinity", "NaN"};
    if (prev != ':' && prev != ',' && prev != '[')
        return 0;
    for (size_t t = 0; t < sizeof tokens / sizeof tokens[0]; t++) {
        size_t n = strlen(tokens[t]);
        if (i + n <= len && !memcmp(text + i, tokens[t], n) &&
            (i + n == len || strchr(" \t\r\n,]}", text[i + n])))
            return n;
    }
    return 0;
}

rf_status rf__json_parse_nonfinite(const char *text, size_t len, const char *origin, json_t **root,
                                   size_t *replaced, rf_err *err)
{
    *replaced = 0;
    char *copy = NULL;
    size_t used = 0;
    bool in_string = false, escaped = false;
    char prev = 0; /* the last character outside strings and blanks */
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        size_t n = 0;
        if (in_string) {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if (c == '"') {
            in_string = true;
        } else if ((n = nonfinite_at(text, len, i, prev))) {
            if (!copy) { /* NaN (3) grows to null (4): at most a third more */
                if (!(copy = malloc(len + len / 2 + 4)))
                    return rf_err_set(err, RF_ENOMEM, "%s: out of memory", origin);
                memcpy(copy, text, used);
            }
            memcpy(copy + used, "null", 4);
            used += 4;
            i += n - 1;
            prev = 'l';
            ++*replaced;
            continue;
        }
        if (!in_string && !strchr(" \t\r\n", c))
            prev = c;
        if (copy)
            copy[used] = c;
        used++;
    }
    rf_status s = rf__json_parse(copy ? copy : text, copy ? used : len, origin, root, err);
    free(copy);
    return s;
}

static const struct {
    double lo, hi;
    const char *unit;
} ranges[] = {
    [RF__FIG_BW] = {1e3, 1e16, "bytes/s"}, [RF__FIG_PEAK] = {1e6, 1e19, "FLOP/s"},
    [RF__FIG_FLOPS] = {1, 1e24, "FLOPs"},  [RF__FIG_BYTES] = {1, 1e21, "bytes"},
    [RF__FIG_TIME] = {1e-12, 1e6, "s"},    [RF__FIG_CLOCK] = {1e6, 1e11, "Hz"},
};
_Static_assert(sizeof ranges / sizeof ranges[0] == RF__FIG_COUNT, "one range a figure kind");

rf_status rf__figure_check(const char *origin, const char *path, double v, rf__figure kind,
                           bool zero_ok, rf_err *err)
{
    if ((zero_ok && v == 0) || (v >= ranges[kind].lo && v <= ranges[kind].hi))
        return RF_OK;
    return rf_err_set(err, RF_EINVAL, "%s: %s (%g) must be %swithin [%g, %g] %s", origin, path, v,
                      zero_ok ? "0 (none) or " : "", ranges[kind].lo, ranges[kind].hi,
                      ranges[kind].unit);
}

rf_status rf__bytes_check(const char *origin, const char *path, uint64_t v, rf_err *err)
{
    if (v <= RF_SIZE_MAX_BYTES)
        return RF_OK;
    return rf_err_set(err, RF_EINVAL, "%s: %s (%llu) is beyond 2^60 bytes", origin, path,
                      (unsigned long long)v);
}

rf_status rf__json_load(const char *path, rf__parse_fn parse, void *out, rf_err *err)
{
    char *text = NULL;
    size_t len = 0;
    rf_status s = rf_file_read_all(path, RF_FILE_MAX_BYTES, &text, &len, err);
    if (s == RF_OK)
        s = parse(text, len, path, out, err);
    free(text);
    return s;
}

rf_status rf__json_fail(rf_err *err, const char *origin, const char *fmt, ...)
{
    char what[RF_ERR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rf_err_set(err, RF_EINVAL, "%s: %s", origin, what);
}
