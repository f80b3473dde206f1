/* test_explorer_json.c - what one JSON reader makes of files: for each
 * path, "path: line L column C position P: message" when the reader refuses
 * it, else the value written back with json_dumps (indent 2, 17 digits).
 *
 * Built twice, against jansson and against json_lite (the WebAssembly
 * build's reader, src/io/json_lite.c); test_explorer_json.sh runs both
 * over every test and fuzz file and wants the same bytes, so the explorer
 * in the browser reads config.json and profiles as the native tool does. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "roofline/rf_file.h"

static int show(const char *path)
{
    char *buf = NULL;
    size_t n = 0;
    rf_err err;
    if (rf_file_read_all(path, RF_FILE_MAX_BYTES, &buf, &n, &err))
        return fprintf(stderr, "%s\n", err.msg), 1;
    json_error_t e;
    json_t *root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &e);
    free(buf);
    if (!root) {
        printf("%s: line %d column %d position %d: %s\n", path, e.line, e.column, e.position,
               e.text);
        return 0;
    }
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(root);
    printf("%s:\n%s\n", path, text ? text : "(json_dumps failed)");
    free(text);
    return !text;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= show(argv[i]);
    return rc;
}
