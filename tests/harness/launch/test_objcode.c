/* SPDX-License-Identifier: MIT */
/*
 * An object's code digest (launch/rg_objcode.c): the same for a copy and for a copy stripped of
 * its symbols and debug information, different once an executable section is gone, and one
 * line naming the file for what is no ELF object, is cut short, claims more code than it
 * holds, is no regular file or is not there.
 */
#include "common/rg_check.h"
#include "launch/rg_launch.h"

#include <elf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
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
    ck_assert_msg(strstr(err, less) && strstr(err, "its section headers past the end"), "%s", err);
    /* A code section larger than the file: refused, not read for ever. */
    sh("cp '%s' '%s'", self, less);
    FILE *f = fopen(less, "r+b");
    ck_assert_ptr_nonnull(f);
    Elf64_Ehdr eh;
    ck_assert_int_eq(fread(&eh, sizeof(eh), 1, f), 1);
    bool patched = false;
    for (unsigned i = 0; i < eh.e_shnum && !patched; i++) {
        Elf64_Shdr s;
        long at = (long)(eh.e_shoff + i * sizeof(s));
        ck_assert_int_eq(fseek(f, at, SEEK_SET), 0);
        ck_assert_int_eq(fread(&s, sizeof(s), 1, f), 1);
        if (s.sh_type != SHT_PROGBITS || !(s.sh_flags & SHF_EXECINSTR))
            continue;
        s.sh_size = 1ull << 40;
        ck_assert_int_eq(fseek(f, at, SEEK_SET), 0);
        ck_assert_int_eq(fwrite(&s, sizeof(s), 1, f), 1);
        patched = true;
    }
    fclose(f);
    ck_assert(patched);
    ck_assert_int_eq(rg_obj_code(less, again, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, less) && strstr(err, "a code section past the end"), "%s", err);
    /* A FIFO (a plan names the path): refused at once, never waited on. */
    sh("rm -f '%s' && mkfifo '%s'", less, less);
    ck_assert_int_eq(rg_obj_code(less, again, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, less) && strstr(err, "not a regular file"), "%s", err);
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
