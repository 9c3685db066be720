/* SPDX-License-Identifier: MIT */
/*
 * The causes a verbs trace proves (rg_triage.h): every rank's trace_* events of one run
 * (evidence/rg_trace.h), its QPs paired end to end by the peer each was pointed at (GID and QP
 * number, not either program's account), its times placed on rank 0's clock. Two causes:
 *
 *   a UC send with no receive posted for it  a UC sender's k-th receive-taking send had
 *       completed (left its NIC) before the peer's end had posted k receives -- counting every
 *       receive posted before that instant plus a flight allowance and the clocks' errors --
 *       or, failing that, had been posted (handed to its NIC) before the k-th receive was; and
 *       the peer took fewer receive completions there than the sends that completed: UC drops
 *       a message that finds no receive, and says nothing to either end
 *   a wait for a message never sent  the failing rank hung to the deadline, or waited until
 *       its call timed out, polling (the shim's trace_idle: at least RG_TRI_POLLS_MIN polls in
 *       a row of its receive CQ found nothing after its last completion, before the cut), with
 *       nothing of its own outstanding but receives; on each QP with receives outstanding
 *       every send the peer's end had posted by then had arrived: none was posted for them
 *
 * Nothing is proven from a trace with a hole in it: a line that cannot be read, a process past
 * FI_TRACE_MAX, a QP whose requests the shim could not see (ibv_qp_ex, a shared receive
 * queue), a peer that cannot be paired, or an error completion where the count matters.
 */
#include "triage/rg_triage.h"
#include "evidence/rg_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RG_TRI_POLLS_MIN 128 /* the shim's first trace_idle */
#define RG_TRI_WC_FLUSH 5    /* IBV_WC_WR_FLUSH_ERR, as the shim writes statuses: numbers */

/*
 * How long after its sender saw it complete a message may still be on its way: a UC send's
 * completion means it left the NIC, not that it arrived. Soft-RoCE on one host, or a switch,
 * takes microseconds; a millisecond more is what the UC cause grants the receiver before it
 * calls a receive posted after that instant one the message could not have found.
 */
#define RG_TRI_FLIGHT_MS 1.0

struct tr_run {
    const rg_result *r;
    rg_trace t[RG_MAX_RANKS];
};

/* What two ranks' times may be off by on rank 0's clock: each placed within its own error
 * (one host: none). */
static double margin(const struct tr_run *x, int a, int b)
{
    const rg_result *r = x->r;
    return r->clock_placed ? r->rank[a].clock.err_ms + r->rank[b].clock.err_ms : 0;
}

/* A time of rank k, in ms from the scenario's start on rank 0's clock. */
static double aligned(const struct tr_run *x, int k, double mono_ms)
{
    const rg_result *r = x->r;
    return mono_ms - (r->clock_placed ? r->rank[k].clock.offset_ms : 0) - r->t0_mono_ms;
}

static void cite_line(rg_tri_cause *c, int rank, int line, const char *what)
{
    if (c->nlines < RG_TRI_CITES)
        snprintf(c->line[c->nlines++], sizeof(c->line[0]), "rank%d.events.jsonl:%d: %s", rank, line,
                 what);
}

/* The QP at the other end of q: the one, on any rank, with q's peer GID and QP number. */
static const rg_tr_qp *peer_of(const struct tr_run *x, const rg_tr_qp *q, int *rank)
{
    const rg_tr_qp *found = NULL;
    if (!q->known || q->peer_qpn < 0 || !q->peer_gid[0])
        return NULL;
    for (int k = 0; k < x->r->ranks; k++)
        for (int i = 0; i < x->t[k].nqps; i++) {
            const rg_tr_qp *p = &x->t[k].qp[i];
            /* Each end names the other: one pointed at a QP that points elsewhere is no pair. */
            if (p->known && p->qpn == (uint32_t)q->peer_qpn && !strcmp(p->gid, q->peer_gid) &&
                p->peer_qpn == (int64_t)q->qpn && !strcmp(p->peer_gid, q->gid)) {
                if (found)
                    return NULL; /* two candidates: not paired */
                found = p;
                *rank = k;
            }
        }
    return found && !found->gap && !x->t[*rank].full ? found : NULL;
}

/*
 * When each send-side post of q completed, by position: the i-th signaled send is the i-th
 * send completion, and an unsignaled one completed with the next signaled one after it. -1
 * where it is not known to have succeeded (no completion yet, or at or after an error).
 */
static void send_done(const rg_tr_qp *q, double *done, int *line)
{
    int c = 0, from = 0;
    bool over = false;
    for (int i = 0; i < q->nposts; i++) {
        done[i] = -1;
        line[i] = 0;
        if (over || q->post[i].dir != RG_TR_SEND || !q->post[i].signaled)
            continue;
        while (c < q->ncqes && q->cqe[c].dir == RG_TR_RECV)
            c++;
        /* An error whose queue is unknown may be this send's: nothing after it is matched. */
        if (c == q->ncqes || q->cqe[c].status != 0 || q->cqe[c].dir != RG_TR_SEND) {
            over = true;
            continue;
        }
        for (int j = from; j <= i; j++)
            if (q->post[j].dir == RG_TR_SEND) {
                done[j] = q->cqe[c].at_ms;
                line[j] = q->cqe[c].line;
            }
        from = i + 1;
        c++;
    }
}

/* Receives of q posted (to the wire) before time t on rank k's clock, aligned; *next: the
 * first posted at or after it, -1 none. */
static int recvs_before(const struct tr_run *x, int k, const rg_tr_qp *q, double t, int *next)
{
    int n = 0;
    *next = -1;
    for (int i = 0; i < q->nposts; i++)
        if (q->post[i].dir == RG_TR_RECV && q->post[i].fate == RG_TR_WIRE) {
            if (aligned(x, k, q->post[i].at_ms) < t)
                n++;
            else if (*next < 0)
                *next = i;
        }
    return n;
}

/* Messages q received: its successful receive completions into *ok. A flushed request (its
 * queue torn down) received nothing, whichever queue it was on; any other error makes the
 * count unprovable (false). */
static bool recv_cqes(const rg_tr_qp *q, int *ok)
{
    *ok = 0;
    for (int i = 0; i < q->ncqes; i++) {
        if (q->cqe[i].status == RG_TRI_WC_FLUSH)
            continue;
        if (q->cqe[i].status || q->cqe[i].dir == RG_TR_UNKNOWN)
            return false;
        *ok += q->cqe[i].dir == RG_TR_RECV;
    }
    return true;
}

/* A drop into rank b explains the failure of rank origin when b is that rank, or when that
 * rank waited (for what b, short of a message, could not pass on). */
static bool uc_drop_on(const struct tr_run *x, int a, const rg_tr_qp *A, int origin, bool waited,
                       rg_tri_cause *c)
{
    int b = -1, got;
    const rg_tr_qp *B = peer_of(x, A, &b);
    if (!B || B->srq || (b != origin && !waited) || !recv_cqes(B, &got))
        return false;
    for (int i = 0; i < B->nposts; i++)
        if (B->post[i].dir == RG_TR_RECV && B->post[i].fate != RG_TR_WIRE)
            return false;
    double *done = calloc((size_t)A->nposts + 1, sizeof(*done));
    int *dline = calloc((size_t)A->nposts + 1, sizeof(*dline));
    if (!done || !dline) {
        free(done);
        free(dline);
        return false;
    }
    send_done(A, done, dline);
    int sent = 0, k = 0, hit = -1, avail = 0, next = -1;
    bool left = false; /* the hit rests on its completion (left its NIC), not on its post */
    for (int i = 0; i < A->nposts; i++)
        if (rg_tr_consumes(A->post[i].kind) && A->post[i].fate == RG_TR_WIRE && done[i] >= 0)
            sent++;
    /*
     * Pass 0: the k-th send had left its NIC (its completion, plus the flight allowance) before
     * the k-th receive was posted. Pass 1: it had been handed to its NIC (posted) before the
     * k-th receive was posted, the receiver given the clocks' error: the k-th message could
     * find a receive only by waiting in the sender's queue for it.
     */
    for (int pass = 0; got < sent && hit < 0 && pass < 2; pass++)
        for (int i = 0, k0 = 0; hit < 0 && i < A->nposts; i++) {
            if (!rg_tr_consumes(A->post[i].kind) || A->post[i].fate != RG_TR_WIRE)
                continue;
            k = ++k0;
            if (done[i] < 0)
                continue;
            double t = pass ? aligned(x, a, A->post[i].at_ms) + margin(x, a, b)
                            : aligned(x, a, done[i]) + margin(x, a, b) + RG_TRI_FLIGHT_MS;
            avail = recvs_before(x, b, B, t, &next);
            if (avail < k) {
                hit = i;
                left = pass == 0;
            }
        }
    if (hit >= 0) {
        char last[96] = "none before it", then[96] = "and never another";
        const rg_tr_op *s = &A->post[hit];
        if (avail > 0) {
            int seen = 0;
            for (int i = 0; i < B->nposts; i++)
                if (B->post[i].dir == RG_TR_RECV && ++seen == avail)
                    snprintf(last, sizeof(last), "the last of them at %.3f ms",
                             aligned(x, b, B->post[i].at_ms));
        }
        if (next >= 0)
            snprintf(then, sizeof(then), "the next at %.3f ms", aligned(x, b, B->post[next].at_ms));
        char when[96];
        if (left)
            snprintf(when, sizeof(when), "had left its NIC by %.3f ms (its completion)",
                     aligned(x, a, done[hit]));
        else
            snprintf(when, sizeof(when), "was handed to its NIC at %.3f ms (posted)",
                     aligned(x, a, s->at_ms));
        c->proven = true;
        c->kind = RG_C_UC_NO_RECV;
        rg_tri_role(x->r->ranks, a, b, "a UC send on the QP to", c->site, sizeof(c->site));
        snprintf(c->text, sizeof(c->text),
                 "a UC send with no receive posted for it: rank %d's send #%llu on QP 0x%x (%s) "
                 "%s, when rank %d had posted %d receive(s) on QP 0x%x (%s), the other end, for "
                 "it and the %d before it (%s; %s). A UC message that finds no receive is "
                 "dropped without a word to either end: rank %d took %d receive completion(s) "
                 "there for the %d send(s) rank %d completed",
                 a, (unsigned long long)s->n, A->qpn, A->dev, when, b, avail, B->qpn, B->dev, k - 1,
                 last, then, b, got, sent, a);
        cite_line(c, a, s->line, "the send posted");
        cite_line(c, a, dline[hit], "its completion");
        if (next >= 0)
            cite_line(c, b, B->post[next].line, "the peer's next receive posted");
        cite_line(c, a, A->line, "the sender's QP and its peer");
    }
    free(done);
    free(dline);
    return hit >= 0;
}

static bool uc_drop(const struct tr_run *x, int origin, bool waited, rg_tri_cause *c)
{
    for (int a = 0; a < x->r->ranks; a++)
        for (int i = 0; !x->t[a].full && i < x->t[a].nqps; i++) {
            const rg_tr_qp *A = &x->t[a].qp[i];
            if (A->known && !A->gap && !strcmp(A->type, "uc") &&
                uc_drop_on(x, a, A, origin, waited, c))
                return true;
        }
    return false;
}

/*
 * Every message UC QP A put on the wire arrived: its peer, paired and seen whole, took as many
 * receive completions as A posted receive-taking sends. A drop loses a message for good (UC
 * has no retry, and a message takes one receive at most), so none was dropped. A message
 * still on its way, or one a send error may have kept home, leaves fewer: then no proof, as
 * with a peer not paired, a shared receive queue or an error completion there.
 */
static bool uc_arrived(const struct tr_run *x, const rg_tr_qp *A)
{
    int b = -1, got, sent = 0;
    for (int i = 0; i < A->nposts; i++)
        if (rg_tr_consumes(A->post[i].kind)) {
            if (A->post[i].fate != RG_TR_WIRE)
                return false;
            sent++;
        }
    if (!sent)
        return true;
    const rg_tr_qp *B = peer_of(x, A, &b);
    return B && !B->srq && recv_cqes(B, &got) && got >= sent;
}

/* No UC message of any rank was dropped: every rank's trace is there and whole (a rank with
 * none, or one past its limit, may have had UC QPs nobody saw), every QP's type is known, and
 * every UC QP's messages all arrived. */
static bool uc_none(const struct tr_run *x)
{
    for (int a = 0; a < x->r->ranks && a < RG_MAX_RANKS; a++) {
        if (!x->t[a].any || x->t[a].full)
            return false;
        for (int i = 0; i < x->t[a].nqps; i++) {
            const rg_tr_qp *A = &x->t[a].qp[i];
            if (!A->known)
                return false; /* its type unknown: it may be UC */
            if (strcmp(A->type, "uc") != 0)
                continue;
            if (A->gap || !uc_arrived(x, A))
                return false;
        }
    }
    return true;
}

/* Whether an event of rank k at mono_ms came before the cut (ms from the scenario's start). */
static bool before(const struct tr_run *x, int k, double mono_ms, double cut)
{
    return aligned(x, k, mono_ms) <= cut;
}

/*
 * How many polls of rank o's process pid's CQ ord in a row found nothing after its last
 * completion before the cut, and before the cut (the shim's trace_idle counts: 128, 256, ...):
 * 0 when none was written then.
 */
static uint64_t idle_before(const struct tr_run *x, int o, long pid, int ord, double cut, int *line)
{
    const rg_trace *t = &x->t[o];
    double last = -1;
    uint64_t idle = 0;
    for (int i = 0; i < t->nqps; i++)
        for (int j = 0; t->qp[i].pid == pid && j < t->qp[i].ncqes; j++) {
            const rg_tr_op *e = &t->qp[i].cqe[j];
            if (e->cq == ord && before(x, o, e->at_ms, cut) && e->at_ms > last)
                last = e->at_ms;
        }
    for (int i = 0; i < t->nidle; i++) {
        const rg_tr_idle *e = &t->idle[i];
        if (e->pid == pid && e->cq == ord && e->at_ms > last && before(x, o, e->at_ms, cut) &&
            e->idle > idle) {
            idle = e->idle;
            *line = e->line;
        }
    }
    return idle;
}

/* q of rank o has receives outstanding at the cut: true when every send its peer's end posted
 * by then (within the clocks' error) had arrived; what it found goes into what. */
static bool all_arrived(const struct tr_run *x, int o, const rg_tr_qp *q, double cut, char *what,
                        size_t len, int *prank, const rg_tr_qp **pq)
{
    int p = -1, sent = 0, got = 0;
    const rg_tr_qp *P = q->srq ? NULL : peer_of(x, q, &p);
    if (!P)
        return false;
    for (int i = 0; i < q->ncqes; i++)
        if (q->cqe[i].dir == RG_TR_RECV && before(x, o, q->cqe[i].at_ms, cut)) {
            if (q->cqe[i].status)
                return false;
            got++;
        }
    for (int i = 0; i < P->nposts; i++) {
        if (!rg_tr_consumes(P->post[i].kind) ||
            !before(x, p, P->post[i].at_ms, cut + margin(x, o, p)))
            continue;
        if (P->post[i].fate != RG_TR_WIRE)
            return false; /* a fault kept one off the wire: not this cause */
        sent++;
    }
    if (got != sent)
        return false;
    snprintf(what, len, "rank %d posted %d send(s) on QP 0x%x (%s) to it and all %d arrived", p,
             sent, P->qpn, P->dev, sent);
    *prank = p;
    *pq = P;
    return true;
}

/* What rank o had outstanding on q at the cut: false when that cannot be known (a completion
 * whose queue is unknown) or a send of its own was outstanding (it may wait for that). */
static bool only_receives(const struct tr_run *x, int o, const rg_tr_qp *q, double cut, int *out,
                          int *line)
{
    int sig = 0, sdone = 0, rpost = 0, rdone = 0;
    for (int j = 0; j < q->nposts; j++)
        if (before(x, o, q->post[j].at_ms, cut)) {
            sig += q->post[j].dir == RG_TR_SEND && q->post[j].signaled;
            rpost += q->post[j].dir == RG_TR_RECV;
        }
    for (int j = 0; j < q->ncqes; j++) {
        if (!before(x, o, q->cqe[j].at_ms, cut))
            continue;
        if (q->cqe[j].dir == RG_TR_UNKNOWN)
            return false;
        sdone += q->cqe[j].dir == RG_TR_SEND;
        rdone += q->cqe[j].dir == RG_TR_RECV;
        if (q->cqe[j].dir == RG_TR_RECV)
            *line = q->cqe[j].line;
    }
    *out = rpost - rdone;
    return sig <= sdone;
}

/*
 * Rank o waited -- hung to the deadline (cut: none), or until its own timeout at cut ms --
 * with nothing of its own outstanding but receives, polling, and every send posted to it had
 * arrived.
 */
static bool never_sent(const struct tr_run *x, int o, double cut, rg_tri_cause *c)
{
    const rg_trace *t = &x->t[o];
    char what[2][200];
    int waits = 0, line = 0, cqline = 0, prank = -1, cq = -1;
    const rg_tr_qp *first = NULL, *P = NULL;
    uint64_t polls = 0;
    if (!t->any || t->full)
        return false;
    for (int i = 0; i < t->nqps; i++) {
        const rg_tr_qp *q = &t->qp[i];
        int out = 0, qline = 0, pr, cl = 0;
        const rg_tr_qp *pq;
        if (q->gap || !only_receives(x, o, q, cut, &out, &qline))
            return false;
        if (out <= 0)
            continue;
        if (!all_arrived(x, o, q, cut, what[waits ? 1 : 0], sizeof(what[0]), &pr, &pq))
            return false;
        uint64_t after = idle_before(x, o, q->pid, q->recv_cq, cut, &cl);
        if (after < RG_TRI_POLLS_MIN)
            return false;
        if (!waits++) {
            first = q;
            line = qline;
            cqline = cl;
            polls = after;
            cq = q->recv_cq;
            prank = pr;
            P = pq;
        }
    }
    if (!waits)
        return false;
    c->proven = true;
    c->kind = RG_C_NEVER_SENT;
    rg_tri_role(x->r->ranks, o, prank, "a receive on the QP to", c->site, sizeof(c->site));
    char until[64];
    if (cut > 1e300)
        snprintf(until, sizeof(until), "hung to the deadline");
    else
        snprintf(until, sizeof(until), "waited until its timeout at %.3f ms", cut);
    snprintf(c->text, sizeof(c->text),
             "a wait for a message never sent: rank %d %s with nothing of its own outstanding "
             "but receives, polling (CQ #%d: %llu polls in a row found nothing after its last "
             "completion); on QP 0x%x (%s) %s%s%s. No rank posted the send its receives wait "
             "for",
             o, until, cq, (unsigned long long)polls, first->qpn, first->dev, what[0],
             waits > 1 ? "; likewise on its other QP(s) with receives outstanding: " : "",
             waits > 1 ? what[1] : "");
    if (line)
        cite_line(c, o, line, "its last receive completion");
    cite_line(c, o, cqline, "its CQ's empty polls counted");
    for (int j = P->nposts - 1; j >= 0; j--)
        if (rg_tr_consumes(P->post[j].kind) && before(x, prank, P->post[j].at_ms, cut)) {
            cite_line(c, prank, P->post[j].line, "the peer's last send posted");
            break;
        }
    cite_line(c, o, first->line, "the waiting QP and its peer");
    return true;
}

/* Every rank's trace read into x, and whether it can prove anything: 0, or -1 with why. */
static int load(struct tr_run *x, const rg_result *r, char *why, size_t len)
{
    bool any = false;
    char err[600];
    x->r = r;
    for (int k = 0; k < r->ranks && k < RG_MAX_RANKS; k++) {
        char path[1200];
        snprintf(path, sizeof(path), "%s/rank%d.events.jsonl", r->dir, k);
        if (rg_trace_read(path, &x->t[k], err, sizeof(err)) != 0) {
            snprintf(why, len, "rank %d's trace: %s", k, err);
            return -1;
        }
        if (x->t[k].bad_lines) {
            snprintf(why, len, "rank %d's events: %d line(s) unreadable, the first %s", k,
                     x->t[k].bad_lines, x->t[k].unreadable);
            return -1;
        }
        any |= x->t[k].any;
    }
    if (!any) {
        snprintf(why, len, "the run has no verbs trace");
        return -1;
    }
    /* Ranks on several hosts whose clocks were not measured cannot be put in one order. */
    if (!r->clock_placed && !strcmp(r->host, "(several)")) {
        snprintf(why, len,
                 "its ranks ran on hosts whose clocks were not measured against rank 0's");
        return -1;
    }
    /* A fault holds, drops or ends what the trace would show a transport doing by itself. */
    for (int i = 0; i < r->nrules && i < FI_MAX_RULES; i++)
        if (!r->rule[i].counting && r->rule[i].fired) {
            snprintf(why, len,
                     "a fault fired in it (rule %d): the trace proves causes in runs without one",
                     i + 1);
            return -1;
        }
    return 0;
}

static void unload(struct tr_run *x)
{
    for (int k = 0; k < x->r->ranks && k < RG_MAX_RANKS; k++)
        rg_trace_free(&x->t[k]);
    free(x);
}

int rg_tri_qp_causes(const rg_result *r, const rg_sig *s, rg_tri_cause *c, int max, char *why,
                     size_t len, unsigned *ruled)
{
    struct tr_run *x = calloc(1, sizeof(*x));
    int n = 0;
    why[0] = '\0';
    if (ruled)
        *ruled = 0;
    if (!x || (max < 1 && !ruled)) {
        free(x);
        return 0;
    }
    if (load(x, r, why, len) != 0)
        goto out;
    /* What the same traces rule out, read once (compare asks both of every failed run). */
    if (ruled && uc_none(x))
        *ruled |= 1u << RG_C_UC_NO_RECV;
    if (max < 1)
        goto out; /* read for what it rules out alone */
    /* A rank hung at the deadline waited to the end; one whose call timed out, until then. */
    const rg_rank_result *o = &r->rank[s->origin];
    double cut = rg_rank_judged(r, s->origin) == RG_V_DEADLOCK ? 1e308
                 : o->status == RG_ERR_TIMEOUT && o->t_s >= 0  ? o->t_s * 1000
                                                               : -1;
    /* Each proven on its own: a UC drop and a wait for what no rank sent can both be in one
     * run (the drop on one wire, the wait on another), and a comparison tells them apart. */
    memset(&c[n], 0, sizeof(c[n]));
    if (uc_drop(x, s->origin, cut >= 0, &c[n]))
        n++;
    if (n < max && cut >= 0) {
        memset(&c[n], 0, sizeof(c[n]));
        if (never_sent(x, s->origin, cut, &c[n]))
            n++;
    }
    if (!n)
        snprintf(why, len,
                 "the verbs trace of every rank was read and proves neither a UC send "
                 "dropped for want of a receive nor a wait for a message never sent");
out:
    unload(x);
    return n;
}

bool rg_tri_qp_cause(const rg_result *r, const rg_sig *s, rg_tri_cause *c, char *why, size_t len)
{
    return rg_tri_qp_causes(r, s, c, 1, why, len, NULL) == 1;
}
