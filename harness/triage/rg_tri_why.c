/* SPDX-License-Identifier: MIT */
/*
 * A group's cause, where the evidence proves one (rg_triage.h): never a guess. Each cause is
 * named only with the lines it rests on -- the shim's events of the rank, its result, its
 * scenario's times -- and a failure none of them explains says so.
 *   an error polled, then ignored   ERROR_SWALLOWED, and the shim's fault events on that rank
 *                                   that handed it the error completions or negative polls
 *   a buffer reused in flight       BUFFER_REWRITTEN_IN_FLIGHT, and the sanitizer's
 *                                   ownership events on that rank
 *   a UC send with no receive, a wait for a message never sent
 *                                   from the ranks' verbs traces (rg_tri_qp.c)
 *   a wait with no deadline         DEADLOCK: still inside one call at the deadline, longer
 *                                   past that call's start than the timeout the transport was
 *                                   given, with no rank returning a timeout; the hung frames
 * Each is tried on its own, in that order, and a run can prove several (a UC drop, and the wait
 * with no deadline it hung in): rg_tri_diagnose_all keeps them all, rg_tri_diagnose the first.
 */
#include "triage/rg_triage.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines of rank r's events file holding `event` (and `also`, when given) into c's citations. */
static int cite(const rg_result *r, int rank, const char *event, const char *also, rg_tri_cause *c)
{
    char path[1200], line[2048], want[64];
    snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", r->dir, rank);
    snprintf(want, sizeof(want), "\"event\":\"%s\"", event);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = 0, no = 0;
    while (fgets(line, sizeof(line), f)) {
        no++;
        if (!strstr(line, want) || (also && !strstr(line, also)))
            continue;
        n++;
        if (c->nlines < RG_TRI_CITES) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(c->line[c->nlines++], sizeof(c->line[0]), "rank%d.events.jsonl:%d: %.300s",
                     rank, no, line);
        }
    }
    fclose(f);
    return n;
}

/* The whole value of "field":"..." in the first fault event of rank's events file that handed
 * an error (a "status" or a "ret") and has it: the cited lines are cut short, a path is not.
 * "" when none has it. */
static void first_value(const rg_result *r, int rank, const char *field, char *out, size_t len)
{
    char path[1200], line[4096], want[64];
    snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", r->dir, rank);
    snprintf(want, sizeof(want), "\"%s\":\"", field);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (!out[0] && fgets(line, sizeof(line), f)) {
        const char *v = strstr(line, want);
        if (!strstr(line, "\"event\":\"fault\"") || !v ||
            (!strstr(line, "\"status\"") && !strstr(line, "\"ret\"")))
            continue;
        v += strlen(want);
        size_t n = strcspn(v, "\"");
        snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), v);
    }
    fclose(f);
}

/* The value of "field":"..." in the first cited line that has it, its object path cut to the
 * file's name (a call site "OBJ+0xOFF<OBJ+0xOFF..." keeps its first frame): what two runs of
 * one build say alike of one code site. "" when none has it. */
static void cited_site(const rg_tri_cause *c, const char *field, char *out, size_t len)
{
    char want[64];
    snprintf(want, sizeof(want), "\"%s\":\"", field);
    out[0] = '\0';
    for (int i = 0; i < c->nlines && !out[0]; i++) {
        const char *v = strstr(c->line[i], want);
        if (!v)
            continue;
        v += strlen(want);
        size_t n = strcspn(v, "\"<");
        const char *base = v;
        for (const char *p = v; p < v + n; p++)
            if (*p == '/')
                base = p + 1;
        n -= (size_t)(base - v);
        snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), base);
    }
}

static void said(rg_tri_cause *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void said(rg_tri_cause *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof(c->text), fmt, ap);
    va_end(ap);
}

/* A hang past the timeout the transport had: its call began at step_t and ran to the deadline. */
static bool no_deadline(const rg_result *r, int o, rg_tri_cause *c)
{
    static rg_scenario sc;
    char err[600];
    const rg_rank_result *k = &r->rank[o];
    /* Still running at the deadline: a rank that ended late on a second attempt (rg_slow.c
     * names that DEADLOCK too) waited with some deadline of its own. */
    if (k->step_t_s < 0 || k->left_t_s >= 0 ||
        rg_scenario_load(r->path, &sc, err, sizeof(err)) != 0)
        return false;
    double scale = r->time_scale > 1 ? r->time_scale : 1;
    double cut = r->deadline_cut_s > 0 ? r->deadline_cut_s : sc.deadline_s;
    double timeout = sc.timeout_s * scale, deadline = cut * scale;
    /* Where the run stopped it: its DEADLOCK's time, which is before the deadline when the
     * runner judged the hang when it was one (nothing moved for longer than the timeout and
     * its margin); else the deadline. */
    double end = deadline;
    char when[64];
    snprintf(when, sizeof(when), "at the %.0f s deadline", deadline);
    for (int i = 0; i < k->nfindings; i++)
        if (k->finding[i].verdict == RG_V_DEADLOCK && k->finding[i].t_s > 0 &&
            !strncmp(k->finding[i].text, RG_HANG_EARLY, strlen(RG_HANG_EARLY))) {
            end = k->finding[i].t_s;
            snprintf(when, sizeof(when), "when the run judged it hung at %.2f s", end);
        }
    double waited = end - k->step_t_s;
    if (sc.exec.on || timeout <= 0 || waited <= timeout)
        return false;
    for (int i = 0; i < r->ranks; i++)
        if (r->rank[i].status == RG_ERR_TIMEOUT)
            return false; /* some rank's call did time out */
    said(c,
         "a wait with no deadline: rank %d's %s began at %.2f s and was still running %s, %.1f "
         "s later, past the %.1f s timeout the transport was given; no rank of the scenario "
         "returned a timeout",
         o, k->where[0] ? k->where : "call", k->step_t_s, when, waited, timeout);
    return true;
}

/* c, zeroed, its run directory named: a slot for the next cause. */
static rg_tri_cause *slot(const rg_result *r, rg_tri_cause *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->from, sizeof(c->from), "%s", r->dir);
    return c;
}

int rg_tri_diagnose_all(const rg_result *r, const rg_sig *s, rg_tri_cause *cs, int max)
{
    return rg_tri_diagnose_ruled(r, s, cs, max, NULL);
}

int rg_tri_diagnose_ruled(const rg_result *r, const rg_sig *s, rg_tri_cause *cs, int max,
                          unsigned *ruled)
{
    char why[400] = "";
    int o = s->origin, n = 0;
    if (max < 1)
        return ruled ? rg_tri_qp_causes(r, s, cs, 0, why, sizeof(why), ruled) : 0;
    rg_verdict v = rg_rank_judged(r, o);
    rg_tri_cause *c = slot(r, &cs[0]);
    /* The first two are the origin's verdict itself: one of them at most. */
    if (v == RG_V_ERROR_SWALLOWED &&
        cite(r, o, "fault", "\"status\"", c) + cite(r, o, "fault", "\"ret\"", c) > 0) {
        c->proven = true;
        c->kind = RG_C_ERROR_IGNORED;
        char caller[RG_EV_OBJ_MAX + 40];
        first_value(r, o, "caller", caller, sizeof(caller));
        rg_tri_poll_site(caller, c);
        said(c,
             "an error polled, then ignored: the shim handed rank %d the error completion(s) or "
             "negative poll(s) below, and every call it made returned success",
             o);
        n++;
    } else if (v == RG_V_BUFFER_REWRITTEN_IN_FLIGHT && cite(r, o, "ownership", NULL, c) > 0) {
        c->proven = true;
        c->kind = RG_C_BUFFER_REUSED;
        char op[32];
        cited_site(c, "op", op, sizeof(op));
        if (op[0])
            snprintf(c->site, sizeof(c->site), "a %s buffer", op);
        said(c,
             "a buffer reused in flight: rank %d changed the memory of a posted request before "
             "its completion was polled (the sanitizer's findings below)",
             o);
        n++;
    }
    if (n < max || ruled) {
        /* the trace's own words and lines, and what they rule out (read even with no room left
         * for a cause) */
        int got = rg_tri_qp_causes(r, s, &cs[n < max ? n : 0], max - n, why, sizeof(why), ruled);
        for (int i = n; i < n + got; i++)
            snprintf(cs[i].from, sizeof(cs[i].from), "%s", r->dir);
        n += got;
    }
    if (n < max && v == RG_V_DEADLOCK && no_deadline(r, o, slot(r, &cs[n]))) {
        c = &cs[n++];
        c->proven = true;
        c->kind = RG_C_NO_DEADLINE;
        /* The frame it waits in: the signature's first own frame of a hung rank. */
        if (s->nframes > 0)
            snprintf(c->site, sizeof(c->site), "the wait in %s", s->frames[0]);
        for (int i = 0; i < s->nframes && c->nlines < RG_TRI_CITES; i++)
            snprintf(c->line[c->nlines++], sizeof(c->line[0]), "hung in %s (rank backtraces)",
                     s->frames[i]);
    }
    if (!n) {
        c = slot(r, &cs[0]);
        said(c,
             "none proven: the run's results, shim events and backtraces show what happened "
             "(above), not why%s%s",
             why[0] ? "; " : "", why);
    }
    return n;
}

void rg_tri_diagnose(const rg_result *r, const rg_sig *s, rg_tri_cause *c)
{
    rg_tri_diagnose_all(r, s, c, 1);
}

void rg_tri_diagnose_also(const rg_result *r, const rg_sig *s, rg_tri_cause *c, char *also,
                          size_t len)
{
    static rg_tri_cause cs[RG_TRI_CAUSES_MAX];
    int n = rg_tri_diagnose_all(r, s, cs, RG_TRI_CAUSES_MAX);
    *c = cs[0];
    also[0] = '\0';
    for (int i = 1; i < n; i++) {
        size_t at = strlen(also);
        snprintf(also + at, len - at, "%s%s%s%.200s%s", at ? "; " : "", rg_cause_title(cs[i].kind),
                 cs[i].site[0] ? " (" : "", cs[i].site, cs[i].site[0] ? ")" : "");
    }
}

unsigned rg_tri_ruled_out(const rg_result *r)
{
    static rg_tri_cause cs[RG_TRI_CAUSES_MAX];
    rg_sig s;
    unsigned ruled;
    rg_signature(r, &s);
    rg_tri_diagnose_ruled(r, &s, cs, RG_TRI_CAUSES_MAX, &ruled);
    return ruled;
}
