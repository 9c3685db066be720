/* SPDX-License-Identifier: MIT */
/*
 * Wire faults planned and done on time (rg_wire.h). The system calls are behind rg_wire_sys
 * (rg_wire_sys.c), so this file -- which device, when, netem's words, the evidence lines --
 * is tested without a network.
 */
#include "wire/rg_wire.h"
#include "evidence/rg_ev_wire.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* netem's rates as tc spells them, with the grammar's precision (six decimals of a percent). */
static size_t rate(char *out, size_t len, size_t used, const char *word, double frac)
{
    if (!(frac > 0) || used >= len)
        return used;
    char num[32];
    snprintf(num, sizeof(num), "%.6f", frac * 100.0);
    /* "1.000000" -> "1", "0.500000" -> "0.5" */
    char *end = num + strlen(num);
    while (end > num && end[-1] == '0')
        *--end = '\0';
    if (end > num && end[-1] == '.')
        *--end = '\0';
    return used + (size_t)snprintf(out + used, len - used, "%s%s %s%%", used ? " " : "", word, num);
}

void rg_wire_spec(const struct fi_rule *r, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    used = rate(out, len, used, "loss", r->loss);
    if (r->delay_ms && used < len) {
        used += (size_t)snprintf(out + used, len - used, "%sdelay %" PRIu64 "ms", used ? " " : "",
                                 r->delay_ms);
        if (r->jitter_ms && used < len)
            used += (size_t)snprintf(out + used, len - used, " %" PRIu64 "ms", r->jitter_ms);
    }
    used = rate(out, len, used, "reorder", r->reorder);
    used = rate(out, len, used, "duplicate", r->duplicate);
    rate(out, len, used, "corrupt", r->corrupt_rate);
}

int rg_wire_parse_qdisc(const char *text, int64_t *sent_pkts, int64_t *dropped)
{
    /* "qdisc netem 8001: root refcnt 2 limit 1000 loss 1%\n Sent 5 bytes 3 pkt (dropped 1, ..." */
    const char *q = strstr(text, "qdisc netem ");
    const char *s = q ? strstr(q, " Sent ") : NULL;
    long long bytes, pkts, drop;
    if (!s || sscanf(s, " Sent %lld bytes %lld pkt (dropped %lld,", &bytes, &pkts, &drop) != 3 ||
        pkts < 0 || drop < 0)
        return -1;
    *sent_pkts = pkts;
    *dropped = drop;
    return 0;
}

/* One action more, or -1 past RG_WIRE_MAX. */
static rg_wire_act *add(rg_wire *w, const struct fi_rule *fr, int rule, int kind, int rank,
                        int rail, double on_s, double off_s, char *err, size_t errlen)
{
    if (w->n == RG_WIRE_MAX) {
        snprintf(err, errlen, "faults item %d: more than %d wire actions in one run", rule + 1,
                 RG_WIRE_MAX);
        return NULL;
    }
    rg_wire_act *a = &w->act[w->n++];
    memset(a, 0, sizeof(*a));
    a->rule = rule;
    a->kind = kind;
    a->rank = rank;
    a->rail = rail;
    a->on_s = on_s;
    a->off_s = off_s;
    a->on_step = fr->step >= 0 ? fr->step : -1;
    a->at_on = (rg_wire_counts){.sent_pkts = -1, .dropped = -1, .carrier_changes = -1};
    if (kind == FI_WIRE)
        rg_wire_spec(fr, a->spec, sizeof(a->spec));
    return a;
}

/* Whether two actions' windows overlap (an open end runs to the end of the run; one that
 * starts at a step may start any time). */
static bool overlap(const rg_wire_act *a, const rg_wire_act *b)
{
    if (a->on_step >= 0 || b->on_step >= 0)
        return true;
    double ae = a->off_s < 0 ? INFINITY : a->off_s, be = b->off_s < 0 ? INFINITY : b->off_s;
    return a->on_s < be && b->on_s < ae;
}

int rg_wire_plan(rg_wire *w, const rg_wire_sys *sys, const rg_scenario *sc, int lo, int hi,
                 const char (*devices)[64], int ndev, const char *dir, char *err, size_t errlen)
{
    memset(w, 0, sizeof(*w));
    w->sys = sys;
    snprintf(w->dir, sizeof(w->dir), "%s", dir);
    /* An earlier run into the same directory (an external launch's --out is reused) left its
     * wire evidence: appended to, it would be read as this run's. Gone, wire rules or none. */
    for (int r = lo; r < hi && r < RG_MAX_RANKS; r++) {
        char path[1200];
        snprintf(path, sizeof(path), "%s/rank%d.wire.jsonl", dir, r);
        unlink(path);
    }
    double scale = sc->time_scale > 0 ? sc->time_scale : 1;
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++) {
        if (!fi_kind_wire((enum fi_kind)sc->fault[i].kind))
            continue;
        if (!ndev) {
            snprintf(err, errlen, "wire faults need the ranks' devices, and none were given");
            return -1;
        }
        struct fi_plan one;
        char why[320];
        if (fi_plan_parse(sc->fault[i].rule, "", &one, why, sizeof(why)) != 0 || one.nrules != 1) {
            snprintf(err, errlen, "faults item %d: %s", i + 1, why);
            return -1;
        }
        const struct fi_rule *fr = &one.rules[0];
        int kind = fr->kind == FI_PARTITION ? FI_LINK_DOWN : (int)fr->kind;
        double on_s = (double)fr->after_ms * scale / 1000.0, off_s = -1;
        if (fr->kind == FI_WIRE && fr->before_ms != UINT64_MAX)
            off_s = (double)fr->before_ms * scale / 1000.0;
        /* up=: a link up again, a netem's wire clean again, that long after it went down. */
        if (fr->up_ms)
            off_s = on_s + (double)fr->up_ms * scale / 1000.0;
        double up_s = (double)fr->up_ms * scale / 1000.0;
        if (fr->step >= 0)
            on_s = off_s = -1; /* when its rank gets there */
        for (int r = lo; r < hi; r++) {
            if (fr->rank >= 0 && fr->rank != r)
                continue;
            for (int k = 0; k < ndev && k < sc->rails; k++) {
                if (fr->kind != FI_PARTITION && fr->rail >= 0 && fr->rail != k)
                    continue;
                char netdev[32];
                if (sys->netdev_of(devices[k], netdev, sizeof(netdev), why, sizeof(why)) != 0) {
                    snprintf(err, errlen, "faults item %d: rank %d rail %d (%s): %s", i + 1, r, k,
                             devices[k], why);
                    return -1;
                }
                /* Ranks here that share a device share its wire: the rule acts on it once. */
                bool done = false;
                for (int j = 0; j < w->n && !done; j++)
                    done = w->act[j].rule == i && !strcmp(w->act[j].netdev, netdev);
                if (done)
                    continue;
                rg_wire_act *a = add(w, fr, i, kind, r, k, on_s, off_s, err, errlen);
                if (!a)
                    return -1;
                a->up_s = up_s;
                a->one_rank = fr->rank >= 0;
                snprintf(a->dev, sizeof(a->dev), "%s", devices[k]);
                snprintf(a->netdev, sizeof(a->netdev), "%s", netdev);
            }
        }
    }
    /* netem is one root qdisc a device: two rules on one device at once would be one of them. */
    for (int a = 0; a < w->n; a++)
        for (int b = a + 1; b < w->n; b++)
            if (w->act[a].kind == FI_WIRE && w->act[b].kind == FI_WIRE &&
                w->act[a].rule != w->act[b].rule && !strcmp(w->act[a].netdev, w->act[b].netdev) &&
                overlap(&w->act[a], &w->act[b])) {
                snprintf(err, errlen,
                         "faults items %d and %d: two wire rules on %s (%s) at once; netem holds "
                         "one a device: give them after=/before= windows apart, or one rule",
                         w->act[a].rule + 1, w->act[b].rule + 1, w->act[a].dev, w->act[a].netdev);
                return -1;
            }
    return 0;
}

/* The fields every evidence line of action a has (evidence/rg_ev_wire.h's RG_WIRE_COMMON). */
#define WIRE_COMMON(w, a, now_s)                                                                   \
    .rule = (a)->rule, .rank = (a)->rank, .rail = (a)->rail, .dev = (a)->dev,                      \
    .netdev = (a)->netdev, .mono_ms = ((w)->t0 + (now_s)) * 1000.0, .t_ms = (now_s)*1000.0

/* A count the device may not have said (-1): the schema's unknown, never a number. */
static rg_ev_n known_count(int64_t v)
{
    return (rg_ev_n){v >= 0, v >= 0 ? (uint64_t)v : 0};
}

/* One evidence line for the action's rank, formatted from the wire schema's table. */
static void say(rg_wire *w, const rg_wire_act *a, enum rg_wire_kind kind, const void *rec)
{
    FILE **f = a->rank >= 0 && a->rank < RG_MAX_RANKS ? &w->ev[a->rank] : NULL;
    if (f && !*f) {
        char path[1200];
        snprintf(path, sizeof(path), "%s/rank%d.wire.jsonl", w->dir, a->rank);
        *f = fopen(path, "a");
    }
    char line[4096];
    size_t n = rg_ev_format_rec(line, sizeof(line), &rg_wire_kinds[kind], rec);
    if (n && f && *f) {
        fwrite(line, 1, n, *f);
        fflush(*f);
    }
}

static void fail(rg_wire *w, const rg_wire_act *a, double now_s, const char *what, const char *why)
{
    struct rg_evr_wire_error e = {WIRE_COMMON(w, a, now_s), .what = what, .why = why};
    say(w, a, RG_WIREK_wire_error, &e);
}

static void turn_on(rg_wire *w, rg_wire_act *a, double now_s)
{
    char why[300] = "";
    a->on = true;
    if (a->kind == FI_WIRE) {
        /* What the device has taken in so far: its end of the rail receives what the peer's
         * netem passes, when the rule impairs both ends (no rank=). With rank= the receivers
         * are the peers, whose runners do nothing for this rule: nothing is read here. */
        snprintf(a->nic_why, sizeof(a->nic_why), "%s",
                 a->one_rank ? "rank=: the receivers are its peers, whose devices this runner "
                               "does not read"
                             : "");
        a->nic_known =
            !a->one_rank && w->sys->nic(a->dev, &a->nic_on, a->nic_why, sizeof(a->nic_why)) == 0;
        if (w->sys->netem_on(a->netdev, a->spec, why, sizeof(why)) != 0) {
            a->off = true; /* nothing to undo */
            fail(w, a, now_s, "netem on", why);
            return;
        }
        struct rg_evr_wire_on e = {WIRE_COMMON(w, a, now_s), .spec = a->spec};
        say(w, a, RG_WIREK_wire_on, &e);
        return;
    }
    rg_wire_counts c = {.sent_pkts = -1, .dropped = -1, .carrier_changes = -1};
    w->sys->counts(a->netdev, &c, why, sizeof(why)); /* its link's counters, netem or not */
    a->at_on = c;
    if (w->sys->link(a->netdev, false, why, sizeof(why)) != 0) {
        a->off = true;
        fail(w, a, now_s, "link down", why);
        return;
    }
    /* The proof: the device itself says it is down, and its carrier changed. */
    c = (rg_wire_counts){.sent_pkts = -1, .dropped = -1, .carrier_changes = -1};
    w->sys->counts(a->netdev, &c, why, sizeof(why));
    struct rg_evr_link e = {
        .has = RG_EVH(link, down) | RG_EVH(link, carrier_changes_before),
        WIRE_COMMON(w, a, now_s),
        .state = "down",
        .down = !c.up,
        .carrier_changes = known_count(c.carrier_changes),
        .carrier_changes_before = known_count(a->at_on.carrier_changes),
    };
    say(w, a, RG_WIREK_link, &e);
}

/* The device's receive counters now, the rule's wire just made clean, into e: rx_* (packets,
 * duplicates discarded, requests out of sequence since the rule went on), or rx_why (in why). */
static void rx_now(rg_wire *w, const rg_wire_act *a, struct rg_evr_wire_off *e, char *why,
                   size_t whylen)
{
    rg_wire_nic now = {-1, -1, -1};
    snprintf(why, whylen, "%s", a->nic_why);
    bool known = a->nic_known && w->sys->nic(a->dev, &now, why, whylen) == 0;
    /* A counter that went back (the device was re-created) says nothing about this window. */
    if (known && (now.rcvd_pkts < a->nic_on.rcvd_pkts || now.dup < a->nic_on.dup ||
                  now.oos < a->nic_on.oos)) {
        known = false;
        snprintf(why, whylen, "%s's counters went back while the rule was on", a->dev);
    }
    if (known) {
        e->has |= RG_EVH(wire_off, rx_pkts) | RG_EVH(wire_off, rx_dup) | RG_EVH(wire_off, rx_oos);
        e->rx_pkts = (uint64_t)(now.rcvd_pkts - a->nic_on.rcvd_pkts);
        e->rx_dup = (uint64_t)(now.dup - a->nic_on.dup);
        e->rx_oos = (uint64_t)(now.oos - a->nic_on.oos);
    } else {
        e->has |= RG_EVH(wire_off, rx_why);
        e->rx_why = why;
    }
}

static void turn_off(rg_wire *w, rg_wire_act *a, double now_s)
{
    char why[300] = "", rx_why[300] = "";
    a->off = true;
    rg_wire_counts c = {.sent_pkts = -1, .dropped = -1, .carrier_changes = -1};
    if (a->kind == FI_WIRE) {
        /* The wire clean first: each tc is a process to start, which on a loaded one-CPU node
         * takes a good part of a second, and a cut meant to last 100 ms lasted 0.6 s while the
         * counters were read before the qdisc went. clean_t_ms says when it really ended. */
        double clean_s = -1;
        char clean_why[300] = "";
        if (w->sys->netem_clean(a->netdev, clean_why, sizeof(clean_why)) == 0)
            clean_s = rg_now_s() - w->t0;
        /* The receivers' counters at once: the window they count is the rule's. */
        struct rg_evr_wire_off e = {WIRE_COMMON(w, a, now_s), .spec = a->spec,
                                    .loss = strstr(a->spec, "loss ") != NULL};
        rx_now(w, a, &e, rx_why, sizeof(rx_why));
        /* Read before it goes: its counters go with it. */
        int rc = w->sys->counts(a->netdev, &c, why, sizeof(why));
        if (rc != 0) {
            fail(w, a, now_s, "netem counters", why);
            why[0] = '\0';
        }
        if (w->sys->netem_off(a->netdev, why, sizeof(why)) != 0)
            fail(w, a, now_s, "netem off", why);
        if (rc == 0 && c.sent_pkts >= 0 && c.dropped >= 0) {
            e.sent_pkts = (uint64_t)c.sent_pkts;
            e.dropped = (uint64_t)c.dropped;
            /* A wire that could not be made clean first was clean once the qdisc went: not a
             * fault undone, only its end not known as closely. */
            if (clean_s >= 0) {
                e.has |= RG_EVH(wire_off, clean_t_ms);
                e.clean_t_ms = clean_s * 1000.0;
            } else {
                e.has |= RG_EVH(wire_off, clean_why);
                e.clean_why = clean_why;
            }
            say(w, a, RG_WIREK_wire_off, &e);
        }
        return;
    }
    if (w->sys->link(a->netdev, true, why, sizeof(why)) != 0) {
        fail(w, a, now_s, "link up", why);
        return;
    }
    w->sys->counts(a->netdev, &c, why, sizeof(why));
    struct rg_evr_link e = {WIRE_COMMON(w, a, now_s), .state = "up",
                            .carrier_changes = known_count(c.carrier_changes)};
    say(w, a, RG_WIREK_link, &e);
}

double rg_wire_tick(rg_wire *w, double now_s, const int *steps)
{
    double next = -1;
    for (int i = 0; i < w->n; i++) {
        rg_wire_act *a = &w->act[i];
        if (!a->on && a->on_step >= 0 && steps && steps[a->rank] >= a->on_step) {
            /* Its time is now: the way back (up=) counts from here. */
            a->on_s = now_s;
            if (a->up_s > 0)
                a->off_s = now_s + a->up_s;
        }
        if (!a->on && (a->on_step < 0 || a->on_s >= 0) && now_s >= a->on_s)
            turn_on(w, a, now_s);
        if (a->on && !a->off && a->off_s >= 0 && now_s >= a->off_s)
            turn_off(w, a, now_s);
        double t = !a->on                     ? (a->on_step >= 0 ? -1 : a->on_s)
                   : !a->off && a->off_s >= 0 ? a->off_s
                                              : -1;
        if (t >= 0 && (next < 0 || t - now_s < next))
            next = t - now_s > 0 ? t - now_s : 0;
    }
    return next;
}

void rg_wire_end(rg_wire *w, double now_s)
{
    for (int i = 0; i < w->n; i++)
        if (w->act[i].on && !w->act[i].off)
            turn_off(w, &w->act[i], now_s);
    for (int r = 0; r < RG_MAX_RANKS; r++)
        if (w->ev[r]) {
            fclose(w->ev[r]);
            w->ev[r] = NULL;
        }
}
