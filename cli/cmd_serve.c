/* cmd_serve.c - `roofline serve MODEL --prompt P --output-tokens N --concurrency C`
 * or `--rate R`: an engine's scheduler simulated request by request under
 * a closed or open loop (rf_sim.h through sim.h: latency percentiles,
 * throughput, goodput, KV use, preemptions). `--steady-state --concurrency
 * B` keeps the older model, continuous batching in steady state with
 * chunked prefill (rf_serve.h):
 * the mixed step every iteration runs, TPOT, TTFT, tokens/s, the KV in use
 * against the pool and the largest concurrency the pool admits; with
 * --tp/--pp/--ep/--dp the same steady state on a layout (rf_serve_par); with
 * --predict its step predicted on the --hw profile's calibration (rf_predict.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "gpu_predict.h"
#include "measure_view.h"
#include "request.h"
#include "sim.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_serve.h"

enum { O_CONCURRENCY = 1000, O_CHUNK, O_MAX_TOKENS };

static const cli_opt opts[] = {
    CLI_REQUEST_LEN_OPTS,
    {"concurrency", 1, O_CONCURRENCY, "C",
     "closed loop: C clients (--steady-state: B requests in flight)"},
    CLI_SIM_LOAD_OPTS,
    {"chunk", 1, O_CHUNK, "C",
     "prompt tokens a chunk at most (default: the step's budget; --steady-state: the prompt)"},
    {"max-batched-tokens", 1, O_MAX_TOKENS, "T",
     "tokens a step at most, decode included (default " CLI_STR(CLI_SIM_MAX_TOKENS) ")"},
    CLI_SIM_ENGINE_OPTS,
    CLI_SIM_SCHEDULE_OPTS,
    CLI_SIM_SLO_OPTS,
    {"disagg", 1, CLI_O_DISAGG, "P:D", "disaggregated: P prefill and D decode workers (open loop)"},
    CLI_SIM_DISAGG_OPTS,
    {"steady-state", 0, CLI_O_STEADY, NULL,
     "the steady-state model (one mean step, queueing not modelled) instead of the simulation"},
    CLI_REQUEST_STEP_OPTS,
    CLI_REQUEST_SPEC_OPTS,
    CLI_PREDICT_OPT,
    CLI_GPU_OPTS,
    CLI_PAR_OPTS,
    {0},
};

typedef struct args {
    cli_request rq;
    rf_serve_opts so;
    cli_spec sp;
    cli_par par; /* many devices */
    cli_sim sim; /* the simulation's options, lengths as typed */
} args;

/* A length as typed: a whole number also goes to the steady state's
 * request (with its range check); a distribution only to the simulation. */
static int length(cli_ctx *ctx, int id, const char *arg, args *a)
{
    *(id == CLI_O_PROMPT ? &a->sim.prompt : &a->sim.output) = arg;
    if (arg[0] && arg[strspn(arg, "+-0123456789 ")] == '\0')
        return cli_request_opt(ctx, id, arg, &a->rq);
    return RF_EXIT_OK;
}

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    if (id == CLI_O_BACKEND)
        a->sim.engine = arg; /* its default schedule */
    if (id >= CLI_O_BACKEND && id <= CLI_O_CALIBRATION) /* --predict on kernel tables */
        return cli_gpu_opt(ctx, id, arg);
    switch (id) {
    case O_CONCURRENCY:
        a->sim.concurrency = 1;
        return cli_i64(ctx, "--concurrency", arg, 1, RF_DIM_MAX, &a->so.concurrency);
    case O_CHUNK:
        return cli_i64(ctx, "--chunk", arg, 1, RF_DIM_MAX, &a->so.chunk);
    case O_MAX_TOKENS:
        return cli_i64(ctx, "--max-batched-tokens", arg, 1, RF_DIM_MAX,
                       &a->so.max_batched_tokens);
    case CLI_O_PROMPT:
    case CLI_O_OUTPUT:
        return length(ctx, id, arg, a);
    case CLI_O_PREDICT:
        return cli_step_opt(ctx, id, arg, &a->rq.o);
    default: {
        int rc = cli_sim_opt(ctx, id, arg, &a->sim);
        if (rc == CLI_NOT_MINE)
            rc = cli_spec_opt(ctx, id, arg, &a->sp);
        if (rc == CLI_NOT_MINE)
            rc = cli_par_opt(ctx, id, arg, &a->par);
        return rc == CLI_NOT_MINE ? cli_request_opt(ctx, id, arg, &a->rq) : rc;
    }
    }
}

/* pv: the layout's steady state (NULL: one device). */
static void assume(rf_report *r, const rf_serve *sv, const rf_serve_par *pv)
{
    const rf_serve_opts *so = &sv->opts;
    rf_report_assume(r, "continuous batching, steady state: %lld requests in flight, each "
                        "step B decode tokens at the mean context P + N/2 = %lld and "
                        "ceil(B P / N) = %lld prompt tokens (what keeps B in flight)",
                     (long long)so->concurrency, (long long)sv->decode_context,
                     (long long)sv->prompt_tokens);
    rf_report_assume(r, "chunked prefill: chunks of at most %lld tokens%s (%lld of %lld and "
                        "%s); a chunk attends to the mean cached context of a prompt's "
                        "chunks, %lld, plus itself",
                     (long long)sv->chunk,
                     so->max_batched_tokens ? ", cut to --max-batched-tokens less the decode "
                                              "tokens"
                                            : "",
                     (long long)sv->full_chunks, (long long)sv->chunk,
                     sv->tail_chunk ? "one shorter" : "none shorter",
                     (long long)sv->chunk_context);
    rf_report_assume(r, "mixed step: linear layers at M = decode + prompt tokens (weights read "
                        "once), lm_head one position a sequence, decode attention and chunk "
                        "attention each reading its own KV once");
    if (!pv)
        rf_report_assume(r, "TPOT = the step floor; output tokens/s = B / floor; TTFT = "
                            "ceil(%s / C) = %lld steps at that floor, queueing not modelled",
                         so->prefix.shared ? "(P - P_s)" : "P", (long long)sv->ttft_steps);
    else
        rf_report_assume(r, "on the layout: every device runs its shard's mixed step; the "
                            "all-reduces, the embedding's, EP's dispatch and combine and the "
                            "pipeline's sends carry all M = decode + prompt tokens of a "
                            "micro-batch (%lld), lm_head's all-gather its L = %lld logit rows "
                            "(decode tokens + one a chunk); PP cuts the step into %lld "
                            "micro-%s of ceil(B / m) = %lld decode and ceil(T_p / m) = %lld "
                            "prompt tokens; TPOT = the cycle = max(a micro-batch's latency "
                            "through the stages and sends, m x the slowest stage's floor); "
                            "TTFT = ceil(%s / C) = %lld %s, queueing not modelled; "
                            "tokens/s = D B / cycle",
                         (long long)pv->rows, (long long)pv->logit_rows,
                         (long long)pv->micro_batches,
                         pv->micro_batches == 1 ? "batch" : "batches",
                         (long long)pv->micro_decode, (long long)pv->micro_prompt_tokens,
                         so->prefix.shared ? "(P - P_s)" : "P", (long long)pv->ttft_steps,
                         cli_plural(pv->ttft_steps, "cycle", "cycles"));
    if (so->prefix.shared)
        rf_report_assume(r, "shared prefix: %lld of the %lld prompt tokens common to every "
                            "request, computed once and held once: a request prefills its own "
                            "%lld (P - P_s in the prompt tokens a step and in TTFT), its chunks "
                            "after the prefix; decode reads it %s",
                         (long long)so->prefix.shared, (long long)so->prompt,
                         (long long)(so->prompt - so->prefix.shared),
                         so->prefix.cascade ? "once a step (--prefix-kernel cascade: P_s kv_tok "
                                              "+ B (S_d - P_s) kv_tok)"
                                            : "once a sequence, as the common kernels do "
                                              "(--prefix-kernel cascade reads it once a step)");
}

/* --draft: the speculative steady state beside the plain one. */
static void speculative(rf_report *r, const rf_model *d, const rf_serve_spec *sp)
{
    rf_report_assume(r, "speculative: an iteration = K draft steps of the B sequences at S_d.."
                        "S_d+K-1 (the first also prefills the iteration's prompt tokens into "
                        "the draft's cache) + one target step verifying K + 1 tokens a sequence "
                        "with the prompt chunks (linear layers at M = B (K+1) + T_p, attention "
                        "K + 1 queries, KV read once, lm_head on all K + 1); T_p = ceil(B E P / "
                        "N) keeps B in flight; tokens an iteration E = (1 - alpha^(K+1)) / (1 - "
                        "alpha), acceptances independent; TTFT = ceil(P / C) iterations");
    cli_spec_section(r, "speculative decoding (steady state)", d, &sp->spec);
    rf_report_int(r, "prompt_tokens", "prompt tokens an iteration", (uint64_t)sp->prompt_tokens,
                  RF_U_INT);
    rf_report_num(r, "ttft_s", "TTFT with speculation", sp->ttft_s, RF_U_SECONDS);
}

/* --draft MODEL: the draft d in the request's dtypes, and the speculative
 * steady state of the same requests. */
static int speculate(cli_ctx *ctx, const args *a, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const rf_serve *sv, rf_model *d, rf_serve_spec *sp)
{
    rf_step_opts draft_o;
    rf_err e;
    int rc = cli_spec_draft(ctx, &a->sp, m, &a->rq.o, d, &draft_o);
    if (rc)
        return rc;
    if (rf_serve_spec_compute(m, d, o, &draft_o, roof, sv, a->sp.k, a->sp.accept, sp, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--draft: %s", e.msg);
    return RF_EXIT_OK;
}

/* The KV held against the pool (the shared prefix once), in the current
 * section; *most gets the largest concurrency the pool admits, or -1. */
static void kv_in_use(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                      const args *a, const rf_serve *sv, double *most)
{
    rf_fit fit;
    rf_err e;
    char text[160];
    if (rf_serve_fit(m, o, sv, ctx->hw.mem_bytes, a->rq.budget.util, a->rq.budget.reserve_bytes,
                     &fit, most, &e)) {
        *most = -1;
        rf_report_null(r, "fits", "memory",
                       ctx->hw.mem_bytes ? e.msg : "- (no memory size: give --mem)");
        rf_report_null(r, "memory_needed_bytes", "memory needed (weights + KV)", "-");
        return;
    }
    cli_assume_fit(r, &fit, ctx);
    rf_report_bool(r, "fits", "memory", fit.fits, cli_fit_text(&fit, text, sizeof text));
    rf_report_int(r, "memory_needed_bytes", "memory needed (weights + KV)", fit.needed_bytes,
                  RF_U_BYTES_BIN);
}

/* The steady state's section: the fit, the step and its rates. */
static void steady_state(const cli_ctx *ctx, rf_report *r, const rf_model *m,
                         const rf_step_opts *o, const args *a, const rf_serve *sv)
{
    double most;
    rf_report_section(r, NULL, "steady state");
    kv_in_use(ctx, r, m, o, a, sv, &most);
    cli_context_check(ctx, r, m, a->so.prompt + a->so.output - 1, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_report_int(r, "concurrency", "requests in flight", (uint64_t)a->so.concurrency, RF_U_INT);
    rf_report_int(r, "decode_context", "decode context (mean)", (uint64_t)sv->decode_context,
                  RF_U_INT);
    rf_report_int(r, "prompt_tokens", "prompt tokens a step", (uint64_t)sv->prompt_tokens,
                  RF_U_INT);
    rf_report_int(r, "chunk", "chunk", (uint64_t)sv->chunk, RF_U_INT);
    rf_report_int(r, "chunk_context", "chunk context (mean)", (uint64_t)sv->chunk_context,
                  RF_U_INT);
    rf_report_int(r, "total_bytes", "step bytes", sv->step.total_bytes, RF_U_BYTES);
    rf_report_int(r, "flops", "step FLOPs", sv->step.flops, RF_U_FLOPS);
    rf_report_str(r, "regime", "regime", rf_regime_name(sv->step.regime));
    rf_report_num(r, "floor_s", "step floor", sv->step.floor_s, RF_U_SECONDS);
    rf_report_num(r, "tpot_s", "TPOT", sv->tpot_s, RF_U_SECONDS);
    rf_report_num(r, "ttft_s", "TTFT (queueing excluded)", sv->ttft_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s", sv->tokens_per_s, RF_U_TOK_RATE);
    if (most >= 0)
        rf_report_int(r, "max_concurrency", "largest concurrency the KV pool admits",
                      (uint64_t)most, RF_U_INT);
    else
        rf_report_null(r, "max_concurrency", "largest concurrency the KV pool admits",
                       "- (no memory size: give --mem)");
}

/* The steady state on a layout: the layout's section (stages, collectives),
 * then TPOT, TTFT and tokens/s of the deployment and a device. */
static int serve_layout(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                        const rf_roof *roof, const args *a)
{
    static rf_par par; /* every stage's step: off the stack */
    static rf_serve sv;
    rf_serve_par pv;
    rf_err e;
    char title[256];
    rf_par_opts po;
    int rc = cli_par_setup(ctx, m, &a->rq.budget, &a->par, &po);
    if (rc)
        return rc;
    if (a->sp.draft)
        return cli_fail(ctx, RF_EXIT_USAGE, "--draft on many devices is not modelled (the "
                                            "draft's own layout is not given): drop the "
                                            "layout options or --draft");
    if (rf_serve_par_compute(m, o, roof, &po, &a->so, &sv, &par, &pv, &e))
        return cli_fail_err(ctx, &e);
    snprintf(title, sizeof title, "serve: %s on %lld x %s", m->name, (long long)pv.devices,
             ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, m, o, &sv.step);
    cli_assume_roof(ctx, r, o, roof);
    assume(r, &sv, &pv);
    cli_par_section(ctx, r, &par, &a->par);
    rf_report_section(r, NULL, "steady state");
    rf_report_bool(r, "fits", "every device fits", pv.fits, pv.fits ? "yes" : "no");
    cli_context_check(ctx, r, m, a->so.prompt + a->so.output - 1, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_report_int(r, "concurrency", "requests in flight a replica", (uint64_t)a->so.concurrency,
                  RF_U_INT);
    rf_report_int(r, "decode_context", "decode context (mean)", (uint64_t)sv.decode_context,
                  RF_U_INT);
    rf_report_int(r, "prompt_tokens", "prompt tokens a step", (uint64_t)sv.prompt_tokens,
                  RF_U_INT);
    rf_report_int(r, "chunk", "chunk", (uint64_t)sv.chunk, RF_U_INT);
    rf_report_int(r, "chunk_context", "chunk context (mean)", (uint64_t)sv.chunk_context,
                  RF_U_INT);
    rf_report_int(r, "rows", "rows a collective (M)", (uint64_t)pv.rows, RF_U_INT);
    rf_report_int(r, "logit_rows", "logit rows (L)", (uint64_t)pv.logit_rows, RF_U_INT);
    rf_report_num(r, "tpot_s", "TPOT", pv.tpot_s, RF_U_SECONDS);
    rf_report_num(r, "ttft_s", "TTFT (queueing excluded)", pv.ttft_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s, whole deployment", pv.tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_num(r, "tokens_per_s_device", "output tokens/s a device", pv.tokens_per_s_device,
                  RF_U_TOK_RATE);
    rf_report_int(r, "max_concurrency", "largest concurrency a replica's KV admits",
                  (uint64_t)pv.max_concurrency, RF_U_INT);
    rf_report_int(r, "max_concurrency_total", "largest concurrency, all replicas",
                  (uint64_t)pv.max_concurrency * (uint64_t)pv.layout.dp, RF_U_INT);
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

/* --predict: the steady-state step predicted on the --hw profile's
 * calibration (rf_calib_predict_serve), or a one-line refusal. */
static int predict(const cli_ctx *ctx, const rf_serve *sv, rf_serve_pred *out)
{
    static rf_calib cal; /* ~40 KB: off the stack */
    rf_err e;
    int rc = cli_calib_load(ctx, &cal);
    if (rc)
        return rc;
    return rf_calib_predict_serve(&cal, sv, out, &e) ? cli_fail_err(ctx, &e) : RF_EXIT_OK;
}

/* The predicted steady state, labelled so, beside the floors' section. */
static void predicted(rf_report *r, const rf_serve *sv, const rf_serve_pred *p)
{
    cli_pred_assume(r);
    rf_report_assume(r, "predicted steady state: the mixed step's operators each predicted "
                        "(linear layers at M = B + T_p = %lld, lm_head, decode attention at "
                        "S_d, chunk attention), the step their sum; TPOT = that step, TTFT = "
                        "%lld of it, tokens/s = B / TPOT",
                     (long long)(sv->opts.concurrency + sv->prompt_tokens),
                     (long long)sv->ttft_steps);
    rf_report_section(r, "predicted", "PREDICTED (from the calibration; the floors above are "
                                      "bounds)");
    rf_report_num(r, "tpot_s", "predicted TPOT (the step)", p->tpot_s, RF_U_SECONDS);
    rf_report_num(r, "ttft_s", "predicted TTFT (queueing excluded)", p->ttft_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "predicted output tokens/s", p->tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_int(r, "outside", "operators outside the calibration", p->n_outside, RF_U_INT);
}

/* Under load: the simulation (sim.h) on the floor or the layout's step
 * model, refusing what it does not model in one line. */
static int serve_load(cli_ctx *ctx, int argc, char **argv, int pos, args *a)
{
    const char *no = !a->sp.draft && (a->sp.k_given || a->sp.accept_given)
                         ? "--spec-k and --accept need --draft MODEL"
                   : a->sp.draft && a->sp.prefix.shared ? "--shared-prefix and --draft: give one"
                   : a->sp.draft && a->sim.disagg ? "--draft: speculative decoding is not "
                                                    "simulated disaggregated"
                   : a->sp.kernel_given ? "--prefix-kernel: the simulated step reads a shared "
                                          "prefix once a sequence"
                   : a->par.overlap ? "--overlap: the simulated layout step does not overlap "
                                      "communication"
                   : (ctx->step_given & CLI_GIVEN_PREDICT) && !cli_gpu_wanted()
                       ? "--predict: predictions under load are made on a GPU's kernel "
                         "tables (--backend or --calibration DIR); --steady-state --predict "
                         "predicts the steady state on a calibrated profile"
                       : NULL;
    if (no)
        return cli_fail(ctx, RF_EXIT_USAGE, "%s", no);
    rf_step_opts o = a->rq.o;
    rf_model m;
    rf_roof roof;
    static cli_sim_out out; /* results and layouts: off the stack */
    char title[256];
    int rc;
    a->sim.chunk = a->so.chunk;
    a->sim.max_tokens = a->so.max_batched_tokens;
    a->sim.shared_prefix = a->sp.prefix.shared;
    if (a->sim.concurrency)
        a->sim.concurrency = a->so.concurrency;
    static rf_model d; /* --draft: the draft model */
    if ((rc = cli_model_setup(ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(ctx, &m, &o, false)))
        return rc;
    if (a->sp.draft) {
        if ((rc = cli_spec_draft(ctx, &a->sp, &m, &o, &d, &a->sim.draft_o)))
            return rc;
        if (d.vocab != m.vocab)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--draft: draft %s has a vocabulary of %lld tokens, the target %s "
                            "%lld",
                            d.name, (long long)d.vocab, m.name, (long long)m.vocab);
        a->sim.draft = &d;
        a->sim.spec_k = a->sp.k;
        a->sim.spec_accept = a->sp.accept;
    }
    if ((rc = cli_sim_run(ctx, &m, &o, &roof, &a->rq.budget, &a->par, &a->sim, &out)))
        return rc;
    if (out.devices > 1)
        snprintf(title, sizeof title, "serve: %s on %lld x %s under load", m.name,
                 (long long)out.devices, ctx->hw.name);
    else
        snprintf(title, sizeof title, "serve: %s on %s under load", m.name, ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, &m, &o, NULL);
    cli_assume_roof(ctx, r, &o, &roof);
    cli_sim_view(ctx, r, &m, &a->sim, &out);
    if ((ctx->step_given & CLI_GIVEN_PREDICT) &&
        (rc = cli_gpu_serve_load(ctx, &m, &o, &roof, &a->rq.budget, &a->par, &a->sim, r))) {
        rf_report_free(r);
        return rc;
    }
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

int cmd_serve(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.rq = CLI_REQUEST_DEFAULT, .sp = CLI_SPEC_DEFAULT, .par = CLI_PAR_DEFAULT};
    cli_gpu_reset(); /* nothing of an earlier run (rf_cli_run) */
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "serve MODEL --prompt P|DIST --output-tokens N|DIST (--concurrency C | "
                            "--rate R [--arrival poisson|gamma:CV]) [--requests N] [--seed S] "
                            "[--trace FILE.csv] [--max-batched-tokens T] [--max-seqs S] [--chunk "
                            "C] [--block B] [--shared-prefix P_s] [--no-preempt] [--slo-ttft X "
                            "--slo-tpot Y] [--disagg P:D] [options]; or serve MODEL "
                            "--steady-state --prompt P --output-tokens N --concurrency B [--draft "
                            "MODEL|mtp [--spec-k K] [--accept ALPHA]] [options]",
                            (const cli_opt_group[]){{opts, on_opt, &a}, {0}}, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (!a.sim.steady)
        return serve_load(&ctx, argc, argv, pos, &a);
    const char *sim_only = cli_sim_given(&a.sim);
    if (sim_only)
        return cli_fail(&ctx, RF_EXIT_USAGE, "%s: not with --steady-state (it simulates no "
                                             "requests)", sim_only);
    if ((a.sim.prompt && !a.rq.prompt) || (a.sim.output && !a.rq.output))
        return cli_fail(&ctx, RF_EXIT_USAGE, "%s: --steady-state takes a fixed length",
                        a.sim.prompt && !a.rq.prompt ? "--prompt" : "--output-tokens");
    if ((rc = cli_request_check(&ctx, &a.rq)) ||
        (rc = cli_spec_check(&ctx, &a.sp, a.rq.prompt)))
        return rc;
    if (!a.so.concurrency)
        return cli_fail(&ctx, RF_EXIT_USAGE, "give --concurrency B (requests in flight)");
    a.so.prompt = a.rq.prompt;
    a.so.output = a.rq.output;
    a.so.prefix = a.sp.prefix;
    rf_step_opts o = a.rq.o;
    rf_model m, d;
    rf_roof roof;
    rf_err e;
    static rf_serve sv; /* holds a step (~10 KB): off the stack */
    rf_serve_spec sp;
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &o, false)))
        return rc;
    if ((rc = cli_spec_predict_refuse(&ctx, &a.sp, cli_par_wanted(&a.par))))
        return rc;
    if (cli_par_wanted(&a.par))
        return serve_layout(&ctx, &m, &o, &roof, &a);
    if (rf_serve_compute(&m, &o, &roof, &a.so, &sv, &e))
        return cli_fail_err(&ctx, &e);
    if (a.sp.draft && (rc = speculate(&ctx, &a, &m, &o, &roof, &sv, &d, &sp)))
        return rc;
    static rf_serve_pred pred; /* --predict: holds a step's predictions */
    bool predicting = ctx.step_given & CLI_GIVEN_PREDICT;
    if (predicting && (rc = predict(&ctx, &sv, &pred)))
        return rc;

    char title[256];
    snprintf(title, sizeof title, "serve: %s on %s", m.name, ctx.hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, &m, &o, &sv.step);
    cli_assume_roof(&ctx, r, &o, &roof);
    assume(r, &sv, NULL);
    cli_op_table_pred(r, "ops", "operators of the steady-state step (summed over 'count')",
                      &sv.step, predicting ? &pred.step : NULL);
    steady_state(&ctx, r, &m, &o, &a, &sv);
    if (a.sp.draft)
        speculative(r, &d, &sp);
    if (predicting)
        predicted(r, &sv, &pred);
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
