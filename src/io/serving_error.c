/* serving_error.c - the measured error of serve --predict on a GPU's preset
 * tables, an engine (rf_gpu_io.h): the file bench/predict-gpu.sh writes. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "io_json.h"
#include "roofline/rf_gpu_io.h"

typedef struct request {
    int64_t c; /* the concurrency whose bucket is wanted (0: every run) */
    rf_gpu_serving_error *out;
} request;

/* The figures of one set of runs (an engine's, or a bucket's) at `at`. */
static rf_status figures(const rf__json_doc *d, const json_t *e, const char *at,
                         rf_gpu_serving_error *o)
{
    rf_status s;
    if ((s = rf__field_whole(d, e, at, "runs", true, 1, 1000000, &o->runs)) ||
        (s = rf__field_fraction(d, e, at, "ttft_median", &o->ttft_median)) ||
        (s = rf__field_fraction(d, e, at, "ttft_p90", &o->ttft_p90)) ||
        (s = rf__field_fraction(d, e, at, "tpot_median", &o->tpot_median)) ||
        (s = rf__field_fraction(d, e, at, "tpot_p90", &o->tpot_p90)))
        return s;
    if (o->ttft_p90 < o->ttft_median || o->tpot_p90 < o->tpot_median)
        return rf__json_fail(d->err, d->origin, "%s: a p90 below its median", at);
    return RF_OK;
}

/* engines[engine] (at): its figures, then those of the bucket holding q->c. */
static rf_status read_engine(const rf__json_doc *d, const json_t *e, const char *at, void *user)
{
    request *q = user;
    json_t *buckets = NULL; /* stays NULL when by_concurrency is absent */
    rf_status s;
    if ((s = figures(d, e, at, q->out)) ||
        (s = rf__field_array(d, e, at, "by_concurrency", false, 64, &buckets)))
        return s;
    for (size_t i = 0; buckets && i < json_array_size(buckets); i++) {
        json_t *b = json_array_get(buckets, i);
        char bat[160];
        snprintf(bat, sizeof bat, "%sby_concurrency[%zu].", at, i);
        rf_gpu_serving_error f = {0};
        if (!json_is_object(b))
            return rf__json_fail(d->err, d->origin, "%.*s must be an object", (int)strlen(bat) - 1,
                                 bat);
        if ((s = rf__field_whole(d, b, bat, "min", true, 1, 1000000, &f.c_min)) ||
            (s = rf__field_whole(d, b, bat, "max", true, f.c_min, 1000000, &f.c_max)) ||
            (s = figures(d, b, bat, &f)))
            return s;
        if (q->c >= f.c_min && q->c <= f.c_max) {
            snprintf(f.source, sizeof f.source, "%s", q->out->source);
            *q->out = f;
        }
    }
    return RF_OK;
}

rf_status rf_gpu_serving_error_load(const char *path, const char *engine, int64_t c,
                                    rf_gpu_serving_error *out, bool *found, rf_err *err)
{
    request q = {c, out};
    rf__engine_file f = {engine,      read_engine,       &q, out, sizeof *out,
                         out->source, sizeof out->source};
    return rf__engine_file_load(path, &f, found, err);
}

rf_status rf_gpu_serving_error_parse(const char *text, size_t len, const char *origin,
                                     const char *engine, int64_t c, rf_gpu_serving_error *out,
                                     bool *found, rf_err *err)
{
    request q = {c, out};
    rf__engine_file f = {engine,      read_engine,       &q, out, sizeof *out,
                         out->source, sizeof out->source};
    return rf__engine_file_parse(text, len, origin, &f, found, err);
}
