/* file.c - whole-file reads and atomic (temp + rename) writes. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roofline/rf_file.h"

/* What a path that is not a regular file is, for the refusal. */
static const char *kind_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "is a directory, not a file";
    if (S_ISFIFO(mode))
        return "not a regular file (a FIFO: give a file)";
    if (S_ISCHR(mode))
        return "not a regular file (a character device)";
    if (S_ISBLK(mode))
        return "not a regular file (a block device)";
    if (S_ISSOCK(mode))
        return "not a regular file (a socket)";
    return "not a regular file";
}

rf_status rf_file_read_all(const char *path, size_t max_bytes, char **data, size_t *len,
                           rf_err *err)
{
    *data = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO never waits for a writer; fstat then
     * refuses it, as it refuses a device, before any read could block */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return rf_err_set(err, RF_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    rf_status s = RF_OK;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    if (fstat(fd, &st) != 0) {
        s = rf_err_set(err, RF_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        s = rf_err_set(err, RF_EIO, "%s: %s", path, kind_name(st.st_mode));
        goto out;
    }
    /* read to the end, not st_size bytes: /proc files say 0, a file may
     * grow; one byte past max_bytes tells "too large" */
    for (;;) {
        if (n == cap) {
            size_t want = cap ? cap * 2 : 4096;
            if (want > max_bytes + 1)
                want = max_bytes + 1;
            char *grown = want > cap ? realloc(buf, want + 1) : NULL;
            if (!grown) {
                s = want > cap ? rf_err_set(err, RF_ENOMEM, "%s: out of memory", path)
                               : rf_err_set(err, RF_EIO, "%s: larger than %zu bytes", path,
                                            max_bytes);
                goto out;
            }
            buf = grown;
            cap = want;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            s = rf_err_set(err, RF_EIO, "%s: read error: %s", path, strerror(errno));
            goto out;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (n > max_bytes) {
        s = rf_err_set(err, RF_EIO, "%s: larger than %zu bytes", path, max_bytes);
        goto out;
    }
    if (!buf && !(buf = malloc(1))) {
        s = rf_err_set(err, RF_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    buf = NULL;
out:
    free(buf);
    close(fd);
    return s;
}

/* Same file? Compares device and inode when both exist. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Write all of data to fd, through short writes and signals. */
static rf_status write_all(int fd, const char *path, const void *data, size_t len, rf_err *err)
{
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return rf_err_set(err, RF_EIO, "%s: write failed: %s", path, strerror(errno));
        p += w;
        len -= (size_t)w;
    }
    return RF_OK;
}

/* What kind of destination path is, after the refusals every write
 * shares: an input, a directory, something neither regular nor a stream,
 * a regular file without write permission, a folder that does not exist. */
typedef enum { DEST_FILE, DEST_STREAM } dest_kind;

static rf_status dest_of(const char *path, const char *const *inputs, dest_kind *kind,
                         rf_err *err)
{
    for (size_t i = 0; inputs && inputs[i]; i++)
        if (same_file(path, inputs[i]))
            return rf_err_set(err, RF_EINVAL, "%s: refusing to overwrite an input", path);
    struct stat st;
    *kind = DEST_FILE;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return rf_err_set(err, RF_EINVAL, "%s: is a directory", path);
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            *kind = DEST_STREAM; /* /dev/null, a pipe: written in place, never renamed over */
            return RF_OK;
        }
        if (!S_ISREG(st.st_mode))
            return rf_err_set(err, RF_EINVAL, "%s: not a regular file", path);
        if (access(path, W_OK) != 0)
            return rf_err_set(err, RF_EINVAL, "%s: file is not writable", path);
    }
    char *dircopy = strdup(path);
    if (!dircopy)
        return rf_err_set(err, RF_ENOMEM, "%s: out of memory", path);
    const char *dir = dirname(dircopy);
    rf_status s = RF_OK;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        s = rf_err_set(err, RF_EINVAL, "%s: folder '%s' does not exist", path, dir);
    free(dircopy);
    return s;
}

/* A new temporary file beside path, *tmp = "path.tmp.XXXXXX" (malloc'd,
 * NULL on failure), open on *fd. */
static rf_status make_temp(const char *path, char **tmp, int *fd, rf_err *err)
{
    size_t cap = strlen(path) + 16;
    if (!(*tmp = malloc(cap)))
        return rf_err_set(err, RF_ENOMEM, "%s: out of memory", path);
    snprintf(*tmp, cap, "%s.tmp.XXXXXX", path);
    if ((*fd = mkstemp(*tmp)) >= 0)
        return RF_OK;
    rf_status s = rf_err_set(err, errno == EACCES || errno == EROFS ? RF_EINVAL : RF_EIO,
                             "%s: cannot create a file there: %s", path, strerror(errno));
    free(*tmp);
    *tmp = NULL;
    return s;
}

rf_status rf_file_check_dest(const char *path, const char *const *inputs, rf_err *err)
{
    dest_kind kind;
    rf_status s = dest_of(path, inputs, &kind, err);
    if (s != RF_OK || kind == DEST_STREAM)
        return s;
    char *tmp;
    int fd;
    if ((s = make_temp(path, &tmp, &fd, err)) != RF_OK) /* the folder takes a new file */
        return s;
    close(fd);
    unlink(tmp);
    free(tmp);
    return RF_OK;
}

/* ---- temporaries removed when a signal ends the process -------------- */

/* While a temporary exists, SIGINT, SIGTERM, SIGHUP and SIGQUIT unlink it
 * before the process ends: the handler removes every registered name (a
 * fixed table, no allocation: only async-signal-safe calls), puts back the
 * disposition found before (default: terminate) and raises the signal
 * again, so the exit status still says which signal ended it. A signal the
 * process ignored (nohup) stays ignored. */
#define PENDING_MAX 4
#define PENDING_PATH_MAX 4096
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_CLEANUP_SIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])
static char pending[PENDING_MAX][PENDING_PATH_MAX];
static volatile sig_atomic_t pending_used[PENDING_MAX];
static struct sigaction saved[N_CLEANUP_SIGNALS];
static int n_pending; /* handlers installed while > 0 */

static void on_signal(int sig)
{
    for (int i = 0; i < PENDING_MAX; i++)
        if (pending_used[i])
            unlink(pending[i]);
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
        if (cleanup_signals[i] == sig)
            sigaction(sig, &saved[i], NULL);
    raise(sig); /* delivered when the handler returns, as before */
}

/* Block the cleanup signals around a change of the table. */
static void block_cleanup_signals(bool block, sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
        sigaddset(&set, cleanup_signals[i]);
    if (block)
        sigprocmask(SIG_BLOCK, &set, old);
    else
        sigprocmask(SIG_SETMASK, old, NULL);
}

/* Register tmp; its slot, or -1 when the table is full or the name too
 * long (the temporary is then only removed on ordinary exits). */
static int guard_temp(const char *tmp)
{
    size_t n = strlen(tmp);
    if (n >= PENDING_PATH_MAX)
        return -1;
    sigset_t old;
    block_cleanup_signals(true, &old);
    int slot = -1;
    for (int i = 0; i < PENDING_MAX && slot < 0; i++)
        if (!pending_used[i])
            slot = i;
    if (slot >= 0) {
        memcpy(pending[slot], tmp, n + 1);
        pending_used[slot] = 1;
        if (n_pending++ == 0)
            for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
                struct sigaction sa = {.sa_handler = on_signal};
                sigemptyset(&sa.sa_mask);
                sigaction(cleanup_signals[i], NULL, &saved[i]);
                if (saved[i].sa_handler != SIG_IGN)
                    sigaction(cleanup_signals[i], &sa, NULL);
            }
    }
    block_cleanup_signals(false, &old);
    return slot;
}

/* The temporary of slot is gone (renamed or removed): forget it. */
static void unguard_temp(int slot)
{
    if (slot < 0)
        return;
    sigset_t old;
    block_cleanup_signals(true, &old);
    pending_used[slot] = 0;
    if (--n_pending == 0)
        for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
            sigaction(cleanup_signals[i], &saved[i], NULL);
    block_cleanup_signals(false, &old);
}

/* A file being written: a temporary beside the destination (or the
 * destination itself when it is a stream such as /dev/null), committed by
 * rename at the end, removed when dropped uncommitted. */
struct rf_file_writer {
    char *path;      /* the destination                         */
    char *tmp;       /* the temporary; NULL for a stream        */
    int fd;          /* -1 once closed                          */
    int guard;       /* tmp's slot in the signal table, or -1   */
};

rf_status rf_file_writer_new(const char *path, const char *const *inputs, rf_file_writer **out,
                             rf_err *err)
{
    *out = NULL;
    dest_kind kind;
    rf_status s = dest_of(path, inputs, &kind, err);
    if (s != RF_OK)
        return s;
    rf_file_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return rf_err_set(err, RF_ENOMEM, "%s: out of memory", path);
    }
    w->fd = -1;
    w->guard = -1;
    if (kind == DEST_STREAM) {
        if ((w->fd = open(path, O_WRONLY)) < 0)
            s = rf_err_set(err, errno == EACCES ? RF_EINVAL : RF_EIO, "%s: %s", path,
                           strerror(errno));
    } else if ((s = make_temp(path, &w->tmp, &w->fd, err)) == RF_OK) {
        w->guard = guard_temp(w->tmp);
    }
    if (s != RF_OK) {
        rf_file_writer_free(w);
        return s;
    }
    *out = w;
    return RF_OK;
}

rf_status rf_file_writer_put(rf_file_writer *w, const void *data, size_t len, rf_err *err)
{
    return write_all(w->fd, w->path, data, len, err);
}

rf_status rf_file_writer_commit(rf_file_writer *w, rf_err *err)
{
    rf_status s = RF_OK;
    if (w->tmp) {
        /* a file replaced keeps its mode; a new one gets the usual
         * permissions of a new file (mkstemp makes 0600) */
        struct stat st;
        mode_t mode;
        if (stat(w->path, &st) == 0 && S_ISREG(st.st_mode)) {
            mode = st.st_mode & 07777;
        } else {
            mode_t mask = umask(0);
            umask(mask);
            mode = 0666 & ~mask;
        }
        if (fchmod(w->fd, mode) != 0 || fsync(w->fd) != 0)
            s = rf_err_set(err, RF_EIO, "%s: %s", w->path, strerror(errno));
    }
    if (close(w->fd) != 0 && s == RF_OK)
        s = rf_err_set(err, RF_EIO, "%s: close failed: %s", w->path, strerror(errno));
    w->fd = -1;
    if (s == RF_OK && w->tmp && rename(w->tmp, w->path) != 0)
        s = rf_err_set(err, RF_EIO, "%s: %s", w->path, strerror(errno));
    if (s == RF_OK) { /* in place: nothing left to remove */
        unguard_temp(w->guard);
        w->guard = -1;
        free(w->tmp);
        w->tmp = NULL;
    }
    return s;
}

void rf_file_writer_free(rf_file_writer *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    if (w->tmp)
        unlink(w->tmp);
    unguard_temp(w->guard);
    free(w->tmp);
    free(w->path);
    free(w);
}

rf_status rf_file_write_atomic(const char *path, const void *data, size_t len,
                               const char *const *inputs, rf_err *err)
{
    rf_file_writer *w;
    rf_status s = rf_file_writer_new(path, inputs, &w, err);
    if (s == RF_OK && (s = rf_file_writer_put(w, data, len, err)) == RF_OK)
        s = rf_file_writer_commit(w, err);
    rf_file_writer_free(w);
    return s;
}
