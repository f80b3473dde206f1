/* model_find.c - what a command's MODEL argument names (rf_reader.h): a
 * preset of rf_model_preset, a preset built from an embedded config.json
 * (model_configs.h), else a config.json path or a folder holding one. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "roofline/rf_reader.h"

#include "model_configs.h"

size_t rf_model_find_count(void) { return rf_model_preset_count() + rf__model_config_count; }

const char *rf_model_find_name(size_t i)
{
    if (i < rf_model_preset_count())
        return rf_model_preset_at(i)->name;
    i -= rf_model_preset_count();
    return i < rf__model_config_count ? rf__model_configs[i].name : NULL;
}

/* A name that is no file and does not look like a path either. */
static bool looks_like_a_name(const char *s)
{
    struct stat st;
    size_t n = strlen(s);
    return stat(s, &st) != 0 && !strchr(s, '/') && !(n > 5 && !strcmp(s + n - 5, ".json"));
}

rf_status rf_model_find(const char *name_or_path, const rf_read_opts *ro, rf_model *out,
                        rf_err *err)
{
    const char *s = name_or_path ? name_or_path : "";
    for (size_t i = 0; i < rf_model_preset_count(); i++)
        if (!strcmp(s, rf_model_preset_at(i)->name))
            return rf_model_preset(s, out, err);
    for (size_t i = 0; i < rf__model_config_count; i++)
        if (!strcmp(s, rf__model_configs[i].name))
            return rf_model_parse_opts(rf__model_configs[i].text, rf__model_configs[i].len, s, ro,
                                       out, err);
    if (!looks_like_a_name(s))
        return rf_model_load_opts(s, ro, out, err);
    /* rf_model_preset's aliases (the config files' stems) and its message,
     * with every preset named */
    if (rf_model_preset(s, out, err) == RF_OK)
        return RF_OK;
    char known[2048];
    size_t used = 0;
    for (size_t i = 0; i < rf_model_find_count() && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                 rf_model_find_name(i));
    return rf_err_set(err, RF_EINVAL, "unknown model '%s' (known: %s; or a config.json path)", s,
                      known);
}
