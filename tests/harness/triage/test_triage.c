/* SPDX-License-Identifier: MIT */
/* Triage: wait frames read from both backtrace formats, signatures that keep what a bug decides
 * and drop what a run decides, and a run directory's failures grouped and written. */
#include "common/rg_check.h"
#include "judge/rg_judge.h"
#include "triage/rg_triage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- frames --------------------------------------------------------------------------------- */

static const char gdb_two_threads[] =
    "[Thread debugging using libthread_db enabled]\n"
    "0x00007f04 in fi_poll_cq_slow (cq=0x56, ne=8, wc=0x7ffd) at faultinject/fi_datapath.c:34\n"
    "\n"
    "Thread 2 (Thread 0x7f05 (LWP 1327) \"progress\"):\n"
    "#0  0x00007f04 in __GI___poll (fds=0x1, nfds=1, timeout=10) at poll.c:29\n"
    "#1  0x00007f05 in jaccl::SideChannel::wait (this=0x1) at side.cpp:88\n"
    "#2  0x00007f06 in start_thread (arg=<optimized out>) at pthread_create.c:442\n"
    "\n"
    "Thread 1 (Thread 0x7f04 (LWP 1326) \"udaddy\"):\n"
    "#0  0x00007f04 in fi_poll_cq_slow (cq=0x56, ne=8, wc=0x7ffd) at faultinject/fi_datapath.c:34\n"
    "#1  0x0000564b in ibv_poll_cq (cq=0x1, num_entries=8, wc=0x2) at verbs.h:2881\n"
    "#2  0x0000564c in poll_until_done (ctx=0x1) at udaddy.c:212\n"
    "#3  0x0000564d in main (argc=3, argv=0x7ffd) at udaddy.c:580\n"
    "#4  0x00007f04 in __libc_start_call_main (main=...) at libc_start_call_main.h:58\n"
    "[Inferior 1 (process 1326) detached]\n";

static const char gdb_unnamed[] =
    "Thread 1 (Thread 0x7f04 (LWP 1326) \"rping\"):\n"
    "#0  0x00007f04 in fi_poll_cq_slow (cq=0x56) at faultinject/fi_datapath.c:34\n"
    "#1  0x0000564b in ?? () from /usr/lib/x86_64-linux-gnu/libibverbs.so.1\n"
    "#2  0x0000564b85e55eaa in ?? ()\n"
    "#3  0x0000564b in ?? () from /usr/lib/librdmacm.so.1\n";

static const char symbols[] =
    "railguard: rank 1: asked for a backtrace at the deadline\n"
    "/work/build/rel/bin/railguard(+0x1a2b)[0x55d1]\n"
    "/lib/x86_64-linux-gnu/libc.so.6(__poll+0x4f)[0x7f01]\n"
    "/work/build/rel/lib/railguard-transport.so(rg_all_reduce+0x1c1)[0x7f02]\n"
    "/work/build/rel/bin/railguard(+0x3c4d)[0x55d2]\n";

START_TEST(test_frames)
{
    char f[4][96];
    int n = rg_tri_frames(gdb_two_threads, f, 4);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(f[0], "jaccl::SideChannel::wait");
    ck_assert_str_eq(f[1], "poll_until_done");
    /* No symbol: the object names the frame; the shim and verbs never do. */
    n = rg_tri_frames(gdb_unnamed, f, 4);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(f[0], "librdmacm.so.1+?");
    /* backtrace_symbols: the runner's own binary and libc are passed over. */
    n = rg_tri_frames(symbols, f, 4);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(f[0], "rg_all_reduce");
    ck_assert_int_eq(rg_tri_frames("nothing like a backtrace\n#x\n", f, 4), 0);
    /* The bound holds: one frame asked, one given. */
    ck_assert_int_eq(rg_tri_frames(gdb_two_threads, f, 1), 1);
}
END_TEST

/* --- signatures ------------------------------------------------------------------------------ */

static void mk(rg_result *r, const char *name, int ranks, int origin, rg_verdict first,
               rg_verdict rest, const char *where, int status)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    snprintf(r->path, sizeof(r->path), "/nonexistent/%s.yaml", name);
    snprintf(r->dir, sizeof(r->dir), "/nonexistent/%s", name);
    snprintf(r->repro, sizeof(r->repro), "railguard run %s.yaml", name);
    r->ranks = ranks;
    r->seconds = ranks;
    for (int i = 0; i < ranks; i++) {
        rg_rank_result *k = &r->rank[i];
        k->verdict = i == origin ? first : rest;
        k->t_s = i == origin ? 1.0 : 2.0 + i;
        k->step = 2;
        snprintf(k->where, sizeof(k->where), "%s", where);
        snprintf(k->calls, sizeof(k->calls), "ring/2:%d", 3 + i);
        snprintf(k->detail, sizeof(k->detail), "rank %d's detail", i);
        k->status = i == origin ? status : 0;
        r->expect[i] = RG_SC_EXPECT_OK;
        r->expect_at[i] = RG_SC_AT_ANY;
    }
    rg_judge(r);
}

START_TEST(test_signature)
{
    static rg_result a, b, c, d;
    rg_tri_sig sa, sb, sc, sd;
    /* One bug, two runs: other sizes, ranks, times and call counts. */
    mk(&a, "a", 2, 0, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce float32 sum count 7", 0);
    mk(&b, "b", 4, 3, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce int8 max count 1000003", 0);
    rg_tri_signature(&a, &sa);
    rg_tri_signature(&b, &sb);
    ck_assert_str_eq(sa.key, sb.key);
    ck_assert_str_eq(sa.first, "SILENT_CORRUPTION");
    ck_assert_str_eq(sa.op, "all_reduce");
    ck_assert_str_eq(sa.algo, "ring");
    ck_assert_int_eq(sb.origin, 3);
    /* Another operation, or another class, is another signature. */
    mk(&c, "c", 2, 0, RG_V_SILENT_CORRUPTION, RG_V_OK, "broadcast uint8 count 9", 0);
    rg_tri_signature(&c, &sc);
    ck_assert_str_ne(sa.key, sc.key);
    mk(&d, "d", 2, 1, RG_V_ERROR_WITHOUT_FAULT, RG_V_DETECTED, "all_reduce float32 sum", -6);
    rg_tri_signature(&d, &sd);
    ck_assert_str_ne(sd.cls, "");
    ck_assert_str_eq(sd.others, "detected");
    /* Init is named so, whatever the step's text. */
    a.rank[0].step = -1;
    rg_tri_signature(&a, &sa);
    ck_assert_str_eq(sa.op, "init");
}
END_TEST

/* --- a run directory ------------------------------------------------------------------------- */

static void save(const char *dir, const char *sub, rg_result *r)
{
    char path[512], err[512];
    snprintf(path, sizeof(path), "%s/%s", dir, sub);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(r->dir, sizeof(r->dir), "%s", path);
    snprintf(path, sizeof(path), "%s/%s/result.json", dir, sub);
    ck_assert_msg(rg_result_save(r, path, err, sizeof(err)) == 0, "%s", err);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *buf = calloc(1, 1 << 16);
    ck_assert_uint_gt(fread(buf, 1, (1 << 16) - 1, f), 0);
    fclose(f);
    return buf;
}

START_TEST(test_run_dir)
{
    static rg_result r[4];
    static rg_tri_run run;
    char dir[] = "/tmp/rg-triage-XXXXXX", err[600], path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* Two scenarios with one hang, one with a corruption, one pass, one unreadable result. */
    mk(&r[0], "hang-4r", 4, 1, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 5", -2);
    mk(&r[1], "hang-2r", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 9", -2);
    mk(&r[2], "corrupt", 3, 2, RG_V_SILENT_CORRUPTION, RG_V_OK, "all_reduce bf16 sum count 3", 0);
    mk(&r[3], "fine", 2, 0, RG_V_OK, RG_V_OK, "all_reduce float32 sum count 3", 0);
    save(dir, "000-hang-4r", &r[0]);
    save(dir, "001-hang-2r", &r[1]);
    save(dir, "002-corrupt", &r[2]);
    save(dir, "003-fine", &r[3]);
    snprintf(path, sizeof(path), "%s/004-torn", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/004-torn/result.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"name\": \"torn\", \"ranks\": ", f);
    fclose(f);

    ck_assert_int_eq(rg_tri_load(dir, &run, err, sizeof(err)), 0);
    ck_assert_int_eq(run.nresults, 4);
    ck_assert_int_eq(run.nunread, 1);
    ck_assert_ptr_nonnull(strstr(run.unread[0], "004-torn/result.json"));
    ck_assert_int_eq(run.nfail, 3);
    ck_assert_int_eq(rg_tri_group_cases(&run), 0);
    ck_assert_int_eq(run.ngroups, 2);
    /* The larger group first, shown by its smallest scenario. */
    ck_assert_int_eq(run.groups[0].ncases, 2);
    ck_assert_str_eq(run.cases[run.groups[0].rep].res->name, "hang-2r");
    ck_assert_str_eq(run.groups[1].sig.first, "SILENT_CORRUPTION");
    ck_assert_int_eq(rg_tri_write(&run, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/triage/01-%s.md", dir, run.groups[0].slug);
    char *md = slurp(path);
    ck_assert_ptr_nonnull(strstr(md, "# DEADLOCK"));
    ck_assert_ptr_nonnull(strstr(md, "railguard run hang-2r.yaml"));
    ck_assert_ptr_nonnull(strstr(md, "| 0 | ok | DEADLOCK **(failed)** |"));
    ck_assert_ptr_nonnull(strstr(md, "none taken"));
    free(md);
    snprintf(path, sizeof(path), "%s/triage/triage.json", dir);
    char *js = slurp(path);
    ck_assert_ptr_nonnull(strstr(js, "\"failures\": 3"));
    ck_assert_ptr_nonnull(strstr(js, "\"unread\": 1"));
    free(js);
    rg_tri_free(&run);
    /* Not a directory: one line, no crash. */
    ck_assert_int_eq(rg_tri_load("/nonexistent/run", &run, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/run"));
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* --- re-runs --------------------------------------------------------------------------------- */

START_TEST(test_words)
{
    char *argv[8], buf[256];
    ck_assert_int_eq(rg_tri_words("/b/railguard run --out '/tmp/a b' 'it'\\''s.yaml'", argv, 8, buf,
                                  sizeof(buf)),
                     5);
    ck_assert_str_eq(argv[0], "/b/railguard");
    ck_assert_str_eq(argv[3], "/tmp/a b");
    ck_assert_str_eq(argv[4], "it's.yaml");
    ck_assert_ptr_null(argv[5]);
    /* What railguard never writes is refused, not run through a shell. */
    ck_assert_int_eq(rg_tri_words("a 'open", argv, 8, buf, sizeof(buf)), -1);
    ck_assert_int_eq(rg_tri_words("a; rm -rf x", argv, 8, buf, sizeof(buf)), -1);
    ck_assert_int_eq(rg_tri_words("a $(x)", argv, 8, buf, sizeof(buf)), -1);
    ck_assert_int_eq(rg_tri_words("a b c d e f g h i", argv, 8, buf, sizeof(buf)), -1);
    ck_assert_int_eq(rg_tri_words("a b", argv, 8, buf, 3), -1);
}
END_TEST

START_TEST(test_rate_said)
{
    char s[200];
    rg_tri_rate r = {0};
    rg_tri_rate_said(&r, s, sizeof(s));
    ck_assert_ptr_nonnull(strstr(s, "not measured"));
    r = (rg_tri_rate){.n = 5, .same = 5};
    rg_tri_rate_said(&r, s, sizeof(s));
    ck_assert_str_eq(s, "deterministic: 5 of 5 re-runs");
    r = (rg_tri_rate){.n = 5, .same = 2, .passed = 2, .unjudged = 1};
    rg_tri_rate_said(&r, s, sizeof(s));
    ck_assert_str_eq(s, "flaky: 2 of 5 re-runs (2 passed, 0 failed otherwise, 1 not judged)");
    r = (rg_tri_rate){.n = 3, .passed = 3};
    rg_tri_rate_said(&r, s, sizeof(s));
    ck_assert_str_eq(s, "did not recur in 3 re-runs (3 passed, 0 failed otherwise, 0 not judged)");
}
END_TEST

/*
 * The re-run loop end to end, with a stand-in for `railguard run` (no devices needed): a
 * script that, called as the reproduce line calls railguard, writes a result into its --out,
 * failing the same way on odd calls and passing on even ones.
 */
START_TEST(test_rerun)
{
    static rg_result bad, good;
    static rg_tri_run run;
    char dir[] = "/tmp/rg-rerun-XXXXXX", err[600], path[700], script[700], cmd[1500];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    mk(&bad, "flaky", 2, 0, RG_V_DEADLOCK, RG_V_DEADLOCK, "all_gather float32 count 5", -2);
    mk(&good, "flaky", 2, 0, RG_V_OK, RG_V_OK, "all_gather float32 count 5", 0);
    save(dir, "000-flaky", &bad);
    snprintf(path, sizeof(path), "%s/good.json", dir);
    ck_assert_int_eq(rg_result_save(&good, path, err, sizeof(err)), 0);
    snprintf(script, sizeof(script), "%s/fake-railguard", dir);
    FILE *f = fopen(script, "w");
    fprintf(f,
            "#!/bin/sh\n"
            "while [ $# -gt 1 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
            "n=$(cat %s/calls 2>/dev/null || echo 0); n=$((n + 1)); echo $n > %s/calls\n"
            "mkdir -p \"$out/000-flaky\"\n"
            "if [ $((n %% 2)) = 1 ]; then cp %s/000-flaky/result.json \"$out/000-flaky/\";\n"
            "else cp %s/good.json \"$out/000-flaky/result.json\"; fi\n",
            dir, dir, dir, dir);
    fclose(f);
    ck_assert_int_eq(chmod(script, 0755), 0);
    /* The run's own reproduce line names the stand-in. */
    snprintf(bad.repro, sizeof(bad.repro), "%s run --seed 1 --out %s/repro flaky.yaml", script,
             dir);
    snprintf(path, sizeof(path), "%s/000-flaky/result.json", dir);
    ck_assert_int_eq(rg_result_save(&bad, path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_tri_load(dir, &run, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_tri_group_cases(&run), 0);
    ck_assert_int_eq(run.ngroups, 1);
    rg_tri_rate *rate = &run.groups[0].rate;
    ck_assert_int_eq(rg_tri_rerun(&run, 0, 4, 60, rate, err, sizeof(err)), 0);
    ck_assert_int_eq(rate->n, 4);
    ck_assert_int_eq(rate->same, 2);
    ck_assert_int_eq(rate->passed, 2);
    ck_assert_int_eq(rate->unjudged, 0);
    snprintf(path, sizeof(path), "%s/triage/rerun/01-%s/3/000-flaky/result.json", dir,
             run.groups[0].slug);
    ck_assert_int_eq(access(path, R_OK), 0);
    /* A line that is not a railguard run is refused, not run. */
    snprintf(bad.repro, sizeof(bad.repro), "%s exec -- ls", script);
    run.cases[0].res->repro[0] = '\0';
    snprintf(run.cases[0].res->repro, sizeof(run.cases[0].res->repro), "%s", bad.repro);
    ck_assert_int_eq(rg_tri_rerun(&run, 0, 1, 60, rate, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not one railguard run"));
    rg_tri_free(&run);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *rg_suite_triage(void)
{
    Suite *s = suite_create("triage");
    TCase *t = tcase_create("triage");
    tcase_add_test(t, test_frames);
    tcase_add_test(t, test_signature);
    tcase_add_test(t, test_run_dir);
    tcase_add_test(t, test_words);
    tcase_add_test(t, test_rate_said);
    tcase_add_test(t, test_rerun);
    suite_add_tcase(s, t);
    return s;
}
