/* SPDX-License-Identifier: MIT */
/*
 * One rank's evidence, read back from the shim's JSONL events (docs/faultinject.md, "Events"):
 * whether the shim loaded, what verbs objects it saw, which rules matched and fired, when the
 * first fault fired, and which QPs still had work outstanding at its last summary. The file is
 * the shim's, written by a process the runner may have killed: a torn last line is counted and
 * skipped, every field is checked for its type, and nothing in it is trusted to be in range.
 */
#include "rg_harness.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rank's events are a few KiB; a line longer than this is not the shim's. */
#define EV__LINE_MAX 4096

static uint64_t u64_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v) : 0;
}

static const char *str_of(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A rule index the plan can have, or -1. */
static int rule_of(json_t *o)
{
    json_t *v = json_object_get(o, "rule");
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= FI_MAX_RULES)
        return -1;
    return (int)json_integer_value(v);
}

/* A summary starts over at each "totals": the queues listed are those of the last summary. */
static void take_qp(rg_evidence *ev, json_t *o, bool *fresh)
{
    uint64_t os = u64_of(o, "out_send"), orv = u64_of(o, "out_recv");
    if (*fresh) {
        ev->queues[0] = '\0';
        *fresh = false;
    }
    if (!os && !orv)
        return;
    size_t n = strlen(ev->queues);
    snprintf(ev->queues + n, sizeof(ev->queues) - n,
             "%sqp %llu (%.16s): %llu send(s) and %llu receive(s) outstanding of %llu and %llu "
             "posted",
             n ? "; " : "", (unsigned long long)u64_of(o, "qp"), str_of(o, "dev"),
             (unsigned long long)os, (unsigned long long)orv,
             (unsigned long long)u64_of(o, "posts_send"),
             (unsigned long long)u64_of(o, "posts_recv"));
}

/* {"send":N,...} of a QP's final summary into sums by enum fi_op. */
static void take_by_op(uint64_t *sum, json_t *by)
{
    static const struct {
        const char *name;
        enum fi_op op;
    } ops[] = {{"send", FI_OP_SEND},
               {"recv", FI_OP_RECV},
               {"write", FI_OP_WRITE},
               {"read", FI_OP_READ},
               {"atomic", FI_OP_ATOMIC}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        sum[ops[i].op] += u64_of(by, ops[i].name);
}

static void take(rg_evidence *ev, json_t *o, bool *fresh)
{
    const char *name = str_of(o, "event");
    int rule = rule_of(o);

    if (!strcmp(name, "load")) {
        ev->loaded = true;
        snprintf(ev->verbs, sizeof(ev->verbs), "%s", str_of(o, "verbs"));
        uint64_t sig = u64_of(o, "snapshot_signal");
        ev->snapshot_signal = sig < 128 ? (int)sig : 0;
    } else if (!strcmp(name, "fault")) {
        json_t *t = json_object_get(o, "mono_ms");
        /* Without a time (a shim older than this runner) a fault cannot be ordered, and is
         * taken as having fired before everything rather than as never having fired. */
        double at = json_is_number(t) && json_number_value(t) >= 0 ? json_number_value(t) : 0;
        if (rule >= 0)
            ev->fired[rule]++;
        if (ev->first_fault_mono_ms < 0 || at < ev->first_fault_mono_ms) {
            ev->first_fault_mono_ms = at;
            ev->first_fault_rule = rule;
        }
    } else if (!strcmp(name, "rule") && rule >= 0) {
        /* The shim's own count wins over the events counted, which a full disk could thin. */
        uint64_t fired = u64_of(o, "fired");
        if (fired > ev->fired[rule])
            ev->fired[rule] = fired;
        ev->matched[rule] = (int64_t)(u64_of(o, "matched") & INT64_MAX);
    } else if (!strcmp(name, "qp")) {
        take_qp(ev, o, fresh);
        /* A QP's last word is at its destroy or at exit; snapshots and requests come between. */
        const char *why = str_of(o, "why");
        if (!strcmp(why, "destroy") || !strcmp(why, "exit")) {
            take_by_op(ev->op_posts, json_object_get(o, "posts_op"));
            take_by_op(ev->op_cqe, json_object_get(o, "cqe_op"));
        }
    } else if (!strcmp(name, "phase")) {
        json_t *st = json_object_get(o, "step"), *rp = json_object_get(o, "rep");
        /* Steps the program can have: init (-1) up to the scenario's limit; anything else is
         * not a phase of ours. */
        if (!json_is_integer(st) || !json_is_integer(rp) || json_integer_value(st) < -1 ||
            json_integer_value(st) > FI_PHASE_MAX || json_integer_value(rp) < 0 ||
            json_integer_value(rp) > FI_PHASE_MAX) {
            ev->bad_lines++;
        } else if (ev->nphases == RG_EV_PHASES_MAX) {
            ev->phases_lost++;
        } else {
            struct rg_ev_phase *ph = &ev->phase[ev->nphases++];
            memset(ph, 0, sizeof(*ph));
            ph->step = (int)json_integer_value(st);
            ph->rep = (int)json_integer_value(rp);
            take_by_op(ph->posts, json_object_get(o, "posts_op"));
            take_by_op(ph->cqe, json_object_get(o, "cqe_op"));
            ph->polls = u64_of(o, "polls");
        }
    } else if (!strcmp(name, "ownership")) {
        if (!ev->own_first[0]) {
            bool send = !strcmp(str_of(o, "op"), "send");
            snprintf(ev->own_first, sizeof(ev->own_first),
                     "%s: qp 0x%llx, wr_id 0x%llx, byte %lld of %llu",
                     send ? "a send buffer rewritten before its completion"
                          : "a posted receive buffer written past the bytes that arrived",
                     (unsigned long long)u64_of(o, "qp"), (unsigned long long)u64_of(o, "wr_id"),
                     (long long)u64_of(o, "offset"), (unsigned long long)u64_of(o, "bytes"));
        }
    } else if (!strcmp(name, "owned")) {
        ev->owned = true;
        ev->own_sends = u64_of(o, "sends");
        ev->own_recvs = u64_of(o, "recvs");
        ev->own_rewritten = u64_of(o, "rewritten");
        ev->own_unsanitized = u64_of(o, "unsanitized");
    } else if (!strcmp(name, "alive")) {
        if (!strcmp(str_of(o, "why"), "exit")) {
            static const char *const kinds[6] = {"contexts", "pds", "mrs",
                                                 "cqs",      "qps", "channels"};
            ev->alive_at_exit = true;
            for (int i = 0; i < 6; i++) {
                json_t *v = json_object_get(o, kinds[i]);
                ev->alive[i] = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
            }
        }
    } else if (!strcmp(name, "totals")) {
        ev->totals = true;
        ev->snapshot = !strcmp(str_of(o, "why"), "snapshot");
        ev->contexts = u64_of(o, "contexts");
        ev->qps = u64_of(o, "qps");
        ev->cqs = u64_of(o, "cqs");
        ev->posts_send = u64_of(o, "posts_send");
        ev->posts_recv = u64_of(o, "posts_recv");
        ev->polls = u64_of(o, "polls");
        ev->cqe = u64_of(o, "cqe");
        ev->cqe_err = u64_of(o, "cqe_err");
        *fresh = true;
    }
}

int rg_evidence_read(const char *path, rg_evidence *ev, char *err, size_t errlen)
{
    memset(ev, 0, sizeof(*ev));
    ev->first_fault_mono_ms = -1;
    ev->first_fault_rule = -1;
    for (int i = 0; i < FI_MAX_RULES; i++)
        ev->matched[i] = -1;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    ev->present = true;
    char line[EV__LINE_MAX];
    bool fresh = true; /* the next qp event starts a new list of queues */
    while (fgets(line, sizeof(line), f)) {
        size_t n = strlen(line);
        if (n == sizeof(line) - 1 && line[n - 1] != '\n') {
            /* Not ours: skip the rest of it. */
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
            ev->bad_lines++;
            continue;
        }
        json_error_t je;
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(o)) {
            ev->bad_lines++;
            json_decref(o);
            continue;
        }
        take(ev, o, &fresh);
        json_decref(o);
    }
    fclose(f);
    return 0;
}
