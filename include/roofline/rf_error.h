/* rf_error.h - status codes and error values.
 *
 * Every fallible library function returns an rf_status and, on failure,
 * fills an rf_err whose message names the bad input, for example
 *   "num_key_value_heads (6) must divide num_attention_heads (32)".
 * The library never prints and never exits; the caller decides what to do.
 * A NULL rf_err is accepted everywhere and simply receives nothing.
 */
#ifndef RF_ERROR_H
#define RF_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rf_status {
    RF_OK = 0,
    RF_EINVAL,   /* bad input: a value, a name, a field, a shape      */
    RF_ERANGE,   /* a value or a product beyond what is accepted      */
    RF_ENOMEM,   /* allocation failed, or the request does not fit    */
    RF_EIO,      /* a file could not be read or written               */
    RF_EUNAVAIL, /* an optional backend (CBLAS, CUDA) is not built or no device */
    RF_EINTERNAL /* a check of our own failed (a checksum, a reference) */
} rf_status;

#define RF_ERR_MSG_MAX 512

typedef struct rf_err {
    rf_status status;
    char msg[RF_ERR_MSG_MAX]; /* one line: control characters it quotes
                                 from the input are shown as '?'         */
} rf_err;

/* Set err (if not NULL) to status and a printf-style message; returns status
 * so a caller can write `return rf_err_set(err, RF_EINVAL, "...")`. */
rf_status rf_err_set(rf_err *err, rf_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefix an existing message: "context: old message". Returns status, the
 * one the failing call returned (err may be NULL, so it cannot be read
 * back from there). */
rf_status rf_err_prefix(rf_err *err, rf_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Clear err to RF_OK and an empty message. */
void rf_err_clear(rf_err *err);

/* Short name of a status ("bad input", "out of range", ...). */
const char *rf_status_name(rf_status status);

#ifdef __cplusplus
}
#endif
#endif
