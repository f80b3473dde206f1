/* cuda_time.c - the timing engine every CUDA figure goes through.
 *
 * Small kernels (a few microseconds) are shorter than the host's cost of
 * launching them, so calls issued one by one would time the launcher, not
 * the GPU. The calls are captured once into a CUDA graph and the graph is
 * replayed between two events: the GPU then runs them back to back. A
 * probe of direct calls sizes the graph; one timed replay of it sizes the
 * trials, so each lasts at least min_trial_s.
 */
#include <math.h>
#include <string.h>

#include "cuda_internal.h"

#define GRAPH_MAX_CALLS 256
#define MAX_REPS ((int64_t)1 << 22)
#define PROBE_MAX_CALLS 4096

rf_status rf__cuda_timing_check(const rf_cuda_timing *t, rf_err *err)
{
    if (!t)
        return rf_err_set(err, RF_EINVAL, "no timing options");
    if (t->trials < 1 || t->trials > RF_CUDA_MAX_TRIALS)
        return rf_err_set(err, RF_EINVAL, "trials (%d) must be in 1..%d", t->trials,
                          RF_CUDA_MAX_TRIALS);
    if (t->warmup < 0 || t->warmup > 1000)
        return rf_err_set(err, RF_EINVAL, "warm-up calls (%d) must be in 0..1000", t->warmup);
    if (!(t->min_trial_s > 0 && t->min_trial_s <= 10))
        return rf_err_set(err, RF_EINVAL, "minimum trial time (%g s) must be in (0, 10]",
                          t->min_trial_s);
    if (t->max_algos < 1 || t->max_algos > 16)
        return rf_err_set(err, RF_EINVAL, "cuBLASLt candidates (%d) must be in 1..16",
                          t->max_algos);
    return RF_OK;
}

rf_status rf__cuda_rate_of(const rf__cuda_timed *tm, double work, rf_stats *out, rf_err *err)
{
    double r[RF_CUDA_MAX_TRIALS];
    for (int i = 0; i < tm->trials; i++)
        r[i] = work / tm->call_s[i];
    return rf_stats_of(r, (size_t)tm->trials, out, err);
}

static rf_status run_calls(rf_cuda_ctx *ctx, rf__cuda_call_fn fn, void *user, int64_t n,
                           rf_err *err)
{
    for (int64_t i = 0; i < n; i++) {
        rf_status st = fn(ctx, user, i, err);
        if (st != RF_OK)
            return st;
    }
    return RF_OK;
}

/* Capture n calls into an executable graph. Any failure (a call that cannot
 * be captured, an instantiation error) returns false with the stream out of
 * capture and no error pending, and the caller times direct calls instead;
 * a real fault then shows up there with its own message. */
static bool capture(rf_cuda_ctx *ctx, rf__cuda_call_fn fn, void *user, int64_t n,
                    cudaGraphExec_t *exec)
{
    rf_err ignored;
    cudaGraph_t graph = NULL;
    *exec = NULL;
    if (cudaStreamBeginCapture(ctx->stream, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    bool ok = run_calls(ctx, fn, user, n, &ignored) == RF_OK;
    cudaError_t e = cudaStreamEndCapture(ctx->stream, &graph);
    ok = ok && e == cudaSuccess && graph;
    if (ok && cudaGraphInstantiate(exec, graph, 0) != cudaSuccess) {
        *exec = NULL;
        ok = false;
    }
    if (graph)
        (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return ok;
}

/* Seconds between the context's two events, after waiting for the second. */
static rf_status event_seconds(rf_cuda_ctx *ctx, double *s, rf_err *err)
{
    rf_status st = RF_OK;
    float ms = 0;
    RF__CUDA_TRY(cudaEventSynchronize(ctx->stop));
    RF__CUDA_TRY(cudaEventElapsedTime(&ms, ctx->start, ctx->stop));
    *s = 1e-3 * ms;
done:
    return st;
}

/* One unit of a trial: the graph, or the same calls issued directly. */
static rf_status run_unit(rf_cuda_ctx *ctx, rf__cuda_call_fn fn, void *user, int64_t g,
                          cudaGraphExec_t exec, rf_err *err)
{
    if (!exec)
        return run_calls(ctx, fn, user, g, err);
    cudaError_t e = cudaGraphLaunch(exec, ctx->stream);
    return e == cudaSuccess ? RF_OK : rf__cuda_fail(err, e, "cudaGraphLaunch");
}

rf_status rf__cuda_time(rf_cuda_ctx *ctx, rf__cuda_call_fn fn, void *user, int64_t min_calls,
                        const rf_cuda_timing *t, rf__cuda_timed *out, rf_err *err)
{
    rf_status st = RF_OK;
    cudaGraphExec_t exec = NULL;
    rf_stats times;
    RF__TRY(rf__cuda_timing_check(t, err));
    memset(out, 0, sizeof *out);

    RF__TRY(run_calls(ctx, fn, user, t->warmup, err));
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));

    /* Probe: grow the call count until it takes an eighth of a trial. The
     * estimate errs long when launches dominate, which only shortens the
     * trials a graph then runs. */
    int64_t n = 1;
    double probe_s = 0;
    for (;;) {
        RF__CUDA_TRY(cudaEventRecord(ctx->start, ctx->stream));
        RF__TRY(run_calls(ctx, fn, user, n, err));
        RF__CUDA_TRY(cudaEventRecord(ctx->stop, ctx->stream));
        RF__TRY(event_seconds(ctx, &probe_s, err));
        if (probe_s >= t->min_trial_s / 8 || n >= PROBE_MAX_CALLS)
            break;
        n *= 4;
    }
    double per_call = probe_s / (double)n;
    if (!(per_call > 1e-8))
        per_call = 1e-8;
    double want = ceil(t->min_trial_s / per_call);
    int64_t reps = want > (double)MAX_REPS ? MAX_REPS : (int64_t)want;
    if (reps < 1)
        reps = 1;
    int64_t g = reps < GRAPH_MAX_CALLS ? reps : GRAPH_MAX_CALLS;
    if (g < min_calls)
        g = min_calls < GRAPH_MAX_CALLS ? min_calls : GRAPH_MAX_CALLS;

    out->graph = capture(ctx, fn, user, g, &exec);
    RF__TRY(run_unit(ctx, fn, user, g, exec, err)); /* untimed: uploads the graph */
    RF__CUDA_TRY(cudaStreamSynchronize(ctx->stream));
    /* Calibrate again on the unit itself: the probe's direct calls may have
     * been launch-bound, the graph is not. */
    double unit_s = 0;
    RF__CUDA_TRY(cudaEventRecord(ctx->start, ctx->stream));
    RF__TRY(run_unit(ctx, fn, user, g, exec, err));
    RF__CUDA_TRY(cudaEventRecord(ctx->stop, ctx->stream));
    RF__TRY(event_seconds(ctx, &unit_s, err));
    double units = unit_s > 0 ? ceil(t->min_trial_s / unit_s) : 1;
    int64_t launches = units < 1                        ? 1
                       : units > (double)(MAX_REPS / g) ? MAX_REPS / g
                                                        : (int64_t)units;

    for (int tr = 0; tr < t->trials; tr++) {
        double s = 0;
        RF__CUDA_TRY(cudaEventRecord(ctx->start, ctx->stream));
        for (int64_t l = 0; l < launches; l++)
            RF__TRY(run_unit(ctx, fn, user, g, exec, err));
        RF__CUDA_TRY(cudaEventRecord(ctx->stop, ctx->stream));
        RF__TRY(event_seconds(ctx, &s, err));
        if (!(s > 0)) {
            st = rf_err_set(err, RF_EINTERNAL, "a timed trial of %lld calls took no time",
                            (long long)(g * launches));
            goto done;
        }
        out->call_s[tr] = s / (double)(g * launches);
    }
    out->trials = t->trials;
    out->reps = g * launches;
    RF__TRY(rf_stats_of(out->call_s, (size_t)out->trials, &times, err));
    out->median_s = times.median;
done:
    if (exec)
        (void)cudaGraphExecDestroy(exec);
    return st;
}
