/* SPDX-License-Identifier: MIT */
/*
 * A scenario's timeline, from the evidence the runner and the shim already keep: each rank's
 * status lines as the runner received them (rankR.status: "<mono ms> step i rep label",
 * "<mono ms> verdict ..."), the shim's events (rankR.events.jsonl: fired faults, per-QP
 * summaries, every one stamped with CLOCK_MONOTONIC), the runner's wire events
 * (rankR.wire.jsonl: netem on and off, links down and up) and the judged result. Written as
 * trace.json in the Chrome Trace Event format (Perfetto and chrome://tracing open it as it
 * is) and read again by the run page for its picture. Every line of either file is checked
 * before use: a rank may have died mid-line, and the text is the transport's.
 */
#include "report/rg_report.h"
#include "evidence/rg_ev_field.h"
#include "evidence/rg_ev_wire.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a rank's stamps (ms on its host's CLOCK_MONOTONIC) count from: the scenario's start,
 * moved by the rank's measured offset when a merge placed ranks of several hosts. */
static double rank_base_ms(const rg_result *r, int rank)
{
    return r->t0_mono_ms + (r->clock_placed ? r->rank[rank].clock.offset_ms : 0);
}

/* Reading one rank's events: the QP whose "outstanding" event came last, and its text, for
 * the snapshot summary the shim writes right after it. */
struct reader {
    int pending_ord;
    char pending[400];
};

static void add_mark(rg_tl_rank *t, double at, const char *text)
{
    if (t->nmarks == RG_TL_MAX_MARKS)
        return; /* the first faults are the ones that explain a run */
    rg_tl_mark *m = &t->mark[t->nmarks++];
    m->t_s = at;
    snprintf(m->text, sizeof(m->text), "%s", text);
}

/* The end of whatever span is open, at `at` (never before its start). */
static void close_span(rg_tl_rank *t, double at, const char *result)
{
    if (!t->nspans || t->span[t->nspans - 1].t1_s >= 0)
        return;
    rg_tl_span *s = &t->span[t->nspans - 1];
    s->t1_s = at > s->t0_s ? at : s->t0_s;
    snprintf(s->result, sizeof(s->result), "%s", result);
}

static void take_status(double base_ms, rg_tl_rank *t, char *line)
{
    double ms;
    int off = 0, step, rep;
    if (sscanf(line, "%lf %n", &ms, &off) != 1 || off <= 0 || !isfinite(ms))
        return;
    double at = (ms - base_ms) / 1000.0;
    const char *v = line + off;
    if (sscanf(v, "step %d %d %n", &step, &rep, &off) == 2 && off > 0) {
        close_span(t, at, "ok");
        if (t->nspans == RG_TL_MAX_SPANS)
            return;
        rg_tl_span *s = &t->span[t->nspans++];
        *s = (rg_tl_span){.t0_s = at, .t1_s = -1, .step = step, .rep = rep};
        snprintf(s->label, sizeof(s->label), "%s", v + off);
    } else if (!strncmp(v, "verdict ", 8)) {
        char word[32] = "";
        sscanf(v + 8, "%31s", word);
        close_span(t, at, word);
        t->verdict_t_s = at;
    } else if (!strncmp(v, "status ", 7)) {
        snprintf(t->status, sizeof(t->status), "%.31s", v + 7);
    }
}

/* "sends: 0x1c (65552 B), ...; receives: ..." from the shim's arrays, each entry checked. */
static void oldest_text(char *out, size_t len, json_t *snd, json_t *rcv)
{
    size_t o = 0;
    json_t *lists[2] = {snd, rcv};
    const char *names[2] = {"sends", "receives"};
    out[0] = '\0';
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *e;
        if (!json_is_array(lists[l]) || !json_array_size(lists[l]))
            continue;
        o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%s%s:", o ? "; " : "", names[l]);
        json_array_foreach(lists[l], i, e)
        {
            const char *id = json_string_value(json_object_get(e, "wr_id"));
            json_t *n = json_object_get(e, "len");
            if (o < len && id && json_is_integer(n))
                o += (size_t)snprintf(out + o, len - o, " wr_id %.20s (%lld B)", id,
                                      (long long)json_integer_value(n));
        }
    }
    if (o >= len && len > 4)
        snprintf(out + len - 4, 4, "...");
}

/* A count the shim may not know (rg_fi_events.h, N): -1 for "unknown". */
static long long count_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? -1 : json_integer_value(v);
}

static const char *str_or(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "?";
}

/* One shim event: a fired fault, or a QP's summary. */
static void take_event(const rg_result *r, double base_ms, rg_tl_rank *t, struct reader *rd,
                       json_t *o)
{
    const char *ev = json_string_value(json_object_get(o, "event"));
    json_t *mono = json_object_get(o, "mono_ms");
    if (!ev || !json_is_number(mono))
        return;
    double at = (json_number_value(mono) - base_ms) / 1000.0;
    char text[sizeof(t->mark[0].text)];
    if (!strcmp(ev, "fault")) {
        json_t *ri = json_object_get(o, "rule");
        int i = json_is_integer(ri) ? (int)json_integer_value(ri) : -1;
        const char *rule = i >= 0 && i < r->nrules ? r->rule[i].rule : "?";
        /* The scenario file's line when the result has the rule, else the plan's. */
        long long line = i >= 0 && i < r->nrules && r->rule[i].line > 0
                             ? r->rule[i].line
                             : (long long)json_integer_value(json_object_get(o, "line"));
        snprintf(text, sizeof(text), "%s (line %lld) on %s #%lld", rule, line, str_or(o, "op"),
                 (long long)json_integer_value(json_object_get(o, "nth")));
        add_mark(t, at, text);
    } else if (!strcmp(ev, "outstanding")) {
        /* The shim writes it just before the same QP's snapshot summary: kept for it. */
        json_t *ord = json_object_get(o, "qp_ord");
        if (!json_is_integer(ord))
            return;
        rd->pending_ord = (int)json_integer_value(ord);
        oldest_text(rd->pending, sizeof(rd->pending), json_object_get(o, "send"),
                    json_object_get(o, "recv"));
    } else if (!strcmp(ev, "qp")) {
        if (t->nqps == RG_TL_MAX_QPS)
            return;
        rg_tl_qp *q = &t->qp[t->nqps++];
        q->t_s = at;
        q->ord = (int)json_integer_value(json_object_get(o, "qp_ord"));
        q->qpn = (unsigned)json_integer_value(json_object_get(o, "qp"));
        snprintf(q->dev, sizeof(q->dev), "%s", str_or(o, "dev"));
        snprintf(q->why, sizeof(q->why), "%s", str_or(o, "why"));
        q->posts_send = json_integer_value(json_object_get(o, "posts_send"));
        q->posts_recv = json_integer_value(json_object_get(o, "posts_recv"));
        q->cqe_send = json_integer_value(json_object_get(o, "cqe_send"));
        q->cqe_recv = json_integer_value(json_object_get(o, "cqe_recv"));
        q->out_send = count_of(o, "out_send");
        q->out_recv = count_of(o, "out_recv");
        q->oldest[0] = '\0';
        if (!strcmp(q->why, "snapshot") && rd->pending_ord == q->ord) {
            snprintf(q->oldest, sizeof(q->oldest), "%s", rd->pending);
            rd->pending_ord = -1;
        }
    }
}

/* One of the runner's wire events (rankR.wire.jsonl): a wire impaired or made whole, a link
 * down or up, an action that could not be done -- marks beside the shim's faults. */
static void take_wire(const rg_result *r, double base_ms, rg_tl_rank *t, json_t *o)
{
    static rg_wire_rec w;
    static char strs[8192];
    rg_ev_line l = {0};
    int kind;
    /* Read as the judge read it (evidence/rg_ev_wire.h): a line it refused marks nothing. */
    if (rg_ev_decode_in(&rg_ev_wire_table, &l, o, &kind, &w, strs, sizeof(strs)) != 0)
        return;
    double at = (w.on.mono_ms - base_ms) / 1000.0;
    int64_t i = w.on.rule;
    char text[sizeof(t->mark[0].text)], where[96];
    snprintf(where, sizeof(where), "%s (rail %lld, %s)", w.on.netdev, (long long)w.on.rail,
             w.on.dev);
    long long line = i >= 0 && i < r->nrules ? r->rule[i].line : 0;
    switch ((enum rg_wire_kind)kind) {
    case RG_WIREK_wire_on:
        snprintf(text, sizeof(text), "wire: netem %s on %s (line %lld)", w.on.spec, where, line);
        break;
    case RG_WIREK_wire_off:
        snprintf(text, sizeof(text), "wire: netem off %s: %llu packet(s) through, %llu dropped",
                 where, (unsigned long long)w.off.sent_pkts, (unsigned long long)w.off.dropped);
        break;
    case RG_WIREK_link:
        snprintf(text, sizeof(text), "wire: link %s %s (line %lld)", w.link.state, where, line);
        break;
    case RG_WIREK_wire_error:
        snprintf(text, sizeof(text), "wire: could not %s on %s: %s", w.error.what, where,
                 w.error.why);
        break;
    default:
        return;
    }
    add_mark(t, at, text);
}

/* Each whole JSON object line of path to take (the wire's) or take_event (the shim's). */
static bool read_events(const rg_result *r, double base, rg_tl_rank *t, struct reader *rd,
                        const char *path, bool wire)
{
    char line[2048];
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    while (fgets(line, sizeof(line), f)) {
        json_t *o = json_loads(line, 0, NULL);
        if (json_is_object(o)) {
            if (wire)
                take_wire(r, base, t, o);
            else
                take_event(r, base, t, rd, o);
        }
        json_decref(o);
    }
    fclose(f);
    return true;
}

int rg_timeline_load(const rg_result *r, int rank, rg_tl_rank *t)
{
    char path[1200], line[2048];
    memset(t, 0, sizeof(*t));
    t->verdict_t_s = -1;
    struct reader rd = {.pending_ord = -1};
    double base = rank_base_ms(r, rank);
    snprintf(path, sizeof(path), "%s/rank%d.status", r->dir, rank);
    FILE *f = fopen(path, "r");
    if (f) {
        t->have_status = true;
        while (fgets(line, sizeof(line), f)) {
            size_t n = strlen(line);
            if (!n || line[n - 1] != '\n')
                continue; /* a line cut short by a killed rank, or too long to be ours */
            line[n - 1] = '\0';
            take_status(base, t, line);
        }
        fclose(f);
    }
    /* A rank with no verdict line (hung, killed, crashed) ran until it left, or the end. */
    const rg_rank_result *k = &r->rank[rank];
    double end = k->left_t_s >= 0 ? k->left_t_s : r->seconds;
    close_span(t, end, rg_verdict_name(k->verdict));
    snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", r->dir, rank);
    t->have_events = read_events(r, base, t, &rd, path, false);
    snprintf(path, sizeof(path), "%s/rank%d.wire.jsonl", r->dir, rank);
    t->have_events |= read_events(r, base, t, &rd, path, true);
    return t->have_status || t->have_events ? 0 : -1;
}

int rg_first_failure(const rg_result *r)
{
    int f = r->first_rank;
    return f >= 0 && f < r->ranks && r->rank[f].t_s >= 0 ? f : -1;
}

/* --- trace.json ---------------------------------------------------------------------------- */
enum { TID_CALLS = 1, TID_MARKS = 2, TID_QP0 = 10 };

static json_int_t us(double s)
{
    return (json_int_t)llround(s * 1e6);
}

static void meta(json_t *a, int pid, int tid, const char *what, const char *name)
{
    json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", what, "ph", "M", "pid",
                                       pid, "tid", tid, "args", "name", name));
}

static void instant(json_t *a, int pid, int tid, double t_s, const char *name, const char *scope,
                    json_t *args)
{
    json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:I,s:i,s:i,s:o}", "name", name, "ph", "i",
                                       "s", scope, "ts", us(t_s), "pid", pid, "tid", tid, "args",
                                       args ? args : json_object()));
}

static void rank_events(json_t *a, const rg_result *r, int rank, const rg_tl_rank *t)
{
    char name[64];
    snprintf(name, sizeof(name), "rank %d", rank);
    meta(a, rank, 0, "process_name", name);
    json_array_append_new(a,
                          json_pack("{s:s,s:s,s:i,s:i,s:{s:i}}", "name", "process_sort_index", "ph",
                                    "M", "pid", rank, "tid", 0, "args", "sort_index", rank));
    meta(a, rank, TID_CALLS, "thread_name", "calls");
    meta(a, rank, TID_MARKS, "thread_name", "faults and verdict");
    for (int i = 0; i < t->nspans; i++) {
        const rg_tl_span *s = &t->span[i];
        json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:i,s:i,s:{s:i,s:i}}", "name", s->label,
                                           "ph", "B", "ts", us(s->t0_s), "pid", rank, "tid",
                                           TID_CALLS, "args", "step", s->step, "rep", s->rep));
        json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:i,s:i,s:{s:s}}", "name", s->label, "ph",
                                           "E", "ts", us(s->t1_s), "pid", rank, "tid", TID_CALLS,
                                           "args", "result", s->result));
    }
    for (int i = 0; i < t->nmarks; i++) {
        char n[sizeof(t->mark[i].text) + 8];
        snprintf(n, sizeof(n), "fault: %s", t->mark[i].text);
        instant(a, rank, TID_MARKS, t->mark[i].t_s, n, "t", NULL);
    }
    const rg_rank_result *k = &r->rank[rank];
    char v[96];
    snprintf(v, sizeof(v), "verdict: %s", rg_verdict_name(k->verdict));
    double vt = k->t_s >= 0 ? k->t_s : t->verdict_t_s >= 0 ? t->verdict_t_s : r->seconds;
    instant(
        a, rank, TID_MARKS, vt, v, "p",
        json_pack("{s:s,s:s,s:s}", "detail", k->detail, "where", k->where, "status", t->status));
    /* Per QP, one counter sample per summary; a summary taken at the deadline (a hung rank's
     * snapshot) also says what work its queues still held. */
    int ords[RG_TL_MAX_QPS], nords = 0;
    for (int i = 0; i < t->nqps; i++) {
        const rg_tl_qp *q = &t->qp[i];
        int j = 0;
        while (j < nords && ords[j] != q->ord)
            j++;
        if (j == nords && nords < RG_TL_MAX_QPS) {
            char tn[96];
            ords[nords++] = q->ord;
            snprintf(tn, sizeof(tn), "qp %d (%s 0x%x)", q->ord, q->dev, q->qpn);
            meta(a, rank, TID_QP0 + j, "thread_name", tn);
        }
        char cn[32];
        snprintf(cn, sizeof(cn), "qp %d", q->ord);
        json_array_append_new(
            a,
            json_pack("{s:s,s:s,s:I,s:i,s:i,s:{s:I,s:I,s:I,s:I}}", "name", cn, "ph", "C", "ts",
                      us(q->t_s), "pid", rank, "tid", TID_QP0 + j, "args", "posts_send",
                      (json_int_t)q->posts_send, "cqe_send", (json_int_t)q->cqe_send, "posts_recv",
                      (json_int_t)q->posts_recv, "cqe_recv", (json_int_t)q->cqe_recv));
        if (!strcmp(q->why, "snapshot") && (q->out_send > 0 || q->out_recv > 0)) {
            char n[160], ns[24] = "unknown", nr[24] = "unknown";
            if (q->out_send >= 0)
                snprintf(ns, sizeof(ns), "%lld", (long long)q->out_send);
            if (q->out_recv >= 0)
                snprintf(nr, sizeof(nr), "%lld", (long long)q->out_recv);
            snprintf(n, sizeof(n), "outstanding at the deadline: %s send(s), %s receive(s)", ns,
                     nr);
            instant(a, rank, TID_QP0 + j, q->t_s, n, "t",
                    q->oldest[0] ? json_pack("{s:s}", "oldest", q->oldest) : NULL);
        }
    }
}

int rg_trace_write(const rg_result *r, const char *path, char *err, size_t errlen)
{
    json_t *a = json_array();
    rg_tl_rank *t = malloc(sizeof(*t));
    int first = rg_first_failure(r);
    if (!a || !t) {
        snprintf(err, errlen, "out of memory");
        json_decref(a);
        free(t);
        return -1;
    }
    for (int rank = 0; rank < r->ranks; rank++) {
        rg_timeline_load(r, rank, t);
        rank_events(a, r, rank, t);
    }
    free(t);
    if (first >= 0) {
        char n[96];
        snprintf(n, sizeof(n), "first failure: rank %d %s", first,
                 rg_verdict_name(r->rank[first].verdict));
        instant(a, first, TID_MARKS, r->rank[first].t_s, n, "g", json_pack("{s:s}", "why", r->why));
    }
    char clock[200];
    if (r->clock_placed)
        snprintf(clock, sizeof(clock),
                 "rank 0's CLOCK_MONOTONIC, microseconds from the scenario's start; other hosts' "
                 "ranks placed by offsets measured at the start, within +-%.3f ms",
                 r->clock_err_ms);
    else
        snprintf(clock, sizeof(clock), "CLOCK_MONOTONIC, microseconds from the scenario's start");
    json_t *offsets = json_array();
    for (int rank = 0; r->clock_placed && rank < r->ranks; rank++)
        json_array_append_new(offsets, json_real(r->rank[rank].clock.offset_ms));
    json_t *top =
        json_pack("{s:o,s:s,s:{s:s,s:s,s:s,s:f,s:s,s:o}}", "traceEvents", a, "displayTimeUnit",
                  "ms", "otherData", "scenario", r->name, "result", rg_result_word(r), "clock",
                  clock, "t0_mono_ms", r->t0_mono_ms, "host", r->host, "clock_offsets_ms", offsets);
    if (!top || json_dump_file(top, path, JSON_COMPACT) != 0) {
        snprintf(err, errlen, "cannot write %s", path);
        json_decref(top);
        return -1;
    }
    json_decref(top);
    return 0;
}
