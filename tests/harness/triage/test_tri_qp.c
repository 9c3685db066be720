/* SPDX-License-Identifier: MIT */
/* The causes the ranks' verbs traces prove (harness/triage/rg_tri_qp.c), from events files
 * written here line by line as the shim writes them (the shim's own writing, end to end, is
 * ci/triage-check's on soft-RoCE). Each cause is shown proven once, then unproven by each
 * thing its proof rests on. */
#include "common/rg_check.h"
#include "judge/rg_judge.h"
#include "triage/rg_triage.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define G0 "fe800000000000000000000000000001"

static char g_dir[64];

static FILE *events(int rank, const char *mode)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", g_dir, rank);
    FILE *f = fopen(path, mode);
    ck_assert_ptr_nonnull(f);
    return f;
}

static void ev(FILE *f, int rank, double mono, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void ev(FILE *f, int rank, double mono, const char *fmt, ...)
{
    va_list ap;
    fprintf(f, "{\"rank\":%d,\"pid\":%d,\"t_ms\":1.0,\"mono_ms\":%.3f,", rank, 100 + rank, mono);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputs("}\n", f);
}

static void qp(FILE *f, int rank, unsigned qpn, unsigned peer, const char *type)
{
    ev(f, rank, 999,
       "\"event\":\"trace_qp\",\"dev\":\"rxe0\",\"qp\":%u,\"type\":\"%s\","
       "\"srq\":false,\"gid\":\"" G0 "\",\"send_cq\":0,\"recv_cq\":0,"
       "\"peer_qp\":%u,\"peer_gid\":\"" G0 "\"",
       qpn, type, peer);
}

static void post(FILE *f, int rank, unsigned qpn, const char *dir, int n, double at,
                 const char *fate)
{
    ev(f, rank, at + 0.01,
       "\"event\":\"trace_post\",\"dev\":\"rxe0\",\"qp\":%u,\"dir\":\"%s\",\"op\":\"%s\","
       "\"n\":%d,\"wr_id\":\"0x%x\",\"bytes\":64,\"signaled\":true,\"fate\":\"%s\","
       "\"at_ms\":%.3f",
       qpn, dir, dir, n, n, fate, at);
}

static void cqe(FILE *f, int rank, unsigned qpn, const char *dir, double mono, int status,
                int polls)
{
    ev(f, rank, mono,
       "\"event\":\"trace_cqe\",\"dev\":\"rxe0\",\"qp\":%u,\"dir\":\"%s\",\"op\":\"%s\","
       "\"status\":%d,\"wr_id\":\"0x1\",\"bytes\":64,\"cq\":0,\"polls\":%d",
       qpn, dir, status ? "?" : dir, status, polls);
}

static void mk(rg_result *r, rg_sig *s, rg_verdict v0, rg_verdict v1, int origin)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "uc");
    snprintf(r->dir, sizeof(r->dir), "%s", g_dir);
    r->ranks = 2;
    r->t0_mono_ms = 1000;
    for (int i = 0; i < 2; i++) {
        r->rank[i].verdict = i ? v1 : v0;
        r->rank[i].step = 0;
        snprintf(r->rank[i].where, sizeof(r->rank[i].where), "all_reduce float32 count 4");
        r->expect[i] = RG_SC_EXPECT_OK;
        r->expect_at[i] = RG_SC_AT_ANY;
    }
    rg_judge(r);
    rg_signature(r, s);
    s->origin = origin;
}

/*
 * Rank 0 sends twice on UC QP 0x11; rank 1 (QP 0x12) had posted one receive, and posts its
 * second only at `second` ms; it got `got` messages. Rank 0's sends completed at 1.5 and 2.5 ms.
 */
static void uc_pair(const char *type, double second, int got, const char *extra0,
                    const char *extra1)
{
    FILE *a = events(0, "w"), *b = events(1, "w");
    qp(a, 0, 0x11, 0x12, type);
    qp(b, 1, 0x12, 0x11, type);
    post(b, 1, 0x12, "recv", 1, 1000.0, "wire");
    post(a, 0, 0x11, "send", 1, 1001.0, "wire");
    cqe(a, 0, 0x11, "send", 1001.5, 0, 3);
    post(a, 0, 0x11, "send", 2, 1002.0, "wire");
    cqe(a, 0, 0x11, "send", 1002.5, 0, 5);
    for (int i = 0; i < got; i++)
        cqe(b, 1, 0x12, "recv", 1001.6 + i, 0, 4 + i);
    post(b, 1, 0x12, "recv", 2, second, "wire");
    if (extra0)
        fputs(extra0, a);
    if (extra1)
        fputs(extra1, b);
    fclose(a);
    fclose(b);
}

static void clean(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    ck_assert_int_eq(system(cmd), 0);
}

static bool cause(rg_verdict v0, rg_verdict v1, int origin, rg_tri_cause *c, char *why)
{
    static rg_result r;
    rg_sig s;
    memset(c, 0, sizeof(*c));
    mk(&r, &s, v0, v1, origin);
    return rg_tri_qp_cause(&r, &s, c, why, 400);
}

START_TEST(test_uc_drop)
{
    rg_tri_cause c;
    char why[400];
    ck_assert_ptr_nonnull(mkdtemp(strcpy(g_dir, "/tmp/rg-triqp-XXXXXX")));
    /* No trace at all: said, not guessed. */
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    ck_assert_str_eq(why, "the run has no verbs trace");

    uc_pair("uc", 1010.0, 1, NULL, NULL);
    ck_assert_msg(cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why), "%s", why);
    ck_assert_int_eq(c.kind, RG_C_UC_NO_RECV);
    ck_assert_msg(strstr(c.text, "a UC send with no receive posted for it: rank 0's send #2 on QP "
                                 "0x11 (rxe0) had left its NIC by 2.500 ms (its completion), when "
                                 "rank 1 had posted 1 receive(s) on QP 0x12 (rxe0), the other "
                                 "end, for it and the 1 before it (the last of them at 0.000 ms; "
                                 "the next at 10.000 ms)"),
                  "%s", c.text);
    ck_assert_ptr_nonnull(strstr(c.text, "rank 1 took 1 receive completion(s) there for the 2 "
                                         "send(s) rank 0 completed"));
    ck_assert_int_eq(c.nlines, 4);
    ck_assert_str_eq(c.line[0], "rank0.events.jsonl:4: the send posted");
    ck_assert_str_eq(c.line[1], "rank0.events.jsonl:5: its completion");
    ck_assert_str_eq(c.line[2], "rank1.events.jsonl:4: the peer's next receive posted");

    /* Each thing the proof rests on, taken away. Both messages arrived: */
    uc_pair("uc", 1010.0, 2, NULL, NULL);
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    ck_assert_ptr_nonnull(strstr(why, "proves neither"));
    /* RC: the NIC retries a send that finds no receive, it does not drop it. */
    uc_pair("rc", 1010.0, 1, NULL, NULL);
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    /* The second receive posted before the second send was: no proof of its being short. */
    uc_pair("uc", 1001.9, 1, NULL, NULL);
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    /* Posted after the send was, but within a millisecond of its completion (the message may
     * still have been on its way): the weaker word, "handed to its NIC" (posted). */
    uc_pair("uc", 1003.4, 1, NULL, NULL);
    ck_assert(cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    ck_assert_msg(strstr(c.text, "rank 0's send #2 on QP 0x11 (rxe0) was handed to its NIC at "
                                 "2.000 ms (posted), when rank 1 had posted 1 receive(s)"),
                  "%s", c.text);
    {
        /* ... but not within the two clocks' errors of the post, ranks on two hosts: 0.3 ms
         * each. */
        static rg_result r;
        rg_sig s;
        uc_pair("uc", 1002.3, 1, NULL, NULL);
        mk(&r, &s, RG_V_OK, RG_V_DEADLOCK, 1);
        ck_assert(rg_tri_qp_cause(&r, &s, &c, why, sizeof(why)));
        r.clock_placed = true;
        r.clock_err_ms = 0.3;
        r.rank[0].clock.err_ms = r.rank[1].clock.err_ms = 0.3;
        memset(&c, 0, sizeof(c));
        ck_assert(!rg_tri_qp_cause(&r, &s, &c, why, sizeof(why)));
        /* Hosts whose clocks were never measured cannot be ordered at all. */
        r.clock_placed = false;
        snprintf(r.host, sizeof(r.host), "(several)");
        ck_assert(!rg_tri_qp_cause(&r, &s, &c, why, sizeof(why)));
        ck_assert_ptr_nonnull(strstr(why, "clocks were not measured"));
        /* A fault that fired: the trace shows the fault's doing, not the transport's alone. */
        mk(&r, &s, RG_V_OK, RG_V_DEADLOCK, 1);
        r.nrules = 1;
        r.rule[0].fired = 1;
        ck_assert(!rg_tri_qp_cause(&r, &s, &c, why, sizeof(why)));
        ck_assert_ptr_nonnull(strstr(why, "a fault fired in it (rule 1)"));
        r.rule[0].counting = true; /* a count rule injects nothing */
        ck_assert(rg_tri_qp_cause(&r, &s, &c, why, sizeof(why)));
    }
    /* A drop into rank 1 does not explain rank 0's own failure, when rank 0 did not wait. */
    uc_pair("uc", 1010.0, 1, NULL, NULL);
    ck_assert(!cause(RG_V_SILENT_CORRUPTION, RG_V_OK, 0, &c, why));
    /* A trace that stopped at its limit, a line that cannot be read, a QP the shim could not
     * see one request at a time: nothing is proven from a hole. */
    uc_pair("uc", 1010.0, 1,
            "{\"event\":\"trace_full\",\"rank\":0,\"pid\":100,\"events\":200000}\n", NULL);
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    uc_pair("uc", 1010.0, 1,
            "{\"event\":\"trace_post\",\"rank\":0,\"pid\":100,\"dev\":\"rxe0\",\"qp\":17,"
            "\"dir\":\"sideways\",\"op\":\"send\",\"fate\":\"wire\",\"at_ms\":1.0}\n",
            NULL);
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    ck_assert_msg(strstr(why, "rank 0's events: 1 line(s) unreadable, the first line 6:"), "%s",
                  why);
    uc_pair("uc", 1010.0, 1,
            "{\"event\":\"trace_gap\",\"rank\":0,\"pid\":100,\"dev\":\"rxe0\",\"qp\":17,"
            "\"why\":\"ibv_qp_ex sends\"}\n",
            NULL);
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    /* The receiver's queue flushed at its teardown: a flushed receive got nothing, whichever
     * queue it was on, and changes no count; any other error makes the count unprovable. */
    uc_pair("uc", 1010.0, 1, NULL,
            "{\"event\":\"trace_cqe\",\"rank\":1,\"pid\":101,\"mono_ms\":1500,\"dev\":\"rxe0\","
            "\"qp\":18,\"dir\":\"?\",\"op\":\"?\",\"status\":5,\"cq\":0}\n");
    ck_assert_msg(cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why), "%s", why);
    uc_pair("uc", 1010.0, 1, NULL,
            "{\"event\":\"trace_cqe\",\"rank\":1,\"pid\":101,\"mono_ms\":1500,\"dev\":\"rxe0\","
            "\"qp\":18,\"dir\":\"recv\",\"op\":\"?\",\"status\":12,\"cq\":0}\n");
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    /* A peer that is not the one the sender was pointed at; one that points elsewhere. */
    static const unsigned ends[2][2] = {{0x13, 0x11}, {0x12, 0x19}};
    for (int e = 0; e < 2; e++) {
        uc_pair("uc", 1010.0, 1, NULL, NULL);
        FILE *b = events(1, "w");
        qp(b, 1, ends[e][0], ends[e][1], "uc");
        post(b, 1, ends[e][0], "recv", 1, 1000.0, "wire");
        fclose(b);
        ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    }
    /* A QP number that served two QPs (moved to RTR again): neither lifetime is counted. */
    uc_pair("uc", 1010.0, 1, NULL, NULL);
    FILE *b = events(1, "a");
    qp(b, 1, 0x12, 0x11, "uc");
    fclose(b);
    ck_assert(!cause(RG_V_OK, RG_V_DEADLOCK, 1, &c, why));
    clean();
}
END_TEST

/*
 * Rank 1 hung: two receives on QP 0x12, one completed; rank 0 posted `sent` sends (fate
 * `fate`), `got` of which arrived; after it rank 1's CQ found nothing `polls` times in a row
 * (the shim's trace_idle lines at 128, 256, ... up to polls, from 1500 ms on).
 */
static void wait_pair(int sent, int got, const char *fate, int polls, bool own_send)
{
    FILE *a = events(0, "w"), *b = events(1, "w");
    qp(a, 0, 0x11, 0x12, "rc");
    qp(b, 1, 0x12, 0x11, "rc");
    post(b, 1, 0x12, "recv", 1, 1000.0, "wire");
    post(b, 1, 0x12, "recv", 2, 1000.1, "wire");
    for (int i = 0; i < sent; i++) {
        post(a, 0, 0x11, "send", i + 1, 1001.0 + i, i ? "wire" : fate);
        cqe(a, 0, 0x11, "send", 1001.5 + i, 0, 2 + i);
    }
    for (int i = 0; i < got; i++)
        cqe(b, 1, 0x12, "recv", 1001.6 + i, 0, 10 + i);
    if (own_send)
        post(b, 1, 0x12, "send", 1, 1003.0, "wire");
    for (int n = 128, k = 0; n <= polls; n *= 2, k++)
        ev(b, 1, 1500 + k, "\"event\":\"trace_idle\",\"dev\":\"rxe0\",\"cq\":0,\"idle\":%d", n);
    fclose(a);
    fclose(b);
}

START_TEST(test_never_sent)
{
    rg_tri_cause c;
    char why[400];
    ck_assert_ptr_nonnull(mkdtemp(strcpy(g_dir, "/tmp/rg-triqp-XXXXXX")));
    wait_pair(1, 1, "wire", 5000, false);
    ck_assert_msg(cause(RG_V_DEADLOCK, RG_V_DEADLOCK, 1, &c, why), "%s", why);
    ck_assert_int_eq(c.kind, RG_C_NEVER_SENT);
    ck_assert_msg(strstr(c.text,
                         "a wait for a message never sent: rank 1 hung to the deadline with "
                         "nothing of its own outstanding but receives, polling (CQ #0: "
                         "4096 polls in a row found nothing after its last completion); on QP "
                         "0x12 (rxe0) rank 0 posted 1 send(s) on QP 0x11 (rxe0) to it and all 1 "
                         "arrived"),
                  "%s", c.text);
    ck_assert_str_eq(c.line[0], "rank1.events.jsonl:4: its last receive completion");
    ck_assert_str_eq(c.line[1], "rank1.events.jsonl:10: its CQ's empty polls counted");
    ck_assert_str_eq(c.line[2], "rank0.events.jsonl:2: the peer's last send posted");
    /* Only for the rank that hung: rank 0's failure is not explained by rank 1's wait. */
    ck_assert(!cause(RG_V_DEADLOCK, RG_V_DEADLOCK, 0, &c, why));
    /* A send still on its way (posted, not received): not a message never sent. */
    wait_pair(2, 1, "wire", 5000, false);
    ck_assert(!cause(RG_V_DEADLOCK, RG_V_DEADLOCK, 1, &c, why));
    /* A send the shim's fault kept off the wire: the fault explains it, not this cause. */
    wait_pair(1, 0, "lost", 5000, false);
    ck_assert(!cause(RG_V_DEADLOCK, RG_V_DEADLOCK, 1, &c, why));
    /* Not polling at the end: nothing says it waited on these receives. */
    wait_pair(1, 1, "wire", 50, false);
    ck_assert(!cause(RG_V_DEADLOCK, RG_V_DEADLOCK, 1, &c, why));
    /* A send of its own outstanding: it may be waiting for that. */
    wait_pair(1, 1, "wire", 5000, true);
    ck_assert(!cause(RG_V_DEADLOCK, RG_V_DEADLOCK, 1, &c, why));

    /* A rank that waited until its own timeout (at 2.9 s), then flushed its queues: only what
     * came before its timeout counts, its empty polls too. */
    static rg_result r;
    rg_sig s;
    wait_pair(1, 1, "wire", 5000, false);
    FILE *b = events(1, "a");
    ev(b, 1, 3950,
       "\"event\":\"trace_cqe\",\"dev\":\"rxe0\",\"qp\":18,\"dir\":\"?\","
       "\"op\":\"?\",\"status\":5,\"wr_id\":\"0x2\",\"bytes\":0,\"cq\":0,"
       "\"polls\":4000");
    ev(b, 1, 3940, "\"event\":\"trace_idle\",\"dev\":\"rxe0\",\"cq\":0,\"idle\":8192");
    fclose(b);
    mk(&r, &s, RG_V_OK, RG_V_ERROR_WITHOUT_FAULT, 1);
    r.rank[1].status = RG_ERR_TIMEOUT;
    r.rank[1].t_s = 2.9;
    memset(&c, 0, sizeof(c));
    ck_assert_msg(rg_tri_qp_cause(&r, &s, &c, why, sizeof(why)), "%s", why);
    ck_assert_msg(strstr(c.text, "rank 1 waited until its timeout at 2900.000 ms with nothing of "
                                 "its own outstanding but receives, polling (CQ #0: 4096 polls"),
                  "%s", c.text);
    /* ... but not a rank whose call failed otherwise: nothing says it waited. */
    r.rank[1].status = RG_ERR_COMPLETION;
    memset(&c, 0, sizeof(c));
    ck_assert(!rg_tri_qp_cause(&r, &s, &c, why, sizeof(why)));
    clean();
}
END_TEST

/* Whether r's traces rule a UC drop out of the whole run. */
static bool uc_ruled_out(const rg_result *r)
{
    return (rg_tri_ruled_out(r) & (1u << RG_C_UC_NO_RECV)) != 0;
}

/*
 * A UC drop proven absent from a whole run: every UC send found a receive (or no UC QP sent at
 * all), from traces with no hole; a run that failed otherwise (a hang here) is still evidence
 * that no UC message was dropped in it. Each thing the proof rests on, taken away.
 */
START_TEST(test_ruled_out)
{
    static rg_result r;
    rg_sig s;
    ck_assert_ptr_nonnull(mkdtemp(strcpy(g_dir, "/tmp/rg-triqp-XXXXXX")));
    mk(&r, &s, RG_V_OK, RG_V_DEADLOCK, 1);
    ck_assert(!uc_ruled_out(&r)); /* no trace: nothing is proven absent */
    uc_pair("uc", 1010.0, 2, NULL, NULL);
    ck_assert(uc_ruled_out(&r)); /* both messages arrived */
    uc_pair("rc", 1010.0, 1, NULL, NULL);
    ck_assert(uc_ruled_out(&r)); /* no UC QP: RC retries, nothing of UC's to drop */
    uc_pair("uc", 1010.0, 1, NULL, NULL);
    ck_assert(!uc_ruled_out(&r)); /* dropped: present, not absent */
    /* ... whichever rank failed: a drop into rank 1 rules itself in for rank 0's run too. */
    mk(&r, &s, RG_V_SILENT_CORRUPTION, RG_V_OK, 0);
    ck_assert(!uc_ruled_out(&r));
    /* Holes: a trace at its limit, a QP seen whole no more, a peer not paired, an error
     * completion on the receiving end, a fault that fired. */
    uc_pair("uc", 1010.0, 2,
            "{\"event\":\"trace_full\",\"rank\":0,\"pid\":100,\"events\":200000}\n", NULL);
    ck_assert(!uc_ruled_out(&r));
    uc_pair("uc", 1010.0, 2,
            "{\"event\":\"trace_gap\",\"rank\":0,\"pid\":100,\"dev\":\"rxe0\",\"qp\":17,"
            "\"why\":\"ibv_qp_ex sends\"}\n",
            NULL);
    ck_assert(!uc_ruled_out(&r));
    uc_pair("uc", 1010.0, 2, NULL, NULL);
    FILE *b = events(1, "w");
    qp(b, 1, 0x13, 0x11, "uc");
    fclose(b);
    ck_assert(!uc_ruled_out(&r));
    uc_pair("uc", 1010.0, 2, NULL,
            "{\"event\":\"trace_cqe\",\"rank\":1,\"pid\":101,\"mono_ms\":1500,\"dev\":\"rxe0\","
            "\"qp\":18,\"dir\":\"recv\",\"op\":\"?\",\"status\":12,\"cq\":0}\n");
    ck_assert(!uc_ruled_out(&r));
    /* A rank with no trace at all may have had UC QPs of its own, whatever the others had. */
    uc_pair("rc", 1010.0, 2, NULL, NULL);
    ck_assert(uc_ruled_out(&r));
    fclose(events(1, "w"));
    ck_assert(!uc_ruled_out(&r));
    /* A third send whose completion the sender never polled (it hung first), and which never
     * arrived: not known to be on its way, nor known to be dropped -- no proof of absence. */
    uc_pair("uc", 1010.0, 2, NULL, NULL);
    FILE *a = events(0, "a");
    post(a, 0, 0x11, "send", 3, 1003.0, "wire");
    fclose(a);
    ck_assert(!uc_ruled_out(&r));
    uc_pair("uc", 1010.0, 2, NULL, NULL);
    ck_assert(uc_ruled_out(&r));
    r.nrules = 1;
    r.rule[0].fired = 1;
    ck_assert(!uc_ruled_out(&r));
    clean();
}
END_TEST

/*
 * One hang, two defects: rank 1 hung past its timeout to the deadline (a wait with no deadline)
 * because a UC message to it was dropped. Both are proven, the trace's first; the one-cause
 * diagnosis keeps the first alone.
 */
START_TEST(test_two_causes)
{
    static rg_result r;
    static rg_tri_cause c[RG_TRI_CAUSES_MAX];
    rg_sig s;
    char path[128];
    ck_assert_ptr_nonnull(mkdtemp(strcpy(g_dir, "/tmp/rg-triqp-XXXXXX")));
    snprintf(path, sizeof(path), "%s/hang.yaml", g_dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("ranks: 2\ntimeout: 1\ndeadline: 3\nprogram:\n  - {op: all_reduce, count: 4}\n", f);
    fclose(f);
    uc_pair("uc", 1010.0, 1, NULL, NULL);
    mk(&r, &s, RG_V_OK, RG_V_DEADLOCK, 1);
    snprintf(r.path, sizeof(r.path), "%s", path);
    r.rank[1].step_t_s = 0.4;
    r.rank[1].left_t_s = -1; /* still inside its call at the deadline */
    ck_assert_int_eq(rg_tri_diagnose_all(&r, &s, c, RG_TRI_CAUSES_MAX), 2);
    ck_assert_int_eq(c[0].kind, RG_C_UC_NO_RECV);
    ck_assert_int_eq(c[1].kind, RG_C_NO_DEADLINE);
    ck_assert(c[0].proven && c[1].proven);
    ck_assert_msg(strstr(c[1].text, "a wait with no deadline: rank 1's"), "%s", c[1].text);
    ck_assert_str_eq(c[1].from, g_dir);
    ck_assert_int_eq(rg_tri_diagnose_all(&r, &s, c, 1), 1);
    ck_assert_int_eq(c[0].kind, RG_C_UC_NO_RECV);
    rg_tri_diagnose(&r, &s, &c[0]);
    ck_assert_int_eq(c[0].kind, RG_C_UC_NO_RECV);
    /* A group's: the first its cause, the rest said beside it, with the frame it hangs in. */
    char also[600];
    s.nframes = 1;
    snprintf(s.frames[0], sizeof(s.frames[0]), "ring_wait");
    rg_tri_diagnose_also(&r, &s, &c[0], also, sizeof(also));
    ck_assert_int_eq(c[0].kind, RG_C_UC_NO_RECV);
    ck_assert_str_eq(also, "a wait with no deadline (the wait in ring_wait)");
    s.nframes = 0;
    /* Both messages arrived: the wait with no deadline alone. */
    uc_pair("uc", 1010.0, 2, NULL, NULL);
    ck_assert_int_eq(rg_tri_diagnose_all(&r, &s, c, RG_TRI_CAUSES_MAX), 1);
    ck_assert_int_eq(c[0].kind, RG_C_NO_DEADLINE);
    /* ... and a rank that timed out had a deadline: none proven, said so. */
    r.rank[0].status = RG_ERR_TIMEOUT;
    ck_assert_int_eq(rg_tri_diagnose_all(&r, &s, c, RG_TRI_CAUSES_MAX), 0);
    ck_assert(!c[0].proven);
    ck_assert_msg(strstr(c[0].text, "none proven"), "%s", c[0].text);
    clean();
}
END_TEST

Suite *rg_suite_tri_qp(void)
{
    Suite *s = suite_create("tri_qp");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_uc_drop);
    tcase_add_test(t, test_never_sent);
    tcase_add_test(t, test_ruled_out);
    tcase_add_test(t, test_two_causes);
    suite_add_tcase(s, t);
    return s;
}
