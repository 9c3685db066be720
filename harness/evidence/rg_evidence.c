/* SPDX-License-Identifier: MIT */
/*
 * One rank's evidence, read back from the shim's JSONL events (docs/faultinject.md, "Events"):
 * whether the shim loaded, what verbs objects it saw, which rules matched and fired, when the
 * first fault fired, and which QPs still had work outstanding at its last summary. The file is
 * the shim's, written by a process the runner may have killed: a torn last line is counted and
 * skipped, every field is checked for its type, and nothing in it is trusted to be in range.
 */
#include "evidence/rg_evidence.h"
#include "evidence/rg_ev_field.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rule index the plan can have, or -1 (absent: an event of no rule). */
static int rule_of(rg_ev_line *l, json_t *o)
{
    json_t *v = json_object_get(o, "rule");
    if (!v)
        return -1;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= FI_MAX_RULES) {
        rg_ev_bad(l, "\"rule\" is not a rule of a plan");
        return -1;
    }
    return (int)json_integer_value(v);
}

/* A summary starts over at each "totals": the queues listed are those of the last summary. */
static void take_qp(rg_ev_line *l, rg_evidence *ev, json_t *o, bool *fresh)
{
    rg_ev_n os = rg_ev_count(l, o, "out_send"), orv = rg_ev_count(l, o, "out_recv");
    if (*fresh) {
        ev->queues[0] = '\0';
        *fresh = false;
    }
    /* A queue the shim cannot count (receives through an SRQ) is said so, never as none. */
    if ((!os.known || !os.v) && (!orv.known || !orv.v))
        return;
    char s[24] = "unknown", r[40] = "an unknown number of";
    if (os.known)
        snprintf(s, sizeof(s), "%llu", (unsigned long long)os.v);
    if (orv.known)
        snprintf(r, sizeof(r), "%llu", (unsigned long long)orv.v);
    else if (rg_ev_bool(l, o, "srq"))
        snprintf(r, sizeof(r), "%s", "an unknown number of (its SRQ's)");
    size_t n = strlen(ev->queues);
    snprintf(ev->queues + n, sizeof(ev->queues) - n,
             "%sqp %llu (%.16s): %s send(s) and %s receive(s) outstanding of %llu and %llu "
             "posted",
             n ? "; " : "", (unsigned long long)rg_ev_u64(l, o, "qp"), rg_ev_str(l, o, "dev"), s, r,
             (unsigned long long)rg_ev_u64(l, o, "posts_send"),
             (unsigned long long)rg_ev_u64(l, o, "posts_recv"));
}

/* {"send":N,...} of a QP's final summary into sums by enum fi_op. */
static void take_by_op(rg_ev_line *l, uint64_t *sum, json_t *by)
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
        sum[ops[i].op] += rg_ev_u64(l, by, ops[i].name);
}

/* The record of the process that wrote this line (its "pid"), made at its first line. */
static struct rg_ev_proc *proc_of(rg_ev_line *l, rg_evidence *ev, json_t *o)
{
    long pid = (long)(rg_ev_u64(l, o, "pid") & 0x7fffffff);
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
static void take_load(rg_ev_line *l, rg_evidence *ev, struct rg_ev_proc *pr, json_t *o)
{
    pr->loaded = true;
    pr->ppid = (long)(rg_ev_u64(l, o, "ppid") & 0x7fffffff);
    const char *exe = rg_ev_str(l, o, "exe"), *base = strrchr(exe, '/');
    snprintf(pr->exe, sizeof(pr->exe), "%s", base ? base + 1 : exe);
    snprintf(ev->verbs, sizeof(ev->verbs), "%s", rg_ev_str(l, o, "verbs"));
    uint64_t sig = rg_ev_u64(l, o, "snapshot_signal");
    pr->snapshot_signal = sig < 128 ? (int)sig : 0;
    /* When it started (a rank's start-up delay, launch/rg_slow_measure.c) and the time scale
     * its plan ran at (a re-run's faults scaled with its deadlines). */
    pr->load_mono_ms = rg_ev_ms(l, o, "mono_ms");
    pr->time_scale = rg_ev_u64(l, o, "time_scale");
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

int rg_ev_site_parse(const char *s, char *obj, size_t objlen, uint64_t *off)
{
    const char *plus = NULL;
    for (const char *p = s; (p = strstr(p, "+0x")) != NULL; p++)
        plus = p;
    if (!plus || plus == s || (size_t)(plus - s) >= objlen)
        return -1;
    const char *hex = plus + 3;
    size_t n = strlen(hex);
    if (n == 0 || n > 16 || strspn(hex, "0123456789abcdefABCDEF") != n)
        return -1;
    memcpy(obj, s, (size_t)(plus - s));
    obj[plus - s] = '\0';
    *off = strtoull(hex, NULL, 16);
    return 0;
}

int rg_ev_path_parse(const char *s, rg_ev_frame *f, int max)
{
    int n = 0;
    size_t len = strlen(s), start = 0;
    char one[RG_EV_OBJ_MAX + 24];
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '<')
            continue;
        size_t fl = i - start;
        bool end = i == len;
        if (!end) { /* a '<' inside an object's path leaves the frame open */
            if (fl >= sizeof(one))
                continue;
            memcpy(one, s + start, fl);
            one[fl] = '\0';
            uint64_t off;
            char obj[RG_EV_OBJ_MAX];
            if (rg_ev_site_parse(one, obj, sizeof(obj), &off) != 0)
                continue;
        }
        if (n == max || fl >= sizeof(one))
            return -1;
        memcpy(one, s + start, fl);
        one[fl] = '\0';
        if (rg_ev_site_parse(one, f[n].obj, sizeof(f[n].obj), &f[n].off) != 0)
            return -1;
        n++;
        start = i + 1;
    }
    return n;
}

int rg_ev_site_text(const rg_evidence *e, const rg_ev_site *s, int depth, bool base, char *out,
                    size_t len)
{
    size_t at = 0;
    int n = 0;
    out[0] = '\0';
    for (int k = 0; k < depth && k <= s->nfrom; k++) {
        const char *obj = e->objs[k ? s->from_obj[k - 1] : s->obj];
        const char *b = base ? strrchr(obj, '/') : NULL;
        int w = snprintf(out + at, len - at, "%s%s+0x%llx", k ? "<" : "", b ? b + 1 : obj,
                         (unsigned long long)(k ? s->from_off[k - 1] : s->off));
        if (w < 0 || (size_t)w >= len - at) {
            out[at] = '\0';
            break;
        }
        at += (size_t)w;
        n++;
    }
    return n;
}

/* objs[]'s index of an object's path, added at its first mention; -1 past the table. */
static int obj_of(rg_evidence *ev, const char *obj)
{
    int k = 0;
    while (k < ev->nobjs && strcmp(ev->objs[k], obj))
        k++;
    if (k == RG_EV_SITE_OBJS)
        return -1;
    if (k == ev->nobjs)
        snprintf(ev->objs[ev->nobjs++], RG_EV_OBJ_MAX, "%.*s", RG_EV_OBJ_MAX - 1, obj);
    return k;
}

/* The site a "caller" (OBJECT+0xOFF) and its "from" (the callers, "" none) name, made at its
 * first mention; NULL (counted) past the tables, and NULL with the line unreadable when either
 * is not that form. */
static rg_ev_site *site_of(rg_ev_line *l, rg_evidence *ev, const char *text, const char *from)
{
    rg_ev_frame f[FI_SITE_DEPTH];
    if (rg_ev_path_parse(text, f, 1) != 1) {
        rg_ev_bad(l, "\"caller\" is not OBJECT+0xOFFSET");
        return NULL;
    }
    int nf = from[0] ? rg_ev_path_parse(from, f + 1, RG_EV_FROM) : 0;
    if (nf < 0) {
        rg_ev_bad(l, "\"from\" is not a call path (OBJECT+0xOFFSET<...)");
        return NULL;
    }
    int obj[FI_SITE_DEPTH];
    for (int k = 0; k <= nf; k++)
        if ((obj[k] = obj_of(ev, f[k].obj)) < 0) {
            ev->sites_over++;
            return NULL;
        }
    for (int i = 0; i < ev->nsites; i++) {
        const rg_ev_site *s = &ev->site[i];
        bool same = s->obj == obj[0] && s->off == f[0].off && s->nfrom == nf;
        for (int k = 0; same && k < nf; k++)
            same = s->from_obj[k] == obj[k + 1] && s->from_off[k] == f[k + 1].off;
        if (same)
            return &ev->site[i];
    }
    if (ev->nsites == RG_EV_SITES) {
        ev->sites_over++;
        return NULL;
    }
    rg_ev_site *s = &ev->site[ev->nsites++];
    memset(s, 0, sizeof(*s));
    s->obj = obj[0];
    s->off = f[0].off;
    s->nfrom = nf;
    for (int k = 0; k < nf; k++) {
        s->from_obj[k] = obj[k + 1];
        s->from_off[k] = f[k + 1].off;
    }
    return s;
}

/* A "from" is optional: a shim older than call paths wrote none. */
static const char *from_of(json_t *o)
{
    const char *v = json_string_value(json_object_get(o, "from"));
    return v ? v : "";
}

/* A sites rule's "caller": each summary repeats every site with its counts so far; the largest
 * is kept (a rank's processes each count their own). */
static void take_caller(rg_ev_line *l, rg_evidence *ev, json_t *o)
{
    static const char *const verbs[] = {"poll",      "post_send", "post_recv", "reg_mr",
                                        "create_qp", "create_cq", "alloc_pd"};
    const char *verb = rg_ev_str(l, o, "verb");
    size_t v = 0;
    while (v < sizeof(verbs) / sizeof(verbs[0]) && strcmp(verbs[v], verb))
        v++;
    if (v == sizeof(verbs) / sizeof(verbs[0])) {
        rg_ev_bad(l, "\"verb\" is not a verb a call site is kept for");
        return;
    }
    rg_ev_site *s = site_of(l, ev, rg_ev_str(l, o, "caller"), from_of(o));
    if (!s)
        return;
    snprintf(s->verb, sizeof(s->verb), "%s", verb);
    uint64_t calls = rg_ev_u64(l, o, "calls"), ops[FI_OP_ATOMIC + 1] = {0};
    take_by_op(l, ops, json_object_get(o, "ops"));
    if (calls > s->calls)
        s->calls = calls;
    for (int i = 0; i <= FI_OP_ATOMIC; i++)
        if (ops[i] > s->ops[i])
            s->ops[i] = ops[i];
}

static void take_phase(rg_ev_line *l, rg_evidence *ev, json_t *o)
{
    json_t *st = json_object_get(o, "step"), *rp = json_object_get(o, "rep");
    /* Steps the program can have: init (-1) up to the scenario's limit; anything else is not a
     * phase of ours. */
    if (!json_is_integer(st) || !json_is_integer(rp) || json_integer_value(st) < -1 ||
        json_integer_value(st) > FI_PHASE_MAX || json_integer_value(rp) < 0 ||
        json_integer_value(rp) > FI_PHASE_MAX) {
        rg_ev_bad(l, "\"step\" or \"rep\" is not a step of a program");
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
    ph->polls = rg_ev_u64(l, o, "polls");
}

/* Every finding is read (a bad one is unreadable), the first is kept. */
static void take_ownership(rg_ev_line *l, rg_evidence *ev, json_t *o)
{
    bool send = !strcmp(rg_ev_str(l, o, "op"), "send");
    uint64_t qp = rg_ev_u64(l, o, "qp"), wr_id = rg_ev_u64(l, o, "wr_id");
    uint64_t off = rg_ev_u64(l, o, "offset"), bytes = rg_ev_u64(l, o, "bytes");
    json_t *answered = json_object_get(o, "answered");
    if (answered && json_is_true(answered))
        return; /* reported apart, by the summary's count (fi_internal.h, struct fi_heard) */
    if (!ev->own_first[0])
        snprintf(ev->own_first, sizeof(ev->own_first),
                 "%s: qp 0x%llx, wr_id 0x%llx, byte %llu of %llu",
                 send ? "a send buffer rewritten before its completion"
                      : "a posted receive buffer written past the bytes that arrived",
                 (unsigned long long)qp, (unsigned long long)wr_id, (unsigned long long)off,
                 (unsigned long long)bytes);
}

static void take_alive(rg_ev_line *l, struct rg_ev_proc *pr, json_t *o)
{
    static const char *const kinds[6] = {"contexts", "pds", "mrs", "cqs", "qps", "channels"};
    if (strcmp(rg_ev_str(l, o, "why"), "exit"))
        return;
    pr->alive_at_exit = true;
    for (int i = 0; i < 6; i++) {
        json_t *v = json_object_get(o, kinds[i]);
        if (v && !json_is_integer(v))
            rg_ev_bad(l, "\"%s\" is not an integer", kinds[i]);
        pr->alive[i] = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
    }
}

/* A CQ's summary: what the shim held for a CQ with a completion channel, its latest word. */
static void take_cq(rg_ev_line *l, struct rg_ev_proc *pr, json_t *o)
{
    if (!rg_ev_bool(l, o, "channel"))
        return; /* absent (an older shim's): no channel it said */
    int64_t ord = (int64_t)(rg_ev_u64(l, o, "cq_ord") & INT64_MAX);
    uint64_t held = rg_ev_u64(l, o, "held");
    int i = 0;
    while (i < pr->nheld && pr->held[i].cq_ord != ord)
        i++;
    if (i == RG_EV_HELD) {
        pr->held_over |= held > 0;
        return;
    }
    if (i == pr->nheld)
        pr->nheld++;
    pr->held[i].cq_ord = ord;
    pr->held[i].held = held;
}

static void take_totals(rg_ev_line *l, struct rg_ev_proc *pr, json_t *o)
{
    pr->totals = true;
    pr->snapshot = !strcmp(rg_ev_str(l, o, "why"), "snapshot");
    pr->contexts = rg_ev_u64(l, o, "contexts");
    pr->qps = rg_ev_u64(l, o, "qps");
    pr->cqs = rg_ev_u64(l, o, "cqs");
    pr->posts_send = rg_ev_u64(l, o, "posts_send");
    pr->posts_recv = rg_ev_u64(l, o, "posts_recv");
    pr->polls = rg_ev_u64(l, o, "polls");
    pr->cqe = rg_ev_u64(l, o, "cqe");
    pr->cqe_err = rg_ev_u64(l, o, "cqe_err");
}

static void take(rg_ev_line *l, rg_evidence *ev, json_t *o, bool *fresh)
{
    const char *name = rg_ev_str(l, o, "event");
    int rule = rule_of(l, o);
    struct rg_ev_proc *pr = proc_of(l, ev, o);
    if (!strcmp(name, "load")) {
        take_load(l, ev, pr, o);
    } else if (!strcmp(name, "fault") && json_is_string(json_object_get(o, "skipped"))) {
        /* A fire that could not act (fi_unfire): not a fault, but the reason it proves nothing. */
        if (rule >= 0 && !ev->unacted[rule]++)
            snprintf(ev->unacted_why[rule], sizeof(ev->unacted_why[rule]), "%s",
                     rg_ev_str(l, o, "skipped"));
    } else if (!strcmp(name, "fault")) {
        take_fault(ev, pr, o, rule);
        json_t *st = json_object_get(o, "step"), *rp = json_object_get(o, "rep");
        if (rule >= 0 && !ev->fired_at[rule].seen) {
            struct rg_ev_at *w = &ev->fired_at[rule];
            w->seen = true;
            /* Phases a program can have (take_phase's bounds); anything else names none. */
            w->known = json_is_integer(st) && json_is_integer(rp) && json_integer_value(st) >= -1 &&
                       json_integer_value(st) <= FI_PHASE_MAX && json_integer_value(rp) >= 0 &&
                       json_integer_value(rp) <= FI_PHASE_MAX;
            w->step = w->known ? (int)json_integer_value(st) : 0;
            w->rep = w->known ? (int)json_integer_value(rp) : 0;
            if (!w->known && (st || rp))
                rg_ev_bad(l, "\"step\" or \"rep\" is not a step of a program");
        }
        /* Where it landed: "" when it fired outside a verbs call the shim names. */
        const char *at = rg_ev_str(l, o, "caller");
        rg_ev_site *s = at[0] ? site_of(l, ev, at, from_of(o)) : NULL;
        if (s)
            s->fired++;
        if (s && rule >= 0 && ev->rule_site[rule] < 0)
            ev->rule_site[rule] = (int)(s - ev->site);
    } else if (!strcmp(name, "caller")) {
        take_caller(l, ev, o);
    } else if (!strcmp(name, "callers")) {
        ev->sites = true;
        uint64_t lost = rg_ev_u64(l, o, "lost");
        if (lost > ev->sites_lost)
            ev->sites_lost = lost;
    } else if (!strcmp(name, "rule") && rule >= 0) {
        pr->fired[rule] = rg_ev_u64(l, o, "fired");
        pr->matched[rule] = (int64_t)(rg_ev_u64(l, o, "matched") & INT64_MAX);
    } else if (!strcmp(name, "qp")) {
        take_qp(l, ev, o, fresh);
        /* A QP's last word is at its destroy or at exit; snapshots and requests come between. */
        const char *why = rg_ev_str(l, o, "why");
        if (!strcmp(why, "destroy") || !strcmp(why, "exit")) {
            take_by_op(l, ev->op_posts, json_object_get(o, "posts_op"));
            take_by_op(l, ev->op_cqe, json_object_get(o, "cqe_op"));
            if (ev->nqpl == RG_EV_QPL) {
                ev->qpl_over++;
            } else {
                struct rg_ev_qpl *q = &ev->qpl[ev->nqpl++];
                memset(q, 0, sizeof(*q));
                q->pid = pr->pid;
                snprintf(q->dev, sizeof(q->dev), "%.15s", rg_ev_str(l, o, "dev"));
                q->qpn = rg_ev_u64(l, o, "qp");
                q->ord = (int64_t)(rg_ev_u64(l, o, "qp_ord") & INT64_MAX);
                q->type = (int64_t)(rg_ev_u64(l, o, "type") & INT64_MAX);
                q->srq = rg_ev_bool(l, o, "srq");
                take_by_op(l, q->posts, json_object_get(o, "posts_op"));
                take_by_op(l, q->cqe, json_object_get(o, "cqe_op"));
            }
        }
    } else if (!strcmp(name, "cq")) {
        take_cq(l, pr, o);
    } else if (!strcmp(name, "note")) {
        /* A UC QP the shim created as RC (a uc_as_rc rule): what the run changed, counted. */
        if (!strncmp(rg_ev_str(l, o, "what"), "uc_as_rc:", 9))
            ev->as_rc_qps++;
    } else if (!strcmp(name, "exit")) {
        pr->exit_seen = true;
        /* exit() passes status & 0377 to the parent: what a wait would have said. The schema
         * checked the field is an integer. */
        pr->exit_status = (int)(json_integer_value(json_object_get(o, "status")) & 0xff);
        pr->exit_mono_ms = rg_ev_ms(l, o, "mono_ms");
    } else if (!strcmp(name, "phase")) {
        take_phase(l, ev, o);
    } else if (!strcmp(name, "ownership")) {
        take_ownership(l, ev, o);
    } else if (!strcmp(name, "owned")) {
        pr->owned = true;
        pr->own_sends = rg_ev_u64(l, o, "sends");
        pr->own_recvs = rg_ev_u64(l, o, "recvs");
        pr->own_rewritten = rg_ev_u64(l, o, "rewritten");
        pr->own_answered = rg_ev_u64(l, o, "answered");
        pr->own_unsanitized = rg_ev_u64(l, o, "unsanitized");
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
        ev->own_answered += pr->own_answered;
        ev->own_unsanitized += pr->own_unsanitized;
    }
    if (ev->nprocs) {
        const struct rg_ev_proc *first = &ev->proc[0];
        ev->snapshot_signal = first->snapshot_signal;
    }
}

/* One event into the rank's evidence (rg_ev_each's callback). */
struct take_arg {
    rg_evidence *ev;
    bool fresh; /* the next qp event starts a new list of queues */
};
static void take_line(rg_ev_line *l, json_t *o, void *arg)
{
    struct take_arg *a = arg;
    take(l, a->ev, o, &a->fresh);
}

int rg_evidence_read(const char *path, rg_evidence *ev, char *err, size_t errlen)
{
    memset(ev, 0, sizeof(*ev));
    ev->first_fault_mono_ms = -1;
    ev->first_fault_rule = -1;
    for (int i = 0; i < FI_MAX_RULES; i++)
        ev->matched[i] = ev->rule_site[i] = ev->rx_pkts[i] = ev->rx_dup[i] = ev->rx_oos[i] = -1;
    struct take_arg a = {ev, true};
    int rc = rg_ev_each_shim(path, take_line, &a, &ev->bad_lines, ev->unreadable,
                             sizeof(ev->unreadable), err, errlen);
    if (rc < 0)
        return -1;
    ev->present = rc > 0;
    sum_procs(ev);
    return 0;
}
