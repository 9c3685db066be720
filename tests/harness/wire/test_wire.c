/* SPDX-License-Identifier: MIT */
/*
 * Wire faults without a network (harness/wire/rg_wire.h, evidence/rg_ev_wire.c): the rules into
 * actions on the right devices, once a device however many ranks share it; netem's words; the
 * actions done on time and undone at the end, against a fake system that records each call;
 * the evidence they leave read back into the same fired and matched counts as the shim's, a
 * failed action and an unreadable line named, never skipped.
 */
#include "common/rg_check.h"
#include "evidence/rg_evidence.h"
#include "scenario/rg_scenario.h"
#include "wire/rg_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- a fake system: each call recorded, the counters set by the test ------------------------ */

static char g_calls[4096];
static rg_wire_counts g_counts;
static bool g_fail_netem;

/* "WHAT A[ B];" appended to the calls. */
static void called(const char *what, const char *a, const char *b)
{
    size_t n = strlen(g_calls);
    snprintf(g_calls + n, sizeof(g_calls) - n, "%s %s%s%s;", what, a, b ? " " : "", b ? b : "");
}

static int f_netdev_of(const char *dev, char *netdev, size_t len, char *why, size_t whylen)
{
    if (!strcmp(dev, "mlx5_0")) {
        snprintf(why, whylen, "no network device under it");
        return -1;
    }
    snprintf(netdev, len, "eth-%s", dev);
    return 0;
}

static int f_netem_on(const char *netdev, const char *spec, char *why, size_t whylen)
{
    called("on", netdev, spec);
    if (g_fail_netem) {
        snprintf(why, whylen, "tc qdisc add dev %s root netem: exit status 2", netdev);
        return -1;
    }
    return 0;
}

static int f_netem_off(const char *netdev, char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    called("off", netdev, NULL);
    return 0;
}

static int f_netem_clean(const char *netdev, char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    called("clean", netdev, NULL);
    return 0;
}

static int f_link(const char *netdev, bool up, char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    called(up ? "up" : "down", netdev, NULL);
    g_counts.up = up;
    g_counts.carrier_changes++;
    return 0;
}

static int f_counts(const char *netdev, rg_wire_counts *c, char *why, size_t whylen)
{
    (void)netdev;
    (void)why;
    (void)whylen;
    *c = g_counts;
    return 0;
}

static rg_wire_nic g_nic;

static int f_nic(const char *dev, rg_wire_nic *n, char *why, size_t whylen)
{
    (void)dev;
    if (g_nic.rcvd_pkts < 0) {
        snprintf(why, whylen, "no hw_counters");
        return -1;
    }
    *n = g_nic;
    return 0;
}

static const rg_wire_sys fake = {.netdev_of = f_netdev_of,
                                 .netem_on = f_netem_on,
                                 .netem_off = f_netem_off,
                                 .netem_clean = f_netem_clean,
                                 .link = f_link,
                                 .counts = f_counts,
                                 .nic = f_nic};

static const char g_devs[2][64] = {"rxe0", "rxe1"};

static void load(const char *text, rg_scenario *sc)
{
    char err[512];
    ck_assert_msg(rg_scenario_parse(text, strlen(text), "w.yaml", sc, err, sizeof(err)) == 0, "%s",
                  err);
}

static char *tmpdir(void)
{
    static char dir[64];
    snprintf(dir, sizeof(dir), "%s/wire-XXXXXX", rg_check_tmpdir()); /* removed at the run's end */
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

/* A file's text (at most len - 1 bytes). */
static void read_text(const char *path, char *text, size_t len)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(text, 1, len - 1, f);
    fclose(f);
    text[got] = '\0';
}

/* netem's words, as tc takes them. */
START_TEST(test_spec)
{
    struct fi_plan p;
    char err[200], spec[200];
    ck_assert_int_eq(fi_plan_parse("wire loss=1% delay=5 jitter=2 reorder=25% duplicate=0.5% "
                                   "corrupt=0.000001%",
                                   "", &p, err, sizeof(err)),
                     0);
    rg_wire_spec(&p.rules[0], spec, sizeof(spec));
    ck_assert_str_eq(spec, "loss 1% delay 5ms 2ms reorder 25% duplicate 0.5% corrupt 0.000001%");
    ck_assert_int_eq(fi_plan_parse("wire delay=40", "", &p, err, sizeof(err)), 0);
    rg_wire_spec(&p.rules[0], spec, sizeof(spec));
    ck_assert_str_eq(spec, "delay 40ms");
    int64_t sent = -1, drop = -1;
    ck_assert_int_eq(rg_wire_parse_qdisc("qdisc netem 8001: root refcnt 2 limit 1000 loss 1%\n"
                                         " Sent 1309200 bytes 10373 pkt (dropped 101, overlimits "
                                         "0 requeues 0)\n backlog 0b 0p requeues 0\n",
                                         &sent, &drop),
                     0);
    ck_assert(sent == 10373 && drop == 101);
    ck_assert_int_eq(rg_wire_parse_qdisc("qdisc mq 0: root\n Sent 5 bytes 1 pkt (dropped 0, "
                                         "overlimits 0 requeues 0)\n",
                                         &sent, &drop),
                     -1);
}
END_TEST

/*
 * The plan: a rule for every rank and rail acts once a device (two local ranks share rxe0);
 * rank= and rail= narrow it; a partition is every rail of its rank; two netem rules on one
 * device at once are refused, apart in time they are not; a device with no network device
 * under it is named.
 */
START_TEST(test_plan)
{
    static rg_scenario sc;
    static rg_wire w;
    char err[600];
    load("ranks: 2\nrails: 2\nqp: rc\nprogram: [{op: barrier}]\nfaults:\n"
         "  - wire loss=1% before=500\n  - link_down rank=1 rail=1 after=200 up=100\n"
         "  - partition rank=0 after=900\n  - error nth=1\n  - wire delay=5 rail=0 after=600\n",
         &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 2, tmpdir(), err, sizeof(err)), 0);
    ck_assert_int_eq(w.n, 2 + 1 + 2 + 1);
    ck_assert(w.act[0].rule == 0 && w.act[0].rank == 0 && w.act[0].rail == 0);
    ck_assert_str_eq(w.act[0].netdev, "eth-rxe0");
    ck_assert_str_eq(w.act[0].spec, "loss 1%");
    ck_assert(w.act[0].on_s == 0 && w.act[0].off_s == 0.5);
    ck_assert_str_eq(w.act[1].netdev, "eth-rxe1");
    ck_assert(w.act[2].rule == 1 && w.act[2].kind == FI_LINK_DOWN && w.act[2].rank == 1);
    ck_assert_str_eq(w.act[2].netdev, "eth-rxe1");
    ck_assert(w.act[2].on_s == 0.2 && w.act[2].off_s > 0.2999 && w.act[2].off_s < 0.3001);
    ck_assert(w.act[3].rule == 2 && w.act[4].rule == 2 && w.act[3].off_s < 0);
    ck_assert(w.act[5].rule == 4 && w.act[5].on_s == 0.6);
    /* An external rank plans its own alone. */
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 1, 2, g_devs, 2, tmpdir(), err, sizeof(err)), 0);
    ck_assert_int_eq(w.n, 2 + 1 + 1);
    ck_assert(w.act[0].rank == 1 && w.act[3].rule == 4);
    /* A second attempt's scaled times. */
    rg_scenario_scale(&sc, 4);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 2, tmpdir(), err, sizeof(err)), 0);
    ck_assert(w.act[0].off_s == 2.0 && w.act[2].on_s == 0.8);
    load("ranks: 2\nprogram: [{op: barrier}]\nfaults: ['wire loss=1%', 'wire delay=3 after=10']\n",
         &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 1, tmpdir(), err, sizeof(err)), -1);
    ck_assert_str_eq(err, "faults items 1 and 2: two wire rules on rxe0 (eth-rxe0) at once; netem "
                          "holds one a device: give them after=/before= windows apart, or one "
                          "rule");
    load("ranks: 2\nprogram: [{op: barrier}]\n"
         "faults: ['wire loss=1% before=10', 'wire delay=3 after=10']\n",
         &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 1, tmpdir(), err, sizeof(err)), 0);
    static const char hw[1][64] = {"mlx5_0"};
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, hw, 1, tmpdir(), err, sizeof(err)), -1);
    ck_assert_str_eq(err, "faults item 1: rank 0 rail 0 (mlx5_0): no network device under it");
    /* No wire rule: nothing to do -- but an earlier run's wire evidence in the same directory
     * is gone, for the ranks planned here only, so it is never read as this run's. */
    const char *dir = tmpdir();
    char path[200];
    for (int r = 0; r < 3; r++) {
        snprintf(path, sizeof(path), "%s/rank%d.wire.jsonl", dir, r);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs("{\"event\":\"wire_on\",\"rule\":0,\"mono_ms\":1}\n", f);
        fclose(f);
    }
    load("ranks: 2\nprogram: [{op: barrier}]\nfaults: ['lose nth=1']\n", &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 1, 2, g_devs, 1, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(w.n, 0);
    snprintf(path, sizeof(path), "%s/rank0.wire.jsonl", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/rank1.wire.jsonl", dir);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 1, tmpdir(), err, sizeof(err)), 0);
    ck_assert_int_eq(w.n, 0);
    ck_assert_double_eq(rg_wire_tick(&w, 0, NULL), -1);
}
END_TEST

/*
 * On time and undone: each action when its time comes, the next one's wait said, everything
 * still on undone at the end; the evidence read back: loss fired by its drops, a delay by its
 * packets, a link by the device saying down; the first fault the first action; a failed
 * action named.
 */
START_TEST(test_tick_and_evidence)
{
    static rg_scenario sc;
    static rg_wire w;
    static rg_evidence ev;
    char err[600], path[200];
    const char *dir = tmpdir();
    load("ranks: 2\nrails: 2\nqp: rc\nprogram: [{op: barrier}]\nfaults:\n"
         "  - wire loss=1% rail=0 before=500\n  - link_down rail=1 after=200 up=100\n"
         "  - wire delay=5 rail=1 after=1000\n",
         &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 2, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(w.n, 3);
    w.t0 = 100.0;
    g_calls[0] = '\0';
    g_counts = (rg_wire_counts){.sent_pkts = 0, .dropped = 0, .carrier_changes = 4, .up = true};
    g_fail_netem = false;
    g_nic = (rg_wire_nic){.rcvd_pkts = 500, .dup = 2, .oos = 9};
    ck_assert_double_eq_tol(rg_wire_tick(&w, 0, NULL), 0.2, 1e-9);
    ck_assert_str_eq(g_calls, "on eth-rxe0 loss 1%;");
    ck_assert_double_eq_tol(rg_wire_tick(&w, 0.1, NULL), 0.1, 1e-9);
    ck_assert_double_eq_tol(rg_wire_tick(&w, 0.25, NULL), 0.05, 1e-9);
    ck_assert_str_eq(g_calls, "on eth-rxe0 loss 1%;down eth-rxe1;");
    g_counts.sent_pkts = 10373;
    g_counts.dropped = 101;
    /* The device took in 10000 packets meanwhile, 7 of them duplicates, 30 early. */
    g_nic = (rg_wire_nic){.rcvd_pkts = 10500, .dup = 9, .oos = 39};
    rg_wire_tick(&w, 0.31, NULL);
    ck_assert_str_eq(g_calls, "on eth-rxe0 loss 1%;down eth-rxe1;up eth-rxe1;");
    ck_assert_double_eq_tol(rg_wire_tick(&w, 0.6, NULL), 0.4, 1e-9);
    ck_assert_str_eq(g_calls,
                     "on eth-rxe0 loss 1%;down eth-rxe1;up eth-rxe1;clean eth-rxe0;off eth-rxe0;");
    /* The third never came: the run ended first. */
    rg_wire_end(&w, 0.9);
    ck_assert_str_eq(g_calls,
                     "on eth-rxe0 loss 1%;down eth-rxe1;up eth-rxe1;clean eth-rxe0;off eth-rxe0;");

    snprintf(path, sizeof(path), "%s/rank0.events.jsonl", dir);
    ck_assert_int_eq(rg_evidence_read(path, &ev, err, sizeof(err)), 0); /* none: cleared */
    snprintf(path, sizeof(path), "%s/rank0.wire.jsonl", dir);
    ck_assert_int_eq(rg_evidence_read_wire(path, &ev, err, sizeof(err)), 0);
    ck_assert_int_eq(ev.bad_lines, 0);
    ck_assert_uint_eq(ev.fired[0], 101);
    ck_assert_int_eq(ev.matched[0], 10373 + 101);
    ck_assert_uint_eq(ev.fired[1], 1);
    ck_assert_int_eq(ev.matched[1], 1);
    ck_assert_uint_eq(ev.fired[2], 0);
    ck_assert_int_eq(ev.matched[2], -1);
    ck_assert(ev.rx_pkts[0] == 10000 && ev.rx_dup[0] == 7 && ev.rx_oos[0] == 30);
    ck_assert(ev.rx_pkts[1] == -1 && ev.rx_dup[1] == -1 && ev.rx_oos[1] == -1);
    ck_assert_int_eq(ev.first_fault_rule, 0);
    ck_assert_double_eq_tol(ev.first_fault_mono_ms, 100000.0, 1e-6);
    ck_assert_str_eq(ev.wire_failed, "");

    /* A netem that cannot be put in place: named, and nothing to undo. */
    dir = tmpdir();
    load("ranks: 2\nprogram: [{op: barrier}]\nfaults: ['wire delay=5']\n", &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 1, dir, err, sizeof(err)), 0);
    g_fail_netem = true;
    g_calls[0] = '\0';
    rg_wire_tick(&w, 0, NULL);
    rg_wire_end(&w, 1);
    ck_assert_str_eq(g_calls, "on eth-rxe0 delay 5ms;");
    snprintf(path, sizeof(path), "%s/rank0.events.jsonl", dir);
    rg_evidence_read(path, &ev, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/rank0.wire.jsonl", dir);
    ck_assert_int_eq(rg_evidence_read_wire(path, &ev, err, sizeof(err)), 0);
    ck_assert_str_eq(
        ev.wire_failed,
        "faults item 1: netem on: tc qdisc add dev eth-rxe0 root netem: exit status 2");
    ck_assert_uint_eq(ev.fired[0], 0);
    /* A line not as the runner writes it is counted and named: a negative count, no such
     * event, receive counters short of one or negative. */
    FILE *f = fopen(path, "a");
#define OFF                                                                                        \
    "{\"event\":\"wire_off\",\"rule\":0,\"rank\":0,\"rail\":0,\"dev\":\"rxe0\","                   \
    "\"netdev\":\"eth-rxe0\",\"mono_ms\":5,\"t_ms\":5,\"spec\":\"delay 5ms\",\"loss\":false,"
    fputs(OFF "\"sent_pkts\":-3,\"dropped\":1}\n"
              "{\"event\":\"bogus\",\"rule\":0}\n" OFF
              "\"sent_pkts\":3,\"dropped\":1,\"rx_pkts\":5,\"rx_dup\":0}\n" OFF
              "\"sent_pkts\":3,\"dropped\":1,\"rx_pkts\":5,\"rx_dup\":0,\"rx_oos\":-1}\n",
          f);
#undef OFF
    fclose(f);
    snprintf(path, sizeof(path), "%s/rank0.events.jsonl", dir);
    rg_evidence_read(path, &ev, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/rank0.wire.jsonl", dir);
    ck_assert_int_eq(rg_evidence_read_wire(path, &ev, err, sizeof(err)), 0);
    ck_assert_int_eq(ev.bad_lines, 4);
    ck_assert_msg(strstr(ev.unreadable, "rank0.wire.jsonl: line 2: "), "%s", ev.unreadable);
    ck_assert_uint_eq(ev.fired[0], 0);
    ck_assert_int_eq(ev.rx_pkts[0], -1);
    g_fail_netem = false;

    /* Receive counters that went back while the rule was on (the device was made anew), and
     * a device that keeps none: no "rx", and why. */
    dir = tmpdir();
    load("ranks: 2\nrails: 2\nprogram: [{op: barrier}]\nfaults: ['wire duplicate=1% rail=0', "
         "'wire delay=5 rail=1']\n",
         &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 2, dir, err, sizeof(err)), 0);
    g_nic = (rg_wire_nic){.rcvd_pkts = 500, .dup = 2, .oos = 9};
    rg_wire_tick(&w, 0, NULL);
    g_nic = (rg_wire_nic){.rcvd_pkts = 20, .dup = 0, .oos = 0};
    g_counts.sent_pkts = 40;
    rg_wire_end(&w, 1);
    snprintf(path, sizeof(path), "%s/rank0.events.jsonl", dir);
    rg_evidence_read(path, &ev, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/rank0.wire.jsonl", dir);
    ck_assert_int_eq(rg_evidence_read_wire(path, &ev, err, sizeof(err)), 0);
    ck_assert_int_eq(ev.bad_lines, 0);
    ck_assert_uint_eq(ev.fired[0], 40);
    ck_assert(ev.rx_pkts[0] == -1 && ev.rx_pkts[1] == -1);
    char text[4096];
    read_text(path, text, sizeof(text));
    ck_assert_msg(strstr(text, "\"rx_why\":\"rxe0's counters went back while the rule was on\""),
                  "%s", text);
    /* When the wire really went clean, beside when the rule said it would. */
    ck_assert_msg(strstr(text, "\"clean_t_ms\":"), "%s", text);
    g_nic = (rg_wire_nic){.rcvd_pkts = -1, .dup = -1, .oos = -1};
    dir = tmpdir();
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 2, dir, err, sizeof(err)), 0);
    rg_wire_tick(&w, 0, NULL);
    rg_wire_end(&w, 1);
    snprintf(path, sizeof(path), "%s/rank0.wire.jsonl", dir);
    read_text(path, text, sizeof(text));
    ck_assert_msg(strstr(text, "\"rx_why\":\"no hw_counters\""), "%s", text);
    /* rank=: only that rank's egress is impaired, so its own device is no receiver of it. */
    g_nic = (rg_wire_nic){.rcvd_pkts = 500, .dup = 2, .oos = 9};
    dir = tmpdir();
    load("ranks: 2\nprogram: [{op: barrier}]\nfaults: ['wire duplicate=1% rank=1']\n", &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 1, dir, err, sizeof(err)), 0);
    rg_wire_tick(&w, 0, NULL);
    rg_wire_end(&w, 1);
    snprintf(path, sizeof(path), "%s/rank1.wire.jsonl", dir);
    read_text(path, text, sizeof(text));
    ck_assert_msg(strstr(text, "\"rx_why\":\"rank=: the receivers are its peers") &&
                      !strstr(text, "\"rx\":"),
                  "%s", text);
}
END_TEST

/*
 * A link taken down when its rank starts a step, up again up= later, and a netem cut the same
 * way; nothing before the step, whatever the time; and a wire rule anchored to a step is held to
 * overlap every other.
 */
START_TEST(test_step_anchored)
{
    static rg_scenario sc;
    static rg_wire w;
    char err[600];
    load("ranks: 2\nqp: rc\nprogram: [{op: barrier}, {op: barrier}, {op: barrier}]\nfaults:\n"
         "  - link_down rank=1 rail=0 step=2 up=150\n",
         &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 1, tmpdir(), err, sizeof(err)), 0);
    ck_assert_int_eq(w.n, 1);
    g_calls[0] = '\0';
    g_counts = (rg_wire_counts){.sent_pkts = -1, .dropped = -1, .carrier_changes = 0, .up = true};
    int steps[RG_MAX_RANKS] = {2, 1};
    ck_assert_double_eq(rg_wire_tick(&w, 5.0, steps), -1); /* rank 1 is in step 1 */
    ck_assert_str_eq(g_calls, "");
    steps[1] = 2;
    ck_assert_double_eq_tol(rg_wire_tick(&w, 6.0, steps), 0.15, 1e-9);
    ck_assert_str_eq(g_calls, "down eth-rxe0;");
    rg_wire_tick(&w, 6.2, steps);
    ck_assert_str_eq(g_calls, "down eth-rxe0;up eth-rxe0;");
    rg_wire_end(&w, 7);
    /* A netem cut at a step for up= ms: traffic's own time, not the clock's. */
    load("ranks: 2\nqp: rc\nprogram: [{op: barrier}, {op: barrier}]\nfaults:\n"
         "  - wire loss=100% rank=1 rail=0 step=1 up=100\n",
         &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 1, tmpdir(), err, sizeof(err)), 0);
    ck_assert_int_eq(w.n, 1);
    g_calls[0] = '\0';
    g_fail_netem = false;
    int at[RG_MAX_RANKS] = {1, 0};
    ck_assert_double_eq(rg_wire_tick(&w, 9.0, at), -1); /* rank 1 is in step 0 */
    ck_assert_str_eq(g_calls, "");
    at[1] = 1;
    ck_assert_double_eq_tol(rg_wire_tick(&w, 9.5, at), 0.1, 1e-9);
    ck_assert_str_eq(g_calls, "on eth-rxe0 loss 100%;");
    ck_assert_double_eq_tol(rg_wire_tick(&w, 9.55, at), 0.05, 1e-9);
    rg_wire_tick(&w, 9.6, at);
    ck_assert_str_eq(g_calls, "on eth-rxe0 loss 100%;clean eth-rxe0;off eth-rxe0;");
    rg_wire_end(&w, 10);
    load("ranks: 2\nprogram: [{op: barrier}, {op: barrier}]\n"
         "faults: ['wire loss=1% before=10', 'wire delay=3 step=1']\n",
         &sc);
    ck_assert_int_eq(rg_wire_plan(&w, &fake, &sc, 0, 2, g_devs, 1, tmpdir(), err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "faults items 1 and 2: two wire rules on rxe0"), "%s", err);
}
END_TEST

Suite *rg_suite_wire(void)
{
    Suite *s = suite_create("wire");
    TCase *t = tcase_create("wire");
    tcase_add_test(t, test_spec);
    tcase_add_test(t, test_plan);
    tcase_add_test(t, test_tick_and_evidence);
    tcase_add_test(t, test_step_anchored);
    suite_add_tcase(s, t);
    return s;
}
