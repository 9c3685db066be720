/* SPDX-License-Identifier: MIT */
/* The sweep's planner: points from a counting run's evidence, per rank and op, strides, caps. */
#include "common/rg_check.h"
#include "sweep/rg_sweep.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rg_evidence g_ev[3];

static void counts(void)
{
    memset(g_ev, 0, sizeof(g_ev));
    for (int r = 0; r < 3; r++) {
        g_ev[r].op_cqe[FI_OP_RECV] = 5 + (uint64_t)r;
        g_ev[r].op_cqe[FI_OP_SEND] = 3;
        g_ev[r].op_cqe[FI_OP_WRITE] = 7; /* credit writes: never an op=send point */
        g_ev[r].op_posts[FI_OP_SEND] = 4;
        g_ev[r].op_posts[FI_OP_WRITE] = 2;
        g_ev[r].op_posts[FI_OP_RECV] = 9;
        g_ev[r].polls = 1000;
    }
}

START_TEST(test_plan_error)
{
    rg_sweep_point p[64];
    char err[128];
    rg_sweep_spec sp = {.kind = RG_SW_ERROR, .rank = -1, .op = FI_OP_ANY, .max = 100};
    snprintf(sp.status, sizeof(sp.status), "WR_FLUSH_ERR");
    counts();
    /* Every recv and every send completion of every rank: (5+3) + (6+3) + (7+3). */
    int n = rg_sweep_plan(&sp, g_ev, 3, p, 64, err, sizeof(err));
    ck_assert_int_eq(n, 27);
    ck_assert_str_eq(p[0].rule, "error status=WR_FLUSH_ERR op=recv rank=0 nth=1");
    ck_assert_str_eq(p[4].rule, "error status=WR_FLUSH_ERR op=recv rank=0 nth=5");
    ck_assert_str_eq(p[5].rule, "error status=WR_FLUSH_ERR op=send rank=0 nth=1");
    ck_assert_str_eq(p[26].rule, "error status=WR_FLUSH_ERR op=send rank=2 nth=3");
    /* One rank, one op, every second event. */
    sp.rank = 1;
    sp.op = FI_OP_RECV;
    sp.stride = 2;
    n = rg_sweep_plan(&sp, g_ev, 3, p, 64, err, sizeof(err));
    ck_assert_int_eq(n, 3);
    ck_assert_uint_eq(p[0].nth, 1);
    ck_assert_uint_eq(p[1].nth, 3);
    ck_assert_uint_eq(p[2].nth, 5);
    ck_assert_int_eq(p[2].rank, 1);
    /* Every rule a point makes is one the plan library takes. */
    struct fi_plan plan;
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(fi_plan_parse(p[i].rule, "x", &plan, err, sizeof(err)), 0);
}
END_TEST

/* Points anchored to the phases the counting run marked: n counts within each phase. */
START_TEST(test_plan_phases)
{
    rg_sweep_point p[64];
    char err[128];
    struct fi_plan plan;
    counts();
    rg_evidence *e = &g_ev[1];
    e->nphases = 3;
    e->phase[0] = (struct rg_ev_phase){.step = -1, .rep = 0};
    e->phase[0].cqe[FI_OP_RECV] = 1;
    e->phase[1] = (struct rg_ev_phase){.step = 0, .rep = 0};
    e->phase[1].cqe[FI_OP_RECV] = 3;
    e->phase[1].cqe[FI_OP_SEND] = 2;
    e->phase[2] = (struct rg_ev_phase){.step = 0, .rep = 1, .polls = 900};
    e->phase[2].cqe[FI_OP_WRITE] = 7;
    rg_sweep_spec sp = {.kind = RG_SW_ERROR, .rank = 1, .op = FI_OP_ANY};
    snprintf(sp.status, sizeof(sp.status), "WR_FLUSH_ERR");
    int n = rg_sweep_plan(&sp, g_ev, 3, p, 64, err, sizeof(err));
    ck_assert_int_eq(n, 6); /* recv 1 + 3 + 0, send 0 + 2 + 0 */
    ck_assert_str_eq(p[0].rule, "error status=WR_FLUSH_ERR op=recv rank=1 step=init nth=1");
    ck_assert_str_eq(p[3].rule, "error status=WR_FLUSH_ERR op=recv rank=1 step=0 rep=0 nth=3");
    ck_assert_int_eq(p[3].step, 0);
    ck_assert_uint_eq(p[3].nth, 3);
    ck_assert_str_eq(p[5].rule, "error status=WR_FLUSH_ERR op=send rank=1 step=0 rep=0 nth=2");
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(fi_plan_parse(p[i].rule, "x", &plan, err, sizeof(err)), 0);
    /* Expected cost: 1 + how far in the rank's 6 receive completions the event lies. */
    ck_assert_double_eq_tol(p[0].cost, 1 + 1 / 6.0, 1e-12);
    ck_assert_double_eq_tol(p[1].cost, 1 + 2 / 6.0, 1e-12); /* phase 1's first, after 1 */
    ck_assert_double_eq_tol(p[3].cost, 1 + 4 / 6.0, 1e-12);
    ck_assert_double_eq_tol(p[5].cost, 1 + 2 / 3.0, 1e-12); /* send: 2 of 3 */
    /* Phases the evidence could not hold are refused, not planned around; --whole still
     * plans from the run's totals. */
    e->phases_lost = 1;
    ck_assert_int_eq(rg_sweep_plan(&sp, g_ev, 3, p, 64, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "marked 4 phases"));
    /* --whole: the run's totals, as for a program that marks no phases. */
    sp.whole = true;
    ck_assert_int_eq(rg_sweep_plan(&sp, g_ev, 3, p, 64, err, sizeof(err)), 6 + 3);
    ck_assert_int_eq(p[0].step, FI_PHASE_ANY);
    e->phases_lost = 0;
    /* Negative polls: one point after each receive and each send completion (polls, which
     * differ from run to run, plan nothing, nor do credit writes, whose count depends on
     * timing): recv 1 + 3, send 2; phase 2's 7 writes and 900 polls give none. */
    sp = (rg_sweep_spec){.kind = RG_SW_NEGPOLL, .rank = 1};
    ck_assert_int_eq(rg_sweep_plan(&sp, g_ev, 3, p, 64, err, sizeof(err)), 6);
    ck_assert_str_eq(p[0].rule, "negpoll per=cqe op=recv rank=1 step=init nth=1");
    ck_assert_str_eq(p[5].rule, "negpoll per=cqe op=send rank=1 step=0 rep=0 nth=2");
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(fi_plan_parse(p[i].rule, "x", &plan, err, sizeof(err)), 0);
}
END_TEST

/* Shrinking: the anchored step alone with its rule re-anchored, then counts halved; a
 * whole-run point, a create/destroy step or a program already one step long is not cut. */
START_TEST(test_shrink)
{
    static const char text[] =
        "ranks: 2\n"
        "faults: ['error op=recv rank=1 step=3 rep=1 nth=3']\n"
        "program:\n"
        "  - {op: all_reduce, dtype: float32, count: 1000}\n"
        "  - {op: destroy}\n"
        "  - {op: create}\n"
        "  - {op: sendrecv, dtype: int32, count: 301, from: 0, to: 1, repeat: 3}\n"
        "  - {op: barrier}\n";
    static rg_scenario sc, out, out2;
    char err[256];
    struct fi_plan plan;
    ck_assert_int_eq(rg_scenario_parse(text, sizeof(text) - 1, "x.yaml", &sc, err, sizeof(err)), 0);
    ck_assert_msg(err[0] == '\0', "%s", err);
    rg_sweep_point p = {.rank = 1, .op = FI_OP_RECV, .step = 3, .rep = 1, .nth = 3};
    snprintf(p.rule, sizeof(p.rule), "%s", "error op=recv rank=1 step=3 rep=1 nth=3");
    ck_assert_int_eq(rg_sweep_shrink_step(&sc, &p, &out), 0);
    ck_assert_int_eq(out.nops, 1);
    ck_assert_int_eq(out.ops[0].kind, RG_SC_SENDRECV);
    ck_assert_int_eq(out.ops[0].repeat, 1);
    ck_assert_uint_eq(out.ops[0].count, 301);
    ck_assert_int_eq(out.nfaults, 1);
    ck_assert_str_eq(out.fault[0].rule, "error op=recv rank=1 step=0 rep=0 nth=3");
    ck_assert_int_eq(out.expect[0], RG_SC_EXPECT_ANY);
    ck_assert_int_eq(fi_plan_parse(out.fault[0].rule, "x", &plan, err, sizeof(err)), 0);
    /* Counts halve, rounding up, down to 1; a barrier has none. */
    ck_assert_int_eq(rg_sc_halve_counts(&out, &out2), 0);
    ck_assert_uint_eq(out2.ops[0].count, 151);
    out2.ops[0].count = 1;
    ck_assert_int_eq(rg_sc_halve_counts(&out2, &out), -1);
    /* Init keeps the first step; finalize the last, as step 1. */
    p.step = FI_PHASE_INIT;
    snprintf(p.rule, sizeof(p.rule), "%s", "negpoll rank=1 step=init nth=2");
    ck_assert_int_eq(rg_sweep_shrink_step(&sc, &p, &out), 0);
    ck_assert_int_eq(out.ops[0].kind, RG_SC_ALL_REDUCE);
    ck_assert_str_eq(out.fault[0].rule, "negpoll rank=1 step=init nth=2");
    p.step = 5;
    snprintf(p.rule, sizeof(p.rule), "%s", "kill op=send rank=0 step=5 rep=0 nth=1");
    ck_assert_int_eq(rg_sweep_shrink_step(&sc, &p, &out), 0);
    ck_assert_int_eq(out.ops[0].kind, RG_SC_BARRIER);
    ck_assert_str_eq(out.fault[0].rule, "kill op=send rank=0 step=1 rep=0 nth=1");
    /* Not cut: a whole-run point, a destroy step, a one-step program. */
    p.step = FI_PHASE_ANY;
    ck_assert_int_eq(rg_sweep_shrink_step(&sc, &p, &out), -1);
    p.step = 1;
    ck_assert_int_eq(rg_sweep_shrink_step(&sc, &p, &out), -1);
    p.step = 0;
    snprintf(p.rule, sizeof(p.rule), "%s", "error step=0 rep=0 nth=1");
    ck_assert_int_eq(rg_sweep_shrink_step(&sc, &p, &out), 0);
    ck_assert_int_eq(rg_sweep_shrink_step(&out, &p, &out2), -1);
}
END_TEST

START_TEST(test_plan_kinds)
{
    rg_sweep_point p[256];
    char err[128];
    struct fi_plan plan;
    counts();
    rg_sweep_spec sp = {.kind = RG_SW_NEGPOLL, .rank = 0, .op = FI_OP_RECV, .max = 2};
    /* 5 receive completions (not the 1000 polls), at most 2 points: every 3rd, from the
     * first. */
    int n = rg_sweep_plan(&sp, g_ev, 3, p, 256, err, sizeof(err));
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(p[1].rule, "negpoll per=cqe op=recv rank=0 nth=4");
    sp = (rg_sweep_spec){.kind = RG_SW_NOMEM, .rank = 2, .op = FI_OP_ANY};
    ck_assert_int_eq(rg_sweep_plan(&sp, g_ev, 3, p, 256, err, sizeof(err)), 6); /* 4 + 2 */
    ck_assert_str_eq(p[5].rule, "nomem verb=post_send rank=2 nth=6");
    sp = (rg_sweep_spec){.kind = RG_SW_LOSE, .rank = 0, .op = FI_OP_ANY};
    ck_assert_int_eq(rg_sweep_plan(&sp, g_ev, 3, p, 256, err, sizeof(err)), 4);
    ck_assert_str_eq(p[3].rule, "lose op=send rank=0 nth=4");
    sp = (rg_sweep_spec){.kind = RG_SW_DELAY, .rank = 0, .op = FI_OP_ANY, .ms = 30};
    ck_assert_int_eq(rg_sweep_plan(&sp, g_ev, 3, p, 256, err, sizeof(err)), 9);
    ck_assert_str_eq(p[0].rule, "delay ms=30 op=recv rank=0 nth=1");
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(fi_plan_parse(p[i].rule, "x", &plan, err, sizeof(err)), 0);
    /* A rank with nothing to count has no points; too many points is refused, not cut. */
    memset(&g_ev[1], 0, sizeof(g_ev[1]));
    sp = (rg_sweep_spec){.kind = RG_SW_ERROR, .rank = 1, .op = FI_OP_RECV};
    ck_assert_int_eq(rg_sweep_plan(&sp, g_ev, 3, p, 256, err, sizeof(err)), 0);
    g_ev[0].op_cqe[FI_OP_RECV] = 1000;
    sp = (rg_sweep_spec){.kind = RG_SW_NEGPOLL, .rank = -1, .op = FI_OP_ANY};
    ck_assert_int_eq(rg_sweep_plan(&sp, g_ev, 3, p, 256, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "more than 256 points"));
    ck_assert_int_eq(rg_sweep_kind_of("negpoll"), RG_SW_NEGPOLL);
    ck_assert_int_eq(rg_sweep_kind_of("flush"), -1);
    ck_assert_str_eq(rg_sweep_kind_name(RG_SW_DELAY), "delay");
}
END_TEST

/* Shards: every point in exactly one, the same split every time, balanced by cost. */
START_TEST(test_shard)
{
    static rg_sweep_point p[RG_SW_POINTS_MAX];
    static bool mine[8][RG_SW_POINTS_MAX], again[RG_SW_POINTS_MAX];
    int n = 1000;
    for (int i = 0; i < n; i++)
        p[i].cost = 1.0 + (double)((i * 7919) % 1000) / 1000.0;
    for (int shards = 1; shards <= 8; shards++) {
        double load[8] = {0}, most = 0, least = 1e300;
        int total = 0;
        for (int k = 1; k <= shards; k++) {
            int got = rg_sweep_shard(p, n, k, shards, mine[k - 1]);
            ck_assert_int_ge(got, n / shards - 2);
            total += got;
            for (int i = 0; i < n; i++)
                load[k - 1] += mine[k - 1][i] ? p[i].cost : 0;
            most = load[k - 1] > most ? load[k - 1] : most;
            least = load[k - 1] < least ? load[k - 1] : least;
        }
        ck_assert_int_eq(total, n);
        for (int i = 0; i < n; i++) {
            int in = 0;
            for (int k = 0; k < shards; k++)
                in += mine[k][i];
            ck_assert_int_eq(in, 1);
        }
        ck_assert_double_le(most - least, 2.0); /* at most one point's cost apart */
        ck_assert_int_ge(rg_sweep_shard(p, n, shards, shards, again), 1); /* the same again */
        ck_assert_int_eq(memcmp(again, mine[shards - 1], sizeof(again[0]) * (size_t)n), 0);
    }
    /* By cost, not by index: the costly half is split, not given to one shard. */
    for (int i = 0; i < 10; i++)
        p[i].cost = i < 5 ? 2.0 : 1.0;
    ck_assert_int_eq(rg_sweep_shard(p, 10, 1, 2, mine[0]), 5);
    int costly = 0;
    for (int i = 0; i < 5; i++)
        costly += mine[0][i];
    ck_assert(costly == 2 || costly == 3);
    ck_assert_int_eq(rg_sweep_shard(p, 10, 0, 2, mine[0]), -1);
    ck_assert_int_eq(rg_sweep_shard(p, 10, 3, 2, mine[0]), -1);
    ck_assert_int_eq(rg_sweep_shard(p, 10, 1, RG_SW_SHARDS_MAX + 1, mine[0]), -1);
}
END_TEST

/* --- call sites ------------------------------------------------------------------------------ */

/* A site in made-up evidence: object k of "/opt/a/librailguard.so.1", "/usr/bin/prog". */
static void add_site(rg_evidence *e, int obj, uint64_t off, const char *verb, uint64_t calls,
                     uint64_t recv, uint64_t send)
{
    static const char *const objs[2] = {"/opt/a/librailguard.so.1", "/usr/bin/prog"};
    e->nobjs = 2;
    snprintf(e->objs[0], sizeof(e->objs[0]), "%s", objs[0]);
    snprintf(e->objs[1], sizeof(e->objs[1]), "%s", objs[1]);
    rg_ev_site *s = &e->site[e->nsites++];
    *s = (rg_ev_site){.obj = obj, .off = off, .calls = calls};
    snprintf(s->verb, sizeof(s->verb), "%s", verb);
    s->ops[FI_OP_RECV] = recv;
    s->ops[FI_OP_SEND] = send;
    e->sites = true;
}

START_TEST(test_sites)
{
    static rg_sw_site s[16];
    static rg_sweep_point p[16];
    char err[200];
    counts();
    /* Rank 0: a poll site with receive and send completions, one that only ever found none, a
     * post_send and a post_recv site. Rank 1 shares one of them and has a poll site of its own,
     * in another object. */
    add_site(&g_ev[0], 0, 0x2c, "poll", 50, 5, 3);
    add_site(&g_ev[0], 0, 0x1a2b, "poll", 900, 0, 0);
    add_site(&g_ev[0], 0, 0x300, "post_send", 3, 0, 3);
    add_site(&g_ev[0], 0, 0x400, "post_recv", 9, 9, 0);
    add_site(&g_ev[1], 0, 0x2c, "poll", 40, 6, 3);
    add_site(&g_ev[1], 1, 0x99, "poll", 7, 1, 0);
    rg_sweep_spec sp = {.kind = RG_SW_ERROR, .rank = -1, .op = FI_OP_ANY, .max = 100};
    snprintf(sp.status, sizeof(sp.status), "WR_FLUSH_ERR");
    /* error acts on completions: the poll sites that handed some out, each once, by key. */
    int n = rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err));
    ck_assert_msg(n == 2, "%d: %s", n, n < 0 ? err : "");
    ck_assert_str_eq(s[0].site, "librailguard.so.1+0x2c");
    ck_assert_int_eq(s[0].nframes, 1);
    ck_assert_str_eq(s[0].frame[0].obj, "/opt/a/librailguard.so.1");
    ck_assert_uint_eq(s[0].frame[0].off, 0x2c);
    ck_assert_uint_eq(s[0].ops, 1u << FI_OP_RECV | 1u << FI_OP_SEND);
    ck_assert_int_eq(s[0].rank, 0);
    ck_assert_str_eq(s[1].site, "prog+0x99");
    ck_assert_int_eq(s[1].rank, 1);
    ck_assert_uint_eq(s[1].ops, 1u << FI_OP_RECV);
    /* --by-site: a point per site and op, at its first event there. */
    ck_assert_int_eq(rg_sweep_plan_sites(&sp, s, n, p, 16, err, sizeof(err)), 3);
    ck_assert_str_eq(p[0].rule,
                     "error status=WR_FLUSH_ERR op=send rank=0 site=librailguard.so.1+0x2c nth=1");
    ck_assert_str_eq(p[1].rule,
                     "error status=WR_FLUSH_ERR op=recv rank=0 site=librailguard.so.1+0x2c nth=1");
    ck_assert_str_eq(p[2].rule, "error status=WR_FLUSH_ERR op=recv rank=1 site=prog+0x99 nth=1");
    ck_assert_int_eq(rg_sweep_plan_sites(&sp, s, n, p, 2, err, sizeof(err)), -1);
    /* Every rule it writes is one the shim takes. */
    struct fi_plan plan;
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fi_plan_parse(p[i].rule, "t", &plan, err, sizeof(err)) == 0, "%s", err);
    /* negpoll acts on polls: every poll site, even one that found nothing, once. */
    sp.kind = RG_SW_NEGPOLL;
    n = rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err));
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(rg_sweep_plan_sites(&sp, s, n, p, 16, err, sizeof(err)), 3);
    ck_assert_str_eq(p[0].rule, "negpoll rank=0 site=librailguard.so.1+0x1a2b nth=1");
    /* delay acts on receive posts (its default op); lose on sends. */
    sp.kind = RG_SW_DELAY;
    sp.ms = 50;
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err)), 1);
    ck_assert_str_eq(s[0].site, "librailguard.so.1+0x400");
    ck_assert_int_eq(rg_sweep_plan_sites(&sp, s, 1, p, 16, err, sizeof(err)), 1);
    ck_assert_str_eq(p[0].rule, "delay ms=50 op=recv rank=0 site=librailguard.so.1+0x400 nth=1");
    sp.kind = RG_SW_LOSE;
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err)), 1);
    ck_assert_str_eq(s[0].site, "librailguard.so.1+0x300");
    /* A rank whose counting run listed none: said, never an empty table read as full reach. */
    sp.kind = RG_SW_ERROR;
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 3, s, 16, err, sizeof(err)), -1);
    ck_assert_str_eq(err,
                     "rank 2's counting run listed no call sites (its shim ran no sites rule)");
    g_ev[1].sites_lost = 4;
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "rank 1's counting run had more call sites"), "%s", err);
    g_ev[1].sites_lost = 0;
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 2, s, 1, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "more than 1 call sites");
    /* One site where rank 0 only sends and rank 1 only receives: each op's point goes to the
     * rank where it happened, never to one that never makes that call. */
    counts();
    add_site(&g_ev[0], 0, 0x50, "poll", 10, 0, 4);
    add_site(&g_ev[1], 0, 0x50, "poll", 10, 6, 0);
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err)), 1);
    ck_assert_int_eq(rg_sweep_plan_sites(&sp, s, 1, p, 16, err, sizeof(err)), 2);
    ck_assert_str_eq(p[0].rule,
                     "error status=WR_FLUSH_ERR op=send rank=0 site=librailguard.so.1+0x50 nth=1");
    ck_assert_str_eq(p[1].rule,
                     "error status=WR_FLUSH_ERR op=recv rank=1 site=librailguard.so.1+0x50 nth=1");
    /* An object whose name a site= could not carry: refused, not planned to never fire. */
    counts();
    add_site(&g_ev[0], 0, 0x50, "poll", 10, 3, 0);
    memset(g_ev[0].objs[0], 'a', 200);
    g_ev[0].objs[0][200] = '\0';
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 1, s, 16, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "an object's name is too long for a site"), "%s", err);
}
END_TEST

/* A site in made-up evidence with its callers: frames (object, offset) after the call's. */
static void add_path(rg_evidence *e, uint64_t off, int nfrom, const int *obj, const uint64_t *from,
                     uint64_t recv)
{
    add_site(e, 0, off, "poll", 10, recv, 0);
    rg_ev_site *s = &e->site[e->nsites - 1];
    s->nfrom = nfrom;
    for (int k = 0; k < nfrom; k++) {
        s->from_obj[k] = obj[k];
        s->from_off[k] = from[k];
    }
}

/*
 * Call paths (--site-depth): a wrapper's one poll call, made from two callers, is two sites at
 * depth 2 and one at depth 1; a path the unwinder ended early is as long as it is; every key
 * is one the shim's site= takes, and a landing site's path is cut to the sweep's depth.
 */
START_TEST(test_site_paths)
{
    static rg_sw_site s[16];
    static rg_sweep_point p[16];
    char err[200];
    counts();
    const int o0[] = {0, 1}, o1[] = {1};
    add_path(&g_ev[0], 0x2c, 2, o0, (const uint64_t[]){0x300, 0x10}, 4);
    add_path(&g_ev[0], 0x2c, 2, o0, (const uint64_t[]){0x500, 0x10}, 4);
    add_path(&g_ev[1], 0x2c, 1, o1, (const uint64_t[]){0x77}, 2);
    rg_sweep_spec sp = {.kind = RG_SW_ERROR, .rank = -1, .op = FI_OP_ANY, .max = 100};
    snprintf(sp.status, sizeof(sp.status), "WR_FLUSH_ERR");
    sp.site_depth = 1;
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err)), 1);
    ck_assert_str_eq(s[0].site, "librailguard.so.1+0x2c");
    sp.site_depth = 2;
    int n = rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err));
    ck_assert_msg(n == 3, "%d: %s", n, n < 0 ? err : "");
    ck_assert_str_eq(s[0].site, "librailguard.so.1+0x2c<librailguard.so.1+0x300");
    ck_assert_str_eq(s[1].site, "librailguard.so.1+0x2c<librailguard.so.1+0x500");
    ck_assert_str_eq(s[2].site, "librailguard.so.1+0x2c<prog+0x77");
    ck_assert_int_eq(s[2].rank, 1);
    ck_assert_int_eq(s[0].nframes, 2);
    ck_assert_str_eq(s[0].frame[1].obj, "/opt/a/librailguard.so.1");
    ck_assert_uint_eq(s[0].frame[1].off, 0x300);
    sp.site_depth = 3; /* rank 0's paths have 3 frames, rank 1's ended at 2 */
    ck_assert_int_eq(rg_sweep_sites(&sp, g_ev, 2, s, 16, err, sizeof(err)), 3);
    ck_assert_str_eq(s[0].site, "librailguard.so.1+0x2c<librailguard.so.1+0x300<prog+0x10");
    ck_assert_str_eq(s[2].site, "librailguard.so.1+0x2c<prog+0x77");
    ck_assert_int_eq(rg_sweep_plan_sites(&sp, s, 3, p, 16, err, sizeof(err)), 3);
    ck_assert_str_eq(p[0].rule, "error status=WR_FLUSH_ERR op=recv rank=0 "
                                "site=librailguard.so.1+0x2c<librailguard.so.1+0x300<prog+0x10 "
                                "nth=1");
    struct fi_plan plan;
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(fi_plan_parse(p[i].rule, "t", &plan, err, sizeof(err)) == 0, "%s", err);
        ck_assert_str_eq(plan.rules[0].site, s[i].site);
    }
    /* A landing site's path (objects' paths, as result.json keeps it) as a key of depth D. */
    char key[RG_SW_SITE_MAX];
    const char *landed = "/opt/a/librailguard.so.1+0x2c</opt/a/librailguard.so.1+0x300</usr/bin/"
                         "prog+0x10</lib/libc.so.6+0x2724a";
    ck_assert_int_eq(rg_sweep_site_key(landed, 2, key, sizeof(key)), 2);
    ck_assert_str_eq(key, "librailguard.so.1+0x2c<librailguard.so.1+0x300");
    ck_assert_int_eq(rg_sweep_site_key(landed, 1, key, sizeof(key)), 1);
    ck_assert_str_eq(key, "librailguard.so.1+0x2c");
    ck_assert_int_eq(rg_sweep_site_key("/x/a<b.so+0x1f</y/c+0x2", 4, key, sizeof(key)), 2);
    ck_assert_str_eq(key, "a<b.so+0x1f<c+0x2");
    ck_assert_int_eq(rg_sweep_site_key("not a site", 2, key, sizeof(key)), -1);
    ck_assert_int_eq(rg_sweep_site_key(landed, 4, key, 20), -1);
    ck_assert_str_eq(key, "");
    /* Short of room: the whole frames that fit, never half of one. */
    ck_assert_int_eq(rg_sweep_site_key(landed, 4, key, 60), 3);
    ck_assert_str_eq(key, "librailguard.so.1+0x2c<librailguard.so.1+0x300<prog+0x10");
}
END_TEST

/* --- the result, and shards merged ---------------------------------------------------------- */

/* A made-up plan of n points and its whole result: point i failing when i % 7 == 3. */
static void made_up(rg_sw_result *r, int n, rg_sw_row *rows)
{
    static rg_sweep_point pts[64];
    memset(r, 0, sizeof(*r));
    r->site_depth = 1;
    for (int i = 0; i < n; i++) {
        pts[i] = (rg_sweep_point){.rank = i % 2,
                                  .op = i % 3 ? FI_OP_RECV : FI_OP_SEND,
                                  .step = i % 4 - 1,
                                  .rep = 0,
                                  .nth = (uint64_t)i + 1,
                                  .cost = 1 + i / 64.0};
        snprintf(pts[i].rule, sizeof(pts[i].rule), "error op=recv rank=%d nth=%d", i % 2, i + 1);
        rows[i] = (rg_sw_row){.n = i + 1, .p = pts[i], .state = RG_SW_PASSED};
        snprintf(rows[i].verdicts, sizeof(rows[i].verdicts), "ok,detected");
        if (i % 7 == 3) {
            rows[i].state = RG_SW_FAILED;
            snprintf(rows[i].verdicts, sizeof(rows[i].verdicts), "DEADLOCK,detected");
            snprintf(rows[i].first, sizeof(rows[i].first), "first failure: rank 0: \"hung\"");
            snprintf(rows[i].shrunk, sizeof(rows[i].shrunk), "points/%04d-shrunk.yaml", i + 1);
        }
        rows[i].p.fired = true;
        rows[i].p.failed = rows[i].state == RG_SW_FAILED;
    }
    rows[5].state = RG_SW_NOT_FIRED;
    rows[5].p.fired = false;
    /* Three call sites, in key order; the points land at the first two, never the third. */
    static rg_sw_site sites[3];
    static const char *const keys[3] = {"librailguard.so.1+0x1a2b", "librailguard.so.1+0x2c",
                                        "librailguard.so.1+0x3f00"};
    for (int k = 0; k < 3; k++) {
        sites[k] = (rg_sw_site){.rank = k, .ops = 1u << FI_OP_RECV | (k ? 0 : 1u << FI_OP_SEND)};
        snprintf(sites[k].site, sizeof(sites[k].site), "%s", keys[k]);
        snprintf(sites[k].verb, sizeof(sites[k].verb), "poll");
        snprintf(sites[k].func, sizeof(sites[k].func), k == 2 ? "" : "rg_wait_%d", k);
        snprintf(sites[k].where, sizeof(sites[k].where), k == 2 ? "" : "transport/rg_cq.c:%d",
                 10 + k);
    }
    for (int i = 0; i < n; i++)
        if (rows[i].state != RG_SW_NOT_FIRED)
            snprintf(rows[i].site, sizeof(rows[i].site), "%s", keys[i % 2]);
    r->nsites = 3;
    r->sites = sites;
    snprintf(r->scenario, sizeof(r->scenario), "scenarios/sweep/ring.yaml");
    snprintf(r->name, sizeof(r->name), "ring");
    r->kind = RG_SW_ERROR;
    r->npoints = n;
    rg_sweep_digest(pts, n, r->digest);
    r->seconds = 12.5;
    r->nrows = n;
    r->rows = rows;
}

START_TEST(test_result_merge)
{
    static rg_sw_row rows[40], part_rows[3][40];
    static rg_sw_result whole, back, parts[3], merged;
    static bool mine[3][40];
    char path[] = "/tmp/rg-sweep-XXXXXX", err[600];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    made_up(&whole, 40, rows);
    /* Round trip: every value back exactly. */
    ck_assert_msg(rg_sw_save(&whole, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(rg_sw_read(&back, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(back.nrows, 40);
    ck_assert_int_eq(memcmp(back.rows, rows, sizeof(rows)), 0);
    ck_assert_str_eq(back.digest, whole.digest);
    ck_assert_int_eq(back.shard_n, 0);
    rg_sw_free(&back);
    /* Three shards, each its rows, through files: merged, the whole result again. */
    static rg_sweep_point pts[40];
    for (int i = 0; i < 40; i++)
        pts[i] = rows[i].p;
    for (int k = 0; k < 3; k++) {
        ck_assert_int_ge(rg_sweep_shard(pts, 40, k + 1, 3, mine[k]), 1);
        rg_sw_result s = whole;
        s.rows = part_rows[k];
        s.nrows = 0;
        s.shard_k = k + 1;
        s.shard_n = 3;
        s.seconds = 4 + k;
        for (int i = 0; i < 40; i++)
            if (mine[k][i])
                part_rows[k][s.nrows++] = rows[i];
        /* Each shard's counting run listed its own sites, in its own order: together, all. */
        static rg_sw_site own[3][3];
        static const int pick[3][3] = {{1, 0, -1}, {2, 1, -1}, {2, 0, 1}};
        s.nsites = 0;
        s.sites = own[k];
        for (int j = 0; j < 3 && pick[k][j] >= 0; j++)
            own[k][s.nsites++] = whole.sites[pick[k][j]];
        ck_assert_int_eq(rg_sw_save(&s, path, err, sizeof(err)), 0);
        ck_assert_msg(rg_sw_read(&parts[k], path, err, sizeof(err)) == 0, "%s", err);
    }
    ck_assert_msg(rg_sw_merge(parts, 3, &merged, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(merged.nrows, 40);
    ck_assert_int_eq(memcmp(merged.rows, rows, sizeof(rows)), 0);
    ck_assert_int_eq(merged.shard_n, 0);
    ck_assert_double_eq(merged.seconds, 6);
    ck_assert_int_eq(merged.nsites, 3);
    for (int k = 0; k < 3; k++) {
        ck_assert_str_eq(merged.sites[k].site, whole.sites[k].site);
        ck_assert_str_eq(merged.sites[k].func, whole.sites[k].func);
        ck_assert_uint_eq(merged.sites[k].ops, whole.sites[k].ops);
    }
    /* Written, the merge's files are the whole sweep's: byte for byte, but for its time. */
    char a[] = "/tmp/rg-sweep-a-XXXXXX", b[] = "/tmp/rg-sweep-b-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(a));
    ck_assert_ptr_nonnull(mkdtemp(b));
    ck_assert_msg(rg_sw_write(&whole, a, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(rg_sw_write(&merged, b, err, sizeof(err)) == 0, "%s", err);
    static const char *const files[] = {"sweep.json", "sweep.txt", "junit.xml", "index.html"};
    for (size_t i = 0; i < 4; i++) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "diff -I '^ \"seconds\": ' %s/%s %s/%s >/dev/null", a, files[i],
                 b, files[i]);
        ck_assert_msg(system(cmd) == 0, "%s differs", files[i]);
    }
    snprintf(err, sizeof(err), "%s/junit.xml", a);
    FILE *jf = fopen(err, "r");
    static char xml[64 * 1024];
    size_t got = fread(xml, 1, sizeof(xml) - 1, jf);
    xml[got] = '\0';
    fclose(jf);
    /* The site table: two reached, by the points that landed there, one never. */
    snprintf(err, sizeof(err), "%s/sweep.txt", a);
    FILE *tf = fopen(err, "r");
    static char txt[64 * 1024];
    size_t tn = fread(txt, 1, sizeof(txt) - 1, tf);
    txt[tn] = '\0';
    fclose(tf);
    ck_assert_msg(strstr(txt, "call sites error applies to: 2 of 3 reached by the 39 point(s) "
                              "that fired\n") &&
                      strstr(txt, "    reached    20  poll      rg_wait_0 at transport/rg_cq.c:10 "
                                  "(librailguard.so.1+0x1a2b)\n") &&
                      strstr(txt, "        landed at: librailguard.so.1+0x2c (rg_wait_1 at "
                                  "transport/rg_cq.c:11)\n") &&
                      strstr(txt, "    NEVER       0  poll      no debug info, no symbol "
                                  "(librailguard.so.1+0x3f00)\n"),
                  "%s", txt);
    ck_assert_msg(strstr(xml, "tests=\"40\" failures=\"6\" errors=\"0\" skipped=\"1\"") &&
                      strstr(xml, "name=\"point 4: error op=recv rank=1 nth=4\"><failure "
                                  "message=\"DEADLOCK,detected\">first failure: rank 0: "
                                  "&quot;hung&quot;</failure>"),
                  "%s", xml);
    snprintf(err, sizeof(err), "rm -rf '%s' '%s'", a, b);
    ck_assert_int_eq(system(err), 0);
    rg_sw_free(&merged);
    /* What does not make one sweep is refused, naming why. */
    ck_assert_int_eq(rg_sw_merge(parts, 2, &merged, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "shard 3/3 is missing: its points were never run");
    rg_sw_result twice[3] = {parts[0], parts[1], parts[1]};
    ck_assert_int_eq(rg_sw_merge(twice, 3, &merged, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "part 3: shard 2/3 given twice");
    rg_sw_result other[3] = {parts[0], parts[1], parts[2]};
    other[2].digest[0] = other[2].digest[0] == 'a' ? 'b' : 'a';
    ck_assert_int_eq(rg_sw_merge(other, 3, &merged, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "part 3 (scenarios/sweep/ring.yaml): another plan (digest)"));
    /* Sites named by paths of another depth: keys that could never be the same. */
    rg_sw_result deeper[3] = {parts[0], parts[1], parts[2]};
    deeper[1].site_depth = 2;
    ck_assert_int_eq(rg_sw_merge(deeper, 3, &merged, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "part 2 (scenarios/sweep/ring.yaml): another call site depth"), "%s",
                  err);
    /* Shard 3 claiming one of shard 2's points: the count adds up, the point is twice. */
    static rg_sw_row stolen[40];
    memcpy(stolen, parts[2].rows, sizeof(stolen[0]) * (size_t)parts[2].nrows);
    stolen[0] = parts[1].rows[0];
    rg_sw_result overlap[3] = {parts[0], parts[1], parts[2]};
    overlap[2].rows = stolen;
    ck_assert_int_eq(rg_sw_merge(overlap, 3, &merged, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "is in two shards"), "%s", err);
    /* Shards whose counting runs differed: the rows name a plan they are not. */
    memcpy(stolen, parts[2].rows, sizeof(stolen[0]) * (size_t)parts[2].nrows);
    stolen[0].p.cost += 0.25;
    rg_sw_result drift[3] = {parts[0], parts[1], parts[2]};
    drift[2].rows = stolen;
    ck_assert_int_eq(rg_sw_merge(drift, 3, &merged, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "another plan (digest"), "%s", err);
    rg_sw_result one[1] = {whole};
    ck_assert_int_eq(rg_sw_merge(one, 1, &merged, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "is a whole sweep, not a shard"));
    /* Shards that each listed no site at all merge to an empty list, as the unsharded sweep
     * saves it, not to "not listed". */
    rg_sw_result none[3] = {parts[0], parts[1], parts[2]};
    for (int k = 0; k < 3; k++)
        none[k].nsites = 0;
    ck_assert_msg(rg_sw_merge(none, 3, &merged, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(merged.nsites, 0);
    rg_sw_free(&merged);
    for (int k = 0; k < 3; k++)
        rg_sw_free(&parts[k]);
    /* A plan for shards to share: every point and site back exactly, its digest checked. */
    static rg_sweep_point plan_pts[40], back_pts[40];
    for (int i = 0; i < 40; i++)
        plan_pts[i] = rows[i].p, plan_pts[i].fired = false, plan_pts[i].failed = false;
    snprintf(whole.baseline, sizeof(whole.baseline), "LEAK,ok");
    whole.nobjs = 2;
    whole.objs[0] = (rg_sw_obj){"t.so", "/b/lib/t.so", "0123456789abcdef", true};
    whole.objs[1] = (rg_sw_obj){"prog", "/b/bin/prog", "", false}; /* its code unread */
    ck_assert_msg(rg_sw_plan_save(&whole, plan_pts, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(rg_sw_plan_read(&back, back_pts, 40, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_eq(back.baseline, "LEAK,ok");
    ck_assert_int_eq(back.nobjs, 2);
    ck_assert_str_eq(back.objs[0].name, "t.so");
    ck_assert_str_eq(back.objs[0].path, "/b/lib/t.so");
    ck_assert_str_eq(back.objs[0].code, "0123456789abcdef");
    ck_assert(back.objs[0].transport);
    ck_assert_str_eq(back.objs[1].name, "prog");
    ck_assert_str_eq(back.objs[1].path, "/b/bin/prog");
    ck_assert_str_eq(back.objs[1].code, "");
    ck_assert(!back.objs[1].transport);
    /* None kept ([]) and a plan from before they were (no field) read back apart. */
    for (int k = 0; k < 2; k++) {
        rg_sw_free(&back);
        whole.nobjs = k ? -1 : 0;
        ck_assert_int_eq(rg_sw_plan_save(&whole, plan_pts, path, err, sizeof(err)), 0);
        ck_assert_msg(rg_sw_plan_read(&back, back_pts, 40, path, err, sizeof(err)) == 0, "%s", err);
        ck_assert_int_eq(back.nobjs, whole.nobjs);
    }
    whole.nobjs = 2;
    /* An object's digest that is not one, its name a path: the file and the field named. */
    static const char *const bad_objs[][2] = {
        {"s/0123456789abcdef/0123456789ABCDEF/", "objects[0].code is not"},
        {"s/\"name\": \"t.so\"/\"name\": \"..\\/t.so\"/", "objects[0].name is not"},
        {"s/\"path\": \"\\/b\\/lib\\/t.so\"/\"path\": \"\\/b\\/t\\\\n.so\"/",
         "objects[0].path is not"},
        {"s/\"transport\": true/\"transport\": 1/", "objects[0].transport is not"},
        /* Nine objects: more than a plan keeps. */
        {"s/\"objects\": \\[/&{\"name\": \"a\", \"path\": \"a\", \"code\": \"\", "
         "\"transport\": false}, {\"name\": \"a\", \"path\": \"a\", \"code\": \"\", "
         "\"transport\": false}, {\"name\": \"a\", \"path\": \"a\", \"code\": \"\", "
         "\"transport\": false}, {\"name\": \"a\", \"path\": \"a\", \"code\": \"\", "
         "\"transport\": false}, {\"name\": \"a\", \"path\": \"a\", \"code\": \"\", "
         "\"transport\": false}, {\"name\": \"a\", \"path\": \"a\", \"code\": \"\", "
         "\"transport\": false}, {\"name\": \"a\", \"path\": \"a\", \"code\": \"\", "
         "\"transport\": false}, /",
         "objects is not"},
    };
    for (size_t k = 0; k < sizeof(bad_objs) / sizeof(bad_objs[0]); k++) {
        rg_sw_free(&back);
        ck_assert_int_eq(rg_sw_plan_save(&whole, plan_pts, path, err, sizeof(err)), 0);
        snprintf(err, sizeof(err), "sed -i '%s' %s", bad_objs[k][0], path);
        ck_assert_int_eq(system(err), 0);
        ck_assert_int_eq(rg_sw_plan_read(&back, back_pts, 40, path, err, sizeof(err)), -1);
        ck_assert_msg(strstr(err, path) && strstr(err, bad_objs[k][1]), "%s", err);
    }
    ck_assert_int_eq(rg_sw_plan_save(&whole, plan_pts, path, err, sizeof(err)), 0);
    ck_assert_msg(rg_sw_plan_read(&back, back_pts, 40, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(back.site_depth, 1);
    ck_assert_int_eq(back.npoints, 40);
    ck_assert_str_eq(back.digest, whole.digest);
    ck_assert_int_eq(back.kind, RG_SW_ERROR);
    for (int i = 0; i < 40; i++) {
        ck_assert_str_eq(back_pts[i].rule, plan_pts[i].rule);
        ck_assert(back_pts[i].cost == plan_pts[i].cost);
        ck_assert_int_eq(back_pts[i].step, plan_pts[i].step);
        ck_assert_uint_eq(back_pts[i].nth, plan_pts[i].nth);
    }
    ck_assert_int_eq(back.nsites, 3);
    ck_assert_str_eq(back.sites[2].site, whole.sites[2].site);
    rg_sw_free(&back);
    ck_assert_int_eq(rg_sw_plan_read(&back, back_pts, 39, path, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "points is not what railguard sweep writes"), "%s", err);
    /* A point's rule edited by hand: the digest no longer says its points. */
    snprintf(err, sizeof(err), "sed -i 's/rank=0 nth=7\"/rank=0 nth=9\"/' %s", path);
    ck_assert_int_eq(system(err), 0);
    ck_assert_int_eq(rg_sw_plan_read(&back, back_pts, 40, path, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "digest (not its points') is not"), "%s", err);
    /* A sweep.json from before sites were kept: read, its sites said not kept. */
    FILE *old = fopen(path, "w");
    fputs("{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
          "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": "
          "[{\"n\": 1, \"rule\": \"x\", \"rank\": 0, \"op\": \"recv\", \"step\": 0, "
          "\"rep\": 0, \"nth\": 1, \"cost\": 1.5, \"state\": \"pass\", \"verdicts\": \"\", "
          "\"first\": \"\", \"shrunk\": \"\"}]}",
          old);
    fclose(old);
    ck_assert_msg(rg_sw_read(&back, path, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(back.nsites, -1);
    ck_assert_int_eq(back.site_depth, 1); /* from before call paths: one frame a site */
    ck_assert_str_eq(back.sites_why, "not kept by the sweep that wrote it");
    ck_assert_str_eq(back.rows[0].site, "");
    rg_sw_free(&back);
    /* A file railguard did not write: one line naming the file and the field. */
    static const char *const bad[][2] = {
        /* A call site that is not OBJECT+0xHEX, or a row's site likewise. */
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": [], "
         "\"sites_why\": \"\", \"sites\": [{\"site\": \"../x+0x1\", \"verb\": \"poll\"}]}",
         "sites[0].site is not"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": [], "
         "\"sites_why\": \"\", \"sites\": [{\"site\": \"a.so+0x1\", \"verb\": \"poll\", "
         "\"ops\": [\"recv\", \"recv\"]}]}",
         "sites[0].ops is not"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": "
         "[{\"n\": 1, \"rule\": \"x\", \"rank\": 0, \"op\": \"recv\", \"step\": 0, "
         "\"rep\": 0, \"nth\": 1, \"cost\": 1.5, \"state\": \"pass\", \"verdicts\": \"\", "
         "\"first\": \"\", \"shrunk\": \"\", \"site\": \"a.so+0xg\"}]}",
         "rows[0].site is not"},
        /* A call path whose caller frame is not one, or is not written as a key is. */
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": [], "
         "\"sites_why\": \"\", \"sites\": [{\"site\": \"a.so+0x1<b.so\", \"verb\": \"poll\"}]}",
         "sites[0].site is not"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": [], "
         "\"sites_why\": \"\", \"sites\": [{\"site\": \"a.so+0x1<b.so+0x0A\", \"verb\": "
         "\"poll\"}]}",
         "sites[0].site is not"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"site_depth\": 5, \"shard\": [0, 0], "
         "\"seconds\": 1, \"rows\": []}",
         "site_depth is not"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"site_depth\": \"2\", \"shard\": [0, 0], "
         "\"seconds\": 1, \"rows\": []}",
         "site_depth is not"},
        {"{", "expected"},
        {"{\"scenario\": \"a\"}", "name is not what railguard sweep writes"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"boom\"}", "kind is not"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [3, 2], \"seconds\": 1, \"rows\": []}",
         "shard is not"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": "
         "[{\"n\": 3}]}",
         "rows[0].n is not"},
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": "
         "[{\"n\": 1, \"rule\": \"x\", \"rank\": 0, \"op\": \"recv\", \"step\": 0, "
         "\"rep\": 0, \"nth\": 1, \"cost\": 1.5, \"state\": \"won\"}]}",
         "rows[0].state is not"},
        /* A shrunk program anywhere but the row's own file: never a path a merge would copy. */
        {"{\"scenario\": \"a\", \"name\": \"a\", \"kind\": \"error\", \"points\": 2, "
         "\"digest\": \"0123456789abcdef\", \"shard\": [0, 0], \"seconds\": 1, \"rows\": "
         "[{\"n\": 1, \"rule\": \"x\", \"rank\": 0, \"op\": \"recv\", \"step\": 0, "
         "\"rep\": 0, \"nth\": 1, \"cost\": 1.5, \"state\": \"FAIL\", \"verdicts\": \"\", "
         "\"first\": \"\", \"shrunk\": \"../../etc/x\"}]}",
         "rows[0].shrunk is not"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i][0], f);
        fclose(f);
        ck_assert_int_eq(rg_sw_read(&back, path, err, sizeof(err)), -1);
        ck_assert_msg(!strncmp(err, path, strlen(path)) && strstr(err, bad[i][1]), "case %zu: %s",
                      i, err);
    }
    unlink(path);
}
END_TEST

Suite *rg_suite_sweep(void)
{
    Suite *s = suite_create("sweep");
    TCase *t = tcase_create("plan");
    tcase_add_test(t, test_plan_error);
    tcase_add_test(t, test_plan_kinds);
    tcase_add_test(t, test_plan_phases);
    tcase_add_test(t, test_shard);
    tcase_add_test(t, test_result_merge);
    tcase_add_test(t, test_sites);
    tcase_add_test(t, test_site_paths);
    tcase_add_test(t, test_shrink);
    suite_add_tcase(s, t);
    return s;
}
