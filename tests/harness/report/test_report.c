/* SPDX-License-Identifier: MIT */
/* Verdict logic and the report writers: JSON round trip, JUnit XML, the table's last line. */
#include "common/rg_check.h"
#include "judge/rg_judge.h"
#include "report/rg_report.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rg_result mk(int ranks, const rg_verdict *v, const rg_sc_expect *e)
{
    rg_result r;
    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "case");
    r.ranks = ranks;
    for (int i = 0; i < ranks; i++) {
        r.rank[i].verdict = v[i];
        r.rank[i].t_s = -1;
        r.expect[i] = e[i];
        r.expect_at[i] = RG_SC_AT_ANY;
        snprintf(r.rank[i].where, sizeof(r.rank[i].where), "all_reduce float32 sum count 3");
        snprintf(r.rank[i].detail, sizeof(r.rank[i].detail), "detail %d", i);
    }
    return r;
}

START_TEST(test_judge)
{
    const rg_sc_expect ok2[] = {RG_SC_EXPECT_OK, RG_SC_EXPECT_OK};
    const rg_sc_expect flush[] = {RG_SC_EXPECT_ANY, RG_SC_EXPECT_DETECTED, RG_SC_EXPECT_ANY};
    struct {
        int ranks;
        rg_verdict v[3];
        const rg_sc_expect *e;
        bool pass;
        const char *why;
    } cases[] = {
        {2, {RG_V_OK, RG_V_OK}, ok2, true, ""},
        {2, {RG_V_OK, RG_V_DETECTED}, ok2, false, "rank 1: detected, expected ok: detail 1"},
        {3, {RG_V_OK, RG_V_DETECTED, RG_V_DETECTED}, flush, true, ""},
        {3,
         {RG_V_DETECTED, RG_V_OK, RG_V_OK},
         flush,
         false,
         "rank 1: ok, expected detected: detail 1"},
        /* The hard failures win over a plain mismatch reported earlier in rank order. */
        {3,
         {RG_V_OK, RG_V_OK, RG_V_SILENT_CORRUPTION},
         flush,
         false,
         "rank 2: SILENT_CORRUPTION in all_reduce float32 sum count 3: detail 2"},
        {3,
         {RG_V_DEADLOCK, RG_V_DETECTED, RG_V_OK},
         flush,
         false,
         "rank 0: DEADLOCK in all_reduce float32 sum count 3: detail 0"},
        {2,
         {RG_V_CRASH, RG_V_OK},
         ok2,
         false,
         "rank 0: CRASH in all_reduce float32 sum count 3: detail 0"},
        {3,
         {RG_V_ERROR, RG_V_DETECTED, RG_V_OK},
         flush,
         false,
         "rank 0: ERROR in all_reduce float32 sum count 3: detail 0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rg_result r = mk(cases[i].ranks, cases[i].v, cases[i].e);
        ck_assert_msg(rg_judge(&r) == cases[i].pass, "case %zu", i);
        ck_assert_int_eq(r.passed, cases[i].pass);
        ck_assert_str_eq(r.why, cases[i].why);
    }
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A function of this binary for a fault's site to name; noinline so it has its own address. */
int rg_test_report_site(int x);
__attribute__((noinline)) int rg_test_report_site(int x)
{
    return x * 5 + 2;
}

START_TEST(test_json_round_trip)
{
    const rg_verdict v[] = {RG_V_DETECTED, RG_V_DEADLOCK, RG_V_OK};
    const rg_sc_expect e[] = {RG_SC_EXPECT_DETECTED, RG_SC_EXPECT_ANY, RG_SC_EXPECT_OK};
    rg_result r = mk(3, v, e), back;
    char path[] = "/tmp/rg-report-XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    r.rank[1].step = 4;
    r.rank[1].rep = 2;
    r.rank[0].status = RG_ERR_RAIL_MISMATCH;
    r.rank[0].step = -1;
    r.rank[1].status = RG_STATUS_V1;
    r.expect_at[0] = RG_SC_AT_INIT;
    r.expect_cls[0] = 1u << -RG_ERR_RAIL_MISMATCH;
    snprintf(r.repro, sizeof(r.repro), "railguard run --seed 3 x.yaml");
    r.seconds = 1.5;
    /* A rule that landed in this very test binary, at a function it has debug information for;
     * one that landed in no readable object. */
    char exe[PATH_MAX];
    ssize_t en = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ck_assert_int_gt(en, 0);
    exe[en] = '\0';
    Dl_info di;
    ck_assert(dladdr((void *)rg_test_report_site, &di) != 0);
    r.nrules = 2;
    snprintf(r.rule[0].rule, sizeof(r.rule[0].rule), "error op=recv nth=2");
    ck_assert_uint_lt(strlen(exe), 400);
    snprintf(r.rule[0].site, sizeof(r.rule[0].site), "%.400s+0x%lx", exe,
             (unsigned long)((uintptr_t)rg_test_report_site - (uintptr_t)di.dli_fbase + 4));
    snprintf(r.rule[1].rule, sizeof(r.rule[1].rule), "lose op=send nth=1");
    /* With a caller: the call path the shim unwound, innermost first. */
    snprintf(r.rule[1].site, sizeof(r.rule[1].site),
             "/nonexistent/libgone.so+0x10</nonexistent/libgone.so+0x20");
    /* What the receiving devices said of a wire rule; the other rule is no wire's. */
    r.rule[0].rx_pkts = r.rule[0].rx_dup = r.rule[0].rx_oos = -1;
    r.rule[1].rx_pkts = 1000;
    r.rule[1].rx_dup = 7;
    r.rule[1].rx_oos = 0;
    rg_judge(&r);
    ck_assert_int_eq(rg_result_save(&r, path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert_int_eq(back.ranks, 3);
    ck_assert_int_eq(back.passed, 0);
    ck_assert_str_eq(back.why, r.why);
    ck_assert_str_eq(back.repro, r.repro);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(back.rank[i].verdict, v[i]);
        ck_assert_int_eq(back.expect[i], e[i]);
        ck_assert_str_eq(back.rank[i].detail, r.rank[i].detail);
    }
    ck_assert_int_eq(back.rank[1].step, 4);
    ck_assert_int_eq(back.rank[1].rep, 2);
    ck_assert(back.seconds == 1.5);
    /* The class a rank failed with, and the class it was expected to carry. */
    ck_assert_int_eq(back.rank[0].status, RG_ERR_RAIL_MISMATCH);
    ck_assert_int_eq(back.rank[1].status, RG_STATUS_V1);
    ck_assert_int_eq(back.rank[2].status, 0);
    ck_assert_int_eq(back.expect_at[0], RG_SC_AT_INIT);
    ck_assert_uint_eq(back.expect_cls[0], 1u << -RG_ERR_RAIL_MISMATCH);
    ck_assert(back.rule[0].rx_pkts == -1 && back.rule[0].rx_dup == -1 && back.rule[0].rx_oos == -1);
    ck_assert(back.rule[1].rx_pkts == 1000 && back.rule[1].rx_dup == 7 && back.rule[1].rx_oos == 0);
    /* The live line shows where and why a detected rank failed. */
    char *line = NULL;
    size_t llen = 0;
    FILE *mf = open_memstream(&line, &llen);
    rg_report_line(mf, &back);
    fclose(mf);
    ck_assert_msg(strstr(line, "  detected@init:rail_mismatch,DEADLOCK,ok  "), "%s", line);
    /* And where each fault landed, named, or said to have no name. */
    ck_assert_str_eq(back.rule[0].site, r.rule[0].site);
    ck_assert_msg(strstr(line, "      fault 1 landed at rg_test_report_site at ") &&
                      strstr(line, "test_report.c:"),
                  "%s", line);
    ck_assert_msg(strstr(line,
                         "      fault 2 landed at libgone.so+0x10 (no debug info, no symbol)\n"
                         "        called from libgone.so+0x20 (no debug info, no symbol)\n"),
                  "%s", line);
    ck_assert_msg(strstr(line, "      faults item 2, the receiving devices' own counters: 1000 "
                               "packets taken, 7 duplicates discarded, 0 requests out of "
                               "sequence\n"),
                  "%s", line);
    ck_assert_msg(!strstr(line, "faults item 1, the receiving"), "%s", line);
    free(line);
    /* A damaged file is an error naming it, not a half-filled result. */
    FILE *f = fopen(path, "w");
    fputs("{\"ranks\": [{\"verdict\": \"maybe\"}]}", f);
    fclose(f);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, path) && strstr(err, "rank 0"), "%s", err);
    unlink(path);
}
END_TEST

START_TEST(test_junit)
{
    const rg_verdict v[] = {RG_V_OK, RG_V_SILENT_CORRUPTION};
    const rg_sc_expect e[] = {RG_SC_EXPECT_OK, RG_SC_EXPECT_OK};
    rg_result res[2] = {mk(2, v, e), mk(2, v, e)};
    res[0].rank[1].verdict = RG_V_OK;
    snprintf(res[1].name, sizeof(res[1].name), "bad<&>\"name");
    snprintf(res[1].rank[1].detail, sizeof(res[1].rank[1].detail), "element 3 is <0x1> & \x01");
    rg_judge(&res[0]);
    rg_judge(&res[1]);
    char path[] = "/tmp/rg-junit-XXXXXX", err[256];
    int fd = mkstemp(path);
    close(fd);
    ck_assert_int_eq(rg_report_junit(res, 2, 3.25, NULL, path, err, sizeof(err)), 0);
    const char *x = slurp(path);
    ck_assert_msg(strstr(x, "<testsuites tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" "
                            "time=\"3.250\">"),
                  "%s", x);
    ck_assert_msg(strstr(x, "<testcase classname=\"railguard.scenarios\" name=\"case\""), "%s", x);
    ck_assert_msg(strstr(x, "name=\"bad&lt;&amp;&gt;&quot;name\""), "%s", x);
    ck_assert_msg(strstr(x, "element 3 is &lt;0x1&gt; &amp; ?"), "%s", x);
    ck_assert_msg(strstr(x, "<failure message=\"rank 1: SILENT_CORRUPTION"), "%s", x);
    ck_assert_ptr_null(strchr(x, '\x01'));
    unlink(path);
}
END_TEST

/*
 * Too slow to judge: its word, its measurements and the second attempt's note round-trip
 * through result.json, JUnit calls it an error (could not conclude), not a failure, and the
 * table counts it apart from both.
 */
START_TEST(test_too_slow)
{
    const rg_verdict v[] = {RG_V_ERROR_WITHOUT_FAULT, RG_V_OK};
    const rg_sc_expect e[] = {RG_SC_EXPECT_OK, RG_SC_EXPECT_OK};
    rg_result res[3] = {mk(2, v, e), mk(2, v, e), mk(2, v, e)}, back;
    res[1].rank[0].verdict = RG_V_OK;
    res[2].rank[0].verdict = RG_V_OK;
    for (int i = 0; i < 3; i++)
        rg_judge(&res[i]);
    rg_result *r = &res[0];
    r->too_slow = true;
    r->attempts = 2;
    r->time_scale = 4;
    r->lag_s = 0.125;
    r->rank[1].start_s = 2.0625;
    r->rank[1].start_unseen = true;
    r->rank[0].cpu_wait_s = 0.1 + 0.2; /* no short decimal: every digit must come back */
    r->rank[0].start_s = -1;
    r->rank[1].sockets_known = true; /* a count of 0 is a count; rank 0's is not known */
    r->rank[1].sockets = 0;
    snprintf(r->slow_note, sizeof(r->slow_note), "judged on a second attempt with every time x4");
    snprintf(r->sites_note, sizeof(r->sites_note), "each_site error: 3 call site(s), 5 point(s)");
    snprintf(r->why, sizeof(r->why), "too slow to judge: rank 1 started 2.06 s late");
    res[1].attempts = 2; /* passed on its second attempt */
    ck_assert_str_eq(rg_result_word(r), "SLOW");
    ck_assert_str_eq(rg_result_word(&res[1]), "PASS");
    char path[] = "/tmp/rg-slow-XXXXXX", err[256];
    int fd = mkstemp(path);
    close(fd);
    ck_assert_int_eq(rg_result_save(r, path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert(back.too_slow && !back.passed && back.attempts == 2 && back.time_scale == 4);
    ck_assert(back.lag_s == 0.125 && back.rank[1].start_s == 2.0625);
    ck_assert(back.rank[1].start_unseen && !back.rank[0].start_unseen);
    ck_assert(back.rank[0].cpu_wait_s == 0.1 + 0.2 && back.rank[0].start_s == -1);
    ck_assert(back.rank[1].sockets_known && back.rank[1].sockets == 0 &&
              !back.rank[0].sockets_known);
    ck_assert_str_eq(back.slow_note, r->slow_note);
    ck_assert_str_eq(back.sites_note, r->sites_note);
    /* A result made without a scale is written as the one attempt at scale 1. */
    ck_assert_int_eq(rg_result_save(&res[2], path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert(back.attempts == 1 && back.time_scale == 1 && !back.too_slow);
    /* Out of range: refused, naming the file. */
    FILE *f = fopen(path, "w");
    fputs("{\"ranks\": [], \"time_scale\": 0}", f);
    fclose(f);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, path) && strstr(err, "time_scale"), "%s", err);
    f = fopen(path, "w");
    fputs("{\"ranks\": [{\"verdict\": \"ok\", \"expect\": \"ok\", \"start_s\": -2}]}", f);
    fclose(f);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "start_s"), "%s", err);
    f = fopen(path, "w");
    fputs("{\"ranks\": [{\"verdict\": \"ok\", \"expect\": \"ok\", \"sockets\": -1}]}", f);
    fclose(f);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, path) && strstr(err, "sockets"), "%s", err);

    ck_assert_int_eq(rg_report_junit(res, 3, 1.0, NULL, path, err, sizeof(err)), 0);
    const char *x = slurp(path);
    ck_assert_msg(strstr(x, "tests=\"3\" failures=\"0\" errors=\"1\""), "%s", x);
    ck_assert_msg(strstr(x, "<error message=\"too slow to judge: rank 1 started 2.06 s late\">"),
                  "%s", x);
    ck_assert_msg(strstr(x, "</error>"), "%s", x);
    unlink(path);

    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    rg_report_line(mf, r);
    rg_report_table(mf, res, 3, 1.0);
    fclose(mf);
    ck_assert_msg(strstr(buf, "SLOW  case"), "%s", buf);
    ck_assert_msg(strstr(buf, "      judged on a second attempt with every time x4\n"), "%s", buf);
    ck_assert_msg(strstr(buf, "\ncase                                 SLOW "), "%s", buf);
    ck_assert_msg(strstr(buf, "judged on a second attempt with scaled times: 2 "), "%s", buf);
    const char *last = buf + len - 1;
    while (last > buf && last[-1] != '\n')
        last--;
    ck_assert_str_eq(last, "2 passed, 0 failed, 1 too slow to judge\n");
    free(buf);
}
END_TEST

START_TEST(test_table_last_line)
{
    const rg_verdict v[] = {RG_V_OK, RG_V_DETECTED};
    const rg_sc_expect e[] = {RG_SC_EXPECT_OK, RG_SC_EXPECT_ANY};
    rg_result res[3] = {mk(2, v, e), mk(2, v, e), mk(2, v, e)};
    res[2].expect[1] = RG_SC_EXPECT_OK;
    for (int i = 0; i < 3; i++)
        rg_judge(&res[i]);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rg_report_table(f, res, 3, 12.0);
    fclose(f);
    const char *last = buf + len - 1;
    while (last > buf && last[-1] != '\n')
        last--;
    ck_assert_str_eq(last, "2 passed, 1 failed\n");
    ck_assert_msg(strstr(buf, "ranks: ok 3, unsupported 0, detected 3,"), "%s", buf);
    free(buf);
}
END_TEST

/*
 * Known failures: a run that fails exactly as known passes as xfail (JUnit: skipped, never a
 * pass); one failing some other way still fails; one whose known failure did not happen
 * passes as xpass and says so; the table counts both and its last line keeps its form.
 */
START_TEST(test_known_failures)
{
    const rg_verdict v[] = {RG_V_ERROR_SWALLOWED, RG_V_OK};
    const rg_sc_expect e[] = {RG_SC_EXPECT_ANY, RG_SC_EXPECT_ANY};
    rg_result res[3] = {mk(2, v, e), mk(2, v, e), mk(2, v, e)};
    for (int i = 0; i < 3; i++) {
        res[i].known[0] = RG_V_ERROR_SWALLOWED;
        snprintf(res[i].known_why, sizeof(res[i].known_why), "never checks <status>");
    }
    res[1].rank[0].verdict = RG_V_DEADLOCK; /* another failure than the known one */
    res[2].rank[0].verdict = RG_V_OK;       /* the known failure did not happen */
    ck_assert(rg_judge(&res[0]));
    ck_assert_int_eq(res[0].known_state, RG_KNOWN_XFAIL);
    ck_assert_str_eq(rg_result_word(&res[0]), "XFAIL");
    ck_assert_str_eq(res[0].why, "known failure: never checks <status>");
    ck_assert(!rg_judge(&res[1]));
    ck_assert_str_eq(rg_result_word(&res[1]), "FAIL");
    ck_assert(rg_judge(&res[2]));
    ck_assert_str_eq(rg_result_word(&res[2]), "XPASS");

    char path[] = "/tmp/rg-junit-XXXXXX", err[256];
    int fd = mkstemp(path);
    close(fd);
    ck_assert_int_eq(rg_report_junit(res, 3, 1.0, NULL, path, err, sizeof(err)), 0);
    const char *x = slurp(path);
    ck_assert_msg(strstr(x, "<skipped message=\"known failure: never checks &lt;status&gt;\"/>"),
                  "%s", x);
    ck_assert_msg(strstr(x, "failures=\"1\""), "%s", x);
    static rg_result back;
    ck_assert_int_eq(rg_result_save(&res[0], path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert_int_eq(back.known_state, RG_KNOWN_XFAIL);
    ck_assert_int_eq(back.known[0], RG_V_ERROR_SWALLOWED);
    ck_assert_int_eq(back.known[1], 0);
    ck_assert_str_eq(back.known_why, "never checks <status>");
    unlink(path);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rg_report_table(f, res, 3, 1.0);
    fclose(f);
    ck_assert_msg(strstr(buf, "known failures: 1 xfail, 1 xpass (counted as passed)\n2 passed, 1 "
                              "failed\n"),
                  "%s", buf);
    ck_assert_msg(strstr(buf, "xfail "), "%s", buf);
    free(buf);
}
END_TEST

/* A skipped scenario (steps its transport lacks): SKIP in the line, skipped in JUnit and the
 * table's last line, never counted as passed; report.json keeps it and each rank's calls. */
START_TEST(test_skipped)
{
    const rg_verdict v[] = {RG_V_UNSUPPORTED, RG_V_OK};
    const rg_sc_expect e[] = {RG_SC_EXPECT_OK, RG_SC_EXPECT_OK};
    rg_result res[2] = {mk(2, v, e), mk(2, v, e)};
    res[1].rank[0].verdict = RG_V_OK;
    snprintf(res[0].rank[0].detail, sizeof(res[0].rank[0].detail), "not run: prod not declared");
    snprintf(res[0].rank[1].calls, sizeof(res[0].rank[1].calls), "ring/2:3");
    ck_assert(rg_judge(&res[0]) && rg_judge(&res[1]));
    ck_assert_str_eq(rg_result_word(&res[0]), "SKIP");
    char path[] = "/tmp/rg-junit-XXXXXX", err[256];
    int fd = mkstemp(path);
    close(fd);
    ck_assert_int_eq(rg_report_junit(res, 2, 1.0, NULL, path, err, sizeof(err)), 0);
    const char *x = slurp(path);
    ck_assert_msg(strstr(x, "failures=\"0\" errors=\"0\" skipped=\"1\""), "%s", x);
    ck_assert_msg(strstr(x, "<skipped message=\"rank 0: unsupported"), "%s", x);
    static rg_result back;
    ck_assert_int_eq(rg_result_save(&res[0], path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert(back.skipped);
    ck_assert_str_eq(back.rank[1].calls, "ring/2:3");
    unlink(path);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rg_report_table(f, res, 2, 1.0);
    fclose(f);
    ck_assert_msg(strstr(buf, "1 passed, 0 failed, 1 skipped (unsupported by the transport)\n"),
                  "%s", buf);
    ck_assert_msg(strstr(buf, " skip "), "%s", buf);
    free(buf);
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(rg_verdict_name(RG_V_SILENT_CORRUPTION), "SILENT_CORRUPTION");
    ck_assert_str_eq(rg_verdict_name(RG_V_DEADLOCK), "DEADLOCK");
    ck_assert_str_eq(rg_verdict_name((rg_verdict)77), "?");
}
END_TEST

/* Reproduce lines paste back as the same command: words quoted only where a shell needs it. */
START_TEST(test_shell_word)
{
    char buf[128] = "";
    ck_assert_int_eq(rg_shell_word(buf, sizeof(buf), "/a/b-c_d.yaml"), 0);
    ck_assert_int_eq(rg_shell_word(buf, sizeof(buf), "my dir/x y.yaml"), 0);
    ck_assert_int_eq(rg_shell_word(buf, sizeof(buf), "it's"), 0);
    ck_assert_int_eq(rg_shell_word(buf, sizeof(buf), ""), 0);
    ck_assert_int_eq(rg_shell_word(buf, sizeof(buf), "$(rm -rf ~)"), 0);
    ck_assert_str_eq(buf, " /a/b-c_d.yaml 'my dir/x y.yaml' 'it'\\''s' '' '$(rm -rf ~)'");
    char small[8] = "";
    ck_assert_int_eq(rg_shell_word(small, sizeof(small), "abcdefghij"), -1);
    ck_assert_uint_lt(strlen(small), sizeof(small));
}
END_TEST

Suite *rg_suite_report(void)
{
    Suite *s = suite_create("report");
    TCase *t = tcase_create("report");
    tcase_add_test(t, test_judge);
    tcase_add_test(t, test_json_round_trip);
    tcase_add_test(t, test_junit);
    tcase_add_test(t, test_too_slow);
    tcase_add_test(t, test_table_last_line);
    tcase_add_test(t, test_names);
    tcase_add_test(t, test_known_failures);
    tcase_add_test(t, test_skipped);
    tcase_add_test(t, test_shell_word);
    suite_add_tcase(s, t);
    return s;
}
