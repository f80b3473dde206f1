/* hf_internal.h - what the files of the config.json reader share (io layer,
 * private): the reader's state and its field accessors. hf_config.c reads
 * the families and shapes, hf_quant.c the dtypes and quantization. */
#ifndef RF_IO_HF_INTERNAL_H
#define RF_IO_HF_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "roofline/rf_error.h"
#include "roofline/rf_model.h"

/* What a field may be. An absent OPTIONAL field takes its default, which
 * is named in the "absent, FAMILY defaults" note unless QUIET (the caller
 * writes its own note, or the default is "none"). A null is refused unless
 * NULL_IS_ZERO (transformers' None for "no such part": q_lora_rank, ...). */
enum { OPTIONAL = 0, REQUIRED = 1, NULL_IS_ZERO = 2, QUIET = 4 };

typedef struct reader {
    const char *origin; /* the file, for messages                         */
    const json_t *cfg;  /* the decoder's fields (text_config when nested) */
    const json_t *top;  /* the file's root                                */
    rf_model *m;
    rf_err *err;
    char defaulted[640]; /* "key value, ..." of the defaults applied      */
} reader;

/* "origin: message", status s. */
rf_status rf__hf_fail(reader *r, rf_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Append one assumption to m->notes ("; " between them): whole, or cut at
 * a word with " ..." when the rest of the notes cannot hold it; a note
 * already there is not repeated. rf__hf_note formats it first. */
void rf__hf_note_words(rf_model *m, const char *text);
void rf__hf_note(rf_model *m, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
const char *rf__hf_json_kind(const json_t *v);
const json_t *rf__hf_field(const reader *r, const char *key, bool root_too);
void rf__hf_took_default(reader *r, const char *key, int64_t value, const char *how);
rf_status rf__hf_int_at(reader *r, const json_t *v, const char *key, int how, int64_t dflt,
                        int64_t lo, int64_t *out, bool *given);
rf_status rf__hf_int_field(reader *r, const char *key, int how, int64_t dflt, int64_t lo,
                           int64_t *out, bool *given);
rf_status rf__hf_bool_field(reader *r, const char *key, bool root_too, bool dflt, bool *out,
                            bool *given);
rf_status rf__hf_str_field(reader *r, const json_t *obj, const char *key, const char **out);

/* The dtype (torch_dtype or dtype) and the quantization_config (hf_quant.c). */
rf_status rf__hf_read_dtype(reader *r);
rf_status rf__hf_read_quant(reader *r);

/* The quantization files beside config.json in dir (hf_quant.c): NVIDIA
 * ModelOpt's hf_quant_config.json when present (RF_OK when absent), read
 * into r->m after config.json (its shapes and layer kinds known). Messages
 * name that file. */
rf_status rf__hf_read_sidecars(reader *r, const char *dir);

/* The modules an exclude or ignore list names, per layer (hf_quant_names.c).
 * layer[l] holds RF_MOD_BIT classes of layer l; the MTP layers follow the
 * decoder's (index layers + i). */
typedef struct rf__hf_excl {
    uint16_t layer[RF_MODEL_MAX_LAYERS];
    uint32_t global;  /* lm_head, embedding                                  */
    uint32_t partial; /* classes an entry named by one of their matrices    */
    bool vision;      /* an entry named a module outside the text decoder    */
} rf__hf_excl;

/* Match one entry (a module name with * and ? wildcards, or "re:" and a
 * Python regular expression matched from the start) against every module
 * name of r->m and add the classes of those it names to ex; *mods gets
 * them (0 for norms and biases, which are modules all the same). RF_EINVAL
 * naming field[i] for an entry that names no module, or a form that cannot
 * be matched. */
rf_status rf__hf_excl_match(reader *r, rf__hf_excl *ex, const char *field, size_t i,
                            const char *entry, uint32_t *mods);

/* The module classes layer l holds (an MTP layer, l >= layers, the last
 * decoder layer's). */
uint32_t rf__hf_layer_modules(const rf_model *m, int64_t l);

#endif
