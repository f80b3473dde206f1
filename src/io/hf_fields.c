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

/* Append one note to m->notes ("; " between them): whole, or, when the
 * rest of m->notes cannot hold it, cut at a word and ended with " ..."
 * (never mid-word); dropped when not even 16 characters of it fit. A note
 * m->notes already holds is not repeated (config.json and
 * hf_quant_config.json may say the same). */
void rf__hf_note_words(rf_model *m, const char *text)
{
    if (strstr(m->notes, text))
        return;
    size_t used = strlen(m->notes), sep = used ? 2 : 0, n = strlen(text);
    size_t cap = sizeof m->notes;
    if (used + sep + n >= cap) {
        if (used + sep + 5 + 16 > cap)
            return;
        n = cap - used - sep - 5; /* room for " ..." and the NUL */
        while (n > 0 && text[n] != ' ')
            n--;
        if (!n)
            return;
    }
    memcpy(m->notes + used, "; ", sep);
    memcpy(m->notes + used + sep, text, n);
    snprintf(m->notes + used + sep + n, cap - used - sep - n, "%s", text[n] ? " ..." : "");
}

/* rf__hf_note_words of a formatted note. */
void rf__hf_note(rf_model *m, const char *fmt, ...)
{
    char text[sizeof m->notes];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    rf__hf_note_words(m, text);
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
            return rf__hf_fail(r, RF_EINVAL, "%s is null: give an integer or leave the field out",
                               key);
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
        return rf__hf_fail(r, RF_EINVAL, "%s must be true or false, not %s", key,
                           rf__hf_json_kind(v));
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
