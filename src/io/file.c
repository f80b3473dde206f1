/* file.c - whole-file reads and atomic (temp + rename) writes. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roofline/rf_file.h"

rf_status rf_file_read_all(const char *path, size_t max_bytes, char **data, size_t *len,
                           rf_err *err)
{
    *data = NULL;
    *len = 0;
    struct stat st;
    if (stat(path, &st) != 0)
        return rf_err_set(err, RF_EIO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return rf_err_set(err, RF_EIO, "%s: is a directory, not a file", path);
    if (!S_ISREG(st.st_mode))
        return rf_err_set(err, RF_EIO, "%s: not a regular file", path);
    if ((uint64_t)st.st_size > max_bytes)
        return rf_err_set(err, RF_EIO, "%s: larger than %zu bytes", path, max_bytes);
    FILE *f = fopen(path, "rb");
    if (!f)
        return rf_err_set(err, RF_EIO, "%s: %s", path, strerror(errno));
    char *buf = malloc((size_t)st.st_size + 1);
    rf_status s = RF_OK;
    size_t n = 0;
    if (!buf) {
        s = rf_err_set(err, RF_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    n = fread(buf, 1, (size_t)st.st_size, f);
    if (ferror(f)) {
        s = rf_err_set(err, RF_EIO, "%s: read error", path);
        goto out;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    buf = NULL;
out:
    free(buf);
    fclose(f);
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

/* Write to an existing character device or FIFO in place. */
static rf_status write_stream(const char *path, const void *data, size_t len, rf_err *err)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return rf_err_set(err, errno == EACCES ? RF_EINVAL : RF_EIO, "%s: %s", path,
                          strerror(errno));
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rf_status s = rf_err_set(err, RF_EIO, "%s: write failed: %s", path, strerror(errno));
            close(fd);
            return s;
        }
        p += w;
        len -= (size_t)w;
    }
    if (close(fd) != 0)
        return rf_err_set(err, RF_EIO, "%s: close failed: %s", path, strerror(errno));
    return RF_OK;
}

rf_status rf_file_write_atomic(const char *path, const void *data, size_t len,
                               const char *const *inputs, rf_err *err)
{
    for (size_t i = 0; inputs && inputs[i]; i++)
        if (same_file(path, inputs[i]))
            return rf_err_set(err, RF_EINVAL, "%s: refusing to overwrite an input", path);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return rf_err_set(err, RF_EINVAL, "%s: is a directory", path);
    if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
        return write_stream(path, data, len, err); /* /dev/null, a pipe: never renamed over */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return rf_err_set(err, RF_EINVAL, "%s: not a regular file", path);

    size_t n = strlen(path);
    char *dircopy = malloc(n + 1), *tmp = malloc(n + 32);
    rf_status s = RF_OK;
    int fd = -1;
    if (!dircopy || !tmp) {
        s = rf_err_set(err, RF_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    tmp[0] = '\0';
    memcpy(dircopy, path, n + 1);
    const char *dir = dirname(dircopy);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        s = rf_err_set(err, RF_EINVAL, "%s: folder '%s' does not exist", path, dir);
        goto out;
    }
    snprintf(tmp, n + 32, "%s.tmp.XXXXXX", path);
    fd = mkstemp(tmp);
    if (fd < 0) {
        tmp[0] = '\0';
        s = rf_err_set(err, errno == EACCES || errno == EROFS ? RF_EINVAL : RF_EIO,
                       "%s: cannot create a file there: %s", path, strerror(errno));
        goto out;
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            s = rf_err_set(err, RF_EIO, "%s: write failed: %s", path, strerror(errno));
            goto out;
        }
        p += w;
        left -= (size_t)w;
    }
    /* keep the usual permissions of a new file (mkstemp makes 0600) */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || fsync(fd) != 0) {
        s = rf_err_set(err, RF_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (close(fd) != 0) {
        fd = -1;
        s = rf_err_set(err, RF_EIO, "%s: close failed: %s", path, strerror(errno));
        goto out;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        s = rf_err_set(err, RF_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    tmp[0] = '\0';
out:
    if (fd >= 0)
        close(fd);
    if (tmp && tmp[0])
        unlink(tmp);
    free(dircopy);
    free(tmp);
    return s;
}
