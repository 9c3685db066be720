/* SPDX-License-Identifier: MIT */
/* The one error table: enum values, names and texts agree, and the error record keeps the first. */
#include "common/rg_check.h"
#include "rg_internal.h"

#include <string.h>

#define ROW(name, value, text) {name, value, #name, text},
static const struct {
    rg_status st;
    int value;
    const char *name, *text;
} rows[] = {RG_STATUS_TABLE(ROW)};
#undef ROW
static const int nrows = (int)(sizeof(rows) / sizeof(rows[0]));

START_TEST(test_table_strings_match_rows)
{
    ck_assert_int_eq(rows[_i].st, rows[_i].value);
    ck_assert_str_eq(rg_err_name(rows[_i].st), rows[_i].name);
    ck_assert_str_eq(rg_strerror(rows[_i].st), rows[_i].text);
    /* Statuses are 0 or negative, and unique. */
    ck_assert_int_le(rows[_i].value, 0);
    for (int j = 0; j < nrows; j++)
        if (j != _i)
            ck_assert_int_ne(rows[j].value, rows[_i].value);
}
END_TEST

START_TEST(test_unknown_status)
{
    ck_assert_str_eq(rg_strerror((rg_status)-999), "unknown status");
    ck_assert_str_eq(rg_err_name((rg_status)42), "RG_ERR_UNKNOWN");
}
END_TEST

START_TEST(test_err_keeps_first)
{
    struct rg_err e;
    rg__err_clear(&e);
    ck_assert_int_eq(e.st, RG_OK);
    ck_assert_int_eq(rg__err_set(&e, RG_ERR_COMPLETION, "rank %d: first", 1), RG_ERR_COMPLETION);
    /* A later error is returned to its caller but does not overwrite the first. */
    ck_assert_int_eq(rg__err_set(&e, RG_ERR_TIMEOUT, "second"), RG_ERR_TIMEOUT);
    ck_assert_int_eq(e.st, RG_ERR_COMPLETION);
    ck_assert_str_eq(e.msg, "rank 1: first");
    /* A NULL record is allowed: the status still comes back. */
    ck_assert_int_eq(rg__err_set(NULL, RG_ERR_NOMEM, "x"), RG_ERR_NOMEM);
}
END_TEST

START_TEST(test_err_truncates_long_message)
{
    struct rg_err e;
    char big[1000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    rg__err_clear(&e);
    rg__err_set(&e, RG_ERR_VERBS, "%s", big);
    ck_assert_uint_eq(strlen(e.msg), sizeof(e.msg) - 1);
}
END_TEST

Suite *rg_suite_status(void)
{
    Suite *s = suite_create("status");
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, test_table_strings_match_rows, 0, nrows);
    tcase_add_test(tc, test_unknown_status);
    tcase_add_test(tc, test_err_keeps_first);
    tcase_add_test(tc, test_err_truncates_long_message);
    suite_add_tcase(s, tc);
    return s;
}
