/* SPDX-License-Identifier: MIT */
/*
 * A rank's wire evidence (rg_evidence.h): the lines the runner wrote while it applied wire
 * faults (wire/rg_wire.c), read into the same fired and matched counts as the shim's rules, so
 * NOT_EXERCISED and the first fault hold for the wire as for verbs calls. Each line is checked
 * as strictly as the shim's.
 */
#include "evidence/rg_evidence.h"
#include "evidence/rg_ev_field.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The wire rule a line is of: its index, or -1 (unreadable). */
static int wire_rule(rg_ev_line *l, json_t *o)
{
    json_t *v = json_object_get(o, "rule");
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= FI_MAX_RULES) {
        rg_ev_bad(l, "\"rule\" is not a rule of a plan");
        return -1;
    }
    return (int)json_integer_value(v);
}

static void first(rg_evidence *ev, double at, int rule)
{
    if (at >= 0 && (ev->first_fault_mono_ms < 0 || at < ev->first_fault_mono_ms)) {
        ev->first_fault_mono_ms = at;
        ev->first_fault_rule = rule;
    }
}

/* A count summed, -1 ("none said") counting as 0; saturated rather than wrapped. */
static void add(int64_t *to, int64_t n)
{
    int64_t was = *to < 0 ? 0 : *to;
    *to = n > INT64_MAX - was ? INT64_MAX : was + n;
}

static void matched(rg_evidence *ev, int rule, uint64_t n)
{
    add(&ev->matched[rule], n > INT64_MAX ? INT64_MAX : (int64_t)n);
}

/* wire_off's "rx": what the rank's device took in while the rule was on. Absent: its counters
 * could not be read (then "rx_why" says why); present, all three or the line is unreadable. */
static void take_rx(rg_ev_line *l, json_t *o, rg_evidence *ev, int rule)
{
    json_t *rx = json_object_get(o, "rx");
    if (!rx)
        return;
    if (!json_is_object(rx)) {
        rg_ev_bad(l, "\"rx\" is not an object");
        return;
    }
    /* Counts the runner wrote as JSON integers from 0: anything else (a string, a sign, a
     * fraction) is not its line. */
    static const char *const need[] = {"pkts", "duplicates", "out_of_seq"};
    int64_t n[3];
    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
        json_t *v = json_object_get(rx, need[i]);
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            rg_ev_bad(l, "\"rx\" has no count \"%s\"", need[i]);
            return;
        }
        n[i] = (int64_t)json_integer_value(v);
    }
    add(&ev->rx_pkts[rule], n[0]);
    add(&ev->rx_dup[rule], n[1]);
    add(&ev->rx_oos[rule], n[2]);
}

static void take_wire(rg_ev_line *l, json_t *o, void *arg)
{
    rg_evidence *ev = arg;
    const char *what = rg_ev_str(l, o, "event");
    int rule = wire_rule(l, o);
    double at = rg_ev_ms(l, o, "mono_ms");
    if (rule < 0 || l->why[0])
        return;
    if (!strcmp(what, "wire_on")) {
        /* netem in place: the wire is impaired from here, whatever crosses it. */
        first(ev, at, rule);
    } else if (!strcmp(what, "wire_off")) {
        uint64_t sent = rg_ev_u64(l, o, "sent_pkts"), dropped = rg_ev_u64(l, o, "dropped");
        if (l->why[0])
            return;
        take_rx(l, o, ev, rule);
        if (l->why[0])
            return;
        matched(ev, rule, sent + dropped);
        /* A loss acted on the packets it dropped; a delay, reordering, duplication or
         * corruption draws on every packet that went through it. */
        ev->fired[rule] += rg_ev_bool(l, o, "loss") ? dropped : sent;
    } else if (!strcmp(what, "link")) {
        const char *state = rg_ev_str(l, o, "state");
        if (!strcmp(state, "down")) {
            matched(ev, rule, 1);
            /* Taken down is what the device said after, not what ip was asked. */
            if (rg_ev_bool(l, o, "down")) {
                ev->fired[rule]++;
                first(ev, at, rule);
            }
        } else if (strcmp(state, "up") != 0) {
            rg_ev_bad(l, "\"state\" is neither up nor down");
        }
    } else if (!strcmp(what, "wire_error")) {
        if (!ev->wire_failed[0])
            snprintf(ev->wire_failed, sizeof(ev->wire_failed), "faults item %d: %s: %s", rule + 1,
                     rg_ev_str(l, o, "what"), rg_ev_str(l, o, "why"));
    } else {
        rg_ev_bad(l, "not a wire event");
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
