/* SPDX-License-Identifier: MIT */
/*
 * The verdict table and the evidence rules: findings and their precedence, the first failure
 * in time, and what the shim's events make of a verdict (not instrumented, an error with no
 * fault before it, a rule that never fired), read from real JSONL files.
 */
#include "common/rg_check.h"
#include "judge/rg_judge.h"
#include "report/rg_report.h"
#include "rg_parse.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rg_result g_r;
static rg_scenario g_sc;
static rg_evidence g_ev[4];

/* A scenario of n ranks with the given rules, every rank ok at t=1 s and fully evidenced. */
static void setup_case(int n, const char *const *rules, int nrules)
{
    memset(&g_r, 0, sizeof(g_r));
    memset(&g_sc, 0, sizeof(g_sc));
    memset(g_ev, 0, sizeof(g_ev));
    g_r.ranks = g_sc.ranks = n;
    g_sc.timeout_s = 10; /* a scenario's default */
    g_sc.nfaults = nrules;
    for (int i = 0; i < nrules; i++) {
        struct fi_plan plan;
        char err[128];
        snprintf(g_sc.fault[i].rule, sizeof(g_sc.fault[i].rule), "%s", rules[i]);
        ck_assert_int_eq(fi_plan_parse(rules[i], "x", &plan, err, sizeof(err)), 0);
        g_sc.fault[i].kind = (int)plan.rules[0].kind;
        g_sc.fault[i].line = 10 + i;
    }
    for (int k = 0; k < n; k++) {
        g_r.rank[k] = (rg_rank_result){.t_s = -1, .step = 0, .left_t_s = 1.0};
        snprintf(g_r.rank[k].where, sizeof(g_r.rank[k].where), "all_reduce");
        rg_rank_find(&g_r.rank[k], RG_V_OK, 1.0, "%s", "");
        g_r.expect[k] = g_sc.expect[k] = RG_SC_EXPECT_ANY;
        g_r.expect_at[k] = g_sc.expect_at[k] = RG_SC_AT_ANY;
        g_ev[k].present = g_ev[k].loaded = g_ev[k].totals = true;
        g_ev[k].contexts = 2;
        g_ev[k].qps = 2;
        g_ev[k].first_fault_mono_ms = -1;
        g_ev[k].first_fault_rule = -1;
        g_ev[k].nprocs = 1; /* one process, the rank's own */
        g_ev[k].proc[0].pid = 100 + k;
        for (int i = 0; i < FI_MAX_RULES; i++)
            g_ev[k].matched[i] = g_ev[k].rx_pkts[i] = g_ev[k].rx_dup[i] = g_ev[k].rx_oos[i] = -1;
    }
}

START_TEST(test_precedence)
{
    rg_rank_result k = {.t_s = -1};
    rg_rank_find(&k, RG_V_SILENT_CORRUPTION, 0.5, "result element 3 is 0x1, expected 0x2");
    rg_rank_find(&k, RG_V_CRASH, 0.9, "killed by signal 11 (Segmentation fault)");
    /* Corruption reported, then a crash in finalize: the corruption is the verdict. */
    ck_assert_int_eq(k.verdict, RG_V_SILENT_CORRUPTION);
    ck_assert(k.t_s == 0.5);
    ck_assert_str_eq(k.detail, "result element 3 is 0x1, expected 0x2");
    ck_assert_int_eq(k.nfindings, 2);
    ck_assert_int_eq(k.finding[1].verdict, RG_V_CRASH);
    /* Every verdict outranks the ones before it in the table. */
    for (int v = 1; v < RG_V_COUNT; v++) {
        rg_rank_result q = {.t_s = -1};
        rg_rank_find(&q, (rg_verdict)v, 1, "high");
        rg_rank_find(&q, (rg_verdict)(v - 1), 0, "low");
        ck_assert_int_eq(q.verdict, v);
        ck_assert_str_eq(q.detail, "high");
    }
    /* A full list gives way at its lowest finding, never at a higher one. */
    rg_rank_result f = {.t_s = -1};
    rg_rank_find(&f, RG_V_OK, 0, "a");
    rg_rank_find(&f, RG_V_DETECTED, 0, "b");
    rg_rank_find(&f, RG_V_CRASH, 0, "c");
    rg_rank_find(&f, RG_V_ERROR, 0, "d");
    rg_rank_find(&f, RG_V_DEADLOCK, 0, "e");
    ck_assert_int_eq(f.nfindings, RG_MAX_FINDINGS);
    ck_assert_int_eq(f.verdict, RG_V_DEADLOCK);
    for (int i = 0; i < f.nfindings; i++)
        ck_assert_int_ne(f.finding[i].verdict, RG_V_OK);
    rg_rank_find(&f, RG_V_OK, 0, "z");
    for (int i = 0; i < f.nfindings; i++)
        ck_assert_int_ne(f.finding[i].verdict, RG_V_OK);
    /* Names and the table round-trip. */
    for (int v = 0; v < RG_V_COUNT; v++)
        ck_assert_int_eq(rg_verdict_of(rg_verdict_name((rg_verdict)v)), v);
    ck_assert_int_eq(rg_verdict_of("maybe"), -1);
    ck_assert_str_ne(rg_verdict_meaning(RG_V_NOT_EXERCISED), "?");
}
END_TEST

START_TEST(test_first_failure_in_time)
{
    setup_case(3, NULL, 0);
    g_r.expect[0] = g_r.expect[1] = g_r.expect[2] = RG_SC_EXPECT_OK;
    rg_rank_find(&g_r.rank[0], RG_V_DEADLOCK, 3.0, "still running");
    rg_rank_find(&g_r.rank[2], RG_V_SILENT_CORRUPTION, 0.42, "result element 0 is 0x0");
    snprintf(g_r.rank[2].where, sizeof(g_r.rank[2].where), "all_reduce float32 sum count 3");
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(g_r.why, "rank 2: SILENT_CORRUPTION at 0.42 s in all_reduce float32 sum "
                              "count 3: result element 0 is 0x0");
    ck_assert_str_eq(g_r.first, "first failure: rank 2: SILENT_CORRUPTION at 0.42 s in all_reduce "
                                "float32 sum count 3: result element 0 is 0x0");
    /* A rank that passes is never named, however early. */
    g_r.rank[2] = g_r.rank[1];
    ck_assert(!rg_judge(&g_r));
    ck_assert_ptr_nonnull(strstr(g_r.why, "rank 0: DEADLOCK"));
    setup_case(2, NULL, 0);
    ck_assert(rg_judge(&g_r));
    ck_assert_str_eq(g_r.first, "");
    /* Seen in the soak: rank 0 timed out waiting for a late rank 1 and told rank 2 before it
     * said its own verdict; rank 2's "peer aborted" is stamped 6 ms earlier, yet rank 0's
     * timeout is the failure that explains the others (and the one "too slow" weighs). */
    setup_case(3, NULL, 0);
    for (int k = 0; k < 3; k++)
        g_r.rank[k] = (rg_rank_result){.t_s = -1, .step = -1};
    rg_rank_find(&g_r.rank[0], RG_V_ERROR_WITHOUT_FAULT, 3.657, "init: RG_ERR_TIMEOUT");
    g_r.rank[0].status = RG_ERR_TIMEOUT;
    rg_rank_find(&g_r.rank[1], RG_V_ERROR_WITHOUT_FAULT, 3.762, "init: cannot send to rank 0");
    g_r.rank[1].status = RG_ERR_SIDE_CHANNEL;
    rg_rank_find(&g_r.rank[2], RG_V_ERROR_WITHOUT_FAULT, 3.651, "init: peer rank 0 aborted");
    g_r.rank[2].status = RG_ERR_PEER_ABORT;
    ck_assert(!rg_judge(&g_r));
    ck_assert_int_eq(g_r.first_rank, 0);
    /* Only told of aborts: the first of them is named, as before. */
    g_r.rank[0].status = g_r.rank[1].status = RG_ERR_PEER_ABORT;
    ck_assert(!rg_judge(&g_r));
    ck_assert_int_eq(g_r.first_rank, 2);
    /* Seen in triage's own test: rank 1 stuck in step 0 ran out of time 10 ms after rank 0,
     * which had finished the program and ran out waiting for it in finalize. The rank behind
     * explains the rank ahead, whichever timeout came first. */
    setup_case(2, NULL, 0);
    for (int k = 0; k < 2; k++)
        g_r.rank[k] = (rg_rank_result){.t_s = -1, .step = k ? 0 : 1};
    rg_rank_find(&g_r.rank[0], RG_V_ERROR_WITHOUT_FAULT, 3.49, "finalize: RG_ERR_TIMEOUT");
    rg_rank_find(&g_r.rank[1], RG_V_ERROR_WITHOUT_FAULT, 3.50, "sendrecv: RG_ERR_TIMEOUT");
    g_r.rank[0].status = g_r.rank[1].status = RG_ERR_TIMEOUT;
    ck_assert(!rg_judge(&g_r));
    ck_assert_int_eq(g_r.first_rank, 1);
    /* In one step, time decides. */
    g_r.rank[0].step = 0;
    ck_assert(!rg_judge(&g_r));
    ck_assert_int_eq(g_r.first_rank, 0);
}
END_TEST

/* detected@init: an error in the first call is not the refusal at init the scenario wants. */
START_TEST(test_detected_at)
{
    setup_case(2, NULL, 0);
    for (int k = 0; k < 2; k++) {
        g_r.rank[k] = (rg_rank_result){.t_s = -1, .step = k ? -1 : 0};
        snprintf(g_r.rank[k].where, sizeof(g_r.rank[k].where), k ? "init" : "all_reduce");
        rg_rank_find(&g_r.rank[k], RG_V_DETECTED, 1.0 + k, "crossed");
        g_r.expect[k] = RG_SC_EXPECT_DETECTED;
        g_r.expect_at[k] = RG_SC_AT_INIT;
    }
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(
        g_r.why,
        "rank 0: detected at 1.00 s in step 0 (all_reduce), expected detected@init: crossed");
    g_r.rank[0].step = -1;
    ck_assert(rg_judge(&g_r));
    g_r.expect_at[1] = 3;
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(g_r.why, "rank 1: detected at 2.00 s in init, expected detected@3: crossed");
}
END_TEST

/* detected:CLASS: an error of another class is another check firing, not the expected one. */
START_TEST(test_detected_class)
{
    setup_case(2, NULL, 0);
    for (int k = 0; k < 2; k++) {
        g_r.rank[k] = (rg_rank_result){.t_s = -1, .step = 1, .status = RG_ERR_TIMEOUT};
        snprintf(g_r.rank[k].where, sizeof(g_r.rank[k].where), "barrier");
        rg_rank_find(&g_r.rank[k], RG_V_DETECTED, 1.0 + k, "RG_ERR_TIMEOUT: late");
        g_r.expect[k] = RG_SC_EXPECT_DETECTED;
        g_r.expect_at[k] = 1;
        g_r.expect_cls[k] = (1u << -RG_ERR_PEER_ABORT) | (1u << -RG_ERR_TIMEOUT);
    }
    ck_assert(rg_judge(&g_r));
    g_r.expect_cls[0] = 1u << -RG_ERR_COMPLETION;
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(g_r.why, "rank 0: detected (timeout) at 1.00 s in step 1 (barrier), expected "
                              "detected@1:completion: RG_ERR_TIMEOUT: late");
    /* An error our own check found carries no status: not the class named. */
    g_r.rank[0].status = 0;
    ck_assert(!rg_judge(&g_r));
    ck_assert_ptr_nonnull(strstr(g_r.why, "detected (no status: no call failed)"));
    /* A v1 transport's errors carry none: the class is not judged, the place still is. */
    g_r.rank[0].status = RG_STATUS_V1;
    ck_assert(rg_judge(&g_r));
    g_r.rank[0].step = 0;
    ck_assert(!rg_judge(&g_r));
    /* peer_abort asked, timeout told: a rank that kept a socket could have been told; one
     * that kept none (counted) could not, and one whose sockets were not counted is judged as
     * asked. */
    g_r.rank[0].step = 1;
    g_r.rank[0].status = RG_ERR_TIMEOUT;
    g_r.expect_cls[0] = 1u << -RG_ERR_PEER_ABORT;
    for (int socks = -1; socks < 2; socks++) {
        g_r.rank[0].sockets_known = socks >= 0;
        g_r.rank[0].sockets = socks < 0 ? 0 : socks;
        ck_assert_int_eq(rg_judge(&g_r), socks == 0);
    }
    /* ok|detected: a rank whose part was done before the fault reached it is right ok, and
     * right detected only where and as it says. */
    g_r.rank[0].sockets_known = false;
    g_r.expect[0] = RG_SC_EXPECT_OK_OR_DETECTED;
    g_r.expect_cls[0] = 1u << -RG_ERR_TIMEOUT;
    ck_assert(rg_judge(&g_r));
    g_r.expect_at[0] = 0;
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(g_r.why, "rank 0: detected (timeout) at 1.00 s in step 1 (barrier), expected "
                              "ok|detected@0:timeout: RG_ERR_TIMEOUT: late");
    g_r.rank[0] = (rg_rank_result){.t_s = 1.0, .step = -1, .verdict = RG_V_OK};
    ck_assert(rg_judge(&g_r));
    g_r.expect[0] = RG_SC_EXPECT_DETECTED;
    ck_assert(!rg_judge(&g_r));
    g_r.rank[0] = (rg_rank_result){.t_s = -1, .step = 1, .status = RG_ERR_TIMEOUT};
    snprintf(g_r.rank[0].where, sizeof(g_r.rank[0].where), "barrier");
    rg_rank_find(&g_r.rank[0], RG_V_DETECTED, 1.0, "RG_ERR_TIMEOUT: late");
    g_r.expect_at[0] = 1;
    /* Only peer_abort gives way: a completion asked of a rank with no socket is still a
     * completion. */
    g_r.rank[0].sockets_known = true;
    g_r.rank[0].sockets = 0;
    g_r.expect_cls[0] = 1u << -RG_ERR_COMPLETION;
    ck_assert(!rg_judge(&g_r));
    /* A class asks nothing of a rank that is not expected to fail. */
    g_r.expect[0] = RG_SC_EXPECT_ANY;
    ck_assert(rg_judge(&g_r));
}
END_TEST

START_TEST(test_not_instrumented)
{
    setup_case(3, NULL, 0);
    g_ev[0].loaded = false;
    g_ev[1].contexts = g_ev[1].qps = 0;
    /* A rank that never got past its start has nothing the shim should have seen. */
    g_ev[2].contexts = g_ev[2].qps = 0;
    g_r.rank[2].step = -1;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR);
    ck_assert_ptr_nonnull(strstr(g_r.rank[0].detail, "not instrumented: the shim did not load"));
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_ERROR);
    ck_assert_ptr_nonnull(strstr(g_r.rank[1].detail, "the shim saw no verbs calls"));
    ck_assert_int_eq(g_r.rank[2].verdict, RG_V_OK);
    ck_assert(!rg_judge(&g_r));
    /* Without a summary (a rank killed before it wrote one) nothing is claimed either way. */
    setup_case(2, NULL, 0);
    g_ev[0].totals = false;
    g_ev[0].contexts = 0;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_OK);
    /* A tree whose parent summarised no verbs while the child that did them was killed by it
     * (a watchdog, a daemon's shutdown) before its own summary: what the rank did with verbs
     * is not known from the totals, so "no verbs calls" is not said (it once was). */
    setup_case(2, NULL, 0);
    g_ev[0].contexts = g_ev[0].qps = 0;
    g_ev[0].nprocs = 2;
    g_ev[0].proc[0] = (struct rg_ev_proc){.pid = 100, .loaded = true, .totals = true};
    g_ev[0].proc[1] = (struct rg_ev_proc){.pid = 101, .ppid = 100, .loaded = true, .forked = true};
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_msg(g_r.rank[0].verdict == RG_V_OK, "%s", g_r.rank[0].detail);
    /* ... and with the child's summary there, the whole tree's zero is said. */
    setup_case(2, NULL, 0);
    g_ev[0].contexts = g_ev[0].qps = 0;
    g_ev[0].nprocs = 2;
    g_ev[0].proc[0] = (struct rg_ev_proc){.pid = 100, .loaded = true, .totals = true};
    g_ev[0].proc[1] = (struct rg_ev_proc){
        .pid = 101, .ppid = 100, .loaded = true, .forked = true, .totals = true};
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR);
}
END_TEST

/* The victim of a kill fault passes as killed or any, never as ok or detected; its peers'
 * errors count as detected, the kill having fired first. */
START_TEST(test_killed)
{
    static const char *const rules[] = {"kill op=recv rank=2 nth=5"};
    setup_case(3, rules, 1);
    for (int k = 0; k < 2; k++) {
        g_r.rank[k] = (rg_rank_result){.t_s = -1, .step = 0};
        rg_rank_find(&g_r.rank[k], RG_V_DETECTED, 1.5, "peer rank 2 vanished");
        g_r.expect[k] = RG_SC_EXPECT_DETECTED;
    }
    g_r.rank[2] = (rg_rank_result){.t_s = -1, .step = 0};
    rg_rank_find(&g_r.rank[2], RG_V_KILLED, 0.4, "killed by its kill fault");
    g_ev[2].first_fault_mono_ms = 1400;
    g_ev[2].first_fault_rule = 0;
    g_ev[2].fired[0] = 1;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DETECTED);
    ck_assert_int_eq(g_r.rank[2].verdict, RG_V_KILLED);
    g_r.expect[2] = RG_SC_EXPECT_ANY;
    ck_assert(rg_judge(&g_r));
    g_r.expect[2] = RG_SC_EXPECT_KILLED;
    ck_assert(rg_judge(&g_r));
    g_r.expect[2] = RG_SC_EXPECT_DETECTED;
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(g_r.why,
                     "rank 2: killed at 0.40 s, expected detected: killed by its kill fault");
    g_r.expect[2] = RG_SC_EXPECT_OK;
    ck_assert(!rg_judge(&g_r));
    /* A rank expected killed that ended ok was not: its fault never reached it. */
    g_r.expect[0] = RG_SC_EXPECT_KILLED;
    g_r.expect[2] = RG_SC_EXPECT_KILLED;
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(rg_verdict_name(RG_V_KILLED), "killed");
}
END_TEST

/* An injected error handed to a rank that still read ok is swallowed; a lost send is not an
 * error the program was handed, and a rank that reported the error is fine. */
START_TEST(test_error_swallowed)
{
    static const char *const rules[] = {"error op=recv rank=1 nth=3", "negpoll rank=0 nth=2",
                                        "lose op=send rank=0 nth=1"};
    setup_case(3, rules, 3);
    g_ev[1].fired[0] = 1;
    g_ev[1].first_fault_mono_ms = 1500;
    g_ev[2].fired[2] = 0;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_ERROR_SWALLOWED);
    ck_assert(g_r.rank[1].t_s == 0.5);
    ck_assert_str_eq(g_r.rank[1].detail,
                     "faults item 1 'error op=recv rank=1 nth=3' (line 10) handed this rank 1 "
                     "injected error completion(s), yet every call it made returned success");
    ck_assert(!rg_judge(&g_r));

    /* The same error reported by the rank: detected, and the run passes. */
    setup_case(3, rules, 3);
    g_ev[1].fired[0] = 1;
    g_ev[1].first_fault_mono_ms = 1500;
    g_ev[0].fired[1] = 2;
    g_ev[0].first_fault_mono_ms = 1200;
    g_ev[0].fired[2] = 1;
    g_r.rank[1] = (rg_rank_result){.t_s = -1, .step = 0};
    rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 0.6, "completion WR_FLUSH_ERR");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DETECTED);
    /* rank 0 got two negative polls and read ok: swallowed, named by the negpoll rule. */
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR_SWALLOWED);
    ck_assert_ptr_nonnull(strstr(g_r.rank[0].detail, "2 injected negative poll(s)"));
    /* Nothing fired on rank 2: ok. */
    ck_assert_int_eq(g_r.rank[2].verdict, RG_V_OK);
}
END_TEST

/* An error told late: handed to the rank inside one call, reported by a later one. The same
 * call, or a fault whose call the shim could not say, or a peer's failure: nothing claimed. */
START_TEST(test_error_told_late)
{
    static const char *const rules[] = {"error op=send rank=0 step=0 nth=1",
                                        "nomem verb=post_send rank=1 nth=2", "lose op=send nth=1"};
    setup_case(3, rules, 3);
    g_sc.nops = 2;
    g_sc.ops[0] = (rg_sc_op){.kind = RG_SC_SENDRECV, .repeat = 1};
    g_sc.ops[1] = (rg_sc_op){.kind = RG_SC_ALL_REDUCE, .repeat = 3};
    for (int k = 0; k < 3; k++) {
        g_r.rank[k] = (rg_rank_result){.t_s = -1, .step = 1, .rep = 0};
        rg_rank_find(&g_r.rank[k], RG_V_DETECTED, 0.9, "completion WR_FLUSH_ERR");
    }
    g_ev[0].fired[0] = 1;
    g_ev[0].first_fault_mono_ms = 1500;
    g_ev[0].first_fault_rule = 0;
    g_ev[0].fired_at[0] = (struct rg_ev_at){.seen = true, .known = true, .step = 0, .rep = 0};
    /* rank 1: ENOMEM in step 1 repetition 0, failed there: told in the call that met it. */
    g_ev[1].fired[1] = 1;
    g_ev[1].fired_at[1] = (struct rg_ev_at){.seen = true, .known = true, .step = 1, .rep = 0};
    /* rank 2: a lost send is no error handed to it; and a fault whose call is not known. */
    g_ev[2].fired[2] = 1;
    g_ev[2].fired_at[2] = (struct rg_ev_at){.seen = true, .known = true, .step = 0, .rep = 0};
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR_SWALLOWED);
    ck_assert(g_r.rank[0].t_s == 0.5);
    ck_assert_str_eq(g_r.rank[0].detail,
                     "faults item 1 'error op=send rank=0 step=0 nth=1' (line 10) handed this rank "
                     "an injected error completion in step 0 (sendrecv), which returned success: "
                     "the error came back only from step 1 repetition 0 (all_reduce)");
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DETECTED);
    ck_assert_int_eq(g_r.rank[2].verdict, RG_V_DETECTED);
    ck_assert(!rg_judge(&g_r));

    /* A repetition later is late too; init to finalize by name; unknown says nothing. */
    setup_case(2, rules, 2);
    g_sc.nops = 2;
    g_sc.ops[0] = (rg_sc_op){.kind = RG_SC_SENDRECV, .repeat = 1};
    g_sc.ops[1] = (rg_sc_op){.kind = RG_SC_ALL_REDUCE, .repeat = 3};
    g_r.rank[0] = (rg_rank_result){.t_s = -1, .step = 1, .rep = 2};
    rg_rank_find(&g_r.rank[0], RG_V_DETECTED, 0.9, "x");
    g_ev[0].fired[1] = 1;
    g_ev[0].first_fault_mono_ms = 1100;
    g_ev[0].first_fault_rule = 1;
    g_ev[0].fired_at[1] = (struct rg_ev_at){.seen = true, .known = true, .step = 1, .rep = 1};
    g_r.rank[1] = (rg_rank_result){.t_s = -1, .step = 2, .rep = 0};
    rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 0.9, "x");
    g_ev[1].fired[0] = 1;
    g_ev[1].fired_at[0] = (struct rg_ev_at){.seen = true, .known = true, .step = -1, .rep = 0};
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR_SWALLOWED);
    ck_assert_ptr_nonnull(strstr(g_r.rank[0].detail, "an injected ENOMEM in step 1 repetition 1 "
                                                     "(all_reduce), which returned success: the "
                                                     "error came back only from step 1 "
                                                     "repetition 2 (all_reduce)"));
    ck_assert_ptr_nonnull(strstr(g_r.rank[1].detail, "in init, which returned success: the error "
                                                     "came back only from finalize"));
    setup_case(2, rules, 1);
    g_r.rank[0] = (rg_rank_result){.t_s = -1, .step = 1, .rep = 0};
    rg_rank_find(&g_r.rank[0], RG_V_DETECTED, 0.9, "x");
    g_ev[0].fired[0] = 1;
    g_ev[0].first_fault_mono_ms = 1100;
    g_ev[0].first_fault_rule = 0;
    g_ev[0].fired_at[0] = (struct rg_ev_at){.seen = true, .known = false};
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DETECTED);
}
END_TEST

/* A timeout is the whole call's: past T and the margin from the call's start is slow; within
 * it, or an error that is not a timeout, or init, is not judged. The margin grows with what the
 * machine took (lag, a wait for a CPU). */
/* n ranks, one all_reduce step with a 2 s timeout, rank 0's stop fired at 0.1 s. */
static void timed_case(int n)
{
    static const char *const rules[] = {"stop op=send rank=0 step=0 nth=1"};
    setup_case(n, rules, 1);
    g_sc.timeout_s = 2;
    g_sc.nops = 1;
    g_sc.ops[0] = (rg_sc_op){.kind = RG_SC_ALL_REDUCE, .repeat = 1};
    g_ev[0].fired[0] = 1;
    g_ev[0].first_fault_mono_ms = 1100;
    g_ev[0].first_fault_rule = 0;
}

START_TEST(test_timeout_on_time)
{
    timed_case(4);
    double at[4] = {4.6, 3.0, 4.6, 2.0};
    int st[4] = {RG_ERR_TIMEOUT, RG_ERR_TIMEOUT, RG_ERR_PEER_ABORT, RG_ERR_TIMEOUT};
    for (int k = 0; k < 4; k++) {
        g_r.rank[k] = (rg_rank_result){
            .t_s = -1, .step = 0, .step_t_s = 1.0, .status = st[k], .cpu_wait_s = -1};
        rg_rank_find(&g_r.rank[k], RG_V_DETECTED, at[k], "x");
    }
    g_r.rank[3].step = -1; /* init: not judged */
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 4, 1000, RG_EV_RANK | RG_EV_CROSS);
    /* 3.6 s into the call, past 2 s and a 1.2 s margin */
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_SLOW_DETECTION);
    ck_assert_str_eq(g_r.rank[0].detail,
                     "the call returned its timeout 3.60 s after it began, past its 2.0 s timeout "
                     "and a 1.20 s margin (1 s, a tenth of the timeout, the runner's lag 0.00 s, "
                     "0.00 s waiting for a CPU): a timeout that is not the whole call's");
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DETECTED); /* 2.0 s: on time */
    ck_assert_int_eq(g_r.rank[2].verdict, RG_V_DETECTED); /* not a timeout */
    ck_assert_int_eq(g_r.rank[3].verdict, RG_V_DETECTED);
    /* The same 3.6 s on a machine that held the rank back half a second: on time. */
    timed_case(1);
    g_r.lag_s = 0.3;
    g_r.rank[0] = (rg_rank_result){
        .t_s = -1, .step = 0, .step_t_s = 1.0, .status = RG_ERR_TIMEOUT, .cpu_wait_s = 0.2};
    rg_rank_find(&g_r.rank[0], RG_V_DETECTED, 4.6, "x");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 1, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DETECTED);
}
END_TEST

/* SLOW_DETECTION: a peer that could be told fails more than half its timeout after the first
 * failure; a run where a stop fired is not judged (a stopped hub tells no one). */
START_TEST(test_slow_detection)
{
    static const char *const rules[] = {"kill op=recv rank=2 nth=5"};
    setup_case(3, rules, 1);
    g_sc.timeout_s = 4;
    g_ev[2].fired[0] = 1;
    g_ev[2].first_fault_mono_ms = 1400;
    g_r.rule[0].fired = 1;
    g_r.rank[2] = (rg_rank_result){.t_s = -1, .step = 0};
    rg_rank_find(&g_r.rank[2], RG_V_KILLED, 0.4, "killed by its kill fault");
    g_r.rank[0] = (rg_rank_result){.t_s = -1, .step = 0};
    rg_rank_find(&g_r.rank[0], RG_V_DETECTED, 0.5, "peer rank 2 is gone");
    g_r.rank[1] = (rg_rank_result){.t_s = -1, .step = 0};
    rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 4.45, "operation 2 did not finish within 4.0 s");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DETECTED);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_SLOW_DETECTION);
    ck_assert_str_eq(g_r.rank[1].detail,
                     "failed 4.05 s after rank 2 did (killed at 0.40 s); a peer that can be told "
                     "must fail within 2.0 s, half its 4.0 s timeout");
    /* The same rank with no socket left after init (Gloo's store is gone by then): nothing
     * could tell it, so its timeout is not slow; one with a socket counted still is. */
    for (int socks = 0; socks < 2; socks++) {
        setup_case(3, rules, 1);
        g_sc.timeout_s = 4;
        g_ev[2].fired[0] = 1;
        g_ev[2].first_fault_mono_ms = 1400;
        g_r.rule[0].fired = 1;
        g_r.rank[2] = (rg_rank_result){.t_s = -1, .step = 0};
        rg_rank_find(&g_r.rank[2], RG_V_KILLED, 0.4, "killed by its kill fault");
        g_r.rank[1] =
            (rg_rank_result){.t_s = -1, .step = 0, .sockets_known = true, .sockets = socks};
        rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 4.45, "read timeout");
        rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 1000, RG_EV_RANK | RG_EV_CROSS);
        ck_assert_int_eq(g_r.rank[1].verdict, socks ? RG_V_SLOW_DETECTION : RG_V_DETECTED);
    }
    /* A first failure in init may come before the rank could tell anyone: not judged. */
    setup_case(3, rules, 1);
    g_sc.timeout_s = 4;
    g_ev[2].fired[0] = 1;
    g_ev[2].first_fault_mono_ms = 1200;
    g_r.rank[2] = (rg_rank_result){.t_s = -1, .step = -1};
    rg_rank_find(&g_r.rank[2], RG_V_DETECTED, 0.4, "reg_mr: Cannot allocate memory");
    g_r.rank[1] = (rg_rank_result){.t_s = -1, .step = -1};
    rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 4.45, "only 2 of 3 ranks joined");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DETECTED);
    /* The same with a stop: the others can only time out, and are not judged slow. */
    static const char *const stop[] = {"stop op=recv rank=2 nth=5"};
    setup_case(3, stop, 1);
    g_sc.timeout_s = 4;
    g_ev[2].fired[0] = 1;
    g_ev[2].first_fault_mono_ms = 1400;
    g_r.rank[2] = (rg_rank_result){.t_s = -1, .step = 0};
    rg_rank_find(&g_r.rank[2], RG_V_KILLED, 0.4, "stopped by its stop fault");
    g_r.rank[1] = (rg_rank_result){.t_s = -1, .step = 0};
    rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 4.45, "operation 2 did not finish within 4.0 s");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 3, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DETECTED);
}
END_TEST

/* LEAK: verbs objects the shim saw alive at exit, after finalize; below zero is "unknown". */
START_TEST(test_leak)
{
    static const char *const rules[] = {"lose op=send rank=0 nth=1"};
    setup_case(2, rules, 1);
    g_ev[0].fired[0] = 1;
    g_ev[0].first_fault_mono_ms = 1200;
    g_ev[1].proc[0].alive_at_exit = true;
    g_ev[1].proc[0].alive[4] = 2; /* QPs */
    g_ev[1].proc[0].alive[2] = 1; /* MRs */
    g_ev[0].proc[0].alive_at_exit = true;
    g_ev[0].proc[0].alive[2] = -1; /* freed by a path the shim does not wrap: not a leak */
    g_r.rank[1].left_t_s = 0.9;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_LEAK);
    ck_assert_str_eq(g_r.rank[1].detail,
                     "at exit, after finalize, the shim still saw 1 MR(s), 2 QP(s) alive: never "
                     "destroyed");
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_OK);
    ck_assert(!rg_judge(&g_r));
    /* A worse finding stays the verdict; the leak is kept beside it. */
    setup_case(2, rules, 1);
    g_ev[0].fired[0] = 1;
    g_ev[1].proc[0].alive_at_exit = true;
    g_ev[1].proc[0].alive[0] = 1;
    rg_rank_find(&g_r.rank[1], RG_V_SILENT_CORRUPTION, 0.5, "element 3");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_SILENT_CORRUPTION);
    bool kept = false;
    for (int f = 0; f < g_r.rank[1].nfindings; f++)
        kept |= g_r.rank[1].finding[f].verdict == RG_V_LEAK;
    ck_assert(kept);
    /* leak_ok (railguard exec without --leaks): the leak stays the verdict, listed, but the
     * rank is judged by what lies below it -- unless that fails on its own. */
    setup_case(2, rules, 1);
    g_ev[0].fired[0] = 1;
    g_ev[1].proc[0].alive_at_exit = true;
    g_ev[1].proc[0].alive[4] = 1;
    g_r.leak_ok = true;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_LEAK);
    ck_assert(rg_judge(&g_r));
    g_r.expect[1] = RG_SC_EXPECT_DETECTED; /* ok under the leak: not what was expected */
    ck_assert(!rg_judge(&g_r));
    g_r.expect[1] = RG_SC_EXPECT_ANY;
    /* A failure under the leak is named as itself, not as the leak. */
    rg_rank_find(&g_r.rank[1], RG_V_NOT_EXERCISED, -1, "faults item 1 fired 0 times");
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_LEAK);
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(g_r.why, "rank 1: NOT_EXERCISED in all_reduce: faults item 1 fired 0 times");
    g_r.leak_ok = false;
    ck_assert(!rg_judge(&g_r));
    ck_assert_int_eq(strncmp(g_r.why, "rank 1: LEAK", 12), 0);
    ck_assert_int_eq(rg_verdict_of("LEAK"), RG_V_LEAK);
    ck_assert_int_eq(rg_verdict_of("NOT_FAIL_STOP"), RG_V_NOT_FAIL_STOP);
    ck_assert(RG_V_LEAK < RG_V_NOT_FAIL_STOP && RG_V_NOT_FAIL_STOP < RG_V_ERROR_SWALLOWED);
}
END_TEST

/*
 * A hang while the shim held completions it made for a CQ with a completion channel: rxe raises
 * no event for them, so the hang may be the shim's, not the program's. Read from the CQ's
 * summary (its latest word: a later summary with nothing held clears it), and judged ERROR,
 * not DEADLOCK. A CQ without a channel, or one holding nothing, changes no verdict.
 */
static void write_lines(const char *path, const char *text);

START_TEST(test_held_unseen)
{
    char path[] = "/tmp/rg-held-XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    static rg_evidence ev;
    write_lines(path, "{\"event\":\"load\",\"rank\":0,\"pid\":9}\n"
                      "{\"event\":\"cq\",\"pid\":9,\"why\":\"snapshot\",\"dev\":\"rxe0\","
                      "\"cq_ord\":1,\"polls\":4,\"cqe\":2,\"channel\":true,\"held\":3}\n"
                      "{\"event\":\"cq\",\"pid\":9,\"why\":\"snapshot\",\"dev\":\"rxe0\","
                      "\"cq_ord\":0,\"polls\":4,\"cqe\":2,\"channel\":false,\"held\":5}\n"
                      "{\"event\":\"cq\",\"pid\":9,\"why\":\"snapshot\",\"dev\":\"rxe0\","
                      "\"cq_ord\":2,\"polls\":4,\"cqe\":2}\n");
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    ck_assert_int_eq(ev.bad_lines, 0);
    ck_assert_int_eq(ev.proc[0].nheld, 1); /* the CQ with a channel; an older line has none */
    ck_assert_int_eq(ev.proc[0].held[0].cq_ord, 1);
    ck_assert_uint_eq(ev.proc[0].held[0].held, 3);

    static const char *const rules[] = {"lose op=send rank=0 nth=1"};
    setup_case(2, rules, 1);
    g_ev[0].fired[0] = 1;
    g_ev[0].first_fault_mono_ms = 1200;
    g_ev[0].proc[0] = ev.proc[0];
    rg_rank_find(&g_r.rank[0], RG_V_DEADLOCK, 8.0, "still running after the 8 s deadline");
    rg_rank_find(&g_r.rank[1], RG_V_DEADLOCK, 8.0, "still running after the 8 s deadline");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR);
    ck_assert_msg(strstr(g_r.rank[0].detail, "held 3 completion(s) it had made for CQ #1") &&
                      strstr(g_r.rank[0].detail, "still running after the 8 s deadline"),
                  "%s", g_r.rank[0].detail);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DEADLOCK); /* its peer held nothing */

    /* A later summary of the same CQ with nothing held: the hang is the program's. */
    write_lines(path, "{\"event\":\"load\",\"rank\":0,\"pid\":9}\n"
                      "{\"event\":\"cq\",\"pid\":9,\"why\":\"snapshot\",\"dev\":\"rxe0\","
                      "\"cq_ord\":1,\"polls\":4,\"cqe\":2,\"channel\":true,\"held\":3}\n"
                      "{\"event\":\"cq\",\"pid\":9,\"why\":\"exit\",\"dev\":\"rxe0\","
                      "\"cq_ord\":1,\"polls\":5,\"cqe\":5,\"channel\":true,\"held\":0}\n");
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    setup_case(2, rules, 1);
    g_ev[0].fired[0] = 1;
    g_ev[0].proc[0] = ev.proc[0];
    rg_rank_find(&g_r.rank[0], RG_V_DEADLOCK, 8.0, "still running after the 8 s deadline");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DEADLOCK);
    unlink(path);
}
END_TEST

START_TEST(test_detected_needs_a_fault_before)
{
    static const char *const rules[] = {"error status=WR_FLUSH_ERR op=recv rank=1 nth=3"};
    /* t0 = 1000 ms; rank 0's error at 1.5 s (2500 ms), rank 1's at 1.2 s (2200 ms). */
    setup_case(2, rules, 1);
    g_r.rank[0] = (rg_rank_result){.t_s = -1, .step = 1};
    g_r.rank[1] = (rg_rank_result){.t_s = -1, .step = 1};
    rg_rank_find(&g_r.rank[0], RG_V_DETECTED, 1.5, "peer failed");
    rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 1.2, "completion error WR_FLUSH_ERR");
    g_ev[1].first_fault_mono_ms = 2100;
    g_ev[1].first_fault_rule = 0;
    g_ev[1].fired[0] = 1;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DETECTED); /* rank 1's fault came first */
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DETECTED);
    ck_assert_int_eq(g_r.rule[0].fired, 1);
    ck_assert_int_eq(g_r.rule[0].fired_by[1], 1);
    ck_assert(rg_judge(&g_r));

    /* The fault fired after rank 0's error: that error had another cause. */
    setup_case(2, rules, 1);
    g_r.rank[0] = (rg_rank_result){.t_s = -1, .step = 1};
    rg_rank_find(&g_r.rank[0], RG_V_DETECTED, 0.5, "init: cannot list RDMA devices");
    g_ev[1].first_fault_mono_ms = 2100;
    g_ev[1].first_fault_rule = 0;
    g_ev[1].fired[0] = 1;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR_WITHOUT_FAULT);
    ck_assert_str_eq(g_r.rank[0].detail,
                     "the first fault (rank 1, faults item 1) fired 0.600 s after this error: "
                     "init: cannot list RDMA devices");

    /* No fault at all: every detected is an error without a cause, whatever `expect` says. */
    setup_case(2, NULL, 0);
    g_r.expect[0] = g_r.expect[1] = RG_SC_EXPECT_DETECTED;
    for (int k = 0; k < 2; k++) {
        g_r.rank[k] = (rg_rank_result){.t_s = -1, .step = -1};
        rg_rank_find(&g_r.rank[k], RG_V_DETECTED, 0.1, "init: cannot list RDMA devices: Success");
    }
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR_WITHOUT_FAULT);
    ck_assert_ptr_nonnull(strstr(g_r.rank[0].detail, "no planned fault fired on any rank: init:"));
    ck_assert(!rg_judge(&g_r));

    /* One rank of an external launch cannot see the others: that rule waits for the merge. */
    setup_case(2, NULL, 0);
    g_r.rank[0] = (rg_rank_result){.t_s = -1, .step = 1};
    rg_rank_find(&g_r.rank[0], RG_V_DETECTED, 0.1, "peer failed");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 1, 0, RG_EV_RANK);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DETECTED);
}
END_TEST

START_TEST(test_not_exercised)
{
    /* lose, not negpoll, fires on rank 0: a lost send is no error the rank was handed, so its
     * ok stays (a fired negpoll would make it ERROR_SWALLOWED, test_error_swallowed). */
    static const char *const rules[] = {"count", "error status=WR_FLUSH_ERR op=recv nth=5",
                                        "delay ms=5 rank=0", "lose nth=2"};
    setup_case(2, rules, 4);
    g_sc.fault[2].optional = true;
    g_ev[0].matched[1] = 3;
    g_ev[1].matched[1] = 0;
    g_ev[0].fired[3] = 1;
    g_ev[0].first_fault_mono_ms = 5;
    /* What the ranks did of the rule's op, for the plan to be mended: an nth past it. */
    g_ev[0].op_posts[FI_OP_RECV] = 4;
    g_ev[0].op_cqe[FI_OP_RECV] = 3;
    g_ev[1].totals = false; /* rank 1 never summarised: no counts said for it */
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(g_r.rank[k].verdict, RG_V_NOT_EXERCISED);
        ck_assert_str_eq(g_r.rank[k].detail, "faults item 2 'error status=WR_FLUSH_ERR op=recv "
                                             "nth=5' (line 11) matched 3 times, fired 0 times on "
                                             "every rank; the shim counted rank 0: recv 4 "
                                             "posted, 3 completed (nth=5)");
        ck_assert_int_eq(g_r.rank[k].nfindings, 2); /* ok, kept beside it */
    }
    ck_assert_int_eq(g_r.nrules, 4);
    ck_assert(g_r.rule[0].counting && !g_r.rule[1].counting);
    ck_assert_int_eq(g_r.rule[1].matched, 3);
    ck_assert_int_eq(g_r.rule[2].matched, -1);
    ck_assert(!rg_judge(&g_r));
    /* The same with the rule fired somewhere passes; optional and count rules never count. */
    setup_case(2, rules, 4);
    g_sc.fault[2].optional = true;
    g_ev[1].fired[1] = 1;
    g_ev[0].fired[3] = 2;
    g_ev[1].first_fault_mono_ms = 5;
    g_r.rank[1] = (rg_rank_result){.t_s = -1, .step = 0};
    rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 0.5, "flushed"); /* it reported its error */
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_OK);
    ck_assert(rg_judge(&g_r));
    /* A harder verdict keeps its place above it. */
    setup_case(2, rules, 2);
    rg_rank_find(&g_r.rank[1], RG_V_DEADLOCK, 9, "still running");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_NOT_EXERCISED);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DEADLOCK);
    /* A corrupt the shim reached but could not apply (no receive buffer it knew) proves
     * nothing: not exercised, and the message says why. */
    static const char *const gave[] = {"corrupt op=recv rank=1 nth=20"};
    setup_case(2, gave, 1);
    g_ev[1].matched[0] = 34;
    g_ev[1].unacted[0] = 1;
    snprintf(g_ev[1].unacted_why[0], sizeof(g_ev[1].unacted_why[0]), "%s",
             "receive buffer unknown or empty");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_NOT_EXERCISED);
    ck_assert_ptr_nonnull(strstr(g_r.rank[1].detail,
                                 "matched 34 times, fired 0 times on every rank (it fired 1 "
                                 "time(s) and could not act: receive buffer unknown or empty)"));
    /* A netem whose window missed the traffic: its packets are counted to the qdisc's removal,
     * clean by then, and the message says the count is not the window's. */
    static const char *const cut[] = {"wire loss=100% rank=1 rail=0 after=1500 before=1600"};
    setup_case(2, cut, 1);
    g_ev[1].matched[0] = 177;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_NOT_EXERCISED);
    ck_assert_str_eq(
        g_r.rank[0].detail,
        "faults item 1 'wire loss=100% rank=1 rail=0 after=1500 before=1600' (line 10) "
        "put 177 packet(s) through its netem (counted to its removal: its window "
        "missed the traffic; step= anchors it), fired 0 times on every rank");
    setup_case(2, cut, 1);
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_ptr_nonnull(strstr(g_r.rank[1].detail, "put 0 packet(s) through its netem (ranks on "
                                                     "one soft-RoCE device never leave it"));
}
END_TEST

/*
 * Steps a transport lacks: a rank that skipped some (and passed the rest) is unsupported, which
 * any expectation accepts and the result shows as SKIP, never PASS. A fault that fired nowhere
 * while steps were skipped is unsupported, not NOT_EXERCISED (its place may have been skipped);
 * an error the shim handed a rank that then skipped steps is still swallowed; a failure in a
 * step that ran still fails; and a skipped rank's known failure is neither xfail nor xpass.
 */
START_TEST(test_unsupported)
{
    static const char *const rules[] = {"error status=WR_FLUSH_ERR op=recv nth=5"};
    setup_case(2, rules, 1);
    for (int k = 0; k < 2; k++) {
        rg_rank_find(&g_r.rank[k], RG_V_UNSUPPORTED, 0.5, "not run: 2 0 reduce_scatter: x");
        g_r.expect[k] = RG_SC_EXPECT_DETECTED;
    }
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_UNSUPPORTED);
    ck_assert(rg_judge(&g_r));
    ck_assert(g_r.skipped);
    ck_assert_str_eq(rg_result_word(&g_r), "SKIP");
    ck_assert_msg(strstr(g_r.why, "rank 0: unsupported") && strstr(g_r.why, "reduce_scatter"), "%s",
                  g_r.why);
    bool said = false;
    for (int f = 0; f < g_r.rank[1].nfindings; f++)
        said |= strstr(g_r.rank[1].finding[f].text, "steps it may have aimed at were not run") != 0;
    ck_assert_msg(said, "%s", g_r.rank[1].detail);

    /* Fired on rank 1, which then returned success everywhere it ran: swallowed. */
    setup_case(2, rules, 1);
    rg_rank_find(&g_r.rank[1], RG_V_UNSUPPORTED, 0.5, "not run: 3 0 broadcast: x");
    g_ev[1].fired[0] = 1;
    g_ev[1].first_fault_mono_ms = 100;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_ERROR_SWALLOWED);
    ck_assert(!rg_judge(&g_r));

    /* A step that ran and failed fails the scenario, skips or not. */
    setup_case(2, NULL, 0);
    rg_rank_find(&g_r.rank[0], RG_V_UNSUPPORTED, 0.5, "not run: x");
    rg_rank_find(&g_r.rank[1], RG_V_SILENT_CORRUPTION, 0.7, "element 3");
    ck_assert(!rg_judge(&g_r));
    ck_assert_str_eq(rg_result_word(&g_r), "FAIL");

    /* Known failure on a rank that skipped: not said to be gone. */
    setup_case(2, NULL, 0);
    rg_rank_find(&g_r.rank[0], RG_V_UNSUPPORTED, 0.5, "not run: x");
    g_r.known[0] = RG_V_DEADLOCK;
    ck_assert(rg_judge(&g_r));
    ck_assert_int_eq(g_r.known_state, RG_KNOWN_NONE);
    ck_assert_str_eq(rg_result_word(&g_r), "SKIP");
}
END_TEST

static void write_lines(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* The ownership sanitizer's events read back, and the verdict they make even when the data
 * was right; a rank whose requests went where the shim cannot follow is said so, not passed. */
START_TEST(test_ownership)
{
    char path[] = "/tmp/rg-own-XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setup_case(2, NULL, 0);
    g_sc.ownership = true;
    write_lines(path, "{\"event\":\"load\"}\n"
                      "{\"event\":\"ownership\",\"op\":\"send\",\"qp\":18,\"wr_id\":\"0x1000\","
                      "\"offset\":7,\"bytes\":16400}\n"
                      "{\"event\":\"ownership\",\"op\":\"recv\",\"qp\":18,\"wr_id\":\"0x1\","
                      "\"offset\":3,\"bytes\":16}\n"
                      "{\"event\":\"owned\",\"why\":\"exit\",\"sends\":40,\"recvs\":41,"
                      "\"rewritten\":2,\"unsanitized\":0}\n"
                      "{\"event\":\"totals\",\"why\":\"exit\",\"contexts\":2,\"qps\":2}\n");
    ck_assert_int_eq(rg_evidence_read(path, &g_ev[0], err, sizeof(err)), 0);
    ck_assert(g_ev[0].owned);
    ck_assert_uint_eq(g_ev[0].own_sends, 40);
    ck_assert_uint_eq(g_ev[0].own_rewritten, 2);
    write_lines(path, "{\"event\":\"load\"}\n"
                      "{\"event\":\"owned\",\"why\":\"exit\",\"sends\":3,\"recvs\":0,"
                      "\"rewritten\":0,\"unsanitized\":5}\n"
                      "{\"event\":\"totals\",\"why\":\"exit\",\"contexts\":2,\"qps\":2}\n");
    ck_assert_int_eq(rg_evidence_read(path, &g_ev[1], err, sizeof(err)), 0);
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_BUFFER_REWRITTEN_IN_FLIGHT);
    ck_assert_str_eq(g_r.rank[0].detail,
                     "a send buffer rewritten before its completion: qp 0x12, wr_id 0x1000, byte "
                     "7 of 16400 (the first of several)");
    ck_assert_str_eq(g_r.rank[0].ownership, "checked 40 sends, 41 receives");
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_OK);
    ck_assert_str_eq(g_r.rank[1].ownership, "not sanitized: 5 request(s) the shim could not "
                                            "follow (checked 3 sends, 0 receives)");
    ck_assert(!rg_judge(&g_r));
    /* A UD send rewritten after its destination answered: reported, not judged; beside it a
     * rewrite without the answer still is. */
    setup_case(2, NULL, 0);
    g_sc.ownership = true;
    write_lines(path, "{\"event\":\"load\"}\n"
                      "{\"event\":\"ownership\",\"op\":\"send\",\"qp\":38,\"wr_id\":\"0x5\","
                      "\"offset\":3,\"bytes\":105,\"answered\":true}\n"
                      "{\"event\":\"owned\",\"why\":\"exit\",\"sends\":7,\"recvs\":9,"
                      "\"rewritten\":0,\"answered\":1,\"unsanitized\":0}\n"
                      "{\"event\":\"totals\",\"why\":\"exit\",\"contexts\":1,\"qps\":1}\n");
    ck_assert_int_eq(rg_evidence_read(path, &g_ev[0], err, sizeof(err)), 0);
    ck_assert_str_eq(g_ev[0].own_first, "");
    ck_assert_uint_eq(g_ev[0].own_answered, 1);
    write_lines(path, "{\"event\":\"load\"}\n"
                      "{\"event\":\"ownership\",\"op\":\"send\",\"qp\":38,\"wr_id\":\"0x6\","
                      "\"offset\":0,\"bytes\":105,\"answered\":true}\n"
                      "{\"event\":\"ownership\",\"op\":\"send\",\"qp\":38,\"wr_id\":\"0x7\","
                      "\"offset\":1,\"bytes\":105}\n"
                      "{\"event\":\"owned\",\"why\":\"exit\",\"sends\":7,\"recvs\":9,"
                      "\"rewritten\":1,\"answered\":1,\"unsanitized\":0}\n"
                      "{\"event\":\"totals\",\"why\":\"exit\",\"contexts\":1,\"qps\":1}\n");
    ck_assert_int_eq(rg_evidence_read(path, &g_ev[1], err, sizeof(err)), 0);
    unlink(path);
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_OK);
    ck_assert_str_eq(g_r.rank[0].ownership,
                     "checked 7 sends, 9 receives; 1 UD send(s) rewritten before their completion "
                     "after their destination answered: not judged (an acknowledgement "
                     "protocol's reuse, as UCX's)");
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_BUFFER_REWRITTEN_IN_FLIGHT);
    ck_assert_str_eq(g_r.rank[1].detail, "a send buffer rewritten before its completion: qp 0x26, "
                                         "wr_id 0x7, byte 1 of 105");
    /* Off: nothing said, nothing judged. */
    setup_case(2, NULL, 0);
    g_ev[0].own_first[0] = 'x';
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_OK);
    ck_assert_str_eq(g_r.rank[0].ownership, "");
}
END_TEST

START_TEST(test_evidence_read)
{
    char path[] = "/tmp/rg-evidence-XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    static rg_evidence ev;

    write_lines(path,
                "{\"event\":\"load\",\"rank\":1,\"pid\":9,\"t_ms\":0.1,\"mono_ms\":100.5,"
                "\"rules\":2,\"verbs\":\"/usr/lib/libibverbs.so.1.14.44.0\"}\n"
                "{\"event\":\"fault\",\"rule\":1,\"mono_ms\":180.25,\"fault\":\"error\","
                "\"step\":2,\"rep\":1}\n"
                "{\"event\":\"fault\",\"rule\":1,\"mono_ms\":150.0,\"fault\":\"error\",\"step\":3,"
                "\"rep\":0}\n"
                "{\"event\":\"fault\",\"rule\":99,\"mono_ms\":1.0}\n"
                "{\"event\":\"fault\",\"rule\":0,\"mono_ms\":0.5,\"fault\":\"corrupt\","
                "\"skipped\":\"receive buffer unknown or empty\"}\n"
                "not json at all\n"
                "[1,2]\n"
                "{\"event\":\"qp\",\"qp\":17,\"dev\":\"rxe0\",\"posts_send\":9,\"posts_recv\":4,"
                "\"out_send\":2,\"out_recv\":1,\"why\":\"snapshot\"}\n"
                "{\"event\":\"qp\",\"qp\":18,\"dev\":\"rxe1\",\"out_send\":0,\"out_recv\":0}\n"
                "{\"event\":\"rule\",\"rule\":0,\"matched\":12,\"fired\":0}\n"
                "{\"event\":\"rule\",\"rule\":1,\"matched\":7,\"fired\":5}\n"
                "{\"event\":\"totals\",\"why\":\"snapshot\",\"contexts\":2,\"qps\":2,\"cqs\":2,"
                "\"posts_send\":9,\"posts_recv\":4}\n"
                "{\"event\":\"totals\",\"why\":\"snapshot\",\"contexts\":5,\"qps\":2,\"cqs\":2,"
                "\"posts_send\":9,\"posts_recv\":4,\"polls\":-3,\"cqe\":\"x\"}\n"
                "{\"event\":\"totals\",\"why\":\"snap");
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    ck_assert(ev.present && ev.loaded && ev.totals && ev.snapshot);
    ck_assert_str_eq(ev.verbs, "/usr/lib/libibverbs.so.1.14.44.0");
    ck_assert(ev.first_fault_mono_ms == 1.0); /* rule 99 is nobody's: unreadable, yet it fired */
    ck_assert_uint_eq(ev.fired[1], 5);        /* the summary's count beats the 2 events */
    /* Where rule 1 first fired, as its first event said; rule 0 never fired. */
    ck_assert(ev.fired_at[1].seen && ev.fired_at[1].known);
    ck_assert_int_eq(ev.fired_at[1].step, 2);
    ck_assert_int_eq(ev.fired_at[1].rep, 1);
    ck_assert(!ev.fired_at[0].seen && !ev.fired_at[0].known);
    /* A fire that could not act is no fault: not first, not fired, and its reason kept. */
    ck_assert_uint_eq(ev.fired[0], 0);
    ck_assert_uint_eq(ev.unacted[0], 1);
    ck_assert_str_eq(ev.unacted_why[0], "receive buffer unknown or empty");
    ck_assert_int_eq(ev.matched[0], 12);
    ck_assert_int_eq(ev.matched[2], -1);
    ck_assert_uint_eq(ev.contexts, 2); /* the mistyped totals are not taken */
    ck_assert_uint_eq(ev.polls, 0);    /* negative and mistyped numbers: an unreadable line */
    ck_assert_uint_eq(ev.cqe, 0);
    /* rule 99, the two lines that are no events, the mistyped totals, the torn last line */
    ck_assert_int_eq(ev.bad_lines, 5);
    ck_assert_str_eq(ev.unreadable, "line 4: \"rule\" is not a rule of a plan: "
                                    "'{\"event\":\"fault\",\"rule\":99,\"mono_ms\":1.0}?'");
    ck_assert_str_eq(ev.queues,
                     "qp 17 (rxe0): 2 send(s) and 1 receive(s) outstanding of 9 and 4 posted");

    /* A line far longer than any event is skipped whole, and reading goes on after it. */
    char *big = malloc(20000);
    ck_assert_ptr_nonnull(big);
    memset(big, 'x', 19000);
    snprintf(big + 19000, 1000, "\n{\"event\":\"load\"}\n");
    write_lines(path, big);
    free(big);
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    ck_assert(ev.loaded);
    ck_assert_int_eq(ev.bad_lines, 1);
    ck_assert_str_eq(ev.unreadable,
                     "line 1: 19001 bytes long, more than an event can be: "
                     "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");

    unlink(path);
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    ck_assert(!ev.present && !ev.loaded);
}
END_TEST

/* Call sites: the sites rule's list (the largest count of each site over the summaries), the
 * faults' landing sites, and a site that is not OBJECT+0xHEX unreadable. */
START_TEST(test_evidence_sites)
{
    char path[] = "/tmp/rg-evidence-XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    static rg_evidence ev;
    write_lines(path,
                "{\"event\":\"caller\",\"pid\":9,\"verb\":\"poll\",\"caller\":"
                "\"/opt/a+0x1/lib.so+0x2c\",\"calls\":5,\"ops\":{\"recv\":2,\"send\":1,"
                "\"write\":0,\"read\":0,\"atomic\":0}}\n"
                "{\"event\":\"fault\",\"pid\":9,\"rule\":0,\"mono_ms\":5,\"fault\":\"error\","
                "\"caller\":\"/opt/a+0x1/lib.so+0x2c\"}\n"
                "{\"event\":\"fault\",\"pid\":9,\"rule\":0,\"mono_ms\":6,\"fault\":\"lose\","
                "\"caller\":\"/usr/bin/prog+0x99\"}\n"
                "{\"event\":\"fault\",\"pid\":9,\"rule\":0,\"mono_ms\":7,\"fault\":\"swap_rails\","
                "\"caller\":\"\"}\n"
                "{\"event\":\"caller\",\"pid\":9,\"verb\":\"poll\",\"caller\":"
                "\"/opt/a+0x1/lib.so+0x2c\",\"calls\":9,\"ops\":{\"recv\":4,\"send\":1,"
                "\"write\":0,\"read\":0,\"atomic\":0}}\n"
                "{\"event\":\"caller\",\"pid\":9,\"verb\":\"poll\",\"caller\":\"lib.so+0x\"}\n"
                "{\"event\":\"caller\",\"pid\":9,\"verb\":\"dance\",\"caller\":\"lib.so+0x1\"}\n"
                "{\"event\":\"callers\",\"pid\":9,\"sites\":1,\"lost\":0}\n");
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    ck_assert(ev.sites);
    ck_assert_int_eq(ev.nsites, 2);
    ck_assert_int_eq(ev.nobjs, 2);
    ck_assert_str_eq(ev.objs[ev.site[0].obj], "/opt/a+0x1/lib.so"); /* the last "+0x" splits */
    ck_assert_uint_eq(ev.site[0].off, 0x2c);
    ck_assert_str_eq(ev.site[0].verb, "poll");
    ck_assert_uint_eq(ev.site[0].calls, 9);
    ck_assert_uint_eq(ev.site[0].ops[FI_OP_RECV], 4);
    ck_assert_uint_eq(ev.site[0].fired, 1);
    ck_assert_str_eq(ev.objs[ev.site[1].obj], "/usr/bin/prog");
    ck_assert_str_eq(ev.site[1].verb, ""); /* only a fault named it */
    ck_assert_uint_eq(ev.site[1].fired, 1);
    ck_assert_int_eq(ev.bad_lines, 2);
    ck_assert_msg(strstr(ev.unreadable, "line 6: \"caller\" is not OBJECT+0xOFFSET"), "%s",
                  ev.unreadable);
    unlink(path);
}
END_TEST

/* Call paths: a site with its callers ("from") is another site than the same call from
 * elsewhere; a fault's path as long as the shim found it; the judge's text of it; a "from"
 * that is not a path unreadable. */
START_TEST(test_evidence_paths)
{
    char path[] = "/tmp/rg-evpath-XXXXXX", err[256], text[448];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    static rg_evidence ev;
    write_lines(path,
                "{\"event\":\"caller\",\"pid\":9,\"verb\":\"poll\",\"caller\":\"/l/w.so+0x2c\","
                "\"from\":\"/l/w.so+0x300\",\"calls\":5,\"ops\":{\"recv\":2,\"send\":0,"
                "\"write\":0,\"read\":0,\"atomic\":0}}\n"
                "{\"event\":\"caller\",\"pid\":9,\"verb\":\"poll\",\"caller\":\"/l/w.so+0x2c\","
                "\"from\":\"/usr/bin/p+0x500\",\"calls\":7,\"ops\":{\"recv\":3,\"send\":0,"
                "\"write\":0,\"read\":0,\"atomic\":0}}\n"
                "{\"event\":\"fault\",\"pid\":9,\"rule\":0,\"mono_ms\":5,\"fault\":\"error\","
                "\"caller\":\"/l/w.so+0x2c\",\"from\":\"/usr/bin/p+0x500</usr/bin/p+0x77<"
                "/lib/libc.so.6+0x2724a\"}\n"
                "{\"event\":\"caller\",\"pid\":9,\"verb\":\"poll\",\"caller\":\"/l/w.so+0x2c\","
                "\"from\":\"/l/w.so+0x300<\"}\n"
                "{\"event\":\"callers\",\"pid\":9,\"sites\":2,\"lost\":0}\n");
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    ck_assert_int_eq(ev.nsites, 3);
    ck_assert_int_eq(ev.site[0].nfrom, 1);
    ck_assert_uint_eq(ev.site[0].from_off[0], 0x300);
    ck_assert_uint_eq(ev.site[1].calls, 7);
    ck_assert_str_eq(ev.objs[ev.site[1].from_obj[0]], "/usr/bin/p");
    ck_assert_int_eq(ev.site[2].nfrom, 3);
    ck_assert_uint_eq(ev.site[2].fired, 1);
    ck_assert_int_eq(ev.rule_site[0], 2);
    ck_assert_int_eq(rg_ev_site_text(&ev, &ev.site[2], RG_EV_PATH_ALL, false, text, sizeof(text)),
                     4);
    ck_assert_str_eq(text, "/l/w.so+0x2c</usr/bin/p+0x500</usr/bin/p+0x77</lib/libc.so.6+0x2724a");
    ck_assert_int_eq(rg_ev_site_text(&ev, &ev.site[2], 2, true, text, sizeof(text)), 2);
    ck_assert_str_eq(text, "w.so+0x2c<p+0x500");
    /* Too little room: whole frames only, never half of one. */
    ck_assert_int_eq(rg_ev_site_text(&ev, &ev.site[2], RG_EV_PATH_ALL, false, text, 30), 2);
    ck_assert_str_eq(text, "/l/w.so+0x2c</usr/bin/p+0x500");
    ck_assert_int_eq(ev.bad_lines, 1);
    ck_assert_msg(strstr(ev.unreadable, "line 4: \"from\" is not a call path"), "%s",
                  ev.unreadable);
    unlink(path);
}
END_TEST

/*
 * Every 64-bit value the verbs API carries comes back exactly: a wr_id with its top bit set (a
 * pointer, a tagged value) is read as written, in a fault and in an ownership finding. A value
 * the reader cannot take (a decimal past INT64_MAX, as the shim once wrote wr_ids) makes the
 * line unreadable, and that is the rank's finding, with the line: never a dropped fault that
 * turns into ERROR_WITHOUT_FAULT.
 */
START_TEST(test_evidence_u64)
{
    static const uint64_t edges[] = {
        0, 1, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX - 1, UINT64_MAX};
    char path[] = "/tmp/rg-ev64-XXXXXX", err[256], text[1024], want[64];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    static rg_evidence ev;
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        snprintf(text, sizeof(text),
                 "{\"event\":\"load\"}\n"
                 "{\"event\":\"fault\",\"rule\":0,\"mono_ms\":10.5,\"fault\":\"error\","
                 "\"wr_id\":" RG_HEX64 "}\n"
                 "{\"event\":\"ownership\",\"op\":\"send\",\"qp\":18,\"wr_id\":" RG_HEX64
                 ",\"offset\":0,\"bytes\":8}\n",
                 edges[i], edges[i]);
        write_lines(path, text);
        ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
        ck_assert_int_eq(ev.bad_lines, 0);
        ck_assert_uint_eq(ev.fired[0], 1);
        ck_assert(ev.first_fault_mono_ms == 10.5);
        snprintf(want, sizeof(want), "wr_id 0x%llx,", (unsigned long long)edges[i]);
        ck_assert_msg(strstr(ev.own_first, want), "%s: no '%s'", ev.own_first, want);
    }
    /* Hex that is not 64-bit, or not hex: unreadable, named. */
    write_lines(path,
                "{\"event\":\"load\"}\n"
                "{\"event\":\"ownership\",\"op\":\"send\",\"wr_id\":\"0x1ffffffffffffffff\"}\n"
                "{\"event\":\"ownership\",\"op\":\"send\",\"wr_id\":\"12\"}\n");
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0);
    ck_assert_int_eq(ev.bad_lines, 2);
    ck_assert_ptr_nonnull(
        strstr(ev.unreadable, "line 2: \"wr_id\" is not a 64-bit identifier (\"0x...\")"));

    /* The old decimal spelling of 2^63: jansson refuses it, the line is unreadable, and the
     * rank's verdict says so, naming the line, though the rule's summary counted the fault. */
    setup_case(2, (const char *const[]){"error rank=1 nth=1"}, 1);
    write_lines(path, "{\"event\":\"load\"}\n");
    ck_assert_int_eq(rg_evidence_read(path, &g_ev[0], err, sizeof(err)), 0);
    write_lines(path, "{\"event\":\"load\"}\n"
                      "{\"event\":\"fault\",\"rule\":0,\"mono_ms\":1200,"
                      "\"wr_id\":9223372036854775808}\n"
                      "{\"event\":\"rule\",\"rule\":0,\"matched\":1,\"fired\":1}\n");
    ck_assert_int_eq(rg_evidence_read(path, &g_ev[1], err, sizeof(err)), 0);
    unlink(path);
    ck_assert_int_eq(g_ev[1].bad_lines, 1);
    ck_assert_uint_eq(g_ev[1].fired[0], 1);
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_OK);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_ERROR);
    ck_assert_msg(
        !strncmp(g_r.rank[1].detail, "evidence unreadable: rank 1 events line 2: not JSON: ", 53),
        "%s", g_r.rank[1].detail);
    ck_assert(!rg_judge(&g_r));
}
END_TEST

/*
 * A rank is a process tree: a server whose parent does no verbs and forks a child that does
 * (and leaves a QP) is instrumented, and its leak is the child's, named by pid -- not "no
 * verbs calls" from the parent's summary and a LEAK at once, as one shared view made it.
 */
START_TEST(test_evidence_tree)
{
    char path[] = "/tmp/rg-tree-XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setup_case(2, (const char *const[]){"error op=recv rank=1 nth=1"}, 1);
    write_lines(path,
                "{\"event\":\"load\",\"pid\":500,\"ppid\":1,\"exe\":\"/usr/bin/srv\","
                "\"snapshot_signal\":34}\n"
                "{\"event\":\"load\",\"pid\":501,\"ppid\":500,\"exe\":\"/usr/bin/srv\"}\n"
                "{\"event\":\"fault\",\"pid\":501,\"rule\":0,\"mono_ms\":1100}\n"
                "{\"event\":\"rule\",\"pid\":501,\"rule\":0,\"matched\":3,\"fired\":1}\n"
                "{\"event\":\"alive\",\"pid\":501,\"why\":\"exit\",\"contexts\":1,\"pds\":0,"
                "\"mrs\":0,\"cqs\":0,\"qps\":1,\"channels\":0}\n"
                "{\"event\":\"totals\",\"pid\":501,\"why\":\"exit\",\"contexts\":1,\"qps\":2}\n"
                "{\"event\":\"rule\",\"pid\":500,\"rule\":0,\"matched\":0,\"fired\":0}\n"
                "{\"event\":\"alive\",\"pid\":500,\"why\":\"exit\",\"contexts\":0,\"pds\":0,"
                "\"mrs\":0,\"cqs\":0,\"qps\":0,\"channels\":0}\n"
                "{\"event\":\"totals\",\"pid\":500,\"why\":\"exit\",\"contexts\":0,\"qps\":0}\n");
    ck_assert_int_eq(rg_evidence_read(path, &g_ev[1], err, sizeof(err)), 0);
    unlink(path);
    ck_assert_int_eq(g_ev[1].nprocs, 2);
    ck_assert(!g_ev[0].proc[0].forked && g_ev[1].proc[1].forked);
    ck_assert_int_eq(g_ev[1].proc[1].ppid, 500);
    ck_assert_uint_eq(g_ev[1].contexts, 1); /* the tree's, not the parent's last word */
    ck_assert_uint_eq(g_ev[1].qps, 2);
    ck_assert_uint_eq(g_ev[1].fired[0], 1);
    ck_assert_int_eq(g_ev[1].matched[0], 3);
    ck_assert_int_eq(g_ev[1].snapshot_signal, 34); /* the rank's own process's */
    g_ev[0].fired[0] = 0;
    rg_rank_find(&g_r.rank[1], RG_V_DETECTED, 0.5, "exited with status 1");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_LEAK);
    ck_assert_str_eq(g_r.rank[1].detail,
                     "at exit, after finalize, the shim still saw 1 context(s), 1 QP(s) alive in "
                     "pid 501 (srv, forked by pid 500): never destroyed");
    for (int f = 0; f < g_r.rank[1].nfindings; f++)
        ck_assert_msg(!strstr(g_r.rank[1].finding[f].text, "not instrumented"), "%s",
                      g_r.rank[1].finding[f].text);
}
END_TEST

/*
 * A service (exec: service) reports through its clients: an error handed to it and a run that
 * read ok is no ERROR_SWALLOWED; and at a tie in time a client's failure is named first, not
 * the server it left running.
 */
START_TEST(test_service)
{
    static const char *const rules[] = {"error op=recv rank=0 nth=1"};
    setup_case(2, rules, 1);
    g_ev[0].fired[0] = 1;
    g_ev[0].first_fault_mono_ms = 1100;
    g_r.rank[0].service = true;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_OK);
    g_r.rank[0].service = false; /* the same rank, no service: it swallowed the error */
    setup_case(2, rules, 1);
    g_ev[0].fired[0] = 1;
    g_ev[0].first_fault_mono_ms = 1100;
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 1000, RG_EV_RANK | RG_EV_CROSS);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR_SWALLOWED);
    /* Both hung at the deadline: the client is the first failure, not its server. */
    setup_case(2, NULL, 0);
    for (int k = 0; k < 2; k++)
        rg_rank_find(&g_r.rank[k], RG_V_DEADLOCK, 20.0, "still running");
    g_r.rank[0].service = true;
    ck_assert(!rg_judge(&g_r));
    ck_assert_int_eq(g_r.first_rank, 1);
    g_r.rank[0].service = false;
    ck_assert(!rg_judge(&g_r));
    ck_assert_int_eq(g_r.first_rank, 0);
}
END_TEST

/* A launcher's job (launch/rg_job.c): ranks ended as their shims' exit events said, or with
 * none; the launcher's own end. */
static rg_launched *job_case(int launcher_status)
{
    rg_launched *l = calloc(1, sizeof(*l));
    ck_assert_ptr_nonnull(l);
    setup_case(2, NULL, 0);
    snprintf(g_r.dir, sizeof(g_r.dir), "/nonexistent/rg-job");
    l->lo = 0;
    l->hi = 2;
    l->job = true;
    l->job_extra = -1;
    l->launcher = (struct rg_proc){.pid = 99, .exited = true, .status = launcher_status << 8};
    for (int r = 0; r < 2; r++) {
        l->rank[r].said = (rg_rank_result){.t_s = -1, .left_t_s = 1.0 + r, .start_s = -1};
        snprintf(l->rank[r].said.where, sizeof(l->rank[r].said.where), "mpirun");
        l->rank[r].proc = (struct rg_proc){.pid = 100 + r, .job = true, .exited = true};
        l->rank[r].ev = g_ev[r];
    }
    return l;
}

START_TEST(test_job)
{
    /* Rank 0 exits 1, rank 1 ends with no exit seen, the launcher exits 1: mpirun's abort. */
    rg_launched *l = job_case(1);
    l->rank[0].proc.status = 1 << 8;
    l->rank[1].proc.status = SIGKILL;
    l->rank[1].proc.job_unseen = true;
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_ge(g_r.rank[0].verdict, RG_V_DETECTED);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_KILLED);
    ck_assert_msg(strstr(g_r.rank[1].detail, "ended with no exit its shim saw") &&
                      strstr(g_r.rank[1].detail, "after rank 0 left with") &&
                      strstr(g_r.rank[1].detail, "the launcher then exited with status 1"),
                  "%s", g_r.rank[1].detail);
    /* Rank 1 ended by its own kill fault (no exit seen either: SIGKILL), then rank 0 with no
     * exit seen and the launcher exits 1: mpirun ended rank 0 after rank 1's end, KILLED, not
     * a CRASH of its own (mpi-allreduce-kill read CRASH so). */
    free(l);
    l = job_case(1);
    g_sc.nfaults = 1;
    g_sc.fault[0].kind = FI_KILL;
    snprintf(g_sc.fault[0].rule, sizeof(g_sc.fault[0].rule), "kill op=recv rank=1 nth=20");
    l->rank[1].ev.fired[0] = 1;
    l->rank[0].proc.status = SIGTERM;
    l->rank[0].proc.job_unseen = true;
    l->rank[1].proc.status = SIGKILL;
    l->rank[1].proc.job_unseen = true;
    l->rank[0].said.left_t_s = 3.0; /* after rank 1's end at 2.0 */
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_KILLED);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_KILLED);
    ck_assert_msg(strstr(g_r.rank[0].detail, "after rank 1 left with killed"), "%s",
                  g_r.rank[0].detail);
    g_sc.nfaults = 0;
    /* Neither end seen (MPI_Abort after the program found a wrong sum, mpirun ending the
     * other), the launcher exiting 1, a process's own code: the job stopped with an error,
     * DETECTED for both, which one said it unknown. Exiting 134 (128 + SIGABRT, a UCX fatal
     * error's abort) is a signal's end: CRASH. The fault fired first, at 0.5 s. */
    for (int st = 1; st; st = st == 1 ? 134 : 0) {
        free(l);
        l = job_case(st);
        g_sc.nfaults = 1;
        g_sc.fault[0].kind = FI_CORRUPT;
        snprintf(g_sc.fault[0].rule, sizeof(g_sc.fault[0].rule), "corrupt op=recv rank=1 nth=20");
        l->rank[1].ev.fired[0] = 1;
        l->rank[1].ev.first_fault_mono_ms = 500;
        for (int r = 0; r < 2; r++) {
            l->rank[r].proc.status = SIGKILL;
            l->rank[r].proc.job_unseen = true;
        }
        rg_judge_programs(&g_r, &g_sc, l);
        for (int r = 0; r < 2; r++) {
            ck_assert_int_eq(g_r.rank[r].verdict, st == 1 ? RG_V_DETECTED : RG_V_CRASH);
            ck_assert_msg(st != 1 || strstr(g_r.rank[r].detail, "its launcher exited with status "
                                                                "1, a process's own error code"),
                          "%s", g_r.rank[r].detail);
        }
        g_sc.nfaults = 0;
    }
    /* The same end while the launcher exits 0: nothing explains it. */
    free(l);
    l = job_case(0);
    l->rank[0].proc.status = 1 << 8;
    l->rank[1].proc.status = SIGKILL;
    l->rank[1].proc.job_unseen = true;
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_CRASH);
    ck_assert_msg(strstr(g_r.rank[1].detail, "so which is not known"), "%s", g_r.rank[1].detail);
    /* Both exit 0: ok, ok; the launcher exiting 5 then is its own failure, on rank 0. */
    free(l);
    l = job_case(0);
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_OK);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_OK);
    free(l);
    l = job_case(5);
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_CRASH);
    ck_assert_msg(strstr(g_r.rank[0].detail, "its launcher exited with status 5 though every rank "
                                             "exited with status 0"),
                  "%s", g_r.rank[0].detail);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_OK);
    /* A rank the launcher never started, and one it started past the scenario's. */
    free(l);
    l = job_case(0);
    l->rank[1].proc.pid = -1;
    l->job_extra = 2;
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_ERROR);
    ck_assert_msg(strstr(g_r.rank[1].detail, "its launcher started no process with rank 1"), "%s",
                  g_r.rank[1].detail);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_ERROR);
    ck_assert_msg(strstr(g_r.rank[0].detail, "started a process with rank 2; the scenario has 2"),
                  "%s", g_r.rank[0].detail);
    /* A launcher still running at the deadline that never started rank 1: its hang, said. */
    free(l);
    l = job_case(0);
    l->launcher.exited = false;
    l->launcher.hung = true;
    l->rank[1].proc.pid = -1;
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DEADLOCK);
    ck_assert_msg(strstr(g_r.rank[0].detail,
                         "still running at the 0 s deadline and had not started "
                         "rank 1"),
                  "%s", g_r.rank[0].detail);
    free(l);
}
END_TEST

/* A stop fault taken by a child of the started process (timeout's ibv_rc_pingpong): the tree
 * hangs at the deadline waiting on it, as planned -- killed, not DEADLOCK; its peer, hung with
 * no fault of its own, is the DEADLOCK. */
START_TEST(test_tree_stop)
{
    static const char *const rules[] = {"stop op=recv rank=1 nth=5"};
    rg_launched *l = calloc(1, sizeof(*l));
    ck_assert_ptr_nonnull(l);
    setup_case(2, rules, 1);
    snprintf(g_r.dir, sizeof(g_r.dir), "/nonexistent/rg-tree");
    g_sc.deadline_s = 8;
    g_ev[1].fired[0] = 1;
    l->lo = 0;
    l->hi = 2;
    l->job_extra = -1;
    for (int r = 0; r < 2; r++) {
        l->rank[r].said = (rg_rank_result){.t_s = -1, .left_t_s = -1, .start_s = -1};
        l->rank[r].proc = (struct rg_proc){.pid = 100 + r, .hung = true};
        l->rank[r].ev = g_ev[r];
    }
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_KILLED);
    ck_assert_msg(strstr(g_r.rank[1].detail, "stopped by its stop fault (faults item 1, line 10) "
                                             "in a process of its tree"),
                  "%s", g_r.rank[1].detail);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_DEADLOCK);
    /* The same hang with the stop fired on the other rank: rank 1's hang is its own. */
    setup_case(2, rules, 1);
    g_sc.deadline_s = 8;
    g_ev[0].fired[0] = 1;
    for (int r = 0; r < 2; r++)
        l->rank[r].ev = g_ev[r];
    rg_judge_programs(&g_r, &g_sc, l);
    ck_assert_int_eq(g_r.rank[1].verdict, RG_V_DEADLOCK);
    ck_assert_int_eq(g_r.rank[0].verdict, RG_V_KILLED);
    free(l);
}
END_TEST

START_TEST(test_result_round_trip)
{
    static const char *const rules[] = {"count", "error nth=3"};
    char path[] = "/tmp/rg-result-XXXXXX", err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setup_case(2, rules, 2);
    g_ev[1].fired[1] = 4;
    g_ev[1].first_fault_mono_ms = 0;
    rg_rank_find(&g_r.rank[1], RG_V_CRASH, 2.5, "killed by signal 11");
    rg_evidence_apply(&g_r, &g_sc, g_ev, 0, 2, 0, RG_EV_RANK | RG_EV_CROSS);
    rg_judge(&g_r);
    static rg_result back;
    ck_assert_int_eq(rg_result_save(&g_r, path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert_str_eq(back.first, g_r.first);
    ck_assert_int_eq(back.rank[1].verdict, RG_V_CRASH);
    ck_assert(back.rank[1].t_s == 2.5);
    ck_assert_int_eq(back.rank[1].nfindings, 2);
    ck_assert_int_eq(back.rank[1].finding[0].verdict, RG_V_OK);
    ck_assert_int_eq(back.nrules, 2);
    ck_assert_str_eq(back.rule[1].rule, "error nth=3");
    ck_assert_uint_eq(back.rule[1].fired, 4);
    ck_assert_uint_eq(back.rule[1].fired_by[1], 4);
    /* No wire rule, no receivers' counters: not said, not zero. */
    ck_assert(back.rule[1].rx_pkts == -1 && back.rule[1].rx_dup == -1 && back.rule[1].rx_oos == -1);
    ck_assert(back.rule[0].counting);
    ck_assert(!back.leak_ok);
    ck_assert(!back.rank[0].service && !back.rank[1].service);
    g_r.leak_ok = true;
    g_r.rank[0].service = true;
    ck_assert_int_eq(rg_result_save(&g_r, path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert(back.leak_ok);
    ck_assert(back.rank[0].service && !back.rank[1].service);
    ck_assert(back.deadline_cut_s == 0);
    /* run --deadline's cut deadline, which triage's causes read, exactly as it was. */
    g_r.deadline_cut_s = 10.000000000000002;
    ck_assert_int_eq(rg_result_save(&g_r, path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert(back.deadline_cut_s == g_r.deadline_cut_s);
    /* Out of range reads as a bad file, named, never as a deadline. */
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char text[1 << 17], edited[(1 << 17) + 64];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    char *at = strstr(text, "\"deadline_cut_s\"");
    ck_assert_ptr_nonnull(at);
    snprintf(edited, sizeof(edited), "%.*s\"deadline_cut_s\": -5, \"ignored\"%s", (int)(at - text),
             text, at + strlen("\"deadline_cut_s\""));
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(edited, f);
    fclose(f);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "deadline_cut_s out of range"));
    g_r.deadline_cut_s = 0;
    unlink(path);
}
END_TEST

/* One external rank's own result: its rank as rank 0, detected t_s after its start. */
static void merge_view(rg_result *v, int rank, double t0_mono_ms, const char *host, double t_s)
{
    memset(v, 0, sizeof(*v));
    v->ranks = 1;
    v->self_rank = rank;
    v->t0_mono_ms = t0_mono_ms;
    snprintf(v->host, sizeof(v->host), "%s", host);
    v->rank[0] = (rg_rank_result){.t_s = -1, .step = 1};
    rg_rank_find(&v->rank[0], RG_V_DETECTED, t_s, "flushed");
}

START_TEST(test_merge)
{
    static const char *const rules[] = {"error op=recv rank=1 nth=2"};
    static rg_result views[2], out;
    char err[256];
    bool ordered;

    setup_case(2, rules, 1);
    g_sc.expect[0] = g_sc.expect[1] = RG_SC_EXPECT_ANY;
    snprintf(g_sc.name, sizeof(g_sc.name), "ext");
    /* Rank 0 started at 1000 ms and failed 0.5 s later; rank 1 started at 1100 ms and its
     * fault fired at 1200 ms: before rank 0's error, on the common clock. */
    for (int r = 0; r < 2; r++)
        merge_view(&views[r], r, 1000 + 100 * r, "node", 0.5 - 0.3 * r);
    g_ev[1].first_fault_mono_ms = 1200;
    g_ev[1].first_fault_rule = 0;
    g_ev[1].fired[0] = 1;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert(ordered);
    ck_assert_int_eq(out.rank[0].verdict, RG_V_DETECTED);
    ck_assert_int_eq(out.rank[1].verdict, RG_V_DETECTED);
    ck_assert(out.rank[1].t_s > 0.29 && out.rank[1].t_s < 0.31); /* 0.2 s, rebased by 0.1 s */
    ck_assert(out.passed);

    /* The fault came after both errors (1.5 s and 1.3 s): they had another cause, and the
     * earlier of them, rank 1's, is the first failure. */
    g_ev[1].first_fault_mono_ms = 1700;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert_int_eq(out.rank[0].verdict, RG_V_ERROR_WITHOUT_FAULT);
    ck_assert_int_eq(out.rank[1].verdict, RG_V_ERROR_WITHOUT_FAULT);
    ck_assert(!out.passed);
    ck_assert_msg(strstr(out.first, "first failure: rank 1: ERROR_WITHOUT_FAULT at 0.30 s"), "%s",
                  out.first);

    /* Two hosts have no common clock: a fault anywhere counts as before every error. */
    snprintf(views[1].host, sizeof(views[1].host), "other");
    g_ev[1].first_fault_mono_ms = 1700;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert(!ordered);
    ck_assert_int_eq(out.rank[0].verdict, RG_V_DETECTED);

    /* A rank with no result is an error; so are two results for one rank. */
    g_ev[1].first_fault_mono_ms = 1200;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 1, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert_int_eq(out.rank[1].verdict, RG_V_ERROR);
    ck_assert_ptr_nonnull(strstr(out.rank[1].detail, "no result from this rank"));
    views[1].self_rank = 0;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "two results for rank 0"));
    views[1].self_rank = 7;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "a result for rank 7, outside 0..1"));

    /* A rule no rank fired is caught only here, where every rank is seen. */
    views[1].self_rank = 1;
    snprintf(views[1].host, sizeof(views[1].host), "node");
    memset(g_ev[1].fired, 0, sizeof(g_ev[1].fired));
    g_ev[1].first_fault_mono_ms = -1;
    for (int r = 0; r < 2; r++) {
        views[r].rank[0] = (rg_rank_result){.t_s = -1, .step = 1};
        rg_rank_find(&views[r].rank[0], RG_V_OK, 0.5, "%s", "");
    }
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert_int_eq(out.rank[0].verdict, RG_V_NOT_EXERCISED);
    ck_assert_int_eq(out.rank[1].verdict, RG_V_NOT_EXERCISED);
}
END_TEST

/* Ranks on two hosts whose clocks are 5000 s apart, placed on rank 0's by measured offsets. */
START_TEST(test_merge_placed)
{
    static const char *const rules[] = {"error op=recv rank=1 nth=2"};
    static rg_result views[2], out, back;
    static rg_tl_rank tl;
    char err[256], dir[] = "/tmp/rg-merge-XXXXXX", path[300];
    bool ordered;

    setup_case(2, rules, 1);
    g_sc.expect[0] = g_sc.expect[1] = RG_SC_EXPECT_ANY;
    snprintf(g_sc.name, sizeof(g_sc.name), "ext");
    /* In true time (rank 0's clock): rank 0 starts at 1000 ms and fails at 1500; rank 1 starts
     * at 1100, its fault fires at 1200, it fails at 1300. Rank 1's host reads 5000 s more. */
    for (int r = 0; r < 2; r++) {
        merge_view(&views[r], r, r ? 5001100 : 1000, r ? "b" : "a", r ? 0.2 : 0.5);
        views[r].rank[0].clock = (rg_clock){.measured = true,
                                            .offset_ms = r ? 5000000.0 : 0,
                                            .err_ms = r ? 0.05 : 0,
                                            .rounds = r ? RG_CLOCK_ROUNDS : 0};
    }
    g_ev[1].first_fault_rule = 0;
    g_ev[1].fired[0] = 1;
    g_ev[1].first_fault_mono_ms = 5001200;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert(ordered && out.clock_placed);
    ck_assert_double_eq_tol(out.clock_err_ms, 0.05, 1e-9);
    ck_assert_double_eq_tol(out.t0_mono_ms, 1000, 1e-6);
    ck_assert_str_eq(out.host, "(several)");
    ck_assert_double_eq_tol(out.rank[1].t_s, 0.3, 1e-9);
    ck_assert_int_eq(out.rank[0].verdict, RG_V_DETECTED);
    ck_assert_int_eq(out.rank[1].verdict, RG_V_DETECTED);
    ck_assert(out.passed);

    /* The fault after both errors, on the common clock: neither error was its consequence. */
    g_ev[1].first_fault_mono_ms = 5001700;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert_int_eq(out.rank[0].verdict, RG_V_ERROR_WITHOUT_FAULT);
    ck_assert_int_eq(out.rank[1].verdict, RG_V_ERROR_WITHOUT_FAULT);
    ck_assert_msg(strstr(out.first, "first failure: rank 1: ERROR_WITHOUT_FAULT at 0.30 s"), "%s",
                  out.first);

    /* 1 ms after rank 0's error, with 1 ms of doubt: the clocks cannot say it came after. */
    views[1].rank[0].clock.err_ms = 1.0;
    g_ev[1].first_fault_mono_ms = 5001501;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert_int_eq(out.rank[0].verdict, RG_V_DETECTED);
    ck_assert_int_eq(out.rank[1].verdict, RG_V_ERROR_WITHOUT_FAULT);

    /* The trace and page read rank 1's own stamps onto the same clock. */
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(out.dir, sizeof(out.dir), "%s", dir);
    snprintf(path, sizeof(path), "%s/rank1.status", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "5001150.0 step 0 0 all_reduce float32 sum count 4\n");
    fclose(f);
    ck_assert_int_eq(rg_timeline_load(&out, 1, &tl), 0);
    ck_assert_int_eq(tl.nspans, 1);
    ck_assert_double_eq_tol(tl.span[0].t0_s, 0.15, 1e-9);

    /* Saved and read back as `railguard report` reads a rank's result. */
    snprintf(path, sizeof(path), "%s/rank1.result.json", dir);
    ck_assert_int_eq(rg_result_save(&views[1], path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), 0);
    ck_assert(back.rank[0].clock.measured);
    ck_assert_double_eq_tol(back.rank[0].clock.offset_ms, 5000000.0, 1e-6);
    ck_assert_int_eq(back.rank[0].clock.rounds, RG_CLOCK_ROUNDS);
    views[1].rank[0].clock.err_ms = -1; /* no measurement says that */
    ck_assert_int_eq(rg_result_save(&views[1], path, err, sizeof(err)), 0);
    ck_assert_int_eq(rg_result_read(&back, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "rank 1's clock is not a measurement"));
    unlink(path);
    snprintf(path, sizeof(path), "%s/rank1.status", dir);
    unlink(path);
    rmdir(dir);

    /* One rank's clock unmeasured: no common clock, the order unchecked, as before. */
    views[1].rank[0].clock = (rg_clock){.why = "no job secret"};
    g_ev[1].first_fault_mono_ms = 5001700;
    ck_assert_int_eq(rg_merge(&out, &g_sc, views, 2, g_ev, &ordered, err, sizeof(err)), 0);
    ck_assert(!ordered && !out.clock_placed);
    ck_assert_int_eq(out.rank[0].verdict, RG_V_DETECTED);
    ck_assert_int_eq(out.rank[1].verdict, RG_V_DETECTED);
}
END_TEST

Suite *rg_suite_judge(void)
{
    Suite *s = suite_create("judge");
    TCase *t = tcase_create("judge");
    tcase_add_test(t, test_precedence);
    tcase_add_test(t, test_detected_class);
    tcase_add_test(t, test_ownership);
    tcase_add_test(t, test_first_failure_in_time);
    tcase_add_test(t, test_detected_at);
    tcase_add_test(t, test_killed);
    tcase_add_test(t, test_error_swallowed);
    tcase_add_test(t, test_error_told_late);
    tcase_add_test(t, test_timeout_on_time);
    tcase_add_test(t, test_leak);
    tcase_add_test(t, test_held_unseen);
    tcase_add_test(t, test_slow_detection);
    tcase_add_test(t, test_not_instrumented);
    tcase_add_test(t, test_detected_needs_a_fault_before);
    tcase_add_test(t, test_not_exercised);
    tcase_add_test(t, test_unsupported);
    tcase_add_test(t, test_evidence_read);
    tcase_add_test(t, test_evidence_sites);
    tcase_add_test(t, test_evidence_paths);
    tcase_add_test(t, test_evidence_u64);
    tcase_add_test(t, test_evidence_tree);
    tcase_add_test(t, test_service);
    tcase_add_test(t, test_job);
    tcase_add_test(t, test_tree_stop);
    tcase_add_test(t, test_result_round_trip);
    tcase_add_test(t, test_merge);
    tcase_add_test(t, test_merge_placed);
    suite_add_tcase(s, t);
    return s;
}
