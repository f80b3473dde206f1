/* test_report.c - the writers carry the same numbers; readable units. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_report.h"

static void fmt_is(double v, rf_unit u, const char *want)
{
    char out[64];
    rf_fmt(v, u, out, sizeof out);
    if (strcmp(out, want))
        fail_msg("%.10g formats as '%s', expected '%s'", v, out, want);
}

static void units(void **state)
{
    (void)state;
    /* the seeds' own spellings of their figures; 7.04 ms is this project's
     * exact 23,599,251,456 B / 3.35 TB/s = 7.0446 ms (the book chapter prints 7.05 ms,
     * dividing its rounded 23.6 GB: 23.6 / 3.35 = 7.045) */
    fmt_is(15009316864.0, RF_U_BYTES, "15.01 GB");
    fmt_is(15143534592.0, RF_U_BYTES, "15.14 GB");
    fmt_is(4.48049e-3, RF_U_SECONDS, "4.48 ms");
    fmt_is(7.0445e-3, RF_U_SECONDS, "7.04 ms");
    fmt_is(223.19, RF_U_TOK_RATE, "223 tok/s");
    fmt_is(3119.9, RF_U_TOK_RATE, "3,120 tok/s");
    fmt_is(52.3214 * 1073741824.0, RF_U_BYTES_BIN, "52.32 GiB");
    fmt_is(218103808.0, RF_U_COUNT, "218.1 M");
    fmt_is(131072.0, RF_U_INT, "131,072");
    fmt_is(0.99959, RF_U_INTENSITY4, "0.9996");
    fmt_is(162.88, RF_U_INTENSITY, "162.9");
    fmt_is(3.3496e12, RF_U_FLOP_RATE, "3.350 TFLOP/s");
    /* a ratio of 1,000 or more is grouped, not 3.35e+03 (KV capacity of a
     * small model at a short context) */
    fmt_is(52.3214, RF_U_RATIO, "52.3");
    fmt_is(3348.6, RF_U_RATIO, "3,349");
    fmt_is(0.003386, RF_U_PERCENT, "0.34%");
    /* 999.96 MB must not print as "1000.0 MB" */
    fmt_is(999960000.0, RF_U_BYTES, "1.000 GB");
    fmt_is(NAN, RF_U_BYTES, "-");
    fmt_is(INFINITY, RF_U_SECONDS, "-");
}

static void g6(void **state)
{
    (void)state;
    char out[40];
    const struct {
        double v;
        const char *s;
    } cases[] = {
        {0.00448049266, "0.00448049"},
        {223.19, "223.19"},
        {9085.0339, "9085.03"},
        {1.0, "1"},
        {0, "0"},
        {-2.5, "-2.5"},
        {999999.7, "1000000"},
        {1.5e20, "1.5e+20"},
        {1.23456789e-9, "1.23457e-9"},
        {100.0, "100"},
        {0.1, "0.1"},
        {15009316864.0, "15009300000"},
        /* beyond 1e22: rounding carries (9.999996e30 -> 1e+31), trailing
         * zeros trimmed, the exponent exact however large */
        {9.999996e30, "1e+31"},
        {1.5e30, "1.5e+30"},
        {1e72, "1e+72"},
        {-2.5e-30, "-2.5e-30"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rf_fmt(cases[i].v, RF_U_RAW6, out, sizeof out);
        if (strcmp(out, cases[i].s))
            fail_msg("g6(%.10g) = '%s', expected '%s'", cases[i].v, out, cases[i].s);
    }
    rf_fmt(NAN, RF_U_RAW6, out, sizeof out);
    assert_string_equal(out, "null");
}

static rf_report *sample(void)
{
    rf_report *r = rf_report_new("t");
    rf_report_assume(r, "a \"quoted\" assumption");
    rf_report_int(r, "total_bytes", "step bytes", 15009316864ull, RF_U_BYTES);
    rf_report_num(r, "floor_s", "floor", NAN, RF_U_SECONDS);
    rf_report_null(r, "m_star", "M*", "never");
    rf_report_table(r, "ops", "ops");
    rf_report_col(r, "name", "name", RF_U_NONE);
    rf_report_col(r, "bytes", "bytes", RF_U_BYTES);
    rf_report_row(r);
    rf_report_cell_str(r, "q,proj");
    rf_report_cell_int(r, 50352128);
    return r;
}

/* r rendered in format f into b (emptied first); returns the text. */
static const char *written(const rf_report *r, rf_format f, rf_buf *b)
{
    rf_buf_free(b);
    assert_int_equal(rf_report_write(r, f, b, NULL), RF_OK);
    return b->data;
}

static void writers(void **state)
{
    (void)state;
    rf_report *r = sample();
    rf_buf b;
    rf_buf_init(&b);
    written(r, RF_FMT_JSON, &b);
    /* exact integers, null for a non-finite figure, escaped strings */
    assert_non_null(strstr(b.data, "\"total_bytes\": 15009316864"));
    assert_non_null(strstr(b.data, "\"floor_s\": null"));
    assert_non_null(strstr(b.data, "\"m_star\": null"));
    assert_non_null(strstr(b.data, "a \\\"quoted\\\" assumption"));
    assert_non_null(strstr(b.data, "{\"name\": \"q,proj\", \"bytes\": 50352128}"));
    assert_string_equal(written(r, RF_FMT_CSV, &b), "name,bytes\n\"q,proj\",50352128\n");
    written(r, RF_FMT_TABLE, &b);
    assert_non_null(strstr(b.data, "15.01 GB"));
    assert_non_null(strstr(b.data, "never"));
    assert_non_null(strstr(b.data, "50.35 MB"));
    rf_buf_free(&b);
    rf_report_free(r);
    rf_report_free(NULL);
}

/* No byte below 0x20 but the line ends, and no DEL: a name read from a
 * file cannot break a line of the table or send a terminal escape. */
static void one_line_each(const rf_buf *b, int want_lines)
{
    int lines = 0;
    for (size_t i = 0; i < b->len; i++) {
        unsigned char c = (unsigned char)b->data[i];
        lines += c == '\n';
        if ((c < 0x20 && c != '\n') || c == 0x7f)
            fail_msg("control byte 0x%02x at %zu in:\n%s", c, i, b->data);
    }
    assert_int_equal(lines, want_lines);
}

static void names_sanitized(void **state)
{
    (void)state;
    /* every string a writer prints, each holding a newline or another
     * control character, as a profile's name or a model folder's can */
    rf_report *r = rf_report_new("step on lab\nbox\x1b[31m");
    rf_report_assume(r, "profile lab\r\nbox");
    rf_report_section(r, "hw", "hardware\tlab");
    rf_report_str(r, "name", "name\n", "lab\nbox");
    rf_report_table(r, "ops", "ops of\nlab");
    rf_report_col(r, "name", "op\nname", RF_U_NONE);
    rf_report_row(r);
    rf_report_cell_str(r, "x\ny,z\"q\x7f");
    rf_report_note(r, "note\x1b[0m");
    rf_buf b;
    rf_buf_init(&b);
    written(r, RF_FMT_TABLE, &b);
    /* title, assumption, blank, section, field, blank, table, header, row,
     * blank, note */
    one_line_each(&b, 11);
    assert_non_null(strstr(b.data, "step on lab?box?[31m\n"));
    assert_non_null(strstr(b.data, "  assuming: profile lab??box\n"));
    assert_non_null(strstr(b.data, "  name?  lab?box\n"));
    assert_non_null(strstr(b.data, "x?y,z\"q?"));
    assert_non_null(strstr(b.data, "note?[0m\n"));
    /* CSV: the control characters as in the table, the comma and the quote
     * quoted as CSV quotes them */
    assert_string_equal(written(r, RF_FMT_CSV, &b), "name\n\"x?y,z\"\"q?\"\n");
    /* JSON keeps every character, escaped */
    written(r, RF_FMT_JSON, &b);
    assert_non_null(strstr(b.data, "\"title\": \"step on lab\\nbox\\u001b[31m\""));
    assert_non_null(strstr(b.data, "\"name\": \"x\\ny,z\\\"q\x7f\""));
    rf_buf_free(&b);
    /* streamed rows: the head through the same writer, string cells alike */
    const rf_rowcol cols[] = {{"name", "name", RF_U_NONE, 8}};
    const rf_cell c = {.kind = RF_CELL_STR, .str = "a\nb,c"};
    rf_rows w;
    rf_rows_begin(&w, &b, RF_FMT_TABLE, r, "rows", cols, 1);
    rf_rows_add(&w, &b, &c);
    rf_rows_end(&w, &b);
    assert_non_null(strstr(b.data, "step on lab?box?[31m\n"));
    assert_non_null(strstr(b.data, "     a?b,c\n"));
    rf_buf_free(&b);
    rf_rows_begin(&w, &b, RF_FMT_CSV, r, "rows", cols, 1);
    rf_rows_add(&w, &b, &c);
    rf_rows_end(&w, &b);
    assert_string_equal(b.data, "name\n\"a?b,c\"\n");
    rf_buf_free(&b);
    rf_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(units),
        cmocka_unit_test(g6),
        cmocka_unit_test(writers),
        cmocka_unit_test(names_sanitized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
