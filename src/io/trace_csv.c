/* trace_csv.c - a request trace from a CSV file (rf_trace_io.h). */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_file.h"
#include "roofline/rf_trace_io.h"

/* The field [*p, end of field) trimmed of blanks into buf (cap bytes);
 * *p moves past its comma. Returns false at a field too long. */
static bool field(const char **p, const char *end, char *buf, size_t cap)
{
    const char *s = *p, *e = s;
    while (e < end && *e != ',')
        e++;
    *p = e < end ? e + 1 : e;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    if ((size_t)(e - s) >= cap)
        return false;
    memcpy(buf, s, (size_t)(e - s));
    buf[e - s] = '\0';
    return true;
}

static bool number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && errno == 0 && isfinite(*v);
}

rf_status rf_trace_parse(const char *text, size_t len, const char *origin, rf_sim_request **out,
                         int64_t *n, rf_err *err)
{
    const char *o = origin ? origin : "trace", *p = text, *end = text + len;
    rf_sim_request *rows = NULL;
    size_t count = 0, cap = 0;
    int64_t line = 0, prev_line = 0;
    bool header = false;
    rf_status s = RF_OK;
    *out = NULL;
    *n = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end, *q = p;
        line++;
        p = eol ? eol + 1 : end;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == le || *q == '#')
            continue;
        int k = 1;
        for (const char *c = q; c < le; c++)
            k += *c == ',';
        char f[3][64];
        double v[3];
        for (int i = 0; i < 3 && i < k; i++)
            if (!field(&q, le, f[i], sizeof f[i])) {
                s = rf_err_set(err, RF_EINVAL,
                               "%s: line %lld: a field longer than 63 "
                               "characters",
                               o, (long long)line);
                goto fail;
            }
        if (!count && !header && !number(f[0], &v[0])) {
            header = true; /* its first field is a name, not a time */
            continue;
        }
        if (k != 3) {
            s = rf_err_set(err, RF_EINVAL,
                           "%s: line %lld: %d field%s, not 3 (arrival_s, prompt, "
                           "output)",
                           o, (long long)line, k, k == 1 ? "" : "s");
            goto fail;
        }
        static const char *const names[3] = {"arrival", "prompt", "output"};
        for (int i = 0; i < 3; i++)
            if (!number(f[i], &v[i]) || (i == 0 && v[i] < 0) ||
                (i > 0 && (v[i] < 1 || v[i] > (double)RF_DIM_MAX || v[i] != floor(v[i])))) {
                s = rf_err_set(err, RF_EINVAL, "%s: line %lld: %s '%s' must be %s", o,
                               (long long)line, names[i], f[i],
                               i ? "a whole number >= 1" : "a number of seconds >= 0");
                goto fail;
            }
        if (count && v[0] < rows[count - 1].arrival_s) {
            s = rf_err_set(err, RF_EINVAL,
                           "%s: line %lld: arrival %g s goes back in time (line "
                           "%lld arrived at %g s)",
                           o, (long long)line, v[0], (long long)prev_line,
                           rows[count - 1].arrival_s);
            goto fail;
        }
        if (count == cap) {
            size_t ncap = cap ? 2 * cap : 1024;
            rf_sim_request *nr = realloc(rows, ncap * sizeof *nr);
            if (!nr) {
                s = rf_err_set(err, RF_ENOMEM, "%s: out of memory at line %lld", o,
                               (long long)line);
                goto fail;
            }
            rows = nr;
            cap = ncap;
        }
        rows[count++] = (rf_sim_request){v[0], (int64_t)v[1], (int64_t)v[2]};
        prev_line = line;
    }
    if (!count) {
        s = rf_err_set(err, RF_EINVAL, "%s: no requests (rows of arrival_s, prompt, output)", o);
        goto fail;
    }
    *out = rows;
    *n = (int64_t)count;
    return RF_OK;
fail:
    free(rows);
    return s;
}

rf_status rf_trace_load(const char *path, rf_sim_request **out, int64_t *n, rf_err *err)
{
    char *data = NULL;
    size_t len;
    rf_status s = rf_file_read_all(path, RF_TRACE_MAX_BYTES, &data, &len, err);
    if (!s)
        s = rf_trace_parse(data, len, path, out, n, err);
    free(data);
    return s;
}
