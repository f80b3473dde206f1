/* hf_fields.c - the config.json reader's field accessors (hf_internal.h):
 * typed reads with the family's default, null rules and one-line errors
 * that name the file and the key. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_op.h"

#include "hf_internal.h"

/* "origin: message", status s. */
rf_status rf__hf_fail(reader *r, rf_status s, const char *fmt, ...)
{
    char msg[RF_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rf_err_set(r->err, s, "%s: %s", r->origin, msg);
}

/* Append one assumption to m->notes ("; " between them). */
void rf__hf_note(rf_model *m, const char *fmt, ...)
{
    size_t used = strlen(m->notes), cap = sizeof m->notes;
    if (used + 3 >= cap)
        return;
    if (used) {
        memcpy(m->notes + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->notes + used, cap - used, fmt, ap);
    va_end(ap);
}

const char *rf__hf_json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* The field in the decoder's object, or (for fields a multimodal wrapper
 * keeps at its root: dtype, quantization, tying) in the root. */
const json_t *rf__hf_field(const reader *r, const char *key, bool root_too)
{
    const json_t *v = json_object_get(r->cfg, key);
    if (!v && root_too && r->top != r->cfg)
        v = json_object_get(r->top, key);
    return v;
}

/* "key value" added to the defaults applied, for one note; how is the
 * rule when the value is derived ("" for the family's figure). */
void rf__hf_took_default(reader *r, const char *key, int64_t value, const char *how)
{
    size_t used = strlen(r->defaulted), cap = sizeof r->defaulted;
    if (used < cap)
        snprintf(r->defaulted + used, cap - used, "%s%s %lld%s", used ? ", " : "", key,
                 (long long)value, how);
}

/* An integer field >= lo. Absent takes dflt (named, unless QUIET or 0:
 * "none of that part") or is refused when REQUIRED; null is refused, or
 * reads as 0 with NULL_IS_ZERO.
 * *given tells whether the config had a value (may be NULL). */
rf_status rf__hf_int_at(reader *r, const json_t *v, const char *key, int how, int64_t dflt,
                        int64_t lo, int64_t *out, bool *given)
{
    if (given)
        *given = false;
    if (v && json_is_null(v)) {
        if (!(how & NULL_IS_ZERO))
            return rf__hf_fail(r, RF_EINVAL, "%s is null: give an integer or leave the field out", key);
        *out = 0;
        if (given)
            *given = true;
        return RF_OK;
    }
    if (!v) {
        if (how & REQUIRED)
            return rf__hf_fail(r, RF_EINVAL, "%s is missing (required)", key);
        *out = dflt;
        if (!(how & QUIET) && dflt)
            rf__hf_took_default(r, key, dflt, "");
        return RF_OK;
    }
    if (!json_is_integer(v))
        return rf__hf_fail(r, RF_EINVAL, "%s must be an integer, not %s", key, rf__hf_json_kind(v));
    json_int_t x = json_integer_value(v);
    if (x < lo)
        return rf__hf_fail(r, RF_EINVAL, "%s (%lld) must be at least %lld", key, (long long)x,
                    (long long)lo);
    if (x > RF_DIM_MAX)
        return rf__hf_fail(r, RF_ERANGE, "%s (%lld) is beyond the accepted %lld", key, (long long)x,
                    (long long)RF_DIM_MAX);
    *out = (int64_t)x;
    if (given)
        *given = true;
    return RF_OK;
}

rf_status rf__hf_int_field(reader *r, const char *key, int how, int64_t dflt, int64_t lo,
                           int64_t *out, bool *given)
{
    return rf__hf_int_at(r, rf__hf_field(r, key, false), key, how, dflt, lo, out, given);
}

rf_status rf__hf_bool_field(reader *r, const char *key, bool root_too, bool dflt, bool *out,
                            bool *given)
{
    const json_t *v = rf__hf_field(r, key, root_too);
    if (given)
        *given = v && !json_is_null(v);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return RF_OK;
    }
    if (!json_is_boolean(v))
        return rf__hf_fail(r, RF_EINVAL, "%s must be true or false, not %s", key, rf__hf_json_kind(v));
    *out = json_is_true(v);
    return RF_OK;
}

/* A string field, or NULL when absent or null. */
rf_status rf__hf_str_field(reader *r, const json_t *obj, const char *key, const char **out)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return RF_OK;
    if (!json_is_string(v))
        return rf__hf_fail(r, RF_EINVAL, "%s must be a string, not %s", key, rf__hf_json_kind(v));
    *out = json_string_value(v);
    return RF_OK;
}

