/* cmd_generate.c - `roofline generate MODEL --prompt P --output-tokens N`: a static
 * batch of B identical requests to the end (rf_serve.h): TTFT, TPOT (mean,
 * first, last), latency, tokens/s, the memory fit at the last context,
 * with --draft a speculative decoding of the same requests, and with
 * --predict the same figures predicted on the --hw profile's calibration
 * (rf_predict.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "engine_predict.h"
#include "gpu_predict.h"
#include "roofline/rf_engine.h"
#include "measure_view.h"
#include "request.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_serve.h"

static const cli_opt opts[] = {
    CLI_REQUEST_LEN_OPTS,
    {"batch", 1, CLI_O_BATCH, "B", "identical requests in the static batch (default 1)"},
    CLI_REQUEST_STEP_OPTS,
    CLI_REQUEST_SPEC_OPTS,
    CLI_PREDICT_OPT,
    CLI_GPU_OPTS,
    CLI_PAR_OPTS,
    {0},
};

typedef struct args {
    cli_request rq;
    cli_spec sp;
    cli_par par; /* many devices */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    if (id == CLI_O_BACKEND && rf_engine_known(arg)) /* an engine calibration file */
        return cli_gpu_engine_opt(arg);
    if (id >= CLI_O_BACKEND && id <= CLI_O_CALIBRATION) /* --predict on kernel tables */
        return cli_gpu_opt(ctx, id, arg);
    if (id == CLI_O_PREDICT)
        return cli_step_opt(ctx, id, arg, &a->rq.o);
    int rc = cli_spec_opt(ctx, id, arg, &a->sp);
    if (rc == CLI_NOT_MINE)
        rc = cli_par_opt(ctx, id, arg, &a->par);
    return rc == CLI_NOT_MINE ? cli_request_opt(ctx, id, arg, &a->rq) : rc;
}

static void assume(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                   const rf_roof *roof, const args *a, const rf_generate *g)
{
    cli_assume_model(r, m, o, NULL);
    cli_assume_roof(ctx, r, o, roof);
    rf_report_assume(r, "requests: %lld identical %s of %lld prompt and %lld output tokens, one "
                        "static batch (all start and finish together); queueing and "
                        "scheduling not modelled",
                     (long long)g->batch, cli_plural(g->batch, "request", "requests"),
                     (long long)g->prompt, (long long)g->output);
    if (!g->prefix.shared)
        rf_report_assume(r, "TTFT: the prefill step of %lld x %lld tokens, nothing cached (it "
                            "makes the first output token)",
                         (long long)g->batch, (long long)g->prompt);
    if (g->output >= 2)
        rf_report_assume(r, "decode: output token j = 2..%lld from a decode step at context "
                            "P + j - 1 = %lld..%lld; TPOT = the mean of those %lld step floors, "
                            "summed exactly (%zu linear %s, not an average context)",
                         (long long)g->output, (long long)(g->prompt + 1),
                         (long long)g->final_positions, (long long)(g->output - 1),
                         g->decode.pieces, g->decode.pieces == 1 ? "piece" : "pieces");
    else
        rf_report_assume(r, "decode: none (one output token, made by the prefill)");
    if (ctx->hw.board_power_w > 0)
        rf_report_assume(r, "energy a token = board power %g W (the TDP, an upper bound: the "
                            "device rarely draws it all) / output tokens/s, joules",
                         ctx->hw.board_power_w);
    rf_report_assume(r, "floors: each step's floor max(F/pi, Q/beta) of its totals, as `step` "
                        "prints it (sum-of-max beside); latency = TTFT + the decode floors; "
                        "tokens/s = B N / latency; memory fit at the end, %lld positions a "
                        "sequence",
                     (long long)g->final_positions);
    if (g->prefix.shared)
        rf_report_assume(r, "shared prefix: %lld of the %lld prompt tokens common to every "
                            "request: its KV stored once, its prefill run once (TTFT = "
                            "prefill of 1 x %lld + prefill of %lld x %lld after it); decode "
                            "reads it %s",
                         (long long)g->prefix.shared, (long long)g->prompt,
                         (long long)g->prefix.shared, (long long)g->batch,
                         (long long)(g->prompt - g->prefix.shared),
                         g->prefix.cascade ? "once a step (--prefix-kernel cascade: P_s kv_tok "
                                             "+ B (S - P_s) kv_tok)"
                                           : "once a sequence, as the common kernels do "
                                             "(--prefix-kernel cascade reads it once a step)");
    if (a->sp.draft)
        rf_report_assume(r, "speculative: an iteration at context S = K draft decode steps (at "
                            "S..S+K-1) + one target step verifying K + 1 tokens a sequence "
                            "(linear layers at M = B (K+1), attention K + 1 queries, KV read "
                            "once), averaged over S = P+1..P+N-1; tokens an iteration (1 - "
                            "alpha^(K+1)) / (1 - alpha), acceptances independent; draft on the "
                            "same roof; TTFT excluded from its tokens/s");
}

/* --draft MODEL: the draft d, in the request's dtypes, and the
 * speculative decoding of the same requests. */
static int speculate(cli_ctx *ctx, const args *a, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const rf_generate *g, rf_model *d, rf_spec *sp)
{
    rf_step_opts draft_o;
    rf_err e;
    int rc;
    if ((rc = cli_spec_draft(ctx, &a->sp, m, &a->rq.o, d, &draft_o)))
        return rc;
    if (rf_spec_compute(m, d, o, &draft_o, roof, g, a->sp.k, a->sp.accept, sp, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--draft: %s", e.msg);
    return RF_EXIT_OK;
}

/* The memory fit at the last context, or why there is none. */
static void memory_fit(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                       const args *a, const rf_generate *g)
{
    rf_fit fit;
    rf_err e;
    char text[160];
    if (rf_generate_fit(m, o, g, ctx->hw.mem_bytes, a->rq.budget.util, a->rq.budget.reserve_bytes,
                        &fit, &e)) {
        rf_report_null(r, "fits", "memory",
                       ctx->hw.mem_bytes ? e.msg : "- (no memory size: give --mem)");
        rf_report_null(r, "memory_needed_bytes", "memory needed (weights + KV)", "-");
    } else {
        cli_assume_fit(r, &fit, ctx);
        rf_report_bool(r, "fits", "memory", fit.fits, cli_fit_text(&fit, text, sizeof text));
        rf_report_int(r, "memory_needed_bytes", "memory needed (weights + KV)", fit.needed_bytes,
                      RF_U_BYTES_BIN);
    }
}

/* The requests' times: TTFT, TPOT (mean, first, last), latency, tokens/s,
 * the energy a token, and the sum-of-max figures beside. */
static void timing(const cli_ctx *ctx, rf_report *r, const rf_generate *g)
{
    rf_report_int(r, "batch", "requests", (uint64_t)g->batch, RF_U_INT);
    rf_report_int(r, "prompt", "prompt tokens", (uint64_t)g->prompt, RF_U_INT);
    rf_report_int(r, "output", "output tokens", (uint64_t)g->output, RF_U_INT);
    rf_report_num(r, "ttft_s", "TTFT", g->ttft_s, RF_U_SECONDS);
    rf_report_str(r, "prefill_regime", "prefill regime", rf_regime_name(g->prefill_regime));
    rf_report_int(r, "decode_steps", "decode steps", (uint64_t)g->decode.steps, RF_U_INT);
    if (g->output >= 2) {
        rf_report_num(r, "tpot_mean_s", "TPOT mean", g->tpot_mean_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_first_s", "TPOT first (j = 2)", g->tpot_first_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_last_s", "TPOT last (j = N)", g->tpot_last_s, RF_U_SECONDS);
    } else {
        const char *why = "- (one output token)";
        rf_report_null(r, "tpot_mean_s", "TPOT mean", why);
        rf_report_null(r, "tpot_first_s", "TPOT first (j = 2)", why);
        rf_report_null(r, "tpot_last_s", "TPOT last (j = N)", why);
    }
    rf_report_num(r, "decode_s", "decode time", g->decode.floor_s, RF_U_SECONDS);
    rf_report_num(r, "latency_s", "latency", g->latency_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s", g->tokens_per_s, RF_U_TOK_RATE);
    if (ctx->hw.board_power_w > 0)
        rf_report_num(r, "energy_per_token_j", "energy a token (J, at TDP)",
                      rf_energy_per_token_j(ctx->hw.board_power_w, 1, g->tokens_per_s), RF_U_SIG3);
    else
        rf_report_null(r, "energy_per_token_j", "energy a token (J, at TDP)",
                       "- (no board power for this hardware)");
    rf_report_num(r, "ttft_sum_of_max_s", "TTFT, sum-of-max", g->ttft_sum_of_max_s, RF_U_SECONDS);
    rf_report_num(r, "decode_sum_of_max_s", "decode time, sum-of-max", g->decode.sum_of_max_s,
                  RF_U_SECONDS);
}

/* --predict: the generation predicted, rows labelled so, beside the
 * floors' section. */
static int predicted(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const args *a)
{
    static rf_calib cal; /* ~40 KB: off the stack */
    rf_generate_pred p;
    rf_err e;
    int rc = cli_calib_load(ctx, &cal);
    if (rc)
        return rc;
    if (rf_calib_predict_generate(&cal, m, o, roof, a->rq.prompt, a->rq.output, &a->sp.prefix,
                                  &p, &e))
        return cli_fail_err(ctx, &e);
    cli_pred_assume(r);
    if (p.output >= 2)
        rf_report_assume(r, "predicted decode: the decode step predicted at every context "
                            "%lld..%lld and summed (not one average step), over %zu %s of "
                            "contexts (a range where every operator's shape is affine in S): "
                            "the %zu %s that do not move with S predicted once a piece, the %zu "
                            "that %s (attention: its keys and K/V read) at every context",
                         (long long)(p.prompt + 1), (long long)(p.prompt + p.output - 1),
                         p.pieces, p.pieces == 1 ? "piece" : "pieces", p.ops_fixed,
                         p.ops_fixed == 1 ? "operator" : "operators", p.ops_varying,
                         p.ops_varying == 1 ? "does" : "do");
    rf_report_section(r, "predicted", "PREDICTED (from the calibration; the floors above are "
                                      "bounds)");
    cli_pred_gen_times(r, &p);
    rf_report_int(r, "outside_prefill", "prefill operators outside the calibration",
                  p.outside_prefill, RF_U_INT);
    rf_report_int(r, "outside_decode", "decode operators outside the calibration",
                  p.outside_decode, RF_U_INT);
    /* the bands: each operator's kind's leave-one-out worst error, summed */
    cli_pred_gen_bands(r, &p);
    return RF_EXIT_OK;
}

/* The generation on a layout (rf_generate_par_compute): every time the
 * layout's cycle, tokens/s of the deployment and of a device. */
static int generate_layout(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                           const rf_roof *roof, const args *a)
{
    static rf_par_sweep scratch; /* every stage's step: off the stack */
    rf_generate_par g;
    rf_err e;
    char title[256];
    rf_par_opts po;
    int rc = cli_par_setup(ctx, m, &a->rq.budget, &a->par, &po);
    if (rc)
        return rc;
    if (a->sp.draft || a->sp.prefix.shared)
        return cli_fail(ctx, RF_EXIT_USAGE, "--draft and --shared-prefix on many devices are "
                                            "not modelled: drop the layout options or them");
    if (rf_generate_par_compute(m, o, roof, &po, a->rq.prompt, a->rq.output, &scratch, &g, &e))
        return cli_fail_err(ctx, &e);
    snprintf(title, sizeof title, "generate: %s on %lld x %s", m->name, (long long)g.devices,
             ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, m, o, NULL);
    cli_assume_roof(ctx, r, o, roof);
    cli_par_assume(r, &po.links, &po.layout);
    rf_report_assume(r, "requests: %lld identical %s of %lld prompt and %lld output tokens a "
                        "replica, one static batch; each step takes the layout's cycle (a "
                        "device's operators' sum-of-max + its collectives; under PP the longer "
                        "of a token's latency and the slowest stage busy for every "
                        "micro-batch); TTFT the prefill's, decode summed over contexts "
                        "%lld..%lld %s; tokens/s = D B N / latency",
                     (long long)g.batch, cli_plural(g.batch, "request", "requests"),
                     (long long)g.prompt, (long long)g.output, (long long)(g.prompt + 1),
                     (long long)(g.prompt + g.output - 1),
                     g.closed_form ? "exactly in closed form" : "step by step (exact, O(N))");
    rf_report_section(r, NULL, "generation");
    rf_report_int(r, "devices", "devices", (uint64_t)g.devices, RF_U_INT);
    rf_report_bool(r, "fits", "every device fits at the end", g.fits, g.fits ? "yes" : "no");
    rf_report_num(r, "fit_margin_bytes", "smallest fit margin", g.min_margin_bytes, RF_U_BYTES);
    cli_context_check(ctx, r, m, g.prompt + g.output - 1, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_report_int(r, "batch", "requests a replica", (uint64_t)g.batch, RF_U_INT);
    rf_report_num(r, "ttft_s", "TTFT", g.ttft_s, RF_U_SECONDS);
    rf_report_int(r, "decode_steps", "decode steps", (uint64_t)g.decode_steps, RF_U_INT);
    if (g.output >= 2) {
        rf_report_num(r, "tpot_mean_s", "TPOT mean", g.tpot_mean_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_first_s", "TPOT first (j = 2)", g.tpot_first_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_last_s", "TPOT last (j = N)", g.tpot_last_s, RF_U_SECONDS);
    }
    rf_report_num(r, "decode_s", "decode time", g.decode_s, RF_U_SECONDS);
    rf_report_num(r, "latency_s", "latency", g.latency_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s, whole deployment", g.tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_num(r, "tokens_per_s_device", "output tokens/s a device", g.tokens_per_s_device,
                  RF_U_TOK_RATE);
    if (ctx->hw.board_power_w > 0)
        rf_report_num(r, "energy_per_token_j", "energy a token (J, at TDP)",
                      rf_energy_per_token_j(ctx->hw.board_power_w, g.devices, g.tokens_per_s),
                      RF_U_SIG3);
    if (ctx->step_given & CLI_GIVEN_PREDICT) /* on kernel tables (gpu_predict.c) */
        rc = cli_gpu_generate(ctx, r, m, o, roof, &a->rq.budget, &a->par, a->rq.prompt,
                              a->rq.output, 0);
    if (!rc)
        rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

int cmd_generate(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.rq = CLI_REQUEST_DEFAULT, .sp = CLI_SPEC_DEFAULT, .par = CLI_PAR_DEFAULT};
    cli_gpu_reset(); /* nothing of an earlier run (rf_cli_run) */
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "generate MODEL --prompt P --output-tokens N [--batch B] "
                            "[--draft MODEL|mtp [--spec-k K] [--accept ALPHA]] [options]",
                            (const cli_opt_group[]){{opts, on_opt, &a}, {0}}, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_request_check(&ctx, &a.rq)) || (rc = cli_spec_check(&ctx, &a.sp, a.rq.prompt)))
        return rc;
    rf_step_opts o = a.rq.o;
    rf_model m, d;
    rf_roof roof;
    rf_err e;
    rf_generate g;
    rf_spec sp;
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &o, false)))
        return rc;
    if ((rc = cli_spec_predict_refuse(&ctx, &a.sp, cli_par_wanted(&a.par))))
        return rc;
    if (cli_par_wanted(&a.par))
        return generate_layout(&ctx, &m, &o, &roof, &a);
    if (rf_generate_prefix_compute(&m, &o, &roof, a.rq.prompt, a.rq.output, &a.sp.prefix, &g, &e))
        return cli_fail_err(&ctx, &e);
    if (a.sp.draft && (rc = speculate(&ctx, &a, &m, &o, &roof, &g, &d, &sp)))
        return rc;

    char title[256];
    snprintf(title, sizeof title, "generate: %s on %s", m.name, ctx.hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    assume(&ctx, r, &m, &o, &roof, &a, &g);
    rf_report_section(r, NULL, "generation");
    memory_fit(&ctx, r, &m, &o, &a, &g);
    cli_context_check(&ctx, r, &m, g.final_positions, CLI_CTX_LINES | CLI_CTX_KEY);
    timing(&ctx, r, &g);
    if (a.sp.draft)
        cli_spec_section(r, "speculative decoding", &d, &sp);
    const char *engine_file, *engine = cli_gpu_engine(&engine_file); /* --backend llamacpp */
    rc = !(ctx.step_given & CLI_GIVEN_PREDICT) ? RF_EXIT_OK
         : engine ? cli_engine_generate(&ctx, r, engine, engine_file, &m, &o, &roof, a.rq.prompt,
                                        a.rq.output)
         : cli_gpu_wanted() /* on kernel tables (gpu_predict.c) */
             ? cli_gpu_generate(&ctx, r, &m, &o, &roof, &a.rq.budget, &a.par, a.rq.prompt,
                                a.rq.output, a.sp.prefix.shared)
             : predicted(&ctx, r, &m, &o, &roof, &a);
    if (!rc)
        rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
