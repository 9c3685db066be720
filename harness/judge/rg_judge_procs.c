/* SPDX-License-Identifier: MIT */
/*
 * How a scenario's processes ended, judged (launch/ left it as rg_launched): a rank that could
 * not start, crashed, exited wrongly after its verdict, ended early by its own kill, stop or
 * exit fault or by something else, or hung -- each a finding beside what the rank itself said
 * -- then the shim's evidence applied to them all (rg_judge.c).
 */
#include "judge/rg_judge.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Ended without a verdict of its own in a way a fault can cause (stopped, SIGKILL, an exit
 * before its verdict): judge_ended decides whether its own fault did it. */
bool rg_proc_ended_early(const struct rg_proc *p)
{
    return p->stopped || (WIFSIGNALED(p->status) && WTERMSIG(p->status) == SIGKILL) ||
           (WIFEXITED(p->status) && !p->said.verdict);
}

/*
 * A rank that stopped, died by SIGKILL or exited before its verdict: planned when its own shim
 * says a stop (kill, exit) rule fired there, which it writes before acting; else a crash (an
 * OOM kill, a stranger's signal, a stop nobody planned, a transport that called exit).
 */
void rg_proc_judge_ended(rg_rank_result *k, const struct rg_proc *p, const rg_scenario *sc,
                         const rg_evidence *e, const char *dir, int r)
{
    bool exited = !p->stopped && WIFEXITED(p->status);
    int want = p->stopped ? FI_STOP : exited ? FI_EXIT : FI_KILL;
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++)
        if (sc->fault[i].kind == want && e->fired[i] > 0) {
            if (exited)
                rg_rank_find(k, RG_V_KILLED, k->left_t_s,
                             "left early by its exit fault (faults item %d, line %d) in %s, with "
                             "status %d",
                             i + 1, sc->fault[i].line, k->where, WEXITSTATUS(p->status));
            else if (p->stopped)
                rg_rank_find(k, RG_V_KILLED, p->stop_t_s,
                             "stopped by its stop fault (faults item %d, line %d) at %.2f s in "
                             "%s; ended by the runner once the other ranks had ended",
                             i + 1, sc->fault[i].line, p->stop_t_s, k->where);
            else
                rg_rank_find(k, RG_V_KILLED, k->left_t_s,
                             "killed by its kill fault (faults item %d, line %d) in %s", i + 1,
                             sc->fault[i].line, k->where);
            return;
        }
    if (exited) {
        char logp[1200], tail[400];
        snprintf(logp, sizeof(logp), "%s/rank%d.log", dir, r);
        rg_log_tail(logp, tail, sizeof(tail));
        rg_rank_find(k, RG_V_CRASH, k->left_t_s, "exited with status %d without a verdict%s%s",
                     WEXITSTATUS(p->status), tail[0] ? "; last output: " : "", tail);
    } else if (p->stopped)
        rg_rank_find(k, RG_V_CRASH, p->stop_t_s,
                     "stopped by a signal no planned fault raised, at %.2f s in %s", p->stop_t_s,
                     k->where);
    else
        rg_rank_find(k, RG_V_CRASH, k->left_t_s,
                     "killed by signal %d (%s), not by a planned fault; backtrace in "
                     "%s/rank%d.backtrace",
                     SIGKILL, strsignal(SIGKILL), dir, r);
}

/* "rank 1 left with SILENT_CORRUPTION at 0.42 s in all_reduce ...": the first peer to end. */
static void first_to_leave(const rg_result *res, int lo, int hi, int self, char *out, size_t len)
{
    int first = -1;
    out[0] = '\0';
    for (int r = lo; r < hi; r++) {
        if (r == self || res->rank[r].left_t_s < 0)
            continue;
        if (first < 0 || res->rank[r].left_t_s < res->rank[first].left_t_s)
            first = r;
    }
    if (first >= 0)
        snprintf(out, len, "; waiting since rank %d left with %s at %.2f s in %s", first,
                 rg_verdict_name(res->rank[first].verdict), res->rank[first].left_t_s,
                 res->rank[first].where);
}

/* A worker's process, ended without a verdict of its own's (a crash, an exit with the wrong
 * status after its verdict); one that ended early or hung is judged once its evidence is. */
static void worker_end(rg_rank_result *k, const struct rg_proc *p, const char *dir, int r)
{
    char logp[1200], tail[400];
    snprintf(logp, sizeof(logp), "%s/rank%d.log", dir, r);
    if (p->hung || (p->pid > 0 && rg_proc_ended_early(p))) {
        /* judged below: a hang with its queues, an early end by its own fault or not */
    } else if (p->pid < 0) {
        rg_rank_find(k, RG_V_ERROR, 0, "could not start the rank");
    } else if (WIFSIGNALED(p->status)) {
        rg_log_tail(logp, tail, sizeof(tail));
        rg_rank_find(k, RG_V_CRASH, k->left_t_s,
                     "killed by signal %d (%s); backtrace in %s/rank%d.backtrace%s%s",
                     WTERMSIG(p->status), strsignal(WTERMSIG(p->status)), dir, r,
                     tail[0] ? "; last output: " : "", tail);
    } else if (WEXITSTATUS(p->status) != (p->said.error ? 3 : 0)) {
        /* After its verdict the worker only exits: a status there is a crash at exit (a
         * destructor, a sanitizer's report), which the verdict cannot have seen. */
        rg_log_tail(logp, tail, sizeof(tail));
        rg_rank_find(k, RG_V_CRASH, k->left_t_s, "exited with status %d after its verdict%s%s",
                     WEXITSTATUS(p->status), tail[0] ? "; last output: " : "", tail);
    }
}

/* The ranks' evidence side by side, as rg_evidence_apply reads it: 6 MB for RG_MAX_RANKS, so
 * the heap's (.bss is read whole by a leak check at every exit). NULL after every rank in
 * [lo, hi) was told why: a verdict without its evidence would be a guess. */
static rg_evidence *ev_table(rg_result *res, int lo, int hi)
{
    rg_evidence *ev = calloc(RG_MAX_RANKS, sizeof(*ev));
    for (int r = lo; !ev && r < hi; r++)
        rg_rank_find(&res->rank[r], RG_V_ERROR, -1,
                     "the runner ran out of memory for the ranks' evidence");
    return ev;
}

void rg_judge_workers(rg_result *res, const rg_scenario *sc, const rg_launched *l, int rules)
{
    int lo = l->lo, hi = l->hi;
    for (int r = lo; r < hi; r++) {
        res->rank[r] = l->rank[r].said;
        worker_end(&res->rank[r], &l->rank[r].proc, res->dir, r);
    }
    res->seconds = l->seconds;
    if (l->lag_s > res->lag_s)
        res->lag_s = l->lag_s;
    /* The shim's evidence, now that every rank has ended: what it saw, what fired and when. */
    rg_evidence *ev = ev_table(res, lo, hi);
    if (!ev)
        return;
    for (int r = lo; r < hi; r++) {
        if (l->rank[r].ev_err[0])
            rg_rank_find(&res->rank[r], RG_V_ERROR, -1, "%s", l->rank[r].ev_err);
        /* A wire fault not done proves nothing either way: the run's failure, said as such. */
        if (l->wire_err[0])
            rg_rank_find(&res->rank[r], RG_V_ERROR, -1,
                         "the runner could not apply the wire "
                         "faults: %s",
                         l->wire_err);
        if (l->rank[r].ev.wire_failed[0])
            rg_rank_find(&res->rank[r], RG_V_ERROR, -1, "the runner could not do a wire fault: %s",
                         l->rank[r].ev.wire_failed);
        rg_slow_check_scale(&res->rank[r], sc, &l->rank[r].ev);
        ev[r] = l->rank[r].ev;
    }
    for (int r = lo; r < hi; r++) {
        const struct rg_proc *p = &l->rank[r].proc;
        if (p->pid > 0 && !p->hung && rg_proc_ended_early(p))
            rg_proc_judge_ended(&res->rank[r], p, sc, &ev[r], res->dir, r);
    }
    double t0_ms = l->t0 * 1000.0;
    rg_evidence_apply(res, sc, ev, lo, hi, t0_ms, rules);
    res->t0_mono_ms = t0_ms;
    snprintf(res->host, sizeof(res->host), "%s", l->host);

    /* A hang is explained by who left first, and by the work its queues still held. */
    for (int r = lo; r < hi; r++) {
        rg_rank_result *k = &res->rank[r];
        if (!l->rank[r].proc.hung)
            continue;
        char peer[400];
        first_to_leave(res, lo, hi, r, peer, sizeof(peer));
        const rg_hang *h = &l->hang;
        if (h->judged) {
            /* The detail's start is what rg_slow.c knows this hang's bound by. */
            rg_rank_find(k, RG_V_DEADLOCK, h->at_s,
                         RG_HANG_EARLY
                         " %.2f s (no verbs call but polls, no completion or status "
                         "line%s, no fault holding one), past the %.3g s timeout every wait of the "
                         "transport's "
                         "was told and a %.2f s margin: judged at %.2f s, before the %.0f s "
                         "deadline; in %s since %.2f s%s%s%s; backtrace in %s/rank%d.backtrace",
                         h->quiet_s,
                         h->dev_known ? ", no packet on the devices"
                                      : "; the devices' packet counts could not be read",
                         sc->timeout_s, h->window_s - sc->timeout_s, h->at_s, sc->deadline_s,
                         k->where, k->step_t_s, peer, ev[r].queues[0] ? "; " : "", ev[r].queues,
                         res->dir, r);
            continue;
        }
        rg_rank_find(k, RG_V_DEADLOCK, sc->deadline_s,
                     "still running after the %.0f s deadline, in %s since %.2f s%s%s%s; "
                     "backtrace in %s/rank%d.backtrace",
                     sc->deadline_s, k->where, k->step_t_s, peer, ev[r].queues[0] ? "; " : "",
                     ev[r].queues, res->dir, r);
    }
    free(ev);
}

/* The first fault of the kind (exit, kill, stop) that fired in the rank's processes, or -1:
 * the shim says so before it ends or stops the process, so an end that follows is the plan's. */
static int own_fault(const rg_scenario *sc, const rg_evidence *e, int kind)
{
    for (int i = 0; i < sc->nfaults && i < FI_MAX_RULES; i++)
        if (sc->fault[i].kind == kind && e->fired[i] > 0)
            return i;
    return -1;
}

static bool own_fault_fired(const rg_scenario *sc, const rg_evidence *e, int kind)
{
    return own_fault(sc, e, kind) >= 0;
}

/*
 * A launcher's rank that ended with no exit its shim saw (a signal, or _exit), its own kill
 * fault not the cause. It is the launcher's child, so which signal is not known. When another
 * rank had already ended on a failure and the launcher then exited non-zero, its end is the
 * one MPI's launchers give a job's other processes once one fails (mpirun's abort): KILLED,
 * with those facts. When none had, and the launcher exited with a process's own error code
 * (under 128: MPI_Abort's, not a signal's 128 + N), the job stopped with an error: DETECTED,
 * for every such rank, since the launcher does not say which one reported it. Anything else
 * is a CRASH, said with what is not known.
 */
static void job_unseen_end(rg_result *res, const rg_launched *l, int r, const rg_scenario *sc,
                           const rg_evidence *ev)
{
    rg_rank_result *k = &res->rank[r];
    const struct rg_proc *lp = &l->launcher;
    int first = -1;
    /* A rank whose own end is known: an exit its shim saw, or its own kill fault (the shim says
     * so before it kills: mpirun's job then ended the others, as after any failure). */
    for (int o = 0; o < res->ranks; o++)
        if (o != r && (!l->rank[o].proc.job_unseen || own_fault_fired(sc, &ev[o], FI_KILL)) &&
            res->rank[o].left_t_s >= 0 && res->rank[o].verdict >= RG_V_DETECTED &&
            res->rank[o].verdict != RG_V_LEAK &&
            (first < 0 || res->rank[o].left_t_s < res->rank[first].left_t_s))
            first = o;
    bool failed = lp->exited && WIFEXITED(lp->status) && WEXITSTATUS(lp->status) != 0;
    /* A launcher's status under 128 is a process's own exit code (MPI_Abort's), not the
     * 128 + N it gives for a process's signal N. */
    bool told = failed && WEXITSTATUS(lp->status) < 128;
    if (first < 0 && told)
        rg_rank_find(k, RG_V_DETECTED, k->left_t_s,
                     "ended with no exit its shim saw (a signal, or _exit: a process of its "
                     "launcher's, so which is not known), and its launcher exited with status %d, "
                     "a process's own error code: the job stopped with an error (which process "
                     "said it, and how each ended, the launcher does not say); its output is in "
                     "%s/launcher.log",
                     WEXITSTATUS(lp->status), res->dir);
    else if (first >= 0 && failed)
        rg_rank_find(k, RG_V_KILLED, k->left_t_s,
                     "ended with no exit its shim saw (a signal, or _exit: a process of its "
                     "launcher's, so which is not known) after rank %d left with %s at %.2f s; "
                     "the launcher then exited with status %d, as a launcher ends a job's other "
                     "processes once one fails",
                     first, rg_verdict_name(res->rank[first].verdict), res->rank[first].left_t_s,
                     WEXITSTATUS(lp->status));
    else
        rg_rank_find(k, RG_V_CRASH, k->left_t_s,
                     "ended with no exit its shim saw (a signal, or _exit: a process of its "
                     "launcher's, so which is not known)%s; its output is in %s/launcher.log",
                     first >= 0 ? ", and its launcher did not fail the job" : "", res->dir);
}

/* The launcher itself: a job whose ranks all ended well but whose launcher did not, or one
 * that gave a process a rank past the scenario's, is not the run it was planned as. */
static void judge_launcher(rg_result *res, const rg_scenario *sc, const rg_launched *l)
{
    const struct rg_proc *lp = &l->launcher;
    char logp[1200], tail[400];
    snprintf(logp, sizeof(logp), "%s/launcher.log", res->dir);
    rg_log_tail(logp, tail, sizeof(tail));
    /* Every rank exited 0, as its shim saw: then nothing of theirs explains the launcher's end. */
    bool all_ok = true;
    for (int r = 0; r < sc->ranks; r++) {
        const struct rg_proc *p = &l->rank[r].proc;
        all_ok &= p->pid > 0 && p->exited && !p->job_unseen && !p->stopped &&
                  WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
    }
    if (l->job_extra >= 0)
        rg_rank_find(&res->rank[0], RG_V_ERROR, -1,
                     "its launcher started a process with rank %d; the scenario has %d ranks",
                     l->job_extra, sc->ranks);
    int unstarted = -1;
    for (int r = 0; r < sc->ranks && unstarted < 0; r++)
        if (l->rank[r].proc.pid <= 0)
            unstarted = r;
    if (lp->hung && all_ok)
        rg_rank_find(&res->rank[0], RG_V_DEADLOCK, sc->deadline_s,
                     "its launcher was still running at the %.0f s deadline, after every rank had "
                     "ended%s%s",
                     sc->deadline_s, tail[0] ? "; its last output: " : "", tail);
    else if (lp->hung && unstarted >= 0)
        rg_rank_find(&res->rank[0], RG_V_DEADLOCK, sc->deadline_s,
                     "its launcher was still running at the %.0f s deadline and had not started "
                     "rank %d%s%s",
                     sc->deadline_s, unstarted, tail[0] ? "; its last output: " : "", tail);
    else if (lp->exited && all_ok && !(WIFEXITED(lp->status) && WEXITSTATUS(lp->status) == 0))
        rg_rank_find(&res->rank[0], RG_V_CRASH, lp->stop_t_s,
                     "its launcher %s %d though every rank exited with status 0%s%s",
                     WIFEXITED(lp->status) ? "exited with status" : "was killed by signal",
                     WIFEXITED(lp->status) ? WEXITSTATUS(lp->status) : WTERMSIG(lp->status),
                     tail[0] ? "; its last output: " : "", tail);
}

/* One process's verdict from how it ended; the evidence's rules come after, for all at once. */
static void judge_process(rg_rank_result *k, struct rg_proc *p, const rg_scenario *sc,
                          const rg_evidence *e, const char *dir, int r)
{
    char logp[1200], tail[400];
    snprintf(logp, sizeof(logp), "%s/rank%d.log", dir, r);
    rg_log_tail(logp, tail, sizeof(tail));
    /* A program gives no verdict of its own: an exit counts as one, unless its own exit fault
     * caused it, which ends it early as a worker's exit before its verdict does. */
    p->said.verdict = !own_fault_fired(sc, e, FI_EXIT);
    if (p->pid <= 0 && p->job) {
        rg_rank_find(k, RG_V_ERROR, 0,
                     "its launcher started no process with rank %d (none loaded the shim with "
                     "that rank)%s%s",
                     r, tail[0] ? "; the launcher's last output: " : "", tail);
    } else if (p->pid <= 0) {
        rg_rank_find(k, RG_V_ERROR, 0, "could not start the process");
    } else if (p->job_unseen && !own_fault_fired(sc, e, FI_KILL)) {
        /* judged with the others' ends (job_unseen_end): no exit, by what came before */
    } else if (p->termed && p->exited &&
               (WIFEXITED(p->status) ||
                (WIFSIGNALED(p->status) && WTERMSIG(p->status) == SIGTERM))) {
        /* Stopped as a service is: judged on what it did before (its evidence, below). */
        k->service = true;
        char how[64];
        if (WIFEXITED(p->status))
            snprintf(how, sizeof(how), "then exited with status %d", WEXITSTATUS(p->status));
        else
            snprintf(how, sizeof(how), "ended by that signal");
        rg_rank_find(k, RG_V_OK, k->left_t_s,
                     "a service: sent SIGTERM once every other rank had ended, it %s", how);
    } else if (p->hung) {
        /* DEADLOCK is written once the evidence says what its queues held */
    } else if (rg_proc_ended_early(p)) {
        rg_proc_judge_ended(k, p, sc, e, dir, r);
    } else if (WIFSIGNALED(p->status)) {
        rg_rank_find(k, RG_V_CRASH, k->left_t_s, "killed by signal %d (%s)%s%s",
                     WTERMSIG(p->status), strsignal(WTERMSIG(p->status)),
                     tail[0] ? "; last output: " : "", tail);
    } else if (WEXITSTATUS(p->status) == 127 && strstr(tail, "railguard exec: cannot start")) {
        rg_rank_find(k, RG_V_ERROR, k->left_t_s, "%s", tail);
    } else if (e->present && e->loaded && !e->totals) {
        /* _exit() or exec() skip the shim's summary: what it did with verbs is unknown. */
        rg_rank_find(k, RG_V_ERROR, k->left_t_s,
                     "not instrumented: exited with status %d but the shim wrote no summary (the "
                     "program left by _exit() or exec()), so what it did with verbs is unknown",
                     WEXITSTATUS(p->status));
    } else if (WEXITSTATUS(p->status) != 0) {
        rg_rank_find(k, RG_V_DETECTED, k->left_t_s, "exited with status %d%s%s",
                     WEXITSTATUS(p->status), tail[0] ? "; last output: " : "", tail);
    } else {
        rg_rank_find(k, RG_V_OK, k->left_t_s, "exited with status 0");
    }
}

/*
 * A scenario's programs, as launch/rg_programs.c left them, into res->rank[]: how each ended,
 * a service judged on what it did before it was stopped, a hang (a service's too), then the
 * evidence's rules over all of them.
 */
void rg_judge_programs(rg_result *res, const rg_scenario *sc, const rg_launched *l)
{
    res->seconds = l->seconds;
    if (l->lag_s > res->lag_s)
        res->lag_s = l->lag_s;
    rg_evidence *ev = ev_table(res, 0, sc->ranks);
    if (!ev)
        return;
    for (int r = 0; r < sc->ranks; r++) {
        struct rg_proc p = l->rank[r].proc;
        res->rank[r] = l->rank[r].said;
        ev[r] = l->rank[r].ev;
        if (l->rank[r].ev_err[0])
            rg_rank_find(&res->rank[r], RG_V_ERROR, -1, "%s", l->rank[r].ev_err);
        rg_slow_check_scale(&res->rank[r], sc, &ev[r]);
        judge_process(&res->rank[r], &p, sc, &ev[r], res->dir, r);
    }
    for (int r = 0; r < sc->ranks; r++)
        if (l->rank[r].proc.job_unseen && !own_fault_fired(sc, &ev[r], FI_KILL))
            job_unseen_end(res, l, r, sc, ev);
    if (l->job)
        judge_launcher(res, sc, l);
    /* A hang is the rank's finding before the evidence's rules run: a process still running
     * at the deadline never "returned success" on an error it was handed. */
    for (int r = 0; r < sc->ranks; r++) {
        rg_rank_result *k = &res->rank[r];
        const struct rg_proc *p = &l->rank[r].proc;
        bool service = (sc->exec.services & (UINT64_C(1) << r)) != 0;
        int stop;
        k->service |= service;
        if (p->hung && p->termed)
            rg_rank_find(k, RG_V_DEADLOCK, res->seconds,
                         "a service still running %.0f s after SIGTERM (sent once every other "
                         "rank had ended)%s%s; backtrace in %s/rank%d.backtrace",
                         sc->exec.service_grace, ev[r].queues[0] ? "; " : "", ev[r].queues,
                         res->dir, r);
        else if (p->hung && service)
            rg_rank_find(k, RG_V_DEADLOCK, sc->deadline_s,
                         "a service still running at the %.0f s deadline, when not every other "
                         "rank had ended: a client may still have needed it%s%s; backtrace in "
                         "%s/rank%d.backtrace",
                         sc->deadline_s, ev[r].queues[0] ? "; " : "", ev[r].queues, res->dir, r);
        else if (p->hung && (stop = own_fault(sc, &ev[r], FI_STOP)) >= 0)
            /* A process of its tree other than the one started (timeout's child, a daemon's
             * worker) took the stop: the tree waited on it, as planned, not a hang of its own.
             * The one started is seen stopping by waitpid (rg_proc_judge_ended). */
            rg_rank_find(k, RG_V_KILLED, sc->deadline_s,
                         "stopped by its stop fault (faults item %d, line %d) in a process of "
                         "its tree, which waited on it until the %.0f s deadline; ended by the "
                         "runner%s%s",
                         stop + 1, sc->fault[stop].line, sc->deadline_s,
                         ev[r].queues[0] ? "; " : "", ev[r].queues);
        else if (p->hung)
            rg_rank_find(k, RG_V_DEADLOCK, sc->deadline_s,
                         "still running after the %.0f s deadline%s%s; backtrace in "
                         "%s/rank%d.backtrace",
                         sc->deadline_s, ev[r].queues[0] ? "; " : "", ev[r].queues, res->dir, r);
    }
    double t0_ms = l->t0 * 1000.0;
    rg_evidence_apply(res, sc, ev, 0, sc->ranks, t0_ms, RG_EV_RANK | RG_EV_CROSS);
    res->t0_mono_ms = t0_ms;
    snprintf(res->host, sizeof(res->host), "%s", l->host);
    free(ev);
}
