/* SPDX-License-Identifier: MIT */
/*
 * The verdict table and the judgement: each rank's findings (what its worker reported, how its
 * process ended, what the shim's evidence says), the precedence that picks its verdict, and the
 * scenario's pass or fail with its first failure named. Pure: the unit tests drive every rule.
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
    }
    return false;
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
 * before it says its own verdict, so the consequence can be stamped first); then the first in
 * time (a rank whose time is unknown comes after those that have one), ties going to a rank
 * that is no service (a server still running at the deadline because its client never ended
 * is the consequence, not the cause), then the higher verdict, then the lower rank.
 */
static bool explains_before(const rg_rank_result *k, const rg_rank_result *f)
{
    bool told_k = k->status == RG_ERR_PEER_ABORT, told_f = f->status == RG_ERR_PEER_ABORT;
    if (told_k != told_f)
        return told_f;
    double tk = k->t_s < 0 ? 1e300 : k->t_s, tf = f->t_s < 0 ? 1e300 : f->t_s;
    return tk < tf || (tk == tf && f->service && !k->service) ||
           (tk == tf && f->service == k->service && k->verdict > f->verdict);
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
    } else if (skipped >= 0) {
        /* What did not run cannot be said to have passed, nor its known failure to be gone. */
        r->skipped = true;
        fail_line(r->why, sizeof(r->why), r, skipped);
    } else if (known) {
        r->known_state = matched ? RG_KNOWN_XFAIL : RG_KNOWN_XPASS;
        snprintf(r->why, sizeof(r->why), "%s: %s",
                 matched ? "known failure" : "known failure did not happen (remove it?)",
                 r->known_why);
    }
    return r->passed;
}

/* --- evidence ------------------------------------------------------------------------------ */

static const char *short_rule(const char *rule, char *buf, size_t len)
{
    size_t n = strlen(rule);
    if (n < len) {
        snprintf(buf, len, "%s", rule);
    } else {
        snprintf(buf, len, "%.*s...", (int)(len - 4), rule);
    }
    return buf;
}

/* Whether a process of the rank loaded the shim but left no summary (killed by its own parent,
 * a watchdog, before exit): what the rank did with verbs is then not known from the totals. */
static bool summary_lost(const rg_evidence *e)
{
    for (int p = 0; p < e->nprocs && p < RG_EV_PROCS; p++)
        if (e->proc[p].loaded && !e->proc[p].totals)
            return true;
    return false;
}

void rg_evidence_apply(rg_result *r, const rg_scenario *sc, const rg_evidence *ev, int lo, int hi,
                       double t0_mono_ms, int rules)
{
    bool whole = (rules & RG_EV_CROSS) != 0;
    double first_fault = -1;
    int first_rank = -1;

    /* Each rule's fired and matched counts, summed over the ranks here. */
    r->nrules = sc->nfaults;
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++) {
        rg_rule_result *u = &r->rule[i];
        memset(u, 0, sizeof(*u));
        snprintf(u->rule, sizeof(u->rule), "%s", sc->fault[i].rule);
        u->line = sc->fault[i].line;
        u->optional = sc->fault[i].optional;
        u->counting = sc->fault[i].kind == FI_COUNT;
        u->matched = -1;
        for (int k = lo; k < hi; k++) {
            u->fired += ev[k].fired[i];
            u->fired_by[k] = (uint32_t)(ev[k].fired[i] > UINT32_MAX ? UINT32_MAX : ev[k].fired[i]);
            if (ev[k].matched[i] >= 0)
                u->matched = (u->matched < 0 ? 0 : u->matched) + ev[k].matched[i];
        }
    }
    for (int k = lo; k < hi; k++) {
        if (ev[k].first_fault_mono_ms >= 0 &&
            (first_fault < 0 || ev[k].first_fault_mono_ms < first_fault)) {
            first_fault = ev[k].first_fault_mono_ms;
            first_rank = k;
        }
    }

    for (int k = lo; k < hi; k++) {
        rg_rank_result *res = &r->rank[k];
        const rg_evidence *e = &ev[k];
        /* Not instrumented: the shim never loaded, or saw no verbs object in a rank that got
         * past its start, so any fault plan was a silent no-op there. */
        if (!(rules & RG_EV_RANK)) {
            /* instrumentation was judged with the rank */
        } else if (!e->present || !e->loaded) {
            rg_rank_find(res, RG_V_ERROR, -1,
                         "not instrumented: the shim did not load (no 'load' event in its "
                         "events file%s)",
                         e->present ? "" : ", which is missing");
        } else if (e->totals && e->contexts == 0 && e->qps == 0 && res->step >= 0 &&
                   !summary_lost(e)) {
            rg_rank_find(res, RG_V_ERROR, -1,
                         "not instrumented: the shim saw no verbs calls (0 devices opened, 0 QPs) "
                         "though the rank ran: it reached verbs some other way (a static "
                         "libibverbs, a provider's own calls), or not at all");
        }
        /* Evidence that cannot be read proves nothing either way: a finding, never a skip. */
        if ((rules & RG_EV_RANK) && e->bad_lines)
            rg_rank_find(res, RG_V_ERROR, -1, "evidence unreadable: rank %d events %s%s", k,
                         e->unreadable, e->bad_lines > 1 ? " (the first of several)" : "");
        /* detected counts only as the consequence of a fault that had already fired. */
        for (int f = 0; whole && f < res->nfindings; f++) {
            rg_finding *fd = &res->finding[f];
            if (fd->verdict != RG_V_DETECTED)
                continue;
            double at = fd->t_s < 0 ? -1 : t0_mono_ms + fd->t_s * 1000.0;
            if (first_fault >= 0 && (at < 0 || first_fault <= at))
                continue;
            char why[160];
            if (first_fault < 0)
                snprintf(why, sizeof(why), "no planned fault fired on any rank: ");
            else
                snprintf(why, sizeof(why),
                         "the first fault (rank %d, faults item %d) fired %.3f s after this "
                         "error: ",
                         first_rank, ev[first_rank].first_fault_rule + 1,
                         (first_fault - at) / 1000.0);
            rg_rank_recast(res, RG_V_DETECTED, RG_V_ERROR_WITHOUT_FAULT, why);
            break;
        }
    }

    /*
     * Error accounting: an error completion or a negative poll the shim handed a rank must
     * come back out of some call (finalize included). A rank that read ok after one was
     * swallowing it, whatever its data; upstream that is mlx#3152 before memory pressure
     * made the stale buffer wrong.
     */
    for (int k = lo; (rules & RG_EV_RANK) && k < hi; k++) {
        rg_rank_result *res = &r->rank[k];
        /* A service stopped by the runner has no exit status to report an error with. */
        if ((res->verdict != RG_V_OK && res->verdict != RG_V_UNSUPPORTED) || res->service)
            continue;
        for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++) {
            int kind = sc->fault[i].kind;
            if ((kind != FI_ERROR && kind != FI_NEGPOLL) || ev[k].fired[i] == 0)
                continue;
            char shown[96];
            double at = ev[k].first_fault_mono_ms < 0
                            ? -1
                            : (ev[k].first_fault_mono_ms - t0_mono_ms) / 1000.0;
            rg_rank_find(res, RG_V_ERROR_SWALLOWED, at,
                         "faults item %d '%s' (line %d) handed this rank %llu injected %s, yet "
                         "every call it made returned success",
                         i + 1, short_rule(sc->fault[i].rule, shown, sizeof(shown)),
                         sc->fault[i].line, (unsigned long long)ev[k].fired[i],
                         kind == FI_ERROR ? "error completion(s)" : "negative poll(s)");
            break;
        }
    }

    /*
     * Buffer ownership: the sanitizer's findings, whatever the data said (a rewrite the NIC
     * happened to read before is invisible in the output), and its word on what it checked.
     */
    for (int k = lo; (rules & RG_EV_RANK) && sc->ownership && k < hi; k++) {
        const rg_evidence *e = &ev[k];
        rg_rank_result *res = &r->rank[k];
        if (e->own_first[0])
            rg_rank_find(res, RG_V_BUFFER_REWRITTEN_IN_FLIGHT, res->left_t_s, "%s%s", e->own_first,
                         e->own_rewritten > 1 ? " (the first of several)" : "");
        if (!e->owned)
            snprintf(res->ownership, sizeof(res->ownership), "not known: the rank left no summary");
        else if (e->own_unsanitized)
            snprintf(res->ownership, sizeof(res->ownership),
                     "not sanitized: %llu request(s) the shim could not follow (checked %llu "
                     "sends, %llu receives)",
                     (unsigned long long)e->own_unsanitized, (unsigned long long)e->own_sends,
                     (unsigned long long)e->own_recvs);
        else
            snprintf(res->ownership, sizeof(res->ownership), "checked %llu sends, %llu receives",
                     (unsigned long long)e->own_sends, (unsigned long long)e->own_recvs);
    }

    /*
     * Leaks: what the shim saw still alive when the process exited, after finalize. A killed
     * or crashed rank has no exit event, and one its exit fault ended never reached finalize:
     * neither is judged here; a count below zero means an object made by a path the shim does
     * not wrap, and is not called a leak.
     */
    for (int k = lo; (rules & RG_EV_RANK) && k < hi; k++) {
        if (r->rank[k].verdict == RG_V_KILLED || r->rank[k].verdict == RG_V_CRASH)
            continue;
        static const char *const kinds[6] = {"context(s)", "PD(s)", "MR(s)",
                                             "CQ(s)",      "QP(s)", "completion channel(s)"};
        const rg_evidence *e = &ev[k];
        /* Each process's own leak, named by its pid when the rank is a tree of them. */
        char what[600] = "";
        size_t used = 0;
        for (int p = 0; p < e->nprocs && used + 80 < sizeof(what); p++) {
            const struct rg_ev_proc *pr = &e->proc[p];
            size_t start = used;
            for (int i = 0; pr->alive_at_exit && i < 6 && used + 40 < sizeof(what); i++)
                if (pr->alive[i] > 0)
                    used += (size_t)snprintf(what + used, sizeof(what) - used, "%s%lld %s",
                                             used > start ? ", "
                                             : start      ? "; "
                                                          : "",
                                             (long long)pr->alive[i], kinds[i]);
            if (used == start)
                continue;
            used += (size_t)snprintf(what + used, sizeof(what) - used, " alive");
            if (e->nprocs == 1)
                continue;
            if (pr->forked)
                used += (size_t)snprintf(what + used, sizeof(what) - used,
                                         " in pid %ld (%s, forked by pid %ld)", pr->pid, pr->exe,
                                         pr->ppid);
            else
                used += (size_t)snprintf(what + used, sizeof(what) - used, " in pid %ld (%s)",
                                         pr->pid, pr->exe);
        }
        if (used > sizeof(what) - 1)
            used = sizeof(what) - 1;
        if (used)
            rg_rank_find(&r->rank[k], RG_V_LEAK, r->rank[k].left_t_s,
                         "at exit, after finalize, the shim still saw %s: never destroyed%s", what,
                         e->folded ? " (processes past the first 32 counted together)" : "");
    }

    /*
     * Slow detection: once a rank has failed (an error returned, or killed), a peer that can
     * be told of it (the side channel, a closed socket) must fail within half its timeout,
     * not wait the whole of it out. A stopped rank tells no one and the hub may be the one
     * stopped, so a run where a stop fired is not judged here; nor is a rank that never
     * failed.
     */
    bool stopped = false;
    for (int i = 0; whole && i < r->nrules; i++)
        stopped |= sc->fault[i].kind == FI_STOP && r->rule[i].fired > 0;
    double first_fail = -1;
    int failed_first = -1;
    for (int k = lo; whole && !stopped && k < hi; k++) {
        const rg_rank_result *res = &r->rank[k];
        if ((res->verdict == RG_V_DETECTED || res->verdict == RG_V_KILLED) && res->t_s >= 0 &&
            (first_fail < 0 || res->t_s < first_fail)) {
            first_fail = res->t_s;
            failed_first = k;
        }
    }
    /* A rank that failed in init may have failed before it could reach its peers at all (the
     * reference registers memory before it joins the side channel): not judged. */
    if (failed_first >= 0 && r->rank[failed_first].step < 0)
        failed_first = -1;
    double slow_bound = sc->timeout_s / 2;
    for (int k = lo; failed_first >= 0 && k < hi; k++) {
        const rg_rank_result *res = &r->rank[k];
        if (k == failed_first || res->verdict != RG_V_DETECTED || res->t_s < 0 ||
            res->t_s - first_fail <= slow_bound)
            continue;
        rg_rank_find(&r->rank[k], RG_V_SLOW_DETECTION, res->t_s,
                     "failed %.2f s after rank %d did (%s at %.2f s); a peer that can be told "
                     "must fail within %.1f s, half its %.1f s timeout",
                     res->t_s - first_fail, failed_first,
                     rg_verdict_name(r->rank[failed_first].verdict), first_fail, slow_bound,
                     sc->timeout_s);
    }

    /* Every planned fault accounted for: one that fired nowhere proves nothing -- unless steps
     * were skipped as unsupported, where its place may have been. */
    bool skipped = false;
    for (int k = lo; k < hi; k++)
        for (int f = 0; f < r->rank[k].nfindings; f++)
            skipped |= r->rank[k].finding[f].verdict == RG_V_UNSUPPORTED;
    for (int i = 0; whole && i < r->nrules; i++) {
        const rg_rule_result *u = &r->rule[i];
        if (u->fired || u->optional || u->counting)
            continue;
        char shown[96], matched[48];
        if (u->matched >= 0)
            snprintf(matched, sizeof(matched), "matched %lld times", (long long)u->matched);
        else
            snprintf(matched, sizeof(matched), "matched an unknown number of times");
        for (int k = lo; k < hi; k++)
            rg_rank_find(&r->rank[k], skipped ? RG_V_UNSUPPORTED : RG_V_NOT_EXERCISED, -1,
                         "faults item %d '%s' (line %d) %s, fired 0 times on every rank%s", i + 1,
                         short_rule(u->rule, shown, sizeof(shown)), u->line, matched,
                         skipped ? ", and steps it may have aimed at were not run" : "");
    }
}
