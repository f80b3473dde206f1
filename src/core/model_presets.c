/* model_presets.c - built-in models, each from its real config.json in
 * tests/data/models/ (the test suite reads those files and compares). */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_model.h"

#include "names.h"

#define BF16                                                                                       \
    {                                                                                              \
        .kind = RF_BF16                                                                            \
    }

/* Gemma-2: HF Gemma2 makes even layers (0, 2, ...) sliding. */
#define ALT_SLIDING_42                                                                             \
    {                                                                                              \
        1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0,  \
            1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0                                                     \
    }

static const rf_model presets[] = {
    {.name = "qwen2.5-7b-instruct",
     .family = "qwen2", /* qwen2.5-7b-instruct.json */
     .hidden = 3584,
     .layers = 28,
     .n_q = 28,
     .n_kv = 4,
     .head_dim = 128,
     .ffn = 18944,
     .vocab = 152064,
     .tied = false,
     .qkv_bias = true,
     .max_context = 32768, /* max_position_embeddings */
     .weight_dtype = BF16,
     .has_weight_dtype = true,
     .unquantized_dtype = BF16},
    {.name = "llama-3-8b",
     .family = "llama", /* meta-llama-3-8b.json */
     .hidden = 4096,
     .layers = 32,
     .n_q = 32,
     .n_kv = 8,
     .head_dim = 128,
     .ffn = 14336,
     .vocab = 128256,
     .tied = false,
     .max_context = 8192, /* max_position_embeddings */
     .weight_dtype = BF16,
     .has_weight_dtype = true,
     .unquantized_dtype = BF16},
    {.name = "qwen2.5-3b-instruct",
     .family = "qwen2", /* qwen2.5-3b-instruct.json */
     .hidden = 2048,
     .layers = 36,
     .n_q = 16,
     .n_kv = 2,
     .head_dim = 128,
     .ffn = 11008,
     .vocab = 151936,
     .tied = true,
     .qkv_bias = true,
     .max_context = 32768, /* max_position_embeddings */
     .weight_dtype = BF16,
     .has_weight_dtype = true,
     .unquantized_dtype = BF16},
    {.name = "mixtral-8x7b",
     .family = "mixtral", /* mixtral-8x7b-v0.1.json */
     .hidden = 4096,
     .layers = 32,
     .n_q = 32,
     .n_kv = 8,
     .head_dim = 128,
     .ffn = 14336,
     .vocab = 32000,
     .tied = false,
     .n_experts = 8,
     .top_k = 2,
     .moe_ffn = 14336,
     .max_context = 32768, /* max_position_embeddings */
     .weight_dtype = BF16,
     .has_weight_dtype = true,
     .unquantized_dtype = BF16},
    {.name = "gemma-2-9b-it",
     .family = "gemma2", /* gemma-2-9b-it.json */
     .hidden = 3584,
     .layers = 42,
     .n_q = 16,
     .n_kv = 8,
     .head_dim = 256,
     .ffn = 14336,
     .vocab = 256000,
     .tied = true,
     .window = 4096,
     .sliding = ALT_SLIDING_42,
     .max_context = 8192, /* max_position_embeddings */
     .weight_dtype = BF16,
     .has_weight_dtype = true,
     .unquantized_dtype = BF16},
    {.name = "deepseek-v2-lite",
     .family = "deepseek_v2", /* deepseek-v2-lite.json */
     .hidden = 2048,
     .layers = 27,
     .n_q = 16,
     .n_kv = 16,
     .head_dim = 192,
     .ffn = 10944,
     .vocab = 102400,
     .tied = false,
     .n_experts = 64,
     .top_k = 6,
     .n_shared = 2,
     .moe_ffn = 1408,
     .first_dense = 1,
     .moe_freq = 1,
     .q_lora_rank = 0,
     .kv_lora_rank = 512,
     .qk_nope_dim = 128,
     .qk_rope_dim = 64,
     .v_head_dim = 128,
     .max_context = 163840, /* max_position_embeddings */
     .weight_dtype = BF16,
     .has_weight_dtype = true,
     .unquantized_dtype = BF16},
};

size_t rf_model_preset_count(void) { return sizeof presets / sizeof presets[0]; }

const rf_model *rf_model_preset_at(size_t i)
{
    return i < rf_model_preset_count() ? &presets[i] : NULL;
}

/* Accepted alternative names: the config file stems. */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"meta-llama-3-8b", "llama-3-8b"},
    {"mixtral-8x7b-v0.1", "mixtral-8x7b"},
};

static const char *preset_name(size_t i) { return presets[i].name; }

rf_status rf_model_preset(const char *name, rf_model *out, rf_err *err)
{
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (name && !strcmp(name, aliases[i].alias))
            name = aliases[i].name;
    for (size_t i = 0; i < rf_model_preset_count(); i++)
        if (name && !strcmp(name, presets[i].name)) {
            *out = presets[i];
            return RF_OK;
        }
    char known[512];
    rf__join_names(known, sizeof known, rf_model_preset_count(), preset_name);
    return rf_err_set(err, RF_EINVAL, "unknown model '%s' (known: %s; or a config.json path)",
                      name ? name : "", known);
}
