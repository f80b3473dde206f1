/* model_configs.h - the config.json texts built into the library (io layer,
 * private): the presets of rf_model_find beyond rf_model_preset's. The
 * build writes the table (cmake/RfModelConfigs.cmake) from the files of
 * tests/data/models/ that it names; nothing reads those files at run time. */
#ifndef RF_IO_MODEL_CONFIGS_H
#define RF_IO_MODEL_CONFIGS_H

#include <stddef.h>

typedef struct rf__model_config {
    const char *name; /* the preset's name ("llama-4-scout")               */
    const char *file; /* the file it was built from, in tests/data/models/ */
    const char *text; /* its bytes, NUL-terminated                         */
    size_t len;       /* bytes, the NUL excluded                           */
} rf__model_config;

extern const rf__model_config rf__model_configs[];
extern const size_t rf__model_config_count;

#endif
