/* buf.c - a growable byte buffer, optionally draining into a sink; an
 * allocation or sink failure is sticky. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_report.h"

void rf_buf_init(rf_buf *b) { memset(b, 0, sizeof *b); }

void rf_buf_free(rf_buf *b)
{
    free(b->data);
    rf_buf_init(b);
}

void rf_buf_set_sink(rf_buf *b, rf_buf_sink sink, void *user, size_t flush_at)
{
    b->sink = sink;
    b->sink_user = user;
    b->flush_at = flush_at;
}

/* Hand n bytes at s to the sink; a refusal fails the buffer. */
static void to_sink(rf_buf *b, const char *s, size_t n)
{
    if (!b->failed && n && b->sink(b->sink_user, s, n) != RF_OK)
        b->failed = true;
}

void rf_buf_flush(rf_buf *b)
{
    if (!b->sink)
        return;
    to_sink(b, b->data, b->len);
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* After a put: drain once the buffer holds flush_at bytes. */
static void drain_if_full(rf_buf *b)
{
    if (b->sink && b->len >= b->flush_at)
        rf_buf_flush(b);
}

static bool reserve(rf_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void rf_buf_put(rf_buf *b, const char *s, size_t n)
{
    if (b->sink && n >= b->flush_at) { /* a large piece: straight through */
        rf_buf_flush(b);
        to_sink(b, s, n);
        return;
    }
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    drain_if_full(b);
}

void rf_buf_puts(rf_buf *b, const char *s) { rf_buf_put(b, s, strlen(s)); }

void rf_buf_printf(rf_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        rf_buf_put(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    drain_if_full(b);
}
