/* SPDX-License-Identifier: MIT */
/*
 * An object's code digest (launch/rg_objcode.c): the same for a copy and for a copy stripped of
 * its symbols and debug information, different once an executable section is gone, and one
 * line naming the file for what is no ELF object, is cut short or is not there.
 */
#include "common/rg_check.h"
#include "launch/rg_launch.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[] = "/tmp/rg-objcode-XXXXXX";

__attribute__((format(printf, 1, 2))) static void sh(const char *fmt, ...)
{
    char cmd[3 * PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

START_TEST(test_obj_code)
{
    char self[PATH_MAX], copy[PATH_MAX + 64], bare[PATH_MAX + 64], less[PATH_MAX + 64];
    char code[17], again[17], err[PATH_MAX + 128];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    snprintf(copy, sizeof(copy), "%s/copy", g_dir);
    snprintf(bare, sizeof(bare), "%s/bare", g_dir);
    snprintf(less, sizeof(less), "%s/less", g_dir);
    ck_assert_msg(rg_obj_code(self, code, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(strlen(code), 16);
    ck_assert_uint_eq(strspn(code, "0123456789abcdef"), 16);
    sh("cp '%s' '%s'", self, copy);
    ck_assert_msg(rg_obj_code(copy, again, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_eq(again, code);
    /* Symbols and debug information are no code. */
    sh("objcopy --strip-all '%s' '%s'", self, bare);
    ck_assert_msg(rg_obj_code(bare, again, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_eq(again, code);
    /* An executable section fewer is other code. */
    sh("objcopy --remove-section .fini '%s' '%s'", self, less);
    ck_assert_msg(rg_obj_code(less, again, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_ne(again, code);
    /* What is not an object, or not all of one. */
    sh("echo 'not code' > '%s'", bare);
    ck_assert_int_eq(rg_obj_code(bare, again, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, bare) && strstr(err, ": not an ELF object"), "%s", err);
    ck_assert_str_eq(again, "");
    sh("head -c 100 '%s' > '%s'", self, less);
    ck_assert_int_eq(rg_obj_code(less, again, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, less) && strstr(err, "cut short"), "%s", err);
    ck_assert_int_eq(rg_obj_code("/nonexistent/x.so", again, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "/nonexistent/x.so: No such file"), "%s", err);
    sh("rm -rf '%s'", g_dir);
}
END_TEST

Suite *rg_suite_objcode(void)
{
    Suite *s = suite_create("objcode");
    TCase *t = tcase_create("digest");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_obj_code);
    suite_add_tcase(s, t);
    return s;
}
