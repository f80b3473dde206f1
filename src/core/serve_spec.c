/* serve_spec.c - speculative decoding in the continuous-batching steady
 * state (rf_serve_spec_compute in rf_serve.h), on serve.c's mixed step. */
#include <math.h>

#include "serve_internal.h"

/* What an iteration of E expected tokens costs. */
typedef struct iteration {
    int64_t prompt_tokens;
    double draft_s, verify_s;
} iteration;

typedef struct spec_ctx {
    const rf_model *target, *draft;
    const rf_step_opts *o, *draft_o;
    const rf_roof *roof;
    const rf_serve *sv;
    int64_t k, chunk, chunk_context;
    rf_step *scratch;
} spec_ctx;

/* The prompt chunks of T_p tokens, as the plain steady state cuts them. */
static size_t prompt_groups(const spec_ctx *c, int64_t tp, rf__chunk_group *g)
{
    g[0] = (rf__chunk_group){c->chunk, c->chunk_context, tp / c->chunk, 1};
    g[1] = (rf__chunk_group){tp % c->chunk, c->chunk_context, tp % c->chunk ? 1 : 0, 1};
    return 2;
}

/* One iteration at E tokens: T_p = ceil(B E (P - P_s) / N); the draft's K
 * steps (its first with the prompt chunks) and the target's verification
 * with them. */
static rf_status iterate(const spec_ctx *c, double e, iteration *it, rf_err *err)
{
    const rf_serve_opts *so = &c->sv->opts;
    int64_t bq = so->concurrency, sd = c->sv->decode_context;
    double tp =
        ceil((double)bq * e * (double)(so->prompt - so->prefix.shared) / (double)so->output);
    if (!(tp <= (double)RF_DIM_MAX))
        return rf_err_set(err, RF_ERANGE, "prompt tokens an iteration pass %lld",
                          (long long)RF_DIM_MAX);
    rf__chunk_group g[3];
    size_t n = prompt_groups(c, (int64_t)tp, g);
    rf_status s;
    *it = (iteration){.prompt_tokens = (int64_t)tp};
    for (int64_t i = 0; i < c->k; i++) {
        if ((s = rf__mixed(c->draft, c->draft_o, c->roof, bq, sd + i, 0, g, i ? 0 : n, c->scratch,
                           err)))
            return s;
        it->draft_s += c->scratch->floor_s;
    }
    g[n] = (rf__chunk_group){c->k + 1, sd, bq, c->k + 1};
    if ((s = rf__mixed(c->target, c->o, c->roof, 0, sd, 0, g, n + 1, c->scratch, err)))
        return s;
    it->verify_s = c->scratch->floor_s;
    return RF_OK;
}

/* TPOT with speculation at acceptance alpha. */
static rf_status tpot_at(const spec_ctx *c, double alpha, double *tpot_s, rf_err *err)
{
    iteration it;
    double e = rf_spec_tokens_per_iter(c->k, alpha);
    rf_status s = iterate(c, e, &it, err);
    *tpot_s = (it.draft_s + it.verify_s) / e;
    return s;
}

/* Where TPOT(alpha) meets the plain TPOT: it falls as alpha rises (E grows
 * faster than the prompt tokens an iteration add). */
static rf_status break_even(const spec_ctx *c, rf_spec *r, rf_err *err)
{
    double lo_t, hi_t, plain = r->plain_tpot_s;
    rf_status s;
    if ((s = tpot_at(c, 0, &lo_t, err)) || (s = tpot_at(c, 1, &hi_t, err)))
        return s;
    r->breaks_even = hi_t <= plain;
    r->break_even_accept = 0;
    if (!r->breaks_even || lo_t <= plain)
        return RF_OK;
    double l = 0, h = 1, t;
    for (int i = 0; i < 60 && h - l > 1e-12; i++) {
        double mid = (l + h) / 2;
        if ((s = tpot_at(c, mid, &t, err)))
            return s;
        if (t > plain)
            l = mid;
        else
            h = mid;
    }
    r->break_even_accept = h;
    return RF_OK;
}

rf_status rf_serve_spec_compute(const rf_model *target, const rf_model *draft,
                                const rf_step_opts *o, const rf_step_opts *draft_o,
                                const rf_roof *roof, const rf_serve *sv, int64_t k, double accept,
                                rf_serve_spec *out, rf_err *err)
{
    const rf_serve_opts *so = &sv->opts;
    rf_status s = rf__spec_check(target, draft, so->output, k, accept, err);
    if (s)
        return s;
    if (so->prefix.shared)
        return rf_err_set(err, RF_EINVAL, "speculation with a shared prefix is not modelled");
    rf_step scratch; /* ~10 KB of scratch on the stack: core allocates nothing */
    spec_ctx c = {target, draft, o, draft_o, roof, sv, k, 0, 0, &scratch};
    int64_t steps;
    if (so->concurrency > RF_DIM_MAX / (k + 1))
        return rf_err_set(err, RF_ERANGE, "concurrency x (K + 1) passes %lld tokens",
                          (long long)RF_DIM_MAX);
    if ((s = rf__serve_chunking(so, so->concurrency * (k + 1), &c.chunk, &steps, &c.chunk_context,
                                err)))
        return s;
    rf_spec r = {.k = k,
                 .accept = accept,
                 .tokens_per_iter = rf_spec_tokens_per_iter(k, accept),
                 .plain_tpot_s = sv->tpot_s,
                 .plain_tokens_per_s = sv->tokens_per_s};
    iteration it;
    if ((s = iterate(&c, r.tokens_per_iter, &it, err)))
        return s;
    r.draft_s = it.draft_s;
    r.verify_s = it.verify_s;
    r.iter_s = it.draft_s + it.verify_s;
    r.tpot_s = r.iter_s / r.tokens_per_iter;
    r.tokens_per_s = (double)so->concurrency * r.tokens_per_iter / r.iter_s;
    r.speedup = r.plain_tpot_s / r.tpot_s;
    if ((s = break_even(&c, &r, err)))
        return s;
    *out = (rf_serve_spec){.spec = r,
                           .prompt_tokens = it.prompt_tokens,
                           .chunk = c.chunk,
                           .ttft_s = (double)steps * r.iter_s,
                           .ttft_iters = steps};
    return RF_OK;
}
