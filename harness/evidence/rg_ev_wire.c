/* SPDX-License-Identifier: MIT */
/*
 * A rank's wire evidence (rg_evidence.h): the lines the runner wrote while it applied wire
 * faults (wire/rg_wire.c), read into the same fired and matched counts as the shim's rules, so
 * NOT_EXERCISED and the first fault hold for the wire as for verbs calls. Each line is checked
 * and decoded against the schema it was written from (rg_ev_wire.h), as the shim's are.
 */
#include "evidence/rg_evidence.h"
#include "evidence/rg_ev_field.h"
#include "evidence/rg_ev_wire.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void first(rg_evidence *ev, double at, int rule)
{
    if (at >= 0 && (ev->first_fault_mono_ms < 0 || at < ev->first_fault_mono_ms)) {
        ev->first_fault_mono_ms = at;
        ev->first_fault_rule = rule;
    }
}

/* A count summed, -1 ("none said") counting as 0; saturated rather than wrapped. */
static void add(int64_t *to, uint64_t n)
{
    int64_t was = *to < 0 ? 0 : *to;
    *to = n > (uint64_t)(INT64_MAX - was) ? INT64_MAX : was + (int64_t)n;
}

/* wire_off's rx_*: what the rank's device took in while the rule was on, by its own counters.
 * All three, or none (rx_why says why): one or two is not the runner's line. */
static void take_rx(rg_ev_line *l, const struct rg_evr_wire_off *w, rg_evidence *ev, int rule)
{
    uint32_t rx = RG_EVH(wire_off, rx_pkts) | RG_EVH(wire_off, rx_dup) | RG_EVH(wire_off, rx_oos);
    if (!(w->has & rx))
        return;
    if ((w->has & rx) != rx) {
        rg_ev_bad(l, "\"rx_pkts\", \"rx_dup\" and \"rx_oos\": all three or none");
        return;
    }
    add(&ev->rx_pkts[rule], w->rx_pkts);
    add(&ev->rx_dup[rule], w->rx_dup);
    add(&ev->rx_oos[rule], w->rx_oos);
}

static void take_wire(rg_ev_line *l, json_t *o, void *arg)
{
    rg_evidence *ev = arg;
    static rg_wire_rec w;
    static char strs[8192];
    int kind;
    if (rg_ev_decode_in(&rg_ev_wire_table, l, o, &kind, &w, strs, sizeof(strs)) != 0)
        return;
    /* rule, rank and the rest lead every kind's record alike: read them through any. */
    int64_t rule = w.on.rule;
    if (rule < 0 || rule >= FI_MAX_RULES) {
        rg_ev_bad(l, "\"rule\" is not a rule of a plan");
        return;
    }
    int r = (int)rule;
    switch ((enum rg_wire_kind)kind) {
    case RG_WIREK_wire_on:
        /* netem in place: the wire is impaired from here, whatever crosses it. */
        first(ev, w.on.mono_ms, r);
        break;
    case RG_WIREK_wire_off:
        take_rx(l, &w.off, ev, r);
        if (l->why[0])
            return;
        add(&ev->matched[r], w.off.sent_pkts + w.off.dropped);
        /* A loss acted on the packets it dropped; a delay, reordering, duplication or
         * corruption draws on every packet that went through it. */
        ev->fired[r] += w.off.loss ? w.off.dropped : w.off.sent_pkts;
        break;
    case RG_WIREK_link:
        if (!strcmp(w.link.state, "down")) {
            add(&ev->matched[r], 1);
            /* Taken down is what the device said after, not what ip was asked. */
            if (w.link.down) {
                ev->fired[r]++;
                first(ev, w.link.mono_ms, r);
            }
        } else if (strcmp(w.link.state, "up") != 0) {
            rg_ev_bad(l, "\"state\" is neither up nor down");
        }
        break;
    case RG_WIREK_wire_error:
        if (!ev->wire_failed[0])
            snprintf(ev->wire_failed, sizeof(ev->wire_failed), "faults item %d: %s: %s", r + 1,
                     w.error.what, w.error.why);
        break;
    case RG_WIREK_COUNT:
        break;
    }
}

int rg_evidence_read_wire(const char *path, rg_evidence *ev, char *err, size_t errlen)
{
    int bad = 0;
    char unreadable[300] = "";
    int rc = rg_ev_each(path, take_wire, ev, &bad, unreadable, sizeof(unreadable), err, errlen);
    if (rc < 0)
        return -1;
    /* Named by its file, beside the shim's events file whose lines the same field names. */
    const char *base = strrchr(path, '/');
    if (bad && !ev->bad_lines)
        snprintf(ev->unreadable, sizeof(ev->unreadable), "%.60s: %.230s", base ? base + 1 : path,
                 unreadable);
    ev->bad_lines += bad;
    return 0;
}

int rg_evidence_read_rank(const char *dir, int r, rg_evidence *ev, char *err, size_t errlen)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", dir, r);
    if (rg_evidence_read(path, ev, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/rank%d.wire.jsonl", dir, r);
    return rg_evidence_read_wire(path, ev, err, errlen);
}
