/* SPDX-License-Identifier: MIT */
/* One option table per command (harness/base/rg_opt.c): what it parses, how it refuses (one
 * line naming the flag as typed), and the --help, man page and completion words it writes. */
#include "base/rg_base.h"
#include "common/rg_check.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct topts {
    bool flag, n_given;
    char path[16];
    const char *text;
    int n;
    double secs;
    int called;
};

static int take_mode(void *opts, const rg_opt *o, const char *val, char *why, size_t len)
{
    struct topts *t = opts;
    (void)o, (void)why, (void)len;
    t->called = val ? -1 : 100; /* a flag's call is given no value */
    return 0;
}

static int take_even(void *opts, const rg_opt *o, const char *val, char *why, size_t len)
{
    struct topts *t = opts;
    (void)o;
    if (atoi(val) % 2)
        return snprintf(why, len, "not even '%s'", val), -1;
    t->called = atoi(val);
    return 0;
}

#define TO(f) offsetof(struct topts, f)
static const rg_opt table[] = {
    {.name = "flag", .kind = RG_OPT_FLAG, .help = "A flag.", .off = TO(flag)},
    {.name = "path",
     .kind = RG_OPT_PATH,
     .arg = "P",
     .help = "A path.",
     .off = TO(path),
     .len = sizeof(((struct topts *)0)->path)},
    {.name = "text",
     .letter = 't',
     .kind = RG_OPT_TEXT,
     .arg = "T",
     .help = "Text.",
     .off = TO(text)},
    {.name = "num",
     .letter = 'n',
     .kind = RG_OPT_INT,
     .arg = "N",
     .help = "A number.",
     .off = TO(n),
     .lo = 1,
     .hi = 9,
     .given = TO(n_given) + 1},
    {.name = "secs",
     .kind = RG_OPT_SECONDS,
     .arg = "S",
     .help =
         "Seconds, a long help text "
         "that is folded at the width of the terminal so that it reads as a paragraph in --help.",
     .off = TO(secs),
     .lo = 0.5,
     .hi = 10},
    {.name = "mode", .kind = RG_OPT_CALL, .help = "A call that takes no value.", .call = take_mode},
    {.name = "even", .kind = RG_OPT_CALL, .arg = "E", .help = "An even number.", .call = take_even},
};
#undef TO
static const rg_cli cli = {.cmd = "test",
                           .synopsis = "[options] WORD...",
                           .about = "A test.",
                           .opts = table,
                           .nopts = (int)(sizeof(table) / sizeof(table[0]))};
static const rg_cli cli_plus = {.cmd = "test",
                                .synopsis = "-- CMD",
                                .opts = table,
                                .nopts = (int)(sizeof(table) / sizeof(table[0])),
                                .stop_at_word = true};

static char g_err[2048];

/* Parses argv (NULL-terminated) with stderr caught in g_err; returns rg_cli_parse's answer. */
static int parse(const rg_cli *c, struct topts *t, int *first, const char *const *argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    char *copy[16];
    for (int i = 0; i <= argc; i++)
        copy[i] = (char *)argv[i];
    memset(t, 0, sizeof(*t));
    fflush(stderr);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = rg_cli_parse(c, argc, copy, t, first);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(g_err, 1, sizeof(g_err) - 1, tmp);
    g_err[n] = '\0';
    fclose(tmp);
    return rc;
}

START_TEST(test_opt_takes)
{
    struct topts t;
    int first;
    const char *a[] = {"test",   "--flag", "--path", "/x", "-t", "hi", "--num=3",
                       "--secs", "1.5",    "--even", "4",  "w1", "w2", NULL};
    ck_assert_int_eq(parse(&cli, &t, &first, a), 0);
    ck_assert_str_eq(g_err, "");
    ck_assert(t.flag && t.n_given);
    ck_assert_str_eq(t.path, "/x");
    ck_assert_str_eq(t.text, "hi");
    ck_assert_int_eq(t.n, 3);
    ck_assert(t.secs == 1.5);
    ck_assert_int_eq(t.called, 4);
    ck_assert_int_eq(first, 11);
    /* Without '+', options may follow the words (getopt permutes); with it they end there. */
    const char *b[] = {"test", "w1", "-n", "2", NULL};
    ck_assert_int_eq(parse(&cli, &t, &first, b), 0);
    ck_assert_int_eq(t.n, 2);
    const char *c[] = {"test", "--flag", "cmd", "-n", "2", NULL};
    ck_assert_int_eq(parse(&cli_plus, &t, &first, c), 0);
    ck_assert(t.flag && !t.n_given);
    ck_assert_int_eq(first, 2);
    /* A call with no value's name is a flag: the next word is not its value (bench's
     * --with-shim once swallowed the -b after it). */
    const char *d[] = {"test", "--mode", "-n", "3", NULL};
    ck_assert_int_eq(parse(&cli, &t, &first, d), 0);
    ck_assert_int_eq(t.called, 100);
    ck_assert_int_eq(t.n, 3);
}
END_TEST

/* Every refusal: one line, the flag as typed, the value shown, 2. */
START_TEST(test_opt_refuses)
{
    static const struct {
        const char *argv[4];
        const char *want;
    } cases[] = {
        {{"test", "-n", "0"}, "railguard test: -n: must be 1..9 '0'\n"},
        {{"test", "--num", "x"}, "railguard test: --num: must be 1..9 'x'\n"},
        {{"test", "--secs", "11"}, "railguard test: --secs: not seconds in 0.5..10 '11'\n"},
        {{"test", "--even", "3"}, "railguard test: --even: not even '3'\n"},
        {{"test", "--path", ""}, "railguard test: --path: bad or too long value ''\n"},
        {{"test", "--path", "/a/very/long/path"},
         "railguard test: --path: bad or too long value '/a/very/long/path'\n"},
        {{"test", "--bogus"}, "railguard test: unknown option '--bogus'\n"},
        {{"test", "-q"}, "railguard test: unknown option '-q'\n"},
        {{"test", "--num"}, "railguard test: --num needs a value\n"},
        {{"test", "--flag=1"}, "railguard test: unknown option '--flag=1'\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct topts t;
        int first;
        ck_assert_msg(parse(&cli, &t, &first, cases[i].argv) == 2, "case %zu", i);
        ck_assert_msg(!strcmp(g_err, cases[i].want), "case %zu: want '%s', got '%s'", i,
                      cases[i].want, g_err);
    }
}
END_TEST

/* --help is 1 (exit 0) and prints every option; the man page and the words have each too. */
START_TEST(test_opt_documents)
{
    struct topts t;
    int first;
    const char *h[] = {"test", "--help", NULL};
    fflush(stdout);
    FILE *tmp = tmpfile();
    int saved = dup(1);
    dup2(fileno(tmp), 1);
    int rc = parse(&cli, &t, &first, h);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    ck_assert_int_eq(rc, 1);
    char buf[4096] = "", man[4096] = "", words[512] = "";
    rewind(tmp);
    buf[fread(buf, 1, sizeof(buf) - 1, tmp)] = '\0';
    fclose(tmp);
    FILE *m = fmemopen(man, sizeof(man), "w");
    rg_cli_man(&cli, m);
    fclose(m);
    FILE *w = fmemopen(words, sizeof(words), "w");
    rg_cli_words(&cli, w, true);
    fclose(w);
    ck_assert_ptr_nonnull(strstr(buf, "usage: railguard test [options] WORD...\n"));
    ck_assert_ptr_nonnull(strstr(buf, "  -n, --num N\n      A number.\n"));
    ck_assert_ptr_nonnull(strstr(man, ".SS \"railguard test\"\n"));
    ck_assert_ptr_nonnull(strstr(man, ".BI \"\\-n, \\-\\-num\" \" N\"\n\\&A number.\n"));
    ck_assert_ptr_nonnull(strstr(man, ".B \"\\-\\-flag\"\n"));
    ck_assert_str_eq(words, "--flag --path --text -t --num -n --secs --mode --even --help\n");
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        char want[64];
        snprintf(want, sizeof(want), "--%s", table[i].name);
        ck_assert_msg(strstr(buf, want), "--help lacks %s", want);
        ck_assert_ptr_eq(rg_cli_find(&cli, table[i].name), &table[i]);
    }
    ck_assert_ptr_null(rg_cli_find(&cli, "nope"));
    /* Folded: no help line is longer than the width. */
    for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1)
        ck_assert_msg(nl - l <= 96, "a line of %d: %.*s", (int)(nl - l), (int)(nl - l), l);
}
END_TEST

Suite *rg_suite_opt(void)
{
    Suite *s = suite_create("opt");
    TCase *t = tcase_create("opt");
    tcase_add_test(t, test_opt_takes);
    tcase_add_test(t, test_opt_refuses);
    tcase_add_test(t, test_opt_documents);
    suite_add_tcase(s, t);
    return s;
}
