/* gpu_tables.c - an engine's directory of kernel tables read (rf_gpu.h):
 * plain CSV, a header of aiconfigurator's column names, `latency` in ms. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roofline/rf_file.h"
#include "roofline/rf_gpu_io.h"

/* The largest table read (the H100 GEMM tables are 1.4 MB). */
#define TABLE_MAX_BYTES ((size_t)256 << 20)
#define MAX_FIELDS 32

/* Split line (modified) at commas into f; the number of fields. */
static size_t split(char *line, char **f)
{
    size_t n = 0;
    for (char *p = line;; p++) {
        if (n < MAX_FIELDS)
            f[n] = p;
        n++;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = 0;
    }
    return n;
}

/* The next line of *cur (NUL-terminated, its \r\n cut), or NULL at the
 * end. */
static char *next_line(char **cur)
{
    char *s = *cur;
    if (!s || !*s)
        return NULL;
    char *nl = strchr(s, '\n');
    *cur = nl ? nl + 1 : NULL;
    if (nl)
        *nl = 0;
    size_t n = strlen(s);
    if (n && s[n - 1] == '\r')
        s[n - 1] = 0;
    return s;
}

typedef struct header {
    int key[RF_GPU_MAX_KEYS]; /* field of each key column                  */
    int latency, source;      /* source: kernel_source or -1               */
    bool graph_only;          /* keep the rows whose kernel_source is a graph */
} header;

static rf_status read_header(rf_gpu_table *t, char *line, header *h, rf_err *err)
{
    char *f[MAX_FIELDS];
    size_t n = split(line, f);
    if (n > MAX_FIELDS)
        return rf_err_set(err, RF_EINVAL, "%s: line 1: more than %d columns", t->path, MAX_FIELDS);
    h->latency = h->source = -1;
    for (size_t d = 0; d < t->n_keys; d++)
        h->key[d] = -1;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(f[i], "latency"))
            h->latency = (int)i;
        if (!strcmp(f[i], "kernel_source"))
            h->source = (int)i;
        for (size_t d = 0; d < t->n_keys; d++)
            if (!strcmp(f[i], t->col[d].name))
                h->key[d] = (int)i;
    }
    if (h->latency < 0)
        return rf_err_set(err, RF_EINVAL, "%s: line 1: no column 'latency'", t->path);
    for (size_t d = 0; d < t->n_keys; d++)
        if (h->key[d] < 0)
            return rf_err_set(err, RF_EINVAL, "%s: line 1: no column '%s'", t->path,
                              t->col[d].name);
    return RF_OK;
}

/* Whether a row with these fields is kept (the CUDA-graph rows of an
 * all-reduce table that holds both). */
static bool kept(const header *h, char **f)
{
    return !h->graph_only || strstr(f[h->source], "graph");
}

/* strtod's value of a field, faster for the tables' plain decimals: up to
 * 15 digits with at most one point and no sign or exponent are a whole
 * number w < 2^53 over 10^f with f <= 15, both exact doubles, and one IEEE
 * division of two exact doubles is the correctly rounded quotient, which
 * is what strtod returns (Clinger's fast path). The rest goes to strtod;
 * *end as strtod sets it. */
static double number(const char *v, char **end)
{
    static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t w = 0;
    int digits = 0, frac = -1;
    const char *p = v;
    for (; *p; p++) {
        if (*p == '.' && frac < 0)
            frac = 0;
        else if (*p >= '0' && *p <= '9' && digits < 15) {
            w = 10 * w + (uint64_t)(*p - '0');
            digits++;
            frac += frac >= 0;
        } else
            return strtod(v, end);
    }
    if (!digits)
        return strtod(v, end);
    *end = (char *)p;
    return frac > 0 ? (double)w / pow10[frac] : (double)w;
}

static rf_status parse_row(rf_gpu_table *t, const header *h, char **f, size_t n, int64_t line,
                           rf_err *err)
{
    size_t r = t->n_rows;
    int need = h->latency;
    for (size_t d = 0; d < t->n_keys; d++)
        need = h->key[d] > need ? h->key[d] : need;
    if (n <= (size_t)need)
        return rf_err_set(err, RF_EINVAL, "%s: line %lld: %zu fields, the header needs %d", t->path,
                          (long long)line, n, need + 1);
    char *end;
    errno = 0;
    double lat = number(f[h->latency], &end);
    if (end == f[h->latency] || *end || errno || !isfinite(lat) || !(lat > 0))
        return rf_err_set(err, RF_EINVAL,
                          "%s: line %lld: latency '%s' must be a positive "
                          "number of ms",
                          t->path, (long long)line, f[h->latency]);
    for (size_t d = 0; d < t->n_keys; d++) {
        const char *v = f[h->key[d]];
        rf_gpu_col *c = &t->col[d];
        double *k = &t->key[r * t->n_keys + d];
        if (!c->categorical) {
            errno = 0;
            *k = number(v, &end);
            if (end == v || *end || errno || !isfinite(*k) || !(*k >= 1))
                return rf_err_set(err, RF_EINVAL,
                                  "%s: line %lld: %s '%s' must be a number "
                                  ">= 1",
                                  t->path, (long long)line, c->name, v);
            continue;
        }
        size_t j = 0;
        while (j < c->n_values && strcmp(c->values[j], v))
            j++;
        if (j == c->n_values) {
            if (j == RF_GPU_MAX_CATS || strlen(v) >= sizeof c->values[0] || !*v)
                return rf_err_set(err, RF_EINVAL,
                                  "%s: line %lld: %s '%s': an empty or long "
                                  "value, or more than %d values",
                                  t->path, (long long)line, c->name, v, RF_GPU_MAX_CATS);
            snprintf(c->values[j], sizeof c->values[j], "%s", v);
            c->n_values++;
        }
        *k = (double)j;
    }
    t->latency_s[r] = lat * 1e-3;
    t->line[r] = line;
    t->n_rows++;
    return RF_OK;
}

/* Read one table file into t (its kind and path set). */
static rf_status read_table(rf_gpu_table *t, const rf_hw *hw, rf_err *err)
{
    char *data = NULL, *cur, *line;
    double *scratch = NULL;
    size_t len, rows = 0;
    header h = {.latency = -1, .source = -1};
    rf_status s = rf_file_read_all(t->path, TABLE_MAX_BYTES, &data, &len, err);
    if (s)
        return s;
    for (size_t i = 0; i < len; i++)
        rows += data[i] == '\n';
    t->key = calloc((rows + 1) * t->n_keys, sizeof *t->key);
    t->latency_s = calloc(rows + 1, sizeof *t->latency_s);
    t->ln_ratio = calloc(rows + 1, sizeof *t->ln_ratio);
    t->line = calloc(rows + 1, sizeof *t->line);
    scratch = calloc((rows + 1) * t->n_keys, sizeof *scratch);
    if (!t->key || !t->latency_s || !t->ln_ratio || !t->line || !scratch) {
        s = rf_err_set(err, RF_ENOMEM, "%s: out of memory", t->path);
        goto done;
    }
    cur = data;
    if (!(line = next_line(&cur))) {
        s = rf_err_set(err, RF_EINVAL, "%s: empty (a header line is needed)", t->path);
        goto done;
    }
    if ((s = read_header(t, line, &h, err)))
        goto done;
    /* an all-reduce table of graph and eager rows: the graph ones */
    if (h.source >= 0 && t->kind == RF_GPU_ALLREDUCE && strstr(cur ? cur : "", "graph") &&
        strstr(cur, "eager"))
        h.graph_only = true;
    for (int64_t no = 2; (line = next_line(&cur)); no++) {
        char *f[MAX_FIELDS];
        if (!*line)
            continue;
        size_t n = split(line, f);
        if (n > MAX_FIELDS) {
            s = rf_err_set(err, RF_EINVAL, "%s: line %lld: more than %d fields", t->path,
                           (long long)no, MAX_FIELDS);
            goto done;
        }
        if (h.source >= 0 && (size_t)h.source >= n) {
            s = rf_err_set(err, RF_EINVAL, "%s: line %lld: no kernel_source field", t->path,
                           (long long)no);
            goto done;
        }
        if (!kept(&h, f))
            continue;
        if ((s = parse_row(t, &h, f, n, no, err)))
            goto done;
    }
    if (!t->n_rows) {
        s = rf_err_set(err, RF_EINVAL, "%s: no rows", t->path);
        goto done;
    }
    s = rf_gpu_table_prepare(t, hw, scratch, err);
    t->present = s == RF_OK;
done:
    free(scratch);
    free(data);
    return s;
}

rf_status rf_gpu_tables_load(const char *dir, const rf_hw *hw, rf_gpu_tables *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    const char *base = strrchr(dir, '/');
    base = base && base[1] ? base + 1 : dir;
    snprintf(out->backend, sizeof out->backend, "%s", base);
    out->hw = *hw;
    size_t found = 0;
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++) {
        rf_gpu_table *t = &out->t[k];
        t->kind = (rf_gpu_kind)k;
        t->n_keys = rf_gpu_kind_cols(t->kind, t->col);
        int n = snprintf(t->path, sizeof t->path, "%s/%s", dir, rf_gpu_kind_file(t->kind));
        if (n < 0 || (size_t)n >= sizeof t->path) {
            rf_gpu_tables_free(out);
            return rf_err_set(err, RF_EINVAL, "%s: path too long", dir);
        }
        if (access(t->path, F_OK) != 0)
            continue;
        rf_status s = read_table(t, hw, err);
        if (s) {
            rf_gpu_tables_free(out);
            return s;
        }
        found++;
    }
    if (!found) {
        rf_gpu_tables_free(out);
        return rf_err_set(err, RF_EINVAL, "%s: no kernel table (gemm_perf.csv, ...) in it", dir);
    }
    return RF_OK;
}

void rf_gpu_tables_free(rf_gpu_tables *g)
{
    if (!g)
        return;
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++)
        rf_gpu_table_free(&g->t[k]);
}

void rf_gpu_table_free(rf_gpu_table *t)
{
    if (!t)
        return;
    free(t->key);
    free(t->latency_s);
    free(t->ln_ratio);
    free(t->line);
    t->key = t->latency_s = t->ln_ratio = NULL;
    t->line = NULL;
    t->present = false;
    t->n_rows = 0;
}
