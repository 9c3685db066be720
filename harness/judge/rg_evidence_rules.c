/* SPDX-License-Identifier: MIT */
/*
 * The shim's evidence applied to the ranks' findings (rg_evidence_apply, rg_judge.h): one
 * function a rule, in the order they are applied -- each rule's counts, instrumentation and
 * unreadable evidence, detected only after a fault, errors swallowed or told late, buffer
 * ownership, leaks per process, slow detection, timeouts on time, and faults that fired nowhere.
 * Pure: the unit tests drive each.
 */
#include "judge/rg_judge.h"

#include <stdio.h>
#include <string.h>

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

/* What every rule of the run takes: the ranks here, their evidence, and the first fault. */
struct apply {
    rg_result *r;
    const rg_scenario *sc;
    const rg_evidence *ev;
    int lo, hi;
    double t0_mono_ms;
    bool rank_rules, whole;
    double first_fault; /* CLOCK_MONOTONIC ms of the first fault fired on any rank here; -1 */
    int first_rank;     /* whose it was */
};

/* A count summed over ranks where -1 is "not said": known as soon as one rank said it. */
static void sum_known(int64_t *to, int64_t n)
{
    if (n >= 0)
        *to = (*to < 0 ? 0 : *to) + n;
}

/* Each rule's fired and matched counts, summed over the ranks here; the first fault; what the
 * receiving devices said of each wire rule. */
static void rule_counts(struct apply *a)
{
    const rg_scenario *sc = a->sc;
    a->r->nrules = sc->nfaults;
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++) {
        rg_rule_result *u = &a->r->rule[i];
        memset(u, 0, sizeof(*u));
        snprintf(u->rule, sizeof(u->rule), "%s", sc->fault[i].rule);
        u->line = sc->fault[i].line;
        u->optional = sc->fault[i].optional;
        u->counting = !fi_kind_injects((enum fi_kind)sc->fault[i].kind);
        u->matched = u->rx_pkts = u->rx_dup = u->rx_oos = -1;
        for (int k = a->lo; k < a->hi; k++) {
            const rg_evidence *e = &a->ev[k];
            u->fired += e->fired[i];
            sum_known(&u->rx_pkts, e->rx_pkts[i]);
            sum_known(&u->rx_dup, e->rx_dup[i]);
            sum_known(&u->rx_oos, e->rx_oos[i]);
            u->fired_by[k] = (uint32_t)(e->fired[i] > UINT32_MAX ? UINT32_MAX : e->fired[i]);
            if (e->matched[i] >= 0)
                u->matched = (u->matched < 0 ? 0 : u->matched) + e->matched[i];
            if (!u->site[0] && e->rule_site[i] >= 0) {
                const rg_ev_site *s = &e->site[e->rule_site[i]];
                rg_ev_site_text(e, s, RG_EV_PATH_ALL, false, u->site, sizeof(u->site));
            }
        }
    }
    a->first_fault = -1;
    a->first_rank = -1;
    for (int k = a->lo; k < a->hi; k++) {
        double at = a->ev[k].first_fault_mono_ms;
        if (at >= 0 && (a->first_fault < 0 || at < a->first_fault)) {
            a->first_fault = at;
            a->first_rank = k;
        }
    }
}

/* Not instrumented: the shim never loaded, or saw no verbs object in a rank that got past its
 * start, so any fault plan was a silent no-op there. Evidence that cannot be read proves
 * nothing either way: a finding, never a skip. */
static void instrumented(const struct apply *a, int k)
{
    rg_rank_result *res = &a->r->rank[k];
    const rg_evidence *e = &a->ev[k];
    if (!e->present || !e->loaded) {
        rg_rank_find(res, RG_V_ERROR, -1,
                     "not instrumented: the shim did not load (no 'load' event in its events "
                     "file%s)",
                     e->present ? "" : ", which is missing");
    } else if (e->totals && e->contexts == 0 && e->qps == 0 && res->step >= 0 && !summary_lost(e)) {
        rg_rank_find(res, RG_V_ERROR, -1,
                     "not instrumented: the shim saw no verbs calls (0 devices opened, 0 QPs) "
                     "though the rank ran: it reached verbs some other way (a static libibverbs, "
                     "a provider's own calls), or not at all");
    }
    if (e->bad_lines)
        rg_rank_find(res, RG_V_ERROR, -1, "evidence unreadable: rank %d events %s%s", k,
                     e->unreadable, e->bad_lines > 1 ? " (the first of several)" : "");
}

/* detected counts only as the consequence of a fault that had already fired. */
static void detected_after_fault(const struct apply *a, int k)
{
    rg_rank_result *res = &a->r->rank[k];
    for (int f = 0; f < res->nfindings; f++) {
        const rg_finding *fd = &res->finding[f];
        if (fd->verdict != RG_V_DETECTED)
            continue;
        double at = fd->t_s < 0 ? -1 : a->t0_mono_ms + fd->t_s * 1000.0;
        if (a->first_fault >= 0 && (at < 0 || a->first_fault <= at))
            continue;
        char why[160];
        if (a->first_fault < 0)
            snprintf(why, sizeof(why), "no planned fault fired on any rank: ");
        else
            snprintf(why, sizeof(why),
                     "the first fault (rank %d, faults item %d) fired %.3f s after this error: ",
                     a->first_rank, a->ev[a->first_rank].first_fault_rule + 1,
                     (a->first_fault - at) / 1000.0);
        rg_rank_recast(res, RG_V_DETECTED, RG_V_ERROR_WITHOUT_FAULT, why);
        return;
    }
}

/*
 * Error accounting: an error completion or a negative poll the shim handed a rank must come
 * back out of some call (finalize included). A rank that read ok after one was swallowing it,
 * whatever its data; upstream that is mlx#3152 before memory pressure made the stale buffer
 * wrong. A service stopped by the runner has no exit status to report an error with.
 */
static void swallowed(const struct apply *a, int k)
{
    rg_rank_result *res = &a->r->rank[k];
    const rg_evidence *e = &a->ev[k];
    const rg_scenario *sc = a->sc;
    if ((res->verdict != RG_V_OK && res->verdict != RG_V_UNSUPPORTED) || res->service)
        return;
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++) {
        int kind = sc->fault[i].kind;
        if ((kind != FI_ERROR && kind != FI_NEGPOLL) || e->fired[i] == 0)
            continue;
        char shown[96];
        double at =
            e->first_fault_mono_ms < 0 ? -1 : (e->first_fault_mono_ms - a->t0_mono_ms) / 1000.0;
        rg_rank_find(res, RG_V_ERROR_SWALLOWED, at,
                     "faults item %d '%s' (line %d) handed this rank %llu injected %s, yet every "
                     "call it made returned success",
                     i + 1, short_rule(sc->fault[i].rule, shown, sizeof(shown)), sc->fault[i].line,
                     (unsigned long long)e->fired[i],
                     kind == FI_ERROR ? "error completion(s)" : "negative poll(s)");
        return;
    }
}

/* A program call as a person reads it: "init", "finalize", "step 2 (all_reduce)", with its
 * repetition when the step repeats. */
static const char *call_text(const rg_scenario *sc, int step, int rep, char *buf, size_t len)
{
    if (step < 0)
        snprintf(buf, len, "init");
    else if (step >= sc->nops)
        snprintf(buf, len, "finalize");
    else if (sc->ops[step].repeat > 1)
        snprintf(buf, len, "step %d repetition %d (%s)", step, rep,
                 rg_sc_kind_name(sc->ops[step].kind));
    else
        snprintf(buf, len, "step %d (%s)", step, rg_sc_kind_name(sc->ops[step].kind));
    return buf;
}

/*
 * An error told late: an injected error (an error completion, a negative poll, ENOMEM) handed to
 * the program inside one call, on the thread that made it, while the rank failed only in a
 * later call. The call that met the error returned success for an operation that had failed;
 * a program that reads results only from the calls that failed takes stale data from it
 * (mlx#3152's class). Where the shim could not say which call a fault fired in (another
 * thread, a program that marks no steps), nothing is claimed.
 */
static void told_late(const struct apply *a, int k)
{
    const rg_evidence *e = &a->ev[k];
    rg_rank_result *res = &a->r->rank[k];
    const rg_scenario *sc = a->sc;
    if (res->verdict != RG_V_DETECTED || res->service)
        return;
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++) {
        int kind = sc->fault[i].kind;
        const struct rg_ev_at *at = &e->fired_at[i];
        if ((kind != FI_ERROR && kind != FI_NEGPOLL && kind != FI_NOMEM) || !at->known)
            continue;
        if (res->step < at->step || (res->step == at->step && res->rep <= at->rep))
            continue;
        char shown[96], met[64], failed[64];
        double t = e->first_fault_mono_ms < 0 || e->first_fault_rule != i
                       ? res->t_s
                       : (e->first_fault_mono_ms - a->t0_mono_ms) / 1000.0;
        rg_rank_find(res, RG_V_ERROR_SWALLOWED, t,
                     "faults item %d '%s' (line %d) handed this rank %s in %s, which returned "
                     "success: the error came back only from %s",
                     i + 1, short_rule(sc->fault[i].rule, shown, sizeof(shown)), sc->fault[i].line,
                     kind == FI_ERROR     ? "an injected error completion"
                     : kind == FI_NEGPOLL ? "an injected negative poll"
                                          : "an injected ENOMEM",
                     call_text(sc, at->step, at->rep, met, sizeof(met)),
                     call_text(sc, res->step, res->rep, failed, sizeof(failed)));
        return;
    }
}

/* Buffer ownership: the sanitizer's findings, whatever the data said (a rewrite the NIC
 * happened to read before is invisible in the output), and its word on what it checked. */
static void ownership(const struct apply *a, int k)
{
    const rg_evidence *e = &a->ev[k];
    rg_rank_result *res = &a->r->rank[k];
    if (e->own_first[0])
        rg_rank_find(res, RG_V_BUFFER_REWRITTEN_IN_FLIGHT, res->left_t_s, "%s%s", e->own_first,
                     e->own_rewritten > 1 ? " (the first of several)" : "");
    if (!e->owned)
        snprintf(res->ownership, sizeof(res->ownership), "not known: the rank left no summary");
    else if (e->own_unsanitized)
        snprintf(res->ownership, sizeof(res->ownership),
                 "not sanitized: %llu request(s) the shim could not follow (checked %llu sends, "
                 "%llu receives)",
                 (unsigned long long)e->own_unsanitized, (unsigned long long)e->own_sends,
                 (unsigned long long)e->own_recvs);
    else
        snprintf(res->ownership, sizeof(res->ownership), "checked %llu sends, %llu receives",
                 (unsigned long long)e->own_sends, (unsigned long long)e->own_recvs);
    /* Not settled either way: an acknowledgement's reuse, or a bug among other traffic. */
    size_t n = strlen(res->ownership);
    if (e->owned && e->own_answered && n < sizeof(res->ownership))
        snprintf(res->ownership + n, sizeof(res->ownership) - n,
                 "; %llu UD send(s) rewritten before their completion after their destination "
                 "answered: not judged (an acknowledgement protocol's reuse, as UCX's)",
                 (unsigned long long)e->own_answered);
}

/* What each process of the rank left alive at exit, named by its pid when the rank is a tree
 * of them, into what (len bytes); its length. */
static size_t alive_text(const rg_evidence *e, char *what, size_t len)
{
    static const char *const kinds[6] = {"context(s)", "PD(s)", "MR(s)",
                                         "CQ(s)",      "QP(s)", "completion channel(s)"};
    size_t used = 0;
    what[0] = '\0';
    for (int p = 0; p < e->nprocs && used + 80 < len; p++) {
        const struct rg_ev_proc *pr = &e->proc[p];
        size_t start = used;
        for (int i = 0; pr->alive_at_exit && i < 6 && used + 40 < len; i++)
            if (pr->alive[i] > 0)
                used += (size_t)snprintf(what + used, len - used, "%s%lld %s",
                                         used > start ? ", "
                                         : start      ? "; "
                                                      : "",
                                         (long long)pr->alive[i], kinds[i]);
        if (used == start)
            continue;
        used += (size_t)snprintf(what + used, len - used, " alive");
        if (e->nprocs == 1)
            continue;
        if (pr->forked)
            used += (size_t)snprintf(what + used, len - used, " in pid %ld (%s, forked by pid %ld)",
                                     pr->pid, pr->exe, pr->ppid);
        else
            used += (size_t)snprintf(what + used, len - used, " in pid %ld (%s)", pr->pid, pr->exe);
    }
    return used > len - 1 ? len - 1 : used;
}

/* Leaks: what the shim saw still alive when the process exited, after finalize. A killed or
 * crashed rank has no exit event, and one its exit fault ended never reached finalize: neither
 * is judged here; a count below zero means an object made by a path the shim does not wrap,
 * and is not called a leak. */
static void leaks(const struct apply *a, int k)
{
    rg_rank_result *res = &a->r->rank[k];
    if (res->verdict == RG_V_KILLED || res->verdict == RG_V_CRASH)
        return;
    char what[600];
    if (alive_text(&a->ev[k], what, sizeof(what)))
        rg_rank_find(res, RG_V_LEAK, res->left_t_s,
                     "at exit, after finalize, the shim still saw %s: never destroyed%s", what,
                     a->ev[k].folded ? " (processes past the first 32 counted together)" : "");
}

/*
 * A hang that may be the shim's: a rank still running at the deadline while the shim held
 * completions it had made (a lost send's success, flushes after a fault) for a CQ with a
 * completion channel. rxe raises a channel's event only for a completion it writes itself, so a
 * program asleep on the channel is never woken for those, where a NIC that completes a send or
 * flushes a broken QP's requests raises one. Such a hang proves nothing of the program: it is
 * no DEADLOCK of its own, and is said to be the shim's limit instead (ERROR).
 */
static void held_unseen(const struct apply *a, int k)
{
    rg_rank_result *res = &a->r->rank[k];
    if (res->verdict != RG_V_DEADLOCK)
        return;
    const rg_evidence *e = &a->ev[k];
    uint64_t held = 0;
    int64_t cq = -1;
    bool over = false;
    for (int p = 0; p < e->nprocs; p++) {
        over |= e->proc[p].held_over;
        for (int i = 0; i < e->proc[p].nheld; i++)
            if (e->proc[p].held[i].held) {
                held += e->proc[p].held[i].held;
                cq = cq < 0 ? e->proc[p].held[i].cq_ord : cq;
            }
    }
    if (!held && !over)
        return;
    char why[300];
    snprintf(why, sizeof(why),
             "not judged a deadlock of the program's own: at the deadline the shim held %llu "
             "completion(s) it had made for CQ #%lld, which has a completion channel; rxe "
             "raises no event for them, so a program asleep on the channel was never told: ",
             (unsigned long long)held, (long long)cq);
    rg_rank_recast(res, RG_V_DEADLOCK, RG_V_ERROR, why);
}

/*
 * Slow detection: once a rank has failed (an error returned, or killed), a peer that can be
 * told of it (the side channel, a closed socket) must fail within half its timeout, not wait
 * the whole of it out. A rank whose transport held no socket after init (counted by the
 * worker) has no channel to be told by -- an RC receive is not told of a dead sender -- so
 * its own timeout is all it has, and it is not judged slow. A stopped rank tells no one and the hub
 * may be the one stopped, so a run where a stop fired is not judged here; nor is a rank that never
 * failed, nor a first failure in init (it may have come before the rank could reach its peers at
 * all: the reference registers memory before it joins the side channel).
 */
static void slow_detection(const struct apply *a)
{
    rg_result *r = a->r;
    const rg_scenario *sc = a->sc;
    for (int i = 0; i < r->nrules; i++)
        if (sc->fault[i].kind == FI_STOP && r->rule[i].fired > 0)
            return;
    double first_fail = -1;
    int failed_first = -1;
    for (int k = a->lo; k < a->hi; k++) {
        const rg_rank_result *res = &r->rank[k];
        if ((res->verdict == RG_V_DETECTED || res->verdict == RG_V_KILLED) && res->t_s >= 0 &&
            (first_fail < 0 || res->t_s < first_fail)) {
            first_fail = res->t_s;
            failed_first = k;
        }
    }
    if (failed_first < 0 || r->rank[failed_first].step < 0)
        return;
    double bound = sc->timeout_s / 2;
    for (int k = a->lo; k < a->hi; k++) {
        const rg_rank_result *res = &r->rank[k];
        if (k == failed_first || res->verdict != RG_V_DETECTED || res->t_s < 0 ||
            res->t_s - first_fail <= bound || (res->sockets_known && res->sockets == 0))
            continue;
        rg_rank_find(&r->rank[k], RG_V_SLOW_DETECTION, res->t_s,
                     "failed %.2f s after rank %d did (%s at %.2f s); a peer that can be told "
                     "must fail within %.1f s, half its %.1f s timeout",
                     res->t_s - first_fail, failed_first,
                     rg_verdict_name(r->rank[failed_first].verdict), first_fail, bound,
                     sc->timeout_s);
    }
}

/*
 * A timeout is the whole call's: a call given timeout T that fails with RG_ERR_TIMEOUT must do
 * so within T of the call's start, plus a margin for the machine -- 1 s, a tenth of T, how late
 * the runner's own timed waits woke (lag) and how long this rank waited for a CPU. A transport
 * whose timer restarts at each wait, or at each bit of progress, outlives T whenever the stall
 * comes late in the call. Init is not judged (its length is the transport's to set up), nor a
 * v1 plugin's errors (no status says which were timeouts).
 */
static void timeout_on_time(const struct apply *a)
{
    rg_result *r = a->r;
    const rg_scenario *sc = a->sc;
    for (int k = a->lo; k < a->hi; k++) {
        rg_rank_result *res = &r->rank[k];
        if (res->verdict != RG_V_DETECTED || res->status != RG_ERR_TIMEOUT || res->step < 0 ||
            res->step >= sc->nops || res->t_s < 0 || res->step_t_s < 0)
            continue;
        double wait = res->cpu_wait_s > 0 ? res->cpu_wait_s : 0;
        double lag = r->lag_s > 0 ? r->lag_s : 0;
        double margin = 1.0 + sc->timeout_s / 10 + lag + wait;
        double took = res->t_s - res->step_t_s;
        if (took <= sc->timeout_s + margin)
            continue;
        rg_rank_find(res, RG_V_SLOW_DETECTION, res->t_s,
                     "the call returned its timeout %.2f s after it began, past its %.1f s "
                     "timeout and a %.2f s margin (1 s, a tenth of the timeout, the runner's lag "
                     "%.2f s, %.2f s waiting for a CPU): a timeout that is not the whole call's",
                     took, sc->timeout_s, margin, lag, wait);
    }
}

/*
 * What the ranks a rule aims at did of the op it names, from the shim's per-QP counts (taken
 * at each QP's destroy and at exit): "; the shim counted rank 1: recv 50 posted, 50
 * completed (nth=500)". An nth
 * past them, or an op never posted, is the plan's mistake, and this is how to mend it. ""
 * when the rule cannot be read or no rank counted.
 */
static void counts_hint(const struct apply *a, const char *rule, char *out, size_t len)
{
    struct fi_plan p;
    char err[200];
    out[0] = '\0';
    if (fi_plan_parse(rule, "faults", &p, err, sizeof(err)) != 0 || p.nrules != 1)
        return;
    const struct fi_rule *r = &p.rules[0];
    if (r->kind == FI_WIRE || r->kind == FI_LINK_DOWN || r->kind == FI_PARTITION)
        return; /* the wire's own counts say it */
    size_t o = 0;
    for (int k = a->lo; k < a->hi && o < len; k++) {
        const rg_evidence *e = &a->ev[k];
        if ((r->rank >= 0 && r->rank != k) || !e->totals)
            continue;
        o += (size_t)snprintf(out + o, len - o, "%s rank %d:", o ? ";" : "; the shim counted", k);
        for (int op = FI_OP_SEND; op <= FI_OP_ATOMIC && o < len; op++)
            if (fi_ops_has(r->ops, (enum fi_op)op))
                o += (size_t)snprintf(
                    out + o, len - o, " %s %llu posted, %llu completed", fi_op_name((enum fi_op)op),
                    (unsigned long long)e->op_posts[op], (unsigned long long)e->op_cqe[op]);
    }
    if (o && r->nth && o < len)
        snprintf(out + o, len - o, " (nth=%llu)", (unsigned long long)r->nth);
}

/* Every planned fault accounted for: one that fired nowhere proves nothing -- unless steps
 * were skipped as unsupported, where its place may have been. */
static void not_exercised(const struct apply *a)
{
    rg_result *r = a->r;
    bool skipped = false;
    for (int k = a->lo; k < a->hi; k++)
        for (int f = 0; f < r->rank[k].nfindings; f++)
            skipped |= r->rank[k].finding[f].verdict == RG_V_UNSUPPORTED;
    for (int i = 0; i < r->nrules; i++) {
        const rg_rule_result *u = &r->rule[i];
        if (u->fired || u->optional || u->counting)
            continue;
        char shown[96], matched[160];
        enum fi_kind kind = (enum fi_kind)a->sc->fault[i].kind;
        if (kind == FI_WIRE)
            /* The wire's own counters: what crossed it under netem, and none acted on. They run
             * to the qdisc's removal, after the wire was made clean: packets counted there
             * passed a window that missed the traffic. */
            snprintf(matched, sizeof(matched), "put %lld packet(s) through its netem%s",
                     (long long)(u->matched < 0 ? 0 : u->matched),
                     u->matched > 0
                         ? " (counted to its removal: its window missed the traffic; step= "
                           "anchors it)"
                         : " (ranks on one soft-RoCE device never leave it, or the run ended "
                           "before its after=)");
        else if (kind == FI_LINK_DOWN || kind == FI_PARTITION)
            snprintf(matched, sizeof(matched), "took %lld link(s) down, none said it went down",
                     (long long)(u->matched < 0 ? 0 : u->matched));
        else if (u->matched >= 0)
            snprintf(matched, sizeof(matched), "matched %lld times", (long long)u->matched);
        else
            snprintf(matched, sizeof(matched), "matched an unknown number of times");
        char hint[300], unacted[160] = ""; /* room for the reason's 63 and the count */
        counts_hint(a, u->rule, hint, sizeof(hint));
        /* Fires the shim gave back (fi_unfire): the rule was reached, and changed nothing. */
        uint64_t gave = 0;
        const char *why = "";
        for (int k = a->lo; k < a->hi; k++)
            if (i < FI_MAX_RULES && a->ev[k].unacted[i]) {
                why = gave ? why : a->ev[k].unacted_why[i];
                gave += a->ev[k].unacted[i];
            }
        if (gave)
            snprintf(unacted, sizeof(unacted), " (it fired %llu time(s) and could not act: %s)",
                     (unsigned long long)gave, why);
        for (int k = a->lo; k < a->hi; k++)
            rg_rank_find(&r->rank[k], skipped ? RG_V_UNSUPPORTED : RG_V_NOT_EXERCISED, -1,
                         "faults item %d '%s' (line %d) %s, fired 0 times on every rank%s%s%s",
                         i + 1, short_rule(u->rule, shown, sizeof(shown)), u->line, matched,
                         unacted, skipped ? ", and steps it may have aimed at were not run" : "",
                         hint);
    }
}

void rg_evidence_apply(rg_result *r, const rg_scenario *sc, const rg_evidence *ev, int lo, int hi,
                       double t0_mono_ms, int rules)
{
    struct apply a = {.r = r,
                      .sc = sc,
                      .ev = ev,
                      .lo = lo,
                      .hi = hi,
                      .t0_mono_ms = t0_mono_ms,
                      .rank_rules = (rules & RG_EV_RANK) != 0,
                      .whole = (rules & RG_EV_CROSS) != 0};
    rule_counts(&a);
    for (int k = lo; k < hi; k++)
        r->as_rc_qps += (int64_t)ev[k].as_rc_qps;
    for (int k = lo; k < hi; k++) {
        if (a.rank_rules)
            instrumented(&a, k);
        if (a.whole)
            detected_after_fault(&a, k);
    }
    for (int k = lo; a.rank_rules && k < hi; k++) {
        swallowed(&a, k);
        told_late(&a, k);
    }
    for (int k = lo; a.rank_rules && sc->ownership && k < hi; k++)
        ownership(&a, k);
    for (int k = lo; a.rank_rules && k < hi; k++) {
        leaks(&a, k);
        held_unseen(&a, k);
    }
    if (a.whole) {
        slow_detection(&a);
        timeout_on_time(&a);
        not_exercised(&a);
    }
}
