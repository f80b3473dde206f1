/* jansson.h (json_lite) - the part of jansson's API that src/io uses,
 * implemented by src/io/json_lite.c for the builds where jansson is absent
 * (the WebAssembly explorer: Debian has no jansson for emscripten).
 *
 * Only what the readers and the profile writer call is here, with
 * jansson 2.14's meaning: the same values from the same text, the same
 * error line, column and message for the same malformed text, insertion
 * order for object keys, and the same json_dumps bytes for JSON_INDENT and
 * JSON_REAL_PRECISION. The native build links the real jansson; its io
 * tests are built against this file too (test_*_lite) so the two readers
 * cannot drift apart.
 */
#ifndef RF_JSON_LITE_JANSSON_H
#define RF_JSON_LITE_JANSSON_H

#include <stddef.h>

typedef enum json_type {
    JSON_OBJECT,
    JSON_ARRAY,
    JSON_STRING,
    JSON_INTEGER,
    JSON_REAL,
    JSON_TRUE,
    JSON_FALSE,
    JSON_NULL
} json_type;

typedef long long json_int_t;

/* A value: opaque, reference counted (json_decref frees at zero). */
typedef struct json_t {
    json_type type;
    size_t refcount;
} json_t;

#define JSON_ERROR_TEXT_LENGTH 160
#define JSON_ERROR_SOURCE_LENGTH 80

/* Where and why a parse failed: 1-based line, the column in characters
 * (0 right after a newline), the byte position, jansson's message. */
typedef struct json_error_t {
    int line;
    int column;
    int position;
    char source[JSON_ERROR_SOURCE_LENGTH];
    char text[JSON_ERROR_TEXT_LENGTH];
} json_error_t;

/* json_loadb flags */
#define JSON_REJECT_DUPLICATES 0x1
/* json_dumps flags */
#define JSON_INDENT(n) ((n) & 0x1F)
#define JSON_REAL_PRECISION(n) (((n) & 0x1F) << 11)

#define json_typeof(json) ((json)->type)
#define json_is_object(json) ((json) && json_typeof(json) == JSON_OBJECT)
#define json_is_array(json) ((json) && json_typeof(json) == JSON_ARRAY)
#define json_is_string(json) ((json) && json_typeof(json) == JSON_STRING)
#define json_is_integer(json) ((json) && json_typeof(json) == JSON_INTEGER)
#define json_is_real(json) ((json) && json_typeof(json) == JSON_REAL)
#define json_is_number(json) (json_is_integer(json) || json_is_real(json))
#define json_is_true(json) ((json) && json_typeof(json) == JSON_TRUE)
#define json_is_false(json) ((json) && json_typeof(json) == JSON_FALSE)
#define json_is_boolean(json) (json_is_true(json) || json_is_false(json))
#define json_is_null(json) ((json) && json_typeof(json) == JSON_NULL)

/* Parse buflen bytes (no NUL needed) into a new value, or NULL with *error
 * filled. Only an object or an array may stand at the top. */
json_t *json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error);

/* Drop one reference; the last frees the value and its members. NULL is fine. */
void json_decref(json_t *json);

/* Constructors: a new value with one reference, NULL when out of memory
 * (json_real also for a value that is not finite, json_string for NULL). */
json_t *json_object(void);
json_t *json_array(void);
json_t *json_string(const char *value);
json_t *json_integer(json_int_t value);
json_t *json_real(double value);

/* Accessors: 0, 0.0 or NULL when json is not of the kind. */
json_int_t json_integer_value(const json_t *json);
double json_number_value(const json_t *json); /* an integer's or a real's value */
const char *json_string_value(const json_t *json);
size_t json_string_length(const json_t *json);
size_t json_array_size(const json_t *array);
json_t *json_array_get(const json_t *array, size_t index); /* borrowed */
json_t *json_object_get(const json_t *object, const char *key); /* borrowed */

/* Setters that take over value's reference (freed on failure): 0 or -1. */
int json_object_set_new(json_t *object, const char *key, json_t *value);
int json_array_append_new(json_t *array, json_t *value);

/* The text of json (an object or an array), malloc'd, NUL-terminated; with
 * JSON_INDENT(n) one member a line indented n spaces a level and ": "
 * after a key, reals as %.{p}g (JSON_REAL_PRECISION(p), 17 when 0) with
 * ".0" added to one that reads as an integer. NULL when out of memory. */
char *json_dumps(const json_t *json, size_t flags);

/* The i-th key and value of an object in insertion order, NULL past the end
 * (what json_object_foreach walks). */
const char *json_lite_object_key_at(const json_t *object, size_t i);
json_t *json_lite_object_value_at(const json_t *object, size_t i);

#define JSON_LITE_CAT2(a, b) a##b
#define JSON_LITE_CAT(a, b) JSON_LITE_CAT2(a, b)
/* for each key (const char *) and value (json_t *) of object, in order */
#define json_object_foreach(object, key, value)                                                    \
    for (size_t JSON_LITE_CAT(json_lite_i_, __LINE__) = 0;                                         \
         ((key) = json_lite_object_key_at((object), JSON_LITE_CAT(json_lite_i_, __LINE__))) &&     \
         ((value) = json_lite_object_value_at((object), JSON_LITE_CAT(json_lite_i_, __LINE__)));   \
         JSON_LITE_CAT(json_lite_i_, __LINE__)++)

#endif
