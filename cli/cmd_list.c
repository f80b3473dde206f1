/* cmd_list.c - `roofline models` and `roofline hw`: the built-in presets
 * (models: every name rf_model_find knows, and the families it reads). */
#include <stdlib.h>

#include "cli.h"
#include "opts.h"
#include "output.h"
#include "roofline/rf_reader.h"

int cmd_models(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    int pos, rc = cli_parse(&ctx, io, argc, argv, "models [--json|--csv]", NULL, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_refuse_unused(&ctx, CLI_G_ROOF | CLI_G_DTYPES | CLI_G_FAMILY,
                                "models lists the built-in models as their configs give them")))
        return rc;
    if (pos < argc)
        return cli_fail(&ctx, RF_EXIT_USAGE, "unexpected argument '%s'", argv[pos]);
    rf_report *r = rf_report_new("built-in models (from their HuggingFace config.json)");
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rf_report_assume(r, "parameters: matrix weights only; streamed = one decode token at batch 1");
    rf_report_table(r, "models", NULL);
    rf_report_col(r, "name", "name", RF_U_NONE);
    rf_report_col(r, "family", "family", RF_U_NONE);
    rf_report_col(r, "layers", "layers", RF_U_INT);
    rf_report_col(r, "hidden", "hidden", RF_U_INT);
    rf_report_col(r, "heads", "heads", RF_U_INT);
    rf_report_col(r, "kv_heads", "KV heads", RF_U_INT);
    rf_report_col(r, "head_dim", "head dim", RF_U_INT);
    rf_report_col(r, "params", "params", RF_U_COUNT);
    rf_report_col(r, "streamed_params", "streamed", RF_U_COUNT);
    rf_report_col(r, "kv_bytes_per_token", "KV B/token", RF_U_INT);
    rf_model *m = malloc(sizeof *m); /* ~10 KB: off the stack */
    if (!m) {
        rf_report_free(r);
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    }
    for (size_t i = 0; i < rf_model_find_count(); i++) {
        rf_param_counts p;
        rf_err e;
        uint64_t kv;
        if (rf_model_find(rf_model_find_name(i), NULL, m, &e) || rf_model_params(m, &p, &e) ||
            rf_model_kv_bytes(m, rf_step_opts_for_model(m).kv, 1, &kv, &e)) {
            free(m);
            rf_report_free(r);
            return cli_fail_err(&ctx, &e);
        }
        rf_report_row(r);
        rf_report_cell_str(r, m->name);
        rf_report_cell_str(r, m->family);
        rf_report_cell_int(r, (uint64_t)m->layers);
        rf_report_cell_int(r, (uint64_t)m->hidden);
        rf_report_cell_int(r, (uint64_t)m->n_q);
        rf_report_cell_int(r, (uint64_t)m->n_kv);
        rf_report_cell_int(r, (uint64_t)m->head_dim);
        rf_report_cell_int(r, p.total);
        rf_report_cell_int(r, p.streamed_per_token);
        rf_report_cell_int(r, kv);
    }
    free(m);
    /* what --family takes (the explorer's family control reads it) */
    rf_report_section(r, NULL, NULL);
    rf_report_str(r, "known_families", "families read (--family NAME)", rf_model_known_families());
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}

int cmd_hw(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    int pos, rc = cli_parse(&ctx, io, argc, argv, "hw [--json|--csv]", NULL, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_refuse_unused(&ctx, CLI_G_ROOF | CLI_G_DTYPES | CLI_G_FAMILY,
                                "hw lists the built-in presets as their datasheets give them")))
        return rc;
    if (pos < argc)
        return cli_fail(&ctx, RF_EXIT_USAGE, "unexpected argument '%s'", argv[pos]);
    rf_report *r = rf_report_new("built-in hardware (datasheet, dense peaks)");
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rf_report_assume(r, "figures from the vendors' datasheets (source); a measured profile "
                        "(roofline measure) is accepted wherever --hw is");
    rf_report_assume(r, "%s", RF_HW_USABLE_RULE);
    rf_report_table(r, "hw", NULL);
    rf_report_col(r, "name", "name", RF_U_NONE);
    /* the dense peak of each math dtype a preset may carry, "-" where it
     * has none (an fp4 peak is its own W4A4 figure: nvfp4 and mxfp4 apart) */
    static const struct {
        rf_dtype_kind kind;
        const char *key, *label;
    } peaks[] = {
        {RF_BF16, "bf16_flops_per_s", "bf16"},    {RF_FP8_E4M3, "fp8_flops_per_s", "fp8"},
        {RF_NVFP4, "nvfp4_flops_per_s", "nvfp4"}, {RF_MXFP4, "mxfp4_flops_per_s", "mxfp4"},
        {RF_FP32, "fp32_flops_per_s", "fp32"},
    };
    for (size_t k = 0; k < sizeof peaks / sizeof peaks[0]; k++)
        rf_report_col(r, peaks[k].key, peaks[k].label, RF_U_FLOP_RATE);
    rf_report_col(r, "bandwidth_bytes_per_s", "bandwidth", RF_U_BW);
    rf_report_col(r, "ridge_bf16", "ridge bf16", RF_U_INTENSITY);
    rf_report_col(r, "mem_stated_gb", "stated GB", RF_U_NONE);
    rf_report_col(r, "mem_bytes", "usable", RF_U_BYTES_BIN);
    rf_report_col(r, "source", "source", RF_U_NONE);
    for (size_t i = 0; i < rf_hw_preset_count(); i++) {
        const rf_hw *h = rf_hw_preset_at(i);
        rf_report_row(r);
        rf_report_cell_str(r, h->name);
        for (size_t k = 0; k < sizeof peaks / sizeof peaks[0]; k++) {
            double v = h->peak_flops_per_s[peaks[k].kind];
            if (v > 0)
                rf_report_cell_num(r, v);
            else
                rf_report_cell_null(r, "-");
        }
        rf_report_cell_num(r, h->bw_bytes_per_s);
        rf_report_cell_num(r, h->peak_flops_per_s[RF_BF16] / h->bw_bytes_per_s);
        rf_report_cell_num(r, h->mem_stated_gb);
        rf_report_cell_int(r, h->mem_bytes);
        rf_report_cell_str(r, h->source);
    }
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
