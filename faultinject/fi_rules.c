/* SPDX-License-Identifier: MIT */
/* Where rules meet events (fi_shim.h): filters, firing and its events, completions and polls. */
#include "fi_shim.h"
#include "rg_parse.h"
#include "rg_faultinject.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- rule evaluation ---------------------------------------------------------------------- */
static bool fi_filter(const struct fi_rule *r, const struct fi_site *s)
{
    if (r->rank >= 0 && r->rank != fi_rank())
        return false;
    if (r->dev[0] && (!s->dev || strcmp(r->dev, s->dev) != 0))
        return false;
    if (r->qp_num >= 0 && r->qp_num != s->qpn)
        return false;
    if (r->qp_ord >= 0 && r->qp_ord != s->qp_ord)
        return false;
    if (r->cq_ord >= 0 && r->cq_ord != s->cq_ord)
        return false;
    if (!fi_ops_has(r->ops, s->op))
        return false;
    if (r->verb != FI_VERB_NONE && r->verb != s->verb)
        return false;
    if (r->step != FI_PHASE_ANY &&
        (r->step != atomic_load_explicit(&g_step, memory_order_relaxed) ||
         (r->rep != FI_PHASE_ANY && r->rep != atomic_load_explicit(&g_rep, memory_order_relaxed))))
        return false;
    if (r->after_ms || r->before_ms != UINT64_MAX) {
        double t = fi_elapsed_ms();
        if (t < (double)r->after_ms || t >= (double)r->before_ms)
            return false;
    }
    return true;
}

/* Counts the event for rule i and says whether the rule fires on it (claiming one fire). */
bool fi_fire(struct fi_live *lp, int i, const struct fi_site *s, uint64_t *nth)
{
    const struct fi_rule *r = &lp->plan.rules[i];
    if (!fi_filter(r, s) || (r->site[0] && !fi_call_matches(i)))
        return false;
    uint64_t n = atomic_fetch_add_explicit(&lp->matched[i], 1, memory_order_relaxed) + 1;
    uint64_t fired = atomic_load_explicit(&lp->fired[i], memory_order_relaxed);
    for (;;) {
        if (!fi_rule_fires(r, i, n, fired))
            return false;
        /* Two threads may both decide to fire; the count limit still holds. */
        if (atomic_compare_exchange_weak(&lp->fired[i], &fired, fired + 1))
            break;
    }
    *nth = n;
    return true;
}

/*
 * Gives back a fire claimed by fi_fire that could not act (a corrupt with no receive buffer
 * the shim knows): a fault that changed nothing must not count as fired, or the judge takes
 * the run as proof. Its event still says why, with "skipped".
 */
void fi_unfire(struct fi_live *lp, int i)
{
    atomic_fetch_sub_explicit(&lp->fired[i], 1, memory_order_relaxed);
}

void fi_event_fault(const struct fi_live *lp, int i, const struct fi_site *s, uint64_t nth,
                    const struct rg_evr_fault *d)
{
    const struct fi_rule *r = &lp->plan.rules[i];
    /* Where in the program the fault landed: the call site of the verbs call it fired in. */
    char site[440], from[1400];
    fi_call_site(site, sizeof(site), from, sizeof(from));
    struct rg_evr_fault e = d ? *d : (struct rg_evr_fault){0};
    e.fault = fi_kind_name(r->kind);
    e.rule = i;
    e.line = r->line;
    e.dev = s->dev ? s->dev : "";
    /* A fault of no QP or CQ (a verb's, a first post's before its QP is known) says so. */
    e.qp = s->qpn >= 0 ? FI_N(s->qpn) : FI_N_UNKNOWN;
    e.qp_ord = s->qp_ord >= 0 ? FI_N(s->qp_ord) : FI_N_UNKNOWN;
    e.cq_ord = s->cq_ord >= 0 ? FI_N(s->cq_ord) : FI_N_UNKNOWN;
    e.op = s->verb != FI_VERB_NONE ? fi_verb_name(s->verb) : fi_op_name(s->op);
    e.nth = nth;
    e.caller = site;
    e.from = from;
    /* The program's call it fired in, when it fired on the thread that said the phase. */
    int step = atomic_load(&g_step);
    if (step != FI_PHASE_ANY && (long)syscall(SYS_gettid) == atomic_load(&g_phase_tid)) {
        e.has |= RG_EVH(fault, step) | RG_EVH(fault, rep);
        e.step = step;
        e.rep = atomic_load(&g_rep);
    }
    fi_ev(RG_EVK_fault, &e);
}

static enum fi_op fi_wc_op(enum ibv_wc_opcode op)
{
    switch (op) {
    case IBV_WC_SEND:
        return FI_OP_SEND;
    case IBV_WC_RDMA_WRITE:
        return FI_OP_WRITE;
    case IBV_WC_RDMA_READ:
        return FI_OP_READ;
    case IBV_WC_COMP_SWAP:
    case IBV_WC_FETCH_ADD:
        return FI_OP_ATOMIC;
    case IBV_WC_RECV:
    case IBV_WC_RECV_RDMA_WITH_IMM:
        return FI_OP_RECV;
    default:
        return FI_OP_ANY;
    }
}

enum fi_op fi_wr_op(enum ibv_wr_opcode op)
{
    switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_SEND_WITH_INV:
        return FI_OP_SEND;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return FI_OP_WRITE;
    case IBV_WR_RDMA_READ:
        return FI_OP_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return FI_OP_ATOMIC;
    default:
        return FI_OP_ANY;
    }
}

/* The QP's own record names its device: no context lookup on the datapath. */
void fi_site_qp(struct fi_site *s, const struct fi_qp *q)
{
    s->dev = q->c ? q->c->dev : "?";
    s->qpn = q->qpn;
    s->qp_ord = q->ord;
    s->cq_ord = -1;
    s->op = FI_OP_ANY;
    s->verb = FI_VERB_NONE;
}

/* nomem on a control verb: true when this call must fail with ENOMEM. */
bool fi_verb_fails(enum fi_verb v, struct ibv_context *ctx, void *ra)
{
    struct fi_live *lp = fi_live();
    if (!lp || (!lp->m_verb && !lp->sites))
        return false;
    static const enum fi_call call_of[] = {
        [FI_VERB_POST_SEND] = FI_CALL_POST_SEND, [FI_VERB_POST_RECV] = FI_CALL_POST_RECV,
        [FI_VERB_REG_MR] = FI_CALL_REG_MR,       [FI_VERB_CREATE_QP] = FI_CALL_CREATE_QP,
        [FI_VERB_CREATE_CQ] = FI_CALL_CREATE_CQ, [FI_VERB_ALLOC_PD] = FI_CALL_ALLOC_PD,
    };
    fi_call_enter(ra,
                  (unsigned)v < sizeof(call_of) / sizeof(call_of[0]) ? call_of[v] : FI_CALL_KINDS);
    struct fi_site s = {.dev = ctx ? fi_dev_of(ctx) : NULL,
                        .qpn = -1,
                        .qp_ord = -1,
                        .cq_ord = -1,
                        .op = FI_OP_ANY,
                        .verb = v};
    bool fail = false;
    uint64_t nth;
    for (uint32_t m = lp->m_verb; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        if (fi_fire(lp, i, &s, &nth)) { /* fi_filter matches the rule's verb= against v */
            fi_event_fault(lp, i, &s, nth, FI_FD_NOMEM);
            fail = true;
        }
    }
    fi_call_leave();
    return fail;
}

bool fi_pend_push(struct fi_cq *c, struct fi_qp *q, uint64_t wr_id, enum ibv_wc_status st,
                  enum ibv_wc_opcode op, uint64_t after, bool lost)
{
    bool ok = false;
    if (!c || c->is_ex || !c->pend)
        return false;
    pthread_mutex_lock(&c->plock);
    int n = atomic_load(&c->npend);
    if (n < c->pcap) {
        struct fi_pend *p = &c->pend[n];
        memset(&p->wc, 0, sizeof(p->wc));
        p->wc.wr_id = wr_id;
        p->wc.status = st;
        p->wc.opcode = op;
        p->wc.qp_num = q->qpn;
        p->q = q;
        p->after = after;
        p->lost = lost;
        atomic_store(&c->npend, n + 1);
        ok = true;
    }
    pthread_mutex_unlock(&c->plock);
    return ok;
}

/*
 * Breaks the QP as a real error does: it is moved to the error state, and every request still
 * outstanding completes with WR_FLUSH_ERR, as will every later one. The two queues differ:
 *
 * - Receives: rxe on Linux 6.1 never completes the receives of a QP in error, which no hardware
 *   NIC does and which would turn an injected error into a hang. Receives always complete, so
 *   the ring holds exactly the outstanding ones: the shim flushes those itself, flushes later
 *   receives at once without posting them, and hides the provider's receive completions.
 * - Sends: the provider flushes its own send queue, and only what is really outstanding (an
 *   unsignaled send it already completed stays silent; the shim cannot know which those are).
 *   So its send completions are let through, a success for the broken QP turned into a flush,
 *   and later sends are posted to it and come back flushed, in order. Only when the move to the
 *   error state failed does the shim flush the send ring itself, as its best guess.
 */
void fi_qp_break(struct fi_qp *q)
{
    if (atomic_exchange(&q->faulted, 1))
        return;
    struct fi_cq *sc = fi_cq_find(q->qp->send_cq), *rc = fi_cq_find(q->qp->recv_cq);
    int lost = 0;
    if (rc && !rc->is_ex) {
        pthread_mutex_lock(&q->rlock);
        struct fi_ring *r = &q->rring;
        for (uint32_t h = r->head; r->cap && h != r->tail; h = (h + 1) % r->cap)
            lost += !fi_pend_push(rc, q, r->e[h].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, false);
        fi_ring_forget(r, r->head);
        r->head = r->tail;
        pthread_mutex_unlock(&q->rlock);
    }
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    int saved = errno; /* the program's poll must not see our modify_qp's errno */
    int err = fi_real.modify_qp(q->qp, &a, IBV_QP_STATE);
    errno = saved;
    if (err) {
        FI_EV(note, .has = RG_EVH(note, qp) | RG_EVH(note, err), .what = "modify_qp to ERR failed",
              .qp = q->qpn, .err = err);
        if (sc && !sc->is_ex) {
            pthread_mutex_lock(&q->rlock);
            struct fi_ring *r = &q->sring;
            for (uint32_t h = r->head; r->cap && h != r->tail; h = (h + 1) % r->cap)
                lost +=
                    !fi_pend_push(sc, q, r->e[h].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, false);
            fi_ring_forget(r, r->head);
            r->head = r->tail;
            q->sq_by_shim = true;
            pthread_mutex_unlock(&q->rlock);
        }
    }
    if (lost) {
        char what[64];
        snprintf(what, sizeof(what), "%d flushes not made: full CQ", lost);
        FI_EV(note, .has = RG_EVH(note, qp), .what = what, .qp = q->qpn);
    }
}

/*
 * Applies the completion-site rules to one successful completion of QP q: error rewrites its
 * status and breaks the QP; corrupt flips one bit of a received payload; kill and stop end or
 * halt the rank there.
 */
static void fi_on_cqe(struct fi_live *lp, struct fi_qp *q, struct fi_cq *c, int *status,
                      uint32_t *vendor_err, enum ibv_wc_opcode opcode, uint64_t wr_id,
                      uint32_t byte_len, const struct fi_rent *e)
{
    struct fi_site s;
    uint64_t nth;
    fi_site_qp(&s, q);
    s.cq_ord = c ? c->ord : -1;
    s.op = fi_wc_op(opcode);
    for (uint32_t m = lp->m_cqe; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        const struct fi_rule *r = &lp->plan.rules[i];
        if (r->kind == FI_CORRUPT && s.op != FI_OP_RECV)
            continue;
        if (!fi_fire(lp, i, &s, &nth))
            continue;
        if (r->kind == FI_KILL || r->kind == FI_STOP) {
            /* The event is written (one write) before the signal: the runner tells a planned
             * death from a crash by it. The completion is the program's if it ever runs on. */
            fi_event_fault(lp, i, &s, nth,
                           FI_FD(.has = RG_EVH(fault, signal) | RG_EVH(fault, wr_id),
                                 .signal = r->kind == FI_KILL ? "SIGKILL" : "SIGSTOP",
                                 .wr_id = wr_id));
            raise(r->kind == FI_KILL ? SIGKILL : SIGSTOP);
            continue;
        }
        if (r->kind == FI_EXIT) {
            /* exit(), not _exit(): a program that returns early runs its atexit handlers and
             * the shim's own, which records what was still alive. */
            fi_event_fault(lp, i, &s, nth,
                           FI_FD(.has = RG_EVH(fault, exit) | RG_EVH(fault, wr_id), .exit = r->code,
                                 .wr_id = wr_id));
            exit(r->code);
        }
        if (r->kind == FI_ERROR) {
            *status = r->status;
            *vendor_err = 0;
            fi_event_fault(
                lp, i, &s, nth,
                FI_FD(.has = RG_EVH(fault, status) | RG_EVH(fault, code) | RG_EVH(fault, wr_id),
                      .status = fi_status_name(r->status), .code = r->status, .wr_id = wr_id));
            fi_qp_break(q);
            return;
        }
        /* The received bytes fill the scatter list in order: the span is what landed in the
         * entries kept, a header's and its payload's alike. */
        uint64_t span = 0;
        for (uint32_t k = 0; e && k < e->nsge; k++)
            span += e->len[k];
        if (span > byte_len)
            span = byte_len;
        char why[96] = "receive buffer unknown or empty";
        struct rg_evr_fault d = {.has = RG_EVH(fault, skipped), .skipped = why};
        uint64_t bit = !span         ? 0
                       : r->bit >= 0 ? (uint64_t)r->bit
                                     : (uint64_t)(fi_draw(r->seed, i, nth) * (double)span * 8.0);
        if (!e || !span) {
            /* nothing to flip: d says why */
        } else if (bit >= span * 8) {
            snprintf(why, sizeof(why), "bit %llu beyond %llu bytes", (unsigned long long)bit,
                     (unsigned long long)span);
        } else {
            uint64_t at = bit / 8;
            uint32_t k = 0;
            while (at >= e->len[k]) /* within span, so within the entries kept */
                at -= e->len[k++];
            if (!e->addr[k]) {
                snprintf(why, sizeof(why), "scatter entry %u has no address", k);
            } else {
                ((volatile uint8_t *)(uintptr_t)e->addr[k])[at] ^= (uint8_t)(1u << (bit % 8));
                fi_own_flipped(e->addr[k] + at, (uint8_t)(1u << (bit % 8)));
                d = (struct rg_evr_fault){.has = RG_EVH(fault, byte) | RG_EVH(fault, bit) |
                                                 RG_EVH(fault, wr_id),
                                          .byte = bit / 8,
                                          .bit = bit % 8,
                                          .wr_id = wr_id};
            }
        }
        if (d.has & RG_EVH(fault, skipped))
            fi_unfire(lp, i);
        fi_event_fault(lp, i, &s, nth, &d);
    }
}

void fi_count_cqe(struct fi_qp *q, int status, enum ibv_wc_opcode opcode)
{
    if (status == IBV_WC_SUCCESS) {
        fi_call_count(fi_wc_op(opcode));
        atomic_fetch_add_explicit(&q->cqe_op[fi_wc_op(opcode)], 1, memory_order_relaxed);
        FI_TOT(cqe_op[fi_wc_op(opcode)], 1);
    }
    if (status != IBV_WC_SUCCESS) {
        atomic_fetch_add_explicit(&q->cqe_err, 1, memory_order_relaxed);
        FI_TOT(cqe_err, 1);
    } else if (opcode & IBV_WC_RECV)
        atomic_fetch_add_explicit(&q->cqe_recv, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&q->cqe_send, 1, memory_order_relaxed);
}

void fi_count_post(struct fi_qp *q, enum fi_op op)
{
    bool recv = op == FI_OP_RECV;
    fi_call_count(op);
    atomic_fetch_add_explicit(&q->posts_op[op], 1, memory_order_relaxed);
    FI_TOT(posts_op[op], 1);
    FI_PROG(posts, 1);
    atomic_fetch_add_explicit(recv ? &q->posts_recv : &q->posts_send, 1, memory_order_relaxed);
    if (recv)
        FI_TOT(posts_recv, 1);
    else
        FI_TOT(posts_send, 1);
}

void fi_count_srq_posts(const struct ibv_recv_wr *wr)
{
    bool own = fi_own_on();
    for (const struct ibv_recv_wr *w = wr; w; w = w->next) {
        fi_call_count(FI_OP_RECV);
        FI_TOT(posts_op[FI_OP_RECV], 1);
        FI_TOT(posts_recv, 1);
        FI_PROG(posts, 1);
        if (own)
            fi_own_unsanitized(1);
    }
}

/*
 * One completion from the provider for QP q, before the program sees it: retires its request,
 * applies the completion rules, and after a break turns it into what a broken QP reports.
 * Returns false when the program must not see it (a receive the shim already flushed).
 */
bool fi_on_provider_cqe(struct fi_live *lp, struct fi_qp *q, struct fi_cq *c,
                        const struct ibv_cq *cq, int *status, uint32_t *vendor_err,
                        enum ibv_wc_opcode opcode, uint64_t wr_id, uint32_t byte_len)
{
    bool recv = fi_cqe_is_recv(q, cq, *status, opcode, wr_id);
    bool broken = atomic_load_explicit(&q->faulted, memory_order_relaxed);
    struct fi_rent e;
    /* An SRQ's receive is taken from its record whatever becomes of the completion. */
    bool have = recv && q->srq && fi_srq_take(q->qp->srq, wr_id, &e);
    if (broken && recv && !(c && c->is_ex))
        return false;
    if (broken && !recv && q->sq_by_shim)
        return false;
    if (!(recv && q->srq))
        have = fi_retire(q, recv, *status == IBV_WC_SUCCESS, wr_id, &e);
    /* Lost sends wait for the signaled sends before them, whatever their status. */
    if (!recv && (have ? e.signaled : *status == IBV_WC_SUCCESS))
        atomic_fetch_add_explicit(&q->sig_done, 1, memory_order_relaxed);
    if (broken) {
        if (*status == IBV_WC_SUCCESS)
            *status = IBV_WC_WR_FLUSH_ERR;
    } else if (*status == IBV_WC_SUCCESS && lp->m_cqe) {
        fi_on_cqe(lp, q, c, status, vendor_err, opcode, wr_id, byte_len, have ? &e : NULL);
    }
    if (have)
        fi_retired(q, &e, *status, byte_len);
    fi_count_cqe(q, *status, opcode);
    return true;
}

/* Poll-site rules (negpoll, stall) for CQ c. Returns 1 to go on, 0 to report an empty CQ, or
 * the negative value to return. */
int fi_on_poll(struct fi_live *lp, struct fi_cq *c)
{
    atomic_fetch_add_explicit(&c->polls, 1, memory_order_relaxed);
    FI_TOT(polls, 1);
    FI_PROG(polls, 1);
    int result = 1;
    if (lp->m_poll) {
        struct fi_site s = {.dev = c->c ? c->c->dev : NULL,
                            .qpn = -1,
                            .qp_ord = -1,
                            .cq_ord = c->ord,
                            .op = FI_OP_ANY,
                            .verb = FI_VERB_NONE};
        uint64_t nth;
        for (uint32_t m = lp->m_poll; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            const struct fi_rule *r = &lp->plan.rules[i];
            if (r->per_cqe) {
                /* Counted and claimed when the completion was handed out: fires here once. */
                int want = c->ord + 1;
                if (atomic_load_explicit(&lp->armed_cq[i], memory_order_relaxed) != want ||
                    !atomic_compare_exchange_strong(&lp->armed_cq[i], &want, 0))
                    continue;
                nth = atomic_load(&lp->armed_nth[i]);
                atomic_fetch_add(&lp->fired[i], 1);
            } else if (!fi_fire(lp, i, &s, &nth)) {
                continue;
            }
            if (r->kind == FI_NEGPOLL) {
                fi_event_fault(lp, i, &s, nth, FI_FD(.has = RG_EVH(fault, ret), .ret = r->ret));
                if (result > 0)
                    result = r->ret;
            } else {
                fi_event_fault(lp, i, &s, nth, FI_FD(.has = RG_EVH(fault, ms), .ms = r->ms));
                /* A CQ with a completion channel is held in this poll instead. Its program
                 * sleeps on the channel while the CQ hands out nothing, and the provider raises
                 * an event only for a completion that arrives after the CQ is armed, never for
                 * one already in it: completions kept back past the stall would wake no one,
                 * and the program would hang where no NIC, late as it may be (its event comes
                 * with its late completion), would leave it. rping hung so on both ends. */
                if (c->chan)
                    fi_sleep_ms(r->ms);
                else
                    atomic_store(&c->stall_until_ns, fi_now_ns() + r->ms * 1000000u);
            }
        }
    }
    if (result > 0) {
        uint64_t until = atomic_load_explicit(&c->stall_until_ns, memory_order_relaxed);
        if (until) {
            /* Once over, the stall is forgotten, so later polls read no clock for it. */
            if (fi_now_ns() < until)
                result = 0;
            else
                atomic_compare_exchange_strong(&c->stall_until_ns, &until, 0);
        }
    }
    return result;
}

/* per=cqe poll rules: each completion handed out (after any rewriting) is counted, and one
 * that fires arms the rule for this CQ's next poll (a later arm replaces one not yet fired). A
 * completion count is the same in every run, where a poll count is not, so the point is
 * reproducible. */
void fi_arm_pollcqe(struct fi_live *lp, struct fi_cq *c, struct ibv_context *ctx,
                    const struct ibv_wc *wc, int got)
{
    for (int k = 0; k < got; k++) {
        struct fi_site s = {.dev = c->c ? c->c->dev : NULL, .qpn = -1, .qp_ord = -1};
        struct fi_qp *q = fi_qp_find(ctx, wc[k].qp_num);
        if (q)
            fi_site_qp(&s, q);
        s.cq_ord = c->ord;
        s.op = fi_wc_op(wc[k].opcode);
        s.verb = FI_VERB_NONE;
        for (uint32_t m = lp->m_pollcqe; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            uint64_t nth;
            if (!fi_fire(lp, i, &s, &nth))
                continue;
            /* Not fired until a poll delivers it: a completion with no poll after it (the
             * program's last) must read as a fault that never fired, not one swallowed. */
            atomic_fetch_sub(&lp->fired[i], 1);
            atomic_store(&lp->armed_nth[i], nth);
            atomic_store(&lp->armed_cq[i], c->ord + 1);
        }
    }
}
