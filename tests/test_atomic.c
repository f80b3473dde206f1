/* test_atomic.c - every file the tool writes appears whole or not at all.
 *
 * rf_file_write_atomic (rf_file.h) writes a temporary file in the
 * destination's folder and renames it into place. These tests check what a
 * user can observe: the new contents after success, the old contents (or
 * nothing) after any failure, no temporary file left behind either way, an
 * input never overwritten; and, through the binary, that `-o -` writes the
 * same bytes to stdout that `-o FILE` writes to the file.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "roofline/rf_file.h"

/* A fresh folder per test, removed (with what is in it) afterwards. */
typedef struct fixture {
    char dir[64];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/rf_atomic_XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static void path_in(const fixture *f, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", f->dir, name);
}

static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d = opendir(f->dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        path_in(f, e->d_name, p, sizeof p);
        if (remove(p) != 0) { /* a folder made by a test holds nothing */
            chmod(p, 0700);
            remove(p);
        }
    }
    if (d)
        closedir(d);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Names in the folder, sorted and joined by ' ' (so a stray "x.tmp.AbC123"
 * shows up in the failure message). */
static void listing(const fixture *f, char *out, size_t cap)
{
    struct dirent **names = NULL;
    int n = scandir(f->dir, &names, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
            size_t used = strlen(out);
            snprintf(out + used, cap - used, "%s%s", used ? " " : "", names[i]->d_name);
        }
        free(names[i]);
    }
    free(names);
}

static void assert_listing(const fixture *f, const char *want)
{
    char got[1024];
    listing(f, got, sizeof got);
    assert_string_equal(got, want);
}

static void put(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    assert_int_equal(fclose(fp), 0);
}

/* Whole contents of a file (malloc'd, NUL-terminated), read with stdio so
 * the reader under test is not also the judge. */
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t cap = 1 << 16, len = 0;
    char *data = malloc(cap + 1);
    assert_non_null(data);
    len = fread(data, 1, cap, fp);
    assert_int_equal(ferror(fp), 0);
    assert_int_equal(len < cap, 1); /* test files are small */
    fclose(fp);
    data[len] = '\0';
    return data;
}

static void new_file(void **state)
{
    fixture *f = *state;
    char p[512];
    rf_err e;
    path_in(f, "out.json", p, sizeof p);
    assert_int_equal(rf_file_write_atomic(p, "{\"a\": 1}\n", 9, NULL, &e), RF_OK);
    char *got = slurp(p);
    assert_string_equal(got, "{\"a\": 1}\n");
    free(got);
    assert_listing(f, "out.json");
    /* mkstemp makes 0600; the result has the permissions of a new file */
    struct stat st;
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
}

static void replaces_whole(void **state)
{
    fixture *f = *state;
    char p[512];
    path_in(f, "out.txt", p, sizeof p);
    put(p, "a much longer old text that a shorter new one must not leave a tail of\n");
    assert_int_equal(rf_file_write_atomic(p, "new\n", 4, NULL, NULL), RF_OK);
    char *got = slurp(p);
    assert_string_equal(got, "new\n");
    free(got);
    assert_listing(f, "out.txt");
    /* an empty report is an empty file, not a missing one */
    assert_int_equal(rf_file_write_atomic(p, "", 0, NULL, NULL), RF_OK);
    got = slurp(p);
    assert_string_equal(got, "");
    free(got);
    assert_listing(f, "out.txt");
}

static void refuses_input(void **state)
{
    fixture *f = *state;
    char in[512], other[512], alias[512];
    rf_err e;
    path_in(f, "config.json", in, sizeof in);
    path_in(f, "other.json", other, sizeof other);
    put(in, "{\"hidden_size\": 4096}\n");
    const char *const inputs[] = {other, in, NULL};
    assert_int_equal(rf_file_write_atomic(in, "x", 1, inputs, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, in));
    assert_non_null(strstr(e.msg, "refusing to overwrite an input"));
    /* the same file under another spelling: compared by device and inode */
    snprintf(alias, sizeof alias, "%s/./config.json", f->dir);
    assert_int_equal(rf_file_write_atomic(alias, "x", 1, inputs, &e), RF_EINVAL);
    char *got = slurp(in);
    assert_string_equal(got, "{\"hidden_size\": 4096}\n");
    free(got);
    assert_listing(f, "config.json");
    /* an input that does not exist (yet) does not block the write */
    assert_int_equal(rf_file_write_atomic(other, "y", 1, inputs, &e), RF_OK);
    assert_listing(f, "config.json other.json");
}

static void refuses_directory(void **state)
{
    fixture *f = *state;
    char p[512];
    rf_err e;
    path_in(f, "sub", p, sizeof p);
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(rf_file_write_atomic(p, "x", 1, NULL, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "is a directory"));
    assert_listing(f, "sub");
}

static void refuses_missing_folder(void **state)
{
    fixture *f = *state;
    char p[512];
    rf_err e;
    path_in(f, "nope/out.txt", p, sizeof p);
    assert_int_equal(rf_file_write_atomic(p, "x", 1, NULL, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "does not exist"));
    assert_listing(f, "");
}

/* The early check says what the write would: the same refusals, /dev/null
 * allowed, and it leaves nothing behind (its probe file is removed). */
static void check_dest_as_write(void **state)
{
    fixture *f = *state;
    char p[512], in[512];
    rf_err e;
    path_in(f, "out.txt", p, sizeof p);
    assert_int_equal(rf_file_check_dest(p, NULL, &e), RF_OK);
    assert_int_equal(rf_file_check_dest("/dev/null", NULL, &e), RF_OK);
    path_in(f, "nope/out.txt", p, sizeof p);
    assert_int_equal(rf_file_check_dest(p, NULL, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "does not exist"));
    path_in(f, "sub", p, sizeof p);
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(rf_file_check_dest(p, NULL, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "is a directory"));
    path_in(f, "in.json", in, sizeof in);
    assert_int_equal(rf_file_write_atomic(in, "{}", 2, NULL, &e), RF_OK);
    const char *inputs[] = {in, NULL};
    assert_int_equal(rf_file_check_dest(in, inputs, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "refusing to overwrite an input"));
    assert_listing(f, "in.json sub");
}

/* A write that fails half-way (here: the file-size limit, as a full disk
 * would) leaves the old file as it was and no temporary file. */
static void failed_write_keeps_old(void **state)
{
    fixture *f = *state;
    char p[512];
    rf_err e;
    path_in(f, "out.csv", p, sizeof p);
    put(p, "old,contents\n");
    size_t len = 1 << 20;
    char *big = malloc(len);
    assert_non_null(big);
    memset(big, 'x', len);

    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 4096;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of a signal */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    rf_status s = rf_file_write_atomic(p, big, len, NULL, &e);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    free(big);

    assert_int_equal(s, RF_EIO);
    assert_non_null(strstr(e.msg, "write failed"));
    char *got = slurp(p);
    assert_string_equal(got, "old,contents\n");
    free(got);
    assert_listing(f, "out.csv");
}

static void read_errors_name_the_path(void **state)
{
    fixture *f = *state;
    char p[512], *data = (char *)1;
    size_t len = 1;
    rf_err e;
    assert_int_equal(rf_file_read_all(f->dir, 1024, &data, &len, &e), RF_EIO);
    assert_null(data);
    assert_non_null(strstr(e.msg, "is a directory"));
    path_in(f, "missing.json", p, sizeof p);
    assert_int_equal(rf_file_read_all(p, 1024, &data, &len, &e), RF_EIO);
    assert_non_null(strstr(e.msg, p));
    path_in(f, "big.json", p, sizeof p);
    put(p, "0123456789");
    assert_int_equal(rf_file_read_all(p, 9, &data, &len, &e), RF_EIO);
    assert_non_null(strstr(e.msg, "larger than"));
}

/* Run the binary with stdout and stderr sent to files; returns its exit
 * code (or -1 when it did not exit normally). */
static int run(const char *out, const char *errf, char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static void dash_writes_stdout(void **state)
{
    fixture *f = *state;
    char out[512], err[512], file[512], out2[512];
    path_in(f, "stdout.txt", out, sizeof out);
    path_in(f, "stderr.txt", err, sizeof err);
    path_in(f, "report.json", file, sizeof file);
    path_in(f, "stdout2.txt", out2, sizeof out2);

    char *dash[] = {RF_ROOFLINE_BIN, "gemm", "1", "4096", "4096", "--json", "-o", "-", NULL};
    assert_int_equal(run(out, err, dash), 0);
    char *to_stdout = slurp(out), *errs = slurp(err);
    assert_non_null(strstr(to_stdout, "\"flops\": 33554432")); /* 2 x 1 x 4096 x 4096 */
    assert_string_equal(errs, "");
    free(errs);

    char *to_file[] = {RF_ROOFLINE_BIN, "gemm", "1", "4096", "4096", "--json", "-o", file, NULL};
    assert_int_equal(run(out2, err, to_file), 0);
    char *written = slurp(file), *quiet = slurp(out2);
    assert_string_equal(written, to_stdout); /* the same bytes either way */
    assert_string_equal(quiet, "");
    free(written);
    free(quiet);
    free(to_stdout);
    assert_listing(f, "report.json stderr.txt stdout.txt stdout2.txt");

    /* a directory as the output: exit 2, one line naming it, nothing left */
    char sub[512];
    path_in(f, "sub", sub, sizeof sub);
    assert_int_equal(mkdir(sub, 0700), 0);
    char *to_dir[] = {RF_ROOFLINE_BIN, "gemm", "1", "4096", "4096", "-o", sub, NULL};
    assert_int_equal(run(out2, err, to_dir), 2);
    errs = slurp(err);
    assert_non_null(strstr(errs, "is a directory"));
    const char *nl = strchr(errs, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0'); /* exactly one line */
    free(errs);
    assert_listing(f, "report.json stderr.txt stdout.txt stdout2.txt sub");
}

/* `roofline step config.json -o config.json` refuses, and the config (or a
 * profile given to --hw) is left as it was. */
static void cli_keeps_inputs(void **state)
{
    fixture *f = *state;
    char cfg[512], prof[512], out[512], err[512];
    path_in(f, "config.json", cfg, sizeof cfg);
    path_in(f, "profile.json", prof, sizeof prof);
    path_in(f, "stdout.txt", out, sizeof out);
    path_in(f, "stderr.txt", err, sizeof err);
    const char *config = "{\"model_type\": \"llama\", \"hidden_size\": 512, "
                         "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                         "\"intermediate_size\": 1024, \"vocab_size\": 1000}\n";
    const char *profile = "{\"name\": \"p\", \"bandwidth_bytes_per_s\": 1e11, "
                          "\"peak_flops_per_s\": {\"bf16\": 1e13}}\n";
    put(cfg, config);
    put(prof, profile);

    char *over_model[] = {RF_ROOFLINE_BIN, "step", cfg, "-o", cfg, NULL};
    assert_int_equal(run(out, err, over_model), 2);
    char *errs = slurp(err), *kept = slurp(cfg);
    assert_non_null(strstr(errs, "refusing to overwrite an input"));
    assert_string_equal(kept, config);
    free(errs);
    free(kept);

    /* the folder form names the same file */
    char *over_folder[] = {RF_ROOFLINE_BIN, "step", f->dir, "-o", cfg, NULL};
    assert_int_equal(run(out, err, over_folder), 2);
    kept = slurp(cfg);
    assert_string_equal(kept, config);
    free(kept);

    char *over_profile[] = {RF_ROOFLINE_BIN, "step", cfg, "--hw", prof, "-o", prof, NULL};
    assert_int_equal(run(out, err, over_profile), 2);
    kept = slurp(prof);
    assert_string_equal(kept, profile);
    free(kept);
    assert_listing(f, "config.json profile.json stderr.txt stdout.txt");
}

/* ---- reads: to the end of the file, never from a stream or a device --- */

/* st_size is not trusted: a /proc file says 0 and holds text; a file of
 * exactly max_bytes passes, one byte more does not; a FIFO with no writer
 * and a device are refused at once (an alarm fails the test if the read
 * blocks). */
static void reads_to_eof_refuses_streams(void **state)
{
    fixture *f = *state;
    char p[512], *data = NULL;
    size_t len = 0;
    rf_err e;
    struct stat st;
    assert_int_equal(stat("/proc/self/status", &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(rf_file_read_all("/proc/self/status", 1 << 20, &data, &len, &e), RF_OK);
    assert_true(len > 0);
    assert_int_equal(strncmp(data, "Name:", 5), 0);
    assert_int_equal(strlen(data), len);
    free(data);
    path_in(f, "ten.json", p, sizeof p);
    put(p, "0123456789");
    assert_int_equal(rf_file_read_all(p, 10, &data, &len, &e), RF_OK);
    assert_int_equal(len, 10);
    assert_string_equal(data, "0123456789");
    free(data);
    /* beyond the first 4 KiB read, through the growth of the buffer */
    path_in(f, "big.json", p, sizeof p);
    FILE *fp = fopen(p, "wb");
    assert_non_null(fp);
    for (int i = 0; i < 10000; i++)
        fputc('a' + i % 26, fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(rf_file_read_all(p, 10000, &data, &len, &e), RF_OK);
    assert_int_equal(len, 10000);
    assert_int_equal(data[9999], 'a' + 9999 % 26);
    free(data);
    assert_int_equal(rf_file_read_all(p, 9999, &data, &len, &e), RF_EIO);
    assert_null(data);
    assert_non_null(strstr(e.msg, "larger than 9999 bytes"));

    alarm(10);
    path_in(f, "fifo", p, sizeof p);
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(rf_file_read_all(p, 1024, &data, &len, &e), RF_EIO);
    assert_null(data);
    assert_non_null(strstr(e.msg, "not a regular file (a FIFO"));
    assert_non_null(strstr(e.msg, p));
    assert_int_equal(rf_file_read_all("/dev/zero", 1024, &data, &len, &e), RF_EIO);
    assert_non_null(strstr(e.msg, "/dev/zero: not a regular file (a character device)"));
    alarm(0);
}

/* The binary, with a FIFO as the config, the profile and the measured file:
 * exit 2 with one line, at once (no writer ever opens the FIFO). */
static void cli_refuses_fifo(void **state)
{
    fixture *f = *state;
    char fifo[512], out[512], err[512];
    path_in(f, "fifo.json", fifo, sizeof fifo);
    path_in(f, "stdout.txt", out, sizeof out);
    path_in(f, "stderr.txt", err, sizeof err);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char svg[512];
    path_in(f, "x.svg", svg, sizeof svg);
    char *as_config[] = {RF_ROOFLINE_BIN, "step", fifo, NULL};
    char *as_hw[] = {RF_ROOFLINE_BIN, "gemm", "1", "4096", "4096", "--hw", fifo, NULL};
    char *as_measured[] = {
        RF_ROOFLINE_BIN, "plot", "llama-3-8b", "--measured", fifo, "-o", svg, NULL};
    char *const *runs[] = {as_config, as_hw, as_measured};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        alarm(20);
        assert_int_equal(run(out, err, (char *const *)runs[i]), 2);
        alarm(0);
        char *msg = slurp(err);
        if (!strstr(msg, "not a regular file (a FIFO"))
            fail_msg("%s: %s", runs[i][1], msg);
        free(msg);
    }
}

/* ---- an overwritten file keeps its mode --------------------------------- */

static mode_t mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_mode & 07777;
}

/* A 0600 file stays 0600 when replaced (it used to become 0644), a 0640
 * or 0755 one keeps those bits too; a new file gets 0666 less the umask. */
static void replace_keeps_mode(void **state)
{
    fixture *f = *state;
    char p[512];
    rf_err e;
    static const mode_t modes[] = {0600, 0640, 0755, 0444 | 0200};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        path_in(f, "kept.csv", p, sizeof p);
        put(p, "old\n");
        assert_int_equal(chmod(p, modes[i]), 0);
        assert_int_equal(rf_file_write_atomic(p, "new\n", 4, NULL, &e), RF_OK);
        assert_int_equal(mode_of(p), modes[i]);
        char *got = slurp(p);
        assert_string_equal(got, "new\n");
        free(got);
        remove(p);
    }
    mode_t mask = umask(022);
    path_in(f, "fresh.csv", p, sizeof p);
    assert_int_equal(rf_file_write_atomic(p, "x\n", 2, NULL, &e), RF_OK);
    assert_int_equal(mode_of(p), 0644);
    umask(mask);
    /* through the binary: -o over a 0600 file */
    char out[512], err[512];
    path_in(f, "stdout.txt", out, sizeof out);
    path_in(f, "stderr.txt", err, sizeof err);
    path_in(f, "private.json", p, sizeof p);
    put(p, "{}\n");
    assert_int_equal(chmod(p, 0600), 0);
    char *argv[] = {RF_ROOFLINE_BIN, "gemm", "1", "4096", "4096", "--json", "-o", p, NULL};
    assert_int_equal(run(out, err, argv), 0);
    assert_int_equal(mode_of(p), 0600);
}

/* ---- a signal during a large -o write leaves no temporary -------------- */

/* Start `roofline sweep ... -o big.csv` (half a million rows, about 50 MB,
 * written as they are computed), wait until its temporary has bytes in it,
 * send sig; the process must end by that signal, with no big.csv.tmp.*
 * left and the old big.csv untouched. */
static void signal_mid_write(const fixture *f, int sig)
{
    char dest[512], out[512], err[512];
    path_in(f, "big.csv", dest, sizeof dest);
    path_in(f, "stdout.txt", out, sizeof out);
    path_in(f, "stderr.txt", err, sizeof err);
    put(dest, "old,contents\n");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(127);
        signal(sig, SIG_DFL); /* whatever the test runner ignores */
        execl(RF_ROOFLINE_BIN, RF_ROOFLINE_BIN, "sweep", "llama-3-8b", "--batch", "1..1000:1",
              "--context", "1..500:1", "--csv", "-o", dest, (char *)NULL);
        _exit(127);
    }
    /* poll (for at most 60 s) until the file being written holds some
     * rows: a named temporary big.csv.tmp.* in the folder, or (Linux,
     * O_TMPFILE) an unnamed one, seen as a descriptor of the process into
     * the folder that is neither its stdout nor its stderr */
    bool seen = false;
    int status;
    for (int i = 0; i < 60000 && !seen; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("the sweep ended (status %#x) before its temporary was seen", status);
        DIR *d = opendir(f->dir);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            char p[512];
            struct stat st;
            path_in(f, de->d_name, p, sizeof p);
            if (!strncmp(de->d_name, "big.csv.tmp.", 12) && stat(p, &st) == 0 && st.st_size > 0)
                seen = true;
        }
        if (d)
            closedir(d);
        char fds[64];
        snprintf(fds, sizeof fds, "/proc/%ld/fd", (long)pid);
        d = opendir(fds);
        while (d && (de = readdir(d))) {
            char p[512], target[512];
            struct stat st;
            snprintf(p, sizeof p, "%s/%s", fds, de->d_name);
            ssize_t n = readlink(p, target, sizeof target - 1);
            if (n <= 0)
                continue;
            target[n] = '\0';
            if (!strncmp(target, f->dir, strlen(f->dir)) && !strstr(target, "stdout.txt") &&
                !strstr(target, "stderr.txt") && stat(p, &st) == 0 && st.st_size > 0)
                seen = true;
        }
        if (d)
            closedir(d);
        if (!seen)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_true(seen);
    assert_int_equal(kill(pid, sig), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
        fail_msg("signal %d: the sweep ended with status %#x, not by the signal", sig, status);
    assert_listing(f, "big.csv stderr.txt stdout.txt");
    char *got = slurp(dest);
    assert_string_equal(got, "old,contents\n");
    free(got);
}

static void sigterm_mid_write(void **state) { signal_mid_write(*state, SIGTERM); }
static void sigint_mid_write(void **state) { signal_mid_write(*state, SIGINT); }
static void sighup_mid_write(void **state) { signal_mid_write(*state, SIGHUP); }
/* issue 28, finding 3: SIGKILL cannot be caught, and a named temporary was
 * left behind every time; an unnamed (O_TMPFILE) one leaves nothing. */
static void sigkill_mid_write(void **state)
{
#if defined(__linux__)
    signal_mid_write(*state, SIGKILL);
#else
    skip(); /* no O_TMPFILE: a named temporary stays after SIGKILL */
#endif
}

/* ---- -o onto a symbolic link writes its target -------------------------- */

/* issue 28, finding 4: the rename replaced the link with a file. Now the
 * target gets the bytes and the link stays a link: a relative link, a
 * chain of two, and a dangling one (its target is created). */
static void symlink_writes_target(void **state)
{
    fixture *f = *state;
    char target[512], link1[512], link2[512], dangling[512], made[512];
    rf_err e;
    path_in(f, "target.json", target, sizeof target);
    path_in(f, "link1.json", link1, sizeof link1);
    path_in(f, "link2.json", link2, sizeof link2);
    path_in(f, "dangling.json", dangling, sizeof dangling);
    path_in(f, "made.json", made, sizeof made);
    put(target, "old\n");
    assert_int_equal(symlink("target.json", link1), 0);
    assert_int_equal(symlink(link1, link2), 0);
    assert_int_equal(symlink("made.json", dangling), 0);
    const char *via[] = {link1, link2};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(rf_file_write_atomic(via[i], "new\n", 4, NULL, &e), RF_OK);
        struct stat st;
        assert_int_equal(lstat(via[i], &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        char *got = slurp(target);
        assert_string_equal(got, "new\n");
        free(got);
        put(target, "old\n");
    }
    assert_int_equal(rf_file_write_atomic(dangling, "x\n", 2, NULL, &e), RF_OK);
    char *got = slurp(made);
    assert_string_equal(got, "x\n");
    free(got);
    /* through the binary: -o onto the link */
    char out[512], err[512];
    path_in(f, "stdout.txt", out, sizeof out);
    path_in(f, "stderr.txt", err, sizeof err);
    char *argv[] = {RF_ROOFLINE_BIN, "gemm", "1", "4096", "4096", "--json", "-o", link1, NULL};
    assert_int_equal(run(out, err, argv), 0);
    struct stat st;
    assert_int_equal(lstat(link1, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    got = slurp(target);
    assert_non_null(strstr(got, "\"flops\""));
    free(got);
    assert_listing(f, "dangling.json link1.json link2.json made.json stderr.txt stdout.txt "
                      "target.json");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_file, setup, teardown),
        cmocka_unit_test_setup_teardown(replaces_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_input, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_missing_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(check_dest_as_write, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_write_keeps_old, setup, teardown),
        cmocka_unit_test_setup_teardown(read_errors_name_the_path, setup, teardown),
        cmocka_unit_test_setup_teardown(dash_writes_stdout, setup, teardown),
        cmocka_unit_test_setup_teardown(cli_keeps_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(reads_to_eof_refuses_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(cli_refuses_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(replace_keeps_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(sigterm_mid_write, setup, teardown),
        cmocka_unit_test_setup_teardown(sigint_mid_write, setup, teardown),
        cmocka_unit_test_setup_teardown(sighup_mid_write, setup, teardown),
        cmocka_unit_test_setup_teardown(sigkill_mid_write, setup, teardown),
        cmocka_unit_test_setup_teardown(symlink_writes_target, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
