/* rf_explorer.h - the interactive explorer of the HTML report: the
 * command line compiled to WebAssembly, inlined in the page with the
 * script that drives it (docs/explorer.md).
 *
 * A page from rf_report_write_html is complete without it: every figure
 * and table is there, and reads with JavaScript off. The explorer adds,
 * before the page's </body>, a panel of controls (model, hardware, dtypes,
 * batch, context, tokens, attention, TP/PP) whose every change runs the
 * same `roofline report` in the page and puts its figures and tables in
 * place of the ones shown. Everything is inline (no network, works from
 * file://). The module is built by emscripten with the binary (cmake
 * option RF_WASM, when emcc is found) and embedded in it.
 */
#ifndef RF_EXPLORER_H
#define RF_EXPLORER_H

#include <stdbool.h>
#include <stddef.h>

#include "roofline/rf_error.h"
#include "roofline/rf_report.h"

/* A file the page's command line reads (a config.json, a profile), by the
 * path it is named by there: the page writes it to that path in the
 * module's in-memory file system before it runs a command. */
typedef struct rf_explorer_file {
    const char *path;
    const char *text;
    size_t len;
} rf_explorer_file;

/* True when this binary carries the module (built with emcc). */
bool rf_explorer_built(void);

/* A line for the report's notes when the page will have no explorer (the
 * binary was built without emcc), else NULL (built; or this is the module
 * itself, running inside a page). */
const char *rf_explorer_note(void);

/* Add the explorer to page, an HTML page from rf_report_write_html: its
 * style, its state (args, the n_args arguments of `roofline report` that
 * wrote the page, without -o FILE; and the files they name) as JSON, the
 * module and the script, inserted before the page's closing </body>. The
 * additions are well-formed XML, as the page is (the scripts inside
 * CDATA sections). RF_EUNAVAIL when not built; RF_EINVAL when page does
 * not end as rf_report_write_html ends a page; RF_ENOMEM. */
rf_status rf_explorer_append(rf_buf *page, const char *const *args, size_t n_args,
                             const rf_explorer_file *files, size_t n_files, rf_err *err);

#endif
