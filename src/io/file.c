/* file.c - whole-file reads and atomic (temp + rename) writes. */
#define _GNU_SOURCE /* O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdatomic.h>
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
                s = want > cap
                        ? rf_err_set(err, RF_ENOMEM, "%s: out of memory", path)
                        : rf_err_set(err, RF_EIO, "%s: larger than %zu bytes", path, max_bytes);
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

static rf_status dest_of(const char *path, const char *const *inputs, dest_kind *kind, rf_err *err)
{
    if (!*path)
        return rf_err_set(err, RF_EINVAL, "'': an empty file name");
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

/* Temporary names of this process: "path.tmp.PID.N", N from here, so two
 * threads writing beside one path never try the same name twice. */
static atomic_uint temp_serial;

/* A new named temporary beside path, *tmp = "path.tmp.PID.N" (malloc'd,
 * NULL on failure), open on *fd. Created 0666 less the umask, by the
 * kernel: the mode of a new file with no call of umask(), which would
 * change the mask of every thread for a moment. */
static rf_status make_temp(const char *path, char **tmp, int *fd, rf_err *err)
{
    size_t cap = strlen(path) + 48;
    if (!(*tmp = malloc(cap)))
        return rf_err_set(err, RF_ENOMEM, "%s: out of memory", path);
    for (int tries = 0; tries < 100; tries++) {
        snprintf(*tmp, cap, "%s.tmp.%ld.%u", path, (long)getpid(),
                 atomic_fetch_add(&temp_serial, 1));
        if ((*fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) >= 0)
            return RF_OK;
        if (errno != EEXIST)
            break;
    }
    rf_status s = rf_err_set(err, errno == EACCES || errno == EROFS ? RF_EINVAL : RF_EIO,
                             "%s: cannot create a file there: %s", path,
                             errno == EEXIST ? "no free temporary name" : strerror(errno));
    free(*tmp);
    *tmp = NULL;
    return s;
}

/* An unnamed file in path's folder (Linux O_TMPFILE), open on the returned
 * descriptor: nothing to remove if the process dies, by any signal, SIGKILL
 * included; it gets its name by linkat at the commit. -1 where the system
 * or the file system has none (or /proc/self/fd, which linkat goes
 * through, is not there): the named temporary is used instead. *refused:
 * the folder itself refused the file (no permission, read-only): its errno. */
static int make_anon(const char *path, int *refused)
{
    *refused = 0;
#if defined(__linux__) && defined(O_TMPFILE)
    if (access("/proc/self/fd", X_OK) != 0)
        return -1;
    char *dircopy = strdup(path);
    if (!dircopy)
        return -1;
    /* 0666 less the umask, applied by the kernel (make_temp) */
    int fd = open(dirname(dircopy), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
        *refused = errno;
    free(dircopy);
    return fd;
#else
    (void)path;
    return -1;
#endif
}

/* The file a path names: path itself, or, for a symbolic link, what it
 * points to (followed to the end, a relative target taken from the link's
 * folder, a dangling one included), so that writing replaces the target
 * and leaves the link. malloc'd; NULL when out of memory or past 40 links
 * (a loop). */
static char *final_path(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur && hops < 40; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        char target[4096];
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0 || (size_t)n >= sizeof target - 1)
            break;
        target[n] = '\0';
        char *next;
        if (target[0] == '/') {
            next = strdup(target);
        } else {
            char *dircopy = strdup(cur);
            const char *dir = dircopy ? dirname(dircopy) : NULL;
            size_t cap = (dir ? strlen(dir) : 0) + (size_t)n + 2;
            next = dir ? malloc(cap) : NULL;
            if (next)
                snprintf(next, cap, "%s/%s", dir, target);
            free(dircopy);
        }
        free(cur);
        cur = next;
    }
    free(cur);
    return NULL;
}

rf_status rf_file_check_dest(const char *path, const char *const *inputs, rf_err *err)
{
    char *dest = final_path(path);
    if (!dest)
        return rf_err_set(err, RF_EINVAL, "%s: too many levels of symbolic links", path);
    dest_kind kind;
    rf_status s = dest_of(dest, inputs, &kind, err);
    if (s == RF_OK && kind == DEST_FILE) { /* the folder takes a new file */
        int refused;
        int fd = make_anon(dest, &refused);
        char *tmp = NULL;
        if (fd >= 0)
            close(fd);
        else if (refused)
            s = rf_err_set(err, RF_EINVAL, "%s: cannot create a file there: %s", path,
                           strerror(refused));
        else if ((s = make_temp(dest, &tmp, &fd, err)) == RF_OK) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
    }
    free(dest);
    return s;
}

/* ---- named temporaries, for the binary's signal handlers -------------- */

/* Every named temporary that exists (the fallback's, or the name an
 * unnamed file takes for the instant between linkat and rename) is listed
 * here, so that rf_file_remove_temps, called from a signal handler of the
 * binary, can remove them. Process-wide because a signal handler reaches
 * nothing else; shared by the threads of the process without a lock: a
 * writer claims a free slot by an atomic exchange (FREE to FILLING), writes
 * its name, then marks it NAMED, and a handler reads only NAMED slots, so
 * it sees whole names; no allocation. The library installs no handler
 * (rf_file.h). */
#define PENDING_MAX 16
#define PENDING_PATH_MAX 4096
enum { SLOT_FREE, SLOT_FILLING, SLOT_NAMED };
static char pending[PENDING_MAX][PENDING_PATH_MAX];
static atomic_int pending_state[PENDING_MAX]; /* lock-free: safe in a handler */

void rf_file_remove_temps(void)
{
    for (int i = 0; i < PENDING_MAX; i++)
        if (atomic_load(&pending_state[i]) == SLOT_NAMED)
            unlink(pending[i]);
}

/* Register tmp; its slot, or -1 when the table is full or the name too
 * long (the temporary is then only removed on ordinary exits). */
static int guard_temp(const char *tmp)
{
    size_t n = strlen(tmp);
    if (n >= PENDING_PATH_MAX)
        return -1;
    for (int i = 0; i < PENDING_MAX; i++) {
        int free_slot = SLOT_FREE;
        if (atomic_compare_exchange_strong(&pending_state[i], &free_slot, SLOT_FILLING)) {
            memcpy(pending[i], tmp, n + 1);
            atomic_store(&pending_state[i], SLOT_NAMED);
            return i;
        }
    }
    return -1;
}

/* The temporary of slot is gone (renamed or removed): forget it. */
static void unguard_temp(int slot)
{
    if (slot >= 0)
        atomic_store(&pending_state[slot], SLOT_FREE);
}

/* A file being written: an unnamed file in the destination's folder (or a
 * named temporary beside it where the system has none), or the destination
 * itself when it is a stream such as /dev/null; committed by linkat and
 * rename at the end, dropped (nothing on disk) when not. */
struct rf_file_writer {
    char *path; /* the destination (a link's target)       */
    char *tmp;  /* the named temporary; NULL otherwise     */
    bool anon;  /* an unnamed (O_TMPFILE) file             */
    int fd;     /* -1 once closed                          */
    int guard;  /* tmp's slot in the table, or -1          */
};

rf_status rf_file_writer_new(const char *path, const char *const *inputs, rf_file_writer **out,
                             rf_err *err)
{
    *out = NULL;
    char *dest = final_path(path);
    if (!dest)
        return rf_err_set(err, RF_EINVAL, "%s: too many levels of symbolic links", path);
    dest_kind kind;
    rf_status s = dest_of(dest, inputs, &kind, err);
    rf_file_writer *w = s == RF_OK ? calloc(1, sizeof *w) : NULL;
    if (s != RF_OK || !w) {
        free(dest);
        return s != RF_OK ? s : rf_err_set(err, RF_ENOMEM, "%s: out of memory", path);
    }
    w->path = dest;
    w->fd = -1;
    w->guard = -1;
    int refused = 0;
    if (kind == DEST_STREAM) {
        if ((w->fd = open(dest, O_WRONLY)) < 0)
            s = rf_err_set(err, errno == EACCES ? RF_EINVAL : RF_EIO, "%s: %s", path,
                           strerror(errno));
    } else if ((w->fd = make_anon(dest, &refused)) >= 0) {
        w->anon = true;
    } else if (refused) {
        s = rf_err_set(err, RF_EINVAL, "%s: cannot create a file there: %s", path,
                       strerror(refused));
    } else if ((s = make_temp(dest, &w->tmp, &w->fd, err)) == RF_OK) {
        w->guard = guard_temp(w->tmp);
    }
    if (s != RF_OK) {
        rf_file_writer_free(w);
        return s;
    }
    *out = w;
    return RF_OK;
}

/* The unnamed file of w given the name path: linkat straight to path
 * when nothing is there (atomic: EEXIST if something appeared), else to a
 * fresh name beside it, then renamed over path. */
static rf_status name_anon(rf_file_writer *w, rf_err *err)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", w->fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, w->path, AT_SYMLINK_FOLLOW) == 0)
        return RF_OK;
    if (errno != EEXIST)
        return rf_err_set(err, RF_EIO, "%s: %s", w->path, strerror(errno));
    size_t cap = strlen(w->path) + 32;
    char *tmp = malloc(cap);
    if (!tmp)
        return rf_err_set(err, RF_ENOMEM, "%s: out of memory", w->path);
    rf_status s = RF_OK;
    unsigned i = 0;
    for (; i < 100; i++) {
        snprintf(tmp, cap, "%s.tmp.%ld.%u", w->path, (long)getpid(), i);
        int slot = guard_temp(tmp);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
            if (rename(tmp, w->path) != 0) {
                s = rf_err_set(err, RF_EIO, "%s: %s", w->path, strerror(errno));
                unlink(tmp);
            }
            unguard_temp(slot);
            break;
        }
        unguard_temp(slot);
        if (errno != EEXIST) {
            s = rf_err_set(err, RF_EIO, "%s: %s", w->path, strerror(errno));
            break;
        }
    }
    if (i == 100)
        s = rf_err_set(err, RF_EIO, "%s: no free temporary name", w->path);
    free(tmp);
    return s;
}

rf_status rf_file_writer_put(rf_file_writer *w, const void *data, size_t len, rf_err *err)
{
    return write_all(w->fd, w->path, data, len, err);
}

rf_status rf_file_writer_commit(rf_file_writer *w, rf_err *err)
{
    rf_status s = RF_OK;
    if (w->tmp || w->anon) {
        /* a file replaced keeps its mode; a new one keeps the mode it was
         * created with, the usual permissions of a new file (make_temp) */
        struct stat st;
        if ((stat(w->path, &st) == 0 && S_ISREG(st.st_mode) &&
             fchmod(w->fd, st.st_mode & 07777) != 0) ||
            fsync(w->fd) != 0)
            s = rf_err_set(err, RF_EIO, "%s: %s", w->path, strerror(errno));
    }
    if (s == RF_OK && w->anon)
        s = name_anon(w, err);
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
        w->anon = false;
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
