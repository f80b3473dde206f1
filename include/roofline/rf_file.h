/* rf_file.h - whole-file reads and atomic writes.
 *
 * rf_file_write_atomic writes to a temporary file in the destination's
 * folder and renames it into place, so a reader never sees half a file and
 * a failed write leaves the old file (or nothing) behind. It refuses to
 * write over any path listed in `inputs` (the tool never overwrites one of
 * its own inputs). An existing character device or FIFO (/dev/null, a pipe)
 * is written in place, never renamed over; any other non-regular path is
 * refused. A file replaced keeps its mode (a 0600 file stays 0600); a new
 * one gets 0666 less the umask. A symbolic link is followed: its target is
 * replaced and the link stays. On Linux the file is written unnamed
 * (O_TMPFILE) and named by linkat when committed, so a process that dies
 * mid-write, even by SIGKILL, leaves nothing behind; elsewhere (or on a
 * file system without O_TMPFILE) a named temporary "path.tmp.PID.N" is
 * used, which rf_file_remove_temps removes. The library installs no signal
 * handler: a binary that wants its temporaries gone on SIGINT or SIGTERM
 * calls rf_file_remove_temps from its handler (cli/main.c does). Threads
 * may read and write at once, each its own writer: nothing here changes
 * process-wide state (a new file's mode is given by the kernel at its
 * creation, not by a call of umask()).
 */
#ifndef RF_FILE_H
#define RF_FILE_H

#include <stddef.h>

#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest JSON input read (a config.json, a profile, a measured file: real
 * ones are a few KiB). */
#define RF_FILE_MAX_BYTES ((size_t)16 << 20)

/* Read a regular file to its end (at most max_bytes, whatever its size
 * claims: a /proc file says 0) into a NUL-terminated malloc'd buffer; the
 * caller frees *data. A FIFO, a device or a socket is refused without
 * blocking or reading. Errors (RF_EIO) name the path: not found, a
 * directory, "not a regular file (a FIFO: give a file)", "(a character
 * device)", unreadable, "larger than N bytes". */
rf_status rf_file_read_all(const char *path, size_t max_bytes, char **data, size_t *len,
                           rf_err *err);

/* Atomically replace path with len bytes of data. RF_EINVAL for a bad
 * destination (missing folder, a directory, no permission, an input);
 * RF_EIO when writing itself fails (disk full). inputs: NULL-terminated
 * list of paths that must not be overwritten (may be NULL). */
rf_status rf_file_write_atomic(const char *path, const void *data, size_t len,
                               const char *const *inputs, rf_err *err);

/* The same atomic write, streamed: for output too large to hold whole (a
 * sweep of millions of rows), written piece by piece as it is made.
 *   rf_file_writer_new     the refusals of rf_file_write_atomic, then a
 *                          temporary file beside path (a character device
 *                          or FIFO is opened in place)
 *   rf_file_writer_put     append len bytes; RF_EIO when writing fails
 *   rf_file_writer_commit  fsync, close and rename over path; RF_EIO on
 *                          failure, the temporary then still to be removed
 *   rf_file_writer_free    releases w (NULL is fine); a writer not
 *                          committed has its temporary removed, so the old
 *                          file (or nothing) stays at path
 * Every call after a failure is still followed by rf_file_writer_free. */
typedef struct rf_file_writer rf_file_writer;

rf_status rf_file_writer_new(const char *path, const char *const *inputs, rf_file_writer **w,
                             rf_err *err);
rf_status rf_file_writer_put(rf_file_writer *w, const void *data, size_t len, rf_err *err);
rf_status rf_file_writer_commit(rf_file_writer *w, rf_err *err);
void rf_file_writer_free(rf_file_writer *w);

/* The checks rf_file_write_atomic makes before writing, run early (before
 * work whose result would then be lost): RF_OK when path could be written,
 * the same refusal otherwise. A character device or FIFO (/dev/null) is
 * written in place, so it passes. */
rf_status rf_file_check_dest(const char *path, const char *const *inputs, rf_err *err);

/* Unlink every named temporary this process has open for writing (the
 * fallback's, or the instant's name an unnamed file takes while it is
 * renamed into place). Async-signal-safe: for a binary's signal handler. */
void rf_file_remove_temps(void);

#ifdef __cplusplus
}
#endif
#endif
