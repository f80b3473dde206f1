/* par_opts.c - the many-device options (--tp, --pp, --ep, --dp, --overlap,
 * --link-bw, --link-latency, --devices-per-node), the links and layout
 * they give, and the layout's section (its view: rf_view_par). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "par_opts.h"
#include "step_opts.h"
#include "roofline/rf_view.h"

int cli_par_opt(cli_ctx *ctx, int id, const char *arg, cli_par *p)
{
    int64_t *deg = id == CLI_O_TP   ? &p->layout.tp
                   : id == CLI_O_PP ? &p->layout.pp
                   : id == CLI_O_EP ? &p->layout.ep
                   : id == CLI_O_DP ? &p->layout.dp
                                    : NULL;
    if (deg) {
        const char *name = id == CLI_O_TP   ? "--tp"
                           : id == CLI_O_PP ? "--pp"
                           : id == CLI_O_EP ? "--ep"
                                            : "--dp";
        return cli_i64(ctx, name, arg, 1, RF_PAR_MAX_DEGREE, deg);
    }
    switch (id) {
    case CLI_O_OVERLAP:
        p->overlap = true;
        return RF_EXIT_OK;
    case CLI_O_LINK_BW:
        return cli_f64(ctx, "--link-bw", arg, 1e-6, 1e9, &p->link_bw_gbps);
    case CLI_O_LINK_LAT:
        return cli_f64(ctx, "--link-latency", arg, 1e-6, 1e9, &p->link_latency_us);
    case CLI_O_DPN:
        return cli_i64(ctx, "--devices-per-node", arg, 1, RF_PAR_MAX_DEGREE, &p->devices_per_node);
    default:
        return CLI_NOT_MINE;
    }
}

bool cli_par_wanted(const cli_par *p)
{
    return !rf_layout_is_single(&p->layout) || p->overlap || p->link_bw_gbps > 0 ||
           p->link_latency_us > 0 || p->devices_per_node > 0;
}

void cli_par_links(const cli_ctx *ctx, const cli_par *p, rf_hw_links *out)
{
    *out = ctx->hw.links;
    if ((p->link_bw_gbps > 0 || p->link_latency_us > 0) && out->up_fit[0].bw_bytes_per_s > 0) {
        memset(out->up_fit, 0, sizeof out->up_fit); /* given figures replace measured fits */
        out->up_name[0] = 0;
    }
    char given[RF_HW_SOURCE_MAX] = "";
    size_t n = 0;
    if (p->link_bw_gbps > 0) {
        out->up_bw_bytes_per_s = p->link_bw_gbps * 1e9;
        n += (size_t)snprintf(given + n, sizeof given - n, "--link-bw %g GB/s; ", p->link_bw_gbps);
    }
    if (p->link_latency_us > 0 && n < sizeof given) {
        out->up_latency_s = p->link_latency_us * 1e-6;
        n += (size_t)snprintf(given + n, sizeof given - n, "--link-latency %g us; ",
                              p->link_latency_us);
    }
    if (p->devices_per_node > 0 && n < sizeof given) {
        out->devices_per_node = p->devices_per_node;
        n += (size_t)snprintf(given + n, sizeof given - n, "--devices-per-node %lld; ",
                              (long long)p->devices_per_node);
    }
    if (n) {
        if (!out->up_name[0])
            snprintf(out->up_name, sizeof out->up_name, "the given link");
        char was[RF_HW_SOURCE_MAX];
        snprintf(was, sizeof was, "%s", out->origin[0] ? out->origin : "none");
        snprintf(out->origin, sizeof out->origin, "given: %.96sthe rest: %.120s", given, was);
    }
    rf_hw_links_defaults(out);
}

int cli_par_check(const cli_ctx *ctx, const rf_model *m, const cli_par *p)
{
    rf_err e;
    if (rf_layout_validate(m, &p->layout, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

rf_par_opts cli_par_opts(const cli_ctx *ctx, const cli_budget *b, const cli_par *p)
{
    rf_par_opts po = {.layout = p->layout,
                      .util = b->util,
                      .reserve_bytes = b->reserve_bytes,
                      .mem_bytes = ctx->hw.mem_bytes};
    cli_par_links(ctx, p, &po.links);
    return po;
}

int cli_par_setup(const cli_ctx *ctx, const rf_model *m, const cli_budget *b, const cli_par *p,
                  rf_par_opts *po)
{
    int rc = cli_par_check(ctx, m, p);
    if (rc)
        return rc;
    *po = cli_par_opts(ctx, b, p);
    if (!po->mem_bytes)
        return cli_fail(ctx, RF_EXIT_USAGE, "%s has no memory size: give --mem", ctx->hw.name);
    return RF_EXIT_OK;
}

rf_status cli_par_compute(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                          const rf_roof *roof, const cli_budget *b, const cli_par *p, rf_par *out,
                          rf_err *err)
{
    rf_par_opts po = cli_par_opts(ctx, b, p);
    if (!po.mem_bytes)
        return rf_err_set(err, RF_EINVAL, "%s has no memory size: give --mem", ctx->hw.name);
    return rf_par_compute(m, o, roof, &po, out, err);
}

void cli_par_assume(rf_report *r, const rf_hw_links *k, const rf_layout *l)
{
    rf_view_par_assume(r, k, l);
}

void cli_par_section(const cli_ctx *ctx, rf_report *r, const rf_par *par, const cli_par *p)
{
    rf_hw_links k;
    cli_par_links(ctx, p, &k);
    rf_view_par(r, par, &k, p->overlap);
}
