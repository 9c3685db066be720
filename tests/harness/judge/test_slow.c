/* SPDX-License-Identifier: MIT */
/* Too slow to judge (harness/judge/rg_slow.c): which failures a slow machine can explain, by how
 * much it must have held the ranks back, what a second attempt scales and how it is settled. */
#include "common/rg_check.h"
#include "judge/rg_judge.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static rg_scenario g_sc;
static rg_result g_r;

/* Two ranks, a 3 s timeout and a 15 s deadline; rank 0 failed as `v` with `status` at 3.1 s,
 * rank 1 is fine; nothing measured yet. */
static void failed(rg_verdict v, int status)
{
    memset(&g_sc, 0, sizeof(g_sc));
    g_sc.ranks = 2;
    g_sc.timeout_s = 3;
    g_sc.deadline_s = 15;
    g_sc.exec.client_after = -1;
    g_sc.exec.service_grace = 5;
    memset(&g_r, 0, sizeof(g_r));
    g_r.ranks = 2;
    g_r.expect[0] = g_r.expect[1] = RG_SC_EXPECT_OK;
    for (int i = 0; i < 2; i++)
        g_r.rank[i] = (rg_rank_result){.t_s = -1, .start_s = -1, .cpu_wait_s = -1};
    g_r.rank[0].status = status;
    rg_rank_find(&g_r.rank[0], v, 3.1, "rank 0 failed");
    rg_judge(&g_r);
}

START_TEST(test_time_bound)
{
    char why[400];
    /* The transport's timeout, with rank 1 started 0.5 s late: a tenth of 3 s opens a second
     * attempt; half of it (1.5 s) is needed to call that attempt too slow. */
    failed(RG_V_ERROR_WITHOUT_FAULT, RG_ERR_TIMEOUT);
    ck_assert(!g_r.passed);
    ck_assert(!rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why))); /* nothing measured */
    g_r.rank[1].start_s = 0.5;
    ck_assert(rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
    ck_assert_str_eq(why, "rank 0 ran out of the 3 s timeout while rank 1 started 0.50 s after it "
                          "was spawned (17% of it)");
    ck_assert(!rg_slow_held_back(&g_r, &g_sc, true, why, sizeof(why)));
    g_r.rank[1].start_s = 1.5;
    ck_assert(rg_slow_held_back(&g_r, &g_sc, true, why, sizeof(why)));
    /* A wait for a CPU opens a second attempt, but is never the last word: a program that
     * spins while it waits for its peer is runnable all along. */
    g_r.rank[1].start_s = 0.01;
    g_r.rank[0].cpu_wait_s = 0.4;
    ck_assert(rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
    ck_assert_str_eq(why, "rank 0 ran out of the 3 s timeout while rank 0 started 0.00 s after it "
                          "was spawned and waited 0.40 s for a CPU (13% of it)");
    ck_assert(!rg_slow_held_back(&g_r, &g_sc, true, why, sizeof(why)));
    /* The runner's own stalls count both ways. */
    g_r.rank[0].cpu_wait_s = 0;
    g_r.lag_s = 2;
    ck_assert(rg_slow_held_back(&g_r, &g_sc, true, why, sizeof(why)));
    ck_assert_str_eq(why, "rank 0 ran out of the 3 s timeout while the runner woke up to 2.00 s "
                          "late (67% of it)");

    /* A client started a fixed time after a server whose port railguard cannot see (an RDMA
     * CM program) that fails with no fault: the server's late start is weighed against that
     * head start, since the client may have come before the server was up. */
    failed(RG_V_OK, 0);
    g_sc.exec.client_after = 1;
    g_r.rank[1] = (rg_rank_result){.t_s = -1, .start_s = -1, .cpu_wait_s = -1};
    rg_rank_find(&g_r.rank[1], RG_V_ERROR_WITHOUT_FAULT, 3.25, "exited with status 1");
    rg_judge(&g_r);
    ck_assert(!g_r.passed && g_r.first_rank == 1);
    g_r.rank[0].start_s = 0.6;
    ck_assert(rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
    ck_assert_str_eq(why, "rank 1 ran out of the 1 s client's head start while rank 0 started "
                          "0.60 s after it was spawned (60% of it)");
    g_sc.exec.client_after = -1; /* started when the server listened: no race to weigh */
    ck_assert(!rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
    g_sc.exec.client_after = 1; /* the server's own failure first: not the client's race */
    rg_rank_find(&g_r.rank[0], RG_V_ERROR_WITHOUT_FAULT, 1.0, "exited with status 1");
    rg_judge(&g_r);
    ck_assert(g_r.first_rank == 0 && !rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));

    /* The runner's deadline, and slow detection (half the timeout). */
    failed(RG_V_DEADLOCK, 0);
    g_r.rank[1].start_s = 1.4;
    ck_assert(!rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why))); /* < 1.5 of 15 s */
    g_r.rank[1].start_s = 1.6;
    ck_assert(rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
    ck_assert_msg(strstr(why, "the 15 s deadline"), "%s", why);
    /* A hang judged when it was one: its window gave back what the machine took already. */
    g_r.rank[0].detail[0] = '\0';
    g_r.rank[0].nfindings = 0;
    g_r.rank[0].verdict = RG_V_OK;
    rg_rank_find(&g_r.rank[0], RG_V_DEADLOCK, 4.6,
                 RG_HANG_EARLY " 4.40 s (...), past the 3 s timeout ...: judged at 4.60 s");
    rg_judge(&g_r);
    g_r.rank[1].start_s = 14;
    g_r.rank[0].cpu_wait_s = 3;
    ck_assert_msg(!rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)), "%s", why);
    failed(RG_V_SLOW_DETECTION, 0);
    g_r.rank[1].start_s = 0.2;
    ck_assert(rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
    ck_assert_msg(strstr(why, "the 1.5 s slow-detection bound"), "%s", why);
    failed(RG_V_DETECTED, RG_ERR_TIMEOUT); /* detected where ok was expected */
    g_r.rank[1].start_s = 0.5;
    ck_assert(rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
}
END_TEST

/* What a slow machine cannot explain is never retried, however slow it was. */
START_TEST(test_not_time_bound)
{
    char why[400];
    static const struct {
        rg_verdict v;
        int status;
    } cases[] = {{RG_V_ERROR_WITHOUT_FAULT, RG_ERR_PEER_ABORT},
                 {RG_V_ERROR_WITHOUT_FAULT, RG_ERR_PROTOCOL},
                 {RG_V_ERROR_WITHOUT_FAULT, 0},
                 {RG_V_SILENT_CORRUPTION, 0},
                 {RG_V_CRASH, 0},
                 {RG_V_LEAK, 0},
                 {RG_V_ERROR, 0},
                 {RG_V_ERROR_SWALLOWED, 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        failed(cases[i].v, cases[i].status);
        ck_assert(!g_r.passed);
        g_r.rank[0].start_s = g_r.rank[1].start_s = 100;
        g_r.lag_s = 100;
        ck_assert_msg(!rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)), "case %zu", i);
    }
    /* A pass is never retried either. */
    failed(RG_V_OK, 0);
    ck_assert(g_r.passed);
    g_r.lag_s = 100;
    ck_assert(!rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
    /* The first failure decides: a peer's timeout after a corruption is the corruption's. */
    failed(RG_V_SILENT_CORRUPTION, 0);
    g_r.rank[1].status = RG_ERR_TIMEOUT;
    rg_rank_find(&g_r.rank[1], RG_V_ERROR_WITHOUT_FAULT, 6.0, "timed out");
    rg_judge(&g_r);
    ck_assert_int_eq(g_r.first_rank, 0);
    ck_assert(!rg_slow_held_back(&g_r, &g_sc, false, why, sizeof(why)));
}
END_TEST

START_TEST(test_scale)
{
    failed(RG_V_OK, 0);
    g_sc.exec.client_after = 1.5;
    rg_scenario_scale(&g_sc, 4);
    ck_assert_int_eq(g_sc.time_scale, 4);
    ck_assert(g_sc.timeout_s == 12 && g_sc.deadline_s == 60);
    ck_assert(g_sc.exec.client_after == 6 && g_sc.exec.service_grace == 20);
    g_sc.exec.client_after = -1; /* "when the server listens" is no time */
    rg_scenario_scale(&g_sc, 2);
    ck_assert(g_sc.exec.client_after == -1 && g_sc.timeout_s == 24);
}
END_TEST

/* run --deadline: cut to S or twice the timeout, whichever is more; never lengthened; an exec
 * scenario without a timeout (its timeout is its deadline) keeps its own. */
START_TEST(test_cut_deadline)
{
    failed(RG_V_OK, 0); /* timeout 3, deadline 15 */
    ck_assert(rg_scenario_cut_deadline(&g_sc, 0) == 0 && g_sc.deadline_s == 15);
    ck_assert(rg_scenario_cut_deadline(&g_sc, 10) == 10 && g_sc.deadline_s == 10);
    ck_assert(rg_scenario_cut_deadline(&g_sc, 30) == 0 && g_sc.deadline_s == 10);
    ck_assert(rg_scenario_cut_deadline(&g_sc, 1) == 6 && g_sc.deadline_s == 6);
    ck_assert(rg_scenario_cut_deadline(&g_sc, 1) == 0 && g_sc.deadline_s == 6);
    g_sc.timeout_s = g_sc.deadline_s = 40;
    ck_assert(rg_scenario_cut_deadline(&g_sc, 5) == 0 && g_sc.deadline_s == 40);
    /* A second attempt scales the cut deadline like any other. */
    failed(RG_V_OK, 0);
    rg_scenario_cut_deadline(&g_sc, 8);
    rg_scenario_scale(&g_sc, 4);
    ck_assert(g_sc.deadline_s == 32 && g_sc.timeout_s == 12);
}
END_TEST

/* The second attempt settled: SLOW only with strong evidence; a pass past the deadline as
 * written (what the machine took given back) is the program's DEADLOCK, not a pass. */
/* A first attempt that failed so (or passed), the scenario as written kept in orig, and its
 * times made four times as long for the second attempt that rg_slow_settle judges. */
static rg_scenario g_orig;
static void second_case(rg_verdict v)
{
    failed(v, 0);
    g_orig = g_sc;
    rg_scenario_scale(&g_sc, 4);
}

START_TEST(test_settle)
{
    second_case(RG_V_DEADLOCK); /* at x4: deadline 60 s */
    g_r.rank[1].start_s = 20;   /* a third of 60 s: no last word */
    rg_slow_settle(&g_r, &g_orig, &g_sc, "FIRST");
    ck_assert(!g_r.passed && !g_r.too_slow);
    ck_assert_str_eq(rg_result_word(&g_r), "FAIL");
    g_r.rank[1].start_s = 31; /* over half of it */
    rg_slow_settle(&g_r, &g_orig, &g_sc, "FIRST");
    ck_assert(!g_r.passed && g_r.too_slow);
    ck_assert_str_eq(rg_result_word(&g_r), "SLOW");
    ck_assert_str_eq(g_r.why, "too slow to judge: FIRST; and with every time x4 rank 0 ran out "
                              "of the 60 s deadline while rank 1 started 31.00 s after it was "
                              "spawned (52% of it)");
    ck_assert_str_eq(g_r.first, g_r.why);
    g_r.rank[1].start_unseen = true; /* it never loaded: said as such */
    rg_slow_settle(&g_r, &g_orig, &g_sc, "FIRST");
    ck_assert_msg(strstr(g_r.why, "while rank 1 had not started 31.00 s after it was spawned"),
                  "%s", g_r.why);

    /* Passed at x4, but rank 1 ended 20 s in, past the 15 s deadline as written. */
    second_case(RG_V_OK);
    g_r.rank[0].left_t_s = 2;
    g_r.rank[1].left_t_s = 20;
    g_r.rank[1].start_s = 1;
    rg_slow_settle(&g_r, &g_orig, &g_sc, "FIRST");
    ck_assert(!g_r.passed && !g_r.too_slow);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DEADLOCK);
    ck_assert_msg(strstr(g_r.why, "past the 15 s deadline as written even with the 1.00 s the "
                                  "machine took given back"),
                  "%s", g_r.why);
    /* ... unless the machine took the difference on this attempt too; a service is stopped,
     * not awaited, so its end is never the program's. */
    second_case(RG_V_OK);
    g_r.rank[1].left_t_s = 20;
    g_r.rank[1].start_s = 6;
    g_r.rank[0].left_t_s = 40;
    g_r.rank[0].service = true;
    rg_slow_settle(&g_r, &g_orig, &g_sc, "FIRST");
    ck_assert(g_r.passed);
}
END_TEST

/* A scaled attempt whose shim ran its plan at another scale is an ERROR, not a judgement. */
START_TEST(test_scale_evidence)
{
    static rg_evidence ev;
    rg_rank_result k = {.t_s = -1};
    memset(&ev, 0, sizeof(ev));
    ev.nprocs = 2;
    ev.proc[0] = (struct rg_ev_proc){.pid = 7, .loaded = true, .time_scale = 4};
    ev.proc[1] = (struct rg_ev_proc){.pid = 8, .loaded = true, .time_scale = 1};
    failed(RG_V_OK, 0);
    rg_slow_check_scale(&k, &g_sc, &ev); /* as written: nothing to check */
    ck_assert_int_eq(k.nfindings, 0);
    g_sc.time_scale = 4;
    rg_slow_check_scale(&k, &g_sc, &ev);
    ck_assert_int_eq(k.verdict, RG_V_ERROR);
    ck_assert_msg(strstr(k.detail, "pid 8 ran the plan's times x1, not x4"), "%s", k.detail);
    ev.proc[1].time_scale = 4;
    rg_rank_result k2 = {.t_s = -1};
    rg_slow_check_scale(&k2, &g_sc, &ev);
    ck_assert_int_eq(k2.nfindings, 0);
}
END_TEST

/* The first attempt's files move into DIR/attempt-1, and nothing of them stays beside. */
START_TEST(test_keep_attempt)
{
    char dir[] = "/tmp/rg-slow-XXXXXX", p[PATH_MAX], err[300];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const char *const names[] = {"rank0.log", "rank1.events.jsonl", "plan"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        FILE *f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%d\n", i);
        fclose(f);
    }
    ck_assert_int_eq(rg_slow_keep_attempt(dir, err, sizeof(err)), 0);
    struct stat sb;
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        ck_assert_int_ne(stat(p, &sb), 0);
        snprintf(p, sizeof(p), "%s/attempt-1/%s", dir, names[i]);
        ck_assert_int_eq(stat(p, &sb), 0);
    }
    /* Twice is refused (the first attempt is kept once), with the path named. */
    ck_assert_int_eq(rg_slow_keep_attempt(dir, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "attempt-1: cannot keep the first attempt"), "%s", err);
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s/attempt-1/%s", dir, names[i]);
        unlink(p);
    }
    snprintf(p, sizeof(p), "%s/attempt-1", dir);
    rmdir(p);
    rmdir(dir);
}
END_TEST

Suite *rg_suite_slow(void)
{
    Suite *s = suite_create("slow");
    TCase *t = tcase_create("judge");
    tcase_add_test(t, test_time_bound);
    tcase_add_test(t, test_not_time_bound);
    tcase_add_test(t, test_scale);
    tcase_add_test(t, test_cut_deadline);
    tcase_add_test(t, test_scale_evidence);
    tcase_add_test(t, test_keep_attempt);
    tcase_add_test(t, test_settle);
    suite_add_tcase(s, t);
    return s;
}
