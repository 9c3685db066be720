/* SPDX-License-Identifier: MIT */
/*
 * The fault plan: every fault and filter parses with its defaults, every malformed plan is
 * refused with a message naming where and what, the trigger fires on exactly the events its
 * rule names, and the probability draw is deterministic and fair.
 */
#include "common/rg_check.h"
#include "fi_plan.h"

#include <ctype.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- helpers ------------------------------------------------------------------------------- */

static void parse_ok(const char *text, struct fi_plan *p)
{
    char err[256] = "untouched";

    int rc = fi_plan_parse(text, "RG_FI_PLAN", p, err, sizeof(err));
    ck_assert_msg(rc == 0, "'%s' refused: %s", text, err);
    ck_assert_str_eq(err, "");
}

/* Parses a one-rule plan and returns that rule. */
static struct fi_rule one_rule(const char *text)
{
    struct fi_plan p;

    parse_ok(text, &p);
    ck_assert_msg(p.nrules == 1, "'%s': %d rules", text, p.nrules);
    return p.rules[0];
}

/* Parses text, expects a refusal, returns the message (static storage). */
static const char *parse_bad(const char *text, const char *origin)
{
    static char err[512];
    struct fi_plan p;

    memset(&p, 0x5a, sizeof(p));
    int rc = fi_plan_parse(text, origin, &p, err, sizeof(err));
    ck_assert_msg(rc == -1, "'%s' accepted", text);
    ck_assert_msg(strchr(err, '\n') == NULL, "'%s': message spans lines: '%s'", text, err);
    /* A refused plan leaves nothing behind that a careless caller could inject. */
    static const struct fi_plan zero;
    ck_assert_msg(memcmp(&p, &zero, sizeof(p)) == 0, "'%s': plan not cleared", text);
    return err;
}

static void expect_filters_default(const struct fi_rule *r)
{
    ck_assert_int_eq(r->rank, -1);
    ck_assert_str_eq(r->dev, "");
    ck_assert_int_eq(r->qp_num, -1);
    ck_assert_int_eq(r->qp_ord, -1);
    ck_assert_int_eq(r->cq_ord, -1);
    ck_assert_uint_eq(r->after_ms, 0);
    ck_assert_uint_eq(r->before_ms, UINT64_MAX);
}

static void expect_trigger_default(const struct fi_rule *r)
{
    ck_assert_uint_eq(r->nth, 0);
    ck_assert_uint_eq(r->every, 0);
    ck_assert(r->prob == 0.0);
    ck_assert_uint_eq(r->seed, 0);
    ck_assert_uint_eq(r->count, 0);
}

static void expect_params_default(const struct fi_rule *r)
{
    ck_assert_int_eq(r->status, IBV_WC_WR_FLUSH_ERR);
    ck_assert_int_eq(r->ret, -1);
    ck_assert_uint_eq(r->ms, 0);
    ck_assert_int_eq(r->bit, -1);
    ck_assert_int_eq(r->nperm, 0);
}

/* --- faults and their parameters ----------------------------------------------------------- */

START_TEST(test_error_defaults)
{
    struct fi_rule r = one_rule("error");

    ck_assert_int_eq(r.kind, FI_ERROR);
    ck_assert_int_eq(r.line, 1);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_ANY));
    ck_assert_int_eq(r.verb, FI_VERB_NONE);
    expect_filters_default(&r);
    expect_trigger_default(&r);
    expect_params_default(&r);
}
END_TEST

/* Each rule's bytes in the text: from its fault word to its last parameter, whatever blanks,
 * separators and comments lie around it (railguard exec names rules this way). */
START_TEST(test_rule_source_span)
{
    static const char text[] = "  error op=recv   nth=2 ;negpoll ret=-1\n# kill nth=9\n\tstop  \n";
    static const char *const want[] = {"error op=recv   nth=2", "negpoll ret=-1", "stop"};
    struct fi_plan plan;
    char err[256];
    ck_assert_int_eq(fi_plan_parse(text, "t", &plan, err, sizeof(err)), 0);
    ck_assert_int_eq(plan.nrules, 3);
    for (int i = 0; i < 3; i++) {
        const struct fi_rule *r = &plan.rules[i];
        ck_assert_uint_le(r->src_off + r->src_len, sizeof(text) - 1);
        ck_assert_int_eq((int)r->src_len, (int)strlen(want[i]));
        ck_assert(!memcmp(text + r->src_off, want[i], r->src_len));
    }
    ck_assert_int_eq(plan.rules[2].line, 3);
}
END_TEST

START_TEST(test_error_status_forms)
{
    ck_assert_int_eq(one_rule("error status=RETRY_EXC_ERR").status, IBV_WC_RETRY_EXC_ERR);
    ck_assert_int_eq(one_rule("error status=IBV_WC_REM_ACCESS_ERR").status, IBV_WC_REM_ACCESS_ERR);
    ck_assert_int_eq(one_rule("error status=ibv_wc_rnr_retry_exc_err").status,
                     IBV_WC_RNR_RETRY_EXC_ERR);
    ck_assert_int_eq(one_rule("error status=Fatal_Err").status, IBV_WC_FATAL_ERR);
    ck_assert_int_eq(one_rule("error status=12").status, IBV_WC_RETRY_EXC_ERR);
    ck_assert_int_eq(one_rule("error status=0x0c").status, IBV_WC_RETRY_EXC_ERR);
    ck_assert_int_eq(one_rule("error status=23").status, IBV_WC_TM_RNDV_INCOMPLETE);
}
END_TEST

START_TEST(test_negpoll)
{
    struct fi_rule r = one_rule("negpoll");
    ck_assert_int_eq(r.kind, FI_NEGPOLL);
    ck_assert_int_eq(r.ret, -1);

    ck_assert_int_eq(one_rule("negpoll ret=-5").ret, -5);
    /* per=cqe: n counts completions, which have an op and a QP to filter on. */
    ck_assert(!r.per_cqe);
    r = one_rule("negpoll per=cqe op=recv qp=#1 nth=3");
    ck_assert(r.per_cqe);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_RECV));
    ck_assert(!one_rule("stall ms=5 per=poll").per_cqe);
    ck_assert(one_rule("stall ms=5 per=cqe").per_cqe);
    ck_assert_int_eq(one_rule("negpoll ret=-2147483648").ret, -2147483647 - 1);
    ck_assert_int_eq(one_rule("negpoll ret=-0x10").ret, -16);
}
END_TEST

START_TEST(test_stall_delay)
{
    struct fi_rule r = one_rule("stall ms=250");
    ck_assert_int_eq(r.kind, FI_STALL);
    ck_assert_uint_eq(r.ms, 250);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_ANY));

    r = one_rule("delay ms=3600000");
    ck_assert_int_eq(r.kind, FI_DELAY);
    ck_assert_uint_eq(r.ms, 3600000);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_RECV)); /* the default for delay alone */

    ck_assert_int_eq(one_rule("delay ms=1 op=send").ops, FI_OPS(FI_OP_SEND));
    ck_assert_int_eq(one_rule("delay ms=1 op=any").ops, FI_OPS(FI_OP_ANY)); /* asked for: kept */

    r = one_rule("delay_first ms=40 rank=1");
    ck_assert_int_eq(r.kind, FI_DELAY_FIRST);
    ck_assert_uint_eq(r.ms, 40);
    ck_assert_int_eq(r.rank, 1);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_ANY));
}
END_TEST

START_TEST(test_lose)
{
    struct fi_rule r = one_rule("lose");
    ck_assert_int_eq(r.kind, FI_LOSE);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_ANY)); /* a send or a write */
    ck_assert_int_eq(one_rule("lose op=send").ops, FI_OPS(FI_OP_SEND));
    ck_assert_int_eq(one_rule("lose op=write nth=2").ops, FI_OPS(FI_OP_WRITE));
    /* A transport that moves data by RDMA write where another sends: one rule for both. */
    r = one_rule("lose op=send|write nth=6");
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_SEND) | FI_OPS(FI_OP_WRITE));
    ck_assert(fi_ops_has(r.ops, FI_OP_SEND) && fi_ops_has(r.ops, FI_OP_WRITE));
    ck_assert(!fi_ops_has(r.ops, FI_OP_RECV) && !fi_ops_has(r.ops, FI_OP_READ));
    ck_assert(fi_ops_has(one_rule("lose").ops, FI_OP_READ)); /* none named: any */
}
END_TEST

START_TEST(test_nomem_verbs)
{
    static const struct {
        const char *text;
        enum fi_verb verb;
    } cases[] = {
        {"nomem verb=post_send", FI_VERB_POST_SEND}, {"nomem verb=post_recv", FI_VERB_POST_RECV},
        {"nomem verb=reg_mr", FI_VERB_REG_MR},       {"nomem verb=create_qp", FI_VERB_CREATE_QP},
        {"nomem verb=create_cq", FI_VERB_CREATE_CQ}, {"nomem verb=alloc_pd", FI_VERB_ALLOC_PD},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fi_rule r = one_rule(cases[i].text);
        ck_assert_int_eq(r.kind, FI_NOMEM);
        ck_assert_int_eq(r.verb, cases[i].verb);
    }
}
END_TEST

START_TEST(test_corrupt)
{
    struct fi_rule r = one_rule("corrupt");
    ck_assert_int_eq(r.kind, FI_CORRUPT);
    ck_assert_int_eq(r.bit, -1);

    r = one_rule("corrupt bit=0 seed=9");
    ck_assert_int_eq(r.bit, 0);
    ck_assert_uint_eq(r.seed, 9);
    ck_assert_int_eq(one_rule("corrupt bit=16777215").bit, 16777215);
}
END_TEST

START_TEST(test_swap_rails)
{
    struct fi_rule r = one_rule("swap_rails");
    ck_assert_int_eq(r.kind, FI_SWAP_RAILS);
    ck_assert_int_eq(r.nperm, 0); /* reversed */

    r = one_rule("swap_rails perm=1,0 rank=0");
    ck_assert_int_eq(r.nperm, 2);
    ck_assert_int_eq(r.perm[0], 1);
    ck_assert_int_eq(r.perm[1], 0);
    ck_assert_int_eq(r.rank, 0);

    r = one_rule("swap_rails perm=7,6,5,4,0,1,2,3");
    ck_assert_int_eq(r.nperm, 8);
    static const int want[] = {7, 6, 5, 4, 0, 1, 2, 3};
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(r.perm[i], want[i]);
}
END_TEST

START_TEST(test_late)
{
    struct fi_rule r = one_rule("late ms=250 op=send rank=0 nth=3");
    ck_assert_int_eq(r.kind, FI_LATE);
    ck_assert_uint_eq(r.ms, 250);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_SEND));
    ck_assert_uint_eq(r.nth, 3);
    ck_assert_int_eq(one_rule("late ms=1").ops, FI_OPS(FI_OP_ANY));
    ck_assert_str_eq(fi_kind_name(FI_LATE), "late");
}
END_TEST

/* step= and rep=: filters on the program's phase, init included; rep needs a step. */
START_TEST(test_phase_filters)
{
    struct fi_rule r = one_rule("error op=recv rank=1 step=3 rep=2 nth=4");
    ck_assert_int_eq(r.step, 3);
    ck_assert_int_eq(r.rep, 2);
    r = one_rule("negpoll step=init");
    ck_assert_int_eq(r.step, FI_PHASE_INIT);
    ck_assert_int_eq(r.rep, FI_PHASE_ANY);
    r = one_rule("error");
    ck_assert_int_eq(r.step, FI_PHASE_ANY);
    ck_assert_int_eq(r.rep, FI_PHASE_ANY);
    ck_assert_int_eq(one_rule("kill step=0").step, 0);
}
END_TEST

/* kill and stop: a completion-site fault with filters and triggers, and no parameter. */
START_TEST(test_kill_stop)
{
    struct fi_rule r = one_rule("kill op=recv rank=2 nth=7");
    ck_assert_int_eq(r.kind, FI_KILL);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_RECV));
    ck_assert_uint_eq(r.nth, 7);
    r = one_rule("stop rank=1 every=3 count=1");
    ck_assert_int_eq(r.kind, FI_STOP);
    ck_assert_uint_eq(r.every, 3);
    ck_assert_str_eq(fi_kind_name(FI_KILL), "kill");
    ck_assert_str_eq(fi_kind_name(FI_STOP), "stop");
}
END_TEST

/* exit: a completion-site fault whose one parameter is the status, 0 (success) unless given. */
START_TEST(test_exit)
{
    struct fi_rule r = one_rule("exit op=send rank=1 nth=3");
    ck_assert_int_eq(r.kind, FI_EXIT);
    ck_assert_int_eq(r.code, 0);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_SEND));
    ck_assert_int_eq(one_rule("exit code=255").code, 255);
    ck_assert_str_eq(fi_kind_name(FI_EXIT), "exit");
    ck_assert_str_eq(parse_bad("exit code=256", "RG_FI_PLAN"),
                     "RG_FI_PLAN:1: code must be 0..255 '256'");
    ck_assert_str_eq(parse_bad("kill code=1", "RG_FI_PLAN"),
                     "RG_FI_PLAN:1: kill does not take key 'code'");
}
END_TEST

START_TEST(test_count)
{
    struct fi_rule r = one_rule("count");
    ck_assert_int_eq(r.kind, FI_COUNT);
    expect_filters_default(&r);
    expect_trigger_default(&r);
    expect_params_default(&r);

    /* Counting covers every object: a filter would silently do nothing, so it is refused. */
    ck_assert_str_eq(parse_bad("count rank=2", "RG_FI_PLAN"),
                     "RG_FI_PLAN:1: count does not take key 'rank'");
    /* The trace, likewise: every QP of the process or none. It injects nothing, as count and
     * ownership inject nothing; every other kind does. */
    ck_assert_str_eq(parse_bad("trace qp=17", "RG_FI_PLAN"),
                     "RG_FI_PLAN:1: trace does not take key 'qp'");
    ck_assert(!fi_kind_injects(FI_TRACE) && !fi_kind_injects(FI_COUNT) &&
              !fi_kind_injects(FI_OWNERSHIP) && !fi_kind_injects(FI_SITES));
    /* A call site: the object's file name (a path is cut to it) and a hex offset. */
    struct fi_rule r2 = one_rule("error site=/opt/x/librailguard.so.1+0x1a2B nth=3");
    ck_assert_str_eq(r2.site, "librailguard.so.1+0x1a2b");
    ck_assert_int_eq(r2.site_depth, 1);
    r2 = one_rule("delay ms=1 site=a+b.so+0xffffffffffffffff");
    ck_assert_str_eq(r2.site, "a+b.so+0xffffffffffffffff");
    ck_assert_str_eq(one_rule("error").site, "");
    ck_assert_int_eq(one_rule("error").site_depth, 0);
    /* A call path: frames joined by '<', each cut to its file name, offsets without leading
     * zeros; a '<' inside an object's path is the path's, not a frame's end. */
    r2 = one_rule("error site=/l/librailguard.so.1+0x0A<librailguard.so.1+0x20</x/a<b+0x3");
    ck_assert_str_eq(r2.site, "librailguard.so.1+0xa<librailguard.so.1+0x20<a<b+0x3");
    ck_assert_int_eq(r2.site_depth, 3);
    ck_assert_str_eq(parse_bad("error site=a+0x1<b+0x2<c+0x3<d+0x4<e+0x5", "P"),
                     "P:1: site has more than 4 frames 'a+0x1<b+0x2<c+0x3<d+0x4<e+0x5'");
    ck_assert_str_eq(parse_bad("error site=a+0x1<", "P"),
                     "P:1: site needs OBJECT+0xOFFSET 'a+0x1<'");
    ck_assert_str_eq(parse_bad("error site=a+0x1<+0x2", "P"),
                     "P:1: site's object name is empty 'a+0x1<+0x2'");
    ck_assert_str_eq(parse_bad("error site=a+0x1<b+0xg", "P"),
                     "P:1: site's offset is not a 64-bit hex number 'a+0x1<b+0xg'");
    /* sites: its depth, 1 unless said, up to FI_SITE_DEPTH; no other key. */
    ck_assert_int_eq(one_rule("sites").depth, 1);
    ck_assert_int_eq(one_rule("sites depth=3").depth, 3);
    ck_assert_str_eq(parse_bad("sites depth=5", "P"), "P:1: depth must be 1..4 '5'");
    ck_assert_str_eq(parse_bad("sites depth=0", "P"), "P:1: depth must be 1..4 '0'");
    ck_assert_str_eq(parse_bad("sites rank=1", "P"), "P:1: sites does not take key 'rank'");
    ck_assert_str_eq(parse_bad("error depth=2", "P"), "P:1: error does not take key 'depth'");
    ck_assert(fi_kind_injects(FI_ERROR) && fi_kind_injects(FI_LOSE) &&
              fi_kind_injects(FI_SWAP_RAILS) && fi_kind_injects(FI_EXIT) &&
              fi_kind_injects(FI_DELAY));
}
END_TEST

/*
 * Wire faults: netem's rates as percentages into fractions, the delay with its jitter, a link
 * down with its way back up, a partition. Not the shim's: they never inject a verbs event.
 */
START_TEST(test_wire)
{
    struct fi_rule r = one_rule("wire loss=1% rank=1 rail=0 after=200 before=900");
    ck_assert_int_eq(r.kind, FI_WIRE);
    ck_assert(fi_kind_wire(r.kind));
    ck_assert_double_eq_tol(r.loss, 0.01, 1e-12);
    ck_assert_int_eq(r.rank, 1);
    ck_assert_int_eq(r.rail, 0);
    ck_assert_uint_eq(r.after_ms, 200);
    ck_assert_uint_eq(r.before_ms, 900);
    ck_assert(r.reorder == 0 && r.duplicate == 0 && r.corrupt_rate == 0 && r.delay_ms == 0);
    r = one_rule("wire delay=10 jitter=3 reorder=25% duplicate=0.5% corrupt=100%");
    ck_assert_uint_eq(r.delay_ms, 10);
    ck_assert_uint_eq(r.jitter_ms, 3);
    ck_assert_double_eq_tol(r.reorder, 0.25, 1e-12);
    ck_assert_double_eq_tol(r.duplicate, 0.005, 1e-12);
    ck_assert_double_eq_tol(r.corrupt_rate, 1.0, 1e-12);
    ck_assert_int_eq(r.rail, -1); /* every rail */
    ck_assert_int_eq(r.rank, -1); /* every rank's */
    r = one_rule("wire loss=0.000001%");
    ck_assert_double_eq_tol(r.loss, 1e-8, 1e-15);
    r = one_rule("link_down rail=1 after=500 up=300");
    ck_assert_int_eq(r.kind, FI_LINK_DOWN);
    ck_assert_int_eq(r.rail, 1);
    ck_assert_uint_eq(r.after_ms, 500);
    ck_assert_uint_eq(r.up_ms, 300);
    ck_assert_uint_eq(r.before_ms, UINT64_MAX);
    r = one_rule("link_down rail=0 step=2 up=100");
    ck_assert_int_eq(r.step, 2);
    ck_assert_uint_eq(r.after_ms, 0);
    r = one_rule("wire loss=100% rank=1 rail=0 step=1 up=100");
    ck_assert_int_eq(r.kind, FI_WIRE);
    ck_assert_int_eq(r.step, 1);
    ck_assert_uint_eq(r.up_ms, 100);
    ck_assert_uint_eq(r.before_ms, UINT64_MAX);
    r = one_rule("partition rank=0 after=1000");
    ck_assert_int_eq(r.kind, FI_PARTITION);
    ck_assert_int_eq(r.rail, -1);
    ck_assert_uint_eq(r.up_ms, 0); /* down to the program's end */
    ck_assert(fi_kind_wire(FI_LINK_DOWN) && fi_kind_wire(FI_PARTITION));
    ck_assert(!fi_kind_wire(FI_LOSE) && !fi_kind_wire(FI_CORRUPT) && !fi_kind_wire(FI_ERROR));
    /* Beside verbs faults in one plan, each keeping its own place. */
    struct fi_plan p;
    parse_ok("lose nth=2\nwire loss=2% rail=1\ncorrupt bit=3", &p);
    ck_assert_int_eq(p.nrules, 3);
    ck_assert_int_eq(p.rules[1].kind, FI_WIRE);
    ck_assert_int_eq(p.rules[2].kind, FI_CORRUPT);
    ck_assert_int_eq(p.rules[2].bit, 3);
}
END_TEST

/* --- filters and triggers ------------------------------------------------------------------ */

START_TEST(test_filters)
{
    struct fi_rule r = one_rule("error rank=3 dev=mlx5_1 qp=0x1a2 op=write after=100 before=2000");
    ck_assert_int_eq(r.rank, 3);
    ck_assert_str_eq(r.dev, "mlx5_1");
    ck_assert_int_eq(r.qp_num, 0x1a2);
    ck_assert_int_eq(r.qp_ord, -1);
    ck_assert_int_eq(r.cq_ord, -1);
    ck_assert_int_eq(r.ops, FI_OPS(FI_OP_WRITE));
    ck_assert_uint_eq(r.after_ms, 100);
    ck_assert_uint_eq(r.before_ms, 2000);

    r = one_rule("stall ms=5 per=cqe qp=#2 cq=#0");
    ck_assert_int_eq(r.qp_num, -1);
    ck_assert_int_eq(r.qp_ord, 2);
    ck_assert_int_eq(r.cq_ord, 0);

    ck_assert_int_eq(one_rule("error qp=17").qp_num, 17);
    ck_assert_int_eq(one_rule("error qp=010").qp_num, 10); /* decimal, not octal */
    ck_assert_int_eq(one_rule("error qp=0xffffff").qp_num, 0xffffff);
    ck_assert_int_eq(one_rule("error rank=2147483647").rank, 2147483647);
    ck_assert_uint_eq(one_rule("error after=5").after_ms, 5);
    ck_assert_uint_eq(one_rule("error before=1").before_ms, 1);

    static const enum fi_op ops[] = {FI_OP_ANY,   FI_OP_SEND, FI_OP_RECV,
                                     FI_OP_WRITE, FI_OP_READ, FI_OP_ATOMIC};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        char text[64];
        snprintf(text, sizeof(text), "error op=%s", fi_op_name(ops[i]));
        ck_assert_int_eq(one_rule(text).ops, FI_OPS(ops[i]));
    }

    char text[128];
    snprintf(text, sizeof(text), "error dev=%063d", 7); /* the longest name that fits */
    ck_assert_uint_eq(strlen(one_rule(text).dev), FI_DEVNAME_MAX - 1);
}
END_TEST

START_TEST(test_trigger_keys)
{
    struct fi_rule r = one_rule("error nth=3 every=0x10 prob=0.25 seed=18446744073709551615 "
                                "count=4");
    ck_assert_uint_eq(r.nth, 3);
    ck_assert_uint_eq(r.every, 16);
    ck_assert(r.prob == 0.25);
    ck_assert_uint_eq(r.seed, UINT64_MAX);
    ck_assert_uint_eq(r.count, 4);

    ck_assert(one_rule("error prob=1").prob == 1.0);
    ck_assert(one_rule("error prob=1.000").prob == 1.0);
    ck_assert(one_rule("error prob=.5").prob == 0.5);
    ck_assert(one_rule("error prob=0.001").prob == 0.001);
}
END_TEST

/* --- plans of several rules ---------------------------------------------------------------- */

START_TEST(test_several_rules)
{
    struct fi_plan p;

    parse_ok("# a header comment\n"
             "error nth=3; stall ms=10 # trailing\n"
             "\n"
             "  ;;  \t\n"
             "lose op=send\r\n"
             "count;swap_rails\n"
             "# the end",
             &p);
    ck_assert_int_eq(p.nrules, 5);
    ck_assert_int_eq(p.rules[0].kind, FI_ERROR);
    ck_assert_int_eq(p.rules[0].line, 2);
    ck_assert_uint_eq(p.rules[0].nth, 3);
    ck_assert_int_eq(p.rules[1].kind, FI_STALL);
    ck_assert_int_eq(p.rules[1].line, 2);
    ck_assert_uint_eq(p.rules[1].ms, 10);
    ck_assert_int_eq(p.rules[2].kind, FI_LOSE);
    ck_assert_int_eq(p.rules[2].line, 5);
    ck_assert_int_eq(p.rules[2].ops, FI_OPS(FI_OP_SEND));
    ck_assert_int_eq(p.rules[3].kind, FI_COUNT);
    ck_assert_int_eq(p.rules[3].line, 6);
    ck_assert_int_eq(p.rules[3].qp_ord, -1);
    ck_assert_int_eq(p.rules[4].kind, FI_SWAP_RAILS);
    ck_assert_int_eq(p.rules[4].line, 6);
}
END_TEST

START_TEST(test_empty_plans)
{
    static const char *const texts[] = {
        "", " ", ";", ";;\n;", "# only a comment", "\n\n# c1\n  # c2\n\t\r\n"};
    struct fi_plan p;

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        memset(&p, 0x5a, sizeof(p));
        parse_ok(texts[i], &p);
        ck_assert_int_eq(p.nrules, 0);
    }
    memset(&p, 0x5a, sizeof(p));
    parse_ok(NULL, &p);
    ck_assert_int_eq(p.nrules, 0);
}
END_TEST

START_TEST(test_max_rules)
{
    char text[FI_MAX_RULES * 16 + 32] = "";
    struct fi_plan p;

    for (int i = 0; i < FI_MAX_RULES; i++)
        strcat(text, i % 2 ? "error\n" : "count;");
    parse_ok(text, &p);
    ck_assert_int_eq(p.nrules, FI_MAX_RULES);
    ck_assert_int_eq(p.rules[FI_MAX_RULES - 1].line, FI_MAX_RULES / 2);
    ck_assert_int_eq(p.rules[FI_MAX_RULES - 1].kind, FI_ERROR);

    strcat(text, "# still fine\nstall ms=1");
    ck_assert_str_eq(parse_bad(text, "RG_FI_PLAN"),
                     "RG_FI_PLAN:18: too many rules, at most 32 'stall'");
}
END_TEST

/* --- refusals ------------------------------------------------------------------------------ */

static const struct {
    const char *text;
    const char *msg; /* the whole message, origin RG_FI_PLAN */
} bad_cases[] = {
    /* words */
    {"flsh", "RG_FI_PLAN:1: unknown fault 'flsh'"},
    {"Error", "RG_FI_PLAN:1: unknown fault 'Error'"},
    {"error; stall ms=1; bogus", "RG_FI_PLAN:1: unknown fault 'bogus'"},
    {"error\n\n  op=send", "RG_FI_PLAN:3: unknown fault 'op=send'"}, /* a newline ends a rule */
    {"error\x01", "RG_FI_PLAN:1: unknown fault 'error?'"},
    {"error\nstall msx=5", "RG_FI_PLAN:2: unknown key 'msx'"},
    {"error =5", "RG_FI_PLAN:1: unknown key ''"},
    {"error nth", "RG_FI_PLAN:1: expected key=value 'nth'"},
    {"error nth=", "RG_FI_PLAN:1: empty value for key 'nth'"},
    {"error nth= 3", "RG_FI_PLAN:1: empty value for key 'nth'"},
    {"error nth=1 every=2 nth=2", "RG_FI_PLAN:1: duplicate key 'nth'"},
    /* keys a fault does not take */
    {"stall status=5 ms=1", "RG_FI_PLAN:1: stall does not take key 'status'"},
    {"error verb=reg_mr", "RG_FI_PLAN:1: error does not take key 'verb'"},
    {"error perm=1,0", "RG_FI_PLAN:1: error does not take key 'perm'"},
    {"error ms=5", "RG_FI_PLAN:1: error does not take key 'ms'"},
    {"negpoll status=5", "RG_FI_PLAN:1: negpoll does not take key 'status'"},
    {"error ret=-1", "RG_FI_PLAN:1: error does not take key 'ret'"},
    {"stall ms=1 bit=3", "RG_FI_PLAN:1: stall does not take key 'bit'"},
    {"count nth=2", "RG_FI_PLAN:1: count does not take key 'nth'"},
    {"count prob=0.5", "RG_FI_PLAN:1: count does not take key 'prob'"},
    {"delay_first ms=5 op=send", "RG_FI_PLAN:1: delay_first does not take key 'op'"},
    {"delay_first ms=5 count=1", "RG_FI_PLAN:1: delay_first does not take key 'count'"},
    {"swap_rails dev=rxe0", "RG_FI_PLAN:1: swap_rails does not take key 'dev'"},
    {"lose ms=3", "RG_FI_PLAN:1: lose does not take key 'ms'"},
    /* required keys */
    {"stall", "RG_FI_PLAN:1: stall needs ms="},
    {"error\ndelay op=send", "RG_FI_PLAN:2: delay needs ms="},
    {"delay_first rank=0", "RG_FI_PLAN:1: delay_first needs ms="},
    {"nomem rank=1", "RG_FI_PLAN:1: nomem needs verb="},
    {"late op=send", "RG_FI_PLAN:1: late needs ms="},
    {"late ms=5 op=recv", "RG_FI_PLAN:1: late takes op=send, op=write or both 'recv'"},
    {"late ms=5 status=5", "RG_FI_PLAN:1: late does not take key 'status'"},
    {"kill ms=5", "RG_FI_PLAN:1: kill does not take key 'ms'"},
    {"error rep=1", "RG_FI_PLAN:1: rep= needs step="},
    {"error step=-1", "RG_FI_PLAN:1: step is init or a number from 0 to 1000000 '-1'"},
    {"error step=fin", "RG_FI_PLAN:1: step is init or a number from 0 to 1000000 'fin'"},
    {"swap_rails step=1", "RG_FI_PLAN:1: swap_rails does not take key 'step'"},
    {"stop status=5", "RG_FI_PLAN:1: stop does not take key 'status'"},
    {"kill verb=post_send", "RG_FI_PLAN:1: kill does not take key 'verb'"},
    /* rules that could never do anything */
    {"error status=SUCCESS", "RG_FI_PLAN:1: error status=SUCCESS injects nothing"},
    {"error status=0 nth=3", "RG_FI_PLAN:1: error status=SUCCESS injects nothing"},
    {"error status=IBV_WC_SUCCESS", "RG_FI_PLAN:1: error status=SUCCESS injects nothing"},
    {"corrupt op=send", "RG_FI_PLAN:1: corrupt takes op=recv 'send'"},
    /* numbers */
    {"error nth=x3", "RG_FI_PLAN:1: bad number 'x3' for nth"},
    {"error nth=-1", "RG_FI_PLAN:1: bad number '-1' for nth"},
    {"error nth=+1", "RG_FI_PLAN:1: bad number '+1' for nth"},
    {"error nth=3x", "RG_FI_PLAN:1: bad number '3x' for nth"},
    {"error nth=0x", "RG_FI_PLAN:1: bad number '0x' for nth"},
    {"error nth=0x0x5", "RG_FI_PLAN:1: bad number '0x0x5' for nth"},
    {"error nth=1.5", "RG_FI_PLAN:1: bad number '1.5' for nth"},
    {"error nth=18446744073709551616",
     "RG_FI_PLAN:1: number too large '18446744073709551616' for nth"},
    {"error seed=0x10000000000000000",
     "RG_FI_PLAN:1: number too large '0x10000000000000000' for seed"},
    {"error nth=0", "RG_FI_PLAN:1: nth must be at least 1 '0'"},
    {"error every=0", "RG_FI_PLAN:1: every must be at least 1 '0'"},
    {"error count=0x0", "RG_FI_PLAN:1: count must be at least 1 '0x0'"},
    {"error rank=2147483648", "RG_FI_PLAN:1: rank must be 0..2147483647 '2147483648'"},
    {"error rank=-1", "RG_FI_PLAN:1: bad number '-1' for rank"},
    {"stall ms=0", "RG_FI_PLAN:1: ms must be 1..3600000 '0'"},
    {"delay ms=3600001", "RG_FI_PLAN:1: ms must be 1..3600000 '3600001'"},
    {"corrupt bit=16777216", "RG_FI_PLAN:1: bit must be 0..16777215 '16777216'"},
    {"error after=10 before=10", "RG_FI_PLAN:1: empty time window 'after=10 before=10'"},
    {"error before=3 after=7", "RG_FI_PLAN:1: empty time window 'after=7 before=3'"},
    {"error before=0", "RG_FI_PLAN:1: empty time window 'after=0 before=0'"},
    /* prob */
    {"error prob=0", "RG_FI_PLAN:1: prob must be in (0,1] '0'"},
    {"error prob=0.000", "RG_FI_PLAN:1: prob must be in (0,1] '0.000'"},
    {"error prob=1.5", "RG_FI_PLAN:1: prob must be in (0,1] '1.5'"},
    {"error prob=1.0000000000000000000001",
     "RG_FI_PLAN:1: prob must be in (0,1] '1.0000000000000000000001'"},
    {"error prob=12", "RG_FI_PLAN:1: prob must be in (0,1] '12'"},
    {"error prob=abc", "RG_FI_PLAN:1: bad number 'abc' for prob"},
    {"error prob=1e-3", "RG_FI_PLAN:1: bad number '1e-3' for prob"},
    {"error prob=.", "RG_FI_PLAN:1: bad number '.' for prob"},
    {"error prob=0.5.1", "RG_FI_PLAN:1: bad number '0.5.1' for prob"},
    {"error prob=-0.5", "RG_FI_PLAN:1: bad number '-0.5' for prob"},
    /* names */
    {"error status=BOGUS", "RG_FI_PLAN:1: unknown status 'BOGUS'"},
    {"error status=24", "RG_FI_PLAN:1: unknown status '24'"},
    {"error status=IBV_WC_", "RG_FI_PLAN:1: unknown status 'IBV_WC_'"},
    {"error status=IBV_WC_5", "RG_FI_PLAN:1: unknown status 'IBV_WC_5'"},
    {"error status=5x", "RG_FI_PLAN:1: unknown status '5x'"},
    {"error op=frob", "RG_FI_PLAN:1: unknown op 'frob'"},
    {"error op=SEND", "RG_FI_PLAN:1: unknown op 'SEND'"},
    {"nomem verb=frob", "RG_FI_PLAN:1: unknown verb 'frob'"},
    {"nomem verb=none", "RG_FI_PLAN:1: unknown verb 'none'"},
    {"lose op=recv", "RG_FI_PLAN:1: lose takes op=send, op=write or both 'recv'"},
    {"lose op=atomic", "RG_FI_PLAN:1: lose takes op=send, op=write or both 'atomic'"},
    {"lose op=send|recv", "RG_FI_PLAN:1: lose takes op=send, op=write or both 'send|recv'"},
    {"error op=send|frob", "RG_FI_PLAN:1: unknown op 'frob'"},
    {"error op=send|", "RG_FI_PLAN:1: unknown op ''"},
    {"error op=send|send", "RG_FI_PLAN:1: op names each of send, recv, write, read, atomic once, "
                           "or any alone 'send|send'"},
    {"error op=any|send", "RG_FI_PLAN:1: op names each of send, recv, write, read, atomic once, or "
                          "any alone 'any|send'"},
    /* ret */
    {"negpoll ret=5", "RG_FI_PLAN:1: ret must be a negative int '5'"},
    {"negpoll per=cq", "RG_FI_PLAN:1: per is poll or cqe 'cq'"},
    {"negpoll op=recv", "RG_FI_PLAN:1: negpoll counts polls, which have no op or qp: add per=cqe"},
    {"stall ms=1 per=poll qp=#0",
     "RG_FI_PLAN:1: stall counts polls, which have no op or qp: add per=cqe"},
    {"error per=cqe", "RG_FI_PLAN:1: error does not take key 'per'"},
    {"negpoll ret=-0", "RG_FI_PLAN:1: ret must be a negative int '-0'"},
    {"negpoll ret=-2147483649", "RG_FI_PLAN:1: ret must be a negative int '-2147483649'"},
    {"negpoll ret=-99999999999999999999",
     "RG_FI_PLAN:1: ret must be a negative int '-99999999999999999999'"},
    {"negpoll ret=-x", "RG_FI_PLAN:1: bad number '-x' for ret"},
    {"negpoll ret=-", "RG_FI_PLAN:1: bad number '-' for ret"},
    /* qp, cq, dev */
    {"error qp=0x1000000", "RG_FI_PLAN:1: qp must be 0..16777215 '0x1000000'"},
    {"error qp=#x", "RG_FI_PLAN:1: bad number '#x' for qp"},
    {"error qp=#", "RG_FI_PLAN:1: bad number '#' for qp"},
    {"error qp=#-1", "RG_FI_PLAN:1: bad number '#-1' for qp"},
    {"error qp=#2147483648", "RG_FI_PLAN:1: qp must be 0..2147483647 '#2147483648'"},
    {"error cq=3", "RG_FI_PLAN:1: cq needs the #K form '3'"},
    {"error cq=#y", "RG_FI_PLAN:1: bad number '#y' for cq"},
    {"error dev=0123456789012345678901234567890123456789012345678901234567890123",
     "RG_FI_PLAN:1: device name too long "
     "'012345678901234567890123456789012345678901234567...'"},
    /* perm */
    {"swap_rails perm=0", "RG_FI_PLAN:1: perm needs at least 2 entries '0'"},
    {"swap_rails perm=0,0", "RG_FI_PLAN:1: perm is not a permutation of 0..1 '0,0'"},
    {"swap_rails perm=0,2", "RG_FI_PLAN:1: perm is not a permutation of 0..1 '0,2'"},
    {"swap_rails perm=1,2,3", "RG_FI_PLAN:1: perm is not a permutation of 0..2 '1,2,3'"},
    {"swap_rails perm=0,99999999999999999999",
     "RG_FI_PLAN:1: bad number in perm '0,99999999999999999999'"},
    {"swap_rails perm=0,,1", "RG_FI_PLAN:1: bad number in perm '0,,1'"},
    {"swap_rails perm=1,0,", "RG_FI_PLAN:1: bad number in perm '1,0,'"},
    {"swap_rails perm=1,x", "RG_FI_PLAN:1: bad number in perm '1,x'"},
    {"swap_rails perm=0,1,2,3,4,5,6,7,8",
     "RG_FI_PLAN:1: perm has more than 8 entries '0,1,2,3,4,5,6,7,8'"},
    /* wire faults */
    {"wire rail=0", "RG_FI_PLAN:1: wire needs loss=, delay=, reorder=, duplicate= or corrupt="},
    {"wire loss=1", "RG_FI_PLAN:1: loss is a percentage like 1% or 0.5% '1'"},
    {"wire loss=%", "RG_FI_PLAN:1: loss is a percentage like 1% or 0.5% '%'"},
    {"wire loss=0%", "RG_FI_PLAN:1: loss must be more than 0% and at most 100% '0%'"},
    {"wire loss=100.5%", "RG_FI_PLAN:1: loss must be more than 0% and at most 100% '100.5%'"},
    {"wire loss=1e2%", "RG_FI_PLAN:1: loss is a percentage like 1% or 0.5% '1e2%'"},
    {"wire loss=-1%", "RG_FI_PLAN:1: loss is a percentage like 1% or 0.5% '-1%'"},
    {"wire duplicate=0.0000001%",
     "RG_FI_PLAN:1: duplicate has more decimals than netem keeps '0.0000001%'"},
    {"wire reorder=25%", "RG_FI_PLAN:1: wire reorder= needs delay="},
    {"wire loss=1% jitter=5", "RG_FI_PLAN:1: wire jitter= needs delay="},
    {"wire delay=5 jitter=6", "RG_FI_PLAN:1: wire jitter=6 is more than its delay=5"},
    {"wire delay=0", "RG_FI_PLAN:1: delay must be 1..3600000 '0'"},
    {"wire loss=1% rail=8", "RG_FI_PLAN:1: rail must be 0..7 '8'"},
    {"wire loss=1% nth=3", "RG_FI_PLAN:1: wire does not take key 'nth'"},
    {"wire loss=1% step=2 rep=0", "RG_FI_PLAN:1: wire does not take key 'rep'"},
    {"link_down step=init",
     "RG_FI_PLAN:1: link_down step= is a step of the program, from 0, not init"},
    {"wire loss=1% step=1 after=5",
     "RG_FI_PLAN:1: wire starts at step= or after=, not both; before= needs after="},
    {"wire loss=1% after=5 before=9 up=3",
     "RG_FI_PLAN:1: wire ends at before= or up= ms after it starts, not both"},
    {"wire loss=1% up=0", "RG_FI_PLAN:1: up must be 1..3600000 '0'"},
    {"partition step=1 before=5", "RG_FI_PLAN:1: partition does not take key 'before'"},
    {"wire loss=1% qp=#0", "RG_FI_PLAN:1: wire does not take key 'qp'"},
    {"error loss=1%", "RG_FI_PLAN:1: error does not take key 'loss'"},
    {"link_down rail=0 before=100", "RG_FI_PLAN:1: link_down does not take key 'before'"},
    {"link_down up=0", "RG_FI_PLAN:1: up must be 1..3600000 '0'"},
    {"partition rail=1", "RG_FI_PLAN:1: partition does not take key 'rail'"},
    {"partition loss=1%", "RG_FI_PLAN:1: partition does not take key 'loss'"},
    /* call sites */
    {"sites rank=1", "RG_FI_PLAN:1: sites does not take key 'rank'"},
    {"error site=librailguard.so", "RG_FI_PLAN:1: site needs OBJECT+0xOFFSET 'librailguard.so'"},
    {"error site=+0x12", "RG_FI_PLAN:1: site's object name is empty '+0x12'"},
    {"error site=/a/b/+0x12", "RG_FI_PLAN:1: site's object name is empty '/a/b/+0x12'"},
    {"error site=a.so+0x", "RG_FI_PLAN:1: site's offset is not a 64-bit hex number 'a.so+0x'"},
    {"error site=a.so+0x1g", "RG_FI_PLAN:1: site's offset is not a 64-bit hex number 'a.so+0x1g'"},
    {"error site=a.so+0x12345678901234567",
     "RG_FI_PLAN:1: site's offset is not a 64-bit hex number 'a.so+0x12345678901234567'"},
    {"wire loss=1% site=a.so+0x1", "RG_FI_PLAN:1: wire does not take key 'site'"},
    /* the first error wins, at its own line */
    {"count\ncount\n\nerror nth=1 nth=x\nflsh", "RG_FI_PLAN:4: duplicate key 'nth'"},
};

START_TEST(test_rejects)
{
    const char *msg = parse_bad(bad_cases[_i].text, "RG_FI_PLAN");
    ck_assert_msg(strcmp(msg, bad_cases[_i].msg) == 0, "'%s':\n got  '%s'\n want '%s'",
                  bad_cases[_i].text, msg, bad_cases[_i].msg);
}
END_TEST

START_TEST(test_reject_origin_and_line)
{
    ck_assert_str_eq(parse_bad("flsh", "plan.txt"), "plan.txt:1: unknown fault 'flsh'");
    ck_assert_str_eq(parse_bad("flsh", NULL), "plan:1: unknown fault 'flsh'");
    ck_assert_str_eq(parse_bad("count\n# two\n\n\nstall", "/etc/p"), "/etc/p:5: stall needs ms=");
    /* ';' keeps the line; the message for a rule-level check is at the rule's line. */
    ck_assert_str_eq(parse_bad("count;count;\ncount; nomem", "x"), "x:2: nomem needs verb=");
    /* A control character in the origin cannot split the message either. */
    ck_assert_str_eq(parse_bad("flsh", "a\nb"), "a?b:1: unknown fault 'flsh'");
}
END_TEST

START_TEST(test_reject_overlong_token)
{
    char text[600] = "error dev=";
    memset(text + strlen(text), 'x', 400);

    const char *msg = parse_bad(text, "RG_FI_PLAN");
    ck_assert_msg(strncmp(msg, "RG_FI_PLAN:1: token too long 'dev=xxxx", 38) == 0, "%s", msg);
    ck_assert_msg(strstr(msg, "x...'") != NULL, "%s", msg);
    ck_assert_uint_lt(strlen(msg), 120);

    memset(text, 'e', 500);
    text[500] = '\0';
    ck_assert_ptr_nonnull(strstr(parse_bad(text, "o"), "o:1: token too long 'eeee"));

    /* A long number is refused as too large, not read modulo 2^64. */
    snprintf(text, sizeof(text), "error nth=1%0200d", 0);
    ck_assert_ptr_nonnull(strstr(parse_bad(text, "o"), "number too large '1000"));
    /* ...but zeros in front do not change a small one. */
    snprintf(text, sizeof(text), "error nth=%050d", 7);
    ck_assert_uint_eq(one_rule(text).nth, 7);
}
END_TEST

START_TEST(test_reject_without_room)
{
    struct fi_plan p;
    char err[8];

    ck_assert_int_eq(fi_plan_parse("flsh", "RG_FI_PLAN", &p, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "RG_FI_P");
    ck_assert_int_eq(fi_plan_parse("flsh", "RG_FI_PLAN", &p, NULL, 0), -1);
    ck_assert_int_eq(fi_plan_parse("flsh", "RG_FI_PLAN", &p, err, 0), -1);
    ck_assert_int_eq(fi_plan_parse("error", "RG_FI_PLAN", NULL, err, sizeof(err)), -1);
    /* A success clears an old message. */
    ck_assert_int_eq(fi_plan_parse("error", "RG_FI_PLAN", &p, err, sizeof(err)), 0);
    ck_assert_str_eq(err, "");
}
END_TEST

/* Random bytes and grammar fragments: every answer is a plan or one message, never a crash. */
START_TEST(test_never_crashes)
{
    static const char *const frags[] = {
        "error", "stall", "nomem", "swap_rails", "count", " ", "\t", ";", "\n", "#", "=",
        "ms=",   "nth=",  "perm=", "qp=#",       "0x",    "1", ",",  "9", "-",  ".", "prob=0.",
    };
    uint64_t s = 0x1234567u;
    char text[400], err[128];
    struct fi_plan p;

    for (int iter = 0; iter < 20000; iter++) {
        size_t len = 0;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int parts = (int)((s >> 33) % 40);
        for (int k = 0; k < parts && len < sizeof(text) - 16; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t r = (uint32_t)(s >> 32);
            if (r % 4 == 0) {
                text[len++] = (char)(1 + (r >> 8) % 255); /* any byte but NUL */
            } else {
                const char *f = frags[(r >> 8) % (sizeof(frags) / sizeof(frags[0]))];
                memcpy(text + len, f, strlen(f));
                len += strlen(f);
            }
        }
        text[len] = '\0';
        int rc = fi_plan_parse(text, "fz", &p, err, sizeof(err));
        if (rc == 0) {
            ck_assert_int_le(p.nrules, FI_MAX_RULES);
            ck_assert_str_eq(err, "");
        } else {
            ck_assert_int_eq(rc, -1);
            ck_assert_msg(strncmp(err, "fz:", 3) == 0, "'%s'", err);
            for (const char *c = err; *c; c++)
                ck_assert_msg((unsigned char)*c >= 0x20 && *c != 0x7f, "control char in '%s'", err);
        }
    }
}
END_TEST

/* --- names --------------------------------------------------------------------------------- */

START_TEST(test_kind_names_round_trip)
{
    static const char *const want[FI_KIND_MAX] = {
        "error",     "negpoll",    "stall", "delay",     "delay_first", "lose",  "nomem",
        "corrupt",   "swap_rails", "count", "late",      "kill",        "stop",  "exit",
        "ownership", "trace",      "wire",  "link_down", "partition",   "sites", "uc_as_rc",
    };
    for (int k = 0; k < FI_KIND_MAX; k++) {
        ck_assert_str_eq(fi_kind_name((enum fi_kind)k), want[k]);
        char text[64];
        const char *extra = k == FI_STALL || k == FI_DELAY || k == FI_DELAY_FIRST || k == FI_LATE
                                ? " ms=1"
                            : k == FI_NOMEM ? " verb=reg_mr"
                            : k == FI_WIRE  ? " loss=1%"
                                            : "";
        snprintf(text, sizeof(text), "%s%s", want[k], extra);
        ck_assert_int_eq(one_rule(text).kind, k);
    }
    ck_assert_str_eq(fi_kind_name(FI_KIND_MAX), "?");
    ck_assert_str_eq(fi_kind_name((enum fi_kind) - 1), "?");
}
END_TEST

START_TEST(test_op_and_verb_names)
{
    static const char *const ops[] = {"any", "send", "recv", "write", "read", "atomic"};
    static const char *const verbs[] = {"none",      "post_send", "post_recv", "reg_mr",
                                        "create_qp", "create_cq", "alloc_pd"};

    for (int i = 0; i < 6; i++)
        ck_assert_str_eq(fi_op_name((enum fi_op)i), ops[i]);
    ck_assert_str_eq(fi_op_name((enum fi_op)6), "?");
    for (int i = 0; i < 7; i++)
        ck_assert_str_eq(fi_verb_name((enum fi_verb)i), verbs[i]);
    ck_assert_str_eq(fi_verb_name((enum fi_verb)7), "?");
    ck_assert_int_eq(FI_OP_ATOMIC, 5);
    ck_assert_int_eq(FI_VERB_ALLOC_PD, 6);
}
END_TEST

START_TEST(test_status_names)
{
    ck_assert_str_eq(fi_status_name(IBV_WC_WR_FLUSH_ERR), "WR_FLUSH_ERR");
    ck_assert_str_eq(fi_status_name(5), "WR_FLUSH_ERR");
    ck_assert_str_eq(fi_status_name(0), "SUCCESS");
    ck_assert_str_eq(fi_status_name(IBV_WC_GENERAL_ERR), "GENERAL_ERR");
    ck_assert_str_eq(fi_status_name(IBV_WC_TM_RNDV_INCOMPLETE), "TM_RNDV_INCOMPLETE");
    ck_assert_ptr_null(fi_status_name(-1));
    ck_assert_ptr_null(fi_status_name(IBV_WC_TM_RNDV_INCOMPLETE + 1));

    /* Every status but SUCCESS (refused: it injects nothing): name, prefixed name, lower case
     * and number all parse back to it. */
    for (int st = IBV_WC_SUCCESS + 1; st <= IBV_WC_TM_RNDV_INCOMPLETE; st++) {
        const char *name = fi_status_name(st);
        ck_assert_ptr_nonnull(name);
        char lower[64], text[128];
        size_t i;
        for (i = 0; name[i] && i < sizeof(lower) - 1; i++)
            lower[i] = (char)tolower((unsigned char)name[i]);
        lower[i] = '\0';

        snprintf(text, sizeof(text), "error status=%s", name);
        ck_assert_int_eq(one_rule(text).status, st);
        snprintf(text, sizeof(text), "error status=IBV_WC_%s", name);
        ck_assert_int_eq(one_rule(text).status, st);
        snprintf(text, sizeof(text), "error status=ibv_wc_%s", lower);
        ck_assert_int_eq(one_rule(text).status, st);
        snprintf(text, sizeof(text), "error status=%d", st);
        ck_assert_int_eq(one_rule(text).status, st);
    }
}
END_TEST

/* --- the trigger --------------------------------------------------------------------------- */

/* Which of n = 1..64 fire, as a bit mask, counting fires as the shim would. */
static uint64_t fire_mask(const char *text)
{
    struct fi_rule r = one_rule(text);
    uint64_t mask = 0, fired = 0;

    for (uint64_t n = 1; n <= 64; n++)
        if (fi_rule_fires(&r, 0, n, fired)) {
            mask |= 1ull << (n - 1);
            fired++;
        }
    return mask;
}

#define BIT(n) (1ull << ((n)-1))

START_TEST(test_fires_plain)
{
    ck_assert_uint_eq(fire_mask("error"), UINT64_MAX);
    ck_assert_uint_eq(fire_mask("error count=3"), BIT(1) | BIT(2) | BIT(3));
}
END_TEST

START_TEST(test_fires_nth)
{
    ck_assert_uint_eq(fire_mask("error nth=1"), BIT(1));
    ck_assert_uint_eq(fire_mask("error nth=5"), BIT(5));
    ck_assert_uint_eq(fire_mask("error nth=5 count=3"), BIT(5)); /* nth alone means once */
    ck_assert_uint_eq(fire_mask("error nth=65"), 0);

    struct fi_rule r = one_rule("error nth=5");
    ck_assert(fi_rule_fires(&r, 0, 5, 0));
    ck_assert(!fi_rule_fires(&r, 0, 5, 1)); /* it fired already */
    ck_assert(!fi_rule_fires(&r, 0, 4, 0));
    ck_assert(!fi_rule_fires(&r, 0, 0, 0)); /* n counts from 1 */
}
END_TEST

START_TEST(test_fires_every)
{
    uint64_t want = 0;
    for (int n = 4; n <= 64; n += 4)
        want |= BIT(n);
    ck_assert_uint_eq(fire_mask("error every=4"), want);
    ck_assert_uint_eq(fire_mask("error every=1"), UINT64_MAX);
    ck_assert_uint_eq(fire_mask("error every=4 count=2"), BIT(4) | BIT(8));

    want = 0;
    for (int n = 3; n <= 64; n += 10)
        want |= BIT(n);
    ck_assert_uint_eq(fire_mask("error nth=3 every=10"), want);
    ck_assert_uint_eq(fire_mask("error nth=3 every=10 count=3"), BIT(3) | BIT(13) | BIT(23));
    ck_assert_uint_eq(fire_mask("error nth=60 every=1"),
                      BIT(60) | BIT(61) | BIT(62) | BIT(63) | BIT(64));

    /* Far out, no overflow in the arithmetic. */
    struct fi_rule r = one_rule("error every=0x8000000000000000");
    ck_assert(fi_rule_fires(&r, 0, 0x8000000000000000ull, 0));
    ck_assert(!fi_rule_fires(&r, 0, UINT64_MAX, 0));
}
END_TEST

START_TEST(test_fires_prob)
{
    /* prob=1 fires at every event; prob thins out the events the other triggers pick. */
    ck_assert_uint_eq(fire_mask("error prob=1"), UINT64_MAX);
    uint64_t m = fire_mask("error every=2 prob=0.5 seed=3");
    ck_assert_uint_eq(m & 0x5555555555555555ull, 0);
    ck_assert_uint_ne(m, 0);
    ck_assert_uint_ne(m, 0xaaaaaaaaaaaaaaaaull);
    ck_assert_uint_eq(__builtin_popcountll(fire_mask("error prob=0.5 seed=3 count=4")), 4);

    /* About P of all events, over 10000 of them. */
    static const double ps[] = {0.01, 0.25, 0.5, 0.9};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        struct fi_rule r = one_rule("error prob=0.5 seed=42");
        r.prob = ps[i];
        int fires = 0;
        for (uint64_t n = 1; n <= 10000; n++)
            fires += fi_rule_fires(&r, 2, n, 0);
        double rate = fires / 10000.0;
        ck_assert_msg(rate > ps[i] - 0.03 && rate < ps[i] + 0.03, "p %.2f: rate %.4f", ps[i], rate);
    }
}
END_TEST

START_TEST(test_draw_deterministic)
{
    /* Same inputs, same draw; the seed, the rule index and n each change it. */
    int same_seed = 0, other_seed = 0, other_idx = 0;
    for (uint64_t n = 1; n <= 1000; n++) {
        double d = fi_draw(7, 1, n);
        ck_assert(d >= 0.0 && d < 1.0);
        same_seed += d == fi_draw(7, 1, n);
        other_seed += d != fi_draw(8, 1, n);
        other_idx += d != fi_draw(7, 2, n);
        ck_assert(d != fi_draw(7, 1, n + 1));
    }
    ck_assert_int_eq(same_seed, 1000);
    ck_assert_int_ge(other_seed, 999);
    ck_assert_int_ge(other_idx, 999);

    /* Two rules with the same seed and index fire on the same events; another seed does not. */
    struct fi_rule a = one_rule("error prob=0.3 seed=11"), b = a, c = one_rule("error prob=0.3");
    int differ = 0;
    for (uint64_t n = 1; n <= 1000; n++) {
        ck_assert_int_eq(fi_rule_fires(&a, 0, n, 0), fi_rule_fires(&b, 0, n, 0));
        differ += fi_rule_fires(&a, 0, n, 0) != fi_rule_fires(&c, 0, n, 0);
    }
    ck_assert_int_gt(differ, 100);

    /*
     * Pinned values: a plan recorded with a seed must fire on the same events after any
     * rebuild, on any machine, so the hash may never change silently.
     */
    ck_assert(fi_draw(0, 0, 1) == 0x1.5a2a6c2c68bp-2);
    ck_assert(fi_draw(42, 3, 1000) == 0x1.7495a3c28f932p-2);
    ck_assert(fi_draw(UINT64_MAX, -1, UINT64_MAX) == 0x1.f336018cddb08p-2);
}
END_TEST

/* Draw means and low bits: no bias a 1% or 50% rule would notice. */
START_TEST(test_draw_uniform)
{
    int buckets[10] = {0};
    for (uint64_t n = 1; n <= 100000; n++) {
        double d = fi_draw(5, 0, n);
        buckets[(int)(d * 10)]++;
    }
    for (int b = 0; b < 10; b++)
        ck_assert_msg(buckets[b] > 9400 && buckets[b] < 10600, "bucket %d: %d", b, buckets[b]);

    /* Successive seeds are as independent as successive events. */
    int below = 0;
    for (uint64_t s = 0; s < 10000; s++)
        below += fi_draw(s, 0, 1) < 0.5;
    ck_assert_msg(below > 4700 && below < 5300, "%d", below);
}
END_TEST

Suite *rg_suite_fi_plan(void)
{
    Suite *s = suite_create("fi_plan");

    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_error_defaults);
    tcase_add_test(tc, test_error_status_forms);
    tcase_add_test(tc, test_negpoll);
    tcase_add_test(tc, test_stall_delay);
    tcase_add_test(tc, test_lose);
    tcase_add_test(tc, test_nomem_verbs);
    tcase_add_test(tc, test_corrupt);
    tcase_add_test(tc, test_swap_rails);
    tcase_add_test(tc, test_count);
    tcase_add_test(tc, test_late);
    tcase_add_test(tc, test_kill_stop);
    tcase_add_test(tc, test_exit);
    tcase_add_test(tc, test_wire);
    tcase_add_test(tc, test_phase_filters);
    tcase_add_test(tc, test_filters);
    tcase_add_test(tc, test_trigger_keys);
    tcase_add_test(tc, test_several_rules);
    tcase_add_test(tc, test_empty_plans);
    tcase_add_test(tc, test_max_rules);
    suite_add_tcase(s, tc);

    tc = tcase_create("rejects");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_rejects, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
    tcase_add_test(tc, test_reject_origin_and_line);
    tcase_add_test(tc, test_reject_overlong_token);
    tcase_add_test(tc, test_reject_without_room);
    tcase_add_test(tc, test_never_crashes);
    suite_add_tcase(s, tc);

    tc = tcase_create("names");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_kind_names_round_trip);
    tcase_add_test(tc, test_op_and_verb_names);
    tcase_add_test(tc, test_status_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("trigger");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_fires_plain);
    tcase_add_test(tc, test_fires_nth);
    tcase_add_test(tc, test_fires_every);
    tcase_add_test(tc, test_fires_prob);
    tcase_add_test(tc, test_draw_deterministic);
    tcase_add_test(tc, test_draw_uniform);
    tcase_add_test(tc, test_rule_source_span);
    suite_add_tcase(s, tc);
    return s;
}
