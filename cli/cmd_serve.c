/* cmd_serve.c - `roofline serve MODEL --prompt P --output N --concurrency B`:
 * continuous batching in steady state with chunked prefill (rf_serve.h):
 * the mixed step every iteration runs, TPOT, TTFT, tokens/s, the KV in use
 * against the pool and the largest concurrency the pool admits. */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "request.h"
#include "roofline/rf_serve.h"

enum { O_CONCURRENCY = 1000, O_CHUNK, O_MAX_TOKENS };

static const cli_opt opts[] = {
    CLI_REQUEST_LEN_OPTS,
    {"concurrency", 1, O_CONCURRENCY, "B", "requests in flight (required)"},
    {"chunk", 1, O_CHUNK, "C", "prompt tokens a chunk at most (default the whole prompt)"},
    {"max-batched-tokens", 1, O_MAX_TOKENS, "T", "tokens a step at most, decode included"},
    CLI_REQUEST_STEP_OPTS,
    {0},
};

typedef struct args {
    cli_request rq;
    rf_serve_opts so;
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    switch (id) {
    case O_CONCURRENCY:
        return cli_i64(ctx, "--concurrency", arg, 1, RF_DIM_MAX, &a->so.concurrency);
    case O_CHUNK:
        return cli_i64(ctx, "--chunk", arg, 1, RF_DIM_MAX, &a->so.chunk);
    case O_MAX_TOKENS:
        return cli_i64(ctx, "--max-batched-tokens", arg, 1, RF_DIM_MAX,
                       &a->so.max_batched_tokens);
    default:
        return cli_request_opt(ctx, id, arg, &a->rq);
    }
}

static void assume(rf_report *r, const rf_serve *sv)
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
    rf_report_assume(r, "TPOT = the step floor; output tokens/s = B / floor; TTFT = "
                        "ceil(P / C) = %lld steps at that floor, queueing not modelled",
                     (long long)sv->ttft_steps);
}

int cmd_serve(int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.rq = CLI_REQUEST_DEFAULT};
    int pos, rc = cli_parse(&ctx, argc, argv,
                            "serve MODEL --prompt P --output N --concurrency B [--chunk C] "
                            "[--max-batched-tokens T] [options]",
                            opts, on_opt, &a, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_request_check(&ctx, &a.rq)))
        return rc;
    if (!a.so.concurrency)
        return cli_fail(&ctx, RF_EXIT_USAGE, "give --concurrency B (requests in flight)");
    a.so.prompt = a.rq.prompt;
    a.so.output = a.rq.output;
    rf_step_opts o = a.rq.o;
    rf_model m;
    rf_roof roof;
    rf_err e;
    static rf_serve sv; /* holds a step (~10 KB): off the stack */
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &o, false)))
        return rc;
    if (rf_serve_compute(&m, &o, &roof, &a.so, &sv, &e))
        return cli_fail_err(&ctx, &e);

    char title[256];
    snprintf(title, sizeof title, "serve: %s on %s", m.name, ctx.hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, &m, &o, &sv.step);
    cli_assume_roof(&ctx, r, &o, &roof);
    assume(r, &sv);
    cli_op_table(r, "ops", "operators of the steady-state step (summed over 'count')", &sv.step);
    rf_report_section(r, NULL, "steady state");
    rf_step_opts held = o; /* B sequences at the mean context */
    held.phase = RF_DECODE;
    held.batch = a.so.concurrency;
    held.context = sv.decode_context;
    rf_fit fit;
    if (cli_fit(&ctx, r, &m, &held, &a.rq.budget, &fit) == RF_OK)
        cli_assume_fit(r, &fit, &ctx);
    cli_context_check(&ctx, r, &m, a.so.prompt + a.so.output - 1, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_report_int(r, "concurrency", "requests in flight", (uint64_t)a.so.concurrency, RF_U_INT);
    rf_report_int(r, "decode_context", "decode context (mean)", (uint64_t)sv.decode_context,
                  RF_U_INT);
    rf_report_int(r, "prompt_tokens", "prompt tokens a step", (uint64_t)sv.prompt_tokens,
                  RF_U_INT);
    rf_report_int(r, "chunk", "chunk", (uint64_t)sv.chunk, RF_U_INT);
    rf_report_int(r, "chunk_context", "chunk context (mean)", (uint64_t)sv.chunk_context,
                  RF_U_INT);
    rf_report_int(r, "total_bytes", "step bytes", sv.step.total_bytes, RF_U_BYTES);
    rf_report_int(r, "flops", "step FLOPs", sv.step.flops, RF_U_FLOPS);
    rf_report_str(r, "regime", "regime", rf_regime_name(sv.step.regime));
    rf_report_num(r, "floor_s", "step floor", sv.step.floor_s, RF_U_SECONDS);
    rf_report_num(r, "tpot_s", "TPOT", sv.tpot_s, RF_U_SECONDS);
    rf_report_num(r, "ttft_s", "TTFT (queueing excluded)", sv.ttft_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "output tokens/s", sv.tokens_per_s, RF_U_TOK_RATE);
    rf_capacity cap;
    if (ctx.hw.mem_bytes &&
        rf_capacity_compute(&m, &o, ctx.hw.mem_bytes, a.rq.budget.util, a.rq.budget.reserve_bytes,
                            sv.decode_context, &cap, &e) == RF_OK)
        rf_report_int(r, "max_concurrency", "largest concurrency the KV pool admits",
                      (uint64_t)floor(cap.sequences), RF_U_INT);
    else
        rf_report_null(r, "max_concurrency", "largest concurrency the KV pool admits",
                       "- (no memory size: give --mem)");
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
