/* SPDX-License-Identifier: MIT */
/* How railguard sweep reads a point's result.json (cmd/rg_sweep_run.c, read_outcome). */
#include "common/rg_check.h"
#include "cmd/rg_sweep_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rg_result g_r;

/* Two ranks with verdicts v0 and v1, the judge's known state ks, saved in a fresh directory
 * and read back as a point's outcome. */
static struct outcome outcome_of(rg_verdict v0, rg_verdict v1, int ks)
{
    char dir[] = "/tmp/rg-sweep-outcome-XXXXXX", path[128], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    memset(&g_r, 0, sizeof(g_r));
    g_r.ranks = 2;
    snprintf(g_r.name, sizeof(g_r.name), "point-0001");
    g_r.rank[0].verdict = v0;
    g_r.rank[1].verdict = v1;
    g_r.known_state = ks;
    snprintf(path, sizeof(path), "%s/result.json", dir);
    ck_assert_msg(rg_result_save(&g_r, path, err, sizeof(err)) == 0, "%s", err);
    struct outcome oc;
    read_outcome(dir, &oc, false);
    unlink(path);
    rmdir(dir);
    return oc;
}

/* A failure the known-failures file accounts for (XFAIL) is not a failing point when the
 * counting run's rank failed so too; the same failure unknown is failing; so is a failure the
 * fault added beside a known one (the judge matched the first failure only), and a known
 * failure with no counting run to weigh it against. */
START_TEST(test_known_failure_weighed_against_the_counting_run)
{
    sweep_baseline_set("LEAK,ok");
    struct outcome oc = outcome_of(RG_V_LEAK, RG_V_OK, RG_KNOWN_XFAIL);
    ck_assert(oc.ran);
    ck_assert_msg(oc.passed, "an XFAIL point failing as the counting run did read as failing");
    ck_assert_int_eq(oc.worst, RG_V_LEAK);
    oc = outcome_of(RG_V_LEAK, RG_V_OK, RG_KNOWN_NONE);
    ck_assert_msg(!oc.passed, "an unknown LEAK read as passing");
    oc = outcome_of(RG_V_LEAK, RG_V_ERROR_SWALLOWED, RG_KNOWN_XFAIL);
    ck_assert_msg(!oc.passed, "an ERROR_SWALLOWED beside a known LEAK read as passing");
    oc = outcome_of(RG_V_OK, RG_V_LEAK, RG_KNOWN_XFAIL);
    ck_assert_msg(!oc.passed, "a LEAK on a rank that did not leak without the fault passed");
    oc = outcome_of(RG_V_OK, RG_V_OK, RG_KNOWN_XPASS);
    ck_assert_msg(oc.passed, "an XPASS point with every rank ok read as failing");
    sweep_baseline_set("");
    oc = outcome_of(RG_V_LEAK, RG_V_OK, RG_KNOWN_XFAIL);
    ck_assert_msg(!oc.passed, "an XFAIL with no counting run to weigh it read as passing");
    oc = outcome_of(RG_V_ERROR_SWALLOWED, RG_V_OK, RG_KNOWN_NONE);
    ck_assert(!oc.passed);
}
END_TEST

/* No result.json: not run, not passed, and why. */
START_TEST(test_no_result_is_said)
{
    struct outcome oc;
    read_outcome("/nonexistent/railguard-point", &oc, false);
    ck_assert(!oc.ran);
    ck_assert(!oc.passed);
    ck_assert_msg(strstr(oc.first, "no result") != NULL, "%s", oc.first);
}
END_TEST

Suite *rg_suite_sweep_outcome(void)
{
    Suite *s = suite_create("sweep_outcome");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, test_known_failure_weighed_against_the_counting_run);
    tcase_add_test(tc, test_no_result_is_said);
    suite_add_tcase(s, tc);
    return s;
}
