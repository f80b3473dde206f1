/* cuda_lt.c - load cuBLASLt when a GEMM first needs it.
 *
 * libcublasLt is half a gigabyte; linking it would cost every `roofline`
 * run (CPU-only ones too) about 0.3 s of relocation at start-up. It is
 * opened with dlopen instead, by soname first (the loader's search path),
 * then at the toolkit path found at configure time. Once opened it stays
 * mapped until the process exits.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define LT_SONAME "libcublasLt.so." STR(CUBLAS_VER_MAJOR)

#ifndef RF_CUBLASLT_PATH
#define RF_CUBLASLT_PATH LT_SONAME
#endif

/* Resolve one symbol into a typed pointer. POSIX guarantees a function's
 * address survives the round trip through void *. */
static bool sym(void *lib, const char *name, void *slot)
{
    void *p = dlsym(lib, name);
    if (!p)
        return false;
    memcpy(slot, &p, sizeof p);
    return true;
}

static rf_status lt_load(rf__cuda_lt_api *api, rf_err *err)
{
    const char *tried[] = {LT_SONAME, RF_CUBLASLT_PATH};
    const char *why = "";
    for (size_t i = 0; i < sizeof tried / sizeof tried[0] && !api->lib; i++) {
        api->lib = dlopen(tried[i], RTLD_NOW | RTLD_LOCAL);
        if (api->lib)
            snprintf(api->path, sizeof api->path, "%s", tried[i]);
        else
            why = dlerror();
    }
    if (!api->lib)
        return rf_err_set(err, RF_EUNAVAIL, "cuBLASLt not found (tried %s and %s): %s", tried[0],
                          tried[1], why ? why : "");
    struct {
        const char *name;
        void *slot;
    } table[] = {
        {"cublasLtCreate", &api->create},
        {"cublasLtDestroy", &api->destroy},
        {"cublasLtGetVersion", &api->get_version},
        {"cublasLtGetStatusString", &api->status_string},
        {"cublasLtMatmulDescCreate", &api->desc_create},
        {"cublasLtMatmulDescDestroy", &api->desc_destroy},
        {"cublasLtMatmulDescSetAttribute", &api->desc_set},
        {"cublasLtMatrixLayoutCreate", &api->layout_create},
        {"cublasLtMatrixLayoutDestroy", &api->layout_destroy},
        {"cublasLtMatmulPreferenceCreate", &api->pref_create},
        {"cublasLtMatmulPreferenceDestroy", &api->pref_destroy},
        {"cublasLtMatmulPreferenceSetAttribute", &api->pref_set},
        {"cublasLtMatmulAlgoGetHeuristic", &api->heuristic},
        {"cublasLtMatmul", &api->matmul},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!sym(api->lib, table[i].name, table[i].slot)) {
            rf_status st =
                rf_err_set(err, RF_EUNAVAIL, "%s: symbol %s missing", api->path, table[i].name);
            dlclose(api->lib);
            memset(api, 0, sizeof *api);
            return st;
        }
    api->version = api->get_version();
    return RF_OK;
}

rf_status rf__cuda_lt_ready(rf_cuda_ctx *ctx, rf_err *err)
{
    rf_status st = RF_OK;
    if (ctx->lt_handle)
        return RF_OK;
    if (!ctx->lt.lib)
        RF__TRY(lt_load(&ctx->lt, err));
    RF__LT_TRY(ctx, ctx->lt.create(&ctx->lt_handle));
    RF__CUDA_TRY(cudaMalloc(&ctx->workspace, RF__CUDA_LT_WORKSPACE_BYTES));
done:
    if (st != RF_OK && ctx->lt_handle) {
        (void)ctx->lt.destroy(ctx->lt_handle);
        ctx->lt_handle = NULL;
    }
    return st;
}

void rf__cuda_lt_release(rf_cuda_ctx *ctx)
{
    if (ctx->workspace)
        (void)cudaFree(ctx->workspace);
    ctx->workspace = NULL;
    if (ctx->lt_handle)
        (void)ctx->lt.destroy(ctx->lt_handle);
    ctx->lt_handle = NULL;
    /* The library stays mapped: unloading CUDA libraries before exit has
     * crashed their exit handlers, and opening it again is cheap. */
    memset(&ctx->lt, 0, sizeof ctx->lt);
}
