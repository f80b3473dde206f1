/* measure_mpi.c - `measure --mpi`: a cluster measured with MPI (the
 * session and collectives in src/mpi, mpi_measure.h). Every rank runs this;
 * rank 0 writes the profile and the table. A rank that fails writes one
 * line naming itself and the cause, then aborts every rank (MPI_Abort), so
 * all exit non-zero and no profile is written (rank 0 writes it last,
 * atomically). --timeout arms a watchdog on every rank. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure_mpi.h"
#include "lab_view.h"
#include "opts.h"
#include "mpi_measure.h"
#include "roofline/rf_cuda.h"
#include "roofline/rf_measure.h"

/* The watchdog's line, "roofline CMD: rank R: timed out after S s
 * (STAGE)", written by its signal handler, which may only write(): what it
 * names is set before the watchdog is armed, as values, and the handler
 * turns them into digits on its own stack. `stage` is what the rank is
 * doing. Process-wide, as the watchdog is (SIGALRM, alarm) and as MPI is
 * (one session a process, from MPI_Init to MPI_Finalize): one measure --mpi
 * runs in a process at a time, and what the handler writes goes to the
 * process's fd 2 before it ends the rank. */
static const char *volatile alarm_cmd;
static volatile sig_atomic_t alarm_rank;
static volatile sig_atomic_t alarm_digits; /* the seconds' 6 significant digits */
static volatile sig_atomic_t alarm_exp10;  /* and their decimal exponent         */
static volatile sig_atomic_t alarm_stage;
static const char *const stages[] = {"starting",
                                     "measuring the node's roof",
                                     "measuring the GPU",
                                     "gathering the nodes",
                                     "timing the collectives",
                                     "writing the profile"};
enum { S_START, S_ROOF, S_GPU, S_GATHER, S_LINKS, S_WRITE };

/* v's decimal digits at out, at least min of them (leading zeros); their
 * count. */
static size_t put_digits(char *out, unsigned long v, size_t min)
{
    char rev[24];
    size_t n = 0;
    do
        rev[n++] = (char)('0' + v % 10);
    while ((v /= 10) || n < min);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    return n;
}

/* The seconds as printf's %g writes them, from their six significant
 * digits and decimal exponent (alarm_digits, alarm_exp10): trailing zeros
 * dropped; exponent form below 1e-4 or from 1e6, fixed otherwise. Their
 * length at out (32 bytes). */
static size_t put_seconds(char *out)
{
    unsigned long d = (unsigned long)alarm_digits;
    int x = alarm_exp10;
    size_t n_sig = 6, n = 0;
    while (n_sig > 1 && d % 10 == 0)
        d /= 10, n_sig--;
    char sig[8];
    put_digits(sig, d, n_sig);
    if (x < -4 || x >= 6) {
        out[n++] = sig[0];
        if (n_sig > 1)
            out[n++] = '.';
        for (size_t i = 1; i < n_sig; i++)
            out[n++] = sig[i];
        out[n++] = 'e';
        out[n++] = x < 0 ? '-' : '+';
        return n + put_digits(out + n, (unsigned long)(x < 0 ? -x : x), 2);
    }
    if (x < 0) { /* 0.000ddd */
        out[n++] = '0', out[n++] = '.';
        for (int i = -1; i > x; i--)
            out[n++] = '0';
    }
    for (size_t i = 0; i < n_sig || (x >= 0 && i <= (size_t)x); i++) {
        if (x >= 0 && i == (size_t)x + 1)
            out[n++] = '.';
        out[n++] = i < n_sig ? sig[i] : '0';
    }
    return n;
}

/* Appends the n bytes at s to the line at out (len so far); the new length. */
static size_t put(char *out, size_t len, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[len + i] = s[i];
    return len + n;
}

/* The line is assembled on the handler's stack and written by one write():
 * every rank times out at once, and a line written in pieces interleaves with
 * the other ranks' (CI saw "roofline roofline measuremeasure: rank : rank 10"),
 * where one write of under PIPE_BUF bytes to a pipe is never split. */
static void on_alarm(int sig)
{
    (void)sig;
    const char *cmd = alarm_cmd, *what = stages[alarm_stage];
    char line[256], num[32];
    size_t cmd_len = strlen(cmd), len = 0;
    if (cmd_len > 64)
        cmd_len = 64; /* a command name; the bound keeps the line in its buffer */
    len = put(line, len, "roofline ", 9);
    len = put(line, len, cmd, cmd_len);
    len = put(line, len, ": rank ", 7);
    len = put(line, len, num, put_digits(num, (unsigned long)alarm_rank, 1));
    len = put(line, len, ": timed out after ", 18);
    len = put(line, len, num, put_seconds(num));
    len = put(line, len, " s (", 4);
    len = put(line, len, what, strlen(what));
    len = put(line, len, ")\n", 2);
    if (write(STDERR_FILENO, line, len) < 0)
        _exit(RF_EXIT_FAIL);
    _exit(RF_EXIT_FAIL); /* mpirun ends the other ranks of a job one left */
}

/* Arms the watchdog: the line's values now ("%.5e" gives the seconds'
 * digits and exponent as %g rounds them), SIGALRM after timeout_s. */
static void watchdog(const cli_ctx *ctx, int rank, double timeout_s)
{
    if (!(timeout_s > 0))
        return;
    char e[32];
    snprintf(e, sizeof e, "%.5e", timeout_s); /* "d.ddddde+XX" */
    alarm_digits = (e[0] - '0') * 100000 + atoi(e + 2);
    alarm_exp10 = atoi(strchr(e, 'e') + 1);
    alarm_cmd = ctx->cmd;
    alarm_rank = rank;
    signal(SIGALRM, on_alarm);
    alarm((unsigned)(timeout_s + 0.999));
}

/* One line naming the rank and the cause, then every rank ends. */
static void rank_failed(rf_mpi *m, const cli_ctx *ctx, const rf_err *e)
{
    fprintf(ctx->io->err, "roofline %s: rank %d: %s\n", ctx->cmd, rf_mpi_rank(m), e->msg);
    fflush(ctx->io->err);
    rf_mpi_abort(m, RF_EXIT_FAIL);
}

/* A person is watching: the command's error stream is a terminal, or,
 * under mpirun (whose ranks write stderr into a pipe it forwards), the
 * process still has its controlling terminal. */
static bool at_terminal(const cli_io *io)
{
    if (io->err_tty)
        return true;
    int fd = open("/dev/tty", O_RDONLY | O_NOCTTY);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* Progress of one stage of the measurement, on err. */
typedef struct stage_talk {
    FILE *err;
    const char *stage; /* "node roof", "links" */
} stage_talk;

static void progress(void *user, int done, int total, const char *what)
{
    const stage_talk *t = user;
    fprintf(t->err, "\r  %s [%3d/%3d] %-44.44s", t->stage, done + 1, total, what);
    fflush(t->err);
}

/* The rank's GPU (node rank i measures cuda:i when there is one), its
 * roof into *gpu; false when this rank has none. */
static bool measure_gpu(rf_mpi *m, const cli_ctx *ctx, bool quick, rf_hw_profile *gpu)
{
    int count = 0;
    rf_err e;
    if (!rf_cuda_built() || rf_cuda_device_count(&count, &e) || rf_mpi_node_rank(m) >= count)
        return false;
    char device[16];
    snprintf(device, sizeof device, "cuda:%d", rf_mpi_node_rank(m));
    rf_cuda_ctx *cu = NULL;
    cli_cuda_talk talk;
    rf_status s = rf_cuda_ctx_new(rf_mpi_node_rank(m), &cu, &e);
    if (!s)
        s = cli_cuda_profile(ctx, cu, device, quick, 0, quick ? 4096 : 8192, gpu, &talk, &e);
    rf_cuda_ctx_free(cu);
    if (s)
        rank_failed(m, ctx, &e);
    return true;
}

static void node_table(rf_report *r, const rf_cluster *c)
{
    rf_report_table(r, "nodes", "nodes (each roof measured once, by all its ranks as one team)");
    rf_report_col(r, "name", "node", RF_U_NONE);
    rf_report_col(r, "ranks", "ranks", RF_U_INT);
    rf_report_col(r, "devices", "GPUs", RF_U_INT);
    rf_report_col(r, "bandwidth_bytes_per_s", "memory roof", RF_U_BW);
    rf_report_col(r, "peak_fp32", "fp32 peak", RF_U_FLOP_RATE);
    rf_report_col(r, "peak_fp64", "fp64 peak", RF_U_FLOP_RATE);
    for (size_t i = 0; i < c->n_nodes; i++) {
        const rf_cluster_node *n = &c->nodes[i];
        rf_report_row(r);
        rf_report_cell_str(r, n->name);
        rf_report_cell_int(r, (uint64_t)n->ranks);
        rf_report_cell_int(r, (uint64_t)n->devices);
        rf_report_cell_num(r, n->bandwidth_bytes_per_s);
        rf_report_cell_num(r, n->peak_flops_per_s[RF_FP32]);
        rf_report_cell_num(r, n->peak_flops_per_s[RF_FP64]);
    }
}

static void link_tables(rf_report *r, const rf_cluster *c)
{
    rf_report_table(r, "links", "links: t = latency + f n / bandwidth, fitted on relative error");
    rf_report_col(r, "class", "class", RF_U_NONE);
    rf_report_col(r, "collective", "collective", RF_U_NONE);
    rf_report_col(r, "ranks", "ranks", RF_U_INT);
    rf_report_col(r, "latency_s", "latency", RF_U_SECONDS);
    rf_report_col(r, "bandwidth_bytes_per_s", "bus bandwidth", RF_U_BW);
    rf_report_col(r, "residual", "rms residual", RF_U_PERCENT);
    rf_report_col(r, "min_bytes", "from", RF_U_BYTES_BIN);
    rf_report_col(r, "max_bytes", "to", RF_U_BYTES_BIN);
    for (size_t i = 0; i < c->n_links; i++) {
        const rf_cluster_link *l = &c->links[i];
        rf_report_row(r);
        rf_report_cell_str(r, rf_link_class_name(l->cls));
        rf_report_cell_str(r, rf_cluster_kind_name(l->kind));
        rf_report_cell_int(r, (uint64_t)l->ranks);
        rf_report_cell_num(r, l->latency_s);
        rf_report_cell_num(r, l->bw_bytes_per_s);
        rf_report_cell_num(r, l->residual);
        rf_report_cell_int(r, l->points[0].bytes);
        rf_report_cell_int(r, l->points[l->n_points - 1].bytes);
    }
    rf_report_table(r, "points", "every size (best trial; busbw = algbw x f)");
    rf_report_col(r, "class", "class", RF_U_NONE);
    rf_report_col(r, "collective", "collective", RF_U_NONE);
    rf_report_col(r, "bytes", "size", RF_U_BYTES_BIN);
    rf_report_col(r, "iterations", "iterations", RF_U_INT);
    rf_report_col(r, "time_s", "time", RF_U_SECONDS);
    rf_report_col(r, "median_s", "median", RF_U_SECONDS);
    rf_report_col(r, "algbw_bytes_per_s", "algbw", RF_U_BW);
    rf_report_col(r, "busbw_bytes_per_s", "busbw", RF_U_BW);
    rf_report_col(r, "fit_s", "fit", RF_U_SECONDS);
    for (size_t i = 0; i < c->n_links; i++) {
        const rf_cluster_link *l = &c->links[i];
        double f = rf_cluster_bus_factor(l->kind, l->ranks);
        for (size_t k = 0; k < l->n_points; k++) {
            const rf_cluster_point *p = &l->points[k];
            rf_report_row(r);
            rf_report_cell_str(r, rf_link_class_name(l->cls));
            rf_report_cell_str(r, rf_cluster_kind_name(l->kind));
            rf_report_cell_int(r, p->bytes);
            rf_report_cell_int(r, (uint64_t)p->iterations);
            rf_report_cell_num(r, p->time_s);
            rf_report_cell_num(r, p->median_s);
            rf_report_cell_num(r, rf_cluster_algbw(p));
            rf_report_cell_num(r, rf_cluster_busbw(l, p));
            rf_report_cell_num(r, l->latency_s + f * (double)p->bytes / l->bw_bytes_per_s);
        }
    }
}

static rf_report *cluster_report(const rf_hw_profile *p, const rf_mpi_links_plan *plan, bool gpu)
{
    const rf_cluster *c = &p->cluster;
    char title[256], lo[32], hi[32];
    snprintf(title, sizeof title, "measured cluster: %d rank%s on %zu node%s (%s)", c->ranks,
             c->ranks == 1 ? "" : "s", c->n_nodes, c->n_nodes == 1 ? "" : "s", c->mpi);
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
    rf_report_assume(r,
                     "nodes: ranks grouped by shared memory (MPI_Comm_split_type); each "
                     "node's roof measured once by its first rank with a team pinned over "
                     "every core its ranks were bound to, the others waiting asleep; the "
                     "profile's roof is rank 0's %s",
                     gpu ? "GPU's" : "node's");
    if (c->ranks == 1) {
        rf_report_note(r, "one rank: a cluster of one node, its roof only and no links (start "
                          "it with mpirun -np N for the collectives)");
    } else {
        rf_report_assume(r,
                         "collectives: all-reduce (float sum), all-gather, all-to-all and "
                         "a ring send (MPI_Sendrecv to the next rank), %s to %s, x %llu a "
                         "size; "
                         "in a node every node's ranks at once, between nodes one rank a "
                         "node",
                         rf_fmt((double)plan->min_bytes, RF_U_BYTES_BIN, lo, sizeof lo),
                         rf_fmt((double)plan->max_bytes, RF_U_BYTES_BIN, hi, sizeof hi),
                         (unsigned long long)plan->step);
        rf_report_assume(r,
                         "timing (OSU, nccl-tests): a warm-up, then iterations doubled "
                         "until a trial's collectives last >= %.0f ms on the slowest rank "
                         "(or, from 16 iterations, the trial, barriers included, 4 x that), %d "
                         "trials (the last of the calibration the first); an iteration is a "
                         "barrier and the "
                         "collective timed alone; a trial is the slowest rank's mean; time = "
                         "the best trial, median beside it",
                         plan->min_time_s * 1e3, plan->trials);
        rf_report_assume(r, "nccl-tests' figures: algbw = n / t; busbw = algbw x f, f = 2 "
                            "(r-1)/r for all-reduce, (r-1)/r for all-gather and all-to-all, 1 "
                            "for a send; n of an all-gather the gathered buffer, of an "
                            "all-to-all what a rank sends");
    }
    rf_report_section(r, "roof", "roof (rank 0's node)");
    rf_report_num(r, "bandwidth_bytes_per_s", "memory roof", p->bandwidth_bytes_per_s, RF_U_BW);
    rf_report_num(r, "peak_fp32", "fp32 peak", p->peak_flops_per_s[RF_FP32], RF_U_FLOP_RATE);
    node_table(r, c);
    if (c->n_links)
        link_tables(r, c);
    return r;
}

/* Rank 0: the profile to -o FILE or the command's output, and the table.
 * Messages name the rank (ctx->cmd is "measure: rank 0"). */
static int emit(const cli_ctx *ctx, const rf_hw_profile *p, const rf_mpi_links_plan *plan, bool gpu)
{
    bool printed;
    int rc = cli_profile_json(ctx, p, &printed);
    if (rc || printed)
        return rc;
    rf_report *r = cluster_report(p, plan, gpu);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    rc = cli_profile_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

int cli_mpi_measure(cli_ctx *ctx, const cli_mpi_args *a, rf_hw_profile *p)
{
    rf_mpi *m = NULL;
    rf_err e;
    if (rf_mpi_open(NULL, NULL, &m, &e))
        return cli_fail_err(ctx, &e);
    char cmd[48];
    snprintf(cmd, sizeof cmd, "%s: rank %d", ctx->cmd, rf_mpi_rank(m));
    cli_ctx rank_ctx = *ctx;
    rank_ctx.cmd = cmd;
    watchdog(ctx, rf_mpi_rank(m), a->timeout_s);
    bool shown = rf_mpi_rank(m) == 0 && at_terminal(ctx->io);
    stage_talk roof_talk = {ctx->io->err, "node roof"}, links_talk = {ctx->io->err, "links"};

    alarm_stage = S_ROOF;
    rf_measure_opts mo = {.threads = (int)a->threads,
                          .quick = a->quick,
                          .isa = a->isa,
                          .progress = shown ? progress : NULL,
                          .progress_user = &roof_talk};
    if (rf_mpi_node_roof(m, &mo, p, &e))
        rank_failed(m, ctx, &e);
    rf_mpi_rank_roof mine = {.cpu = rf_mpi_node_rank(m) == 0};
    mine.bandwidth_bytes_per_s = p->bandwidth_bytes_per_s;
    memcpy(mine.peak_flops_per_s, p->peak_flops_per_s, sizeof mine.peak_flops_per_s);

    alarm_stage = S_GPU;
    rf_hw_profile *gpu = calloc(1, sizeof *gpu);
    if (!gpu)
        rank_failed(m, ctx, &(rf_err){.status = RF_ENOMEM, .msg = "out of memory"});
    if ((mine.gpu = measure_gpu(m, ctx, a->quick, gpu))) {
        mine.bandwidth_bytes_per_s = gpu->bandwidth_bytes_per_s;
        memcpy(mine.peak_flops_per_s, gpu->peak_flops_per_s, sizeof mine.peak_flops_per_s);
        if (rf_mpi_rank(m) == 0) /* the profile's roof: the device the model runs on */
            *p = *gpu;
    }
    free(gpu);

    alarm_stage = S_GATHER;
    if (rf_mpi_gather_nodes(m, &mine, &p->cluster, &e))
        rank_failed(m, ctx, &e);
    alarm_stage = S_LINKS;
    rf_mpi_links_plan plan = rf_mpi_links_plan_of(a->quick);
    if (rf_mpi_links(m, &plan, shown ? progress : NULL, &links_talk, &p->cluster, &e))
        rank_failed(m, ctx, &e);
    if (shown)
        fprintf(ctx->io->err, "\r%-78s\r", "");

    if (rf_mpi_size(m) == 1)
        fprintf(ctx->io->err,
                "roofline %s: one rank (not started by mpirun -np N): a cluster of one "
                "node, its roof only, no links\n",
                ctx->cmd);
    alarm_stage = S_WRITE;
    int rc = RF_EXIT_OK;
    if (rf_mpi_rank(m) == 0 && (rc = emit(&rank_ctx, p, &plan, mine.gpu)))
        rf_mpi_abort(m, rc); /* its line is written; no rank may end well */
    alarm(0);
    rf_mpi_close(m);
    return rc;
}
