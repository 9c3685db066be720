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

/* What sweep_objs_check printed for plan p given to a sweep whose transport is tp. */
static void objs_said(const rg_sw_result *p, const char *tp, char *out, size_t len, int *lines)
{
    static struct sweep_opts o;
    memset(&o, 0, sizeof(o));
    snprintf(o.plan, sizeof(o.plan), "plan.json");
    o.pass[0] = "--transport";
    o.pass[1] = tp;
    o.npass = 2;
    char path[] = "/tmp/rg-objs-said-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stdout);
    int keep = dup(1);
    dup2(fd, 1);
    *lines = sweep_objs_check(&o, p);
    fflush(stdout);
    dup2(keep, 1);
    close(keep);
    FILE *f = fdopen(fd, "r");
    rewind(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    fclose(f);
    unlink(path);
}

/* A plan's objects against the build a sweep given it loads: the transport found by its file
 * name wherever this build keeps it, other objects where the counting run loaded them; other
 * code, an object not there, or a plan with no digests each said in one line. */
START_TEST(test_plan_objects_checked)
{
    char dir[] = "/tmp/rg-objs-XXXXXX", tp[128], other[128], err[256], out[4096], cmd[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(tp, sizeof(tp), "%s/railguard-transport.so", dir);
    snprintf(other, sizeof(other), "%s/other", dir);
    snprintf(cmd, sizeof(cmd), "cp /proc/self/exe %s && objcopy -R .fini %s %s", tp, tp, other);
    ck_assert_int_eq(system(cmd), 0);
    static rg_sw_result p;
    memset(&p, 0, sizeof(p));
    p.nsites = 2;
    p.nobjs = 2;
    /* The transport as planned, though the plan saw it elsewhere; a program as planned. */
    p.sites = calloc(2, sizeof(p.sites[0]));
    ck_assert_ptr_nonnull(p.sites);
    snprintf(p.sites[0].site, sizeof(p.sites[0].site), "railguard-transport.so+0x10<other+0x20");
    snprintf(p.sites[1].site, sizeof(p.sites[1].site), "other+0x30");
    p.objs[0].transport = true;
    snprintf(p.objs[0].name, sizeof(p.objs[0].name), "railguard-transport.so");
    snprintf(p.objs[0].path, sizeof(p.objs[0].path), "/elsewhere/railguard-transport.so");
    ck_assert_int_eq(rg_obj_code(tp, p.objs[0].code, err, sizeof(err)), 0);
    snprintf(p.objs[1].name, sizeof(p.objs[1].name), "other");
    snprintf(p.objs[1].path, sizeof(p.objs[1].path), "%s", other);
    ck_assert_int_eq(rg_obj_code(other, p.objs[1].code, err, sizeof(err)), 0);
    int lines;
    objs_said(&p, tp, out, sizeof(out), &lines);
    ck_assert_int_eq(lines, 0);
    ck_assert_str_eq(out, "");
    /* A transport rebuilt since: said, with both digests. */
    char planned[17];
    memcpy(planned, p.objs[0].code, sizeof(planned));
    ck_assert_int_eq(rg_obj_code(other, p.objs[0].code, err, sizeof(err)), 0);
    objs_said(&p, tp, out, sizeof(out), &lines);
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(strstr(out, "is not the code the plan's call sites were found in") &&
                      strstr(out, planned) && strstr(out, p.objs[0].code) && strstr(out, tp),
                  "%s", out);
    memcpy(p.objs[0].code, planned, sizeof(planned));
    /* A transport of another file name: its sites cannot be there, whatever the old file holds. */
    char renamed[160];
    snprintf(renamed, sizeof(renamed), "%s/railguard-mine.so", dir);
    snprintf(cmd, sizeof(cmd), "cp %s %s", tp, renamed);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(p.objs[0].path, sizeof(p.objs[0].path), "%s", tp); /* there, and the same code */
    objs_said(&p, renamed, out, sizeof(out), &lines);
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(strstr(out, "in the transport railguard-transport.so; this sweep loads") &&
                      strstr(out, renamed) && strstr(out, "no site point can fire"),
                  "%s", out);
    unlink(renamed);
    /* A site in an object the plan keeps no code of (past its eight). */
    snprintf(p.sites[1].site, sizeof(p.sites[1].site), "other+0x30<ninth.so+0x40");
    objs_said(&p, tp, out, sizeof(out), &lines);
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(strstr(out, "the call sites in ninth.so are not checked against this build: "
                              "the plan keeps no code of it"),
                  "%s", out);
    snprintf(p.sites[1].site, sizeof(p.sites[1].site), "other+0x30");
    /* The program gone, and a digest the plan could not take. */
    unlink(other);
    p.objs[0].code[0] = '\0';
    objs_said(&p, tp, out, sizeof(out), &lines);
    ck_assert_int_eq(lines, 2);
    ck_assert_msg(strstr(out, "in railguard-transport.so are not checked against this build: the "
                              "plan keeps no code of it") &&
                      strstr(out, "in other are not checked against this build: ") &&
                      strstr(out, "No such file"),
                  "%s", out);
    /* A plan from before plans kept them. */
    p.nobjs = -1;
    objs_said(&p, tp, out, sizeof(out), &lines);
    ck_assert_int_eq(lines, 1);
    ck_assert_msg(strstr(out, "keeps no code of the objects its call sites are in"), "%s", out);
    /* No call site, nothing to check. */
    p.nsites = 0;
    objs_said(&p, tp, out, sizeof(out), &lines);
    ck_assert_int_eq(lines, 0);
    free(p.sites);
    unlink(tp);
    rmdir(dir);
}
END_TEST

Suite *rg_suite_sweep_outcome(void)
{
    Suite *s = suite_create("sweep_outcome");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, test_known_failure_weighed_against_the_counting_run);
    tcase_add_test(tc, test_no_result_is_said);
    tcase_add_test(tc, test_plan_objects_checked);
    suite_add_tcase(s, tc);
    return s;
}
