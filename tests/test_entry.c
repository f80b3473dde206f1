/* test_entry.c - every recorded command line through the binary and twice
 * through rf_cli_run in one process: the same exit code and bytes.
 *
 * usage: test_entry ROOFLINE|- ROWS WORK [SAVE]
 *
 * ROWS is what tests/test_entry_record.sh wrote while the CLI tables were
 * read: per command line, NUL-terminated fields "R", the table's temporary
 * folder ({TMP}), the argument count N, then the N arguments (argv without
 * argv[0]). Rows with the same folder are one table, run in their order (a
 * row may read what an earlier row of its table wrote); the folder is made
 * empty before a table, as the table runner's fresh mktemp is.
 *
 * Each table runs through the binary (fork and exec, stdin /dev/null, the
 * streams into files under WORK), then through rf_cli_run; after every
 * table a second in-process pass runs the tables again, the last first. So
 * every call comes after other calls than the binary's run did, in a
 * process that has run them all already: state surviving a call shows as a
 * difference. After every call the process must hold the file descriptors
 * and signal dispositions it held before (an output's temporary file, and
 * its handlers, end with the call). The process is named "roofline", as
 * the binary is, for a row that reads /proc/self.
 *
 * With SAVE, the binary's results are also written to that file, a row
 * after another in ROWS' order: "code out_len err_len\n", then the bytes
 * of stdout and of stderr; test_explorer_cli.js holds the WebAssembly
 * module to them, so that the binary runs every row once in a build.
 *
 * ROOFLINE "-" runs no binary: the first in-process pass is the reference
 * the second is held to. The sanitizer build runs it so (the release build
 * has compared every row with the binary; under ASan the binary's runs of
 * every row are the CLI tables' own, and a third run of each costs minutes).
 *
 * measure, bench and profile time this machine (profile also weighs its
 * free memory), so their figures and the verdicts drawn from them change
 * from run to run: theirs are compared on the first word of each line with
 * numbers masked (the same lines, row names and keys in the same order);
 * the exit code is exact for every row. Exit 0 when all agree. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rf_cli.h"

typedef struct row {
    const char *tmp; /* the table's {TMP}                     */
    int argc;        /* with argv[0] = "roofline"             */
    const char **argv;
    int table;         /* rows of one table share a number, 1.. */
    rf_cli_result bin; /* what the binary gave                  */
} row;

/* "test_entry: what: detail", then exit 1. */
static void die(const char *what, const char *detail)
{
    fprintf(stderr, "test_entry: %s: %s\n", what, detail);
    exit(1);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot read", path);
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap && !(buf = realloc(buf, (cap *= 2) + 1)))
            break;
    }
    fclose(f);
    if (!buf)
        die("out of memory for", path);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The next NUL-terminated field at *at, or NULL at the end. */
static const char *field(const char *data, size_t len, size_t *at)
{
    if (*at >= len)
        return NULL;
    const char *f = data + *at;
    size_t n = strnlen(f, len - *at);
    if (*at + n >= len)
        die("ROWS", "ends inside a field");
    *at += n + 1;
    return f;
}

static row *parse_rows(const char *data, size_t len, size_t *n_rows)
{
    size_t at = 0, n = 0, cap = 64;
    row *rows = malloc(cap * sizeof *rows);
    const char *f, *last_tmp = "";
    int table = 0;
    while (rows && (f = field(data, len, &at))) {
        if (strcmp(f, "R"))
            die("ROWS: unexpected field", f);
        const char *tmp = field(data, len, &at), *count = field(data, len, &at);
        if (!tmp || !count)
            die("ROWS", "a row without its folder or count");
        int argc = atoi(count) + 1;
        const char **argv = calloc((size_t)argc + 1, sizeof *argv);
        if (!argv)
            die("ROWS", "out of memory");
        argv[0] = "roofline";
        for (int i = 1; i < argc; i++)
            if (!(argv[i] = field(data, len, &at)))
                die("ROWS", "a row shorter than its count");
        if (strcmp(tmp, last_tmp))
            table++;
        last_tmp = tmp;
        if (n == cap && !(rows = realloc(rows, (cap *= 2) * sizeof *rows)))
            break;
        rows[n++] = (row){.tmp = tmp, .argc = argc, .argv = argv, .table = table};
    }
    if (!rows)
        die("ROWS", "out of memory");
    *n_rows = n;
    return rows;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void remove_tree(const char *path)
{
    if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
        die("cannot remove", path);
}

/* The folder empty and present, as a fresh mktemp -d leaves it. */
static void fresh_folder(const char *path)
{
    remove_tree(path);
    if (mkdir(path, 0700) != 0)
        die("cannot make", path);
}

/* The binary on row r, its streams in files under work, read back. */
static void run_binary(const char *bin, const char *work, row *r)
{
    char out[4096], err[4096];
    snprintf(out, sizeof out, "%s/binary.out", work);
    snprintf(err, sizeof err, "%s/binary.err", work);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork", strerror(errno));
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        close(in);
        close(o);
        close(e);
        execv(bin, (char *const *)r->argv);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) >= 126)
        die("the binary did not run", r->argv[1] ? r->argv[1] : "");
    r->bin.code = WEXITSTATUS(status);
    r->bin.out = slurp(out, &r->bin.out_len);
    r->bin.err = slurp(err, &r->bin.err_len);
}

static bool timed(const row *r)
{
    const char *c = r->argc > 1 ? r->argv[1] : "";
    return !strcmp(c, "measure") || !strcmp(c, "bench") || !strcmp(c, "profile");
}

/* The next line's first word with numbers masked into w (NUL-terminated);
 * false after the last line. */
static bool first_word(const char **at, const char *end, char *w, size_t cap)
{
    const char *p = *at;
    if (p >= end)
        return false;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    size_t n = 0;
    bool digits = false;
    for (; p < end && *p != '\n' && *p != ' ' && *p != '\t'; p++) {
        bool d = (*p >= '0' && *p <= '9') || (digits && *p == '.');
        if (d && !digits && n + 1 < cap)
            w[n++] = '#';
        else if (!d && n + 1 < cap)
            w[n++] = *p;
        digits = d;
    }
    w[n] = '\0';
    while (p < end && *p != '\n')
        p++;
    *at = p + 1;
    return true;
}

static bool same_words(const char *a, size_t na, const char *b, size_t nb)
{
    const char *ea = a + na, *eb = b + nb;
    char wa[256], wb[256];
    for (;;) {
        bool more_a = first_word(&a, ea, wa, sizeof wa), more_b = first_word(&b, eb, wb, sizeof wb);
        if (more_a != more_b || (more_a && strcmp(wa, wb)))
            return false;
        if (!more_a)
            return true;
    }
}

/* The first line where a and b differ (1-based), 0 when they are equal. */
static size_t first_diff_line(const char *a, size_t na, const char *b, size_t nb)
{
    size_t line = 1, i = 0;
    for (; i < na && i < nb && a[i] == b[i]; i++)
        line += a[i] == '\n';
    return i == na && i == nb ? 0 : line;
}

static void show_line(const char *tag, const char *s, size_t len, size_t line)
{
    size_t i = 0;
    for (size_t l = 1; l < line && i < len; i++)
        l += s[i] == '\n';
    size_t j = i;
    while (j < len && s[j] != '\n' && j - i < 300)
        j++;
    printf("    %-10s: %.*s\n", tag, (int)(j - i), s + i);
}

/* Whether got agrees with the reference run of r (ref names it: the binary
 * or the first pass); prints why not. */
static bool agrees(const row *r, size_t k, int pass, const char *ref, const rf_cli_result *got)
{
    const rf_cli_result *want = &r->bin;
    bool loose = timed(r);
    const char *why = NULL;
    const char *w = NULL, *g = NULL;
    size_t wn = 0, gn = 0;
    if (got->code != want->code)
        why = "exit code";
    for (int s = 0; s < 2 && !why; s++) {
        w = s ? want->err : want->out, wn = s ? want->err_len : want->out_len;
        g = s ? got->err : got->out, gn = s ? got->err_len : got->out_len;
        bool same = loose ? same_words(w, wn, g, gn) : wn == gn && !memcmp(w, g, wn);
        if (!same)
            why = s ? "stderr" : "stdout";
    }
    if (!why)
        return true;
    printf("FAIL command line %zu (pass %d):", k, pass);
    for (int i = 1; i < r->argc; i++)
        printf(" %s", r->argv[i]);
    printf("\n    %s differs%s: %s exit %d, rf_cli_run exit %d\n", why,
           loose ? " (first words, numbers masked)" : "", ref, want->code, got->code);
    if (w) {
        size_t line = first_diff_line(w, wn, g, gn);
        printf("    first difference on line %zu\n", line);
        show_line(ref, w, wn, line);
        show_line("rf_cli_run", g, gn, line);
    }
    return false;
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static const int watched[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_WATCHED (sizeof watched / sizeof watched[0])

static void dispositions(void (*out[N_WATCHED])(int))
{
    for (size_t i = 0; i < N_WATCHED; i++) {
        struct sigaction sa;
        sigaction(watched[i], NULL, &sa);
        out[i] = sa.sa_handler;
    }
}

/* Row k (from 1) through rf_cli_run on pass `pass`, into res; whether the
 * call left the process's file descriptors and signal dispositions as it
 * found them. */
static bool call(const row *r, size_t k, int pass, rf_cli_result *res)
{
    void (*before[N_WATCHED])(int), (*after[N_WATCHED])(int);
    dispositions(before);
    int fds = open_fds();
    rf_cli_run(r->argc, r->argv, res);
    dispositions(after);
    bool ok = true;
    if (open_fds() != fds) {
        printf("FAIL command line %zu (pass %d): a file descriptor left open\n", k, pass);
        ok = false;
    }
    if (memcmp(before, after, sizeof before)) {
        printf("FAIL command line %zu (pass %d): a signal handler left installed\n", k, pass);
        ok = false;
    }
    return ok;
}

/* Row k on pass `pass`; whether it agrees with the reference (named ref)
 * and left the process clean. */
static bool run_in_process(const row *r, size_t k, int pass, const char *ref)
{
    rf_cli_result res;
    bool ok = call(r, k, pass, &res);
    ok &= agrees(r, k, pass, ref, &res);
    rf_cli_result_free(&res);
    return ok;
}

/* Row k as the reference of the second pass (no binary), kept in r->bin. */
static bool run_reference(row *r, size_t k) { return call(r, k, 1, &r->bin); }

/* The binary's results of every row into path (SAVE above), whole or not
 * at all: written beside it, then renamed. */
static void save_results(const char *path, const row *rows, size_t n)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.part", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        die("cannot write", tmp);
    for (size_t k = 0; k < n; k++) {
        const rf_cli_result *b = &rows[k].bin;
        fprintf(f, "%d %zu %zu\n", b->code, b->out_len, b->err_len);
        fwrite(b->out, 1, b->out_len, f);
        fwrite(b->err, 1, b->err_len, f);
    }
    if (ferror(f) | fclose(f) || rename(tmp, path))
        die("cannot write", path);
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: test_entry ROOFLINE ROWS WORK [SAVE]\n");
        return 2;
    }
    size_t len, n, failed = 0;
    char *data = slurp(argv[2], &len);
    row *rows = parse_rows(data, len, &n);
    if (n == 0)
        die("no command line in", argv[2]);
    prctl(PR_SET_NAME, "roofline", 0, 0, 0);
    int tables = rows[n - 1].table;
    bool reference = !strcmp(argv[1], "-");
    const char *ref = reference ? "pass 1" : "binary";

    /* each table through the binary, then in process */
    for (size_t first = 0; first < n;) {
        size_t end = first;
        while (end < n && rows[end].table == rows[first].table)
            end++;
        fresh_folder(rows[first].tmp);
        for (size_t k = first; k < end; k++)
            if (reference)
                failed += !run_reference(&rows[k], k + 1);
            else
                run_binary(argv[1], argv[3], &rows[k]);
        if (!reference) {
            fresh_folder(rows[first].tmp);
            for (size_t k = first; k < end; k++)
                failed += !run_in_process(&rows[k], k + 1, 1, ref);
        }
        first = end;
    }
    if (argc == 5 && !reference)
        save_results(argv[4], rows, n);
    /* again, the last table first */
    for (int t = tables; t >= 1; t--) {
        size_t k = 0;
        while (k < n && rows[k].table != t)
            k++;
        if (k < n)
            fresh_folder(rows[k].tmp);
        for (; k < n && rows[k].table == t; k++)
            failed += !run_in_process(&rows[k], k + 1, 2, ref);
    }

    for (size_t k = 0; k < n; k++) {
        if (k == 0 || rows[k].table != rows[k - 1].table)
            remove_tree(rows[k].tmp);
        free(rows[k].argv);
        rf_cli_result_free(&rows[k].bin);
    }
    free(rows);
    free(data);
    printf("test_entry: %zu command lines in %d tables: %s in one process: %zu differences\n", n,
           tables,
           reference ? "rf_cli_run twice, the second held to the first"
                     : "the binary, then rf_cli_run twice",
           failed);
    return failed ? 1 : 0;
}
