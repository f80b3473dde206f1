/* json_lite.c - the part of jansson's API that src/io uses (json_lite/jansson.h),
 * for the WebAssembly build, where no jansson exists.
 *
 * The reading follows jansson 2.14's lexer and parser step for step, so a
 * malformed file gets the same line, column and message from either
 * reader ("line 2 column 25: '}' expected near end of file"): the stream
 * counts lines from 1 and columns in characters from 0 (a newline resets
 * the column), decodes UTF-8 a character at a time and refuses a bad byte;
 * the lexer saves the text of the token it scans, and an error names it
 * ("near 'tru'") when it is at most 20 bytes long, or "near end of file"
 * when there is none (a bad UTF-8 byte gets no context);
 * the first error set is the one reported. Objects keep their keys in
 * insertion order (linear lookup: the files read here hold tens of keys).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_lite/jansson.h"

enum { STREAM_EOF = -1, STREAM_ERROR = -2 };
enum { TOKEN_INVALID = -1, TOKEN_EOF = 0, TOKEN_STRING = 256, TOKEN_INTEGER, TOKEN_REAL,
       TOKEN_TRUE, TOKEN_FALSE, TOKEN_NULL };
enum { MAX_DEPTH = 2048, NEAR_MAX = 20 };

typedef struct json_string_t {
    json_t json;
    char *value;
    size_t length;
} json_string_t;

typedef struct json_integer_t {
    json_t json;
    json_int_t value;
} json_integer_t;

typedef struct json_real_t {
    json_t json;
    double value;
} json_real_t;

typedef struct json_array_t {
    json_t json;
    json_t **items;
    size_t n, cap;
} json_array_t;

typedef struct json_object_t {
    json_t json;
    char **keys;
    json_t **values;
    size_t n, cap;
} json_object_t;

/* true, false and null are shared constants, never freed (as in jansson) */
static json_t the_true = {JSON_TRUE, (size_t)-1};
static json_t the_false = {JSON_FALSE, (size_t)-1};
static json_t the_null = {JSON_NULL, (size_t)-1};

/* ---- values ---- */

static void *value_new(size_t size, json_type type)
{
    json_t *j = calloc(1, size);
    if (j) {
        j->type = type;
        j->refcount = 1;
    }
    return j;
}

json_t *json_object(void) { return value_new(sizeof(json_object_t), JSON_OBJECT); }
json_t *json_array(void) { return value_new(sizeof(json_array_t), JSON_ARRAY); }

static json_t *string_own(char *value, size_t length)
{
    json_string_t *s = value_new(sizeof *s, JSON_STRING);
    if (!s) {
        free(value);
        return NULL;
    }
    s->value = value;
    s->length = length;
    return &s->json;
}

json_t *json_string(const char *value)
{
    if (!value)
        return NULL;
    size_t n = strlen(value);
    char *copy = malloc(n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, value, n + 1);
    return string_own(copy, n);
}

json_t *json_integer(json_int_t value)
{
    json_integer_t *i = value_new(sizeof *i, JSON_INTEGER);
    if (i)
        i->value = value;
    return i ? &i->json : NULL;
}

json_t *json_real(double value)
{
    if (!isfinite(value))
        return NULL;
    json_real_t *r = value_new(sizeof *r, JSON_REAL);
    if (r)
        r->value = value;
    return r ? &r->json : NULL;
}

void json_decref(json_t *json)
{
    if (!json || json->refcount == (size_t)-1 || --json->refcount)
        return;
    if (json->type == JSON_OBJECT) {
        json_object_t *o = (json_object_t *)json;
        for (size_t i = 0; i < o->n; i++) {
            free(o->keys[i]);
            json_decref(o->values[i]);
        }
        free(o->keys);
        free(o->values);
    } else if (json->type == JSON_ARRAY) {
        json_array_t *a = (json_array_t *)json;
        for (size_t i = 0; i < a->n; i++)
            json_decref(a->items[i]);
        free(a->items);
    } else if (json->type == JSON_STRING) {
        free(((json_string_t *)json)->value);
    }
    free(json);
}

json_int_t json_integer_value(const json_t *json)
{
    return json_is_integer(json) ? ((const json_integer_t *)json)->value : 0;
}

double json_number_value(const json_t *json)
{
    if (json_is_integer(json))
        return (double)((const json_integer_t *)json)->value;
    return json_is_real(json) ? ((const json_real_t *)json)->value : 0.0;
}

const char *json_string_value(const json_t *json)
{
    return json_is_string(json) ? ((const json_string_t *)json)->value : NULL;
}

size_t json_string_length(const json_t *json)
{
    return json_is_string(json) ? ((const json_string_t *)json)->length : 0;
}

size_t json_array_size(const json_t *array)
{
    return json_is_array(array) ? ((const json_array_t *)array)->n : 0;
}

json_t *json_array_get(const json_t *array, size_t index)
{
    if (!json_is_array(array) || index >= ((const json_array_t *)array)->n)
        return NULL;
    return ((const json_array_t *)array)->items[index];
}

/* Room for one more slot in a growing array of pointers: 0 or -1. */
static int grow(void **slots, size_t elem, size_t n, size_t *cap)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 8;
    void *p = realloc(*slots, c * elem);
    if (!p)
        return -1;
    *slots = p;
    *cap = c;
    return 0;
}

int json_array_append_new(json_t *array, json_t *value)
{
    json_array_t *a = (json_array_t *)array;
    if (!value)
        return -1;
    if (!json_is_array(array) || grow((void **)&a->items, sizeof *a->items, a->n, &a->cap)) {
        json_decref(value);
        return -1;
    }
    a->items[a->n++] = value;
    return 0;
}

static ptrdiff_t key_index(const json_object_t *o, const char *key, size_t len)
{
    for (size_t i = 0; i < o->n; i++)
        if (strlen(o->keys[i]) == len && !memcmp(o->keys[i], key, len))
            return (ptrdiff_t)i;
    return -1;
}

json_t *json_object_get(const json_t *object, const char *key)
{
    if (!json_is_object(object) || !key)
        return NULL;
    const json_object_t *o = (const json_object_t *)object;
    ptrdiff_t i = key_index(o, key, strlen(key));
    return i < 0 ? NULL : o->values[i];
}

/* Set key (len bytes) to value, taking value's reference; a key already
 * there has its value replaced. 0 or -1. */
static int object_setn(json_t *object, const char *key, size_t len, json_t *value)
{
    json_object_t *o = (json_object_t *)object;
    if (!value)
        return -1;
    if (!json_is_object(object) || !key)
        goto fail;
    ptrdiff_t at = key_index(o, key, len);
    if (at >= 0) {
        json_decref(o->values[at]);
        o->values[at] = value;
        return 0;
    }
    size_t kcap = o->cap;
    if (grow((void **)&o->keys, sizeof *o->keys, o->n, &kcap) ||
        grow((void **)&o->values, sizeof *o->values, o->n, &o->cap))
        goto fail;
    char *k = malloc(len + 1);
    if (!k)
        goto fail;
    memcpy(k, key, len);
    k[len] = '\0';
    o->keys[o->n] = k;
    o->values[o->n++] = value;
    return 0;
fail:
    json_decref(value);
    return -1;
}

int json_object_set_new(json_t *object, const char *key, json_t *value)
{
    return object_setn(object, key, key ? strlen(key) : 0, value);
}

const char *json_lite_object_key_at(const json_t *object, size_t i)
{
    if (!json_is_object(object) || i >= ((const json_object_t *)object)->n)
        return NULL;
    return ((const json_object_t *)object)->keys[i];
}

json_t *json_lite_object_value_at(const json_t *object, size_t i)
{
    if (!json_is_object(object) || i >= ((const json_object_t *)object)->n)
        return NULL;
    return ((const json_object_t *)object)->values[i];
}

/* ---- the stream: bytes to characters, with line and column ---- */

typedef struct stream {
    const unsigned char *data;
    size_t len, pos;        /* bytes read from data                      */
    unsigned char buf[5];   /* the current character's bytes             */
    size_t buf_n, buf_pos;  /* its length, and how many were handed out  */
    int state;              /* 0, STREAM_EOF or STREAM_ERROR             */
    int line, column, last_column;
    size_t position;        /* bytes handed out                          */
} stream;

/* A growing text: the token the lexer is scanning. */
typedef struct text {
    char *s;
    size_t n, cap;
    int failed;
} text;

typedef struct lexer {
    stream st;
    text saved;
    int token;
    char *str;        /* TOKEN_STRING's decoded value, str_len bytes */
    size_t str_len;
    json_int_t integer;
    double real;
    int depth;
    json_error_t *error;
} lexer;

/* The number of bytes of a UTF-8 sequence that starts with u, 0 if none can. */
static int utf8_first(unsigned char u)
{
    if (u < 0x80)
        return 1;
    if (u < 0xC2)
        return 0; /* a continuation byte, or an overlong 2-byte start */
    if (u < 0xE0)
        return 2;
    if (u < 0xF0)
        return 3;
    return u <= 0xF4 ? 4 : 0;
}

/* A whole sequence of n bytes: continuations, no overlong form, no
 * surrogate, at most U+10FFFF. */
static int utf8_full(const unsigned char *b, int n)
{
    int32_t v = n == 2 ? b[0] & 0x1F : n == 3 ? b[0] & 0x0F : b[0] & 0x07;
    for (int i = 1; i < n; i++) {
        if ((b[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (b[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    return !((n == 3 && v < 0x800) || (n == 4 && v < 0x10000));
}

static void error_set(lexer *lx, const char *fmt, ...);

static int stream_get(lexer *lx)
{
    stream *s = &lx->st;
    if (s->state)
        return s->state;
    if (s->buf_pos == s->buf_n) {
        if (s->pos >= s->len) {
            s->state = STREAM_EOF;
            return STREAM_EOF;
        }
        unsigned char c = s->data[s->pos++];
        s->buf[0] = c;
        s->buf_n = 1;
        s->buf_pos = 0;
        if (c >= 0x80) {
            int count = utf8_first(c);
            for (int i = 1; i < count; i++) /* past the end reads as 0xFF, as jansson's EOF */
                s->buf[i] = s->pos < s->len ? s->data[s->pos++] : 0xFF;
            if (!count || !utf8_full(s->buf, count)) {
                s->state = STREAM_ERROR;
                error_set(lx, "unable to decode byte 0x%x", c);
                return STREAM_ERROR;
            }
            s->buf_n = (size_t)count;
        }
    }
    int c = s->buf[s->buf_pos++];
    s->position++;
    if (c == '\n') {
        s->line++;
        s->last_column = s->column;
        s->column = 0;
    } else if (utf8_first((unsigned char)c)) {
        s->column++;
    }
    return c;
}

static void stream_unget(stream *s, int c)
{
    if (c < 0)
        return;
    s->position--;
    if (c == '\n') {
        s->line--;
        s->column = s->last_column;
    } else if (utf8_first((unsigned char)c)) {
        s->column--;
    }
    s->buf_pos--;
}

/* ---- the lexer ---- */

static void text_add(text *t, char c)
{
    if (t->n + 2 > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char *p = realloc(t->s, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->s = p;
        t->cap = cap;
    }
    t->s[t->n++] = c;
    t->s[t->n] = '\0';
}

static void error_set(lexer *lx, const char *fmt, ...)
{
    json_error_t *e = lx->error;
    if (!e || e->text[0]) /* the first error stands */
        return;
    char msg[JSON_ERROR_TEXT_LENGTH - 24]; /* room for the context */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    e->line = lx->st.line;
    e->column = lx->st.column;
    e->position = (int)lx->st.position;
    if (lx->saved.n && lx->saved.s[0] && lx->saved.n <= NEAR_MAX)
        snprintf(e->text, sizeof e->text, "%s near '%s'", msg, lx->saved.s);
    else if (!(lx->saved.n && lx->saved.s[0]) && lx->st.state != STREAM_ERROR)
        snprintf(e->text, sizeof e->text, "%s near end of file", msg); /* or a NUL */
    else
        snprintf(e->text, sizeof e->text, "%s", msg);
}

static int lex_get(lexer *lx) { return stream_get(lx); }

static int lex_get_save(lexer *lx)
{
    int c = stream_get(lx);
    if (c >= 0)
        text_add(&lx->saved, (char)c);
    return c;
}

static void lex_unget_unsave(lexer *lx, int c)
{
    if (c >= 0) {
        stream_unget(&lx->st, c);
        lx->saved.s[--lx->saved.n] = '\0';
    }
}

/* The rest of the current character's bytes after its first (a token
 * that starts with a byte JSON does not know, named whole). */
static void lex_save_rest(lexer *lx)
{
    stream *s = &lx->st;
    while (s->buf_pos < s->buf_n) {
        text_add(&lx->saved, (char)s->buf[s->buf_pos++]);
        s->position++;
    }
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int32_t hex4(const char *p)
{
    int32_t v = 0;
    for (int i = 1; i <= 4; i++) {
        char c = p[i];
        v <<= 4;
        if (is_digit(c))
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

static size_t utf8_encode(int32_t v, char *out)
{
    if (v < 0x80) {
        out[0] = (char)v;
        return 1;
    }
    if (v < 0x800) {
        out[0] = (char)(0xC0 | (v >> 6));
        out[1] = (char)(0x80 | (v & 0x3F));
        return 2;
    }
    if (v < 0x10000) {
        out[0] = (char)(0xE0 | (v >> 12));
        out[1] = (char)(0x80 | ((v >> 6) & 0x3F));
        out[2] = (char)(0x80 | (v & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (v >> 18));
    out[1] = (char)(0x80 | ((v >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((v >> 6) & 0x3F));
    out[3] = (char)(0x80 | (v & 0x3F));
    return 4;
}

/* The saved text of a scanned string ("..." with its escapes) decoded
 * into lx->str; TOKEN_STRING, or TOKEN_INVALID with the error set. */
static void decode_string(lexer *lx)
{
    char *t = malloc(lx->saved.n + 1), *out = t;
    const char *p = lx->saved.s + 1;
    if (!t)
        return;
    while (*p != '"') {
        if (*p != '\\') {
            *out++ = *p++;
            continue;
        }
        p++;
        if (*p == 'u') {
            int32_t v = hex4(p);
            p += 5;
            if (v >= 0xD800 && v <= 0xDBFF) {
                if (p[0] != '\\' || p[1] != 'u') {
                    error_set(lx, "invalid Unicode '\\u%04X'", v);
                    goto fail;
                }
                int32_t v2 = hex4(++p);
                p += 5;
                if (v2 < 0xDC00 || v2 > 0xDFFF) {
                    error_set(lx, "invalid Unicode '\\u%04X\\u%04X'", v, v2);
                    goto fail;
                }
                v = ((v - 0xD800) << 10) + (v2 - 0xDC00) + 0x10000;
            } else if (v >= 0xDC00 && v <= 0xDFFF) {
                error_set(lx, "invalid Unicode '\\u%04X'", v);
                goto fail;
            }
            out += utf8_encode(v, out);
            continue;
        }
        switch (*p) {
        case 'b': *out = '\b'; break;
        case 'f': *out = '\f'; break;
        case 'n': *out = '\n'; break;
        case 'r': *out = '\r'; break;
        case 't': *out = '\t'; break;
        default: *out = *p; break; /* '"', '\\', '/' */
        }
        out++;
        p++;
    }
    *out = '\0';
    lx->str = t;
    lx->str_len = (size_t)(out - t);
    lx->token = TOKEN_STRING;
    return;
fail:
    free(t);
}

static void scan_string(lexer *lx)
{
    lx->token = TOKEN_INVALID;
    int c = lex_get_save(lx);
    while (c != '"') {
        if (c == STREAM_ERROR)
            return;
        if (c == STREAM_EOF) {
            error_set(lx, "premature end of input");
            return;
        }
        if (c <= 0x1F) {
            lex_unget_unsave(lx, c);
            if (c == '\n')
                error_set(lx, "unexpected newline");
            else
                error_set(lx, "control character 0x%x", c);
            return;
        }
        if (c == '\\') {
            c = lex_get_save(lx);
            if (c == 'u') {
                c = lex_get_save(lx);
                for (int i = 0; i < 4; i++) {
                    if (!((c >= 0 && is_digit(c)) || (c >= 'a' && c <= 'f') ||
                          (c >= 'A' && c <= 'F'))) {
                        error_set(lx, "invalid escape");
                        return;
                    }
                    c = lex_get_save(lx);
                }
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                       c == 'r' || c == 't') {
                c = lex_get_save(lx);
            } else {
                error_set(lx, "invalid escape");
                return;
            }
        } else {
            c = lex_get_save(lx);
        }
    }
    decode_string(lx);
}

/* 0 with TOKEN_INTEGER or TOKEN_REAL, -1 with TOKEN_INVALID. */
static int scan_number(lexer *lx, int c)
{
    lx->token = TOKEN_INVALID;
    if (c == '-')
        c = lex_get_save(lx);
    if (c == '0') {
        c = lex_get_save(lx);
        if (is_digit(c)) {
            lex_unget_unsave(lx, c);
            return -1;
        }
    } else if (is_digit(c)) {
        do
            c = lex_get_save(lx);
        while (is_digit(c));
    } else {
        lex_unget_unsave(lx, c);
        return -1;
    }
    if (c != '.' && c != 'E' && c != 'e') {
        lex_unget_unsave(lx, c);
        errno = 0;
        long long v = strtoll(lx->saved.s, NULL, 10);
        if (errno == ERANGE) {
            error_set(lx, v < 0 ? "too big negative integer" : "too big integer");
            return -1;
        }
        lx->token = TOKEN_INTEGER;
        lx->integer = v;
        return 0;
    }
    if (c == '.') {
        c = lex_get(lx);
        if (!is_digit(c)) {
            stream_unget(&lx->st, c);
            return -1;
        }
        text_add(&lx->saved, (char)c);
        do
            c = lex_get_save(lx);
        while (is_digit(c));
    }
    if (c == 'E' || c == 'e') {
        c = lex_get_save(lx);
        if (c == '+' || c == '-')
            c = lex_get_save(lx);
        if (!is_digit(c)) {
            lex_unget_unsave(lx, c);
            return -1;
        }
        do
            c = lex_get_save(lx);
        while (is_digit(c));
    }
    lex_unget_unsave(lx, c);
    errno = 0;
    double v = strtod(lx->saved.s, NULL);
    if ((v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE) {
        error_set(lx, "real number overflow");
        return -1;
    }
    lx->token = TOKEN_REAL;
    lx->real = v;
    return 0;
}

static int lex_scan(lexer *lx)
{
    lx->saved.n = 0;
    if (lx->saved.s)
        lx->saved.s[0] = '\0';
    free(lx->str);
    lx->str = NULL;
    int c;
    do
        c = lex_get(lx);
    while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
    if (c == STREAM_EOF)
        return lx->token = TOKEN_EOF;
    if (c == STREAM_ERROR)
        return lx->token = TOKEN_INVALID;
    text_add(&lx->saved, (char)c);
    if (c && strchr("{}[]:,", c)) {
        lx->token = c;
    } else if (c == '"') {
        scan_string(lx);
    } else if (is_digit(c) || c == '-') {
        scan_number(lx, c);
    } else if (is_alpha(c)) { /* the whole word, for a clearer message */
        do
            c = lex_get_save(lx);
        while (is_alpha(c));
        lex_unget_unsave(lx, c);
        const char *w = lx->saved.s;
        lx->token = !strcmp(w, "true")    ? TOKEN_TRUE
                    : !strcmp(w, "false") ? TOKEN_FALSE
                    : !strcmp(w, "null")  ? TOKEN_NULL
                                          : TOKEN_INVALID;
    } else {
        lex_save_rest(lx);
        lx->token = TOKEN_INVALID;
    }
    return lx->token;
}

/* ---- the parser ---- */

static json_t *parse_value(lexer *lx, size_t flags);

static json_t *parse_object(lexer *lx, size_t flags)
{
    json_t *object = json_object();
    if (!object)
        return NULL;
    lex_scan(lx);
    if (lx->token == '}')
        return object;
    for (;;) {
        if (lx->token != TOKEN_STRING) {
            error_set(lx, "string or '}' expected");
            goto fail;
        }
        char *key = lx->str;
        size_t len = lx->str_len;
        lx->str = NULL;
        if (memchr(key, '\0', len)) {
            free(key);
            error_set(lx, "NUL byte in object key not supported");
            goto fail;
        }
        if ((flags & JSON_REJECT_DUPLICATES) && key_index((json_object_t *)object, key, len) >= 0) {
            free(key);
            error_set(lx, "duplicate object key");
            goto fail;
        }
        lex_scan(lx);
        if (lx->token != ':') {
            free(key);
            error_set(lx, "':' expected");
            goto fail;
        }
        lex_scan(lx);
        json_t *value = parse_value(lx, flags);
        if (!value || object_setn(object, key, len, value)) {
            free(key);
            goto fail;
        }
        free(key);
        lex_scan(lx);
        if (lx->token != ',')
            break;
        lex_scan(lx);
    }
    if (lx->token != '}') {
        error_set(lx, "'}' expected");
        goto fail;
    }
    return object;
fail:
    json_decref(object);
    return NULL;
}

static json_t *parse_array(lexer *lx, size_t flags)
{
    json_t *array = json_array();
    if (!array)
        return NULL;
    lex_scan(lx);
    if (lx->token == ']')
        return array;
    while (lx->token != TOKEN_EOF) {
        json_t *elem = parse_value(lx, flags);
        if (!elem || json_array_append_new(array, elem))
            goto fail;
        lex_scan(lx);
        if (lx->token != ',')
            break;
        lex_scan(lx);
    }
    if (lx->token != ']') {
        error_set(lx, "']' expected");
        goto fail;
    }
    return array;
fail:
    json_decref(array);
    return NULL;
}

static json_t *parse_value(lexer *lx, size_t flags)
{
    json_t *json = NULL;
    if (++lx->depth > MAX_DEPTH) {
        error_set(lx, "maximum parsing depth reached");
        return NULL;
    }
    switch (lx->token) {
    case TOKEN_STRING:
        if (memchr(lx->str, '\0', lx->str_len)) {
            error_set(lx, "\\u0000 is not allowed without JSON_ALLOW_NUL");
            return NULL;
        }
        json = string_own(lx->str, lx->str_len);
        lx->str = NULL;
        break;
    case TOKEN_INTEGER: json = json_integer(lx->integer); break;
    case TOKEN_REAL: json = json_real(lx->real); break;
    case TOKEN_TRUE: json = &the_true; break;
    case TOKEN_FALSE: json = &the_false; break;
    case TOKEN_NULL: json = &the_null; break;
    case '{': json = parse_object(lx, flags); break;
    case '[': json = parse_array(lx, flags); break;
    case TOKEN_INVALID: error_set(lx, "invalid token"); return NULL;
    default: error_set(lx, "unexpected token"); return NULL;
    }
    if (json)
        lx->depth--;
    return json;
}

json_t *json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error)
{
    json_error_t scratch;
    if (!error)
        error = &scratch;
    memset(error, 0, sizeof *error);
    error->line = error->column = -1;
    snprintf(error->source, sizeof error->source, "<buffer>");
    if (!buffer) {
        snprintf(error->text, sizeof error->text, "wrong arguments");
        return NULL;
    }
    lexer lx = {.st = {.data = (const unsigned char *)buffer, .len = buflen, .line = 1},
                .error = error};
    json_t *result = NULL;
    lex_scan(&lx);
    if (lx.token != '[' && lx.token != '{') {
        error_set(&lx, "'[' or '{' expected");
        goto out;
    }
    result = parse_value(&lx, flags);
    if (result) {
        lex_scan(&lx);
        if (lx.token != TOKEN_EOF) {
            error_set(&lx, "end of file expected");
            json_decref(result);
            result = NULL;
        }
    }
out:
    if (lx.saved.failed && !result && !error->text[0])
        snprintf(error->text, sizeof error->text, "out of memory");
    free(lx.str);
    free(lx.saved.s);
    return result;
}

/* ---- json_dumps ---- */

static void dump_indent(text *t, size_t flags, int depth, int space)
{
    unsigned width = (unsigned)(flags & 0x1F);
    if (width) {
        text_add(t, '\n');
        for (unsigned i = 0; i < width * (unsigned)depth; i++)
            text_add(t, ' ');
    } else if (space) {
        text_add(t, ' ');
    }
}

static void dump_puts(text *t, const char *s)
{
    while (*s)
        text_add(t, *s++);
}

static void dump_string(text *t, const char *s, size_t len)
{
    text_add(t, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        switch (c) {
        case '"': dump_puts(t, "\\\""); break;
        case '\\': dump_puts(t, "\\\\"); break;
        case '\b': dump_puts(t, "\\b"); break;
        case '\f': dump_puts(t, "\\f"); break;
        case '\n': dump_puts(t, "\\n"); break;
        case '\r': dump_puts(t, "\\r"); break;
        case '\t': dump_puts(t, "\\t"); break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04X", c);
                dump_puts(t, esc);
            } else {
                text_add(t, (char)c);
            }
        }
    }
    text_add(t, '"');
}

/* %.{precision}g with ".0" where it would read back as an integer, and
 * the exponent without '+' or leading zeros ("1e20", "1e-5"). */
static void dump_real(text *t, double v, int precision)
{
    char b[40];
    snprintf(b, sizeof b, "%.*g", precision ? precision : 17, v);
    if (!strchr(b, '.') && !strchr(b, 'e'))
        strcat(b, ".0");
    char *e = strchr(b, 'e');
    if (e) {
        char *start = e + 1, *end = e + 2;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        memmove(start, end, strlen(end) + 1);
    }
    dump_puts(t, b);
}

static void dump_value(text *t, const json_t *j, size_t flags, int depth)
{
    char b[32];
    switch (j->type) {
    case JSON_NULL: dump_puts(t, "null"); break;
    case JSON_TRUE: dump_puts(t, "true"); break;
    case JSON_FALSE: dump_puts(t, "false"); break;
    case JSON_INTEGER:
        snprintf(b, sizeof b, "%lld", json_integer_value(j));
        dump_puts(t, b);
        break;
    case JSON_REAL: dump_real(t, json_number_value(j), (int)((flags >> 11) & 0x1F)); break;
    case JSON_STRING: dump_string(t, json_string_value(j), json_string_length(j)); break;
    case JSON_ARRAY: {
        size_t n = json_array_size(j);
        if (!n) {
            dump_puts(t, "[]");
            break;
        }
        text_add(t, '[');
        dump_indent(t, flags, depth + 1, 0);
        for (size_t i = 0; i < n; i++) {
            dump_value(t, json_array_get(j, i), flags, depth + 1);
            if (i + 1 < n) {
                text_add(t, ',');
                dump_indent(t, flags, depth + 1, 1);
            } else {
                dump_indent(t, flags, depth, 0);
            }
        }
        text_add(t, ']');
        break;
    }
    case JSON_OBJECT: {
        const json_object_t *o = (const json_object_t *)j;
        if (!o->n) {
            dump_puts(t, "{}");
            break;
        }
        text_add(t, '{');
        dump_indent(t, flags, depth + 1, 0);
        for (size_t i = 0; i < o->n; i++) {
            dump_string(t, o->keys[i], strlen(o->keys[i]));
            dump_puts(t, ": ");
            dump_value(t, o->values[i], flags, depth + 1);
            if (i + 1 < o->n) {
                text_add(t, ',');
                dump_indent(t, flags, depth + 1, 1);
            } else {
                dump_indent(t, flags, depth, 0);
            }
        }
        text_add(t, '}');
        break;
    }
    }
}

char *json_dumps(const json_t *json, size_t flags)
{
    if (!json_is_object(json) && !json_is_array(json))
        return NULL;
    text t = {0};
    dump_value(&t, json, flags, 0);
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    return t.s;
}
