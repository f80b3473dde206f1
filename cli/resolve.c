/* resolve.c - MODEL and --hw made into a model and a roof: presets,
 * config.json files, measured profiles, the overrides; each file read once
 * a command, into ctx->run, which also lists them. (This machine's roof
 * measured now is lab/lab_roof.c's: the lab's.) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opts.h"
#include "resolve.h"
#include "roofline/rf_file.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_reader.h"

/* A file this command has read (CLI_INPUT_MODEL: the model's config.json,
 * CLI_INPUT_PROFILE: a hardware profile), kept in ctx->run: cli_write_file
 * never writes over one of them. */
static void note_input(cli_ctx *ctx, int slot, const char *path)
{
    struct stat st;
    bool folder = stat(path, &st) == 0 && S_ISDIR(st.st_mode); /* a model folder */
    snprintf(ctx->run.read[slot], sizeof ctx->run.read[slot], folder ? "%s/config.json" : "%s",
             path);
}

void cli_inputs(const cli_ctx *ctx, const char *list[CLI_N_INPUTS + 1])
{
    size_t n = 0;
    for (size_t i = 0; i < CLI_N_INPUTS; i++)
        if (ctx->run.read[i][0])
            list[n++] = ctx->run.read[i];
    list[n] = NULL;
}

static bool is_preset(const char *name)
{
    for (size_t i = 0; i < rf_model_find_count(); i++)
        if (!strcmp(rf_model_find_name(i), name))
            return true;
    return false;
}

/* MODEL read as family (NULL: its own): a preset, else a config.json or a
 * folder holding one (rf_model_find), noted as an input. */
static int resolve_as(cli_ctx *ctx, const char *text, const char *family, rf_model *out)
{
    rf_err e;
    rf_read_opts ro = {family};
    if (!text || !*text)
        return cli_fail(ctx, RF_EXIT_USAGE, "empty model name");
    if (rf_model_find(text, &ro, out, &e))
        return cli_fail_err(ctx, &e); /* the reader's line, as it gives it */
    if (!is_preset(text))
        note_input(ctx, CLI_INPUT_MODEL, text);
    return RF_EXIT_OK;
}

int cli_resolve_model(cli_ctx *ctx, const char *text, rf_model *out)
{
    int rc = resolve_as(ctx, text, ctx->family, out);
    if (rc)
        return rc;
    /* a preset built into the library (not from a config) keeps its own
     * family: --family there would be ignored, so it is refused */
    if (ctx->family && !out->family_forced_from[0])
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--family %s: %s is a built-in preset, read as %s; --family reads a "
                        "config.json",
                        ctx->family, out->name, out->family);
    ctx->family_as[0] = ctx->family_from[0] = '\0';
    if (out->family_forced_from[0]) {
        snprintf(ctx->family_as, sizeof ctx->family_as, "%s", out->family);
        snprintf(ctx->family_from, sizeof ctx->family_from, "%s", out->family_forced_from);
    }
    return RF_EXIT_OK;
}

int cli_resolve_draft(cli_ctx *ctx, const char *text, rf_model *out)
{
    return resolve_as(ctx, text, NULL, out);
}

int cli_model_hw_setup(cli_ctx *ctx, int argc, char **argv, int pos, rf_model *m, rf_step_opts *o)
{
    int rc;
    if (argc - pos != 1)
        return cli_fail(ctx, RF_EXIT_USAGE, "expected one MODEL (a preset or a config.json)");
    if ((rc = cli_resolve_model(ctx, argv[pos], m)))
        return rc;
    cli_apply_dtypes(ctx, m, o);
    return cli_resolve_hw(ctx);
}

int cli_model_setup(cli_ctx *ctx, int argc, char **argv, int pos, rf_model *m, rf_step_opts *o,
                    rf_roof *roof)
{
    int rc = cli_model_hw_setup(ctx, argc, argv, pos, m, o);
    return rc ? rc : cli_resolve_roof(ctx, rf_dtype_math(o->w, o->a), roof);
}

bool cli_math_given(const cli_ctx *ctx, rf_dtype_kind math)
{
    return (ctx->a_given && ctx->a.kind == math) || (ctx->w_given && ctx->w.kind == math);
}

int cli_resolve_roof(cli_ctx *ctx, rf_dtype_kind math, rf_roof *roof)
{
    rf_err e;
    int rc = cli_resolve_hw(ctx);
    if (rc)
        return rc;
    if (ctx->peak_tflops > 0)
        ctx->hw.peak_flops_per_s[rf_hw_peak_kind(math)] = ctx->peak_tflops * 1e12;
    if (rf_hw_roof_for(&ctx->hw, math, cli_math_given(ctx, math), roof, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

rf_status cli_read_profile(cli_ctx *ctx, const char *name, rf_err *e)
{
    cli_run *run = &ctx->run;
    rf_hw_profile *p = malloc(sizeof *p);
    if (!p)
        return rf_err_set(e, RF_ENOMEM, "out of memory");
    rf_status s = rf_hw_profile_load(name, p, e);
    if (s == RF_OK && (s = rf_hw_profile_to_hw(p, &run->hw, e)))
        rf_err_prefix(e, s, "%s", name); /* the figure is the file's */
    if (s == RF_OK) {
        note_input(ctx, CLI_INPUT_PROFILE, name);
        snprintf(run->hw_origin, sizeof run->hw_origin, "profile %.80s (measured %s)", name,
                 p->date[0] ? p->date : "undated");
        run->profile = true;
        run->sustained_bw = p->bandwidth_sustained_bytes_per_s;
        run->calibrated = p->calib.version != 0;
        if (run->calibrated)
            run->calib = p->calib;
    }
    free(p);
    return s;
}

/* --hw into ctx->run, once a command: a preset, else a profile from
 * `roofline measure` (already read when the lab's profile took its
 * calibration first). */
static int read_hw(cli_ctx *ctx)
{
    rf_err e;
    cli_run *run = &ctx->run;
    const char *name = ctx->hw_name ? ctx->hw_name : "h100-sxm";
    if (rf_hw_preset(name, &run->hw, &e) == RF_OK) {
        snprintf(run->hw_origin, sizeof run->hw_origin, "preset %s", run->hw.name);
    } else if (run->profile || access(name, F_OK) == 0) {
        /* measure: not a preset but a file: a profile from `roofline measure` */
        if (!run->profile && cli_read_profile(ctx, name, &e))
            return cli_fail_err(ctx, &e);
    } else {
        return cli_fail_err(ctx, &e);
    }
    run->hw_resolved = true;
    return RF_EXIT_OK;
}

int cli_resolve_hw(cli_ctx *ctx)
{
    rf_err e;
    if (ctx->peak_tflops > 0 && ctx->ridge > 0)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--peak and --ridge both set the compute roof (pi = ridge x bw); give one");
    int rc = ctx->run.hw_resolved ? RF_EXIT_OK : read_hw(ctx);
    if (rc)
        return rc;
    ctx->hw = ctx->run.hw; /* afresh each call: the overrides go on the roof as named */
    memcpy(ctx->hw_origin, ctx->run.hw_origin, sizeof ctx->hw_origin);
    if (ctx->bw_tbps > 0)
        ctx->hw.bw_bytes_per_s = ctx->bw_tbps * 1e12;
    if (ctx->mem_bytes)
        ctx->hw.mem_bytes = ctx->mem_bytes;
    if (ctx->ridge > 0)
        ctx->hw.ridge_override = ctx->ridge;
    if (rf_hw_validate(&ctx->hw, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

void cli_apply_dtypes(const cli_ctx *ctx, const rf_model *m, rf_step_opts *o)
{
    o->w = ctx->w_given               ? ctx->w
           : m && m->has_weight_dtype ? m->weight_dtype
                                      : rf_dtype_of(RF_BF16);
    o->w_all_modules = ctx->w_given; /* models: an override covers every module */
    o->a = !ctx->a_given && m && m->has_act_dtype ? m->act_dtype : ctx->a;
    o->kv = ctx->kv;
    o->out = ctx->y;
    o->has_out = ctx->y_given;
}

int cli_check_output(const cli_ctx *ctx, const char *path, const char *const *inputs)
{
    rf_err e;
    if (!path || !strcmp(path, "-") || rf_file_check_dest(path, inputs, &e) == RF_OK)
        return RF_EXIT_OK;
    return cli_fail_err(ctx, &e);
}
