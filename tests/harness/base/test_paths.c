/* SPDX-License-Identifier: MIT */
/* A command given as one argument (--rank-wrapper, exec's --server and --client): its words and
 * its refusals, each one line. */
#include "common/rg_check.h"
#include "base/rg_base.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(test_command_words)
{
    char buf[64], err[160], *w[5];
    ck_assert_int_eq(rg_command_words("  sh -c\tx  ", buf, sizeof(buf), w, 4, err, sizeof(err)), 3);
    ck_assert_str_eq(w[0], "sh");
    ck_assert_str_eq(w[1], "-c");
    ck_assert_str_eq(w[2], "x");
    ck_assert_ptr_null(w[3]);
    ck_assert_int_eq(rg_command_words("/bin/true", buf, sizeof(buf), w, 4, err, sizeof(err)), 1);

    static const char *const bad[][2] = {
        {"", "empty"},
        {"   ", "empty"},
        {"nosuch-program-here x", "'nosuch-program-here' not found on PATH"},
        {"/etc/passwd", "'/etc/passwd' is not an executable file"},
        {"sh a b c d", "more than 4 words"},
        {"sh a\001b", "a control character in 'sh a?b'"},
        {"sh aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "longer than 63 bytes"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_int_eq(rg_command_words(bad[i][0], buf, sizeof(buf), w, 4, err, sizeof(err)), -1);
        ck_assert_str_eq(err, bad[i][1]);
    }
}
END_TEST

/* --out DIR is made with its parents; a part that is a file stops it with errno. */
START_TEST(test_mkdirs)
{
    char base[] = "/tmp/rg-mkdirs-XXXXXX", deep[PATH_MAX], file[PATH_MAX], under[PATH_MAX + 8];
    struct stat sb;
    ck_assert_ptr_nonnull(mkdtemp(base));
    snprintf(deep, sizeof(deep), "%s/a/b/c", base);
    ck_assert_int_eq(rg_mkdirs(deep), 0);
    ck_assert(stat(deep, &sb) == 0 && S_ISDIR(sb.st_mode));
    ck_assert_int_eq(rg_mkdirs(deep), 0); /* there already: fine */
    snprintf(file, sizeof(file), "%s/f", base);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(under, sizeof(under), "%s/x", file);
    ck_assert_int_eq(rg_mkdirs(under), -1);
    ck_assert_int_eq(errno, ENOTDIR);
    unlink(file);
    rmdir(deep);
    snprintf(deep, sizeof(deep), "%s/a/b", base);
    rmdir(deep);
    snprintf(deep, sizeof(deep), "%s/a", base);
    rmdir(deep);
    rmdir(base);
}
END_TEST

Suite *rg_suite_paths(void)
{
    Suite *s = suite_create("paths");
    TCase *t = tcase_create("words");
    tcase_add_test(t, test_command_words);
    tcase_add_test(t, test_mkdirs);
    suite_add_tcase(s, t);
    return s;
}
