/* hw_profile.c - a measured profile as JSON (rf_hw_profile.h): written by
 * `roofline measure`, read wherever --hw takes a file. */
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_file.h"
#include "roofline/rf_hw_profile_io.h"

#include "calib_io.h"
#include "cluster_io.h"
#include "io_json.h"

/* ---- writing ------------------------------------------------------------ */

static int put(json_t *obj, const char *key, json_t *v)
{
    return v ? json_object_set_new(obj, key, v) : -1;
}

/* {dtype: figure} for every positive figure, in dtype order. */
static json_t *per_dtype(const double *v, double divide_by)
{
    json_t *o = json_object();
    for (int k = 0; o && k < RF_DTYPE_COUNT; k++)
        if (v[k] > 0 && put(o, rf_dtype_name((rf_dtype_kind)k), json_real(v[k] / divide_by)))
            return json_decref(o), NULL;
    return o;
}

static json_t *level_json(const rf_hw_profile *p, const rf_hw_profile_level *l)
{
    json_t *o = json_object();
    if (!o || put(o, "name", json_string(l->name)) ||
        put(o, "bandwidth_bytes_per_s", json_real(l->bandwidth_bytes_per_s)) ||
        put(o, "bytes", json_integer((json_int_t)l->bytes)) ||
        (l->bandwidth_bytes_per_s > 0 &&
         put(o, "ridge_flop_per_byte", per_dtype(p->peak_flops_per_s, l->bandwidth_bytes_per_s))))
        return json_decref(o), NULL;
    return o;
}

static json_t *kernel_json(const rf_hw_profile_kernel *k)
{
    json_t *o = json_object();
    if (!o || put(o, "name", json_string(k->name)) || put(o, "level", json_string(k->level)) ||
        put(o, "bytes", json_integer((json_int_t)k->bytes)) ||
        put(o, "unit", json_string(k->unit)) || put(o, "best", json_real(k->best)) ||
        put(o, "median", json_real(k->median)) || put(o, "min", json_real(k->min)) ||
        put(o, "max", json_real(k->max)))
        return json_decref(o), NULL;
    return o;
}

/* {"statistic", "bursts", "trials_per_burst", "runs", "burst_best": [...]} */
static json_t *bursts_json(const rf_hw_profile_bursts *b)
{
    json_t *o = json_object(), *best = json_array();
    bool ok = o && best &&
              !put(o, "statistic",
                   json_string("the roof: the most any burst's best read showed; "
                               "typical: the median of the bursts' best")) &&
              !put(o, "bursts", json_integer(b->n)) &&
              !put(o, "trials_per_burst", json_integer(b->trials)) &&
              !put(o, "runs", json_integer(b->runs));
    for (int i = 0; ok && i < b->n; i++)
        ok = !json_array_append_new(best, json_real(b->best[i]));
    if (ok) {
        ok = !put(o, "burst_best", best);
        best = NULL;
    }
    json_decref(best);
    if (!ok)
        return json_decref(o), NULL;
    return o;
}

static json_t *profile_json(const rf_hw_profile *p)
{
    json_t *o = json_object(), *levels = json_array(), *kernels = json_array();
    bool ok = o && levels && kernels;
    ok = ok && !put(o, "name", json_string(p->name)) && !put(o, "cpu", json_string(p->cpu)) &&
         !put(o, "device", json_string(p->device)) && !put(o, "isa", json_string(p->isa)) &&
         !put(o, "date", json_string(p->date)) && !put(o, "threads", json_integer(p->threads)) &&
         !put(o, "cores", json_integer(p->cores)) && !put(o, "clock_hz", json_real(p->clock_hz)) &&
         !put(o, "mem_bytes", json_integer((json_int_t)p->mem_bytes));
    if (ok && p->device[0])
        ok = !put(o, "sm_count", json_integer(p->sm_count)) &&
             !put(o, "l2_bytes", json_integer((json_int_t)p->l2_bytes));
    if (ok && !p->device[0]) {
        json_t *c = json_object();
        ok = c && !put(c, "l1d", json_integer((json_int_t)p->cache_bytes[0])) &&
             !put(c, "l2", json_integer((json_int_t)p->cache_bytes[1])) &&
             !put(c, "l3", json_integer((json_int_t)p->cache_bytes[2])) &&
             !put(o, "caches_reported_bytes", c) && !put(o, "flags", json_string(p->flags));
    }
    ok = ok && !put(o, "bandwidth_bytes_per_s", json_real(p->bandwidth_bytes_per_s)) &&
         !put(o, "peak_flops_per_s", per_dtype(p->peak_flops_per_s, 1)) &&
         !put(o, "theoretical_flops_per_s", per_dtype(p->theoretical_flops_per_s, 1)) &&
         (!(p->bandwidth_bytes_per_s > 0) ||
          !put(o, "ridge_flop_per_byte", per_dtype(p->peak_flops_per_s, p->bandwidth_bytes_per_s)));
    for (size_t i = 0; ok && i < p->n_levels; i++)
        ok = !json_array_append_new(levels, level_json(p, &p->levels[i]));
    for (size_t i = 0; ok && i < p->n_kernels; i++)
        ok = !json_array_append_new(kernels, kernel_json(&p->kernels[i]));
    /* put() takes the array whether or not it succeeds; unput, we free it */
    if (ok) {
        ok = !put(o, "levels", levels);
        levels = NULL;
    }
    if (ok) {
        ok = !put(o, "kernels", kernels);
        kernels = NULL;
    }
    ok = ok && !put(o, "spread", json_real(p->spread));
    ok = ok && (!p->dram_bursts.n || !put(o, "dram_bursts", bursts_json(&p->dram_bursts)));
    ok = ok && (!p->cluster.ranks || !put(o, "cluster", rf__cluster_json(&p->cluster)));
    ok = ok && !rf__calib_put(o, p); /* the sustained roof and --calibrate's data */
    json_decref(levels);
    json_decref(kernels);
    if (!ok)
        return json_decref(o), NULL;
    return o;
}

rf_status rf_hw_profile_to_json(const rf_hw_profile *p, char **json, rf_err *err)
{
    *json = NULL;
    json_t *o = profile_json(p);
    char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    if (!text)
        return rf_err_set(err, RF_ENOMEM, "out of memory writing profile %s", p->name);
    size_t n = strlen(text);
    *json = malloc(n + 2);
    if (!*json) {
        free(text);
        return rf_err_set(err, RF_ENOMEM, "out of memory writing profile %s", p->name);
    }
    memcpy(*json, text, n);
    (*json)[n] = '\n';
    (*json)[n + 1] = 0;
    free(text);
    return RF_OK;
}

rf_status rf_hw_profile_save(const rf_hw_profile *p, const char *path, rf_err *err)
{
    char *text = NULL;
    rf_status s = rf_hw_profile_to_json(p, &text, err);
    if (s == RF_OK)
        s = rf_file_write_atomic(path, text, strlen(text), NULL, err);
    free(text);
    return s;
}

/* ---- reading ------------------------------------------------------------ */

/* A figure: a number (io_json.h's accessors), not negative. */
static rf_status get_figure(const rf__json_doc *r, json_t *obj, const char *at, const char *key,
                            bool required, double *out)
{
    double x = *out; /* kept when absent */
    rf_status s = rf__field_number(r, obj, at, key, required, &x);
    if (s)
        return s;
    if (x < 0)
        return rf__json_fail(r->err, r->origin, "%s%s is negative (%g)", at, key, x);
    *out = x;
    return RF_OK;
}

/* A count (of bytes, threads, ...): a non-negative integer, at most
 * RF_SIZE_MAX_BYTES (2^60, as --mem). */
static rf_status get_count(const rf__json_doc *r, json_t *obj, const char *at, const char *key,
                           bool required, uint64_t *out)
{
    json_int_t x = (json_int_t)*out; /* kept when absent */
    rf_status s = rf__field_integer(r, obj, at, key, required, &x);
    if (s)
        return s;
    if (x < 0)
        return rf__json_fail(r->err, r->origin, "%s%s is negative (%lld)", at, key, (long long)x);
    *out = (uint64_t)x;
    char path[96];
    snprintf(path, sizeof path, "%s%s", at, key);
    return rf__bytes_check(r->origin, path, *out, r->err);
}

static rf_status get_dtype_figures(const rf__json_doc *r, json_t *obj, const char *key,
                                   bool required, double *out)
{
    json_t *m;
    rf_status s = rf__field_get(r, obj, "", key, required, &m);
    if (s || !m)
        return s;
    if (!json_is_object(m))
        return rf__json_fail(r->err, r->origin,
                             "%s must be an object keyed by dtype (\"fp32\": ...)", key);
    const char *name;
    json_t *v;
    json_object_foreach(m, name, v)
    {
        char path[96];
        snprintf(path, sizeof path, "%s.%s", key, name);
        int kind = -1;
        for (int k = 0; k < RF_DTYPE_COUNT; k++)
            if (!strcmp(name, rf_dtype_name((rf_dtype_kind)k)))
                kind = k;
        if (kind < 0)
            return rf__json_fail(r->err, r->origin, "%s: unknown dtype '%s'", path, name);
        char at[64];
        snprintf(at, sizeof at, "%s.", key);
        if ((s = get_figure(r, m, at, name, true, &out[kind])))
            return s;
    }
    return RF_OK;
}

/* A bandwidth within the readers' range (or 0, not measured, where
 * zero_ok), so that every ridge written beside it (peak / bandwidth) is
 * finite. */
static rf_status bandwidth_in_range(const rf__json_doc *r, const char *path, double v, bool zero_ok)
{
    return rf__figure_check(r->origin, path, v, RF__FIG_BW, zero_ok, r->err);
}

/* One field of the objects in a profile's arrays (levels, kernels). */
typedef enum { F_STRING, F_FIGURE, F_BANDWIDTH, F_COUNT } field_kind;

typedef struct item_field {
    const char *key;
    field_kind kind; /* F_BANDWIDTH: a figure, 0 or within the bandwidth range */
    bool required;
    size_t offset; /* in the item struct                                   */
    size_t cap;    /* a string's buffer                                    */
} item_field;

#define FIELD(type, key, kind, required, member)                                                   \
    {                                                                                              \
        key, kind, required, offsetof(type, member),                                               \
            kind == F_STRING ? sizeof((type *)0)->member : 0                                       \
    }

static const item_field level_fields[] = {
    FIELD(rf_hw_profile_level, "name", F_STRING, true, name),
    FIELD(rf_hw_profile_level, "bandwidth_bytes_per_s", F_BANDWIDTH, true, bandwidth_bytes_per_s),
    FIELD(rf_hw_profile_level, "bytes", F_COUNT, true, bytes),
};

static const item_field kernel_fields[] = {
    FIELD(rf_hw_profile_kernel, "name", F_STRING, true, name),
    FIELD(rf_hw_profile_kernel, "level", F_STRING, false, level),
    FIELD(rf_hw_profile_kernel, "unit", F_STRING, false, unit),
    FIELD(rf_hw_profile_kernel, "best", F_FIGURE, true, best),
    FIELD(rf_hw_profile_kernel, "median", F_FIGURE, true, median),
    FIELD(rf_hw_profile_kernel, "min", F_FIGURE, true, min),
    FIELD(rf_hw_profile_kernel, "max", F_FIGURE, true, max),
    FIELD(rf_hw_profile_kernel, "bytes", F_COUNT, false, bytes),
};

/* root[key], an array of at most max objects, each read by its fields, in
 * order, into items (item_size bytes apart); *count is how many were read. */
static rf_status get_items(const rf__json_doc *r, json_t *root, const char *key,
                           const item_field *fields, size_t n_fields, void *items, size_t item_size,
                           size_t max, size_t *count)
{
    json_t *a = NULL;
    rf_status s = rf__field_array(r, root, "", key, false, max, &a);
    if (s || !a)
        return s;
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *o = json_array_get(a, i);
        char base[32], at[40], path[96];
        snprintf(base, sizeof base, "%s[%zu]", key, i);
        snprintf(at, sizeof at, "%s.", base);
        if (!json_is_object(o))
            return rf__json_fail(r->err, r->origin, "%s must be an object", base);
        char *item = (char *)items + i * item_size;
        for (size_t f = 0; f < n_fields; f++) {
            const item_field *fd = &fields[f];
            void *dst = item + fd->offset;
            snprintf(path, sizeof path, "%s.%s", base, fd->key);
            if (fd->kind == F_STRING)
                s = rf__field_string(r, o, at, fd->key, fd->required, dst, fd->cap);
            else if (fd->kind == F_COUNT)
                s = get_count(r, o, at, fd->key, fd->required, dst);
            else if (!(s = get_figure(r, o, at, fd->key, fd->required, dst)) &&
                     fd->kind == F_BANDWIDTH)
                s = bandwidth_in_range(r, path, *(double *)dst, true);
            if (s)
                return s;
        }
        *count = i + 1;
    }
    return RF_OK;
}

rf_status rf_hw_profile_from_json(const char *text, const char *origin, rf_hw_profile *out,
                                  rf_err *err)
{
    return rf_hw_profile_parse(text, strlen(text), origin, out, err);
}

/* The named fields of the top level: strings, figures, counts, the two
 * dtype tables, the levels and the kernels, each checked as it is read. */
static rf_status read_fields(rf__json_doc *r, json_t *root, rf_hw_profile *out)
{
    rf_status s;
    if ((s = rf__field_string(r, root, "", "name", true, out->name, sizeof out->name)) ||
        (s = rf__field_string(r, root, "", "cpu", false, out->cpu, sizeof out->cpu)) ||
        (s = rf__field_string(r, root, "", "device", false, out->device, sizeof out->device)) ||
        (s = rf__field_string(r, root, "", "isa", false, out->isa, sizeof out->isa)) ||
        (s = rf__field_string(r, root, "", "date", false, out->date, sizeof out->date)) ||
        (s = rf__field_string(r, root, "", "flags", false, out->flags, sizeof out->flags)) ||
        (s = get_figure(r, root, "", "bandwidth_bytes_per_s", true, &out->bandwidth_bytes_per_s)) ||
        (s = get_figure(r, root, "", "clock_hz", false, &out->clock_hz)) ||
        (s = rf__figure_check(r->origin, "clock_hz", out->clock_hz, RF__FIG_CLOCK, true, r->err)) ||
        (s = get_figure(r, root, "", "spread", false, &out->spread)) ||
        (s = get_count(r, root, "", "mem_bytes", false, &out->mem_bytes)) ||
        (s = get_count(r, root, "", "l2_bytes", false, &out->l2_bytes)) ||
        (s = get_dtype_figures(r, root, "peak_flops_per_s", true, out->peak_flops_per_s)) ||
        (s = get_dtype_figures(r, root, "theoretical_flops_per_s", false,
                               out->theoretical_flops_per_s)))
        return s;
    if ((s = get_items(r, root, "levels", level_fields,
                       sizeof level_fields / sizeof level_fields[0], out->levels,
                       sizeof out->levels[0], RF_HW_PROFILE_MAX_LEVELS, &out->n_levels)))
        return s;
    return get_items(r, root, "kernels", kernel_fields,
                     sizeof kernel_fields / sizeof kernel_fields[0], out->kernels,
                     sizeof out->kernels[0], RF_HW_PROFILE_MAX_KERNELS, &out->n_kernels);
}

/* The memory roof's bursts (absent in older profiles): counts of at most
 * 2^20, as many bests as bursts (at most RF_HW_PROFILE_MAX_BURSTS), each a
 * bandwidth in range and none above the roof. */
static rf_status read_bursts(rf__json_doc *r, json_t *root, rf_hw_profile *out)
{
    json_t *o = json_object_get(root, "dram_bursts");
    if (!o)
        return RF_OK;
    if (!json_is_object(o))
        return rf__json_fail(r->err, r->origin, "dram_bursts must be an object");
    rf_hw_profile_bursts *b = &out->dram_bursts;
    const char *keys[] = {"bursts", "trials_per_burst", "runs"};
    int *dst[] = {&b->n, &b->trials, &b->runs};
    rf_status s;
    for (size_t i = 0; i < 3; i++) {
        char path[64];
        uint64_t v = 0;
        snprintf(path, sizeof path, "dram_bursts.%s", keys[i]);
        if ((s = get_count(r, o, "dram_bursts.", keys[i], true, &v)))
            return s;
        if (v < 1 || v > 1u << 20)
            return rf__json_fail(r->err, r->origin, "%s must be within [1, %u] (%llu)", path,
                                 1u << 20, (unsigned long long)v);
        *dst[i] = (int)v;
    }
    json_t *best = json_object_get(o, "burst_best");
    if (!json_is_array(best) || json_array_size(best) != (size_t)b->n ||
        b->n > RF_HW_PROFILE_MAX_BURSTS)
        return rf__json_fail(r->err, r->origin,
                             "dram_bursts.burst_best must be an array of dram_bursts.bursts (%d) "
                             "figures, at most %d",
                             b->n, RF_HW_PROFILE_MAX_BURSTS);
    for (int i = 0; i < b->n; i++) {
        char path[64];
        json_t *v = json_array_get(best, (size_t)i);
        snprintf(path, sizeof path, "dram_bursts.burst_best[%d]", i);
        if (!json_is_number(v))
            return rf__json_fail(r->err, r->origin, "%s must be a number", path);
        b->best[i] = json_number_value(v);
        if ((s = bandwidth_in_range(r, path, b->best[i], false)))
            return s;
        if (b->best[i] > out->bandwidth_bytes_per_s * (1 + 1e-12))
            return rf__json_fail(r->err, r->origin,
                                 "%s (%g) is above the roof, bandwidth_bytes_per_s (%g)", path,
                                 b->best[i], out->bandwidth_bytes_per_s);
    }
    return RF_OK;
}

/* threads, cores and sm_count (at most 2^20), and the caches the system
 * reported. */
static rf_status read_counts(rf__json_doc *r, json_t *root, rf_hw_profile *out)
{
    rf_status s;
    const char *ints[] = {"threads", "cores", "sm_count"};
    int *dst[] = {&out->threads, &out->cores, &out->sm_count};
    for (size_t i = 0; i < 3; i++) {
        uint64_t v = 0;
        if ((s = get_count(r, root, "", ints[i], false, &v)))
            return s;
        if (v > 1u << 20)
            return rf__json_fail(r->err, r->origin, "%s is implausibly large (%llu)", ints[i],
                                 (unsigned long long)v);
        *dst[i] = (int)v;
    }
    json_t *caches = json_object_get(root, "caches_reported_bytes");
    if (!caches)
        return RF_OK;
    const char *names[] = {"l1d", "l2", "l3"};
    for (size_t i = 0; i < 3; i++)
        if ((s = get_count(r, caches, "caches_reported_bytes.", names[i], false,
                           &out->cache_bytes[i])))
            return s;
    return RF_OK;
}

/* The figures a roof needs: a bandwidth in range, every peak in range,
 * and at least one positive peak. */
static rf_status check_roof(rf__json_doc *r, const rf_hw_profile *out)
{
    rf_status s;
    double peaks_any = 0;
    if (!(out->bandwidth_bytes_per_s > 0))
        return rf__json_fail(r->err, r->origin, "bandwidth_bytes_per_s must be positive (0)");
    if ((s = bandwidth_in_range(r, "bandwidth_bytes_per_s", out->bandwidth_bytes_per_s, false)))
        return s;
    for (int k = 0; k < RF_DTYPE_COUNT; k++) {
        char path[64];
        for (int t = 0; t < 2; t++) {
            snprintf(path, sizeof path, "%s.%s", t ? "theoretical_flops_per_s" : "peak_flops_per_s",
                     rf_dtype_name((rf_dtype_kind)k));
            double v = t ? out->theoretical_flops_per_s[k] : out->peak_flops_per_s[k];
            if ((s = rf__figure_check(r->origin, path, v, RF__FIG_PEAK, true, r->err)))
                return s;
        }
        peaks_any += out->peak_flops_per_s[k];
    }
    return peaks_any > 0
               ? RF_OK
               : rf__json_fail(r->err, r->origin, "peak_flops_per_s has no positive figure");
}

rf_status rf_hw_profile_parse(const char *text, size_t len, const char *origin, rf_hw_profile *out,
                              rf_err *err)
{
    memset(out, 0, sizeof *out);
    rf__json_doc r = {.origin = origin ? origin : "profile", .err = err};
    json_t *root = NULL;
    rf_status s = rf__json_parse(text, len, r.origin, &root, err);
    if (s)
        return s;
    if (!json_is_object(root))
        s = rf__json_fail(r.err, r.origin, "the top level must be an object");
    else if (!(s = read_fields(&r, root, out)) && !(s = read_counts(&r, root, out)) &&
             !(s = rf__cluster_read(r.origin, root, &out->cluster, err)))
        s = check_roof(&r, out);
    if (!s && json_is_object(root))
        s = read_bursts(&r, root, out);
    if (!s && json_is_object(root)) /* an older profile has neither */
        s = rf__calib_get(root, r.origin, out, err);
    json_decref(root);
    return s;
}

static rf_status parse_any(const char *text, size_t len, const char *origin, void *out, rf_err *err)
{
    return rf_hw_profile_parse(text, len, origin, out, err);
}

rf_status rf_hw_profile_load(const char *path, rf_hw_profile *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    return rf__json_load(path, parse_any, out, err);
}
