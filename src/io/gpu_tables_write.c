/* gpu_tables_write.c - kernel tables written in the format gpu_tables.c
 * reads (rf_gpu_io.h): aiconfigurator's column names, `latency` in ms. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roofline/rf_file.h"
#include "roofline/rf_gpu_io.h"

/* Append the text of fmt to the buffer *buf (length *len, capacity *cap),
 * growing it. false when out of memory. */
static bool put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static bool put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return false;
        if (*buf && *len + (size_t)n < *cap) {
            *len += (size_t)n;
            return true;
        }
        size_t want = (*cap ? *cap * 2 : 4096) + (size_t)n + 1;
        char *grown = realloc(*buf, want);
        if (!grown)
            return false;
        *buf = grown;
        *cap = want;
    }
}

rf_status rf_gpu_table_write(const rf_gpu_table *t, const char *path, rf_err *err)
{
    if (!t->n_rows || !t->n_keys)
        return rf_err_set(err, RF_EINVAL, "%s: a table without rows or columns is not written",
                          path);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    bool ok = true;
    for (size_t d = 0; d < t->n_keys && ok; d++)
        ok = put(&buf, &len, &cap, "%s,", t->col[d].name);
    ok = ok && put(&buf, &len, &cap, "latency\n");
    for (size_t r = 0; r < t->n_rows && ok; r++) {
        for (size_t d = 0; d < t->n_keys && ok; d++) {
            double v = t->key[r * t->n_keys + d];
            const rf_gpu_col *c = &t->col[d];
            if (c->categorical)
                ok = (size_t)v < c->n_values && put(&buf, &len, &cap, "%s,", c->values[(size_t)v]);
            else if (v == floor(v) && fabs(v) < 9e15)
                ok = put(&buf, &len, &cap, "%.0f,", v);
            else
                ok = put(&buf, &len, &cap, "%.17g,", v);
        }
        ok = ok && put(&buf, &len, &cap, "%.9g\n", t->latency_s[r] * 1e3);
    }
    rf_status s = ok ? rf_file_write_atomic(path, buf, len, NULL, err)
                     : rf_err_set(err, RF_ENOMEM,
                                  "%s: out of memory (or a categorical key "
                                  "without its value)",
                                  path);
    free(buf);
    return s;
}

/* mkdir -p path (its last component included). */
static rf_status make_dirs(const char *path, rf_err *err)
{
    char p[512];
    int n = snprintf(p, sizeof p, "%s", path);
    if (n < 0 || (size_t)n >= sizeof p)
        return rf_err_set(err, RF_EINVAL, "%s: path too long", path);
    for (char *c = p + 1;; c++) {
        bool end = !*c;
        if (*c != '/' && !end)
            continue;
        *c = 0;
        struct stat st;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return rf_err_set(err, RF_EIO, "%s: cannot make the folder: %s", p, strerror(errno));
        if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            return rf_err_set(err, RF_EIO, "%s: not a folder", p);
        if (end)
            return RF_OK;
        *c = '/';
    }
}

rf_status rf_gpu_tables_write(const rf_gpu_tables *g, const char *dir, rf_err *err)
{
    size_t written = 0;
    rf_status s = make_dirs(dir, err);
    for (int k = 0; k < RF_GPU_KIND_COUNT && s == RF_OK; k++) {
        const rf_gpu_table *t = &g->t[k];
        if (!t->n_rows)
            continue;
        char path[1024];
        int n = snprintf(path, sizeof path, "%s/%s", dir, rf_gpu_kind_file((rf_gpu_kind)k));
        if (n < 0 || (size_t)n >= sizeof path)
            return rf_err_set(err, RF_EINVAL, "%s: path too long", dir);
        char *slash = strrchr(path, '/');
        *slash = 0; /* the file's own folder (nccl's is ../nccl) */
        s = make_dirs(path, err);
        *slash = '/';
        if (s == RF_OK && (s = rf_gpu_table_write(t, path, err)) == RF_OK)
            written++;
    }
    if (s == RF_OK && !written)
        s = rf_err_set(err, RF_EINVAL, "%s: no table with rows to write", dir);
    return s;
}
