/* rf_reader.h - a model from a HuggingFace config.json.
 *
 * The reader fills an rf_model from the fields HuggingFace transformers
 * defines for each `model_type`:
 *   llama, mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, gemma2,
 *   gemma3 (its text_config) / gemma3_text, phi3, deepseek_v2, deepseek_v3,
 *   kimi_k2 / kimi_k25, deepseek_v32, glm4_moe_lite, glm_moe_dsa, glm4_moe,
 *   gpt_oss, qwen3_next, qwen3_5_moe / qwen3_5 (text_config), llama4
 *   (text_config), nemotron_h, minimax_m2, mimo_v2_flash, gemma4
 *   (text_config)
 * (rf_model_known_families lists the names rf_read_opts.family takes:
 * llama, mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, gemma2,
 * gemma3_text, phi3, deepseek_v2, deepseek_v3, kimi_k2, deepseek_v32,
 * glm4_moe_lite, glm_moe_dsa, glm4_moe, gpt_oss, qwen3_next,
 * qwen3_5_moe_text, qwen3_5_text, llama4_text, nemotron_h, minimax_m2,
 * mimo_v2_flash, gemma4_text; docs/models.md says what each reads exactly,
 * approximates and refuses). A model_type the reader does not know
 * is refused, one line naming it and the known families, unless
 * `architectures` names a class it knows (Kimi-K2's DeepseekV3ForCausalLM)
 * or rf_read_opts.family names the family to read it as. Bare Infinity and
 * NaN values (not JSON, as Python writes them) read as null, counted in the
 * notes.
 *
 * Required: hidden_size and num_hidden_layers always; num_attention_heads,
 * intermediate_size and vocab_size in a family whose configuration class
 * has no default for them (glm4_moe_lite, glm_moe_dsa, minimax_m2, ...);
 * num_experts_per_tok for deepseek_v2 (its configuration class has none).
 * Any other field a config leaves out takes the default of the family's
 * configuration class in transformers (gemma2 ties its embeddings, llama
 * does not; mistral keeps a 4096 window; gemma3's text_config usually omits
 * its heads and vocabulary); the docs' models page lists them. Every default
 * applied to a shape field (heads, KV heads, head_dim, widths, vocabulary,
 * experts, top-k, MLA ranks, max_position_embeddings, ...) is named with its
 * value in one rf_model.notes entry, "absent, FAMILY defaults: key value,
 * ..."; tying, a window and every field ignored have their own. A JSON null
 * in a shape field is refused naming the field ("head_dim is null"), except
 * where transformers reads None as "none of that part" (sliding_window,
 * q_lora_rank, shared_expert_intermediate_size, n_shared_experts).
 *
 * max_context is max_position_embeddings (from text_config when nested),
 * else the family's default; 0 for a family with none. A field present is
 * validated whatever other fields say (layer_types with
 * use_sliding_window false, ...).
 *
 * Quantization: `quantization_config` (at the root of a multimodal wrapper
 * too) by quant_method:
 *   fp8          e4m3 weights (fmt e4m3, e5m2, or torch's float8_e4m3fn /
 *                float8_e5m2); weight_block_size [bk, bn]: one fp32 scale a
 *                bk x bn block (DeepSeek-V3's 128 x 128); W8A8 when it names
 *                an activation_scheme; the router kept unquantized
 *   fbgemm_fp8   Meta's (Llama-4 Maverick): e4m3 weights, one fp32 scale a
 *                row (not counted, noted), W8A8
 *   mxfp4        4-bit elements with an 8-bit scale a 32, on the experts
 *                only unless modules_to_not_convert names what stays (gpt-oss)
 *   gptq, awq, or any method with bits and group_size: int4 / int8 with
 *                2-byte scales a group
 *   bitsandbytes load_in_4bit / load_in_8bit (llm_int8_skip_modules)
 *   compressed-tensors  llm-compressor's config_groups: int4, int8 and
 *                fp8 scaled per tensor, channel, group or block, 4-bit
 *                floats as nvfp4 (group 16) or mxfp4 (group 32); the formats
 *                pack-, int-, float-, naive-, nvfp4-pack-, mxfp4-pack-quantized
 *                and mixed-precision; dense storage only; `ignore` lists (with
 *                re: regexes) what stays unquantized
 *   modelopt     NVIDIA ModelOpt's quant_algo NVFP4 (e2m1 weights, an e4m3
 *                scale a 16: 4.5 bits; the fp32 scale a tensor not counted)
 *                or FP8; quant_algo null with a kv_cache_quant_algo leaves
 *                the weights as torch_dtype says
 * and, read after config.json when the model comes from a file, NVIDIA
 * ModelOpt's hf_quant_config.json beside it (its `quantization` object, the
 * same algorithms; a dtype that contradicts config.json's is refused).
 * Exclude and ignore lists (modules_to_not_convert, ignore,
 * exclude_modules) are matched exactly to the model's module names, layer by
 * layer (the MTP layers numbered after the decoder's): a class named in
 * every layer stays unquantized in all (rf_model.unquantized_modules), one
 * named in some layers only there (unquantized_layer[]); an entry that names
 * no module is refused. Another method is refused rather than counted in the
 * wrong dtype.
 *
 * Errors (RF_EINVAL, RF_ERANGE, RF_EIO, RF_ENOMEM) carry one line that names
 * the file and the field:
 *   "config.json: num_key_value_heads (6) must divide num_attention_heads (32)"
 * The reader never prints.
 */
#ifndef RF_READER_H
#define RF_READER_H

#include <stddef.h>

#include "rf_error.h"
#include "rf_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How to read a config. family: NULL to take the family from model_type
 * (and from `architectures` where model_type names a derivative); a known
 * family's name to read the file as that family (--family), which the model
 * records (rf_model.family_forced_from) so every output can say so. A
 * model_type the reader does not know is refused unless family is given. */
typedef struct rf_read_opts {
    const char *family;
} rf_read_opts;

/* As rf_model_load and rf_model_parse, with options (ro may be NULL). */
rf_status rf_model_load_opts(const char *path, const rf_read_opts *ro, rf_model *out, rf_err *err);
rf_status rf_model_parse_opts(const char *text, size_t len, const char *origin,
                              const rf_read_opts *ro, rf_model *out, rf_err *err);

/* What a command's MODEL argument names: a built-in preset (every preset,
 * those of rf_model_preset and those built from the configs embedded at
 * build time), else a config.json path or a folder holding one. */
rf_status rf_model_find(const char *name_or_path, const rf_read_opts *ro, rf_model *out,
                        rf_err *err);
/* Every preset name, in the order `roofline models` lists them. */
size_t rf_model_find_count(void);
const char *rf_model_find_name(size_t i);

/* The family names the reader knows, ", "-joined (for messages and --help). */
const char *rf_model_known_families(void);

/* Read path: a config.json, or a folder holding one. The model's name is
 * the file's stem, or the folder's name for ".../config.json". On success
 * *out is a validated model (rf_model_validate). */
rf_status rf_model_load(const char *path, rf_model *out, rf_err *err);

/* The same from text in memory (len bytes, no NUL needed); origin names
 * the source in messages and gives the model its name. */
rf_status rf_model_parse(const char *text, size_t len, const char *origin, rf_model *out,
                         rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
