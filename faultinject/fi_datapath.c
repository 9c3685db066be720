/* SPDX-License-Identifier: MIT */
/* The ops the shim patches into every context: poll, post and the extended CQs and QPs (fi_shim.h).
 */
#include "fi_shim.h"
#include "rg_parse.h"
#include "rg_faultinject.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
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

/* ---- datapath wrappers -------------------------------------------------------------------- */
__attribute__((noinline)) static int fi_poll_cq_slow(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
    struct fi_ctx *cx = fi_ctx_of(cq->context);
    struct fi_live *lp = fi_live();
    if (!lp || !cx)
        return cx ? cx->poll(cq, ne, wc) : -1;
    struct fi_cq *c = fi_cq_find(cq);
    if (c) {
        int pre = fi_on_poll(lp, c);
        if (pre <= 0)
            return pre;
    }
    int got = cx->poll(cq, ne, wc);
    if (got < 0)
        return got;
    int saved = errno, kept = 0;
    for (int k = 0; k < got; k++) {
        struct fi_qp *q = fi_qp_find(cq->context, wc[k].qp_num);
        if (q) {
            int status = (int)wc[k].status;
            uint32_t ve = wc[k].vendor_err;
            /* A UD receive's source, for the ownership sanitizer (fi_internal.h, fi_heard). */
            struct fi_heard *ud;
            if (status == IBV_WC_SUCCESS && (wc[k].opcode & IBV_WC_RECV) && fi_own_on() &&
                (ud = fi_ud_heard(q)))
                fi_heard_note(ud, wc[k].src_qp);
            if (!fi_on_provider_cqe(lp, q, c, cq, &status, &ve, wc[k].opcode, wc[k].wr_id,
                                    wc[k].byte_len))
                continue;
            wc[k].vendor_err = ve;
            wc[k].status = (enum ibv_wc_status)status;
        }
        if (kept != k)
            wc[kept] = wc[k];
        kept++;
    }
    got = kept;
    /* The shim's own completions: flushes at once, lost sends once all before them are done. */
    if (c && atomic_load_explicit(&c->npend, memory_order_relaxed) && got < ne) {
        pthread_mutex_lock(&c->plock);
        int n = atomic_load(&c->npend), keep = 0;
        for (int k = 0; k < n; k++) {
            struct fi_pend *p = &c->pend[k];
            if (got < ne && (!p->after || atomic_load(&p->q->sig_done) >= p->after)) {
                wc[got] = p->wc;
                if (p->wc.status == IBV_WC_SUCCESS && atomic_load(&p->q->faulted))
                    wc[got].status = IBV_WC_WR_FLUSH_ERR;
                if (p->lost)
                    atomic_fetch_add(&p->q->sig_done, 1);
                fi_count_cqe(p->q, (int)wc[got].status, wc[got].opcode);
                got++;
            } else {
                c->pend[keep++] = *p;
            }
        }
        atomic_store(&c->npend, keep);
        pthread_mutex_unlock(&c->plock);
    }
    if (got > 0)
        FI_PROG(cqes, (uint64_t)got);
    if (c) {
        atomic_fetch_add_explicit(&c->cqe, (uint64_t)got, memory_order_relaxed);
        FI_TOT(cqe, (uint64_t)got);
        if (lp->m_pollcqe)
            fi_arm_pollcqe(lp, c, cq->context, wc, got);
    }
    if (lp->trace) {
        if (got > 0)
            fi_trace_cqes(c, cq, wc, got);
        if (c)
            fi_trace_polled(c, got);
    }
    errno = saved;
    return got;
}

/* The slow path's way in, out of line, so the pass-through below needs no stack frame. */
__attribute__((noinline)) static int fi_poll_cq_entered(struct ibv_cq *cq, int ne,
                                                        struct ibv_wc *wc, void *site)
{
    fi_call_enter(site, FI_CALL_POLL);
    int rc = fi_poll_cq_slow(cq, ne, wc);
    fi_call_leave();
    return rc;
}

/* The pass-through: with no plan and one provider, a load, a test and a tail call. */
int fi_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
    poll_fn one = atomic_load_explicit(&g_one.poll, memory_order_relaxed);
    if (__builtin_expect(one && !atomic_load_explicit(&g_live, memory_order_relaxed), 1))
        return one(cq, ne, wc);
    return fi_poll_cq_entered(cq, ne, wc, __builtin_return_address(0));
}

/* A delay fault holds a post ms before it is made: the trace cannot say when the program
 * asked for it, so what it shows of that QP is no longer whole. */
static void fi_held(struct fi_live *lp, struct fi_qp *q, uint64_t ms)
{
    if (lp->trace)
        fi_trace_gap(q, "a delay fault held a post");
    fi_sleep_ms(ms);
}

static void fi_first_post(struct fi_live *lp, struct fi_qp *q, enum fi_op op)
{
    if (!lp->m_first || atomic_load_explicit(&g_first_done, memory_order_relaxed))
        return;
    if (atomic_exchange(&g_first_done, 1))
        return;
    struct fi_site s;
    uint64_t nth;
    fi_site_qp(&s, q);
    s.op = op;
    for (uint32_t m = lp->m_first; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        if (fi_fire(lp, i, &s, &nth)) {
            fi_event_fault(lp, i, &s, nth,
                           FI_FD(.has = RG_EVH(fault, ms), .ms = lp->plan.rules[i].ms));
            fi_held(lp, q, lp->plan.rules[i].ms);
        }
    }
}

/* Queues the local success completion of a send that is dropped instead of posted. */

static void fi_lose(struct fi_qp *q, struct ibv_send_wr *wr)
{
    if (fi_tracing())
        fi_trace_sends(q, wr, wr->next, fi_trace_now(), "lost");
    if (!fi_signaled(q, wr))
        return;
    /* It counts as posted and signaled: later sends' completions come after it. */
    uint64_t after = atomic_fetch_add(&q->sig_posted, 1);
    fi_pend_push(fi_cq_find(q->qp->send_cq), q, wr->wr_id, IBV_WC_SUCCESS,
                 fi_wr_op(wr->opcode) == FI_OP_WRITE ? IBV_WC_RDMA_WRITE : IBV_WC_SEND, after,
                 true);
}

/* A QP in error takes the request and completes it flushed, signaled or not: the provider
 * does, its QP being in error, unless it could not be moved there. */
static int send_on_faulted(const struct fi_ctx *cx, struct fi_qp *q, struct ibv_qp *qp,
                           struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct fi_cq *sc = q->sq_by_shim ? fi_cq_find(qp->send_cq) : NULL;
    if (sc && fi_tracing())
        fi_trace_sends(q, wr, NULL, fi_trace_now(), "flushed");
    for (struct ibv_send_wr *w = wr; w; w = w->next) {
        fi_count_post(q, fi_wr_op(w->opcode));
        if (sc)
            fi_pend_push(sc, q, w->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, false);
    }
    return sc ? 0 : fi_send_run(q, cx->post_send, qp, wr, bad);
}

/* What the send rules made of one request: lost, held back late_ms, or its post failed. */
struct send_fate {
    bool drop, nomem;
    uint64_t late_ms;
};

/* Runs every send rule on request w, in the plan's order; a nomem that fires ends the run,
 * as the post it fails does. */
static void send_fate_of(struct fi_live *lp, struct fi_qp *q, const struct fi_site *s,
                         const struct ibv_send_wr *w, struct send_fate *f)
{
    uint64_t nth;
    for (uint32_t m = lp->m_send; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        const struct fi_rule *r = &lp->plan.rules[i];
        if (r->kind == FI_NOMEM) {
            struct fi_site sv = *s;
            sv.verb = FI_VERB_POST_SEND;
            if (!fi_fire(lp, i, &sv, &nth))
                continue;
            fi_event_fault(lp, i, &sv, nth, FI_FD_NOMEM);
            f->nomem = true;
            return;
        }
        if ((r->kind == FI_LOSE || r->kind == FI_LATE) && s->op != FI_OP_SEND &&
            s->op != FI_OP_WRITE)
            continue;
        if (!fi_fire(lp, i, s, &nth))
            continue;
        if (r->kind == FI_LATE && !f->late_ms) {
            fi_event_fault(lp, i, s, nth,
                           FI_FD(.has = RG_EVH(fault, ms) | RG_EVH(fault, wr_id), .ms = r->ms,
                                 .wr_id = w->wr_id));
            if (lp->trace) /* held off the trace until posted, or dropped with its QP */
                fi_trace_gap(q, "a late fault held a send");
            f->late_ms = r->ms;
            continue;
        }
        if (r->kind == FI_DELAY) {
            fi_event_fault(lp, i, s, nth, FI_FD(.has = RG_EVH(fault, ms), .ms = r->ms));
            fi_held(lp, q, r->ms);
        } else if (r->kind == FI_LOSE && !f->drop) {
            fi_event_fault(lp, i, s, nth, FI_FD(.has = RG_EVH(fault, wr_id), .wr_id = w->wr_id));
            f->drop = true;
        }
    }
}

__attribute__((noinline)) static int fi_post_send_slow(struct ibv_qp *qp, struct ibv_send_wr *wr,
                                                       struct ibv_send_wr **bad)
{
    struct fi_ctx *cx = fi_ctx_of(qp->context);
    struct fi_live *lp = fi_live();
    if (!lp || !cx)
        return cx ? cx->post_send(qp, wr, bad) : EINVAL;
    struct fi_qp *q = fi_qp_find(qp->context, qp->qp_num);
    if (!q)
        return cx->post_send(qp, wr, bad);
    fi_first_post(lp, q, wr ? fi_wr_op(wr->opcode) : FI_OP_ANY);
    if (atomic_load_explicit(&q->faulted, memory_order_relaxed))
        return send_on_faulted(cx, q, qp, wr, bad);

    struct ibv_send_wr *head = wr, *prev = NULL;
    struct fi_site s;
    fi_site_qp(&s, q);
    for (struct ibv_send_wr *w = wr; w; w = w->next) {
        struct send_fate f = {0};
        s.op = fi_wr_op(w->opcode);
        send_fate_of(lp, q, &s, w, &f);
        if (f.nomem) {
            /* Post what came before, then fail here as a full send queue would. */
            int rc = fi_send_before(q, cx->post_send, qp, head, prev, w, bad);
            if (!rc)
                *bad = w;
            return rc ? rc : ENOMEM;
        }
        fi_count_post(q, s.op);
        /* Held by the late fault, or behind a request that is. */
        if (!f.drop && (f.late_ms || atomic_load_explicit(&q->late, memory_order_relaxed))) {
            int rc = fi_send_before(q, cx->post_send, qp, head, prev, w, bad);
            if (rc)
                return rc;
            if (fi_late_hold(q, cx->post_send, qp, w, f.late_ms)) {
                head = w->next;
                prev = w;
                continue;
            }
            head = w;
        }
        if (f.drop) {
            /* Post the run before this one, then skip it. */
            int rc = fi_send_before(q, cx->post_send, qp, head, prev, w, bad);
            if (rc)
                return rc;
            fi_lose(q, w);
            head = w->next;
        }
        prev = w;
    }
    return head ? fi_send_run(q, cx->post_send, qp, head, bad) : 0;
}

/* The slow path's way in, out of line, so the pass-through below needs no stack frame. */
__attribute__((noinline)) static int fi_post_send_entered(struct ibv_qp *qp, struct ibv_send_wr *wr,
                                                          struct ibv_send_wr **bad, void *site)
{
    fi_call_enter(site, FI_CALL_POST_SEND);
    int rc = fi_post_send_slow(qp, wr, bad);
    fi_call_leave();
    return rc;
}

/* The pass-through: with no plan and one provider, a load, a test and a tail call. */
int fi_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    post_send_fn one = atomic_load_explicit(&g_one.post_send, memory_order_relaxed);
    if (__builtin_expect(one && !atomic_load_explicit(&g_live, memory_order_relaxed), 1))
        return one(qp, wr, bad);
    return fi_post_send_entered(qp, wr, bad, __builtin_return_address(0));
}

__attribute__((noinline)) static int fi_post_recv_slow(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                                                       struct ibv_recv_wr **bad)
{
    struct fi_ctx *cx = fi_ctx_of(qp->context);
    struct fi_live *lp = fi_live();
    if (!lp || !cx)
        return cx ? cx->post_recv(qp, wr, bad) : EINVAL;
    struct fi_qp *q = fi_qp_find(qp->context, qp->qp_num);
    if (!q)
        return cx->post_recv(qp, wr, bad);
    fi_first_post(lp, q, FI_OP_RECV);
    struct fi_cq *rcq =
        atomic_load_explicit(&q->faulted, memory_order_relaxed) ? fi_cq_find(qp->recv_cq) : NULL;
    if (rcq && !rcq->is_ex) {
        if (lp->trace)
            fi_trace_recvs(q, wr, NULL, fi_trace_now(), "flushed");
        for (struct ibv_recv_wr *w = wr; w; w = w->next) {
            fi_count_post(q, FI_OP_RECV);
            fi_pend_push(rcq, q, w->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, false);
        }
        return 0;
    }
    struct fi_site s;
    fi_site_qp(&s, q);
    s.op = FI_OP_RECV;
    for (struct ibv_recv_wr *w = wr; w && lp->m_recv; w = w->next) {
        uint64_t nth;
        for (uint32_t m = lp->m_recv; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            const struct fi_rule *r = &lp->plan.rules[i];
            struct fi_site sv = s;
            if (r->kind == FI_NOMEM)
                sv.verb = FI_VERB_POST_RECV;
            if (!fi_fire(lp, i, &sv, &nth))
                continue;
            if (r->kind == FI_NOMEM) {
                fi_event_fault(lp, i, &sv, nth, FI_FD_NOMEM);
                /* Everything before w is posted; w and after are not, as bad_wr says. */
                int rc = 0;
                if (w != wr) {
                    struct ibv_recv_wr *p = wr;
                    while (p->next != w)
                        p = p->next;
                    p->next = NULL;
                    for (struct ibv_recv_wr *x = wr; x; x = x->next)
                        fi_count_post(q, FI_OP_RECV);
                    rc = fi_recv_run(q, cx->post_recv, qp, wr, bad);
                    p->next = w;
                }
                if (!rc)
                    *bad = w;
                return rc ? rc : ENOMEM;
            }
            fi_event_fault(lp, i, &sv, nth, FI_FD(.has = RG_EVH(fault, ms), .ms = r->ms));
            fi_held(lp, q, r->ms);
        }
    }
    for (struct ibv_recv_wr *w = wr; w; w = w->next)
        fi_count_post(q, FI_OP_RECV);
    return fi_recv_run(q, cx->post_recv, qp, wr, bad);
}

/* The slow path's way in, out of line, so the pass-through below needs no stack frame. */
__attribute__((noinline)) static int fi_post_recv_entered(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                                                          struct ibv_recv_wr **bad, void *site)
{
    fi_call_enter(site, FI_CALL_POST_RECV);
    int rc = fi_post_recv_slow(qp, wr, bad);
    fi_call_leave();
    return rc;
}

/* The pass-through: with no plan and one provider, a load, a test and a tail call. */
int fi_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    post_recv_fn one = atomic_load_explicit(&g_one.post_recv, memory_order_relaxed);
    if (__builtin_expect(one && !atomic_load_explicit(&g_live, memory_order_relaxed), 1))
        return one(qp, wr, bad);
    return fi_post_recv_entered(qp, wr, bad, __builtin_return_address(0));
}

/*
 * A shared receive queue's posts (rdma-core's srq and xsrq pingpongs, UCX's verbs transports).
 * Its receives belong to no QP until a message arrives and takes one, so they are counted in
 * the process's totals and at their call site, not on a QP; a rule that names a QP, a CQ or a
 * step's QP never matches them, one that names a device or none does: `delay op=recv` holds the
 * post, `nomem verb=post_recv` fails it as a full queue would, the requests before the one it
 * hits posted, as bad_wr says. Their scatter lists are recorded (fi_srq.c) for corrupt, which
 * flips a bit of what the completion's receive got, on whichever QP took it. The sanitizer
 * does not follow them: each is counted as not sanitized, never as checked.
 */
__attribute__((noinline)) static int fi_post_srq_recv_slow(struct fi_ctx *cx, struct ibv_srq *srq,
                                                           struct ibv_recv_wr *wr,
                                                           struct ibv_recv_wr **bad)
{
    struct fi_live *lp = fi_live();
    if (!lp)
        return cx->post_srq_recv(srq, wr, bad);
    struct fi_site s = {.dev = cx->dev,
                        .qpn = -1,
                        .qp_ord = -1,
                        .cq_ord = -1,
                        .op = FI_OP_RECV,
                        .verb = FI_VERB_NONE};
    for (struct ibv_recv_wr *w = wr; w && lp->m_recv; w = w->next) {
        uint64_t nth;
        for (uint32_t m = lp->m_recv; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            const struct fi_rule *r = &lp->plan.rules[i];
            struct fi_site sv = s;
            if (r->kind == FI_NOMEM)
                sv.verb = FI_VERB_POST_RECV;
            if (!fi_fire(lp, i, &sv, &nth))
                continue;
            if (r->kind == FI_NOMEM) {
                fi_event_fault(lp, i, &sv, nth, FI_FD_NOMEM);
                int rc = 0;
                if (w != wr) {
                    struct ibv_recv_wr *p = wr;
                    while (p->next != w)
                        p = p->next;
                    p->next = NULL;
                    fi_count_srq_posts(wr);
                    rc = fi_srq_post(srq, cx->post_srq_recv, wr, bad);
                    p->next = w;
                }
                if (!rc)
                    *bad = w;
                return rc ? rc : ENOMEM;
            }
            fi_event_fault(lp, i, &sv, nth, FI_FD(.has = RG_EVH(fault, ms), .ms = r->ms));
            fi_sleep_ms(r->ms);
        }
    }
    fi_count_srq_posts(wr);
    return fi_srq_post(srq, cx->post_srq_recv, wr, bad);
}

__attribute__((noinline)) static int fi_post_srq_recv_entered(struct fi_ctx *cx,
                                                              struct ibv_srq *srq,
                                                              struct ibv_recv_wr *wr,
                                                              struct ibv_recv_wr **bad, void *site)
{
    fi_call_enter(site, FI_CALL_POST_RECV);
    int rc = fi_post_srq_recv_slow(cx, srq, wr, bad);
    fi_call_leave();
    return rc;
}

int fi_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct fi_ctx *cx = fi_ctx_of(srq->context);
    if (!cx)
        return EINVAL;
    if (__builtin_expect(!atomic_load_explicit(&g_live, memory_order_relaxed), 1))
        return cx->post_srq_recv(srq, wr, bad);
    return fi_post_srq_recv_entered(cx, srq, wr, bad, __builtin_return_address(0));
}

/* ---- extended CQs and QPs ----------------------------------------------------------------- */
static void fi_count_cq_cqe(struct fi_cq *c)
{
    atomic_fetch_add_explicit(&c->cqe, 1, memory_order_relaxed);
    FI_TOT(cqe, 1);
    FI_PROG(cqes, 1);
}

static int fi_cqx_after(struct fi_cq *c, struct ibv_cq_ex *cq, int rc)
{
    struct fi_live *lp = fi_live();
    /* Without IBV_WC_EX_WITH_QP_NUM the completion can't be tied to a QP: counted, not faulted. */
    if (lp && lp->trace)
        fi_trace_polled(c, rc == 0);
    if (rc || !lp || !cq->read_qp_num) {
        if (!rc && lp)
            fi_count_cq_cqe(c);
        if (!rc && lp && lp->trace)
            fi_trace_hole("a completion of an extended CQ without its QP number");
        return rc;
    }
    struct fi_qp *q = fi_qp_find(cq->context, cq->read_qp_num(cq));
    if (!q) {
        if (lp->trace)
            fi_trace_hole("a completion of a QP the shim does not watch");
        return rc;
    }
    int status = (int)cq->status;
    enum ibv_wc_opcode op = status == IBV_WC_SUCCESS ? cq->read_opcode(cq) : IBV_WC_SEND;
    uint32_t ve = 0;
    /* An extended CQ's entry can't be hidden or added to, so after a break the provider's own
     * completions are shown (fi_qp_break left the receive ring to them), successes turned into
     * flushes. */
    fi_on_provider_cqe(lp, q, c, ibv_cq_ex_to_cq(cq), &status, &ve, op, cq->wr_id,
                       status == IBV_WC_SUCCESS && cq->read_byte_len ? cq->read_byte_len(cq) : 0);
    cq->status = (enum ibv_wc_status)status;
    fi_count_cq_cqe(c);
    if (lp->trace)
        fi_trace_cqe_ex(cq, q);
    return rc;
}

static int cqx_start(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
    struct fi_cq *c = fi_cq_find(ibv_cq_ex_to_cq(cq));
    struct fi_live *lp = fi_live();
    if (!c)
        return ENOENT; /* unreachable: the CQ was registered before its pointers were patched */
    if (lp) {
        /* An extended poll has no negative return; negpoll applies to ibv_poll_cq only. */
        int pre = fi_on_poll(lp, c);
        if (pre == 0) {
            if (lp->trace)
                fi_trace_polled(c, 0);
            return ENOENT;
        }
    }
    return fi_cqx_after(c, cq, c->start_poll(cq, attr));
}

int fi_cqx_start(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
    fi_call_enter(__builtin_return_address(0), FI_CALL_POLL);
    int rc = cqx_start(cq, attr);
    fi_call_leave();
    return rc;
}

int fi_cqx_next(struct ibv_cq_ex *cq)
{
    struct fi_cq *c = fi_cq_find(ibv_cq_ex_to_cq(cq));
    if (!c)
        return ENOENT;
    fi_call_enter(__builtin_return_address(0), FI_CALL_POLL);
    int rc = fi_cqx_after(c, cq, c->next_poll(cq));
    fi_call_leave();
    return rc;
}

static struct fi_qp *fi_qpx(struct ibv_qp_ex *qx)
{
    return fi_qp_find(qx->qp_base.context, qx->qp_base.qp_num);
}

void fi_qpx_start(struct ibv_qp_ex *qx)
{
    struct fi_qp *q = fi_qpx(qx);
    struct fi_live *lp = fi_live();
    if (q && lp)
        fi_first_post(lp, q, FI_OP_SEND);
    /* Its requests are built by calls the shim only partly sees (wr_send_imm, ...). */
    if (q && lp && lp->trace)
        fi_trace_gap(q, "ibv_qp_ex sends");
    if (q)
        q->wr_start(qx);
}

/* ibv_qp_ex sends are counted, not recorded: the send ring no longer knows what is outstanding. */
static void fi_qpx_untracked(struct fi_qp *q, enum fi_op op)
{
    fi_count_post(q, op);
    if (fi_own_on())
        fi_own_unsanitized(1); /* its gather list is set by calls the shim does not see */
    pthread_mutex_lock(&q->rlock);
    q->sring.exact = false;
    pthread_mutex_unlock(&q->rlock);
}

void fi_qpx_send(struct ibv_qp_ex *qx)
{
    struct fi_qp *q = fi_qpx(qx);
    if (q && fi_live()) { /* counted at its site, as a post; no plan: nothing to note */
        fi_call_enter(__builtin_return_address(0), FI_CALL_POST_SEND);
        fi_qpx_untracked(q, FI_OP_SEND);
        fi_call_leave();
    }
    if (q)
        q->wr_send(qx);
}

void fi_qpx_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr)
{
    struct fi_qp *q = fi_qpx(qx);
    if (q && fi_live()) {
        fi_call_enter(__builtin_return_address(0), FI_CALL_POST_SEND);
        fi_qpx_untracked(q, FI_OP_WRITE);
        fi_call_leave();
    }
    if (q)
        q->wr_rdma_write(qx, rkey, addr);
}

static int qpx_complete(struct ibv_qp_ex *qx)
{
    struct fi_qp *q = fi_qpx(qx);
    if (!q)
        return EINVAL;
    struct fi_live *lp = fi_live();
    if (lp && lp->m_send) {
        struct fi_site s;
        uint64_t nth;
        fi_site_qp(&s, q);
        s.verb = FI_VERB_POST_SEND;
        for (uint32_t m = lp->m_send; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            if (lp->plan.rules[i].kind == FI_NOMEM && fi_fire(lp, i, &s, &nth)) {
                fi_event_fault(lp, i, &s, nth, FI_FD_NOMEM);
                q->wr_abort(qx);
                return ENOMEM;
            }
        }
    }
    return q->wr_complete(qx);
}

/* ibv_wr_complete is where an ibv_qp_ex send is posted: a nomem fails it at its site. */
int fi_qpx_complete(struct ibv_qp_ex *qx)
{
    fi_call_enter(__builtin_return_address(0), FI_CALL_POST_SEND);
    int rc = qpx_complete(qx);
    fi_call_leave();
    return rc;
}
