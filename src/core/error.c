/* error.c - error values. vsnprintf formats the message; nothing is printed. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_error.h"

/* A message is one line even when it quotes input that is not (a newline in
 * a typed value, or in the JSON text a parser error quotes): every control
 * character becomes '?'. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

rf_status rf_err_set(rf_err *err, rf_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        one_line(err->msg);
        err->status = status;
    }
    return status;
}

rf_status rf_err_prefix(rf_err *err, rf_status status, const char *fmt, ...)
{
    if (!err)
        return status;
    char head[RF_ERR_MSG_MAX / 2], old[RF_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* the message may be cut at RF_ERR_MSG_MAX; the head of it names the input */
    size_t n = strlen(head);
    memcpy(err->msg, head, n);
    err->msg[n] = ':';
    err->msg[n + 1] = ' ';
    size_t room = sizeof err->msg - n - 3;
    size_t m = strlen(old);
    memcpy(err->msg + n + 2, old, m < room ? m : room);
    err->msg[n + 2 + (m < room ? m : room)] = '\0';
    one_line(err->msg);
    return status;
}

void rf_err_clear(rf_err *err)
{
    if (err) {
        err->status = RF_OK;
        err->msg[0] = '\0';
    }
}

const char *rf_status_name(rf_status status)
{
    static const char *const names[] = {
        [RF_OK] = "ok",
        [RF_EINVAL] = "bad input",
        [RF_ERANGE] = "out of range",
        [RF_ENOMEM] = "out of memory",
        [RF_EIO] = "i/o error",
        [RF_EUNAVAIL] = "unavailable",
        [RF_EINTERNAL] = "internal check failed",
    };
    _Static_assert(sizeof names / sizeof names[0] == RF_EINTERNAL + 1, "status names");
    return (unsigned)status <= RF_EINTERNAL ? names[status] : "unknown";
}
