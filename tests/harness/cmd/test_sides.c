/* SPDX-License-Identifier: MIT */
/* run's own words as compare and bisect pass them on (cmd/rg_sides.c): split by run's option
 * table into options with their values and scenarios, the options the caller sets refused. */
#include "cmd/rg_cmd.h"
#include "common/rg_check.h"

#include <stdarg.h>
#include <string.h>

static int split(rg_runargs *ra, char *err, size_t len, int n, ...)
{
    static char *words[32];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        words[i] = va_arg(ap, char *);
    va_end(ap);
    return rg_runargs_split(n, words, ra, err, len);
}

START_TEST(test_split)
{
    static rg_runargs ra;
    char err[300];
    /* Values in the next word and in the same one, a letter's too; a flag takes none. */
    ck_assert_int_eq(split(&ra, err, sizeof(err), 7, "-j", "2", "a.yaml", "--seed=7", "--uc-as-rc",
                           "scenarios/", "-j2"),
                     0);
    ck_assert_int_eq(ra.nopts, 5);
    ck_assert_str_eq(ra.opts[0], "-j");
    ck_assert_str_eq(ra.opts[1], "2");
    ck_assert_str_eq(ra.opts[2], "--seed=7");
    ck_assert_str_eq(ra.opts[3], "--uc-as-rc");
    ck_assert_str_eq(ra.opts[4], "-j2");
    ck_assert_int_eq(ra.nfiles, 2);
    ck_assert_str_eq(ra.files[0], "a.yaml");
    ck_assert_str_eq(ra.files[1], "scenarios/");
    /* Nothing at all: the stock suite, no options. */
    ck_assert_int_eq(split(&ra, err, sizeof(err), 0), 0);
    ck_assert(ra.nopts == 0 && ra.nfiles == 0);
    /* Refused, each with its line. */
    ck_assert_int_eq(split(&ra, err, sizeof(err), 2, "--out", "x"), -1);
    ck_assert_msg(strstr(err, "--out is set by this command"), "%s", err);
    ck_assert_int_eq(split(&ra, err, sizeof(err), 1, "--transport=x.so"), -1);
    ck_assert_msg(strstr(err, "--transport is set"), "%s", err);
    ck_assert_int_eq(split(&ra, err, sizeof(err), 1, "--trace"), -1); /* every run has it */
    ck_assert_msg(strstr(err, "--trace is set"), "%s", err);
    ck_assert_int_eq(split(&ra, err, sizeof(err), 1, "--no-such"), -1);
    ck_assert_msg(strstr(err, "'--no-such' is not an option of railguard run"), "%s", err);
    ck_assert_int_eq(split(&ra, err, sizeof(err), 2, "a.yaml", "--seed"), -1);
    ck_assert_msg(strstr(err, "--seed needs a value"), "%s", err);
    ck_assert_int_eq(split(&ra, err, sizeof(err), 2, "--", "a.yaml"), -1);
    ck_assert_msg(strstr(err, "'--' twice"), "%s", err);
}
END_TEST

Suite *rg_suite_sides(void)
{
    Suite *s = suite_create("sides");
    TCase *t = tcase_create("sides");
    tcase_add_test(t, test_split);
    suite_add_tcase(s, t);
    return s;
}
