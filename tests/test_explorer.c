/* test_explorer.c - the explorer's place in the report page (rf_explorer.h):
 * inserted before </body> of a page rf_report_write_html wrote, its state
 * (the command line and the files it reads) as JSON that no text can break
 * out of, the module and the script inside CDATA; refused on a page that
 * does not end as the writer ends one. Built with RF_EXPLORER_BUILT as the
 * binary is, so a build without emcc checks the refusal and the note. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_explorer.h"
#include "roofline/rf_plot.h"

/* A page as the report writes it: one table, no figure. */
static void page(rf_buf *b)
{
    rf_err e;
    rf_report *r = rf_report_new("explorer test");
    rf_report_table(r, "t", "a table");
    rf_report_col(r, "x", "x", RF_U_INT);
    rf_report_row(r);
    rf_report_cell_int(r, 1);
    rf_buf_init(b);
    assert_int_equal(rf_report_write_html(r, NULL, 0, b, &e), RF_OK);
    rf_report_free(r);
}

static void appended(void **state)
{
    (void)state;
    rf_buf b;
    rf_err e;
    page(&b);
    size_t before = b.len;
    const char *args[] = {"cfg.json", "--batch", "64", "--hw", "a\"b</script>&"};
    /* a file whose text would end a script and a CDATA section if it were
     * copied in as it is */
    const char text[] = "{\"x\": \"</script><b>]]>\"}\n";
    rf_explorer_file files[] = {{"cfg.json", text, sizeof text - 1}};
    rf_status s = rf_explorer_append(&b, args, 5, files, 1, &e);
    if (!rf_explorer_built()) {
        assert_int_equal(s, RF_EUNAVAIL);
        assert_non_null(strstr(e.msg, "without the explorer"));
        assert_non_null(rf_explorer_note());
        assert_int_equal(b.len, before);
        rf_buf_free(&b);
        return;
    }
    assert_int_equal(s, RF_OK);
    assert_null(rf_explorer_note());
    const char *h = b.data;
    /* the page's own text is unchanged up to its </main> */
    const char *main_end = strstr(h, "</main>\n");
    assert_non_null(main_end);
    assert_int_equal((size_t)(main_end - h), before - strlen("</main>\n</body>\n</html>\n"));
    /* the state: the arguments and the file, '<', '>' and '&' escaped */
    assert_non_null(strstr(h, "<script type=\"application/json\" id=\"rf-explorer-state\">"
                              "{\"args\": [\"cfg.json\", \"--batch\", \"64\", \"--hw\", "
                              "\"a\\\"b\\u003c/script\\u003e\\u0026\"], \"files\": "
                              "[{\"path\": \"cfg.json\", \"text\": \"{\\\"x\\\": "
                              "\\\"\\u003c/script\\u003e\\u003cb\\u003e]]\\u003e\\\"}\\u000a\"}]}"
                              "</script>\n"));
    /* one </script> for each of the three scripts, and nothing after the
     * last but the page's end */
    size_t n = 0;
    for (const char *p = h; (p = strstr(p, "</script>")); p++)
        n++;
    assert_int_equal(n, 3);
    assert_non_null(strstr(h, "<script>//<![CDATA[\n"));
    const char *end = "\n//]]></script>\n</body>\n</html>\n";
    assert_string_equal(h + b.len - strlen(end), end);
    assert_non_null(strstr(h, "createRoofline"));
    assert_non_null(strstr(h, "<style>/*<![CDATA[*/\n"));
    rf_buf_free(&b);
}

static void refused(void **state)
{
    (void)state;
    rf_buf b;
    rf_err e;
    rf_buf_init(&b);
    rf_buf_puts(&b, "<html><body><p>not the report's page</p></body></html>\n");
    size_t len = b.len;
    rf_status s = rf_explorer_append(&b, NULL, 0, NULL, 0, &e);
    assert_int_equal(s, rf_explorer_built() ? RF_EINVAL : RF_EUNAVAIL);
    assert_int_equal(b.len, len);
    rf_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(appended),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
