/* test_stream.c - an output of any size passes through in constant memory.
 *
 * The pieces: rf_buf with a sink (rf_report.h) holds at most about
 * flush_at bytes and hands the rest on in order; rf_file_writer (rf_file.h)
 * writes an atomic file piece by piece, and one not committed leaves the old
 * file and no temporary. Through the binary: a sweep written with -o is
 * byte-identical to the same sweep on stdout in every format, and the peak
 * resident memory of a large -o sweep stays near that of a one-point one.
 */
#define _DEFAULT_SOURCE /* wait4 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "roofline/rf_file.h"
#include "roofline/rf_report.h"

/* ---- rf_buf with a sink ------------------------------------------------ */

typedef struct collected {
    char data[4096];
    size_t len;
    size_t calls;
    size_t largest_held; /* the most bytes the buffer held at a flush */
    int fail_at;         /* refuse the call with this number (1-based); 0: never */
} collected;

static rf_status collect(void *user, const char *data, size_t len)
{
    collected *c = user;
    c->calls++;
    if (c->fail_at && (int)c->calls == c->fail_at)
        return RF_EIO;
    if (c->len + len > sizeof c->data)
        return RF_ENOMEM;
    memcpy(c->data + c->len, data, len);
    c->len += len;
    if (len > c->largest_held)
        c->largest_held = len;
    return RF_OK;
}

static void buf_sink_order(void **state)
{
    (void)state;
    collected c = {0};
    rf_buf b;
    rf_buf_init(&b);
    rf_buf_set_sink(&b, collect, &c, 16);
    char want[1024];
    size_t n = 0;
    for (int i = 0; i < 40; i++) { /* 40 small puts and printfs, 4-5 bytes each */
        char piece[16];
        int k = snprintf(piece, sizeof piece, "%d,", i);
        if (i % 2)
            rf_buf_put(&b, piece, (size_t)k);
        else
            rf_buf_printf(&b, "%d,", i);
        memcpy(want + n, piece, (size_t)k);
        n += (size_t)k;
    }
    /* a put of flush_at bytes or more goes straight through, after what is held */
    const char *big = "0123456789abcdefghijklmnopqrstuvwxyz";
    rf_buf_puts(&b, big);
    memcpy(want + n, big, strlen(big));
    n += strlen(big);
    rf_buf_puts(&b, "end");
    memcpy(want + n, "end", 3);
    n += 3;
    assert_true(b.len <= 16); /* never more than about flush_at held */
    rf_buf_flush(&b);
    assert_false(b.failed);
    assert_int_equal(b.len, 0);
    assert_int_equal(c.len, n);
    assert_memory_equal(c.data, want, n);
    /* each flush of held bytes is under flush_at + one piece (5 bytes) */
    assert_true(c.calls > 5);
    rf_buf_free(&b);
}

static void buf_sink_failure_is_sticky(void **state)
{
    (void)state;
    collected c = {.fail_at = 2};
    rf_buf b;
    rf_buf_init(&b);
    rf_buf_set_sink(&b, collect, &c, 8);
    for (int i = 0; i < 10; i++)
        rf_buf_puts(&b, "12345");
    rf_buf_flush(&b);
    assert_true(b.failed);
    /* the first flush arrived; nothing after the refused one was handed on */
    assert_int_equal(c.calls, 2);
    assert_int_equal(c.len, 10);
    rf_buf_free(&b);
}

/* ---- rf_file_writer ----------------------------------------------------- */

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rf_stream_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
        }
    }
    if (d)
        closedir(d);
    return rmdir(dir);
}

/* How many entries the folder holds (a stray temporary shows as one more). */
static int entries(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void slurp(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
}

static void writer_commits_pieces(void **state)
{
    (void)state;
    char path[128], got[64];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    rf_file_writer *w = NULL;
    rf_err e;
    assert_int_equal(rf_file_writer_new(path, NULL, &w, &e), RF_OK);
    /* the temporary, beside the destination: unnamed (O_TMPFILE, no entry)
     * on Linux, "out.txt.tmp.XXXXXX" where the file system has none */
    assert_true(entries() <= 1);
    assert_int_equal(rf_file_writer_put(w, "one ", 4, &e), RF_OK);
    assert_int_equal(rf_file_writer_put(w, "two", 3, &e), RF_OK);
    assert_int_equal(access(path, F_OK), -1); /* nothing at path until committed */
    assert_int_equal(rf_file_writer_commit(w, &e), RF_OK);
    rf_file_writer_free(w);
    slurp(path, got, sizeof got);
    assert_string_equal(got, "one two");
    assert_int_equal(entries(), 1);
}

static void writer_dropped_keeps_old_file(void **state)
{
    (void)state;
    char path[128], got[64];
    snprintf(path, sizeof path, "%s/keep.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    int before = entries();
    rf_file_writer *w = NULL;
    rf_err e;
    assert_int_equal(rf_file_writer_new(path, NULL, &w, &e), RF_OK);
    assert_int_equal(rf_file_writer_put(w, "half a new file", 15, &e), RF_OK);
    rf_file_writer_free(w); /* an error elsewhere: never committed */
    slurp(path, got, sizeof got);
    assert_string_equal(got, "old");
    assert_int_equal(entries(), before);
    rf_file_writer_free(NULL);
    /* the refusals of rf_file_write_atomic, before any temporary is made */
    snprintf(path, sizeof path, "%s/no-such-folder/x", dir);
    assert_int_equal(rf_file_writer_new(path, NULL, &w, &e), RF_EINVAL);
    assert_null(w);
    assert_non_null(strstr(e.msg, "does not exist"));
}

/* ---- through the binary ------------------------------------------------- */

/* Run the binary with args (NULL-terminated), stdout to out_path (NULL:
 * /dev/null); returns the exit status, *maxrss_kib the child's peak RSS. */
static int run(const char *const *args, const char *out_path, long *maxrss_kib)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
            _exit(126);
        execv(RF_ROOFLINE_BIN, (char *const *)args);
        _exit(127);
    }
    int st;
    struct rusage ru;
    assert_int_equal(wait4(pid, &st, 0, &ru), pid);
    *maxrss_kib = ru.ru_maxrss; /* Linux: KiB */
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    assert_non_null(fa);
    assert_non_null(fb);
    char x[65536], y[65536];
    size_t na, nb, total = 0;
    do {
        na = fread(x, 1, sizeof x, fa);
        nb = fread(y, 1, sizeof y, fb);
        if (na != nb || memcmp(x, y, na))
            fail_msg("%s and %s differ after byte %zu", a, b, total);
        total += na;
    } while (na);
    fclose(fa);
    fclose(fb);
    /* 64 x 512 points: 2.9 MB of CSV, more in the other formats, so the
     * output passes the 1 MiB flush several times */
    if (total < (3u << 20) / 2)
        fail_msg("%s holds %zu bytes: too few to cross a flush", a, total);
}

static void sweep_file_equals_stdout(void **state)
{
    (void)state;
    const char *formats[] = {"--csv", "--json", NULL}; /* NULL: the table */
    for (int i = 0; i < 3; i++) {
        char file[128], piped[128];
        snprintf(file, sizeof file, "%s/sweep-o.%d", dir, i);
        snprintf(piped, sizeof piped, "%s/sweep-stdout.%d", dir, i);
        const char *args[16] = {"roofline", "sweep",     "llama-3-8b", "--batch",
                                "1..64:1",  "--context", "1..512:1"};
        size_t n = 7;
        if (formats[i])
            args[n++] = formats[i];
        args[n] = "-o";
        args[n + 1] = file;
        long rss;
        assert_int_equal(run(args, NULL, &rss), 0);
        args[n] = NULL; /* the same sweep, on stdout */
        assert_int_equal(run(args, piped, &rss), 0);
        same_bytes(file, piped);
        remove(file);
        remove(piped);
    }
}

/* Peak RSS of a large -o sweep against a one-point one. Holding the output
 * whole, as -o once did, needs at least its size: 1024 x 1200 points, each
 * CSV row 80-90 bytes (batch, context, 4 reals at 6 digits, a regime name,
 * two byte counts), is about 104 MB, so the old code peaked above 100 MiB.
 * Streamed, the sweep holds at most one flush (1 MiB) plus one row in a
 * buffer whose capacity doubles past it (2 MiB), and its per-point state is
 * constant: the peak may exceed the one-point run's by the buffer and the
 * C library's stdio buffers, a few MiB. Bound: the one-point peak + 16 MiB,
 * a fifth of what holding the output would take, and four times what
 * streaming needs. */
static void sweep_memory_flat(void **state)
{
    (void)state;
    char file[128];
    snprintf(file, sizeof file, "%s/large.csv", dir);
    const char *small[] = {"roofline", "sweep", "llama-3-8b", "--batch", "1",
                           "--csv",    "-o",    file,         NULL};
    const char *large[] = {"roofline",  "sweep", "llama-3-8b", "--batch", "1..1024:1", "--context",
                           "1..1200:1", "--csv", "-o",         file,      NULL};
    long base_kib, big_kib;
    assert_int_equal(run(small, NULL, &base_kib), 0);
    assert_int_equal(run(large, NULL, &big_kib), 0);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    remove(file);
    if (st.st_size < 100 * 1000 * 1000)
        fail_msg("the large sweep wrote %lld bytes, expected over 100 MB", (long long)st.st_size);
    long bound_kib = base_kib + 16 * 1024;
    if (big_kib > bound_kib)
        fail_msg("peak RSS %ld KiB for a %lld-byte -o sweep; bound %ld KiB (one point: %ld KiB)",
                 big_kib, (long long)st.st_size, bound_kib, base_kib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buf_sink_order),           cmocka_unit_test(buf_sink_failure_is_sticky),
        cmocka_unit_test(writer_commits_pieces),    cmocka_unit_test(writer_dropped_keeps_old_file),
        cmocka_unit_test(sweep_file_equals_stdout), cmocka_unit_test(sweep_memory_flat),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
