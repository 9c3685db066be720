/* SPDX-License-Identifier: MIT */
/*
 * The scenario's judgement: each rank's verdict (its findings, by precedence) against what the
 * scenario expects of it, known failures, and the first failure named -- the one that explains
 * the rest. Pure: the unit tests drive every rule.
 */
#include "judge/rg_judge.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the scenario -------------------------------------------------------------------------- */

/* A detected with a place (detected@init) must have stopped the rank there: a check that is
 * broken but whose fallback fires later (a timeout in the first call instead of a refusal at
 * init) is another behaviour, not the expected one. */
/* The finding a rank is judged by: its verdict's, or with leak_ok the highest one below a LEAK
 * (-1: the leak was its only finding, so it is judged ok). */
static int judged_by(const rg_rank_result *k, bool leak_ok)
{
    int best = -1;
    for (int i = 0; i < k->nfindings; i++) {
        rg_verdict v = k->finding[i].verdict;
        if ((v == RG_V_LEAK && leak_ok) || (best >= 0 && v <= k->finding[best].verdict))
            continue;
        best = i;
    }
    return best;
}

static rg_verdict judged_verdict(const rg_rank_result *k, bool leak_ok)
{
    if (k->verdict != RG_V_LEAK || !leak_ok)
        return k->verdict;
    int i = judged_by(k, leak_ok);
    return i < 0 ? RG_V_OK : k->finding[i].verdict;
}

/* The class part of an expectation: met, or not checkable (a v1 transport carries none). */
static bool class_ok(const rg_rank_result *k, uint32_t cls)
{
    if (!cls || k->status == RG_STATUS_V1)
        return true;
    /* A peer's end reaches a rank only through a channel it can close. A rank whose transport
     * kept no socket after init (Gloo: its store is gone) and waits on an RC receive, which no
     * dead sender is told of, can know it only by its own timeout: peer_abort asked of it
     * takes timeout, as slow detection is not judged of it (rg_evidence_rules.c). */
    if (k->status == RG_ERR_TIMEOUT && (cls & (1u << -RG_ERR_PEER_ABORT)) && k->sockets_known &&
        k->sockets == 0)
        return true;
    return k->status < 0 && k->status > -RG_SC_CLASS_BITS && (cls & (1u << -k->status));
}

static bool acceptable(const rg_rank_result *k, rg_sc_expect e, int at, uint32_t cls, bool leak_ok)
{
    rg_verdict v = judged_verdict(k, leak_ok);
    if (v == RG_V_UNSUPPORTED) /* skipped: not what was expected, and not a failure either */
        return true;
    switch (e) {
    case RG_SC_EXPECT_OK:
        return v == RG_V_OK;
    case RG_SC_EXPECT_DETECTED:
        return v == RG_V_DETECTED && (at == RG_SC_AT_ANY || k->step == at) && class_ok(k, cls);
    case RG_SC_EXPECT_ANY:
        return v == RG_V_OK || v == RG_V_DETECTED || v == RG_V_KILLED;
    case RG_SC_EXPECT_KILLED:
        return v == RG_V_KILLED;
    case RG_SC_EXPECT_OK_OR_DETECTED:
        return v == RG_V_OK ||
               (v == RG_V_DETECTED && (at == RG_SC_AT_ANY || k->step == at) && class_ok(k, cls));
    }
    return false;
}

bool rg_rank_acceptable(const rg_result *r, int i)
{
    return acceptable(&r->rank[i], r->expect[i], r->expect_at[i], r->expect_cls[i], r->leak_ok);
}

rg_verdict rg_rank_judged(const rg_result *r, int i)
{
    return judged_verdict(&r->rank[i], r->leak_ok);
}

static void fail_line(char *out, size_t len, const rg_result *r, int i)
{
    const rg_rank_result *k = &r->rank[i];
    rg_verdict v = judged_verdict(k, r->leak_ok);
    int f = v == k->verdict ? -1 : judged_by(k, r->leak_ok);
    bool own = v == k->verdict; /* else the leak's text is not what is judged */
    const char *detail = f >= 0 ? k->finding[f].text : own ? k->detail : "";
    double t = f >= 0 ? k->finding[f].t_s : own ? k->t_s : -1;
    char at[48] = "", want[RG_SC_EXPECT_STR_MAX], in[200] = "", cls[64] = "";
    if (t >= 0)
        snprintf(at, sizeof(at), " at %.2f s", t);
    rg_sc_expect_str(r->expect[i], r->expect_at[i], r->expect_cls[i], want, sizeof(want));
    if (v == RG_V_DETECTED && r->expect_cls[i]) {
        char name[32];
        if (k->status < 0)
            snprintf(cls, sizeof(cls), " (%s)", rg_sc_class_name(k->status, name, sizeof(name)));
        else
            snprintf(cls, sizeof(cls), " (no status: %s)",
                     k->status == RG_STATUS_V1 ? "ABI v1" : "no call failed");
    }
    if (v == RG_V_DETECTED && r->expect_at[i] != RG_SC_AT_ANY && k->step < 0)
        snprintf(in, sizeof(in), " in init");
    else if (v == RG_V_DETECTED && r->expect_at[i] != RG_SC_AT_ANY)
        snprintf(in, sizeof(in), " in step %d (%s)", k->step, k->where);
    if (v == RG_V_UNSUPPORTED) /* no expectation was met or missed: nothing ran */
        snprintf(out, len, "rank %d: unsupported%s: %s", i, at, detail);
    else if (v > RG_V_KILLED)
        snprintf(out, len, "rank %d: %s%s in %s: %s", i, rg_verdict_name(v), at, k->where, detail);
    else
        snprintf(out, len, "rank %d: %s%s%s%s, expected %s%s%s", i, rg_verdict_name(v), cls, at, in,
                 want, detail[0] ? ": " : "", detail);
}

/*
 * A failure is a rank whose verdict is not what the scenario expects. The one named is the one
 * that explains the rest: a failure of the rank's own before one a peer's abort told it of
 * (RG_ERR_PEER_ABORT is a consequence by its meaning, and the aborting rank tells its peers
 * before it says its own verdict, so the consequence can be stamped first); of two timeouts
 * in different steps, the one in the earlier step (the others waited for it); then the first in
 * time (a rank whose time is unknown comes after those that have one), ties going to a rank
 * that is no service (a server still running at the deadline because its client never ended
 * is the consequence, not the cause), then the higher verdict, then the lower rank.
 */
static bool explains_before(const rg_rank_result *k, const rg_rank_result *f)
{
    bool told_k = k->status == RG_ERR_PEER_ABORT, told_f = f->status == RG_ERR_PEER_ABORT;
    if (told_k != told_f)
        return told_f;
    /* Two ranks that ran out of time in different steps: the one behind is what the one ahead
     * waited for (a rank in finalize waits on a peer still stuck in the last step). Their
     * times are a photo finish of two equal timeouts, and would name either. */
    if (k->status == RG_ERR_TIMEOUT && f->status == RG_ERR_TIMEOUT && k->step != f->step)
        return k->step < f->step;
    double tk = k->t_s < 0 ? 1e300 : k->t_s, tf = f->t_s < 0 ? 1e300 : f->t_s;
    return tk < tf || (tk == tf && f->service && !k->service) ||
           (tk == tf && f->service == k->service && k->verdict > f->verdict);
}

/* A failure whose signature a known-failures entry names is xfail, whatever its scenario: the
 * first failure stays said in why, with the entry's line and reason. An entry by cause names
 * the cause the failure's own files proved (r->cause), and whatever else it names. */
static void known_by_signature(rg_result *r)
{
    if (!r->nksig)
        return;
    rg_sig s;
    rg_signature(r, &s);
    for (int i = 0; i < r->nksig; i++) {
        const rg_sc_ksig *k = &r->ksig[i];
        if ((k->cause && k->cause != r->cause) || !rg_sig_matches(k, &s))
            continue;
        char why[sizeof(r->why) + sizeof(k->why) + 128];
        if (k->cause)
            snprintf(why, sizeof(why), "known failure (cause, line %d): %s; proven: %s; %s",
                     k->line, k->why, rg_cause_title(k->cause), r->why);
        else
            snprintf(why, sizeof(why), "known failure (signature, line %d): %s; %s", k->line,
                     k->why, r->why);
        rg_cut(r->why, sizeof(r->why), why);
        r->first[0] = '\0';
        r->first_rank = -1;
        r->passed = true;
        r->known_state = RG_KNOWN_XFAIL;
        return;
    }
}

/* A scenario a known signature was seen in, passing: the bug did not show this time (gone, or
 * flaky: the entry's rate says how often it showed). */
static void seen_passing(rg_result *r)
{
    for (int i = 0; i < r->nksig; i++)
        for (int j = 0; j < r->ksig[i].nseen; j++) {
            const rg_sc_ksig *k = &r->ksig[i];
            if (strcmp(k->seen[j], r->name) != 0)
                continue;
            r->known_state = RG_KNOWN_XPASS;
            snprintf(r->why, sizeof(r->why),
                     "known failure did not happen this time (%s, line %d%s%s%s): %s",
                     k->cause ? "cause" : "signature", k->line, k->rate[0] ? "; seen in " : "",
                     k->rate, k->rate[0] ? " re-runs" : "", k->why);
            return;
        }
}

bool rg_judge(rg_result *r)
{
    int first = -1, known = 0, matched = 0, skipped = -1;
    r->passed = true;
    r->skipped = false;
    r->why[0] = '\0';
    r->first[0] = '\0';
    r->first_rank = -1;
    r->known_state = RG_KNOWN_NONE;
    for (int i = 0; i < r->ranks; i++) {
        const rg_rank_result *k = &r->rank[i];
        /* A rank failing exactly as the known failure says is not a new failure. */
        if (judged_verdict(k, r->leak_ok) == RG_V_UNSUPPORTED && skipped < 0)
            skipped = i;
        bool as_known =
            r->known[i] > RG_V_KILLED && (int)judged_verdict(k, r->leak_ok) == r->known[i];
        known += r->known[i] > RG_V_KILLED;
        matched += as_known;
        if (as_known || acceptable(k, r->expect[i], r->expect_at[i], r->expect_cls[i], r->leak_ok))
            continue;
        r->passed = false;
        if (first < 0) {
            first = i;
            continue;
        }
        if (explains_before(k, &r->rank[first]))
            first = i;
    }
    if (first >= 0) {
        r->first_rank = first;
        fail_line(r->why, sizeof(r->why), r, first);
        char line[sizeof(r->first) + 16];
        snprintf(line, sizeof(line), "first failure: %s", r->why);
        rg_cut(r->first, sizeof(r->first), line);
        known_by_signature(r);
    } else if (skipped >= 0) {
        /* What did not run cannot be said to have passed, nor its known failure to be gone. */
        r->skipped = true;
        fail_line(r->why, sizeof(r->why), r, skipped);
    } else if (known) {
        r->known_state = matched ? RG_KNOWN_XFAIL : RG_KNOWN_XPASS;
        snprintf(r->why, sizeof(r->why), "%s: %s",
                 matched ? "known failure" : "known failure did not happen (remove it?)",
                 r->known_why);
    } else {
        seen_passing(r);
    }
    return r->passed;
}
