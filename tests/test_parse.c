/* test_parse.c - integers, reals, sizes and ranges as a user types them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_parse.h"

/* A prefixed error keeps the failing call's status, with or without an
 * rf_err to write the message into. */
static void error_prefix(void **state)
{
    (void)state;
    rf_err e;
    rf_err_set(&e, RF_ERANGE, "42 is too big");
    assert_int_equal(rf_err_prefix(&e, RF_ERANGE, "--batch"), RF_ERANGE);
    assert_string_equal(e.msg, "--batch: 42 is too big");
    assert_int_equal(rf_err_prefix(NULL, RF_ERANGE, "--batch"), RF_ERANGE);
}

static void sizes(void **state)
{
    (void)state;
    uint64_t b;
    assert_int_equal(rf_parse_size("6GiB", &b, NULL), RF_OK);
    assert_true(b == 6ull << 30);
    /* 79.65 x 2^30 = 85,523,536,281.6 -> nearest byte */
    assert_int_equal(rf_parse_size("79.65GiB", &b, NULL), RF_OK);
    assert_true(b == 85523536282ull);
    assert_int_equal(rf_parse_size("16GB", &b, NULL), RF_OK);
    assert_true(b == 16000000000ull);
    assert_int_equal(rf_parse_size("6 GiB", &b, NULL), RF_OK);
    assert_int_equal(rf_parse_size("4096", &b, NULL), RF_OK);
    assert_true(b == 4096);
    rf_err e;
    assert_int_equal(rf_parse_size("6GiBs", &b, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "6GiBs"));
    assert_int_equal(rf_parse_size("-6GiB", &b, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_size("", &b, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_size("GiB", &b, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_size("inf", &b, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_size("nanGB", &b, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_size("0x10", &b, NULL), RF_EINVAL);
    /* 2e6 x 2^40 = 2.2e18 B, past the 2^60 (1.15e18) a size may reach */
    assert_int_equal(rf_parse_size("2000000TiB", &b, NULL), RF_ERANGE);
}

static void ints(void **state)
{
    (void)state;
    int64_t v;
    assert_int_equal(rf_parse_i64("256", 1, 1000, &v, NULL), RF_OK);
    assert_true(v == 256);
    assert_int_equal(rf_parse_i64("0", 1, 1000, &v, NULL), RF_ERANGE);
    assert_int_equal(rf_parse_i64("-3", 1, 1000, &v, NULL), RF_ERANGE);
    assert_int_equal(rf_parse_i64("12x", 1, 1000, &v, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_i64("+12", 1, 1000, &v, NULL), RF_EINVAL);
    /* too many digits is out of range, not "not an integer" */
    assert_int_equal(rf_parse_i64("99999999999999999999999", 1, INT64_MAX, &v, NULL), RF_ERANGE);
    assert_int_equal(rf_parse_i64("9223372036854775808", 1, INT64_MAX, &v, NULL), RF_ERANGE);
    assert_int_equal(rf_parse_i64("", 1, 10, &v, NULL), RF_EINVAL);
    double d;
    assert_int_equal(rf_parse_f64("0.92", 0, 1, &d, NULL), RF_OK);
    assert_true(d == 0.92);
    assert_int_equal(rf_parse_f64("nan", 0, 1, &d, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_f64("1e999", 0, 1e300, &d, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_f64("1.5", 0, 1, &d, NULL), RF_ERANGE);
}

static void ranges(void **state)
{
    (void)state;
    int64_t v[64];
    size_t n;
    /* powers of two, ends included: 1, 2, 4, ..., 1024 = 11 values */
    assert_int_equal(rf_parse_range("1..1024", 1 << 20, v, 64, &n, NULL), RF_OK);
    assert_int_equal(n, 11);
    assert_true(v[0] == 1 && v[10] == 1024);
    /* a start that is no power of two doubles: 3, 6, 12, 24 */
    assert_int_equal(rf_parse_range("3..24", 1 << 20, v, 64, &n, NULL), RF_OK);
    assert_int_equal(n, 4);
    assert_true(v[3] == 24);
    /* a linear step: 1..10:3 = 1, 4, 7, 10 */
    assert_int_equal(rf_parse_range("1..10:3", 1 << 20, v, 64, &n, NULL), RF_OK);
    assert_int_equal(n, 4);
    assert_true(v[3] == 10);
    assert_int_equal(rf_parse_range("1,16,256", 1 << 20, v, 64, &n, NULL), RF_OK);
    assert_int_equal(n, 3);
    assert_true(v[2] == 256);
    assert_int_equal(rf_parse_range("64", 1 << 20, v, 64, &n, NULL), RF_OK);
    assert_int_equal(n, 1);
    size_t count;
    assert_int_equal(rf_parse_range_count("1..1024:1", 1 << 20, &count, NULL), RF_OK);
    assert_int_equal(count, 1024);
    rf_err e;
    assert_int_equal(rf_parse_range("8..4", 1 << 20, v, 64, &n, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "8..4"));
    assert_int_equal(rf_parse_range("", 1 << 20, v, 64, &n, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_range("1,,2", 1 << 20, v, 64, &n, NULL), RF_EINVAL);
    assert_int_equal(rf_parse_range("0..8", 1 << 20, v, 64, &n, NULL), RF_ERANGE);
    assert_int_equal(rf_parse_range("1..8:0", 1 << 20, v, 64, &n, NULL), RF_ERANGE);
    assert_int_equal(rf_parse_range("1..100:1", 1 << 20, v, 64, &n, NULL), RF_ERANGE);
    assert_int_equal(rf_parse_range("a..b", 1 << 20, v, 64, &n, NULL), RF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error_prefix),
        cmocka_unit_test(sizes),
        cmocka_unit_test(ints),
        cmocka_unit_test(ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
