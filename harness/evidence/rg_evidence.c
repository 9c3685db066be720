/* SPDX-License-Identifier: MIT */
/*
 * One rank's evidence, read back from the shim's JSONL events (docs/faultinject.md, "Events"):
 * whether the shim loaded, what verbs objects it saw, which rules matched and fired, when the
 * first fault fired, and which QPs still had work outstanding at its last summary. The file is
 * the shim's, written by a process the runner may have killed: a torn last line is counted and
 * skipped, every field is checked for its type, and nothing in it is trusted to be in range.
 */
#include "evidence/rg_evidence.h"
#include "rg_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An event is at most 1 KiB (fi_event.c); a line longer than this is not the shim's. */
#define EV__LINE_MAX 4096

/* The line being read, and the first thing in it that is not as the shim writes it. */
typedef struct ev_line {
    int no;
    char why[160];
} ev_line;

static void bad(ev_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(ev_line *l, const char *fmt, ...)
{
    if (l->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->why, sizeof(l->why), fmt, ap);
    va_end(ap);
}

/*
 * An unsigned field: absent is 0 (an event that has no such member); present, it is a JSON
 * integer from 0, or an identifier written as RG_HEX64 ("0x..."), read back exactly. Anything
 * else makes the line unreadable rather than a quiet 0.
 */
static uint64_t u64_of(ev_line *l, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    uint64_t x;
    if (!v)
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        return (uint64_t)json_integer_value(v);
    if (json_is_string(v) && !rg_parse_uint(json_string_value(v), true, 0, UINT64_MAX, &x) &&
        !strncmp(json_string_value(v), "0x", 2))
        return x;
    bad(l, "\"%s\" is not an unsigned 64-bit value", key);
    return 0;
}

/* A time in ms (the shim's mono_ms): absent is -1, present it is a number from 0. */
static double ms_of(ev_line *l, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return -1;
    if (json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) < 1e15)
        return json_number_value(v);
    bad(l, "\"%s\" is not a time in ms", key);
    return -1;
}

static const char *str_of(ev_line *l, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (v && !json_is_string(v))
        bad(l, "\"%s\" is not a string", key);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* A rule index the plan can have, or -1 (absent: an event of no rule). */
static int rule_of(ev_line *l, json_t *o)
{
    json_t *v = json_object_get(o, "rule");
    if (!v)
        return -1;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= FI_MAX_RULES) {
        bad(l, "\"rule\" is not a rule of a plan");
        return -1;
    }
    return (int)json_integer_value(v);
}

/* A summary starts over at each "totals": the queues listed are those of the last summary. */
static void take_qp(ev_line *l, rg_evidence *ev, json_t *o, bool *fresh)
{
    uint64_t os = u64_of(l, o, "out_send"), orv = u64_of(l, o, "out_recv");
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
             n ? "; " : "", (unsigned long long)u64_of(l, o, "qp"), str_of(l, o, "dev"),
             (unsigned long long)os, (unsigned long long)orv,
             (unsigned long long)u64_of(l, o, "posts_send"),
             (unsigned long long)u64_of(l, o, "posts_recv"));
}

/* {"send":N,...} of a QP's final summary into sums by enum fi_op. */
static void take_by_op(ev_line *l, uint64_t *sum, json_t *by)
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
        sum[ops[i].op] += u64_of(l, by, ops[i].name);
}

/* The record of the process that wrote this line (its "pid"), made at its first line. */
static struct rg_ev_proc *proc_of(ev_line *l, rg_evidence *ev, json_t *o)
{
    long pid = (long)(u64_of(l, o, "pid") & 0x7fffffff);
    for (int i = 0; i < ev->nprocs; i++)
        if (ev->proc[i].pid == pid)
            return &ev->proc[i];
    if (ev->nprocs == RG_EV_PROCS) {
        /* The last slot holds every process past the table: counted, not told apart. */
        ev->folded++;
        return &ev->proc[RG_EV_PROCS - 1];
    }
    struct rg_ev_proc *pr = &ev->proc[ev->nprocs++];
    memset(pr, 0, sizeof(*pr));
    pr->pid = pid;
    pr->load_mono_ms = -1;
    for (int i = 0; i < FI_MAX_RULES; i++)
        pr->matched[i] = -1;
    return pr;
}

/* One line of each event kind into the rank's evidence and its process's (pr). */
static void take_load(ev_line *l, rg_evidence *ev, struct rg_ev_proc *pr, json_t *o)
{
    pr->loaded = true;
    pr->ppid = (long)(u64_of(l, o, "ppid") & 0x7fffffff);
    const char *exe = str_of(l, o, "exe"), *base = strrchr(exe, '/');
    snprintf(pr->exe, sizeof(pr->exe), "%s", base ? base + 1 : exe);
    snprintf(ev->verbs, sizeof(ev->verbs), "%s", str_of(l, o, "verbs"));
    uint64_t sig = u64_of(l, o, "snapshot_signal");
    pr->snapshot_signal = sig < 128 ? (int)sig : 0;
    /* When it started (a rank's start-up delay, launch/rg_slow_measure.c) and the time scale
     * its plan ran at (a re-run's faults scaled with its deadlines). */
    pr->load_mono_ms = ms_of(l, o, "mono_ms");
    pr->time_scale = u64_of(l, o, "time_scale");
}

static void take_fault(rg_evidence *ev, struct rg_ev_proc *pr, json_t *o, int rule)
{
    json_t *t = json_object_get(o, "mono_ms");
    /* Without a time (a shim older than this runner) a fault cannot be ordered, and is taken
     * as having fired before everything rather than as never having fired. */
    double at = json_is_number(t) && json_number_value(t) >= 0 ? json_number_value(t) : 0;
    if (rule >= 0)
        pr->fired_ev[rule]++;
    if (ev->first_fault_mono_ms < 0 || at < ev->first_fault_mono_ms) {
        ev->first_fault_mono_ms = at;
        ev->first_fault_rule = rule;
    }
}

static void take_phase(ev_line *l, rg_evidence *ev, json_t *o)
{
    json_t *st = json_object_get(o, "step"), *rp = json_object_get(o, "rep");
    /* Steps the program can have: init (-1) up to the scenario's limit; anything else is not a
     * phase of ours. */
    if (!json_is_integer(st) || !json_is_integer(rp) || json_integer_value(st) < -1 ||
        json_integer_value(st) > FI_PHASE_MAX || json_integer_value(rp) < 0 ||
        json_integer_value(rp) > FI_PHASE_MAX) {
        bad(l, "\"step\" or \"rep\" is not a step of a program");
        return;
    }
    if (ev->nphases == RG_EV_PHASES_MAX) {
        ev->phases_lost++;
        return;
    }
    struct rg_ev_phase *ph = &ev->phase[ev->nphases++];
    memset(ph, 0, sizeof(*ph));
    ph->step = (int)json_integer_value(st);
    ph->rep = (int)json_integer_value(rp);
    take_by_op(l, ph->posts, json_object_get(o, "posts_op"));
    take_by_op(l, ph->cqe, json_object_get(o, "cqe_op"));
    ph->polls = u64_of(l, o, "polls");
}

/* Every finding is read (a bad one is unreadable), the first is kept. */
static void take_ownership(ev_line *l, rg_evidence *ev, json_t *o)
{
    bool send = !strcmp(str_of(l, o, "op"), "send");
    uint64_t qp = u64_of(l, o, "qp"), wr_id = u64_of(l, o, "wr_id");
    uint64_t off = u64_of(l, o, "offset"), bytes = u64_of(l, o, "bytes");
    if (!ev->own_first[0])
        snprintf(ev->own_first, sizeof(ev->own_first),
                 "%s: qp 0x%llx, wr_id 0x%llx, byte %llu of %llu",
                 send ? "a send buffer rewritten before its completion"
                      : "a posted receive buffer written past the bytes that arrived",
                 (unsigned long long)qp, (unsigned long long)wr_id, (unsigned long long)off,
                 (unsigned long long)bytes);
}

static void take_alive(ev_line *l, struct rg_ev_proc *pr, json_t *o)
{
    static const char *const kinds[6] = {"contexts", "pds", "mrs", "cqs", "qps", "channels"};
    if (strcmp(str_of(l, o, "why"), "exit"))
        return;
    pr->alive_at_exit = true;
    for (int i = 0; i < 6; i++) {
        json_t *v = json_object_get(o, kinds[i]);
        if (v && !json_is_integer(v))
            bad(l, "\"%s\" is not an integer", kinds[i]);
        pr->alive[i] = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
    }
}

static void take_totals(ev_line *l, struct rg_ev_proc *pr, json_t *o)
{
    pr->totals = true;
    pr->snapshot = !strcmp(str_of(l, o, "why"), "snapshot");
    pr->contexts = u64_of(l, o, "contexts");
    pr->qps = u64_of(l, o, "qps");
    pr->cqs = u64_of(l, o, "cqs");
    pr->posts_send = u64_of(l, o, "posts_send");
    pr->posts_recv = u64_of(l, o, "posts_recv");
    pr->polls = u64_of(l, o, "polls");
    pr->cqe = u64_of(l, o, "cqe");
    pr->cqe_err = u64_of(l, o, "cqe_err");
}

static void take(ev_line *l, rg_evidence *ev, json_t *o, bool *fresh)
{
    const char *name = str_of(l, o, "event");
    int rule = rule_of(l, o);
    struct rg_ev_proc *pr = proc_of(l, ev, o);
    if (!strcmp(name, "load")) {
        take_load(l, ev, pr, o);
    } else if (!strcmp(name, "fault")) {
        take_fault(ev, pr, o, rule);
    } else if (!strcmp(name, "rule") && rule >= 0) {
        pr->fired[rule] = u64_of(l, o, "fired");
        pr->matched[rule] = (int64_t)(u64_of(l, o, "matched") & INT64_MAX);
    } else if (!strcmp(name, "qp")) {
        take_qp(l, ev, o, fresh);
        /* A QP's last word is at its destroy or at exit; snapshots and requests come between. */
        const char *why = str_of(l, o, "why");
        if (!strcmp(why, "destroy") || !strcmp(why, "exit")) {
            take_by_op(l, ev->op_posts, json_object_get(o, "posts_op"));
            take_by_op(l, ev->op_cqe, json_object_get(o, "cqe_op"));
        }
    } else if (!strcmp(name, "phase")) {
        take_phase(l, ev, o);
    } else if (!strcmp(name, "ownership")) {
        take_ownership(l, ev, o);
    } else if (!strcmp(name, "owned")) {
        pr->owned = true;
        pr->own_sends = u64_of(l, o, "sends");
        pr->own_recvs = u64_of(l, o, "recvs");
        pr->own_rewritten = u64_of(l, o, "rewritten");
        pr->own_unsanitized = u64_of(l, o, "unsanitized");
    } else if (!strcmp(name, "alive")) {
        take_alive(l, pr, o);
    } else if (!strcmp(name, "totals")) {
        take_totals(l, pr, o);
        *fresh = true;
    }
}

/* The rank from its processes: sums, and the first process's own word where one is asked. */
static void sum_procs(rg_evidence *ev)
{
    for (int i = 0; i < FI_MAX_RULES; i++)
        ev->matched[i] = -1;
    for (int k = 0; k < ev->nprocs; k++) {
        struct rg_ev_proc *pr = &ev->proc[k];
        for (int j = 0; j < ev->nprocs; j++)
            pr->forked |= j != k && ev->proc[j].pid == pr->ppid && pr->ppid > 0;
        ev->loaded |= pr->loaded;
        ev->totals |= pr->totals;
        ev->snapshot |= pr->snapshot;
        ev->contexts += pr->contexts;
        ev->qps += pr->qps;
        ev->cqs += pr->cqs;
        ev->posts_send += pr->posts_send;
        ev->posts_recv += pr->posts_recv;
        ev->polls += pr->polls;
        ev->cqe += pr->cqe;
        ev->cqe_err += pr->cqe_err;
        /* The shim's own count wins over the events counted, which a full disk could thin. */
        for (int i = 0; i < FI_MAX_RULES; i++) {
            ev->fired[i] += pr->fired[i] > pr->fired_ev[i] ? pr->fired[i] : pr->fired_ev[i];
            if (pr->matched[i] >= 0)
                ev->matched[i] = (ev->matched[i] < 0 ? 0 : ev->matched[i]) + pr->matched[i];
        }
        ev->owned |= pr->owned;
        ev->own_sends += pr->own_sends;
        ev->own_recvs += pr->own_recvs;
        ev->own_rewritten += pr->own_rewritten;
        ev->own_unsanitized += pr->own_unsanitized;
    }
    if (ev->nprocs) {
        const struct rg_ev_proc *first = &ev->proc[0];
        ev->snapshot_signal = first->snapshot_signal;
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
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    bool fresh = true; /* the next qp event starts a new list of queues */
    ev_line l = {0};
    while ((n = getline(&line, &cap, f)) > 0) {
        l.no++;
        l.why[0] = '\0';
        if (n > EV__LINE_MAX) {
            bad(&l, "%zd bytes long, more than an event can be", n);
        } else if (line[n - 1] != '\n') {
            bad(&l, "cut short (no newline at the end of the file)");
        } else if (strlen(line) != (size_t)n) {
            bad(&l, "holds a NUL byte");
        } else {
            json_error_t je;
            json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
            if (!o)
                bad(&l, "not JSON: %s at column %d", je.text, je.column);
            else if (!json_is_object(o))
                bad(&l, "not a JSON object");
            else
                take(&l, ev, o, &fresh);
            json_decref(o);
        }
        if (l.why[0] && !ev->bad_lines++) {
            char shown[72];
            rg_parse_show(line, shown, sizeof(shown));
            snprintf(ev->unreadable, sizeof(ev->unreadable), "line %d: %s: '%s'", l.no, l.why,
                     shown);
            /* jansson's message quotes the bytes it choked on: printable ASCII only, so the
             * finding stays one line and valid in report.json and the page. */
            for (char *p = ev->unreadable; *p; p++)
                if ((unsigned char)*p < ' ' || (unsigned char)*p >= 0x7f)
                    *p = '?';
        }
    }
    free(line);
    fclose(f);
    sum_procs(ev);
    return 0;
}
