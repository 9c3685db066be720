/* SPDX-License-Identifier: MIT */
/*
 * The interposer. Loaded by LD_PRELOAD, it wraps the exported verbs entry points and patches the
 * datapath function pointers of every context it opens: ibv_post_send, ibv_post_recv and
 * ibv_poll_cq are static inline in <infiniband/verbs.h> and call through ctx->ops, which the
 * provider filled in a writable table, so the only way in is to swap those pointers after
 * ibv_open_device. The context itself is never replaced: verbs_context sits before it in memory.
 *
 * Extended objects carry their own pointers (ibv_cq_ex's start_poll/next_poll, ibv_qp_ex's wr_*),
 * so they are patched where they are created. Programs that dlopen libibverbs and look symbols up
 * on that handle (NCCL, JACCL) would bypass a plain preload, so dlopen of libibverbs returns the
 * shim's own handle: a lookup there finds the wrappers first, then libibverbs as a dependency.
 *
 * With no plan and one provider, ibv_poll_cq, ibv_post_send and ibv_post_recv are one atomic
 * load, a test and a tail call (the extended-CQ/QP wrappers and SRQ posts still look their
 * object up). With a plan, the datapath does
 * relaxed atomic counting and table lookups and never allocates: QP and CQ state lives in fixed
 * tables filled when the objects are created.
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

/* ---- the state (fi_shim.h) ---------------------------------------------------------------- */
struct fi_real fi_real;
_Atomic(struct fi_live *) g_live;
struct fi_alive g_alive;
_Atomic int g_first_done;
char g_self_path[4096];
char g_verbs_path[4096];
int g_snapshot_sig;
struct fi_ctx g_ctx[FI_MAX_CTX];
struct fi_one g_one;
_Atomic int g_nctx;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
struct fi_qp g_qp[FI_MAX_QPS];
struct fi_cq g_cq[FI_MAX_CQS];
_Atomic int g_qp_ord, g_cq_ord;
struct fi_tot g_tot;
_Atomic int g_step = FI_PHASE_ANY, g_rep = FI_PHASE_ANY;
_Atomic long g_phase_tid;

/* ---- object tables ------------------------------------------------------------------------ */
/*
 * Outstanding requests of a ring, or -1 when its record is incomplete (see struct fi_ring). Read
 * without the ring's lock: the snapshot handler may have interrupted its holder, and a count a
 * request off is all a racing read can cost.
 */
/* What a queue still holds; unknown behind an SRQ or for a ring that may miss requests. */
static rg_ev_n fi_outstanding(const struct fi_ring *r, bool unknown)
{
    uint32_t cap = r->cap, head = __atomic_load_n(&r->head, __ATOMIC_RELAXED),
             tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
    if (unknown || !__atomic_load_n(&r->exact, __ATOMIC_RELAXED))
        return FI_N_UNKNOWN;
    return FI_N(cap ? (tail + cap - head) % cap : 0);
}

/* The events an op= filter would count, by op. */
static rg_ev_ops fi_by_op(_Atomic uint64_t *v)
{
    rg_ev_ops o;
    for (int op = FI_OP_SEND; op <= FI_OP_ATOMIC; op++)
        o.op[op - FI_OP_SEND] = atomic_load(&v[op]);
    return o;
}

/* The oldest requests a ring still holds; unknown behind an SRQ or for a ring that may miss
 * requests (not exact), rather than the wrong ones. */
static rg_ev_wrs fi_oldest(const struct fi_ring *r, bool unknown)
{
    rg_ev_wrs w = {.n = -1};
    if (unknown || !__atomic_load_n(&r->exact, __ATOMIC_RELAXED))
        return w;
    uint32_t cap = r->cap, head = __atomic_load_n(&r->head, __ATOMIC_RELAXED),
             tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
    w.n = 0;
    for (int i = 0; cap && i < RG_EV_WRS_MAX && (head + (uint32_t)i) % cap != tail; i++) {
        const struct fi_rent *e = &r->e[(head + (uint32_t)i) % cap];
        uint64_t bytes = 0;
        for (uint32_t k = 0; k < e->nsge; k++)
            bytes += e->len[k];
        w.e[w.n].wr_id = e->wr_id;
        w.e[w.n++].len = bytes;
    }
    return w;
}

void fi_qp_summary(struct fi_qp *q, const char *why)
{
    const char *dev = q->c ? q->c->dev : "?";
    /* At the deadline a hung rank's oldest requests say what it waits for: their own event,
     * so the summary's line stays within an event's length. */
    if (!strcmp(why, "snapshot"))
        FI_EV(outstanding, .dev = dev, .qp = q->qpn, .qp_ord = q->ord,
              .send = fi_oldest(&q->sring, false), .recv = fi_oldest(&q->rring, q->srq));
    FI_EV(qp, .why = why, .dev = dev, .qp = q->qpn, .qp_ord = q->ord, .type = q->qp->qp_type,
          .srq = q->srq, .posts_send = atomic_load(&q->posts_send),
          .posts_recv = atomic_load(&q->posts_recv), .cqe_send = atomic_load(&q->cqe_send),
          .cqe_recv = atomic_load(&q->cqe_recv), .cqe_err = atomic_load(&q->cqe_err),
          .faulted = atomic_load(&q->faulted), .out_send = fi_outstanding(&q->sring, false),
          .out_recv = fi_outstanding(&q->rring, q->srq), .posts_op = fi_by_op(q->posts_op),
          .cqe_op = fi_by_op(q->cqe_op));
}

void fi_cq_summary(struct fi_cq *c, const char *why)
{
    FI_EV(cq, .has = RG_EVH(cq, channel) | RG_EVH(cq, held), .why = why,
          .dev = c->c ? c->c->dev : "?", .cq_ord = c->ord, .polls = atomic_load(&c->polls),
          .cqe = atomic_load(&c->cqe), .channel = c->chan != NULL,
          .held = (uint64_t)atomic_load(&c->npend));
}

void fi_qp_add(struct ibv_qp *qp, uint32_t max_send, uint32_t max_recv, bool srq, int sq_sig_all,
               struct ibv_qp_ex *qx)
{
    struct fi_ctx *cx = fi_ctx_of(qp->context);
    int ord = atomic_fetch_add(&g_qp_ord, 1), saved = errno;
    pthread_mutex_lock(&g_lock);
    uint32_t h = fi_hash((uintptr_t)qp->context, qp->qp_num);
    struct fi_qp *q = NULL;
    for (uint32_t i = 0; i < FI_MAX_QPS && !q; i++) {
        struct fi_qp *t = &g_qp[(h + i) & (FI_MAX_QPS - 1)];
        if (atomic_load(&t->state) != SLOT_LIVE)
            q = t;
    }
    if (!q) {
        pthread_mutex_unlock(&g_lock);
        char what[64];
        snprintf(what, sizeof(what), "QP table full: qp %u is not watched", qp->qp_num);
        FI_EV(note, .what = what);
        if (fi_tracing())
            fi_trace_hole("QP table full");
        errno = saved;
        return;
    }
    fi_ring_forget(&q->sring, q->sring.head);
    fi_ring_forget(&q->rring, q->rring.head);
    free(q->sring.e);
    free(q->rring.e);
    memset((char *)q + sizeof(q->state), 0, sizeof(*q) - sizeof(q->state));
    q->ctx = qp->context;
    q->qpn = qp->qp_num;
    q->qp = qp;
    q->c = cx;
    q->ord = ord;
    q->sq_sig_all = sq_sig_all;
    q->srq = srq;
    /* Exact only if every post is seen from the start: a plan is live (see fi_control.c). */
    q->sring.exact = q->rring.exact = fi_live() != NULL;
    pthread_mutex_init(&q->rlock, NULL);
    /* Allocated here, at creation, so the datapath never allocates. */
    q->sring.e = calloc(max_send + 1, sizeof(struct fi_rent));
    q->sring.cap = q->sring.e ? max_send + 1 : 0;
    if (!srq && max_recv) {
        q->rring.e = calloc(max_recv + 1, sizeof(struct fi_rent));
        q->rring.cap = q->rring.e ? max_recv + 1 : 0;
    }
    if (qx) {
        q->wr_start = qx->wr_start;
        q->wr_complete = qx->wr_complete;
        q->wr_abort = qx->wr_abort;
        q->wr_send = qx->wr_send;
        q->wr_rdma_write = qx->wr_rdma_write;
    }
    atomic_store_explicit(&q->state, SLOT_LIVE, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    if (qx) {
        if (qx->wr_start)
            qx->wr_start = fi_qpx_start;
        if (qx->wr_complete)
            qx->wr_complete = fi_qpx_complete;
        if (qx->wr_send)
            qx->wr_send = fi_qpx_send;
        if (qx->wr_rdma_write)
            qx->wr_rdma_write = fi_qpx_write;
    }
    errno = saved; /* the program sees the errno ibv_create_qp left, not calloc's */
}

void fi_cq_add(struct ibv_cq *cq, struct ibv_cq_ex *cqx)
{
    int ord = atomic_fetch_add(&g_cq_ord, 1), saved = errno;
    pthread_mutex_lock(&g_lock);
    uint32_t h = fi_hash((uintptr_t)cq, 0);
    struct fi_cq *c = NULL;
    for (uint32_t i = 0; i < FI_MAX_CQS && !c; i++) {
        struct fi_cq *t = &g_cq[(h + i) & (FI_MAX_CQS - 1)];
        if (atomic_load(&t->state) != SLOT_LIVE)
            c = t;
    }
    if (!c) {
        pthread_mutex_unlock(&g_lock);
        char what[64];
        snprintf(what, sizeof(what), "CQ table full: cq %d is not watched", ord);
        FI_EV(note, .what = what);
        errno = saved;
        return;
    }
    free(c->pend);
    memset((char *)c + sizeof(c->state), 0, sizeof(*c) - sizeof(c->state));
    c->pcap = (cq->cqe > 0 ? cq->cqe : 0) + FI_PEND_MIN;
    c->pend = calloc((size_t)c->pcap, sizeof(*c->pend));
    if (!c->pend)
        c->pcap = 0;
    c->is_ex = cqx != NULL;
    c->chan = cq->channel;
    c->cq = cq;
    c->c = fi_ctx_of(cq->context);
    c->ord = ord;
    pthread_mutex_init(&c->plock, NULL);
    if (cqx) {
        c->start_poll = cqx->start_poll;
        c->next_poll = cqx->next_poll;
    }
    atomic_store_explicit(&c->state, SLOT_LIVE, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    if (cqx && cqx->start_poll) {
        cqx->start_poll = fi_cqx_start;
        cqx->next_poll = fi_cqx_next;
    }
    errno = saved; /* the program sees the errno ibv_create_cq left, not calloc's */
}
