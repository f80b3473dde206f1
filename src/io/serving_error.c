/* serving_error.c - the measured error of serve --predict on a GPU's preset
 * tables, an engine (rf_gpu_io.h): the file bench/predict-gpu.sh writes. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io_json.h"
#include "roofline/rf_gpu_io.h"

typedef struct request {
    const char *engine;
    rf_gpu_serving_error *out;
    bool found;
} request;

/* engines[engine].key: a fraction within [0, 100]. */
static rf_status error_of(const rf__json_doc *d, const json_t *e, const char *at, const char *key,
                          double *out)
{
    rf_status s = rf__field_number(d, e, at, key, true, out);
    if (!s && !(*out >= 0 && *out <= 100))
        s = rf__json_fail(d->err, d->origin, "%s%s (%g) must be within [0, 100] (a fraction)", at,
                          key, *out);
    return s;
}

static rf_status parse(const char *text, size_t len, const char *origin, void *user, rf_err *err)
{
    request *q = user;
    json_t *root = NULL, *engines, *e;
    rf_status s = rf__json_parse(text, len, origin, &root, err);
    if (s)
        return s;
    rf__json_doc d = {origin, err};
    rf_gpu_serving_error *o = q->out;
    char at[96];
    snprintf(at, sizeof at, "engines.%s.", q->engine);
    if (!json_is_object(root))
        s = rf__json_fail(err, origin, "the top level must be an object");
    else if (!(s = rf__field_string(&d, root, "", "source", true, o->source, sizeof o->source)) &&
             !(s = rf__field_get(&d, root, "", "engines", true, &engines)) &&
             !json_is_object(engines))
        s = rf__json_fail(err, origin, "engines must be an object");
    if (!s && (e = json_object_get(engines, q->engine)) != NULL) {
        if (!json_is_object(e))
            s = rf__json_fail(err, origin, "engines.%s must be an object", q->engine);
        else if (!(s = rf__field_whole(&d, e, at, "runs", true, 1, 1000000, &o->runs)) &&
                 !(s = error_of(&d, e, at, "ttft_median", &o->ttft_median)) &&
                 !(s = error_of(&d, e, at, "ttft_p90", &o->ttft_p90)) &&
                 !(s = error_of(&d, e, at, "tpot_median", &o->tpot_median)) &&
                 !(s = error_of(&d, e, at, "tpot_p90", &o->tpot_p90))) {
            if (o->ttft_p90 < o->ttft_median || o->tpot_p90 < o->tpot_median)
                s = rf__json_fail(err, origin, "%s: a p90 below its median", at);
            q->found = !s;
        }
    }
    json_decref(root);
    return s;
}

rf_status rf_gpu_serving_error_load(const char *path, const char *engine, rf_gpu_serving_error *out,
                                    bool *found, rf_err *err)
{
    memset(out, 0, sizeof *out);
    *found = false;
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return RF_OK;
    request q = {engine, out, false};
    rf_status s = rf__json_load(path, parse, &q, err);
    if (s || !q.found)
        memset(out, 0, sizeof *out);
    *found = !s && q.found;
    return s;
}
