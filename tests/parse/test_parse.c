/* SPDX-License-Identifier: MIT */
/* The shared value parsers: what each accepts, and the near misses each refuses. */
#include "common/rg_check.h"
#include "rg_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(test_parse_int)
{
    int64_t v = 7;
    ck_assert_int_eq(rg_parse_int("0", 0, 10, &v), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(rg_parse_int("010", 0, 100, &v), 0);
    ck_assert_int_eq(v, 10); /* decimal, never octal */
    ck_assert_int_eq(rg_parse_int("-5", -10, 10, &v), 0);
    ck_assert_int_eq(v, -5);
    ck_assert_int_eq(rg_parse_int("-9223372036854775808", INT64_MIN, 0, &v), 0);
    ck_assert(v == INT64_MIN);
    ck_assert_int_eq(rg_parse_int("9223372036854775807", 0, INT64_MAX, &v), 0);
    v = 7;
    static const char *const bad[] = {
        "", " 1", "1 ", "+1", "-1", "1x", "0x10", "1.0", "11", "9223372036854775808", "1\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(rg_parse_int(bad[i], 0, 10, &v) == -1, "'%s' accepted", bad[i]);
    ck_assert_int_eq(v, 7); /* untouched on error */
    ck_assert_int_eq(rg_parse_int(NULL, 0, 10, &v), -1);
}
END_TEST

START_TEST(test_parse_uint)
{
    uint64_t v = 0;
    ck_assert_int_eq(rg_parse_uint("0x1F", true, 0, 100, &v), 0);
    ck_assert_uint_eq(v, 31);
    ck_assert_int_eq(rg_parse_uint("0x1F", false, 0, 100, &v), -1);
    ck_assert_int_eq(rg_parse_uint("18446744073709551615", false, 0, UINT64_MAX, &v), 0);
    ck_assert(v == UINT64_MAX);
    ck_assert_int_eq(rg_parse_uint("18446744073709551616", false, 0, UINT64_MAX, &v), -1);
    ck_assert_int_eq(rg_parse_uint("0x", true, 0, 100, &v), -1);
    ck_assert_int_eq(rg_parse_uint("0x10000000000000000", true, 0, UINT64_MAX, &v), -1);
    ck_assert_int_eq(rg_parse_uint("-0", false, 0, 100, &v), -1);
    ck_assert_int_eq(rg_parse_uint("3", false, 4, 100, &v), -1);
}
END_TEST

START_TEST(test_parse_seconds)
{
    double v = 0;
    ck_assert_int_eq(rg_parse_seconds("10", 0, 100, &v), 0);
    ck_assert(v == 10);
    ck_assert_int_eq(rg_parse_seconds("1.5", 0, 100, &v), 0);
    ck_assert(v == 1.5);
    ck_assert_int_eq(rg_parse_seconds(".25", 0, 100, &v), 0);
    ck_assert(v == 0.25);
    static const char *const bad[] = {"",   ".",  "0x10", "1e3",  "inf",   "nan", "-1",
                                      "+1", " 1", "1s",   "1..2", "1.2.3", "1,5", "101"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(rg_parse_seconds(bad[i], 0, 100, &v) == -1, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(test_parse_size_bool_show)
{
    uint64_t v = 0;
    ck_assert_int_eq(rg_parse_size("4096", 0, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 4096);
    ck_assert_int_eq(rg_parse_size("64K", 0, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 65536);
    ck_assert_int_eq(rg_parse_size("16M", 0, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 16u << 20);
    ck_assert_int_eq(rg_parse_size("1G", 0, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 1u << 30);
    static const char *const bad[] = {"",   "K",   " 4096", "+4096", "4096 ",
                                      "4k", "4KB", "0x10",  "-1",    "17179869184G"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(rg_parse_size(bad[i], 0, UINT64_MAX, &v) == -1, "'%s' accepted", bad[i]);
    ck_assert_int_eq(rg_parse_size("8K", 0, 4096, &v), -1);

    bool b = true;
    ck_assert_int_eq(rg_parse_bool("0", &b), 0);
    ck_assert(!b);
    ck_assert_int_eq(rg_parse_bool("1", &b), 0);
    ck_assert(b);
    ck_assert_int_eq(rg_parse_bool("yes", &b), -1);
    ck_assert_int_eq(rg_parse_bool("", &b), -1);
    ck_assert_int_eq(rg_parse_bool("01", &b), -1);

    char out[72], big[200];
    ck_assert_str_eq(rg_parse_show("a\nb\tc", out, sizeof(out)), "a?b?c");
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    rg_parse_show(big, out, sizeof(out));
    ck_assert_uint_eq(strlen(out), 64);
    ck_assert_str_eq(out + 61, "...");
}
END_TEST

START_TEST(test_parse_hostport)
{
    ck_assert_ptr_null(rg_parse_hostport_problem("a:1"));
    ck_assert_ptr_null(rg_parse_hostport_problem("[::1]:65535"));
    ck_assert_str_eq(rg_parse_hostport_problem("nocolon"), "expected host:port");
    ck_assert_str_eq(rg_parse_hostport_problem(":1"), "empty host, expected host:port");
    ck_assert_str_eq(rg_parse_hostport_problem("::1:5"),
                     "an IPv6 host needs brackets, as in [::1]:port");
    ck_assert_str_eq(rg_parse_hostport_problem("h:0"), "the port must be a number 1..65535");
    ck_assert_str_eq(rg_parse_hostport_problem("h:+5"), "the port must be a number 1..65535");
    ck_assert_str_eq(rg_parse_hostport_problem("a b:5"),
                     "the host has a blank or control character");
    ck_assert_str_eq(rg_parse_hostport_problem(NULL), "expected host:port");
}
END_TEST

/* The one reader of the job secret (the transport's config tests cover its every refusal). */
START_TEST(test_parse_secret)
{
    char out[RG_PARSE_SECRET_MAX + 1], err[256], path[] = "/tmp/rg-parse-secret-XXXXXX";
    unsetenv("RG_SECRET");
    unsetenv("RG_SECRET_FILE");
    ck_assert_int_eq(rg_parse_secret_env(out, err, sizeof(err)), 0);
    ck_assert_str_eq(out, "");
    setenv("RG_SECRET", "short", 1);
    ck_assert_int_eq(rg_parse_secret_env(out, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "RG_SECRET='...': a secret needs at least 16 characters");
    unsetenv("RG_SECRET");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "0123456789abcdefX\n", 18), 18);
    close(fd);
    setenv("RG_SECRET_FILE", path, 1);
    ck_assert_int_eq(chmod(path, 0640), 0);
    ck_assert_int_eq(rg_parse_secret_env(out, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "group or others may read it"));
    ck_assert_int_eq(chmod(path, 0600), 0);
    ck_assert_int_eq(rg_parse_secret_env(out, err, sizeof(err)), 0);
    ck_assert_str_eq(out, "0123456789abcdefX");
    setenv("RG_SECRET", "the-environment-wins", 1);
    ck_assert_int_eq(rg_parse_secret_env(out, err, sizeof(err)), 0);
    ck_assert_str_eq(out, "the-environment-wins");
    unsetenv("RG_SECRET");
    unsetenv("RG_SECRET_FILE");
    unlink(path);
}
END_TEST

Suite *rg_suite_parse(void)
{
    Suite *s = suite_create("parse");
    TCase *t = tcase_create("values");
    tcase_add_test(t, test_parse_int);
    tcase_add_test(t, test_parse_uint);
    tcase_add_test(t, test_parse_seconds);
    tcase_add_test(t, test_parse_size_bool_show);
    tcase_add_test(t, test_parse_hostport);
    tcase_add_test(t, test_parse_secret);
    suite_add_tcase(s, t);
    return s;
}
