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
#include <sys/wait.h>
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

/* Words as a shell splits them, without expansions: quotes, escapes, empty words, joined
 * lines; and the refusals, each one line. */
START_TEST(test_split_words)
{
    static const struct {
        const char *in;
        int n;
        const char *w[6];
    } good[] = {
        {"a b", 2, {"a", "b"}},
        {"sh -c 'echo \"hi there\"; exit 3'", 3, {"sh", "-c", "echo \"hi there\"; exit 3"}},
        {"x \"a \\\"b\\\" \\$HOME \\q\"", 2, {"x", "a \"b\" $HOME \\q"}},
        {"x '' \"\"", 3, {"x", "", ""}},
        {"x a\\ b c'd e'f", 3, {"x", "a b", "cd ef"}},
        {"x $HOME *.c {port}", 4, {"x", "$HOME", "*.c", "{port}"}},
        {"x a\\\nb", 2, {"x", "ab"}},
        {"-x VAR=\"a b\"", 2, {"-x", "VAR=a b"}},
        {"", 0, {NULL}},
        {" \t ", 0, {NULL}},
    };
    char buf[128], err[160], *w[8];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int n = rg_split_words(good[i].in, buf, sizeof(buf), w, 6, err, sizeof(err));
        ck_assert_msg(n == good[i].n, "'%s': %d words (%s)", good[i].in, n, n < 0 ? err : "");
        for (int k = 0; k < n; k++)
            ck_assert_str_eq(w[k], good[i].w[k]);
        ck_assert_ptr_null(w[n]);
    }
    static const char *const bad[][2] = {
        {"sh -c 'x", "an unclosed single quote in 'sh -c 'x'"},
        {"sh \"x", "an unclosed double quote in 'sh \"x'"},
        {"a b c d e f g", "more than 6 words"},
        {"a\nb", "a control character in 'a?b'"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_int_eq(rg_split_words(bad[i][0], buf, sizeof(buf), w, 6, err, sizeof(err)), -1);
        ck_assert_str_eq(err, bad[i][1]);
    }
    /* Exactly full, and one byte past it. */
    char big[40];
    memset(big, 'x', sizeof(big));
    big[sizeof(big) - 1] = '\0';
    ck_assert_int_eq(rg_split_words(big, buf, 40, w, 6, err, sizeof(err)), 1);
    ck_assert_str_eq(w[0], big);
    ck_assert_int_eq(rg_split_words(big, buf, 39, w, 6, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "longer than 38 bytes");
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

/*
 * A helper program to its end or its deadline: its output kept (and the rest drained, so a
 * chatty one never blocks), its status, a missing one named, a slow one killed on time.
 */
START_TEST(test_capture)
{
    char out[16], why[200] = "";
    int st = -1;
    ck_assert_int_eq(
        rg_capture((char *[]){"printf", "hello", NULL}, 5, out, sizeof(out), &st, why, sizeof(why)),
        0);
    ck_assert_str_eq(out, "hello");
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_int_eq(rg_capture((char *[]){"sh", "-c", "seq 100000; exit 3", NULL}, 10, out,
                                sizeof(out), &st, why, sizeof(why)),
                     0);
    ck_assert_str_eq(out, "1\n2\n3\n4\n5\n6\n7\n8");
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    ck_assert_int_eq(rg_capture((char *[]){"rg-no-such-program", NULL}, 5, out, sizeof(out), &st,
                                why, sizeof(why)),
                     -1);
    ck_assert_str_eq(why, "rg-no-such-program is not installed");
    double t0 = rg_now_s();
    ck_assert_int_eq(
        rg_capture((char *[]){"sleep", "30", NULL}, 0.3, out, sizeof(out), &st, why, sizeof(why)),
        -1);
    ck_assert_msg(rg_now_s() - t0 < 10, "waited %.1f s", rg_now_s() - t0);
    ck_assert_str_eq(why, "sleep took over 0.3 s: killed");
}
END_TEST

/* A rank's own rails from a JACCL devices file: lists, a single name, the file's faults named. */
START_TEST(test_devices_of_rank)
{
    static const struct {
        const char *text;
        int rank, n;
        const char *first, *err;
    } cases[] = {
        {"[[null, [\"rxe0\", \"rxe1\"]], [[\"rxe2\", \"rxe3\"], null]]", 1, 2, "rxe2", ""},
        {"[[null, \"rxe0\"], [\"rxe0\", null]]", 0, 1, "rxe0", ""},
        {"[[null, \"rxe0\"]]", 1, 0, NULL, "no row of rails for rank 1"},
        {"[[null, [\"rxe0\", 7]]]", 0, 0, NULL, "rank 0: rail 1 is not a device name"},
        {"[[null,", 0, 0, NULL, ":1: "},
    };
    char path[] = "/tmp/rg-devices-XXXXXX", devs[RG_MAX_RAILS][64], err[300];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        FILE *f = fopen(path, "w");
        fputs(cases[i].text, f);
        fclose(f);
        int n = -1;
        err[0] = '\0';
        int rc = rg_devices_of_rank(path, cases[i].rank, devs, &n, err, sizeof(err));
        ck_assert_msg(rc == (cases[i].first ? 0 : -1), "%zu: %d %s", i, rc, err);
        if (cases[i].first) {
            ck_assert_int_eq(n, cases[i].n);
            ck_assert_str_eq(devs[0], cases[i].first);
        } else {
            ck_assert_msg(strstr(err, cases[i].err) && strstr(err, path), "%zu: %s", i, err);
        }
    }
    unlink(path);
}
END_TEST

Suite *rg_suite_paths(void)
{
    Suite *s = suite_create("paths");
    TCase *t = tcase_create("words");
    tcase_add_test(t, test_command_words);
    tcase_add_test(t, test_split_words);
    tcase_add_test(t, test_mkdirs);
    tcase_add_test(t, test_capture);
    tcase_add_test(t, test_devices_of_rank);
    suite_add_tcase(s, t);
    return s;
}
