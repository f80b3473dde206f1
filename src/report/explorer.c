/* explorer.c - the WebAssembly explorer put into a report page
 * (rf_explorer.h). The module, script and style are the arrays
 * explorer_assets.c holds (written at build time by wasm/embed.c); a
 * build without emcc compiles this file alone, with RF_EXPLORER_BUILT 0. */
#include <string.h>

#include "roofline/rf_explorer.h"

#ifndef RF_EXPLORER_BUILT
#define RF_EXPLORER_BUILT 0
#endif

#if RF_EXPLORER_BUILT
extern const unsigned char rf__explorer_module[], rf__explorer_script[], rf__explorer_style[];
#endif

bool rf_explorer_built(void) { return RF_EXPLORER_BUILT; }

const char *rf_explorer_note(void)
{
#if RF_EXPLORER_BUILT || defined(RF_EXPLORER_IN_BROWSER)
    return NULL;
#else
    return "This page is static: the roofline that wrote it was built without emscripten (emcc), "
           "so it carries no interactive explorer (docs/explorer.md).";
#endif
}

/* s as a JSON string whose text is also safe inside an XML element and a
 * script: '<', '>' and '&' as \u escapes, so no "</script" and no markup. */
static void json_string(rf_buf *b, const char *s, size_t n)
{
    rf_buf_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            rf_buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f)
            rf_buf_printf(b, "\\u%04x", c);
        else
            rf_buf_put(b, (const char *)&c, 1);
    }
    rf_buf_puts(b, "\"");
}

#if RF_EXPLORER_BUILT
/* A script or style element with its text in a CDATA section, the
 * section's markers inside comments of the element's language, so the
 * page parses as HTML and as XML (embed.c has refused a text that holds
 * "</script", "</style" or "]]>"). */
static void element(rf_buf *b, const char *tag, const char *text, const char *open,
                    const char *close)
{
    rf_buf_printf(b, "<%s>%s\n", tag, open);
    rf_buf_puts(b, text);
    rf_buf_printf(b, "\n%s</%s>\n", close, tag);
}
#endif

rf_status rf_explorer_append(rf_buf *page, const char *const *args, size_t n_args,
                             const rf_explorer_file *files, size_t n_files, rf_err *err)
{
#if RF_EXPLORER_BUILT
    static const char page_end[] = "</main>\n</body>\n</html>\n"; /* rf_report_write_html's */
    size_t tail = sizeof page_end - 1;
    if (page->len < tail || memcmp(page->data + page->len - tail, page_end, tail))
        return rf_err_set(err, RF_EINVAL, "the explorer goes into a page that ends in </main>");
    page->len -= tail;
    rf_buf_puts(page, "</main>\n");
    element(page, "style", (const char *)rf__explorer_style, "/*<![CDATA[*/", "/*]]>*/");
    rf_buf_puts(page, "<script type=\"application/json\" id=\"rf-explorer-state\">{\"args\": [");
    for (size_t i = 0; i < n_args; i++) {
        rf_buf_puts(page, i ? ", " : "");
        json_string(page, args[i], strlen(args[i]));
    }
    rf_buf_puts(page, "], \"files\": [");
    for (size_t i = 0; i < n_files; i++) {
        rf_buf_puts(page, i ? ", " : "");
        rf_buf_puts(page, "{\"path\": ");
        json_string(page, files[i].path, strlen(files[i].path));
        rf_buf_puts(page, ", \"text\": ");
        json_string(page, files[i].text, files[i].len);
        rf_buf_puts(page, "}");
    }
    rf_buf_puts(page, "]}</script>\n");
    element(page, "script", (const char *)rf__explorer_module, "//<![CDATA[", "//]]>");
    element(page, "script", (const char *)rf__explorer_script, "//<![CDATA[", "//]]>");
    rf_buf_puts(page, "</body>\n</html>\n");
    if (page->failed)
        return rf_err_set(err, RF_ENOMEM, "out of memory while adding the explorer");
    return RF_OK;
#else
    (void)page, (void)args, (void)n_args, (void)files, (void)n_files;
    (void)json_string;
    return rf_err_set(err, RF_EUNAVAIL, "this roofline was built without the explorer (emcc)");
#endif
}
